"""Figures of notebook 12 (speculative decoding): the rounds of one run with both caches' lengths, the
first token's distribution sampled speculatively against the target's own, and the speed-up against k
with its cost model."""
from __future__ import annotations

import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from ..i18n import tr
from .base import COLORS, LEGEND_SIZE, SMALL_SIZE, glossary, subplots, token_label, two_lines

# One colour per fate of a token in a round (the legend of plot_speculative_rounds says each).
ROUND_COLORS = {"accepted": "#59a14f", "refused": "#e15759", "discarded": "#d9d9d9", "correction": "#4e79a7",
                "bonus": "#b07aa1", "none": "#9c755f", "prompt": "#f0f0f0"}
TARGET_EDGE, DRAFT_EDGE = "#000000", "#f28e2b"


def _cells(ax, xs, ys, h, colors, **style) -> None:
    """Unit-wide cells at (x, y) of height h, one collection (one artist: a panel redraws it)."""
    verts = [[(x + 0.04, y), (x + 0.96, y), (x + 0.96, y + h), (x + 0.04, y + h)] for x, y in zip(xs, ys)]
    ax.add_collection(PolyCollection(verts, facecolors=colors, **style))


def plot_speculative_rounds(state: dict, title: str | None = None):
    """``speculative_rounds``' state: one row per round (the first on top), x the position in the
    sequence. The upper half of a row holds the draft tokens proposed at their positions (accepted,
    the first refused, the ones thrown away after it); the lower half the target's own token (a
    correction, a bonus, or its token when nothing was proposed). A black bar marks where the
    target's cache ends after the round's rollback, an orange one where the draft's does; the prompt is
    shaded. ``title`` defaults to the settings and the counts. The cells are narrow: in English, a line
    under the axis gives the meaning of each Chinese token shown (``glossary``)."""
    rounds, T0 = state["rounds"], state["prompt_len"]
    n_rows = max(1, len(rounds))
    right = max([T0 + state["max_new_tokens"] + 1] + [r["start"] + len(r["proposed"]) + 1 for r in rounds]
                + [max(r["target_len"], r["draft_len"]) + 1 for r in rounds])
    shown = [w for r in rounds for w in r["words"]] + [r["extra_word"] for r in rounds]
    gloss = glossary(shown)
    # fixed margins in inches (a panel redraws this at every slider step): title; axes; ticks and x label,
    # the gloss line, the legend's three rows
    top, axes_h, under, gloss_h, legend_h = 0.4, 2.9, 0.55, 0.3 if gloss else 0.0, 0.7
    H = top + axes_h + under + gloss_h + legend_h
    fig, ax = subplots(figsize=(10, H))
    fig.subplots_adjust(left=0.07, right=0.99, top=1 - top / H, bottom=(under + gloss_h + legend_h) / H)
    if gloss:
        fig.text(0.07, (gloss_h + legend_h) / H, gloss, fontsize=LEGEND_SIZE, va="top", ha="left")
    ax.axvspan(-0.5, T0, color=ROUND_COLORS["prompt"], zorder=0)
    xs, ys, colors, texts = [], [], [], []
    for y, r in enumerate(rounds):
        for i, word in enumerate(r["words"]):
            fate = "accepted" if i < r["accepted"] else "refused" if i == r["accepted"] else "discarded"
            xs.append(r["start"] + i), ys.append(y - 0.42), colors.append(ROUND_COLORS[fate])
            texts.append((r["start"] + i + 0.5, y - 0.21, word))
        xs.append(r["start"] + r["accepted"]), ys.append(y + 0.02), colors.append(ROUND_COLORS[r["kind"]])
        texts.append((r["start"] + r["accepted"] + 0.5, y + 0.23, r["extra_word"]))
    _cells(ax, xs, ys, 0.4, colors, edgecolors="none")
    size = SMALL_SIZE if right <= 24 else 7
    for x, y, word in texts:
        ax.text(x, y, word, ha="center", va="center", fontsize=size, color="#111111")
    rows = np.arange(len(rounds))
    ax.plot([r["target_len"] for r in rounds], rows, "|", color=TARGET_EDGE, ms=15, mew=2.2)
    ax.plot([r["draft_len"] for r in rounds], rows, "|", color=DRAFT_EDGE, ms=10, mew=1.8)
    ax.set_xlim(-0.5, right)
    ax.set_ylim(n_rows - 0.5, -0.6)
    step = max(1, -(-n_rows // 12))
    ax.set_yticks(rows[::step], [str(i + 1) for i in rows[::step]])
    ax.set_ylabel(tr("round"))
    ax.set_xlabel(tr("position in the sequence (the prompt shaded: {n} tokens)", n=T0))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # positions are whole numbers
    ax.grid(True, axis="x", alpha=0.25)
    handles = [Patch(color=ROUND_COLORS["accepted"], label=tr("draft accepted")),
               Patch(color=ROUND_COLORS["refused"], label=tr("draft refused")),
               Patch(color=ROUND_COLORS["discarded"], label=tr("draft thrown away after a refusal")),
               Patch(color=ROUND_COLORS["correction"], label=tr("target's token at the refusal (correction)")),
               Patch(color=ROUND_COLORS["bonus"], label=tr("target's bonus token (every draft accepted)")),
               Patch(color=ROUND_COLORS["none"], label=tr("target's token (nothing proposed)")),
               Line2D([], [], color=TARGET_EDGE, marker="|", ls="none", ms=12, mew=2.2,
                      label=tr("end of the target's cache after the round")),
               Line2D([], [], color=DRAFT_EDGE, marker="|", ls="none", ms=10, mew=1.8,
                      label=tr("end of the draft's cache after the round"))]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=LEGEND_SIZE, frameon=False)
    if title is None:
        temp = tr("greedy") if state["temperature"] == 0 else tr("temperature {t:g}", t=state["temperature"])
        draft = tr("prompt lookup") if state["lookup"] else tr("draft model")
        crop = "" if state["rollback"] else tr(", no crop (the bug)")
        title = tr("{draft}, k = {k}, {temp}{crop}: {n} rounds, {rate:.0%} of the drafts accepted",
                   draft=draft, k=state["k"], temp=temp, crop=crop, n=len(rounds), rate=state["acceptance_rate"])
    ax.set_title(title, fontsize=10, y=1.0, pad=4)
    return fig


def plot_first_token_counts(words: list[str], probs, observed: dict, title: str | None = None):
    """The first new token's distribution: the target's probabilities ``probs`` (black outlines) beside
    each sampler's observed frequencies (``observed``: name -> counts, one bar colour each), over the
    tokens ``words`` (the rest of the vocabulary pooled in a last bar). ``title`` defaults to "The first
    new token: sampled frequencies against the target's probabilities"."""
    n = len(words)
    probs = np.asarray(probs, dtype=float)  # (n + 1,): the named tokens, then the rest
    fig, ax = subplots(figsize=(9, 3.6))
    fig.subplots_adjust(left=0.08, right=0.99, top=0.9, bottom=0.2)
    width = 0.8 / (1 + len(observed))
    x = np.arange(n + 1)
    ax.bar(x - 0.4 + width / 2, probs, width, facecolor="white", edgecolor="k", linewidth=1.2,
           label=tr("target's probability p"))
    palette = [COLORS["cached"], COLORS["prefill"], COLORS["recompute"], COLORS["K"]]
    for i, (name, counts) in enumerate(observed.items()):
        counts = np.asarray(counts, dtype=float)
        ax.bar(x - 0.4 + width * (i + 1.5), counts / counts.sum(), width, color=palette[i % len(palette)],
               label=name)
    ax.set_xticks(x, [token_label(w, stacked=True) for w in words] + [tr("the rest")])
    ax.set_ylabel(tr("probability / frequency"))
    ax.set_xlabel(tr("first new token"))
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=LEGEND_SIZE, loc="upper right")
    ax.set_title(tr("The first new token: sampled frequencies against the target's probabilities")
                 if title is None else title, fontsize=10, y=1.0, pad=4)
    return fig


def plot_speculative_speedup(data: dict, title: str | None = None):
    """Three panels. Left: the cost of one forward pass of the target against the tokens it is fed
    through the modules (``pass_tokens``, ``target_pass_ms``), of the target's flat decode step (``flat_pass_ms``,
    what ``generate`` pays per token; optional) and of one draft step (``draft_pass_ms``). Middle:
    tokens per round against k (``ks``), measured per draft (``drafts``: name -> ``tokens_per_round``),
    the i.i.d. model (``model_tokens_per_round``, None: not drawn; dash-dot) and k + 1, the most a round
    yields. Right: the speed-up over ``generate``, plain greedy decoding, measured (``measured``: median,
    with ``q1``/``q3`` whiskers) and predicted by the cost model (``predicted``, dashed), with 1 dotted. ``title`` defaults to "Speculative decoding on this CPU: costs, tokens per round,
    speed-up"."""
    H = 4.9  # inches: the titles (0.65), the axes (2.75: room for a two-line y label), x labels and legend (1.5)
    fig, axes = subplots(1, 3, figsize=(12, H))
    fig.subplots_adjust(left=0.065, right=0.99, top=1 - 0.65 / H, bottom=1.5 / H, wspace=0.32)
    ax = axes[0]
    ax.plot(data["pass_tokens"], data["target_pass_ms"], "o-", color=COLORS["prefill"], ms=4,
            label=tr("target (course model)"))
    if data.get("flat_pass_ms") is not None:
        ax.plot([1], [data["flat_pass_ms"]], "D", color="k", ms=5, label=tr("target, flat step (generate's)"))
    ax.plot([1], [data["draft_pass_ms"]], "s", color=COLORS["decode"], ms=6, label=tr("draft model, flat step"))
    ax.set_ylim(0, max(data["target_pass_ms"]) * 1.15)
    ax.set_xlabel(tr("tokens fed in one pass (k + 1)"))
    ax.set_ylabel(two_lines(tr("ms per forward pass")))
    ax.set_title(tr("The cost of one pass"), fontsize=10, y=1.0, pad=4)
    colors = {0: COLORS["decode"], 1: COLORS["cached"]}
    ks = data["ks"]
    for i, (name, d) in enumerate(data["drafts"].items()):
        c = colors[i % 2]
        axes[1].plot(ks, d["tokens_per_round"], "o", color=c, ms=6, label=tr("{name}: measured", name=name))
        if d.get("model_tokens_per_round") is not None:
            axes[1].plot(ks, d["model_tokens_per_round"], "-.", color=c, lw=1.2,
                         label=tr("{name}: i.i.d. model (1 - α^(k+1)) / (1 - α)", name=name))
        med = np.array([s["median"] for s in d["measured"]])
        err = np.array([[m - s["q1"] for m, s in zip(med, d["measured"])],
                        [s["q3"] - m for m, s in zip(med, d["measured"])]])
        axes[2].errorbar(ks, med, yerr=err, fmt="o", color=c, ms=5, capsize=3,
                         label=tr("{name}: measured (median, quartiles)", name=name))
        axes[2].plot(ks, d["predicted"], "--", color=c, lw=1.2, label=tr("{name}: cost model", name=name))
    axes[1].plot(ks, [k + 1 for k in ks], ":", color="k", lw=1, label=tr("k + 1: every draft accepted"))
    axes[1].set_xlabel("k")
    axes[1].set_ylabel(two_lines(tr("tokens per round (per target pass)")))
    axes[1].set_ylim(0, max(ks) + 1.5)
    axes[1].set_title(tr("Tokens per round"), fontsize=10, y=1.0, pad=4)
    axes[2].axhline(1.0, color="k", ls=":", lw=1, label=tr("1: as fast as generate"))
    axes[2].set_xlabel("k")
    axes[2].set_ylabel(two_lines(tr("speed-up over generate")))
    axes[2].set_title(tr("Speed-up"), fontsize=10, y=1.0, pad=4)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    for ax in axes[1:]:
        ax.set_xticks(ks)
    handles, labels = [], []
    for ax in axes:
        h, lab = ax.get_legend_handles_labels()
        for hh, ll in zip(h, lab):
            if ll not in labels:
                handles.append(hh), labels.append(ll)
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=LEGEND_SIZE, frameon=False)
    fig.suptitle(tr("Speculative decoding on this CPU: costs, tokens per round, speed-up") if title is None
                 else title, fontsize=11)
    return fig
