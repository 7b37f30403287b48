"""Where cached and recomputed logits part: every module's output for one token, on both paths.

A decode step multiplies the new token's row alone, ``[1, C] @ W``; a recompute multiplies all T rows,
``[T, C] @ W``, and keeps the last. The maths is the same; the kernel need not be: a library picks its
kernel, its blocking and so its order of additions by the shape, so the last row can come out a few
ulps apart. ``trace_last_row`` records what every module of the model output for the last position,
``first_difference`` walks two such records in execution order and stops at the first op that differs.

    cached, recomputed = cached_and_recomputed(model, ids)   # last-token logits [B, V], both ways
    chunked_recompute(model, ids, [n, 1])                    # from scratch, the cached run's shapes
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import torch

from ..cache import KVCache
from ..generate import decode_step, prefill
from .ulp import ulp_distance


@torch.inference_mode()
def trace_last_row(model, run) -> tuple[torch.Tensor, dict[str, tuple[torch.Tensor, torch.Tensor]]]:
    """Call ``run()`` with a forward hook on every submodule; return its result and, per module name in
    the order the modules ran, (input, output) of the last position (each ``[B, features]``)."""
    seen: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}

    def hook(name):
        def record(module, inputs, output):
            first = output[0] if isinstance(output, tuple) else output
            seen[name] = (inputs[0][:, -1].clone(), first[:, -1].clone())  # (B, C_in), (B, C_out)
        return record

    handles = [module.register_forward_hook(hook(name)) for name, module in model.named_modules() if name]
    try:
        result = run()
    finally:
        for handle in handles:
            handle.remove()
    return result, seen


class OpDifference(NamedTuple):
    """The first op whose output differs between two traces (``None`` fields: no op differs)."""

    name: str | None  # module name, e.g. "layers.0.self_attn.q_proj"
    inputs_equal: bool  # its inputs were bit for bit the same on both paths
    max_ulps: int  # the largest distance between its two outputs, in ulps of their dtype
    max_abs: float  # and in absolute value
    n_equal_before: int  # ops (in execution order) whose outputs were bit for bit equal before it


def first_difference(a: dict, b: dict) -> OpDifference:
    """Walk two ``trace_last_row`` records in execution order; stop at the first op whose outputs differ."""
    for i, (name, (x_a, y_a)) in enumerate(a.items()):
        x_b, y_b = b[name]
        if not torch.equal(y_a, y_b):
            return OpDifference(name, torch.equal(x_a, x_b), int(ulp_distance(y_a, y_b).max()),
                                float((y_a.float() - y_b.float()).abs().max()), i)
    return OpDifference(None, True, 0, 0.0, len(a))


@torch.inference_mode()
def cached_and_recomputed(model, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The last token's logits ``[B, V]`` two ways: prefill all but the last token, then one decode step
    (``[1, C]`` rows); and the whole sequence at once without a cache (``[T, C]`` rows, the last kept)."""
    _, cache = prefill(model, ids[:, :-1])
    cached = decode_step(model, ids[:, -1], cache)  # (B, V)
    recomputed = model(ids)[:, -1]  # (B, T, V) -> (B, V)
    return cached, recomputed


@torch.inference_mode()
def chunked_recompute(model, ids: torch.Tensor, chunks: Sequence[int]) -> list[torch.Tensor]:
    """Recompute ``ids`` ``[B, T]`` from scratch (a new, empty cache) in ``chunks`` (their sum is T):
    the first chunk as a prompt, each next one fed after it. Returns each chunk's last logits ``[B, V]``.

    ``[T]`` is the plain recompute; ``[n_prompt, 1, 1, ...]`` runs every product at the shape the
    cached run used, in the same order."""
    if sum(chunks) != ids.shape[1] or min(chunks) < 1:
        raise ValueError(f"chunks {list(chunks)} must be positive and sum to T = {ids.shape[1]}")
    cache, out, start = KVCache(), [], 0
    for n in chunks:
        out.append(model(ids[:, start:start + n], cache=cache)[:, -1])  # (B, n, V) -> (B, V)
        start += n
    return out


def last_row_vs_alone(w: torch.Tensor, x: torch.Tensor) -> list[bool]:
    """For T = 1 .. len(x): is the last row of ``x[:T] @ w.T`` bit for bit ``x[T-1:T] @ w.T``? (this CPU's kernels)"""
    return [torch.equal(torch.nn.functional.linear(x[:T], w)[-1:], torch.nn.functional.linear(x[T - 1:T], w))
            for T in range(1, x.shape[0] + 1)]
