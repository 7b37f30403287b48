"""Exercises of notebook 13 (compression): reference solutions, cases and hints, merged into ``catalogue.EXERCISES``."""
from __future__ import annotations

import numbers

import torch

from ..i18n import tr
from .judges import Case, Exercise, FormProblem, call_with, make_case, same_tensor, shown


# --- reference solutions (``exercises.show_solution`` prints them) ---------------------------------

def quantize_group(x: torch.Tensor, bits: int) -> tuple[torch.Tensor, float, float]:
    lo, hi = float(x.min()), float(x.max())
    scale = (hi - lo) / (2**bits - 1)  # 2**bits codes: 0 .. 2**bits - 1, the minimum at 0, the maximum at the top
    codes = torch.round((x - lo) / scale).long()  # the nearest level: error at most scale / 2
    return codes, scale, lo


def evict_recent(n_seen: int, budget: int, sinks: int) -> tuple[list[int], int]:
    if n_seen <= budget:  # nothing to forget yet
        kept = list(range(n_seen))
    else:  # the sinks, then the newest budget - sinks positions
        kept = list(range(sinks)) + list(range(n_seen - (budget - sinks), n_seen))
    return kept, n_seen  # the next token's position counts every token seen, kept or not


# --- judges and cases -------------------------------------------------------------------------------

def _number(got):
    """A Python or numpy number, or a one-element tensor of one, as a float (None if neither)."""
    if isinstance(got, torch.Tensor) and got.numel() == 1:
        return float(got)
    if isinstance(got, numbers.Real) and not isinstance(got, bool):  # numpy's floats and ints are Real too
        return float(got)
    return None


def _same_group(expected: tuple[torch.Tensor, float, float]):
    """(codes, scale, lo): the codes exactly, scale and minimum within float rounding."""
    codes_judge = same_tensor(expected[0])

    def judge(got) -> str | None:
        if not isinstance(got, (tuple, list)) or len(got) != 3:
            return FormProblem(tr("expected 3 values (`codes`, `scale`, `lo`), got {type}", type=type(got).__name__))
        for name, want, value in (("scale", expected[1], got[1]), ("lo", expected[2], got[2])):
            number = _number(value)
            if number is None:
                return FormProblem(tr("`{name}`: expected a number, got {type}", name=name, type=type(value).__name__))
            if abs(number - want) > 1e-5 * max(1.0, abs(want)):
                want_text, got_text = shown(want, number)
                return tr("`{name}`: expected {expected}, got {got}", name=name, expected=want_text, got=got_text)
        problem = codes_judge(got[0])
        return None if problem is None else type(problem)(tr("`codes`: {problem}", problem=problem))
    return judge


def _group(codes: list[int], frac: list[float], scale: float, lo: float) -> torch.Tensor:
    """Values whose codes are ``codes``, each off its level by ``frac`` steps (|frac| < 0.5, clear of ties)."""
    return torch.tensor([lo + (c + f) * scale for c, f in zip(codes, frac)], dtype=torch.float32)


def _quantize_cases() -> list[Case]:
    hint = ("asymmetric min-max: the minimum gets code 0 and the maximum code `2**bits - 1`, so "
            "`scale = (max - min) / (2**bits - 1)` and `code = round((x - min) / scale)`")
    cases = [
        ("8 values, 4 bits: from -1.2 to 2.55", _group([0, 3, 15, 7, 9, 1, 12, 5], [0, 0.2, 0, -0.3, 0.1, -0.2, 0.3, 0],
                                                     0.25, -1.2), 4, ""),
        ("every value negative, 4 bits", _group([0, 15, 4, 8, 11], [0, 0, 0.2, -0.25, 0.3], 0.1, -3.0), 4,
         "codes count from the group's minimum, not from zero: subtract `min` before dividing"),
        ("values just below a level: round, do not truncate", _group([0, 2, 5, 9, 15], [0, -0.45, -0.4, -0.35, 0], 0.5,
                                                                      0.0), 4,
         "round to the nearest level (`torch.round`); truncating (`floor`, `int()`) is off by one code for these"),
        ("8 bits: 256 levels", _group([0, 255, 100, 17, 200, 64], [0, 0, 0.3, -0.3, 0.2, -0.1], 0.02, -2.0), 8, ""),
        ("the maximum first and the minimum last", _group([15, 6, 10, 0], [0, 0.2, -0.2, 0], 1.0, 4.0), 4, ""),
    ]
    return [Case(words, call_with(x, bits), _same_group(quantize_group(x, bits)), case_hint or hint)
            for words, x, bits, case_hint in cases]


def _evict_cases() -> list[Case]:
    hint = ("the sinks (positions `0 .. sinks - 1`) stay, then the newest `budget - sinks` positions; the next "
            "position is the number of tokens seen")
    position = "the next token's position is `n_seen`, the tokens seen, not the number of positions kept"
    return [make_case("5 tokens seen, budget 8: nothing evicted yet", (5, 8, 1), evict_recent(5, 8, 1), hint=hint),
            make_case("exactly the budget: 8 tokens, budget 8", (8, 8, 1), evict_recent(8, 8, 1), hint=hint),
            make_case("20 tokens seen, budget 8, 1 sink", (20, 8, 1), evict_recent(20, 8, 1), hint=position),
            make_case("20 tokens seen, budget 8, 4 sinks", (20, 8, 4), evict_recent(20, 8, 4),
                      hint="the budget counts the sinks too: 4 sinks leave room for 4 recent positions"),
            make_case("9 tokens seen, budget 8, no sinks", (9, 8, 0), evict_recent(9, 8, 0), hint=hint)]


EXERCISES_13: list[Exercise] = [
    Exercise("13.quantize_group", "codes, scale and minimum of one group", quantize_group, _quantize_cases,
             "`scale = (max - min) / (2**bits - 1)`; `code = round((x - min) / scale)`"),
    Exercise("13.evict_recent", "what a sinks + recent cache keeps, and the next position", evict_recent, _evict_cases,
             "the sinks, then the newest `budget - sinks` positions; the next position is `n_seen`"),
]
