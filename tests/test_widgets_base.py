"""What every panel shares (utils/widgets/base.py): the figure is shown as a PNG the panel draws
itself, so it appears whatever matplotlib's backend (a learner who skipped ``%matplotlib inline``
used to see ``<Figure size 900x820 with 4 Axes>``), and an error while drawing is shown, never raised."""
import matplotlib
import pytest
from IPython.display import Image

matplotlib.use("Agg")  # not the inline backend: what a kernel without `%matplotlib inline` may have

import utils.widgets.base as W  # noqa: E402
from utils.widgets import KVCacheExplorer  # noqa: E402

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)


@pytest.fixture
def shown(monkeypatch):
    """What the panels pass to IPython's display."""
    seen = []
    monkeypatch.setattr(W, "display", seen.append)
    return seen


def test_a_panel_shows_its_figure_as_a_png_whatever_the_backend(shown):
    panel = KVCacheExplorer()
    L = panel.controls["L"]
    L.value = L.max if L.value != L.max else L.min  # one slider step: one more picture
    assert shown and all(isinstance(x, Image) for x in shown)
    assert shown[-1].data[:8] == b"\x89PNG\r\n\x1a\n"
    assert panel.fig is not None  # the figure stays readable (tests, screenshots)


def test_a_figure_that_cannot_be_drawn_is_reported_in_the_panel(shown, monkeypatch):
    panel = KVCacheExplorer()
    shown.clear()

    def broken(fig, dpi=None):
        raise RuntimeError("no renderer")
    monkeypatch.setattr("utils.widgets.base.figure_png", broken)
    panel.update()  # must not raise
    assert panel.state["error"] == "RuntimeError: no renderer" and "no renderer" in panel.html.value
    assert shown == []


def test_a_panel_that_keeps_its_figures_draws_an_unchanged_figure_once():
    from utils.plots import subplots

    class Kept(W.Panel):
        keeps_figures = True

    panel, drawn = Kept.__new__(Kept), []
    fig, ax = subplots()
    ax.plot([0, 1])

    def draw(f):
        drawn.append(f)
        f.canvas.draw()  # as savefig does: the figure is no longer stale
        return b"png"

    assert panel._png(fig, draw) == panel._png(fig, draw) == b"png" and len(drawn) == 1
    ax.set_title("changed")  # a changed figure is stale: drawn again
    panel._png(fig, draw)
    assert len(drawn) == 2
