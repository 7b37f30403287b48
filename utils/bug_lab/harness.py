"""The bug lab's bench: run the recompute check on a broken variant, and sum the results up.

The broken variants themselves, one section per bug, are in ``catalogue.py``; the puzzles built
from them in ``mysteries.py``; notebook 07 reaches all three through ``utils.bug_lab``. This module
holds what every bug shares:

* ``run_check``: ``compare_with_recompute`` that never lets an error escape. Some bugs make
  torch raise instead of giving wrong numbers; the error and the step it happened at become
  an ``Outcome``, so a notebook cell never stops.
* ``show_diff``: the lines that differ between a broken and a fixed function or class, their
  comments and docstrings in the learner's language (``speak``).
* ``table``: the bug table (symptom, cause, check, first divergence) as text (``text_table``).
"""
from __future__ import annotations

import ast
import difflib
import inspect
import io
import textwrap
import tokenize
from dataclasses import dataclass

import torch

from ..generate import decode_step, prefill
from ..i18n import catalogue, display_width, language, pad, tr
from ..recompute import TOL, RecomputeReport, compare_with_recompute  # TOL: the course's one tolerance

N_STEPS = 6  # decode steps each bug check runs


@dataclass
class Outcome:
    """A check's result: a ``RecomputeReport``, or the error torch raised and the step it raised at.

    After an error, ``report`` (if not None) covers the steps before ``error_step``.
    """

    report: RecomputeReport | None
    error: str | None = None
    error_step: int | None = None

    @property
    def caught(self) -> bool:
        """True when the check noticed something: an error, or logits that diverge."""
        return self.error is not None or (self.report is not None and not self.report.ok)

    @property
    def ok(self) -> bool:
        """True when the variant passes: no error, and cached == recompute within ``tol`` at every step."""
        return not self.caught

    @property
    def first_step(self) -> int | None:
        """Step of the first divergence or error (None when all is well)."""
        return self.error_step if self.error is not None else self.report.first_bad_step

    def short(self) -> str:
        """Like ``summary``, shorter (for tables)."""
        if self.error is not None:
            return tr("raises at step {step}", step=self.error_step)
        r = self.report
        if r.ok:
            return tr("OK")
        return tr("step {step} (pos {position})", step=r.first_bad_step, position=r.first_bad_position)

    def summary(self) -> str:
        """One deterministic line (no float values): what happened and where."""
        if self.error is not None:
            return tr("raises {error} at step {step}", error=self.error.split(':')[0], step=self.error_step)
        r = self.report
        if r.ok:
            return tr("OK: {n} steps equal within {tol:g}", n=len(r.max_diffs), tol=r.tol)
        return tr("diverges at step {step} (position {position})", step=r.first_bad_step, position=r.first_bad_position)


def run_check(model, ids: torch.Tensor, n_steps: int = N_STEPS, *, tol: float = TOL, **kwargs) -> Outcome:
    """``compare_with_recompute`` that turns a torch error into an ``Outcome`` instead of raising.

    ``kwargs`` go to ``compare_with_recompute`` (``prefill_fn``, ``step_fn``, ``attention_mask``).
    Without a ``step_fn`` the cached path decodes with ``decode_step``, through the model's
    modules, so a broken cache class plugged in by ``prefill_fn`` is the one that runs.
    Step 0 is the prefill, step s the s-th decode step.
    """
    step = {"n": 0}
    prefill_fn = kwargs.pop("prefill_fn", None) or prefill
    step_fn = kwargs.pop("step_fn", None) or decode_step

    def counted_step(*args):
        step["n"] += 1
        return step_fn(*args)

    try:
        report = compare_with_recompute(model, ids, n_steps, tol=tol, prefill_fn=prefill_fn,
                                        step_fn=counted_step, **kwargs)
    except NotImplementedError:
        raise  # a RuntimeError to Python, but an exercise stub not written yet, not a torch error
    except (RuntimeError, ValueError) as err:
        message = str(err).strip().splitlines()[0] if str(err).strip() else ""
        partial = None
        if step["n"] >= 1:  # the steps before the error did run: report them too
            partial = compare_with_recompute(model, ids, step["n"] - 1, tol=tol, prefill_fn=prefill_fn,
                                             step_fn=step_fn, **kwargs)
        return Outcome(partial, f"{type(err).__name__}: {message}", step["n"])
    return Outcome(report)


def show_diff(broken, fixed) -> str:
    """Unified diff between the source of two functions, methods or classes, with their comments and
    docstrings in the current language (``speak``); the code itself is the same in every language."""
    def lines(code) -> list[str]:
        return speak(textwrap.dedent(inspect.getsource(code))).splitlines()

    diff = difflib.unified_diff(lines(broken), lines(fixed), tr("broken"), tr("fixed"), n=2, lineterm="")
    return "\n".join(diff)


def speak(source: str) -> str:
    """``source`` (Python code) with each comment and docstring in the current language.

    The English text of a comment (after ``# ``) or of a docstring is its catalogue key: the bug lab's
    are in ``utils/i18n/zh_exercises.py``. A text the catalogue does not hold (a learner's own comment,
    in any language) stays as it is written; so does every line of code."""
    if language() == "en":
        return source
    said = catalogue(language())
    lines = source.splitlines(keepends=True)
    for node in ast.walk(ast.parse(source)):  # docstrings: the first statement of a class or function, a str
        body = getattr(node, "body", None)
        if not (isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            continue
        doc = body[0].value
        text = inspect.cleandoc(doc.value)
        if doc.lineno != doc.end_lineno or text not in said:  # the course's docstrings here are one line each
            continue
        row = doc.lineno - 1
        line = lines[row].encode()  # ast counts columns in UTF-8 bytes
        start, end = line[:doc.col_offset].decode(), line[doc.end_col_offset:].decode()
        quote = ast.get_source_segment(source, doc)[:3]
        quote = quote if quote in ('"""', "'''") else quote[:1]
        lines[row] = f"{start}{quote}{said[text]}{quote}{end}"
    for tok in tokenize.generate_tokens(io.StringIO("".join(lines)).readline):  # comments run to the end of a line
        if tok.type == tokenize.COMMENT and tok.string[1:].strip() in said:
            row, col = tok.start[0] - 1, tok.start[1]
            ending = lines[row][len(lines[row].rstrip("\r\n")):]
            lines[row] = lines[row][:col] + "# " + said[tok.string[1:].strip()] + ending
    return "".join(lines)


def table(results, hashes: dict[str, str] | None = None) -> str:
    """The bug table as text: symptom -> cause -> check, and where the broken code first goes wrong.

    ``results``: ``(bug, broken Outcome, fixed Outcome)`` triples from ``bugs.run_all``; with
    ``hashes`` (from ``bugs.use_cache_hashes``) a last row checks the belief that ``use_cache``
    changes weights. Whether every fix passes is a claim: the notebook checks it, not the table.
    """
    head = tuple(tr(h) for h in ("bug", "symptom", "cause", "check / fix", "first divergence"))
    rows = [(tr(b.title), tr(b.symptom), tr(b.cause), tr(b.check), broken.short()) for b, broken, _ in results]
    if hashes is not None:
        myth = ("use_cache changes weights?", "none: a myth", "cache holds activations", "hash the state_dict")
        rows.append((*map(tr, myth), tr("hashes equal: {equal}", equal=len(set(hashes.values())) == 1)))
    return text_table(head, rows)


def text_table(head: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """Rows of strings as an aligned text table under ``head`` (the bug table, a mystery's probe).

    Widths count display columns: a Chinese character takes two in a monospace font."""
    widths = [max(display_width(r[i]) for r in rows + [head]) for i in range(len(head))]

    def line(cells) -> str:
        return " | ".join(pad(c, w) for c, w in zip(cells, widths))
    lines = [line(head), "-+-".join("-" * w for w in widths)] + [line(r).rstrip() for r in rows]
    return "\n".join(lines)
