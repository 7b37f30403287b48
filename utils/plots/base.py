"""What every figure shares: the course font (registered on import), the colours, the text sizes, figure
making and PNG drawing, and how a token is written (``token_label``: "猫 (cat)" in English, "猫" in Chinese)
with the grammar's exact probabilities beside the model's. Each notebook's figures are in their own module;
every axis is labelled, with units."""
from __future__ import annotations

import contextlib
import contextvars
import textwrap
from pathlib import Path

import matplotlib as mpl
import matplotlib.pyplot as plt
from matplotlib import font_manager
from matplotlib.figure import Figure

from ..grammar import label, next_word_probs
from ..i18n import display_width, tr

# matplotlib's default font, DejaVu Sans, has no Chinese glyphs. The package ships a subset of Noto
# Sans CJK SC holding every Chinese character the course writes (tools/subset_font.py makes it) and
# appends its family to ``font.family``: matplotlib (>= 3.6) draws each character with the first font
# of that list that has its glyph, so Latin text stays in the default font and Chinese uses this one,
# the same on every machine whatever fonts it has installed. (Only ``font.family`` falls back glyph by
# glyph; the ``font.sans-serif`` list picks one font.) Fonts are looked up when a figure is drawn,
# which is why this is a global setting and not a context around figure creation.
COURSE_FONT = Path(__file__).resolve().parent.parent / "data" / "fonts" / "NotoSansSC-course-subset.otf"


def _register_course_font() -> str:
    """Make ``COURSE_FONT`` the fallback of every figure; returns its family name."""
    font_manager.fontManager.addfont(str(COURSE_FONT))
    family = font_manager.FontProperties(fname=str(COURSE_FONT)).get_name()
    if family not in mpl.rcParams["font.family"]:
        mpl.rcParams["font.family"] = [*mpl.rcParams["font.family"], family]
    return family


COURSE_FONT_FAMILY = _register_course_font()

# One colour per idea, used the same way in every notebook.
COLORS = {"prefill": "#1f77b4", "decode": "#ff7f0e", "cached": "#2ca02c", "recompute": "#d62728",
          "K": "#9467bd", "V": "#8c564b", "mask": "#7f7f7f"}


# Text sizes every figure keeps to, so that each stays legible at the size the notebook shows it:
# a legend never smaller than LEGEND_SIZE, a label inside a cell or beside a mark never smaller than SMALL_SIZE.
LEGEND_SIZE, SMALL_SIZE = 9, 8


def wrap(text: str, width: int = 48) -> str:
    """``text`` broken at spaces into lines of about ``width`` columns (a legend entry that would run off
    the figure); Chinese, which has no spaces to break at, is left whole."""
    return text if display_width(text) <= width + 8 else textwrap.fill(text, width, break_long_words=False)


def two_lines(text: str, width: int = 24) -> str:
    """An axis label longer than ``width`` columns on two lines, broken before its parenthesis ("tokens per
    round\n(per target pass)", "每轮的 token 数\n（……）"): a label longer than its axis runs off the figure."""
    for opening in ("（", " ("):
        at = text.find(opening, 1)
        if display_width(text) > width and at > 0:
            return text[:at].rstrip() + "\n" + text[at:].lstrip()
    return text


def token_label(word: str, stacked: bool = False) -> str:
    """A token as a figure writes it: ``utils.grammar.label`` ("猫 (cat)" in English, "猫" in Chinese).
    ``stacked`` puts the meaning on a line of its own ("猫\n(cat)"), for a narrow place: a bar, a cell."""
    text = label(word)
    return text.replace(" (", "\n(", 1) if stacked and text != word else text


def punctuation_quoted(text: str) -> str:
    """A lone punctuation token ("." or "。") in quotes, so that it reads as a token, not as a speck."""
    return tr("'{token}'", token=text) if len(text) == 1 and not text.isalnum() else text


def text_label(text: str) -> str:
    """Words of the course language, each as ``token_label`` writes it: "<BOS> 我 (I) 喜欢 (like)" in English."""
    return " ".join(label(w) for w in str(text).split())


def glossary(words) -> str:
    """One line that glosses the Chinese words among ``words``, for a figure whose cells are too narrow to
    hold a meaning: "Chinese words here: 猫 (cat), 有 (have)" in English; "" in Chinese or with none."""
    seen = [text for text in dict.fromkeys(label(w) for w in words) if " (" in text]
    return tr("Chinese words here: {words}", words=", ".join(seen)) if seen else ""


def grammar_probs(prompt: str | None, words) -> list[float] | None:
    """The grammar's exact probability of each of ``words`` after ``prompt`` (``utils.grammar.next_word_probs``;
    0 for a word it never puts there), or None when there is no prompt or the grammar cannot produce it.
    A prompt without ``<BOS>`` in front is read with it, as documents start (and as the panels feed them)."""
    if prompt is None:
        return None
    if str(prompt).split()[:1] != ["<BOS>"]:
        prompt = "<BOS> " + str(prompt)
    try:
        exact = next_word_probs(prompt)
    except ValueError:  # a prompt outside the grammar: there is no exact answer to show
        return None
    return [exact.get(w, 0.0) for w in words]


def draw_grammar(ax, x, probs, width: float = 0.8):
    """The grammar's probabilities as a black line across each bar (centred at ``x``, ``width`` wide),
    labelled for the legend; returns the lines (one artist). A probability of 0 draws nothing: a line on
    the axis would read as part of it."""
    xp = [(xi, p) for xi, p in zip(x, probs) if p > 0]
    return ax.hlines([p for _, p in xp], [xi - width / 2 for xi, _ in xp], [xi + width / 2 for xi, _ in xp],
                     colors="black", lw=2, zorder=4, label=tr("the grammar's exact probability"))


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


PANEL_DPI = 90  # the panels' pictures: sharp on a laptop screen, a third fewer pixels to draw than 110


def figure_png(fig: Figure, dpi: float = PANEL_DPI) -> bytes:
    """``fig`` as PNG bytes, drawn once. The panels show these instead of the figure: the inline
    backend would draw it twice (``bbox_inches="tight"`` measures with a first draw), and without
    ``%matplotlib inline`` it would print ``<Figure size ...>`` instead of the picture. Every
    figure here lays itself out (tight or constrained layout, or fixed margins), so nothing is cut."""
    import io

    buf = io.BytesIO()
    # zlib level 1: a fifth of level 6's encoding time, for a picture about a third larger (sent locally)
    fig.savefig(buf, format="png", dpi=dpi, pil_kwargs={"compress_level": 1})
    return buf.getvalue()


def new_figure(ncols: int = 1, width: float = 6.0, height: float = 3.6):
    """A figure with ``ncols`` axes side by side (returns ``fig, axes`` with axes always a list)."""
    fig, axes = subplots(1, ncols, figsize=(width * ncols if ncols > 1 else width, height), squeeze=False)
    return fig, list(axes[0])


def format_bytes(n: float) -> str:
    """1536 -> '1.5 KiB' (binary units, as memory is sold and allocated)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"
