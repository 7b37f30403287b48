"""The pieces of causal self-attention, small enough to read one by one.

Tensor layout everywhere: ``[B, H, T, d_h]`` for queries, ``[B, H_kv, T, d_h]`` for keys and
values (see ``utils/cache.py``). ``T_q`` is how many new queries we have (the whole prompt in
prefill, 1 in decode) and ``T_k`` how many keys they may look at (cache + new).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import torch


def causal_mask(T_q: int, T_k: int, offset: int | None = None, device=None) -> torch.Tensor:
    """Boolean mask ``[T_q, T_k]``: True where query i may attend to key j.

    Query i sits at absolute position ``offset + i``; it sees keys ``j <= offset + i``.
    Without a cache ``offset = 0`` and this is the familiar lower triangle. In decode
    (``T_q = 1``) the single new query sees every cached key, so the row is all True.
    ``offset`` defaults to ``T_k - T_q``: the new queries are the last ``T_q`` keys.
    """
    if offset is None:
        offset = T_k - T_q
    q_pos = torch.arange(T_q, device=device)[:, None] + offset  # (T_q, 1)
    k_pos = torch.arange(T_k, device=device)[None, :]  # (1, T_k)
    return k_pos <= q_pos


def rope_angles(head_dim: int, max_len: int, theta: float = 10000.0) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin tables ``[max_len, d_h]`` for rotary position embeddings.

    Pair ``(x[i], x[i + d_h/2])`` is rotated by angle ``pos * theta**(-2i/d_h)``: low i turn
    fast (fine position), high i turn slowly (coarse position). This is the "rotate half"
    layout of Hugging Face's Llama and GPT-NeoX. Meta's original Llama code pairs adjacent
    dimensions (2i, 2i + 1) instead; converting its weights permutes the rows of W_q and W_k.
    """
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))  # (d_h/2,)
    pos = torch.arange(max_len, dtype=torch.float32)
    angles = torch.outer(pos, inv_freq)  # (max_len, d_h/2)
    angles = torch.cat([angles, angles], dim=-1)  # (max_len, d_h): same angle for both halves of a pair
    return angles.cos(), angles.sin()


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate ``x`` ``[B, H, T, d_h]`` by the angles of its positions.

    ``cos``/``sin`` are ``[T, d_h]`` (same positions for every row) or ``[B, T, d_h]``
    (per-row positions, as in a left-padded batch): pick them from ``rope_angles`` with the
    tokens' position ids.
    """
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    if cos.dim() == 3:
        cos, sin = cos[:, None], sin[:, None]  # (B, 1, T, d_h): broadcast over heads
    return x * cos + _rotate_half(x) * sin


def rolled_sin(sin: torch.Tensor) -> torch.Tensor:
    """The sin table with its first half negated: what ``apply_rope_rolled`` multiplies by."""
    half = sin.shape[-1] // 2
    return torch.cat([-sin[..., :half], sin[..., half:]], dim=-1)  # (..., d_h)


def apply_rope_rolled(x: torch.Tensor, cos: torch.Tensor, sin_rolled: torch.Tensor) -> torch.Tensor:
    """``apply_rope`` in three tensor ops (mul, roll, addcmul) instead of six (mul, split, which is what
    ``chunk`` dispatches, neg, cat, mul, add; its dtype casts are no-ops when the dtypes match): the
    model's hot path.

    ``rotate_half(x) = [-x2, x1]`` is ``x`` rolled by d_h/2 (``[x2, x1]``) with its first half
    negated, so the minus sign can live in the table, computed once (``rolled_sin``):

        x * cos + rotate_half(x) * sin  ==  x * cos + x.roll(d_h/2) * sin_rolled

    ``cos`` and ``sin_rolled`` must already have ``x``'s dtype and broadcast against it.
    Decode runs this twice per layer and token, on a few hundred numbers, where each op costs its
    fixed dispatch overhead rather than arithmetic: fewer ops is what makes it faster.
    """
    return torch.addcmul(x * cos, x.roll(x.shape[-1] // 2, dims=-1), sin_rolled)


class RopeTables(NamedTuple):
    """cos and *rolled* sin of some positions: what the model's layers rotate with.

    The layers use ``apply_rope_rolled``, whose sin table has its first half negated
    (``rolled_sin``). A plain ``(cos, sin)`` pair from ``rope_angles`` would rotate the first
    half of every pair the wrong way and still run, so the layers take only this type: build it
    with ``Decoder.rope_tables(positions, dtype)`` or ``RopeTables.from_angles(cos, sin)``.
    """

    cos: torch.Tensor
    sin_rolled: torch.Tensor

    @classmethod
    def from_angles(cls, cos: torch.Tensor, sin: torch.Tensor) -> "RopeTables":
        """From the plain tables of ``rope_angles`` (what ``apply_rope`` takes)."""
        return cls(cos, rolled_sin(sin))


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """Expand ``[B, H_kv, T, d_h]`` to ``[B, H_kv * n_rep, T, d_h]`` for GQA/MQA.

    Query head h reads K/V head ``h // n_rep``. The cache stores only the H_kv heads; this
    expansion happens after reading it, so the cache never grows. The copy is still real: for
    ``n_rep > 1`` the result is a new tensor ``n_rep`` times the size of ``x``, allocated and
    written at every call (transient memory and memory traffic). That is why fast paths skip it.
    ``F.scaled_dot_product_attention(..., enable_gqa=True)`` reads each shared head in place when
    a flash kernel runs it (FlashAttention on CUDA; on CPU, the flash kernel of recent PyTorch
    versions, 2.13 included); its math fallback (older versions on CPU, or inputs the flash
    kernel does not take) expands K and V with ``repeat_interleave``, the same copy as here. The
    course model's decode step (``model.py``, T == 1) stacks a group's query heads as queries of
    one K/V head instead: the K/V heads are read as stored, whichever kernel SDPA picks. This
    readable version is what ``attention`` uses.
    """
    if n_rep == 1:
        return x
    B, H_kv, T, d_h = x.shape
    x = x[:, :, None, :, :].expand(B, H_kv, n_rep, T, d_h)  # (B, H_kv, n_rep, T, d_h), no copy yet
    return x.reshape(B, H_kv * n_rep, T, d_h)  # (B, H, T, d_h)


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    return_weights: bool = False,
):
    """Softmax attention written out, the version to read.

    q ``[B, H, T_q, d_h]``, k and v ``[B, H_kv, T_k, d_h]``, mask broadcastable to
    ``[B, H, T_q, T_k]`` (True = may attend) or None (everything visible).
    Returns the output ``[B, H, T_q, d_h]`` (and the weights ``[B, H, T_q, T_k]``).
    """
    n_rep = q.shape[1] // k.shape[1]
    k, v = repeat_kv(k, n_rep), repeat_kv(v, n_rep)  # (B, H, T_k, d_h)
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])  # (B, H, T_q, T_k)
    if mask is not None:
        # -inf makes exp() exactly 0: masked keys get no weight at all.
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores.float(), dim=-1).to(q.dtype)  # each row sums to 1
    out = weights @ v  # (B, H, T_q, d_h)
    return (out, weights) if return_weights else out
