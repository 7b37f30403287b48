"""Notebook 06's engine: the running batch in ONE left-padded ``KVCache``, served by a policy.

``PaddedBatchEngine(model, policy=..., max_batch=..., timeout_s=...)`` answers the engine API of
``engine.py``. Its ``policy`` decides who runs:

    fifo        one request at a time, in arrival order: prefill it, decode it to its end, next
    static      wait until ``max_batch`` requests are there (or the oldest has waited ``timeout_s``),
                run them as one left-padded batch to completion (finished rows ride along), next
    continuous  a request that has arrived is prefilled alone and joins the running batch before
                the next decode step; a finished row leaves at once (up to ``max_batch`` rows)

An iteration runs ONE forward pass: a prefill (a joining request, or a static batch) or a decode step
of every row. The batch's rows are left-padded to a common length: the cache's ``mask`` hides the
padding, and each row's next position is its count of real tokens (``valid_counts()``), exactly as in
a padded ``generate``. A joining request is prefilled alone, then its K/V (or the batch's) is padded
on the left to the longer length and the two are concatenated on the batch axis. A leaving row is
removed with ``index_select`` (``reorder``), and columns that have become padding in every row are
trimmed from the left. Every part of an iteration is timed (``calls`` in its record): ``prefill`` (from
the iteration's start: the left-padded ids, a new cache, the forward pass), ``sample``, then, once the
first tokens exist, ``join`` (pad and concatenate into the running batch) or ``setup`` (a new batch's
decode step), ``decode`` and ``leave``. A request's TTFT splits into waiting, setup + prefill (the
``prefill`` call) and the first sampling; ``join`` and ``setup`` come after its first token and count in
the gap before its second.
"""
from __future__ import annotations

import math
import time

import torch
import torch.nn.functional as F

from ..cache import KVCache
from ..generate import decode_stepper, left_pad, prefill
from ..sampling import sample
from ..validate import STEPS, check_choice, check_int
from .arrivals import is_real
from .costs import StepCostModel
from .engine import ServingEngine
from .run import Request

POLICIES = ("fifo", "static", "continuous")


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


class PaddedBatchEngine(ServingEngine):
    """Serve under ``policy`` (see the module) on one left-padded ``KVCache``, greedy, every part timed.

    ``model``: the course ``Decoder``; with ``costs`` (a ``StepCostModel``) no model runs and it may be
    None or a config (a replay: the tokens are placeholders, -1). ``max_batch``: the most rows a batch
    holds (static and continuous; fifo is 1). ``timeout_s``: static only, the longest the oldest waiting
    request waits for its batch to fill. ``step``: the decode step, ``"flat"`` or ``"modules"``.
    """

    def __init__(self, model, *, policy: str = "continuous", max_batch: int = 8, timeout_s: float = 0.05,
                 costs: StepCostModel | None = None, step: str = "flat") -> None:
        super().__init__(model, costs)
        self.policy = self.name = check_choice("policy", policy, POLICIES)
        self.max_batch = 1 if policy == "fifo" else check_int("max_batch", max_batch)
        if not is_real(timeout_s) or not math.isfinite(timeout_s) or timeout_s < 0:
            raise ValueError(f"timeout_s must be a finite number of seconds >= 0, got {timeout_s!r}")
        self.timeout_s, self.step_kind = float(timeout_s), check_choice("step", step, STEPS)
        self.rows: list[Request] = []  # the cache's rows, in order (a static batch's finished rows ride along)
        self.cache, self.last, self._decode = None, None, None  # the batch's K/V, last tokens (b,), decode step

    # -- one iteration ---------------------------------------------------------------------------
    def step(self) -> dict:
        """Run one iteration: a prefill if the policy admits requests now, else a decode step of every row."""
        if self.costs is not None:  # a replay runs no tensor code: no inference mode to enter (a third of its time)
            return self._step()
        with torch.inference_mode():  # the whole iteration: caches padded, stacked or trimmed are inference tensors too
            return self._step()

    def _step(self) -> dict:
        t0 = time.perf_counter()
        if not self.running and self.waiting:
            self.now = max(self.now, self._due())  # idle until work can start
        rec = {"start_s": self.now, "decode": [], "prefill": [], "prefill_tokens": 0, "preempted": [],
               "calls": []}
        group = self._admit()
        if group:
            self._prefill(group, rec, t0)
        elif self.rows:
            self._decode_rows(rec, t0)
        rec.update(end_s=self.now, running=[r.rid for r in self.running])
        self.steps.append(rec)
        return rec

    def _due(self) -> float:
        """When the next prefill may start: the first arrival (static: when its batch is full or times out)."""
        first = self.waiting[0].arrival_s
        if self.policy != "static":
            return first
        full = self.waiting[self.max_batch - 1].arrival_s if len(self.waiting) >= self.max_batch else math.inf
        return min(full, first + self.timeout_s)

    def _admit(self) -> list[Request]:
        """Who is prefilled in this iteration: a whole static batch, or one request joining (room permitting)."""
        if self.policy == "static":
            return [] if self.rows else [r for r in self.waiting[:self.max_batch] if r.arrival_s <= self.now]
        if self.waiting and self.waiting[0].arrival_s <= self.now and len(self.running) < self.max_batch:
            return self.waiting[:1]
        return []

    def _prefill(self, group: list[Request], rec: dict, t0: float) -> None:
        """Prefill ``group`` as one left-padded batch (continuous: one request) and pick its first tokens;
        the rows that still run then join the batch (a static batch: all of them, finished ones ride along)."""
        start = self.now
        for r in group:
            self.waiting.remove(r)
            r.start_s = start
        padded_tokens = len(group) * max(len(r.prompt) for r in group)  # the left-padded batch: b x T
        rec.update(prefill=[(r.rid, len(r.prompt)) for r in group], prefill_tokens=padded_tokens)
        if self.costs is not None:  # a replay: the iteration's modelled seconds, placeholder tokens
            prefill_s, sample_s, first = self.costs.seconds(0, padded_tokens), 0.0, [-1] * len(group)
        else:
            ids, mask = left_pad([r.prompt for r in group])  # (b, T) each
            alone = KVCache()
            logits, _ = prefill(self.model, ids, None if bool(mask.all()) else mask, alone)  # (b, V)
            t1 = time.perf_counter()
            nxt = sample(logits, 0.0)  # (b,) greedy
            t2 = time.perf_counter()
            prefill_s, sample_s, first = t1 - t0, t2 - t1, nxt.tolist()  # padded ids and new cache count as prefill
            rec["calls"] += [("prefill", padded_tokens, prefill_s), ("sample", len(group), sample_s)]
        self.running += group
        for r, tok in zip(group, first):
            r.prefill_s, r.sample_s = prefill_s, sample_s
            self._got_token(r, tok, start + prefill_s + sample_s)  # a first token that is its last: done at once
        self.now = start + prefill_s + sample_s
        if all(r.done for r in group):  # nothing joins (fifo and continuous: one request, done)
            return
        self.rows += group  # static: every row, finished ones ride along; continuous: the one request
        if self.costs is None:  # pad and concatenate the caches: what joining a running batch costs
            stacked = self.cache is not None
            self.cache = stack_caches(self.cache, alone) if stacked else alone
            self.last = torch.cat([self.last, nxt]) if stacked else nxt  # (b,)
            self._decode = decode_stepper(self.model, self.cache, self.step_kind)  # a new cache: a new decode step
            t3 = time.perf_counter()
            rec["calls"].append(("join" if stacked else "setup", len(self.rows), t3 - t0 - prefill_s - sample_s))
            self.now = start + (t3 - t0)

    def _decode_rows(self, rec: dict, t0: float) -> None:
        """One decode step of every row of the batch (static: finished rows too), then finished rows leave."""
        start = self.now
        rec["decode"] = [r.rid for r in self.rows]
        if self.costs is not None:
            dt = self.costs.seconds(len(self.rows), 0)
            tokens, when = [-1] * len(self.rows), start + dt
        else:
            self.last = sample(self._decode(self.last), 0.0)  # logits (b, V) -> next tokens (b,), greedy
            t1 = time.perf_counter()
            tokens, when = self.last.tolist(), start + (t1 - t0)
            rec["calls"].append(("decode", len(self.rows), t1 - t0))
        for r, tok in zip(list(self.rows), tokens):
            if not r.done:
                self._got_token(r, tok, when)
        if self.policy != "static":
            self._leave(rec)
        self._drop_batch_if_done()
        self.now = when if self.costs is not None else start + (time.perf_counter() - t0)

    def _leave(self, rec: dict) -> None:
        """Finished rows leave the batch: ``index_select`` on the batch axis, then trim the common padding."""
        keep = [i for i, r in enumerate(self.rows) if not r.done]
        if len(keep) == len(self.rows):
            return
        t0 = time.perf_counter()
        n_left = len(self.rows) - len(keep)
        self.rows = [self.rows[i] for i in keep]
        if self.costs is None and keep:
            index = torch.tensor(keep)
            self.cache.reorder(index)  # index_select on the batch axis, mask included
            self.cache = trim_left(self.cache)
            self.last = self.last[index]
            self._decode = decode_stepper(self.model, self.cache, self.step_kind)
        if self.costs is None:
            rec["calls"].append(("leave", n_left, time.perf_counter() - t0))

    def _drop_batch_if_done(self) -> None:
        """Once no row of the batch still runs, the cache goes (a static batch ends here)."""
        if not self.running:
            self.rows, self.cache, self.last, self._decode = [], None, None, None

    def _finish(self, r: Request, why: str) -> None:
        r.done = why  # a running row stays in the cache until the end of the iteration (static: of the batch)
        for queue in (self.running, self.waiting):
            if r in queue:
                queue.remove(r)
