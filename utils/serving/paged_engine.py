"""Notebook 11's engine: continuous batching with chunked prefill, on a paged KV cache.

``PagedEngine(model, n_blocks=..., block_size=..., max_batch_tokens=..., prefill_chunk=...)`` keeps
every request's K/V in one ``BlockPool`` and runs **iterations**. Each ``step()``:

1. **decode first**: every running request that has its prompt done feeds its last token (1 token).
   When the pool has no block for one of them, the request admitted *last* is **preempted**: its
   blocks go back to the pool and it waits at the front of the queue; when it is admitted again, its
   prompt and the tokens it already produced are prefilled again (recompute), so nothing is lost;
2. **then prefill chunks** within what is left of the token budget ``max_batch_tokens``: requests part
   way through their prompt first, then new arrivals in arrival order (up to ``max_batch`` running).
   A prompt goes in chunks of at most ``prefill_chunk`` tokens, so one long prompt cannot stall every
   running decode for the whole of its prefill (it pays with a later first token instead);
3. runs the model: one forward for the decode rows (``[B, 1]``) and one for the chunks (left-padded),
   each over a ``PagedKVCache.view`` of those rows' blocks; a row whose prompt is done gets its next
   token (greedy: ``argmax``). Each pass is timed (``pass_s`` in the record): real engines pack decodes
   and chunks into one pass, and ``one_pass_s`` estimates what an iteration would then have taken.

With ``prefix_caching`` a new request reuses the pool's blocks of its prompt's prefix
(``BlockPool.match_prefix``) and prefills only the rest; when the whole prompt is cached its last
token is still run, for the first new token's logits. The clock and ``run()``: ``engine.py``.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import torch

from ..i18n import tr
from ..block_pool import BlockPool, block_keys
from ..flat_decode import check_flat, flat_decode_step, flat_weights
from ..generate import left_pad
from ..paged import PagedKVCache
from ..validate import check_int
from .costs import StepCostModel
from .engine import ServingEngine
from .run import Request


@dataclass(eq=False)
class PagedRequest(Request):
    """A request and its blocks in the pool."""

    table: list[int] = field(default_factory=list)  # its blocks in the pool
    n_cached: int = 0  # tokens of prompt + out whose K/V the blocks hold
    hit_tokens: int = 0  # prompt tokens found in the prefix cache (its first admission)
    keys: list[str] = field(default_factory=list, repr=False)  # prefix keys of its prompt's full blocks
    n_published: int = 0  # of those, blocks made findable so far
    next_token: int | None = field(default=None, repr=False)  # picked by the last forward, if its prompt is done

    @property
    def sequence(self) -> list[int]:
        return self.prompt + self.out

    @property
    def todo(self) -> int:
        """Tokens to run before its next token can be picked (1 while decoding)."""
        return len(self.prompt) + len(self.out) - self.n_cached


class PagedEngine(ServingEngine):
    """Continuous batching with chunked prefill and prefix caching over one block pool (see the module).
    ``model``: the course ``Decoder``, or with ``costs`` its config alone (a replay)."""

    name = "paged engine"

    def __init__(self, model, *, n_blocks: int, block_size: int = 16, max_batch_tokens: int = 64,
                 prefill_chunk: int | None = 32, max_batch: int = 16, prefix_caching: bool = True,
                 costs: StepCostModel | None = None, dtype=None) -> None:
        super().__init__(model, costs)
        check_int("max_batch_tokens", max_batch_tokens)
        check_int("max_batch", max_batch)
        if max_batch_tokens < max_batch:
            raise ValueError(f"max_batch_tokens ({max_batch_tokens}) must be >= max_batch ({max_batch}): every "
                             "running request decodes one token per iteration")
        self.prefill_chunk = math.inf if prefill_chunk is None else check_int("prefill_chunk", prefill_chunk)
        if not isinstance(prefix_caching, bool):
            raise ValueError(tr("prefix_caching must be True or False, got {value!r}", value=prefix_caching))
        self.prefix_caching = prefix_caching
        self.max_batch_tokens, self.max_batch = max_batch_tokens, max_batch
        if dtype is None and costs is None:
            dtype = model.lm_head.weight.dtype
        self.pool = BlockPool(self.cfg, n_blocks, block_size, dtype=dtype)
        self._flat = None  # the flat decode step's weights, when it computes what the modules do
        if costs is None:
            try:
                check_flat(model, PagedKVCache(pool=self.pool))
                self._flat = flat_weights(model)
            except ValueError:  # a hook, train mode, explicit attention: decode through the modules
                pass

    def _check_request(self, prompt: list[int], max_new_tokens: int) -> None:
        total, size = len(prompt) + max_new_tokens, self.pool.block_size
        if -(-total // size) > self.pool.n_blocks:
            raise ValueError(f"this request needs up to {-(-total // size)} blocks of {size} tokens but the whole "
                             f"pool has {self.pool.n_blocks}: it could never finish (make n_blocks larger)")

    def _new_request(self, rid, prompt, max_new_tokens, arrival_s, eos) -> PagedRequest:
        keys = block_keys(prompt, self.pool.block_size) if self.prefix_caching else []
        return PagedRequest(rid, prompt, max_new_tokens, arrival_s, eos, keys=keys)

    # -- one iteration ---------------------------------------------------------------------------
    def step(self) -> dict:
        """Run one iteration (see the module docstring); returns its record (also kept in ``steps``)."""
        if not self.running and self.waiting and min(r.arrival_s for r in self.waiting) > self.now:
            self.now = min(r.arrival_s for r in self.waiting)  # idle until the next arrival
        t0, start = time.perf_counter(), self.now
        decode, chunks, preempted = self._schedule()
        passes = {}  # measured seconds of each forward pass (a replay measures none)
        for kind, rows in (("decode", [(r, 1) for r in decode]), ("prefill", chunks)):
            if rows:
                t_pass = time.perf_counter()
                self._forward(rows)
                passes[kind] = time.perf_counter() - t_pass
        n_tokens = sum(n for _, n in chunks)
        dt = (self.costs.seconds(len(decode), n_tokens) if self.costs is not None
              else time.perf_counter() - t0)
        self.now = start + dt
        for r, n in [(r, 1) for r in decode] + chunks:
            self._advance(r, n)
        rec = {"start_s": start, "end_s": self.now, "decode": [r.rid for r in decode],
               "prefill": [(r.rid, n) for r, n in chunks], "prefill_tokens": n_tokens, "preempted": preempted,
               "running": [r.rid for r in self.running], "free_blocks": self.pool.n_free()}
        if self.costs is None:
            rec["pass_s"] = passes
        self.steps.append(rec)
        return rec

    # -- inside -----------------------------------------------------------------------------------
    def _schedule(self):
        budget, taken, plan, preempted = self.max_batch_tokens, 0, {}, []  # plan: request -> tokens this step

        def room(r: PagedRequest, n: int) -> bool:
            """Make room in the pool for ``r``'s ``n`` tokens by preempting the requests admitted last
            (unscheduling them if they were planned); False if ``r`` itself had to go."""
            nonlocal budget, taken
            while taken + self.pool.blocks_needed(r.table, r.n_cached, n) > self.pool.n_free():
                victim = self.running[-1]
                if victim in plan:
                    m = plan.pop(victim)
                    budget, taken = budget + m, taken - self.pool.blocks_needed(victim.table, victim.n_cached, m)
                self._preempt(victim)
                preempted.append(victim.rid)
                if victim is r:
                    return False
            return True

        def take(r: PagedRequest, n: int) -> None:
            nonlocal budget, taken
            plan[r] = n
            budget, taken = budget - n, taken + self.pool.blocks_needed(r.table, r.n_cached, n)

        # 1. decodes, in admission order
        for r in [r for r in self.running if r.out and r.todo == 1]:
            if budget >= 1 and r in self.running and room(r, 1):
                take(r, 1)
        # 2. prefill chunks of running requests part way through their prompt (or a recompute)
        for r in [r for r in self.running if r not in plan and r.todo > 0]:
            n = int(min(r.todo, self.prefill_chunk, budget))
            if n >= 1 and r in self.running and room(r, n):
                take(r, n)
        # 3. new arrivals (and preempted requests, first), while tokens, rows and blocks last
        for r in [r for r in self.waiting if r.arrival_s <= self.now]:
            if budget < 1 or len(self.running) >= self.max_batch:
                break
            if r.n_cached == 0 and self.prefix_caching:  # counted below, once per request, if it starts
                r.table = self.pool.match_prefix(r.sequence, r.keys, count=False)
                r.n_cached = min(len(r.table) * self.pool.block_size, len(r.sequence) - 1)
            n = int(min(r.todo, self.prefill_chunk, budget))
            if taken + self.pool.blocks_needed(r.table, r.n_cached, n) > self.pool.n_free():
                self._drop_blocks(r)  # no room to start it: give back the prefix blocks it took
                break
            self.waiting.remove(r)
            self.running.append(r)
            if r.start_s is None:  # its first admission (not a resumption after preemption)
                r.start_s, r.hit_tokens = self.now, r.n_cached
                if self.prefix_caching:
                    self.pool.count_lookup(len(r.prompt), r.n_cached)
            take(r, n)
        decode = [r for r, n in plan.items() if r.out and r.todo == 1]
        chunks = [(r, n) for r, n in plan.items() if r not in decode]
        return decode, chunks, preempted

    def _forward(self, rows: list) -> None:
        """Run ``rows`` ((request, n tokens)) through the model as one left-padded batch."""
        view = PagedKVCache.view(self.pool, [r.table for r, _ in rows], [r.n_cached for r, _ in rows])
        ids, mask = left_pad([r.sequence[r.n_cached:r.n_cached + n] for r, n in rows])  # (B, T_max)
        if self.costs is not None:  # no model: only take the blocks its forward would have written
            view.begin_step(*ids.shape, mask.bool())
            return
        with torch.inference_mode():
            if self._flat is not None and ids.shape[1] == 1:  # decode rows: the flat step, same logits
                logits = flat_decode_step(self.model, self._flat, ids[:, 0], view)  # (B, V)
            else:
                logits = self.model(ids, cache=view, attention_mask=mask if not bool(mask.all()) else None)[:, -1]
        for (r, n), nxt in zip(rows, logits.argmax(dim=-1).tolist()):  # (B, V) -> (B,)
            r.next_token = nxt if r.n_cached + n == len(r.sequence) else None

    def _advance(self, r: PagedRequest, n: int) -> None:
        r.n_cached += n
        n_full = min(r.n_cached, len(r.prompt)) // self.pool.block_size
        if self.prefix_caching and n_full > r.n_published:  # a block of prompt tokens just filled up
            self.pool.publish(r.table, r.prompt, n_full * self.pool.block_size, r.keys, start=r.n_published)
            r.n_published = n_full
        if r.n_cached < len(r.sequence):
            return  # more of its prompt to go
        if not r.out:  # its first token: the prefill (all its chunks, and any recompute) ends here
            r.prefill_s = self.now - r.start_s
        self._got_token(r, r.next_token if self.costs is None else -1, self.now)

    def _finish(self, r: PagedRequest, why: str) -> None:
        r.done = why
        self._drop_blocks(r)
        for queue in (self.running, self.waiting):
            if r in queue:
                queue.remove(r)

    def _preempt(self, r: PagedRequest) -> None:
        self._drop_blocks(r)
        r.n_preempted += 1
        self.running.remove(r)
        self.waiting.insert(0, r)

    def _drop_blocks(self, r: PagedRequest) -> None:
        self.pool.release_table(r.table)  # last block first: a cached prefix is evicted from its tail
        r.table, r.n_cached, r.n_published = [], 0, 0


def one_pass_s(rec: dict) -> float:
    """A measured iteration's seconds had it run its decode rows and its chunks in **one** forward pass, as
    real engines do (this engine runs two: the decode rows, then the chunks). Estimated from the passes it
    measured: the decode pass is taken out, and the chunks' pass is stretched to carry the decode tokens
    too, in proportion to its tokens, ``prefill_s * (chunk tokens + decode rows) / chunk tokens``. That
    stretch prices the decode tokens like prompt tokens, fixed cost included, so it errs high: a packed
    pass would take at most this long. An iteration with one pass is returned as measured."""
    passes = rec.get("pass_s")
    if passes is None:
        raise ValueError(tr("one_pass_s needs a measured iteration (a replay's records have no pass_s)"))
    total = rec["end_s"] - rec["start_s"]
    if "decode" not in passes or "prefill" not in passes:
        return total
    n_decode, n_prefill = len(rec["decode"]), rec["prefill_tokens"]
    return total - passes["decode"] - passes["prefill"] + passes["prefill"] * (n_prefill + n_decode) / n_prefill
