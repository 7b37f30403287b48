"""Figures of notebook 06 (performance metrics): TTFT/TPOT, batching, schedules, bandwidth."""
from __future__ import annotations

import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator

from . import COLORS, subplots


def _plain_log_y(ax) -> None:
    """Log y axis labelled 1, 2, 5, 10, 20, ... instead of powers of ten only."""
    ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, pos=None: f"{y:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda y, pos=None: ""))


def _median_band(ax, x, stats, color, label, marker="o"):
    """Median line of ``utils.perf.Stats`` (seconds, drawn in ms) with the quartiles as error bars."""
    med = np.array([s.median for s in stats]) * 1e3
    lo = med - np.array([s.q1 for s in stats]) * 1e3
    hi = np.array([s.q3 for s in stats]) * 1e3 - med
    ax.errorbar(x, med, yerr=[lo, hi], fmt=marker + "-", color=color, label=label, capsize=3, ms=5)


def plot_ttft_tpot(ttft: dict, tpot: dict, title: str = "TTFT and TPOT, with and without the KV cache"):
    """Left: TTFT vs prompt length. Right: TPOT vs context length. Inputs are what
    ``utils.perf.ttft_vs_prompt_length`` and ``utils.perf.tpot_vs_context`` return (log-log axes,
    median with quartile bars)."""
    fig, (ax0, ax1) = subplots(1, 2, figsize=(12, 3.9))
    for ax, res, xlabel, ylabel, sub in (
        (ax0, ttft, "prompt length T (tokens)", "TTFT (ms)", "TTFT: the first token needs the whole prompt"),
        (ax1, tpot, "context length T (tokens already there)", "TPOT: time of one decode step (ms)",
         "TPOT: the cache makes each step small"),
    ):
        T = np.asarray(res["T"])
        _median_band(ax, T, res["cached"], COLORS["cached"], "with KV cache")
        if res.get("no_cache") is not None:
            _median_band(ax, T, res["no_cache"], COLORS["recompute"], "without cache (recompute everything)", "s")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        _plain_log_y(ax)
        ax.set_xticks(T, [str(t) for t in T])
        ax.minorticks_off()
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(sub, fontsize=10)
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=11)
    fig.subplots_adjust(left=0.07, right=0.98, top=0.84, bottom=0.15, wspace=0.25)
    return fig


def plot_batch_sweep(sweep: dict, title: str = "Batching: more tokens per second, slower for each request"):
    """``utils.perf.batch_sweep``'s result. Left: throughput (tokens/s, all rows) vs B. Right: what one
    request feels: TTFT, TPOT and end-to-end latency (ms) vs B."""
    B = np.asarray(sweep["B"])
    fig, (ax0, ax1) = subplots(1, 2, figsize=(12, 3.9))
    ax0.plot(B, sweep["throughput"], "o-", color=COLORS["cached"], label="end to end: B x n / latency")
    ax0.plot(B, sweep["decode_throughput"], "s--", color=COLORS["decode"], label="while decoding: B / TPOT")
    ax0.set_ylabel("throughput (new tokens/s, all rows)")
    ax0.set_title("The server's view: throughput", fontsize=10)
    ax1.plot(B, np.asarray(sweep["latency_s"]) * 1e3, "o-", color="k", label="latency (end to end)")
    ax1.plot(B, np.asarray(sweep["ttft_s"]) * 1e3, "s-", color=COLORS["prefill"], label="TTFT")
    ax1.plot(B, np.asarray(sweep["tpot_s"]) * 1e3, "^-", color=COLORS["decode"], label="TPOT")
    ax1.set_yscale("log")
    _plain_log_y(ax1)
    ax1.set_ylabel("time (ms, log scale)")
    ax1.set_title("One request's view: latency", fontsize=10)
    for ax in (ax0, ax1):
        ax.set_xscale("log", base=2)
        ax.set_xticks(B, [str(b) for b in B])
        ax.minorticks_off()
        ax.set_xlabel("batch size B (requests decoded together)")
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize=8)
    ax0.set_ylim(bottom=0)
    fig.suptitle(title, fontsize=11)
    fig.subplots_adjust(left=0.07, right=0.98, top=0.84, bottom=0.15, wspace=0.25)
    return fig


def plot_schedules(schedules: dict, title: str = "Same requests, two schedules"):
    """Each schedule (``name -> utils.perf.serve`` result) as a timeline, one row per request: a tick where it
    arrives, then waiting (until its group starts), prefill + first token (the rest of its TTFT), decode.
    A result without ``arrival_s``/``wait_s``/``done_s`` is drawn as all arriving at 0 and ending together. Each
    title gives the median TTFT (``np.median``: the mean of the two middle values for an even count) and tokens/s
    over the run and, with ``busy_s``, while the server computes."""
    names = list(schedules)
    fig, axes = subplots(len(names), 1, figsize=(11, 1.1 + 2.1 * len(names)), sharex=True, squeeze=False)
    for ax, name in zip(axes[:, 0], names):
        s = schedules[name]
        ttft = np.asarray(s["ttft_s"]) * 1e3  # ms, from each request's arrival
        rows = np.arange(len(ttft))
        arrival = np.asarray(s.get("arrival_s", np.zeros(len(ttft)))) * 1e3
        wait = np.asarray(s.get("wait_s", np.zeros(len(ttft)))) * 1e3
        done = np.asarray(s.get("done_s", np.full(len(ttft), s["makespan_s"]))) * 1e3
        ax.barh(rows, wait, left=arrival, height=0.6, color=COLORS["mask"], alpha=0.45, label="waiting")
        ax.barh(rows, ttft - wait, left=arrival + wait, height=0.6, color=COLORS["prefill"],
                label="prefill + first token")
        ax.barh(rows, done - arrival - ttft, left=arrival + ttft, height=0.6, color=COLORS["decode"], label="decode")
        ax.plot(arrival, rows, "|", color="k", ms=14, mew=1.5, label="arrives")
        ax.set_yticks(rows, [str(r) for r in rows])
        ax.set_ylim(len(rows) - 0.5, -0.5)  # request 0 on top
        ax.set_ylabel("request")
        busy = f", {s['throughput'] * s['makespan_s'] / s['busy_s']:.0f} while computing" if "busy_s" in s else ""
        ax.set_title(f"{name}: median TTFT {np.median(ttft):.0f} ms | tokens/s: {s['throughput']:.0f} over the run"
                     f"{busy}", fontsize=10, loc="left")
        ax.grid(True, axis="x", alpha=0.3)
    axes[-1][0].set_xlabel("time (ms)")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=4, fontsize=8)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def plot_bandwidth(res: dict, title: str = "Batch-1 decode against the memory bandwidth"):
    """``utils.perf.decode_vs_bandwidth``'s result: measured copy and read bandwidth next to the
    bandwidth the decode step achieves (bytes it must read / its time), GB/s, median with quartiles."""
    names = ["copy\n(read + write)", "reduce\n(read only)", "decode step\n(bytes / time)"]
    stats = [res["copy_Bps"], res["read_Bps"], res["achieved_Bps"]]
    med = np.array([s.median for s in stats]) / 1e9
    err = [med - np.array([s.q1 for s in stats]) / 1e9, np.array([s.q3 for s in stats]) / 1e9 - med]
    fig, ax = subplots(figsize=(7, 3.6))
    ax.bar(names, med, yerr=err, capsize=4, color=[COLORS["mask"], COLORS["mask"], COLORS["decode"]])
    ax.axhline(res["limit_Bps"] / 1e9, color="k", ls="--", lw=1, label="measured limit")
    ax.text(2, med[2] + err[1][2], f"{res['fraction']:.0%} of the limit", ha="center", va="bottom", fontsize=9)
    ax.set_ylabel("memory bandwidth (GB/s)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="lower left")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def plot_decode_bound(state: dict, title: str | None = None):
    """``DecodeBoundPanel``'s state: the bandwidth limit on decode against batch size B.
    Left: the most tokens/s memory allows (log-log), the chosen B marked. Right: the bytes one
    step reads, split into weights (the same for any B) and K/V cache (grows with B)."""
    sweep = state["sweep"]
    B = np.asarray([r["B"] for r in sweep])
    fig, (ax0, ax1) = subplots(1, 2, figsize=(11, 3.6))
    ax0.loglog(B, [r["max_tokens_per_s"] for r in sweep], "o-", color=COLORS["cached"])
    ax0.plot([state["B"]], [state["max_tokens_per_s"]], "o", ms=11, mfc="none", mec="k", label=f"B = {state['B']}")
    _plain_log_y(ax0)
    ax0.set_ylabel("most tokens/s the bandwidth allows")
    ax0.set_title("Throughput limit = B / (bytes per step / bandwidth)", fontsize=10)
    ax0.legend(fontsize=8)
    weights = np.asarray([r["weights"] for r in sweep]) / 1e9
    kv = np.asarray([r["kv_read"] + r["kv_write"] for r in sweep]) / 1e9
    x = np.arange(len(B))
    ax1.bar(x, weights, color=COLORS["mask"], label="weights (read once per step)")
    ax1.bar(x, kv, bottom=weights, color=COLORS["K"], label="K/V cache (read once per row)")
    ax1.set_xticks(x, [str(b) for b in B])
    ax1.set_ylabel("bytes read per decode step (GB)")
    ax1.set_title("What one step reads", fontsize=10)
    ax1.legend(fontsize=8)
    for ax in (ax0, ax1):
        ax.set_xlabel("batch size B")
        ax.grid(True, alpha=0.3, which="both")
    if B.size:
        ax0.set_xticks(B, [str(b) for b in B])
        ax0.minorticks_off()
    fig.suptitle(title or f"{state['model']}, {state['dtype']}, T = {state['T']:,} per row, "
                          f"{state['bandwidth_GBps']:,.3g} GB/s", fontsize=11)
    fig.subplots_adjust(left=0.08, right=0.98, top=0.84, bottom=0.15, wspace=0.25)
    return fig
