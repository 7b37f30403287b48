"""Matplotlib figures the notebooks share. Every axis is labelled, with units."""
from __future__ import annotations

import contextlib
import contextvars
import functools
import re
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


@functools.lru_cache(maxsize=None)
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


_CJK_RUN = re.compile(r"[\u3000-\u303f\u4e00-\u9fff]+")


def _cjk_context():
    """rc settings that put a Chinese-capable font first, when one is installed."""
    font = _cjk_font()
    return plt.rc_context({"font.sans-serif": [font, "DejaVu Sans"]} if font else {})


# The sections' public names, importable from ``utils.plots`` as before the split (notebooks and tests rely on it).
from .prefill import plot_timeline, plot_top_probs, plot_ttft, plot_kv_heatmap  # noqa: E402,F401
from .sampling import SAMPLING_STAGES, plot_sampling_stages, plot_temperature_sweep  # noqa: E402,F401
from .attention import plot_mask, plot_weights, plot_head_groups, plot_rope_scores  # noqa: E402,F401
from .sizing import byte_unit, plot_kv_vs_context, plot_per_token_bars, plot_budget  # noqa: E402,F401
from .decode import (  # noqa: E402,F401
    plot_decode_grids, plot_recompute_diffs, plot_step_times, plot_step_costs, plot_new_query_weights,
)
from .bug_lab import plot_bug_divergence, plot_bug_overview  # noqa: E402,F401
from .beyond import (  # noqa: E402,F401
    plot_cache_memory, plot_sliding_window, plot_cache_step_times, plot_beam_tree,
)
from .metrics import (  # noqa: E402,F401
    plot_ttft_tpot, plot_batch_sweep, plot_schedules, plot_bandwidth, plot_decode_bound,
)
