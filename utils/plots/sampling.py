"""Figures of notebook 05 (sampling and stopping): the filter stages and the temperature sweep."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.colors import LinearSegmentedColormap

from ..i18n import tr
from .base import COLORS, LEGEND_SIZE, SMALL_SIZE, draw_grammar, grammar_probs, new_figure, subplots, token_label


SAMPLING_STAGES = ("original", "temperature", "top_k", "top_p")  # the keys of sampling.filter_stages
TINY = 0.005  # a probability above 0 but below this prints as "≈0" (it would round to "0.00")


def plot_sampling_stages(stages: dict, ids: list[int], words: list[str], settings: dict, title: str = "",
                         grammar=None):
    """Four bar charts, one per step from logits to the distribution ``sample`` draws from.

    ``stages``: stage name -> probabilities of the shown tokens (``ids``/``words``, most likely
    first); ``settings``: ``temperature``, ``top_k``, ``top_p`` (None = off), optionally ``kept_size``.
    A grey × marks a token removed by that step or an earlier one; a grey ○ a probability that float32 rounded
    to exactly 0 at a very low temperature (nothing removed it); the last row's bars are the kept set, and
    "≈0" labels a token still in at that stage (p > 0) but below 0.005, where "0.00" would read as removed.
    ``grammar``: the grammar's exact probability of each shown token (``utils.plots.base.grammar_probs``),
    drawn as a black line across the first row's bars; None draws none.
    """
    return SamplingFigure(len(ids)).update(stages, ids, words, settings, title, grammar)


_STAGE_COLORS = {"original": COLORS["prefill"], "temperature": COLORS["decode"], "top_k": COLORS["K"],
                 "top_p": COLORS["cached"]}


def _stage_titles(settings: dict) -> dict[str, str]:
    T, k, p = settings["temperature"], settings["top_k"], settings["top_p"]
    n_kept = settings.get("kept_size")
    return {
        "original": tr("1 · the model's distribution: softmax(logits)"),
        "temperature": (tr("2 · greedy: all mass on the argmax") if T == 0
                        else tr("2 · temperature τ = {T:g}: softmax(logits / {T:g})", T=T)),
        # at temperature 0 a filter that is set still does nothing: greedy has already left one token
        "top_k": (tr("3 · top-k off") if k is None else tr("3 · top-k = {k}: no effect at τ = 0", k=k) if T == 0
                  else tr("3 · top-k = {k}: only the {k} most likely stay", k=k)),
        "top_p": (tr("4 · top-p off") if p is None else tr("4 · top-p = {p:g}: no effect at τ = 0", p=p) if T == 0
                  else tr("4 · top-p = {p:g}: smallest set reaching {p:g}", p=p)) + tr(" → what sample() draws from")
                 + ("" if n_kept is None else tr(" (kept set: 1 token)") if n_kept == 1
                    else tr(" (kept set: {n} tokens)", n=n_kept)),
    }


class SamplingFigure:
    """``plot_sampling_stages``' figure for ``n`` tokens, made once and redrawn in place by ``update``: the
    sampling panel moves its bars, marks and labels at each slider step instead of building a new figure
    (whose axes' ticks took most of a step's time)."""

    def __init__(self, n: int) -> None:
        self.n, x = n, np.arange(n)
        self.fig, axes = subplots(len(SAMPLING_STAGES), 1, figsize=(9.0, 8.2))
        self.axes, self.bars, self.crosses, self.zeros, self.values = list(axes), {}, {}, {}, {}
        for ax, name in zip(self.axes, SAMPLING_STAGES):
            # the bars as one collection: one artist to draw instead of one per bar
            self.bars[name] = ax.add_collection(PolyCollection([], facecolors=_STAGE_COLORS[name], edgecolors="none"))
            # removed by this step or an earlier one: one row of × markers (one artist, not a text per token)
            (self.crosses[name],) = ax.plot([], [], linestyle="none", marker="x", markersize=6, markeredgewidth=1.2,
                                            color=COLORS["mask"])
            # 0 in float32, not removed: at a very low temperature exp() of a large gap underflows to exactly 0
            (self.zeros[name],) = ax.plot([], [], linestyle="none", marker="o", markersize=5, markeredgewidth=1.2,
                                          markerfacecolor="none", color=COLORS["mask"])
            self.values[name] = [ax.text(xi, 0, "", ha="center", va="bottom", fontsize=SMALL_SIZE) for xi in x]
            ax.set_xlim(-0.6, n - 0.4)
            ax.set_xticks([])  # only the last row names the tokens (fewer ticks to draw)
            ax.set_ylim(0, 1.15)
            ax.set_yticks([0, 0.5, 1])
        self.axes[-1].set_xticks(x, [""] * n, fontsize=SMALL_SIZE, linespacing=1.0)
        self.grammar = None  # the grammar's lines on the first row, when there are any
        # fixed margins (tight_layout is slow): the bottom holds three lines of tick labels (token, meaning, id)
        # and the two lines of the axis label
        self.fig.subplots_adjust(left=0.08, right=0.98, top=0.92, bottom=0.14, hspace=0.35)

    def update(self, stages: dict, ids: list[int], words: list[str], settings: dict, title: str = "", grammar=None):
        x, titles = np.arange(self.n), _stage_titles(settings)
        line = np.asarray(grammar if grammar is not None else np.zeros(self.n), dtype=float)
        for ax, name in zip(self.axes, SAMPLING_STAGES):
            probs = np.asarray(stages[name], dtype=float)
            alive = probs > 0
            rounded = _rounded_to_zero(stages, name, settings["temperature"])
            removed = ~alive & ~rounded
            self.bars[name].set_verts([[(xi - 0.4, 0), (xi + 0.4, 0), (xi + 0.4, pr), (xi - 0.4, pr)]
                                       for xi, pr in zip(x[alive], probs[alive])])
            self.crosses[name].set_data(x[removed], np.full(int(removed.sum()), 0.06))
            self.zeros[name].set_data(x[rounded], np.full(int(rounded.sum()), 0.06))
            over = line if name == "original" else np.zeros(self.n)
            for xi, (text, pr) in enumerate(zip(self.values[name], probs)):
                shown = pr > 0  # every kept token gets its value, so no slot looks empty
                text.set_visible(shown)
                if shown:
                    text.set_position((xi, max(pr, over[xi])))
                    # "≈0", not "0.00": a token with p below 0.005 is still in at this stage (a later filter may remove it)
                    text.set_text(f"{pr:.2f}" if pr >= TINY else "≈0")
            ax.set_ylabel(tr("probability"))
            ax.set_title(titles[name], fontsize=10, loc="left", y=1.0, pad=4)  # a fixed place: no layout pass
        if self.grammar is not None:  # the last prompt's lines and legend go; this prompt's come
            self.grammar.remove()
            self.axes[0].get_legend().remove()
            self.grammar = None
        if grammar is not None:  # what a perfect model of the course language would say, beside the model
            self.grammar = draw_grammar(self.axes[0], x, grammar)
            handles = [plt.Rectangle((0, 0), 1, 1, color=_STAGE_COLORS["original"], label=tr("the model's probability")),
                       self.grammar]
            self.axes[0].legend(handles=handles, fontsize=LEGEND_SIZE, loc="upper right", frameon=False)
        self.axes[-1].set_xticklabels([f"{token_label(w, stacked=True)}\n#{i}" for i, w in zip(ids, words)])
        self.axes[-1].set_xlabel(tr("next token (the {n} most likely under the model; #id = its token id)", n=self.n)
                                 + "\n" + tr("× = removed; ○ = 0 in float32, not removed; ≈0 = still in at this stage, "
                                             "p < 0.005 (it would print as 0.00)"))
        if title:
            self.fig.suptitle(title)
        return self.fig


def _rounded_to_zero(stages: dict, name: str, temperature: float) -> np.ndarray:
    """Which shown tokens of stage ``name`` are 0 because float32 rounded them, not because a step removed them.

    No step removes a token before the filters: a 0 in the model's distribution, or after a temperature above 0,
    is float32 underflow. A token already 0 after the temperature stays 0 after the filters, whatever they keep.
    At temperature 0 (greedy) every other token is removed, not rounded.
    """
    dead = np.asarray(stages[name], dtype=float) == 0
    if name == "original":
        return dead
    if temperature == 0:
        return np.zeros_like(dead)
    return dead & (np.asarray(stages["temperature"], dtype=float) == 0)


def plot_temperature_sweep(words: list[str], probs_by_t: dict, title: str | None = None, prompt: str | None = None):
    """Grouped bars: the probabilities of ``words`` (most likely first) at each temperature.

    ``probs_by_t``: temperature -> probabilities of ``words`` (0 = greedy, a one-hot); ``title``
    defaults to "Temperature reshapes the distribution". With ``prompt`` (the text they follow), a black
    triangle beside each group points at the grammar's exact probability of the token (none if the grammar
    cannot produce the prompt, or gives the token 0).
    """
    temps = list(probs_by_t)
    # cold to hot, every colour dark enough to read on white (coolwarm's middle was too pale)
    cmap = LinearSegmentedColormap.from_list("temperatures", ["#253494", "#2c7fb8", "#e6550d", "#a50f15"])
    x = np.arange(len(words))
    width = 0.8 / len(temps)
    fig, (ax,) = new_figure(width=8.0, height=3.6)
    for j, t in enumerate(temps):
        label = tr("τ = 0 (greedy)") if t == 0 else f"τ = {t:g}"
        ax.bar(x - 0.4 + width * (j + 0.5), np.asarray(probs_by_t[t], dtype=float), width,
               color=cmap(j / max(len(temps) - 1, 1)), label=label)
    exact = grammar_probs(prompt, words)
    if exact is not None:  # beside the group, not across it: a line across would cut into the tall bars
        xp = [(xi + 0.47, p) for xi, p in zip(x, exact) if p > 0]
        ax.plot([xi for xi, _ in xp], [p for _, p in xp], linestyle="none", marker="<", markersize=7, color="black",
                label=tr("the grammar's exact probability"))
    ax.set_xticks(x, [token_label(w, stacked=True) for w in words])
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(tr("next token (most likely first)"))
    ax.set_ylabel(tr("probability"))
    ax.set_title(tr("Temperature reshapes the distribution") if title is None else title)
    ax.legend(frameon=False, fontsize=LEGEND_SIZE)
    fig.tight_layout()
    return fig
