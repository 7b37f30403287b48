"""Beam search on top of the KV cache: after every step, the cache rows must follow the beams.

Beam search keeps the ``n_beams`` most probable continuations (highest summed log-probability).
At each step every beam proposes every token; the best ``n_beams`` of all ``n_beams x V``
candidates survive. A survivor continues some *parent* beam, and two survivors may share one
parent while another beam dies out. Row ``i`` of the cache holds the history of beam ``i`` of the
previous step, so before decoding the new tokens the cache must be reordered:

    cache.reorder(parents)     # row i now holds the history of beam parents[i]

Forget it and beam i decodes its new token on top of another beam's history: no error, just
wrong logits. ``beam_search(..., check=True)`` compares every beam's cached logits with a full
recompute of its own sequence, step by step, and reports the first step that diverges.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .block_pool import BlockPool
from .generate import decode_step, make_cache, prefill
from .i18n import tr
from .model import check_model
from .paged import PagedKVCache
from .recompute import TOL, RecomputeReport
from .validate import CACHE_KINDS, as_one_prompt, check_choice, check_fits, check_ids, check_int, eos_set


@dataclass
class BeamSearchResult:
    """What ``beam_search`` returns.

    sequences  ``[n_beams, T + n_steps]`` prompt + new tokens of every beam, best beam first
    scores     ``[n_beams]`` summed log-probabilities of each beam's new tokens
    parents    per step: which beam of the previous step each beam continues
    step_tokens per step: the token each beam appended (``parents[s][b]`` + ``step_tokens[s][b]``)
    report     per step, max over beams of |cached - recomputed| logits (None if ``check=False``);
               step 0 is the prefill, step s the decode after the s-th new token
    """

    sequences: torch.Tensor
    scores: torch.Tensor
    parents: list[list[int]]
    step_tokens: list[list[int]]
    report: RecomputeReport | None

    def texts(self, tokenizer, prompt_len: int, eos_id=None) -> list[str]:
        """Each beam's new tokens as text, cut after the first ``eos_id`` (if given; one id or several)."""
        return [tokenizer.decode(row) for row in self.new_tokens(prompt_len, eos_id)]

    def new_tokens(self, prompt_len: int, eos_id=None) -> list[list[int]]:
        """Each beam's new token ids, cut after the first ``eos_id`` (if given; one id or several)."""
        eos, out = eos_set(eos_id), []
        for row in self.sequences[:, prompt_len:].tolist():
            stop = next((i for i, t in enumerate(row) if t in eos), None)
            out.append(row if stop is None else row[: stop + 1])
        return out


@torch.inference_mode()
def beam_search(
    model,
    prompt: torch.Tensor,
    n_beams: int,
    n_steps: int,
    *,
    reorder: bool = True,
    cache_kind: str = "dynamic",
    check: bool = True,
    tol: float = TOL,
    eos_id=None,
    cache=None,
) -> BeamSearchResult:
    """Beam search of ``n_steps`` tokens after ``prompt`` (``[T]`` or ``[1, T]``), one cache row per beam.

    ``reorder=False`` skips ``cache.reorder`` (the bug). ``cache_kind``: ``"dynamic"`` or ``"static"``.
    With ``check=True`` every step also recomputes each beam's sequence without a cache.
    ``eos_id`` (one id or several, as ``generate`` takes it): a beam that has produced one is finished; it
    keeps its score and its only continuation is the smallest ``eos_id`` (so the batch stays rectangular).
    The search stops early once every beam is finished. ``cache``: an empty cache to search with, instead
    of a new one of ``cache_kind`` (``reorder_copies`` passes a paged cache whose pool counts its copies).
    """
    check_model(model)
    check_int("n_beams", n_beams, minimum=1, maximum=model.cfg.vocab_size)
    check_int("n_steps", n_steps, minimum=0)
    check_choice("cache_kind", cache_kind, CACHE_KINDS)
    prompt = as_one_prompt(prompt)
    check_ids(prompt, model.cfg.vocab_size)
    eos = sorted(eos_set(eos_id))
    if any(not 0 <= e < model.cfg.vocab_size for e in eos):
        raise ValueError(tr("eos_id={eos_id!r} is outside the vocabulary [0, {last}]", eos_id=eos_id,
                            last=model.cfg.vocab_size - 1))
    eos_ids = torch.tensor(eos, dtype=torch.long)
    T = prompt.shape[1]
    check_fits(model.cfg, T, n_steps, "n_steps")
    model.eval()
    seqs = prompt.repeat(n_beams, 1)  # (n_beams, T): every beam starts as the prompt
    kv = cache if cache is not None else make_cache(cache_kind, model.cfg, n_beams, T + n_steps,
                                                    dtype=model.lm_head.weight.dtype)
    logits, kv = prefill(model, seqs, cache=kv)  # (n_beams, V)
    # The beams are identical at first: only beam 0 may expand, or the survivors would be copies.
    scores = torch.full((n_beams,), float("-inf"))
    scores[0] = 0.0
    diffs, positions, all_parents, all_tokens = [], [], [], []

    def compare() -> None:
        full = model(seqs)[:, -1]  # (n_beams, V): each beam's sequence recomputed without a cache
        diffs.append(float((logits.float() - full.float()).abs().max()))
        positions.append(seqs.shape[1] - 1)

    if check:
        compare()
    V = logits.shape[-1]
    for _ in range(n_steps):
        candidates = torch.log_softmax(logits.float(), dim=-1) + scores[:, None]  # (n_beams, V)
        if eos:
            done = torch.isin(seqs[:, T:], eos_ids).any(dim=1)  # (n_beams,): finished beams
            if bool(done.all()):
                break
            candidates[done] = float("-inf")
            candidates[done, eos[0]] = scores[done]  # a finished beam continues with eos, at no cost
        best = candidates.flatten().topk(n_beams)  # the n_beams best of n_beams * V candidates
        parents, tokens = best.indices // V, best.indices % V  # (n_beams,), (n_beams,)
        scores = best.values
        if reorder:
            kv.reorder(parents)  # row i now holds the history of beam parents[i]
        seqs = torch.cat([seqs[parents], tokens[:, None]], dim=1)  # (n_beams, T + step + 1)
        logits = decode_step(model, tokens, kv)  # (n_beams, V)
        all_parents.append(parents.tolist())
        all_tokens.append(tokens.tolist())
        if check:
            compare()
    report = None
    if check:
        report = RecomputeReport.from_diffs(diffs, positions, tol)
    return BeamSearchResult(seqs, scores, all_parents, all_tokens, report)


class _CountingPool(BlockPool):
    """A ``BlockPool`` that counts its copy-on-write copies."""

    copies = 0

    def copy_block(self, src: int) -> int:
        self.copies += 1
        return super().copy_block(src)


@dataclass
class ReorderCopies:
    """What keeping the cache rows in step with the beams copies, over one search, in positions
    (one position of one row = its K and V in every layer: ``2 x L x H_kv x d_h`` numbers).

    reorder    a contiguous cache's ``reorder``: every row, whole, at every step (``index_select``)
    moved      only the rows whose parent is another row (what a smarter contiguous reorder would copy)
    cow        a paged cache: ``cow_blocks`` blocks of ``block_size`` positions, copied on write
    """

    result: BeamSearchResult
    reorder: int
    moved: int
    cow_blocks: int
    block_size: int

    @property
    def cow(self) -> int:
        return self.cow_blocks * self.block_size


def reorder_copies(model, prompt: torch.Tensor, n_beams: int, n_steps: int, *, block_size: int = 4,
                   eos_id=None) -> ReorderCopies:
    """Run ``beam_search`` on a paged cache (blocks of ``block_size``) and count what stays in step with the
    beams: the blocks copy-on-write copied, against the positions a contiguous cache's ``reorder`` copies for
    the same parents. The search is checked against a recompute of every beam (``result.report``)."""
    check_int("block_size", block_size)
    prompt = as_one_prompt(prompt)
    T = prompt.shape[1]
    per_row = -(-(T + n_steps) // block_size) + 1  # blocks a row can hold, plus one for a copy in flight
    pool = _CountingPool(model.cfg, n_beams * per_row, block_size, dtype=model.lm_head.weight.dtype)
    result = beam_search(model, prompt, n_beams, n_steps, eos_id=eos_id, cache=PagedKVCache(pool=pool))
    held = [T + s for s in range(len(result.parents))]  # positions per row when step s + 1 reorders
    reorder = sum(n_beams * t for t in held)
    moved = sum(t * sum(p != i for i, p in enumerate(parents)) for t, parents in zip(held, result.parents))
    return ReorderCopies(result, reorder, moved, pool.copies, block_size)
