"""Figures of notebook 04 (cache sizing): KV bytes vs context, per-token bars, the memory budget."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..i18n import tr
from .base import COLORS, LEGEND_SIZE, SMALL_SIZE, format_bytes, new_figure


_KIND_COLORS = {"MHA": COLORS["recompute"], "GQA": COLORS["prefill"], "MQA": COLORS["cached"]}


@plt.FuncFormatter
def _token_formatter(x, pos=None) -> str:
    """Axis ticks in tokens: 4096 -> '4k', 131072 -> '128k'."""
    return f"{x / 1024:g}k" if x >= 1024 else f"{x:g}"


def byte_unit(n: float) -> tuple[str, int]:
    """The binary unit that suits ``n`` bytes for an axis: ``('GiB', 2**30)`` and so on."""
    for name, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= scale:
            return name, scale
    return "bytes", 1


def plot_kv_vs_context(ax, per_token: dict[str, int], T_max: int, mark: tuple[int, int] | None = None,
                       highlight: str | None = None, max_context: int | None = None,
                       limits: dict[str, int] | None = None, gpu_gib: tuple[int, ...] = (24, 80),
                       title: str | None = None):
    """Lines ``bytes = per_token[label] * T`` for T in [0, T_max] (the cache grows linearly in T).

    ``highlight`` is drawn bold, the other lines thin; ``mark`` = ``(T, bytes)`` puts a dot on
    the current setting; ``max_context`` draws one model's limit as a vertical line, ``limits``
    (label -> max context) turns each line dotted past its own model's limit; GPU sizes are
    drawn as horizontal lines when they fall inside the plotted range.
    """
    top = max(per_token.values()) * T_max
    unit, scale = byte_unit(max(top, 1))
    limits = limits or {}
    for label, b in per_token.items():
        bold = highlight is None or label == highlight
        end = min(limits.get(label, T_max), T_max)
        T = np.array([0, end], dtype=float)
        (line,) = ax.plot(T, T * b / scale, linewidth=2.4 if bold else 1.0, alpha=1.0 if bold else 0.55,
                          linestyle="-" if bold else "--", label=label)
        if end < T_max:  # the formula goes on, the model does not
            T = np.array([end, T_max], dtype=float)
            ax.plot(T, T * b / scale, color=line.get_color(), linewidth=1.0, linestyle=":", alpha=0.8)
    for gib in gpu_gib:
        if 0.05 * top <= gib * 2**30 <= 1.2 * top:
            ax.axhline(gib * 2**30 / scale, color=COLORS["mask"], linestyle=":", linewidth=1)
            ax.text(T_max * 0.99, gib * 2**30 / scale, f"{gib} GiB GPU", va="bottom", ha="right", fontsize=SMALL_SIZE,
                    color=COLORS["mask"])
    if max_context is not None and max_context <= T_max:
        ax.axvline(max_context, color=COLORS["decode"], linestyle=":", linewidth=1.2)
        ax.text(max_context, top / scale * 0.5, tr(" model's max context\n {n:,} tokens", n=max_context),
                va="center", ha="left", fontsize=SMALL_SIZE, color=COLORS["decode"])
    if mark is not None:
        ax.plot([mark[0]], [mark[1] / scale], "o", color="black", zorder=5)
        ax.annotate(format_bytes(mark[1]), (mark[0], mark[1] / scale), textcoords="offset points",
                    xytext=(6, 6), fontsize=9)
    ax.set_xlim(0, T_max)
    ax.set_ylim(0, top / scale * 1.05)
    ax.xaxis.set_major_locator(plt.MultipleLocator(2 ** max(int(np.log2(max(T_max, 8) / 8)), 0)))
    ax.xaxis.set_major_formatter(_token_formatter)
    ax.set_xlabel(tr("context length T (tokens)") + (tr("; dotted: past the model's max context") if limits else ""))
    ax.set_ylabel(tr("KV cache memory ({unit})", unit=unit))
    ax.set_title(tr("KV cache memory vs context length T") if title is None else title)
    ax.legend(fontsize=LEGEND_SIZE, loc="upper left")


def plot_per_token_bars(ax, names: list[str], per_token_bytes: list[int], kinds: list[str],
                        title: str | None = None):
    """Horizontal bars: cache bytes one token adds, per model, coloured by MHA / GQA / MQA."""
    kib = [b / 2**10 for b in per_token_bytes]
    y = np.arange(len(names))
    ax.barh(y, kib, color=[_KIND_COLORS[k] for k in kinds])
    for yi, v in zip(y, kib):
        ax.text(v, yi, f" {v:,.0f}", va="center", fontsize=SMALL_SIZE)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xlim(0, max(kib) * 1.18)
    ax.set_xlabel(tr("KV cache per token (KiB)"))
    ax.set_title(tr("KV cache per token (fp16, all layers, K and V)") if title is None else title)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for k, c in _KIND_COLORS.items() if k in kinds]
    ax.legend(handles, [k for k in _KIND_COLORS if k in kinds], fontsize=LEGEND_SIZE, loc="lower right")


def plot_budget(state: dict):
    """Two panels for the budget planner: where the GPU memory goes, and requests that fit vs T.

    With ``state["padding"] > 0`` the cache is split into real tokens and padding (hatched), and a
    dashed curve shows how many requests would fit if each held only its real tokens.
    """
    fig, (ax1, ax2) = new_figure(ncols=2, width=5.6, height=3.5)
    gib = 2**30
    n = state["n_requests"]
    padding = state.get("padding", 0.0)
    if padding > 0:
        cache_parts = [((tr("KV cache: real tokens of 1 request") if n == 1 else tr("KV cache: real tokens of {n:,} requests", n=n)), state["real_bytes"], COLORS["cached"],
                        None), (tr("KV cache: padding"), state["padding_bytes"], "white", "///")]
    else:
        cache_parts = [((tr("KV cache of 1 request") if n == 1 else tr("KV cache of {n:,} requests", n=n)), state["cache_used_bytes"], COLORS["cached"], None)]
    parts = [(tr("weights"), state["weight_bytes"], COLORS["mask"], None),
             (tr("reserve"), state["reserve_bytes"], "#c7c7c7", None), *cache_parts,
             (tr("unused"), max(state["unused_bytes"], 0), "#f2f2f2", None)]
    left = 0.0
    for label, b, color, hatch in parts:
        w = min(b, max(state["gpu_bytes"] - left, 0)) / gib  # draw what fits on the card
        ax1.barh(0, w, left=left / gib, color=color, edgecolor=COLORS["cached"] if hatch else "black",
                 hatch=hatch, linewidth=0.5, label=label)
        left += w * gib
    ax1.set_xlim(0, state["gpu_bytes"] / gib)
    ax1.set_yticks([])
    ax1.set_xlabel(tr("GPU memory (GiB)"))
    ax1.set_title(tr("Where the memory goes"))
    ax1.legend(fontsize=LEGEND_SIZE, loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=2, frameon=False)
    T, n_curve = state["curve_T"], state["curve_n"]
    ax2.plot(T, n_curve, "o-", color=COLORS["cached"], markersize=3,
             label=tr("each request reserves T positions") if padding > 0 else None)
    if padding > 0 and state.get("curve_n_real_only") is not None:
        ax2.plot(T, state["curve_n_real_only"], "--", color=COLORS["decode"],
                 label=tr("each holds only its real tokens ({share:.0%} of T)", share=1 - padding))
        ax2.plot([state["T"]], [state["n_if_real_only"]], "o", mfc="white", color=COLORS["decode"], zorder=5)
        ax2.annotate(f"{state['n_if_real_only']:,}", (state["T"], state["n_if_real_only"]), textcoords="offset points",
                     xytext=(-8, 6), ha="right", fontsize=9, color=COLORS["decode"])
        # under the axes, as the left one's: inside, it covered the curves
        ax2.legend(fontsize=LEGEND_SIZE, loc="upper center", bbox_to_anchor=(0.5, -0.25), frameon=False)
    ax2.plot([state["T"]], [n], "o", color="black", zorder=5)
    ax2.annotate(f"{n:,}", (state["T"], n), textcoords="offset points", xytext=(6, 6), fontsize=9)
    if state["max_context"] <= T[-1]:
        ax2.axvline(state["max_context"], color=COLORS["decode"], linestyle=":", linewidth=1.2)
        ax2.text(state["max_context"], 1, tr(" model's\n max context"), fontsize=SMALL_SIZE, color=COLORS["decode"])
    ax2.set_xscale("log", base=2)
    ax2.xaxis.set_major_formatter(_token_formatter)
    ax2.set_yscale("symlog", linthresh=1)
    ax2.yaxis.set_major_formatter(plt.FuncFormatter(lambda y, pos=None: f"{y:,.0f}"))
    ax2.set_ylim(0, None)
    ax2.set_xlabel(tr("tokens per request T (log scale)"))
    ax2.set_ylabel(tr("concurrent requests that fit"))
    ax2.set_title(tr("Longer requests, fewer of them"))
    fig.subplots_adjust(left=0.04, right=0.98, bottom=0.36, top=0.91, wspace=0.3)  # fixed: tight_layout is slow
    return fig
