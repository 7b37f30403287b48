"""Per-step decode time against context length, for a loop with the KV cache and one without.

A whole generation loop of 2 000 tokens would take too long in a notebook, so we measure single
steps at chosen context lengths T (T tokens already in the context, one new token):

* **cached**: prefill the longest context once (not timed); for each T, take its first T
  positions (exactly the cache a T-token prompt leaves) and time one decode step of one new
  token, the step ``generate`` runs (``decode_stepper``; ``utils.perf.tpot_vs_context``
  measures the same with a new prefill for every T);
* **no cache**: one forward pass over all ``T + 1`` tokens, which is what every step of a loop
  without a cache does (it keeps only the last position's logits).

Wall-clock times on a shared CPU are noisy: each point is the median of several repeats (ms).
"""
from __future__ import annotations

import copy
import statistics
import time
from dataclasses import dataclass
from typing import Sequence

import torch

from .cache import KVCache
from .generate import decode_stepper, prefill
from .timing import median_time, random_prompt, torch_threads


@dataclass
class StepTimes:
    """Median ms per decode step at each context length T (None where a loop was not measured)."""

    context_lens: list[int]
    cached_ms: list[float]
    no_cache_ms: list[float | None]
    repeats: int
    threads: int | None


@torch.inference_mode()
def time_cached_steps(model, context_lens: Sequence[int], repeats: int = 5, *, warmup: int = 1,
                      seed: int = 0) -> list[float]:
    """Median seconds of one cached decode step with T positions in the cache, for each T.

    One prefill of the longest context serves every T: its first T positions are exactly the
    cache a T-token prompt leaves (causal attention: later tokens never change them). The
    lengths are measured in turn, round after round, so a burst of load on a shared machine
    slows every T alike instead of one of them.
    """
    Ts = [int(T) for T in context_lens]
    if not Ts or min(Ts) < 1 or max(Ts) + 1 > model.cfg.max_seq_len:
        raise ValueError(f"context lengths must lie in [1, max_seq_len - 1 = {model.cfg.max_seq_len - 1}], got {Ts}")
    ids = random_prompt(model.cfg.vocab_size, max(Ts) + 1, seed=seed)  # (1, T_max + 1)
    full = KVCache()
    prefill(model, ids[:, : max(Ts)], cache=full)
    samples: dict[int, list[float]] = {T: [] for T in Ts}
    for round_ in range(warmup + repeats):
        for T in Ts:
            # Two steps on two fresh copies: the first (untimed) brings this T's working set back
            # into the CPU caches after the other lengths, as the previous step of a real loop would.
            for timed in (False, True):
                kv = copy.copy(full)
                kv.crop(T)  # a cache of the first T positions (views: `full` itself is left as it is)
                step = decode_stepper(model, kv)  # generate's step (set-up, not timed)
                t0 = time.perf_counter()
                step(ids[:, T])  # reads T cached positions, appends one
                if timed and round_ >= warmup:
                    samples[T].append(time.perf_counter() - t0)
    return [statistics.median(samples[T]) for T in Ts]


@torch.inference_mode()
def time_uncached_step(model, T: int, repeats: int = 5, *, warmup: int = 1, seed: int = 0) -> float:
    """Median seconds of one step of a loop without cache: a forward pass over ``T + 1`` tokens."""
    if T + 1 > model.cfg.max_seq_len:
        raise ValueError(f"T + 1 = {T + 1} exceeds the model's max_seq_len={model.cfg.max_seq_len}")
    ids = random_prompt(model.cfg.vocab_size, T + 1, seed=seed)  # (1, T + 1): history + new token
    return median_time(lambda: model(ids)[:, -1], repeats, warmup)  # every position recomputed


def step_times_vs_context(
    model,
    context_lens: Sequence[int],
    *,
    repeats: int = 5,
    no_cache_repeats: int | None = None,
    no_cache_max: int | None = None,
    threads: int | None = 1,
) -> StepTimes:
    """Median ms of one cached and one uncached decode step at every context length T.

    ``no_cache_max``: skip the (slow) uncached measurement above this T. ``no_cache_repeats``:
    fewer repeats for the uncached loop (default ``repeats``). ``threads``: torch CPU threads
    while measuring (1 by default: steadier on a machine shared with other work).
    """
    model.eval()
    Ts = [int(T) for T in context_lens]
    no_cache: list[float | None] = []
    with torch_threads(threads):
        cached = [s * 1e3 for s in time_cached_steps(model, Ts, repeats)]
        for T in Ts:
            if no_cache_max is not None and T > no_cache_max:
                no_cache.append(None)
            else:
                # no warm-up call: the cached measurement's prefill already ran the model on long inputs
                no_cache.append(time_uncached_step(model, T, no_cache_repeats or repeats, warmup=0) * 1e3)
    return StepTimes(Ts, cached, no_cache, repeats, threads)
