"""Panel of notebook 08 (beyond the basics): a sliding-window cache against the full one."""
from __future__ import annotations

from ..i18n import tr
from ..plots.beyond import plot_sliding_window
from ..sliding import compare_sliding
from .base import Panel, dropdown, int_slider
from ..recompute import TOL


SLIDING_WINDOWS = (2, 4, 8, 12, 16, 24, 32, 48, 64)


class SlidingWindowPanel(Panel):
    """08 · Sliding window: how the window W changes memory and logits.

    Controls: W and how many tokens of ``ids`` (``[1, N]``) to feed. Shows where the logits first
    leave full attention (position W), that they always equal the band-mask recompute, and what the
    cache holds compared with a full cache. One run per W over all N tokens, then sliced (the logits
    of a prefix do not depend on what follows).
    """

    title = "Sliding-window cache: memory vs exactness"

    def __init__(self, model, ids, tol: float = TOL, runs: dict | None = None) -> None:
        self.model, self.ids, self.tol = model, ids, tol
        # window -> SlidingComparison over all of ``ids``; pass ones already computed to reuse them
        self._runs: dict[int, object] = dict(runs or {})
        N = ids.shape[1]
        super().__init__({
            "window": dropdown(tr("window W"), list(SLIDING_WINDOWS), 16),
            "n_tokens": int_slider(tr("tokens fed"), min(64, N), 1, N, continuous_update=False),
        })

    def compute(self, window: int, n_tokens: int) -> dict:
        if window not in self._runs:
            self._runs[window] = compare_sliding(self.model, self.ids, window)
        full = self._runs[window]
        n = n_tokens
        comp = type(full)(window, full.ids[:, :n], full.diff_full[:n], full.diff_windowed[:n],
                          full.stored[:n], full.n_seen[:n], full.nbytes[:n])
        per_position = comp.nbytes[-1] // comp.stored[-1]
        return {
            "comp": comp, "window": window, "n_tokens": n, "stored": comp.stored[-1], "n_seen": comp.n_seen[-1],
            "nbytes": comp.nbytes[-1], "full_nbytes": per_position * n,
            "first_diff": comp.first_differing_position(self.tol),
            "equals_windowed": max(comp.diff_windowed) <= self.tol,
        }

    def render(self, s: dict) -> str:
        first = (tr("never: every position still sees all its history") if s["first_diff"] is None
                 else tr("from position {position} on (the first token whose window has dropped a key)",
                         position=s["first_diff"]))
        held = tr("W = {W}, {n} tokens fed: the cache holds <b>{stored}</b> positions ({nbytes:,} bytes; a full cache "
                  "would hold {n} positions, {full_nbytes:,} bytes); the next token gets RoPE position <b>{seen}</b>.",
                  W=s["window"], n=s["n_tokens"], stored=s["stored"], nbytes=s["nbytes"], full_nbytes=s["full_nbytes"],
                  seen=s["n_seen"])
        differs = tr("Logits differ from full attention: <b>{first}</b>.", first=first)
        equal = tr("Equal to the sliding-window recompute (band mask) at every position: <b>{equal}</b>",
                   equal=s["equals_windowed"])
        return f"<p>{held}<br>{differs} {equal}</p>"

    keeps_figures = True  # a setting seen before shows its figure again without drawing it

    def plot(self, s: dict):
        return self.kept_figure((s["window"], s["n_tokens"]), lambda: plot_sliding_window(s["comp"], self.tol))
