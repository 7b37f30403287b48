"""The judge of notebook 03's second exercise, which names the mistake (the first's: ``cache_exercise.py``).

03.decode_step: the learner's decode step runs beside ``decode_step`` for 16 steps; where they part, the
judge names the mistake.

At the first step whose logits differ, the reference step is run again from the same cache with one
mistake at a time (``variant_step``): the position reset (or no RoPE: at position 0 it is the identity; or RoPE applied after ``cache.update``, which
rotates q and every key by the same angle), one
too low, one too high or read after layer 0 appended; the final norm, a layer norm, a residual or the RoPE of
q or k left out; the attention residual added to the normalised h; the sin table of ``apply_rope_rolled``
handed to ``apply_rope``; every layer reading layer 0's cache; attention over the new k, v alone, over the cached
positions alone (the token's own k, v missing), or under a causal mask
aligned top left (SDPA's ``is_causal=True``: the one query sees key 0 only); RoPE applied twice; scores not
divided by √d_h; K/V heads expanded with ``repeat`` (tiled, so query head i reads K/V head i % H_kv) instead of
``repeat_interleave`` (grouped).
The variant that gives the learner's logits is the mistake, and the check says so, with a hint about it.
Logits that are right over a cache that did not grow by one (the new K/V never appended, or twice) are
named too, and so is a ``.view(1, 1, ...)`` that hard-codes batch 1, and K/V heads never expanded to H (a size
mismatch at dim 1). A step that matches no variant gets the
difference and the contract's checklist. The learner's step gets the model's pieces but not the model itself: calling it (``model(...)``, ``decode_step``) is refused.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Callable

import torch

from ..attention import apply_rope, attention
from ..i18n import tr
from . import solutions as S
from .judges import Case, FormProblem, diagnosis


# --- 03.decode_step ---------------------------------------------------------------------------------

@cache
def mqa_model():
    """A random MQA model (H_kv = 1) whose weights are 10x the init scale: a wrong step moves the logits far
    beyond TOL."""
    from ..config import ModelConfig
    from ..model import Decoder

    torch.manual_seed(0)
    model = Decoder(ModelConfig(vocab_size=64, n_layers=2, n_heads=4, n_kv_heads=1, d_model=32, d_ff=64,
                                max_seq_len=64)).eval()
    with torch.no_grad():
        for w in model.parameters():
            if w.dim() == 2:
                w.mul_(10)
    return model


def variant_step(model, token_ids: torch.Tensor, cache, *, pos_shift: int = 0, pos_zero: bool = False,
                 pos_per_layer: bool = False, final_norm: bool = True, input_norm: bool = True,
                 post_norm: bool = True, attn_residual: bool = True, mlp_residual: bool = True,
                 normed_residual: bool = False, normed_attn_residual: bool = False, sin_rolled: bool = False,
                 rope_q: bool = True, rope_k: bool = True,
                 layer0: bool = False, new_only: bool = False, past_only: bool = False, top_left: bool = False,
                 kv_tiled: bool = False, extra_rope: str = "", unscaled: bool = False) -> torch.Tensor:
    """``solutions.decode_step`` with the mistakes the flags switch on (all off: the reference); logits [B, V]."""
    cfg, B = model.cfg, token_ids.shape[0]
    x = model.embed_tokens(token_ids[:, None])  # (B, 1, C)
    pos = 0 if pos_zero else cache.seq_len + pos_shift
    for i, layer in enumerate(model.layers):
        attn = layer.self_attn
        if pos_per_layer:
            pos = cache.seq_len  # read in the loop: from layer 1 on, layer 0's append is counted
        cos, sin = model.rope_cos[pos : pos + 1], model.rope_sin[pos : pos + 1]  # (1, d_h)
        if sin_rolled:  # apply_rope_rolled's table (first half negated) handed to apply_rope
            sin = model.rope_sin_rolled[pos : pos + 1]
        h = layer.input_layernorm(x) if input_norm else x
        q = attn.q_proj(h).view(B, 1, cfg.n_heads, cfg.head_dim).transpose(1, 2)  # (B, H, 1, d_h)
        k = attn.k_proj(h).view(B, 1, cfg.n_kv_heads, cfg.head_dim).transpose(1, 2)  # (B, H_kv, 1, d_h)
        v = attn.v_proj(h).view(B, 1, cfg.n_kv_heads, cfg.head_dim).transpose(1, 2)  # (B, H_kv, 1, d_h)
        q = apply_rope(q, cos, sin) if rope_q else q
        k = apply_rope(k, cos, sin) if rope_k else k
        q, k = (apply_rope(t, cos, sin) if name in extra_rope else t for name, t in (("q", q), ("k", k)))  # twice
        past = cache.layer_kv(i) if past_only else None  # (B, H_kv, T, d_h): read before the append
        K, V = cache.update(i, k, v)  # (B, H_kv, T + 1, d_h)
        if past is not None:
            K, V = past  # the cached positions alone: the query misses its own k, v
        if layer0:
            K, V = cache.layer_kv(0)
        if new_only:
            K, V = k, v  # (B, H_kv, 1, d_h): the cached positions ignored
        if kv_tiled:  # GQA expanded with repeat: heads tiled 0, 1, 0, 1 instead of grouped 0, 0, 1, 1
            n_rep = cfg.n_heads // cfg.n_kv_heads
            K, V = K.repeat(1, n_rep, 1, 1), V.repeat(1, n_rep, 1, 1)  # (B, H, T + 1, d_h)
        # is_causal=True with one query: the mask's top-left corner, so the query sees key 0 alone
        mask = torch.arange(K.shape[2]) == 0 if top_left else None  # (S,)
        q = q * cfg.head_dim**0.5 if unscaled else q  # attention divides by √d_h: this undoes it
        out = attn.o_proj(attention(q, K, V, mask).transpose(1, 2).reshape(B, 1, cfg.n_heads * cfg.head_dim))
        x = (h if normed_residual or normed_attn_residual else x) + out if attn_residual else out
        h = layer.post_attention_layernorm(x) if post_norm else x
        x = (h if normed_residual else x) + layer.mlp(h) if mlp_residual else layer.mlp(h)
    return model.lm_head(model.norm(x) if final_norm else x)[:, -1]  # (B, V)


def _variants(step: int, pos: int) -> list[tuple[dict, str, str]]:
    """(flags, what the learner's step did, the hint): built at check time, in the current language."""
    return [  # at position 0 RoPE is the identity: a step without RoPE is the position-0 step, one diagnosis for both
        (dict(pos_zero=True), tr("step {step}: your new token was rotated as if at position 0 (or not rotated at all, "
                                 "which is the same, or q and all of K rotated by the same angle, e.g. RoPE applied "
                                 "after `cache.update`); it sits at position {pos}, the number of positions cached",
                                 step=step, pos=pos),
         tr("rotate q and k at the new token's position, the number of positions already cached: "
            "`pos = cache.seq_len`, read once before layer 0 appends, then `apply_rope` with "
            "`model.rope_cos[pos : pos + 1]` and `model.rope_sin[pos : pos + 1]`")),
        (dict(pos_shift=-1), tr("step {step}: your logits are the new token's at position {wrong}, one before its own "
                                "({pos})", step=step, wrong=pos - 1, pos=pos),
         tr("positions count from 0: the T cached tokens hold positions 0 ... T - 1, so the new one is at "
            "T = `cache.seq_len` (no - 1)")),
        (dict(pos_shift=1), tr("step {step}: your logits are the new token's at position {wrong}, one past its own "
                               "({pos})", step=step, wrong=pos + 1, pos=pos),
         tr("the new token is at `cache.seq_len` as it is before this step (no + 1)")),
        (dict(pos_per_layer=True), tr("step {step}: from layer 1 on, your new token sits at position {wrong}, not "
                                      "{pos}: cache.seq_len grew when layer 0 appended", step=step, wrong=pos + 1,
                                      pos=pos),
         tr("read `pos = cache.seq_len` once, before the loop over the layers: layer 0's `cache.update` makes it "
            "one more")),
        (dict(final_norm=False), tr("step {step}: your logits are those of the step without the final `model.norm`",
                                    step=step),
         tr("after the last layer the stream is normalised once more: `model.lm_head(model.norm(x))`")),
        (dict(attn_residual=False), tr("step {step}: your logits are those of the step without the residual around "
                                       "attention", step=step),
         tr("add the attention output to the stream: `x = x + self_attn.o_proj(...)`, "
            "not `x = self_attn.o_proj(...)`")),
        (dict(mlp_residual=False), tr("step {step}: your logits are those of the step without the residual around "
                                      "the MLP", step=step),
         tr("add the MLP output to the stream: `x = x + mlp(post_attention_layernorm(x))`")),
        (dict(normed_residual=True), tr("step {step}: your residuals add to the normalised h, not to x", step=step),
         tr("the residual stream is x: the norm's output h feeds the projections (or the MLP), then "
            "`x = x + ...`")),
        (dict(normed_attn_residual=True), tr("step {step}: your attention residual adds to the normalised h "
                                             "(`x = h + o_proj(...)`), not to x", step=step),
         tr("q, k and v read `h = input_layernorm(x)`, but the residual adds to x: "
            "`x = x + self_attn.o_proj(...)`, not `h + ...`")),
        (dict(sin_rolled=True), tr("step {step}: you rotated with `model.rope_sin_rolled`, the table of "
                                   "`apply_rope_rolled` (its first half negated): with `apply_rope` it turns the first "
                                   "half of every pair the wrong way", step=step),
         tr("`apply_rope` takes the plain tables: `model.rope_cos[pos : pos + 1]` and "
            "`model.rope_sin[pos : pos + 1]`")),
        (dict(input_norm=False), tr("step {step}: your logits are those of the step without `input_layernorm`",
                                    step=step),
         tr("each layer normalises x before q, k and v: `h = layer.input_layernorm(x)`")),
        (dict(post_norm=False), tr("step {step}: your logits are those of the step without "
                                   "`post_attention_layernorm`", step=step),
         tr("the MLP reads `layer.post_attention_layernorm(x)`, not x")),
        (dict(rope_k=False), tr("step {step}: your new k was not rotated (RoPE on q only)", step=step),
         tr("rotate k as well as q, before `cache.update`: the cache holds rotated keys")),
        (dict(rope_q=False), tr("step {step}: your q was not rotated (RoPE on k only)", step=step),
         tr("rotate q as well as k: the scores compare rotated queries with rotated keys")),
        (dict(extra_rope="q"), tr("step {step}: your q was rotated twice (RoPE applied again): it sits at position "
                                  "{wrong}, not {pos}", step=step, wrong=2 * pos, pos=pos),
         tr("apply RoPE once to q and once to k, at `pos = cache.seq_len`; `attention` does not rotate them")),
        (dict(extra_rope="qk"), tr("step {step}: your q and k were rotated twice (RoPE applied again): they sit at "
                                   "position {wrong}, not {pos}", step=step, wrong=2 * pos, pos=pos),
         tr("apply RoPE once to q and once to k, at `pos = cache.seq_len`; `attention` does not rotate them")),
        (dict(unscaled=True), tr("step {step}: your scores were not divided by √d_h", step=step),
         tr("scaled dot-product attention divides q · Kᵀ by √d_h before the softmax: call `attention(q, K, V)`, "
            "which does it, or divide yourself")),
        (dict(layer0=True), tr("step {step}: every layer attended over layer 0's keys and values", step=step),
         tr("each layer has its own entry in the cache: attend over what `cache.update(i, k, v)` returns for that "
            "layer's index i")),
        (dict(new_only=True), tr("step {step}: your query attended over the new token's own k and v alone; the {pos} "
                                 "cached positions were left out", step=step, pos=pos),
         tr("attend over the K, V that `cache.update(i, k, v)` returns: the cached positions and the new one")),
        (dict(past_only=True), tr("step {step}: your query did not see its own k, v: it attended over the {pos} cached "
                                  "positions alone", step=step, pos=pos),
         tr("append first, then attend over what `cache.update(i, k, v)` returns: the cached positions and the new "
            "token's own k, v")),
        (dict(top_left=True), tr("step {step}: your query saw key 0 alone: a causal mask (`is_causal=True`) is aligned "
                                 "to the top left, so a single query gets the first key only", step=step),
         tr("a decode step needs no mask: its one query comes after every cached key (no `is_causal`, no mask)")),
        (dict(kv_tiled=True), tr("step {step}: your query heads read the wrong K/V heads: `repeat` tiles them, so "
                                 "query head i reads K/V head i % H_kv, not the one of its group", step=step),
         tr("a GQA group is consecutive query heads: expand with `repeat_interleave(H // H_kv, dim=1)`, as "
            "`repeat_kv` does, or hand `attention` the H_kv heads and let it expand them")),
    ]


def _snapshot(kv):
    """A KVCache holding what ``kv`` holds (the tensors are shared: ``update`` concatenates into new ones)."""
    from ..cache import KVCache

    copy = KVCache()
    copy.k, copy.v = list(kv.k), list(kv.v)
    return copy


def _lengths(kv) -> list[int]:
    return [t.shape[2] for t in kv.k]


def _diagnose(model, tok: torch.Tensor, before, got: torch.Tensor, step: int):
    """The mistake whose step gives ``got`` from the cache as it was (``before``), or None."""
    from ..recompute import TOL

    with torch.inference_mode():
        for flags, message, hint in _variants(step, before.seq_len):
            try:
                wrong = variant_step(model, tok, _snapshot(before), **flags)
            except Exception:  # noqa: BLE001 - a variant that cannot run here is not the mistake
                continue
            if float((got.float() - wrong.float()).abs().max()) <= TOL:
                return diagnosis(message, hint)
    return None


def _cache_length(step: int, got: list[int], want: list[int]):
    shown = got[0] if len(set(got)) == 1 and len(got) == len(want) else got
    return diagnosis(tr("step {step}: afterwards the cache holds {got} positions per layer, expected {want}",
                        step=step, got=shown, want=want[0]),
                     tr("append the new k, v with `cache.update(layer_index, k, v)` exactly once in every layer: the "
                        "next step reads them"))


class _Bypass(BaseException):
    """The learner's step called the whole model (a BaseException: a learner's ``except Exception`` lets it by)."""


class _PiecesOnly:
    """The model as the check hands it to the learner's step: every piece (``cfg``, ``embed_tokens``, ``layers``,
    the RoPE tables, ``norm``, ``lm_head``), but calling the model itself raises ``_Bypass``: ``model(...)``,
    ``model.forward`` and ``decode_step(model, ...)`` would return the reference's logits unwritten."""

    def __init__(self, model):
        self._model = model

    def __getattr__(self, name: str):
        if name == "forward":
            raise _Bypass()
        return getattr(self._model, name)

    def __call__(self, *args, **kwargs):
        raise _Bypass()


# q (B, H, 1, d_h) against K (B, H_kv, T, d_h) unexpanded: matmul's and SDPA's broadcast error
_HEADS_MISMATCH = re.compile(r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) "
                             r"at non-singleton dimension 1")


@dataclass
class DecodeRun:
    """What the 16 steps gave: the worst |logit difference| of each step run, and the mistake if one was found."""
    worst: list[float]
    problem: str | None = None


def decode_loop(model, n_steps: int = 16) -> Callable[[Callable], Any]:
    """Prefill B=2 prompts, then n_steps greedy steps with the learner's step beside ``decode_step``."""
    def run(fn):
        from ..cache import KVCache
        from ..generate import decode_step, prefill
        from ..recompute import TOL

        ids = torch.randint(1, model.cfg.vocab_size, (2, 6), generator=torch.Generator().manual_seed(8))
        with torch.inference_mode():
            ref_logits, ref = prefill(model, ids, cache=KVCache())
            _, mine = prefill(model, ids, cache=KVCache())
        worst = []
        for step in range(1, n_steps + 1):
            tok = ref_logits.argmax(-1)  # (2,)
            before = _snapshot(mine)
            with torch.inference_mode():
                ref_logits = decode_step(model, tok, ref)
                try:
                    got = fn(_PiecesOnly(model), tok.clone(), mine)
                except RuntimeError as err:
                    heads = _HEADS_MISMATCH.search(str(err))
                    if heads and {int(heads[1]), int(heads[2])} == {model.cfg.n_heads, model.cfg.n_kv_heads}:
                        return DecodeRun(worst, diagnosis(  # q's H heads met the cache's H_kv: never expanded
                            tr("step {step}: a size mismatch at dim 1: the query has {H} heads, the cached K/V {H_kv}",
                               step=step, H=model.cfg.n_heads, H_kv=model.cfg.n_kv_heads),
                            tr("expand the K/V heads H_kv → H before the scores: `repeat_kv(K, H // H_kv)` (grouped), "
                               "or pass `enable_gqa=True` to `scaled_dot_product_attention`; `attention` does it for you")))
                    if "shape '[1, 1," not in str(err):
                        raise
                    return DecodeRun(worst, diagnosis(  # a view with batch 1 written in: the learner's own error
                        tr("step {step}: a `.view(1, 1, ...)` failed: the batch here holds {B} rows", step=step,
                           B=tok.shape[0]),
                        tr("B is `token_ids.shape[0]` ({B} here): `.view(B, 1, H, d_h)`, not `.view(1, 1, H, d_h)`",
                           B=tok.shape[0])))
                except _Bypass:
                    return DecodeRun(worst, diagnosis(
                        tr("step {step}: your step called the model itself (`model(...)`, `model.forward` or "
                           "`decode_step`), the step this check compares yours with", step=step),
                        tr("write the step from the model's pieces: the loop over `model.layers`, then `model.norm` "
                           "and `model.lm_head`, as the contract lists them")))
            if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(ref_logits.shape):
                return got  # the judge names the shape
            worst.append(float((got.float() - ref_logits.float()).abs().max()))
            lengths_right = _lengths(mine) == _lengths(ref)
            if not worst[-1] <= TOL:
                found = _diagnose(model, tok, before, got, step)
                if found is None and not lengths_right:
                    found = _cache_length(step, _lengths(mine), _lengths(ref))
                return DecodeRun(worst, found)
            if not lengths_right:
                return DecodeRun(worst, _cache_length(step, _lengths(mine), _lengths(ref)))
        return DecodeRun(worst)
    return run


def decode_judge(V: int) -> Callable[[Any], str | None]:
    def judge(got) -> str | None:
        if isinstance(got, torch.Tensor):
            return FormProblem(tr("expected logits of shape [2, {V}], got {shape}", V=V, shape=list(got.shape)))
        if not isinstance(got, DecodeRun):
            return FormProblem(tr("expected a logits tensor, got {type}", type=type(got).__name__))
        from ..recompute import TOL

        if got.problem is not None:
            return got.problem
        bad = next((i for i, d in enumerate(got.worst) if not d <= TOL), None)
        return None if bad is None else tr("step {step}: max |your logits - decode_step| = {diff:.3g} > TOL = {tol:g}",
                                           step=bad + 1, diff=got.worst[bad], tol=TOL)
    return judge


CHECKLIST = ("go through the contract line by line: the position (`cache.seq_len`, read once), RoPE on q and k "
             "before `cache.update`, both norms and both residuals of every layer, the final `model.norm`; "
             "attention: softmax over the keys (last dim), scores ÷ √d_h")


def decode_step_cases() -> list[Case]:
    from ..course_model import load_course_model

    course, _ = load_course_model()
    mqa = mqa_model()
    return [Case("course model (GQA), B=2, 16 steps", decode_loop(course), decode_judge(course.cfg.vocab_size),
                 CHECKLIST),
            Case("random MQA model, B=2, 16 steps", decode_loop(mqa), decode_judge(mqa.cfg.vocab_size), CHECKLIST)]
