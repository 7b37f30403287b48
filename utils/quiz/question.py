"""One question of the self-test (notebook 09): its kind, its answer, and how an answer is graded.

Four kinds of question:

    choice      pick one option from a dropdown
    truefalse   True or False
    fill        type a short answer; case and whitespace do not matter, numbers compare as numbers
                (a fraction such as 7/4, a unit such as "2 GiB" or "2048 MiB": ``grading.py``)
    open        free text; "check" reveals a model answer and the student marks themselves

A ``Question`` speaks one language. The bank writes each of its questions once, in English and
Chinese side by side (``ask`` in ``bilingual.py``), and every language's ``Question`` holds the
others in ``languages``: ``localized`` picks the one of the current language (``set_language``).
An answer or explanation that needs the course package may be given as a function of no
argument: it runs the first time it is read.

As text, nothing prints an answer before the learner has given one: ``question_sheet`` prints the
questions only, ``check_answer`` grades one answer and only then shows that question's answer and
why, and ``answer_key`` is the full key, a teacher's copy printed only when asked for.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

from ..i18n import Names, in_language, language, tr
from .grading import UNIT_NAMES, UNITS, same
from .scoring import Scorecard

KINDS = ("choice", "truefalse", "fill", "open")


KIND_NAMES = Names({"choice": "single choice", "truefalse": "true / false", "fill": "fill in",
                   "open": "open question"})
PLACEHOLDER = "(choose)"  # the dropdowns' empty choice; shown as tr(PLACEHOLDER)
_TRUE_FALSE = {True: {"en": "True", "zh": "对"}, False: {"en": "False", "zh": "错"}}
_TRUE_FALSE_WORDS = {"true": True, "t": True, "yes": True, "false": False, "f": False, "no": False,
                     "对": True, "是": True, "正确": True, "错": False, "否": False, "错误": False}


@dataclass(frozen=True)
class Question:
    """One question: ``Question(notebook, kind, prompt, answer, explanation, options=..., seed=...)``.

    The answer: the right option (choice), a bool (truefalse), a number or string, or a tuple of
    accepted strings (fill), or a model answer (open). The answer and the explanation may also be
    given as functions of no argument that compute them: they run on first read of ``answer`` or
    ``explanation``, and the result is kept. ``notebook``: the notebook (0-8, or an appendix 10-13) that teaches it.
    ``seed``: one of the four questions every version of the self-test keeps. ``languages``: the same
    question in each language it is written in ({"en": ..., "zh": ...} for the bank's, this one among
    them); empty for a question written in one language only, which every language shows as it is.
    """

    notebook: int
    kind: str
    prompt: str
    given_answer: object  # the answer, or a function that computes it: read ``answer``
    given_explanation: object  # the explanation, or a function that computes it: read ``explanation``
    options: tuple[str, ...] = ()
    seed: bool = False
    unit: str | None = None  # fill-ins: what a number is counted in (a key of grading.UNITS)
    code: str = ""  # a snippet to read and predict ("run this, predict, then check"), shown under the prompt
    languages: dict[str, Question] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind {self.kind!r} is not one of {KINDS}")
        if self.kind == "choice" and (PLACEHOLDER in self.options or len(set(self.options)) != len(self.options)):
            raise ValueError(f"choice question needs distinct options: {self.prompt!r}")
        if self.unit is not None and (self.kind != "fill" or self.unit.casefold() not in UNITS):
            raise ValueError(f"a unit is for a fill-in question, one of {sorted(UNITS)}: got {self.unit!r}")
        if not callable(self.given_answer):  # a computed answer is checked when it is first read
            self._checked(self.given_answer)

    @cached_property
    def answer(self):
        """The right answer (computed on first read when it was given as a function)."""
        given = self.given_answer
        return self._checked(given()) if callable(given) else given

    @cached_property
    def explanation(self) -> str:
        """Why the answer is right (computed on first read when it was given as a function)."""
        given = self.given_explanation
        return given() if callable(given) else given

    def _checked(self, answer):
        if self.kind == "choice" and answer not in self.options:
            raise ValueError(f"choice question needs options that include its answer {answer!r}: {self.prompt!r}")
        if self.kind == "truefalse" and not isinstance(answer, bool):
            raise ValueError(f"a true/false answer must be a bool, got {answer!r}")
        return answer

    def in_language(self, lang: str) -> Question:
        """This question as it is asked in ``lang``: its twin there, or itself if it has none."""
        return self.languages.get(lang, self)

    def is_correct(self, value) -> bool | None:
        """Whether ``value`` answers the question (None for open questions: the student decides)."""
        if self.kind == "open":
            return None
        if self.kind == "choice":
            return value == self.answer
        if self.kind == "truefalse":
            return parse_true_false(value) is self.answer
        accepted = self.answer if isinstance(self.answer, tuple) else (self.answer,)
        return any(same(value, a, self.unit) for a in accepted)

    def answer_text(self) -> str:
        """The right answer, written out (a true/false one in the current language)."""
        if isinstance(self.answer, bool):
            return true_false_label(self.answer)
        if isinstance(self.answer, tuple):
            return " / ".join(format_answer(a) for a in self.answer)
        if self.unit:
            name = in_language(UNIT_NAMES[self.unit]) if self.unit in UNIT_NAMES else self.unit
            return f"{format_answer(self.answer)} {name}"
        return format_answer(self.answer)


def format_answer(x) -> str:
    """A number or text as the answer key writes it: a whole float without its ".0"."""
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)


def range_answers(span: str) -> dict[str, tuple[str, ...]]:
    """The accepted ways to write a range of positions "a..b", by language: a..b, a-b, a to b (a 到 b),
    or every position listed."""
    first, last = map(int, span.split(".."))
    listed = ", ".join(map(str, range(first, last + 1)))
    return {"en": (span, f"{first}-{last}", f"{first} to {last}", listed),
            "zh": (span, f"{first}-{last}", f"{first} 到 {last}", listed)}


def parse_true_false(value) -> bool | None:
    """``value`` as a bool: True/False, or a word such as "true", "yes", "f", 对, 错, 是, 否, 正确, 错误
    (in either language); None if it is neither."""
    if isinstance(value, bool):
        return value
    return _TRUE_FALSE_WORDS.get(str(value).strip().casefold())


def true_false_label(value: bool) -> str:
    """How a true/false answer is written in the current language: "True" / "False", 对 / 错."""
    return in_language(_TRUE_FALSE[bool(value)])


def localized(questions: Sequence[Question]) -> list[Question]:
    """``questions`` in the current language: each one's twin in that language (a question written in
    one language only is kept as it is)."""
    lang = language()
    return [q.in_language(lang) for q in questions]


def as_option(original: Question, q: Question, value):
    """``value`` as an option of ``q``, the twin of ``original``: an option of the English question
    becomes the option at the same index (so an English answer works in Chinese too)."""
    if q.kind == "choice" and value not in q.options and value in original.options:
        return q.options[original.options.index(value)]
    return value


# --- the questions as text --------------------------------------------------------------------------

def _lines(q: Question, number: int) -> list[str]:
    return [tr("Q{number}. [notebook {notebook:02d} · {kind}] {prompt}", number=number, notebook=q.notebook,
               kind=KIND_NAMES[q.kind], prompt=q.prompt),
            *(f"      {line}".rstrip() for line in q.code.splitlines()),
            *(f"      {letter}) {o}" for letter, o in zip("abcdefgh", q.options))]


def question_sheet(questions: Sequence[Question]) -> str:
    """Every question (its options lettered a, b, c...) as plain text to print: no answers."""
    return "\n\n".join("\n".join(_lines(q, i + 1)) for i, q in enumerate(localized(questions)))


def answer_key(questions: Sequence[Question]) -> str:
    """Every question with its answer and explanation, as plain text to print (a teacher's copy)."""
    return "\n\n".join("\n".join([*_lines(q, i + 1), tr("   Answer: {answer}", answer=q.answer_text()),
                                   tr("   Why: {why}", why=q.explanation)])
                       for i, q in enumerate(localized(questions)))


def check_answer(questions: Sequence[Question], number: int, value, card: Scorecard | None = None) -> bool | None:
    """Grade ``value`` as the answer to question ``number`` (1-based, as the sheet numbers them), then
    print the verdict, the answer and why: a card's "check" button, for where widgets do not run.
    A choice may be answered by its letter on the sheet. Returns the grade of this answer (None for
    an open question: compare your answer with the model answer yourself). With a ``Scorecard``,
    the attempt is recorded there, and only the first attempt at a question scores."""
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(questions):
        raise ValueError(tr("number must be a question number from 1 to {n}, got {number!r}", n=len(questions),
                            number=number))
    if not str(value).strip():
        raise ValueError(tr("answer question {number} first: got {value!r}", number=number, value=value))
    original = questions[number - 1]
    q = localized([original])[0]
    if q.kind == "choice":
        value = dict(zip("abcdefgh", q.options)).get(str(value).strip().casefold(), value)
        value = as_option(original, q, value)
        if value not in q.options:
            raise ValueError(tr("question {number} is a choice: answer with a letter from a to {last} or an option's "
                                "text, got {value!r}", number=number, last="abcdefgh"[len(q.options) - 1], value=value))
    if q.kind == "truefalse" and parse_true_false(value) is None:
        raise ValueError(tr("question {number} is true/false; got {value!r}", number=number, value=value))
    why = tr("   Why: {why}", why=q.explanation)
    if q.kind == "open":
        print(tr("Q{number}. Model answer: {answer}", number=number, answer=q.answer) + "\n" + why)
        return None
    ok = bool(q.is_correct(value))
    retry = card is not None and not card.record(number - 1, ok)
    verdict = tr("✓ correct") if ok else tr("✗ not quite: the answer is {answer}", answer=q.answer_text())
    if retry:
        verdict += tr(" (a retry: only the first answer scores)")
    print(tr("Q{number}. {verdict}", number=number, verdict=verdict) + "\n" + why)
    return ok
