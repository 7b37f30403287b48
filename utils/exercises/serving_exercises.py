"""Exercises of notebook 11 (serving): reference solutions, cases and hints, merged into catalogue.EXERCISES.

11.plan_step   one iteration's plan under a token budget and a chunk size, decode first
11.itl_stall   what a long prompt costs the requests decoding beside it, and itself, with and without chunks
11.preempt     who gives its blocks back when the decodes need more blocks than are free
"""
from __future__ import annotations

import math
from typing import Any, Callable

from ..i18n import tr
from .judges import Case, Exercise, FormProblem, call_with, diagnosis


# --- reference solutions (exercises.show_solution prints them) ---------------------------------------

def plan_step(decoding, prefilling, max_batch_tokens, prefill_chunk):
    """One iteration's plan, decode first (what ``PagedEngine._schedule`` decides, blocks aside).

    decoding: ids of the running requests whose prompt is done, in admission order (1 token each).
    prefilling: (id, prompt tokens still to run) pairs, in the order they are served.
    Returns (decode ids, [(id, n), ...]): the decodes that fit the budget, then a chunk per prompt of
    min(tokens left, prefill_chunk, budget left) while the budget lasts (prefill_chunk None: no limit).
    Decodes take one token each, in admission order, while the budget lasts (the rest skip this
    iteration); no chunk of 0 tokens.
    """
    budget = max_batch_tokens
    decode = list(decoding[:budget])  # one token each, in order, while the budget lasts
    budget -= len(decode)
    chunks = []
    for rid, left in prefilling:
        n = min(left, budget) if prefill_chunk is None else min(left, prefill_chunk, budget)
        if n < 1:
            break  # the budget is spent
        chunks.append((rid, n))
        budget -= n
    return decode, chunks


def itl_stall(prompt_len, prefill_chunk, n_decoding, fixed_s, per_token_s):
    """A prompt of prompt_len tokens is prefilled while n_decoding requests decode. Each iteration runs
    the n_decoding decode tokens and the prompt's next chunk (at most prefill_chunk tokens; None: all of
    it) and takes fixed_s + per_token_s * (the tokens it runs).
    Returns (worst ITL of a decoding request meanwhile, the prompt's TTFT from its first chunk), seconds.
    With decode first a decoding request gets one token per iteration, so the worst ITL is the longest
    iteration of the prefill (returned even when n_decoding is 0).
    """
    chunk = prompt_len if prefill_chunk is None else prefill_chunk
    sizes = [min(chunk, prompt_len - start) for start in range(0, prompt_len, chunk)]  # the last one: what is left
    seconds = [fixed_s + per_token_s * (n_decoding + n) for n in sizes]  # each iteration of the prefill
    return max(seconds), sum(seconds)  # a decoding request waits one iteration per token; the prompt, all of them


def preempt(running, free_blocks):
    """The decodes of one iteration take their blocks, in admission order (``PagedEngine._schedule``, decodes only).

    running: (id, held, needs) triples in admission order: the blocks the request holds alone (they go back
    to the pool if it is preempted) and the new blocks its next token takes. free_blocks: blocks free now.
    Before a request takes its blocks, while they do not fit, the request admitted *last* that still runs
    is preempted: its blocks go back to the pool (and if it is the one asking, it stops asking).
    Returns (decode ids, preempted ids): those that got their blocks, in admission order, and those
    preempted, in the order they went.
    """
    alive = [rid for rid, _, _ in running]  # still running, in admission order
    held = {rid: h for rid, h, _ in running}
    free, decode, preempted = free_blocks, [], []
    for rid, _, needs in running:
        while rid in alive and needs > free:
            victim = alive.pop()  # the request admitted last: it has done the least work
            free += held[victim]
            preempted.append(victim)
        if rid in alive:
            free -= needs
            decode.append(rid)
    return decode, preempted


# --- 11.plan_step ---------------------------------------------------------------------------------------

def _plan_judge(expected) -> Callable[[Any], str | None]:
    want_decode, want_chunks = expected

    def judge(got) -> str | None:
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            return FormProblem(tr("expected a pair (decode ids, chunks), got {type}", type=type(got).__name__))
        try:
            decode = [int(r) for r in got[0]]
            chunks = [(int(r), int(n)) for r, n in got[1]]
        except (TypeError, ValueError):
            return FormProblem(tr("expected a list of ids and a list of (id, n) pairs, got {got!r}", got=got))
        if decode != want_decode:
            return tr("decode rows: expected {expected}, got {got}", expected=want_decode, got=decode)
        if chunks != want_chunks:
            return tr("prefill chunks: expected {expected}, got {got}", expected=want_chunks, got=chunks)
        return None
    return judge


def _plan_case(words: str, args: tuple, hint: str = "") -> Case:
    return Case(words, call_with(*args), _plan_judge(plan_step(*args)), hint)


def _plan_cases() -> list[Case]:
    return [
        _plan_case("2 decoding, a 40-token prompt, budget 16, chunks of 8", ([0, 1], [(2, 40)], 16, 8),
                   "a chunk is at most prefill_chunk tokens, however much budget is left"),
        _plan_case("5 decoding, a budget of 3, a prompt waiting", ([0, 1, 2, 3, 4], [(5, 20)], 3, 8),
                   "decode first: the running requests get their token before any prefill, and once the budget "
                   "is spent nothing else runs"),
        _plan_case("3 decoding, prompts of 10 and 12 tokens left, budget 16, chunks of 8",
                   ([0, 1, 2], [(3, 10), (4, 12)], 16, 8),
                   "the last chunk takes what is left of the budget: part of a prompt is fine"),
        _plan_case("prefill_chunk None: a 30-token prompt in one piece, budget 64", ([5], [(6, 30)], 64, None),
                   "None means no chunk limit: the prompt goes in whole if the budget allows"),
        _plan_case("nothing decoding: two prompts share the budget", ([], [(0, 6), (1, 50)], 24, 16)),
    ]


# --- 11.itl_stall ---------------------------------------------------------------------------------------

def _stall_judge(expected: tuple[float, float]) -> Callable[[Any], str | None]:
    def judge(got) -> str | None:
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            return FormProblem(tr("expected a pair (worst ITL, TTFT) in seconds, got {type}", type=type(got).__name__))
        for name, want, value in zip(("worst ITL", "TTFT"), expected, got):
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                return FormProblem(tr("{name}: expected a number of seconds, got {type}", name=tr(name),
                                      type=type(value).__name__))
            if not math.isclose(value, want, rel_tol=1e-9, abs_tol=1e-15):
                return tr("{name}: expected {want:.4f} ms, got {got:.4f} ms", name=tr(name), want=want * 1e3,
                          got=value * 1e3)
        return None
    return judge


def _stall_case(words: str, args: tuple, hint: str = "") -> Case:
    return Case(words, call_with(*args), _stall_judge(itl_stall(*args)), hint)


def _stall_cases() -> list[Case]:
    return [
        _stall_case("no chunks: 200 prompt tokens in one iteration, 4 decoding", (200, None, 4, 1e-3, 1e-5),
                    "prefill_chunk None: the whole prompt runs in one iteration, beside the decode tokens"),
        _stall_case("chunks of 32 divide 128 exactly, 2 decoding", (128, 32, 2, 5e-4, 2e-5),
                    "the TTFT adds up every iteration of the prompt, each with its fixed cost"),
        _stall_case("chunks of 64: 200 = 64 + 64 + 64 + 8, 4 decoding", (200, 64, 4, 1e-3, 1e-5),
                    "the last chunk is only what is left of the prompt, and every iteration also runs the decodes"),
        _stall_case("a chunk larger than the prompt, 3 decoding", (20, 64, 3, 1e-3, 1e-5),
                    "a chunk never holds more tokens than the prompt has"),
    ]


# --- 11.preempt ---------------------------------------------------------------------------------------

def _preempt_by(running, free_blocks, pick: str = "last", give_back: bool = True):
    """``preempt`` with another victim (``pick``: last, asking, first, most) or without the victims' blocks
    coming back (``give_back=False``): what the plausible mistakes return."""
    alive, held = [rid for rid, _, _ in running], {rid: h for rid, h, _ in running}
    free, decode, preempted = free_blocks, [], []
    for rid, _, needs in running:
        while rid in alive and needs > free:
            if pick == "asking":
                victim = rid
            elif pick == "first":
                victim = alive[0]
            elif pick == "most":
                victim = max(alive, key=lambda r: (held[r], -alive.index(r)))
            else:
                victim = alive[-1]
            alive.remove(victim)
            if victim in decode:
                decode.remove(victim)
                free += dict((r, n) for r, _, n in running)[victim]  # its block was promised: it comes back
            free += held[victim] if give_back else 0
            preempted.append(victim)
        if rid in alive:
            free -= needs
            decode.append(rid)
    return decode, preempted


_PREEMPT_HINTS = {
    "asking": "the engine preempts the request admitted last (the last of `running` still running), not the one "
              "asking for a block: the newest request has done the least work, so its recompute costs least",
    "first": "you preempted the request admitted first, the one that has done the most work: take the last one "
             "that still runs",
    "most": "the victim is not the request holding the most blocks: it is the one admitted last (the newest, with "
            "the least work to recompute)",
    "no give-back": "a preempted request's blocks go back to the pool at once: add what it held to the free blocks, "
                    "or every request after it is preempted too",
}


def _preempt_judge(running, free_blocks):
    expected = preempt(running, free_blocks)
    wrong = {"asking": _preempt_by(running, free_blocks, "asking"), "first": _preempt_by(running, free_blocks, "first"),
             "most": _preempt_by(running, free_blocks, "most"),
             "no give-back": _preempt_by(running, free_blocks, give_back=False)}

    def judge(got) -> str | None:
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            return FormProblem(tr("expected a pair (decode ids, preempted ids), got {type}", type=type(got).__name__))
        try:
            pair = ([int(r) for r in got[0]], [int(r) for r in got[1]])
        except (TypeError, ValueError):
            return FormProblem(tr("expected two lists of request ids, got {got!r}", got=got))
        if pair == expected:
            return None
        text = tr("expected decode {decode} and preempted {preempted}, got decode {got_decode} and preempted "
                  "{got_preempted}", decode=expected[0], preempted=expected[1], got_decode=pair[0],
                  got_preempted=pair[1])
        for name, result in wrong.items():
            if pair == tuple(result) and tuple(result) != expected:
                return diagnosis(text, tr(_PREEMPT_HINTS[name]))
        return text
    return judge


def _preempt_case(words: str, running: list, free_blocks: int, hint: str = "") -> Case:
    return Case(words, call_with([tuple(r) for r in running], free_blocks), _preempt_judge(running, free_blocks), hint)


def _preempt_cases() -> list[Case]:
    return [
        _preempt_case("1 block free, r0 and r1 need one each, r2 holds the most blocks",
                      [(0, 1, 1), (1, 1, 1), (2, 3, 0), (3, 1, 0)], 1),
        _preempt_case("section 1: r0 and r1 need a block each, r2 none, 1 block free", [(0, 3, 1), (1, 2, 1), (2, 2, 0)], 1),
        _preempt_case("2 blocks free, 2 needed: nobody goes", [(0, 2, 1), (1, 2, 1)], 2),
        _preempt_case("no block free, r0 needs one: r1 goes", [(0, 3, 1), (1, 2, 1)], 0),
        _preempt_case("no block free, each victim frees 1: two preemptions", [(0, 4, 1), (1, 1, 1), (2, 1, 0), (3, 1, 0)], 0),
        _preempt_case("no block free: r2 goes for r0, then r1 is the last left to go for itself",
                      [(0, 2, 1), (1, 3, 1), (2, 1, 1)], 0,
                      "when the request asking is itself the last one running, it is the victim: it stops asking, "
                      "and its blocks go back"),
    ]


EXERCISES_11: list[Exercise] = [
    Exercise("11.plan_step", "one iteration's plan, decode first", plan_step, _plan_cases,
             "decode tokens first, one per decoding request; then each prompt gets min(left, chunk, budget left)"),
    Exercise("11.itl_stall", "what a long prompt costs, chunked or not", itl_stall, _stall_cases,
             "each iteration of the prefill runs the decode tokens and one chunk; the decoding requests wait one "
             "iteration per token, the new request all of them"),
    Exercise("11.preempt", "who is preempted when the blocks run out", preempt, _preempt_cases,
             "in admission order, each request takes its blocks; while they do not fit, the request admitted last "
             "gives all its blocks back"),
]
