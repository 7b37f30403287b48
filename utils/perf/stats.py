"""How the course times things on a shared CPU: interleaved rounds, samples with median and quartiles.

Timing on a shared CPU is noisy, so every comparison is measured **interleaved** (``time_interleaved``):
each round runs every variant once (A B C, A B C, ...) after a warm-up, so a burst of load from another
process slows one sample of each variant instead of every sample of one. Results are ``Stats``: the raw
samples with median and quartiles. Ratios are taken within one run (``paired_ratio``), where both sides
saw the same machine.
"""
from __future__ import annotations

import contextlib
import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping

import torch

from ..validate import check_int


def metrics(ttft_s: float, tpot_s: float, n_tokens: int, batch_size: int = 1) -> dict:
    """The request-level numbers that follow from TTFT and TPOT (seconds) for n new tokens per row.

    ``latency_s`` = TTFT + (n - 1) x TPOT (end to end, what one request waits in total);
    ``throughput`` = B x n / latency (new tokens per second, all rows);
    ``decode_throughput`` = B / TPOT (the rate while decoding, once the prefill is done).
    """
    check_int("n_tokens", n_tokens)
    check_int("batch_size", batch_size)
    if not ttft_s > 0 or not tpot_s > 0:
        raise ValueError(f"ttft_s and tpot_s must be > 0, got {ttft_s!r} and {tpot_s!r}")
    latency = ttft_s + (n_tokens - 1) * tpot_s
    return {"ttft_s": ttft_s, "tpot_s": tpot_s, "latency_s": latency,
            "throughput": batch_size * n_tokens / latency, "decode_throughput": batch_size / tpot_s}


# --- the timing loop and its samples -------------------------------------------------------------

@dataclass
class Stats:
    """Samples of one measured quantity (seconds, or a ratio) with median and spread."""

    samples: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def quantile(self, q: float) -> float:
        """Linear-interpolated quantile ``q`` in [0, 1] of the samples."""
        xs = sorted(self.samples)
        pos = q * (len(xs) - 1)
        lo, hi = math.floor(pos), math.ceil(pos)
        return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)

    @property
    def q1(self) -> float:
        return self.quantile(0.25)

    @property
    def q3(self) -> float:
        return self.quantile(0.75)

    @property
    def spread(self) -> float:
        """Interquartile range relative to the median (0.1 = the middle half lies within 10 %)."""
        return (self.q3 - self.q1) / self.median if self.median else 0.0

    def map(self, f: Callable[[float], float]) -> "Stats":
        """The same samples through ``f`` (e.g. seconds -> tokens per second)."""
        return Stats([f(x) for x in self.samples])

    def as_dict(self) -> dict:
        return {"median": self.median, "q1": self.q1, "q3": self.q3, "min": min(self.samples),
                "max": max(self.samples), "n": len(self.samples)}


def paired_ratio(a: Stats, b: Stats) -> Stats:
    """Round-by-round ``a / b`` of two interleaved measurements (sample i of each ran back to back)."""
    if len(a.samples) != len(b.samples):
        raise ValueError(f"paired samples need equal counts, got {len(a.samples)} and {len(b.samples)}")
    return Stats([x / y for x, y in zip(a.samples, b.samples)])


def time_interleaved(
    fns: Mapping[object, Callable[[], object]], repeats: int = 5, warmup: int = 1, progress=None
) -> dict[object, Stats]:
    """Wall-clock seconds of each function, ``repeats`` rounds of A B C ... after ``warmup`` rounds.

    The first calls pay for memory allocation and kernel selection, hence the warm-up.
    ``progress``: an optional tqdm-like bar, advanced by one per round.
    """
    check_int("repeats", repeats)
    check_int("warmup", warmup, minimum=0)
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    out = {name: Stats() for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            out[name].samples.append(time.perf_counter() - t0)
        if progress is not None:
            progress.update(1)
    return out


@contextlib.contextmanager
def torch_threads(n: int | None):
    """Run the block with ``n`` CPU threads for torch (None: leave the setting alone), then restore it.

    On a machine shared with other busy processes, one thread gives much steadier timings than
    several threads fighting for the same cores; on an idle laptop, more threads are faster.
    """
    if n is None:
        yield
        return
    check_int("threads", n)
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)
