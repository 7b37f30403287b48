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

from .attention import apply_rope_rolled, attention, causal_mask, rolled_sin, rope_angles
from .cache import KVCache, StaticKVCache
from .config import ModelConfig

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

    def forward(self, x, cos, sin, mask, cache, layer_idx):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)  # (B, H, T, d_h)
        k = self.k_proj(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)  # (B, H_kv, T, d_h)
        v = self.v_proj(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)  # (B, H_kv, T, d_h)
        # RoPE (``attention.apply_rope``, in its three-op form); keys are cached already rotated
        q, k = apply_rope_rolled(q, cos, sin), apply_rope_rolled(k, cos, sin)
        if cache is not None:
            k, v = cache.update(layer_idx, k, v)  # (B, H_kv, T_past + T, d_h): history + new
        if self.impl == "sdpa" and T == 1 and not isinstance(mask, str):
            # Decode: the one new query of each head sees every cached key (mask None, or one row
            # [.., 1, S] hiding padded keys). Stack the n_rep query heads that share a K/V head as
            # n_rep queries of that head: SDPA then reads each cached K/V head once, instead of a
            # copy expanded to H heads. Same numbers, less memory traffic per step.
            n_rep = self.n_heads // self.n_kv_heads
            q_grouped = q.reshape(B, self.n_kv_heads, n_rep, self.head_dim)  # (B, H_kv, n_rep, d_h)
            out = F.scaled_dot_product_attention(q_grouped, k, v, attn_mask=mask)  # (B, H_kv, n_rep, d_h)
            return self.o_proj(out.reshape(B, 1, self.n_heads * self.head_dim))  # heads side by side: (B, 1, H*d_h)
        if self.impl == "sdpa":
            # mask "causal": queries are the last T keys; SDPA's is_causal only fits when T_q == T_k.
            out = F.scaled_dot_product_attention(
                q, k, v,
                attn_mask=None if isinstance(mask, str) else mask,
                is_causal=isinstance(mask, str),
                enable_gqa=self.n_heads != self.n_kv_heads,
            )
        else:
            if isinstance(mask, str):
                mask = causal_mask(T, k.shape[2], device=x.device)
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

    def forward(self, x, cos, sin, mask, cache, layer_idx):
        x = x + self._drop(self.self_attn(self.input_layernorm(x), cos, sin, mask, cache, layer_idx))
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
        if impl not in ATTN_IMPLS:
            raise ValueError(f"attn_impl={impl!r}; choose one of {ATTN_IMPLS}")
        self.attn_impl = impl
        for layer in self.layers:
            layer.self_attn.impl = impl

    def rope_tables(self, pos, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and rolled sin of positions ``pos`` (a slice, ``[T]`` or ``[B, T]`` ids), as the layers take them.

        ``[T, d_h]`` each, or ``[B, 1, T, d_h]`` for per-row positions (broadcast over heads);
        cast to ``dtype`` once here rather than in every layer.
        """
        cos, sin = self.rope_cos[pos], self.rope_sin_rolled[pos]  # (T, d_h) or (B, T, d_h)
        if cos.dim() == 3:
            cos, sin = cos[:, None], sin[:, None]  # (B, 1, T, d_h)
        return cos.to(dtype), sin.to(dtype)

    def _check(self, input_ids, cache, attention_mask, position_ids) -> None:
        V = self.cfg.vocab_size
        if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2:
            shape = tuple(input_ids.shape) if isinstance(input_ids, torch.Tensor) else type(input_ids).__name__
            raise ValueError(f"input_ids must be a [B, T] tensor of token ids, got {shape}")
        if input_ids.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8):
            raise ValueError(f"input_ids must hold integer token ids, got dtype {input_ids.dtype}")
        B, T = input_ids.shape
        if B == 0 or T == 0:
            raise ValueError(f"empty input: input_ids has shape {(B, T)}; a prompt needs at least one token")
        lo, hi = (int(t) for t in input_ids.aminmax())  # smallest and largest id, one pass
        if lo < 0 or hi >= V:
            bad = lo if lo < 0 else hi
            raise ValueError(f"token id {bad} is outside the vocabulary [0, {V - 1}] (vocab_size={V})")
        # positions seen so far (a sliding-window cache stores fewer than it has seen: ``n_seen``)
        past = getattr(cache, "n_seen", cache.seq_len) if cache is not None else 0
        if past + T > self.cfg.max_seq_len:
            raise ValueError(
                f"sequence of {past + T} positions ({past} cached + {T} new) exceeds max_seq_len={self.cfg.max_seq_len}"
            )
        if cache is not None:
            if not isinstance(cache, (KVCache, StaticKVCache)):
                raise ValueError(f"cache must be a KVCache or StaticKVCache, got {type(cache).__name__}")
            if cache.batch_size is not None and cache.batch_size != B:
                raise ValueError(f"input_ids has batch size {B} but the cache holds {cache.batch_size} rows")
            if cache.n_layers not in (0, self.cfg.n_layers):
                raise ValueError(f"cache has {cache.n_layers} layers, the model {self.cfg.n_layers}")
        if attention_mask is not None:
            if not isinstance(attention_mask, torch.Tensor) or tuple(attention_mask.shape) != (B, T):
                shape = tuple(attention_mask.shape) if isinstance(attention_mask, torch.Tensor) else attention_mask
                raise ValueError(f"attention_mask must have the shape of input_ids {(B, T)}, got {shape}")
            if ((attention_mask != 0) & (attention_mask != 1)).any():
                raise ValueError("attention_mask must hold only 0 (padding) and 1 (real token)")
        if position_ids is not None:
            if not isinstance(position_ids, torch.Tensor) or tuple(position_ids.shape) not in ((T,), (B, T)):
                raise ValueError(f"position_ids must be [T] or [B, T] = {(B, T)}")
            if position_ids.min() < 0 or position_ids.max() >= self.cfg.max_seq_len:
                raise ValueError(f"position_ids must lie in [0, {self.cfg.max_seq_len - 1}]")

    def forward(
        self,
        input_ids: torch.Tensor,
        cache: KVCache | StaticKVCache | None = None,
        attention_mask: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Logits ``[B, T, V]`` for ``input_ids`` ``[B, T]``.

        ``attention_mask`` ``[B, T]``: 1 = real token, 0 = left padding. ``position_ids`` is for
        experiments only (the bug lab): normally positions come from the cache.
        """
        self._check(input_ids, cache, attention_mask, position_ids)
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
            start = getattr(cache, "n_seen", past) if cache is not None else 0  # positions continue from tokens seen
            pos = slice(start, start + T)
        cos, sin = self.rope_tables(pos, self.embed_tokens.weight.dtype)

        # Mask: None when every query may see every key (one new token, no padding); "causal" when
        # SDPA's built-in causal mask fits; otherwise an explicit boolean [B, 1, T, S].
        if not padded:
            if T == 1:
                mask = None
            elif past == 0:
                mask = "causal"
            else:
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

        x = self.embed_tokens(input_ids)  # (B, T, C)
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, mask, cache, i)
        if cache is not None:
            cache.append_mask(new_mask, T)
        return self.lm_head(self.norm(x))  # (B, T, V)
