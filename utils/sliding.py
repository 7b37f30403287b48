"""A sliding-window KV cache: memory stays at W positions however long the text grows.

Sliding-window attention (SWA, as in Mistral): the token at position p attends only to the W
most recent positions ``p - W + 1 .. p`` (itself included). A cache for it therefore needs to
keep only the last W keys and values of every layer: older entries are dropped.

Two numbers must not be confused once the window is full:

    seq_len   positions *stored* in the cache (at most W): how many keys the new query reads
    n_seen    tokens *seen* so far: the RoPE position of the next token

``Decoder.forward`` asks every cache for the next position with ``cache.seen_tokens()``; this
cache answers ``n_seen``, so positions keep counting past W (restarting them is bug #1 of the
bug lab).

While the text is at most W tokens long nothing has been dropped, so the logits equal full
attention exactly (up to float rounding). After that they differ from full attention, but equal a
full recompute with a *band* mask (``windowed_recompute``): the cache implements SWA faithfully.
A layer's cached K/V were computed from hidden states that had seen their own window, so
information from beyond the window still flows in through the layers below; that is why SWA is
not the same as simply cutting the prompt to its last W tokens.

Also here: ``windowed_recompute`` (``utils.model.masked_forward`` with a band mask) and ``memory_trace``
(what a cache holds and allocates, step by step).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .attention import causal_mask
from .cache import KVCache
from .generate import decode_step, make_cache
from .i18n import tr
from .model import masked_forward
from .validate import check_choice, check_int, check_kv


class SlidingWindowKVCache(KVCache):
    """``KVCache`` that keeps only the ``window`` most recent positions of every layer.

    Layout as in ``utils.cache``: per layer K, V ``[B, H_kv, seq_len, d_h]`` with
    ``seq_len <= window``. Keys are stored already rotated by RoPE, so dropping the oldest ones
    never changes the remaining ones. Feed one token at a time once the window is full
    (``feed`` does this for a long prompt); left padding is not supported.
    """

    def __init__(self, window: int) -> None:
        check_int("window", window)
        super().__init__()
        self.window = window
        self.n_seen = 0  # tokens seen so far; the next token's position

    def seen_tokens(self) -> int:
        return self.n_seen

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append ``k``, ``v`` ``[B, H_kv, T_new, d_h]``; keep and return the last ``window`` positions."""
        check_kv(k, v)
        T_new = k.shape[2]
        stored = self.k[layer].shape[2] if layer < len(self.k) else 0
        if T_new > 1 and stored + T_new > self.window:
            # Several queries at once would each need their own band of keys; the model's causal
            # mask cannot express that. One token at a time always fits: it sees the last W keys.
            raise ValueError(tr("cannot add {n} positions to {stored} stored with window={window}: once the window is "
                                "full, feed one token at a time (utils.sliding.feed)", n=T_new, stored=stored,
                                window=self.window))
        k_all, v_all = super().update(layer, k, v)  # (B, H_kv, stored + T_new, d_h)
        if layer == 0:
            self.n_seen += T_new  # counted once per forward pass, not once per layer
        self.k[layer] = k_all[:, :, -self.window:]  # (B, H_kv, <= W, d_h): the oldest falls out
        self.v[layer] = v_all[:, :, -self.window:]
        return self.k[layer], self.v[layer]

    def append_mask(self, new_mask: torch.Tensor | None, T_new: int) -> None:
        if new_mask is not None:
            raise ValueError(tr("SlidingWindowKVCache does not support padded batches (attention_mask with 0s)"))

    def crop(self, n: int) -> None:
        raise ValueError(tr("a sliding window has already dropped old positions; it cannot be cropped"))


@torch.inference_mode()
def feed(model, ids: torch.Tensor, cache: SlidingWindowKVCache) -> torch.Tensor:
    """Prefill ``ids`` ``[B, T]`` into a sliding-window cache; returns all logits ``[B, T, V]``.

    The tokens that still fit in the window go in one forward pass (ordinary causal prefill);
    the rest one at a time, so every query sees exactly its own window.
    """
    n_free = max(cache.window - cache.seq_len, 1)  # positions still free in the window (at least one)
    first = model(ids[:, :n_free], cache=cache)  # (B, n_free, V)
    rest = [model(ids[:, t : t + 1], cache=cache) for t in range(n_free, ids.shape[1])]  # each (B, 1, V)
    return torch.cat([first] + rest, dim=1)  # (B, T, V)


@torch.inference_mode()
def greedy(model, ids: torch.Tensor, n_new: int, cache, eos_id: int | None = None) -> torch.Tensor:
    """Greedy-decode up to ``n_new`` tokens after ``ids`` ``[B, T]`` with the given (empty) ``cache``.

    Works with every cache of the course; a ``SlidingWindowKVCache`` is prefilled with ``feed``.
    Stops early once every row has produced ``eos_id``. Returns the new tokens ``[B, n]``.
    """
    model.eval()
    if isinstance(cache, SlidingWindowKVCache):
        logits = feed(model, ids, cache)[:, -1]  # (B, V)
    else:
        logits = model(ids, cache=cache)[:, -1]
    new = []
    for _ in range(n_new):
        new.append(logits.argmax(-1))  # (B,)
        if eos_id is not None and bool(torch.stack(new, 1).eq(eos_id).any(1).all()):
            break
        logits = decode_step(model, new[-1], cache)
    return torch.stack(new, dim=1) if new else ids[:, :0]  # (B, n_new)


def band_mask(T: int, window: int) -> torch.Tensor:
    """``[T, T]`` causal mask limited to the last ``window`` keys: query i sees ``i - W < j <= i``."""
    q = torch.arange(T)[:, None]  # (T, 1)
    k = torch.arange(T)[None, :]  # (1, T)
    return causal_mask(T, T) & (q - k < window)


@torch.inference_mode()
def windowed_recompute(model, ids: torch.Tensor, window: int) -> torch.Tensor:
    """Sliding-window attention without a cache: one forward pass with a band mask; ``[B, T, V]``."""
    return masked_forward(model, ids, band_mask(ids.shape[1], window))


@dataclass
class SlidingComparison:
    """What ``compare_sliding`` measured, one entry per position 0 .. T-1 of ``ids``.

    diff_full      max |sliding - full attention| of the logits at that position
    diff_windowed  max |sliding - windowed recompute| (the band-mask reference)
    stored         positions held by the cache after that token
    n_seen         tokens seen after that token (the next position)
    nbytes         bytes held by the sliding cache after that token
    """

    window: int
    ids: torch.Tensor
    diff_full: list[float]
    diff_windowed: list[float]
    stored: list[int]
    n_seen: list[int]
    nbytes: list[int]

    def first_differing_position(self, tol: float) -> int | None:
        """First position where sliding and full attention differ by more than ``tol``."""
        return next((p for p, d in enumerate(self.diff_full) if not d <= tol), None)


@torch.inference_mode()
def compare_sliding(model, ids: torch.Tensor, window: int) -> SlidingComparison:
    """Feed ``ids`` ``[1, T]`` token by token through a ``SlidingWindowKVCache(window)``.

    At every position compare its logits with full attention (one causal forward pass) and with
    the band-mask recompute, and record what the cache holds.
    """
    model.eval()
    full = model(ids)[0].float()  # (T, V): full attention, every position at once
    windowed = windowed_recompute(model, ids, window)[0].float()  # (T, V)
    cache = SlidingWindowKVCache(window)
    out = SlidingComparison(window, ids, [], [], [], [], [])
    for t in range(ids.shape[1]):
        logits = model(ids[:, t : t + 1], cache=cache)[0, -1].float()  # (V,)
        out.diff_full.append(float((logits - full[t]).abs().max()))
        out.diff_windowed.append(float((logits - windowed[t]).abs().max()))
        out.stored.append(cache.seq_len)
        out.n_seen.append(cache.n_seen)
        out.nbytes.append(cache.nbytes)
    return out


@dataclass
class MemoryTrace:
    """One cache kind followed through a generation: lists aligned with ``tokens``.

    tokens   tokens processed so far (prompt + decoded)
    stored   positions the cache holds
    nbytes   bytes the cache's K/V tensors occupy
    new_buffer  True where layer 0's K tensor is a new allocation (its data pointer changed)
    """

    kind: str
    tokens: list[int]
    stored: list[int]
    nbytes: list[int]
    new_buffer: list[bool]

    @property
    def n_allocations(self) -> int:
        return sum(self.new_buffer)


@torch.inference_mode()
def memory_trace(model, ids: torch.Tensor, n_steps: int, kind: str = "dynamic", window: int = 16) -> MemoryTrace:
    """Prefill ``ids`` ``[B, T]`` then decode ``n_steps`` greedy tokens with a cache of ``kind``.

    ``kind``: ``"dynamic"`` (``KVCache``), ``"static"`` (``StaticKVCache`` sized for T + n_steps)
    or ``"sliding"`` (``SlidingWindowKVCache(window)``). After each forward pass records the
    positions stored, the bytes held and whether layer 0's K buffer moved to new memory.
    """
    B, T = ids.shape
    check_choice("kind", kind, ("dynamic", "static", "sliding"))
    if kind == "sliding":
        cache = SlidingWindowKVCache(window)
    else:
        cache = make_cache(kind, model.cfg, B, T + n_steps, dtype=model.lm_head.weight.dtype)
    trace = MemoryTrace(kind, [], [], [], [])
    ptr = None

    def record(n_tokens: int) -> None:
        nonlocal ptr
        new_ptr = cache.k[0].data_ptr()
        trace.tokens.append(n_tokens)
        trace.stored.append(cache.seq_len)
        trace.nbytes.append(cache.nbytes)
        trace.new_buffer.append(new_ptr != ptr)
        ptr = new_ptr

    if kind == "static":
        ptr = cache.k[0].data_ptr()  # allocated up front, before any token
    logits = (feed(model, ids, cache) if kind == "sliding" else model(ids, cache=cache))[:, -1]  # (B, V)
    record(T)
    for i in range(n_steps):
        logits = decode_step(model, logits.argmax(-1), cache)  # (B, V)
        record(T + i + 1)
    return trace
