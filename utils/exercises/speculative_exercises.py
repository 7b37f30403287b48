"""Exercises of notebook 12 (speculative decoding): reference solutions, cases and hints, merged into
``catalogue.EXERCISES``.

12.accept_prefix   greedy: how many drafts the target accepts, and its own token after them
12.residual        sampling: the distribution a refused position is drawn from, max(0, p - q) renormalised
12.accept_or_resample  sampling: one drafted position, accepted with probability min(1, p(d)/q(d)), else
                   a token drawn from the residual; judged on single draws and on the frequencies of thousands
"""
from __future__ import annotations

import torch

from ..i18n import tr
from .judges import Case, Exercise, FormProblem, call_with, diagnosis, fmt, make_case, same_tensor


# --- reference solutions (``exercises.show_solution`` prints them) ---------------------------------

def accept_prefix(drafts: list[int], target_argmax: list[int]) -> tuple[int, int]:
    n = 0
    while n < len(drafts) and drafts[n] == target_argmax[n]:  # the longest agreeing prefix: stop at the first refusal
        n += 1
    return n, target_argmax[n]  # the target's own token: a correction at the refusal, or the bonus after all k


def residual(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    r = (p - q).clamp(min=0)  # (V,): where the target wants more than the draft proposed
    if r.sum() == 0:  # p == q: a refusal cannot happen, any distribution would do; p keeps it well defined
        return p.clone()
    return r / r.sum()


def accept_or_resample(p: torch.Tensor, q: torch.Tensor, d: int, u: float, g: torch.Generator) -> int:
    if u < float(p[d]) / float(q[d]):  # accepted with probability min(1, p(d) / q(d)): u < 1 always
        return d
    r = (p - q).clamp(min=0)  # (V,): the residual; its sum is > 0 whenever a refusal can happen
    return int(torch.multinomial(r / r.sum(), 1, generator=g))


# --- 12.accept_prefix -------------------------------------------------------------------------------

def _accept_cases() -> list[Case]:
    def case(words, drafts, best, hint=""):
        return make_case(words, (drafts, best), accept_prefix(drafts, best), hint=hint)
    return [
        case("k = 4, the target agrees with every draft", [12, 30, 7, 5], [12, 30, 7, 5, 9],
             "when all k drafts are accepted, the target's last logits (position k) give one more token: "
             "k + 1 tokens from one pass"),
        case("k = 4, the first draft is refused", [12, 30, 7, 5], [14, 30, 7, 5, 9],
             "a refused first draft still gives the round one token: the target's own choice at that position"),
        case("k = 4, refused at the third draft, the fourth agrees again", [12, 30, 7, 5], [12, 30, 8, 5, 9],
             "accept the longest agreeing prefix only: after a refusal, the later drafts were written after a "
             "token that is not kept, so they count for nothing even when they agree"),
        case("k = 1, accepted", [6], [6, 2]),
        case("k = 3, the same token three times, refused at the last", [3, 3, 3], [3, 3, 5, 3]),
        case("nothing proposed (prompt lookup found no match)", [], [4],
             "with no drafts the round is a plain decode step: 0 accepted, and the target's token"),
    ]


# --- 12.residual -------------------------------------------------------------------------------------

def _residual_cases() -> list[Case]:
    def case(words, p, q, hint=""):
        return make_case(words, (p, q), residual(p, q), judge=lambda e: same_tensor(e, atol=1e-6), hint=hint)
    p = torch.tensor([0.4, 0.3, 0.2, 0.1])
    g = torch.Generator().manual_seed(12)
    p16 = torch.softmax(torch.randn(16, generator=g), -1)
    q16 = torch.softmax(torch.randn(16, generator=g), -1)
    q_top = torch.tensor([0.0, 0.6, 0.4, 0.0])
    return [
        case("V = 4, the draft prefers other tokens", p, torch.tensor([0.1, 0.2, 0.3, 0.4]),
             "keep only where p is larger than q (max(0, p - q)), then divide by the sum so it adds up to 1"),
        case("prompt lookup: q is one-hot on the refused token 1", p, torch.tensor([0.0, 1.0, 0.0, 0.0]),
             "with a one-hot q the residual is p without the refused token, renormalised"),
        case("a draft filtered by top-k: q is 0 on two tokens", p, q_top),
        case("p == q: the draft is never refused", p, p.clone(),
             "when p == q, max(0, p - q) is all zeros: dividing by its sum gives NaN. A refusal cannot happen "
             "then, so return p"),
        case("V = 16, random p and q (seed 12)", p16, q16),
    ]


# --- 12.accept_or_resample ---------------------------------------------------------------------------

_P = torch.tensor([0.4, 0.3, 0.2, 0.1], dtype=torch.float64)  # the target's distribution
_Q = torch.tensor([0.1, 0.2, 0.5, 0.2], dtype=torch.float64)  # the draft's: it overrates tokens 2 and 3
_ONE_HOT = torch.tensor([0.0, 1.0, 0.0, 0.0], dtype=torch.float64)  # prompt lookup proposing token 1


def _token(got) -> int | FormProblem:
    if isinstance(got, torch.Tensor) and got.numel() == 1 and not got.is_floating_point():
        return int(got)
    if isinstance(got, int) and not isinstance(got, bool):
        return got
    return FormProblem(tr("expected one token id (an int), got {got}", got=fmt(got)))


def _share(probs: torch.Tensor) -> str:
    return "[" + ", ".join(f"{float(x):.2f}" for x in probs) + "]"


def _one_draw(words, p, q, d, u, seed=0):
    """A single call. Accepted: d must come back. Refused: a token the residual can give."""
    accept = u < float(p[d]) / float(q[d])
    res = residual(p, q)
    ratio = fmt(float(p[d]) / float(q[d]))

    def judge(got):
        t = _token(got)
        if isinstance(t, FormProblem):
            return t
        if accept and t != d:
            return diagnosis(tr("got {t}: refused, but u = {u} < p(d)/q(d) = {r} accepts d = {d}", t=t, u=u, r=ratio, d=d),
                             tr("accept when u < p(d)/q(d), the target's probability over the draft's: a token the "
                                "target likes at least as much as the draft did is always accepted; compare u with "
                                "the ratio, not with p(d) alone"))
        if not accept and t == d:
            return diagnosis(tr("got d = {d}: accepted, but u = {u} ≥ p(d)/q(d) = {r} refuses it", d=d, u=u, r=ratio),
                             tr("the ratio is p(d)/q(d) (q(d)/p(d) is upside down); at a refusal the draft's token is "
                                "out and a new one is drawn from the residual"))
        if not accept and float(res[t]) == 0:
            return diagnosis(tr("got {t}, a token the residual max(0, p - q) gives probability 0", t=t),
                             tr("at a refusal draw from max(0, p - q) renormalised, not from p again: a token the "
                                "draft already proposed often enough (p ≤ q there) must not come back"))
        return None

    return Case(words, call_with(p, q, d, u, torch.Generator().manual_seed(seed)), judge)


def _frequencies(fn, p, q, n, *, d=None, u=None) -> torch.Tensor | FormProblem:
    """How often each token comes back over n calls (seeds 0..n-1): at a fixed d and u, or the whole rule
    (d drawn from q, u uniform, from the same seeded generator)."""
    counts = torch.zeros(p.numel(), dtype=torch.float64)
    for seed in range(n):
        g = torch.Generator().manual_seed(seed)
        if d is None:
            dd = int(torch.multinomial(q, 1, generator=g))
            uu = float(torch.rand(1, generator=g, dtype=torch.float64))
        else:
            dd, uu = d, u
        t = _token(fn(p.clone(), q.clone(), dd, uu, g))
        if isinstance(t, FormProblem):
            return t  # the judge says it: a slip of form, not an error of the learner's code
        counts[t] += 1
    return counts / n


def _tv(a: torch.Tensor, b: torch.Tensor) -> float:
    return 0.5 * float((a - b).abs().sum())  # total variation distance


def _frequency_case(words, p, q, n, expected, *, d=None, u=None, hint=""):
    def judge(got):
        if isinstance(got, FormProblem):
            return got
        if _tv(got, expected) <= 0.04:  # the sampling noise at n = 4000 is about 0.01
            return None
        text = tr("expected frequencies {e}, got {g}", e=_share(expected), g=_share(got))
        excess = (q - p).clamp(min=0)
        if d is not None and float(got[d]) == 1:
            return diagnosis(text, tr("the ratio is p(d)/q(d) (q(d)/p(d) is upside down); at a refusal the draft's "
                                      "token is out and a new one is drawn from the residual"))
        if d is not None and _tv(got, p) <= 0.04:
            return diagnosis(text, tr("at a refusal you drew from p again: the draft's token gets a second chance. "
                                      "Draw from the residual max(0, p - q) renormalised"))
        if d is not None and _tv(got, excess / excess.sum()) <= 0.04:
            return diagnosis(text, tr("max(0, q - p) is where the draft overrates tokens: the residual is "
                                      "max(0, p - q), where the target wants more than the draft proposed"))
        return text
    return Case(words, lambda fn: _frequencies(fn, p, q, n, d=d, u=u), judge, hint)


def _resample_cases() -> list[Case]:
    return [
        _one_draw("d = 0, p(d) = 0.4 ≥ q(d) = 0.1, u = 0.95: accepted", _P, _Q, 0, 0.95),
        _one_draw("d = 2, p(d) = 0.2, q(d) = 0.5, u = 0.3 < 0.4: accepted", _P, _Q, 2, 0.3),
        # the refusals' frequencies before single refusals: one draw from a wrong distribution can look right
        _frequency_case("4000 refusals of d = 2 (u = 0.99): the tokens follow the residual [0.75, 0.25, 0, 0]",
                        _P, _Q, 4000, residual(_P, _Q), d=2, u=0.99),
        _one_draw("d = 2, u = 0.7 ≥ p(d)/q(d) = 0.4: refused, a token of the residual", _P, _Q, 2, 0.7),
        _one_draw("prompt lookup (q one-hot on d = 1), u = 0.25 < p(d) = 0.3: accepted", _P, _ONE_HOT, 1, 0.25),
        _one_draw("prompt lookup, u = 0.5 ≥ p(d) = 0.3: refused, a token of p without d", _P, _ONE_HOT, 1, 0.5),
        _frequency_case("the whole rule 4000 times (d drawn from q, u uniform): the kept tokens follow p",
                        _P, _Q, 4000, _P, hint="accept d when u < p(d)/q(d); otherwise draw from max(0, p - q) "
                        "renormalised: min(p, q) + max(0, p - q) = p"),
    ]


EXERCISES_12: list[Exercise] = [
    Exercise("12.accept_prefix", "greedy: the accepted drafts and the target's own token", accept_prefix,
             _accept_cases, "count the drafts equal to the target's argmax at the same position, from the first "
             "on, stopping at the first that differs; then take target_argmax at that count"),
    Exercise("12.residual", "the residual distribution of a refusal", residual, _residual_cases,
             "max(0, p - q), divided by its sum; p itself when that sum is 0"),
    Exercise("12.accept_or_resample", "sampling: accept a draft, or draw from the residual", accept_or_resample,
             _resample_cases, "return d when u < p[d] / q[d]; otherwise r = (p - q).clamp(min=0) and "
             "int(torch.multinomial(r / r.sum(), 1, generator=g))"),
]
