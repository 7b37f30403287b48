"""Figures of notebook 13 (a smaller KV cache): one quantized group, the magnitude of K and V per channel,
which positions each eviction rule keeps, and memory against quality for every measured setting."""
from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..i18n import tr
from .base import COLORS, LEGEND_SIZE, SMALL_SIZE, format_bytes, subplots

# One colour per kind of setting in the trade-off figure (the eviction rules share a square marker).
KIND_STYLE = {8: ("#1f77b4", "o"), 4: ("#ff7f0e", "^"), "recent": ("#2ca02c", "s"), "key_norm": ("#9467bd", "s"),
              "attention": ("#8c564b", "s"), "exact": ("black", "*")}
# The eviction rules in words (the panel's dropdown says the same).
RULE_NAMES = {"none": "none", "recent": "sinks + recent", "key_norm": "key norm", "attention": "attention received"}
KEPT_COLORS = {"sink": "#444444", "window": COLORS["prefill"], "chosen": COLORS["cached"], "evicted": "#eeeeee"}


def plot_quantize_group(x, codes, scale: float, lo: float, bits: int, title: str | None = None):
    """One group of values ``x`` (filled dots) and what comes back, ``lo + code * scale`` (rings), each labelled
    with its code; with ``bits <= 4`` every level the codes can name is a grey line. ``title`` defaults to
    "One group, {bits}-bit asymmetric min-max"."""
    x, codes = np.asarray(x, dtype=float), np.asarray(codes, dtype=int)
    back = lo + codes * scale
    i = np.arange(len(x))
    fig, ax = subplots(figsize=(7.5, 3.4))
    fig.subplots_adjust(left=0.1, right=0.7, top=0.87, bottom=0.15)
    if bits <= 4:
        for level in range(2 ** bits):
            ax.axhline(lo + level * scale, color="#cccccc", lw=0.6, zorder=0)
    ax.vlines(i, np.minimum(x, back), np.maximum(x, back), color=COLORS["recompute"], lw=1.5)
    ax.plot(i, x, "o", color=COLORS["K"], ms=6)
    ax.plot(i, back, "o", mfc="none", mec="black", ms=9)
    for xi, yi, c in zip(i, back, codes):
        ax.annotate(str(c), (xi, yi), textcoords="offset points", xytext=(7, -3), fontsize=SMALL_SIZE)
    handles = [Line2D([], [], marker="o", ls="", color=COLORS["K"], label=tr("value x")),
               Line2D([], [], marker="o", ls="", mfc="none", mec="black", ms=9,
                      label=tr("read back: lo + code × scale\n(the number: its code)")),
               Line2D([], [], color=COLORS["recompute"], label=tr("error (at most scale / 2)"))]
    if bits <= 4:
        handles.append(Line2D([], [], color="#cccccc", label=tr("the {n} levels of {bits} bits", n=2 ** bits, bits=bits)))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=LEGEND_SIZE, frameon=False)
    ax.set_xticks(i)
    ax.set_xlabel(tr("index in the group"))
    ax.set_ylabel(tr("value"))
    ax.set_title(tr("One group, {bits}-bit asymmetric min-max", bits=bits) if title is None else title, y=1.0, pad=4)
    return fig


def plot_channel_magnitudes(k_mean, v_mean, title: str | None = None):
    """Mean |K| (top) and mean |V| (bottom) per channel, one column per layer: ``k_mean``, ``v_mean``
    ``[L, H_kv, d_h]``. The channels of the K/V heads stand side by side (a dotted line between heads); the
    dashed line is each panel's median channel. ``title`` defaults to "Where the large numbers are: K and V
    per channel"."""
    k_mean, v_mean = np.asarray(k_mean, dtype=float), np.asarray(v_mean, dtype=float)
    L, H_kv, d_h = k_mean.shape
    fig, axes = subplots(2, L, figsize=(2.6 * L + 0.6, 4.4), sharey=True, squeeze=False)
    fig.subplots_adjust(left=0.07, right=0.99, top=0.86, bottom=0.12, wspace=0.08, hspace=0.45)
    x = np.arange(H_kv * d_h)
    for row, (name, data, color) in enumerate((("K", k_mean, COLORS["K"]), ("V", v_mean, COLORS["V"]))):
        for layer in range(L):
            ax = axes[row][layer]
            flat = data[layer].reshape(-1)
            ax.bar(x, flat, width=1.0, color=color)
            ax.axhline(np.median(flat), color="black", ls="--", lw=0.8)
            for h in range(1, H_kv):
                ax.axvline(h * d_h - 0.5, color="#888888", ls=":", lw=0.8)
            ax.set_xticks([h * d_h for h in range(H_kv)])
            ax.set_title(tr("{name}, layer {layer}: max / median {r:.1f}", name=name, layer=layer,
                            r=flat.max() / np.median(flat)), fontsize=9, y=1.0, pad=4)
            if layer == 0:
                ax.set_ylabel(tr("mean |{name}|", name=name))
            if row == 1:
                ax.set_xlabel(tr("channel (head × d_h + i)"))
    handles = [Line2D([], [], color="black", ls="--", lw=0.8, label=tr("median channel")),
               Line2D([], [], color="#888888", ls=":", lw=0.8, label=tr("next K/V head"))]
    fig.legend(handles=handles, loc="upper right", fontsize=LEGEND_SIZE, frameon=False, ncol=2)
    fig.suptitle(tr("Where the large numbers are: K and V per channel") if title is None else title, x=0.07,
                 ha="left", fontsize=11)
    return fig


def plot_kept_positions(kept: dict, n_seen: int, sinks: int, window: int, title: str | None = None):
    """Which positions each eviction rule keeps, per layer: ``kept`` rule -> one list of kept positions per
    layer, after ``n_seen`` tokens. Sinks dark grey, the recent window blue, positions the rule chose green,
    evicted ones pale. ``title`` defaults to "What each rule keeps after {n} tokens"."""
    rows = [(rule, layer, set(pos)) for rule, layers in kept.items() for layer, pos in enumerate(layers)]
    height = 1.2 + 0.27 * len(rows)  # inches: title and legend 0.55, the rows, ticks and label 0.65
    fig, ax = subplots(figsize=(2.2 + 0.42 * n_seen, height))
    fig.subplots_adjust(left=1.9 / (2.2 + 0.42 * n_seen), right=0.98, top=1 - 0.55 / height, bottom=0.65 / height)
    grid = np.zeros((len(rows), n_seen, 3))
    for r, (_, _, pos) in enumerate(rows):
        for p in range(n_seen):
            kind = ("sink" if p < sinks else "window" if p >= n_seen - window else "chosen") if p in pos else "evicted"
            grid[r, p] = [int(KEPT_COLORS[kind][k:k + 2], 16) / 255 for k in (1, 3, 5)]
    ax.imshow(grid, aspect="auto", interpolation="nearest")
    ax.set_yticks(range(len(rows)), [tr("{rule}, layer {layer}", rule=tr(RULE_NAMES.get(rule, rule)), layer=layer)
                                     for rule, layer, _ in rows],
                  fontsize=SMALL_SIZE)
    ax.set_xticks(range(n_seen))
    ax.tick_params(axis="x", labelsize=SMALL_SIZE)
    for r in range(1, len(rows)):
        if rows[r][0] != rows[r - 1][0]:
            ax.axhline(r - 0.5, color="black", lw=1.5)
    ax.set_xlabel(tr("position (0 = <BOS>)"))
    handles = [Patch(facecolor=KEPT_COLORS[k], edgecolor="#999999", label=label) for k, label in (
        ("sink", tr("sink: always kept")), ("window", tr("recent window: always kept")),
        ("chosen", tr("kept by the rule")), ("evicted", tr("evicted")))]
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=4, fontsize=LEGEND_SIZE,
              frameon=False)
    fig.suptitle(tr("What each rule keeps after {n} tokens", n=n_seen) if title is None else title, fontsize=10,
                 x=0.02, ha="left")
    return fig


def _style(key: tuple) -> tuple[str, str]:
    return KIND_STYLE[key[1]] if key[0] in ("quant", "evict") else KIND_STYLE["exact"]


def plot_compression_tradeoff(state: dict, title: str | None = None):
    """Left: every measured setting (``CacheCompressionPanel.state["points"]``): bytes held over the exact
    cache's (x) against the chosen quality measure (y), the current setting ringed. Right: the sizing
    formula for a real model, per bits: codes, scales and minimums, exact tail, the current bits dark.
    ``title`` defaults to "Memory against quality"."""
    measure = state["measure"]
    value = {"loss": lambda q: q.loss_cache, "match": lambda q: 100 * q.greedy_match,
             "max_diff": lambda q: q.max_logit_diff}[measure]
    fig, (ax0, ax1) = subplots(1, 2, figsize=(11.5, 4.0))
    # fixed places (a panel redraws this at every step; no layout pass): the scatter, its legend, the bars
    ax0.set_position([0.075, 0.13, 0.425, 0.72])
    ax1.set_position([0.765, 0.36, 0.22, 0.49])  # its legend goes under it, clear of the bars' labels
    log = measure == "max_diff"  # 8-bit, 4-bit and eviction differ by orders of magnitude: a log axis
    if log:  # the exact cache's 0 (and any other) is drawn on the axis floor, a decade below the smallest change
        floor = min((value(q) for _, _, q in state["points"] if value(q) > 0), default=1.0) / 10
        value = (lambda v: lambda q: max(v(q), floor))(value)
    kinds: dict = {}  # one line of markers per kind of setting (one artist each: fewer to draw)
    for key, ratio, q in state["points"]:
        kinds.setdefault(_style(key), []).append((ratio, value(q)))
    for (color, marker), xy in kinds.items():
        ax0.plot(*zip(*xy), marker, color=color, ms=9 if marker == "*" else 6, alpha=0.85, ls="")
    if state["quality"] is not None:
        ax0.plot(state["ratio"], value(state["quality"]), "o", ms=16, mfc="none", mec="black", mew=1.8)
    if measure == "loss":
        ax0.axhline(state["loss_exact"], color="black", ls="--", lw=0.8)
    if log:
        ax0.set_yscale("log")
        ax0.set_ylim(floor / 1.5, None)
    ax0.set_xlim(0, 1.08)
    ax0.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    ax0.set_xlabel(tr("cache bytes / exact cache bytes"))
    ax0.set_ylabel({"loss": tr("held-out loss (nats/token)"), "match": tr("greedy match with the exact cache (%)"),
                    "max_diff": tr("max |Δlogits| (logit units, log scale)")}[measure])
    ax0.grid(True, alpha=0.3)
    handles = [Line2D([], [], marker=m, color=c, ls="", label=label) for (c, m), label in (
        (KIND_STYLE[8], tr("8-bit (any grouping, residual)")), (KIND_STYLE[4], tr("4-bit (any grouping, residual)")),
        (KIND_STYLE["recent"], tr("evict: sinks + recent")), (KIND_STYLE["key_norm"], tr("evict: key norm")),
        (KIND_STYLE["attention"], tr("evict: attention received")),
        (KIND_STYLE["exact"], tr("exact cache (0: on the floor)") if log else tr("exact cache")))]
    handles.append(Line2D([], [], marker="o", ms=10, mfc="none", mec="black", ls="", label=tr("the setting chosen")))
    if measure == "loss":
        handles.append(Line2D([], [], color="black", ls="--", lw=0.8, label=tr("exact cache's loss")))
    ax0.legend(handles=handles, fontsize=LEGEND_SIZE, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax0.set_title(tr("Course model, {n} held-out documents (measured)", n=state["n_docs"]), fontsize=10, y=1.0, pad=4)
    sizing = state["sizing"]
    bits = list(sizing)
    y = np.arange(len(bits))[::-1]
    left = np.zeros(len(bits))
    gib = 2 ** 30
    parts = (("codes", COLORS["prefill"], tr("codes")), ("scales", COLORS["recompute"], tr("scales and minimums")),
             ("tail", COLORS["cached"], tr("float16 (exact) positions")))
    for part, color, _ in parts:
        widths = np.array([sizing[b][part] / gib for b in bits])
        ax1.barh(y, widths, left=left, color=color, height=0.6)
        for patch, b in zip(ax1.patches[-len(bits):], bits):
            patch.set_alpha(1.0 if b == state["sizing_bits"] else 0.3)  # the chosen bits dark
        left += widths
    for yi, b in zip(y, bits):
        ax1.text(sizing[b]["total"] / gib, yi, " " + format_bytes(sizing[b]["total"]), va="center", fontsize=SMALL_SIZE)
    ax1.set_yticks(y, [tr("16 (off)") if b == 16 else tr("{b}-bit", b=b) for b in bits], fontsize=9)
    ax1.set_xlim(0, sizing[16]["total"] / gib * 1.6)  # room for the labels and the legend
    ax1.set_xlabel(tr("K/V cache (GiB)"))
    ax1.legend(handles=[Patch(facecolor=c, label=label) for _, c, label in parts], fontsize=LEGEND_SIZE,
               loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
    ax1.set_title(tr("{model}, {T} tokens (formula)\ngroups of {g}, residual {r}", model=state["sizing_model"],
                     T=state["sizing_T"], g=state["sizing_group"], r=state["sizing_residual"]), fontsize=9, y=1.0, pad=4)
    fig.suptitle(tr("Memory against quality") if title is None else title, fontsize=11)
    return fig
