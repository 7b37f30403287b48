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

from .cache import KVCache, StaticKVCache
from .flat_decode import can_use_flat, flat_decode_step, flat_weights
from .sampling import _check as _check_sampling
from .sampling import sample

CACHE_KINDS = ("dynamic", "static")


def left_pad(rows: Sequence[Sequence[int]], pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Token lists of different lengths as one batch: ids ``[B, T]`` and attention_mask ``[B, T]``.

    Padding goes on the left (mask 0), so every row's last real token sits in the last column,
    which is where ``prefill`` reads the logits of the first new token.
    """
    if not rows or any(len(r) == 0 for r in rows):
        raise ValueError("left_pad needs at least one row, and no empty rows")
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
    if attention_mask is not None and isinstance(attention_mask, torch.Tensor) and attention_mask.dim() == 2:
        if attention_mask.shape[1] and not bool((attention_mask[:, -1] == 1).all()):
            rows = (attention_mask[:, -1] != 1).nonzero().flatten().tolist()
            raise ValueError(
                f"attention_mask must be left-padded (last column all 1); rows {rows} end with padding"
            )
    if cache is None:
        cache = KVCache()
    logits = model(input_ids, cache=cache, attention_mask=attention_mask)  # (B, T, V)
    return logits[:, -1], cache


@torch.inference_mode()
def decode_step(model, token_ids: torch.Tensor, cache) -> torch.Tensor:
    """Feed one new token per row (``token_ids`` ``[B]``); returns its logits ``[B, V]``."""
    if not isinstance(token_ids, torch.Tensor) or token_ids.dim() != 1:
        shape = tuple(token_ids.shape) if isinstance(token_ids, torch.Tensor) else type(token_ids).__name__
        raise ValueError(f"token_ids must be a [B] tensor (one new token per row), got {shape}")
    if cache is None or cache.seq_len == 0:
        raise ValueError("decode_step needs a cache filled by prefill; got an empty cache")
    return model(token_ids[:, None], cache=cache)[:, -1]  # (B, 1, V) -> (B, V)


def decode_stepper(model, cache) -> Callable[[torch.Tensor], torch.Tensor]:
    """``step(token_ids [B]) -> logits [B, V]``: ``decode_step`` for a loop over one ``cache``.

    When ``can_use_flat`` holds (decided once, here) it runs ``flat_decode_step``: the same
    numbers without the per-module Python, a large part of a small model's step. Otherwise it
    is ``decode_step`` through the modules. Register hooks (or switch to train mode) before
    making a stepper, not during its loop (``generate`` makes one per call).
    """
    if not can_use_flat(model, cache):
        return lambda token_ids: decode_step(model, token_ids, cache)
    weights = flat_weights(model)

    @torch.inference_mode()
    def step(token_ids: torch.Tensor) -> torch.Tensor:
        if not isinstance(token_ids, torch.Tensor) or token_ids.dim() != 1 or cache.seq_len == 0:
            return decode_step(model, token_ids, cache)  # raises its clear ValueError
        model._check(token_ids[:, None], cache, None, None)  # ids in range, room left in max_seq_len
        return flat_decode_step(model, weights, token_ids, cache)

    return step


@dataclass
class GenerationResult:
    """What ``generate`` returns.

    tokens        ``[B, n]`` the new tokens only; a row that stopped early is padded with ``pad_id``
    lengths       new tokens per row (up to and including the stop token)
    stop_reasons  per row: ``"eos"``, ``"stop_string"`` or ``"max_new_tokens"``
    ttft_s        seconds from the call to the first new token (prefill + first sample)
    step_times_s  seconds between consecutive new tokens (the decode steps: TPOT samples)
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


def _as_batch(input_ids) -> torch.Tensor:
    if isinstance(input_ids, (list, tuple)):
        input_ids = torch.tensor(input_ids, dtype=torch.long)
    if isinstance(input_ids, torch.Tensor) and input_ids.dim() == 1:
        input_ids = input_ids[None]  # (1, T): a single prompt
    return input_ids


def _eos_set(eos_id) -> set[int]:
    if eos_id is None:
        return set()
    ids = [eos_id] if isinstance(eos_id, int) and not isinstance(eos_id, bool) else list(eos_id)
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise ValueError(f"eos_id must be an int or a list of ints, got {eos_id!r}")
    return set(ids)


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
    cache: str = "dynamic",
    seed: int | None = None,
    stop_strings: Sequence[str] | None = None,
    tokenizer=None,
    pad_id: int | None = None,
) -> GenerationResult:
    """Generate up to ``max_new_tokens`` tokens after ``input_ids`` (``[B, T]``, ``[T]`` or a list).

    ``use_cache=False`` recomputes the whole sequence at every step (the slow reference).
    ``cache`` picks ``"dynamic"`` (``KVCache``) or ``"static"`` (``StaticKVCache`` sized for the
    prompt plus ``max_new_tokens``). ``stop_strings`` need a ``tokenizer``; a row stops when its
    decoded new text ends with one of them, even when the string spans several tokens.
    """
    input_ids = _as_batch(input_ids)
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be an int >= 0, got {max_new_tokens!r}")
    if cache not in CACHE_KINDS:
        raise ValueError(f"cache={cache!r}; choose one of {CACHE_KINDS}")
    _check_sampling(torch.zeros(1, 1), temperature, top_k, top_p)
    eos = _eos_set(eos_id)
    stop_strings = [stop_strings] if isinstance(stop_strings, str) else list(stop_strings or [])
    if stop_strings and tokenizer is None:
        raise ValueError("stop_strings need a tokenizer to turn tokens into text; pass tokenizer=...")
    if any(not isinstance(s, str) or not s for s in stop_strings):
        raise ValueError(f"stop_strings must be non-empty strings, got {stop_strings!r}")
    V = model.cfg.vocab_size
    if pad_id is None:
        pad_id = min(eos) if eos else 0
    if not 0 <= pad_id < V:
        raise ValueError(f"pad_id={pad_id} is outside the vocabulary [0, {V - 1}]")
    model._check(input_ids, None, attention_mask, None)  # fail before any work, with a clear message
    B, T = input_ids.shape
    if T + max_new_tokens > model.cfg.max_seq_len:
        raise ValueError(
            f"prompt of {T} tokens + max_new_tokens={max_new_tokens} exceeds max_seq_len={model.cfg.max_seq_len}"
        )
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
            kv = KVCache() if cache == "dynamic" else StaticKVCache(
                model.cfg, B, T + max_new_tokens, dtype=model.lm_head.weight.dtype, device=input_ids.device
            )
            logits, kv = prefill(model, input_ids, attention_mask, kv)
            step_fn = decode_stepper(model, kv)  # the flat step when it computes the same
        else:
            ids = input_ids
            mask = attention_mask if attention_mask is not None else torch.ones_like(input_ids)
            logits = model(ids, attention_mask=mask)[:, -1]
        t_prev = t_start
        for step in range(max_new_tokens):
            nxt = sample(logits, temperature, top_k, top_p, generator)  # (B,)
            if any(finished):  # rows that already stopped only get padding
                nxt = nxt.masked_fill(torch.tensor(finished, device=nxt.device), pad_id)
            out[:, step] = nxt
            now = time.perf_counter()
            if step == 0:
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
                elif step == max_new_tokens - 1:
                    reasons[b] = "max_new_tokens"
                else:
                    continue
                finished[b] = True
            if all(finished):
                break
            if use_cache:
                logits = step_fn(nxt)
            else:  # no cache: the whole history goes through every layer again
                ids = torch.cat([ids, nxt[:, None]], dim=1)  # (B, T + step + 1)
                mask = torch.cat([mask, torch.ones_like(nxt)[:, None]], dim=1)
                logits = model(ids, attention_mask=mask)[:, -1]
    n = max(lengths)
    texts = None
    if tokenizer is not None:
        texts = [tokenizer.decode(out[b, : lengths[b]].tolist()) for b in range(B)]
    return GenerationResult(out[:, :n], lengths, reasons, ttft, step_times, texts, kv)
