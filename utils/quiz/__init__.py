"""The self-test of notebook 09: a question bank in English and Chinese, and how an answer is graded.

Rooms, one face (``from utils.quiz import QUESTIONS, questions_for, check_answer...``):

* ``question.py``   one question in one language (``Question``), how it is graded and printed
                    (``check_answer``, ``question_sheet``, ``answer_key``), ``localized``;
* ``bilingual.py``  how the bank writes a question once with both languages (``ask``) and the one
                    check of the pair (``check_pair``);
* ``bank.py``       ``QUESTIONS`` in order and ``questions_for``, from ``bank_00_04.py``,
                    ``bank_05_06.py``, ``bank_07_08.py`` and ``appendix.py`` (notebooks 10 to 13);
* ``numbers.py``    what the answers are computed from, on first read (a real prefill, the bug lab...).

The widget that asks the questions is ``utils.widgets.Quiz``; nothing here imports it.
"""
from __future__ import annotations

from .bank import QUESTIONS, questions_for  # noqa: F401
from .bilingual import LANGUAGES, ask, check_pair  # noqa: F401
from .question import (  # noqa: F401
    KIND_NAMES, KINDS, PLACEHOLDER, Question, answer_key, as_option, check_answer, format_answer, localized,
    parse_true_false, question_sheet, range_answers, true_false_label,
)
