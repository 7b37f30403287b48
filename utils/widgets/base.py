"""The base of every panel (``Panel``) and its controls, written to work on ipywidgets 7.7.1 (Colab) and 8.x.

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

import gc
import html as _html

import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import Image, clear_output, display

from ..i18n import language, tr
from ..plots.base import detached, figure_png, text_label

_STYLE = {"description_width": "initial"}
KEPT_FIGURES = 48  # figures (and their pictures) a panel that keeps them holds at most


def option_values(options) -> list:
    """The values of a control's ``options``: plain values, or the second item of ``(label, value)`` pairs."""
    return [o[1] if isinstance(o, tuple) and len(o) == 2 else o for o in options]


def prompt_options(prompts) -> list:
    """A prompt menu's ``options``: the prompts themselves, or ``(shown, prompt)`` pairs when a prompt holds
    Chinese words and the course speaks English (shown glossed: "<BOS> 我 (I) 喜欢 (like)"). The values stay
    the prompts either way."""
    prompts = list(prompts)
    shown = [text_label(p) for p in prompts]
    return prompts if shown == prompts else list(zip(shown, prompts))


def check_option(name: str, value, options):
    """``value`` among the control's ``options`` (returned as the option itself), else a ValueError naming the
    panel's argument and what it may be. ipywidgets would raise a bare ``TraitError`` (a dropdown) or
    silently clamp the value (a slider) instead."""
    allowed = option_values(options)
    for option in allowed:
        if type(option) is type(value) or (isinstance(option, (int, float)) and isinstance(value, (int, float))
                                           and not isinstance(value, bool)):
            if option == value:
                return option
    raise ValueError(tr("{name}={value!r} is not one of this panel's choices: {name} may be one of {allowed}",
                        name=name, value=value, allowed=allowed))


def check_range(name: str, value, lo, hi):
    """``value`` a number in ``[lo, hi]``, the range of a slider, else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
        raise ValueError(tr("{name}={value!r} is outside this panel's slider: {name} may be from {lo} to {hi}",
                        name=name, value=value, lo=lo, hi=hi))
    return value


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

    title = ""  # in English; shown through ``tr``, so each panel's title has a catalogue entry

    def __init__(self, controls: dict[str, widgets.Widget]) -> None:
        self.controls = controls
        self.state: dict = {}
        self.html = widgets.HTML()
        self.out = widgets.Output()
        self.fig = None
        for w in controls.values():
            w.observe(self._on_change, names="value")
        header = [widgets.HTML(f"<b>{_html.escape(tr(self.title))}</b>")] if self.title else []
        self.widget = widgets.VBox(header + [widgets.VBox(list(controls.values())), self.html, self.out])
        self.update()
        # Everything alive now (the model, torch's and matplotlib's caches) stays alive: moved out of the
        # collector's reach, a full collection no longer scans it, which took 200 ms every few updates.
        gc.freeze()

    def values(self) -> dict:
        return {name: w.value for name, w in self.controls.items()}

    def compute(self, **values) -> dict:  # pragma: no cover - each panel overrides it
        raise NotImplementedError

    def render(self, state: dict) -> str:
        return ""

    def plot(self, state: dict):
        return None

    keeps_figures = False  # see _png

    def _on_change(self, change) -> None:
        self.update()

    def update(self) -> None:
        try:
            self.state = self.compute(**self.values())
            self.html.value = self.render(self.state)
            with detached():  # see utils/plots/base.py: the inline backend must not touch this figure
                fig = self.plot(self.state)
        except Exception as e:  # a slider position must never crash the notebook
            self.state = {"error": f"{type(e).__name__}: {e}"}
            self.html.value = f"<span style='color:#b00'>&#9888; {_html.escape(self.state['error'])}</span>"
            fig = None
        png = None
        if fig is not None:
            try:
                png = self._png(fig, figure_png)
            except Exception as e:  # a figure that cannot be drawn: say so, never raise
                self.state["error"] = f"{type(e).__name__}: {e}"
                self.html.value += f"<span style='color:#b00'>&#9888; {_html.escape(self.state['error'])}</span>"
            self.fig = fig
            plt.close(fig)  # made outside pyplot in detached(); this is a no-op kept for a pyplot figure
        with self.out:
            clear_output(wait=True)
            if png is not None:
                display(Image(data=png, format="png"))

    def _png(self, fig, draw) -> bytes:
        """``fig`` drawn; a panel whose ``plot`` keeps its figures (``keeps_figures``) gets the picture
        of an unchanged figure again without drawing it (matplotlib marks a changed figure ``stale``)."""
        if not self.keeps_figures:
            return draw(fig)
        pngs = self.__dict__.setdefault("_pngs", {})
        if len(pngs) > KEPT_FIGURES:  # bounded: the oldest pictures go (a panel keeps a few dozen at most)
            for old in list(pngs)[: len(pngs) - KEPT_FIGURES]:
                del pngs[old]
        kept = pngs.get(id(fig))
        if kept is None or kept[0] is not fig or fig.stale:
            kept = pngs[id(fig)] = (fig, draw(fig))
        return kept[1]

    def kept_figure(self, key, draw):
        """The figure for ``key`` (any hashable naming what it shows), drawn by ``draw()`` the first time and
        kept: a panel whose settings come back (a slider moved back and forth) shows it again without drawing.
        A panel that uses it sets ``keeps_figures = True``; at most ``KEPT_FIGURES`` are kept, the oldest go."""
        figures = self.__dict__.setdefault("_figures", {})
        key = (language(), key)  # a figure keeps the labels of the language it was drawn in
        if key not in figures:
            while len(figures) >= KEPT_FIGURES:
                del figures[next(iter(figures))]
            figures[key] = draw()
        return figures[key]

    def _ipython_display_(self) -> None:
        display(self.widget)


def selection_slider(description: str, options, value, *, continuous_update: bool = False) -> widgets.SelectionSlider:
    """A slider over a fixed list of ``options`` (values, or ``(label, value)`` pairs); works on 7.7.1 and 8.x."""
    return widgets.SelectionSlider(options=options, value=value, description=description,
                                   continuous_update=continuous_update, style=_STYLE,
                                   layout=widgets.Layout(width="420px"))
