"""What the exercise checkers share: a case, an exercise, and the judges that compare a learner's
result with the reference and say, in one line, what was expected and what came back (numbers through
``fmt``, the one formatting helper: rounded, with just enough digits to tell expected from got)."""
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


class Diagnosis(str):
    """A wrong answer whose mistake the judge recognised: ``check`` shows ``hint`` (about that mistake)
    instead of the exercise's hint. Make one with ``diagnosis(message, hint)``, both in the current language."""

    hint = ""


def diagnosis(message: str, hint: str) -> Diagnosis:
    found = Diagnosis(message)
    found.hint = hint
    return found


def relabel(problem: str, text: str) -> str:
    """``text`` (a problem said another way) of the same kind as ``problem``: a form problem stays one,
    a diagnosis keeps its hint."""
    out = type(problem)(text)
    if isinstance(problem, Diagnosis):
        out.hint = problem.hint
    return out


# --- how values read in a message: the one formatting helper ---------------------------------------

_DIGITS = (4, 6, 9, 12, 17)  # significant digits tried in turn: the fewest that tell expected from got


def _float(x: float, digits: int) -> str:
    text = f"{x:.{digits}g}"
    return text if any(c in text for c in ".enai") else text + ".0"  # 2.0 still reads as a float


def _flat(x) -> list:
    if isinstance(x, torch.Tensor):
        return x.flatten().tolist() if x.numel() <= 24 else []
    if isinstance(x, (tuple, list)):
        return [n for item in x for n in _flat(item)]
    number = plain_number(x)[0]
    return [number] if isinstance(number, float) else []


def _digits(expected, got) -> int:
    pairs = list(zip(_flat(expected), _flat(got)))
    for digits in _DIGITS:
        if all(a == b or _float(a, digits) != _float(b, digits) for a, b in pairs
               if isinstance(a, float) and isinstance(b, float)):
            return digits
    return _DIGITS[-1]


def fmt(x, digits: int = _DIGITS[0]) -> str:
    """``x`` as a message shows it: floats to ``digits`` significant digits (0.3, not 0.3000000000000007),
    a tensor of up to 24 numbers as nested lists, a bigger one by its shape and dtype, strings quoted."""
    if isinstance(x, torch.Tensor):
        if x.dim() == 0:
            return fmt(x.item(), digits)
        if x.numel() > 24:
            return tr("a {shape} {dtype} tensor", shape=list(x.shape), dtype=str(x.dtype).replace("torch.", ""))
        return fmt(x.tolist(), digits) if x.is_floating_point() else str(x.tolist())
    if isinstance(x, list):
        return "[" + ", ".join(fmt(v, digits) for v in x) + "]"
    if isinstance(x, tuple):
        return "(" + ", ".join(fmt(v, digits) for v in x) + ("," if len(x) == 1 else "") + ")"
    number = plain_number(x)[0]
    if isinstance(number, float):
        return _float(number, digits)
    return repr(number)


def shown(expected, got) -> tuple[str, str]:
    """``expected`` and ``got`` formatted alike, with just enough digits to tell them apart."""
    digits = _digits(expected, got)
    return fmt(expected, digits), fmt(got, digits)


def expected_got(expected, got) -> str:
    want, have = shown(expected, got)
    return tr("expected {expected}, got {got}", expected=want, got=have)


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
            return expected_got(expected, got)
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
                return FormProblem(tr("expected {n} values {expected}, got {got}",
                                      n=len(expected), expected=fmt(expected), got=fmt(got)))
            problems = [same_value(e, rel)(g) for e, g in zip(expected, got)]
            first = next((p for p in problems if p), None)
            if first is None:
                return None
            numbers_got = tuple(plain_number(g)[0] for g in got)
            return first if is_form_problem(first) else expected_got(expected, numbers_got)
        got, precision = plain_number(got)
        if expected is None:
            return None if got is None else tr("expected None, got {got}", got=fmt(got))
        if isinstance(expected, float):
            number = isinstance(got, (int, float)) and not isinstance(got, bool)
            ok = number and (math.isclose(got, expected, rel_tol=max(rel, precision))
                             or (math.isnan(expected) and math.isnan(got)))
            return None if ok else expected_got(expected, got)
        if isinstance(expected, int) and not isinstance(expected, bool):
            if isinstance(got, numbers.Integral) and not isinstance(got, bool):  # numpy ints are fine
                return None if int(got) == expected else expected_got(expected, int(got))
            if isinstance(got, numbers.Real) and got == expected:
                return FormProblem(tr("right value, but an int is expected (got {type}: use // to stay in integers)",
                                      type=type(got).__name__))
            return expected_got(expected, got)
        return None if (type(got) is type(expected) and got == expected) else expected_got(expected, got)
    return judge


# Problems of form (type, shape, dtype): the idea hint would mislead, so ``check`` gives none for them.
# The judges mark theirs (``FormProblem``, in any language); these catch them in an error's own text.
FORM_PROBLEMS = ("expected a ", "expected shape", "dtype", "right value, but", "expected logits of shape",
                 "expected 2 values", "expected 3 values", "could not compare", ": raises ")


def is_form_problem(message: str) -> bool:
    return isinstance(message, FormProblem) or any(m in message for m in FORM_PROBLEMS)


class InputChanged(Exception):
    """The learner's function changed a tensor it was given (``position``: which argument, from 0). A result
    computed in place can be right and still break the caller, who reads that tensor again."""

    def __init__(self, position: int):
        super().__init__(position)
        self.position = position


def _same_contents(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return torch.equal(a, b) or (a.is_floating_point() and bool(((a == b) | (a.isnan() & b.isnan())).all()))


def call_with(*args) -> Callable[[Callable], Any]:
    """A case that calls the function once; tensors are cloned so each call sees fresh inputs, and a tensor
    that comes back changed raises ``InputChanged``."""
    def run(fn):
        given = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        got = fn(*given)
        for i, (a, g) in enumerate(zip(args, given)):
            if isinstance(a, torch.Tensor) and not _same_contents(a, g):
                raise InputChanged(i)
        return got
    return run


class Raised:
    """An error the learner's function raised, handed to the judge (see ``catching``) so that it can name the mistake."""

    def __init__(self, err: BaseException) -> None:
        self.err = err


def catching(kind: type[BaseException], run: Callable[[Callable], Any]) -> Callable[[Callable], Any]:
    """``run`` with an error of ``kind`` returned as ``Raised(err)`` for the judge, not reported as a bare error."""
    def caught(fn):
        try:
            return run(fn)
        except kind as err:
            return Raised(err)
    return caught


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
    return relabel(problem, tr("{tensor}: {problem}", tensor=tensor, problem=problem))


def seeded_randn(*shape, seed=0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
