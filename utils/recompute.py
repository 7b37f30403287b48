"""Does the cache change the answer? Decode with it and recompute without it, side by side.

With the same weights, eval mode, dtype and positions, the two agree up to float rounding
(the sums run in a different order), so they are compared with a tolerance, never bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from .i18n import tr
from .generate import decode_stepper, make_cache, prefill
from .validate import CACHE_KINDS, check_choice, check_fits, check_forward, check_int, check_tol

# The course's one tolerance: max |cached - recomputed| logit difference still counted as equal. In float32
# the two paths sum in a different order; on the course model that rounding passes 1e-5 within a few decode
# steps, while every real cache bug is orders of magnitude above 1e-4.
TOL = 1e-4


@dataclass
class RecomputeReport:
    """Result of ``compare_with_recompute``.

    max_diffs      per step: max |cached - recomputed| over the batch and vocabulary
                   (step 0 = the prefill logits, step s = the s-th decode step)
    positions      per step: the position of the token whose logits were compared
    first_bad_step first step whose diff exceeds ``tol`` (None if none does)
    first_bad_position  the position at that step
    """

    max_diffs: list[float]
    positions: list[int]
    tol: float
    first_bad_step: int | None
    first_bad_position: int | None

    @classmethod
    def from_diffs(cls, max_diffs: list[float], positions: list[int], tol: float) -> "RecomputeReport":
        bad = next((i for i, d in enumerate(max_diffs) if not d <= tol), None)  # `not <=` also catches NaN
        return cls(max_diffs, positions, tol, bad, None if bad is None else positions[bad])

    @property
    def ok(self) -> bool:
        return self.first_bad_step is None

    @property
    def worst(self) -> float:
        return max(self.max_diffs) if self.max_diffs else 0.0

    @property
    def verdict(self) -> str:
        if self.ok:
            return tr("OK: cached == recompute within {tol} for {n} steps", tol=f"{self.tol:g}", n=len(self.max_diffs))
        return tr("DIVERGED at step {step} (position {position}): max |diff| = {diff} > tol {tol}",
                  step=self.first_bad_step, position=self.first_bad_position,
                  diff=f"{self.max_diffs[self.first_bad_step]:.3g}", tol=f"{self.tol:g}")

    def __str__(self) -> str:
        return self.verdict


StepFn = Callable[..., torch.Tensor]


@torch.inference_mode()
def compare_with_recompute(
    model,
    input_ids: torch.Tensor,
    n_steps: int,
    *,
    attention_mask: torch.Tensor | None = None,
    tol: float = TOL,
    cache_kind: str = "dynamic",
    step: str = "flat",
    prefill_fn: Callable | None = None,
    step_fn: StepFn | None = None,
) -> RecomputeReport:
    """Greedy-decode ``n_steps`` tokens two ways and compare the logits at every step.

    The recomputed path feeds the whole sequence so far (no cache) and is the reference; its
    greedy token is fed to both paths, so they always see the same text. ``prefill_fn(model,
    ids, mask, cache) -> (logits [B, V], cache)`` and ``step_fn(model, token_ids, cache) ->
    logits [B, V]`` replace ``prefill``/``decode_step``: the bug lab plugs broken ones in here.
    Without ``step_fn``, the cached path decodes with ``decode_stepper(model, cache, step)``, the
    step ``generate`` runs: ``"flat"`` (default) or ``"modules"``.
    """
    check_int("n_steps", n_steps, minimum=0)
    check_tol(tol)
    check_choice("cache_kind", cache_kind, CACHE_KINDS)
    if isinstance(input_ids, torch.Tensor) and input_ids.dim() == 1:
        input_ids = input_ids[None]
    check_forward(model.cfg, input_ids, None, attention_mask)
    B, T = input_ids.shape
    check_fits(model.cfg, T, n_steps, "n_steps")
    prefill_fn = prefill_fn or prefill
    kv = make_cache(cache_kind, model.cfg, B, T + n_steps, dtype=model.lm_head.weight.dtype)
    ids = input_ids
    mask = attention_mask if attention_mask is not None else torch.ones_like(input_ids)
    cached, kv = prefill_fn(model, ids, attention_mask, kv)  # (B, V); a prefill_fn may return its own cache
    if step_fn is None:
        stepper = decode_stepper(model, kv, step)
        step_fn = lambda model, token_ids, cache: stepper(token_ids)  # noqa: E731
    diffs, positions = [], []
    for i in range(n_steps + 1):
        full = model(ids, attention_mask=mask)[:, -1]  # (B, V): recompute everything
        diffs.append(float((cached.float() - full.float()).abs().max()))
        positions.append(ids.shape[1] - 1)
        if i == n_steps:
            break
        nxt = full.argmax(-1)  # (B,): the reference's choice, fed to both paths
        ids = torch.cat([ids, nxt[:, None]], dim=1)
        mask = torch.cat([mask, torch.ones_like(nxt)[:, None]], dim=1)
        cached = step_fn(model, nxt, kv)
    return RecomputeReport.from_diffs(diffs, positions, tol)
