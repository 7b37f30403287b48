"""The Panel base every widget uses."""
import matplotlib.pyplot as plt

from utils.plots import detached, subplots
from utils.widgets import KVCacheExplorer


def test_panel_figures_are_invisible_to_pyplot():
    """Regression: JupyterLab runs widget messages on a kernel subshell while the inline backend
    draws and closes every pyplot figure after each message, which left the explorer's plot blank
    or half drawn in the browser test. Panel figures must not be pyplot figures."""
    before = set(plt.get_fignums())
    panel = KVCacheExplorer()
    from utils.widgets import T_CHOICES
    panel.controls["T"].value = T_CHOICES[-1]
    assert panel.fig is not None and "error" not in panel.state
    assert set(plt.get_fignums()) == before
    assert panel.fig.axes and panel.fig.axes[0].get_xlabel()


def test_subplots_outside_a_panel_is_plain_pyplot():
    fig, ax = subplots(figsize=(2, 2))
    assert fig.number in plt.get_fignums()
    plt.close(fig)
    with detached():
        fig, ax = subplots(figsize=(2, 2))
    assert not hasattr(fig, "number") or fig.number not in plt.get_fignums()
