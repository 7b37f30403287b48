"""Exercises: the learner writes a piece of cached inference, the course checks it at once.

    from utils import exercises
    exercises.check("01.causal_mask", causal_mask)      # one line per case: ✓ or ✗, then a hint
    exercises.show_solution("01.causal_mask")            # the reference, when you want it

A stub that still raises ``NotImplementedError`` gets "not written yet: your turn", never a
traceback; a solution written halfway (one case reaches the ``raise``, another does not) gets its
cases shown, each as it ran. An error inside your code is shown as one short line with the case
that raised it. Each case may run ``CASE_SECONDS``: a function that loops forever is stopped and
asked "is there an infinite loop?" instead of hanging the notebook.
After the first failure comes one hint. When the judge recognises the mistake (the new positions
before the old, a residual left out, probabilities for logits, a byte count off by one factor...: ``mistakes.py``,
``sizing_mistakes.py``, ``decode_exercise.py``, ``chunk_exercise.py``)
the message names it and the hint is about it; otherwise the hint is the case's or the exercise's idea.
``check`` returns a ``Report`` (``.passed``, ``.cases``) so a notebook can go on either way.
The exercises themselves (contract, reference solution, cases, hint) are in ``catalogue.py``.
"""
from __future__ import annotations

import ast
import inspect
import signal
import textwrap
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable

from ..i18n import in_language, language, tr
from ..bug_lab.mysteries import VOCABULARY, diagnose, mystery
from .catalogue import EXERCISES
from .judges import Case, Diagnosis, Exercise, FormProblem, InputChanged, diagnosis, is_form_problem

__all__ = ["EXERCISES", "Exercise", "Case", "Report", "CaseResult", "check", "show_solution", "reference",
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
    borrowed: str = ""  # the package function passed in place of the learner's own (never run, never passed)

    @property
    def passed(self) -> bool:
        return self.written and not self.borrowed and bool(self.cases) and all(c.ok for c in self.cases)

    def __repr__(self) -> str:
        n_ok = sum(c.ok for c in self.cases)
        return f"Report({self.exercise!r}, passed={self.passed}, {n_ok}/{len(self.cases)} cases)"

    def _ipython_display_(self) -> None:
        """``check`` has printed every line already: a cell ending with it shows nothing more."""


CASE_SECONDS = 20  # each case's limit in CPU seconds: a reference solution takes a fraction of one


class RunProblem(str):
    """A case that did not come back with a result (a part not written yet, no answer in time); ``hint``
    is what ``check`` says instead of the exercise's idea hint."""

    hint = ""


class _TooSlow(BaseException):
    """The alarm went off (a BaseException, so a learner's ``except Exception`` cannot swallow it)."""


@contextmanager
def _time_limit(seconds: float):
    """Stop the block with ``_TooSlow`` once it has used ``seconds`` of CPU time. CPU time, not wall time: a
    busy machine (a test run, a shared Colab) slows a case down without using more CPU, while a loop that never
    ends keeps using it. The timer (ITIMER_PROF, SIGPROF) exists on Linux and macOS and its signal is handled
    in the main thread, where a notebook's cells run; elsewhere (Windows, another thread) no limit."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(signum, frame):
        raise _TooSlow()

    previous = signal.signal(signal.SIGPROF, ring)
    outer, _ = signal.setitimer(signal.ITIMER_PROF, seconds)
    start = time.process_time()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
        if outer:  # a timer of the caller's was running: give it back what is left of it
            signal.setitimer(signal.ITIMER_PROF, max(outer - (time.process_time() - start), 1e-3))


def _run_problem(text: dict, hint: dict) -> RunProblem:
    problem = RunProblem(in_language(text))
    problem.hint = in_language(hint)
    return problem


def _short_error(err: BaseException) -> str:
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    kind = type(err)  # a module's own error by its full name: re.error, not a bare "error"
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    return f"{name}: {text[:160]}" if text else name


def _argument_name(fn: Callable[..., Any], position: int) -> str:
    """The name of ``fn``'s parameter at ``position`` (``logits``), or its number when it has none."""
    try:
        names = [p.name for p in inspect.signature(fn).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        names = []
    return f"`{names[position]}`" if position < len(names) else tr("number {n}", n=position + 1)


def _changed_input(fn: Callable[..., Any], err: InputChanged) -> Diagnosis:
    return diagnosis(tr("your function changed its input in place: it changed the tensor it was given as its "
                        "argument {name}, which the caller reads again", name=_argument_name(fn, err.position)),
                     tr("leave the inputs as they are: the caller reads them again after your function returns (in "
                        "an engine, the cache). No in-place operation such as `x.zero_()` or `x[...] = ...` on an "
                        "input: build a new tensor (`masked_fill`, `torch.where`, `torch.cat`), or `.clone()` first"))


def _exercise(exercise_id: str) -> Exercise:
    if exercise_id not in EXERCISES:
        raise ValueError(tr("unknown exercise {id!r}; the exercises are {ids}", id=exercise_id, ids=sorted(EXERCISES)))
    return EXERCISES[exercise_id]


def _qualified_name(fn: Callable[..., Any]) -> str:
    fn = inspect.unwrap(fn)
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', getattr(fn, '__name__', '?'))}"


def _package_version(fn: Callable[..., Any], ex: Exercise) -> bool:
    """True for one of the course package's own functions (``utils.attention.causal_mask``...), which a
    notebook imports for its other cells. The exercise's reference solution (``utils.exercises``) is let
    through: the solved-notebooks run binds it under the stub's name."""
    fn = inspect.unwrap(fn)
    module = getattr(fn, "__module__", None) or ""
    if fn is ex.solution or module == "utils.exercises" or module.startswith("utils.exercises."):
        return False
    return module == "utils" or module.startswith("utils.")


def run(exercise_id: str, fn: Callable[..., Any]) -> Report:
    """Run every case of the exercise on ``fn``, silently; ``check`` prints the result."""
    ex = _exercise(exercise_id)
    if not callable(fn):
        raise ValueError(tr("check({id!r}, fn) needs your function itself (its name, without calling it), got "
                            "{fn!r:.60} ({type})", id=exercise_id, fn=fn, type=type(fn).__name__))
    if _package_version(fn, ex):  # the notebook imported it: it would pass without a line of the learner's
        return Report(exercise_id, borrowed=_qualified_name(fn))
    report = Report(exercise_id)
    unfinished = 0  # cases that reached `raise NotImplementedError`
    for case in ex.cases():
        try:
            with _time_limit(CASE_SECONDS):
                got = case.run(fn)
        except NotImplementedError:
            unfinished += 1
            report.cases.append(CaseResult(case.words, False, _run_problem(
                {"en": "your function raised NotImplementedError here: this part is not written yet",
                 "zh": "你的函数在这个用例里抛出了 NotImplementedError：这部分还没写完"},
                {"en": "finish the part that still raises NotImplementedError, then run this cell again.",
                 "zh": "先把还会抛出 NotImplementedError 的那部分写完，再运行这个单元格。"})))
            continue
        except InputChanged as err:  # right or not, the result was computed by changing the caller's tensor
            report.cases.append(CaseResult(case.words, False, _changed_input(fn, err)))
            continue
        except _TooSlow:
            report.cases.append(CaseResult(case.words, False, _run_problem(
                {"en": f"no answer after {CASE_SECONDS} s of computing: is there an infinite loop? (the cases after it "
                       "were not run)",
                 "zh": f"计算了 {CASE_SECONDS} 秒还没有返回：是不是有死循环？（后面的用例没有再运行）"},
                {"en": "look at every loop: does its condition ever become false (is the variable it tests updated "
                       "inside the loop)?",
                 "zh": "逐个检查循环：它的条件会不会变成假（条件里的变量在循环体里有没有更新）？"})))
            break  # every later case would wait as long
        except Exception as err:  # the learner's code: show it, never a traceback
            report.cases.append(CaseResult(case.words, False, tr("your function raised {error}",
                                                                 error=_short_error(err))))
            continue
        try:
            problem = case.judge(got)
        except Exception as err:  # a result of the wrong kind (a list for a tensor, ...)
            problem = FormProblem(tr("could not compare what came back ({error})", error=_short_error(err)))
        report.cases.append(CaseResult(case.words, problem is None, problem or ""))
    if unfinished and unfinished == len(report.cases):  # the stub as it was handed out: nothing written yet
        report.cases, report.written = [], False
    return report


def check(exercise_id: str, fn: Callable[..., Any]) -> Report:
    """Check ``fn`` against the exercise's cases; print one line per case and, after the first
    failure, a hint that points at the idea (not at the answer)."""
    report = run(exercise_id, fn)
    ex = EXERCISES[exercise_id]
    if report.borrowed:
        print(tr("{id}: `{name}` is the course's own function, not yours: nothing was checked. Write yours in the "
                 "exercise cell (don't pass the package's version), then run this cell again",
                 id=exercise_id, name=report.borrowed))
        return report
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
        if isinstance(failed[0].message, RunProblem):  # it did not finish: the idea hint would not help yet
            print(tr("{summary} Hint: {hint}", summary=summary, hint=failed[0].message.hint))
        elif isinstance(failed[0].message, Diagnosis):  # the judge recognised the mistake: a hint about it
            print(tr("{summary} Hint: {hint}", summary=summary, hint=failed[0].message.hint))
        elif is_form_problem(failed[0].message):  # a type or shape slip: the idea hint would send you elsewhere
            print(tr("{summary} Hint: first return what the contract asks for (type, shape, dtype), then run again.",
                     summary=summary))
        else:
            hint = next((case.hint for case in ex.cases() if case.words == failed[0].words and case.hint), ex.hint)
            print(tr("{summary} Hint: {hint}", summary=summary, hint=tr(hint)))
    else:
        print(tr("{id}: all {n} cases pass.", id=exercise_id, n=len(report.cases)))
    return report


def _without_docstring(src: str) -> str:
    """``src`` (one function) without its docstring's lines."""
    body = ast.parse(src).body[0].body
    if not (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        return src
    lines = src.splitlines(keepends=True)
    return "".join(lines[: body[0].lineno - 1] + lines[body[0].end_lineno:])


def reference(exercise_id: str) -> Callable[..., Any]:
    """The exercise's reference solution, as a function to call: for a notebook cell that goes on with the
    reference until the learner's own version passes (``show_solution`` prints its source instead)."""
    return _exercise(exercise_id).solution


def show_solution(exercise_id: str) -> str:
    """Print (and return) the reference solution's source. The docstrings are English, so in another
    language the docstring gives way to a header in that language: the contract is the one in the
    exercise cell's own docstring, already in the notebook's language."""
    src = textwrap.dedent(inspect.getsource(_exercise(exercise_id).solution))
    if language() != "en":
        src = tr("# Reference solution of {id}; its contract is the docstring of the exercise cell above.\n",
                 id=exercise_id) + _without_docstring(src)
    print(src)
    return src
