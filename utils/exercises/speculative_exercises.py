"""Exercises of notebook 12 (speculative decoding): reference solutions, cases and hints, merged into
``catalogue.EXERCISES``.

12.accept_prefix   greedy: how many drafts the target accepts, and its own token after them
12.residual        sampling: the distribution a refused position is drawn from, max(0, p - q) renormalised
"""
from __future__ import annotations

import torch

from .judges import Case, Exercise, make_case, same_tensor


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


EXERCISES_12: list[Exercise] = [
    Exercise("12.accept_prefix", "greedy: the accepted drafts and the target's own token", accept_prefix,
             _accept_cases, "count the drafts equal to the target's argmax at the same position, from the first "
             "on, stopping at the first that differs; then take target_argmax at that count"),
    Exercise("12.residual", "the residual distribution of a refusal", residual, _residual_cases,
             "max(0, p - q), divided by its sum; p itself when that sum is 0"),
]
