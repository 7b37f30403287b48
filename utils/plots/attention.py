"""Figures of notebook 01 (the attention block): masks, weights, head groups, softmax saturation, RoPE."""
from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.patches import Patch, Rectangle
from matplotlib.textpath import TextToPath

from ..i18n import tr
from .base import COLORS, LEGEND_SIZE, SMALL_SIZE, new_figure, token_label

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")  # Chinese characters and punctuation
_TEXT = TextToPath()  # measures a text's width in a font without drawing it


_MASKED = "#f2f2f2"  # the colour of a False (masked) cell
_HATCH = "#c8c8c8"  # the hatch over rows with no query (the earlier tokens, after a cache)


def plot_mask(ax, mask, title: str | None = None, offset: int = 0, key: bool = True, aspect: str = "auto",
              rows: int | None = None) -> None:
    """Draw a boolean mask ``[T_q, T_k]`` on ``ax``: coloured = query i may attend to key j.

    ``offset`` is the absolute position of the first query (the cache length in decode), so
    the y labels show where each query really sits. ``key`` adds a two-colour bar beside the mask
    that says which colour is True (may attend) and which is False (masked); several masks side by
    side share one key instead (``key=False`` and ``mask_key``). ``aspect="equal"`` draws square cells;
    ``rows`` leaves room for that many query rows, the mask's at the bottom (after a cache, the rows above
    belong to the cached tokens, which make no query: hatched and labelled), so masks of different T_q
    drawn side by side keep one cell size.
    """
    m = np.asarray(mask, dtype=float)  # (T_q, T_k)
    T_q, T_k = m.shape
    im = ax.imshow(m, cmap=ListedColormap([_MASKED, COLORS["prefill"]]), norm=BoundaryNorm([0, 0.5, 1], 2),
                   aspect=aspect, interpolation="nearest")
    if key:
        bar = ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04, ticks=[0.25, 0.75])
        bar.ax.set_yticklabels([tr("False:\nmasked"), tr("True:\nmay attend")])
        bar.ax.tick_params(length=0)
    # thin white grid between cells so single positions stay readable
    ax.set_xticks(np.arange(-0.5, T_k), minor=True)
    ax.set_yticks(np.arange(-0.5, T_q), minor=True)
    ax.grid(which="minor", color="white", linewidth=1)
    ax.tick_params(which="minor", length=0)
    step_k = max(1, T_k // 8)
    step_q = max(1, T_q // 8)
    ax.set_xticks(range(0, T_k, step_k))
    ax.set_yticks(range(0, T_q, step_q), [str(offset + i) for i in range(0, T_q, step_q)])
    ax.set_xlabel(tr("key position j (token index)"))
    # row i of a mask after a cache is the query at position offset + i: the label says so
    ax.set_ylabel(tr("query position offset + i (offset = {n})", n=offset) if offset
                  else tr("query position i (token index)"))
    ax.set_title(tr("Causal mask") if title is None else title)
    if rows is not None:
        ax.set_ylim(T_q - 0.5, T_q - 0.5 - max(rows, T_q))  # top to bottom, as imshow draws rows
        if rows > T_q:  # the earlier tokens' rows: hatched and labelled, so they do not read as an empty box
            top, bottom = T_q - 0.5 - rows, -0.5
            ax.add_patch(Rectangle((-0.5, top), T_k, bottom - top, facecolor="white", edgecolor=_HATCH,
                                   hatch="//", linewidth=0))
            ax.text((T_k - 1) / 2, (top + bottom) / 2, tr("cached tokens:\nno query this step"), ha="center",
                    va="center", multialignment="center", fontsize=SMALL_SIZE, color="#444444",
                    bbox=dict(facecolor="white", edgecolor="none", pad=2))


def mask_key(fig) -> None:
    """One key under several masks drawn with ``key=False``: which colour is True (may attend) and which
    False (masked). Lays the figure out, leaving room for the key below the panels."""
    handles = [Patch(facecolor=COLORS["prefill"], label=tr("True: may attend")),
               Patch(facecolor=_MASKED, edgecolor="#999999", label=tr("False: masked"))]
    fig.legend(handles=handles, loc="lower center", ncol=2, frameon=False, fontsize=LEGEND_SIZE)
    fig.tight_layout(rect=(0, 0.07, 1, 1))


def _fit_upright(ax, labels) -> bool:
    """Would the x tick ``labels``, written upright, leave a gap between neighbours? Widths come from
    the font, without drawing. The column width is the axes' width now, less 15%: an upright first
    label reaches past the axes' left edge, and tight_layout, run later, narrows the axes to fit it."""
    if not labels:
        return True
    font = ax.xaxis.get_ticklabels()[0].get_fontproperties()
    widths = [_TEXT.get_text_width_height_descent(label, font, ismath=False)[0] for label in labels]  # points
    spacing = 0.85 * ax.get_position().width * ax.figure.get_figwidth() * 72 / len(labels)  # points per column
    gap = 0.3 * font.get_size_in_points()  # a third of a letter height between two labels
    return all((a + b) / 2 + gap <= spacing for a, b in zip(widths, widths[1:]))


def token_ticks(ax, tokens) -> None:
    """Label the rows and columns of a ``[T, T]`` heatmap with its tokens (``token_label``).

    Column labels stay upright when they fit side by side. When they would collide ("<BOS>" next to
    "really" in a narrow column), the Latin ones stand on end (rotated 90°); a Chinese token, one or
    two characters wide, stays as written. Call it once the axes have their colorbar.
    """
    labels = [token_label(t) for t in tokens]
    ax.set_xticks(range(len(labels)), labels)
    ax.set_yticks(range(len(labels)), labels)
    upright = _fit_upright(ax, labels)
    for text, label in zip(ax.get_xticklabels(), labels):
        text.set_rotation(0 if upright or _CJK.sub("", label) == "" else 90)


def plot_weights(ax, weights, title: str | None = None, tokens=None):
    """Heatmap of attention weights ``[T_q, T_k]`` (each row sums to 1); returns the image for a colorbar.

    ``tokens``: the T words of a square ``[T, T]`` map, written on both axes (``token_ticks``);
    without them the axes show token indices."""
    w = np.asarray(weights, dtype=float)
    im = ax.imshow(w, cmap="viridis", vmin=0, vmax=1, aspect="auto", interpolation="nearest")
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label=tr("weight (row sums to 1)"))  # before the
    # token labels: it narrows the axes, and token_ticks measures whether the labels still fit upright
    T_q, T_k = w.shape
    if tokens is None:
        ax.set_xticks(range(0, T_k, max(1, T_k // 8)))
        ax.set_yticks(range(0, T_q, max(1, T_q // 8)))
        ax.set_xlabel(tr("key position j (token index)"))
        ax.set_ylabel(tr("query position i (token index)"))
    else:
        token_ticks(ax, tokens)
        ax.set_xlabel(tr("key j (its token)"))
        ax.set_ylabel(tr("query i (its token)"))
    ax.set_title(tr("Attention weights (one head)") if title is None else title)
    return im


def head_kind(H: int, H_kv: int) -> str:
    """The name of a head layout: "MHA" (H_kv = H), "GQA" or "MQA" (H_kv = 1); one head is both MHA and MQA."""
    if H_kv == H:
        return tr("MHA (= MQA)") if H == 1 else "MHA"
    return "MQA" if H_kv == 1 else "GQA"


def plot_head_groups(ax, H: int, H_kv: int, title: str | None = None) -> None:
    """Which K/V head each query head reads: query head h uses K/V head ``h // (H // H_kv)``.
    Each head carries its index (query heads above, K/V heads below; above 8 query heads, every other one)."""
    if H_kv < 1 or H % H_kv:
        raise ValueError(f"H_kv must divide H (every K/V head serves the same number of query heads), got H={H}, H_kv={H_kv}")
    n_rep = H // H_kv
    cmap = plt.get_cmap("tab10" if H_kv <= 10 else "tab20")
    qx = np.linspace(0, 1, H) if H > 1 else np.array([0.5])
    kx = qx.reshape(H_kv, n_rep).mean(axis=1)  # (H_kv,): each K/V head under the middle of its group
    size = max(30, 500 / max(H, 1))
    for h in range(H):
        j = h // n_rep
        ax.plot([qx[h], kx[j]], [1, 0], color=cmap(j % cmap.N), linewidth=1.2, alpha=0.7, zorder=1)
    ax.scatter(qx, np.ones(H), s=size, color=[cmap((h // n_rep) % cmap.N) for h in range(H)],
               edgecolor="black", zorder=2)
    ax.scatter(kx, np.zeros(H_kv), s=size * 1.6, marker="s",
               color=[cmap(j % cmap.N) for j in range(H_kv)], edgecolor="black", zorder=2)
    r_q, r_kv = np.sqrt(size) / 2, np.sqrt(size * 1.6) / 2  # marker radii in points: the indices sit just beyond
    label_every = 1 if H <= 8 else 2  # above 8 heads, neighbouring indices would run together ("10111213")
    for h in range(0, H, label_every):
        ax.annotate(str(h), (qx[h], 1), xytext=(0, r_q + 2), textcoords="offset points", ha="center", va="bottom",
                    fontsize=SMALL_SIZE)
    for j in range(0, H_kv, 1 if H_kv <= 8 else 2):
        ax.annotate(str(j), (kx[j], 0), xytext=(0, -r_kv - 2), textcoords="offset points", ha="center", va="top",
                    fontsize=SMALL_SIZE)
    ax.set_yticks([0, 1], [tr("K/V heads\n(H_kv={H_kv})", H_kv=H_kv), tr("query heads\n(H={H})", H=H)])
    ax.set_xticks([])
    ax.set_xlabel(tr("head index\n(line: query head → its K/V head)"))
    ax.set_ylim(-0.45, 1.45)
    ax.set_xlim(-0.08, 1.08)
    kind = head_kind(H, H_kv)
    if H == 1:
        default = tr("{kind}: a single head", kind=kind)
    elif n_rep == 1:
        default = tr("{kind}: 1 query head per K/V head", kind=kind)
    else:
        default = tr("{kind}: {n_rep} query heads per K/V head", kind=kind, n_rep=n_rep)
    ax.set_title(title or default)
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)


def plot_rope_scores(ax, scores, title: str | None = None):
    """Heatmap of ``scores[m, n]`` = (RoPE(q, m)) · (RoPE(k, n)); constant along diagonals = depends on m - n only."""
    s = np.asarray(scores, dtype=float)
    vmax = float(np.abs(s).max()) or 1.0
    im = ax.imshow(s, cmap="RdBu_r", vmin=-vmax, vmax=vmax, aspect="auto", interpolation="nearest")
    ax.set_xlabel(tr("key position n (token index)"))
    ax.set_ylabel(tr("query position m (token index)"))
    ax.set_title(tr("q·k after RoPE, for every pair of positions") if title is None else title)
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label=tr("q·k score"))
    return im


def plot_softmax_saturation(d_h_values, max_weight: dict, entropy: dict, n_keys: int,
                            title: str | None = None):
    """Two panels against d_h: a row's largest attention weight, and its entropy (nats).

    ``max_weight`` and ``entropy`` map a line label (e.g. with and without the 1/√d_h scale) to
    one value per d_h, averaged over rows. Both panels mark a uniform row (weight 1/n_keys everywhere,
    entropy ln n_keys) and a one-hot row (largest weight 1, entropy 0). Returns the figure.
    """
    d = np.asarray(list(d_h_values), dtype=float)
    fig, (ax1, ax2) = new_figure(ncols=2, width=5.0, height=3.4)
    colors = [COLORS["prefill"], COLORS["recompute"], COLORS["cached"], COLORS["K"]]
    for (label, values), color in zip(max_weight.items(), colors):
        ax1.plot(d, values, "o-", color=color, label=label)
    for (label, values), color in zip(entropy.items(), colors):
        ax2.plot(d, values, "o-", color=color, label=label)
    ax1.axhline(1.0, color=COLORS["mask"], linestyle=":", linewidth=1)
    ax1.axhline(1 / n_keys, color=COLORS["mask"], linestyle="--", linewidth=1)
    ax1.text(d[0], 1 / n_keys, tr(" uniform: 1/{n_keys}", n_keys=n_keys), va="bottom", fontsize=SMALL_SIZE,
             color=COLORS["mask"])
    ax1.text(d[0], 1.0, tr(" one-hot: 1"), va="top", fontsize=SMALL_SIZE, color=COLORS["mask"])
    ax1.set_ylim(0, 1.05)
    ax1.set_ylabel(tr("largest weight in a row (mean)"))
    ax1.set_title(tr("one key takes the weight"))
    ax2.axhline(np.log(n_keys), color=COLORS["mask"], linestyle="--", linewidth=1)
    ax2.text(d[0], np.log(n_keys), tr(" uniform: ln {n_keys} = {ln:.2f}", n_keys=n_keys, ln=np.log(n_keys)),
             va="bottom", fontsize=SMALL_SIZE, color=COLORS["mask"])
    ax2.text(d[0], 0.0, tr(" one-hot: 0"), va="bottom", fontsize=SMALL_SIZE, color=COLORS["mask"])
    ax2.set_ylim(0, np.log(n_keys) * 1.15)
    ax2.set_ylabel(tr("entropy of a row (nats, mean)"))
    ax2.set_title(tr("the row's spread collapses"))
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xticks(d, [f"{v:g}" for v in d])
        ax.minorticks_off()
        ax.set_xlabel(tr("head width d_h (log scale)"))
        ax.legend(fontsize=LEGEND_SIZE, loc="center right")
    fig.suptitle(tr("Softmax of q·k as the head grows wider") if title is None else title)
    fig.tight_layout()
    return fig


def plot_rope_frequencies(theta, n_positions: int, title: str | None = None, window: int = 32):
    """Three panels for the speeds ``theta`` ``[d_h/2]`` (radians per position) of the pairs of one head.

    Left: the rotation per position of each pair i (degrees, log scale). Middle: cos(p·θ_i) over the
    first ``window`` positions, one row per pair, where the fast pairs' turns are wide enough to see (drawn
    between whole positions too, so the fastest pair does not alias).
    Right: the same over the whole context, p = 0 .. n_positions-1, for the pairs whose one turn takes at
    least 8 positions (at this width, a dozen pixels or more per turn); a faster pair's turns would be too
    fine to read, so its row is left blank and the middle panel shows it. Returns the figure.
    """
    theta = np.asarray(theta, dtype=float)  # (d_h/2,)
    half = len(theta)
    pairs = np.arange(half)
    fig, (ax1, ax2, ax3) = new_figure(ncols=3, width=4.0, height=3.6)
    ax1.semilogy(pairs, np.degrees(theta), "o-", color=COLORS["K"])
    ax1.axhline(360 / n_positions, color=COLORS["mask"], linestyle="--", linewidth=1)
    ax1.text(pairs[-1], 360 / n_positions, tr("one turn in {n_positions} positions ", n_positions=n_positions),
             ha="right", va="bottom", fontsize=SMALL_SIZE, color=COLORS["mask"])
    step = max(1, half // 8)
    every = max(1, half // 4)  # fewer labels on the x axis: each one names its two dimensions
    ax1.set_xticks(pairs[::every], [f"{i}\n({i}, {i + half})" for i in pairs[::every]], fontsize=SMALL_SIZE)
    ax1.set_xlabel(tr("pair i (its dimensions: i and i + d_h/2)"))
    ax1.set_ylabel(tr("θ_i (degrees per position, log)"))
    ax1.set_title(tr("θ_i = base^(−2i/d_h), shown in degrees"))
    cmap = plt.get_cmap("RdBu_r").with_extremes(bad="#f2f2f2")  # blank rows: too fast for the panel
    too_fast = 2 * np.pi / theta < 8  # (d_h/2,): one turn in under 8 positions, a few pixels in the right panel
    # the middle panel samples 8 points per position: at whole positions alone, pair 0 (about 1 rad per
    # position) would alias into what looks like noise; drawn between them, its turns read as stripes
    for ax, n, hide, sub in ((ax2, window, np.zeros(half, bool), 8), (ax3, n_positions, too_fast, 1)):
        p = (np.arange(n * sub) + 0.5) / sub - 0.5  # (n·sub,): the centre of each drawn column, in positions
        angles = np.outer(theta, p)  # (d_h/2, n·sub): p·θ_i
        shown = np.where(hide[:, None], np.nan, np.cos(angles))
        im = ax.imshow(shown, aspect="auto", cmap=cmap, vmin=-1, vmax=1, interpolation="nearest",
                       extent=(-0.5, n - 0.5, half - 0.5, -0.5))
        ax.set_yticks(pairs[::step])
        ax.set_xlabel(tr("position p (token index)"))
        ax.set_ylabel(tr("pair i"))
    ax2.set_title(tr("cos(p·θ_i), first {n} positions", n=window))
    ax3.set_title(tr("cos(p·θ_i), whole context ({n} positions)", n=n_positions))
    if hide.any():
        ax3.text(n_positions / 2, (hide.sum() - 1) / 2, tr("too fast to draw here: see the middle panel"),
                 ha="center", va="center", fontsize=SMALL_SIZE, color=COLORS["mask"])
    fig.colorbar(im, ax=ax3, fraction=0.046, pad=0.04, label=tr("cos of the angle"))
    fig.suptitle(tr("RoPE: how fast each pair turns") if title is None else title)
    fig.tight_layout()
    return fig
