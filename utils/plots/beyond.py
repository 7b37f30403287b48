"""Figures of notebook 08 (beyond the basics): cache memory, sliding windows, static cache, beams."""
from __future__ import annotations

import numpy as np
from matplotlib.ticker import FuncFormatter

from ..i18n import tr
from .base import COLORS, LEGEND_SIZE, SMALL_SIZE, subplots, token_label
from .bug_lab import _positive_floor


def plot_cache_memory(traces, title: str | None = None):
    """Left: KiB held vs tokens processed, per ``utils.sliding.MemoryTrace``. Right: new buffers so far.

    A known kind ("dynamic", "static", "sliding") is labelled in the current language; ``title``
    defaults to "What each cache holds and allocates".
    """
    styles = {"dynamic": ("-", COLORS["decode"], 4), "static": ("-", COLORS["prefill"], 2.5),
              "sliding": ("--", COLORS["cached"], 2)}
    fig, (ax0, ax1) = subplots(1, 2, figsize=(11, 3.6), layout="constrained")
    for trace in traces:
        ls, color, lw = styles.get(trace.kind, ("-", "gray", 2))
        label = tr(trace.kind) if trace.kind in styles else trace.kind  # the kind stays the key
        ax0.plot(trace.tokens, np.asarray(trace.nbytes) / 1024, ls, lw=lw, color=color, label=label)
        ax1.step(trace.tokens, np.cumsum(trace.new_buffer), ls, where="post", lw=lw, color=color, label=label)
    ax0.set_xlabel(tr("tokens processed (prompt + generated)"))
    ax0.set_ylabel(tr("K/V memory held (KiB)"))
    ax0.set_title(tr("Memory"), fontsize=10)
    ax0.set_ylim(bottom=0)
    ax0.legend(fontsize=LEGEND_SIZE)
    ax1.set_xlabel(tr("tokens processed (prompt + generated)"))
    ax1.set_ylabel(tr("new K buffers allocated (layer 0)"))
    ax1.set_title(tr("New buffers (the static cache allocated once, before the prompt)"), fontsize=10)
    ax1.legend(fontsize=LEGEND_SIZE)
    fig.suptitle(tr("What each cache holds and allocates") if title is None else title)
    return fig


def _e_notation(value: float, _pos=None) -> str:
    """A log axis tick as code writes it: 1e-04 -> "1e-4", 10 -> "1e1" (plain text draws faster than mathtext)."""
    return f"{value:.0e}".replace("e-0", "e-").replace("e+0", "e").replace("e+", "e")


def plot_sliding_window(comp, tol: float, title: str | None = None):
    """A ``utils.sliding.SlidingComparison``: logit differences and cache contents per position."""
    W = comp.window
    pos = np.arange(len(comp.diff_full))
    floor = _positive_floor(comp.diff_full + comp.diff_windowed, tol)
    H = 4.0  # inches: the title (0.55), the axes, the x labels (0.5) and one legend for both axes below (0.55)
    fig, (ax0, ax1) = subplots(1, 2, figsize=(10, H))
    # fixed margins (a panel redraws this at every slider step; constrained layout measured every label each time)
    fig.subplots_adjust(left=0.075, right=0.99, bottom=1.05 / H, top=1 - 0.55 / H, wspace=0.2)
    for diffs, label, color in ((comp.diff_full, tr("vs full attention"), COLORS["recompute"]),
                                (comp.diff_windowed, tr("vs sliding-window recompute (band mask)"), COLORS["cached"])):
        d = np.asarray(diffs, dtype=float)
        ax0.semilogy(pos, np.where(d > 0, d, floor), "o-", ms=3, color=color, label=label)
    ax0.axhline(tol, color="black", ls="--", lw=1, label=tr("tolerance {tol:g}", tol=tol))
    ax0.axvline(W - 0.5, color=COLORS["mask"], ls=":", label=tr("window full (W = {W})", W=W))
    ax0.yaxis.set_major_formatter(FuncFormatter(_e_notation))  # 1e-4, as tolerances are written in code
    ax0.set_xlabel(tr("position of the token (0-based)"))
    ax0.set_ylabel(tr("max |logit difference| (logit units)"))
    ax0.set_title(tr("Sliding-window cache: logits"), fontsize=10, y=1.0, pad=4)  # fixed: no layout pass
    ax1.plot(pos, comp.n_seen, "-", color=COLORS["decode"], label=tr("tokens seen = next RoPE position"))
    ax1.plot(pos, comp.stored, "-", color=COLORS["cached"], lw=2.5, label=tr("positions stored in the cache"))
    ax1.axhline(W, color=COLORS["mask"], ls=":", lw=1)
    ax1.set_xlabel(tr("position of the token (0-based)"))
    ax1.set_ylabel(tr("count (tokens)"))
    ax1.set_title(tr("Memory stays at W, positions keep counting"), fontsize=10, y=1.0, pad=4)
    # one legend under both axes: inside, it would cover the logits wherever the window puts them
    handles = [h for ax in (ax0, ax1) for h in ax.get_legend_handles_labels()[0]]
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.01), ncol=3, fontsize=LEGEND_SIZE,
               frameon=False)
    fig.suptitle(title or tr("Sliding window W = {W}", W=W))
    return fig


def plot_copy_cost(costs: dict, title: str | None = None):
    """One decode step's cache writes vs tokens already cached, per kind: ``kind -> [utils.copy_cost.WriteCost]``.

    Left: MiB the step allocated (a static cache: none). Right: the step's median time, log scale (the
    kinds differ by orders of magnitude). ``title`` defaults to "One decode step's cache writes".
    """
    colors = {"dynamic": COLORS["decode"], "static": COLORS["prefill"]}
    labels = {"dynamic": tr("KVCache (grows by torch.cat)"), "static": tr("StaticKVCache (writes in place)")}
    fig, (ax0, ax1) = subplots(1, 2, figsize=(11, 3.6), layout="constrained")
    for kind, runs in costs.items():
        T = [r.T for r in runs]
        style = dict(color=colors.get(kind, "gray"), label=labels.get(kind, kind))
        ax0.plot(T, [r.allocated / 2**20 for r in runs], "o-", **style)
        ax1.semilogy(T, [r.seconds * 1e3 for r in runs], "o-", **style)
    ax0.set_ylim(bottom=0)
    ax0.set_ylabel(tr("allocated by the step (MiB)"))
    ax0.set_title(tr("Memory allocated (torch.profiler)"), fontsize=10)
    ax1.set_ylabel(tr("median time per step (ms, log scale)"))
    ax1.set_title(tr("Time (this machine, this run)"), fontsize=10)
    for ax in (ax0, ax1):
        ax.set_xlabel(tr("tokens already in the cache (T)"))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=LEGEND_SIZE)
    fig.suptitle(tr("One decode step's cache writes") if title is None else title)
    return fig


def plot_beam_tree(result, words, title: str | None = None):
    """Beams (rows, 0 = best) over steps, each box a token; a line joins a beam to its parent.

    ``result`` is a ``utils.beam.BeamSearchResult``; ``words(ids) -> list[str]`` names tokens.
    The thick green path is the final best beam. Lines that change row are where
    ``cache.reorder`` has real work to do: the beam in row b continues the history of another row.
    ``title`` defaults to "Beam search: which beam continues which".
    """
    n_beams, n_steps = len(result.step_tokens[0]), len(result.step_tokens)
    fig, ax = subplots(figsize=(min(12, 1.2 * n_steps + 2.5), 0.55 * n_beams + 1.5), layout="constrained")
    for s in range(n_steps):
        for b, parent in enumerate(result.parents[s]):
            ax.plot([s - 1, s], [parent if s else 0, b], "-", color=COLORS["mask"], lw=1, zorder=1)
    row = 0  # walk the best final beam back to the prompt
    path = []
    for s in range(n_steps - 1, -1, -1):
        path.append((s, row))
        row = result.parents[s][row]
    path.append((-1, 0))
    ax.plot(*zip(*path), "-", color=COLORS["cached"], lw=3, zorder=2)
    box = dict(boxstyle="round,pad=0.2", fc="white", ec="#999")
    ax.text(-1, 0, tr("prompt"), ha="center", va="center", fontsize=SMALL_SIZE, bbox=box, zorder=3)
    for s in range(n_steps):
        for b, word in enumerate(words(result.step_tokens[s])):  # a Chinese token with its meaning, in English
            ax.text(s, b, token_label(word), ha="center", va="center", fontsize=SMALL_SIZE, bbox=box, zorder=3)
    ax.set_xticks(range(n_steps))
    ax.set_xticklabels([str(s + 1) for s in range(n_steps)])
    ax.set_xlabel(tr("step (new token number)"))
    ax.set_yticks(range(n_beams))
    ax.set_ylabel(tr("beam = cache row"))
    ax.set_ylim(n_beams - 0.5, -0.5)
    ax.set_xlim(-1.6, n_steps - 0.4)
    ax.set_title(tr("Beam search: which beam continues which") if title is None else title)
    return fig
