"""Judges that recognise the mistakes learners make in the exercises of notebooks 01-05 and name them
(notebook 04's, which read byte counts, are in ``sizing_mistakes.py``; notebook 03's, which read a cache and
a decode step, in ``decode_exercise.py``).

Each judge builds what a plausible mistake would have returned on the case's inputs (the mask without its
offset, the heads laid out by ``x.repeat``, the new positions before the old ones...) and compares the
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


# --- 01.causal_mask ---------------------------------------------------------------------------------

def mask_judge(T_q: int, T_k: int) -> Judge:
    """The mask [T_q, T_k] for T_q queries after T_k - T_q cached keys."""
    expected = S.causal_mask(T_q, T_k)
    form, offset = same_tensor(expected), T_k - T_q
    band = torch.ones(T_q, T_k, dtype=torch.bool)

    def judge(got) -> str | None:
        if (isinstance(got, torch.Tensor) and got.is_floating_point() and tuple(got.shape) == (T_q, T_k)
                and bool(((got == 0) | (got == -torch.inf)).all())):  # SDPA's other mask form: added to the scores
            return diagnosis(
                tr("you returned an additive float mask (0 / -inf, dtype {dtype}): the check wants booleans",
                   dtype=got.dtype),
                tr("return booleans, True = may attend (an additive mask is 0 where True and -inf where False)"))
        if isinstance(got, torch.Tensor) and tuple(got.shape) == (T_q, T_q) and T_q != T_k:
            return diagnosis(
                tr("your mask is [T_q, T_q] = {shape}: it has no column for the {n} cached keys",
                   shape=[T_q, T_q], n=offset),
                tr("the mask needs a column for every key, the cached ones first: [T_q, T_k]"))
        if isinstance(got, torch.Tensor) and tuple(got.shape) == (T_k, T_k) and T_q != T_k:
            return diagnosis(
                tr("your mask is the whole square [T_k, T_k] = {shape}: only the new queries make rows "
                   "(T_q = {n}), expected [T_q, T_k] = {expected}", shape=[T_k, T_k], n=T_q, expected=[T_q, T_k]),
                tr("the cached keys' queries were computed earlier and are not made again: keep one row per new "
                   "query, the last T_q rows of the square (or build [T_q, T_k] with the diagonal shifted right)"))
        problem = form(got)
        if problem is None or is_form_problem(problem):
            return problem
        got = got.bool()
        if offset and torch.equal(got, band.tril(0)):
            return diagnosis(
                tr("your diagonal starts at key 0, as if nothing were cached: query 0 sees key 0 only, "
                   "expected {expected}, got {got}", expected=fmt(expected.int()), got=fmt(got.int())),
                tr("the T_k - T_q cached keys come before the queries: query i sits at position T_k - T_q + i, so "
                   "the diagonal moves right by T_k - T_q"))
        if torch.equal(got, band.tril(offset - 1)):
            return diagnosis(tr("each query misses its own key: expected {expected}, got {got}",
                                expected=fmt(expected.int()), got=fmt(got.int())),
                             tr("a query attends to itself too: query i sees keys 0 ... T_k - T_q + i, that key "
                                "included (<=, not <)"))
        if offset and torch.equal(got, band.tril(-offset)):
            if not bool(got.any()):  # one query: the flipped diagonal hides every key, as swapped True/False would
                return diagnosis(
                    tr("no query may see any key, not even its own: expected {expected}, got {got}",
                       expected=fmt(expected.int()), got=fmt(got.int())),
                    tr("True = may attend, and the T_k - T_q cached keys come before the queries: query i sees keys "
                       "0 ... T_k - T_q + i, a diagonal shifted right (`tril(T_k - T_q)`), not left"))
            return diagnosis(
                tr("your diagonal moved left by T_k - T_q = {n} instead of right: expected {expected}, got {got}",
                   n=offset, expected=fmt(expected.int()), got=fmt(got.int())),
                tr("the cached keys come before the queries, so the diagonal shifts right: `tril(T_k - T_q)`, "
                   "not `tril(T_q - T_k)`"))
        if torch.equal(got, ~expected):
            return diagnosis(tr("True and False are swapped: expected {expected}, got {got}",
                                expected=fmt(expected.int()), got=fmt(got.int())),
                             tr("True means may attend (as in `causal_mask` and SDPA's bool mask): True at the keys at "
                                "or before each query's position"))
        if torch.equal(got, band.tril(offset + 1)):
            return diagnosis(tr("each query sees one key of its future: expected {expected}, got {got}",
                                expected=fmt(expected.int()), got=fmt(got.int())),
                             tr("query i sees keys 0 ... T_k - T_q + i and no further: the next key is its future"))
        return expected_got(expected.int(), got.int())  # a mask reads as 0/1, like every message above
    return judge


# --- 01.repeat_kv -----------------------------------------------------------------------------------

def _arrows(heads: list) -> str:
    return ", ".join(f"{i}→{'?' if j is None else j}" for i, j in enumerate(heads))


def head_map_judge(x: torch.Tensor, n_rep: int) -> Judge:
    """Names which K/V head each query head reads (x holds distinct numbers in every head)."""
    expected = S.repeat_kv(x, n_rep)
    form = same_tensor(expected)
    B, H_kv, T, d_h = x.shape

    def judge(got) -> str | None:
        if n_rep > 1 and isinstance(got, torch.Tensor) and tuple(got.shape) == (B, H_kv, T * n_rep, d_h):
            return diagnosis(tr("you repeated along the time axis: shape {got}, expected {expected}",
                                got=list(got.shape), expected=list(expected.shape)),
                             tr("the copies go on the heads axis, dim=1: [B, H_kv, T, d_h] -> "
                                "[B, H_kv * n_rep, T, d_h]"))
        if n_rep > 1 and isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(x.shape):
            return diagnosis(tr("nothing was repeated: shape {got}, expected {expected}; each of the {H} query heads "
                                "needs a K/V head", got=list(got.shape), expected=list(expected.shape), H=H_kv * n_rep),
                             tr("each K/V head appears n_rep times on dim=1, once for each query head of its group"))
        if T != d_h and isinstance(got, torch.Tensor) and tuple(got.shape) == (B, H_kv * n_rep, d_h, T):
            return diagnosis(tr("time and d_h changed places: shape {got}, expected {expected} = [B, H, T, d_h]",
                                got=list(got.shape), expected=list(expected.shape)),
                             tr("only the heads axis (dim=1) grows: time stays on dim=2 and d_h on dim=3, so no "
                                "transpose, and a reshape or view lists the axes in that order"))
        problem = form(got)
        if problem is None or is_form_problem(problem):
            return problem
        if T == d_h and _equal(got, expected.transpose(2, 3)):  # square [T, d_h]: the swap keeps the shape
            return diagnosis(tr("time and d_h changed places: your [T, d_h] matrices are transposed"),
                             tr("only the heads axis (dim=1) grows: time stays on dim=2 and d_h on dim=3, so no "
                                "transpose, and a reshape or view lists the axes in that order"))
        if n_rep > 1 and _equal(got, x.repeat_interleave(n_rep, dim=2).reshape(expected.shape)):
            return diagnosis(tr("you copied along the time axis, then reshaped to {H} heads: each query head now holds "
                                "repeated time steps of one K/V head, not the whole head", H=H_kv * n_rep),
                             tr("copy whole heads, on the heads axis (dim=1): `repeat_interleave(n_rep, dim=1)`, or "
                                "`x[:, :, None].expand(B, H_kv, n_rep, T, d_h).reshape(B, H_kv * n_rep, T, d_h)`"))
        mine = [next((j for j in range(H_kv) if _equal(got[:, i], x[:, j])), None) for i in range(H_kv * n_rep)]
        want = [i // n_rep for i in range(H_kv * n_rep)]
        text = tr("query head i reads K/V head j: yours {mine}; expected {want}",
                  mine=_arrows(mine), want=_arrows(want))
        if mine == [i % H_kv for i in range(H_kv * n_rep)]:
            return diagnosis(text, tr("`x.repeat` (or `torch.tile`) lays out all the heads, then all of them again, so "
                                      "query head i reads i % H_kv; the n_rep copies of one head must sit side by "
                                      "side: `repeat_interleave(n_rep, dim=1)`, or `expand` and `reshape`"))
        return text
    return judge


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
            text = tr("at the real tokens expected {expected} (-1: padding), got {got}",
                      expected=expected.masked_fill(~real, -1).tolist(), got=got.tolist())
            if torch.equal(got[real], expected[real] + 1):
                return diagnosis(text, tr("number each row's real tokens from 0: a cumulative sum counts from 1, "
                                          "so subtract 1"))
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
    n_keep = int(keep.sum())
    long = logits.numel() > 24  # too many values to list: the messages name the mistake only
    # the token after the nucleus, when the tokens before it reach p exactly (kept by `before <= p`)
    at_p = int(order[n_keep]) if n_keep < len(order) and abs(float(before[n_keep]) - p) < 1e-6 else None

    def ids(mask: torch.Tensor) -> list[int]:
        return mask.nonzero().flatten().tolist()

    def judge(got) -> str | None:
        problem = form(got)
        if problem is None or is_form_problem(problem):
            return problem
        g = got.double()
        finite = torch.isfinite(g)
        values = g[finite]  # the cases' logits are log-probabilities, all below 0
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
        if at_p is not None and torch.equal(kept, keep.clone().index_fill_(0, torch.tensor([at_p]), True)):
            return diagnosis(tr("you kept tokens {mine}; the tokens before {t} already reach p = {p} exactly, so the "
                                "nucleus is {want}", mine=ids(kept), t=at_p, p=p, want=ids(keep)),
                             tr("keep a token only while the tokens above it hold less than p (<, not <= p): once "
                                "the running total equals p, the set is complete"))
        crossing = int(order[n_keep - 1])  # the last token in, the one whose mass crosses p
        if torch.equal(kept, keep.clone().index_fill_(0, torch.tensor([crossing]), False)):
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
            if missing and (got is None or got == text[:-1]):  # min() over positions that include find's -1
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
                return diagnosis(tr("you cut at {listed}, the first string of the list; {s} occurs earlier in the text",
                                    listed=fmt(listed[2]), s=fmt(s)),
                                 tr("the order of the list does not matter: find every stop string and cut at the one "
                                    "that occurs first in the text (the smallest position)"))
            if got is None:
                return diagnosis(tr("you returned None, but {s} occurs at position {pos}", s=fmt(s), pos=first),
                                 tr("position 0 is a hit too: test `s in text` (or `pos != -1`), not whether the "
                                    "position is truthy") if first == 0 else
                                 tr("look for the stop string anywhere in the text (`text.find(s)`), not only at its "
                                    "end: it may cover several tokens"))
        return expected_got(expected, got)
    return judge
