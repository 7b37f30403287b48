"""When the last bits matter: greedy decoding flips its token where the top two logits nearly tie.

Two computations of the same logits that round differently (cached and recomputed, or one machine's
kernel and another's) give the same greedy token unless the top two logits are closer than the rounding
difference. Once one token differs, the two texts continue from different prefixes and part for good.

``reorder_sums(model)`` is the same model with its channels renumbered (a permutation of C and of d_ff
applied to every weight consistently): the maths is unchanged, but every sum over those channels adds
its terms in another order. It stands in for "the same model on another kernel", in any dtype.

    tokens, logits = greedy(model, rows, n_steps, cached=True)
    report = divergence(tokens_a, logits_a, tokens_b, logits_b)
"""
from __future__ import annotations

import copy
from typing import NamedTuple, Sequence

import torch

from ..generate import left_pad, prefill
from ..weight_layout import MATVEC_LAYOUT, set_weight_layout


@torch.no_grad()
def reorder_sums(model, seed: int = 0):
    """A copy of ``model`` whose C and d_ff channels are renumbered by random permutations: the same
    function (each output is the same sum), its additions in another order."""
    g = torch.Generator().manual_seed(seed)
    new = copy.deepcopy(model)
    C, d_ff = new.cfg.d_model, new.cfg.d_ff
    pc, pf = torch.randperm(C, generator=g), torch.randperm(d_ff, generator=g)

    def put(param, value):
        param.data = value.contiguous()

    put(new.embed_tokens.weight, new.embed_tokens.weight[:, pc])  # (V, C): the residual stream, renumbered
    for layer in new.layers:
        att, mlp = layer.self_attn, layer.mlp
        for lin in (att.q_proj, att.k_proj, att.v_proj):
            put(lin.weight, lin.weight[:, pc])  # inputs: C
        put(att.o_proj.weight, att.o_proj.weight[pc])  # outputs: C
        put(mlp.gate_proj.weight, mlp.gate_proj.weight[pf][:, pc])  # (d_ff, C)
        put(mlp.up_proj.weight, mlp.up_proj.weight[pf][:, pc])
        put(mlp.down_proj.weight, mlp.down_proj.weight[pc][:, pf])  # (C, d_ff)
        put(layer.input_layernorm.weight, layer.input_layernorm.weight[pc])
        put(layer.post_attention_layernorm.weight, layer.post_attention_layernorm.weight[pc])
    put(new.norm.weight, new.norm.weight[pc])
    if new.lm_head.weight is not new.embed_tokens.weight:  # a tied head was renumbered with the embedding
        put(new.lm_head.weight, new.lm_head.weight[:, pc])  # (V, C)
    set_weight_layout(new, MATVEC_LAYOUT)  # the memory order the course's Decoder keeps
    return new


@torch.inference_mode()
def greedy(model, rows: Sequence[Sequence[int]], n_steps: int, cached: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """Greedy continuation of each prompt of ``rows`` (left-padded into one batch) for ``n_steps`` tokens.

    ``cached=True``: prefill, then one decode step per token. ``cached=False``: every step recomputes the
    whole sequence without a cache (what ``use_cache=False`` does). Returns tokens ``[B, n_steps]`` and the
    logits each token was picked from ``[B, n_steps, V]`` (float32)."""
    ids, mask = left_pad(rows)  # (B, T) each
    tokens, logits = [], []
    if cached:
        step_logits, cache = prefill(model, ids, attention_mask=mask)
    for s in range(n_steps):
        if not cached:
            step_logits = model(ids, attention_mask=mask)[:, -1]  # (B, V): the whole history again
        nxt = step_logits.argmax(-1)  # (B,)
        tokens.append(nxt)
        logits.append(step_logits.float())
        ids, mask = torch.cat([ids, nxt[:, None]], 1), torch.cat([mask, torch.ones_like(mask[:, :1])], 1)
        if cached and s + 1 < n_steps:
            step_logits = model(nxt[:, None], cache=cache)[:, -1]  # (B, V)
    return torch.stack(tokens, 1), torch.stack(logits, 1)


class Divergence(NamedTuple):
    """Where two greedy runs of the same prompts part (one entry per diverged row)."""

    n_rows: int  # prompts compared
    n_steps: int  # tokens per prompt
    steps: list[int]  # per diverged row: the index of its first differing token
    gaps: list[float]  # per diverged row: top-1 minus top-2 logit of run a at that step
    deltas: list[float]  # per diverged row: max |logit a - logit b| at that step
    max_delta: float  # max |Δlogit| over every step before any row's first difference (same prefixes)

    @property
    def n_diverged(self) -> int:
        return len(self.steps)


def divergence(tokens_a: torch.Tensor, logits_a: torch.Tensor, tokens_b: torch.Tensor,
               logits_b: torch.Tensor) -> Divergence:
    """Compare two ``greedy`` runs of the same prompts: which rows part, after how many tokens, how close
    the top two logits were there, and the largest logit difference while the prefixes were still equal."""
    B, n = tokens_a.shape
    steps, gaps, deltas, max_delta = [], [], [], 0.0
    for b in range(B):
        differ = (tokens_a[b] != tokens_b[b]).nonzero()
        stop = int(differ[0]) if len(differ) else n
        d = (logits_a[b, : stop + 1 if stop < n else n] - logits_b[b, : stop + 1 if stop < n else n]).abs()
        max_delta = max(max_delta, float(d.max()))
        if stop < n:
            top2 = logits_a[b, stop].topk(2).values
            steps.append(stop)
            gaps.append(float(top2[0] - top2[1]))
            deltas.append(float(d[-1].max()))
    return Divergence(B, n, steps, gaps, deltas, max_delta)
