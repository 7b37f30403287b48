"""The bug lab's catalogue: classic cached-inference bugs, each in a few lines, each with its fix.

Sections 1 to 9 follow notebook 07 and its lesson. Every bug comes as two variants that differ
in the lines marked ``# BUG`` / ``# FIX``: a broken and a fixed function or class (a decode
step, a prefill, a cache class, ...). ``show_fix(bug)`` prints the diff between them. The diff is
shown in the reader's language: each comment and docstring of a variant is a catalogue key (its
Chinese is in utils/i18n/zh_exercises.py; change both together, tests/test_i18n_exercises.py checks).

``BUGS`` is the table the notebook sums up: symptom, cause, check, the two variants, and a
``runner`` that plugs one variant into the recompute check (``compare_with_recompute``, which
reports the first step and position where cached and recomputed logits part ways).
``bug.run(model, prompt, fixed)`` reproduces the bug, or its fix, on a prompt ``[1, T]``.
The bench every bug shares (``run_check``, ``Outcome``, ``table``) is ``harness.py``; the notebook
reaches all of it, and the mysteries, through ``utils.bug_lab``.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Callable

import torch

from ..beam import BeamSearchResult, beam_search
from ..cache import KVCache
from ..generate import generate, left_pad, prefill
from ..i18n import tr
from ..model import Decoder, masked_forward
from ..validate import as_one_prompt
from .harness import N_STEPS, TOL, Outcome, run_check, show_diff


# --- 1. position ids restart at 0 ------------------------------------------------------------

def step_position_restarts(model, token_ids, cache):
    """Decode step that passes the new token's position explicitly."""
    position = torch.tensor([0])  # BUG: as if nothing came before
    return model(token_ids[:, None], cache=cache, position_ids=position)[:, -1]


def step_position_continues(model, token_ids, cache):
    """Decode step that passes the new token's position explicitly."""
    position = torch.tensor([cache.seq_len])  # FIX: position = number of cached tokens
    return model(token_ids[:, None], cache=cache, position_ids=position)[:, -1]


# --- 2. the whole prompt fed again together with the cache -------------------------------------

class TextSoFar:
    """Remembers the prompt at prefill, so a decode step can feed text on top of the cache."""

    def prefill(self, model, ids, mask, cache):
        self.ids = ids  # (B, T)
        return prefill(model, ids, mask, cache)


class FeedEverything(TextSoFar):
    """Each decode step feeds some of the text so far, on top of the cache."""

    def step(self, model, token_ids, cache):
        self.ids = torch.cat([self.ids, token_ids[:, None]], dim=1)  # (B, T + 1): the text so far
        new = self.ids  # BUG: the cache already holds all but the last token
        return model(new, cache=cache)[:, -1]


class FeedNewTokenOnly(TextSoFar):
    """Each decode step feeds some of the text so far, on top of the cache."""

    def step(self, model, token_ids, cache):
        self.ids = torch.cat([self.ids, token_ids[:, None]], dim=1)  # (B, T + 1): the text so far
        new = self.ids[:, -1:]  # FIX: only the token the cache has not seen
        return model(new, cache=cache)[:, -1]


# --- 3. K/V concatenated on the wrong axis ------------------------------------------------------

class ConcatOnHeadsKVCache(KVCache):
    """Appends new K/V ``[B, H_kv, T_new, d_h]`` to what each layer holds."""

    def update(self, layer, k, v):
        if layer == len(self.k):  # first write of this layer: nothing to append to
            self.k.append(k)
            self.v.append(v)
        else:
            self.k[layer] = torch.cat([self.k[layer], k], dim=1)  # BUG: dim=1 is H_kv, not time
            self.v[layer] = torch.cat([self.v[layer], v], dim=1)
        return self.k[layer], self.v[layer]


class ConcatOnTimeKVCache(KVCache):
    """Appends new K/V ``[B, H_kv, T_new, d_h]`` to what each layer holds."""

    def update(self, layer, k, v):
        if layer == len(self.k):  # first write of this layer: nothing to append to
            self.k.append(k)
            self.v.append(v)
        else:
            self.k[layer] = torch.cat([self.k[layer], k], dim=2)  # FIX: dim=2 is time
            self.v[layer] = torch.cat([self.v[layer], v], dim=2)
        return self.k[layer], self.v[layer]


def prefill_into(cache_class) -> Callable:
    """A ``prefill_fn`` that fills a new ``cache_class()`` instead of the cache it is given."""

    def prefill_fn(model, ids, mask, cache):
        return prefill(model, ids, mask, cache_class())

    return prefill_fn


# --- 4. a mask that ignores the cache ----------------------------------------------------------

def step_mask_ignores_cache(model, token_ids, cache):
    """Decode step with an explicit mask ``[T_q=1, S]`` over the S = cached + 1 keys."""
    S = cache.seq_len + 1
    mask = torch.ones(1, S, dtype=torch.bool).tril()  # BUG: query 0 sees key 0 only, as without a cache
    return masked_forward(model, token_ids[:, None], mask, cache=cache)[:, -1]


def step_mask_counts_cache(model, token_ids, cache):
    """Decode step with an explicit mask ``[T_q=1, S]`` over the S = cached + 1 keys."""
    S = cache.seq_len + 1
    mask = torch.ones(1, S, dtype=torch.bool).tril(diagonal=S - 1)  # FIX: shifted by the cache length
    return masked_forward(model, token_ids[:, None], mask, cache=cache)[:, -1]


def prefill_chunks_short_mask(model, ids, mask, cache):
    """Prefill in two chunks; the second chunk's mask covers only its own T2 keys."""
    half = ids.shape[1] // 2
    prefill(model, ids[:, :half], None, cache)  # chunk 1: an ordinary prefill
    T2 = ids.shape[1] - half
    chunk_mask = torch.ones(T2, T2, dtype=torch.bool).tril()  # BUG: [T2, T2], the cached keys are missing
    return masked_forward(model, ids[:, half:], chunk_mask, cache=cache)[:, -1], cache


def prefill_chunks_full_mask(model, ids, mask, cache):
    """Prefill in two chunks; the second chunk's mask covers the cached keys too."""
    half = ids.shape[1] // 2
    prefill(model, ids[:, :half], None, cache)  # chunk 1: an ordinary prefill
    T2 = ids.shape[1] - half
    chunk_mask = torch.ones(T2, half + T2, dtype=torch.bool).tril(diagonal=half)  # FIX: [T2, cached + T2]
    return masked_forward(model, ids[:, half:], chunk_mask, cache=cache)[:, -1], cache


# --- 5. a padded batch whose valid lengths are mixed up ----------------------------------------

def padded_batch(prompt: torch.Tensor, pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Two rows of different lengths from one prompt ``[1, T]`` (or ``[T]``, or a list of ids): its first
    half, and all of it. Returns ids and mask ``[2, T]``, padded on the left (``utils.generate.left_pad``).
    """
    row = as_one_prompt(prompt)[0].tolist()
    return left_pad([row[: max(1, len(row) // 2)], row], pad_id)


def prefill_lengths_mixed_up(model, ids, mask, cache):
    """Prefill a left-padded batch, rebuilding its mask from the rows' valid lengths."""
    lengths = mask.sum(dim=1)  # (B,): real tokens per row
    lengths = lengths.flip(0)  # BUG: the lengths no longer line up with the rows (e.g. sorted elsewhere)
    T = ids.shape[1]
    mask = (torch.arange(T)[None, :] >= T - lengths[:, None]).long()  # (B, T): 1 on the last lengths[b]
    return prefill(model, ids, mask, cache)


def prefill_lengths_matched(model, ids, mask, cache):
    """Prefill a left-padded batch, rebuilding its mask from the rows' valid lengths."""
    lengths = mask.sum(dim=1)  # (B,): real tokens per row
    # FIX: row b keeps its own length
    T = ids.shape[1]
    mask = (torch.arange(T)[None, :] >= T - lengths[:, None]).long()  # (B, T): 1 on the last lengths[b]
    return prefill(model, ids, mask, cache)


# --- 6. dropout left on ------------------------------------------------------------------------

def with_dropout(model: Decoder, p: float = 0.1) -> Decoder:
    """A copy of ``model`` (same weights) whose config has ``dropout=p``, in eval mode."""
    twin = Decoder(replace(model.cfg, dropout=p), attn_impl=model.attn_impl)
    twin.load_state_dict(model.state_dict())
    return twin.to(model.lm_head.weight.dtype).eval()


def keep_train_mode(model: Decoder) -> Decoder:
    """Get a model ready to decode: its mode decides whether dropout draws random masks."""
    return model.train()  # BUG: dropout stays on, as in training


def switch_to_eval(model: Decoder) -> Decoder:
    """Get a model ready to decode: its mode decides whether dropout draws random masks."""
    return model.eval()  # FIX: dropout is the identity


# --- 7. every layer reads layer 0's K/V -----------------------------------------------------------

class Layer0HistoryKVCache(KVCache):
    """Stores every layer's K/V; hands each layer a history to attend over."""

    def update(self, layer, k, v):
        super().update(layer, k, v)  # (B, H_kv, T_past + T_new, d_h) stored for this layer
        T_new = k.shape[2]
        past_k, past_v = self.k[0][:, :, :-T_new], self.v[0][:, :, :-T_new]  # BUG: layer 0's history
        return torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)


class OwnHistoryKVCache(KVCache):
    """Stores every layer's K/V; hands each layer a history to attend over."""

    def update(self, layer, k, v):
        super().update(layer, k, v)  # (B, H_kv, T_past + T_new, d_h) stored for this layer
        T_new = k.shape[2]
        past_k, past_v = self.k[layer][:, :, :-T_new], self.v[layer][:, :, :-T_new]  # FIX: its own
        return torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)


# --- 8. a beam search step without reorder ----------------------------------------------------------

def beams_without_reorder(model, prompt) -> BeamSearchResult:
    """Beam search with 3 beams; every step checks each beam's cached logits against a recompute."""
    return beam_search(model, prompt, 3, N_STEPS, reorder=False, tol=TOL)  # BUG: row i keeps old beam i


def beams_with_reorder(model, prompt) -> BeamSearchResult:
    """Beam search with 3 beams; every step checks each beam's cached logits against a recompute."""
    return beam_search(model, prompt, 3, N_STEPS, reorder=True, tol=TOL)  # FIX: cache.reorder(parents)


# --- 9. use_cache changes no parameter --------------------------------------------------------------

def state_hash(model) -> str:
    """SHA-256 of every tensor of ``model.state_dict()`` (names, shapes, dtypes and bytes); 12 hex digits."""
    h = hashlib.sha256()
    for name, t in sorted(model.state_dict().items()):
        h.update(f"{name}{tuple(t.shape)}{t.dtype}".encode())
        h.update(t.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    return h.hexdigest()[:12]


def use_cache_hashes(model, prompt: torch.Tensor, n_new: int = 8) -> dict[str, str]:
    """State hashes before and after ``generate`` with and without the cache."""
    hashes = {tr("before"): state_hash(model)}
    for use_cache in (True, False):
        generate(model, prompt, n_new, use_cache=use_cache)
        hashes[tr("after use_cache={flag}", flag=use_cache)] = state_hash(model)
    return hashes


# --- the table: how each kind of variant is plugged into the check --------------------------------

def as_step(model, prompt, step_fn) -> Outcome:
    """The variant is a decode step ``step_fn(model, token_ids, cache)``."""
    return run_check(model, prompt, step_fn=step_fn)


def as_prefill_and_step(model, prompt, variant_class) -> Outcome:
    """The variant is a class whose instance brings its own ``prefill`` and ``step``."""
    variant = variant_class()
    return run_check(model, prompt, prefill_fn=variant.prefill, step_fn=variant.step)


def as_cache(model, prompt, cache_class) -> Outcome:
    """The variant is a cache class: the prefill fills one, and every decode step uses it."""
    return run_check(model, prompt, prefill_fn=prefill_into(cache_class))


def as_padded_prefill(model, prompt, prefill_fn) -> Outcome:
    """The variant prefills a left-padded batch of two rows made from ``prompt``."""
    ids, mask = padded_batch(prompt)
    return run_check(model, ids, attention_mask=mask, prefill_fn=prefill_fn)


def as_dropout_twin_mode(model, prompt, set_mode) -> Outcome:
    """The variant sets the mode of a copy of ``model`` with dropout in its config."""
    twin = set_mode(with_dropout(model, 0.1))
    torch.manual_seed(0)  # dropout draws random masks: fix them for a reproducible report
    return run_check(twin, prompt)


def as_beam_search(model, prompt, search) -> Outcome:
    """The variant runs a checked beam search; its report is the outcome."""
    return Outcome(search(model, prompt).report)


@dataclass(frozen=True)
class Bug:
    """One row of the bug table.

    ``broken``/``fixed``: the two variants, functions or classes whose source ``show_fix`` diffs.
    ``runner(model, prompt, variant)``: runs the recompute check with one variant plugged in.
    """

    key: str
    title: str
    symptom: str
    cause: str
    check: str
    broken: Callable
    fixed: Callable
    runner: Callable[[Decoder, torch.Tensor, Callable], Outcome]

    def run(self, model, prompt: torch.Tensor, fixed: bool) -> Outcome:
        """The check on ``model`` and ``prompt`` ``[1, T]`` with the broken (or the fixed) variant."""
        return self.runner(model, prompt, self.fixed if fixed else self.broken)


BUGS = [
    Bug("positions", "Position ids restart at 0",
        "prefill OK, decode wrong", "new token's RoPE position = 0", "position = cache length",
        step_position_restarts, step_position_continues, as_step),
    Bug("refeed", "Prompt fed again with cache",
        "decode wrong, cache too long", "history cached twice", "feed only the new token",
        FeedEverything, FeedNewTokenOnly, as_prefill_and_step),
    Bug("concat_axis", "K/V cat on the wrong axis",
        "shape error (T=1: can be silent)", "cat on dim=1 (heads), not 2", "cat on dim=2; check seq_len",
        ConcatOnHeadsKVCache, ConcatOnTimeKVCache, as_cache),
    Bug("mask", "Mask ignores the cache",
        "decode wrong (or shape error)", "mask not offset/sized by past", "mask [T, past + T], offset past",
        step_mask_ignores_cache, step_mask_counts_cache, as_step),
    Bug("padding", "Padded rows, lengths mixed",
        "wrong from the prefill on", "row masked with wrong length", "row alone == row in batch",
        prefill_lengths_mixed_up, prefill_lengths_matched, as_padded_prefill),
    Bug("dropout", "Dropout left on (train mode)",
        "random diffs, even at step 0", "model.train(): random masks", "model.eval()",
        keep_train_mode, switch_to_eval, as_dropout_twin_mode),
    Bug("layer0", "Layer 0's K/V for all layers",
        "prefill OK, decode wrong", "layers read layer 0's keys", "one K/V per layer",
        Layer0HistoryKVCache, OwnHistoryKVCache, as_cache),
    Bug("beam", "Beam step without reorder",
        "beams drift after a reshuffle", "row i keeps old beam i", "cache.reorder(parents)",
        beams_without_reorder, beams_with_reorder, as_beam_search),
]
BUG_BY_KEY = {bug.key: bug for bug in BUGS}


def show_fix(bug: Bug | str) -> str:
    """Unified diff from the broken to the fixed code of ``bug`` (a ``Bug`` or its key)."""
    bug = BUG_BY_KEY[bug] if isinstance(bug, str) else bug
    return show_diff(bug.broken, bug.fixed)


def run_all(model, prompt: torch.Tensor) -> list[tuple[Bug, Outcome, Outcome]]:
    """Every bug of ``BUGS`` on ``model`` and ``prompt`` ``[1, T]``: ``(bug, broken, fixed)``."""
    return [(bug, bug.run(model, prompt, False), bug.run(model, prompt, True)) for bug in BUGS]
