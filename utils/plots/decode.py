"""Figures of notebook 03 (decode): the decode grids, recompute diffs, step times and costs."""
from __future__ import annotations

import unicodedata

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch
from matplotlib.ticker import LogLocator, NullFormatter

from ..flops import decode_step_cost
from ..i18n import tr
from ..perf.timers import fit_step_time
from ..roofline import kv_weights_crossover
from .base import COLORS, LEGEND_SIZE, SMALL_SIZE, punctuation_quoted, subplots, token_label


# Cell kinds of the decode grids (index into _GRID_COLORS).
_EMPTY, _PROMPT, _RECOMPUTED, _NEW, _FILLED = 0, 1, 2, 3, 4
_GRID_COLORS = ["#f2f2f2", COLORS["prefill"], COLORS["recompute"], COLORS["cached"], COLORS["decode"]]


@plt.FuncFormatter
def _si_formatter(x, pos=None) -> str:
    """Log-axis tick labels in plain text (1k, 10M, 1G): mathtext labels like 10^6 are slow to draw."""
    for scale, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:g}{unit}"
    if 0 < abs(x) < 1e-2:
        mantissa, exponent = f"{x:.0e}".split("e")
        return f"{mantissa}e{int(exponent)}"  # 1e-06 -> 1e-6
    return f"{x:g}"


def _plain_log_labels(ax) -> None:
    for axis, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        if axis.get_scale() == "log":
            if max(limits) / min(limits) < 1000:  # up to 3 decades: label 1, 2, 5 x 10^k too
                axis.set_major_locator(LogLocator(subs=(1, 2, 5)))
            axis.set_major_formatter(_si_formatter)
            axis.set_minor_formatter(NullFormatter())
    ax.minorticks_off()  # dozens of minor ticks per log axis cost more to draw than they tell


_CHAR_PT = 0.55 * SMALL_SIZE  # the width of a Latin letter of a grid label, in points (a Chinese one: twice that)


def _label_width(text: str) -> int:
    """Width of a label in Latin letters: a Chinese character takes about two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _column_labels(words: list[str], n: int, column_pt: float) -> tuple[list[str], int]:
    """Each column's label, the token over its position, and the rotation that fits: 0 (two short lines,
    read straight) when the widest token fits its column, else 90 (one line, read sideways)."""
    tokens = [punctuation_quoted(token_label(w)) for w in words[:n]]  # a lone "." in quotes, not a speck
    if _CHAR_PT * max(map(_label_width, tokens), default=1) <= 0.9 * column_pt:
        return [f"{t}\n{i}" for i, t in enumerate(tokens)], 0
    return [f"{t} {i}" for i, t in enumerate(tokens)], 90


def _labels_height_pt(labels: list[str], rotation: int) -> float:
    """The height the column labels take under the axes, in points."""
    if rotation == 0:
        return 2.6 * SMALL_SIZE  # two lines
    return _CHAR_PT * max(map(_label_width, labels), default=2)


def _grid_axes(ax, n_rows: int, n_cols: int, labels: list[str] | None, rotation: int, xlabel: str) -> None:
    """Cell borders, and the column labels (or, when there are many columns, position ticks) along x."""
    if labels is not None:
        # Plain text under each column: much faster to draw than 40 tick objects per axis.
        ax.set_xticks([])
        for i, text in enumerate(labels):
            ax.text(i, -0.02, text, transform=ax.get_xaxis_transform(), rotation=rotation,
                    ha="center", va="top", fontsize=SMALL_SIZE, linespacing=1.1)
        ax.set_xlabel(xlabel, labelpad=4 + _labels_height_pt(labels, rotation))
    else:
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.set_xlabel(xlabel)
    if n_cols <= 120:  # thin white lines between cells (one LineCollection each: cheap)
        ax.vlines(np.arange(0.5, n_cols - 1), -0.5, n_rows - 0.5, colors="white", lw=0.6)
    ax.hlines(np.arange(0.5, n_rows - 1), -0.5, n_cols - 0.5, colors="white", lw=0.6)


def plot_decode_grids(state: dict):
    """The side-by-side viewer of notebook 03 for one ``DecodePanel`` state.

    Left: steps (rows; 0 = prefill) x positions. In a loop without cache, step s pushes every
    position up to the new one through the model again: the history cells (red) are the
    recomputed ones; the green cell is the new token, computed by both loops; steps after the current
    one are pale. Right: layers (rows) x positions: what every layer's K/V cache holds after the current
    step (blue = written by prefill, orange = appended by a decode step). A black frame marks the current
    step's row on the left and the column it appended on the right; grey slots hold no token yet. The
    legend names each of these marks.
    """
    T0, n_steps, step = state["prompt_len"], state["n_steps"], state["step"]
    L, words = len(state["cache_len_per_layer"]), state["tokens"]
    n_pos = T0 + n_steps  # every position a step ever feeds
    left = np.zeros((n_steps + 1, n_pos), dtype=int)  # (steps, positions)
    left[0, :T0] = _PROMPT
    for s in range(1, n_steps + 1):
        left[s, : T0 + s - 1] = _RECOMPUTED
        left[s, T0 + s - 1] = _NEW
    right = np.zeros((L, n_pos), dtype=int)  # (layers, positions)
    for layer, n in enumerate(state["cache_len_per_layer"]):
        right[layer, : min(n, T0)] = _PROMPT
        right[layer, T0:n] = _FILLED
    cmap = ListedColormap(_GRID_COLORS)
    left_in, right_in, wspace = 0.06, 0.99, 0.15  # the subplots_adjust below, as fractions of the figure width
    widest_pt = _CHAR_PT * max(_label_width(token_label(w)) for w in words[:n_pos]) / 0.9  # a column that fits it
    # wide enough for straight labels (up to 14 inches); the figure grows rather than tilt them
    width = min(14.0, max(9.0, 0.28 * n_pos * 2 + 3, widest_pt * n_pos * (2 + wspace) / (right_in - left_in) / 72))
    column_pt = 72 * width * (right_in - left_in) / (2 + wspace) / n_pos
    labels, rotation = _column_labels(words, n_pos, column_pt) if n_pos <= 40 else (None, 0)
    fig, (ax0, ax1) = subplots(1, 2, figsize=(width, 3.9), gridspec_kw={"width_ratios": [1, 1]})
    ax0.imshow(left, cmap=cmap, vmin=0, vmax=len(_GRID_COLORS) - 1, aspect="auto", interpolation="nearest")
    if step < n_steps:  # future steps: not computed yet
        ax0.axhspan(step + 0.5, n_steps + 0.5, color="white", alpha=0.75, lw=0)
    framed = T0 if step == 0 else T0 + step  # the positions this step runs: its empty slots stay unframed
    ax0.add_patch(plt.Rectangle((-0.5, step - 0.5), framed, 1, fill=False, lw=2, ec="black"))
    ax0.set_ylabel(tr("step (0 = prefill)"))
    ax0.set_yticks(range(0, n_steps + 1, max(1, (n_steps + 1) // 12)))
    _grid_axes(ax0, n_steps + 1, n_pos, labels, rotation, tr("position (token)"))
    ax0.set_title(tr("Loop without cache: step 0 is the prefill, nothing recomputed yet") if step == 0 else
                  tr("Loop without cache: step {step} recomputes {n} history positions", step=step,
                     n=state["n_recomputed"]), fontsize=10)
    ax1.imshow(right, cmap=cmap, vmin=0, vmax=len(_GRID_COLORS) - 1, aspect="auto", interpolation="nearest")
    last = state["cache_len"] - 1
    ax1.add_patch(plt.Rectangle((last - 0.5, -0.5), 1, L, fill=False, lw=2, ec="black"))
    ax1.set_yticks(range(L))
    ax1.set_ylabel(tr("layer"))
    _grid_axes(ax1, L, n_pos, labels, rotation, tr("cached position (token)"))
    ax1.set_title(tr("KV cache after step {step}: every layer holds {n} positions", step=step, n=state["cache_len"]),
                  fontsize=10)
    # one entry per mark: each colour, the black frames, the pale later rows, the grey empty slots
    handles = [Patch(color=_GRID_COLORS[_PROMPT], label=tr("prompt (prefill)")),
               Patch(color=_GRID_COLORS[_RECOMPUTED], label=tr("history recomputed (no cache)")),
               Patch(color=_GRID_COLORS[_NEW], label=tr("new token (both loops compute it)")),
               Patch(color=_GRID_COLORS[_FILLED], label=tr("K/V appended by decode")),
               Patch(facecolor="none", edgecolor="black", lw=2, label=tr("black frame: this step; its new K/V")),
               Patch(facecolor=_GRID_COLORS[_RECOMPUTED], alpha=0.25, label=tr("pale: later steps, not run yet")),
               Patch(facecolor=_GRID_COLORS[_EMPTY], edgecolor="#b0b0b0", label=tr("grey: no token there yet"))]
    ncol = len(handles) if width >= 14 else 4
    legend_rows = -(-len(handles) // ncol)
    fig.legend(handles=handles, loc="upper center", ncol=ncol, fontsize=LEGEND_SIZE, frameon=False)
    # room for the column labels and the x label: the figure grows rather than squeeze the grids
    labels_pt = (_labels_height_pt(labels, rotation) if labels else 2) + 34
    head_in = 0.48 + 0.2 * legend_rows  # the legend and the titles, in inches
    fig.set_figheight(3.9 + max(0.0, labels_pt / 72 - 3.9 * 0.3) + 0.2 * (legend_rows - 1))
    height_pt = fig.get_figheight() * 72
    bottom = labels_pt / height_pt
    top = 1 - head_in * 72 / height_pt
    fig.subplots_adjust(left=left_in, right=right_in, top=top, bottom=bottom, wspace=wspace)  # tight_layout is slow
    return fig


def plot_recompute_diffs(report, title: str | None = None):
    """Max |cached - recomputed| logit difference at every step of a ``RecomputeReport`` (log scale).

    Exact zeros cannot be drawn on a log axis: they are drawn as hollow dots on a line of their own at the
    bottom, labelled "0", below the lowest decade.
    """
    diffs = np.asarray(report.max_diffs, dtype=float)
    steps = np.arange(len(diffs))
    floor = min(report.tol, diffs[diffs > 0].min() if (diffs > 0).any() else report.tol) / 10
    fig, ax = subplots(figsize=(7, 3.4))
    pos = diffs > 0
    ax.semilogy(steps[pos], diffs[pos], "o-", color=COLORS["cached"], label=tr("max |diff| over the vocabulary"))
    if (~pos).any():
        ax.plot(steps[~pos], np.full((~pos).sum(), floor), "o", mfc="none", color=COLORS["cached"],
                label=tr("exactly 0 (the line marked 0)"))
    ax.axhline(report.tol, color=COLORS["recompute"], ls="--", label=tr("tolerance {tol:g}", tol=report.tol))
    ax.set_ylim(floor / 2, report.tol * 50)  # room above the tolerance line for the legend
    _plain_log_labels(ax)
    if (~pos).any():  # the zeros' line gets the tick "0"; the decades start a factor 3 above it
        ticks = [t for t in LogLocator().tick_values(floor, report.tol * 50) if floor * 3 <= t <= report.tol * 50]
        ax.set_yticks([floor] + ticks, ["0"] + [_si_formatter(t) for t in ticks])
        ax.axhline(floor * 1.8, color="grey", lw=0.8, ls=(0, (2, 2)))  # where the log scale begins
    ax.set_xlabel(tr("step (0 = prefill logits, s = s-th decode step)"))
    ax.set_ylabel(tr("max |logit difference|"))
    ax.set_title(tr("Cached vs full recompute, per step") if title is None else title)
    ax.legend(fontsize=LEGEND_SIZE, loc="upper left")
    fig.subplots_adjust(left=0.12, right=0.97, top=0.9, bottom=0.16)  # fixed: tight_layout is slow
    return fig


def plot_step_times(tpot: dict, title: str | None = None):
    """The fastest sample of each T of ``utils.perf.tpot_vs_context``'s result (seconds, drawn in ms): the one
    least disturbed by other work on a shared machine. Left: both loops, log-log axes. Right: the cached loop
    alone on linear axes, where its (slower) growth is easy to see."""
    T = np.asarray(tpot["T"])
    cached_ms = [min(s.samples) * 1e3 for s in tpot["cached"]]
    fig, (ax0, ax1) = subplots(1, 2, figsize=(12, 3.7))
    ax0.loglog(T, cached_ms, "o-", color=COLORS["cached"], label=tr("with KV cache (1 new token)"))
    nc = [(t, min(s.samples) * 1e3) for t, s in zip(T, tpot["no_cache"] or []) if s is not None]
    if nc:
        ax0.loglog(*zip(*nc), "s-", color=COLORS["recompute"], label=tr("without cache (all T + 1 tokens again)"))
    ax0.set_title(tr("Both loops (log-log)"))
    ax0.legend(fontsize=LEGEND_SIZE)
    _plain_log_labels(ax0)
    ax0.set_xticks(T, [str(t) for t in T])  # the measured lengths
    ax1.plot(T, cached_ms, "o-", color=COLORS["cached"], label=tr("with KV cache (1 new token)"))
    ax1.set_ylim(0, max(cached_ms) * 1.15)
    ax1.set_xlim(0, T.max() * 1.05)
    ax1.set_title(tr("The cached step alone (linear axes)"))
    for ax in (ax0, ax1):
        ax.set_xlabel(tr("context length T (tokens already in the context)"))
        ax.set_ylabel(tr("fastest time per step (ms)"))
        ax.grid(True, alpha=0.3)
    fig.suptitle(tr("Time of one decode step vs context length") if title is None else title, fontsize=11)
    fig.subplots_adjust(left=0.06, right=0.98, top=0.85, bottom=0.15, wspace=0.22)
    return fig


def plot_step_costs(cfg, context_lens, dtype="float32", title: str | None = None):
    """What one decode step costs vs context length T, counted with ``utils.flops``.

    Left: FLOPs per step, without cache and with cache, and the part of the cached step that is
    attention over the T + 1 keys (still paid). Right: bytes a cached step reads: the weights
    (constant) and the K/V cache (grows linearly with T), with a dotted line where the two are equal.
    """
    T = list(context_lens)
    cached = [decode_step_cost(cfg, t, cached=True, dtype=dtype) for t in T]
    nocache = [decode_step_cost(cfg, t, cached=False, dtype=dtype) for t in T]
    fig, (ax0, ax1) = subplots(1, 2, figsize=(12, 3.8))
    ax0.loglog(T, [c.total_flops for c in nocache], "s-", color=COLORS["recompute"], label=tr("without cache: total"))
    ax0.loglog(T, [c.total_flops for c in cached], "o-", color=COLORS["cached"], label=tr("with cache: total"))
    ax0.loglog(T, [c.flops["attention"] for c in cached], "o--", color=COLORS["decode"],
               label=tr("with cache: attention over T + 1 keys"))
    ax0.set_xlabel(tr("context length T (tokens)"))
    ax0.set_ylabel(tr("FLOPs per decode step"))
    ax0.set_title(tr("Compute of one step"))
    ax0.grid(True, alpha=0.3)
    bottom, top = ax0.get_ylim()
    ax0.set_ylim(bottom, top * (top / bottom) ** 0.3)  # headroom above the curves: the legend sits there
    _plain_log_labels(ax0)
    ax0.legend(fontsize=LEGEND_SIZE, loc="upper left")
    w = np.array([c.bytes["weights"] for c in cached]) / 2**20
    kv = np.array([c.bytes["kv_read"] for c in cached]) / 2**20
    ax1.plot(T, w, color=COLORS["mask"], label=tr("weights read"))
    ax1.plot(T, kv, color=COLORS["K"], label=tr("K/V cache read"))
    ax1.plot(T, w + kv, color="black", ls=":", label=tr("total"))
    cross = kv_weights_crossover(cfg, dtype=dtype)
    if T[0] <= cross <= T[-1]:  # dotted, as in plot_bytes_and_step_time: where the K/V read reaches the weights
        ax1.axvline(cross, color=COLORS["decode"], ls=":", lw=1.5,
                    label=tr("K/V bytes = weight bytes at T = {T:,}", T=cross))
    ax1.set_xlabel(tr("context length T (tokens)"))
    ax1.set_ylabel(tr("MiB read per cached step ({dtype})", dtype=dtype))
    ax1.set_title(tr("Memory one cached step reads"))
    ax1.grid(True, alpha=0.3)
    ax1.legend(fontsize=LEGEND_SIZE)
    fig.suptitle(title or tr("One decode step, counted: L={L}, C={C}, H={H}, H_kv={H_kv}, d_h={d_h}, d_ff={d_ff}, "
                             "V={V}", L=cfg.n_layers, C=cfg.d_model, H=cfg.n_heads, H_kv=cfg.n_kv_heads,
                             d_h=cfg.head_dim, d_ff=cfg.d_ff, V=cfg.vocab_size), fontsize=10)
    fig.subplots_adjust(left=0.07, right=0.98, top=0.85, bottom=0.15, wspace=0.25)
    return fig


def plot_bytes_and_step_time(cfg, measured: dict, dtype="float32", title: str | None = None, through: str = "median"):
    """Bytes a cached step reads against T, beside the measured time of a step, on the same T axis.

    ``measured``: ``utils.perf.decode_time_vs_context``'s result. Left: the weights (the same
    at every T), the K/V cache (linear in T) and their sum. Right: the median time per step, with
    bars from the first to the third quartile of the samples, each T's fastest sample, and the straight
    line fitted through the medians or (``through="fastest"``) the fastest samples (``fit_step_time``),
    split the same way: a fixed part and a part growing with T. The right panel's legend sits under
    the panels, so that it covers no line.
    A dotted line on both marks the T at which the K/V bytes reach the weight bytes; a dash-dotted one on
    the right the T at which the fitted growing part reaches the fixed part. The legends name both lines
    (a label at a line's foot would sit on whichever curve passes there). T is in plain tokens.
    """
    T_meas = np.asarray(measured["T"])
    T = np.linspace(0, T_meas.max(), 65).round().astype(int)
    costs = [decode_step_cost(cfg, int(t), dtype=dtype) for t in T]
    mib = 2**20
    w = np.array([c.bytes["weights"] for c in costs]) / mib
    kv = np.array([c.bytes["kv_read"] for c in costs]) / mib
    cross = kv_weights_crossover(cfg, dtype=dtype)
    fixed, per_token = (x * 1e3 for x in fit_step_time(measured, through))  # ms, ms per token
    fig, (ax0, ax1) = subplots(1, 2, figsize=(12, 5.1))
    ax0.plot(T, w, color=COLORS["mask"], label=tr("weights (the same at every T)"))
    ax0.plot(T, kv, color=COLORS["K"], label=tr("K/V cache (grows with T)"))
    ax0.plot(T, w + kv, color="black", ls=":", label=tr("total"))
    ax0.set_ylim(0, (w + kv).max() * 1.35)  # room for the legend's four rows
    ax0.set_ylabel(tr("MiB read per cached step ({dtype})", dtype=dtype))
    ax0.set_title(tr("What one step reads (counted)"))
    ax1.plot(T, np.full(len(T), fixed), color=COLORS["mask"], label=tr("fitted fixed part: {ms:.2f} ms", ms=fixed))
    ax1.plot(T, per_token * T, color=COLORS["K"],
             label=tr("fitted growing part: {ms:.2f} ms per 1k tokens", ms=per_token * 1024))
    ax1.plot(T, fixed + per_token * T, color="black", ls=":", label=tr("fitted total"))
    med = np.array([s.median for s in measured["step"]]) * 1e3
    q1 = np.array([s.q1 for s in measured["step"]]) * 1e3
    q3 = np.array([s.q3 for s in measured["step"]]) * 1e3
    ax1.errorbar(T_meas, med, yerr=[med - q1, q3 - med], fmt="o", color=COLORS["cached"], ecolor="black",
                 capsize=4, zorder=5, label=tr("measured: median, bars first to third quartile"))
    fastest = np.array([min(s.samples) for s in measured["step"]]) * 1e3
    ax1.plot(T_meas, fastest, "v", color=COLORS["recompute"], zorder=6, label=tr("measured: fastest sample"))
    ax1.set_ylim(0, max(q3.max(), fixed + per_token * T[-1]) * 1.1)  # the legend sits under the panel
    ax1.set_ylabel(tr("time per step (ms)"))
    ax1.set_title(tr("What one step takes (measured)"))
    time_cross = fixed / per_token if per_token > 0 else float("inf")  # where the fitted parts are equal
    if time_cross <= T_meas.max():
        ax1.axvline(time_cross, color=COLORS["K"], ls="-.", lw=1.5,
                    label=tr("fitted parts equal at T = {T:,.0f}", T=time_cross))
    for ax in (ax0, ax1):
        if cross <= T_meas.max():
            ax.axvline(cross, color=COLORS["decode"], ls=":", lw=1.5,
                       label=tr("K/V bytes = weight bytes at T = {T:,}", T=cross))
        ax.set_xlim(0, T_meas.max() * 1.03)
        # ticks in plain tokens (4,096, not 4k), as the crossings are printed
        ax.xaxis.set_major_locator(plt.MultipleLocator(2 ** max(int(np.log2(max(T_meas.max(), 8) / 4)), 0)))
        ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda x, pos=None: f"{x:,.0f}"))
        ax.set_xlabel(tr("context length T (tokens in the cache)"))
        ax.grid(True, alpha=0.3)
    ax0.legend(fontsize=LEGEND_SIZE, loc="upper left", framealpha=1)  # opaque: the crossing lines pass behind
    # the right panel's legend under both panels: inside it would cover the lines and force the y axis up
    fig.legend(*ax1.get_legend_handles_labels(), fontsize=LEGEND_SIZE, loc="lower center", ncol=3,
               bbox_to_anchor=(0.5, 0.01), title=tr("right panel"), title_fontsize=LEGEND_SIZE)
    fig.suptitle(title or tr("Decode over a long context: L={L}, C={C}, H={H}, H_kv={H_kv}, d_h={d_h}, V={V} "
                             "(1 CPU thread)", L=cfg.n_layers, C=cfg.d_model, H=cfg.n_heads, H_kv=cfg.n_kv_heads,
                             d_h=cfg.head_dim, V=cfg.vocab_size), fontsize=10)
    fig.subplots_adjust(left=0.06, right=0.98, top=0.89, bottom=0.31, wspace=0.2)
    return fig


def plot_new_query_weights(weights, words: list[str], title: str | None = None):
    """Attention weights ``[H, T + 1]`` of one decode step's single query over every cached key
    and its own (the last column). Each row sums to 1."""
    w = np.asarray(weights, dtype=float)  # (H, S)
    H, S = w.shape
    width, left, right = 7.5, 0.08, 0.98
    column_pt = 72 * width * (right - left) * 0.94 / S  # the colorbar takes about 6% of the axes' width
    labels, rotation = _column_labels(words, S, column_pt)
    # room under the axes for the labels (a glossed Chinese token is longer) and the x label, in inches
    under = (_labels_height_pt(labels, rotation) + 30) / 72
    fig, ax = subplots(figsize=(width, 2.0 + under))
    im = ax.imshow(w, cmap="viridis", vmin=0, vmax=1, aspect="auto", interpolation="nearest")
    ax.set_xticks(range(S))
    ax.set_xticklabels(labels, rotation=rotation, fontsize=SMALL_SIZE, linespacing=1.1)
    ax.set_yticks(range(H))
    ax.set_ylabel(tr("query head"))
    ax.set_xlabel(tr("key position (token); the last key is the new token's own"))
    ax.set_title(tr("The new token's query, one row per head") if title is None else title)
    height = fig.get_figheight()
    fig.subplots_adjust(left=left, right=right, top=1 - 0.3 / height, bottom=under / height)
    fig.colorbar(im, ax=ax, fraction=0.03, pad=0.02, label=tr("attention weight"))
    return fig
