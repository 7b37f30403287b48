"""Figures of notebook 04 (cache sizing): KV bytes vs context, per-token bars, the memory budget."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import LogLocator

from ..i18n import tr
from .base import COLORS, LEGEND_SIZE, SMALL_SIZE, format_bytes, new_figure

_KIND_COLORS = {"MHA": COLORS["recompute"], "GQA": COLORS["prefill"], "MQA": COLORS["cached"]}


@plt.FuncFormatter
def _token_formatter(x, pos=None) -> str:
    """Axis ticks in tokens: 4096 -> '4k', 131072 -> '128k'."""
    return f"{x / 1024:g}k" if x >= 1024 else f"{x:g}"


def kib_text(kib: float) -> str:
    """KiB as a table or a bar shows them: whole numbers plain, others with one decimal (22 vs 22.5)."""
    return f"{kib:,.0f}" if float(kib).is_integer() else f"{kib:,.1f}"


def byte_unit(n: float) -> tuple[str, int]:
    """The binary unit that suits ``n`` bytes for an axis: ``('GiB', 2**30)`` and so on."""
    for name, scale in (("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= scale:
            return name, scale
    return "bytes", 1


def _spread(ys: list[float], gap: float) -> list[float]:
    """``ys`` moved apart as little as needed so that neighbours are ``gap`` apart (order kept)."""
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    out = list(ys)
    for a, b in zip(order, order[1:]):
        out[b] = max(out[b], out[a] + gap)
    shift = sum(out[i] - ys[i] for i in order) / len(ys)  # centre the block on the lines again
    return [y - shift for y in out]


def _plot_models_log(ax, per_token: dict[str, int], T_max: int, limits: dict[str, int],
                     gpu_gib: tuple[int, ...], T_min: int = 1024) -> None:
    """Log-log lines, each from T_min to its model's max context (a dot there), named at their left end."""
    gib = 2**30
    ends, starts = {}, {}
    # Short lines on top of long ones, each a little thinner: two models with almost the same bytes per
    # token (Gemma-2-9B, Llama-3.1-70B) then show as a line inside a line. No red or blue: the bars beside
    # this panel use them for MHA and GQA.
    colors = ["#9467bd", "#8c564b", "#2ca02c", "#ff7f0e", "#17becf", "#e377c2", "#7f7f7f", "#bcbd22"]
    drawn: list[str] = []
    for i, label in enumerate(sorted(per_token, key=lambda m: -limits.get(m, T_max))):
        end = min(limits.get(label, T_max), T_max)
        T = np.array([T_min, end], dtype=float)
        # within 15 % of a longer line (Gemma-2-9B on Llama-3.1-70B): dashed, on top, so both show
        hidden = any(abs(per_token[label] / per_token[m] - 1) < 0.15 for m in drawn)
        drawn.append(label)
        (line,) = ax.plot(T, T * per_token[label] / gib, linewidth=max(3.6 - 0.4 * i, 1.2), label=label,
                          color=colors[i % len(colors)], solid_capstyle="butt",
                          linestyle=(0, (3, 1.5)) if hidden else "-", zorder=3 if hidden else 2)
        ax.plot([end], [end * per_token[label] / gib], "o", color=line.get_color(), markersize=4.5)
        ends[label], starts[label] = line.get_color(), T_min * per_token[label] / gib
    low = min(starts.values()) / 1.8
    high = max(max(min(limits.get(m, T_max), T_max) * b for m, b in per_token.items()) / gib, max(gpu_gib)) * 1.6
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(T_min / 14, T_max * 1.25)  # room on the left for the names
    ax.set_ylim(low, high)
    ax.set_xticks([T_min * 2**i for i in range(int(np.log2(T_max / T_min)) + 1)])
    ax.xaxis.set_major_formatter(_token_formatter)
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda y, pos=None: f"{y:g}"))
    height_in = ax.get_position().height * ax.figure.get_figheight()
    gap = 1.25 * SMALL_SIZE / 72 / height_in * np.log10(high / low)  # one line of text, in decades
    names = list(starts)
    ys = _spread([np.log10(starts[m]) for m in names], gap)
    for m, y in zip(names, ys):
        ax.text(T_min / 1.15, 10**y, m, ha="right", va="center", fontsize=SMALL_SIZE, color=ends[m])
    for g in gpu_gib:
        ax.axhline(g, color=COLORS["mask"], linestyle=":", linewidth=1)
        # a whole card: the weights (and a reserve) take their share first, so a cache below the line may not fit
        ax.text(T_min / 12, g, tr("{g} GiB: a whole GPU, weights not counted", g=g), va="bottom", ha="left",
                fontsize=SMALL_SIZE, color=COLORS["mask"])
    ax.set_xlabel(tr("context length T (tokens, log scale)\neach line ends at its model's max context (dot)"))
    ax.set_ylabel(tr("KV cache memory ({unit}, log scale)", unit="GiB"))


def plot_kv_vs_context(ax, per_token: dict[str, int], T_max: int, mark: tuple[int, int] | None = None,
                       highlight: str | None = None, max_context: int | None = None,
                       limits: dict[str, int] | None = None, gpu_gib: tuple[int, ...] = (24, 80),
                       title: str | None = None, log: bool = False):
    """Lines ``bytes = per_token[label] * T`` for T in [0, T_max] (the cache grows linearly in T).

    ``highlight`` is drawn bold, the other lines thin; ``mark`` = ``(T, bytes)`` puts a dot on
    the current setting; ``max_context`` draws one model's limit as a vertical line, ``limits``
    (label -> max context) turns each line dotted past its own model's limit; GPU sizes are
    drawn as horizontal lines when they fall inside the plotted range.

    ``log=True`` compares models (``limits`` needed): both axes logarithmic from T = 1k, so short
    contexts show as well as long ones; each line stops at its model's max context (a dot) and is
    named at its left end instead of in a legend (``mark``, ``highlight``, ``max_context`` unused).
    """
    if log:
        _plot_models_log(ax, per_token, T_max, limits or {}, gpu_gib)
        ax.set_title(tr("KV cache memory vs context length T") if title is None else title)
        return
    KVLines(ax, list(per_token), gpu_gib).update(per_token, T_max, mark=mark, highlight=highlight,
                                                  max_context=max_context, limits=limits, title=title)


class KVLines:
    """The lines of ``plot_kv_vs_context`` (linear axes), made once on ``ax`` and moved by ``update``.

    A panel redraws the same axes at every slider step: changing the artists in place keeps the axes'
    ticks, which matplotlib would otherwise build afresh for each new figure (most of a redraw's time).
    """

    def __init__(self, ax, labels: list[str], gpu_gib: tuple[int, ...] = (24, 80)) -> None:
        self.ax, self.gpu_gib = ax, gpu_gib
        self.lines = {label: ax.plot([], [], label=label)[0] for label in labels}
        self.beyond = {label: ax.plot([], [], color=line.get_color(), linewidth=1.0, linestyle=":", alpha=0.8)[0]
                       for label, line in self.lines.items()}  # the formula goes on, the model does not
        # a whole card, weights not counted; under the line, at the right: two short lines clear the steep float32 line
        self.gpu = [(ax.axhline(0, color=COLORS["mask"], linestyle=":", linewidth=1),
                     ax.text(0, 0, tr("{g} GiB: a whole GPU,\nweights not counted", g=g), va="top", ha="right",
                             fontsize=SMALL_SIZE, color=COLORS["mask"]))
                    for g in gpu_gib]
        self.limit = ax.axvline(0, color=COLORS["decode"], linestyle=":", linewidth=1.2)
        self.limit_text = ax.text(0, 0, "", va="center", ha="left", fontsize=SMALL_SIZE, color=COLORS["decode"])
        (self.dot,) = ax.plot([], [], "o", color="black", zorder=5, clip_on=False)  # whole, even at T = 128k
        self.dot_text = ax.annotate("", (0, 0), textcoords="offset points", xytext=(6, -4), va="top", fontsize=9,
                                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
                                    arrowprops={"arrowstyle": "-", "color": "black", "linewidth": 0.6,
                                                "shrinkA": 0, "shrinkB": 3},
                                    zorder=6)
        ax.xaxis.set_major_formatter(_token_formatter)

    def update(self, per_token: dict[str, int], T_max: int, mark: tuple[int, int] | None = None,
               highlight: str | None = None, max_context: int | None = None, limits: dict[str, int] | None = None,
               title: str | None = None) -> None:
        ax, limits = self.ax, limits or {}
        top = max(per_token.values()) * T_max
        unit, scale = byte_unit(max(top, 1))
        for label, b in per_token.items():
            bold = highlight is None or label == highlight
            end = min(limits.get(label, T_max), T_max)
            line = self.lines[label]
            line.set_data([0, end], [0, end * b / scale])
            line.set(linewidth=2.4 if bold else 1.0, alpha=1.0 if bold else 0.55, linestyle="-" if bold else "--")
            self.beyond[label].set_data([end, T_max], [end * b / scale, T_max * b / scale])
            self.beyond[label].set_visible(end < T_max)
        for (line, text), gib in zip(self.gpu, self.gpu_gib):
            shown = 0.05 * top <= gib * 2**30 <= 1.2 * top  # only a GPU size inside the plotted range
            line.set_ydata([gib * 2**30 / scale] * 2)
            text.set_position((T_max * 0.99, gib * 2**30 / scale))
            line.set_visible(shown), text.set_visible(shown)
        shown = max_context is not None and max_context <= T_max
        self.limit.set_visible(shown), self.limit_text.set_visible(shown)
        if shown:  # near the right edge (128k) the text goes left of its line, between the top two lines
            near, text = max_context > 0.8 * T_max, tr(" model's max context\n {n:,} tokens", n=max_context)
            self.limit.set_xdata([max_context] * 2)
            self.limit_text.set(position=(max_context, top / scale * (0.66 if near else 0.5)),
                                text="\n".join(f"{line.strip()} " for line in text.split("\n")) if near else text,
                                ha="right" if near else "left", multialignment="right" if near else "left")
        self.dot.set_visible(mark is not None), self.dot_text.set_visible(mark is not None)
        if mark is not None:
            self.dot.set_data([mark[0]], [mark[1] / scale])
            # below the dot, clear of the steeper lines above it, unless that is under the axis (then above, on a
            # white box over the lines); right-aligned near the right edge, so it never runs off the figure
            near_edge, low = mark[0] > 0.75 * T_max, mark[1] < 0.12 * top
            self.dot_text.xy = (mark[0], mark[1] / scale)
            # low: well above the lines that fan out from the origin (just above the dot, the float32 line crossed
            # the number), tied to its dot by a thin leader
            # at the right edge, left of the dot and a little above it, over its line (which falls to the left):
            # just below the dot, the label's box sat on the dot and on the line
            self.dot_text.xyann = (((-10, 3) if near_edge else (6, -4)) if not low else
                                   (-30 if near_edge else 30, 40))
            self.dot_text.arrow_patch.set_visible(low)
            self.dot_text.set_horizontalalignment("right" if near_edge else "left")
            self.dot_text.set_verticalalignment("bottom" if low else "center" if near_edge else "top")
            self.dot_text.set_text(format_bytes(mark[1]))
        ax.set_xlim(0, T_max)
        ax.set_ylim(0, top / scale * 1.05)
        # five ticks, at quarters of T_max: every tick label is redrawn at each slider step
        ax.xaxis.set_major_locator(plt.MultipleLocator(2 ** max(int(np.log2(max(T_max, 4) / 4)), 0)))
        ax.set_xlabel(tr("tokens per sequence T") + (tr("; dotted: past the model's max context") if limits else ""))
        ax.set_ylabel(tr("KV cache memory ({unit})", unit=unit))
        # a fixed title height: placing it automatically measures every tick label once more
        ax.set_title(tr("KV cache memory vs context length T") if title is None else title, y=1.0)
        ax.legend(fontsize=LEGEND_SIZE, loc="upper left")


def plot_per_token_bars(ax, names: list[str], per_token_bytes: list[int], kinds: list[str],
                        title: str | None = None):
    """Horizontal bars: cache bytes one token adds, per model, coloured by MHA / GQA / MQA."""
    kib = [b / 2**10 for b in per_token_bytes]
    y = np.arange(len(names))
    ax.barh(y, kib, color=[_KIND_COLORS[k] for k in kinds])
    for yi, v in zip(y, kib):
        ax.text(v, yi, f" {kib_text(v)}", va="center", fontsize=SMALL_SIZE)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xlim(0, max(kib) * 1.18)
    ax.set_xlabel(tr("KV cache per token (KiB)"))
    ax.set_title(tr("KV cache per token (fp16, all layers, K and V)") if title is None else title)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for k, c in _KIND_COLORS.items() if k in kinds]
    ax.legend(handles, [k for k in _KIND_COLORS if k in kinds], fontsize=LEGEND_SIZE, loc="lower right")


def plot_budget(state: dict):
    """Two panels for the budget planner: where the GPU memory goes, and requests that fit vs T. With
    ``state["padding"] > 0`` the cache is split into real tokens and padding (hatched), and a dashed curve
    shows how many requests would fit if each held only its real tokens."""
    return BudgetFigure().update(state)


class BudgetFigure:
    """``plot_budget``'s figure, made once and redrawn in place by ``update(state)`` (a panel's slider step:
    the axes keep their ticks, which a new figure would build again, most of a redraw's time)."""

    def __init__(self) -> None:
        self.fig, (ax1, ax2) = new_figure(ncols=2, width=5.6, height=3.5)
        self.ax1, self.ax2 = ax1, ax2
        # the bar's parts: weights, reserve, the cache (its real tokens), its padding, what is unused
        looks = [(COLORS["mask"], None), ("#c7c7c7", None), (COLORS["cached"], None), ("white", "///"),
                 ("#f2f2f2", None)]
        self.parts = [ax1.barh(0, 0, color=c, edgecolor=COLORS["cached"] if h else "black", hatch=h,
                               linewidth=0.5)[0] for c, h in looks]
        ax1.set_yticks([])
        ax1.xaxis.set_major_locator(plt.MaxNLocator(nbins=4, integer=True))  # few labels: each is redrawn per step
        (self.curve,) = ax2.plot([], [], "o-", color=COLORS["cached"], markersize=3)
        (self.real_curve,) = ax2.plot([], [], "--", color=COLORS["decode"])
        (self.real_dot,) = ax2.plot([], [], "o", mfc="white", color=COLORS["decode"], zorder=5)
        # above and right of its dot, where the falling curve is not; the other count goes below and left of its own
        self.real_text = ax2.annotate("", (1, 1), textcoords="offset points", xytext=(6, 7), ha="left", fontsize=9,
                                      color=COLORS["decode"])
        (self.dot,) = ax2.plot([], [], "o", color="black", zorder=5)
        (self.floor,) = ax2.plot([], [], "v", color="black", zorder=5, clip_on=False)  # 0 requests: on the edge
        self.n_text = ax2.annotate("", (1, 1), textcoords="offset points", xytext=(-6, -12), ha="right", fontsize=9)
        self.limit = ax2.axvline(1, color=COLORS["decode"], linestyle=":", linewidth=1.2)
        # x in data, y in axes: at the top right of the line, where the falling curves are low, or at the bottom
        # when the line is in the left half, where they are high
        self.limit_text = ax2.annotate("", (1, 1), xycoords=("data", "axes fraction"), textcoords="offset points",
                                       xytext=(0, 0), fontsize=SMALL_SIZE, color=COLORS["decode"])
        # weights larger than the card: no curve to draw, so the panel says why it is empty
        self.no_fit_text = ax2.text(0.5, 0.55, "", transform=ax2.transAxes, ha="center", va="center", fontsize=10,
                                    color="#b00")
        ax2.set_xscale("log", base=2)
        ax2.xaxis.set_major_locator(LogLocator(base=16))  # 1, 16, 256, 4k, 64k: five labels to draw, not nine
        ax2.xaxis.set_major_formatter(_token_formatter)
        ax2.set_yscale("log")
        ax2.yaxis.set_major_locator(LogLocator(base=10, numticks=12))  # every power of ten, however tall the range
        ax2.yaxis.set_major_formatter(plt.FuncFormatter(lambda y, pos=None: f"{y:,.0f}" if y >= 1 else ""))
        for axis in (ax2.xaxis, ax2.yaxis):  # no minor ticks: each is a tick to lay out at every redraw
            axis.set_minor_locator(plt.NullLocator())
        self.fig.subplots_adjust(left=0.04, right=0.98, bottom=0.36, top=0.91, wspace=0.4)  # fixed: tight_layout is slow

    def update(self, state: dict):
        ax1, ax2, gib = self.ax1, self.ax2, 2**30
        n, padding = state["n_requests"], state.get("padding", 0.0)
        if padding > 0:
            cache = (tr("KV cache: real tokens of 1 request") if n == 1 else
                     tr("KV cache: real tokens of {n:,} requests", n=n), state["real_bytes"])
            pad = (tr("KV cache: padding"), state["padding_bytes"])
        else:
            cache = (tr("KV cache of 1 request") if n == 1 else tr("KV cache of {n:,} requests", n=n),
                     state["cache_used_bytes"])
            pad = (tr("KV cache: padding"), 0)
        sizes = [(tr("weights"), state["weight_bytes"]), (tr("reserve"), state["reserve_bytes"]), cache, pad,
                 (tr("unused"), max(state["unused_bytes"], 0))]
        left, handles, labels = 0.0, [], []
        for i, (bar, (label, b)) in enumerate(zip(self.parts, sizes)):
            w = min(b, max(state["gpu_bytes"] - left, 0)) / gib  # draw what fits on the card
            bar.set_x(left / gib), bar.set_width(w)
            # no legend entry for a part that is not there, nor for an unused sliver too thin to see
            if w > 0 and not (i == len(sizes) - 1 and w * gib < 0.005 * state["gpu_bytes"]):
                handles.append(bar), labels.append(label)
            left += w * gib
        ax1.set_xlim(0, state["gpu_bytes"] / gib)
        ax1.set_xlabel(tr("GPU memory (GiB)"))
        ax1.set_title(tr("Where the memory goes"), y=1.0)  # a fixed height: placing it automatically re-measures
        ax1.legend(handles, labels, fontsize=LEGEND_SIZE, loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=2,
                   frameon=False)

        def positive(counts):  # a log axis has no 0: zero counts (and None, under one real token) are left out
            return [c if c is not None and c > 0 else np.nan for c in counts]

        T, bottom, real_only = state["curve_T"], 0.5, padding > 0 and state.get("curve_n_real_only") is not None
        self.curve.set_data(T, positive(state["curve_n"]))
        self.curve.set_label(tr("each request reserves T positions") if padding > 0 else "_curve")
        self.real_curve.set_visible(real_only)
        shown = real_only and (state["n_if_real_only"] or 0) > 0  # None: under one real token, nothing to count
        self.real_dot.set_visible(shown), self.real_text.set_visible(shown)
        if real_only:
            self.real_curve.set_data(T, positive(state["curve_n_real_only"]))
            self.real_curve.set_label(tr("each holds only its real tokens ({share:.0%} of T)", share=1 - padding))
        if shown:
            at = (state["T"], state["n_if_real_only"])
            self.real_dot.set_data([at[0]], [at[1]])
            self.real_text.xy = at
            # near the right edge, its number would run past the edge: centred above the dot (above and left of it,
            # it touched the dashed curve, which rises to the left)
            near_right = state["T"] * 16 > T[-1]
            self.real_text.xyann = (0, 9) if near_right else (6, 7)
            self.real_text.set_horizontalalignment("center" if near_right else "left")
            self.real_text.set_text(f"{state['n_if_real_only']:,}")
        weights_fit = state.get("weights_fit", True)
        self.no_fit_text.set_visible(not weights_fit)
        self.no_fit_text.set_text("" if weights_fit else tr("the weights do not fit\non this GPU"))
        self.dot.set_visible(n > 0), self.floor.set_visible(n == 0 and weights_fit)
        self.n_text.set_visible(weights_fit)
        (self.dot if n > 0 else self.floor).set_data([state["T"]], [max(n, bottom)])
        self.n_text.xy = (state["T"], max(n, bottom))
        # room above the top point; with the real-only count shown, room for its label too (at 6x it ran past the top)
        top = max(max(state["curve_n"]), *[c for c in state.get("curve_n_real_only") or [] if c is not None], 1) * (
            20 if shown else 6)
        # below and left of its dot (under the falling curve); right of it at the left edge, above a 0 on the bottom
        # and above a dot near the bottom (below it, the number would sit on the tick labels)
        left_edge, right_edge = state["T"] <= 4 * T[0], state["T"] * 16 > T[-1]
        near_bottom = np.log(max(n, bottom) / bottom) < 0.15 * np.log(top / bottom)
        if n > 0 and not near_bottom:
            self.n_text.xyann = (6, -12) if left_edge else (-6, -12)
            self.n_text.set_horizontalalignment("left" if left_edge else "right")
        else:  # a 0 on the bottom edge, or a dot near it: above it, on the side with room
            self.n_text.xyann = (-6, 6) if right_edge else (6, 6)
            self.n_text.set_horizontalalignment("right" if right_edge else "left")
            if shown and state["n_if_real_only"] <= 4 * max(n, bottom):  # the real-only count just above: lift it
                self.real_text.xyann = (self.real_text.xyann[0], 16)
        self.n_text.set_text(f"{n:,}")
        limit = state["max_context"] <= T[-1]
        self.limit.set_visible(limit), self.limit_text.set_visible(limit)
        if limit:
            right_half = state["max_context"] ** 2 > T[0] * T[-1]  # on a log axis: past the middle
            self.limit.set_xdata([state["max_context"]] * 2)
            self.limit_text.xy = (state["max_context"], 0.97 if right_half else 0.03)
            self.limit_text.xyann = (-3 if right_half else 3, 0)
            self.limit_text.set_horizontalalignment("right" if right_half else "left")
            self.limit_text.set_verticalalignment("top" if right_half else "bottom")
            self.limit_text.set_text(tr(" model's\n max context"))
        legend = ax2.get_legend()
        curves = [self.curve] * (max(state["curve_n"]) > 0) + [self.real_curve] * (
            real_only and any(c for c in state["curve_n_real_only"] if c is not None))  # only what shows
        if padding > 0 and curves:  # under the axes, as the left one's: inside, it covered the curves
            ax2.legend(handles=curves, fontsize=LEGEND_SIZE, loc="upper center", bbox_to_anchor=(0.5, -0.25),
                       frameon=False)
        elif legend is not None:
            legend.remove()
        ax2.set_xlim(T[0] / 1.6, T[-1] * 1.6)
        ax2.set_ylim(bottom, top)
        ax2.set_xlabel(tr("tokens per request T (log scale)"))
        ax2.set_ylabel(tr("requests that fit (log scale)"))
        ax2.set_title(tr("Longer requests, fewer of them"), y=1.0)
        return self.fig
