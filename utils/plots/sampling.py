"""Figures of notebook 05 (sampling and stopping): the filter stages and the temperature sweep."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import PolyCollection

from ..i18n import tr
from .base import COLORS, LEGEND_SIZE, SMALL_SIZE, draw_grammar, grammar_probs, new_figure, subplots, token_label


SAMPLING_STAGES = ("original", "temperature", "top_k", "top_p")  # the keys of sampling.filter_stages


def plot_sampling_stages(stages: dict, ids: list[int], words: list[str], settings: dict, title: str = "",
                         grammar=None):
    """Four bar charts, one per step from logits to the distribution ``sample`` draws from.

    ``stages``: stage name -> probabilities of the shown tokens (``ids``/``words``, most likely
    first); ``settings``: ``temperature``, ``top_k``, ``top_p`` (None = off), optionally ``kept_size``.
    A grey × marks a token removed by that step or an earlier one; the last row's bars are the kept set.
    ``grammar``: the grammar's exact probability of each shown token (``utils.plots.base.grammar_probs``),
    drawn as a black line across the first row's bars; None draws none.
    """
    T, k, p = settings["temperature"], settings["top_k"], settings["top_p"]
    titles = {
        "original": tr("1 · the model's distribution: softmax(logits)"),
        "temperature": (tr("2 · greedy: all mass on the argmax") if T == 0
                        else tr("2 · temperature {T:g}: softmax(logits / {T:g})", T=T)),
        "top_k": (tr("3 · top-k off") if k is None or T == 0
                  else tr("3 · top-k = {k}: only the {k} most likely stay", k=k)),
        "top_p": (tr("4 · top-p off") if p is None or T == 0
                  else tr("4 · top-p = {p:g}: smallest set reaching {p:g}", p=p)) + tr(" → what sample() draws from")
                 + (tr(" (kept set: {n} tokens)", n=settings["kept_size"]) if "kept_size" in settings else ""),
    }
    colors = {"original": COLORS["prefill"], "temperature": COLORS["decode"], "top_k": COLORS["K"],
              "top_p": COLORS["cached"]}
    labels = [f"{token_label(w, stacked=True)}\n#{i}" for i, w in zip(ids, words)]
    x = np.arange(len(ids))
    fig, axes = subplots(len(SAMPLING_STAGES), 1, figsize=(9.0, 8.2))
    for ax, name in zip(axes, SAMPLING_STAGES):
        probs = np.asarray(stages[name], dtype=float)
        alive = probs > 0
        # the bars as one collection: one artist to draw instead of one per bar (the panel redraws this)
        ax.add_collection(PolyCollection([[(xi - 0.4, 0), (xi + 0.4, 0), (xi + 0.4, pr), (xi - 0.4, pr)]
                                          for xi, pr in zip(x[alive], probs[alive])],
                                         facecolors=colors[name], edgecolors="none"))
        for xi in x[~alive]:  # removed by this step or an earlier one
            ax.text(xi, 0.02, "×", ha="center", va="bottom", fontsize=11, color=COLORS["mask"])
        line = np.asarray(grammar if name == "original" and grammar is not None else np.zeros(len(x)), dtype=float)
        for xi, pr in zip(x[alive], probs[alive]):
            if pr >= 0.005:  # the value above its bar, and above the grammar's line where there is one
                ax.text(xi, max(pr, line[xi]), f"{pr:.2f}", ha="center", va="bottom", fontsize=SMALL_SIZE)
        ax.set_xlim(-0.6, len(ids) - 0.4)
        ax.set_xticks([])  # only the last row names the tokens (fewer ticks: the panel redraws faster)
        ax.set_ylim(0, 1.15)
        ax.set_yticks([0, 0.5, 1])
        ax.set_ylabel(tr("probability"))
        ax.set_title(titles[name], fontsize=10, loc="left", y=1.0, pad=4)  # a fixed place: no layout pass
    if grammar is not None:  # what a perfect model of the course language would say, beside the model
        handles = [plt.Rectangle((0, 0), 1, 1, color=colors["original"], label=tr("the model's probability")),
                   draw_grammar(axes[0], x, grammar)]
        axes[0].legend(handles=handles, fontsize=LEGEND_SIZE, loc="upper right", frameon=False)
    axes[-1].set_xticks(x, labels, fontsize=SMALL_SIZE, linespacing=1.0)
    axes[-1].set_xlabel(tr("next token (the {n} most likely under the model; × = removed)", n=len(ids)))
    if title:
        fig.suptitle(title)
    # fixed margins (tight_layout is slow): the bottom holds three lines of tick labels (token, meaning, id)
    fig.subplots_adjust(left=0.08, right=0.98, top=0.92, bottom=0.12, hspace=0.35)
    return fig


def plot_temperature_sweep(words: list[str], probs_by_t: dict, title: str | None = None, prompt: str | None = None):
    """Grouped bars: the probabilities of ``words`` (most likely first) at each temperature.

    ``probs_by_t``: temperature -> probabilities of ``words`` (0 = greedy, a one-hot); ``title``
    defaults to "Temperature reshapes the distribution". With ``prompt`` (the text they follow), a black
    line across each group marks the grammar's exact probability of the token (none if the grammar
    cannot produce the prompt).
    """
    temps = list(probs_by_t)
    cmap = plt.get_cmap("coolwarm")
    x = np.arange(len(words))
    width = 0.8 / len(temps)
    fig, (ax,) = new_figure(width=8.0, height=3.6)
    for j, t in enumerate(temps):
        label = tr("T = 0 (greedy)") if t == 0 else f"T = {t:g}"
        ax.bar(x - 0.4 + width * (j + 0.5), np.asarray(probs_by_t[t], dtype=float), width,
               color=cmap(j / max(len(temps) - 1, 1)), label=label)
    exact = grammar_probs(prompt, words)
    if exact is not None:
        draw_grammar(ax, x, exact)
    ax.set_xticks(x, [token_label(w, stacked=True) for w in words])
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(tr("next token (most likely first)"))
    ax.set_ylabel(tr("probability"))
    ax.set_title(tr("Temperature reshapes the distribution") if title is None else title)
    ax.legend(frameon=False, fontsize=LEGEND_SIZE)
    fig.tight_layout()
    return fig
