"""Prefill, decode, and the generation loop around them.

    prefill:  the whole prompt in one forward pass -> K/V of every layer cached, first logits
    decode:   one new token per row -> attends over the cache, appends its own K/V

``generate`` samples a token, checks the stop conditions, feeds it back, and times every step.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch

from .cache import Cache, KVCache, StaticKVCache
from .config import ModelConfig
from .flat_decode import check_flat, flat_decode_step, flat_weights
from .i18n import tr
from .model import check_model
from .paged import PagedKVCache
from .sampling import sample
from .validate import (CACHE_KINDS, STEPS, as_id_batch, check_cache, check_choice, check_decode_input, check_fits,
                       check_forward, check_int, check_left_padded, check_pad_id, check_sampling_args,
                       check_tokenizer, eos_set, stop_string_list)


PAGED_BLOCK_SIZE = 16  # tokens per block of the caches ``make_cache("paged", ...)`` makes (vLLM's default)


def make_cache(cache_kind: str, cfg: ModelConfig, batch_size: int, max_len: int,
               dtype: torch.dtype | None = None, device=None) -> Cache:
    """A new, empty cache of the kind ``generate`` and friends take by name: ``"dynamic"``, ``"static"``
    or ``"paged"`` (a pool with room for every row at ``max_len``)."""
    check_choice("cache_kind", cache_kind, CACHE_KINDS)  # a typo must not fall through to another kind
    check_int("batch_size", batch_size)
    check_int("max_len", max_len)
    if cache_kind == "dynamic":
        return KVCache()
    if cache_kind == "paged":
        n_blocks = batch_size * -(-max_len // PAGED_BLOCK_SIZE)
        return PagedKVCache(cfg, n_blocks, PAGED_BLOCK_SIZE, dtype=dtype, device=device)
    return StaticKVCache(cfg, batch_size, max_len, dtype=dtype, device=device)



def left_pad(rows: Sequence[Sequence[int]], pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Token lists of different lengths as one batch: ids ``[B, T]`` and attention_mask ``[B, T]``.

    Padding goes on the left (mask 0), so every row's last real token sits in the last column,
    which is where ``prefill`` reads the logits of the first new token.
    """
    if not rows or any(len(r) == 0 for r in rows):
        raise ValueError(tr("left_pad needs at least one row, and no empty rows"))
    T = max(len(r) for r in rows)
    ids = torch.full((len(rows), T), pad_id, dtype=torch.long)
    mask = torch.zeros(len(rows), T, dtype=torch.long)
    for b, r in enumerate(rows):
        ids[b, T - len(r):] = torch.as_tensor(list(r), dtype=torch.long)
        mask[b, T - len(r):] = 1
    return ids, mask


@torch.inference_mode()
def prefill(model, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, cache=None):
    """Run the prompt ``[B, T]`` through the model, filling ``cache`` (a new ``KVCache`` if None).

    Prompts of different lengths are left-padded (``attention_mask`` 0 before the real tokens),
    so the last column is every row's last real token. Returns ``(logits [B, V], cache)``.
    """
    check_left_padded(attention_mask)
    if cache is None:
        cache = KVCache()
    logits = model(input_ids, cache=cache, attention_mask=attention_mask)  # (B, T, V)
    return logits[:, -1], cache


@torch.inference_mode()
def decode_step(model, token_ids: torch.Tensor, cache) -> torch.Tensor:
    """Feed one new token per row (``token_ids`` ``[B]``) through the model's modules; returns
    its logits ``[B, V]``. This is the version to read next to ``utils/model.py``."""
    check_decode_input(token_ids, cache)
    return model(token_ids[:, None], cache=cache)[:, -1]  # (B, 1, V) -> (B, V)


def decode_stepper(model, cache, step: str = "flat") -> Callable[[torch.Tensor], torch.Tensor]:
    """``step_fn(token_ids [B]) -> logits [B, V]``: one decode step over ``cache``, for a loop.

    ``step="modules"`` runs ``decode_step`` (``Decoder.forward``, module by module: hooks fire).
    ``step="flat"`` runs ``flat_decode_step`` (``utils/flat_decode.py``): the same arithmetic,
    bit for bit the same logits, without the module calls (and a few view ops), whose Python is a
    large part of a small model's step. It raises ``ValueError`` up front where it would not compute the same
    (a hook, train mode, a cache subclass...): then pass ``step="modules"``.
    """
    check_model(model)
    if cache is None:
        raise ValueError(tr("decode_stepper needs the cache that prefill filled: logits, cache = prefill(model, ids), "
                            "then step_fn = decode_stepper(model, cache)"))
    check_cache(cache)
    check_choice("step", step, STEPS)
    if step == "modules":
        return lambda token_ids: decode_step(model, token_ids, cache)
    check_flat(model, cache)
    weights = flat_weights(model)

    @torch.inference_mode()
    def flat_step(token_ids: torch.Tensor) -> torch.Tensor:
        check_decode_input(token_ids, cache)
        check_forward(model.cfg, token_ids[:, None], cache)  # ids in range, room left in max_seq_len
        return flat_decode_step(model, weights, token_ids, cache)

    return flat_step


@dataclass
class GenerationResult:
    """What ``generate`` returns.

    tokens        ``[B, n]`` the new tokens only; a row that stopped early is padded with ``pad_id``
    lengths       new tokens per row (up to and including the stop token)
    stop_reasons  per row: ``"eos"``, ``"stop_string"`` or ``"max_new_tokens"``
    ttft_s        seconds from the start of the work to the first new token: cache allocation, step
                  setup, prefill and the first sample (a server adds queueing before it)
    step_times_s  seconds between consecutive new tokens: ITL samples (their mean is TPOT)
    texts         decoded new text per row, when a tokenizer was given
    """

    tokens: torch.Tensor
    lengths: list[int]
    stop_reasons: list[str]
    ttft_s: float | None
    step_times_s: list[float] = field(default_factory=list)
    texts: list[str] | None = None
    cache: object = None

    @property
    def tpot_s(self) -> float | None:
        """Mean time per output token after the first (None with fewer than two tokens)."""
        return sum(self.step_times_s) / len(self.step_times_s) if self.step_times_s else None

    @property
    def total_s(self) -> float:
        return (self.ttft_s or 0.0) + sum(self.step_times_s)


def generate(
    model,
    input_ids,
    max_new_tokens: int,
    *,
    temperature: float = 0.0,
    top_k: int | None = None,
    top_p: float | None = None,
    eos_id: int | Sequence[int] | None = None,
    attention_mask: torch.Tensor | None = None,
    use_cache: bool = True,
    cache_kind: str = "dynamic",
    step: str = "flat",
    seed: int | None = None,
    stop_strings: Sequence[str] | None = None,
    tokenizer=None,
    pad_id: int | None = None,
) -> GenerationResult:
    """Generate up to ``max_new_tokens`` tokens after ``input_ids`` (``[B, T]``, ``[T]`` or a list).

    ``use_cache=False`` recomputes the whole sequence at every step (the slow reference).
    ``cache_kind`` picks ``"dynamic"`` (``KVCache``) or ``"static"`` (``StaticKVCache`` sized for
    the prompt plus ``max_new_tokens``). ``step`` picks how each decode step runs: ``"flat"``
    (``utils/flat_decode.py``, the default) or ``"modules"`` (``Decoder.forward``, hooks fire);
    see ``decode_stepper``. ``stop_strings`` need a ``tokenizer``; a row stops when its
    decoded new text ends with one of them, even when the string spans several tokens.
    """
    # Every argument is checked before any work, each with a message that names it.
    check_model(model)
    check_tokenizer(tokenizer)
    input_ids = as_id_batch(input_ids)
    check_int("max_new_tokens", max_new_tokens, minimum=0)
    if seed is not None:
        check_int("seed", seed, minimum=0)
    check_choice("cache_kind", cache_kind, CACHE_KINDS)
    check_choice("step", step, STEPS)
    check_sampling_args(torch.zeros(1, 1), temperature, top_k, top_p)
    eos = eos_set(eos_id)
    stop_strings = stop_string_list(stop_strings, tokenizer)
    if pad_id is None:
        pad_id = min(eos) if eos else 0
    check_pad_id(pad_id, model.cfg.vocab_size)
    check_forward(model.cfg, input_ids, None, attention_mask)
    B, T = input_ids.shape
    check_fits(model.cfg, T, max_new_tokens)
    generator = None
    if seed is not None:
        generator = torch.Generator(device=input_ids.device).manual_seed(seed)
    model.eval()  # dropout off, if a subclass has any: cached and recomputed paths must see the same net

    out = torch.full((B, max_new_tokens), pad_id, dtype=torch.long, device=input_ids.device)
    lengths, reasons = [0] * B, [""] * B
    finished = [False] * B  # per row: stopped already (plain Python: checked every step, no tensor ops)
    step_times: list[float] = []
    ttft = None
    kv = None
    with torch.inference_mode():
        t_start = time.perf_counter()
        if max_new_tokens == 0:
            return GenerationResult(out, lengths, ["max_new_tokens"] * B, None, [], None, None)
        if use_cache:
            kv = make_cache(cache_kind, model.cfg, B, T + max_new_tokens,
                            dtype=model.lm_head.weight.dtype, device=input_ids.device)
            step_fn = decode_stepper(model, kv, step)  # raises before any work if step="flat" cannot run
            logits, kv = prefill(model, input_ids, attention_mask, kv)
        else:
            ids = input_ids
            mask = attention_mask if attention_mask is not None else torch.ones_like(input_ids)
            logits = model(ids, attention_mask=mask)[:, -1]
        t_prev = t_start
        for i in range(max_new_tokens):
            nxt = sample(logits, temperature, top_k, top_p, generator)  # (B,)
            if any(finished):  # rows that already stopped only get padding
                nxt = nxt.masked_fill(torch.tensor(finished, device=nxt.device), pad_id)
            out[:, i] = nxt
            now = time.perf_counter()
            if i == 0:
                ttft = now - t_start
            else:
                step_times.append(now - t_prev)
            t_prev = now
            for b, tok in enumerate(nxt.tolist()):
                if finished[b]:
                    continue
                lengths[b] += 1
                if tok in eos:
                    reasons[b] = "eos"
                elif stop_strings and tokenizer.decode(out[b, : lengths[b]].tolist()).endswith(tuple(stop_strings)):
                    reasons[b] = "stop_string"
                elif i == max_new_tokens - 1:
                    reasons[b] = "max_new_tokens"
                else:
                    continue
                finished[b] = True
            if all(finished):
                break
            if use_cache:
                logits = step_fn(nxt)
            else:  # no cache: the whole history goes through every layer again
                ids = torch.cat([ids, nxt[:, None]], dim=1)  # (B, T + i + 1)
                mask = torch.cat([mask, torch.ones_like(nxt)[:, None]], dim=1)
                logits = model(ids, attention_mask=mask)[:, -1]
    n = max(lengths)
    texts = None
    if tokenizer is not None:
        texts = [tokenizer.decode(out[b, : lengths[b]].tolist()) for b in range(B)]
    return GenerationResult(out[:, :n], lengths, reasons, ttft, step_times, texts, kv)
