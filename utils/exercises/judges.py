"""What the exercise checkers share: a case, an exercise, and the judges that compare a learner's
result with the reference and say, in one line, what was expected and what came back."""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable

import torch


@dataclass
class Case:
    words: str  # the input, in words: what the learner reads next to ✓ or ✗
    run: Callable[[Callable], Any]  # calls the learner's function on this case's inputs
    judge: Callable[[Any], str | None]  # None when right, else what was expected and what came back
    hint: str = ""  # for this case's failure; the exercise's hint otherwise


@dataclass
class Exercise:
    id: str
    title: str
    solution: Callable
    cases: Callable[[], list[Case]]
    hint: str


def _fmt(x) -> str:
    if isinstance(x, torch.Tensor):
        if x.numel() <= 24:
            return f"{(x.double() * 1000).round().div(1000).tolist() if x.is_floating_point() else x.tolist()}"
        return f"a {list(x.shape)} {str(x.dtype).replace('torch.', '')} tensor"
    return repr(x)


def same_tensor(expected: torch.Tensor, atol: float = 0.0) -> Callable[[Any], str | None]:
    def judge(got) -> str | None:
        if not isinstance(got, torch.Tensor):
            return f"expected a tensor, got {type(got).__name__}"
        if tuple(got.shape) != tuple(expected.shape):
            return f"expected shape {list(expected.shape)}, got {list(got.shape)}"
        if expected.dtype == torch.bool and got.dtype != torch.bool:
            return f"expected a bool tensor, got dtype {got.dtype}"
        a, b = got.double(), expected.double()
        same_inf = torch.isinf(a) == torch.isinf(b)
        close = torch.isclose(a, b, atol=atol, rtol=0) | (torch.isinf(a) & torch.isinf(b) & (a == b))
        if bool(close.all()) and bool(same_inf.all()):
            return None
        if expected.numel() <= 24:
            return f"expected {_fmt(expected)}, got {_fmt(got)}"
        bad = int((~close).sum())
        return f"{bad} of {expected.numel()} values differ (max |diff| {float((a - b).abs().nan_to_num(math.inf).max()):.3g})"
    return judge


def same_value(expected, rel: float = 1e-9) -> Callable[[Any], str | None]:
    def judge(got) -> str | None:
        if isinstance(expected, tuple):
            if not isinstance(got, (tuple, list)) or len(got) != len(expected):
                return f"expected {len(expected)} values {expected!r}, got {got!r}"
            problems = [same_value(e, rel)(g) for e, g in zip(expected, got)]
            return next((f"expected {expected!r}, got {tuple(got)!r}" for p in problems if p), None)
        if expected is None:
            return None if got is None else f"expected None, got {got!r}"
        if isinstance(expected, float):
            ok = isinstance(got, (int, float)) and not isinstance(got, bool) and math.isclose(got, expected, rel_tol=rel)
            return None if ok else f"expected {expected:.6g}, got {got!r}"
        if isinstance(expected, int) and not isinstance(expected, bool):
            if isinstance(got, numbers.Integral) and not isinstance(got, bool):  # numpy ints are fine
                return None if int(got) == expected else f"expected {expected!r}, got {int(got)!r}"
            if isinstance(got, numbers.Real) and got == expected:
                return f"right value, but an int is expected (got {type(got).__name__}: use // to stay in integers)"
            return f"expected {expected!r}, got {got!r}"
        return None if (type(got) is type(expected) and got == expected) else f"expected {expected!r}, got {got!r}"
    return judge


# Problems of form (type, shape, dtype): the idea hint would mislead, so ``check`` gives none for them.
FORM_PROBLEMS = ("expected a ", "expected shape", "dtype", "right value, but", "expected logits of shape",
                 "expected 2 values", "expected 3 values", "could not compare", ": raises ")


def is_form_problem(message: str) -> bool:
    return any(m in message for m in FORM_PROBLEMS)


def call_with(*args) -> Callable[[Callable], Any]:
    """A case that calls the function once; tensors are cloned so each call sees fresh inputs."""
    def run(fn):
        return fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
    return run


def make_case(words: str, args: tuple, expected, judge=None, hint: str = "") -> Case:
    return Case(words, call_with(*args), (judge or (same_tensor if isinstance(expected, torch.Tensor) else same_value))(expected), hint)


def same_pair(expected: tuple[torch.Tensor, torch.Tensor]) -> Callable[[Any], str | None]:
    jk, jv = same_tensor(expected[0]), same_tensor(expected[1])

    def judge(got) -> str | None:
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            return f"expected a pair (K, V), got {type(got).__name__}"
        return jk(got[0]) and f"K: {jk(got[0])}" or jv(got[1]) and f"V: {jv(got[1])}"
    return judge


def seeded_randn(*shape, seed=0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
