"""Requests that arrive over time, and three ways a server can serve them.

A server does not get its requests all at once: they arrive one by one, at random times. The
usual model is a **Poisson process**: the gaps between arrivals are independent and exponential,
``rate`` requests per second on average (``poisson_arrivals``). Three policies (``serve``):

    fifo        one request at a time, in arrival order: prefill it, decode it to its end, next
    static      wait until ``max_batch`` requests are there (or the oldest has waited ``timeout_s``),
                run them as one left-padded batch to completion (finished rows ride along), next
    continuous  a request that has arrived is prefilled alone and joins the running batch before
                the next decode step; a finished row leaves at once (up to ``max_batch`` rows)

``serve`` runs the policy on an *engine* (``utils.batch_engine``) and keeps a clock: every engine
call returns the seconds it took and the clock advances by them, so arrivals interleave with the
engine's costs. With ``ModelEngine`` those are the measured times of real forward passes; with
``ReplayEngine`` they are costs measured earlier (for a fast slider).

Per request, from its arrival: TTFT = waiting + prefill (with setup) + first sampling; TPOT =
(last - first token) / (n - 1); ITL = each gap; end-to-end latency = last token - arrival.
Percentiles are numpy's default everywhere (linear interpolation between the sorted values).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .generate import generate
from .validate import check_choice, check_int

POLICIES = ("fifo", "static", "continuous")


def _is_real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _per_s(count: int, seconds: float) -> float:
    """``count`` per second (infinite for zero seconds: replayed costs of zero)."""
    return count / seconds if seconds > 0 else math.inf


def poisson_arrivals(n: int, rate: float, seed: int = 0) -> list[float]:
    """``n`` arrival times (seconds, increasing) of a Poisson process of ``rate`` requests/s.

    The gaps are exponential with mean 1 / rate. They are drawn once per ``seed`` as unit
    exponentials and divided by ``rate``, so another rate with the same seed stretches the
    same pattern in time: requests keep their order and relative spacing.
    """
    check_int("n", n)
    if not _is_real(rate) or not math.isfinite(rate) or rate <= 0:
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
    """Each request generated on its own (``generate``, greedy, batch 1): the tokens any policy must
    give (``.tokens[0]``), and the time one request takes alone (``.total_s``)."""
    return [generate(model, [p], n) for p, n in zip(workload.prompts, workload.max_new_tokens)]


@dataclass
class Served:
    """One request as the server handled it (seconds on the simulated clock)."""

    arrival_s: float
    start_s: float  # its prefill began: the waiting ends
    prefill_s: float  # setup + prefill (for a joining request: + joining the batch)
    sample_s: float  # picking its first token
    token_times: list[float]  # when each new token existed

    @property
    def wait_s(self) -> float:
        return self.start_s - self.arrival_s

    @property
    def ttft_s(self) -> float:
        return self.token_times[0] - self.arrival_s

    @property
    def tpot_s(self) -> float | None:
        n = len(self.token_times)
        return (self.token_times[-1] - self.token_times[0]) / (n - 1) if n > 1 else None

    @property
    def itl_s(self) -> list[float]:
        return np.diff(self.token_times).tolist()

    @property
    def e2e_s(self) -> float:
        return self.token_times[-1] - self.arrival_s


@dataclass
class Run:
    """What ``serve`` returns: every request's record, the tokens and the busy time of the engine."""

    policy: str
    requests: list[Served]
    tokens: list[list[int]] | None  # per request, its new tokens (None from a ReplayEngine)
    busy_s: float  # seconds the engine computed (the clock also idles between arrivals)

    @property
    def makespan_s(self) -> float:
        """From the first arrival to the last token."""
        return max(r.token_times[-1] for r in self.requests) - min(r.arrival_s for r in self.requests)

    def summary(self) -> dict:
        """p50 and p95 (numpy's default percentiles) of TTFT, TPOT, ITL and end-to-end latency, in
        seconds, and throughput: tokens/s and requests/s over the run, tokens/s while computing."""
        n_tokens = sum(len(r.token_times) for r in self.requests)
        out = {"policy": self.policy, "n": len(self.requests), "tokens": n_tokens}
        series = {"ttft": [r.ttft_s for r in self.requests], "e2e": [r.e2e_s for r in self.requests],
                  "wait": [r.wait_s for r in self.requests],
                  "tpot": [r.tpot_s for r in self.requests if r.tpot_s is not None],
                  "itl": [g for r in self.requests for g in r.itl_s]}  # ITL pools every gap of every request
        for key, xs in series.items():
            for q in (50, 95):
                out[f"{key}_p{q}_s"] = float(np.percentile(xs, q)) if xs else math.nan
        out.update(makespan_s=self.makespan_s, busy_s=self.busy_s, tokens_per_s=_per_s(n_tokens, self.makespan_s),
                   requests_per_s=_per_s(len(self.requests), self.makespan_s),
                   busy_tokens_per_s=_per_s(n_tokens, self.busy_s))
        return out

    def schedule(self) -> dict:
        """Per-request lists for ``utils.plots.plot_schedules`` (seconds), and the run's throughput."""
        rs = self.requests
        return {"arrival_s": [r.arrival_s for r in rs], "wait_s": [r.wait_s for r in rs],
                "prefill_s": [r.prefill_s for r in rs], "sample_s": [r.sample_s for r in rs],
                "ttft_s": [r.ttft_s for r in rs], "token_times": [r.token_times for r in rs],
                "makespan_s": self.makespan_s, "busy_s": self.busy_s, **self.summary()}


def serve(engine, max_new_tokens: Sequence[int], arrival_s: Sequence[float], policy: str, *,
          max_batch: int = 8, timeout_s: float = 0.05) -> Run:
    """Serve requests ``0 .. N-1`` (arriving at ``arrival_s``, sorted) on ``engine`` under ``policy``.

    ``max_batch``: the most rows a batch holds (static and continuous; fifo is 1). ``timeout_s``:
    static only, the longest the oldest waiting request waits for its batch to fill.
    """
    check_choice("policy", policy, POLICIES)
    check_int("max_batch", max_batch)
    n_new = [check_int("max_new_tokens", n) for n in max_new_tokens]
    arrival = [float(a) for a in arrival_s]
    if len(arrival) != len(n_new) or not arrival or arrival != sorted(arrival) or arrival[0] < 0:
        raise ValueError(f"arrival_s must be {len(n_new)} sorted times >= 0 (one per request), got {arrival_s!r}")
    if not _is_real(timeout_s) or not math.isfinite(timeout_s) or timeout_s < 0:
        raise ValueError(f"timeout_s must be a finite number of seconds >= 0, got {timeout_s!r}")
    engine.reset(len(n_new))
    if policy == "static":
        served, busy = _static(engine, n_new, arrival, max_batch, timeout_s)
    else:  # one at a time is continuous batching with room for one row
        served, busy = _continuous(engine, n_new, arrival, 1 if policy == "fifo" else max_batch)
    tokens = None if engine.tokens is None else [engine.tokens[i][:n] for i, n in enumerate(n_new)]
    return Run(policy, served, tokens, busy)


def _static(engine, n_new, arrival, max_batch, timeout_s):
    N, served, clock, busy, i = len(n_new), [None] * len(n_new), 0.0, 0.0, 0
    while i < N:
        full = arrival[i + max_batch - 1] if i + max_batch <= N else math.inf  # when the batch would be full
        start = max(clock, min(full, arrival[i] + timeout_s))
        group = [j for j in range(i, min(i + max_batch, N)) if arrival[j] <= start]
        prefill_s, sample_s = engine.start(group)  # one left-padded prefill for the whole group
        clock = start + prefill_s + sample_s
        busy += prefill_s + sample_s
        for j in group:
            served[j] = Served(arrival[j], start, prefill_s, sample_s, [clock])
        for _ in range(max(n_new[j] for j in group) - 1):  # to the longest row: the others ride along
            dt = engine.step()
            clock, busy = clock + dt, busy + dt
            for j in group:
                if len(served[j].token_times) < n_new[j]:
                    served[j].token_times.append(clock)
        i += len(group)
    return served, busy


def _continuous(engine, n_new, arrival, max_batch):
    N, served, clock, busy, i, running = len(n_new), [None] * len(n_new), 0.0, 0.0, 0, []

    def retire() -> float:  # finished rows leave the batch
        nonlocal running
        done = [j for j in running if len(served[j].token_times) >= n_new[j]]
        if not done:
            return 0.0
        running = [j for j in running if j not in done]
        return engine.leave(done)

    while i < N or running:
        if not running:
            clock = max(clock, arrival[i])  # idle until the next request
        while i < N and arrival[i] <= clock and len(running) < max_batch:  # join before the next step
            start = clock
            prefill_s, sample_s = engine.join(i)
            clock += prefill_s + sample_s
            busy += prefill_s + sample_s
            served[i] = Served(arrival[i], start, prefill_s, sample_s, [clock])
            running.append(i)
            i += 1
        dt = retire()  # a one-token request is done after its prefill
        if running:
            dt += engine.step()
            for j in running:
                served[j].token_times.append(clock + dt)
            dt += retire()
        clock, busy = clock + dt, busy + dt
    return served, busy
