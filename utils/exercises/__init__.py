"""Exercises: the learner writes a piece of cached inference, the course checks it at once.

    from utils import exercises
    exercises.check("01.causal_mask", causal_mask)      # one line per case: ✓ or ✗, then a hint
    exercises.show_solution("01.causal_mask")            # the reference, when you want it

A stub that still raises ``NotImplementedError`` gets "not written yet: your turn", never a
traceback; an error inside your code is shown as one short line with the case that raised it.
``check`` returns a ``Report`` (``.passed``, ``.cases``) so a notebook can go on either way.
The exercises themselves (contract, reference solution, cases, hint) are in ``catalogue.py``.
"""
from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable

from ..i18n import tr
from ..bug_lab.mysteries import VOCABULARY, diagnose, mystery
from .catalogue import EXERCISES
from .judges import Case, Exercise, FormProblem, is_form_problem

__all__ = ["EXERCISES", "Exercise", "Case", "Report", "CaseResult", "check", "show_solution",
           "diagnose", "mystery", "VOCABULARY"]


@dataclass
class CaseResult:
    words: str
    ok: bool
    message: str = ""  # what was expected and what came back, or the error


@dataclass
class Report:
    exercise: str
    cases: list[CaseResult] = field(default_factory=list)
    written: bool = True  # False while the stub still raises NotImplementedError

    @property
    def passed(self) -> bool:
        return self.written and bool(self.cases) and all(c.ok for c in self.cases)

    def __repr__(self) -> str:
        n_ok = sum(c.ok for c in self.cases)
        return f"Report({self.exercise!r}, passed={self.passed}, {n_ok}/{len(self.cases)} cases)"

    def _ipython_display_(self) -> None:
        """``check`` has printed every line already: a cell ending with it shows nothing more."""


def _short_error(err: BaseException) -> str:
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return f"{type(err).__name__}: {text[:160]}" if text else type(err).__name__


def _exercise(exercise_id: str) -> Exercise:
    if exercise_id not in EXERCISES:
        raise ValueError(f"unknown exercise {exercise_id!r}; the exercises are {sorted(EXERCISES)}")
    return EXERCISES[exercise_id]


def run(exercise_id: str, fn: Callable[..., Any]) -> Report:
    """Run every case of the exercise on ``fn``, silently; ``check`` prints the result."""
    ex = _exercise(exercise_id)
    if not callable(fn):
        raise ValueError(f"check({exercise_id!r}, fn) needs your function, got {type(fn).__name__}")
    report = Report(exercise_id)
    for case in ex.cases():
        try:
            got = case.run(fn)
        except NotImplementedError:
            report.written = False
            return report
        except Exception as err:  # the learner's code: show it, never a traceback
            report.cases.append(CaseResult(case.words, False, tr("your function raised {error}",
                                                                 error=_short_error(err))))
            continue
        try:
            problem = case.judge(got)
        except Exception as err:  # a result of the wrong kind (a list for a tensor, ...)
            problem = FormProblem(tr("could not compare what came back ({error})", error=_short_error(err)))
        report.cases.append(CaseResult(case.words, problem is None, problem or ""))
    return report


def check(exercise_id: str, fn: Callable[..., Any]) -> Report:
    """Check ``fn`` against the exercise's cases; print one line per case and, after the first
    failure, a hint that points at the idea (not at the answer)."""
    report = run(exercise_id, fn)
    ex = EXERCISES[exercise_id]
    if not report.written:
        print(tr("{id}: not written yet: your turn (replace `raise NotImplementedError`, then run this cell again)",
                 id=exercise_id))
        return report
    for c in report.cases:  # a case's words and hints are English keys, shown in the current language
        words = tr(c.words)
        print(f"  ✓ {words}" if c.ok else "  ✗ " + tr("{case}: {problem}", case=words, problem=c.message))
    failed = [c for c in report.cases if not c.ok]
    if failed:
        n_ok = len(report.cases) - len(failed)
        summary = tr("{id}: {n_ok}/{n} cases pass.", id=exercise_id, n_ok=n_ok, n=len(report.cases))
        if is_form_problem(failed[0].message):  # a type or shape slip: the idea hint would send you elsewhere
            print(tr("{summary} Hint: first return what the contract asks for (type, shape, dtype), then run again.",
                     summary=summary))
        else:
            hint = next((case.hint for case in ex.cases() if case.words == failed[0].words and case.hint), ex.hint)
            print(tr("{summary} Hint: {hint}", summary=summary, hint=tr(hint)))
    else:
        print(tr("{id}: all {n} cases pass.", id=exercise_id, n=len(report.cases)))
    return report


def show_solution(exercise_id: str) -> str:
    """Print (and return) the reference solution's source."""
    src = textwrap.dedent(inspect.getsource(_exercise(exercise_id).solution))
    print(src)
    return src
