"""Panels of notebook 04 (cache sizing): the KV cache explorer and the budget planner."""
from __future__ import annotations

import html

import ipywidgets as widgets

from ..i18n import in_language, language, tr
from ..plots.base import format_bytes, new_figure
from ..plots.sizing import BudgetFigure, KVLines
from ..sizing import (
    DTYPE_BYTES, MODEL_PRESETS, bytes_per_element, cache_bytes_for, kv_cache_bytes, max_concurrent_requests,
)
from .base import KEPT_FIGURES, Panel, dropdown, float_slider, int_slider, selection_slider


# Context lengths the T sliders offer: powers of two and the 1.5x steps between them, 1 .. 128k.
T_CHOICES: list[int] = sorted({2**i for i in range(18)} | {3 * 2**i for i in range(16)})  # 1, 2, 3, 4, 6, ... 131072
CUSTOM = "(custom)"  # the preset menu's value; its label is tr(CUSTOM)


def bytes_text(n: int) -> str:
    """Exact and human form: ``8388608 -> '8,388,608 bytes (8.0 MiB)'``."""
    return tr("{n:,} bytes ({human})", n=n, human=format_bytes(n))


def _t_slider(value: int) -> widgets.SelectionSlider:
    return selection_slider(tr("T (tokens)"), [(f"{t:,}", t) for t in T_CHOICES], value)


class KVCacheExplorer(Panel):
    """Sliders T, L, H_kv, B, d_h and a dtype menu -> ``kv_cache_bytes`` live, and memory vs T.

    ``state["bytes"]`` is exactly what the page shows in ``<span class="kv-bytes">``. The
    ``preset`` menu fills L, H_kv and d_h from ``MODEL_PRESETS`` (T, B and dtype are yours);
    moving one of those three sliders away from the preset switches it back to "(custom)".
    ``T`` must be one of ``T_CHOICES``.
    """

    title = "KV cache explorer: 2 · L · B · H_kv · T · d_h · bytes"

    def __init__(self, preset: str = "Llama-3-8B", T: int = 4096, B: int = 1, dtype: str = "float16") -> None:
        self._syncing = False
        cfg = MODEL_PRESETS[preset] if preset != CUSTOM else MODEL_PRESETS["Llama-3-8B"]
        controls = {
            "preset": dropdown(tr("model preset"), [(tr(CUSTOM), CUSTOM)] + [(m, m) for m in MODEL_PRESETS], preset),
            "T": _t_slider(T),
            "L": int_slider(tr("L (layers)"), cfg.n_layers, 1, 128, continuous_update=False),
            "H_kv": int_slider(tr("H_kv (K/V heads)"), cfg.n_kv_heads, 1, 128, continuous_update=False),
            "B": int_slider(tr("B (sequences)"), B, 1, 256, continuous_update=False),
            "d_h": int_slider(tr("d_h (head width)"), cfg.head_dim, 8, 256, step=8, continuous_update=False),
            "dtype": dropdown("dtype", list(DTYPE_BYTES), dtype),
        }
        super().__init__(controls)

    def _preset_values(self, name: str) -> dict:
        cfg = MODEL_PRESETS[name]
        return {"L": cfg.n_layers, "H_kv": cfg.n_kv_heads, "d_h": cfg.head_dim}

    def _on_change(self, change) -> None:
        if self._syncing:
            return
        c = self.controls
        self._syncing = True
        try:
            if change["owner"] is c["preset"] and change["new"] != CUSTOM:
                for key, value in self._preset_values(change["new"]).items():
                    c[key].value = value
            elif c["preset"].value != CUSTOM and any(
                    c[k].value != v for k, v in self._preset_values(c["preset"].value).items()):
                c["preset"].value = CUSTOM  # the sliders no longer describe that model
        finally:
            self._syncing = False
        self.update()

    def compute(self, preset: str, T: int, L: int, H_kv: int, B: int, d_h: int, dtype: str) -> dict:
        n = kv_cache_bytes(L, B, H_kv, T, d_h, dtype)
        per_token = {name: kv_cache_bytes(L, B, H_kv, 1, d_h, name) for name in DTYPE_BYTES}
        max_context = MODEL_PRESETS[preset].max_seq_len if preset != CUSTOM else None
        return {"bytes": n, "bytes_text": bytes_text(n), "human": format_bytes(n),
                "per_token_bytes": per_token[dtype], "per_token_by_dtype": per_token,
                "element_bytes": bytes_per_element(dtype), "max_context": max_context,
                "values": {"preset": preset, "T": T, "L": L, "H_kv": H_kv, "B": B, "d_h": d_h, "dtype": dtype}}

    def render(self, s: dict) -> str:
        v = s["values"]
        formula = tr("2 × L {L} × B {B} × H_kv {H_kv} × T {T:,} × d_h {d_h} × {size} byte(s) ({dtype})",
                     size=s["element_bytes"], **v)
        extra = ""
        if s["max_context"] is not None:
            extra = "<br>" + tr("{preset} reads at most {n:,} tokens", preset=html.escape(v["preset"]),
                                n=s["max_context"])
            if v["T"] > s["max_context"]:
                extra += " <b style='color:#b00'>" + tr("(T is beyond it)") + "</b>"
        return (
            "<div class=\"kv-explorer\"><p style='font-size:1.3em'>" + tr("KV cache: ")
            + f"<span class=\"kv-bytes\">{s['bytes_text']}</span></p>"
            f"<p>= {formula}<br>"
            + tr("per token position, all B sequences: {bytes}", bytes=bytes_text(s["per_token_bytes"]))
            + f"{extra}</p></div>"
        )

    def plot(self, s: dict):
        v = s["values"]
        per_token, highlight = {}, None  # one line per element size, so colours never move
        for size in sorted(set(DTYPE_BYTES.values()), reverse=True):
            names = [d for d, b in DTYPE_BYTES.items() if b == size]
            label = tr("{size} bytes per number: {names}" if size > 1 else "{size} byte per number: {names}",
                       size=size, names=in_language({"en": ", ", "zh": "、"}).join(names))
            per_token[label] = s["per_token_by_dtype"][names[0]]
            if size == s["element_bytes"]:
                highlight = label
        key = (language(), tuple(per_token))
        if getattr(self, "_lines_key", None) != key:  # made once (per language): a step moves its artists
            fig, (ax,) = new_figure(width=7.0, height=3.6)
            fig.subplots_adjust(left=0.1, right=0.97, bottom=0.14, top=0.9)  # fixed: tight_layout is slow
            self._lines, self._lines_key = KVLines(ax, list(per_token)), key
        self._lines.update(per_token, T_CHOICES[-1], mark=(v["T"], s["bytes"]), highlight=highlight,
                           max_context=s["max_context"],
                           title=tr("KV cache vs T  (L={L}, B={B}, H_kv={H_kv}, d_h={d_h})", **v))
        return self._lines.ax.figure


class BudgetPlanner(Panel):
    """How many requests of T tokens fit on one GPU, next to a model's weights.

    ``state["n_requests"]`` is ``sizing.max_concurrent_requests`` for the controls' values;
    the weights take ``n_params * bytes(weights_dtype)``, ``reserve`` is the fraction kept for
    activations and the allocator, every request holds its own cache of T tokens.
    ``padding`` is the share of those T positions that hold no real token, as in a static batch
    left-padded to its longest prompt: ``state["padding_bytes"]`` is what they reserve for nothing,
    ``state["n_if_real_only"]`` how many requests would fit if each held only its real tokens,
    ``(1 - padding) * T`` on average (``state["real_tokens_per_request"]`` rounds it for display), or None when
    that is less than one token (a count of requests holding a tenth of a token each means nothing); the same
    for each point of ``state["curve_n_real_only"]``.
    """

    title = "Budget planner: how many requests of T tokens fit?"

    def __init__(self, model: str = "Llama-3-8B", GPU_GiB: int = 80, T: int = 8192,
                 dtype: str = "bfloat16", weights_dtype: str = "bfloat16", reserve: float = 0.1,
                 padding: float = 0.0) -> None:
        controls = {
            "model": dropdown(tr("model"), list(MODEL_PRESETS), model),
            "GPU_GiB": int_slider(tr("GPU memory (GiB)"), GPU_GiB, 8, 192, step=8, continuous_update=False),
            "weights_dtype": dropdown(tr("weights dtype"), list(DTYPE_BYTES), weights_dtype),
            "dtype": dropdown(tr("cache dtype"), list(DTYPE_BYTES), dtype),
            "T": _t_slider(T),
            "reserve": float_slider(tr("reserve (activations, ...)"), reserve, 0.0, 0.5, 0.05,
                                    continuous_update=False),
            # steps of 1/80: 0.4375, the share of a batch of 1k ... 8k tokens padded to 8k, is one of them
            "padding": float_slider(tr("padding (share of T)"), padding, 0.0, 0.9, 0.0125, continuous_update=False,
                                    readout_format=".4f"),
        }
        super().__init__(controls)

    def compute(self, model: str, GPU_GiB: int, weights_dtype: str, dtype: str, T: int, reserve: float,
                padding: float) -> dict:
        if not 0 <= padding < 1:
            raise ValueError(f"padding must be in [0, 1), got {padding}")
        cfg = MODEL_PRESETS[model]
        gpu = GPU_GiB * 2**30
        weights = cfg.n_params * bytes_per_element(weights_dtype)
        per_request = cache_bytes_for(cfg, 1, T, dtype)

        def fits(t: int | float) -> int:
            return max_concurrent_requests(cfg, t, gpu, weight_bytes=weights, dtype=dtype, reserve_fraction=reserve)

        def real_tokens(t: int) -> float:  # the positions of a request that hold a token, on average (not rounded:
            return t * (1 - padding)      # rounding to whole tokens drew steps into the curve at small T)

        def fits_real_only(t: int) -> int | None:  # None below one real token: no request holds a tenth of a token
            return fits(real_tokens(t)) if real_tokens(t) >= 1 else None

        n = fits(T)
        reserve_bytes = int(gpu * reserve)
        used = n * per_request
        real = round(used * (1 - padding))
        return {"model": model, "T": T, "gpu_bytes": gpu, "weight_bytes": weights, "reserve_bytes": reserve_bytes,
                "free_for_cache": max(gpu - reserve_bytes - weights, 0), "per_request_bytes": per_request,
                "n_requests": n, "cache_used_bytes": used, "unused_bytes": gpu - reserve_bytes - weights - used,
                "weights_fit": weights <= gpu - reserve_bytes, "max_context": cfg.max_seq_len,
                "tokens_in_cache": n * T, "curve_T": T_CHOICES, "curve_n": [fits(t) for t in T_CHOICES],
                "padding": padding, "real_tokens_per_request": round(real_tokens(T)), "real_bytes": real,
                "padding_bytes": used - real, "n_if_real_only": fits_real_only(T),
                "curve_n_real_only": [fits_real_only(t) for t in T_CHOICES] if padding > 0 else None}

    def render(self, s: dict) -> str:
        head = "<p>" + tr("<b>{model}</b>: weights {weights}, reserve {reserve}, left for the KV cache {free}.",
                          model=html.escape(s["model"]), weights=format_bytes(s["weight_bytes"]),
                          reserve=format_bytes(s["reserve_bytes"]), free=format_bytes(s["free_for_cache"])) + "</p>"
        if not s["weights_fit"]:
            body = "<p style='color:#b00'>" + tr("The weights alone do not fit on this GPU: 0 requests.") + "</p>"
        else:
            one = (tr("One request of T = 1 token holds {bytes} of cache.", bytes=bytes_text(s["per_request_bytes"]))
                   if s["T"] == 1 else tr("One request of T = {T:,} tokens holds {bytes} of cache.", T=s["T"],
                                          bytes=bytes_text(s["per_request_bytes"])))
            body = ("<p>" + one + "<br><span style='font-size:1.3em'>" + tr("Concurrent requests that fit: ")
                    + f"<b class=\"n-requests\">{s['n_requests']:,}</b></span>"
                    + (tr(" (1 token cached in total).") if s["tokens_in_cache"] == 1 else
                       tr(" ({n:,} tokens cached in total).", n=s["tokens_in_cache"])) + "</p>")
            if s["padding"] > 0:
                real = s["T"] * (1 - s["padding"])  # on average; a few tokens keep their decimal (0.1, not 0)
                real_text = f"{real:,.1f}" if real < 100 and not float(real).is_integer() else f"{round(real):,}"
                n = s["n_if_real_only"]
                words = dict(padding=s["padding"], used=format_bytes(s["cache_used_bytes"]),
                             padding_bytes=format_bytes(s["padding_bytes"]))
                real_only = "" if n is None else " " + (
                    tr("Holding only real tokens, <b class=\"n-real-only\">1</b> request would fit.") if n == 1 else
                    tr("Holding only real tokens, <b class=\"n-real-only\">{n:,}</b> requests would fit.", n=n))
                if s["n_requests"] == 0:  # no request, no padding to speak of ("of the 0 B ..., 0 B hold padding")
                    body += "<p>" + real_only.strip() + "</p>" if real_only else ""
                else:
                    body += "<p>" + (tr(
                        "With {padding:.1%} padding each request holds less than one real token on average: of "
                        "the {used} of cache these requests occupy, <b class=\"padding-bytes\">{padding_bytes}</b> "
                        "hold padding.", **words) if real < 1 else tr(
                        "With {padding:.1%} padding each request holds {real} real tokens on average: of the {used} "
                        "of cache these requests occupy, <b class=\"padding-bytes\">{padding_bytes}</b> hold "
                        "padding.", real=real_text, **words)) + real_only + "</p>"
        if s["T"] > s["max_context"]:
            body += "<p>" + tr("Note: T is beyond this model's max context ({n:,}).", n=s["max_context"]) + "</p>"
        return f"<div class=\"budget-planner\">{head}{body}</div>"

    def _png(self, fig, draw) -> bytes:
        """The picture for these settings, drawn once: a slider moved back to a setting shows it again without
        drawing (a draw is most of a step's time). At most ``KEPT_FIGURES`` pictures are kept, the oldest go."""
        pngs = self.__dict__.setdefault("_pngs_by_setting", {})
        key = (language(), tuple(self.values().values()))
        if key not in pngs:
            while len(pngs) >= KEPT_FIGURES:
                del pngs[next(iter(pngs))]
            pngs[key] = draw(fig)
        return pngs[key]

    def plot(self, s: dict):
        if getattr(self, "_figure", None) is None or self._figure_language != language():
            self._figure, self._figure_language = BudgetFigure(), language()  # made once: a step redraws it in place
        return self._figure.update(s)
