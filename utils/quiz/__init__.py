"""The self-tests: notebook 09's on notebooks 00 to 08, and the one that closes the appendices 10 to 13 (at
the end of notebook 13); question banks in English and Chinese, how an answer is graded and scored.

Rooms, one face (``from utils.quiz import QUESTIONS, APPENDIX, questions_for, check_answer...``):

* ``question.py``   one question in one language (``Question``), how it is graded and printed
                    (``check_answer``, ``question_sheet``, ``answer_key``), ``localized``;
* ``bilingual.py``  how the bank writes a question once with both languages (``ask``) and the one
                    check of the pair (``check_pair``);
* ``grading.py``    a typed fill-in against the answer: numbers as numbers, fractions, units ("2 GiB");
* ``scoring.py``    ``Scorecard``: only the first attempt at a question scores (a retry is marked as such);
* ``bank.py``       ``QUESTIONS`` (00 to 08, from ``bank_00_04.py``, ``bank_05_06.py``, ``bank_07_08.py``),
                    ``APPENDIX`` (``appendix.py``, notebooks 10 to 13) and ``questions_for``;
* ``numbers.py``    what the answers are computed from, on first read (a real prefill, the bug lab...);
* ``snippet.py``    the "run this, predict, then check" questions' answers, by running their code.

The widget that asks the questions is ``utils.widgets.Quiz``; nothing here imports it.
"""
from __future__ import annotations

from .bank import APPENDIX, QUESTIONS, questions_for  # noqa: F401
from .bilingual import LANGUAGES, ask, check_pair  # noqa: F401
from .scoring import Scorecard  # noqa: F401
from .question import (  # noqa: F401
    KIND_NAMES, KINDS, PLACEHOLDER, Question, answer_key, as_option, check_answer, format_answer, localized,
    parse_true_false, question_sheet, range_answers, true_false_label,
)
