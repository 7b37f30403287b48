"""The self-tests as widgets (notebook 09's, and the appendices' at the end of 13): one card per question.

A question and how it is graded are ``utils/quiz/question.py``, the question bank is ``utils.quiz``
(``QUESTIONS``); this module only draws them. The quiz works without a browser or a kernel, which is how the tests drive it::

    quiz = Quiz(QUESTIONS)
    quiz.answer(0, "K and V")     # sets the input widget and clicks "check"
    quiz.self_mark(3, True)       # open questions: after "check", the student marks themselves
    quiz.score                    # (right at the first attempt, done, total)

A card shows nothing of its answer until the student has answered it and pressed "check"; the
full answer key is ``utils.quiz.answer_key``, printed only when asked for. Only the first attempt
at a question scores (``utils.quiz.Scorecard``): a check reveals the answer, so a second answer is
marked "right on retry" at best. The score lives in the Python objects only: it is kept for the
current session, never saved.

After ``set_language("zh")`` a quiz made from the bank shows each question in Chinese (every bank
question holds both languages: ``utils.quiz.localized``) and every label in Chinese; ``answer`` also
takes the English option.
"""
from __future__ import annotations

import html as _html
import re
from typing import Sequence

import ipywidgets as widgets
from IPython.display import display

from ..series import SERIES
from ..i18n import tr
from ..quiz.question import KIND_NAMES, PLACEHOLDER, Question, as_option, localized, parse_true_false, true_false_label
from ..quiz.scoring import Scorecard


def _rich(text: str) -> str:
    """Escape ``text`` for HTML; `backticks` become <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", _html.escape(text))


class Quiz:
    """The quiz as widgets: one card per question with an input, a check button and feedback.

    ``widget`` is the box to display; ``inputs[i]``, ``check_buttons[i]``, ``feedback[i]`` and
    (open questions) ``mark_buttons[i]`` = (got it, missed it) are the parts of card ``i``.
    ``card`` is the ``Scorecard``; ``results[i]`` is None until question ``i`` is done, then the
    grade of its first attempt.
    """

    def __init__(self, questions: Sequence[Question], title: str | None = None) -> None:
        self.originals = list(questions)  # as given; ``questions`` are in the current language
        self.questions = localized(self.originals)
        if not self.questions:
            raise ValueError("a quiz needs at least one question")
        title = tr("Self-test") if title is None else title
        self._placeholder, self._did_you = tr(PLACEHOLDER), tr("<br>Did you have it?")
        self.card = Scorecard(len(self.questions))
        self.inputs, self.check_buttons, self.feedback = [], [], []
        self.mark_buttons: dict[int, tuple[widgets.Button, widgets.Button]] = {}
        self._marks_box: dict[int, widgets.HBox] = {}
        self.score_html = widgets.HTML()
        cards = [self._card(i, q) for i, q in enumerate(self.questions)]
        self.widget = widgets.VBox([widgets.HTML(f"<h3>{_html.escape(title)}</h3>"), self.score_html, *cards])
        self._show_score()

    def _card(self, i: int, q: Question) -> widgets.VBox:
        nb_title = tr(SERIES[q.notebook][1])
        head = widgets.HTML(
            tr("<b>Q{number}.</b> <i>({kind} · notebook {notebook:02d} {title})</i>", number=i + 1,
               kind=KIND_NAMES[q.kind], notebook=q.notebook, title=_html.escape(nb_title))
            + f"<br>{_rich(q.prompt)}"
            + (f"<pre style='margin:4px 0'>{_html.escape(q.code)}</pre>" if q.code else "")
        )
        empty = self._placeholder
        if q.kind == "choice":
            box = widgets.Dropdown(options=[empty, *q.options], value=empty, layout=widgets.Layout(width="90%"))
        elif q.kind == "truefalse":
            box = widgets.Dropdown(options=[empty, true_false_label(True), true_false_label(False)], value=empty)
        else:
            box = widgets.Text(placeholder=tr("your answer") if q.kind == "fill"
                               else tr("your answer, in a sentence or two"), layout=widgets.Layout(width="90%"))
        check = widgets.Button(description=tr("check"))
        check.on_click(lambda _b, i=i: self.check(i))
        fb = widgets.HTML()
        parts = [head, widgets.HBox([box, check])]
        if q.kind == "open":
            got = widgets.Button(description=tr("I had it"), button_style="success")
            missed = widgets.Button(description=tr("I missed it"), button_style="warning")
            got.on_click(lambda _b, i=i: self.self_mark(i, True))
            missed.on_click(lambda _b, i=i: self.self_mark(i, False))
            marks = widgets.HBox([got, missed], layout=widgets.Layout(display="none"))  # shown after "check"
            self.mark_buttons[i] = (got, missed)
            parts += [fb, marks]
            self._marks_box[i] = marks
        else:
            parts.append(fb)
        self.inputs.append(box)
        self.check_buttons.append(check)
        self.feedback.append(fb)
        return widgets.VBox(parts, layout=widgets.Layout(border="1px solid #ddd", padding="6px", margin="4px 0"))

    # --- what a click does ---
    def check(self, i: int) -> bool | None:
        """Grade question ``i`` from its input widget; show the answer and the explanation."""
        q, value = self.questions[i], self.inputs[i].value
        if value == self._placeholder or not str(value).strip():
            self.feedback[i].value = tr("<span style='color:#b00'>Answer first, then check.</span>")
            return None
        why = tr("<br><b>Why:</b> {why}", why=_rich(q.explanation))
        if q.kind == "open":
            marked = self.card.first[i] is not None  # a second check shows the answer again, not the marks
            self.feedback[i].value = tr("<b>Model answer:</b> {answer}", answer=_rich(str(q.answer))) + why + (
                "" if marked else self._did_you)
            self._marks_box[i].layout.display = "none" if marked else "flex"
            return None
        ok = bool(q.is_correct(value))
        first = self.card.record(i, ok)
        right = tr("<span style='color:#080'>&#10004; correct</span>")
        wrong = tr("<span style='color:#b00'>&#10008; not quite</span> — the answer is <b>{answer}</b>",
                   answer=_rich(q.answer_text()))
        verdict = right if ok else wrong
        if not first:  # the answer was shown at the first check: this one does not score
            verdict += tr(" <i>(a retry: only the first answer scores)</i>")
        self.feedback[i].value = verdict + why
        self._show_score()
        return ok

    def self_mark(self, i: int, correct: bool) -> None:
        """Open question ``i``: the student's own verdict after reading the model answer."""
        if self.questions[i].kind != "open":
            raise ValueError(f"question {i} is a {self.questions[i].kind} question, graded automatically")
        if self.card.first[i] is not None:  # marked already: the first mark stands
            return
        self.card.record(i, correct)
        self.feedback[i].value = self.feedback[i].value.split(self._did_you)[0] + (
            tr("<br>&#10004; marked as known") if correct else tr("<br>&#10008; marked to revisit"))
        self._marks_box[i].layout.display = "none"
        self._show_score()

    def answer(self, i: int, value) -> bool | None:
        """Type or pick ``value`` for question ``i`` and click its check button; returns the grade of this
        answer (the score keeps the first one)."""
        q = self.questions[i]
        if q.kind == "truefalse":
            b = parse_true_false(value)
            if b is None:
                raise ValueError(f"question {i} is true/false; got {value!r}")
            value = true_false_label(b)
        value = as_option(self.originals[i], q, value)
        if q.kind in ("choice", "truefalse"):
            if value not in self.inputs[i].options:
                raise ValueError(f"{value!r} is not an option of question {i}: {self.inputs[i].options}")
        else:
            value = str(value)
        self.inputs[i].value = value
        self.check_buttons[i].click()
        return None if q.kind == "open" else self.card.latest[i]

    @property
    def results(self) -> list[bool | None]:
        """Per question: None until done, then the grade of the first attempt (the one that scores)."""
        return list(self.card.first)

    @property
    def score(self) -> tuple[int, int, int]:
        """(right at the first attempt, done, total)."""
        return self.card.score

    def _show_score(self) -> None:
        correct, done, total = self.score
        self.score_html.value = tr("<b>Score:</b> done {done} / {total} · right first time {correct}", done=done,
                                   total=total, correct=correct) + (
            tr(" · right on retry {n} (not scored)", n=self.card.right_on_retry) if self.card.right_on_retry else "")

    def _ipython_display_(self) -> None:
        bundle = getattr(self.widget, "_repr_mimebundle_", None)
        if not callable(bundle):  # ipywidgets 7
            display(self.widget)
            return
        data = bundle()  # ipywidgets 8: the widget view, plus a readable text for where it cannot run
        data["text/plain"] = tr("[quiz: {n} questions; run the notebook in Jupyter or Colab to answer them]",
                                n=len(self.questions))
        display(data, raw=True)
