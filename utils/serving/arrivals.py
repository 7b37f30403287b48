"""Requests that arrive over time: Poisson arrival times, and the prompts and lengths they carry.

A server does not get its requests all at once: they arrive one by one, at random times. The usual
model is a **Poisson process**: the gaps between arrivals are independent and exponential, ``rate``
requests per second on average (``poisson_arrivals``). A ``Workload`` is what the requests hold (a
prompt and how many new tokens each wants); ``solo_runs`` generates each one alone, the tokens every
engine must give back and the time one request takes on its own.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from ..generate import generate
from ..validate import check_int


def is_real(x) -> bool:
    """A real number (numpy's included), not a bool."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def poisson_arrivals(n: int, rate: float, seed: int = 0) -> list[float]:
    """``n`` arrival times (seconds, increasing) of a Poisson process of ``rate`` requests/s.

    The gaps are exponential with mean 1 / rate. They are drawn once per ``seed`` as unit
    exponentials and divided by ``rate``, so another rate with the same seed stretches the
    same pattern in time: requests keep their order and relative spacing.
    """
    check_int("n", n)
    if not is_real(rate) or not math.isfinite(rate) or rate <= 0:
        raise ValueError(f"rate must be a finite number of requests per second > 0, got {rate!r}")
    check_int("seed", seed, minimum=0)
    gaps = np.random.default_rng(seed).standard_exponential(n) / rate  # (n,) seconds between arrivals
    return np.cumsum(gaps).tolist()


@dataclass(frozen=True)
class Workload:
    """The requests' contents: a prompt (token ids) and the number of new tokens each wants."""

    prompts: list[list[int]]
    max_new_tokens: list[int]

    def __len__(self) -> int:
        return len(self.prompts)


def random_workload(n: int, vocab_size: int, prompt_lens: tuple[int, int] = (8, 32),
                    new_tokens: tuple[int, int] = (16, 48), seed: int = 0) -> Workload:
    """``n`` requests with seeded random prompts and lengths, each drawn uniformly from the
    inclusive ranges ``prompt_lens`` and ``new_tokens`` (speed depends on lengths, not on ids)."""
    check_int("n", n)
    check_int("vocab_size", vocab_size)
    for name, (lo, hi) in (("prompt_lens", prompt_lens), ("new_tokens", new_tokens)):
        check_int(f"{name}[0]", lo)
        check_int(f"{name}[1]", hi, minimum=lo)
    rng = np.random.default_rng(seed)
    lens = rng.integers(prompt_lens[0], prompt_lens[1] + 1, n)
    return Workload([rng.integers(0, vocab_size, int(T)).tolist() for T in lens],
                    rng.integers(new_tokens[0], new_tokens[1] + 1, n).tolist())


def solo_runs(model, workload: Workload) -> list:
    """Each request generated on its own (``generate``, greedy, batch 1): the tokens any engine must
    give (``.tokens[0]``), and the time one request takes alone (``.total_s``)."""
    return [generate(model, [p], n) for p, n in zip(workload.prompts, workload.max_new_tokens)]
