"""Matplotlib figures the notebooks share. Every axis is labelled, with units."""
from __future__ import annotations

import contextlib
import contextvars
import warnings

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

# Without a Chinese font, token_label writes Chinese words as "zh:<gloss>"; should a glyph still slip
# through (a font cache that predates a newly installed font), one missing box is not worth a warning
# per character in every notebook output.
warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from (current )?font", category=UserWarning)

# One colour per idea, used the same way in every notebook.
COLORS = {"prefill": "#1f77b4", "decode": "#ff7f0e", "cached": "#2ca02c", "recompute": "#d62728",
          "K": "#9467bd", "V": "#8c564b", "mask": "#7f7f7f"}


# Panels draw while the kernel may run other messages on another thread (JupyterLab 4 sends widget
# messages to a kernel subshell). The inline backend draws and closes every *pyplot* figure after
# each message, which can catch a panel's figure half drawn. So inside ``detached()`` (each panel
# update) figures are made without pyplot: nothing but the panel ever sees them. The flag is a
# context variable, so a cell running on another thread keeps normal pyplot figures.
_DETACHED = contextvars.ContextVar("detached_figures", default=False)


@contextlib.contextmanager
def detached():
    """Within the block, ``subplots`` makes figures pyplot does not know about."""
    token = _DETACHED.set(True)
    try:
        yield
    finally:
        _DETACHED.reset(token)


def subplots(nrows: int = 1, ncols: int = 1, *, figsize=None, layout=None, **kwargs):
    """``plt.subplots``, or a pyplot-free ``Figure`` inside ``detached()``; every figure here is made by it."""
    if not _DETACHED.get():
        return plt.subplots(nrows, ncols, figsize=figsize, layout=layout, **kwargs)
    fig = Figure(figsize=figsize, layout=layout)
    return fig, fig.subplots(nrows, ncols, **kwargs)


def new_figure(ncols: int = 1, width: float = 6.0, height: float = 3.6):
    """A figure with ``ncols`` axes side by side (returns ``fig, axes`` with axes always a list)."""
    fig, axes = subplots(1, ncols, figsize=(width * ncols if ncols > 1 else width, height), squeeze=False)
    return fig, list(axes[0])


def format_bytes(n: float) -> str:
    """1536 -> '1.5 KiB' (binary units, as memory is sold and allocated)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


# --- 00 tour / 02 prefill ---
import functools as _functools
import re as _re

import numpy as _np

# English glosses of the course language's Chinese words, for figures: matplotlib's default
# font has no Chinese glyphs (they would show as empty boxes), so plots label them "zh:cat".
_ZH_GLOSS = {
    "我": "I", "你": "you", "他": "he", "她": "she", "我们": "we", "他们": "they",
    "很": "really", "喜欢": "like", "不": "not", "也": "also", "有": "have", "。": ".",
    "一": "one", "两": "two", "三": "three", "只": "MW-zhi", "条": "MW-tiao", "匹": "MW-pi",
    "小": "small", "大": "big", "白": "white", "黑": "black",
    "猫": "cat", "狗": "dog", "鱼": "fish", "鸟": "bird", "兔子": "rabbit", "马": "horse",
}
_CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Zen Hei",
              "WenQuanYi Micro Hei", "SimHei", "Microsoft YaHei", "PingFang SC", "Heiti SC",
              "AR PL UMing CN", "Droid Sans Fallback")


@_functools.lru_cache(maxsize=None)
def _cjk_font() -> str | None:
    """Name of an installed font with Chinese glyphs (None on a bare machine or Colab)."""
    from matplotlib import font_manager
    names = {f.name for f in font_manager.fontManager.ttflist}
    return next((n for n in _CJK_FONTS if n in names), None)


def token_label(word: str) -> str:
    """How a token is written in a figure: itself, or ``zh:<gloss>`` for Chinese when no font has its glyphs."""
    if word.isascii() or _cjk_font() is not None:
        return word
    return "zh:" + _ZH_GLOSS.get(word, "?")


def text_label(text: str) -> str:
    """``text`` with every run of Chinese characters written by ``token_label`` (for titles)."""
    return _CJK_RUN.sub(lambda m: token_label(m.group()), text)


_CJK_RUN = _re.compile(r"[\u3000-\u303f\u4e00-\u9fff]+")


def _cjk_context():
    """rc settings that put a Chinese-capable font first, when one is installed."""
    font = _cjk_font()
    return plt.rc_context({"font.sans-serif": [font, "DejaVu Sans"]} if font else {})


def plot_timeline(segments, labels: list[str] | None = None, title: str = "One generation, measured"):
    """Gantt bar of a generation: the prefill segment, then one segment per decode step.

    ``segments``: ``utils.timing.timeline(result)``; ``labels``: the token each segment produced
    (written above its bar). Times in milliseconds. Returns the figure.
    """
    with _cjk_context():
        fig, (ax,) = new_figure(width=8.0, height=2.6)
        end = max((s.end_s for s in segments), default=0.0) * 1e3
        for s in segments:
            ax.barh(0, s.duration_s * 1e3, left=s.start_s * 1e3, height=0.5, color=COLORS[s.phase],
                    edgecolor="white")
            # label the token a segment produced, unless the bar is too narrow to carry it
            if labels is not None and s.step < len(labels) and s.duration_s * 1e3 > 0.03 * end:
                ax.text((s.start_s + s.duration_s / 2) * 1e3, 0.32, token_label(labels[s.step]),
                        ha="center", va="bottom", fontsize=9)
        handles = [plt.Rectangle((0, 0), 1, 1, color=COLORS[p]) for p in ("prefill", "decode")]
        ax.legend(handles, ["prefill (whole prompt) + first token", "decode step (one token)"],
                  loc="upper center", bbox_to_anchor=(0.5, -0.35), ncol=2, frameon=False)
        ax.set_yticks([])
        ax.set_ylim(-0.4, 0.75)
        ax.set_xlim(0, end * 1.02 if end else 1)
        ax.set_xlabel("time since the call (ms)")
        ax.set_title(text_label(title))
        fig.tight_layout()
    return fig


def plot_top_probs(words: list[str], probs, title: str = "Next-token probabilities"):
    """Bar chart of the most likely next tokens (``words`` with their ``probs``, most likely first)."""
    probs = [float(p) for p in probs]
    with _cjk_context():
        fig, (ax,) = new_figure(width=5.5, height=3.2)
        bars = ax.bar(range(len(words)), probs, color=[COLORS["prefill"]] + [COLORS["mask"]] * (len(words) - 1))
        for b, p in zip(bars, probs):
            ax.text(b.get_x() + b.get_width() / 2, p, f"{p:.2f}", ha="center", va="bottom", fontsize=9)
        ax.set_xticks(range(len(words)), [token_label(w) for w in words])
        ax.set_ylim(0, 1.08)
        ax.set_xlabel("candidate next token")
        ax.set_ylabel("probability")
        ax.set_title(text_label(title))
        fig.tight_layout()
    return fig


def plot_ttft(T_values, seconds, title: str = "Prefill time vs prompt length"):
    """Two panels: TTFT (ms) against prompt length T, and the time per prompt token (µs)."""
    T = _np.asarray(list(T_values), dtype=float)
    ms = _np.asarray(list(seconds), dtype=float) * 1e3
    fig, (ax1, ax2) = new_figure(ncols=2, width=5.0, height=3.4)
    ax1.plot(T, ms, "o-", color=COLORS["prefill"])
    ax1.set_xlabel("prompt length T (tokens)")
    ax1.set_ylabel("prefill time = TTFT (ms)")
    ax1.set_ylim(0, None)
    ax1.set_title("TTFT grows with T")
    ax2.plot(T, ms * 1e3 / T, "o-", color=COLORS["prefill"])
    ax2.set_xlabel("prompt length T (tokens, log scale)")
    ax2.set_ylabel("prefill time per prompt token (µs)")
    ax2.set_xscale("log", base=2)
    ax2.set_xticks(T, [f"{t:g}" for t in T])
    ax2.minorticks_off()
    ax2.set_yscale("log")
    ax2.set_ylim(top=ax2.get_ylim()[1] * 1.5)
    ax2.set_title("time per prompt token")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_kv_heatmap(x, words: list[str], title: str, ax=None, vmax: float | None = None):
    """Heatmap of one head's keys or values ``[T, d_h]``: one row per prompt token."""
    x = _np.asarray(x, dtype=float)
    with _cjk_context():
        if ax is None:
            fig, (ax,) = new_figure(width=6.5, height=1.3 + 0.3 * max(len(words), 4))
        else:
            fig = ax.figure
        vmax = vmax or float(_np.abs(x).max()) or 1.0
        im = ax.imshow(x, aspect="auto", cmap="RdBu_r", vmin=-vmax, vmax=vmax, interpolation="nearest")
        ax.set_yticks(range(len(words)), [f"{t}: {token_label(w)}" for t, w in enumerate(words)])
        ax.set_xlabel("dimension of the head (0 .. d_h-1)")
        ax.set_ylabel("position t: token")
        ax.set_title(text_label(title))
        fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02, label="value")
        fig.tight_layout()
    return fig


# --- 05 sampling_and_stopping ---
SAMPLING_STAGES = ("original", "temperature", "top_k", "top_p")  # the keys of sampling.filter_stages


def plot_sampling_stages(stages: dict, ids: list[int], words: list[str], settings: dict, title: str = ""):
    """Four bar charts, one per step from logits to the distribution ``sample`` draws from.

    ``stages``: stage name -> probabilities of the shown tokens (``ids``/``words``, most likely
    first); ``settings``: ``temperature``, ``top_k``, ``top_p`` (None = off), optionally ``kept_size``.
    A grey × marks a token removed by that step or an earlier one; the last row's bars are the kept set.
    """
    T, k, p = settings["temperature"], settings["top_k"], settings["top_p"]
    titles = {
        "original": "1 · the model's distribution: softmax(logits)",
        "temperature": ("2 · greedy: all mass on the argmax" if T == 0
                        else f"2 · temperature {T:g}: softmax(logits / {T:g})"),
        "top_k": "3 · top-k " + ("off" if k is None or T == 0 else f"= {k}: only the {k} most likely stay"),
        "top_p": "4 · top-p " + ("off" if p is None or T == 0 else f"= {p:g}: smallest set reaching {p:g}")
                 + " → what sample() draws from"
                 + (f" (kept set: {settings['kept_size']} tokens)" if "kept_size" in settings else ""),
    }
    colors = {"original": COLORS["prefill"], "temperature": COLORS["decode"], "top_k": COLORS["K"],
              "top_p": COLORS["cached"]}
    labels = [f"{token_label(w)}\n#{i}" for i, w in zip(ids, words)]
    x = _np.arange(len(ids))
    with _cjk_context():
        fig, axes = subplots(len(SAMPLING_STAGES), 1, figsize=(9.0, 8.2), sharex=True)
        for ax, name in zip(axes, SAMPLING_STAGES):
            probs = _np.asarray(stages[name], dtype=float)
            alive = probs > 0
            ax.bar(x[alive], probs[alive], color=colors[name])
            for xi in x[~alive]:  # removed by this step or an earlier one
                ax.text(xi, 0.02, "×", ha="center", va="bottom", fontsize=11, color=COLORS["mask"])
            for xi, pr in zip(x[alive], probs[alive]):
                if pr >= 0.005:
                    ax.text(xi, pr, f"{pr:.2f}", ha="center", va="bottom", fontsize=8)
            ax.set_ylim(0, 1.15)
            ax.set_ylabel("probability")
            ax.set_title(titles[name], fontsize=10, loc="left")
        axes[-1].set_xticks(x, labels, fontsize=8)
        axes[-1].set_xlabel(f"next token (the {len(ids)} most likely under the model; × = removed)")
        if title:
            fig.suptitle(text_label(title))
        fig.subplots_adjust(left=0.08, right=0.98, top=0.92, bottom=0.12, hspace=0.35)  # tight_layout is slow
    return fig


# --- 01 attention_block ---
import numpy as _np01
from matplotlib.colors import ListedColormap as _ListedColormap


def plot_mask(ax, mask, title: str = "Causal mask", offset: int = 0) -> None:
    """Draw a boolean mask ``[T_q, T_k]`` on ``ax``: coloured = query i may attend to key j.

    ``offset`` is the absolute position of the first query (the cache length in decode), so
    the y labels show where each query really sits.
    """
    m = _np01.asarray(mask, dtype=float)  # (T_q, T_k)
    T_q, T_k = m.shape
    ax.imshow(m, cmap=_ListedColormap(["#f2f2f2", COLORS["prefill"]]), vmin=0, vmax=1,
              aspect="auto", interpolation="nearest")
    # thin white grid between cells so single positions stay readable
    ax.set_xticks(_np01.arange(-0.5, T_k), minor=True)
    ax.set_yticks(_np01.arange(-0.5, T_q), minor=True)
    ax.grid(which="minor", color="white", linewidth=1)
    ax.tick_params(which="minor", length=0)
    step_k = max(1, T_k // 8)
    step_q = max(1, T_q // 8)
    ax.set_xticks(range(0, T_k, step_k))
    ax.set_yticks(range(0, T_q, step_q), [str(offset + i) for i in range(0, T_q, step_q)])
    ax.set_xlabel("key position j (token index)")
    ax.set_ylabel("query position i (token index)")
    ax.set_title(title)


def plot_weights(ax, weights, title: str = "Attention weights (one head)"):
    """Heatmap of attention weights ``[T_q, T_k]`` (each row sums to 1); returns the image for a colorbar."""
    w = _np01.asarray(weights, dtype=float)
    im = ax.imshow(w, cmap="viridis", vmin=0, vmax=1, aspect="auto", interpolation="nearest")
    T_q, T_k = w.shape
    ax.set_xticks(range(0, T_k, max(1, T_k // 8)))
    ax.set_yticks(range(0, T_q, max(1, T_q // 8)))
    ax.set_xlabel("key position j (token index)")
    ax.set_ylabel("query position i (token index)")
    ax.set_title(title)
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="weight (row sums to 1)")
    return im


def plot_head_groups(ax, H: int, H_kv: int, title: str | None = None) -> None:
    """Which K/V head each query head reads: query head h uses K/V head ``h // (H // H_kv)``."""
    n_rep = H // H_kv
    cmap = plt.get_cmap("tab10" if H_kv <= 10 else "tab20")
    qx = _np01.linspace(0, 1, H) if H > 1 else _np01.array([0.5])
    kx = _np01.linspace(0, 1, H_kv) if H_kv > 1 else _np01.array([0.5])
    size = max(30, 500 / max(H, 1))
    for h in range(H):
        j = h // n_rep
        ax.plot([qx[h], kx[j]], [1, 0], color=cmap(j % cmap.N), linewidth=1.2, alpha=0.7, zorder=1)
    ax.scatter(qx, _np01.ones(H), s=size, color=[cmap((h // n_rep) % cmap.N) for h in range(H)],
               edgecolor="black", zorder=2)
    ax.scatter(kx, _np01.zeros(H_kv), s=size * 1.6, marker="s",
               color=[cmap(j % cmap.N) for j in range(H_kv)], edgecolor="black", zorder=2)
    ax.set_yticks([0, 1], [f"K/V heads\n(H_kv={H_kv})", f"query heads\n(H={H})"])
    ax.set_xticks([])
    ax.set_xlabel("head index (line: query head → its K/V head)")
    ax.set_ylim(-0.3, 1.3)
    ax.set_xlim(-0.08, 1.08)
    kind = "MHA" if H_kv == H else ("MQA" if H_kv == 1 else "GQA")
    ax.set_title(title or f"{kind}: {n_rep} query head(s) per K/V head")
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)


def plot_rope_scores(ax, scores, title: str = "q·k after RoPE, for every pair of positions"):
    """Heatmap of ``scores[m, n]`` = (RoPE(q, m)) · (RoPE(k, n)); constant along diagonals = depends on m - n only."""
    s = _np01.asarray(scores, dtype=float)
    vmax = float(_np01.abs(s).max()) or 1.0
    im = ax.imshow(s, cmap="RdBu_r", vmin=-vmax, vmax=vmax, aspect="auto", interpolation="nearest")
    ax.set_xlabel("key position n (token index)")
    ax.set_ylabel("query position m (token index)")
    ax.set_title(title)
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="q·k score")
    return im


# --- 04 cache_sizing ---
import numpy as _np04

_KIND_COLORS = {"MHA": COLORS["recompute"], "GQA": COLORS["prefill"], "MQA": COLORS["cached"]}


@plt.FuncFormatter
def _token_formatter(x, pos=None) -> str:
    """Axis ticks in tokens: 4096 -> '4k', 131072 -> '128k'."""
    return f"{x / 1024:g}k" if x >= 1024 else f"{x:g}"


def byte_unit(n: float) -> tuple[str, int]:
    """The binary unit that suits ``n`` bytes for an axis: ``('GiB', 2**30)`` and so on."""
    for name, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= scale:
            return name, scale
    return "bytes", 1


def plot_kv_vs_context(ax, per_token: dict[str, int], T_max: int, mark: tuple[int, int] | None = None,
                       highlight: str | None = None, max_context: int | None = None,
                       limits: dict[str, int] | None = None, gpu_gib: tuple[int, ...] = (24, 80),
                       title: str = "KV cache memory vs context length T"):
    """Lines ``bytes = per_token[label] * T`` for T in [0, T_max] (the cache grows linearly in T).

    ``highlight`` is drawn bold, the other lines thin; ``mark`` = ``(T, bytes)`` puts a dot on
    the current setting; ``max_context`` draws one model's limit as a vertical line, ``limits``
    (label -> max context) turns each line dotted past its own model's limit; GPU sizes are
    drawn as horizontal lines when they fall inside the plotted range.
    """
    top = max(per_token.values()) * T_max
    unit, scale = byte_unit(max(top, 1))
    limits = limits or {}
    for label, b in per_token.items():
        bold = highlight is None or label == highlight
        end = min(limits.get(label, T_max), T_max)
        T = _np04.array([0, end], dtype=float)
        (line,) = ax.plot(T, T * b / scale, linewidth=2.4 if bold else 1.0, alpha=1.0 if bold else 0.55,
                          linestyle="-" if bold else "--", label=label)
        if end < T_max:  # the formula goes on, the model does not
            T = _np04.array([end, T_max], dtype=float)
            ax.plot(T, T * b / scale, color=line.get_color(), linewidth=1.0, linestyle=":", alpha=0.8)
    for gib in gpu_gib:
        if 0.05 * top <= gib * 2**30 <= 1.2 * top:
            ax.axhline(gib * 2**30 / scale, color=COLORS["mask"], linestyle=":", linewidth=1)
            ax.text(T_max * 0.99, gib * 2**30 / scale, f"{gib} GiB GPU", va="bottom", ha="right", fontsize=8,
                    color=COLORS["mask"])
    if max_context is not None and max_context <= T_max:
        ax.axvline(max_context, color=COLORS["decode"], linestyle=":", linewidth=1.2)
        ax.text(max_context, top / scale * 0.5, f" model's max context\n {max_context:,} tokens", va="center",
                ha="left", fontsize=8, color=COLORS["decode"])
    if mark is not None:
        ax.plot([mark[0]], [mark[1] / scale], "o", color="black", zorder=5)
        ax.annotate(format_bytes(mark[1]), (mark[0], mark[1] / scale), textcoords="offset points",
                    xytext=(6, 6), fontsize=9)
    ax.set_xlim(0, T_max)
    ax.set_ylim(0, top / scale * 1.05)
    ax.xaxis.set_major_locator(plt.MultipleLocator(2 ** max(int(_np04.log2(max(T_max, 8) / 8)), 0)))
    ax.xaxis.set_major_formatter(_token_formatter)
    ax.set_xlabel("context length T (tokens)" + ("; dotted: past the model's max context" if limits else ""))
    ax.set_ylabel(f"KV cache memory ({unit})")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left")


def plot_per_token_bars(ax, names: list[str], per_token_bytes: list[int], kinds: list[str],
                        title: str = "KV cache per token (fp16, all layers, K and V)"):
    """Horizontal bars: cache bytes one token adds, per model, coloured by MHA / GQA / MQA."""
    kib = [b / 2**10 for b in per_token_bytes]
    y = _np04.arange(len(names))
    ax.barh(y, kib, color=[_KIND_COLORS[k] for k in kinds])
    for yi, v in zip(y, kib):
        ax.text(v, yi, f" {v:,.0f}", va="center", fontsize=8)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xlim(0, max(kib) * 1.18)
    ax.set_xlabel("KV cache per token (KiB)")
    ax.set_title(title)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for k, c in _KIND_COLORS.items() if k in kinds]
    ax.legend(handles, [k for k in _KIND_COLORS if k in kinds], fontsize=8, loc="lower right")


def plot_budget(state: dict):
    """Two panels for the budget planner: where the GPU memory goes, and requests that fit vs T."""
    fig, (ax1, ax2) = new_figure(ncols=2, width=5.6, height=3.2)
    gib = 2**30
    parts = [("weights", state["weight_bytes"], COLORS["mask"]),
             ("reserve", state["reserve_bytes"], "#c7c7c7"),
             (f"KV cache of {state['n_requests']:,} request(s)", state["cache_used_bytes"], COLORS["cached"]),
             ("unused", max(state["unused_bytes"], 0), "#f2f2f2")]
    left = 0.0
    for label, b, color in parts:
        w = min(b, max(state["gpu_bytes"] - left, 0)) / gib  # draw what fits on the card
        ax1.barh(0, w, left=left / gib, color=color, edgecolor="black", linewidth=0.5, label=label)
        left += w * gib
    ax1.set_xlim(0, state["gpu_bytes"] / gib)
    ax1.set_yticks([])
    ax1.set_xlabel("GPU memory (GiB)")
    ax1.set_title("Where the memory goes")
    ax1.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2, frameon=False)
    T, n = state["curve_T"], state["curve_n"]
    ax2.plot(T, n, "o-", color=COLORS["cached"], markersize=3)
    ax2.plot([state["T"]], [state["n_requests"]], "o", color="black", zorder=5)
    ax2.annotate(f"{state['n_requests']:,}", (state["T"], state["n_requests"]), textcoords="offset points",
                 xytext=(6, 6), fontsize=9)
    if state["max_context"] <= T[-1]:
        ax2.axvline(state["max_context"], color=COLORS["decode"], linestyle=":", linewidth=1.2)
        ax2.text(state["max_context"], 1, " model's\n max context", fontsize=8, color=COLORS["decode"])
    ax2.set_xscale("log", base=2)
    ax2.xaxis.set_major_formatter(_token_formatter)
    ax2.set_yscale("symlog", linthresh=1)
    ax2.yaxis.set_major_formatter(plt.FuncFormatter(lambda y, pos=None: f"{y:,.0f}"))
    ax2.set_ylim(0, None)
    ax2.set_xlabel("tokens per request T (log scale)")
    ax2.set_ylabel("concurrent requests that fit")
    ax2.set_title("Longer requests, fewer of them")
    fig.subplots_adjust(left=0.04, right=0.98, bottom=0.3, top=0.9, wspace=0.3)  # fixed: tight_layout is slow
    return fig


# --- 03 decode ---
import numpy as _np03
from matplotlib.colors import ListedColormap as _ListedColormap
from matplotlib.ticker import LogLocator as _LogLocator03
from matplotlib.ticker import NullFormatter as _NullFormatter03
from matplotlib.patches import Patch as _Patch

from .flops import decode_step_cost as _decode_step_cost

# Cell kinds of the decode grids (index into _GRID_COLORS).
_EMPTY, _PROMPT, _RECOMPUTED, _NEW, _FILLED = 0, 1, 2, 3, 4
_GRID_COLORS = ["#f2f2f2", COLORS["prefill"], COLORS["recompute"], COLORS["cached"], COLORS["decode"]]


@plt.FuncFormatter
def _si_formatter(x, pos=None) -> str:
    """Log-axis tick labels in plain text (1k, 10M, 1G): mathtext labels like 10^6 are slow to draw."""
    for scale, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:g}{unit}"
    if 0 < abs(x) < 1e-2:
        mantissa, exponent = f"{x:.0e}".split("e")
        return f"{mantissa}e{int(exponent)}"  # 1e-06 -> 1e-6
    return f"{x:g}"


def _plain_log_labels(ax) -> None:
    for axis, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        if axis.get_scale() == "log":
            if max(limits) / min(limits) < 1000:  # up to 3 decades: label 1, 2, 5 x 10^k too
                axis.set_major_locator(_LogLocator03(subs=(1, 2, 5)))
            axis.set_major_formatter(_si_formatter)
            axis.set_minor_formatter(_NullFormatter03())
    ax.minorticks_off()  # dozens of minor ticks per log axis cost more to draw than they tell


def _grid_axes(ax, n_rows: int, n_cols: int, words: list[str] | None, xlabel: str) -> None:
    """Cell borders, and the tokens (or, when there are many, position ticks) along x."""
    if words is not None and n_cols <= 40:
        # Plain text under each column: much faster to draw than 40 tick objects per axis.
        ax.set_xticks([])
        labels = [f"{token_label(w)} {i}" for i, w in enumerate(words[:n_cols])]
        for i, text in enumerate(labels):
            ax.text(i, -0.02, text, transform=ax.get_xaxis_transform(), rotation=90,
                    ha="center", va="top", fontsize=7)
        ax.set_xlabel(xlabel, labelpad=4 + 4.2 * max(len(t) for t in labels))
    else:
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.set_xlabel(xlabel)
    if n_cols <= 120:  # thin white lines between cells (one LineCollection each: cheap)
        ax.vlines(_np03.arange(0.5, n_cols - 1), -0.5, n_rows - 0.5, colors="white", lw=0.6)
    ax.hlines(_np03.arange(0.5, n_rows - 1), -0.5, n_cols - 0.5, colors="white", lw=0.6)


def plot_decode_grids(state: dict):
    """The side-by-side viewer of notebook 03 for one ``DecodePanel`` state.

    Left: steps (rows; 0 = prefill) x positions. In a loop without cache, step s pushes every
    position up to the new one through the model again: the history cells (red) are the
    recomputed ones; the green cell is the new token, computed by both loops.
    Right: layers (rows) x positions: what every layer's K/V cache holds after the current step
    (blue = written by prefill, orange = appended by a decode step; the last column appended is
    outlined). Rows after the current step are greyed out.
    """
    T0, n_steps, step = state["prompt_len"], state["n_steps"], state["step"]
    L, words = len(state["cache_len_per_layer"]), state["tokens"]
    n_pos = T0 + n_steps  # every position a step ever feeds
    left = _np03.zeros((n_steps + 1, n_pos), dtype=int)  # (steps, positions)
    left[0, :T0] = _PROMPT
    for s in range(1, n_steps + 1):
        left[s, : T0 + s - 1] = _RECOMPUTED
        left[s, T0 + s - 1] = _NEW
    right = _np03.zeros((L, n_pos), dtype=int)  # (layers, positions)
    for layer, n in enumerate(state["cache_len_per_layer"]):
        right[layer, : min(n, T0)] = _PROMPT
        right[layer, T0:n] = _FILLED
    cmap = _ListedColormap(_GRID_COLORS)
    width = min(14.0, max(9.0, 0.28 * n_pos * 2 + 3))
    fig, (ax0, ax1) = subplots(1, 2, figsize=(width, 3.9), gridspec_kw={"width_ratios": [1, 1]})
    ax0.imshow(left, cmap=cmap, vmin=0, vmax=len(_GRID_COLORS) - 1, aspect="auto", interpolation="nearest")
    if step < n_steps:  # future steps: not computed yet
        ax0.axhspan(step + 0.5, n_steps + 0.5, color="white", alpha=0.75, lw=0)
    ax0.add_patch(plt.Rectangle((-0.5, step - 0.5), n_pos, 1, fill=False, lw=2, ec="black"))
    ax0.set_ylabel("step (0 = prefill)")
    ax0.set_yticks(range(0, n_steps + 1, max(1, (n_steps + 1) // 12)))
    _grid_axes(ax0, n_steps + 1, n_pos, words, "position (token)")
    ax0.set_title(f"Loop without cache: step {step} recomputes {state['n_recomputed']} history positions",
                  fontsize=10)
    ax1.imshow(right, cmap=cmap, vmin=0, vmax=len(_GRID_COLORS) - 1, aspect="auto", interpolation="nearest")
    last = state["cache_len"] - 1
    ax1.add_patch(plt.Rectangle((last - 0.5, -0.5), 1, L, fill=False, lw=2, ec="black"))
    ax1.set_yticks(range(L))
    ax1.set_ylabel("layer")
    _grid_axes(ax1, L, n_pos, words, "cached position (token)")
    ax1.set_title(f"KV cache after step {step}: every layer holds {state['cache_len']} positions", fontsize=10)
    handles = [_Patch(color=_GRID_COLORS[_PROMPT], label="prompt (prefill)"),
               _Patch(color=_GRID_COLORS[_RECOMPUTED], label="history recomputed (no cache)"),
               _Patch(color=_GRID_COLORS[_NEW], label="new token (both loops)"),
               _Patch(color=_GRID_COLORS[_FILLED], label="K/V appended by decode")]
    fig.legend(handles=handles, loc="upper center", ncol=4, fontsize=8, frameon=False)
    height_pt = fig.get_figheight() * 72
    longest = max(len(f"{token_label(w)} {i}") for i, w in enumerate(words[:n_pos])) if n_pos <= 40 else 2
    bottom = min(0.5, (4.2 * longest + 34) / height_pt)  # room for the rotated token labels and the x label
    fig.subplots_adjust(left=0.06, right=0.99, top=0.83, bottom=bottom, wspace=0.15)  # tight_layout is slow
    return fig


def plot_recompute_diffs(report, title: str = "Cached vs full recompute, per step"):
    """Max |cached - recomputed| logit difference at every step of a ``RecomputeReport`` (log scale).

    Exact zeros cannot be drawn on a log axis: they are marked at the bottom edge as hollow dots.
    """
    diffs = _np03.asarray(report.max_diffs, dtype=float)
    steps = _np03.arange(len(diffs))
    floor = min(report.tol, diffs[diffs > 0].min() if (diffs > 0).any() else report.tol) / 10
    fig, ax = subplots(figsize=(7, 3.4))
    pos = diffs > 0
    ax.semilogy(steps[pos], diffs[pos], "o-", color=COLORS["cached"], label="max |diff| over the vocabulary")
    if (~pos).any():
        ax.plot(steps[~pos], _np03.full((~pos).sum(), floor), "o", mfc="none", color=COLORS["cached"],
                label="exactly 0 (drawn at the bottom)")
    ax.axhline(report.tol, color=COLORS["recompute"], ls="--", label=f"tolerance {report.tol:g}")
    ax.set_ylim(floor / 2, report.tol * 10)
    _plain_log_labels(ax)
    ax.set_xlabel("step (0 = prefill logits, s = s-th decode step)")
    ax.set_ylabel("max |logit difference| (logit units)")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left")
    fig.subplots_adjust(left=0.12, right=0.97, top=0.9, bottom=0.16)  # fixed: tight_layout is slow
    return fig


def plot_step_times(times, title: str = "Time of one decode step vs context length"):
    """Median ms per step (``utils.decode_timing.StepTimes``). Left: both loops, log-log axes.
    Right: the cached loop alone on linear axes, where its (slower) growth is easy to see."""
    T = _np03.asarray(times.context_lens)
    fig, (ax0, ax1) = subplots(1, 2, figsize=(12, 3.7))
    ax0.loglog(T, times.cached_ms, "o-", color=COLORS["cached"], label="with KV cache (1 new token)")
    nc = [(t, ms) for t, ms in zip(T, times.no_cache_ms) if ms is not None]
    if nc:
        ax0.loglog(*zip(*nc), "s-", color=COLORS["recompute"], label="without cache (all T + 1 tokens again)")
    ax0.set_title("Both loops (log-log)")
    ax0.legend(fontsize=8)
    _plain_log_labels(ax0)
    ax0.set_xticks(T, [str(t) for t in T])  # the measured lengths
    ax1.plot(T, times.cached_ms, "o-", color=COLORS["cached"], label="with KV cache")
    ax1.set_ylim(0, max(times.cached_ms) * 1.15)
    ax1.set_xlim(0, T.max() * 1.05)
    ax1.set_title("The cached step alone (linear axes)")
    for ax in (ax0, ax1):
        ax.set_xlabel("context length T (tokens already in the context)")
        ax.set_ylabel("median time per step (ms)")
        ax.grid(True, alpha=0.3)
    fig.suptitle(title, fontsize=11)
    fig.subplots_adjust(left=0.06, right=0.98, top=0.85, bottom=0.15, wspace=0.22)
    return fig


def plot_step_costs(cfg, context_lens, dtype="float32", title: str | None = None):
    """What one decode step costs vs context length T, counted with ``utils.flops``.

    Left: FLOPs per step, without cache and with cache, and the part of the cached step that is
    attention over the T + 1 keys (still paid). Right: bytes a cached step reads: the weights
    (constant) and the K/V cache (grows linearly with T).
    """
    T = list(context_lens)
    cached = [_decode_step_cost(cfg, t, cached=True, dtype=dtype) for t in T]
    nocache = [_decode_step_cost(cfg, t, cached=False, dtype=dtype) for t in T]
    fig, (ax0, ax1) = subplots(1, 2, figsize=(12, 3.8))
    ax0.loglog(T, [c.total_flops for c in nocache], "s-", color=COLORS["recompute"], label="without cache: total")
    ax0.loglog(T, [c.total_flops for c in cached], "o-", color=COLORS["cached"], label="with cache: total")
    ax0.loglog(T, [c.flops["attention"] for c in cached], "o--", color=COLORS["decode"],
               label="with cache: attention over T + 1 keys")
    ax0.set_xlabel("context length T (tokens)")
    ax0.set_ylabel("FLOPs per decode step")
    ax0.set_title("Compute of one step")
    ax0.grid(True, alpha=0.3)
    _plain_log_labels(ax0)
    ax0.legend(fontsize=8)
    w = _np03.array([c.bytes["weights"] for c in cached]) / 2**20
    kv = _np03.array([c.bytes["kv_read"] for c in cached]) / 2**20
    ax1.plot(T, w, color=COLORS["mask"], label="weights read")
    ax1.plot(T, kv, color=COLORS["K"], label="K/V cache read")
    ax1.plot(T, w + kv, color="black", ls=":", label="total")
    ax1.set_xlabel("context length T (tokens)")
    ax1.set_ylabel(f"MiB read per cached step ({dtype})")
    ax1.set_title("Memory one cached step reads")
    ax1.grid(True, alpha=0.3)
    ax1.legend(fontsize=8)
    fig.suptitle(title or (f"One decode step, counted: L={cfg.n_layers}, C={cfg.d_model}, H={cfg.n_heads}, "
                           f"H_kv={cfg.n_kv_heads}, d_h={cfg.head_dim}, d_ff={cfg.d_ff}, V={cfg.vocab_size}"),
                 fontsize=10)
    fig.subplots_adjust(left=0.07, right=0.98, top=0.85, bottom=0.15, wspace=0.25)
    return fig


# --- 05 sampling_and_stopping (continued) ---
def plot_temperature_sweep(words: list[str], probs_by_t: dict, title: str = "Temperature reshapes the distribution"):
    """Grouped bars: the probabilities of ``words`` (most likely first) at each temperature.

    ``probs_by_t``: temperature -> probabilities of ``words`` (0 = greedy, a one-hot).
    """
    temps = list(probs_by_t)
    cmap = plt.get_cmap("coolwarm")
    x = _np.arange(len(words))
    width = 0.8 / len(temps)
    with _cjk_context():
        fig, (ax,) = new_figure(width=8.0, height=3.6)
        for j, t in enumerate(temps):
            label = "T = 0 (greedy)" if t == 0 else f"T = {t:g}"
            ax.bar(x - 0.4 + width * (j + 0.5), _np.asarray(probs_by_t[t], dtype=float), width,
                   color=cmap(j / max(len(temps) - 1, 1)), label=label)
        ax.set_xticks(x, [token_label(w) for w in words])
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("next token (most likely first)")
        ax.set_ylabel("probability")
        ax.set_title(text_label(title))
        ax.legend(frameon=False)
        fig.tight_layout()
    return fig


# --- 07 bug_lab / 08 beyond_the_basics ---
import numpy as _np07


def _positive_floor(values, tol: float) -> float:
    """Where exact zeros are drawn on a log axis: a decade below the smallest value or ``tol``."""
    vals = _np07.asarray([v for v in values if v > 0], dtype=float)
    return min(tol, vals.min() if vals.size else tol) / 10


def plot_bug_divergence(curves: dict, tol: float, title: str = "Cached vs recomputed logits, per step"):
    """max |cached - recomputed| logits per step for several variants (``label -> list``), log scale.

    Exact zeros are drawn as hollow markers at the bottom edge; the dashed line is the tolerance.
    """
    floor = _positive_floor([v for c in curves.values() for v in c], tol)
    fig, ax = subplots(figsize=(7, 3.4), layout="constrained")
    palette = [COLORS["recompute"], COLORS["cached"], COLORS["decode"], COLORS["K"], COLORS["V"]]
    for (label, diffs), color in zip(curves.items(), palette):
        d = _np07.asarray(diffs, dtype=float)
        steps = _np07.arange(len(d))
        ax.semilogy(steps, _np07.where(d > 0, d, floor), "-", color=color, alpha=0.6)
        ax.plot(steps[d > 0], d[d > 0], "o", color=color, label=label)
        if (d == 0).any():
            ax.plot(steps[d == 0], _np07.full((d == 0).sum(), floor), "o", mfc="none", color=color)
    ax.axhline(tol, color="black", ls="--", lw=1, label=f"tolerance {tol:g}")
    ax.plot([], [], "o", mfc="none", color="#555", label="hollow: exactly 0 (drawn at the bottom)")
    ax.set_ylim(floor / 2, max(10 * tol, max(max(c) for c in curves.values()) * 3))
    ax.set_xlabel("step (0 = prefill, s = s-th decode step)")
    ax.set_ylabel("max |logit difference| (logit units)")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    return fig


def plot_bug_overview(results, tol: float, title: str = "Where each bug shows up (broken variants)"):
    """One row per bug of ``utils.bugs.run_all``'s ``results``, one column per step.

    Colour: log10 of max |cached - recomputed| (green at or below ``tol``, red far above). Where
    torch raised instead, the cell says "raises" and later steps are empty. The first step past
    ``tol`` is outlined.
    """
    n_steps = max(max(len(b.report.max_diffs) if b.report is not None else 0,
                      (b.error_step or 0) + 1) for _, b, _ in results)
    if any(b.error is not None for _, b, _ in results):
        title += "\n(white: steps not reached, torch raised an error)"
    grid = _np07.full((len(results), n_steps), _np07.nan)
    lo, hi = _np07.log10(tol) - 4, 1.0
    fig, ax = subplots(figsize=(8.5, 0.42 * len(results) + 1.6), layout="constrained")
    for row, (bug, broken, _) in enumerate(results):
        if broken.report is not None:
            d = _np07.asarray(broken.report.max_diffs, dtype=float)
            grid[row, : len(d)] = _np07.log10(_np07.maximum(d, 10 ** lo))
        if broken.error is not None:
            ax.text(broken.error_step, row, "raises", ha="center", va="center", fontsize=7, color="#b00")
    im = ax.imshow(grid, cmap="RdYlGn_r", vmin=lo, vmax=hi, aspect="auto", interpolation="nearest")
    for row, (_, broken, _) in enumerate(results):
        if broken.first_step is not None:
            ax.add_patch(plt.Rectangle((broken.first_step - 0.5, row - 0.5), 1, 1, fill=False, lw=2, ec="black"))
    ax.set_yticks(range(len(results)))
    ax.set_yticklabels([bug.title for bug, _, _ in results], fontsize=8)
    ax.set_xticks(range(n_steps))
    ax.set_xlabel("step (0 = prefill, s = s-th decode step)")
    ax.set_title(title)
    bar = fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
    bar.set_label("log10 max |logit diff|", fontsize=8)
    bar.ax.axhline(_np07.log10(tol), color="black", lw=1)
    return fig


def plot_cache_memory(traces, title: str = "What each cache holds and allocates"):
    """Left: KiB held vs tokens processed, per ``utils.sliding.MemoryTrace``. Right: new buffers so far."""
    styles = {"dynamic": ("-", COLORS["decode"], 4), "static": ("-", COLORS["prefill"], 2.5),
              "sliding": ("--", COLORS["cached"], 2)}
    fig, (ax0, ax1) = subplots(1, 2, figsize=(11, 3.6), layout="constrained")
    for tr in traces:
        ls, color, lw = styles.get(tr.kind, ("-", "gray", 2))
        ax0.plot(tr.tokens, _np07.asarray(tr.nbytes) / 1024, ls, lw=lw, color=color, label=tr.kind)
        ax1.step(tr.tokens, _np07.cumsum(tr.new_buffer), ls, where="post", lw=lw, color=color, label=tr.kind)
    ax0.set_xlabel("tokens processed (prompt + generated)")
    ax0.set_ylabel("K/V memory held (KiB)")
    ax0.set_title("Memory", fontsize=10)
    ax0.set_ylim(bottom=0)
    ax0.legend(fontsize=8)
    ax1.set_xlabel("tokens processed (prompt + generated)")
    ax1.set_ylabel("new K buffers allocated (layer 0)")
    ax1.set_title("New buffers (the static cache allocated once, before the prompt)", fontsize=10)
    ax1.legend(fontsize=8)
    fig.suptitle(title)
    return fig


def plot_sliding_window(comp, tol: float, title: str | None = None):
    """A ``utils.sliding.SlidingComparison``: logit differences and cache contents per position."""
    W = comp.window
    pos = _np07.arange(len(comp.diff_full))
    floor = _positive_floor(comp.diff_full + comp.diff_windowed, tol)
    fig, (ax0, ax1) = subplots(1, 2, figsize=(11, 3.6), layout="constrained")
    for diffs, label, color in ((comp.diff_full, "vs full attention", COLORS["recompute"]),
                                (comp.diff_windowed, "vs sliding-window recompute (band mask)", COLORS["cached"])):
        d = _np07.asarray(diffs, dtype=float)
        ax0.semilogy(pos, _np07.where(d > 0, d, floor), "o-", ms=3, color=color, label=label)
    ax0.axhline(tol, color="black", ls="--", lw=1, label=f"tolerance {tol:g}")
    ax0.axvline(W - 0.5, color=COLORS["mask"], ls=":", label=f"window full (W = {W})")
    ax0.set_xlabel("position of the token (0-based)")
    ax0.set_ylabel("max |logit difference| (logit units)")
    ax0.set_title("Sliding-window cache: logits", fontsize=10)
    ax0.legend(fontsize=7, loc="center right")
    ax1.plot(pos, comp.n_seen, "-", color=COLORS["decode"], label="tokens seen = next RoPE position")
    ax1.plot(pos, comp.stored, "-", color=COLORS["cached"], lw=2.5, label="positions stored in the cache")
    ax1.axhline(W, color=COLORS["mask"], ls=":", lw=1)
    ax1.set_xlabel("position of the token (0-based)")
    ax1.set_ylabel("count (tokens)")
    ax1.set_title("Memory stays at W, positions keep counting", fontsize=10)
    ax1.legend(fontsize=8)
    fig.suptitle(title or f"Sliding window W = {W}")
    return fig


def plot_cache_step_times(T_values, times_s: dict, title: str = "One decode step: KVCache vs StaticKVCache"):
    """Median ms per decode step vs tokens already cached, one line per cache kind (``kind -> seconds``)."""
    colors = {"dynamic": COLORS["decode"], "static": COLORS["prefill"]}
    fig, ax = subplots(figsize=(7, 3.6), layout="constrained")
    for kind, secs in times_s.items():
        ax.plot(T_values, _np07.asarray(secs) * 1e3, "o-", color=colors.get(kind, "gray"),
                label={"dynamic": "KVCache (grows by torch.cat)", "static": "StaticKVCache (writes in place)"}.get(kind, kind))
    ax.set_xlabel("tokens already in the cache (T)")
    ax.set_ylabel("median time per decode step (ms)")
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def plot_beam_tree(result, words, title: str = "Beam search: which beam continues which"):
    """Beams (rows, 0 = best) over steps, each box a token; a line joins a beam to its parent.

    ``result`` is a ``utils.beam.BeamSearchResult``; ``words(ids) -> list[str]`` names tokens.
    The thick green path is the final best beam. Lines that change row are where
    ``cache.reorder`` has real work to do: the beam in row b continues the history of another row.
    """
    n_beams, n_steps = len(result.step_tokens[0]), len(result.step_tokens)
    fig, ax = subplots(figsize=(min(12, 1.2 * n_steps + 2.5), 0.55 * n_beams + 1.5), layout="constrained")
    for s in range(n_steps):
        for b, parent in enumerate(result.parents[s]):
            ax.plot([s - 1, s], [parent if s else 0, b], "-", color=COLORS["mask"], lw=1, zorder=1)
    row = 0  # walk the best final beam back to the prompt
    path = []
    for s in range(n_steps - 1, -1, -1):
        path.append((s, row))
        row = result.parents[s][row]
    path.append((-1, 0))
    ax.plot(*zip(*path), "-", color=COLORS["cached"], lw=3, zorder=2)
    with _cjk_context():
        box = dict(boxstyle="round,pad=0.2", fc="white", ec="#999")
        ax.text(-1, 0, "prompt", ha="center", va="center", fontsize=8, bbox=box, zorder=3)
        for s in range(n_steps):
            for b, word in enumerate(words(result.step_tokens[s])):
                ax.text(s, b, token_label(word), ha="center", va="center", fontsize=8, bbox=box, zorder=3)
    ax.set_xticks(range(n_steps))
    ax.set_xticklabels([str(s + 1) for s in range(n_steps)])
    ax.set_xlabel("step (new token number)")
    ax.set_yticks(range(n_beams))
    ax.set_ylabel("beam = cache row")
    ax.set_ylim(n_beams - 0.5, -0.5)
    ax.set_xlim(-1.6, n_steps - 0.4)
    ax.set_title(title)
    return fig


# --- 03 decode (continued) ---
def plot_new_query_weights(weights, words: list[str], title: str = "The new token's query, one row per head"):
    """Attention weights ``[H, T + 1]`` of one decode step's single query over every cached key
    and its own (the last column). Each row sums to 1."""
    w = _np03.asarray(weights, dtype=float)  # (H, S)
    H, S = w.shape
    fig, ax = subplots(figsize=(7.5, 2.9))
    im = ax.imshow(w, cmap="viridis", vmin=0, vmax=1, aspect="auto", interpolation="nearest")
    ax.set_xticks(range(S))
    ax.set_xticklabels([f"{token_label(t)} {i}" for i, t in enumerate(words[:S])], rotation=90, fontsize=8)
    ax.set_yticks(range(H))
    ax.set_ylabel("query head")
    ax.set_xlabel("key position (token); the last key is the new token's own")
    ax.set_title(title)
    fig.subplots_adjust(left=0.08, right=0.98, top=0.9, bottom=0.36)
    fig.colorbar(im, ax=ax, fraction=0.03, pad=0.02, label="attention weight")
    return fig


# --- 06 performance_metrics ---
import numpy as _np06  # noqa: E402
from matplotlib.ticker import FuncFormatter as _FuncFormatter06  # noqa: E402
from matplotlib.ticker import LogLocator as _LogLocator06  # noqa: E402


def _plain_log_y(ax) -> None:
    """Log y axis labelled 1, 2, 5, 10, 20, ... instead of powers of ten only."""
    ax.yaxis.set_major_locator(_LogLocator06(subs=(1, 2, 5)))
    ax.yaxis.set_major_formatter(_FuncFormatter06(lambda y, pos=None: f"{y:g}"))
    ax.yaxis.set_minor_formatter(_FuncFormatter06(lambda y, pos=None: ""))


def _median_band(ax, x, stats, color, label, marker="o"):
    """Median line of ``utils.perf.Stats`` (seconds, drawn in ms) with the quartiles as error bars."""
    med = _np06.array([s.median for s in stats]) * 1e3
    lo = med - _np06.array([s.q1 for s in stats]) * 1e3
    hi = _np06.array([s.q3 for s in stats]) * 1e3 - med
    ax.errorbar(x, med, yerr=[lo, hi], fmt=marker + "-", color=color, label=label, capsize=3, ms=5)


def plot_ttft_tpot(ttft: dict, tpot: dict, title: str = "TTFT and TPOT, with and without the KV cache"):
    """Left: TTFT vs prompt length. Right: TPOT vs context length. Inputs are what
    ``utils.perf.ttft_vs_prompt_length`` and ``utils.perf.tpot_vs_context`` return (log-log axes,
    median with quartile bars)."""
    fig, (ax0, ax1) = subplots(1, 2, figsize=(12, 3.9))
    for ax, res, xlabel, ylabel, sub in (
        (ax0, ttft, "prompt length T (tokens)", "TTFT (ms)", "TTFT: the first token needs the whole prompt"),
        (ax1, tpot, "context length T (tokens already there)", "TPOT: time of one decode step (ms)",
         "TPOT: the cache makes each step small"),
    ):
        T = _np06.asarray(res["T"])
        _median_band(ax, T, res["cached"], COLORS["cached"], "with KV cache")
        if res.get("no_cache") is not None:
            _median_band(ax, T, res["no_cache"], COLORS["recompute"], "without cache (recompute everything)", "s")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        _plain_log_y(ax)
        ax.set_xticks(T, [str(t) for t in T])
        ax.minorticks_off()
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(sub, fontsize=10)
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=11)
    fig.subplots_adjust(left=0.07, right=0.98, top=0.84, bottom=0.15, wspace=0.25)
    return fig


def plot_batch_sweep(sweep: dict, title: str = "Batching: more tokens per second, slower for each request"):
    """``utils.perf.batch_sweep``'s result. Left: throughput (tokens/s, all rows) vs B. Right: what one
    request feels: TTFT, TPOT and end-to-end latency (ms) vs B."""
    B = _np06.asarray(sweep["B"])
    fig, (ax0, ax1) = subplots(1, 2, figsize=(12, 3.9))
    ax0.plot(B, sweep["throughput"], "o-", color=COLORS["cached"], label="end to end: B x n / latency")
    ax0.plot(B, sweep["decode_throughput"], "s--", color=COLORS["decode"], label="while decoding: B / TPOT")
    ax0.set_ylabel("throughput (new tokens/s, all rows)")
    ax0.set_title("The server's view: throughput", fontsize=10)
    ax1.plot(B, _np06.asarray(sweep["latency_s"]) * 1e3, "o-", color="k", label="latency (end to end)")
    ax1.plot(B, _np06.asarray(sweep["ttft_s"]) * 1e3, "s-", color=COLORS["prefill"], label="TTFT")
    ax1.plot(B, _np06.asarray(sweep["tpot_s"]) * 1e3, "^-", color=COLORS["decode"], label="TPOT")
    ax1.set_yscale("log")
    _plain_log_y(ax1)
    ax1.set_ylabel("time (ms, log scale)")
    ax1.set_title("One request's view: latency", fontsize=10)
    for ax in (ax0, ax1):
        ax.set_xscale("log", base=2)
        ax.set_xticks(B, [str(b) for b in B])
        ax.minorticks_off()
        ax.set_xlabel("batch size B (requests decoded together)")
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize=8)
    ax0.set_ylim(bottom=0)
    fig.suptitle(title, fontsize=11)
    fig.subplots_adjust(left=0.07, right=0.98, top=0.84, bottom=0.15, wspace=0.25)
    return fig


def plot_schedules(schedules: dict, title: str = "Same requests, two schedules"):
    """Per-request TTFT of each schedule (``name -> utils.perf.serve`` result), with its throughput."""
    names = list(schedules)
    colors = [COLORS["prefill"], COLORS["decode"], COLORS["cached"], COLORS["recompute"]]
    fig, axes = subplots(1, len(names), figsize=(6 * len(names), 3.6), sharey=True, squeeze=False)
    top = max(max(s["ttft_s"]) for s in schedules.values()) * 1e3
    for ax, name, color in zip(axes[0], names, colors):
        s = schedules[name]
        ttft = _np06.asarray(s["ttft_s"]) * 1e3
        ax.bar(_np06.arange(len(ttft)), ttft, color=color)
        ax.axhline(_np06.median(ttft), color="k", lw=1, ls="--", label=f"median TTFT {_np06.median(ttft):.0f} ms")
        ax.set_title(f"{name}\nthroughput {s['throughput']:.0f} tok/s, makespan {s['makespan_s'] * 1e3:.0f} ms",
                     fontsize=10)
        ax.set_xlabel("request (all arrive at t = 0)")
        ax.set_ylim(0, top * 1.1)
        ax.legend(fontsize=8, loc="upper left")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0][0].set_ylabel("TTFT of the request (ms)")
    fig.suptitle(title, fontsize=11)
    fig.subplots_adjust(left=0.07, right=0.98, top=0.78, bottom=0.15, wspace=0.08)
    return fig


def plot_bandwidth(res: dict, title: str = "Batch-1 decode against the memory bandwidth"):
    """``utils.perf.decode_vs_bandwidth``'s result: measured copy and read bandwidth next to the
    bandwidth the decode step achieves (bytes it must read / its time), GB/s, median with quartiles."""
    names = ["copy\n(read + write)", "reduce\n(read only)", "decode step\n(bytes / time)"]
    stats = [res["copy_Bps"], res["read_Bps"], res["achieved_Bps"]]
    med = _np06.array([s.median for s in stats]) / 1e9
    err = [med - _np06.array([s.q1 for s in stats]) / 1e9, _np06.array([s.q3 for s in stats]) / 1e9 - med]
    fig, ax = subplots(figsize=(7, 3.6))
    ax.bar(names, med, yerr=err, capsize=4, color=[COLORS["mask"], COLORS["mask"], COLORS["decode"]])
    ax.axhline(res["limit_Bps"] / 1e9, color="k", ls="--", lw=1, label="measured limit")
    ax.text(2, med[2] + err[1][2], f"{res['fraction']:.0%} of the limit", ha="center", va="bottom", fontsize=9)
    ax.set_ylabel("memory bandwidth (GB/s)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="lower left")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def plot_decode_bound(state: dict, title: str | None = None):
    """``DecodeBoundPanel``'s state: the bandwidth limit on decode against batch size B.
    Left: the most tokens/s memory allows (log-log), the chosen B marked. Right: the bytes one
    step reads, split into weights (the same for any B) and K/V cache (grows with B)."""
    sweep = state["sweep"]
    B = _np06.asarray([r["B"] for r in sweep])
    fig, (ax0, ax1) = subplots(1, 2, figsize=(11, 3.6))
    ax0.loglog(B, [r["max_tokens_per_s"] for r in sweep], "o-", color=COLORS["cached"])
    ax0.plot([state["B"]], [state["max_tokens_per_s"]], "o", ms=11, mfc="none", mec="k", label=f"B = {state['B']}")
    _plain_log_y(ax0)
    ax0.set_ylabel("most tokens/s the bandwidth allows")
    ax0.set_title("Throughput limit = B / (bytes per step / bandwidth)", fontsize=10)
    ax0.legend(fontsize=8)
    weights = _np06.asarray([r["weights"] for r in sweep]) / 1e9
    kv = _np06.asarray([r["kv_read"] + r["kv_write"] for r in sweep]) / 1e9
    x = _np06.arange(len(B))
    ax1.bar(x, weights, color=COLORS["mask"], label="weights (read once per step)")
    ax1.bar(x, kv, bottom=weights, color=COLORS["K"], label="K/V cache (read once per row)")
    ax1.set_xticks(x, [str(b) for b in B])
    ax1.set_ylabel("bytes read per decode step (GB)")
    ax1.set_title("What one step reads", fontsize=10)
    ax1.legend(fontsize=8)
    for ax in (ax0, ax1):
        ax.set_xlabel("batch size B")
        ax.grid(True, alpha=0.3, which="both")
    if B.size:
        ax0.set_xticks(B, [str(b) for b in B])
        ax0.minorticks_off()
    fig.suptitle(title or f"{state['model']}, {state['dtype']}, T = {state['T']:,} per row, "
                          f"{state['bandwidth_GBps']:,.3g} GB/s", fontsize=11)
    fig.subplots_adjust(left=0.08, right=0.98, top=0.84, bottom=0.15, wspace=0.25)
    return fig
