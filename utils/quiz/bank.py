"""The self-tests' question banks, in the order they are asked.

``QUESTIONS`` is notebook 09's self-test, on the main notebooks 00 to 08; ``APPENDIX`` is the
self-test that closes the appendices (notebooks 10 to 13), asked at the end of notebook 13.
Every question is written once with its English and Chinese side by side (``ask``, checked by
``check_pair`` as it is written); importing the banks computes nothing and builds no model.
"""
from __future__ import annotations

from .appendix import APPENDIX
from .bank_00_04 import BASICS
from .bank_05_06 import SAMPLING_AND_METRICS
from .bank_07_08 import BUG_LAB_AND_BEYOND
from .question import Question

QUESTIONS: list[Question] = [*BASICS, *SAMPLING_AND_METRICS, *BUG_LAB_AND_BEYOND]


def questions_for(*notebooks: int) -> list[Question]:
    """The questions tagged with any of ``notebooks``, from either bank (``questions_for(3)`` after
    notebook 03, ``questions_for(12)`` after appendix 12)."""
    return [q for q in (*QUESTIONS, *APPENDIX) if q.notebook in notebooks]
