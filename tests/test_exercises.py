"""utils/exercises: every checker passes its reference solution and catches the mistakes learners make."""
import math

import numpy as np
import pytest
import torch

from utils import exercises as E
from utils.exercises import chunk_exercise, solutions as S


def _causal_off_by_one(T_q, T_k):
    return torch.ones(T_q, T_k).tril(T_k - T_q - 1).bool()  # a query cannot see itself


def _decode_position_zero(model, token_ids, cache):
    """The new token rotated as if it were at position 0."""
    class Zero:  # the same cache, but it claims to be empty when asked for the position
        def __init__(self, c): self.c = c
        seq_len = 0
        def update(self, *a): return self.c.update(*a)
    return S.decode_step(model, token_ids, Zero(cache))


def _decode_no_update(model, token_ids, cache):
    """Attends over the cache but never appends the new K/V."""
    class ReadOnly:
        def __init__(self, c): self.c, self.seq_len = c, c.seq_len
        def update(self, layer, k, v):
            K, V = self.c.layer_kv(layer)
            return torch.cat([K, k], 2), torch.cat([V, v], 2)
    return S.decode_step(model, token_ids, ReadOnly(cache))


def _decode_layer0_only(model, token_ids, cache):
    """Every layer reads layer 0's cache."""
    class Layer0:
        def __init__(self, c): self.c, self.seq_len = c, c.seq_len
        def update(self, layer, k, v):
            K, V = self.c.update(layer, k, v)
            return (K, V) if layer == 0 else self.c.layer_kv(0)
    return S.decode_step(model, token_ids, Layer0(cache))


def _decode_twice(model, token_ids, cache):
    """Appends the new K/V twice in every layer."""
    class Twice:
        def __init__(self, c): self.c, self.seq_len = c, c.seq_len
        def update(self, layer, k, v):
            self.c.update(layer, k, v)
            return self.c.update(layer, k, v)
    return S.decode_step(model, token_ids, Twice(cache))


def _decode_kv_tiled(model, token_ids, cache):
    """Expands the K/V heads itself with repeat (tiled: query head i reads K/V head i % H_kv), as a learner might."""
    from utils.attention import apply_rope, attention

    cfg, B, pos = model.cfg, token_ids.shape[0], cache.seq_len
    n_rep = cfg.n_heads // cfg.n_kv_heads
    cos, sin = model.rope_cos[pos : pos + 1], model.rope_sin[pos : pos + 1]
    x = model.embed_tokens(token_ids[:, None])  # (B, 1, C)
    for i, layer in enumerate(model.layers):
        attn, h = layer.self_attn, layer.input_layernorm(x)
        q = attn.q_proj(h).view(B, 1, cfg.n_heads, cfg.head_dim).transpose(1, 2)  # (B, H, 1, d_h)
        k = attn.k_proj(h).view(B, 1, cfg.n_kv_heads, cfg.head_dim).transpose(1, 2)  # (B, H_kv, 1, d_h)
        v = attn.v_proj(h).view(B, 1, cfg.n_kv_heads, cfg.head_dim).transpose(1, 2)
        K, V = cache.update(i, apply_rope(k, cos, sin), v)  # (B, H_kv, T + 1, d_h)
        K, V = K.repeat(1, n_rep, 1, 1), V.repeat(1, n_rep, 1, 1)  # (B, H, T + 1, d_h): the mistake
        out = attention(apply_rope(q, cos, sin), K, V)
        x = x + attn.o_proj(out.transpose(1, 2).reshape(B, 1, cfg.n_heads * cfg.head_dim))
        x = x + layer.mlp(layer.post_attention_layernorm(x))
    return model.lm_head(model.norm(x))[:, -1]  # (B, V)


def _decode_heads_unexpanded(model, token_ids, cache):
    """Hand-written attention without expanding the K/V heads: q's H heads meet K's H_kv (GQA: an error at dim 1)."""
    from utils.attention import apply_rope

    cfg, B, pos = model.cfg, token_ids.shape[0], cache.seq_len
    cos, sin = model.rope_cos[pos : pos + 1], model.rope_sin[pos : pos + 1]
    x = model.embed_tokens(token_ids[:, None])  # (B, 1, C)
    for i, layer in enumerate(model.layers):
        attn, h = layer.self_attn, layer.input_layernorm(x)
        q = attn.q_proj(h).view(B, 1, cfg.n_heads, cfg.head_dim).transpose(1, 2)  # (B, H, 1, d_h)
        k = attn.k_proj(h).view(B, 1, cfg.n_kv_heads, cfg.head_dim).transpose(1, 2)  # (B, H_kv, 1, d_h)
        v = attn.v_proj(h).view(B, 1, cfg.n_kv_heads, cfg.head_dim).transpose(1, 2)
        K, V = cache.update(i, apply_rope(k, cos, sin), v)  # (B, H_kv, T + 1, d_h), not expanded: the mistake
        weights = torch.softmax(apply_rope(q, cos, sin) @ K.transpose(-2, -1) / math.sqrt(cfg.head_dim), -1)
        out = weights @ V  # (B, H, 1, d_h) only when H_kv is 1 (MQA broadcasts)
        x = x + attn.o_proj(out.transpose(1, 2).reshape(B, 1, cfg.n_heads * cfg.head_dim))
        x = x + layer.mlp(layer.post_attention_layernorm(x))
    return model.lm_head(model.norm(x))[:, -1]  # (B, V)


def _decode_rope_after_update(model, token_ids, cache):
    """Rotates after ``cache.update``: q and every returned key by the new token's angle (the cache keeps k unrotated)."""
    from utils.attention import apply_rope, attention

    cfg, B, pos = model.cfg, token_ids.shape[0], cache.seq_len
    cos, sin = model.rope_cos[pos : pos + 1], model.rope_sin[pos : pos + 1]  # (1, d_h)
    x = model.embed_tokens(token_ids[:, None])  # (B, 1, C)
    for i, layer in enumerate(model.layers):
        attn, h = layer.self_attn, layer.input_layernorm(x)
        q = attn.q_proj(h).view(B, 1, cfg.n_heads, cfg.head_dim).transpose(1, 2)  # (B, H, 1, d_h)
        k = attn.k_proj(h).view(B, 1, cfg.n_kv_heads, cfg.head_dim).transpose(1, 2)  # (B, H_kv, 1, d_h)
        v = attn.v_proj(h).view(B, 1, cfg.n_kv_heads, cfg.head_dim).transpose(1, 2)
        K, V = cache.update(i, k, v)  # (B, H_kv, T + 1, d_h)
        out = attention(apply_rope(q, cos, sin), apply_rope(K, cos, sin), V)  # the mistake: every key at one angle
        x = x + attn.o_proj(out.transpose(1, 2).reshape(B, 1, cfg.n_heads * cfg.head_dim))
        x = x + layer.mlp(layer.post_attention_layernorm(x))
    return model.lm_head(model.norm(x))[:, -1]  # (B, V)


def _decode_batch_one(model, token_ids, cache):
    """The contract's step with batch 1 written into the first .view: a shape error for B = 2."""
    h = model.layers[0].input_layernorm(model.embed_tokens(token_ids[:, None]))  # (B, 1, C)
    model.layers[0].self_attn.q_proj(h).view(1, 1, model.cfg.n_heads, model.cfg.head_dim)
    return S.decode_step(model, token_ids, cache)


def _decode_with(**mistake):
    """The reference step with one mistake (utils/exercises/decode_exercise.variant_step's flags)."""
    from utils.exercises.decode_exercise import variant_step

    return lambda model, token_ids, cache: variant_step(model, token_ids, cache, **mistake)


def _top_p_strict(logits, p):  # drops the token that crosses p
    probs = torch.softmax(logits, -1)
    sp, order = probs.sort(descending=True)
    keep = torch.zeros_like(probs, dtype=torch.bool).scatter(0, order, sp.cumsum(0) <= p)
    return logits.masked_fill(~keep, float("-inf"))


def _top_p_can_be_empty(logits, p):
    probs = torch.softmax(logits, -1)
    sp, order = probs.sort(descending=True)
    keep = torch.zeros_like(probs, dtype=torch.bool).scatter(0, order, sp.cumsum(0) < p)
    return logits.masked_fill(~keep, float("-inf"))


def _top_p_ascending(logits, p):
    probs = torch.softmax(logits, -1)
    sp, order = probs.sort()
    keep = torch.zeros_like(probs, dtype=torch.bool).scatter(0, order, sp.cumsum(0) - sp < p)
    return logits.masked_fill(~keep, float("-inf"))


def _top_p_probabilities(logits, p):  # the nucleus renormalised, as probabilities
    return torch.softmax(S.top_p(logits, p), -1)


def _top_p_at_p_kept(logits, p):  # `before <= p`: keeps the token after a running total equal to p
    probs = torch.softmax(logits, -1)
    sp, order = probs.sort(descending=True)
    keep = torch.zeros_like(probs, dtype=torch.bool).scatter(0, order, sp.cumsum(0) - sp <= p)
    return logits.masked_fill(~keep, float("-inf")) if p < 1 else logits


def _top_p_unscattered(logits, p):  # the sorted order's mask applied to the logits as they stand
    probs = torch.softmax(logits, -1)
    sp, _ = probs.sort(descending=True)
    return logits.masked_fill(~(sp.cumsum(0) - sp < p), float("-inf"))


def _top_p_log_softmax(logits, p):  # the nucleus renormalised as log-probabilities
    return torch.log_softmax(S.top_p(logits, p), -1)


def _top_p_no_special_case(logits, p):  # float32 `before < p` at every p, 1 included: drops a long tail at p = 1
    probs = torch.softmax(logits, -1)
    sp, order = probs.sort(descending=True)
    keep = torch.zeros_like(probs, dtype=torch.bool).scatter(0, order, sp.cumsum(0) - sp < p)
    return logits.masked_fill(~keep, float("-inf"))


def _top_p_cumsum_of_logits(logits, p):  # the running total over the logits, not softmax(logits)
    sl, order = logits.sort(descending=True)
    keep = torch.zeros_like(logits, dtype=torch.bool).scatter(0, order, sl.cumsum(0) - sl < p)
    return logits.masked_fill(~keep, float("-inf"))


def _top_p_in_place(logits, p):  # right tokens, but written into the caller's logits
    logits[torch.isinf(S.top_p(logits, p))] = float("-inf")
    return logits


def _stop_regex(text, stops):  # each stop string searched as a regular expression, unescaped
    import re

    hits = [m.start() for m in (re.search(s, text) for s in stops) if m]
    return text[: min(hits)] if hits else None


def _stop_endswith(text, stops):
    return next((text[: -len(s)] for s in stops if text.endswith(s)), None)


def _stop_first_listed(text, stops):
    return next((text[: text.find(s)] for s in stops if s in text), None)


def _stop_keeps_string(text, stops):
    hits = [(text.find(s), s) for s in stops if s in text]
    return text[: min(hits)[0] + len(min(hits)[1])] if hits else None


def _stop_last(text, stops):  # rfind: the last occurrence
    hits = [text.rfind(s) for s in stops if s in text]
    return text[: min(hits)] if hits else None


def _stop_stripped(text, stops):  # the space before the stop string removed too
    hits = [text.find(s) for s in stops if s in text]
    return text[: min(hits)].rstrip() if hits else None


def _itl_with_ttft(times):  # the first gap counted from 0: TTFT is not an ITL
    return float(np.percentile(np.diff([0.0] + list(times)), 95))


CHUNK_MISTAKES = list(chunk_exercise._MISTAKES)  # every mistake the 07.chunk_step judge names


def _chunk_variant(name):
    return lambda model, chunk_ids, cache: chunk_exercise._variant(model, chunk_ids, cache, name)


def _short_chunk_mask(model, chunk_ids, cache):
    from utils.model import masked_forward

    T = chunk_ids.shape[1]
    return masked_forward(model, chunk_ids, torch.ones(T, T, dtype=torch.bool).tril(), cache=cache)


def _chunk_twice(model, chunk_ids, cache):
    chunk_exercise.chunk_step(model, chunk_ids, cache)
    return chunk_exercise.chunk_step(model, chunk_ids, cache)


def _weights_16bit(config: dict) -> int:
    """The 16-bit weights of the model whose config a 04.max_requests case passes."""
    from utils import MODEL_PRESETS
    from utils.exercises.sizing_mistakes import REQUEST_CASES
    return next(2 * MODEL_PRESETS[model].n_params for _, conf, _, _, _, model in REQUEST_CASES if conf == config)


# exercise id -> (mistake name, wrong function); each is a mistake learners really make
MISTAKES = {
    "01.causal_mask": [
        ("a lower triangle without the offset", lambda T_q, T_k: torch.ones(T_q, T_k).tril().bool()),
        ("a square mask, no column for the cache", lambda T_q, T_k: torch.ones(T_q, T_q).tril().bool()),
        ("the whole [T_k, T_k] square", lambda T_q, T_k: torch.ones(T_k, T_k).tril().bool()),
        ("the query cannot see itself", _causal_off_by_one),
        ("True where attention is forbidden", lambda T_q, T_k: ~S.causal_mask(T_q, T_k)),
        ("the comparison reversed: key >= query",
         lambda T_q, T_k: torch.arange(T_k)[None, :] >= torch.arange(T_k - T_q, T_k)[:, None]),
    ],
    "01.repeat_kv": [
        ("x.repeat: head h reads h % H_kv", lambda x, n: x.repeat(1, n, 1, 1)),
        ("no expansion", lambda x, n: x),
        ("repeated on the time axis", lambda x, n: x.repeat_interleave(n, dim=2)),
        ("time and d_h swapped", lambda x, n: x.repeat_interleave(n, dim=1).transpose(2, 3)),
        ("5-D expand without reshape", lambda x, n: x[:, :, None].expand(x.shape[0], x.shape[1], n, *x.shape[2:])),
        ("left in the [B, T, H, d_h] layout", lambda x, n: x.transpose(1, 2).repeat_interleave(n, dim=2)),
    ],
    "02.last_valid_logits": [
        ("always the last column", lambda logits, mask: logits[:, -1]),
        ("the first real token", lambda logits, mask: logits[torch.arange(logits.shape[0]), mask.argmax(1)]),
        ("number of real tokens as the index", lambda logits, mask: logits[torch.arange(logits.shape[0]), mask.sum(1) - 1]),
        ("number of real tokens, without the - 1", lambda logits, mask: logits[torch.arange(logits.shape[0]), mask.sum(1)]),
        ("one index for every row: [B, B, V]", lambda logits, mask: logits[:, mask.long().cumsum(1).argmax(1)]),
        ("the right rows' probabilities", lambda logits, mask: torch.softmax(S.last_valid_logits(logits, mask), -1)),
        ("flip and argmax without T - 1 -", lambda logits, mask: logits[torch.arange(logits.shape[0]),
                                                                         mask.long().flip(1).argmax(1)]),
    ],
    "02.prefill_positions": [
        ("0..T-1 for every row", lambda m: torch.arange(m.shape[1]).expand_as(m)),
        ("counts from 1", lambda m: m.long().cumsum(1)),
        ("counted from the row's end", lambda m: m.long().flip(1).cumsum(1).flip(1) - 1),
        ("the pads counted too", lambda m: torch.arange(m.shape[1]).expand_as(m) * m),
        ("the pads left at -1 (no clamp)", lambda m: m.long().cumsum(1) - 1),
        ("the batch's largest pad count for every row",
         lambda m: (torch.arange(m.shape[1]) - (m == 0).sum(1).max()).clamp(min=0).expand_as(m)),
        ("first real column from mask.argmax, no clamp", lambda m: torch.arange(m.shape[1]) - m.argmax(1, keepdim=True)),
    ],
    "03.cache_update": [
        ("concatenated on the heads axis", lambda ck, cv, k, v: (k, v) if ck is None else (torch.cat([ck, k], 1), torch.cat([cv, v], 1))),
        ("the new entries replace the cache", lambda ck, cv, k, v: (k, v)),
        ("new entries first", lambda ck, cv, k, v: (k, v) if ck is None else (torch.cat([k, ck], 2), torch.cat([v, cv], 2))),
        ("K and V swapped", lambda ck, cv, k, v: S.cache_update(ck, cv, k, v)[::-1]),
        ("only the last new position appended", lambda ck, cv, k, v: (k, v) if ck is None else
         (torch.cat([ck, k[:, :, -1:]], 2), torch.cat([cv, v[:, :, -1:]], 2))),
    ],
    "03.decode_step": [
        ("position 0 for the new token", _decode_position_zero),
        ("the new K/V never appended", _decode_no_update),
        ("every layer reads layer 0's cache", _decode_layer0_only),
        ("the new K/V appended twice", _decode_twice),
        ("no final norm", _decode_with(final_norm=False)),
        ("no residual around attention", _decode_with(attn_residual=False)),
        ("no residual around the MLP", _decode_with(mlp_residual=False)),
        ("the residual added to the normalised h", _decode_with(normed_residual=True)),
        ("the attention residual added to the normalised h", _decode_with(normed_attn_residual=True)),
        ("apply_rope with apply_rope_rolled's sin table", _decode_with(sin_rolled=True)),
        ("no input_layernorm", _decode_with(input_norm=False)),
        ("no post_attention_layernorm", _decode_with(post_norm=False)),
        ("position one too low", _decode_with(pos_shift=-1)),
        ("position one too high", _decode_with(pos_shift=1)),
        ("position read inside the layer loop", _decode_with(pos_per_layer=True)),
        ("no RoPE at all", _decode_with(rope_q=False, rope_k=False)),
        ("no RoPE on k", _decode_with(rope_k=False)),
        ("no RoPE on q", _decode_with(rope_q=False)),
        ("K/V heads expanded with repeat, not repeat_interleave", _decode_kv_tiled),
        ("q rotated twice", _decode_with(extra_rope="q")),
        ("q and k rotated twice", _decode_with(extra_rope="qk")),
        ("scores not divided by sqrt(d_h)", _decode_with(unscaled=True)),
        ("batch 1 hard-coded in .view", _decode_batch_one),
        ("K/V heads not expanded (size mismatch at dim 1)", _decode_heads_unexpanded),
        ("RoPE applied after cache.update", _decode_rope_after_update),
        ("attention over the cached positions only", _decode_with(past_only=True)),
    ],
    "04.kv_bytes_from_config": [
        ("forgets V (no factor 2)", lambda c, T, B, dt: S.kv_bytes_from_config(c, T, B, dt) // 2),
        ("H instead of H_kv", lambda c, T, B, dt: S.kv_bytes_from_config({**c, "num_key_value_heads": c["num_attention_heads"]}, T, B, dt)),
        ("d_h = C / H always", lambda c, T, B, dt: S.kv_bytes_from_config({k: v for k, v in c.items() if k != "head_dim"}, T, B, dt)),
        ("ignores batch_size", lambda c, T, B, dt: S.kv_bytes_from_config(c, T, 1, dt)),
        ("int8 counted as 2 bytes", lambda c, T, B, dt: S.kv_bytes_from_config(c, T, B, "float16" if dt == "int8" else dt)),
        ("float32 counted as 2 bytes", lambda c, T, B, dt: S.kv_bytes_from_config(c, T, B, "float16" if dt == "float32" else dt)),
        ("bfloat16 counted as 4 bytes", lambda c, T, B, dt: S.kv_bytes_from_config(
            c, T, B, "float32" if S.DTYPE_BYTES[dt] == 2 else dt)),
        ("one layer only", lambda c, T, B, dt: S.kv_bytes_from_config({**c, "num_hidden_layers": 1}, T, B, dt)),
        ("the MHA form 2·L·B·T·C·bytes", lambda c, T, B, dt: 2 * c["num_hidden_layers"] * B * T * c["hidden_size"]
         * S.DTYPE_BYTES[dt]),
        ("a missing num_key_value_heads read as 1 (MQA)", lambda c, T, B, dt: S.kv_bytes_from_config(
            {"num_key_value_heads": 1, **c}, T, B, dt)),
        ("counts bits, not bytes", lambda c, T, B, dt: 8 * S.kv_bytes_from_config(c, T, B, dt)),
    ],
    "04.max_requests": [
        ("rounds to the nearest", lambda c, T, free, dt: round(free / S.kv_bytes_from_config(c, T, 1, dt))),
        ("forgets V", lambda c, T, free, dt: free // (S.kv_bytes_from_config(c, T, 1, dt) // 2)),
        ("ignores the sequence length", lambda c, T, free, dt: free // S.kv_bytes_from_config(c, 1, 1, dt)),
        ("returns the quotient unrounded", lambda c, T, free, dt: free / S.kv_bytes_from_config(c, T, 1, dt)),
        ("rounds up", lambda c, T, free, dt: -(-free // S.kv_bytes_from_config(c, T, 1, dt))),
        ("counts float16 whatever the dtype", lambda c, T, free, dt: free // S.kv_bytes_from_config(c, T, 1, "float16")),
        ("H instead of H_kv", lambda c, T, free, dt: free // S.kv_bytes_from_config(
            {**c, "num_key_value_heads": c["num_attention_heads"]}, T, 1, dt)),
        ("d_h = C / H always", lambda c, T, free, dt: free // S.kv_bytes_from_config(
            {k: v for k, v in c.items() if k != "head_dim"}, T, 1, dt)),
        ("the MHA form 2·L·B·T·C·bytes", lambda c, T, free, dt: free // (
            2 * c["num_hidden_layers"] * T * c["hidden_size"] * S.DTYPE_BYTES[dt])),
        ("subtracts a 10 % reserve again", lambda c, T, free, dt: int(free * 0.9) // S.kv_bytes_from_config(c, T, 1, dt)),
        ("subtracts the weights again", lambda c, T, free, dt: (free - _weights_16bit(c)) // S.kv_bytes_from_config(c, T, 1, dt)),
        ("counts bits, not bytes", lambda c, T, free, dt: free // (8 * S.kv_bytes_from_config(c, T, 1, dt))),
    ],
    "05.top_p": [
        ("drops the token that crosses p", _top_p_strict),
        ("can keep nothing", _top_p_can_be_empty),
        ("keeps the least likely tokens", _top_p_ascending),
        ("returns probabilities", _top_p_probabilities),
        ("0 instead of -inf outside the nucleus", lambda logits, p: logits.masked_fill(torch.isinf(S.top_p(logits, p)), 0.0)),
        ("returns the logits sorted", lambda logits, p: S.top_p(logits, p).sort(descending=True).values),
        ("keeps the token at exactly p (before <= p)", _top_p_at_p_kept),
        ("sorted mask on unsorted logits", _top_p_unscattered),
        ("renormalised with log_softmax", _top_p_log_softmax),
        ("drops the long tail at p = 1", _top_p_no_special_case),
        ("running total over the logits", _top_p_cumsum_of_logits),
        ("returns the boolean mask", lambda logits, p: torch.isfinite(S.top_p(logits, p))),
        ("changes the logits in place", _top_p_in_place),
    ],
    "05.stop_text": [
        ("endswith on the text", _stop_endswith),
        ("the first listed string wins", _stop_first_listed),
        ("keeps the stop string", _stop_keeps_string),
        ("stop strings searched as regular expressions", _stop_regex),
        ("position 0 taken for no hit", lambda text, stops: (lambda hits: text[: min(hits)] if hits and min(hits) else None)(
            [text.find(s) for s in stops if s in text])),
        ("cuts at the last occurrence", _stop_last),
        ("min over every find, -1 included", lambda text, stops: (lambda p: None if p == -1 else text[:p])(
            min(text.find(s) for s in stops))),
        ("strips the space before the stop string", _stop_stripped),
    ],
    "06.ttft_tpot": [
        ("TPOT over n gaps", lambda t0, ts: (ts[0] - t0, (ts[-1] - ts[0]) / len(ts))),
        ("TPOT from the request", lambda t0, ts: (ts[0] - t0, (ts[-1] - t0) / len(ts))),
        ("TTFT from the first token", lambda t0, ts: (0.0, (ts[-1] - ts[0]) / (len(ts) - 1) if len(ts) > 1 else None)),
    ],
    "06.itl_p95": [
        ("the mean gap", lambda ts: float(np.mean(np.diff(ts)))),
        ("the wait for the first token counted as a gap", _itl_with_ttft),
        ("nearest rank instead of interpolation", lambda ts: float(np.percentile(np.diff(ts), 95, method="nearest"))),
    ],
    "07.fix_position": [
        ("position restarts at 0", lambda m, t, c: m(t[:, None], cache=c, position_ids=torch.tensor([0]))[:, -1]),
        ("position = cache length - 1", lambda m, t, c: m(t[:, None], cache=c, position_ids=torch.tensor([c.seq_len - 1]))[:, -1]),
        ("position = cache length + 1", lambda m, t, c: m(t[:, None], cache=c, position_ids=torch.tensor([c.seq_len + 1]))[:, -1]),
    ],
    "07.chunk_step": [(name, _chunk_variant(name)) for name in CHUNK_MISTAKES] + [
        ("a [T, T] mask, no column for the cache", _short_chunk_mask),
        ("the chunk fed twice", _chunk_twice),
    ],
    "08.reorder": [
        ("not reordered", lambda k, v, i: (k, v)),
        ("gathered on the heads axis", lambda k, v, i: (k.index_select(1, i % k.shape[1]), v.index_select(1, i % v.shape[1]))),
        ("sorted instead of gathered", lambda k, v, i: (k[i.argsort()], v[i.argsort()])),
    ],
    "08.window_update": [
        ("keeps the oldest positions", lambda ck, k, w: (k if ck is None else torch.cat([ck, k], 2))[:, :, :w]),
        ("one position too many", lambda ck, k, w: (k if ck is None else torch.cat([ck, k], 2))[:, :, -(w + 1):]),
        ("new entry first", lambda ck, k, w: (k if ck is None else torch.cat([k, ck], 2))[:, :, :w]),
    ],
}


# The appendices' planted mistakes live beside their Chinese tests (each owns its exercises).
from test_i18n_paged import MISTAKES_10  # noqa: E402
from test_i18n_serving import MISTAKES_11  # noqa: E402
from test_i18n_speculative import MISTAKES_12  # noqa: E402
from test_i18n_compression import MISTAKES_13  # noqa: E402

for _appendix in (MISTAKES_10, MISTAKES_11, MISTAKES_12, MISTAKES_13):
    MISTAKES.update(_appendix)


def test_every_exercise_has_planted_mistakes():
    assert set(MISTAKES) == set(E.EXERCISES)
    assert all(len(m) >= 3 for m in MISTAKES.values())


def test_at_least_sixteen_exercises_two_per_notebook_01_to_08():
    per_nb = {}
    for key in E.EXERCISES:
        per_nb[key[:2]] = per_nb.get(key[:2], 0) + 1
    assert all(per_nb.get(f"{n:02d}", 0) >= 2 for n in range(1, 9))
    assert len(E.EXERCISES) >= 16


@pytest.mark.parametrize("exercise_id", sorted(E.EXERCISES))
def test_the_reference_solution_passes(exercise_id, capsys):
    report = E.check(exercise_id, E.EXERCISES[exercise_id].solution)
    assert report.passed, report.cases
    assert "all" in capsys.readouterr().out


@pytest.mark.parametrize("exercise_id, name, wrong", [(k, n, f) for k, ms in MISTAKES.items() for n, f in ms],
                         ids=[f"{k}:{n}" for k, ms in MISTAKES.items() for n, _ in ms])
def test_a_planted_mistake_fails_with_a_hint(exercise_id, name, wrong, capsys):
    report = E.check(exercise_id, wrong)
    out = capsys.readouterr().out
    assert not report.passed, f"{exercise_id}: the mistake '{name}' passed"
    assert "✗" in out and "Hint:" in out
    assert "Traceback" not in out


def test_a_stub_is_not_written_yet(capsys):
    def stub(T_new, T_past):
        raise NotImplementedError
    report = E.check("01.causal_mask", stub)
    assert not report.passed and not report.written
    assert "not written yet: your turn" in capsys.readouterr().out


def test_an_error_in_the_learners_code_is_one_readable_line(capsys):
    report = E.check("06.ttft_tpot", lambda t0, ts: (ts[0] - t0, (ts[-1] - ts[0]) / (len(ts) - 1)))
    out = capsys.readouterr().out
    assert not report.passed and "raised ZeroDivisionError" in out and "one token only" in out


def test_reference_returns_the_solution_a_notebook_can_call_in_place_of_the_learners(capsys):
    fn = E.reference("02.prefill_positions")
    assert fn is E.EXERCISES["02.prefill_positions"].solution and E.run("02.prefill_positions", fn).passed
    with pytest.raises(ValueError, match="unknown exercise"):
        E.reference("02.no_such_exercise")


def test_show_solution_prints_the_reference(capsys):
    src = E.show_solution("08.reorder")
    assert "def reorder" in src and "index_select(0" in capsys.readouterr().out


@pytest.mark.parametrize("exercise_id", sorted(E.EXERCISES))
def test_show_solution_in_chinese_prints_a_chinese_header_and_no_english_docstring(exercise_id, capsys):
    from utils.i18n import set_language

    set_language("zh")
    try:
        src = E.show_solution(exercise_id)
    finally:
        set_language("en")
    doc = E.EXERCISES[exercise_id].solution.__doc__ or ""  # a few appendix solutions have none
    assert src.startswith(f"# {exercise_id} 的参考解答") and "def " in src
    assert '"""' not in src and (not doc.strip() or doc.strip().splitlines()[0] not in src)
    compile(src, exercise_id, "exec")  # what is left is still valid Python


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="unknown exercise '09.nope'"):
        E.check("09.nope", lambda: None)
    with pytest.raises(ValueError, match="needs your function"):
        E.check("01.causal_mask", "causal_mask")


def test_a_function_that_changes_its_input_tensor_fails_and_is_told_so(capsys):
    """Every exercise: a right result computed by writing into the caller's tensor still fails, named."""
    report = E.check("05.top_p", dict(MISTAKES["05.top_p"])["changes the logits in place"])
    assert not report.passed
    assert "changed the tensor it was given as its argument `logits`" in capsys.readouterr().out


def test_cases_are_fresh_each_run():
    """A learner's function that writes into its input must not spoil the next check."""
    def scribble(x, n_rep):
        x.zero_()
        return S.repeat_kv(x, n_rep)
    E.run("01.repeat_kv", scribble)
    assert E.run("01.repeat_kv", S.repeat_kv).passed
    assert math.isnan(S.itl_p95([1.0]))


def _course_prompt():
    from utils.course_model import load_course_model

    model, tok = load_course_model()
    return model, torch.tensor([tok.encode("<BOS> 我 喜欢 猫 。 他 有 一")])


def test_every_mystery_is_a_broken_engine_the_check_catches(capsys):
    model, prompt = _course_prompt()
    assert len(E.VOCABULARY) >= 10
    for n in range(1, 11):
        m = E.mystery(n)
        assert m.check(model, prompt).caught
        assert m._answer not in repr(m)  # nothing prints the answer


def test_diagnose_rules_a_wrong_word_out_then_hints_then_reveals(capsys):
    from utils.bug_lab import mysteries

    mysteries._tries.clear()
    answer = E.mystery(4)._answer
    wrong = [w for w in E.VOCABULARY if w != answer][:3]
    assert E.diagnose(4, wrong[0]) is False
    out = capsys.readouterr().out
    assert out.startswith(f"✗ not '{wrong[0]}': ") and "Hint" not in out
    E.diagnose(4, wrong[1])
    out = capsys.readouterr().out
    assert "Hint:" in out and f"is '{answer}'" not in out
    E.diagnose(4, wrong[2])
    assert f"Mystery 4 is '{answer}'" in capsys.readouterr().out
    assert E.diagnose(4, answer) is True and "✓" in capsys.readouterr().out
    with pytest.raises(ValueError, match="n must be <= 10"):
        E.mystery(11)


@pytest.mark.parametrize("guess", ["cosmic rays", "positions!", None, 3, ""])
def test_a_word_outside_the_vocabulary_gets_the_list_not_a_traceback(guess, capsys):
    assert E.diagnose(3, guess) is False
    out = capsys.readouterr().out
    assert "is not a word of the list" in out and ", ".join(E.VOCABULARY) in out


def test_diagnose_takes_plurals_and_names_both_bugs_of_the_double_mystery(capsys):
    from utils.bug_lab import mysteries

    mysteries._tries.clear()
    assert E.diagnose(3, "positions") is True  # the spelling the review tried
    assert E.diagnose(10, "layer0") is False
    assert "one of the bugs of mystery 10" in capsys.readouterr().out
    assert E.diagnose(10, "layer 0 + padding") is True and E.diagnose(10, ["mask", "layer0"]) is True
    assert E.diagnose(10, E.mystery(10)._answer) is True


def test_every_wrong_word_is_ruled_out_by_an_observation_of_the_probe():
    """Every mystery, every word that does not name it: the message names an observation (never the fallback)."""
    from utils.bug_lab import mysteries
    from utils.bug_lab.rules_out import rule_out

    model, prompt = _course_prompt()
    correct = mysteries.probe(model, prompt)
    for n in range(1, 11):
        broken = mysteries.probe(model, prompt, n)
        accepted = {w for words in E.mystery(n)._answers for w in words}
        for word in set(E.VOCABULARY) - accepted:
            said = rule_out(word, broken, correct)
            assert said and not said.startswith("compare the mystery's probe"), (n, word, said)


def test_the_probe_of_the_correct_engine_shows_a_healthy_cache():
    from utils.bug_lab import mysteries

    model, prompt = _course_prompt()
    T = prompt.shape[1]
    short = max(1, T // 2)  # every mystery runs on two left-padded rows: the prompt's first half, and all of it
    rows = mysteries.probe(model, prompt, n_steps=3).rows
    assert [r["pass"] for r in rows] == ["prefill", "step 1", "step 2", "step 3"]
    for s, r in enumerate(rows):
        assert r["input"] == [2, T if s == 0 else 1] and r["seq_len"] == T + s and r["real"] == [short + s, T + s]
        if s == 0:
            assert r["positions"][1] == list(range(T)) and r["positions"][0][-short:] == list(range(short))
        else:  # each row's newest token sits at its own position and sees every real key of its row
            assert r["positions"] == [[short - 1 + s], [T - 1 + s]]
        assert r["mask"] == ["0" * (T - short) + "1" * (short + s), "1" * (T + s)]
        assert all(all(flags) for key in ("k", "v", "out") for flags in r[key]) and r["logits"] == [True, True]


def test_every_mystery_leaves_a_trace_in_its_probe_that_names_nothing():
    from utils.bug_lab import mysteries

    model, prompt = _course_prompt()

    def columns(probe):
        return [c.strip() for c in str(probe).splitlines()[1].split("|")]
    header = columns(mysteries.probe(model, prompt))
    vocabulary = set(E.VOCABULARY) - {"position", "mask"}  # positions and a mask row are observations, not verdicts
    assert not any(word in " ".join(header).lower() for word in vocabulary)
    for n in range(1, 11):
        broken, correct = mysteries.probe(model, prompt, n), mysteries.probe(model, prompt, n, correct=True)
        assert broken.rows != correct.rows, n  # the probe shows where the engine goes wrong
        assert columns(broken) == header  # the same columns for every mystery: no name
        assert broken.rows[0]["pass"] == "prefill" and len(broken.rows) == 3
    with pytest.raises(ValueError, match="n_steps"):
        mysteries.probe(model, prompt, 1, n_steps=-1)
    with pytest.raises(ValueError, match="n must be <= 10"):
        mysteries.probe(model, prompt, 11)


def test_the_probe_sees_what_sets_the_harder_mysteries_apart():
    """The observations each harder mystery is solved from (the regression tests of the rebuilt probe)."""
    from utils.bug_lab import mysteries

    model, prompt = _course_prompt()
    correct = mysteries.probe(model, prompt).rows
    T = prompt.shape[1]
    off_by_one = mysteries.probe(model, prompt, 4).rows  # positions one lower than the correct engine's
    assert [p[0] - 1 for p in correct[1]["positions"]] == [p[0] for p in off_by_one[1]["positions"]]
    reused = mysteries.probe(model, prompt, 5).rows  # the cache holds the earlier request too
    assert reused[0]["seq_len"] == 2 * T and not any(reused[0]["logits"])
    only_padded = mysteries.probe(model, prompt, 7).rows  # row 1 (no padding) stays right
    assert only_padded[1]["logits"] == [False, True] and only_padded[1]["mask"][0] == "1" * (T + 1)
    layer0 = mysteries.probe(model, prompt, 8).rows  # layer 0 right, layer 1 wrong, layer 1's own new K right
    assert layer0[1]["out"][1][:2] == [True, False] and layer0[1]["k"][1][:2] == [True, True]
    values = mysteries.probe(model, prompt, 9).rows  # layer 0: K right, V wrong, from the prefill on
    assert values[0]["k"][1][0] and not values[0]["v"][1][0]
    double = mysteries.probe(model, prompt, 10).rows  # row 0 wrong from layer 0, row 1 from layer 1
    assert double[1]["out"][0][0] is False and double[1]["out"][1][:2] == [True, False]


@pytest.mark.parametrize("exercise_id", ["07.fix_position", "07.chunk_step"])
def test_an_unwritten_mystery_fix_is_not_written_yet_not_a_failed_check(exercise_id, capsys):
    def stub(*args):
        raise NotImplementedError

    report = E.check(exercise_id, stub)
    assert not report.written and "not written yet" in capsys.readouterr().out


# --- correct alternatives a learner may write are accepted (a review found three rejected) --------

def _fast_path_decode_step(model, token_ids, cache):
    """The model's own fast pieces: rolled RoPE tables and SDPA with grouped K/V."""
    import torch.nn.functional as F

    from utils.attention import apply_rope_rolled

    cfg, B = model.cfg, token_ids.shape[0]
    pos = cache.seq_len
    rope = model.rope_tables(slice(pos, pos + 1), model.embed_tokens.weight.dtype)
    x = model.embed_tokens(token_ids[:, None])
    for i, layer in enumerate(model.layers):
        a = layer.self_attn
        h = layer.input_layernorm(x)
        q = a.q_proj(h).view(B, 1, cfg.n_heads, cfg.head_dim).transpose(1, 2)
        k = a.k_proj(h).view(B, 1, cfg.n_kv_heads, cfg.head_dim).transpose(1, 2)
        v = a.v_proj(h).view(B, 1, cfg.n_kv_heads, cfg.head_dim).transpose(1, 2)
        q, k = apply_rope_rolled(q, *rope), apply_rope_rolled(k, *rope)
        K, V = cache.update(i, k, v)
        out = F.scaled_dot_product_attention(q, K, V, enable_gqa=cfg.n_heads != cfg.n_kv_heads)
        x = x + a.o_proj(out.transpose(1, 2).reshape(B, 1, cfg.n_heads * cfg.head_dim))
        x = x + layer.mlp(layer.post_attention_layernorm(x))
    return model.lm_head(model.norm(x))[:, -1]


def _hf_style_positions(mask):
    return (mask.long().cumsum(1) - 1).masked_fill(mask == 0, 1)  # transformers puts 1 on the pads


def _top_p_float64(logits, p):
    probs = torch.softmax(logits.double(), -1)
    sp, order = probs.sort(descending=True)
    keep = torch.zeros_like(probs, dtype=torch.bool).scatter(0, order, (sp.cumsum(0) - sp) < p)
    return logits.masked_fill(~keep, float("-inf")) if p < 1 else logits


@pytest.mark.parametrize("exercise_id, fn", [
    ("03.decode_step", _fast_path_decode_step),
    ("02.prefill_positions", _hf_style_positions),
    ("05.top_p", _top_p_float64),
    ("04.kv_bytes_from_config", lambda c, T, B, dt: np.int64(S.kv_bytes_from_config(c, T, B, dt))),
], ids=["fast-path decode step", "HF pad positions", "top-p in float64", "numpy int"])
def test_a_correct_alternative_passes(exercise_id, fn):
    assert E.run(exercise_id, fn).passed


def test_a_slip_of_form_gets_a_form_message_not_the_idea_hint(capsys):
    E.check("04.kv_bytes_from_config", lambda c, T, B, dt: float(S.kv_bytes_from_config(c, T, B, dt)))
    out = capsys.readouterr().out
    assert "right value, but an int is expected" in out and "first return what the contract asks for" in out
    assert not E.run("02.prefill_positions", lambda m: S.prefill_positions(m).float()).passed


def test_last_valid_logits_names_the_position_that_came_back(capsys):
    E.check("02.last_valid_logits", lambda logits, mask: logits[:, -1])
    assert "row 0: you returned the logits of position 4; its last real token is at 2" in capsys.readouterr().out


def test_an_engine_does_not_name_its_bug_and_diagnose_forgives_reruns_and_spelling(capsys):
    from utils.bug_lab import mysteries

    for n in range(1, 11):
        names = " ".join(f.__name__ for f in E.mystery(n).engine().values())
        assert names == f"mystery_{n}_prefill mystery_{n}_step"
    mysteries._tries.clear()
    answer = E.mystery(3)._answer
    wrong = next(w for w in E.VOCABULARY if w != answer)
    for _ in range(3):  # the same wrong word three times (a cell run again) is one wrong guess
        E.diagnose(3, wrong)
    assert f"Mystery 3 is '{answer}'" not in capsys.readouterr().out
    assert E.diagnose(3, f"  {answer.upper()} ") is True


def test_a_fix_that_returns_the_wrong_shape_or_raises_says_so(capsys):
    E.check("07.fix_position", lambda m, t, c: m(t[:, None], cache=c, position_ids=torch.tensor([c.seq_len])))
    out = capsys.readouterr().out
    assert "expected logits of shape [B, V]" in out and "first return what the contract asks for" in out
    E.check("07.fix_position", lambda m, t, c: m(t[:, None], cache=c, position_ids=c.seq_len)[:, -1])
    assert "position_ids must be" in capsys.readouterr().out


def test_a_solution_that_loops_forever_is_stopped_and_asked_about_its_loop(monkeypatch):
    import utils.exercises as ex

    monkeypatch.setattr(ex, "CASE_SECONDS", 1)

    def loops(*args, **kwargs):
        while True:
            pass

    report = ex.run("01.causal_mask", loops)
    assert not report.passed and len(report.cases) == 1  # the cases after it are not run
    assert "infinite loop" in report.cases[0].message


def test_a_half_written_solution_shows_the_case_that_ran_and_the_one_not_written_yet():
    import utils.exercises as ex
    from utils.exercises.catalogue import EXERCISES

    reference, calls = EXERCISES["01.causal_mask"].solution, []

    def half(*args, **kwargs):
        calls.append(1)
        if len(calls) > 1:
            raise NotImplementedError
        return reference(*args, **kwargs)

    report = ex.run("01.causal_mask", half)
    assert report.written and report.cases[0].ok and not report.cases[1].ok
    assert "not written yet" in report.cases[1].message
