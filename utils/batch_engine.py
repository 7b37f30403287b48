"""Engines for ``utils.arrivals.serve``: one running batch whose rows come and go.

An engine holds the batch being decoded and answers five calls, each returning the seconds it took:

    start(rows)  prefill these requests as one new left-padded batch      -> (prefill_s, sample_s)
    join(i)      prefill request i alone and add it to the running batch  -> (prefill_s, sample_s)
    step()       one decode step: every running row gets its next token   -> seconds
    leave(rows)  drop these requests' rows                                -> seconds
    reset(n)     forget everything; n requests will be served

``ModelEngine`` runs the model (greedy) and times every call with ``time.perf_counter``.
Continuous batching keeps **one** ``KVCache`` whose rows are left-padded to a common length:
the cache's ``mask`` hides the padding, and each row's next position is its count of real
tokens (``valid_counts()``), exactly as in a padded ``generate``. A joining request is prefilled
alone, then its K/V (or the batch's) is padded on the left to the longer length and the two are
concatenated on the batch axis. A leaving row is removed with ``index_select`` (``reorder``),
and columns that have become padding in every row are trimmed from the left.

``ReplayEngine`` replays costs measured by a ``ModelEngine`` (``StepCosts.fit``: the mean cost at
each measured size): no model runs, so a whole schedule takes microseconds, for a slider.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from .cache import KVCache
from .generate import decode_stepper, left_pad, prefill
from .sampling import sample
from .validate import check_int


def _cache_from(ks: list[torch.Tensor], vs: list[torch.Tensor], mask: torch.Tensor) -> KVCache:
    """A ``KVCache`` holding these per-layer K, V ``[B, H_kv, T, d_h]`` and padding mask ``[B, T]``."""
    cache = KVCache()
    for layer, (k, v) in enumerate(zip(ks, vs)):
        cache.update(layer, k, v)
    cache.append_mask(None if bool(mask.all()) else mask, mask.shape[1])
    return cache


def _padded(cache: KVCache, T: int) -> tuple[list[torch.Tensor], list[torch.Tensor], torch.Tensor]:
    """The cache's K, V and mask with ``T - seq_len`` padding columns added on the left."""
    n, B, S = T - cache.seq_len, cache.batch_size, cache.seq_len
    device = cache.k[0].device
    mask = cache.mask if cache.mask is not None else torch.ones(B, S, dtype=torch.bool, device=device)
    pad = (0, 0, n, 0)  # the last dim (d_h) untouched, n zeros before the time axis (dim 2)
    return ([F.pad(k, pad) for k in cache.k], [F.pad(v, pad) for v in cache.v],  # (B, H_kv, T, d_h)
            torch.cat([torch.zeros(B, n, dtype=torch.bool, device=device), mask], dim=1))  # (B, T): False on padding


def stack_caches(a: KVCache, b: KVCache) -> KVCache:
    """Rows of ``a`` then rows of ``b`` in one cache, the shorter side left-padded (mask False)."""
    T = max(a.seq_len, b.seq_len)
    (ka, va, ma), (kb, vb, mb) = _padded(a, T), _padded(b, T)
    return _cache_from([torch.cat(p, dim=0) for p in zip(ka, kb)],  # (B_a + B_b, H_kv, T, d_h)
                       [torch.cat(p, dim=0) for p in zip(va, vb)], torch.cat([ma, mb], dim=0))


def trim_left(cache: KVCache) -> KVCache:
    """Drop the leading columns that are padding in every row (after the rows that needed them left)."""
    if cache.mask is None:
        return cache
    first = int(cache.mask.any(dim=0).to(torch.int8).argmax())  # first column holding a real token in some row
    if first == 0:
        return cache
    return _cache_from([k[:, :, first:] for k in cache.k], [v[:, :, first:] for v in cache.v],
                       cache.mask[:, first:])  # (B, H_kv, T - first, d_h)


class ModelEngine:
    """The real engine: the model's forward passes, greedy, each call timed.

    ``prompts``: token ids per request. ``tokens[i]`` collects request i's new tokens (in a
    static batch a finished row keeps decoding: ``serve`` keeps only the tokens it asked for).
    ``log`` keeps every measured call as ``(kind, size, seconds)`` across runs, for ``StepCosts.fit``.
    """

    def __init__(self, model, prompts: list[list[int]], step: str = "flat") -> None:
        empty = [i for i, p in enumerate(prompts) if len(p) == 0]
        if not prompts or empty:
            raise ValueError(f"ModelEngine needs prompts of at least one token: got {len(prompts)} prompt(s), "
                             f"empty ones at {empty}")
        self.model, self.prompts, self.step_kind = model, [list(p) for p in prompts], step
        self.log: list[tuple[str, int, float]] = []
        self.reset(len(prompts))

    def reset(self, n: int) -> None:
        if n != len(self.prompts):
            raise ValueError(f"this engine holds {len(self.prompts)} prompts, asked to serve {n} requests")
        self.tokens: list[list[int]] = [[] for _ in range(n)]
        self.rows: list[int] = []  # request index of each cache row, in order
        self.cache, self.last, self._step = None, None, None

    def _take(self, logits: torch.Tensor, rows: list[int]) -> torch.Tensor:
        nxt = sample(logits, 0.0)  # (b,) greedy
        for i, tok in zip(rows, nxt.tolist()):
            self.tokens[i].append(tok)
        return nxt

    @torch.inference_mode()
    def start(self, rows: list[int]) -> tuple[float, float]:
        t0 = time.perf_counter()
        ids, mask = left_pad([self.prompts[i] for i in rows])  # (b, T) each
        self.cache, self.rows = KVCache(), list(rows)
        self._step = decode_stepper(self.model, self.cache, self.step_kind)  # setup: part of the prefill's time
        logits, _ = prefill(self.model, ids, None if bool(mask.all()) else mask, self.cache)  # (b, V)
        t1 = time.perf_counter()
        self.last = self._take(logits, self.rows)
        t2 = time.perf_counter()
        self.log += [("prefill", ids.numel(), t1 - t0), ("sample", len(rows), t2 - t1)]
        return t1 - t0, t2 - t1

    @torch.inference_mode()
    def join(self, i: int) -> tuple[float, float]:
        t0 = time.perf_counter()
        alone = KVCache()
        logits, _ = prefill(self.model, torch.tensor([self.prompts[i]]), None, alone)  # (1, V)
        t_prefill = time.perf_counter()
        joined = self.cache is not None
        self.cache = stack_caches(self.cache, alone) if joined else alone
        self.rows.append(i)
        self._step = decode_stepper(self.model, self.cache, self.step_kind)
        t1 = time.perf_counter()
        nxt = self._take(logits, [i])
        self.last = nxt if self.last is None else torch.cat([self.last, nxt])  # (b,)
        t2 = time.perf_counter()
        self.log += [("prefill", len(self.prompts[i]), t_prefill - t0), ("sample", 1, t2 - t1)]
        if joined:  # padding and concatenating the caches: what joining a running batch costs
            self.log.append(("join", len(self.rows), t1 - t_prefill))
        return t1 - t0, t2 - t1

    @torch.inference_mode()
    def step(self) -> float:
        t0 = time.perf_counter()
        self.last = self._take(self._step(self.last), self.rows)  # logits (b, V) -> next tokens (b,)
        dt = time.perf_counter() - t0
        self.log.append(("decode", len(self.rows), dt))
        return dt

    @torch.inference_mode()
    def leave(self, rows: list[int]) -> float:
        t0 = time.perf_counter()
        keep = [j for j, r in enumerate(self.rows) if r not in rows]
        if not keep:
            self.cache, self.last, self.rows = None, None, []
        else:
            index = torch.tensor(keep)
            self.cache.reorder(index)  # index_select on the batch axis, mask included
            self.cache = trim_left(self.cache)
            self.last, self.rows = self.last[index], [self.rows[j] for j in keep]
            self._step = decode_stepper(self.model, self.cache, self.step_kind)
        dt = time.perf_counter() - t0
        self.log.append(("leave", len(rows), dt))
        return dt


def _means(points: list[tuple[int, float]]) -> tuple[tuple[int, float], ...]:
    """The mean seconds at each size, sizes increasing."""
    by_size: dict[int, list[float]] = {}
    for size, s in points:
        by_size.setdefault(size, []).append(s)
    return tuple((x, statistics.fmean(by_size[x])) for x in sorted(by_size))


def _line(means: tuple[tuple[int, float], ...]) -> tuple[float, float]:
    """(fixed, per unit) of a straight line through the means, neither negative."""
    xs, ys = [x for x, _ in means], [y for _, y in means]
    if len(xs) == 1:
        return 0.0, ys[0] / xs[0]
    slope, fixed = np.polyfit(xs, ys, 1)
    if slope < 0:
        return float(np.mean(ys)), 0.0
    return max(float(fixed), 0.0), float(slope)


def _replayed(size: int, means: tuple[tuple[int, float], ...], fixed: float, per_unit: float) -> float:
    """Seconds at ``size``: the measured mean there, interpolated linearly between the two nearest
    measured sizes; outside the measured range (or with nothing measured), the straight line."""
    if means and means[0][0] <= size <= means[-1][0]:
        return float(np.interp(size, [x for x, _ in means], [y for _, y in means]))
    return fixed + per_unit * size


@dataclass(frozen=True)
class StepCosts:
    """Per-call costs (seconds) measured by a ``ModelEngine``, for a ``ReplayEngine``.

    A prefill costs what the log measured for its (padded) tokens and a decode step what it measured
    for its rows: the mean at each measured size, interpolated between sizes. So the replay gives
    back the measured costs where it has them: measured step times need not lie on a straight line
    in the rows, and a line through them misses at the ends. The mean, not the median: a queue adds
    the costs up, so a replay of the measured run must give back their sum, slow calls included.
    Beyond the measured sizes: the straight line through the means, prefill = fixed + per token x
    tokens, decode = fixed + per row x rows. Sampling, joining and leaving: their means.
    """

    prefill_fixed_s: float
    prefill_per_token_s: float
    decode_fixed_s: float
    decode_per_row_s: float
    sample_s: float
    join_s: float
    leave_s: float
    prefill_by_tokens: tuple[tuple[int, float], ...] = ()  # (padded tokens, mean seconds), tokens increasing
    decode_by_rows: tuple[tuple[int, float], ...] = ()  # (rows, mean seconds), rows increasing

    @classmethod
    def fit(cls, log: list[tuple[str, int, float]]) -> "StepCosts":
        kinds = {kind: _means([(size, s) for k, size, s in log if k == kind]) for kind in ("prefill", "decode")}
        if not kinds["prefill"] or not kinds["decode"]:
            raise ValueError("StepCosts.fit needs a log with prefills and decode steps: serve some requests first")

        def mean(kind: str) -> float:
            xs = [s for k, _, s in log if k == kind]
            return statistics.fmean(xs) if xs else 0.0

        return cls(*_line(kinds["prefill"]), *_line(kinds["decode"]), mean("sample"), mean("join"), mean("leave"),
                   kinds["prefill"], kinds["decode"])

    def prefill(self, tokens: int) -> float:
        return _replayed(tokens, self.prefill_by_tokens, self.prefill_fixed_s, self.prefill_per_token_s)

    def decode(self, rows: int) -> float:
        return _replayed(rows, self.decode_by_rows, self.decode_fixed_s, self.decode_per_row_s)


class ReplayEngine:
    """Serves on measured costs instead of the model: the same calls, no forward pass, no tokens."""

    tokens = None

    def __init__(self, costs: StepCosts, prompt_lens: list[int]) -> None:
        self.costs, self.prompt_lens = costs, [check_int("prompt_lens", n) for n in prompt_lens]
        self.reset(len(self.prompt_lens))

    def reset(self, n: int) -> None:
        if n != len(self.prompt_lens):
            raise ValueError(f"this engine holds {len(self.prompt_lens)} prompts, asked to serve {n} requests")
        self.rows: list[int] = []

    def start(self, rows: list[int]) -> tuple[float, float]:
        self.rows = list(rows)
        return self.costs.prefill(len(rows) * max(self.prompt_lens[i] for i in rows)), self.costs.sample_s

    def join(self, i: int) -> tuple[float, float]:
        self.rows.append(i)
        join = self.costs.join_s if len(self.rows) > 1 else 0.0
        return self.costs.prefill(self.prompt_lens[i]) + join, self.costs.sample_s

    def step(self) -> float:
        return self.costs.decode(len(self.rows))

    def leave(self, rows: list[int]) -> float:
        self.rows = [r for r in self.rows if r not in rows]
        return self.costs.leave_s
