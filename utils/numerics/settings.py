"""The other choices that move the last bits: dtype, attention kernel, thread count, deterministic mode.

``settings_table`` runs one prompt under a baseline (float32, SDPA, one thread, torch's default mode) and
under settings that each change one of them, and compares, per setting, the cached logits with the
recomputed ones, and the recomputed logits with the baseline's. Which pairs come out bit for bit equal
is a property of this machine's kernels, so the table is measured, never assumed.
"""
from __future__ import annotations

import copy
from typing import NamedTuple

import torch

from .trace import cached_and_recomputed

# (name, dtype, attention implementation, torch threads, torch.use_deterministic_algorithms)
SETTINGS = (
    ("float32, SDPA (baseline)", torch.float32, "sdpa", 1, False),
    ("float32, explicit softmax", torch.float32, "explicit", 1, False),
    ("float32, 2 threads", torch.float32, "sdpa", 2, False),
    ("float32, deterministic mode", torch.float32, "sdpa", 1, True),
    ("bfloat16", torch.bfloat16, "sdpa", 1, False),
    ("float16", torch.float16, "sdpa", 1, False),
)


class SettingRow(NamedTuple):
    name: str
    cached_equal: bool  # cached logits bit for bit the recomputed ones
    cached_diff: float  # max |cached - recomputed|
    baseline_equal: bool  # recomputed logits bit for bit the baseline's recomputed ones
    baseline_diff: float  # max |recomputed - baseline recomputed|


def run_setting(model, ids: torch.Tensor, dtype, attn: str, threads: int, deterministic: bool):
    """(cached, recomputed) last-token logits ``[B, V]`` in float32, under one setting; restores torch's state."""
    was_threads, was_det, was_attn = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled(), model.attn_impl
    m = model if dtype == model.embed_tokens.weight.dtype and attn == model.attn_impl else copy.deepcopy(model).to(dtype)
    m.set_attn_impl(attn)
    try:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic)
        cached, recomputed = cached_and_recomputed(m, ids)
    finally:
        torch.set_num_threads(was_threads)
        torch.use_deterministic_algorithms(was_det)
        model.set_attn_impl(was_attn)  # a copy has its own modules; the model itself gets its kernel back
    return cached.float(), recomputed.float()


def settings_table(model, ids: torch.Tensor, settings=SETTINGS) -> list[SettingRow]:
    """One ``SettingRow`` per setting (the first is the baseline the others are compared with)."""
    rows, base = [], None
    for name, dtype, attn, threads, det in settings:
        cached, recomputed = run_setting(model, ids, dtype, attn, threads, det)
        base = recomputed if base is None else base
        rows.append(SettingRow(name, torch.equal(cached, recomputed), float((cached - recomputed).abs().max()),
                               torch.equal(recomputed, base), float((recomputed - base).abs().max())))
    return rows
