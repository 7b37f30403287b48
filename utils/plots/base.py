"""What every figure shares: the course font (registered on import), the colours, figure making and
PNG drawing. Each notebook's figures are in their own module; every axis is labelled, with units."""
from __future__ import annotations

import contextlib
import contextvars
from pathlib import Path

import matplotlib as mpl
import matplotlib.pyplot as plt
from matplotlib import font_manager
from matplotlib.figure import Figure

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
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"
