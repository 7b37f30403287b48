"""Figures of notebooks 00 (tour) and 02 (prefill): the generation timeline, next-token bars, TTFT, K/V heatmaps, padding."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.legend_handler import HandlerTuple
from matplotlib.patches import Patch
from matplotlib.ticker import NullFormatter

from ..i18n import tr
from .base import (COLORS, LEGEND_SIZE, SMALL_SIZE, draw_grammar, grammar_probs, new_figure, punctuation_quoted,
                   token_label)


def plot_timeline(segments, labels: list[str] | None = None, title: str | None = None):
    """Gantt bar of a generation: the prefill segment, then one segment per decode step.

    ``segments``: ``utils.timeline.fastest_timeline(runs)``, each segment's fastest time laid end to end
    (the x label says so); ``labels``: the token each segment produced (written above its bar; a Chinese
    one with its English meaning under it in English). Times in milliseconds. Brackets under the bars name the two metrics: TTFT spans the first segment (up to the first token), TPOT is the mean of
    the decode segments (the gap between later tokens). Returns the figure.
    """
    fig, (ax,) = new_figure(width=8.0, height=3.0)
    end = max((s.end_s for s in segments), default=0.0) * 1e3
    for s in segments:
        ax.barh(0, s.duration_s * 1e3, left=s.start_s * 1e3, height=0.5, color=COLORS[s.phase],
                edgecolor="white")
        # label the token a segment produced, unless the bar is too narrow to carry it
        if labels is not None and s.step < len(labels) and s.duration_s * 1e3 > 0.03 * end:
            ax.text((s.start_s + s.duration_s / 2) * 1e3, 0.32, _quoted(labels[s.step]),
                    ha="center", va="bottom", fontsize=10, linespacing=1.0)
    first = [s for s in segments if s.phase == "prefill"]
    steps = [s for s in segments if s.phase == "decode"]
    if first:
        _bracket(ax, first[0].start_s * 1e3, first[0].end_s * 1e3,
                 tr("TTFT {ms:.2f} ms", ms=first[0].duration_s * 1e3))
    if steps:
        tpot = sum(s.duration_s for s in steps) / len(steps) * 1e3
        _bracket(ax, steps[0].start_s * 1e3, steps[-1].end_s * 1e3,
                 tr("{n} decode steps; TPOT, their mean: {ms:.2f} ms", ms=tpot, n=len(steps)))
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLORS[p]) for p in ("prefill", "decode")]
    ax.legend(handles, [tr("setup + prefill (whole prompt) + first token"), tr("decode step (one token)")],
              loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2, frameon=False, fontsize=LEGEND_SIZE)
    ax.set_yticks([])
    ax.set_ylim(-0.62, 0.75)
    ax.set_xlim(0, end * 1.02 if end else 1)
    ax.set_xlabel(tr("time (ms), fastest segments laid end to end"))
    ax.set_title(tr("One generation, measured") if title is None else title)
    fig.tight_layout()
    return fig


def _quoted(word: str) -> str:
    """The token a bar produced, above it: an arrow (the segment's output, not the token it was fed),
    then the token in quotes so that a lone "." reads as a token, not as a speck: "→ '.'" in English
    ("→ '猫'" with "(cat)" under it), "→ “。”" in Chinese."""
    first, _, meaning = token_label(word, stacked=True).partition("\n")
    return tr("→ '{token}'", token=first) + (f"\n{meaning}" if meaning else "")


def _bracket(ax, x0: float, x1: float, text: str, y: float = -0.31) -> None:
    """A square bracket under the bars from ``x0`` to ``x1`` (ms), with ``text`` centred below it."""
    gap = 0.004 * (ax.get_xlim()[1] if ax.get_xlim()[1] > x1 else x1)  # keep neighbouring brackets apart
    left, right = x0 + gap, max(x1 - gap, x0 + 2 * gap)
    ax.plot([left, left, right, right], [y + 0.06, y, y, y + 0.06], color="0.25", lw=1.2, clip_on=False)
    ax.text((left + right) / 2, y - 0.05, text, ha="center", va="top", fontsize=LEGEND_SIZE + 1, color="0.15")


def plot_top_probs(words: list[str], probs, title: str | None = None, prompt: str | None = None,
                   zoom_tail: bool = False):
    """Bar chart of the most likely next tokens (``words`` with their ``probs``, most likely first).

    With ``prompt`` (the text the probabilities follow, ``<BOS>`` first), a black line across each bar
    marks the grammar's exact probability of that token (``utils.grammar.next_word_probs``): what a
    perfect model would say. A prompt the grammar cannot produce draws no line. ``zoom_tail`` adds an
    inset of every bar but the first on its own scale, where small bars and their lines stay apart.
    """
    probs = [float(p) for p in probs]
    exact = grammar_probs(prompt, words)
    fig, (ax,) = new_figure(width=5.5, height=3.4 if exact else 3.2)
    colors = [COLORS["prefill"]] + [COLORS["mask"]] * (len(words) - 1)
    bars = ax.bar(range(len(words)), probs, color=colors)
    for i, (b, p) in enumerate(zip(bars, probs)):  # the value above the bar, and above the grammar's line
        top = max(p, exact[i]) + 0.015 if exact else p  # clear of the grammar line's thickness
        ax.text(b.get_x() + b.get_width() / 2, top, f"{p:.2f}", ha="center", va="bottom", fontsize=9)
    ax.set_xticks(range(len(words)), [token_label(w, stacked=True) for w in words])
    ax.set_ylim(0, 1.08)
    if exact:
        chips = tuple(Patch(color=c) for c in dict.fromkeys(colors))  # the top token's colour, the others'
        ax.legend([chips, draw_grammar(ax, range(len(words)), exact)],
                  [tr("the model's probability (blue: the token picked)"), tr("the grammar's exact probability")],
                  handler_map={tuple: HandlerTuple(ndivide=None, pad=0)}, fontsize=LEGEND_SIZE, loc="upper right",
                  frameon=False)
    ax.set_xlabel(tr("candidate next token"))
    ax.set_ylabel(tr("probability"))
    ax.set_title(tr("Next-token probabilities") if title is None else title)
    fig.tight_layout()
    if zoom_tail and len(words) > 1:
        _zoom_tail(ax, words, probs, exact, colors)
    return fig


def _zoom_tail(ax, words: list[str], probs: list[float], exact: list[float] | None, colors: list) -> None:
    """An inset over the empty upper middle of ``ax``: the bars after the first, on a y scale fitted to them."""
    inset = ax.inset_axes([0.30, 0.27, 0.66, 0.40])
    x = range(1, len(words))
    inset.bar(x, probs[1:], color=colors[1:])
    tail = probs[1:] + (exact[1:] if exact else [])
    if exact:
        draw_grammar(inset, x, exact[1:])
    for i, xi in enumerate(x, start=1):  # three decimals: at this scale the second one no longer tells bars apart
        top = max(probs[i], exact[i]) if exact else probs[i]  # above the grammar's line, not through it
        inset.text(xi, top + 0.03 * max(tail), f"{probs[i]:.3f}", ha="center", va="bottom", fontsize=8)
    inset.set_ylim(0, max(tail) * 1.3)
    inset.set_xticks(list(x), [token_label(w) for w in words[1:]], fontsize=8)
    inset.tick_params(axis="y", labelsize=8)
    inset.set_title(tr("zoom: the other candidates"), fontsize=SMALL_SIZE)


def plot_ttft(T_values, seconds, title: str | None = None):
    """Two panels: TTFT (ms) against prompt length T, and TTFT per prompt token (µs).

    TTFT as ``generate`` measures it: cache and step setup, the prefill and the first pick.
    """
    T = np.asarray(list(T_values), dtype=float)
    ms = np.asarray(list(seconds), dtype=float) * 1e3
    fig, (ax1, ax2) = new_figure(ncols=2, width=5.0, height=3.4)
    ax1.plot(T, ms, "o-", color=COLORS["prefill"])
    ax1.set_ylabel(tr("TTFT: setup + prefill + first pick (ms)"))
    ax1.set_ylim(0, None)
    ax1.set_title(tr("TTFT grows with T"))
    ax1.set_xlabel(tr("prompt length T (tokens)"))  # linear x: a + b·T reads as a straight line
    ax1.set_xlim(0, None)
    ax2.plot(T, ms * 1e3 / T, "o-", color=COLORS["prefill"])
    ax2.set_ylabel(tr("TTFT per prompt token (µs, log scale)"))
    ax2.set_xlabel(tr("prompt length T (tokens, log scale)"))  # log x: the short prompts get as much room as the long
    ax2.set_xscale("log", base=2)
    ax2.set_xticks(T, [f"{t:g}" for t in T])
    ax2.minorticks_off()
    ax2.set_yscale("log")
    lo, hi = ax2.get_ylim()
    hi *= 1.5
    # plain numbers (100, 200, 400, 600) instead of a log axis's "6×10²"; the axis starts at the tick below the data
    nice = [m * 10.0 ** e for e in range(int(np.floor(np.log10(lo))) - 1, int(np.ceil(np.log10(hi))) + 1)
            for m in (1, 2, 4, 6)]
    lo = max(t for t in nice if t <= lo)
    ticks = [t for t in nice if lo <= t <= hi]
    ax2.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax2.yaxis.set_minor_formatter(NullFormatter())
    ax2.set_ylim(lo, hi)
    ax2.set_title(tr("time per prompt token"))
    fig.suptitle(tr("TTFT vs prompt length") if title is None else title)
    fig.tight_layout()
    return fig


def plot_kv_heatmap(x, words: list[str], title: str, ax=None, vmax: float | None = None, colorbar: bool = True,
                    clip_percentile: float | None = None):
    """Heatmap of one head's keys or values ``[T, d_h]``: one row per prompt token.

    Heatmaps side by side on one scale (the same ``vmax``) need one colour bar: pass ``colorbar=False``
    to all but the last. ``clip_percentile``: ``vmax`` is that percentile of |value| (so one outlier does not
    wash out the rest); the colour bar says so, and values beyond it get the end colours."""
    x = np.asarray(x, dtype=float)
    if ax is None:
        fig, (ax,) = new_figure(width=6.5, height=1.3 + 0.3 * max(len(words), 4))
    else:
        fig = ax.figure
    vmax = vmax or float(np.abs(x).max()) or 1.0
    im = ax.imshow(x, aspect="auto", cmap="RdBu_r", vmin=-vmax, vmax=vmax, interpolation="nearest")
    ax.set_yticks(range(len(words)), [f"{t}: {punctuation_quoted(token_label(w))}" for t, w in enumerate(words)])
    ax.set_xlabel(tr("dimension of the head (0 .. d_h-1)"))
    ax.set_ylabel(tr("position t: token"))
    ax.set_title(title)
    if colorbar:
        label = tr("value") if clip_percentile is None else tr(
            "value (colours clipped at ±{vmax:.1f},\nthe {p:g}th percentile of |value|)", vmax=vmax, p=clip_percentile)
        fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02, label=label)
    fig.tight_layout()
    return fig


def plot_padding_waste(rows: list[list[str]], mask, title: str | None = None):
    """The batch's cache slots, one row per prompt and one column per position: real tokens
    (written in their cell) and padding (grey, hatched), which the cache stores anyway.

    ``rows``: each prompt's tokens, padding included, ``[B][T]``; ``mask`` ``[B, T]`` (1 = real).
    Returns the figure.
    """
    m = np.asarray(mask, dtype=bool)  # (B, T)
    B, T = m.shape
    fig, (ax,) = new_figure(width=min(1.0 + 0.62 * T, 11.0), height=1.3 + 0.5 * B)
    for b in range(B):
        for t in range(T):
            real = bool(m[b, t])
            ax.add_patch(plt.Rectangle((t - 0.5, b - 0.5), 1, 1, facecolor=COLORS["prefill"] if real else "#e6e6e6",
                                       edgecolor="white", hatch=None if real else "///", alpha=0.85 if real else 1))
            if real:
                word = punctuation_quoted(token_label(rows[b][t], stacked=True))
                ax.text(t, b, word, ha="center", va="center", fontsize=SMALL_SIZE, color="white", linespacing=1.0)
    n_pad = int((~m).sum())
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLORS["prefill"]),
               plt.Rectangle((0, 0), 1, 1, facecolor="#e6e6e6", hatch="///", edgecolor="white")]
    ax.legend(handles, [tr("real token ({n})", n=m.sum()), tr("padding ({n_pad}): cached anyway", n_pad=n_pad)],
              loc="upper center", bbox_to_anchor=(0.5, -0.36), ncol=2, frameon=False, fontsize=LEGEND_SIZE)
    ax.set_xlim(-0.5, T - 0.5)
    ax.set_ylim(B - 0.5, -0.5)
    ax.set_xticks(range(T))
    ax.set_yticks(range(B), [tr("row {b}: {n} real", b=b, n=int(m[b].sum())) for b in range(B)])
    ax.set_xlabel(tr("cache position (one slot per row and position, in every layer)"))
    ax.set_title(tr("What a left-padded batch caches") if title is None else title)
    fig.tight_layout()
    return fig
