"""Figures of notebook 07 (the bug lab): where the cached and recomputed logits part."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..i18n import tr
from .base import COLORS, subplots


def _positive_floor(values, tol: float) -> float:
    """Where exact zeros are drawn on a log axis: a decade below the smallest value or ``tol``."""
    vals = np.asarray([v for v in values if v > 0], dtype=float)
    return min(tol, vals.min() if vals.size else tol) / 10


def plot_bug_divergence(curves: dict, tol: float, title: str | None = None):
    """max |cached - recomputed| logits per step for several variants (``label -> list``), log scale.

    Exact zeros are drawn as hollow markers at the bottom edge; the dashed line is the tolerance.
    ``title`` defaults to "Cached vs recomputed logits, per step".
    """
    floor = _positive_floor([v for c in curves.values() for v in c], tol)
    fig, ax = subplots(figsize=(7, 3.4), layout="constrained")
    palette = [COLORS["recompute"], COLORS["cached"], COLORS["decode"], COLORS["K"], COLORS["V"]]
    for (label, diffs), color in zip(curves.items(), palette):
        d = np.asarray(diffs, dtype=float)
        steps = np.arange(len(d))
        ax.semilogy(steps, np.where(d > 0, d, floor), "-", color=color, alpha=0.6)
        ax.plot(steps[d > 0], d[d > 0], "o", color=color, label=label)
        if (d == 0).any():
            ax.plot(steps[d == 0], np.full((d == 0).sum(), floor), "o", mfc="none", color=color)
    ax.axhline(tol, color="black", ls="--", lw=1, label=tr("tolerance {tol:g}", tol=tol))
    ax.plot([], [], "o", mfc="none", color="#555", label=tr("hollow: exactly 0 (drawn at the bottom)"))
    ax.set_ylim(floor / 2, max(10 * tol, max(max(c) for c in curves.values()) * 3))
    ax.set_xlabel(tr("step (0 = prefill, s = s-th decode step)"))
    ax.set_ylabel(tr("max |logit difference| (logit units)"))
    ax.set_title(tr("Cached vs recomputed logits, per step") if title is None else title)
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1))
    return fig


def plot_bug_overview(results, tol: float, title: str | None = None):
    """One row per bug of ``utils.bug_lab.run_all``'s ``results``, one column per step.

    Colour: log10 of max |cached - recomputed| (green at or below ``tol``, red far above). Where
    torch raised instead, the cell says "raises" and later steps are empty. The first step past
    ``tol`` is outlined. ``title`` defaults to "Where each bug shows up (broken variants)".
    """
    n_steps = max(max(len(b.report.max_diffs) if b.report is not None else 0,
                      (b.error_step or 0) + 1) for _, b, _ in results)
    title = tr("Where each bug shows up (broken variants)") if title is None else title
    if any(b.error is not None for _, b, _ in results):
        title += "\n" + tr("(white: steps not reached, torch raised an error)")
    grid = np.full((len(results), n_steps), np.nan)
    lo, hi = np.log10(tol) - 4, 1.0
    fig, ax = subplots(figsize=(8.5, 0.42 * len(results) + 1.6), layout="constrained")
    for row, (bug, broken, _) in enumerate(results):
        if broken.report is not None:
            d = np.asarray(broken.report.max_diffs, dtype=float)
            grid[row, : len(d)] = np.log10(np.maximum(d, 10 ** lo))
        if broken.error is not None:
            ax.text(broken.error_step, row, tr("raises"), ha="center", va="center", fontsize=9, color="#b00")
    im = ax.imshow(grid, cmap="RdYlGn_r", vmin=lo, vmax=hi, aspect="auto", interpolation="nearest")
    for row, (_, broken, _) in enumerate(results):
        if broken.first_step is not None:
            ax.add_patch(plt.Rectangle((broken.first_step - 0.5, row - 0.5), 1, 1, fill=False, lw=2, ec="black"))
    ax.set_yticks(range(len(results)))
    ax.set_yticklabels([tr(bug.title) for bug, _, _ in results], fontsize=9)
    ax.set_xticks(range(n_steps))
    ax.set_xlabel(tr("step (0 = prefill, s = s-th decode step)"))
    ax.set_title(title)
    bar = fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
    bar.set_label(tr("log10 max |logit diff|"), fontsize=9)
    bar.ax.axhline(np.log10(tol), color="black", lw=1)
    return fig
