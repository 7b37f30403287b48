"""Judges that recognise the mistakes learners make in the exercises of notebooks 02-05 and name them
(notebook 01's are in ``attention_judges.py``; notebook 04's, which read byte counts, in ``sizing_judges.py``;
notebook 03's, which read a cache and a decode step, in ``decode_exercise.py``).

Each judge builds what a plausible mistake would have returned on the case's inputs (the positions counted
from 1, the new positions before the old ones...) and compares the
learner's result with each: a match is a ``diagnosis``, a message about that mistake with a hint about
that mistake. A result that matches no known mistake gets the usual "expected ..., got ..." and the
exercise's own hint. Everything said goes through ``tr``; values through ``fmt``.
"""
from __future__ import annotations

import re
from typing import Any, Callable

import torch

from ..i18n import tr
from . import solutions as S
from .judges import FormProblem, diagnosis, expected_got, fmt, is_form_problem, same_tensor

Judge = Callable[[Any], "str | None"]


def _equal(got: torch.Tensor, candidate) -> bool:
    if not isinstance(candidate, torch.Tensor) or got.shape != candidate.shape:
        return False
    a, b = got.double(), candidate.double()
    return bool((torch.isclose(a, b, atol=1e-6, rtol=0) | (a == b)).all())


# --- 02.prefill_positions ---------------------------------------------------------------------------

def positions_judge(mask: torch.Tensor) -> Judge:
    """Real tokens must get their positions; a padding column may hold any position in [0, T)."""
    expected = S.prefill_positions(mask)
    real, T = mask.bool(), mask.shape[1]

    def judge(got) -> str | None:
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(mask.shape):
            return same_tensor(expected)(got)  # names the type or the shape
        if got.is_floating_point() or got.dtype == torch.bool:
            return FormProblem(tr("positions index the RoPE tables: expected an integer dtype, got {dtype}",
                                  dtype=got.dtype))
        if not torch.equal(got[real], expected[real]):
            text = (tr("expected {expected}, got {got}", expected=expected.tolist(), got=got.tolist()) if real.all() else
                    tr("at the real tokens expected {expected} (-1: padding), got {got}",
                       expected=expected.masked_fill(~real, -1).tolist(), got=got.tolist()))
            if torch.equal(got[real], expected[real] + 1):
                return diagnosis(text, tr("number each row's real tokens from 0: a cumulative sum counts from 1, "
                                          "so subtract 1"))
            pads = (~real).sum(1)  # (B,): each row's own number of pads
            one_count = torch.arange(T)[None, :] - pads.max()  # (1, T): the batch's largest pad count taken off every row
            if pads.min() < pads.max() and any(torch.equal(got[real], x.expand_as(got)[real])
                                               for x in (one_count, one_count.clamp(min=0))):
                return diagnosis(text, tr("you took the batch's largest pad count off every row: count each row's own "
                                          "pads (or number each row's real tokens with `cumsum(1)` along the row)"))
            columns = torch.arange(T).expand_as(got)  # (B, T): 0 ... T-1 in every row, pads included
            if torch.equal(got[real], columns[real]):
                b = int((~real).sum(1).argmax())  # the row with the most pads
                return diagnosis(text, tr("you numbered the columns, pads included: row {b}'s first real token got "
                                          "position {p}, the number of pads before it. Number each row's real tokens "
                                          "from 0 (with RoPE the column numbering gives the same logits if decode "
                                          "continues it, but the contract, the course's model and transformers' "
                                          "`generate` number from the first real token)",
                                          b=b, p=int((~real[b]).sum())))
            from_end = mask.long().flip(1).cumsum(1).flip(1) - 1  # (B, T): each row counted from its last token
            if torch.equal(got[real], from_end[real]):
                return diagnosis(text, tr("you counted from the row's end: its last real token got 0. Number from the "
                                          "first real token, left to right: `cumsum(1)` along the row"))
            return text
        if bool(((got < 0) | (got >= T))[~real].any()):
            return diagnosis(
                tr("your real tokens are numbered right; the padding columns hold {bad}, outside [0, {T}): {got}",
                   bad=sorted(set(got[~real].tolist())), T=T, got=got.tolist()),
                tr("padding positions are never attended to, but they still index the RoPE tables (-1 would read "
                   "the last row): give them any position in [0, T), e.g. 0 with `.clamp(min=0)`"))
        return None
    return judge


# --- 05.top_p ---------------------------------------------------------------------------------------

def nucleus_judge(logits: torch.Tensor, p: float) -> Judge:
    """The logits with -inf outside the nucleus; names probabilities, 0 for -inf, a sorted result, a mask left in
    sorted order, the token at exactly p, a long tail cut at p = 1, and which tokens were kept against which
    should be."""
    expected = S.top_p(logits, p)
    form = same_tensor(expected, atol=1e-6)
    keep = torch.isfinite(expected)
    order = logits.argsort(descending=True)
    probs, rising = torch.softmax(logits.double(), -1), logits.argsort()
    renormalised = torch.softmax(expected.double(), -1)  # the nucleus's probabilities, summing to 1
    # what the rule keeps when the tokens are sorted upwards, from the least likely
    from_least = torch.zeros_like(keep).scatter(0, rising, probs[rising].cumsum(0) - probs[rising] < p)
    # the mask of the sorted order applied to the logits as they stand (the scatter back forgotten)
    before = probs[order].cumsum(0) - probs[order]  # (V,): mass ranked before each, in sorted order
    unscattered = before < p
    # the running total taken over the logits themselves, not over softmax(logits)
    sorted_logits = logits.double()[order]
    over_logits = torch.zeros_like(keep).scatter(0, order, sorted_logits.cumsum(0) - sorted_logits < p)
    n_keep = int(keep.sum())
    long = logits.numel() > 24  # too many values to list: the messages name the mistake only
    # the token after the nucleus, when the tokens before it reach p exactly (kept by `before <= p`)
    at_p = int(order[n_keep]) if n_keep < len(order) and abs(float(before[n_keep]) - p) < 1e-6 else None

    def ids(mask: torch.Tensor) -> list[int]:
        return mask.nonzero().flatten().tolist()

    def judge(got) -> str | None:
        if isinstance(got, torch.Tensor) and got.dtype == torch.bool:
            return FormProblem(tr("expected float logits, got a bool mask: return `logits.masked_fill(~keep, "
                                  "float('-inf'))`, not `keep`"))
        problem = form(got)
        if problem is None or is_form_problem(problem):
            return problem
        g = got.double()
        finite = torch.isfinite(g)
        values = g[finite]  # the cases' logits lie outside [0, 1] (log-probabilities + 4; the long tail's are <= 0)
        in_unit = values.numel() > 0 and bool(((values >= 0) & (values <= 1)).all())
        # a single value in [0, 1] may be a logit (0.0 after log_softmax): probabilities only if it is one
        if in_unit and (values.numel() > 1 or bool(torch.isclose(values, probs[finite]).all())
                        or bool(torch.isclose(values, renormalised[finite]).all())):
            return diagnosis(tr("you returned probabilities {got}; the contract asks for logits", got=fmt(got)),
                             tr("softmax only decides which tokens stay: return the logits themselves, unchanged in "
                                "the nucleus and -inf outside it (`logits.masked_fill(~keep, float('-inf'))`)"))
        if _equal(got, logits.masked_fill(~keep, 0.0)) and not bool(keep.all()):
            return diagnosis(tr("outside the nucleus you put 0: expected {expected}, got {got}",
                                expected=fmt(expected), got=fmt(got)),
                             tr("a logit of 0 still has weight after softmax: put -inf outside the nucleus"))
        if _equal(got, expected[order]) and not _equal(got, expected):
            return diagnosis(tr("your logits are in sorted order") if long else
                             tr("your logits are in sorted order: expected {expected}, got {got}",
                                expected=fmt(expected), got=fmt(got)),
                             tr("keep each logit at its token id: sort only to choose the tokens, then mark them "
                                "in the original order (scatter with the sort's indices)"))
        kept = finite
        if torch.equal(kept, keep):
            return diagnosis(tr("you kept the right tokens, but changed their logits") if long else
                             tr("you kept the right tokens {ids}, but changed their logits: "
                                "expected {expected}, got {got}",
                                ids=ids(keep), expected=fmt(expected), got=fmt(got)),
                             tr("keep the nucleus's logits as they are (no renormalising): sampling's softmax "
                                "renormalises anyway"))
        if p >= 1 and bool(kept.any()):
            return diagnosis(tr("at p = 1 you kept {n} of {V} tokens; p = 1 keeps them all", n=int(kept.sum()),
                                V=len(kept)),
                             tr("at p = 1 keep every token: float32 running sums reach 1.0 before the tail ends, so "
                                "`before < p` drops it; return the logits unchanged when p >= 1"))
        text = tr("you kept tokens {mine}; the nucleus is {want}", mine=ids(kept), want=ids(keep))
        if not bool(kept.any()):
            return diagnosis(text, tr("never empty: the most likely token is always kept"))
        crossing = int(order[n_keep - 1])  # the last token in, the one whose mass crosses p
        crossing_dropped = keep.clone().index_fill_(0, torch.tensor([crossing]), False)
        if torch.equal(kept, over_logits) and torch.equal(kept, crossing_dropped):
            return text  # either mistake keeps these tokens: the other cases tell them apart
        if torch.equal(kept, over_logits):
            return diagnosis(tr("you kept tokens {mine}, as a running total of the logits themselves would; the "
                                "nucleus is {want}", mine=ids(kept), want=ids(keep)),
                             tr("the running total is over softmax(logits), not the logits: take the softmax, "
                                "sort it, then sum the probabilities"))
        if at_p is not None and torch.equal(kept, keep.clone().index_fill_(0, torch.tensor([at_p]), True)):
            return diagnosis(tr("you kept tokens {mine}; the tokens before {t} already reach p = {p} exactly, so the "
                                "nucleus is {want}", mine=ids(kept), t=at_p, p=p, want=ids(keep)),
                             tr("keep a token only while the tokens above it hold less than p (<, not <= p): once "
                                "the running total equals p, the set is complete"))
        if torch.equal(kept, crossing_dropped):
            return diagnosis(text, tr("the token that crosses p is kept: keep a token while the mass of the tokens "
                                      "ranked before it is < p"))
        if torch.equal(kept, unscattered) and not torch.equal(unscattered, keep):
            return diagnosis(tr("you kept tokens {mine}, the first {n} token ids: your mask is in sorted order, the "
                                "logits are not; the nucleus is {want}", mine=ids(kept), n=int(kept.sum()),
                                want=ids(keep)),
                             tr("the mask you built follows the sorted order: put it back at the token ids (`scatter` "
                                "with the sort's indices) before masking the logits"))
        if not bool(kept[order[0]]) or torch.equal(kept, from_least):
            return diagnosis(text, tr("the nucleus holds the most likely tokens: sort by probability, descending"))
        return text
    return judge


# --- 05.stop_text -----------------------------------------------------------------------------------

def _regex_position(pattern: str, text: str) -> int | None:
    try:
        found = re.search(pattern, text)
    except re.error:
        return None
    return None if found is None else found.start()


def stop_judge(text: str, stops: list[str]) -> Judge:
    """The text cut before the earliest stop string; names the string kept, the first-listed string, a
    stop string read as a regular expression, and a hit missed."""
    expected = S.stop_text(text, stops)
    hits = sorted((text.find(s), k, s) for k, s in enumerate(stops) if s in text)

    def judge(got) -> str | None:
        if got == expected and type(got) is type(expected):
            return None
        if got is not None and not isinstance(got, str):
            return FormProblem(tr("expected a str or None, got {type}", type=type(got).__name__))
        for s in stops:
            at = _regex_position(s, text)
            if at is not None and at != text.find(s) and got == text[:at]:
                return diagnosis(
                    tr("you cut at position {at}, where the regular expression {s} matches; the text {s} is at {pos}",
                       at=at, s=fmt(s), pos=text.find(s)) if s in text else
                    tr("you cut at position {at}, where the regular expression {s} matches; the text {s} does not "
                       "occur", at=at, s=fmt(s)),
                    tr("a stop string is plain text: in a regular expression `.`, `?`, `[` and `(` mean something "
                       "else; use `text.find(s)` (or `re.escape(s)`)"))
        if hits:
            first, _, s = hits[0]
            missing = [m for m in stops if m not in text]
            if missing and got is None:  # two mistakes return None here: an endswith test, or min() over find's -1
                return diagnosis(
                    tr("you returned None, but {s} occurs at position {pos}: either you looked only at the end of "
                       "the text (`endswith`), or you took the smallest `text.find` over every stop string, where the "
                       "-1 of {m}, which does not occur, was smallest", s=fmt(s), pos=first, m=fmt(missing[0])),
                    tr("a stop string can stand anywhere in the text: search for it anywhere in the text, not only "
                       "at its end; and `text.find(s)` returns -1 for one that does not occur: leave those out "
                       "before taking the smallest position"))
            if missing and got == text[:-1]:  # min() over find's -1, then text[:-1]
                return diagnosis(
                    tr("{m} does not occur, so `text.find({m})` is -1, and the smallest position was that -1 "
                       "(you returned {got}); {s} occurs at position {pos}", m=fmt(missing[0]), got=fmt(got), s=fmt(s),
                       pos=first),
                    tr("`text.find(s)` returns -1 for a stop string that does not occur: leave those out before "
                       "taking the smallest position"))
            last = text.rfind(s)
            if last != first and got == text[:last]:
                return diagnosis(tr("you cut at the last {s} (position {last}); it first occurs at position {pos}",
                                    s=fmt(s), last=last, pos=first),
                                 tr("generation stops at the first occurrence: `text.find(s)` finds it, "
                                    "`text.rfind(s)` the last one"))
            if got == text[:first].rstrip() and got != expected:
                return diagnosis(tr("you removed the space before the stop string: expected {expected}, got {got}",
                                    expected=fmt(expected), got=fmt(got)),
                                 tr("cut exactly at the stop string's start, `text[:position]`: the text before it "
                                    "stays as it is, spaces included"))
            if got == text[: first + len(s)]:
                return diagnosis(tr("you kept the stop string {s}: expected {expected}, got {got}",
                                    s=fmt(s), expected=fmt(expected), got=fmt(got)),
                                 tr("drop the stop string itself: cut at its start, `text[:position]`"))
            listed = min(hits, key=lambda hit: hit[1])
            if listed[1] != hits[0][1] and got == text[: listed[0]]:
                at_end = text.endswith(listed[2]) and text.find(listed[2]) == len(text) - len(listed[2])
                return diagnosis(tr("you cut at {listed}, which ends the text and is the first string of the list; {s} "
                                    "occurs earlier: did you test only the end (`endswith`) or take the first listed?",
                                    listed=fmt(listed[2]), s=fmt(s)) if at_end else
                                 tr("you cut at {listed}, the first string of the list; {s} occurs earlier in the text",
                                    listed=fmt(listed[2]), s=fmt(s)),
                                 tr("the order of the list does not matter: find every stop string and cut at the one "
                                    "that occurs first in the text (the smallest position)"))
            if got is None and first != 0 and not text.endswith(s):
                return diagnosis(tr("you returned None, but {s} occurs at position {pos}, not at the end of the text: "
                                    "did you test only the end (`endswith`)?", s=fmt(s), pos=first),
                                 tr("look for the stop string anywhere in the text (`text.find(s)`), not only at its "
                                    "end: it may cover several tokens"))
            if got is None:
                return diagnosis(tr("you returned None, but {s} occurs at position {pos}", s=fmt(s), pos=first),
                                 tr("position 0 is a hit too: test `s in text` (or `pos != -1`), not whether the "
                                    "position is truthy") if first == 0 else
                                 tr("look for the stop string anywhere in the text (`text.find(s)`), not only at its "
                                    "end: it may cover several tokens"))
        return expected_got(expected, got)
    return judge
