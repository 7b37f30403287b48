"""What counts as English left in a Chinese screen: ``english_left(texts)``.

A Chinese label may keep symbols and code names (B, T, H_kv, d_h, ``KVCache``, ``cache_kind``),
acronyms (TTFT, GQA, KV), units (ms, GiB, FLOP/s), dtypes (float16), model, GPU and hardware names,
quoted values ('<BOS> she has'), and the words the glossary keeps in English in Chinese text
(token, logits, softmax, bug, dropout). Any other word of
Latin letters is English that was not translated.
"""
from __future__ import annotations

import re

from utils.roofline import GPU_ROOFS
from utils.sizing import MODEL_PRESETS
from utils.widgets.metrics import HARDWARE_BANDWIDTH_GBPS

KEPT = {
    # the glossary keeps these in Chinese text
    "token", "logits", "softmax", "top", "argmax", "bug", "dropout",
    # units and number words
    "tokens", "requests",  # the units tokens/s and requests/s, as the tables print them
    "nat",  # the unit of entropy and loss (natural log), written as in the glossary
    "ms", "us", "µs", "ns", "GiB", "MiB", "KiB", "TiB", "GB", "MB", "KB", "TB", "FLOP", "FLOPs", "bytes",
    # code names written in lower case
    "dtype", "float", "bool", "torch", "transformers", "nbval", "max", "min", "diff", "tol", "id", "ids",
    "log", "exp", "inf", "nan", "mean", "sum", "sdpa", "flat", "modules", "dynamic", "static", "eos",
    "generate", "prefill", "decode_step", "update", "crop", "reorder", "mask", "pad", "rope", "none",
    "True", "False", "None", "utils", "i", "j", "cos", "sin", "repeat_kv", "ln",
    "base",  # RoPE's base, the config field rope_theta, named as in the formula θ_i = base^(−2i/d_h)
    # the bench's model sizes (utils.perf.BENCH_CONFIGS), names like "small" in the lessons
    "small", "tiny",
    # where the course runs
    "Jupyter", "JupyterLab", "Colab", "Python", "PyTorch", "Hugging", "Face", "Hub",
}
# Model and GPU names are data, the same in every language.
KEPT |= {w for name in [*MODEL_PRESETS, *(r.name for r in GPU_ROOFS), *HARDWARE_BANDWIDTH_GBPS]
         for w in re.findall(r"[A-Za-z]+", name)}

WORD = re.compile(r"[A-Za-z][A-Za-z0-9_']*")


def is_kept(word: str) -> bool:
    """A symbol, a code name, an acronym or a kept term: allowed in a Chinese label."""
    return (len(word) <= 1 or word in KEPT or word.lower() in KEPT
            or any(ch.isdigit() or ch == "_" for ch in word)       # d_h, H_kv, float16, A100
            or re.search(r"[a-z][A-Z]|[A-Z]{2}[a-z]", word) is not None  # KVCache, StaticKVCache
            or (word.isupper() and len(word) <= 6))                 # TTFT, GQA, KV, GPU


def english_left(texts) -> list[str]:
    """The words of ``texts`` (strings) that are English and not kept: what still needs a translation."""
    left = []
    for text in texts:
        text = re.sub(r"<style>.*?</style>", " ", str(text), flags=re.S)  # a panel's CSS
        text = re.sub(r"\$[^$]*\$", " ", text)               # mathtext: log-axis ticks ($\\mathdefault{10^{-4}}$)
        text = re.sub(r"<code>.*?</code>|`[^`]*`", "", text)  # code, in HTML or in backticks
        text = re.sub(r"'[^'\n]*'", "", text)               # a quoted value (course words, a stop string)
        text = re.sub(r"\b\w+(?:\.\w+)+(?:\(\))?", " ", text)  # a dotted code name: cache.seq_len, torch.equal()
        text = re.sub(r"<[^>]+>|&\w+;", " ", text)          # HTML tags and entities
        left += [f"{w!r} in {text.strip()[:80]!r}" for w in WORD.findall(text) if not is_kept(w)]
    return left


# --- reading a Chinese screen: what the appendix tests (and part B's) share ----------------------------
import contextlib  # noqa: E402
import io  # noqa: E402
import warnings  # noqa: E402

MATH_TICK = re.compile(r"\$\\mathdefault\{[-\d^{}.]*\}\$")  # a log axis's tick label: $\mathdefault{10^{-4}}$


@contextlib.contextmanager
def no_cjk_font():
    """Within the block matplotlib sees only its own fonts and the course font, as on a machine with no
    CJK font (Colab's): a figure that draws there draws everywhere."""
    from pathlib import Path

    from matplotlib import font_manager

    from utils.plots import COURSE_FONT

    manager = font_manager.fontManager
    machine = manager.ttflist
    own = [f for f in machine if "mpl-data" in Path(f.fname).parts or Path(f.fname) == COURSE_FONT]
    assert any(Path(f.fname) == COURSE_FONT for f in own)
    manager.ttflist = own
    manager._findfont_cached.cache_clear()  # lookups cached with the machine's fonts
    try:
        yield
    finally:
        manager.ttflist = machine
        manager._findfont_cached.cache_clear()


@contextlib.contextmanager
def chinese_screen():
    """Within the block the course speaks Chinese, only the course font can draw Chinese, and a missing
    glyph is an error: every figure and panel rendered here is checked for English left and for glyphs."""
    from utils.i18n import set_language

    set_language("zh")
    try:
        with warnings.catch_warnings(), no_cjk_font():
            warnings.filterwarnings("error", message=r"Glyph .* missing", category=UserWarning)
            yield
    finally:
        set_language("en")


def figure_texts(fig) -> list[str]:
    """Every text of ``fig`` (titles, labels, ticks, legends, annotations), after drawing it as the inline
    backend does (so a missing glyph raises inside ``chinese_screen``)."""
    import matplotlib.pyplot as plt
    import matplotlib.text

    fig.canvas.draw()
    texts = [t.get_text() for t in fig.findobj(matplotlib.text.Text)]
    fig.savefig(io.BytesIO(), format="png", dpi=60)
    plt.close(fig)
    return [t for t in texts if t and not MATH_TICK.fullmatch(t)]


def widget_texts(w) -> list[str]:
    """Descriptions, tooltips, option labels and HTML/label values of ``w`` and its children."""
    import ipywidgets as widgets

    texts = [getattr(w, name, None) or "" for name in ("description", "tooltip")]
    texts += list(getattr(w, "_options_labels", ()))
    if isinstance(w, (widgets.HTML, widgets.Label)):
        texts.append(w.value)
    for child in getattr(w, "children", ()):
        texts += widget_texts(child)
    return [t for t in texts if t]


def panel_texts(panel) -> list[str]:
    """What a panel shows: its controls, its HTML and its figure's texts (a panel in error fails here)."""
    assert "error" not in panel.state, panel.state.get("error")  # a missing translation would show up here
    texts = widget_texts(panel.widget)
    assert panel.html.value in texts
    return texts + (figure_texts(panel.fig) if panel.fig is not None else [])
