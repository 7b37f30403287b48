"""One pool of fixed-size KV blocks, shared by every request: the allocator of a paged cache.

Serving engines do not give each request a tensor sized for its longest possible sequence. They
cut the memory for K and V into **blocks** of ``block_size`` token slots, all the same size, and give
a request one block at a time, as it grows. A request's **block table** lists its blocks in order:
token ``j`` lives in block ``table[j // block_size]``, slot ``j % block_size``. A request wastes at
most the unused tail of its last block, and a finished request's blocks go straight back to the pool.

Layout, per layer: K and V are each one tensor ``[n_blocks * block_size, H_kv, d_h]``; slot ``s`` of
block ``b`` is row ``b * block_size + s``. One index tensor then gathers any request's history.

**Sharing.** A block has a reference count: the number of requests whose table holds it. Two
requests with the same first tokens (the same system prompt) can hold the same blocks.

**Prefix caching.** A *full* block of prompt tokens gets a key: a hash of its tokens chained with
the previous block's key, so a key names the block *and everything before it* (the same tokens after
a different prefix have different K/V: attention mixes in the past). A new request looks its prompt's
keys up block by block and reuses every block found, until the first miss. Such a block is never
written again. When its last user finishes it is not wiped: it waits, still findable, on a list of
cached free blocks, and is reused for something else only when the truly free blocks run out (the
one freed longest ago first; a request frees its blocks last one first, so a prefix loses its tail
before its head). This course publishes prompt blocks only; vLLM v1 also caches the full blocks of
generated tokens, so the next turn of a chat finds the previous answer too.
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict, deque

import torch

from .config import ModelConfig
from .i18n import tr
from .validate import as_id_list, as_torch_dtype, check_allocation, check_int, is_int


class PoolExhausted(ValueError):
    """Raised when a block is needed and none is free (a ValueError, so callers can catch either)."""


def as_config(cfg) -> ModelConfig:
    """``cfg`` itself, or a model's ``.cfg``; anything else is a clear ValueError."""
    if not isinstance(cfg, ModelConfig) and isinstance(getattr(cfg, "cfg", None), ModelConfig):
        return cfg.cfg
    if not isinstance(cfg, ModelConfig):
        raise ValueError(tr("a paged cache needs a ModelConfig (model.cfg) or the model, got {type}",
                            type=type(cfg).__name__))
    return cfg


def block_keys(tokens, block_size: int) -> list[str]:
    """The prefix keys of every *full* block of ``tokens`` (one sequence of ids: a list, a ``[T]`` or ``[1, T]``
    tensor or numpy array), in order.

    Key ``i`` = sha256(key ``i - 1`` + the block's token ids), shortened to 16 hex digits. Python's
    own ``hash`` would do in one process; a digest is the same in every process and on every machine.
    """
    # A [1, T] tensor iterates as one row, and a key of that row is no key of its tokens: the ids first.
    tokens = as_id_list(tokens, "tokens")
    check_int("block_size", block_size)
    keys, prev = [], ""
    for start in range(0, len(tokens) - block_size + 1, block_size):
        chunk = ",".join(str(int(t)) for t in tokens[start:start + block_size])
        prev = hashlib.sha256(f"{prev}|{chunk}".encode()).hexdigest()[:16]
        keys.append(prev)
    return keys


class BlockPool:
    """``n_blocks`` blocks of ``block_size`` slots, for every layer of a model with config ``cfg``."""

    def __init__(self, cfg, n_blocks: int, block_size: int, dtype=None, device=None) -> None:
        cfg = as_config(cfg)
        check_int("n_blocks", n_blocks)
        check_int("block_size", block_size)
        self.cfg, self.n_blocks, self.block_size = cfg, n_blocks, block_size
        self.dtype = as_torch_dtype(dtype) or torch.get_default_dtype()
        shape = (n_blocks * block_size, cfg.n_kv_heads, cfg.head_dim)  # (slots, H_kv, d_h)
        itemsize = torch.empty(0, dtype=self.dtype).element_size()
        check_allocation(tr("a block pool of n_blocks={n_blocks}, block_size={block_size}", n_blocks=n_blocks,
                            block_size=block_size),
                         2 * cfg.n_layers * n_blocks * block_size * cfg.n_kv_heads * cfg.head_dim * itemsize)
        self.k = [torch.zeros(shape, dtype=self.dtype, device=device) for _ in range(cfg.n_layers)]
        self.v = [torch.zeros(shape, dtype=self.dtype, device=device) for _ in range(cfg.n_layers)]
        self.ref = [0] * n_blocks  # how many block tables hold each block
        self.free: deque[int] = deque(range(n_blocks))  # empty blocks, lowest id first
        self.cached_free: OrderedDict[int, None] = OrderedDict()  # ref 0 but still a findable prefix
        self.key_of: dict[int, str] = {}  # block -> its prefix key (full prompt blocks only)
        self.block_of: dict[str, int] = {}  # prefix key -> block
        self.hit_tokens = self.query_tokens = 0  # prefix-cache statistics, in prompt tokens

    # -- sizes --------------------------------------------------------------------------------
    @property
    def block_bytes(self) -> int:
        """Bytes of one block over all layers, K and V: 2 * L * block_size * H_kv * d_h * bytes/value."""
        per_slot = self.cfg.n_kv_heads * self.cfg.head_dim * self.k[0].element_size()
        return 2 * self.cfg.n_layers * self.block_size * per_slot

    @property
    def nbytes(self) -> int:
        """Bytes of the whole pool (allocated once, whoever uses it)."""
        return self.n_blocks * self.block_bytes

    def n_free(self) -> int:
        """Blocks a request could get now: the empty ones and the cached ones nobody holds."""
        return len(self.free) + len(self.cached_free)

    def n_used(self) -> int:
        return self.n_blocks - self.n_free()

    # -- allocation -----------------------------------------------------------------------------
    def allocate(self) -> int:
        """A block for one holder (ref 1): an empty one, else the cached block freed longest ago."""
        if self.free:
            b = self.free.popleft()
        elif self.cached_free:
            b, _ = self.cached_free.popitem(last=False)
            del self.block_of[self.key_of.pop(b)]  # its old prefix is forgotten: it will be overwritten
        else:
            raise PoolExhausted(tr("the block pool is full: all {n_blocks} blocks of {block_size} tokens are in use "
                                   "(make n_blocks larger, or run fewer requests at once)", n_blocks=self.n_blocks,
                                   block_size=self.block_size))
        self.ref[b] = 1
        return b

    def check_block(self, b) -> int:
        """``b`` as a block id of this pool, an int in ``[0, n_blocks)``. (A Python list would take -1 as
        the last block, and releasing it would free a block another request holds.)"""
        if not is_int(b) or not 0 <= b < self.n_blocks:
            raise ValueError(tr("block {block!r} is not a block of this pool: block ids are ints in [0, {last}]",
                                block=b, last=self.n_blocks - 1))
        return b

    def share(self, b: int) -> None:
        """One more holder of block ``b``."""
        self.check_block(b)
        if self.ref[b] == 0:
            if b not in self.cached_free:
                raise ValueError(tr("block {block} is free: it cannot be shared (allocate() hands out a block)",
                                    block=b))
            del self.cached_free[b]
        self.ref[b] += 1

    def release(self, b: int) -> None:
        """One holder less; at zero the block is free (still findable if it holds a prefix).

        A request gives its blocks back last block first (``release_table``): cached blocks are
        reused oldest-freed first, so a prefix is then evicted from its tail and its head stays
        findable (evicting a head would strand every block after it: lookups stop at the first miss)."""
        self.check_block(b)
        if self.ref[b] <= 0:
            raise ValueError(tr("block {block} released more times than it was held", block=b))
        self.ref[b] -= 1
        if self.ref[b] == 0:
            if b in self.key_of:
                self.cached_free[b] = None
            else:
                self.free.append(b)

    def release_table(self, table: list[int]) -> None:
        """Give back every block of a block table, last block first (see ``release``)."""
        for b in table:  # every id checked before any is given back: a bad table changes nothing
            self.check_block(b)
        for b in reversed(table):
            self.release(b)

    def writable(self, b: int) -> bool:
        """Whether one holder may write into ``b``: it holds it alone and no prefix key names it."""
        return self.ref[b] == 1 and b not in self.key_of

    def blocks_needed(self, table: list[int], n: int, m: int) -> int:
        """Blocks a row holding ``n`` tokens in ``table`` must take to add ``m``: new ones, plus a copy
        of its last block when the next token would land in a block it may not write."""
        return self.blocks_needed_by([(table, n, m)])

    def blocks_needed_by(self, rows) -> int:
        """Blocks that ``rows`` (``(table, n, m)`` each, as in ``blocks_needed``) take together, as ``grow``
        will take them in that order: rows that share a last block copy it in turn, and the last of them,
        by then its only holder, writes in place unless a prefix key names it."""
        ref, needed = {}, 0  # the holders each shared last block still has, as the rows before copied it
        for table, n, m in rows:
            if m and n % self.block_size:
                last = table[-1]
                ref.setdefault(last, self.ref[last])
                if ref[last] > 1 or last in self.key_of:
                    needed += 1
                    ref[last] -= 1
            needed += max(0, -(-(n + m) // self.block_size) - len(table))
        return needed

    def grow(self, table: list[int], n: int, m: int) -> tuple[int, int] | None:
        """Make room in ``table`` (holding ``n`` tokens) for ``m`` more, in place: a copy of a last block it
        may not write, then new blocks. Returns ``(old, copy)`` when the last block was copied, else None;
        check ``blocks_needed`` first, so that running out of blocks cannot leave a table half grown."""
        copied = None
        if m and n % self.block_size and not self.writable(table[-1]):  # the next token lands in a shared block
            copied = table[-1], self.copy_block(table[-1])
            table[-1] = copied[1]
        while len(table) * self.block_size < n + m:
            table.append(self.allocate())
        return copied

    def copy_block(self, src: int) -> int:
        """Copy-on-write: a new block with ``src``'s contents; the caller then holds the copy, not ``src``."""
        self.check_block(src)
        if self.ref[src] <= 0:
            raise ValueError(tr("block {block} is free: only a block you hold can be copied", block=src))
        dst = self.allocate()
        s, d, n = src * self.block_size, dst * self.block_size, self.block_size
        for t in self.k + self.v:
            t[d:d + n] = t[s:s + n]  # (block_size, H_kv, d_h)
        self.release(src)
        return dst

    # -- prefix caching -----------------------------------------------------------------------
    def match_prefix(self, tokens, keys: list[str] | None = None, count: bool = True) -> list[int]:
        """The cached blocks holding ``tokens``' longest prefix of full blocks, each now shared once more
        (``keys``: ``block_keys(tokens, block_size)`` if the caller has them already). ``count=False``
        leaves the hit-rate statistics alone (a caller that may look the same request up again)."""
        tokens = as_id_list(tokens, "tokens")
        found = []
        for key in block_keys(tokens, self.block_size) if keys is None else keys:
            b = self.block_of.get(key)
            if b is None:
                break
            self.share(b)
            found.append(b)
        if count:  # a full hit still runs the last token (see PagedKVCache.reuse_prefix): len - 1 at most
            self.count_lookup(len(tokens), min(len(found) * self.block_size, len(tokens) - 1))
        return found

    def count_lookup(self, n_tokens: int, n_hit: int) -> None:
        """Add one request's lookup to the hit-rate statistics: ``n_hit`` of its ``n_tokens`` found."""
        self.query_tokens += n_tokens
        self.hit_tokens += n_hit

    def publish(self, table: list[int], tokens, n_done: int, keys: list[str] | None = None, start: int = 0) -> None:
        """Make the full blocks of ``table`` whose ``tokens`` are all computed (the first ``n_done``)
        findable by later requests, from block ``start`` on. A key already published (another request
        computed the same prefix at the same time) keeps its first block; this one stays private."""
        if keys is None:
            keys = block_keys(as_id_list(tokens, "tokens")[:n_done], self.block_size)
        for i in range(start, min(n_done // self.block_size, len(keys))):
            b, key = table[i], keys[i]
            if b in self.key_of or key in self.block_of:
                continue
            self.key_of[b], self.block_of[key] = key, b

    def hit_rate(self) -> float:
        """Prompt tokens found in the prefix cache / prompt tokens looked up (0 before any lookup)."""
        return self.hit_tokens / self.query_tokens if self.query_tokens else 0.0

    def owners(self, tables: dict) -> list[list]:
        """For a block map: per block, the names (keys of ``tables``, name -> block table) holding it."""
        out: list[list] = [[] for _ in range(self.n_blocks)]
        for name, table in tables.items():
            for b in table:
                out[b].append(name)
        return out
