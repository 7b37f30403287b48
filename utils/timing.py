"""Measuring prefill and decode: medians of repeats, and the timeline of one generation.

Wall-clock times on a shared CPU are noisy, so every helper here warms up first (the first
call pays for memory allocation and kernel selection) and reports the **median** of several
repeats, which one slow outlier cannot move. Times are in seconds; plots show milliseconds.

    time_prefill(model, T_values)          median seconds of one prefill, per prompt length T  (TTFT)
    (one decode step with T cached tokens, TPOT: ``utils.perf.tpot_vs_context``, as the benchmark)
    timeline(result)                       prefill + per-step decode segments of a ``generate`` result
    median_timeline(results)               the same, each segment the median (or min) over several runs
    median_time(fn), median_times(fns)     the building blocks (``median_times`` interleaves the repeats)
    torch_threads(n)                       run a block with n torch CPU threads
"""
from __future__ import annotations

import contextlib
import statistics
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import torch

from .generate import GenerationResult, prefill


@contextlib.contextmanager
def torch_threads(n: int | None):
    """Run the block with ``n`` CPU threads for torch (None: leave the setting alone), then restore it.

    On a machine shared with other busy processes, one thread gives much steadier timings than
    several threads fighting for the same cores; on an idle laptop, more threads are faster.
    """
    if n is None:
        yield
        return
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"threads must be None or an int >= 1, got {n!r}")
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def median_time(fn: Callable[[], object], repeats: int = 5, warmup: int = 1) -> float:
    """Median wall time in seconds of ``fn()`` over ``repeats`` calls, after ``warmup`` untimed calls."""
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an int >= 1, got {repeats!r}")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be an int >= 0, got {warmup!r}")
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def median_times(fns: Sequence[Callable[[], object]], repeats: int = 5, warmup: int = 1) -> list[float]:
    """Median wall time in seconds of each of ``fns``, measured **interleaved**.

    Round ``r`` times every function once, then round ``r + 1`` starts: a burst of load from
    another process then slows one repeat of several functions instead of every repeat of one
    function, and the medians stay comparable with each other (a curve stays a curve).
    """
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an int >= 1, got {repeats!r}")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be an int >= 0, got {warmup!r}")
    for fn in fns:
        for _ in range(warmup):
            fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def random_prompt(vocab_size: int, T: int, batch_size: int = 1, seed: int = 0) -> torch.Tensor:
    """Seeded random token ids ``[B, T]`` (timing does not depend on which tokens they are)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab_size, (batch_size, T), generator=g)  # (B, T)


def _check_lengths(model, T_values: Sequence[int]) -> list[int]:
    Ts = [int(T) for T in T_values]
    if not Ts or min(Ts) < 1:
        raise ValueError(f"T_values must be non-empty lengths >= 1, got {list(T_values)!r}")
    if max(Ts) > model.cfg.max_seq_len:
        raise ValueError(f"length {max(Ts)} exceeds the model's max_seq_len={model.cfg.max_seq_len}")
    return Ts


@torch.inference_mode()
def time_prefill(
    model,
    T_values: Sequence[int],
    repeats: int = 5,
    *,
    batch_size: int = 1,
    warmup: int = 1,
    seed: int = 0,
    threads: int | None = None,
) -> list[float]:
    """Median seconds of one ``prefill`` of a ``[batch_size, T]`` prompt, for each T in ``T_values``.

    This is the time to first token (TTFT) without the sampling of the first token (which costs
    microseconds). Returns a list aligned with ``T_values``. Each call starts from an empty cache.
    The lengths are timed interleaved (``median_times``). ``threads``: torch CPU threads during
    the measurement (see ``torch_threads``).
    """
    model.eval()
    Ts = _check_lengths(model, T_values)
    prompts = [random_prompt(model.cfg.vocab_size, T, batch_size, seed) for T in Ts]  # each (B, T)
    fns = [lambda ids=ids: prefill(model, ids) for ids in prompts]
    with torch_threads(threads):
        return median_times(fns, repeats, warmup)


@dataclass(frozen=True)
class Segment:
    """One bar of a generation timeline: ``phase`` is ``"prefill"`` or ``"decode"``.

    ``step`` 0 is the prefill (which yields the first new token); decode step s yields token s + 1.
    ``token`` is the id produced at the end of the segment (or None if unknown).
    """

    phase: str
    step: int
    start_s: float
    duration_s: float
    token: int | None = None

    @property
    def end_s(self) -> float:
        return self.start_s + self.duration_s


def timeline(result: GenerationResult, row: int = 0) -> list[Segment]:
    """The segments of ``generate``'s ``result`` laid end to end in time.

    The first segment is ``ttft_s`` (prefill + picking the first token); each following one is
    a decode step from ``step_times_s`` (feed the token, read the cache, pick the next token).
    ``row`` picks which row's tokens label the segments.
    """
    if result.ttft_s is None:
        return []
    n = result.tokens.shape[1]
    tokens = result.tokens[row].tolist() if n else []
    durations = [result.ttft_s] + list(result.step_times_s)
    segments, t = [], 0.0
    for s, d in enumerate(durations):
        segments.append(Segment("prefill" if s == 0 else "decode", s, t, d, tokens[s] if s < len(tokens) else None))
        t += d
    return segments


def median_timeline(results: Sequence[GenerationResult], row: int = 0, stat: str = "median") -> list[Segment]:
    """One timeline from several runs of the same generation: each segment's median (or minimum).

    A single run on a shared CPU can catch a 10 ms pause of the scheduler in any step; the
    per-step median over a few runs cannot (as long as fewer than half the runs are hit).
    ``stat="min"`` keeps each segment's fastest run instead: pauses only ever add time, so on a
    very busy machine the minimum is the cleanest estimate of what a step itself costs.
    The runs must have produced the same number of tokens (greedy decoding of the same prompt
    does); the tokens are taken from the first run.
    """
    if not results:
        raise ValueError("median_timeline needs at least one GenerationResult")
    if stat not in ("median", "min"):
        raise ValueError(f"stat={stat!r}; choose 'median' or 'min'")
    pick = statistics.median if stat == "median" else min
    runs = [timeline(r, row) for r in results]
    n = len(runs[0])
    if any(len(segs) != n for segs in runs):
        raise ValueError(f"the runs have different lengths {[len(s) for s in runs]}; use the same prompt and greedy decoding")
    segments, t = [], 0.0
    for i, first in enumerate(runs[0]):
        d = pick([segs[i].duration_s for segs in runs])
        segments.append(Segment(first.phase, first.step, t, d, first.token))
        t += d
    return segments
