"""Serving figures: notebook 06's schedules and rate sweep, and the serving appendix (notebook 11): what each
iteration of ``utils.serving.PagedEngine`` ran.

An iteration is one bar: it starts where the iteration starts and is as wide as it took, and it
stacks the decode tokens it ran (one per running request, at the bottom) under the prefill-chunk
tokens (on top). A long prompt prefilled in one piece is then a bar both tall and wide, and every
decoding request waited for all of it; chunked, it is a row of shorter bars.
"""
from __future__ import annotations

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from ..i18n import tr
from .base import COLORS, LEGEND_SIZE, subplots, wrap
from .metrics import _draw_schedule, _plain_log_y, _schedule_legend


def _columns(ax, lefts, widths, bottoms, heights, label: str, **style) -> None:
    """Vertical bars in one collection (one artist to draw, not one patch each: a panel redraws them)."""
    verts = [[(x, b), (x + w, b), (x + w, b + h), (x, b + h)]
             for x, w, b, h in zip(lefts, widths, bottoms, heights) if h > 0]
    ax.add_collection(PolyCollection(verts, label=label, **style))


def _draw_iterations(ax, steps: list[dict], budget: int | None) -> float:
    """``steps`` (``Run.steps``: start_s, end_s, decode, prefill, preempted) as stacked bars, in ms.
    Returns the top of the y-axis it set (the tallest bar, or the budget line when it is drawn)."""
    start = np.array([s["start_s"] for s in steps]) * 1e3
    width = np.array([s["end_s"] - s["start_s"] for s in steps]) * 1e3
    decode = np.array([len(s["decode"]) for s in steps])
    prefill = np.array([sum(n for _, n in s["prefill"]) for s in steps])
    _columns(ax, start, width, np.zeros(len(steps)), decode, tr("decode tokens (one per running request)"),
             facecolor=COLORS["decode"], edgecolor="#a04800", linewidth=0.3)
    _columns(ax, start, width, decode, prefill, tr("prefill-chunk tokens"),
             facecolor=COLORS["prefill"], edgecolor="#0b3d6b", linewidth=0.3)
    hit = [i for i, s in enumerate(steps) if s["preempted"]]
    if hit:
        ax.plot(start[hit] + width[hit] / 2, decode[hit] + prefill[hit], "v", color=COLORS["recompute"], ms=6,
                label=tr("a request preempted"))
    ran = int(max(decode + prefill, default=1))
    if budget is not None and budget <= 2 * ran:  # a budget far above what ran would squash the bars
        ax.axhline(budget, color="k", ls="--", lw=0.8, label=tr("token budget max_batch_tokens = {n}", n=budget))
    top = max(ran, budget if budget is not None and budget <= 2 * ran else 0) * 1.12 + 1
    ax.set_ylim(0, top)
    ax.set_xlim(0, max(start + width, default=1.0) * 1.01)
    ax.set_ylabel(tr("tokens in the iteration"))
    ax.grid(True, axis="y", alpha=0.3)
    return top


def _iteration_title(name: str, steps: list[dict]) -> str:
    tokens = [len(s["decode"]) + sum(n for _, n in s["prefill"]) for s in steps]
    longest = max((s["end_s"] - s["start_s"] for s in steps), default=0.0) * 1e3
    return tr("{name}: {n} iterations, at most {tokens} tokens in one, the longest {ms:.2f} ms",
              name=name, n=len(steps), tokens=max(tokens, default=0), ms=longest)


def plot_iterations(runs: dict, budget: int | None = None, title: str | None = None):
    """One axes per run (name -> ``Run.steps``), time and token axes shared: each iteration a bar of
    its decode tokens under its prefill-chunk tokens, as wide as it took; a marker where a request was
    preempted; a dashed line at the token budget ``budget``. ``title`` defaults to "What each iteration ran"."""
    names = list(runs)
    fig, axes = subplots(len(names), 1, figsize=(10, 1.45 + 2.0 * len(names)), sharex=True, sharey=True,
                         squeeze=False)
    tops = []
    for ax, name in zip(axes[:, 0], names):
        tops.append(_draw_iterations(ax, runs[name], budget))
        ax.set_title(_iteration_title(name, runs[name]), fontsize=9, loc="left", y=1.0, pad=4)
    axes[0][0].set_ylim(0, max(tops, default=1.0))  # one scale: the bars of the runs compare
    right = max((s["end_s"] for steps in runs.values() for s in steps), default=0.001) * 1e3
    axes[0][0].set_xlim(0, right * 1.01)
    axes[-1][0].set_xlabel(tr("time (ms)"))
    entries = {}  # one legend under the axes for every run's marks (inside, it hid the budget line)
    for ax in axes[:, 0]:
        for h, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, h)
    fig.legend(list(entries.values()), list(entries), loc="lower center", bbox_to_anchor=(0.5, 0.01), ncol=3,
               fontsize=LEGEND_SIZE, frameon=False)
    fig.suptitle(tr("What each iteration ran") if title is None else title, fontsize=11)
    W, H = fig.get_figwidth(), fig.get_figheight()
    fig.subplots_adjust(left=0.6 / W, right=1 - 0.15 / W, top=1 - 0.6 / H, bottom=1.05 / H, hspace=0.45)
    return fig


def plot_engine_timeline(state: dict, title: str | None = None):
    """``EngineTimelinePanel``'s state: above, each iteration's mix (``plot_iterations``' bars); below,
    each request's timeline (waiting, its prefill up to the first token, one segment per later token),
    on the same time axis; one legend below both. ``title`` defaults to the settings, TTFT p50 and ITL p95.
    Drawn for a slider: few texts (each costs a millisecond or two to draw), fixed margins."""
    fig, (ax0, ax1) = subplots(2, 1, figsize=(10, 5.9), sharex=True, gridspec_kw={"height_ratios": [1, 1.3]})
    _draw_iterations(ax0, state["steps"], state["max_batch_tokens"])
    ax0.yaxis.set_major_locator(MaxNLocator(4, integer=True))
    _draw_schedule(ax1, state["schedule"])
    ends = [t for times in state["schedule"]["token_times"] for t in times[-1:]]
    ax0.set_xlim(0, max(ends, default=0.001) * 1e3 * 1.01)  # after the timeline: it autoscales the shared axis
    ax1.xaxis.set_major_locator(MaxNLocator(6))
    ax1.set_xlabel(tr("time (ms)"))
    # One entry per colour: orange is decode and blue is prefill in both axes, so each says what it is
    # above and below. The engine picks a first token inside its prefill's forward pass: no separate
    # first sampling to show.
    both = {tr("decode tokens (one per running request)"): tr("decode: its tokens in each iteration (above), "
                                                              "one segment per token of a request (below)"),
            tr("prefill-chunk tokens"): tr("prefill: its chunk tokens in each iteration (above), a request's "
                                           "prefill (below)")}
    handles, labels = ax0.get_legend_handles_labels()
    labels = [both.get(label, label) for label in labels]
    below = [(h, label) for h, label in zip(*_schedule_legend(ax1))
             if label not in (tr("first sampling"), tr("setup + prefill"), tr("decode steps (one per token)"))]
    fig.legend(handles + [h for h, _ in below], [wrap(label) for label in labels + [label for _, label in below]],
               loc="lower center", bbox_to_anchor=(0.5, 0.01), ncol=3, fontsize=LEGEND_SIZE, frameon=False)
    chunk = tr("off") if state["prefill_chunk"] is None else state["prefill_chunk"]
    s = state["summary"]
    costs = (tr("GPU-like costs") if state.get("machine") == "gpu" else tr("the fitted costs"))  # which machine replayed
    fig.suptitle(title or tr("{rate} requests/s, max_batch_tokens = {budget}, prefill_chunk = {chunk}: TTFT p50 "
                             "{ttft:.1f} ms, ITL p95 {itl:.2f} ms (replayed with {costs})",
                             rate=state["rate"], budget=state["max_batch_tokens"], chunk=chunk,
                             ttft=s["ttft_p50_s"] * 1e3, itl=s["itl_p95_s"] * 1e3, costs=costs), fontsize=10)
    W, H = fig.get_figwidth(), fig.get_figheight()
    # fixed margins in inches: the title above; below, the time axis (0.45) and the legend (two entries of two lines)
    fig.subplots_adjust(left=0.6 / W, right=1 - 0.15 / W, top=1 - 0.4 / H, bottom=1.3 / H, hspace=0.08)
    return fig


def plot_schedules(schedules: dict, title: str | None = None, stats: bool = True):
    """Each schedule (name -> ``utils.serving.Run.schedule()``) as a timeline of its requests (see
    ``_draw_schedule``). Each title: the name and, with ``stats``, TTFT p50 and p95 (numpy's default
    percentiles) and the throughput, tokens/s and requests/s over the run and tokens/s while computing
    (a panel whose table shows them passes ``stats=False``: each glyph costs drawing time). ``title``
    defaults to "The same requests, served three ways"."""
    names = list(schedules)
    n_rows = max(len(s["arrival_s"]) for s in schedules.values())
    fig, axes = subplots(len(names), 1, figsize=(10, 1.2 + (0.9 + 0.08 * n_rows) * len(names)), sharex=True,
                         squeeze=False)
    for ax, name in zip(axes[:, 0], names):
        s = schedules[name]
        _draw_schedule(ax, s)
        ax.set_title(tr("{name}: TTFT p50 {p50:.1f} ms, p95 {p95:.1f} ms | {tokens:.0f} tokens/s and {requests:.0f} "
                        "requests/s over the run, {busy:.0f} tokens/s while computing", name=name,
                        p50=s["ttft_p50_s"] * 1e3, p95=s["ttft_p95_s"] * 1e3, tokens=s["tokens_per_s"],
                        requests=s["requests_per_s"], busy=s["busy_tokens_per_s"]) if stats else name, fontsize=9,
                     loc="left", y=1.0, pad=4)  # a fixed place: matplotlib would otherwise measure every tick label
    axes[-1][0].set_xlabel(tr("time (ms)"))
    handles, labels = _schedule_legend(axes[0][0])  # the first sampling (µs) is thinner than a pixel here: say so
    labels = [tr("first sampling (too short to see)") if label == tr("first sampling") else label for label in labels]
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=LEGEND_SIZE)
    fig.suptitle(tr("The same requests, served three ways") if title is None else title, fontsize=11)
    # Fixed margins, in inches (tight_layout measures every label: half the drawing time of a panel step):
    # above, the title and the first axes' title; between, each axes' title; below, the time axis and the legend.
    W, H, top, gap, bottom = fig.get_figwidth(), fig.get_figheight(), 0.75 if title != "" else 0.4, 0.45, 0.95
    axes_h = (H - top - bottom - gap * (len(names) - 1)) / len(names)
    fig.subplots_adjust(left=0.6 / W, right=1 - 0.15 / W, top=1 - top / H, bottom=bottom / H, hspace=gap / axes_h)
    return fig


def plot_rate_sweep(sweep: dict, title: str | None = None):
    """``sweep``: ``{"rate": [...], policy: [Run.summary() per rate]}``. Left: TTFT p50 (solid) and p95
    (dashed); middle: TPOT p50 and p95; right: tokens/s over the run; against requests per second. One
    legend under the three panels names the policies' colours and the two line styles.
    ``title`` defaults to "Three policies as the arrival rate grows"."""
    rate = np.asarray(sweep["rate"])
    policies = [k for k in sweep if k != "rate"]
    colors = dict(zip(policies, (COLORS["mask"], COLORS["prefill"], COLORS["decode"], COLORS["cached"])))
    # policies often tie (at low rates they serve alike): wide lines and big hollow markers under narrow ones
    # and small filled ones, so a tie shows every colour nested instead of the last policy drawn alone
    styles = dict(zip(policies, ({"marker": "o", "ms": 9, "lw": 3.2, "mfc": "none", "mew": 1.4},
                                 {"marker": "s", "ms": 6, "lw": 2.0, "mfc": "none", "mew": 1.2},
                                 {"marker": "^", "ms": 4, "lw": 1.0}, {"marker": "D", "ms": 3, "lw": 0.8})))
    fig, axes = subplots(1, 3, figsize=(13, 4.1))
    for p in policies:
        rows, st = sweep[p], styles[p]
        for ax, key in zip(axes[:2], ("ttft", "tpot")):
            ax.plot(rate, [r[f"{key}_p50_s"] * 1e3 for r in rows], "-", color=colors[p], **st)
            ax.plot(rate, [r[f"{key}_p95_s"] * 1e3 for r in rows], "--", color=colors[p], lw=st["lw"] * 0.6)
        axes[2].plot(rate, [r["tokens_per_s"] for r in rows], "-", color=colors[p], **st)
    for ax, ylabel, sub in zip(axes, (tr("TTFT (ms, log scale)"), tr("TPOT (ms)"), tr("tokens/s over the run")),
                               (tr("Time to first token (solid p50, dashed p95)"),
                                tr("Time per output token (solid p50, dashed p95)"), tr("Throughput"))):
        ax.set_xscale("log")
        ax.set_xlabel(tr("arrival rate (requests/s, log scale)"))
        ax.set_ylabel(ylabel)
        ax.set_title(sub, fontsize=10)
        ax.grid(True, alpha=0.3, which="both")
    axes[0].set_yscale("log")
    _plain_log_y(axes[0])
    axes[1].set_ylim(bottom=0)
    axes[2].set_ylim(bottom=0)
    handles = [Line2D([], [], color=colors[p], label=p, **styles[p]) for p in policies]
    handles += [Line2D([], [], color="k", ls=ls, label=label)  # black: grey is a policy's colour
                for ls, label in (("-", tr("p50 (median)")), ("--", "p95"))]
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.06), ncol=len(handles),
               fontsize=LEGEND_SIZE, frameon=False)
    fig.text(0.5, 0.015, tr("Where markers nest, the policies' values coincide: a line that seems missing lies "
                            "under another one."), ha="center", fontsize=LEGEND_SIZE)
    fig.suptitle(tr("Three policies as the arrival rate grows") if title is None else title, fontsize=11)
    fig.subplots_adjust(left=0.06, right=0.99, top=0.85, bottom=0.3, wspace=0.28)
    return fig
