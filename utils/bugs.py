"""The bug lab: classic cached-inference bugs, each in a few lines, each with its fix.

Every bug comes as a pair that differs in the lines marked ``# BUG`` / ``# FIX``: a broken and
a fixed ``prefill_fn``/``step_fn`` (or cache class) to plug into
``compare_with_recompute(prefill_fn=..., step_fn=...)``, which then reports the first step and
position where cached and recomputed logits part ways. ``show_fix(bug)`` prints the diff.

``BUGS`` is the table the notebook sums up: symptom, cause, check, and a ``run(model, prompt,
fixed)`` that reproduces it on a model and a prompt ``[1, T]`` and returns an ``Outcome``.
Some bugs make torch raise instead of giving wrong numbers; ``run_check`` catches that and
records at which step it happened, so a notebook cell never errors.
"""
from __future__ import annotations

import difflib
import hashlib
import inspect
import textwrap
from dataclasses import dataclass, replace
from typing import Callable

import torch

from .beam import beam_search
from .cache import KVCache
from .checks import RecomputeReport, compare_with_recompute
from .generate import decode_step, generate, left_pad, prefill
from .model import Decoder
from .sliding import masked_forward

TOL = 1e-4  # max |cached - recomputed| logit difference still counted as "equal"
N_STEPS = 6  # decode steps each bug check runs


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

class FeedEverything:
    """Keeps the text so far; each decode step feeds some of it, on top of the cache."""

    def prefill(self, model, ids, mask, cache):
        self.ids = ids  # (B, T)
        return prefill(model, ids, mask, cache)

    def step(self, model, token_ids, cache):
        self.ids = torch.cat([self.ids, token_ids[:, None]], dim=1)  # (B, T + 1): the text so far
        new = self.ids  # BUG: the cache already holds all but the last token
        return model(new, cache=cache)[:, -1]


class FeedNewTokenOnly(FeedEverything):
    """Keeps the text so far; each decode step feeds some of it, on top of the cache."""

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

# utils.generate.left_pad builds the batch (ids and mask [B, T], padding on the left); bugs.left_pad is it.


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
    hashes = {"before": state_hash(model)}
    for use_cache in (True, False):
        generate(model, prompt, n_new, use_cache=use_cache)
        hashes[f"after use_cache={use_cache}"] = state_hash(model)
    return hashes


# --- running a check without letting an exception escape ---------------------------------------------

@dataclass
class Outcome:
    """A check's result: a ``RecomputeReport``, or the error torch raised and the step it raised at.

    After an error, ``report`` (if not None) covers the steps before ``error_step``.
    """

    report: RecomputeReport | None
    error: str | None = None
    error_step: int | None = None

    @property
    def caught(self) -> bool:
        """True when the check noticed something: an error, or logits that diverge."""
        return self.error is not None or (self.report is not None and not self.report.ok)

    @property
    def first_step(self) -> int | None:
        """Step of the first divergence or error (None when all is well)."""
        return self.error_step if self.error is not None else self.report.first_bad_step

    def short(self) -> str:
        """Like ``summary``, shorter (for tables)."""
        if self.error is not None:
            return f"raises at step {self.error_step}"
        r = self.report
        return "OK" if r.ok else f"step {r.first_bad_step} (pos {r.first_bad_position})"

    def summary(self) -> str:
        """One deterministic line (no float values): what happened and where."""
        if self.error is not None:
            return f"raises {self.error.split(':')[0]} at step {self.error_step}"
        r = self.report
        if r.ok:
            return f"OK: {len(r.max_diffs)} steps equal within {r.tol:g}"
        return f"diverges at step {r.first_bad_step} (position {r.first_bad_position})"


def run_check(model, ids: torch.Tensor, n_steps: int = N_STEPS, *, tol: float = TOL, **kwargs) -> Outcome:
    """``compare_with_recompute`` that turns a torch error into an ``Outcome`` instead of raising.

    ``kwargs`` go to ``compare_with_recompute`` (``prefill_fn``, ``step_fn``, ``attention_mask``).
    Step 0 is the prefill, step s the s-th decode step.
    """
    step = {"n": 0}
    prefill_fn = kwargs.pop("prefill_fn", None) or prefill
    step_fn = kwargs.pop("step_fn", None) or decode_step

    def counted_step(*args):
        step["n"] += 1
        return step_fn(*args)

    try:
        report = compare_with_recompute(model, ids, n_steps, tol=tol, prefill_fn=prefill_fn,
                                        step_fn=counted_step, **kwargs)
    except (RuntimeError, ValueError) as err:
        message = str(err).strip().splitlines()[0] if str(err).strip() else ""
        partial = None
        if step["n"] >= 1:  # the steps before the error did run: report them too
            partial = compare_with_recompute(model, ids, step["n"] - 1, tol=tol, prefill_fn=prefill_fn,
                                             step_fn=step_fn, **kwargs)
        return Outcome(partial, f"{type(err).__name__}: {message}", step["n"])
    return Outcome(report)


# --- the table ------------------------------------------------------------------------------------------

def _run_positions(model, prompt, fixed):
    return run_check(model, prompt, step_fn=step_position_continues if fixed else step_position_restarts)


def _run_refeed(model, prompt, fixed):
    variant = FeedNewTokenOnly() if fixed else FeedEverything()
    return run_check(model, prompt, prefill_fn=variant.prefill, step_fn=variant.step)


def _run_concat_axis(model, prompt, fixed):
    cache_class = ConcatOnTimeKVCache if fixed else ConcatOnHeadsKVCache
    return run_check(model, prompt, prefill_fn=prefill_into(cache_class))


def _run_mask(model, prompt, fixed):
    return run_check(model, prompt, step_fn=step_mask_counts_cache if fixed else step_mask_ignores_cache)


def padded_batch(prompt: torch.Tensor, pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Two rows of different lengths from one prompt ``[1, T]``: its first half, and all of it."""
    row = prompt[0].tolist()
    return left_pad([row[: max(1, len(row) // 2)], row], pad_id)


def _run_padding(model, prompt, fixed):
    ids, mask = padded_batch(prompt)
    return run_check(model, ids, attention_mask=mask,
                     prefill_fn=prefill_lengths_matched if fixed else prefill_lengths_mixed_up)


def _run_dropout(model, prompt, fixed):
    twin = with_dropout(model, 0.1)
    twin.eval() if fixed else twin.train()
    torch.manual_seed(0)  # dropout draws random masks: fix them for a reproducible report
    return run_check(twin, prompt)


def _run_layer0(model, prompt, fixed):
    cache_class = OwnHistoryKVCache if fixed else Layer0HistoryKVCache
    return run_check(model, prompt, prefill_fn=prefill_into(cache_class))


def _run_beam(model, prompt, fixed):
    return Outcome(beam_search(model, prompt, 3, N_STEPS, reorder=fixed, tol=TOL).report)


@dataclass(frozen=True)
class Bug:
    """One row of the bug table. ``broken``/``fixed``: the code to read; ``run(model, prompt, fixed)``."""

    key: str
    title: str
    symptom: str
    cause: str
    check: str
    broken: object
    fixed: object
    run: Callable[[Decoder, torch.Tensor, bool], Outcome]


BUGS = [
    Bug("positions", "Position ids restart at 0",
        "prefill OK, decode wrong", "new token's RoPE position = 0", "position = cache length",
        step_position_restarts, step_position_continues, _run_positions),
    Bug("refeed", "Prompt fed again with cache",
        "decode wrong, cache too long", "history cached twice", "feed only the new token",
        FeedEverything.step, FeedNewTokenOnly.step, _run_refeed),
    Bug("concat_axis", "K/V cat on the wrong axis",
        "shape error (T=1: can be silent)", "cat on dim=1 (heads), not 2", "cat on dim=2; check seq_len",
        ConcatOnHeadsKVCache.update, ConcatOnTimeKVCache.update, _run_concat_axis),
    Bug("mask", "Mask ignores the cache",
        "decode wrong (or shape error)", "mask not offset/sized by past", "mask [T, past + T], offset past",
        step_mask_ignores_cache, step_mask_counts_cache, _run_mask),
    Bug("padding", "Padded rows, lengths mixed",
        "wrong from the prefill on", "row masked with wrong length", "row alone == row in batch",
        prefill_lengths_mixed_up, prefill_lengths_matched, _run_padding),
    Bug("dropout", "Dropout left on (train mode)",
        "random diffs, even at step 0", "model.train(): random masks", "model.eval()",
        "model.train()", "model.eval()", _run_dropout),
    Bug("layer0", "Layer 0's K/V for all layers",
        "prefill OK, decode wrong", "layers read layer 0's keys", "one K/V per layer",
        Layer0HistoryKVCache.update, OwnHistoryKVCache.update, _run_layer0),
    Bug("beam", "Beam step without reorder",
        "beams drift after a reshuffle", "row i keeps old beam i", "cache.reorder(parents)",
        "beam_search(..., reorder=False)", "beam_search(..., reorder=True)", _run_beam),
]
BUG_BY_KEY = {bug.key: bug for bug in BUGS}


def _lines(code) -> list[str]:
    if isinstance(code, str):
        return [code]
    return textwrap.dedent(inspect.getsource(code)).splitlines()


def show_diff(broken, fixed) -> str:
    """Unified diff between two pieces of code (functions, methods, classes or strings)."""
    diff = difflib.unified_diff(_lines(broken), _lines(fixed), "broken", "fixed", n=2, lineterm="")
    return "\n".join(diff)


def show_fix(bug: Bug | str) -> str:
    """Unified diff from the broken to the fixed code of ``bug`` (a ``Bug`` or its key)."""
    bug = BUG_BY_KEY[bug] if isinstance(bug, str) else bug
    return show_diff(bug.broken, bug.fixed)


def run_all(model, prompt: torch.Tensor) -> list[tuple[Bug, Outcome, Outcome]]:
    """Every bug of ``BUGS`` on ``model`` and ``prompt`` ``[1, T]``: ``(bug, broken, fixed)``."""
    return [(bug, bug.run(model, prompt, False), bug.run(model, prompt, True)) for bug in BUGS]


def table(results: list[tuple[Bug, Outcome, Outcome]], hashes: dict[str, str] | None = None) -> str:
    """The bug table as text: symptom -> cause -> check, and where the broken code first goes wrong.

    ``results`` from ``run_all``; with ``hashes`` (from ``use_cache_hashes``) a last row checks the
    belief that ``use_cache`` changes weights. The last line says whether every fix passes.
    """
    head = ("bug", "symptom", "cause", "check / fix", "first divergence")
    rows = [(b.title, b.symptom, b.cause, b.check, broken.short()) for b, broken, _ in results]
    if hashes is not None:
        rows.append(("use_cache changes weights?", "none: a myth", "cache holds activations",
                     "hash the state_dict", f"hashes equal: {len(set(hashes.values())) == 1}"))
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    fmt = " | ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*head), "-+-".join("-" * w for w in widths)] + [fmt.format(*r).rstrip() for r in rows]
    fixes = all(not fixed.caught for _, _, fixed in results)
    return "\n".join(lines + [f"with the fix: every check passes: {fixes}"])
