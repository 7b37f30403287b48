"""Reference solutions of the exercises, written to be read: ``exercises.show_solution(id)`` prints one.

Each function states its contract (shapes included) in its docstring; the notebooks' stub cells
carry the same docstring with ``raise NotImplementedError`` in place of the body.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ..attention import apply_rope, attention


def causal_mask(T_q: int, T_k: int) -> torch.Tensor:
    """Boolean mask [T_q, T_k], True = may attend: T_q new queries after T_k - T_q cached keys.

    Query i is the token at position T_k - T_q + i (the cached keys come first): it sees keys
    0 ... T_k - T_q + i. Prefill is T_q = T_k; a decode step is T_q = 1.
    """
    offset = T_k - T_q  # keys already in the cache, before the first new query
    q_pos = torch.arange(T_q)[:, None] + offset  # (T_q, 1): absolute positions of the new queries
    k_pos = torch.arange(T_k)[None, :]  # (1, T_k)
    return k_pos <= q_pos


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """[B, H_kv, T, d_h] -> [B, H_kv * n_rep, T, d_h]: query head h reads K/V head h // n_rep."""
    B, H_kv, T, d_h = x.shape
    x = x[:, :, None].expand(B, H_kv, n_rep, T, d_h)  # (B, H_kv, n_rep, T, d_h): each K/V head n_rep times in a row
    return x.reshape(B, H_kv * n_rep, T, d_h)


def last_valid_logits(logits: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """logits [B, T, V], attention_mask [B, T] (1 = real token) -> [B, V]: each row's last real position."""
    last = attention_mask.long().cumsum(dim=1).argmax(dim=1)  # (B,): the cumsum first reaches its max at the last 1
    return logits[torch.arange(logits.shape[0]), last]  # (B, V)


def prefill_positions(attention_mask: torch.Tensor) -> torch.Tensor:
    """attention_mask [B, T] (0 = left padding) -> positions [B, T]: each row's real tokens count 0, 1, 2...

    Padding columns get position 0 (they are never attended to, any valid position will do).
    """
    return (attention_mask.long().cumsum(dim=1) - 1).clamp(min=0)  # (B, T)


def cache_update(cache_k, cache_v, k_new: torch.Tensor, v_new: torch.Tensor):
    """Append k_new, v_new [B, H_kv, T_new, d_h] to the cache (None while empty) on the time axis."""
    if cache_k is None:
        return k_new, v_new
    return torch.cat([cache_k, k_new], dim=2), torch.cat([cache_v, v_new], dim=2)  # (B, H_kv, T + T_new, d_h)


def decode_step(model, token_ids: torch.Tensor, cache) -> torch.Tensor:
    """One decode step written out: token_ids [B] -> logits [B, V], appending to cache (a KVCache)."""
    cfg = model.cfg
    B = token_ids.shape[0]
    pos = cache.seq_len  # the new token's position is the number of tokens already cached
    cos, sin = model.rope_cos[pos : pos + 1], model.rope_sin[pos : pos + 1]  # (1, d_h)
    x = model.embed_tokens(token_ids[:, None])  # (B, 1, C)
    for i, layer in enumerate(model.layers):
        attn = layer.self_attn
        h = layer.input_layernorm(x)
        q = attn.q_proj(h).view(B, 1, cfg.n_heads, cfg.head_dim).transpose(1, 2)  # (B, H, 1, d_h)
        k = attn.k_proj(h).view(B, 1, cfg.n_kv_heads, cfg.head_dim).transpose(1, 2)  # (B, H_kv, 1, d_h)
        v = attn.v_proj(h).view(B, 1, cfg.n_kv_heads, cfg.head_dim).transpose(1, 2)  # (B, H_kv, 1, d_h)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        K, V = cache.update(i, k, v)  # (B, H_kv, pos + 1, d_h): history + the new token
        out = attention(q, K, V)  # (B, H, 1, d_h): one query sees every key, no mask needed
        x = x + attn.o_proj(out.transpose(1, 2).reshape(B, 1, cfg.n_heads * cfg.head_dim))
        x = x + layer.mlp(layer.post_attention_layernorm(x))
    return model.lm_head(model.norm(x))[:, -1]  # (B, V)


DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}  # as utils.sizing.DTYPE_BYTES (notebook 04 imports it)


def kv_bytes_from_config(config: dict, seq_len: int, batch_size: int, dtype: str) -> int:
    """Cache bytes of a Hugging Face config.json dict: 2 x L x B x H_kv x T x d_h x bytes."""
    L, H = config["num_hidden_layers"], config["num_attention_heads"]
    H_kv = config.get("num_key_value_heads") or H  # missing: every query head has its own K/V (MHA)
    d_h = config.get("head_dim") or config["hidden_size"] // H  # optional: given when it is not C / H
    return 2 * L * batch_size * H_kv * seq_len * d_h * DTYPE_BYTES[dtype]


def max_requests(config: dict, seq_len: int, free_bytes: int, dtype: str) -> int:
    """How many requests of seq_len tokens fit their caches in free_bytes (whole requests only).

    free_bytes: the memory left for the caches, after the weights and the reserve (subtract nothing from it).
    """
    L, H = config["num_hidden_layers"], config["num_attention_heads"]
    H_kv = config.get("num_key_value_heads") or H
    d_h = config.get("head_dim") or config["hidden_size"] // H
    per_request = 2 * L * 1 * H_kv * seq_len * d_h * DTYPE_BYTES[dtype]  # one sequence's cache: B = 1
    return free_bytes // per_request  # whole requests only: round down


def top_p(logits: torch.Tensor, p: float) -> torch.Tensor:
    """logits [V] -> logits [V] with -inf outside the nucleus: the smallest set of most likely
    tokens whose probability reaches p (the token that crosses p is in; the top token always is)."""
    if p >= 1:
        return logits.clone()
    probs = torch.softmax(logits.float(), dim=-1)
    sorted_probs, order = probs.sort(descending=True)
    before = sorted_probs.cumsum(0) - sorted_probs  # mass of the tokens ranked strictly higher
    keep = torch.zeros_like(probs, dtype=torch.bool).scatter(0, order, before < p)
    return logits.masked_fill(~keep, float("-inf"))


def stop_text(text: str, stop_strings: list[str]) -> str | None:
    """text cut before the earliest stop string found anywhere in it, or None if none occurs."""
    hits = [text.find(s) for s in stop_strings if s in text]
    return text[: min(hits)] if hits else None


def ttft_tpot(t_request: float, token_times: list[float]):
    """(ttft, tpot) in seconds: TTFT from the request to the first token; TPOT = (last - first) / (n - 1),
    None with a single token."""
    ttft = token_times[0] - t_request
    tpot = (token_times[-1] - token_times[0]) / (len(token_times) - 1) if len(token_times) > 1 else None
    return ttft, tpot


def itl_p95(token_times: list[float]) -> float:
    """The 95th percentile of the inter-token latencies (gaps between consecutive tokens; the wait
    for the first token is TTFT, not an ITL), with numpy's default linear interpolation."""
    gaps = np.diff(token_times)
    return float(np.percentile(gaps, 95)) if len(gaps) else math.nan


def fixed_position_step(model, token_ids: torch.Tensor, cache) -> torch.Tensor:
    """Mystery 3 fixed: a decode step that passes each row's position explicitly, [B, 1]; logits [B, V]."""
    counts = cache.valid_counts()  # (B,) real tokens per row, or None when no row has padding
    if counts is None:
        counts = torch.full((token_ids.shape[0],), cache.seq_len)
    position = counts[:, None]  # (B, 1): the real tokens already cached come first
    return model(token_ids[:, None], cache=cache, position_ids=position)[:, -1]


def reorder(cache_k: torch.Tensor, cache_v: torch.Tensor, beam_idx: torch.Tensor):
    """Rows of [N, H_kv, T, d_h] gathered by beam_idx [N] on the batch axis (repeats allowed)."""
    return cache_k.index_select(0, beam_idx), cache_v.index_select(0, beam_idx)


def window_update(cache_k, k_new: torch.Tensor, window: int) -> torch.Tensor:
    """Append k_new [B, H_kv, 1, d_h] to cache_k [B, H_kv, W', d_h] (None while empty); keep the
    newest `window` positions, in order: [B, H_kv, min(W' + 1, window), d_h]."""
    k = k_new if cache_k is None else torch.cat([cache_k, k_new], dim=2)  # (B, H_kv, W' + 1, d_h)
    return k[:, :, -window:]
