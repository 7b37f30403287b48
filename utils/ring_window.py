"""A sliding-window cache written in place: a ring buffer of W slots per layer.

``utils.sliding.SlidingWindowKVCache`` keeps the last W positions by ``torch.cat`` and a slice, so
every step allocates new tensors and copies the window into them. Engines keep a **ring buffer**
instead: W slots per layer, allocated once; the token at position p goes into slot ``p % W``, over
the oldest entry once the window is full. Nothing is ever copied or reallocated.

The slots then no longer hold the window in time order: after 20 tokens with W = 16, slots 0..3
hold positions 16..19 and slots 4..15 positions 4..15. Attention does not care, for two reasons:

* keys are stored already rotated by RoPE, so each key carries its own position wherever it sits;
* one decode query attends to every stored key, and a softmax-weighted sum over a set of keys and
  values is the same whatever their order (up to float rounding: the sums are added in another
  order, so the logits equal the concatenating cache's within a tolerance, not bit for bit).

Counts as in ``utils.sliding``: ``seq_len`` positions stored (at most W), ``seen_tokens()`` the next
token's position (every token ever written). Several tokens at once fit only while the window has
room for them (a prompt of at most W tokens); after that, one token at a time (``utils.sliding.feed``).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .cache import Cache
from .i18n import tr
from .sliding import SlidingWindowKVCache
from .validate import check_int, check_kv, is_int


class RingWindowKVCache(Cache):
    """Sliding-window cache of ``window`` slots per layer, K, V ``[B, H_kv, window, d_h]``, written in place.

    The buffers are allocated at the first write of each layer (from the shape and dtype of the new
    K/V), and never again: their addresses stay fixed for the whole generation.
    """

    def __init__(self, window: int) -> None:
        check_int("window", window)
        self.window = window
        self.k: list[torch.Tensor] = []  # one [B, H_kv, W, d_h] ring per layer
        self.v: list[torch.Tensor] = []
        self._written: list[int] = []  # per layer: tokens ever written (position of the next one)
        self.mask = None

    @property
    def n_seen(self) -> int:
        """Tokens seen so far: the next token's RoPE position (as ``SlidingWindowKVCache.n_seen``)."""
        return self._written[0] if self._written else 0

    def seen_tokens(self) -> int:
        return self.n_seen

    @property
    def seq_len(self) -> int:
        """Positions stored (at most ``window``): the keys the next query reads, besides its own."""
        return min(self.n_seen, self.window)

    @property
    def batch_size(self) -> int | None:
        return self.k[0].shape[0] if self.k else None

    def slot_positions(self) -> list[int]:
        """The position each slot holds now (layer 0), slot 0 first; -1 for a slot not written yet."""
        n, W = self.n_seen, self.window
        return [max((p for p in range(max(0, n - W), n) if p % W == s), default=-1) for s in range(W)]

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Write ``k``, ``v`` ``[B, H_kv, T_new, d_h]`` into their slots; return the stored K, V ``[B, H_kv, <= W, d_h]``."""
        check_kv(k, v)
        if not is_int(layer) or not 0 <= layer <= len(self.k):
            raise ValueError(tr("layer must be an int in [0, {last}] (layers are filled in order 0, 1, ...), got "
                                "{layer!r}", last=len(self.k), layer=layer))
        if layer == len(self.k):  # first write of this layer: its ring, allocated once
            B, H_kv, _, d_h = k.shape
            self.k.append(torch.zeros(B, H_kv, self.window, d_h, dtype=k.dtype, device=k.device))  # (B, H_kv, W, d_h)
            self.v.append(torch.zeros(B, H_kv, self.window, d_h, dtype=v.dtype, device=v.device))
            self._written.append(0)
        start, T_new = self._written[layer], k.shape[2]
        if T_new > 1 and start + T_new > self.window:
            # the same limit as SlidingWindowKVCache: each of several queries would need its own band of keys
            raise ValueError(tr("cannot add {n} positions to {stored} stored with window={window}: once the window is "
                                "full, feed one token at a time (utils.sliding.feed)", n=T_new,
                                stored=min(start, self.window), window=self.window))
        if torch.is_inference(self.k[layer]) and not torch.is_inference_mode_enabled():
            with torch.inference_mode():  # rings made under inference_mode are written under it (as StaticKVCache)
                return self.update(layer, k, v)
        slot = start % self.window  # T_new > 1 only while start + T_new <= W: the slots start .. start + T_new - 1
        self.k[layer][:, :, slot:slot + T_new] = k  # in place, over the oldest entry once the window is full
        self.v[layer][:, :, slot:slot + T_new] = v
        self._written[layer] = start + T_new
        stored = min(start + T_new, self.window)
        return self.k[layer][:, :, :stored], self.v[layer][:, :, :stored]  # views: slot order, not time order

    def append_mask(self, new_mask: torch.Tensor | None, T_new: int) -> None:
        if new_mask is not None:
            raise ValueError(tr("RingWindowKVCache does not support padded batches (attention_mask with 0s)"))

    def crop(self, n: int) -> None:
        raise ValueError(tr("a sliding window has already dropped old positions; it cannot be cropped"))

    def _keep_rows(self, index: torch.Tensor) -> None:
        if index.numel() != self.batch_size:
            raise ValueError(tr("a RingWindowKVCache keeps its batch size: reorder index has {rows} rows, the cache {B}",
                                rows=index.numel(), B=self.batch_size))
        with torch.inference_mode(torch.is_inference(self.k[0]) or torch.is_inference_mode_enabled()):
            for t in self.k + self.v:
                t.copy_(t.index_select(0, index.to(t.device)))  # the same buffers, rows rearranged


@dataclass
class RingComparison:
    """What ``compare_ring`` measured: the ring against the concatenating window cache, per position.

    max_diff       max |ring - concatenating| of the logits at that position
    bitwise        whether the two logits are equal bit for bit there
    ring_moves     tokens after the first at which layer 0's K ring moved to a new address (0: never reallocated)
    concat_moves   the same count for the concatenating cache
    slots          the position each ring slot held at the end (``slot_positions``)
    """

    window: int
    max_diff: list[float]
    bitwise: list[bool]
    ring_moves: int
    concat_moves: int
    slots: list[int]

    def first_inexact_position(self) -> int | None:
        """First position whose logits differ in any bit (None: bit for bit everywhere)."""
        return next((p for p, same in enumerate(self.bitwise) if not same), None)


@torch.inference_mode()
def compare_ring(model, ids: torch.Tensor, window: int) -> RingComparison:
    """Feed ``ids`` ``[1, T]`` token by token through a ``RingWindowKVCache`` and a ``SlidingWindowKVCache``
    of the same ``window``, and compare their logits at every position."""
    model.eval()
    ring, concat = RingWindowKVCache(window), SlidingWindowKVCache(window)
    out = RingComparison(window, [], [], 0, 0, [])
    ptrs = []  # per token: where layer 0's K of each cache lives
    for t in range(ids.shape[1]):
        a = model(ids[:, t : t + 1], cache=ring)[0, -1]  # (V,)
        b = model(ids[:, t : t + 1], cache=concat)[0, -1]
        out.max_diff.append(float((a.float() - b.float()).abs().max()))
        out.bitwise.append(bool(torch.equal(a, b)))
        ptrs.append((ring.k[0].data_ptr(), concat.k[0].data_ptr()))
    out.ring_moves, out.concat_moves = (sum(a[i] != b[i] for a, b in zip(ptrs, ptrs[1:])) for i in (0, 1))
    out.slots = ring.slot_positions()
    return out
