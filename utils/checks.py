"""Does the cache change the answer? Decode with it and recompute without it, side by side.

With the same weights, eval mode, dtype and positions, the two agree up to float rounding
(the sums run in a different order), so they are compared with a tolerance, never bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from .cache import KVCache, StaticKVCache
from .generate import decode_stepper, prefill


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

    @property
    def ok(self) -> bool:
        return self.first_bad_step is None

    @property
    def worst(self) -> float:
        return max(self.max_diffs) if self.max_diffs else 0.0

    @property
    def verdict(self) -> str:
        if self.ok:
            return f"OK: cached == recompute within {self.tol:g} for {len(self.max_diffs)} steps"
        return (
            f"DIVERGED at step {self.first_bad_step} (position {self.first_bad_position}): "
            f"max |diff| = {self.max_diffs[self.first_bad_step]:.3g} > tol {self.tol:g}"
        )

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
    tol: float = 1e-5,
    cache: str = "dynamic",
    prefill_fn: Callable | None = None,
    step_fn: StepFn | None = None,
) -> RecomputeReport:
    """Greedy-decode ``n_steps`` tokens two ways and compare the logits at every step.

    The recomputed path feeds the whole sequence so far (no cache) and is the reference; its
    greedy token is fed to both paths, so they always see the same text. ``prefill_fn(model,
    ids, mask, cache) -> (logits [B, V], cache)`` and ``step_fn(model, token_ids, cache) ->
    logits [B, V]`` replace ``prefill``/``decode_step``: the bug lab plugs broken ones in here.
    """
    if isinstance(n_steps, bool) or not isinstance(n_steps, int) or n_steps < 0:
        raise ValueError(f"n_steps must be an int >= 0, got {n_steps!r}")
    if not tol > 0:
        raise ValueError(f"tol must be > 0, got {tol!r}")
    if isinstance(input_ids, torch.Tensor) and input_ids.dim() == 1:
        input_ids = input_ids[None]
    model._check(input_ids, None, attention_mask, None)
    B, T = input_ids.shape
    if T + n_steps > model.cfg.max_seq_len:
        raise ValueError(f"prompt {T} + n_steps {n_steps} exceeds max_seq_len={model.cfg.max_seq_len}")
    prefill_fn = prefill_fn or prefill
    kv = KVCache() if cache == "dynamic" else StaticKVCache(model.cfg, B, T + n_steps,
                                                              dtype=model.lm_head.weight.dtype)
    ids = input_ids
    mask = attention_mask if attention_mask is not None else torch.ones_like(input_ids)
    cached, kv = prefill_fn(model, ids, attention_mask, kv)  # (B, V)
    if step_fn is None:  # the step generate runs: flat when it computes the same (utils/flat_decode.py)
        stepper = decode_stepper(model, kv)
        step_fn = lambda model, token_ids, cache: stepper(token_ids)  # noqa: E731
    diffs, positions = [], []
    for step in range(n_steps + 1):
        full = model(ids, attention_mask=mask)[:, -1]  # (B, V): recompute everything
        diffs.append(float((cached.float() - full.float()).abs().max()))
        positions.append(ids.shape[1] - 1)
        if step == n_steps:
            break
        nxt = full.argmax(-1)  # (B,): the reference's choice, fed to both paths
        ids = torch.cat([ids, nxt[:, None]], dim=1)
        mask = torch.cat([mask, torch.ones_like(nxt)[:, None]], dim=1)
        cached = step_fn(model, nxt, kv)
    bad = next((i for i, d in enumerate(diffs) if not d <= tol), None)  # `not <=` also catches NaN
    return RecomputeReport(diffs, positions, tol, bad, None if bad is None else positions[bad])
