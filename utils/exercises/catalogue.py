"""The exercises: id -> contract, reference solution, the cases a solution must get right, a hint.

Cases are built when a check runs (never at import) and afresh each time, so a learner's
function that changes its inputs in place cannot spoil the next case.
"""
from __future__ import annotations

from typing import Any, Callable

import torch

from ..i18n import tr
from . import solutions as S
from .decode_exercise import decode_step_cases, mqa_model
from .judges import (Case, Exercise, FormProblem, call_with, is_form_problem, make_case, same_pair, same_tensor,
                     seeded_randn)
from .mistakes import cache_pair_judge, head_map_judge, mask_judge, nucleus_judge, positions_judge, stop_judge


# --- 01 · the attention block --------------------------------------------------------------------

def _causal_mask_cases() -> list[Case]:
    hint = ("query i is the token at position T_k - T_q + i (the cached keys come first): "
            "it sees keys 0 ... T_k - T_q + i")
    return [Case(words, call_with(T_q, T_k), mask_judge(T_q, T_k), hint)
            for T_q, T_k, words in [(4, 4, "prefill: T_q = T_k = 4"), (1, 6, "decode: T_q = 1 after 5 cached, T_k = 6"),
                                    (3, 5, "a chunk: T_q = 3 after 2 cached, T_k = 5"),
                                    (1, 1, "first token: T_q = T_k = 1")]]


def _repeat_kv_cases() -> list[Case]:
    x = torch.arange(2 * 3 * 2 * 1, dtype=torch.float32).view(2, 3, 2, 1)  # (B, H_kv, T, d_h): distinct per head
    return [Case("GQA: B=2, H_kv=3, n_rep=2", call_with(x, 2), head_map_judge(x, 2),
                 "query head h reads K/V head h // n_rep: the copies of one head sit side by side"),
            Case("MHA: n_rep=1 changes nothing", call_with(x, 1), head_map_judge(x, 1)),
            Case("MQA: H_kv=1, n_rep=4", call_with(x[:, :1], 4), head_map_judge(x[:, :1], 4))]


# --- 02 · prefill ---------------------------------------------------------------------------------

def _last_valid_judge(logits: torch.Tensor, mask: torch.Tensor) -> Callable[[Any], str | None]:
    """Names, per row, the position whose logits came back, next to the row's last real token."""
    expected = S.last_valid_logits(logits, mask)
    form = same_tensor(expected)

    def judge(got) -> str | None:
        problem = form(got)
        if problem is None or is_form_problem(problem):
            return problem
        for b in range(logits.shape[0]):
            if not torch.equal(got[b], expected[b]):
                last = int(mask[b].nonzero().max())
                same = [t for t in range(logits.shape[1]) if torch.equal(got[b], logits[b, t])]
                which = tr("the logits of position {t}", t=same[0]) if same else tr("logits of no position")
                return tr("row {b}: you returned {which}; its last real token is at {last}",
                          b=b, which=which, last=last)
        return problem
    return judge


def _last_valid_cases() -> list[Case]:
    logits = seeded_randn(3, 5, 7, seed=1)
    left = torch.tensor([[1, 1, 1, 1, 1], [0, 0, 1, 1, 1], [0, 0, 0, 0, 1]])
    right = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]])
    return [Case("left-padded rows (B=3, T=5, V=7)", call_with(logits, left), _last_valid_judge(logits, left)),
            Case("right-padded rows", call_with(logits, right), _last_valid_judge(logits, right),
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
    return [Case("from empty: the first 3 positions", call_with(None, None, k0, v0), cache_pair_judge(None, None, k0, v0),
                 "an empty cache (None) simply becomes the new K and V"),
            Case("T_new = 1 after 3 cached", call_with(k0, v0, k1, v1), cache_pair_judge(k0, v0, k1, v1), hint),
            Case("T_new = 2 after 3 cached", call_with(k0, v0, k2, v2), cache_pair_judge(k0, v0, k2, v2), hint)]


# --- 04 · cache sizing ----------------------------------------------------------------------------

LLAMA3_8B = {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096}
LLAMA2_7B = {"num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 4096}  # no num_key_value_heads: MHA
GEMMA2_9B = {"num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8, "hidden_size": 3584,
             "head_dim": 256}  # d_h = 256, not 3584 / 16 = 224


def _kv_bytes_cases() -> list[Case]:
    f = S.kv_bytes_from_config
    return [make_case("Llama-3-8B (GQA), T=4096, B=1, float16", (LLAMA3_8B, 4096, 1, "float16"), f(LLAMA3_8B, 4096, 1, "float16"),
                  hint="2 x L x B x H_kv x T x d_h x bytes: K and V, only the K/V heads"),
            make_case("Llama-2-7B: no num_key_value_heads (MHA), T=2048, B=2, bfloat16", (LLAMA2_7B, 2048, 2, "bfloat16"),
                  f(LLAMA2_7B, 2048, 2, "bfloat16"), hint="a config without num_key_value_heads is MHA: H_kv = H"),
            make_case("Gemma-2-9B: head_dim given, T=8192, B=1, float32", (GEMMA2_9B, 8192, 1, "float32"),
                  f(GEMMA2_9B, 8192, 1, "float32"), hint="when head_dim is in the config, use it: it is not always C / H"),
            make_case("Llama-3-8B, int8 cache, T=1000, B=4", (LLAMA3_8B, 1000, 4, "int8"), f(LLAMA3_8B, 1000, 4, "int8"))]


def _max_requests_cases() -> list[Case]:
    f = S.max_requests
    free = 20 * 2**30 + 700 * 2**20  # 20.7 GiB; one request at T=8192 needs 1 GiB
    return [make_case("Llama-3-8B, T=8192, 20.7 GiB free, float16", (LLAMA3_8B, 8192, free, "float16"),
                  f(LLAMA3_8B, 8192, free, "float16"), hint="only whole requests fit: round down"),
            make_case("Gemma-2-9B, T=4096, 10 GB free, bfloat16", (GEMMA2_9B, 4096, 10**10, "bfloat16"),
                  f(GEMMA2_9B, 4096, 10**10, "bfloat16")),
            make_case("less than one request", (LLAMA2_7B, 4096, 2**20, "float16"), 0)]


# --- 05 · sampling and stopping -------------------------------------------------------------------

def _top_p_cases() -> list[Case]:
    # sorted: 0.5, 0.25, 0.125, 0.0625, 0.0625; every p below is at least 0.05 away from a running total
    logits = torch.log(torch.tensor([0.5, 0.0625, 0.25, 0.125, 0.0625]))
    hint = "keep the most likely tokens until their mass reaches p, including the token that crosses p"

    def case(words, p, hint=hint):
        return Case(words, call_with(logits, p), nucleus_judge(logits, p), hint)
    return [case("p=0.7: 0.5 + 0.25 crosses 0.7, so two tokens", 0.7),
            case("p=0.8: three tokens (0.5 + 0.25 + 0.125)", 0.8),
            case("p=0.3: the top token alone already reaches p", 0.3, "never empty: the most likely token is always kept"),
            case("p=1.0 keeps every token", 1.0, "")]


def _stop_text_cases() -> list[Case]:
    regex = "a stop string is plain text: in a regular expression `.`, `?`, `[` and `(` mean something else"

    def case(words, text, stops, hint=""):
        return Case(words, call_with(text, stops), stop_judge(text, stops), hint)
    return [case("the stop string spans two tokens", "我 喜欢 猫 。 他 有", ["猫 。"],
                 "search the decoded text for the whole string; it may cover several tokens"),
            case("the later-listed string occurs first", "she has a dog . it runs", ["runs", "a dog"],
                 "cut at the stop string that occurs first in the text, wherever it is in the list"),
            case("no stop string occurs", "我 喜欢 猫", ["。"], "return None when no stop string occurs"),
            case("the text starts with a stop string", "。 他", ["。"]),
            case("a stop string with a regex character: '...'", "wait ... what", ["..."], regex),
            case("a stop string with a regex character: '?'", "who is she ? my sister", ["?"], regex)]


# --- 06 · metrics ---------------------------------------------------------------------------------

def _ttft_tpot_cases() -> list[Case]:
    times = [10.30, 10.34, 10.37, 10.41]
    return [make_case("request at 10.0 s, four tokens", (10.0, times), S.ttft_tpot(10.0, times),
                  hint="TTFT counts from the request; TPOT = (last - first) / (n - 1)"),
            make_case("one token only: no TPOT", (5.0, [5.2]), S.ttft_tpot(5.0, [5.2]), hint="n = 1 gives TPOT None"),
            make_case("a long wait in the queue", (0.0, [2.0, 2.1]), S.ttft_tpot(0.0, [2.0, 2.1]))]


def _itl_cases() -> list[Case]:
    times = [1.0, 1.1, 1.2, 1.3, 1.9, 2.0, 2.1]
    return [make_case("seven tokens, one stall", (times,), S.itl_p95(times),
                  hint="ITLs are the gaps between consecutive tokens; numpy's percentile interpolates linearly"),
            make_case("two tokens: one gap", ([3.0, 3.5],), S.itl_p95([3.0, 3.5]))]


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


# --- 07 · the bug lab: fix two of the mysteries ---------------------------------------------------

def _recompute_case(words: str, model_fn: Callable, hint: str) -> Case:
    def run(fn):
        from ..bug_lab.harness import run_check

        model = model_fn()
        ids = torch.randint(1, model.cfg.vocab_size, (2, 9), generator=torch.Generator().manual_seed(13))  # B = 2

        def step(model, token_ids, cache):  # the contract's shape, checked at every step
            logits, V = fn(model, token_ids, cache), model.cfg.vocab_size
            if not isinstance(logits, torch.Tensor):  # raised for the check to report: the learner reads it
                raise ValueError(tr("expected logits of shape [B, V] = [2, {V}], got {type}",
                                    V=V, type=type(logits).__name__))
            if tuple(logits.shape) != (2, V):
                raise ValueError(tr("expected logits of shape [B, V] = [2, {V}], got {shape}",
                                    V=V, shape=list(logits.shape)))
            return logits
        return run_check(model, ids, step_fn=step)

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
    return lambda: [_recompute_case("course model, 6 decode steps", _course_model, hint),
                    _recompute_case("random MQA model, 6 decode steps", mqa_model, hint)]


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
    Exercise("04.kv_bytes_from_config", "cache bytes from a config.json", S.kv_bytes_from_config, _kv_bytes_cases,
        "2 x L x B x H_kv x T x d_h x bytes"),
    Exercise("04.max_requests", "how many requests fit", S.max_requests, _max_requests_cases,
        "free bytes over one request's cache bytes, rounded down"),
    Exercise("05.top_p", "the nucleus", S.top_p, _top_p_cases, "the token that crosses p is kept"),
    Exercise("05.stop_text", "stop strings on text", S.stop_text, _stop_text_cases, "the earliest stop string wins"),
    Exercise("06.ttft_tpot", "TTFT and TPOT of one request", S.ttft_tpot, _ttft_tpot_cases,
        "TTFT from the request, TPOT over the n - 1 gaps"),
    Exercise("06.itl_p95", "the p95 inter-token latency", S.itl_p95, _itl_cases, "gaps between consecutive tokens"),
    Exercise("07.fix_position", "fix mystery 3: the new token's position", S.fixed_position_step,
        _fix_cases("the new token's position is the number of tokens the cache already holds"),
        "position = cache length"),
    Exercise("07.fix_mask", "fix mystery 1: the decode step's mask", S.fixed_mask_step,
        _fix_cases("the one new query sits after every cached key: its mask row [1, S] must let it see all S keys"),
        "the new query sees every cached key"),
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
