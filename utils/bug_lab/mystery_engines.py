"""The broken engines only the mysteries use; the catalogue's classic ones are in ``catalogue.py``.

Each is one slip a real engine makes, on the line marked ``# BUG``:

* ``step_position_off_by_one``: the new token gets the position of the last cached one;
* ``step_sees_every_key``: a decode mask ``[1, S]`` of ones, right without padding, wrong with it;
* ``ReusedCache``: an engine that keeps one cache for every request and never empties it;
* ``RopeOnValuesKVCache``: a cache that rotates V by RoPE as well as K.

``step_position_counted`` is the fixed decode step of the first (the reference of exercise 07.fix_position).
"""
from __future__ import annotations

import torch

from ..attention import apply_rope_rolled
from ..cache import KVCache
from ..generate import decode_step, prefill
from ..model import masked_forward, plan_step


def _tokens_per_row(cache) -> torch.Tensor:
    """Real tokens each row holds ``[B]``: the cache's padding mask counted, or ``seq_len`` for every row."""
    counts = cache.valid_counts()
    return torch.full((cache.batch_size,), cache.seq_len) if counts is None else counts


def step_position_off_by_one(model, token_ids, cache):
    """Decode step that passes each row's position explicitly, ``[B, 1]``."""
    position = _tokens_per_row(cache)[:, None] - 1  # BUG: the last cached token's position, taken again
    return model(token_ids[:, None], cache=cache, position_ids=position)[:, -1]


def step_position_counted(model, token_ids, cache):
    """Decode step that passes each row's position explicitly, ``[B, 1]``."""
    position = _tokens_per_row(cache)[:, None]  # FIX: the next position = real tokens already cached
    return model(token_ids[:, None], cache=cache, position_ids=position)[:, -1]


def step_sees_every_key(model, token_ids, cache):
    """Decode step with an explicit mask ``[1, S]`` over the S = cached + 1 keys."""
    S = cache.seq_len + 1
    mask = torch.ones(1, S, dtype=torch.bool)  # BUG: every key, the left padding of a short row too
    return masked_forward(model, token_ids[:, None], mask, cache=cache)[:, -1]


class ReusedCache:
    """An engine that serves one request after another. Its cache served a request before yours."""

    def __init__(self) -> None:
        self.cache, self.served = KVCache(), 0

    def prefill(self, model, ids, mask, cache):
        if self.served == 0:  # the request before yours (the same batch): the cache fills up with it
            prefill(model, ids, mask, self.cache)
        self.served += 1
        return prefill(model, ids, mask, self.cache)  # BUG: the last request's K/V are still in it

    def step(self, model, token_ids, cache):
        return decode_step(model, token_ids, cache)


class RopeOnValuesKVCache(KVCache):
    """Stores every layer's K/V after rotating them by their positions."""

    def __init__(self, model) -> None:
        super().__init__()
        self.model = model

    def begin_step(self, B, T_new, new_mask, ids=None):
        pos = plan_step(self, B, T_new, new_mask).positions  # the positions the model rotates q and k by
        self.rope = self.model.rope_tables(pos, self.model.embed_tokens.weight.dtype)

    def update(self, layer, k, v):
        v = apply_rope_rolled(v, *self.rope)  # BUG: RoPE rotates queries and keys, never values
        return super().update(layer, k, v)


def rope_on_values_prefill(model, ids, mask, cache):
    """A ``prefill_fn`` that fills a new ``RopeOnValuesKVCache`` instead of the cache it is given."""
    return prefill(model, ids, mask, RopeOnValuesKVCache(model))
