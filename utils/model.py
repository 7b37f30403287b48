"""A Llama-style decoder: RMSNorm, RoPE, grouped-query attention, SwiGLU MLP.

Parameter names follow Hugging Face's ``LlamaForCausalLM`` (``layers.0.self_attn.q_proj`` ...)
so its weights load into ours one to one (``utils.hf.from_hf``).

``model(input_ids, cache=None, attention_mask=None) -> logits [B, T, V]``.
With a cache, the new tokens' positions continue from what the cache holds, per row, and
their K/V are appended to every layer's cache: the caller never passes positions by hand.
"""
from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn as nn
import torch.nn.functional as F

from .attention import RopeTables, apply_rope_rolled, attention, causal_mask, rolled_sin, rope_angles
from .cache import Cache
from .config import ModelConfig
from .i18n import tr
from .validate import check_choice, check_forward
from .weight_layout import MATVEC_LAYOUT, set_weight_layout

ATTN_IMPLS = ("sdpa", "explicit")


def check_rope(rope) -> None:
    if not isinstance(rope, RopeTables):
        raise ValueError(tr("rope must be a RopeTables (from model.rope_tables(positions, dtype)), got {type}: the "
                            "layers rotate with the rolled sin table, and a plain (cos, sin) pair would silently rotate "
                            "wrong", type=type(rope).__name__))


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
            raise ValueError(tr("Decoder needs a ModelConfig, got {type}", type=type(cfg).__name__))
        if cfg.arch != "llama":
            raise ValueError(tr("Decoder builds Llama-style models; arch={arch!r} configs are for sizing only",
                                arch=cfg.arch))
        self.cfg = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.apply(self._init_weights)
        if cfg.tie_embeddings:
            self.lm_head.weight = self.embed_tokens.weight
        # Same values, stored so that batch-1 decode streams them fastest on CPU (utils/weight_layout.py).
        set_weight_layout(self, MATVEC_LAYOUT)
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
        plan = plan_step(cache, B, T, attention_mask, position_ids, device=input_ids.device)
        return run_layers(self, input_ids, plan.positions, plan.mask, cache, plan.is_causal, plan.new_mask)


def check_model(model, name: str = "model") -> None:
    """``model`` is the course's ``Decoder`` (a tokenizer or another object passed in its place is named)."""
    if not isinstance(model, Decoder):
        hint = tr(" (that is the tokenizer: pass it as tokenizer=...)") if hasattr(model, "encode") else ""
        raise ValueError(tr("{name} must be a utils.Decoder (e.g. from load_course_model()), got {type}{hint}",
                            name=name, type=type(model).__name__, hint=hint))

class StepPlan(NamedTuple):
    """Where ``T`` new tokens go: what ``plan_step`` computes once for every forward of the course."""

    positions: slice | torch.Tensor  # RoPE positions: slice(start, start + T), or [B, T] per row (left padding)
    mask: torch.Tensor | None  # None (see every key), boolean [T, S], or [B, 1, T, S] with padding
    is_causal: bool  # the attention kernel's built-in triangle fits: a prompt with nothing cached before it
    new_mask: torch.Tensor | None  # [B, T]: which new positions are real tokens (None: all of them)


def plan_step(cache, B: int, T: int, attention_mask: torch.Tensor | None = None,
              position_ids: torch.Tensor | None = None, device=None) -> StepPlan:
    """Positions and attention mask for ``T`` new tokens per row after what ``cache`` holds.

    The one place of the course that says where new tokens go. With no padding, positions simply
    continue from the tokens the cache has seen (``cache.seen_tokens()``). With left padding (in the
    cache, or in ``attention_mask`` ``[B, T]``: 1 = real token, 0 = padding) a row's next position is
    its count of real tokens, and padded keys stay hidden. ``Decoder.forward``, the flat decode step
    and ``masked_forward`` (the bug lab's) all take their positions and masks from here.
    """
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
        start = cache.seen_tokens() if cache is not None else 0  # positions continue from tokens seen
        pos = slice(start, start + T)
    else:
        n_past = cache.valid_counts() if past_mask is not None else torch.full((B,), past, device=device)  # (B,)
        real = new_mask if new_mask is not None else torch.ones(B, T, dtype=torch.bool, device=device)
        pos = (n_past[:, None] + real.long().cumsum(1) - 1).clamp(min=0)  # (B, T)

    # Mask: None when every query may see every key (one new token, no padding); is_causal when the
    # attention kernel's built-in triangle fits (a prompt with nothing cached before it); otherwise an
    # explicit boolean [T, S] or, with padding, [B, 1, T, S].
    mask, is_causal = None, False
    if not padded:
        if T > 1 and past == 0:
            is_causal = True
        elif T > 1:
            mask = causal_mask(T, S, device=device)  # (T, S)
    else:
        old = past_mask if past_mask is not None else torch.ones(B, past, dtype=torch.bool, device=device)
        new = new_mask if new_mask is not None else torch.ones(B, T, dtype=torch.bool, device=device)
        key_ok = torch.cat([old, new], dim=1)  # (B, S): False at padded keys
        allowed = causal_mask(T, S, device=device)[None] & key_ok[:, None, :]  # (B, T, S)
        # A padding query would see no key at all and softmax over nothing gives NaN; let it
        # see itself. Real queries never see padding, so their outputs are unaffected.
        allowed[:, torch.arange(T), past + torch.arange(T)] = True
        mask = allowed[:, None]  # (B, 1, T, S): same for every head
    return StepPlan(pos, mask, is_causal, new_mask)


def run_layers(model: "Decoder", input_ids: torch.Tensor, positions, mask, cache, is_causal: bool = False,
               new_mask: torch.Tensor | None = None) -> torch.Tensor:
    """Embedding, the L blocks and the LM head, with the positions and mask given: logits ``[B, T, V]``."""
    B, T = input_ids.shape
    rope = model.rope_tables(positions, model.embed_tokens.weight.dtype)
    if cache is not None:
        cache.begin_step(B, T, new_mask, input_ids)  # a paged cache gives the new tokens their slots
    x = model.embed_tokens(input_ids)  # (B, T, C)
    for i, layer in enumerate(model.layers):
        x = layer(x, rope, mask, cache, i, is_causal)
    if cache is not None:
        cache.append_mask(new_mask, T)
    return model.lm_head(model.norm(x))  # (B, T, V)


def masked_forward(model: "Decoder", input_ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor | None = None,
                   cache=None) -> torch.Tensor:
    """``model(input_ids, cache)`` with an attention mask of your choosing; logits ``[B, T, V]``.

    ``mask`` ``[T, S]`` (True = may attend, S = cached + new keys) replaces the causal mask ``plan_step``
    would make; ``positions`` default to ``plan_step``'s (per row, counting real tokens, when the cache
    holds left padding). Nothing is checked: this is for experiments (the band mask of sliding windows,
    the bug lab's broken masks); ``mask`` does not hide padded keys.
    """
    B, T = input_ids.shape
    if positions is None:
        positions = plan_step(cache, B, T, device=input_ids.device).positions
    return run_layers(model, input_ids, positions, mask, cache)
