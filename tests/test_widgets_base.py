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


def test_a_kept_figure_comes_back_for_a_setting_seen_before_and_the_cache_is_bounded():
    class Kept(W.Panel):
        keeps_figures = True

    panel, made = Kept.__new__(Kept), []

    def draw(key):
        made.append(key)
        return object()  # stands for a figure

    first = panel.kept_figure(("k", 1), lambda: draw(1))
    assert panel.kept_figure(("k", 1), lambda: draw(1)) is first and made == [1]  # moved back: nothing drawn
    for i in range(2, W.KEPT_FIGURES + 5):
        panel.kept_figure(("k", i), lambda i=i: draw(i))
    assert len(panel._figures) == W.KEPT_FIGURES  # the oldest went
    assert panel.kept_figure(("k", 1), lambda: draw(1)) is not first and made[-1] == 1  # drawn anew


def test_glossed_prompt_options_keep_the_prompts_as_values():
    from utils.i18n import set_language

    assert W.prompt_options(["<BOS> she has", "<BOS>"]) == ["<BOS> she has", "<BOS>"]
    assert W.prompt_options(["<BOS> 我 喜欢", "<BOS> I like"]) == [("<BOS> 我 (I) 喜欢 (like)", "<BOS> 我 喜欢"),
                                                                 ("<BOS> I like", "<BOS> I like")]
    set_language("zh")
    try:
        assert W.prompt_options(["<BOS> 我 喜欢"]) == ["<BOS> 我 喜欢"]
    finally:
        set_language("en")
