"""Does a prompt's result depend on the rest of its batch? The same prompt alone, beside a longer one,
and among eight, on the standard path and on the batch-invariant one.

    compositions(prompt, others)                 # {"alone": rows, "beside a longer prompt": rows, ...}
    logits_of(model, rows, index, path)          # the prompt's next-token logits [V] in that batch
"""
from __future__ import annotations

from typing import Sequence

import torch

from ..generate import left_pad, prefill
from .invariant import invariant_logits

PATHS = ("standard", "batch-invariant")


def compositions(prompt: Sequence[int], others: Sequence[Sequence[int]]) -> dict[str, tuple[list, int]]:
    """Three batches holding ``prompt``: alone; after one longer prompt (``others[0]``, so ``prompt`` is
    left-padded); last of eight (``others[:7]``). Each value: (rows, index of ``prompt`` in them)."""
    if len(others) < 7 or len(others[0]) <= len(prompt):
        raise ValueError("compositions needs 7 other prompts, the first longer than the prompt")
    return {"alone": ([list(prompt)], 0),
            "beside a longer prompt": ([list(others[0]), list(prompt)], 1),
            "in a batch of 8": ([list(o) for o in others[:7]] + [list(prompt)], 7)}


@torch.inference_mode()
def logits_of(model, rows: list, index: int, path: str = "standard") -> torch.Tensor:
    """Row ``index``'s next-token logits ``[V]`` (float32) when ``rows`` run as one left-padded batch:
    ``"standard"`` is the course's prefill; ``"batch-invariant"`` is ``invariant_logits``."""
    if path == "standard":
        ids, mask = left_pad(rows)  # (B, T) each
        return prefill(model, ids, attention_mask=mask)[0][index].float()
    if path == "batch-invariant":
        return invariant_logits(model, rows)[index]
    raise ValueError(f"path must be one of {PATHS}, got {path!r}")
