"""A batch-invariant decode step: every sum in an order fixed by the maths, never by the batch.

A row's logits can change with its neighbours in the batch: a matrix product of 8 rows may take another
kernel (and so another order of additions) than a product of 1 row, and a left-padded row attends over
more key slots. A **batch-invariant** kernel fixes the order of every reduction per output, whatever the
batch. This module builds one from operations whose result cannot depend on the batch:

* elementwise ``*``, ``+``, ``/``, ``sqrt`` and ``exp`` (each result rounded on its own; ``exp`` is checked
  by the tests to give the same bits wherever an element sits in a tensor on this CPU);
* sums over the features (C, d_ff, d_h) as a fixed tree of halves (``tree_sum``): its shape is the
  weight's, not the batch's;
* sums over keys left to right (``keys_sum``), so a padded row's leading zeros add exactly nothing.

The prompt goes through the same step one token at a time, so the cached K/V are batch-invariant too.
It is slow (a product becomes a ``[B, C_out, C_in]`` tensor and a tree of additions) and float32 only:
a demonstration of the idea, not a fast kernel.

    invariant_logits(model, rows)   # rows: lists of token ids; the next-token logits [B, V] of each
"""
from __future__ import annotations

from typing import Sequence

import torch

from ..generate import left_pad


def tree_sum(x: torch.Tensor) -> torch.Tensor:
    """Sum over the last dim as a fixed tree of halves: pad with zeros to a power of two, then add the
    two halves, again and again. The order depends only on the last dim's length. ``[..., n] -> [...]``."""
    n = x.shape[-1]
    width = 1 << (n - 1).bit_length()  # the next power of two
    if width != n:
        x = torch.cat([x, x.new_zeros(*x.shape[:-1], width - n)], dim=-1)  # adding 0.0 is exact
    while x.shape[-1] > 1:
        half = x.shape[-1] // 2
        x = x[..., :half] + x[..., half:]  # (..., half): one elementwise addition per pair
    return x[..., 0]


def keys_sum(x: torch.Tensor) -> torch.Tensor:
    """Sum over dim 2 (the keys, ``[B, H, S, ...]``) left to right: ``0 + x_0 + x_1 + ...``. Keys a row
    may not see carry exact zeros, and zeros before its first key leave the running sum at exactly 0."""
    total = torch.zeros_like(x[:, :, 0])
    for s in range(x.shape[2]):
        total = total + x[:, :, s]
    return total


def linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``x @ w.T`` (``x`` ``[B, C_in]``, ``w`` ``[C_out, C_in]``), each output a ``tree_sum`` of its products."""
    return tree_sum(x[:, None, :] * w[None])  # (B, C_out, C_in) -> (B, C_out)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    mean_sq = tree_sum(x * x) / x.shape[-1]  # (B,)
    return x / torch.sqrt(mean_sq + eps)[:, None] * weight


def silu(x: torch.Tensor) -> torch.Tensor:
    # x * sigmoid(x) from exp, + and /: torch's fused silu rounds differently in its vector and scalar loops
    return x / (1 + torch.exp(-x))


def rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate ``x`` ``[B, H, d_h]`` by per-row tables ``[B, 1, d_h]`` (the halves convention of ``attention.py``)."""
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


@torch.inference_mode()
def invariant_step(model, token_ids: torch.Tensor, positions: torch.Tensor, real: torch.Tensor, state: list) -> torch.Tensor:
    """One token per row through ``model``'s weights, batch-invariantly; returns logits ``[B, V]``.

    ``positions`` ``[B]``: each row's RoPE position (its count of real tokens before); ``real`` ``[B]``:
    False for a padding token (its key stays hidden from later queries); ``state``: per layer a dict
    K, V ``[B, H_kv, S, d_h]`` and ``ok`` ``[B, S]``, appended to in place."""
    cfg = model.cfg
    B, H, H_kv, d_h = token_ids.shape[0], cfg.n_heads, cfg.n_kv_heads, cfg.head_dim
    cos, sin = model.rope_cos[positions][:, None], model.rope_sin[positions][:, None]  # (B, 1, d_h)
    x = model.embed_tokens.weight[token_ids]  # (B, C)
    for i, layer in enumerate(model.layers):
        att = layer.self_attn
        h = rms_norm(x, layer.input_layernorm.weight, cfg.norm_eps)
        q = rope(linear(h, att.q_proj.weight).view(B, H, d_h), cos, sin)  # (B, H, d_h)
        k = rope(linear(h, att.k_proj.weight).view(B, H_kv, d_h), cos, sin)  # (B, H_kv, d_h)
        v = linear(h, att.v_proj.weight).view(B, H_kv, d_h)
        if len(state) <= i:
            state.append({"K": k[:, :, None], "V": v[:, :, None], "ok": real[:, None]})
        else:
            st = state[i]
            st["K"] = torch.cat([st["K"], k[:, :, None]], dim=2)  # (B, H_kv, S, d_h)
            st["V"] = torch.cat([st["V"], v[:, :, None]], dim=2)
            st["ok"] = torch.cat([st["ok"], real[:, None]], dim=1)  # (B, S)
        K, V, ok = state[i]["K"], state[i]["V"], state[i]["ok"].clone()
        ok[:, -1] = True  # a query always sees its own key (a padding query would otherwise see none)
        K = K.repeat_interleave(H // H_kv, dim=1)  # (B, H, S, d_h): each K/V head serves H / H_kv query heads
        V = V.repeat_interleave(H // H_kv, dim=1)
        scores = tree_sum(q[:, :, None] * K) / d_h**0.5  # (B, H, S)
        scores = scores.masked_fill(~ok[:, None], float("-inf"))
        e = torch.exp(scores - scores.amax(dim=-1, keepdim=True))  # max is exact in any order; exp(-inf) = 0
        p = e / keys_sum(e[..., None])  # (B, H, S): the denominator summed left to right
        out = keys_sum(p[..., None] * V)  # (B, H, d_h)
        x = x + linear(out.reshape(B, H * d_h), att.o_proj.weight)
        h = rms_norm(x, layer.post_attention_layernorm.weight, cfg.norm_eps)
        mlp = layer.mlp
        x = x + linear(silu(linear(h, mlp.gate_proj.weight)) * linear(h, mlp.up_proj.weight), mlp.down_proj.weight)
    return linear(rms_norm(x, model.norm.weight, cfg.norm_eps), model.lm_head.weight)  # (B, V)


@torch.inference_mode()
def invariant_logits(model, rows: Sequence[Sequence[int]], pad_id: int = 0) -> torch.Tensor:
    """The next-token logits ``[B, V]`` of each prompt of ``rows`` (left-padded to one length), fed one
    token at a time through ``invariant_step``. A row's logits are the same bits whatever rows surround it."""
    if model.embed_tokens.weight.dtype != torch.float32:
        raise ValueError(f"the batch-invariant step runs float32 weights, got {model.embed_tokens.weight.dtype}")
    ids, mask = left_pad(rows, pad_id)  # (B, T) each
    state: list = []
    counts = torch.zeros(ids.shape[0], dtype=torch.long)  # (B,): real tokens seen per row
    for t in range(ids.shape[1]):
        real = mask[:, t].bool()
        logits = invariant_step(model, ids[:, t], counts.clone(), real, state)
        counts += real.long()
    return logits
