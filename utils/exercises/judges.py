"""What the exercise checkers share: a case, an exercise, and the judges that compare a learner's
result with the reference and say, in one line, what was expected and what came back."""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable

import torch

from ..i18n import tr


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


class FormProblem(str):
    """A problem of form (type, shape, dtype), not of the idea: ``check`` answers it with the form hint."""


def _fmt(x) -> str:
    if isinstance(x, torch.Tensor):
        if x.numel() <= 24:
            return f"{(x.double() * 1000).round().div(1000).tolist() if x.is_floating_point() else x.tolist()}"
        return tr("a {shape} {dtype} tensor", shape=list(x.shape), dtype=str(x.dtype).replace('torch.', ''))
    return repr(x)


def same_tensor(expected: torch.Tensor, atol: float = 0.0) -> Callable[[Any], str | None]:
    def judge(got) -> str | None:
        if not isinstance(got, torch.Tensor):
            return FormProblem(tr("expected a tensor, got {type}", type=type(got).__name__))
        if tuple(got.shape) != tuple(expected.shape):
            return FormProblem(tr("expected shape {expected}, got {got}",
                                  expected=list(expected.shape), got=list(got.shape)))
        if expected.dtype == torch.bool and got.dtype != torch.bool:
            return FormProblem(tr("expected a bool tensor, got dtype {dtype}", dtype=got.dtype))
        a, b = got.double(), expected.double()
        same_inf = torch.isinf(a) == torch.isinf(b)
        close = torch.isclose(a, b, atol=atol, rtol=0) | (torch.isinf(a) & torch.isinf(b) & (a == b))
        if bool(close.all()) and bool(same_inf.all()):
            return None
        if expected.numel() <= 24:
            return tr("expected {expected}, got {got}", expected=_fmt(expected), got=_fmt(got))
        return tr("{bad} of {n} values differ (max |diff| {diff:.3g})", bad=int((~close).sum()), n=expected.numel(),
                  diff=float((a - b).abs().nan_to_num(math.inf).max()))
    return judge


# Relative precision of a number that came as a narrower float (a float32 tensor, np.float32): its right
# value is still right. A float64 result is held to the judge's own ``rel``.
_FLOAT_REL = {"float16": 1e-3, "bfloat16": 1e-2, "float32": 1e-6}


def plain_number(got) -> tuple[Any, float]:
    """A 0-d tensor or a numpy scalar as the Python number it holds, with the relative precision of its dtype
    (0 for a full-precision number); anything else unchanged. ``torch.tensor(12)`` is 12 to a learner."""
    if isinstance(got, torch.Tensor) and got.dim() == 0 and got.dtype != torch.bool:
        return got.item(), _FLOAT_REL.get(str(got.dtype).replace("torch.", ""), 0.0)
    if type(got).__module__ == "numpy" and getattr(got, "shape", None) == () and hasattr(got, "item") \
            and type(got).__name__ != "bool_":
        return got.item(), _FLOAT_REL.get(str(getattr(got, "dtype", "")), 0.0)
    return got, 0.0


def same_value(expected, rel: float = 1e-9) -> Callable[[Any], str | None]:
    def judge(got) -> str | None:
        if isinstance(expected, tuple):
            if not isinstance(got, (tuple, list)) or len(got) != len(expected):
                return FormProblem(tr("expected {n} values {expected!r}, got {got!r}",
                                      n=len(expected), expected=expected, got=got))
            problems = [same_value(e, rel)(g) for e, g in zip(expected, got)]
            first = next((p for p in problems if p), None)
            if first is None:
                return None
            shown = tuple(plain_number(g)[0] for g in got)
            return first if is_form_problem(first) else _expected_got(expected, shown)
        got, precision = plain_number(got)
        if expected is None:
            return None if got is None else tr("expected None, got {got!r}", got=got)
        if isinstance(expected, float):
            number = isinstance(got, (int, float)) and not isinstance(got, bool)
            ok = number and (math.isclose(got, expected, rel_tol=max(rel, precision))
                             or (math.isnan(expected) and math.isnan(got)))
            return None if ok else tr("expected {expected:.6g}, got {got!r}", expected=expected, got=got)
        if isinstance(expected, int) and not isinstance(expected, bool):
            if isinstance(got, numbers.Integral) and not isinstance(got, bool):  # numpy ints are fine
                return None if int(got) == expected else _expected_got(expected, int(got))
            if isinstance(got, numbers.Real) and got == expected:
                return FormProblem(tr("right value, but an int is expected (got {type}: use // to stay in integers)",
                                      type=type(got).__name__))
            return _expected_got(expected, got)
        return None if (type(got) is type(expected) and got == expected) else _expected_got(expected, got)
    return judge


def _expected_got(expected, got) -> str:
    return tr("expected {expected!r}, got {got!r}", expected=expected, got=got)


# Problems of form (type, shape, dtype): the idea hint would mislead, so ``check`` gives none for them.
# The judges mark theirs (``FormProblem``, in any language); these catch them in an error's own text.
FORM_PROBLEMS = ("expected a ", "expected shape", "dtype", "right value, but", "expected logits of shape",
                 "expected 2 values", "expected 3 values", "could not compare", ": raises ")


def is_form_problem(message: str) -> bool:
    return isinstance(message, FormProblem) or any(m in message for m in FORM_PROBLEMS)


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
            return FormProblem(tr("expected a pair (K, V), got {type}", type=type(got).__name__))
        return _of("K", jk(got[0])) or _of("V", jv(got[1]))
    return judge


def _of(tensor: str, problem: str | None) -> str | None:
    """``problem`` named after the tensor it is about ("K: ..."), still a form problem if it was one."""
    if problem is None:
        return None
    return type(problem)(tr("{tensor}: {problem}", tensor=tensor, problem=problem))


def seeded_randn(*shape, seed=0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
