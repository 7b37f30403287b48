"""A paged KV cache: every row's K/V lives in blocks of one shared pool (``utils.block_pool``).

``PagedKVCache`` has the interface of the other caches (``update``, ``seq_len``, ``mask``, ``crop``,
``reorder``, ``nbytes``), so ``prefill``, ``decode_step``, ``generate`` and ``beam_search`` run on it
unchanged. What differs is where the numbers live:

* each row has a block table (``tables[b]``) and a count of the tokens it holds (``lengths[b]``);
* ``slots`` ``[B, seq_len]`` says, for every position of the batch's layout, which pool slot holds it,
  or -1 for a left-padding position: **padding is never stored** (a left-padded contiguous cache
  stores it in every layer);
* ``update`` writes the new K/V into their slots, then *gathers* the row's history from the pool into
  the ``[B, H_kv, T, d_h]`` tensor attention reads. (GPU engines fuse that gather into the attention
  kernel, which reads the blocks where they lie; here it is one indexing op, easy to read.)

``blockwise_attention`` is the other way to read: one decode query attends to a row's blocks where they lie,
one block at a time, with an online softmax (what a paged-attention kernel does), no gathered copy.

Before the layers run, the model calls ``begin_step(B, T_new, new_mask)``: the cache then gives each
real new token a slot, taking a new block when the row's last one is full. A block that is shared or
holds a published prefix is never written: the row first gets its own copy (copy-on-write), which
is what keeps beams and prefix hits correct.
"""
from __future__ import annotations

import torch

from .block_pool import BlockPool, PoolExhausted
from .cache import Cache
from .i18n import tr
from .validate import as_id_list, check_crop, check_int, check_kv, check_reorder_index, is_int


class PagedKVCache(Cache):
    """Rows whose K/V live in the blocks of one ``BlockPool``.

    ``PagedKVCache(cfg, n_blocks, block_size, dtype=None)`` makes its own pool; ``pool=`` shares an
    existing one (``PagedKVCache(pool=cache.pool)``: a second request that can reuse the first's prefix).
    """

    flat_step_ok = True  # the flat decode step calls begin_step and update as the modules do

    def __init__(self, cfg=None, n_blocks: int | None = None, block_size: int = 16, dtype=None, device=None, *,
                 pool: BlockPool | None = None) -> None:
        if pool is None:
            if cfg is None or n_blocks is None:
                raise ValueError(tr("PagedKVCache needs cfg and n_blocks (to make its pool), or pool= (to share one)"))
            pool = BlockPool(cfg, n_blocks, block_size, dtype=dtype, device=device)
        elif not isinstance(pool, BlockPool):
            raise ValueError(tr("pool must be a utils.block_pool.BlockPool, got {type}", type=type(pool).__name__))
        self.pool = pool
        self._empty()

    def _empty(self) -> None:
        """No rows: what a new cache holds, and what ``release`` leaves."""
        self.tables: list[list[int]] = []  # per row: its blocks, in order
        self.lengths: list[int] = []  # per row: tokens whose K/V it holds
        self.slots = torch.empty(0, 0, dtype=torch.long)  # (B, seq_len): pool slot per position, -1 = padding
        self.mask = None
        # per row: the ids of the tokens whose K/V it holds (what publish_prefix names), None once K/V were
        # written without their ids (update() called directly)
        self.tokens: list[list[int] | None] = []
        self._new: torch.Tensor | None = None  # (B, T_new): slots of the step being written
        self._next_layer = 0

    @classmethod
    def view(cls, pool: BlockPool, tables: list[list[int]], lengths: list[int]) -> "PagedKVCache":
        """A cache over rows that already hold tokens (a serving engine's running requests), left-padded
        to the longest. ``tables`` are taken as they are: blocks written now are appended to them."""
        cache = cls(pool=pool)
        cache.tables, cache.lengths = tables, list(lengths)
        cache.tokens = [None] * len(tables)  # the engine keeps its requests' tokens itself
        S = max(lengths, default=0)
        cache.slots = torch.full((len(tables), S), -1, dtype=torch.long)  # (B, S)
        for b, n in enumerate(lengths):
            if n:
                cache.slots[b, S - n:] = cache._slots_of(b, 0, n)
        if any(n < S for n in lengths):
            cache.mask = cache.slots >= 0  # (B, S)
        return cache

    # -- the cache interface ------------------------------------------------------------------
    @property
    def batch_size(self) -> int | None:
        return len(self.tables) if self.tables else None

    @property
    def seq_len(self) -> int:
        return self.slots.shape[1]

    @property
    def n_layers(self) -> int:
        return self.pool.cfg.n_layers

    @property
    def nbytes(self) -> int:
        """Bytes of the whole pool: what the cache reserved (``memory()`` splits it)."""
        return self.pool.nbytes

    @property
    def k(self) -> list[torch.Tensor]:
        """Every layer's K ``[B, H_kv, seq_len, d_h]``, gathered from the pool (zeros at padding)."""
        return [self.layer_kv(i)[0] for i in range(self.n_layers)]

    @property
    def v(self) -> list[torch.Tensor]:
        return [self.layer_kv(i)[1] for i in range(self.n_layers)]

    def memory(self) -> dict:
        """Bytes: ``tokens`` (the K/V of the tokens held), ``held`` (the blocks the rows hold: tokens +
        the empty tail of each last block; a block shared by rows counts once), ``pool`` (reserved)."""
        per_token = self.pool.block_bytes // self.pool.block_size
        held = len({b for t in self.tables for b in t})
        return {"tokens": sum(self.lengths) * per_token, "held": held * self.pool.block_bytes,
                "pool": self.pool.nbytes, "blocks_held": held, "blocks_free": self.pool.n_free()}

    def begin_step(self, B: int, T_new: int, new_mask: torch.Tensor | None, ids: torch.Tensor | None = None) -> None:
        """Give each real new token (``new_mask`` ``[B, T_new]``, None = all real) a slot, in order, and
        record its id (``ids`` ``[B, T_new]``; None: the ids are unknown, and the row cannot be published)."""
        if not self.tables:
            self.tables, self.lengths, self.tokens = [[] for _ in range(B)], [0] * B, [[] for _ in range(B)]
            self.slots = torch.empty(B, 0, dtype=torch.long)
        if B != len(self.tables):
            raise ValueError(tr("the batch has {B} rows but this paged cache holds {rows}", B=B, rows=len(self.tables)))
        real = [T_new] * B if new_mask is None else [int(m) for m in new_mask.sum(dim=1).tolist()]
        needed = self.pool.blocks_needed_by(zip(self.tables, self.lengths, real))
        if needed > self.pool.n_free():  # checked before anything changes: a failed step leaves no trace
            raise PoolExhausted(tr("this step needs {needed} more block(s) of {block_size} tokens but the pool has "
                                   "{free} free of {n_blocks}: make n_blocks larger", needed=needed,
                                   block_size=self.pool.block_size, free=self.pool.n_free(),
                                   n_blocks=self.pool.n_blocks))
        new = torch.full((B, T_new), -1, dtype=torch.long)  # (B, T_new)
        for b, m in enumerate(real):
            self._grow(b, m)
            cols = torch.arange(T_new) if new_mask is None else new_mask[b].nonzero().flatten().cpu()
            new[b, cols] = self._slots_of(b, self.lengths[b], self.lengths[b] + m)
            self.lengths[b] += m
            if ids is None:  # K/V written without their ids: this row can no longer be named
                self.tokens[b] = None
            elif self.tokens[b] is not None:
                self.tokens[b].extend(ids[b, cols.to(ids.device)].tolist())
        self._new, self._next_layer = new, 0
        self.slots = torch.cat([self.slots, new], dim=1)  # (B, seq_len + T_new)
        if self.mask is not None or new_mask is not None:
            old = self.mask if self.mask is not None else torch.ones(B, self.seq_len - T_new, dtype=torch.bool)
            add = new_mask.bool().cpu() if new_mask is not None else torch.ones(B, T_new, dtype=torch.bool)
            self.mask = torch.cat([old.to(add.device), add], dim=1)  # (B, seq_len)

    def append_mask(self, new_mask, T_new: int) -> None:
        """Nothing to do: ``begin_step`` recorded the new positions before the layers ran."""

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Write ``k``, ``v`` ``[B, H_kv, T_new, d_h]`` of ``layer`` into their slots; return the whole
        history ``[B, H_kv, seq_len, d_h]`` gathered from the pool."""
        check_kv(k, v)
        if not is_int(layer) or not 0 <= layer < self.n_layers:
            raise ValueError(tr("layer must be an int in [0, {last}], got {layer!r}", last=self.n_layers - 1,
                                layer=layer))
        if layer == 0 and (self._new is None or self._next_layer != 0):  # called directly, not by the model
            self.begin_step(k.shape[0], k.shape[2], None)
        if layer != self._next_layer:
            raise ValueError(tr("layer {layer} updated out of order: layer {next} is next", layer=layer,
                                next=self._next_layer))
        pool_k, pool_v = self.pool.k[layer], self.pool.v[layer]
        if tuple(k.shape) != (self._new.shape[0], pool_k.shape[1], self._new.shape[1], pool_k.shape[2]):
            raise ValueError(tr("layer {layer}: new k {shape} does not fit [B={B}, H_kv={H_kv}, T_new={T_new}, "
                                "d_h={d_h}]", layer=layer, shape=tuple(k.shape), B=self._new.shape[0],
                                H_kv=pool_k.shape[1], T_new=self._new.shape[1], d_h=pool_k.shape[2]))
        if k.dtype != pool_k.dtype:
            raise ValueError(tr("k has dtype {dtype} but the block pool holds {held}: make the cache with the model's "
                                "dtype (dtype=model.lm_head.weight.dtype)", dtype=k.dtype, held=pool_k.dtype))
        real = self._new >= 0  # (B, T_new)
        with torch.inference_mode(torch.is_inference(pool_k) or torch.is_inference_mode_enabled()):
            pool_k[self._new[real]] = k.transpose(1, 2)[real]  # (n_real, H_kv, d_h)
            pool_v[self._new[real]] = v.transpose(1, 2)[real]
        self._next_layer = (layer + 1) % self.n_layers
        if self._next_layer == 0:
            self._new = None
        idx = self.slots.clamp(min=0)  # (B, S): padding reads slot 0, which the attention mask hides
        return pool_k[idx].transpose(1, 2), pool_v[idx].transpose(1, 2)  # (B, S, H_kv, d_h) -> (B, H_kv, S, d_h)

    def layer_kv(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        """``layer``'s K and V ``[B, H_kv, seq_len, d_h]``, with zeros where nothing is stored (padding)."""
        idx = self.slots.clamp(min=0)  # (B, S)
        k = self.pool.k[layer][idx].transpose(1, 2)  # (B, S, H_kv, d_h) -> (B, H_kv, S, d_h)
        v = self.pool.v[layer][idx].transpose(1, 2)
        if self.mask is not None:
            hide = (~self.mask)[:, None, :, None].to(k.device)  # (B, 1, S, 1)
            k, v = k.masked_fill(hide, 0), v.masked_fill(hide, 0)
        return k, v

    def crop(self, n: int) -> None:
        """Keep the first ``n`` positions; blocks no row needs any more go back to the pool."""
        check_crop(n, self.seq_len)
        if self.tables:
            dropped = (self.slots[:, n:] >= 0).sum(dim=1).tolist()  # real tokens cut, per row
            for b, d in enumerate(dropped):
                self.lengths[b] -= d
                if self.tokens[b] is not None:
                    self.tokens[b] = self.tokens[b][: self.lengths[b]]
                keep = -(-self.lengths[b] // self.pool.block_size)  # blocks still needed (ceil)
                self.pool.release_table(self.tables[b][keep:])
                del self.tables[b][keep:]
        self.slots = self.slots[:, :n]
        if self.mask is not None:
            self.mask = self.mask[:, :n]

    def reorder(self, index: torch.Tensor) -> None:
        """Keep rows ``index`` (beam search). Rows that come from one parent share its blocks."""
        index = check_reorder_index(index, self.batch_size)
        rows = index.tolist()
        tables, lengths = [list(self.tables[i]) for i in rows], [self.lengths[i] for i in rows]
        tokens = [None if self.tokens[i] is None else list(self.tokens[i]) for i in rows]
        for t in tables:  # share first, then let go of the old rows: no block is ever free in between
            for blk in t:
                self.pool.share(blk)
        for t in self.tables:
            self.pool.release_table(t)
        self.tables, self.lengths, self.tokens = tables, lengths, tokens
        self.slots = self.slots.index_select(0, index.cpu())
        if self.mask is not None:
            self.mask = self.mask.index_select(0, index.to(self.mask.device))

    def release(self) -> None:
        """Give every block back to the pool (a finished request). The cache is then empty, as a new one:
        no rows, no slots, no mask (a prefill after it starts afresh, at position 0)."""
        for t in self.tables:
            self.pool.release_table(t)  # last block first: a cached prefix is evicted from its tail
        self._empty()

    # -- prefix caching -----------------------------------------------------------------------
    def reuse_prefix(self, prompt_ids) -> int:
        """Start this empty one-row cache from the pool's cached blocks of ``prompt_ids``' prefix.

        Returns how many prompt tokens are already cached: prefill only ``prompt_ids[n:]``. When the
        whole prompt is cached, n is one less: the model must still run the last prompt token to get
        the first new token's logits (its K/V is written again, into a private copy of the block).
        """
        if self.tables:
            raise ValueError(tr("reuse_prefix starts an empty cache; this one holds rows already"))
        tokens = as_id_list(prompt_ids, "prompt_ids")
        if not tokens:
            raise ValueError(tr("prompt_ids is empty: there is no prefix to look up"))
        blocks = self.pool.match_prefix(tokens)
        n = min(len(blocks) * self.pool.block_size, len(tokens) - 1)  # the full hit: recompute the last token
        self.tables, self.lengths, self.tokens = [blocks], [n], [tokens[:n]]
        self.slots = self._slots_of(0, 0, n)[None]  # (1, n)
        return n

    def publish_prefix(self, prompt_ids=None, row: int = 0) -> int:
        """Make row ``row``'s full blocks of prompt tokens findable; returns how many of its blocks a prefix
        key now names (blocks it found in the cache count too: they were published before).

        ``prompt_ids`` (default: every token the row holds) must be what the row holds, or a beginning of it:
        the cache records the ids of the tokens it was given, and a key published for other tokens than the
        ones whose K/V a block holds would hand a later request wrong K/V, silently."""
        if not self.tables:
            raise ValueError(tr("publish_prefix: this cache holds nothing yet: prefill the prompt into it first "
                                "(n = cache.reuse_prefix(prompt), then prefill prompt[n:])"))
        check_int("row", row, minimum=0, maximum=len(self.tables) - 1)
        held = self.tokens[row]
        if held is None:
            raise ValueError(tr("publish_prefix: row {row}'s K/V were written without their token ids (update() called "
                                "directly, or a serving engine's view), so its blocks cannot be named: prefill through "
                                "the model (prefill(model, ids, cache=cache))", row=row))
        tokens = held if prompt_ids is None else as_id_list(prompt_ids, "prompt_ids")
        differ = next((i for i, (a, b) in enumerate(zip(tokens, held)) if a != b), None)
        if differ is not None or len(tokens) > len(held):
            where = (tr("token {i} is {token}, but the row holds {held} there", i=differ, token=tokens[differ],
                        held=held[differ]) if differ is not None
                     else tr("it has {n} tokens, the row holds {held}", n=len(tokens), held=len(held)))
            raise ValueError(tr("publish_prefix: prompt_ids is not what row {row} holds ({where}): the keys would name "
                                "K/V of other tokens. Publish the prompt you prefilled into this cache", row=row,
                                where=where))
        self.pool.publish(self.tables[row], tokens, len(tokens))
        return sum(b in self.pool.key_of for b in self.tables[row])

    # -- inside ---------------------------------------------------------------------------------
    def _slots_of(self, b: int, start: int, end: int) -> torch.Tensor:
        """Pool slots of row ``b``'s tokens ``start .. end - 1``."""
        j = torch.arange(start, end)
        table = torch.tensor(self.tables[b], dtype=torch.long)
        return table[j // self.pool.block_size] * self.pool.block_size + j % self.pool.block_size

    def _grow(self, b: int, m: int) -> None:
        """Make room in row ``b`` for ``m`` more tokens (the pool's ``grow``); a copied last block moves the
        slots of this row's earlier positions in it to the copy."""
        size = self.pool.block_size
        copied = self.pool.grow(self.tables[b], self.lengths[b], m)
        if copied and self.slots.numel():  # this row's earlier positions in that block now read the copy
            old, new = copied
            in_old = self.slots[b] // size == old
            self.slots[b, in_old] += (new - old) * size


def blockwise_attention(q: torch.Tensor, pool: BlockPool, layer: int, table: list[int], n: int) -> torch.Tensor:
    """One decode query's attention over a row's ``n`` tokens, read block by block from the pool (no gather).

    ``q`` ``[H, d_h]``: the query of the row's newest token (RoPE applied), which sees all ``n`` keys.
    Each block's K/V are a contiguous slice of the pool, ``[block_size, H_kv, d_h]``. An **online softmax**
    keeps, per head, the running maximum score ``m``, the running sum ``l`` of ``exp(score - m)`` and the
    running weighted sum of values ``acc``; a block with a higher maximum rescales what came before by
    ``exp(m_old - m_new)``. At the end ``acc / l`` is softmax(q Kᵀ / √d_h) V over all ``n`` tokens, summed in
    another order than one softmax over the gathered keys, so equal up to float rounding. Returns ``[H, d_h]``.
    """
    size, (H, d_h) = pool.block_size, q.shape
    n_rep = H // pool.cfg.n_kv_heads  # query heads per K/V head (GQA)
    m = torch.full((H,), -torch.inf, dtype=q.dtype)  # (H,) the largest score so far
    l = torch.zeros(H, dtype=q.dtype)  # (H,) sum of exp(score - m)
    acc = torch.zeros(H, d_h, dtype=q.dtype)  # (H, d_h) sum of exp(score - m) * v
    for i, b in enumerate(table):
        count = min(size, n - i * size)  # the tokens this block holds (the last one may be part full)
        if count <= 0:
            break
        k = pool.k[layer][b * size:b * size + count].repeat_interleave(n_rep, dim=1)  # (count, H, d_h)
        v = pool.v[layer][b * size:b * size + count].repeat_interleave(n_rep, dim=1)  # (count, H, d_h)
        scores = torch.einsum("hd,thd->ht", q, k) / d_h ** 0.5  # (H, count)
        m_new = torch.maximum(m, scores.max(dim=1).values)  # (H,)
        rescale = torch.exp(m - m_new)  # (H,): what came before, measured against the new maximum
        p = torch.exp(scores - m_new[:, None])  # (H, count)
        l = l * rescale + p.sum(dim=1)
        acc = acc * rescale[:, None] + torch.einsum("ht,thd->hd", p, v)
        m = m_new
    return acc / l[:, None]  # (H, d_h)
