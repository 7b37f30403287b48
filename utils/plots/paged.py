"""Figures of notebook 10 (paged KV blocks and prefix caching): a block table, the memory of a paged
cache beside a left-padded one, what a prefix cache saves, and the block map of a serving run."""
from __future__ import annotations

import numpy as np
from matplotlib.collections import PatchCollection
from matplotlib.colors import to_rgb
from matplotlib.legend_handler import HandlerTuple
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle

from ..i18n import tr
from .base import COLORS, LEGEND_SIZE, SMALL_SIZE, format_bytes, subplots

# One colour per request (rid % 10) in the block map; shared, cached-free and free blocks have their own.
REQUEST_COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#9c755f", "#ff9da7",
                  "#bab0ac", "#edc948"]
SHARED_COLOR, CACHED_COLOR, FREE_COLOR, PREFIX_EDGE = "#ffd966", "#cfe8cf", "white", "#1b5e20"
OTHER_COLOR = "#d9d9d9"  # the block table figure: blocks of other requests
# The block map's history chart counts blocks held by one request, whichever: one colour of its own, not a request's
SINGLE_COLOR, EMPTY_COLOR = "#6b7b8c", "#eeeeee"


def ink(face: str) -> str:
    """The colour of a text written on ``face``: black or white, whichever contrasts more with it (WCAG's
    contrast ratio; they tie at a relative luminance of 0.179). On every colour here that is black, at a
    ratio of 4.5 or more: white on the pink or yellow blocks could hardly be read."""
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(face))
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.179 else "white"


def plot_block_table(table: list[int], block_size: int, n_tokens: int, n_blocks: int, others=(),
                     title: str | None = None):
    """One request's tokens (top, in order) and the pool's blocks (bottom): logical block i of the
    request lives in pool block ``table[i]``; token j in slot ``table[j // block_size] * block_size +
    j % block_size``. The unwritten tail of the last block is hatched; ``others``: blocks other requests
    hold (grey). ``title`` defaults to "A block table maps a request's tokens to blocks of the pool"."""
    fig, ax = subplots(figsize=(min(12.0, 1.5 + 0.4 * max(len(table) * block_size, n_blocks)), 3.3))
    fig.subplots_adjust(left=0.02, right=0.98, top=0.83, bottom=0.16)
    for j in range(len(table) * block_size):  # the request's tokens, one cell each, grouped by logical block
        i = j // block_size
        real = j < n_tokens
        ax.add_patch(Rectangle((j, 2.2), 1, 0.8, facecolor=REQUEST_COLORS[i % 10] if real else "#eeeeee",
                               edgecolor="white", hatch=None if real else "///", alpha=0.9))
        if real:
            ax.text(j + 0.5, 2.6, str(j), ha="center", va="center", fontsize=SMALL_SIZE,
                    color=ink(REQUEST_COLORS[i % 10]))
    for i in range(len(table)):
        ax.text(i * block_size + block_size / 2, 3.15, tr("logical block {i}", i=i), ha="center", va="bottom",
                fontsize=SMALL_SIZE)
    total = max(len(table) * block_size, n_blocks)  # both rows span the same width
    scale = total / n_blocks  # the width of one pool block
    for b in range(n_blocks):  # the pool: every block, the request's ones coloured
        x = b * scale
        mine = b in table
        color = REQUEST_COLORS[table.index(b) % 10] if mine else OTHER_COLOR if b in others else FREE_COLOR
        ax.add_patch(Rectangle((x + 0.05, 0), scale - 0.1, 0.8, facecolor=color, edgecolor="#888", alpha=0.9))
        ax.text(x + scale / 2, 0.4, str(b), ha="center", va="center", fontsize=SMALL_SIZE,
                color=ink(color) if mine else "#555")
    for i, b in enumerate(table):
        start = (i * block_size + block_size / 2, 2.2)
        end = (b * scale + scale / 2, 0.85)
        ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10, lw=1.2,
                                     color=REQUEST_COLORS[i % 10]))
        slots = tr("slots {first}-{last}", first=b * block_size, last=(b + 1) * block_size - 1)
        ax.text(b * scale + scale / 2, -0.15, slots, ha="center", va="top", fontsize=SMALL_SIZE, color="#333")
    ax.text(0, 3.55, tr("the request's tokens (position j)"), fontsize=9, va="bottom")
    ax.text(0, 1.0, tr("the pool: {n} blocks of {size} slots (block id)", n=n_blocks, size=block_size),
            fontsize=9, va="bottom")
    if others:
        ax.text(total, 1.0, tr("grey: held by other requests; white: free"), fontsize=SMALL_SIZE, va="bottom",
                ha="right", color="#555555")
    ax.set_xlim(-0.2, total + 0.2)
    ax.set_ylim(-0.7, 4.0)
    ax.axis("off")
    ax.set_title(tr("A block table maps a request's tokens to blocks of the pool") if title is None else title,
                 y=1.0, pad=4)
    return fig


def plot_paged_memory(memory: dict, static_bytes: int, title: str | None = None):
    """Bars: a left-padded ``StaticKVCache`` on the same requests, then a ``PagedKVCache``'s
    ``memory()``: its pool, the blocks its rows hold, the K/V of their real tokens; each bar labelled
    with its bytes (and KiB, the axis's unit). ``title`` defaults to "The same requests: a left-padded
    cache vs a paged one"."""
    names = [tr("StaticKVCache, left-padded"), tr("paged: the pool (reserved once)"),
             tr("paged: blocks held by the rows"), tr("paged: K/V of the real tokens")]
    values = [static_bytes, memory["pool"], memory["held"], memory["tokens"]]
    colors = [COLORS["recompute"], "#bbbbbb", COLORS["prefill"], COLORS["cached"]]
    fig, ax = subplots(figsize=(8, 3.0))
    fig.subplots_adjust(left=0.3, right=0.95, top=0.86, bottom=0.17)
    y = np.arange(len(values))[::-1]
    ax.barh(y, np.asarray(values) / 1024, color=colors, height=0.6)
    for yi, v in zip(y, values):  # bytes, as the notebook prints them, and KiB, as the axis counts
        ax.text(v / 1024, yi, " " + tr("{n:,} bytes ({size})", n=int(v), size=format_bytes(v)), va="center",
                fontsize=SMALL_SIZE)
    ax.set_yticks(y, names, fontsize=9)
    ax.set_xlim(0, max(values) / 1024 * 1.42)
    ax.set_xlabel(tr("K/V bytes, all layers (KiB)"))
    ax.set_title(tr("The same requests: a left-padded cache vs a paged one") if title is None else title,
                 y=1.0, pad=4)
    return fig


def plot_prefix_caching(sweep: dict, title: str | None = None):
    """Left: TTFT (median, quartile bars, ms) vs the shared prefix's length, with a fresh prefill and
    with the prefix cache. Right: the prefix cache's hit rate. ``sweep``: ``prefix`` (tokens), ``full``
    and ``cached`` (``utils.perf.Stats`` in seconds per length), ``hit_rate`` (0..1 per length).
    ``title`` defaults to "A shared prefix, computed once"."""
    x = np.asarray(sweep["prefix"])
    fig, (ax0, ax1) = subplots(1, 2, figsize=(11, 3.6))
    fig.subplots_adjust(left=0.07, right=0.98, top=0.82, bottom=0.15, wspace=0.25)
    for key, color, label, marker in (("full", COLORS["recompute"], tr("fresh prefill of the whole prompt"), "s"),
                                      ("cached", COLORS["cached"], tr("prefix cache: prefill the rest only"), "o")):
        med = np.array([s.median for s in sweep[key]]) * 1e3
        err = [med - np.array([s.q1 for s in sweep[key]]) * 1e3, np.array([s.q3 for s in sweep[key]]) * 1e3 - med]
        ax0.errorbar(x, med, yerr=err, fmt=marker + "-", color=color, label=label, capsize=3, ms=5)
    ax0.set_xlabel(tr("shared prefix (system prompt) length (tokens)"))
    ax0.set_ylabel(tr("TTFT, model only (ms)"))
    ax0.set_ylim(bottom=0)
    ax0.set_xticks(x)
    ax0.grid(True, alpha=0.3)
    ax0.legend(fontsize=LEGEND_SIZE)
    ax0.set_title(tr("Time to the first token"), fontsize=10, y=1.0, pad=4)
    ax1.plot(x, np.asarray(sweep["hit_rate"]) * 100, "o-", color=COLORS["cached"])
    ax1.set_xlabel(tr("shared prefix (system prompt) length (tokens)"))
    ax1.set_ylabel(tr("prompt tokens found in the cache (%)"))
    ax1.set_ylim(0, 100)
    ax1.set_xticks(x)
    ax1.grid(True, alpha=0.3)
    ax1.set_title(tr("Hit rate"), fontsize=10, y=1.0, pad=4)
    fig.suptitle(tr("A shared prefix, computed once") if title is None else title, fontsize=11)
    return fig


def _block_style(owners: tuple, cached: bool) -> tuple[str, str]:
    """Face colour and the text inside one block of the map."""
    if len(owners) > 1:
        return SHARED_COLOR, f"×{len(owners)}"
    if owners:
        return REQUEST_COLORS[owners[0] % 10], f"r{owners[0]}"
    return (CACHED_COLOR, "") if cached else (FREE_COLOR, "")


def plot_block_map(state: dict, title: str | None = None):
    """The pool at one step of a serving run (``BlockMapPanel.state``): a grid of blocks coloured by the
    request holding each (``rN``), shared blocks hatched with their number of holders, cached free
    blocks (ref 0, a findable prefix) pale green, free blocks blank; a dark edge marks a block that
    holds a published prefix. Below: how many blocks were in each state at every step (blocks held by
    one request in one slate colour, whichever request), a black line at the step shown. ``title``
    defaults to "Step {step}: blocks of {size} tokens" (and who was preempted in it). A block found again in the
    cache in this step says "found"; a block an earlier request gave back, written anew by another, says
    "reused"; a block a request preempted in this step held alone says "was rN"."""
    frame, n_blocks, counts = state["frame"], state["n_blocks"], state["counts"]
    ncols = 12 if n_blocks > 32 else 8
    nrows = -(-n_blocks // ncols)
    # fixed margins in inches (a panel redraws this at every step; no layout pass): title, grid, gap, history, axis
    top, grid_h, gap, hist_h, bottom = 0.35, 0.6 * nrows, 0.5, 1.5, 0.5
    H = top + grid_h + gap + hist_h + bottom
    W, legend_w = 9.0, 2.55  # inches: the figure, and the legends' column at its right
    fig, (ax0, ax1) = subplots(2, 1, figsize=(W, H), gridspec_kw={"height_ratios": [grid_h, hist_h]})
    fig.subplots_adjust(left=0.65 / W, right=1 - legend_w / W, top=1 - top / H, bottom=bottom / H,
                        hspace=gap / ((grid_h + hist_h) / 2))
    marks = {b: tr("found") for b in frame["found"]}
    marks.update({b: tr("reused") for b, _ in frame["reused"]})
    # a block a preempted request held alone: its K/V were thrown away in this step (another request may write it)
    for b, rid in frame.get("evicted", []):
        marks[b] = tr("was r{rid}", rid=rid) if b not in marks else marks[b] + " " + tr("was r{rid}", rid=rid)
    plain, hatched = [], []
    for b in range(n_blocks):
        owners = frame["owners"][b]
        face, text = _block_style(owners, b in frame["cached"])
        r, c = divmod(b, ncols)
        keyed = b in frame["keyed"]
        patch = Rectangle((c + 0.06, r + 0.06), 0.88, 0.88, facecolor=face,
                          edgecolor=PREFIX_EDGE if keyed else "#999999", linewidth=2.2 if keyed else 0.8)
        (hatched if len(owners) > 1 else plain).append(patch)
        # one text per block (each text costs a layout pass): its id, who holds it, what happened to it now
        label = "\n".join([str(b)] + ([text] if text else []) + ([marks[b]] if b in marks else []))
        ax0.text(c + 0.5, r + 0.5, label, ha="center", va="center", fontsize=SMALL_SIZE, linespacing=1.1,
                 color=ink(face) if owners else "#666666")
    ax0.add_collection(PatchCollection(plain, match_original=True))
    ax0.add_collection(PatchCollection(hatched, match_original=True, hatch="///"))
    ax0.set_xlim(0, ncols)
    ax0.set_ylim(nrows, 0)
    ax0.set_aspect("auto")
    ax0.axis("off")
    if title is None:
        title = tr("Step {step}: blocks of {size} tokens", step=state["step"], size=state["block_size"])
        if frame.get("preempted"):  # what a preemption did is the step's news: said in the title, marked on the grid
            title += tr("; preempted: {rids} (its blocks say \"was rN\")",
                        rids=" ".join(f"r{r}" for r in frame["preempted"]))
    ax0.set_title(title, fontsize=10, loc="left", y=1.0, pad=4)
    # the grid colours a block by its request: the legend's chip shows the colours of the requests on the grid now
    held = sorted({o[0] for o in frame["owners"] if len(o) == 1}) or [0, 1, 2]
    requests = tuple(Patch(facecolor=REQUEST_COLORS[rid % 10], edgecolor="#999999") for rid in held[:4])
    handles = [requests, Patch(facecolor=SHARED_COLOR, edgecolor="#999999", hatch="///"),
               Patch(facecolor=CACHED_COLOR, edgecolor="#999999"), Patch(facecolor=FREE_COLOR, edgecolor="#999999"),
               Patch(facecolor="white", edgecolor=PREFIX_EDGE, linewidth=2)]
    labels = [tr("held by one request, rN\n(the request's colour)"), tr("shared (×holders)"),
              tr("cached, free (ref 0)"), tr("free"), tr("holds a findable prefix")]
    ax0.legend(handles, labels, handler_map={tuple: HandlerTuple(ndivide=None, pad=0)}, loc="upper left",
               bbox_to_anchor=(1.01, 1.0), fontsize=LEGEND_SIZE, frameon=False, handlelength=2.4)
    # the chart counts blocks by state: shared and cached in the grid's colours (its legend names them), blocks
    # held by one request in one colour of their own, whichever request (named here), free ones light grey
    steps = np.arange(len(counts["free"]))
    layers = [counts[k] for k in ("single", "shared", "cached", "free")]
    ax1.stackplot(steps, *layers, colors=[SINGLE_COLOR, SHARED_COLOR, CACHED_COLOR, EMPTY_COLOR], step="post")
    ax1.axvline(state["step"], color="black", lw=1.2)
    ax1.legend([Patch(facecolor=SINGLE_COLOR, edgecolor="#999999"), Line2D([], [], color="black", lw=1.2)],
               [tr("held by one request"), tr("the step shown above")], loc="upper left", bbox_to_anchor=(1.01, 1.0),
               fontsize=LEGEND_SIZE, frameon=False)
    last = max(1, len(steps) - 1)
    ax1.set_xlim(0, last)
    ax1.set_ylim(0, n_blocks)
    ax1.set_xticks(range(0, last + 1, 10 if last > 30 else 5))  # fixed ticks: no locator pass per redraw
    ax1.set_yticks([0, n_blocks // 2, n_blocks])
    ax1.set_xlabel(tr("step"))
    ax1.set_ylabel(tr("blocks"))
    ax1.set_title(tr("The pool over the whole run: blocks held, shared, cached and free"), fontsize=9, loc="left",
                  y=1.0, pad=4)
    return fig
