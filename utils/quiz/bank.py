"""The self-test's question bank, in the order notebook 09 asks it: notebooks 00 to 08, then the appendices.

Every question is written once with its English and Chinese side by side (``ask``, checked by
``check_pair`` as it is written); importing the bank computes nothing and builds no model.
"""
from __future__ import annotations

from .appendix import APPENDIX
from .bank_00_04 import BASICS
from .bank_05_06 import SAMPLING_AND_METRICS
from .bank_07_08 import BUG_LAB_AND_BEYOND
from .question import Question

QUESTIONS: list[Question] = [*BASICS, *SAMPLING_AND_METRICS, *BUG_LAB_AND_BEYOND, *APPENDIX]


def questions_for(*notebooks: int) -> list[Question]:
    """The questions tagged with any of ``notebooks`` (e.g. ``questions_for(3)`` after notebook 03)."""
    return [q for q in QUESTIONS if q.notebook in notebooks]
