"""The notebooks' interactive panels (ipywidgets), written to work on 7.7.1 (Colab) and 8.x.

Every panel follows one pattern, so each can be tested without a browser:

* ``panel.controls``  name -> widget (sliders, dropdowns, text boxes): set ``.value`` to move them;
* ``panel.state``     the last computed result, a plain dict (what the tests assert on);
* ``panel.html``      an ``HTML`` widget showing the numbers; ``panel.out`` an ``Output`` with the figure;
* ``panel.widget``    the box to display (``display(panel)`` also works).

``compute`` turns control values into ``state``; ``render`` turns state into HTML; ``plot``
draws a figure (or returns None). A panel never raises: an error is shown in the panel and
kept in ``state["error"]``.
"""
from __future__ import annotations

import html as _html

import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import clear_output, display

_STYLE = {"description_width": "initial"}


def int_slider(description: str, value: int, min: int, max: int, step: int = 1, *,
               continuous_update: bool = True) -> widgets.IntSlider:
    """An IntSlider that reads the same on ipywidgets 7 and 8."""
    return widgets.IntSlider(value=value, min=min, max=max, step=step, description=description,
                             continuous_update=continuous_update, style=_STYLE,
                             layout=widgets.Layout(width="420px"))


def float_slider(description: str, value: float, min: float, max: float, step: float, *,
                 continuous_update: bool = True, readout_format: str = ".2f") -> widgets.FloatSlider:
    return widgets.FloatSlider(value=value, min=min, max=max, step=step, description=description,
                               continuous_update=continuous_update, readout_format=readout_format,
                               style=_STYLE, layout=widgets.Layout(width="420px"))


def dropdown(description: str, options, value) -> widgets.Dropdown:
    return widgets.Dropdown(options=options, value=value, description=description, style=_STYLE)


class Panel:
    """Base of every panel: wires the controls to ``update`` (see the module docstring)."""

    title = ""

    def __init__(self, controls: dict[str, widgets.Widget]) -> None:
        self.controls = controls
        self.state: dict = {}
        self.html = widgets.HTML()
        self.out = widgets.Output()
        self.fig = None
        for w in controls.values():
            w.observe(self._on_change, names="value")
        header = [widgets.HTML(f"<b>{_html.escape(self.title)}</b>")] if self.title else []
        self.widget = widgets.VBox(header + [widgets.VBox(list(controls.values())), self.html, self.out])
        self.update()

    def values(self) -> dict:
        return {name: w.value for name, w in self.controls.items()}

    def compute(self, **values) -> dict:  # pragma: no cover - each panel overrides it
        raise NotImplementedError

    def render(self, state: dict) -> str:
        return ""

    def plot(self, state: dict):
        return None

    def _on_change(self, change) -> None:
        self.update()

    def update(self) -> None:
        from .plots import detached

        try:
            self.state = self.compute(**self.values())
            self.html.value = self.render(self.state)
            with detached():  # see utils/plots.py: the inline backend must not touch this figure
                fig = self.plot(self.state)
        except Exception as e:  # a slider position must never crash the notebook
            self.state = {"error": f"{type(e).__name__}: {e}"}
            self.html.value = f"<span style='color:#b00'>&#9888; {_html.escape(self.state['error'])}</span>"
            fig = None
        with self.out:
            clear_output(wait=True)
            if fig is not None:
                display(fig)
        if fig is not None:
            self.fig = fig
            plt.close(fig)  # shown once in the Output; do not let inline matplotlib show it again

    def _ipython_display_(self) -> None:
        display(self.widget)


# --- 05 sampling_and_stopping ---
import torch as _torch

SAMPLING_PROMPTS = ("<BOS> 我 喜欢", "<BOS> she has", "<BOS>", "<BOS> they don't like")


class SamplingPanel(Panel):
    """Temperature, top-k and top-p applied to the course model's next-token distribution.

    Controls: ``prompt`` (a Dropdown), ``temperature`` (0 = greedy), ``top_k`` (V = off) and
    ``top_p`` (1 = off, never 0). The logits of each prompt come from one ``prefill`` and are
    kept; the sliders only change what is picked from them.

    ``state``: ``kept_size`` (tokens left with probability > 0), ``kept`` (word, probability)
    pairs, ``probs_sum`` (the final distribution's total, 1), ``kept_mass`` (the model's own
    probability of the kept set), ``greedy`` (the argmax), and ``stages`` for the plot.
    """

    title = "From logits to a token: temperature, top-k, top-p"

    def __init__(self, model, tokenizer, prompts=SAMPLING_PROMPTS, n_show: int = 12) -> None:
        self.model, self.tok, self.n_show = model, tokenizer, n_show
        self.V = model.cfg.vocab_size
        self._logits: dict[str, object] = {}
        prompts = [p for p in prompts if all(w in tokenizer.vocab for w in p.split())] or ["<BOS>"]
        super().__init__({
            "prompt": dropdown("prompt", prompts, prompts[0]),
            "temperature": float_slider("temperature (0 = greedy)", 1.0, 0.0, 2.0, 0.05, continuous_update=False),
            "top_k": int_slider(f"top_k ({self.V} = off)", self.V, 1, self.V, continuous_update=False),
            "top_p": float_slider("top_p (1 = off)", 1.0, 0.05, 1.0, 0.05, continuous_update=False),
        })

    def next_logits(self, prompt: str):
        """Logits ``[1, V]`` of the token after ``prompt`` (one prefill per prompt, then reused)."""
        if prompt not in self._logits:
            from .generate import prefill
            ids = _torch.tensor([self.tok.encode(prompt)])  # (1, T)
            self._logits[prompt], _ = prefill(self.model.eval(), ids)  # (1, V)
        return self._logits[prompt]

    def compute(self, prompt, temperature, top_k, top_p) -> dict:
        from .sampling import filter_stages
        temperature = round(float(temperature), 6)  # slider steps like 0.30000000000000004
        top_k = None if top_k >= self.V else int(top_k)
        top_p = None if top_p >= 1 - 1e-9 else round(float(top_p), 6)
        logits = self.next_logits(prompt)
        stages = {name: probs[0] for name, probs in filter_stages(logits, temperature, top_k, top_p).items()}  # (V,)
        final, original = stages["top_p"], stages["original"]
        kept = [i for i in final.argsort(descending=True).tolist() if final[i] > 0]
        shown = original.argsort(descending=True)[: self.n_show].tolist()  # sorted by the model's probability
        words = [self.tok.vocab[i] for i in shown]
        return {
            "prompt": prompt, "temperature": temperature, "top_k": top_k, "top_p": top_p,
            "kept_size": len(kept), "kept": [(self.tok.vocab[i], float(final[i])) for i in kept],
            "probs_sum": float(final.sum()), "kept_mass": float(original[kept].sum()),
            "greedy": self.tok.vocab[int(logits[0].argmax())],
            "shown_ids": shown, "shown_words": words,
            "stages": {name: probs[shown].tolist() for name, probs in stages.items()},
        }

    def render(self, s: dict) -> str:
        rows = "".join(f"<tr><td>{_html.escape(w)}</td><td>{p:.3f}</td></tr>" for w, p in s["kept"][:8])
        more = f"<tr><td colspan=2>… and {s['kept_size'] - 8} more</td></tr>" if s["kept_size"] > 8 else ""
        return (
            f"<b>{_html.escape(s['prompt'])}</b> → kept set: <b>{s['kept_size']}</b> of {self.V} tokens, "
            f"holding {s['kept_mass']:.1%} of the model's probability (renormalised to "
            f"{s['probs_sum']:.3f}); greedy would pick <b>{_html.escape(s['greedy'])}</b>"
            f"<table><tr><th>kept token</th><th>probability</th></tr>{rows}{more}</table>"
        )

    def plot(self, s: dict):
        from .plots import plot_sampling_stages, token_label
        prompt = " ".join(token_label(w) for w in s["prompt"].split())  # no Chinese glyphs without a CJK font
        return plot_sampling_stages(s["stages"], s["shown_ids"], s["shown_words"], s,
                                    title=f"Next token after “{prompt}”")


# --- 01 attention_block ---
import torch as _torch
import torch.nn.functional as _F

from .attention import attention as _attention
from .attention import causal_mask as _causal_mask
from .attention import repeat_kv as _repeat_kv
from .plots import new_figure as _new_figure
from .plots import plot_head_groups as _plot_head_groups
from .plots import plot_mask as _plot_mask
from .plots import plot_weights as _plot_weights


def selection_slider(description: str, options, value, *, continuous_update: bool = False) -> widgets.SelectionSlider:
    """A slider over a fixed list of ``options`` (values, or ``(label, value)`` pairs); works on 7.7.1 and 8.x."""
    return widgets.SelectionSlider(options=options, value=value, description=description,
                                   continuous_update=continuous_update, style=_STYLE,
                                   layout=widgets.Layout(width="420px"))


def divisors(n: int) -> list[int]:
    """All d with n % d == 0, ascending: the valid H_kv for H = n."""
    return [d for d in range(1, n + 1) if n % d == 0]


def _shape(t) -> str:
    return "[" + ", ".join(str(s) for s in t) + "]"


class AttentionShapesPanel(Panel):
    """Sliders T, H, H_kv -> the shape of every tensor in one causal self-attention layer.

    The shapes in ``state["shapes"]`` are read from real tensors that go through the same steps
    as the notebook (projections, heads, ``repeat_kv``, scores, mask, softmax, weighted sum),
    not from a formula. ``H_kv`` only offers divisors of ``H`` (every K/V head serves the same
    number of query heads), and its options follow ``H``; ``B`` and ``d_h`` are fixed, so
    ``C = H * d_h``.
    """

    title = "Attention shapes: move T, H and H_kv"

    def __init__(self, T: int = 6, H: int = 4, H_kv: int = 2, B: int = 1, d_h: int = 8,
                 T_max: int = 32, H_max: int = 16) -> None:
        self.B, self.d_h = B, d_h
        self._syncing = False
        self._last_H = H
        controls = {
            "T": int_slider("T (tokens)", T, 1, T_max, continuous_update=False),
            "H": int_slider("H (query heads)", H, 1, H_max, continuous_update=False),
            "H_kv": selection_slider("H_kv (K/V heads)", divisors(H), H_kv),
        }
        super().__init__(controls)

    def _on_change(self, change) -> None:
        if self._syncing:
            return
        if change["owner"] is self.controls["H"]:
            self._sync_kv_options()
        self.update()

    def _sync_kv_options(self) -> None:
        """New H: offer its divisors as H_kv; MHA stays MHA, otherwise keep the largest divisor <= old H_kv."""
        H, w = self.controls["H"].value, self.controls["H_kv"]
        old = w.value
        new = H if old == self._last_H else max(d for d in divisors(H) if d <= old)
        self._syncing = True
        try:
            w.options = divisors(H)  # resets the value to the first option on 7.x and 8.x
            w.value = new
        finally:
            self._syncing = False
        self._last_H = H

    def compute(self, T: int, H: int, H_kv: int) -> dict:
        B, d_h = self.B, self.d_h
        if H % H_kv:
            raise ValueError(f"H={H} is not divisible by H_kv={H_kv}")
        n_rep, C = H // H_kv, H * d_h
        g = _torch.Generator().manual_seed(0)
        x = _torch.randn(B, T, C, generator=g)  # (B, T, C)
        W_q = _torch.randn(C, H * d_h, generator=g) / C**0.5
        W_k = _torch.randn(C, H_kv * d_h, generator=g) / C**0.5  # fewer columns: only H_kv heads
        W_v = _torch.randn(C, H_kv * d_h, generator=g) / C**0.5
        q = (x @ W_q).view(B, T, H, d_h).transpose(1, 2)  # (B, H, T, d_h)
        k = (x @ W_k).view(B, T, H_kv, d_h).transpose(1, 2)  # (B, H_kv, T, d_h)
        v = (x @ W_v).view(B, T, H_kv, d_h).transpose(1, 2)  # (B, H_kv, T, d_h)
        k_rep, v_rep = _repeat_kv(k, n_rep), _repeat_kv(v, n_rep)  # (B, H, T, d_h)
        mask = _causal_mask(T, T)  # (T, T)
        out, weights = _attention(q, k, v, mask, return_weights=True)  # (B, H, T, d_h), (B, H, T, T)
        merged = out.transpose(1, 2).reshape(B, T, H * d_h)  # (B, T, C): heads side by side again
        ref = _F.scaled_dot_product_attention(q, k_rep, v_rep, is_causal=True)
        kind = "MHA" if H_kv == H else ("MQA" if H_kv == 1 else "GQA")
        return {
            "T": T, "H": H, "H_kv": H_kv, "B": B, "d_h": d_h, "C": C, "n_rep": n_rep, "kind": kind,
            "shapes": {"x": tuple(x.shape), "q": tuple(q.shape), "k": tuple(k.shape), "v": tuple(v.shape),
                       "k_rep": tuple(k_rep.shape), "scores": tuple(weights.shape),
                       "out": tuple(out.shape), "merged": tuple(merged.shape)},
            "n_kv_heads": k.shape[1],
            "groups": [list(range(j * n_rep, (j + 1) * n_rep)) for j in range(H_kv)],
            "kv_numbers_per_token": 2 * k.shape[1] * d_h,  # per layer and sequence: one k and one v per K/V head
            "kv_numbers_per_token_mha": 2 * H * d_h,
            "matches_sdpa": bool(_torch.allclose(out, ref, atol=1e-5)),
            "mask": mask, "weights": weights[0, 0],
        }

    def render(self, s: dict) -> str:
        rows = [
            ("x", "input", "B, T, C"),
            ("q", "queries: x @ W_q, split into heads", "B, H, T, d_h"),
            ("k", "keys: x @ W_k (what the cache stores)", "B, H_kv, T, d_h"),
            ("v", "values: x @ W_v (what the cache stores)", "B, H_kv, T, d_h"),
            ("k_rep", "keys after repeat_kv (same for values)", "B, H, T, d_h"),
            ("scores", "q @ kᵀ / √d_h, masked, softmax", "B, H, T, T"),
            ("out", "weights @ v", "B, H, T, d_h"),
            ("merged", "heads concatenated (then W_o)", "B, T, C"),
        ]
        cells = "".join(
            f"<tr><td><code>{n}</code></td><td>{what}</td><td>[{sym}]</td>"
            f"<td><code class=\"shape-{n}\">{_shape(s['shapes'][n])}</code></td></tr>"
            for n, what, sym in rows)
        groups = "; ".join(f"K/V head {j} ← query heads {', '.join(map(str, g))}" for j, g in enumerate(s["groups"]))
        return (
            f"<div class=\"attention-shapes\">"
            f"<p>B={s['B']}, T={s['T']}, H={s['H']}, d_h={s['d_h']}, C=H·d_h={s['C']}</p>"
            f"<table><tr><th>tensor</th><th>what</th><th>symbols</th><th>shape</th></tr>{cells}</table>"
            f"<p><b>{s['kind']}</b>: <span class=\"kv-heads\">{s['n_kv_heads']}</span> K/V head(s) for {s['H']} "
            f"query heads ({s['n_rep']} query head(s) per K/V head). {groups}.</p>"
            f"<p>Per token and layer the cache keeps 2·H_kv·d_h = <b>{s['kv_numbers_per_token']}</b> numbers "
            f"(MHA with the same H would keep {s['kv_numbers_per_token_mha']}).</p>"
            f"<p>Equals torch's scaled_dot_product_attention: <b>{s['matches_sdpa']}</b></p></div>"
        )

    def plot(self, s: dict):
        fig, (ax1, ax2, ax3) = _new_figure(ncols=3, width=4.2, height=3.6)
        _plot_mask(ax1, s["mask"], title=f"Causal mask, T={s['T']}")
        _plot_weights(ax2, s["weights"], title="Weights of query head 0")
        _plot_head_groups(ax3, s["H"], s["H_kv"])
        fig.subplots_adjust(left=0.05, right=0.99, bottom=0.2, top=0.9, wspace=0.55)  # fixed: tight_layout is slow
        return fig


# --- 04 cache_sizing ---
from .plots import format_bytes as _format_bytes
from .plots import plot_budget as _plot_budget
from .plots import plot_kv_vs_context as _plot_kv_vs_context
from .sizing import DTYPE_BYTES as _DTYPE_BYTES
from .sizing import MODEL_PRESETS as _MODEL_PRESETS
from .sizing import bytes_per_element as _bytes_per_element
from .sizing import cache_bytes_for as _cache_bytes_for
from .sizing import kv_cache_bytes as _kv_cache_bytes
from .sizing import max_concurrent_requests as _max_concurrent_requests

# Context lengths the T sliders offer: powers of two and the 1.5x steps between them, 1 .. 128k.
T_CHOICES: list[int] = sorted({2**i for i in range(18)} | {3 * 2**i for i in range(16)})  # 1, 2, 3, 4, 6, ... 131072
CUSTOM = "(custom)"


def bytes_text(n: int) -> str:
    """Exact and human form: ``8388608 -> '8,388,608 bytes (8.0 MiB)'``."""
    return f"{n:,} bytes ({_format_bytes(n)})"


def _t_slider(value: int) -> widgets.SelectionSlider:
    return selection_slider("T (tokens)", [(f"{t:,}", t) for t in T_CHOICES], value)


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
        cfg = _MODEL_PRESETS[preset] if preset != CUSTOM else _MODEL_PRESETS["Llama-3-8B"]
        controls = {
            "preset": dropdown("model preset", [CUSTOM] + list(_MODEL_PRESETS), preset),
            "T": _t_slider(T),
            "L": int_slider("L (layers)", cfg.n_layers, 1, 128, continuous_update=False),
            "H_kv": int_slider("H_kv (K/V heads)", cfg.n_kv_heads, 1, 128, continuous_update=False),
            "B": int_slider("B (sequences)", B, 1, 256, continuous_update=False),
            "d_h": int_slider("d_h (head width)", cfg.head_dim, 8, 256, step=8, continuous_update=False),
            "dtype": dropdown("dtype", list(_DTYPE_BYTES), dtype),
        }
        super().__init__(controls)

    def _preset_values(self, name: str) -> dict:
        cfg = _MODEL_PRESETS[name]
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
        n = _kv_cache_bytes(L, B, H_kv, T, d_h, dtype)
        per_token = {name: _kv_cache_bytes(L, B, H_kv, 1, d_h, name) for name in _DTYPE_BYTES}
        max_context = _MODEL_PRESETS[preset].max_seq_len if preset != CUSTOM else None
        return {"bytes": n, "bytes_text": bytes_text(n), "human": _format_bytes(n),
                "per_token_bytes": per_token[dtype], "per_token_by_dtype": per_token,
                "element_bytes": _bytes_per_element(dtype), "max_context": max_context,
                "values": {"preset": preset, "T": T, "L": L, "H_kv": H_kv, "B": B, "d_h": d_h, "dtype": dtype}}

    def render(self, s: dict) -> str:
        v = s["values"]
        formula = (f"2 × L {v['L']} × B {v['B']} × H_kv {v['H_kv']} × T {v['T']:,} × d_h {v['d_h']} "
                   f"× {s['element_bytes']} byte(s) ({v['dtype']})")
        extra = ""
        if s["max_context"] is not None:
            extra = f"<br>{_html.escape(v['preset'])} reads at most {s['max_context']:,} tokens"
            if v["T"] > s["max_context"]:
                extra += " <b style='color:#b00'>(T is beyond it)</b>"
        return (
            f"<div class=\"kv-explorer\"><p style='font-size:1.3em'>KV cache: "
            f"<span class=\"kv-bytes\">{s['bytes_text']}</span></p>"
            f"<p>= {formula}<br>per position of the batch: {bytes_text(s['per_token_bytes'])}{extra}</p></div>"
        )

    def plot(self, s: dict):
        v = s["values"]
        fig, (ax,) = _new_figure(width=7.0, height=3.6)
        per_token, highlight = {}, None  # one line per element size, so colours never move
        for size in sorted(set(_DTYPE_BYTES.values()), reverse=True):
            names = [d for d, b in _DTYPE_BYTES.items() if b == size]
            label = f"{size} byte{'s' if size > 1 else ''} per number: {', '.join(names)}"
            per_token[label] = s["per_token_by_dtype"][names[0]]
            if size == s["element_bytes"]:
                highlight = label
        _plot_kv_vs_context(ax, per_token, T_CHOICES[-1], mark=(v["T"], s["bytes"]), highlight=highlight,
                            max_context=s["max_context"],
                            title=f"KV cache vs T  (L={v['L']}, B={v['B']}, H_kv={v['H_kv']}, d_h={v['d_h']})")
        fig.subplots_adjust(left=0.1, right=0.97, bottom=0.14, top=0.9)  # fixed: tight_layout is slow
        return fig


class BudgetPlanner(Panel):
    """How many requests of T tokens fit on one GPU, next to a model's weights.

    ``state["n_requests"]`` is ``sizing.max_concurrent_requests`` for the controls' values;
    the weights take ``n_params * bytes(weights_dtype)``, ``reserve`` is the fraction kept for
    activations and the allocator, every request holds its own cache of T tokens.
    """

    title = "Budget planner: how many requests of T tokens fit?"

    def __init__(self, model: str = "Llama-3-8B", GPU_GiB: int = 80, T: int = 8192,
                 dtype: str = "bfloat16", weights_dtype: str = "bfloat16", reserve: float = 0.1) -> None:
        controls = {
            "model": dropdown("model", list(_MODEL_PRESETS), model),
            "GPU_GiB": int_slider("GPU memory (GiB)", GPU_GiB, 8, 192, step=8, continuous_update=False),
            "weights_dtype": dropdown("weights dtype", list(_DTYPE_BYTES), weights_dtype),
            "dtype": dropdown("cache dtype", list(_DTYPE_BYTES), dtype),
            "T": _t_slider(T),
            "reserve": float_slider("reserve (activations, ...)", reserve, 0.0, 0.5, 0.05,
                                    continuous_update=False),
        }
        super().__init__(controls)

    def compute(self, model: str, GPU_GiB: int, weights_dtype: str, dtype: str, T: int, reserve: float) -> dict:
        cfg = _MODEL_PRESETS[model]
        gpu = GPU_GiB * 2**30
        weights = cfg.n_params * _bytes_per_element(weights_dtype)
        per_request = _cache_bytes_for(cfg, 1, T, dtype)

        def fits(t: int) -> int:
            return _max_concurrent_requests(cfg, t, gpu, weight_bytes=weights, dtype=dtype, reserve_fraction=reserve)

        n = fits(T)
        reserve_bytes = int(gpu * reserve)
        used = n * per_request
        return {"model": model, "T": T, "gpu_bytes": gpu, "weight_bytes": weights, "reserve_bytes": reserve_bytes,
                "free_for_cache": max(gpu - reserve_bytes - weights, 0), "per_request_bytes": per_request,
                "n_requests": n, "cache_used_bytes": used, "unused_bytes": gpu - reserve_bytes - weights - used,
                "weights_fit": weights <= gpu - reserve_bytes, "max_context": cfg.max_seq_len,
                "tokens_in_cache": n * T, "curve_T": T_CHOICES, "curve_n": [fits(t) for t in T_CHOICES]}

    def render(self, s: dict) -> str:
        head = (f"<p><b>{_html.escape(s['model'])}</b>: weights {_format_bytes(s['weight_bytes'])}, "
                f"reserve {_format_bytes(s['reserve_bytes'])}, left for the KV cache "
                f"{_format_bytes(s['free_for_cache'])}.</p>")
        if not s["weights_fit"]:
            body = "<p style='color:#b00'>The weights alone do not fit on this GPU: 0 requests.</p>"
        else:
            body = (f"<p>One request of T = {s['T']:,} tokens holds {bytes_text(s['per_request_bytes'])} of cache."
                    f"<br><span style='font-size:1.3em'>Concurrent requests that fit: "
                    f"<b class=\"n-requests\">{s['n_requests']:,}</b></span>"
                    f" ({s['tokens_in_cache']:,} tokens cached in total).</p>")
        if s["T"] > s["max_context"]:
            body += f"<p>Note: T is beyond this model's max context ({s['max_context']:,}).</p>"
        return f"<div class=\"budget-planner\">{head}{body}</div>"

    def plot(self, s: dict):
        return _plot_budget(s)


# --- 02 prefill ---
from .generate import prefill as _prefill
from .plots import plot_kv_heatmap as _plot_kv_heatmap

# Prompts of the course language (every word is in the course tokenizer's vocabulary).
PREFILL_PROMPTS = (
    "<BOS> 他 有 两 只",
    "<BOS> 我 很 喜欢 猫 。 他 有 两 只",
    "<BOS> she doesn't like",
    "<BOS> we have three small",
)


class PrefillKVPanel(Panel):
    """02 · Prefill: what one prefill leaves in the cache, layer by layer.

    Controls: the prompt, a layer (0 .. L-1), a K/V head (0 .. H_kv-1), and K or V. The figure is
    that head's cached tensor ``[T, d_h]`` (one row per prompt token); the numbers say how far it
    is from the same head's tensor in layer 0 (zero only for layer 0 itself: every layer has its
    own K/V) and which token the prefill logits pick first.
    """

    title = "Prefill: the K/V every layer keeps"

    def __init__(self, model, tokenizer, prompts=PREFILL_PROMPTS) -> None:
        self.model, self.tok = model.eval(), tokenizer
        self._runs: dict[str, tuple] = {}  # prompt -> (words, first-token logits [1, V], cache)
        cfg = model.cfg
        super().__init__({
            "prompt": dropdown("prompt", list(prompts), prompts[0]),
            "layer": int_slider("layer", 0, 0, cfg.n_layers - 1),
            "head": int_slider("K/V head", 0, 0, cfg.n_kv_heads - 1),
            "tensor": dropdown("tensor", ["K", "V"], "K"),
        })

    def _run(self, prompt: str):
        if prompt not in self._runs:  # one prefill per prompt, then cached: moving sliders is instant
            ids = _torch.tensor([self.tok.encode(prompt)])  # (1, T)
            logits, kv = _prefill(self.model, ids)  # (1, V), every layer's K/V
            self._runs[prompt] = (self.tok.tokens(ids[0]), logits, kv)
        return self._runs[prompt]

    def compute(self, prompt: str, layer: int, head: int, tensor: str) -> dict:
        words, logits, kv = self._run(prompt)
        which = 0 if tensor == "K" else 1
        full = kv.layer_kv(layer)[which]  # (B, H_kv, T, d_h)
        x = full[0, head]  # (T, d_h)
        x0 = kv.layer_kv(0)[which][0, head]  # (T, d_h): the same head in layer 0
        probs = _torch.softmax(logits[0].float(), dim=-1)  # (V,)
        first = int(probs.argmax())
        return {
            "words": words, "T": len(words), "layer": layer, "head": head, "tensor": tensor,
            "shape": tuple(full.shape), "n_layers": kv.n_layers, "cache_len": kv.seq_len,
            "values": x.float().numpy().copy(),
            "rel_diff_to_layer0": float((x - x0).norm() / x0.norm()),
            "first_token": self.tok.decode([first]), "first_prob": float(probs[first]),
        }

    def render(self, s: dict) -> str:
        words = " ".join(_html.escape(w) for w in s["words"])
        rel = s["rel_diff_to_layer0"]
        same = "this is layer 0 itself" if s["layer"] == 0 else "a different tensor: layer 0's cannot stand in for it"
        return (
            f"<p>prompt ({s['T']} tokens): <code>{words}</code><br>"
            f"cache after prefill: {s['n_layers']} layers &times; (K, V), each "
            f"<code>[B, H_kv, T, d_h] = {list(s['shape'])}</code>, cache length {s['cache_len']}<br>"
            f"{s['tensor']} of layer {s['layer']}, head {s['head']}: "
            f"&Vert;{s['tensor']}<sub>{s['layer']}</sub> &minus; {s['tensor']}<sub>0</sub>&Vert; / "
            f"&Vert;{s['tensor']}<sub>0</sub>&Vert; = <b>{rel:.2f}</b> ({same})<br>"
            f"first token picked from the last position's logits: <b>{_html.escape(s['first_token'])}</b> "
            f"(p = {s['first_prob']:.2f})</p>"
        )

    def plot(self, s: dict):
        return _plot_kv_heatmap(
            s["values"], s["words"],
            f"cached {s['tensor']}, layer {s['layer']}, K/V head {s['head']}: [T={s['T']}, d_h={s['shape'][3]}]",
        )


# --- 03 decode ---
import torch as _torch03

from .cache import KVCache as _KVCache03
from .generate import decode_step as _decode_step03
from .generate import prefill as _prefill03
from .plots import COLORS as _COLORS03
from .timing import torch_threads as _torch_threads03

DECODE_PROMPT = "<BOS> he has three small dogs . they"

# The viewer's two grids are HTML tables (cheap to redraw on every slider move, and the browser
# writes Chinese tokens, which matplotlib's default font cannot). Same colours as the figures.
_DECODE_CSS = (
    "<style>"
    ".decode-grid{border-collapse:collapse;font-size:11px;line-height:1.1}"
    ".decode-grid td{width:15px;height:15px;padding:0;border:1px solid #fff}"
    ".decode-grid td.lab{width:auto;border:none;padding:0 6px 0 0;text-align:right;white-space:nowrap;color:#444}"
    ".decode-grid th{font-weight:normal;font-size:10px;padding:0 0 3px 0;vertical-align:bottom;color:#444}"
    ".decode-grid th span{writing-mode:vertical-rl;white-space:nowrap}"
    ".decode-grid td.empty{background:#f2f2f2}"
    f".decode-grid td.prompt{{background:{_COLORS03['prefill']}}}"
    f".decode-grid td.recomputed{{background:{_COLORS03['recompute']}}}"
    f".decode-grid td.new{{background:{_COLORS03['cached']}}}"
    f".decode-grid td.appended{{background:{_COLORS03['decode']}}}"
    ".decode-grid td.last{box-shadow:inset 0 0 0 2px #000}"
    ".decode-grid tr.future td{opacity:.25}"
    ".decode-grid tr.now td.lab{font-weight:bold;color:#000}"
    ".decode-key span{display:inline-block;width:11px;height:11px;margin:0 4px 0 12px;vertical-align:middle}"
    "</style>"
)


def _grid_table(kind: str, header: list[str], rows: list[tuple[str, str, list[str]]]) -> str:
    """``rows``: (row class, label, one CSS class per cell); ``header``: one label per column."""
    head = "".join(f"<th><span>{_html.escape(h)}</span></th>" for h in header)
    body = "".join(
        f"<tr class='{cls}'><td class='lab'>{label}</td>" + "".join(f"<td class='{c}'></td>" for c in cells) + "</tr>"
        for cls, label, cells in rows
    )
    return f"<table class='decode-grid {kind}'><tr><th></th>{head}</tr>{body}</table>"


def decode_grids_html(s: dict) -> str:
    """The two grids of a ``DecodePanel`` state, side by side (the same as ``plots.plot_decode_grids``).

    Left (``decode-nocache``): steps x positions; ``recomputed`` cells are history positions a loop
    without cache runs again, ``new`` the token fed at that step. Right (``decode-cache``): layers x
    positions, what each layer's cache holds after the current step (``prompt`` = from prefill,
    ``appended`` = from decode steps, ``last`` = the column this step appended).
    """
    T0, n_steps, step = s["prompt_len"], s["n_steps"], s["step"]
    n_pos = T0 + n_steps
    header = [f"{w} {i}" for i, w in enumerate(s["tokens"][:n_pos])]
    left = []
    for r in range(n_steps + 1):
        if r == 0:
            cells = ["prompt"] * T0 + ["empty"] * n_steps
        else:
            cells = ["recomputed"] * (T0 + r - 1) + ["new"] + ["empty"] * (n_pos - T0 - r)
        cls = "now" if r == step else ("future" if r > step else "past")
        left.append((cls, ("&#9654; " if r == step else "") + ("prefill" if r == 0 else f"step {r}"), cells))
    right = []
    for layer, n in enumerate(s["cache_len_per_layer"]):
        cells = ["prompt"] * min(n, T0) + ["appended"] * max(0, n - T0) + ["empty"] * (n_pos - n)
        if n > T0 and step:
            cells[n - 1] += " last"
        right.append(("layer", f"layer {layer}", cells))
    key = "".join(f"<span style='background:{c}'></span>{t}" for c, t in [
        (_COLORS03["prefill"], "prompt (prefill)"), (_COLORS03["recompute"], "history recomputed (no cache)"),
        (_COLORS03["cached"], "new token (both loops)"), (_COLORS03["decode"], "K/V appended by decode")])
    box = "<div style='overflow-x:auto;max-width:100%'>"
    return (
        f"{_DECODE_CSS}<div class='decode-key' style='font-size:90%;margin:4px 0'>{key}</div>"
        "<div style='display:flex;flex-wrap:wrap;gap:28px;align-items:flex-start'>"
        f"<div><b>Loop without cache</b>: step {step} recomputes {s['n_recomputed']} history positions"
        f"{box}{_grid_table('decode-nocache', header, left)}</div></div>"
        f"<div><b>KV cache</b> after step {step}: every layer holds {s['cache_len']} positions"
        f"{box}{_grid_table('decode-cache', header, right)}</div></div></div>"
    )


def trace_decode(model, ids: list[int], max_new_tokens: int, eos_id: int | None = None) -> dict:
    """Greedy-decode after ``ids`` with a ``KVCache`` and record what every step did.

    Step 0 is the prefill (all prompt tokens, first new token); decode step s (1, 2, ...) feeds
    the s-th new token at position ``T0 + s - 1`` (= the cache length before the step). Stops
    after ``max_new_tokens`` new tokens or at ``eos_id``; the last new token is not fed back.
    Returns ``new_ids`` and, per step, ``cache_before`` / ``cache_after``: the length of every
    layer's cache read from the cache itself (lists of L ints).
    """
    T0, L = len(ids), model.cfg.n_layers
    # One CPU thread: for matrices this small, waking more threads costs more than it saves.
    with _torch_threads03(1), _torch03.inference_mode():
        logits, kv = _prefill03(model, _torch03.tensor([ids]), cache=_KVCache03())  # (1, V)
        new_ids = [int(logits.argmax(-1))]
        before, after = [[0] * L], [[kv.layer_kv(i)[0].shape[2] for i in range(L)]]
        while len(new_ids) < max_new_tokens and new_ids[-1] != eos_id:
            before.append([kv.layer_kv(i)[0].shape[2] for i in range(L)])
            logits = _decode_step03(model, _torch03.tensor([new_ids[-1]]), kv)  # (1, V)
            after.append([kv.layer_kv(i)[0].shape[2] for i in range(L)])  # (B, H_kv, T, d_h): T grew by 1
            new_ids.append(int(logits.argmax(-1)))
    return {"prompt_ids": list(ids), "new_ids": new_ids, "cache_before": before, "cache_after": after,
            "stop": "eos" if new_ids[-1] == eos_id else "max_new_tokens"}


class DecodePanel(Panel):
    """03 · Decode: the side-by-side viewer of a loop without cache and a loop with one.

    Controls: ``prompt`` (a Text box of course-language words separated by spaces; ``<BOS>`` is
    added in front when missing) and ``step`` (0 = prefill, s = the s-th decode step; its range
    follows the generation). Each new prompt is greedy-decoded once (up to ``max_new_tokens``
    new tokens, stopping at ``<EOS>``) and kept, so moving the step slider only redraws.

    ``state`` (when the prompt is valid, ``ok`` is True): ``tokens`` (prompt + generated words),
    ``prompt_len`` (T0), ``n_steps``, ``step``, ``fed`` (words fed at this step), ``position`` (of
    the new token: the cache length before the step), ``n_recomputed`` (history positions a loop
    without cache pushes through the model again at this step), ``total_recomputed`` (summed over
    steps 1..step), ``cache_len_per_layer`` and ``cache_len`` (after the step), ``produced`` (the
    word this step's logits pick). A bad prompt gives ``ok`` False and a friendly ``message``.

    The HTML shows the summary (``<span class='decode-summary'>``, with the cache length) and both
    grids (``decode_grids_html``); ``plots.plot_decode_grids(state)`` draws the same as a figure.
    """

    title = "Decode, step by step: what a loop without cache recomputes, and how the cache grows"

    def __init__(self, model, tokenizer, prompt: str = DECODE_PROMPT, max_new_tokens: int = 12) -> None:
        self.model, self.tok = model.eval(), tokenizer
        self.max_new_tokens = max_new_tokens
        self._traces: dict[tuple, dict] = {}  # prompt ids -> trace_decode result
        self._syncing = False
        prompt_box = widgets.Text(value=prompt, description="prompt", continuous_update=False,
                                  placeholder="<BOS> she has", style=_STYLE,
                                  layout=widgets.Layout(width="560px"))
        step = int_slider("step", 0, 0, max(0, max_new_tokens - 1))  # HTML only: cheap to redraw
        super().__init__({"prompt": prompt_box, "step": step})

    def _on_change(self, change) -> None:
        if not self._syncing:  # the step slider's range is being adjusted from compute()
            self.update()

    def set(self, prompt: str | None = None, step: int | None = None) -> dict:
        """Move both controls, then recompute once (``panel.set(prompt="<BOS> she has", step=2)``).

        The prompt goes first, so the step slider already has the new prompt's range when the
        step is set (a step beyond it is clamped to the last step). Returns the new ``state``.
        """
        self._syncing = True
        try:
            if prompt is not None:
                self.controls["prompt"].value = prompt
                ids, _ = self._parse(prompt)
                if ids is not None:
                    self._set_step_max(len(self._trace(ids)["new_ids"]) - 1)
            if step is not None:
                slider = self.controls["step"]
                slider.value = min(max(int(step), slider.min), slider.max)
        finally:
            self._syncing = False
        self.update()
        return self.state

    def _parse(self, prompt: str) -> tuple[list[int] | None, str]:
        """Token ids of ``prompt``, or None and a friendly message saying what is wrong."""
        words = str(prompt).split()
        vocab = set(self.tok.vocab)
        unknown = [w for w in words if w not in vocab]
        if unknown:
            examples = " ".join(w for w in self.tok.vocab[3:] if w.isascii())
            return None, (f"Unknown word(s): {', '.join(repr(w) for w in dict.fromkeys(unknown))}. "
                          f"Use words of the course vocabulary separated by spaces, e.g. "
                          f"'<BOS> she has' or '<BOS> 我 喜欢'. Known English words: {examples}")
        if words[:1] != ["<BOS>"]:
            words = ["<BOS>"] + words  # documents start with <BOS>, as in training
        limit = self.model.cfg.max_seq_len - self.max_new_tokens
        if len(words) > limit:
            return None, (f"The prompt has {len(words)} tokens; at most {limit} fit "
                          f"(max_seq_len={self.model.cfg.max_seq_len} minus {self.max_new_tokens} new tokens).")
        return self.tok.encode(" ".join(words)), ""

    def _trace(self, ids: list[int]) -> dict:
        key = tuple(ids)
        if key not in self._traces:
            if len(self._traces) > 64:
                self._traces.clear()
            self._traces[key] = trace_decode(self.model, ids, self.max_new_tokens, self.tok.eos_id)
        return self._traces[key]

    def _set_step_max(self, n_steps: int) -> None:
        slider = self.controls["step"]
        if slider.max != n_steps:
            self._syncing = True
            try:
                slider.max = n_steps  # clamps .value when it is larger
            finally:
                self._syncing = False

    def compute(self, prompt: str, step: int) -> dict:
        ids, message = self._parse(prompt)
        if ids is None:
            return {"ok": False, "message": message, "prompt": prompt}
        tr = self._trace(ids)
        T0, n_steps = len(ids), len(tr["new_ids"]) - 1
        self._set_step_max(n_steps)
        step = min(max(int(step), 0), n_steps)
        tokens = self.tok.tokens(ids + tr["new_ids"])
        fed = tokens[:T0] if step == 0 else [tokens[T0 + step - 1]]
        cache_after = tr["cache_after"][step]
        return {
            "ok": True, "prompt": prompt, "tokens": tokens, "prompt_len": T0,
            "generated": tokens[T0:], "stop": tr["stop"], "n_steps": n_steps, "step": step, "fed": fed,
            "position": tr["cache_before"][step][0] if step else None,
            "positions": list(range(T0)) if step == 0 else [T0 + step - 1],
            "n_recomputed": tr["cache_before"][step][0],  # history a no-cache loop runs again
            "total_recomputed": sum(b[0] for b in tr["cache_before"][1 : step + 1]),
            "cache_len_per_layer": list(cache_after), "cache_len": cache_after[0],
            "produced": tokens[T0 + step],
        }

    def render(self, s: dict) -> str:
        if not s["ok"]:
            return f"<div class='decode-message' style='color:#a60'>&#9432; {_html.escape(s['message'])}</div>"
        T0, step = s["prompt_len"], s["step"]
        if step == 0:
            what = (f"prefill: {T0} prompt tokens at positions 0..{T0 - 1} go through all "
                    f"{len(s['cache_len_per_layer'])} layers at once")
        else:
            what = (f"decode step {step} of {s['n_steps']}: feeds <b>{_html.escape(s['fed'][0])}</b> at position "
                    f"{s['position']} (= the cache length before the step); a loop without cache would "
                    f"recompute {s['n_recomputed']} history positions ({s['total_recomputed']} so far)")
        summary = (f"<span class='decode-summary' data-step='{step}' data-cache-len='{s['cache_len']}' "
                   f"data-recomputed='{s['n_recomputed']}'>{what}; every layer's cache now holds "
                   f"<b>{s['cache_len']}</b> positions; this step's logits pick "
                   f"<b>{_html.escape(s['produced'])}</b></span>")
        stop = "stopped at &lt;EOS&gt;" if s["stop"] == "eos" else f"stopped after {len(s['generated'])} new tokens"
        return (f"<div style='font-size:90%;color:#555'>prompt: {_html.escape(' '.join(s['tokens'][:T0]))} "
                f"&rarr; greedy continuation: <b>{_html.escape(' '.join(s['generated']))}</b> ({stop})</div>"
                f"<p>{summary}</p>{decode_grids_html(s)}")


# --- 07 bug_lab ---
from . import bugs as _bugs
from .plots import plot_bug_divergence as _plot_bug_divergence


def diff_html(diff: str) -> str:
    """A unified diff as HTML: removed lines red, added lines green."""
    rows = []
    for line in diff.splitlines():
        color = {"-": "#fdd", "+": "#dfd", "@": "#eef"}.get(line[:1], "transparent")
        if line.startswith(("---", "+++")):
            color = "#eee"
        rows.append(f"<div style='background:{color};white-space:pre'>{_html.escape(line) or ' '}</div>")
    return f"<div style='font-family:monospace;font-size:85%'>{''.join(rows)}</div>"


class BugLabPanel(Panel):
    """07 · Bug lab: pick a bug, switch its fix on and off, watch the recompute check.

    Controls: the bug (``utils.bugs.BUGS``) and "apply the fix". Shows the diff from the broken to
    the fixed code, the check's verdict (first diverging step and position, or the error torch
    raised) and the per-step logit differences. Every (bug, fix) result is computed once, then reused.
    """

    title = "Bug lab: break the cache, then fix it"

    def __init__(self, model, prompt) -> None:
        self.model, self.prompt = model, prompt
        self._runs: dict[tuple[str, bool], object] = {}  # (bug, fixed) -> Outcome
        self._figs: dict[tuple[str, bool], object] = {}  # (bug, fixed) -> figure
        super().__init__({
            "bug": dropdown("bug", [(b.title, b.key) for b in _bugs.BUGS], _bugs.BUGS[0].key),
            "fixed": widgets.Checkbox(value=False, description="apply the fix"),
        })

    def compute(self, bug: str, fixed: bool) -> dict:
        if (bug, fixed) not in self._runs:
            self._runs[(bug, fixed)] = _bugs.BUG_BY_KEY[bug].run(self.model, self.prompt, fixed)
        out = self._runs[(bug, fixed)]
        b = _bugs.BUG_BY_KEY[bug]
        return {
            "bug": bug, "title": b.title, "fixed": fixed, "caught": out.caught, "summary": out.summary(),
            "first_step": out.first_step, "raised": out.error,
            "diffs": None if out.report is None else list(out.report.max_diffs),
            "symptom": b.symptom, "cause": b.cause, "check": b.check, "diff": _bugs.show_fix(b),
        }

    def render(self, s: dict) -> str:
        color = "#b00" if s["caught"] else "#070"
        verdict = f"<b style='color:{color}'>{_html.escape(s['summary'])}</b>"
        if s["raised"]:
            verdict += f"<br><code>{_html.escape(s['raised'][:300])}</code>"
        return (f"<p>{'fixed' if s['fixed'] else 'broken'} code, checked against a full recompute: {verdict}</p>"
                f"<p><b>symptom</b> {_html.escape(s['symptom'])} &middot; <b>cause</b> {_html.escape(s['cause'])}"
                f" &middot; <b>check / fix</b> {_html.escape(s['check'])}</p>{diff_html(s['diff'])}")

    def plot(self, s: dict):
        if s["diffs"] is None:
            return None
        key = (s["bug"], s["fixed"])
        if key not in self._figs:  # one figure per (bug, fix): flipping back and forth is instant
            label = f"{s['title']} ({'fixed' if s['fixed'] else 'broken'})"
            self._figs[key] = _plot_bug_divergence({label: s["diffs"]}, _bugs.TOL, title=s["summary"])
        return self._figs[key]


# --- 08 beyond_the_basics ---
from .plots import plot_sliding_window as _plot_sliding_window
from .sliding import compare_sliding as _compare_sliding

SLIDING_WINDOWS = (2, 4, 8, 12, 16, 24, 32, 48, 64)


class SlidingWindowPanel(Panel):
    """08 · Sliding window: how the window W changes memory and logits.

    Controls: W and how many tokens of ``ids`` (``[1, N]``) to feed. Shows where the logits first
    leave full attention (position W), that they always equal the band-mask recompute, and what the
    cache holds compared with a full cache. One run per W over all N tokens, then sliced (the logits
    of a prefix do not depend on what follows).
    """

    title = "Sliding-window cache: memory vs exactness"

    def __init__(self, model, ids, tol: float = 1e-4, runs: dict | None = None) -> None:
        self.model, self.ids, self.tol = model, ids, tol
        # window -> SlidingComparison over all of ``ids``; pass ones already computed to reuse them
        self._runs: dict[int, object] = dict(runs or {})
        N = ids.shape[1]
        super().__init__({
            "window": dropdown("window W", list(SLIDING_WINDOWS), 16),
            "n_tokens": int_slider("tokens fed", min(64, N), 1, N, continuous_update=False),
        })

    def compute(self, window: int, n_tokens: int) -> dict:
        if window not in self._runs:
            self._runs[window] = _compare_sliding(self.model, self.ids, window)
        full = self._runs[window]
        n = n_tokens
        comp = type(full)(window, full.ids[:, :n], full.diff_full[:n], full.diff_windowed[:n],
                          full.stored[:n], full.n_seen[:n], full.nbytes[:n])
        per_position = comp.nbytes[-1] // comp.stored[-1]
        return {
            "comp": comp, "window": window, "n_tokens": n, "stored": comp.stored[-1], "n_seen": comp.n_seen[-1],
            "nbytes": comp.nbytes[-1], "full_nbytes": per_position * n,
            "first_diff": comp.first_differing_position(self.tol),
            "equals_windowed": max(comp.diff_windowed) <= self.tol,
        }

    def render(self, s: dict) -> str:
        first = ("never: every position still sees all its history" if s["first_diff"] is None
                 else f"from position {s['first_diff']} on (the first token whose window has dropped a key)")
        return (f"<p>W = {s['window']}, {s['n_tokens']} tokens fed: the cache holds <b>{s['stored']}</b> positions "
                f"({s['nbytes']:,} bytes; a full cache would hold {s['n_tokens']} positions, {s['full_nbytes']:,} bytes); "
                f"the next token gets RoPE position <b>{s['n_seen']}</b>.<br>"
                f"Logits differ from full attention: <b>{first}</b>. "
                f"Equal to the sliding-window recompute (band mask) at every position: <b>{s['equals_windowed']}</b></p>")

    def plot(self, s: dict):
        return _plot_sliding_window(s["comp"], self.tol)


# --- 06 performance_metrics ---
from .perf import BENCH_CONFIGS as _BENCH_CONFIGS  # noqa: E402
from .perf import decode_bound as _decode_bound  # noqa: E402
from .plots import plot_decode_bound as _plot_decode_bound  # noqa: E402

# Published peak memory bandwidth, GB/s (theoretical; real kernels reach a large fraction of it).
HARDWARE_BANDWIDTH_GBPS: dict[str, float] = {
    "laptop, 2 x DDR5-5600": 89.6,  # 2 channels x 8 bytes x 5600 MT/s
    "Apple M2 Max": 400.0,
    "NVIDIA A100 80GB SXM (HBM2e)": 2039.0,
    "NVIDIA H100 SXM (HBM3)": 3350.0,
}
BATCH_CHOICES = [2**i for i in range(9)]  # 1 .. 256
CONTEXT_CHOICES = [128, 256, 512, 1024, 2048, 4096, 8192, 32768, 131072]


class DecodeBoundPanel(Panel):
    """The memory-bandwidth limit of decode: model, dtype, B, T and hardware -> bytes per step,
    the fastest possible TPOT and the most tokens/s (``utils.perf.decode_bound``).

    ``measured_GBps``: this machine's bandwidth (e.g. from ``utils.perf.memory_bandwidth``), offered
    as the first hardware choice.
    """

    title = "Decode is memory-bound: bytes per step / bandwidth = fastest TPOT"

    def __init__(self, measured_GBps: float | None = None, model: str = "Llama-3-8B", dtype: str = "bfloat16",
                 B: int = 1, T: int = 4096, hardware: str | None = None) -> None:
        self.models = {**{f"bench {k}": v for k, v in _BENCH_CONFIGS.items()}, **_MODEL_PRESETS}
        self.hardware = dict(HARDWARE_BANDWIDTH_GBPS)
        if measured_GBps is not None:
            self.hardware = {f"this machine (measured, {measured_GBps:.1f} GB/s)": float(measured_GBps),
                             **self.hardware}
        hardware = hardware or list(self.hardware)[0]
        controls = {
            "model": dropdown("model", list(self.models), model),
            "dtype": dropdown("dtype (weights and cache)", ["float32", "bfloat16", "float16", "int8"], dtype),
            "B": dropdown("B (rows decoded together)", BATCH_CHOICES, B),
            "T": dropdown("T (tokens per row so far)", CONTEXT_CHOICES, T),
            "hardware": dropdown("memory bandwidth of", list(self.hardware), hardware),
        }
        super().__init__(controls)

    def compute(self, model: str, dtype: str, B: int, T: int, hardware: str) -> dict:
        cfg = self.models[model]
        bandwidth = self.hardware[hardware] * 1e9  # bytes/s
        bound = _decode_bound(cfg, B, T, bandwidth, dtype)
        sweep = [{"B": b, **_decode_bound(cfg, b, T, bandwidth, dtype)} for b in BATCH_CHOICES]
        return {**bound, "model": model, "dtype": dtype, "B": B, "T": T, "hardware": hardware,
                "bandwidth_GBps": bandwidth / 1e9, "n_params": cfg.n_params,
                "kv_memory": _cache_bytes_for(cfg, B, T, dtype), "max_context": cfg.max_seq_len,
                "kv_share": (bound["kv_read"] + bound["kv_write"]) / bound["total"], "sweep": sweep}

    def render(self, s: dict) -> str:
        warn = ""
        if s["T"] > s["max_context"]:
            warn = f"<br><b style='color:#b00'>T is beyond what {_html.escape(s['model'])} reads ({s['max_context']:,})</b>"
        return (
            "<div class='decode-bound'><table>"
            f"<tr><td>weights read per step</td><td>{_format_bytes(s['weights'])}</td></tr>"
            f"<tr><td>K/V cache read per step (B × T positions)</td><td>{_format_bytes(s['kv_read'])}</td></tr>"
            f"<tr><td>bytes per step / per new token</td><td>{_format_bytes(s['total'])} / "
            f"{_format_bytes(s['bytes_per_token'])}</td></tr>"
            f"<tr><td>fastest possible TPOT</td><td><b>{s['tpot_min_s'] * 1e3:,.2f} ms</b></td></tr>"
            f"<tr><td>most tokens/s (all rows)</td><td><b>{s['max_tokens_per_s']:,.0f}</b></td></tr>"
            f"<tr><td>K/V share of the bytes read</td><td>{s['kv_share']:.0%}</td></tr>"
            f"<tr><td>KV cache memory</td><td>{_format_bytes(s['kv_memory'])}</td></tr>"
            f"</table>{warn}</div>"
        )

    def plot(self, s: dict):
        return _plot_decode_bound(s)
