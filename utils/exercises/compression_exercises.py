"""Exercises of notebook 13 (compression): reference solutions, cases and hints, merged into ``catalogue.EXERCISES``."""
from __future__ import annotations

import numbers

import torch

from ..i18n import tr
from .judges import Case, Exercise, FormProblem, call_with, diagnosis, expected_got, same_tensor, shown


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
    """(codes, scale, lo): integer codes exactly, scale and minimum within float rounding."""
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
        if problem is None and (got[0].is_floating_point() or got[0].dtype == torch.bool):
            return FormProblem(tr("`codes` are integers: expected an integer dtype (`torch.round(...).long()`), got "
                                  "{dtype}", dtype=str(got[0].dtype).replace("torch.", "")))
        return None if problem is None else type(problem)(tr("`codes`: {problem}", problem=problem))
    return judge


def _quantize_judge(x: torch.Tensor, bits: int):
    """``_same_group``, and when the answer is wrong, which known mistake it is (each with its own hint)."""
    expected = quantize_group(x, bits)
    plain = _same_group(expected)
    lo, hi, levels = float(x.min()), float(x.max()), 2**bits - 1
    scale = (hi - lo) / levels
    symmetric = float(x.abs().max()) / (2 ** (bits - 1) - 1)
    mistakes = [  # (the scale, the minimum, the codes a mistake gives; its hint)
        (scale, lo, torch.floor((x - lo) / scale),
         "round to the nearest level (`torch.round`); truncating (`floor`, `int()`) is off by one code for values "
         "just below a level"),
        ((hi - lo) / 2**bits, lo, torch.round((x - lo) / ((hi - lo) / 2**bits)),
         "`2**bits` codes are `2**bits - 1` steps from the minimum to the maximum: divide the range by "
         "`2**bits - 1`, so the maximum gets the top code"),
        (scale, lo, torch.round(x / scale),
         "codes count from the group's minimum, not from zero: subtract `min` before dividing"),
        (symmetric, 0.0, torch.round(x / symmetric),
         "asymmetric, not symmetric: the range runs from the group's minimum to its maximum (`lo = min`), so codes "
         "go from 0 to `2**bits - 1`, never below 0"),
        (scale, lo, x, "return the integer codes, `round((x - min) / scale)`, not the values themselves"),
    ]

    def judge(got) -> str | None:
        problem = plain(got)
        if problem is None or not isinstance(got, (tuple, list)) or len(got) != 3:
            return problem
        codes, got_scale, got_lo = got[0], _number(got[1]), _number(got[2])
        if not isinstance(codes, torch.Tensor) or codes.shape != x.shape or got_scale is None or got_lo is None:
            return problem
        for want_scale, want_lo, want_codes, hint in mistakes:
            if (abs(got_scale - want_scale) <= 1e-5 * max(1.0, abs(want_scale)) and
                    abs(got_lo - want_lo) <= 1e-5 * max(1.0, abs(want_lo)) and
                    torch.allclose(codes.double(), want_codes.double(), atol=1e-5, rtol=0)):
                return diagnosis(problem, tr(hint))
        return problem
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
    return [Case(words, call_with(x, bits), _quantize_judge(x, bits), case_hint or hint)
            for words, x, bits, case_hint in cases]


def _evict_judge(n_seen: int, budget: int, sinks: int):
    """The kept positions and the next position; a wrong answer that matches a known mistake names it."""
    expected = evict_recent(n_seen, budget, sinks)
    recent = budget - sinks
    mistakes = [  # (the positions a mistake keeps; its hint)
        (list(range(max(0, n_seen - budget), n_seen)),
         "the sinks are never evicted: keep positions `0 .. sinks - 1`, then the newest `budget - sinks`"),
        (list(range(min(sinks, n_seen))) + list(range(max(sinks, n_seen - budget), n_seen)),
         "the budget counts the sinks too: `sinks` of them plus the newest `budget - sinks`, `budget` positions "
         "in all"),
        (list(range(sinks)) + list(range(n_seen - recent + 1, n_seen)),
         "one recent position too few: after the sinks come exactly `budget - sinks` recent positions, "
         "`n_seen - (budget - sinks) .. n_seen - 1`"),
        (list(range(sinks)) + list(range(max(sinks, n_seen - recent - 1), n_seen)),
         "one recent position too many: the cache holds `budget` positions, the sinks included"),
    ]

    def judge(got) -> str | None:
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            return FormProblem(tr("expected 2 values (`kept`, `next_position`), got {type}", type=type(got).__name__))
        kept, position = got
        if not isinstance(kept, (list, tuple)) or not all(isinstance(p, numbers.Integral) for p in kept):
            return FormProblem(tr("`kept`: expected a list of ints, got {got}", got=repr(kept)))
        if not isinstance(position, numbers.Integral) or isinstance(position, bool):
            return FormProblem(tr("`next_position`: expected an int, got {type}", type=type(position).__name__))
        kept = [int(p) for p in kept]
        if kept != expected[0]:
            text = tr("`kept`: {problem}", problem=expected_got(expected[0], kept))
            for wrong, hint in mistakes:
                if n_seen > budget and kept == wrong:
                    return diagnosis(text, tr(hint))
            return text
        if position != expected[1]:
            text = tr("`next_position`: {problem}", problem=expected_got(expected[1], position))
            if position == len(kept):
                return diagnosis(text, tr("the next token's position is `n_seen`, the tokens seen, not the number "
                                          "of positions kept"))
            return text
        return None
    return judge


def _evict_cases() -> list[Case]:
    hint = ("the sinks (positions `0 .. sinks - 1`) stay, then the newest `budget - sinks` positions; the next "
            "position is the number of tokens seen")
    cases = [("5 tokens seen, budget 8: nothing evicted yet", (5, 8, 1)),
             ("exactly the budget: 8 tokens, budget 8", (8, 8, 1)),
             ("20 tokens seen, budget 8, 1 sink", (20, 8, 1)),
             ("20 tokens seen, budget 8, 4 sinks", (20, 8, 4)),
             ("9 tokens seen, budget 8, no sinks", (9, 8, 0))]
    return [Case(words, call_with(*args), _evict_judge(*args), hint) for words, args in cases]


EXERCISES_13: list[Exercise] = [
    Exercise("13.quantize_group", "codes, scale and minimum of one group", quantize_group, _quantize_cases,
             "`scale = (max - min) / (2**bits - 1)`; `code = round((x - min) / scale)`"),
    Exercise("13.evict_recent", "what a sinks + recent cache keeps, and the next position", evict_recent, _evict_cases,
             "the sinks, then the newest `budget - sinks` positions; the next position is `n_seen`"),
]
