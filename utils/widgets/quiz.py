"""The self-test of notebook 09 as widgets: one card per question, a check button, feedback.

A question and how it is graded are ``utils/question.py``, the question bank is ``utils/quiz.py``;
this module only draws them. The quiz works without a browser or a kernel, which is how the tests drive it::

    quiz = Quiz(QUESTIONS)
    quiz.answer(0, "K and V")     # sets the input widget and clicks "check"
    quiz.self_mark(3, True)       # open questions: after "check", the student marks themselves
    quiz.score                    # (correct, done, total)

A card shows nothing of its answer until the student has answered it and pressed "check"; the
full answer key is ``utils.quiz.answer_key``, printed only when asked for. The score lives in the
Python objects only: it is kept for the current session, never saved.
"""
from __future__ import annotations

import html as _html
import re
from typing import Sequence

import ipywidgets as widgets
from IPython.display import display

from ..course import SERIES
from ..question import KIND_NAMES, PLACEHOLDER, Question, parse_true_false


def _rich(text: str) -> str:
    """Escape ``text`` for HTML; `backticks` become <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", _html.escape(text))


class Quiz:
    """The quiz as widgets: one card per question with an input, a check button and feedback.

    ``widget`` is the box to display; ``inputs[i]``, ``check_buttons[i]``, ``feedback[i]`` and
    (open questions) ``mark_buttons[i]`` = (got it, missed it) are the parts of card ``i``.
    ``results[i]`` is None until question ``i`` is done, then True or False.
    """

    def __init__(self, questions: Sequence[Question], title: str = "Self-test") -> None:
        self.questions = list(questions)
        if not self.questions:
            raise ValueError("a quiz needs at least one question")
        self.results: list[bool | None] = [None] * len(self.questions)
        self.inputs, self.check_buttons, self.feedback = [], [], []
        self.mark_buttons: dict[int, tuple[widgets.Button, widgets.Button]] = {}
        self._marks_box: dict[int, widgets.HBox] = {}
        self.score_html = widgets.HTML()
        cards = [self._card(i, q) for i, q in enumerate(self.questions)]
        self.widget = widgets.VBox([widgets.HTML(f"<h3>{_html.escape(title)}</h3>"), self.score_html, *cards])
        self._show_score()

    def _card(self, i: int, q: Question) -> widgets.VBox:
        nb_title = SERIES[q.notebook][1]
        head = widgets.HTML(
            f"<b>Q{i + 1}.</b> <i>({KIND_NAMES[q.kind]} · notebook {q.notebook:02d} {_html.escape(nb_title)})</i>"
            f"<br>{_rich(q.prompt)}"
        )
        if q.kind == "choice":
            box = widgets.Dropdown(options=[PLACEHOLDER, *q.options], value=PLACEHOLDER,
                                   layout=widgets.Layout(width="90%"))
        elif q.kind == "truefalse":
            box = widgets.Dropdown(options=[PLACEHOLDER, "True", "False"], value=PLACEHOLDER)
        else:
            box = widgets.Text(placeholder="your answer" if q.kind == "fill" else "your answer, in a sentence or two",
                               layout=widgets.Layout(width="90%"))
        check = widgets.Button(description="check")
        check.on_click(lambda _b, i=i: self.check(i))
        fb = widgets.HTML()
        parts = [head, widgets.HBox([box, check])]
        if q.kind == "open":
            got = widgets.Button(description="I had it", button_style="success")
            missed = widgets.Button(description="I missed it", button_style="warning")
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
        if value == PLACEHOLDER or not str(value).strip():
            self.feedback[i].value = "<span style='color:#b00'>Answer first, then check.</span>"
            return None
        why = f"<br><b>Why:</b> {_rich(q.explanation)}"
        if q.kind == "open":
            self.feedback[i].value = f"<b>Model answer:</b> {_rich(str(q.answer))}{why}<br>Did you have it?"
            self._marks_box[i].layout.display = "flex"
            return None
        ok = bool(q.is_correct(value))
        self.results[i] = ok
        right = "<span style='color:#080'>&#10004; correct</span>"
        wrong = f"<span style='color:#b00'>&#10008; not quite</span> — the answer is <b>{_rich(q.answer_text())}</b>"
        verdict = right if ok else wrong
        self.feedback[i].value = verdict + why
        self._show_score()
        return ok

    def self_mark(self, i: int, correct: bool) -> None:
        """Open question ``i``: the student's own verdict after reading the model answer."""
        if self.questions[i].kind != "open":
            raise ValueError(f"question {i} is a {self.questions[i].kind} question, graded automatically")
        self.results[i] = bool(correct)
        self.feedback[i].value = self.feedback[i].value.split("<br>Did you have it?")[0] + (
            "<br>&#10004; marked as known" if correct else "<br>&#10008; marked to revisit")
        self._show_score()

    def answer(self, i: int, value) -> bool | None:
        """Type or pick ``value`` for question ``i`` and click its check button; returns the grade."""
        q = self.questions[i]
        if q.kind == "truefalse":
            b = parse_true_false(value)
            if b is None:
                raise ValueError(f"question {i} is true/false; got {value!r}")
            value = str(b)
        if q.kind in ("choice", "truefalse"):
            if value not in self.inputs[i].options:
                raise ValueError(f"{value!r} is not an option of question {i}: {self.inputs[i].options}")
        else:
            value = str(value)
        self.inputs[i].value = value
        self.check_buttons[i].click()
        return None if q.kind == "open" else self.results[i]

    @property
    def score(self) -> tuple[int, int, int]:
        """(correct, done, total)."""
        done = [r for r in self.results if r is not None]
        return sum(done), len(done), len(self.results)

    def _show_score(self) -> None:
        correct, done, total = self.score
        self.score_html.value = f"<b>Score:</b> done {done} / {total} · correct {correct}"

    def _ipython_display_(self) -> None:
        bundle = getattr(self.widget, "_repr_mimebundle_", None)
        if not callable(bundle):  # ipywidgets 7
            display(self.widget)
            return
        data = bundle()  # ipywidgets 8: the widget view, plus a readable text for where it cannot run
        data["text/plain"] = (f"[quiz: {len(self.questions)} questions; run the notebook in Jupyter or Colab "
                              "to answer them]")
        display(data, raw=True)
