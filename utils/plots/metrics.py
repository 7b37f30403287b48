"""Figures of notebook 06 (performance metrics): TTFT/TPOT, batching, TTFT parts, roofline, bandwidth.

Its serving figures (the schedules of three policies, the rate sweep) live in ``serving.py``."""
from __future__ import annotations

import math

import numpy as np
from matplotlib.patches import PathPatch
from matplotlib.path import Path
from matplotlib.ticker import FuncFormatter, LogLocator

from ..i18n import tr
from .base import COLORS, LEGEND_SIZE, SMALL_SIZE, subplots


def _plain_log_y(ax) -> None:
    """Log y axis labelled 1, 2, 5, 10, 20, ... instead of powers of ten only. Call it after plotting: the
    axis then starts at the labelled value just below the data, so the lowest curve can be read off."""
    ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, pos=None: f"{y:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda y, pos=None: ""))
    low, high = ax.get_ylim()
    if 0 < low < high:
        decade = 10 ** np.floor(np.log10(low))
        ax.set_ylim(max(m * decade for m in (1, 2, 5) if m * decade <= low), high)


def _median_band(ax, x, stats, color, label, marker="o"):
    """Median line of ``utils.perf.Stats`` (seconds, drawn in ms) with the quartiles as error bars."""
    med = np.array([s.median for s in stats]) * 1e3
    lo = med - np.array([s.q1 for s in stats]) * 1e3
    hi = np.array([s.q3 for s in stats]) * 1e3 - med
    ax.errorbar(x, med, yerr=[lo, hi], fmt=marker + "-", color=color, label=label, capsize=3, ms=5)


def plain_number(x: float) -> str:
    """The panels' one number format: three significant digits or more, thousands separated, never an
    exponent: 6,085, 12.5, 0.0123."""
    digits = 2 - math.floor(math.log10(abs(x))) if x and math.isfinite(x) else 0
    return f"{x:,.{max(0, digits)}f}"


def model_label(name: str) -> str:
    """A model's name as shown: a preset's as it is, a benchmark shape's ("bench 50M") in the current language."""
    if name.startswith("bench "):
        return tr("bench {name}", name=name.removeprefix("bench "))
    return name


def plot_ttft_tpot(ttft: dict, tpot: dict, title: str | None = None):
    """Left: TTFT vs prompt length. Right: TPOT vs context length. Inputs are what
    ``utils.perf.ttft_vs_prompt_length`` and ``utils.perf.tpot_vs_context`` return (log-log axes,
    median with quartile bars). ``title`` defaults to "TTFT and TPOT, with and without the KV cache"."""
    fig, (ax0, ax1) = subplots(1, 2, figsize=(12, 3.9))
    for ax, res, xlabel, ylabel, sub in (
        (ax0, ttft, tr("prompt length T (tokens)"), tr("TTFT (ms)"),
         tr("TTFT: the first token needs the whole prompt")),
        (ax1, tpot, tr("context length T (tokens already there)"), tr("TPOT: time of one decode step (ms)"),
         tr("TPOT: the cache makes each step small")),
    ):
        T = np.asarray(res["T"])
        _median_band(ax, T, res["cached"], COLORS["cached"], tr("with KV cache"))
        if res.get("no_cache") is not None:
            _median_band(ax, T, res["no_cache"], COLORS["recompute"], tr("without cache (recompute everything)"), "s")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        _plain_log_y(ax)
        ax.set_xticks(T, [str(t) for t in T])
        ax.minorticks_off()
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(sub, fontsize=10)
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize=LEGEND_SIZE)
    fig.suptitle(tr("TTFT and TPOT, with and without the KV cache") if title is None else title, fontsize=11)
    fig.subplots_adjust(left=0.07, right=0.98, top=0.84, bottom=0.15, wspace=0.25)
    return fig


def plot_batch_sweep(sweep: dict, title: str | None = None):
    """``utils.perf.batch_sweep``'s result. Left: throughput (tokens/s, all rows) vs B. Right: what one
    request feels: TTFT, TPOT and end-to-end latency (ms) vs B. ``title`` defaults to "Batching: more
    tokens per second, slower for each request"."""
    B = np.asarray(sweep["B"])
    fig, (ax0, ax1) = subplots(1, 2, figsize=(12, 3.9))
    ax0.plot(B, sweep["throughput"], "o-", color=COLORS["cached"], label=tr("end to end: B × n / latency"))
    ax0.plot(B, sweep["decode_throughput"], "s--", color=COLORS["decode"], label=tr("while decoding: B / TPOT"))
    ax0.set_ylabel(tr("throughput (new tokens/s, all rows)"))
    ax0.set_title(tr("The server's view: throughput"), fontsize=10)
    ax1.plot(B, np.asarray(sweep["latency_s"]) * 1e3, "o-", color="k", label=tr("latency (end to end)"))
    ax1.plot(B, np.asarray(sweep["ttft_s"]) * 1e3, "s-", color=COLORS["prefill"], label="TTFT")
    ax1.plot(B, np.asarray(sweep["tpot_s"]) * 1e3, "^-", color=COLORS["decode"], label="TPOT")
    ax1.set_yscale("log")
    _plain_log_y(ax1)
    ax1.set_ylabel(tr("time (ms, log scale)"))
    ax1.set_title(tr("One request's view: latency"), fontsize=10)
    for ax in (ax0, ax1):
        ax.set_xscale("log", base=2)
        ax.set_xticks(B, [str(b) for b in B])
        ax.minorticks_off()
        ax.set_xlabel(tr("batch size B (requests decoded together)"))
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize=LEGEND_SIZE)
    ax0.set_ylim(bottom=0)
    fig.suptitle(tr("Batching: more tokens per second, slower for each request") if title is None else title,
                 fontsize=11)
    fig.subplots_adjust(left=0.07, right=0.98, top=0.84, bottom=0.15, wspace=0.25)
    return fig


_PARTS = (("waiting", COLORS["mask"], 0.45), ("setup + prefill", COLORS["prefill"], 1.0),
          ("first sampling", COLORS["K"], 1.0))  # labels: English keys, shown through tr


def _bars(ax, lefts, widths, rows, label: str | None, **style) -> None:
    """Horizontal bars of height 0.6 centred on ``rows``, all in ONE path built from arrays: one artist
    and one path to draw, not a patch or a path per bar (a panel draws a thousand of them per step)."""
    x, w, r = (np.asarray(v, dtype=float) for v in (lefts, widths, rows))
    corners = np.stack([np.stack(c, axis=-1) for c in ((x, r - 0.3), (x + w, r - 0.3), (x + w, r + 0.3),
                                                       (x, r + 0.3), (x, r - 0.3))], axis=1)  # (n, 5, 2)
    codes = np.tile([Path.MOVETO, Path.LINETO, Path.LINETO, Path.LINETO, Path.CLOSEPOLY], len(x))
    patch = PathPatch(Path(corners.reshape(-1, 2), codes), label=label, **style)
    ax.add_artist(patch)  # not add_patch: it would walk the path segment by segment for the data limits
    if len(x):
        ax.update_datalim(corners.reshape(-1, 2))


def _draw_schedule(ax, s: dict) -> None:
    """One row per request (``utils.serving.Run.schedule()``, seconds, drawn in ms): a tick where it
    arrives, waiting, setup + prefill, the first sampling, then one segment per later token (the gap
    before it), so a stalled gap shows as a long segment."""
    rows = np.arange(len(s["arrival_s"]))
    left = np.asarray(s["arrival_s"]) * 1e3
    for key, (label, color, alpha) in zip(("wait_s", "prefill_s", "sample_s"), _PARTS):
        width = np.asarray(s[key]) * 1e3
        _bars(ax, left, width, rows, tr(label), facecolor=color, alpha=alpha, edgecolor="#555555", linewidth=0.3)
        left = left + width
    gaps = [(t0, t1 - t0, r) for r, times in enumerate(s["token_times"])
            for t0, t1 in zip(np.asarray(times[:-1]) * 1e3, np.asarray(times[1:]) * 1e3)]
    _bars(ax, *zip(*gaps) if gaps else ([], [], []), tr("decode steps (one per token)"),
          facecolor=COLORS["decode"], edgecolor="white", linewidth=0.15)  # thin light edges: ~40 per request
    ax.plot(np.asarray(s["arrival_s"]) * 1e3, rows, "|", color="k", ms=10, mew=1.5, label=tr("arrives"))
    ax.autoscale_view()
    step = max(1, -(-len(rows) // 6))  # at most six labels (each tick costs a redraw of the panel time)
    ax.set_yticks(rows[::step], [str(r) for r in rows[::step]])
    ax.set_ylim(len(rows) - 0.5, -0.5)  # request 0 on top
    ax.set_ylabel(tr("request"))
    ax.grid(True, axis="x", alpha=0.3)


def _schedule_legend(ax) -> tuple[list, list[str]]:
    """The timeline's legend entries in the order a request lives them."""
    handles, labels = ax.get_legend_handles_labels()
    order = [tr("arrives"), *(tr(label) for label, _, _ in _PARTS), tr("decode steps (one per token)")]
    pairs = sorted(zip(handles, labels), key=lambda hl: order.index(hl[1]) if hl[1] in order else len(order))
    return [h for h, _ in pairs], [label for _, label in pairs]


def plot_ttft_parts(schedule: dict, request: int, title: str | None = None):
    """Top: the requests' timeline (``_draw_schedule``). Bottom: request ``request``'s TTFT alone, split
    into waiting, setup + prefill and the first sampling, each labelled in ms (a part too thin to
    see is still labelled). ``title`` defaults to "TTFT has parts"."""
    fig, (ax0, ax1) = subplots(2, 1, figsize=(10, 4.2), gridspec_kw={"height_ratios": [2.2, 1]})
    _draw_schedule(ax0, schedule)
    ax0.set_xlabel(tr("time (ms)"))
    # above the timeline, in one row: inside the axes it hid the first request's decode steps
    ax0.legend(*_schedule_legend(ax0), fontsize=LEGEND_SIZE, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=5,
               frameon=False)
    parts = [schedule[key][request] * 1e3 for key in ("wait_s", "prefill_s", "sample_s")]  # ms
    ttft = sum(parts)
    left = 0.0
    for i, ((label, color, alpha), width) in enumerate(zip(_PARTS, parts)):
        ax1.barh(0, width, left=left, height=0.6, color=color, alpha=alpha)
        last = i == len(parts) - 1  # the last part is labelled below the bar, flush right: it may be a sliver
        flush = last or left + width / 2 > 0.8 * ttft  # a label centred near the right end would leave the axes
        ax1.annotate(tr("{part}: {ms:.2f} ms", part=tr(label), ms=width), (left + width / 2, -0.3 if last else 0.3),
                     (left + width if flush else left + width / 2, -0.85 if last else 0.85),
                     ha="right" if flush else "center", va="center", fontsize=SMALL_SIZE,
                     arrowprops={"arrowstyle": "-", "lw": 0.6})
        left += width
    ax1.set_xlim(0, ttft * 1.01)
    ax1.set_ylim(-1.3, 1.3)
    ax1.set_yticks([])
    ax1.set_xlabel(tr("request {request}: time since it arrived (ms); TTFT = {ttft:.2f} ms",
                      request=request, ttft=ttft))
    ax1.set_title(tr("Request {request}'s TTFT = waiting + setup and prefill + first sampling", request=request),
                  fontsize=10)
    fig.suptitle(tr("TTFT has parts") if title is None else title, fontsize=11)
    fig.tight_layout()
    return fig


def plot_batch_roofline(models: dict, title: str | None = None):
    """One panel per model, ``name -> {"B", "memory_tps", "compute_tps", "ridge", "measured_B",
    "measured_tps"}`` and optionally ``"kernel_ridge"``: the most tokens/s each roof allows at batch B
    (memory: B / (bytes / bandwidth); compute: B / (FLOPs / peak)), the roofline (the lower of the
    two), the ridge batch where they cross, the batch where the compute roof meets the bandwidth the
    decode step itself achieves (``kernel_ridge``), and the measured decode throughput B / TPOT (log-log).
    Each vertical line is labelled where it stands (its B differs from panel to panel); one legend under
    the panels names the curves. ``title`` defaults to "Decode throughput against the roofline"."""
    fig, axes = subplots(1, len(models), figsize=(6 * len(models), 4.6), squeeze=False)
    for ax, (name, m) in zip(axes[0], models.items()):
        B = np.asarray(m["B"])
        mem, comp = np.asarray(m["memory_tps"]), np.asarray(m["compute_tps"])
        ax.plot(B, mem, "--", color=COLORS["K"], label=tr("memory roof: B / (bytes / bandwidth)"))
        ax.plot(B, comp, ":", color=COLORS["recompute"], lw=2, label=tr("compute roof: B / (FLOPs / peak)"))
        ax.plot(B, np.minimum(mem, comp), "-", color="k", lw=6, alpha=0.15, zorder=1,  # a pale band under the roofs
                label=tr("roofline (the lower roof)"))
        ax.plot(m["measured_B"], m["measured_tps"], "o-", color=COLORS["cached"], ms=6,
                label=tr("measured: B / TPOT"))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        for key, color, text in (("ridge", "k", tr("ridge B = {B}", B=m.get("ridge"))),
                                 ("kernel_ridge", COLORS["decode"],
                                  tr("decode step's own bandwidth: B = {B}", B=m.get("kernel_ridge")))):
            if m.get(key) is not None:
                ax.axvline(m[key], color=color, ls="-.", lw=0.8)
                ax.annotate(text, (m[key], 0.03), xycoords=("data", "axes fraction"), xytext=(3, 0),
                            textcoords="offset points", ha="left", va="bottom", color=color, fontsize=SMALL_SIZE,
                            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1})
        _plain_log_y(ax)
        ticks = [b for b in B if b & (b - 1) == 0]  # powers of two
        ax.set_xticks(ticks, [str(b) for b in ticks])
        ax.minorticks_off()
        ax.set_xlabel(tr("batch size B (rows decoded together)"))
        ax.set_ylabel(tr("decode tokens/s (all rows)"))
        ax.set_title(name, fontsize=10)
        ax.grid(True, alpha=0.3, which="both")
    handles, labels = axes[0][0].get_legend_handles_labels()  # the same curves in every panel: one legend
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=LEGEND_SIZE, frameon=False)
    fig.suptitle(tr("Decode throughput against the roofline") if title is None else title, fontsize=11)
    W, H = fig.get_figwidth(), fig.get_figheight()
    lines = max(str(name).count("\n") for name in models) + 1  # an axes title may take two lines
    fig.subplots_adjust(left=0.75 / W, right=1 - 0.2 / W, top=1 - (0.55 + 0.22 * lines) / H, bottom=1.15 / H, wspace=0.22)
    return fig


def plot_bandwidth(res: dict, title: str | None = None):
    """``utils.perf.decode_vs_bandwidth``'s result: measured copy and read bandwidth next to the
    bandwidth the decode step achieves (bytes it must read / its time), GB/s: the median, and bars from the
    smallest to the largest sample (quartiles of three samples would mislead), said in the axis label.
    ``title`` defaults to "Batch-1 decode against the memory bandwidth"."""
    names = [tr("copy\n(read + write)"), tr("sum\n(read only)"), tr("decode step\n(bytes / time)")]
    stats = [res["copy_Bps"], res["read_Bps"], res["achieved_Bps"]]
    med = np.array([s.median for s in stats]) / 1e9
    err = [med - np.array([min(s.samples) for s in stats]) / 1e9, np.array([max(s.samples) for s in stats]) / 1e9 - med]
    fig, ax = subplots(figsize=(7, 3.6))
    ax.bar(names, med, yerr=err, capsize=4, color=[COLORS["mask"], COLORS["mask"], COLORS["decode"]])
    limit = res["limit_Bps"] / 1e9
    ax.axhline(limit, color="k", ls="--", lw=1)
    top = max(limit, float(np.max(med + err[1])))
    ax.set_ylim(0, top * 1.22)  # room above the line and the bars for the line's label
    # the line labelled at its right end, above it and over the decode bar (the lowest): no legend box on the line
    ax.text(2.45, limit + 0.04 * top, tr("measured limit"), ha="right", va="bottom", fontsize=LEGEND_SIZE)
    ax.text(2, med[2] + err[1][2], tr("{fraction:.0%} of the limit", fraction=res["fraction"]),
            ha="center", va="bottom", fontsize=9)
    ax.set_ylabel(tr("memory bandwidth (GB/s)"))
    ax.set_xlabel(tr("bars: the median of {n} samples; whiskers: the smallest to the largest",
                     n=min(len(s.samples) for s in stats)), fontsize=LEGEND_SIZE)
    ax.set_title(tr("Batch-1 decode against the memory bandwidth") if title is None else title, fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def plot_decode_bound(state: dict, title: str | None = None):
    """``DecodeBoundPanel``'s state: the roofline of decode against batch size B.
    Left: the most tokens/s the memory roof allows and, when the hardware's peak FLOP/s is known,
    the compute roof, with the ridge batch where they cross (log-log), the chosen B marked. Right:
    the bytes one step reads, split into weights (the same for any B) and K/V cache (grows with B)."""
    sweep = state["sweep"]
    B = np.asarray([r["B"] for r in sweep])
    H = 4.2  # inches: the title, the axes, their x labels and, under each axes, its legend (never over the curves)
    fig, (ax0, ax1) = subplots(1, 2, figsize=(11, H))
    # the limit, a pale wide band underneath: the roofs drawn over it stay visible where it follows them
    ax0.loglog(B, [r["max_tokens_per_s"] for r in sweep], "-", color=COLORS["cached"], lw=7, alpha=0.35, zorder=1,
               solid_capstyle="butt", label=tr("the limit"))
    ax0.loglog(B, [r["B"] / r["memory_s"] for r in sweep], "--", color=COLORS["K"], zorder=3, label=tr("memory roof"))
    if state.get("peak_flops"):
        ax0.loglog(B, [r["B"] / r["compute_s"] for r in sweep], ":", color=COLORS["recompute"], lw=2, zorder=3,
                   label=tr("compute roof"))
        if state.get("ridge") is not None:
            ax0.axvline(state["ridge"], color="k", ls="-.", lw=0.8, label=tr("ridge batch B = {B}", B=state["ridge"]))
    ax0.plot([state["B"]], [state["max_tokens_per_s"]], "o", ms=11, mfc="none", mec="k", zorder=4,
             label=f"B = {state['B']}")
    _plain_log_y(ax0)
    ax0.set_ylabel(tr("most tokens/s (all rows)"))
    ax0.set_title(tr("Throughput limit = B / max(bytes / bandwidth, FLOPs / peak)"), fontsize=10)
    ax0.legend(fontsize=LEGEND_SIZE, loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=3, frameon=False)
    weights = np.asarray([r["weights"] for r in sweep]) / 1e9
    kv = np.asarray([r["kv_read"] + r["kv_write"] for r in sweep]) / 1e9
    x = np.arange(len(B))
    ax1.bar(x, weights, color=COLORS["mask"], label=tr("weights (read once per step)"))
    ax1.bar(x, kv, bottom=weights, color=COLORS["K"], label=tr("K/V cache (read once per row)"))
    ax1.set_xticks(x, [str(b) for b in B])
    ax1.set_ylabel(tr("bytes read per decode step (GB)"))
    ax1.set_title(tr("What one step reads"), fontsize=10)
    ax1.legend(fontsize=LEGEND_SIZE, loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2, frameon=False)
    for ax in (ax0, ax1):
        ax.set_xlabel(tr("batch size B"))
        ax.grid(True, alpha=0.3, which="both")
    if B.size:
        ax0.set_xticks(B, [str(b) for b in B])
        ax0.minorticks_off()
    peak = tr(", {peak} TFLOP/s", peak=plain_number(state["peak_flops"] / 1e12)) if state.get("peak_flops") else ""
    fig.suptitle(title or tr("{model}, {dtype}, T = {T:,} per row, {bandwidth} GB/s{peak}",
                             model=model_label(state["model"]), dtype=state["dtype"], T=state["T"],
                             bandwidth=plain_number(state["bandwidth_GBps"]), peak=peak), fontsize=11)
    fig.subplots_adjust(left=0.08, right=0.98, top=1 - 0.58 / H, bottom=1.1 / H, wspace=0.25)
    return fig
