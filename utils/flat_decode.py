"""The decode step as one flat function: the same math as ``Decoder.forward``, without nn.Module calls.

In a batch-1 decode step of a small model, a large part of the time is not arithmetic: each
``nn.Module`` call, parameter lookup and tensor op costs Python and dispatch time, and a step
makes them one after another in every layer, around kernels that are short at this size
(``python -m utils.bench`` measures the share). Serving engines remove that overhead (CUDA
graphs, ``torch.compile``, C++ loops). This module shows the plain-Python version of the idea:
collect every weight once per ``generate`` call (``flat_weights``), then run each step as one
function over those tensors (``flat_decode_step``). The arithmetic is exactly that of
``Decoder.forward``, in the same order, so the logits are bit for bit the same
(``tests/test_flat_decode.py``); the module calls are gone, and so are a few view ops (transposes
and reshapes that only move the time axis of a single token). The weights are the model's own,
in the memory layout it stores them (``utils/weight_layout.py``): at batch 1 every matrix is read
once per step, so once the weights are large next to the per-op overhead (the benchmark's 100 M
model, not the 3 MB course model) how fast the kernel streams them sets most of the step's time.
That is why each large batch-1 product runs on every core, one block of the matrix's rows per core
(``utils/split_matvec.py``: the same bits, checked once per shape).

``generate(..., step="flat")`` (the default) runs this; ``step="modules"`` runs ``Decoder``.
Where this function cannot compute what the modules would (a forward hook, train mode, the
explicit attention, a cache class with its own ``update``, a subclassed module), ``check_flat``
raises a ``ValueError`` that says to pass ``step="modules"``: nothing switches behind your back,
and a hook you register is never skipped silently.
"""
from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn as nn
import torch.nn.functional as F

from .attention import apply_rope_rolled
from .i18n import tr
from .model import MLP, Attention, Block, Decoder, RMSNorm, plan_step
from .split_matvec import matvec, rows_split


class Weight(NamedTuple):
    """A weight matrix and, for batch 1, its row blocks (``utils/split_matvec.py``): one per core."""
    w: torch.Tensor  # (C_out, C_in)
    blocks: torch.Tensor | None  # (k, C_in, C_out // k), a view of w; None: F.linear

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return matvec(x, self.w, self.blocks)  # (B, C_out)

    @classmethod
    def of(cls, w: torch.Tensor) -> "Weight":
        return cls(w, rows_split(w))


class LayerWeights(NamedTuple):
    attn_norm: torch.Tensor  # (C,)
    q: Weight  # (H * d_h, C)
    k: Weight  # (H_kv * d_h, C)
    v: Weight  # (H_kv * d_h, C)
    o: Weight  # (C, H * d_h)
    mlp_norm: torch.Tensor  # (C,)
    gate: Weight  # (d_ff, C)
    up: Weight  # (d_ff, C)
    down: Weight  # (C, d_ff)


class FlatWeights(NamedTuple):
    embed: torch.Tensor  # (V, C)
    layers: tuple[LayerWeights, ...]
    norm: torch.Tensor  # (C,)
    lm_head: Weight  # (V, C)


# The classes whose forward flat_decode_step reproduces; anything else runs through the modules.
_FLAT_TYPES = (Decoder, Block, Attention, MLP, RMSNorm, nn.Linear, nn.Embedding, nn.Dropout, nn.ModuleList)


def flat_weights(model) -> FlatWeights:
    """The model's own parameter tensors (not copies, and views of them: in-place edits are seen), in step order."""
    layers = []
    for blk in model.layers:
        a, m = blk.self_attn, blk.mlp
        layers.append(LayerWeights(blk.input_layernorm.weight, *map(Weight.of, (a.q_proj.weight, a.k_proj.weight,
                                   a.v_proj.weight, a.o_proj.weight)), blk.post_attention_layernorm.weight,
                                   *map(Weight.of, (m.gate_proj.weight, m.up_proj.weight, m.down_proj.weight))))
    return FlatWeights(model.embed_tokens.weight, tuple(layers), model.norm.weight, Weight.of(model.lm_head.weight))


def check_flat(model, cache) -> None:
    """Raise ``ValueError`` unless ``flat_decode_step`` computes exactly what ``model(...)`` would.

    That needs: eval mode (no dropout), the SDPA attention, a plain ``KVCache``, ``StaticKVCache`` or
    ``PagedKVCache`` (a class that sets ``flat_step_ok`` itself: not a subclass with its own ``update``), only the course's own module
    classes with their own ``forward``, and no forward hook or pre-hook on any module (nor one
    registered for all modules). Hooks can only be seen in torch's hook dictionaries.
    """
    reason = None
    if model.training:
        reason = tr("the model is in train mode (dropout)")
    elif model.attn_impl != "sdpa":
        reason = tr("attn_impl={attn_impl!r} (the flat step runs SDPA)", attn_impl=model.attn_impl)
    elif not type(cache).__dict__.get("flat_step_ok", False):  # declared by the class itself, not inherited
        reason = tr("the cache is a {type}, not a plain KVCache, StaticKVCache or PagedKVCache",
                    type=type(cache).__name__)
    elif any(getattr(nn.modules.module, name, None) for name in ("_global_forward_hooks", "_global_forward_pre_hooks")):
        reason = tr("a forward hook is registered for all modules")
    else:
        for name, m in model.named_modules():
            if m._forward_hooks or m._forward_pre_hooks:
                reason = tr("module {name!r} has a forward hook", name=name or "model")
            elif type(m) not in _FLAT_TYPES or "forward" in m.__dict__:
                reason = tr("module {name!r} ({type}) has its own forward", name=name or "model", type=type(m).__name__)
            if reason:
                break
    if reason:
        raise ValueError(tr("the flat decode step would not compute what the modules do: {reason}. Pass "
                            "step=\"modules\" to run the model's modules.", reason=reason))


def flat_decode_step(model, w: FlatWeights, token_ids: torch.Tensor, cache) -> torch.Tensor:
    """Logits ``[B, V]`` of one new token per row (``token_ids`` ``[B]``), appended to ``cache``.

    Same result as ``model(token_ids[:, None], cache=cache)[:, -1]``; the caller has checked
    the ids and ``check_flat``. Run under ``torch.inference_mode``.
    """
    cfg = model.cfg
    B, C = token_ids.shape[0], cfg.d_model
    H, H_kv, d_h, eps = cfg.n_heads, cfg.n_kv_heads, cfg.head_dim, cfg.norm_eps
    # Where the new token goes, as in Decoder.forward: without padding every row at the next position and
    # every key visible (mask None); with left padding each row at its count of real tokens, padded keys hidden.
    plan = plan_step(cache, B, 1, device=token_ids.device)
    cos, sin = model.rope_tables(plan.positions, w.embed.dtype)  # (1, d_h), or (B, 1, 1, d_h) per row
    mask = plan.mask  # None, or (B, 1, 1, past + 1): the same for every head
    cache.begin_step(B, 1, None, token_ids.reshape(B, 1))  # a paged cache gives the new tokens their slots
    # Rows are (B, C), not (B, 1, C): with T = 1 the time axis only costs reshapes in every matmul.
    x = F.embedding(token_ids, w.embed)  # (B, C)
    for i, lw in enumerate(w.layers):
        h = F.rms_norm(x, (C,), lw.attn_norm, eps)
        # One query per head; the n_rep query heads that share a K/V head sit side by side.
        q = lw.q(h).view(B, H_kv, H // H_kv, d_h)  # (B, H_kv, n_rep, d_h)
        k = lw.k(h).view(B, H_kv, 1, d_h)  # (B, H_kv, 1, d_h)
        v = lw.v(h).view(B, H_kv, 1, d_h)  # (B, H_kv, 1, d_h)
        q, k = apply_rope_rolled(q, cos, sin), apply_rope_rolled(k, cos, sin)
        k, v = cache.update(i, k, v)  # (B, H_kv, past + 1, d_h)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (B, H_kv, n_rep, d_h)
        x = x + lw.o(out.reshape(B, H * d_h))  # (B, C)
        h = F.rms_norm(x, (C,), lw.mlp_norm, eps)
        x = x + lw.down(F.silu(lw.gate(h)) * lw.up(h))
    cache.append_mask(None, 1)
    return w.lm_head(F.rms_norm(x, (C,), w.norm, eps))  # (B, V)
