"""Notebook 07's second fix: a chunk of T new tokens on top of a cache, with explicit positions and mask.

07.chunk_step: the learner's ``chunk_step(model, chunk_ids, cache)`` builds each new token's RoPE position
``[B, T]`` and the mask ``[B, 1, T, past + T]`` (causal, shifted by what is cached, padding hidden) and runs
``masked_forward``. One step of that kind serves a chunked prefill, a multi-token verify and, with T = 1,
a decode step: it fixes mysteries 1 and 7 at once. The cases feed a chunk after a prefill, with and without
left padding, T = 4 and T = 1, on the course model and a random MQA model; the logits ``[B, T, V]`` are
compared with a full recompute of the whole text.

Where the learner's logits differ, the judge runs the reference again with one mistake at a time
(``_variant``): positions from 0, from ``seq_len`` for every row (padding ignored), one too low or too
high; a mask without the cache offset, one that lets a query see padding, one without the causal
triangle, no mask at all, the right mask inverted. The mistake whose logits match is named, with a
hint about it. A mask of the wrong size (torch raises), NaN logits (a query that may see no key), and
a cache that did not grow by T are named too.
"""
from __future__ import annotations

from typing import Callable

import torch

from ..i18n import tr
from .judges import Case, FormProblem, Raised, diagnosis


def chunk_step(model, chunk_ids: torch.Tensor, cache) -> torch.Tensor:
    """Mysteries 1 and 7 fixed, for a chunk of any length: T new tokens per row after a cache that may hold
    left padding; logits [B, T, V]."""
    from ..model import masked_forward

    B, T = chunk_ids.shape
    past = cache.seq_len
    real = cache.mask if cache.mask is not None else torch.ones(B, past, dtype=torch.bool)  # (B, past): 1 = real
    positions = real.sum(1, keepdim=True) + torch.arange(T)  # (B, T): each row counts on from its real tokens
    keys = torch.cat([real.bool(), torch.ones(B, T, dtype=torch.bool)], dim=1)  # (B, S): padded keys False
    causal = torch.arange(past + T)[None, :] <= past + torch.arange(T)[:, None]  # (T, S): query i sees keys <= past + i
    mask = (causal[None] & keys[:, None, :])[:, None]  # (B, 1, T, S)
    return masked_forward(model, chunk_ids, mask, positions=positions, cache=cache)


# --- the mistakes a learner makes, each a variant of the reference ------------------------------------------

_MISTAKES = {  # name: (message, hint)
    "from0": ("the chunk's positions start at 0, as if nothing were cached",
              "the first new token of a row comes after the row's real cached tokens: its position is their count"),
    "seq_len": ("every row's positions start at cache.seq_len: a left-padded row counts its padding as tokens",
                "count each row's real tokens (cache.mask.sum(1)); only without padding is that cache.seq_len"),
    "minus1": ("the positions are one too low: the first new token gets the last cached token's position",
               "the next position is the count of real tokens cached, not that count - 1"),
    "plus1": ("the positions are one too high",
              "the next position is the count of real tokens cached, not that count + 1"),
    "no_offset": ("the causal triangle starts at key 0: new query i sees keys 0..i instead of 0..past + i",
                  "query i of the chunk sits at key column past + i: shift the triangle by past"),
    "sees_padding": ("a padded row's queries see its padding keys",
                     "AND the causal triangle with each row's real keys (cache.mask, then True for the chunk)"),
    "no_causal": ("each new query sees the chunk's later tokens too: the causal triangle is missing inside the chunk",
                  "new query i may see the chunk's keys up to its own, past + i, never later ones"),
    "none": ("your logits match a forward with no mask at all: every query sees every key, padding and later "
             "tokens included", "hide both the padded keys and the chunk's later keys"),
    "inverted": ("your mask is the right one inverted: True where attention is forbidden",
                 "True means may attend: a query sees the keys where its mask row is True"),
}


def _variant(model, chunk_ids, cache, mistake: str) -> torch.Tensor:
    """The reference step with one mistake in it; logits [B, T, V]."""
    from ..model import masked_forward

    B, T = chunk_ids.shape
    past = cache.seq_len
    real = cache.mask if cache.mask is not None else torch.ones(B, past, dtype=torch.bool)  # (B, past)
    start = {"from0": torch.zeros(B, 1, dtype=torch.long), "seq_len": torch.full((B, 1), past),
             "minus1": real.sum(1, keepdim=True) - 1, "plus1": real.sum(1, keepdim=True) + 1}
    positions = (start.get(mistake, real.sum(1, keepdim=True)) + torch.arange(T)).clamp(min=0)  # (B, T)
    keys = torch.cat([real.bool(), torch.ones(B, T, dtype=torch.bool)], dim=1)  # (B, S)
    if mistake in ("sees_padding", "none"):
        keys = torch.ones_like(keys)
    shift = 0 if mistake == "no_offset" else past
    causal = torch.arange(past + T)[None, :] <= shift + torch.arange(T)[:, None]  # (T, S)
    if mistake in ("no_causal", "none"):
        causal = torch.ones_like(causal)
    mask = (causal[None] & keys[:, None, :])[:, None]  # (B, 1, T, S)
    if mistake == "inverted":
        mask = ~mask
    return masked_forward(model, chunk_ids, mask, positions=positions, cache=cache)


def _setup(model, rows: list[list[int]], T: int, seed: int):
    """A cache prefilled with ``rows`` (left-padded), a chunk ``[B, T]`` and the recompute's logits ``[B, T, V]``."""
    from ..generate import left_pad, prefill

    ids, mask = left_pad(rows)  # (B, P) each
    cache = prefill(model, ids, mask if not bool(mask.all()) else None)[1]
    chunk = torch.randint(1, model.cfg.vocab_size, (len(rows), T), generator=torch.Generator().manual_seed(seed))
    full = model(torch.cat([ids, chunk], 1), attention_mask=torch.cat([mask, torch.ones_like(chunk)], 1))
    return ids, mask, cache, chunk, full[:, -T:]  # (B, T, V)


def _case(words: str, model_fn: Callable, rows: list[list[int]], T: int, seed: int, hint: str = "") -> Case:
    def run(fn):
        model = model_fn()
        with torch.inference_mode():
            ids, mask, cache, chunk, expected = _setup(model, rows, T, seed)
            past = cache.seq_len
            try:
                got = fn(model, chunk.clone(), cache)
            except NotImplementedError:
                raise  # a RuntimeError to Python, but the stub not written yet: the check says so
            except (RuntimeError, IndexError) as err:  # torch's shape errors: the judge reads them
                got = Raised(err)
            return got, cache.seq_len - past, (model, ids, mask, chunk, expected)

    def judge(result) -> str | None:
        got, grew, (model, ids, mask, chunk, expected) = result
        B, T = chunk.shape
        if isinstance(got, Raised):
            error = f"{type(got.err).__name__}: {(str(got.err).strip().splitlines() or [''])[0][:160]}"
            if "size of tensor" in str(got.err) or "must match" in str(got.err) or "broadcast" in str(got.err):
                return diagnosis(tr("torch raised {error}: the mask does not fit the scores [B, H, T, past + T]",
                                    error=error),
                                 tr("the mask needs one column per key, the cached ones first: past + T columns, "
                                    "e.g. [B, 1, T, past + T]"))
            return FormProblem(tr("your function raised {error}", error=error))
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(expected.shape):
            shape = list(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
            return FormProblem(tr("expected logits of shape [B, T, V] = {want}, got {got}",
                                  want=list(expected.shape), got=shape))
        if grew != T:
            return diagnosis(tr("the cache grew by {grew} positions instead of T = {T}", grew=grew, T=T),
                             tr("run the chunk through masked_forward once, with the cache: it appends the "
                                "chunk's K/V"))
        if bool(torch.isnan(got).any()):
            return diagnosis(tr("some logits are NaN: a query whose mask row is all False sees no key at all"),
                             tr("True means may attend: every new query sees at least its own key"))
        if bool(torch.allclose(got.float(), expected.float(), atol=1e-4, rtol=0)):
            return None
        from ..generate import prefill

        with torch.inference_mode():
            for name, (message, hint) in _MISTAKES.items():
                cache = prefill(model, ids, mask if not bool(mask.all()) else None)[1]
                if bool(torch.allclose(got.float(), _variant(model, chunk, cache, name).float(), atol=1e-4, rtol=0)):
                    return diagnosis(tr(message), tr(hint))
        worst = float((got.float() - expected.float()).abs().max())
        return tr("the logits differ from a full recompute by up to {worst:.3g}", worst=worst)
    return Case(words, run, judge, hint)


def chunk_step_cases() -> list[Case]:
    from ..course_model import load_course_model
    from .decode_exercise import mqa_model

    def course():
        return load_course_model()[0]
    return [_case("course model, no padding: 6 cached, a chunk of T = 4", course, [[5, 6, 7, 8, 9, 10]] * 2, 4, 1),
            _case("course model, left padding (3 and 6 real tokens): a chunk of T = 4", course,
                  [[5, 6, 7], [5, 6, 7, 8, 9, 10]], 4, 2),
            _case("course model, left padding: a chunk of T = 1 (a decode step)", course,
                  [[5, 6, 7], [5, 6, 7, 8, 9, 10]], 1, 3),
            _case("random MQA model, left padding (2 and 5 real tokens): a chunk of T = 3", mqa_model,
                  [[3, 4], [3, 4, 5, 6, 7]], 3, 4)]
