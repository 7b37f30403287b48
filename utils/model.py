"""A Llama-style decoder: RMSNorm, RoPE, grouped-query attention, SwiGLU MLP.

Parameter names follow Hugging Face's ``LlamaForCausalLM`` (``layers.0.self_attn.q_proj`` ...)
so its weights load into ours one to one (``utils.hf.from_hf``).

``model(input_ids, cache=None, attention_mask=None) -> logits [B, T, V]``.
With a cache, the new tokens' positions continue from what the cache holds, per row, and
their K/V are appended to every layer's cache: the caller never passes positions by hand.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from .attention import RopeTables, apply_rope_rolled, attention, causal_mask, rolled_sin, rope_angles
from .cache import Cache
from .config import ModelConfig
from .validate import check_choice, check_forward, check_rope

ATTN_IMPLS = ("sdpa", "explicit")


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # weight * x / sqrt(mean(x^2) + eps) over the last dim. torch's kernel computes it in one
        # op (instead of six), in float32 even for half inputs, where the mean of squares overflows.
        return F.rms_norm(x, self.weight.shape, self.weight, self.eps)


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = cfg.n_heads, cfg.n_kv_heads, cfg.head_dim
        self.q_proj = nn.Linear(cfg.d_model, cfg.n_heads * cfg.head_dim, bias=False)
        self.k_proj = nn.Linear(cfg.d_model, cfg.n_kv_heads * cfg.head_dim, bias=False)
        self.v_proj = nn.Linear(cfg.d_model, cfg.n_kv_heads * cfg.head_dim, bias=False)
        self.o_proj = nn.Linear(cfg.n_heads * cfg.head_dim, cfg.d_model, bias=False)
        self.impl = "sdpa"

    def forward(self, x, rope: RopeTables, mask, cache, layer_idx, is_causal=False):
        """``x`` ``[B, T, C]``; ``rope``: the positions' tables (``Decoder.rope_tables``); ``mask``:
        None (every key visible) or boolean, True = may attend, broadcastable to ``[B, H, T, S]``;
        ``is_causal``: the new queries are the last T of S keys, no other mask."""
        check_rope(rope)  # a plain sin table would run and rotate wrong: refuse it
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)  # (B, H, T, d_h)
        k = self.k_proj(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)  # (B, H_kv, T, d_h)
        v = self.v_proj(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)  # (B, H_kv, T, d_h)
        # RoPE (``attention.apply_rope``, in its three-op form); keys are cached already rotated
        q, k = apply_rope_rolled(q, *rope), apply_rope_rolled(k, *rope)
        if cache is not None:
            cache.observe_queries(layer_idx, q)  # only a cache that evicts by attention received uses them
            k, v = cache.update(layer_idx, k, v)  # (B, H_kv, T_past + T, d_h): history + new
        if self.impl == "sdpa" and T == 1 and not is_causal:
            # Decode: the one new query of each head sees every cached key (mask None, or one row
            # [.., 1, S] hiding padded keys). Stack the n_rep query heads that share a K/V head as
            # n_rep queries of that head: SDPA then reads each cached K/V head once, instead of a
            # copy expanded to H heads. Same numbers, less memory traffic per step.
            n_rep = self.n_heads // self.n_kv_heads
            q_grouped = q.reshape(B, self.n_kv_heads, n_rep, self.head_dim)  # (B, H_kv, n_rep, d_h)
            out = F.scaled_dot_product_attention(q_grouped, k, v, attn_mask=mask)  # (B, H_kv, n_rep, d_h)
            return self.o_proj(out.reshape(B, 1, self.n_heads * self.head_dim))  # heads side by side: (B, 1, H*d_h)
        if self.impl == "sdpa":
            # SDPA's is_causal is the top-left triangle: the caller sets it only when T_q == T_k.
            out = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, is_causal=is_causal, enable_gqa=self.n_heads != self.n_kv_heads
            )
        else:
            if is_causal:
                mask = causal_mask(T, k.shape[2], device=x.device)  # (T, S)
            out = attention(q, k, v, mask)
        out = out.transpose(1, 2).reshape(B, T, self.n_heads * self.head_dim)  # (B, T, H*d_h)
        return self.o_proj(out)


class MLP(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x))."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.up_proj = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.down_proj = nn.Linear(cfg.d_ff, cfg.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.mlp = MLP(cfg)
        # Identity in eval mode. Left on (train mode) it makes cached and recomputed logits differ.
        self.dropout = nn.Dropout(cfg.dropout)

    def _drop(self, x: torch.Tensor) -> torch.Tensor:
        # In eval mode dropout is the identity: skip the call (one less op per step and layer).
        return self.dropout(x) if self.training else x

    def forward(self, x, rope, mask, cache, layer_idx, is_causal=False):
        x = x + self._drop(self.self_attn(self.input_layernorm(x), rope, mask, cache, layer_idx, is_causal))
        return x + self._drop(self.mlp(self.post_attention_layernorm(x)))


class Decoder(nn.Module):
    """Decoder-only language model. ``model.cfg`` is its ``ModelConfig``."""

    def __init__(self, cfg: ModelConfig, attn_impl: str = "sdpa") -> None:
        super().__init__()
        if not isinstance(cfg, ModelConfig):
            raise ValueError(f"Decoder needs a ModelConfig, got {type(cfg).__name__}")
        if cfg.arch != "llama":
            raise ValueError(f"Decoder builds Llama-style models; arch={cfg.arch!r} configs are for sizing only")
        self.cfg = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.apply(self._init_weights)
        if cfg.tie_embeddings:
            self.lm_head.weight = self.embed_tokens.weight
        # RoPE tables computed once for every position the model can see (not saved with weights).
        cos, sin = rope_angles(cfg.head_dim, cfg.max_seq_len, cfg.rope_theta)  # (max_seq_len, d_h)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)
        self.register_buffer("rope_sin_rolled", rolled_sin(sin), persistent=False)  # for apply_rope_rolled
        self.set_attn_impl(attn_impl)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def set_attn_impl(self, impl: str) -> None:
        """'sdpa' (torch's fused kernel, the fast path) or 'explicit' (``attention.attention``, readable)."""
        check_choice("attn_impl", impl, ATTN_IMPLS)
        self.attn_impl = impl
        for layer in self.layers:
            layer.self_attn.impl = impl

    def rope_tables(self, pos, dtype: torch.dtype) -> RopeTables:
        """cos and rolled sin of positions ``pos`` (a slice, ``[T]`` or ``[B, T]`` ids), as the layers take them.

        ``[T, d_h]`` each, or ``[B, 1, T, d_h]`` for per-row positions (broadcast over heads);
        cast to ``dtype`` once here rather than in every layer.
        """
        cos, sin = self.rope_cos[pos], self.rope_sin_rolled[pos]  # (T, d_h) or (B, T, d_h)
        if cos.dim() == 3:
            cos, sin = cos[:, None], sin[:, None]  # (B, 1, T, d_h)
        return RopeTables(cos.to(dtype), sin.to(dtype))

    def forward(
        self,
        input_ids: torch.Tensor,
        cache: Cache | None = None,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Logits ``[B, T, V]`` for ``input_ids`` ``[B, T]``.

        ``attention_mask`` ``[B, T]``: 1 = real token, 0 = left padding. ``position_ids`` is for
        experiments only (the bug lab): normally positions come from the cache.
        """
        check_forward(self.cfg, input_ids, cache, attention_mask, position_ids)
        B, T = input_ids.shape
        past = cache.seq_len if cache is not None else 0
        S = past + T  # keys visible after this step
        past_mask = cache.mask if cache is not None else None  # (B, past) or None: no padding so far
        new_mask = None
        if attention_mask is not None and not bool(attention_mask.all()):
            new_mask = attention_mask.bool()  # (B, T)
        padded = past_mask is not None or new_mask is not None

        # Positions: with no padding, simply past .. past+T-1. With padding, count real tokens per row.
        if position_ids is not None:
            pos = position_ids.long()
        elif not padded:
            pos = None
        else:
            n_past = cache.valid_counts() if past_mask is not None else torch.full((B,), past, device=input_ids.device)  # (B,)
            real = new_mask if new_mask is not None else torch.ones(B, T, dtype=torch.bool, device=input_ids.device)
            pos = (n_past[:, None] + real.long().cumsum(1) - 1).clamp(min=0)  # (B, T)
        if pos is None:
            start = cache.seen_tokens() if cache is not None else 0  # positions continue from tokens seen
            pos = slice(start, start + T)
        rope = self.rope_tables(pos, self.embed_tokens.weight.dtype)

        # Mask: None when every query may see every key (one new token, no padding); is_causal when
        # the attention kernel's built-in triangle fits (a prompt with nothing cached before it);
        # otherwise an explicit boolean [T, S] or, with padding, [B, 1, T, S].
        mask, is_causal = None, False
        if not padded:
            if T > 1 and past == 0:
                is_causal = True
            elif T > 1:
                mask = causal_mask(T, S, device=input_ids.device)  # (T, S)
        else:
            old = past_mask if past_mask is not None else torch.ones(B, past, dtype=torch.bool, device=input_ids.device)
            new = new_mask if new_mask is not None else torch.ones(B, T, dtype=torch.bool, device=input_ids.device)
            key_ok = torch.cat([old, new], dim=1)  # (B, S): False at padded keys
            allowed = causal_mask(T, S, device=input_ids.device)[None] & key_ok[:, None, :]  # (B, T, S)
            # A padding query would see no key at all and softmax over nothing gives NaN; let it
            # see itself. Real queries never see padding, so their outputs are unaffected.
            allowed[:, torch.arange(T), past + torch.arange(T)] = True
            mask = allowed[:, None]  # (B, 1, T, S): same for every head

        if cache is not None:
            cache.begin_step(B, T, new_mask)  # a paged cache gives the new tokens their slots
        x = self.embed_tokens(input_ids)  # (B, T, C)
        for i, layer in enumerate(self.layers):
            x = layer(x, rope, mask, cache, i, is_causal)
        if cache is not None:
            cache.append_mask(new_mask, T)
        return self.lm_head(self.norm(x))  # (B, T, V)
