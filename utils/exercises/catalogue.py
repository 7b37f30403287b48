"""The exercises: id -> contract, reference solution, the cases a solution must get right, a hint.

Cases are built when a check runs (never at import) and afresh each time, so a learner's
function that changes its inputs in place cannot spoil the next case.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from ..i18n import in_language, tr
from . import solutions as S
from .cache_exercise import cache_pair_judge
from .chunk_exercise import chunk_step, chunk_step_cases
from .decode_exercise import decode_step_cases, mqa_model
from .judges import (Case, Exercise, FormProblem, Raised, call_with, catching, diagnosis, is_form_problem, make_case,
                     same_pair, same_tensor, same_value, seeded_randn)
from .attention_judges import mask_case, repeat_kv_case
from .mistakes import nucleus_judge, positions_judge, stop_judge
from .sizing_mistakes import kv_bytes_cases, max_requests_cases


# --- 01 · the attention block --------------------------------------------------------------------

def _causal_mask_cases() -> list[Case]:
    hint = ("query i is the token at position T_k - T_q + i (the cached keys come first): "
            "it sees keys 0 ... T_k - T_q + i")
    return [mask_case(words, T_q, T_k, hint)  # a function that calls PyTorch's causal_lower_right is refused
            for T_q, T_k, words in [(4, 4, "prefill: T_q = T_k = 4"), (1, 6, "decode: T_q = 1 after 5 cached, T_k = 6"),
                                    (3, 5, "a chunk: T_q = 3 after 2 cached, T_k = 5"),
                                    (1, 1, "first token: T_q = T_k = 1")]]


def _repeat_kv_cases() -> list[Case]:
    # (B, H_kv, T, d_h): distinct numbers everywhere; d_h = 2, so a copy along d_h differs from one along T
    x = torch.arange(2 * 3 * 2 * 2, dtype=torch.float32).view(2, 3, 2, 2)
    x_t = torch.arange(2 * 2 * 3 * 2, dtype=torch.float32).view(2, 2, 3, 2)  # (B, H_kv, T=3, d_h=2)
    # each case also checks that the learner's function left its input (in an engine, the cache) unchanged
    return [repeat_kv_case("GQA: B=2, H_kv=3, n_rep=2", x, 2,
                           "query head h reads K/V head h // n_rep: the copies of one head sit side by side"),
            repeat_kv_case("MHA: n_rep=1 changes nothing", x, 1),
            repeat_kv_case("MQA: H_kv=1, n_rep=4", x[:, :1].clone(), 4),
            # T = 3 != d_h = 2: a result with time and d_h swapped has another shape
            repeat_kv_case("GQA with T != d_h: H_kv=2, n_rep=2, T=3, d_h=2", x_t, 2,
                           "only the heads axis grows: [B, H_kv, T, d_h] -> [B, H_kv * n_rep, T, d_h]")]


# --- 02 · prefill ---------------------------------------------------------------------------------

def _last_valid_judge(logits: torch.Tensor, mask: torch.Tensor) -> Callable[[Any], str | None]:
    """Names, per row, the position whose logits came back, next to the row's last real token."""
    expected = S.last_valid_logits(logits, mask)
    form = same_tensor(expected)
    B, T, V = logits.shape

    def judge(got) -> str | None:
        if isinstance(got, Raised):  # an IndexError the learner's function raised (see judges.catching)
            error = f"IndexError: {str(got.err).strip()[:160]}"
            if f"index {T} is out of bounds" in str(got.err):  # a row's count of real tokens used as its index
                return diagnosis(tr("your function raised {error}: index {T} is one past the last column",
                                    error=error, T=T),
                                 tr("the number of real tokens is one past the last index: a row of {T} real tokens "
                                    "ends at index {T} - 1 = {last}", T=T, last=T - 1))
            return tr("your function raised {error}", error=error)
        if isinstance(got, torch.Tensor) and tuple(got.shape) == (B, B, V):  # logits[:, idx]: every row at all B indices
            return diagnosis(
                tr("you returned shape {got} = [B, B, V]: every row's logits at all B positions, not one per row",
                   got=list(got.shape)),
                tr("`logits[:, idx]` takes every row at every index of `idx`; pair row b with `idx[b]`: "
                   "`logits[torch.arange(B), idx]`"))
        if isinstance(got, torch.Tensor) and tuple(got.shape) == (B, 1, V):  # gather(1, idx[:, None, None]...)
            rows = tr(", the right rows") if torch.equal(got[:, 0], expected) else ""
            return diagnosis(tr("you returned shape {got} = [B, 1, V]{rows}: the time axis is still there, with "
                                "length 1", got=list(got.shape), rows=rows),
                             tr("`gather`, a slice such as `[:, -1:]` and an index such as `idx[:, None]` keep the axis "
                                "they pick from: drop it with `.squeeze(1)` to return [B, V]"))
        problem = form(got)
        if problem is None or is_form_problem(problem):
            return problem
        if torch.allclose(got.double(), torch.softmax(expected.double(), -1), atol=1e-6):  # the right rows, softmaxed
            return diagnosis(tr("you returned probabilities, the softmax of the right rows; the contract asks for logits"),
                             tr("return the rows of `logits` themselves: sampling applies the softmax later"))
        from_end = mask.long().flip(1).argmax(1)  # (B,): mask.flip(1).argmax(1), the last 1 counted from the end
        if all(torch.equal(got[b], logits[b, int(from_end[b])]) for b in range(B)):
            b = next(b for b in range(B) if not torch.equal(got[b], expected[b]))
            return diagnosis(
                tr("row {b}: you returned position {t}, the last real token's distance from the end; it is at {last}",
                   b=b, t=int(from_end[b]), last=int(mask[b].nonzero().max())),
                tr("`mask.flip(1).argmax(1)` counts from the end of the row: the position is T - 1 minus it"))
        first = [int(mask[b].nonzero().min()) for b in range(B)]  # each row's first 1, what mask.argmax(1) finds
        if all(torch.equal(got[b], logits[b, first[b]]) for b in range(B)):
            b = next(b for b in range(B) if not torch.equal(got[b], expected[b]))
            return diagnosis(
                tr("row {b}: you returned position {t}, its first real token; its last real token is at {last}",
                   b=b, t=first[b], last=int(mask[b].nonzero().max())),
                tr("`argmax` returns the first position of the maximum, so `mask.argmax(1)` finds each row's "
                   "first 1; the last 1 is where `mask.cumsum(1)` first reaches its maximum"))
        for b in range(B):
            if not torch.equal(got[b], expected[b]):
                last = int(mask[b].nonzero().max())
                same = [t for t in range(T) if torch.equal(got[b], logits[b, t])]
                if same and same[0] == int(mask[b].sum()) - 1:  # the count of real tokens minus 1
                    return diagnosis(
                        tr("row {b}: you returned position {t} = its number of real tokens - 1; its last real "
                           "token is at {last}", b=b, t=same[0], last=last),
                        tr("the number of real tokens - 1 is the last real index only with right padding (pads "
                           "last); with left padding the pads come first: find each row's last 1"))
                which = tr("the logits of position {t}", t=same[0]) if same else tr("logits of no position")
                return tr("row {b}: you returned {which}; its last real token is at {last}",
                          b=b, which=which, last=last)
        return problem
    return judge


def _last_valid_cases() -> list[Case]:
    logits = seeded_randn(3, 5, 7, seed=1)
    left = torch.tensor([[1, 1, 1, 1, 1], [0, 0, 1, 1, 1], [0, 0, 0, 0, 1]])
    right = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]])
    return [Case("left-padded rows (B=3, T=5, V=7)", catching(IndexError, call_with(logits, left)),
                 _last_valid_judge(logits, left)),
            Case("right-padded rows", catching(IndexError, call_with(logits, right)), _last_valid_judge(logits, right),
                 "with right padding the last real token is not in the last column: find each row's last 1")]


def _positions_cases() -> list[Case]:
    m = torch.tensor([[1, 1, 1, 1], [0, 0, 1, 1], [0, 1, 1, 1]])
    return [Case("no padding (B=1, T=4)", call_with(m[:1]), positions_judge(m[:1])),
            Case("left padding: 0, 2 and 1 pads", call_with(m), positions_judge(m),
                 "a row's first real token is position 0, however many pads come before it")]


# --- 03 · decode ------------------------------------------------------------------------------------

def _cache_update_cases() -> list[Case]:
    k0, v0, k1, v1 = seeded_randn(2, 2, 3, 4, seed=2), seeded_randn(2, 2, 3, 4, seed=3), seeded_randn(2, 2, 1, 4, seed=4), seeded_randn(2, 2, 1, 4, seed=5)
    k2, v2 = seeded_randn(2, 2, 2, 4, seed=6), seeded_randn(2, 2, 2, 4, seed=7)
    hint = "the cache layout is [B, H_kv, T, d_h]: new positions go on the time axis, dim=2"
    # 1 cached + 1 new: every axis but time matches, so a concatenation on the heads axis runs without error
    k0_1, v0_1 = k0[:, :, :1], v0[:, :, :1]
    return [Case("from empty: the first 3 positions", call_with(None, None, k0, v0), cache_pair_judge(None, None, k0, v0),
                 "an empty cache (None) simply becomes the new K and V"),
            Case("T_new = 1 after 1 cached", call_with(k0_1, v0_1, k1, v1), cache_pair_judge(k0_1, v0_1, k1, v1), hint),
            Case("T_new = 1 after 3 cached", call_with(k0, v0, k1, v1), cache_pair_judge(k0, v0, k1, v1), hint),
            Case("T_new = 2 after 3 cached", call_with(k0, v0, k2, v2), cache_pair_judge(k0, v0, k2, v2), hint)]


# --- 04 · cache sizing ----------------------------------------------------------------------------

# The cases live beside their judges, in sizing_mistakes.py.


# --- 05 · sampling and stopping -------------------------------------------------------------------

def _top_p_cases() -> list[Case]:
    # sorted: 0.5, 0.25, 0.125, 0.0625, 0.0625, powers of two, so float32 running totals are exact: p = 0.75 is
    # reached exactly by two tokens, and every other p below is at least 0.05 away from a running total.
    # + 4 leaves the softmax as it is but makes every logit > 1: a running total over the logits themselves then
    # stops at the top token, one that starts at the least likely token keeps them all, so the judge tells them apart
    logits = torch.log(torch.tensor([0.5, 0.0625, 0.25, 0.125, 0.0625])) + 4
    # 64 tokens with a long tail (geometric probabilities, shuffled): float32 running totals reach 1.0 before the tail
    tail = -0.5 * torch.randperm(64, generator=torch.Generator().manual_seed(5)).float()
    hint = "keep the most likely tokens until their mass reaches p, including the token that crosses p"

    def case(words, p, hint=hint, logits=logits):
        return Case(words, call_with(logits, p), nucleus_judge(logits, p), hint)
    # p = 0.8 first: there every known mistake keeps a set of its own, so the first hint names the right one
    return [case("p=0.8: three tokens (0.5 + 0.25 + 0.125)", 0.8),
            case("p=0.7: 0.5 + 0.25 crosses 0.7, so two tokens", 0.7),
            case("p=0.75: 0.5 + 0.25 reaches p exactly, so two tokens", 0.75,
                 "a token is kept while the mass ranked before it is < p: at exactly p the set is complete"),
            case("p=0.3: the top token alone already reaches p", 0.3, "never empty: the most likely token is always kept"),
            case("p=1.0 keeps every token", 1.0, ""),
            case("p=1.0 on 64 tokens with a long tail: all 64 kept", 1.0,
                 "at p = 1 keep every token: float32 running sums reach 1.0 before the tail", tail)]


def _stop_text_cases() -> list[Case]:
    regex = "a stop string is plain text: in a regular expression `.`, `?`, `[` and `(` mean something else"

    def case(words, text, stops, hint=""):
        return Case(words, call_with(text, stops), stop_judge(text, stops), hint)

    def say(en, zh):  # the texts speak the course's language; built when a check runs, in its language
        return in_language({"en": en, "zh": zh})
    return [case("the stop string spans two tokens", say("I like cats . he has", "我 喜欢 猫 。 他 有"),
                 [say("cats .", "猫 。")], "search the decoded text for the whole string; it may cover several tokens"),
            case("one stop string does not occur, the other does", say("I like cats . he has", "我 喜欢 猫 。 他 有"),
                 [say("dogs", "狗"), say("cats .", "猫 。")],
                 "a stop string that does not occur has no position (`text.find` gives -1): leave it out"),
            case("the later-listed string occurs first", "she has a dog . it runs", ["runs", "a dog"],
                 "cut at the stop string that occurs first in the text, wherever it is in the list"),
            case("the stop string occurs twice: the first one stops",
                 say("he likes cats . she likes cats .", "他 喜欢 猫 。 她 喜欢 猫 。"), [say("cats .", "猫 。")],
                 "cut at the first occurrence: `text.find(s)`, not `text.rfind(s)`"),
            case("no stop string occurs", say("I like cats", "我 喜欢 猫"), [say("dogs", "狗")],
                 "return None when no stop string occurs"),
            case("the text starts with a stop string", say(". he", "。 他"), [say(".", "。")]),
            case("a stop string with a regex character: '...'", "wait ... what", ["..."], regex),
            case("a stop string with a regex character: '?'", "who is she ? my sister", ["?"], regex)]


# --- 06 · metrics ---------------------------------------------------------------------------------

def _said(problem: str, mistake: str) -> str:
    """The expected and got values, then the mistake they reveal."""
    return tr("{problem}: {mistake}", problem=problem, mistake=mistake)


def _ttft_tpot_judge(t_request: float, times: list[float]) -> Callable[[Any], str | None]:
    """Compare with the reference; name the usual mistakes instead of repeating the formula."""
    expected = S.ttft_tpot(t_request, times)
    form, n = same_value(expected), len(times)

    def close(a, b) -> bool:
        return isinstance(a, (int, float)) and b is not None and abs(a - b) <= 1e-9 * max(1.0, abs(b))

    def judge(got) -> str | None:
        problem = form(got)
        if problem is None or is_form_problem(problem):
            return problem
        ttft, tpot = got
        if n > 1 and close(ttft, expected[1]) and close(tpot, expected[0]):
            return diagnosis(_said(problem, tr("your TTFT and TPOT are swapped")),
                             tr("return (ttft, tpot), in this order"))
        if t_request and close(ttft, times[0]):
            return diagnosis(_said(problem, tr("your TTFT is the first token's time on the clock")),
                             tr("TTFT counts from the request's arrival, t_request"))
        if n > 1 and close(tpot, (times[-1] - times[0]) / n):
            return diagnosis(_said(problem, tr("your TPOT divides by n")), tr("n tokens have n - 1 gaps between them"))
        if n > 1 and (close(tpot, (times[-1] - t_request) / n) or close(tpot, (times[-1] - t_request) / (n - 1))):
            return diagnosis(_said(problem, tr("your TPOT counts from the request")),
                             tr("TPOT starts at the first token: the wait before it is TTFT's"))
        tpot_ms = None if expected[1] is None else 1e3 * expected[1]
        if close(ttft, 1e3 * expected[0]) and (tpot is tpot_ms or close(tpot, tpot_ms)):
            return diagnosis(_said(problem, tr("your values are 1000 times too large: milliseconds")),
                             tr("return seconds, not ms: the times in the log are in seconds"))
        return problem
    return judge


def _ttft_tpot_cases() -> list[Case]:
    times = [10.30, 10.34, 10.37, 10.41]
    return [Case("request at 10.0 s, four tokens (seconds)", call_with(10.0, times), _ttft_tpot_judge(10.0, times)),
            Case("one token only: no TPOT", call_with(5.0, [5.2]), _ttft_tpot_judge(5.0, [5.2]), "n = 1 gives TPOT None"),
            Case("a long wait in the queue: request at 1.0 s", call_with(1.0, [3.0, 3.1]),
                 _ttft_tpot_judge(1.0, [3.0, 3.1]))]


def _itl_judge(times: list[float]) -> Callable[[Any], str | None]:
    """Compare with the reference; name the usual mistakes (mean, max, another percentile method, ms)."""
    gaps = np.diff(times)
    expected = S.itl_p95(times)
    form = same_value(expected)
    take = tr("take `np.percentile(gaps, 95)`: numpy's default interpolates linearly")
    named = [(float(gaps.mean()), tr("your value is the mean gap (that is TPOT)"), take),
             (float(gaps.max()), tr("your value is the largest gap, not the 95th percentile"), take),
             (float(np.percentile(gaps, 95, method="nearest")), tr("your value is the nearest-rank percentile"), take),
             (float(np.percentile(gaps, 0.95)), tr("your value is the 0.95th percentile: np.percentile takes q in percent"), take),
             (1e3 * expected, tr("your value is 1000 times too large: milliseconds"),
              tr("return seconds, not ms: the times in the log are in seconds"))]

    def judge(got) -> str | None:
        problem = form(got)
        if problem is None or is_form_problem(problem) or not isinstance(got, (int, float)):
            return problem
        hits = [(message, hint) for value, message, hint in named if abs(got - value) <= 1e-9 * max(1.0, abs(value))]
        if len({message for message, _ in hits}) == 1:  # two mistakes giving the same value (few gaps: nearest rank = max) name neither
            return diagnosis(_said(problem, hits[0][0]), hits[0][1])
        return problem
    return judge


def _itl_cases() -> list[Case]:
    times = [1.0, 1.1, 1.21, 1.33, 1.93, 2.06, 2.2]  # gaps 0.10, 0.11, 0.12, 0.60, 0.13, 0.14: six gaps, so nearest rank = max
    many = [0.0]  # 24 gaps of 20-43 ms, two of them stalls of 250 and 400 ms: p95, max and nearest rank all differ
    for gap in [0.020 + 0.001 * k for k in range(22)] + [0.25, 0.40]:
        many.append(round(many[-1] + gap, 6))
    return [Case("seven tokens, one stall (seconds)", call_with(times), _itl_judge(times),
                 "ITLs are the gaps between consecutive tokens; numpy's percentile interpolates linearly"),
            Case("two tokens: one gap", call_with([3.0, 3.5]), _itl_judge([3.0, 3.5])),
            Case("25 tokens, two stalls (seconds)", call_with(many), _itl_judge(many))]


# --- 08 · beyond the basics ------------------------------------------------------------------------

def _reorder_cases() -> list[Case]:
    k, v = seeded_randn(4, 2, 3, 2, seed=9), seeded_randn(4, 2, 3, 2, seed=10)
    idx = torch.tensor([0, 0, 3, 1])
    hint = "row i of the new cache is row beam_idx[i] of the old one: gather on the batch axis, dim=0"
    return [Case("beam_idx [0, 0, 3, 1] (a repeat)", call_with(k, v, idx), same_pair(S.reorder(k, v, idx)), hint),
            Case("identity [0, 1, 2, 3]", call_with(k, v, torch.arange(4)), same_pair(S.reorder(k, v, torch.arange(4))))]


def _window_cases() -> list[Case]:
    k3, new = seeded_randn(1, 2, 3, 2, seed=11), seeded_randn(1, 2, 1, 2, seed=12)
    hint = "keep the newest `window` positions, oldest first: the last ones on the time axis"

    def case(words, cache_k, window, hint=""):
        expected = S.window_update(cache_k, new, window)
        form = same_tensor(expected)

        def judge(got):  # a wrong length on the time axis is the idea going wrong, not a slip of form
            if isinstance(got, torch.Tensor) and got.dim() == 4 and got.shape[:2] == expected.shape[:2] \
                    and got.shape[2] != expected.shape[2]:
                return tr("the result holds {n} positions; it should hold min(W' + 1, window) = {want}",
                          n=got.shape[2], want=expected.shape[2])
            return form(got)
        return Case(words, call_with(cache_k, new, window), judge, hint)
    return [case("from empty, window 4", None, 4, "before the first token cache_k is None: the result is k_new"),
            case("3 stored, window 4: nothing dropped yet", k3, 4, hint),
            case("3 stored, window 3: the oldest falls out", k3, 3, hint)]


# --- 07 · the bug lab: fix mystery 3, then write the step that fixes 1 and 7 (chunk_exercise.py) ----------

def _recompute_case(words: str, model_fn: Callable, hint: str, padded: bool = False) -> Case:
    def run(fn):
        from ..bug_lab.harness import run_check

        model = model_fn()
        ids = torch.randint(1, model.cfg.vocab_size, (2, 9), generator=torch.Generator().manual_seed(13))  # B = 2
        mask = torch.ones_like(ids)
        if padded:
            mask[0, :4] = 0  # row 0: four pad columns on the left, five real tokens

        def step(model, token_ids, cache):  # the contract's shape, checked at every step
            logits, V = fn(model, token_ids, cache), model.cfg.vocab_size
            if not isinstance(logits, torch.Tensor):  # raised for the check to report: the learner reads it
                raise ValueError(tr("expected logits of shape [B, V] = [2, {V}], got {type}",
                                    V=V, type=type(logits).__name__))
            if tuple(logits.shape) != (2, V):
                raise ValueError(tr("expected logits of shape [B, V] = [2, {V}], got {shape}",
                                    V=V, shape=list(logits.shape)))
            return logits
        return run_check(model, ids, step_fn=step, attention_mask=mask if padded else None)

    def judge(outcome) -> str | None:
        if outcome.ok:
            return None
        if outcome.error:  # the error itself is what the learner needs; an error is a slip of form
            return FormProblem(tr("compare_with_recompute: {summary}: {error}",
                                  summary=outcome.summary(), error=outcome.error))
        return tr("compare_with_recompute: {summary}", summary=outcome.summary())
    return Case(words, run, judge, hint)


def _course_model():
    from ..course_model import load_course_model

    return load_course_model()[0]


def _fix_cases(hint: str) -> Callable[[], list[Case]]:
    padded_hint = "in a left-padded batch each row counts its own real tokens: cache.valid_counts() (None without padding)"
    return lambda: [_recompute_case("course model, 6 decode steps", _course_model, hint),
                    _recompute_case("random MQA model, 6 decode steps", mqa_model, hint),
                    _recompute_case("course model, a left-padded batch, 6 decode steps", _course_model, padded_hint,
                                    padded=True)]


EXERCISES: dict[str, Exercise] = {e.id: e for e in [
    Exercise("01.causal_mask", "the causal mask with a cache", S.causal_mask, _causal_mask_cases,
        "query i is at position T_k - T_q + i"),
    Exercise("01.repeat_kv", "K/V heads for every query head", S.repeat_kv, _repeat_kv_cases,
        "query head h reads K/V head h // n_rep"),
    Exercise("02.last_valid_logits", "the logits that pick the first token", S.last_valid_logits, _last_valid_cases,
        "each row's last position whose mask is 1"),
    Exercise("02.prefill_positions", "positions in a left-padded batch", S.prefill_positions, _positions_cases,
        "count each row's real tokens"),
    Exercise("03.cache_update", "append to the cache", S.cache_update, _cache_update_cases,
        "concatenate on the time axis"),
    Exercise("03.decode_step", "one decode step, layer by layer", S.decode_step, decode_step_cases,
        "the new token's position is the cache length"),
    Exercise("04.kv_bytes_from_config", "cache bytes from a config.json", S.kv_bytes_from_config, kv_bytes_cases,
        "2 x L x B x H_kv x T x d_h x bytes"),
    Exercise("04.max_requests", "how many requests fit", S.max_requests, max_requests_cases,
        "free bytes over one request's cache bytes, rounded down"),
    Exercise("05.top_p", "the nucleus", S.top_p, _top_p_cases, "the token that crosses p is kept"),
    Exercise("05.stop_text", "stop strings on text", S.stop_text, _stop_text_cases, "the earliest stop string wins"),
    Exercise("06.ttft_tpot", "TTFT and TPOT of one request", S.ttft_tpot, _ttft_tpot_cases,
        "TTFT from the request, TPOT over the n - 1 gaps"),
    Exercise("06.itl_p95", "the p95 inter-token latency", S.itl_p95, _itl_cases, "gaps between consecutive tokens"),
    Exercise("07.fix_position", "fix mystery 3: the new token's position", S.fixed_position_step,
        _fix_cases("the new token's position is the number of tokens the cache already holds"),
        "position = real tokens the row already holds"),
    Exercise("07.chunk_step", "a chunk on top of the cache: positions and mask", chunk_step, chunk_step_cases,
        "each row counts on from its real tokens; query i sees keys up to past + i, never padding"),
    Exercise("08.reorder", "reorder the cache for beams", S.reorder, _reorder_cases, "gather rows on dim=0"),
    Exercise("08.window_update", "a sliding-window append", S.window_update, _window_cases,
        "keep the newest `window` positions"),
]}
# The appendices keep their exercises next to their own solutions (this file stays one sitting long).
from .paged_exercises import EXERCISES_10  # noqa: E402
from .serving_exercises import EXERCISES_11  # noqa: E402
from .speculative_exercises import EXERCISES_12  # noqa: E402
from .compression_exercises import EXERCISES_13  # noqa: E402

EXERCISES.update({e.id: e for e in EXERCISES_10 + EXERCISES_11 + EXERCISES_12 + EXERCISES_13})
