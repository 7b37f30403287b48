"""The self-test's score: the first attempt at each question counts.

A check reveals the right answer and why, so a second answer proves nothing: it is recorded (a
wrong first answer followed by the right one is "right on retry") but it never changes the score.
The widget (``utils.widgets.Quiz``) keeps one ``Scorecard``; where widgets do not run, pass one to
``check_answer`` and read it the same way::

    card = Scorecard(len(QUESTIONS))
    check_answer(QUESTIONS, 2, "False", card)   # wrong: the answer and why are shown
    check_answer(QUESTIONS, 2, "True", card)    # right, but on retry
    card.score                                  # (0, 1, n): (correct first time, done, total)
    card.right_on_retry                         # 1
"""
from __future__ import annotations

FIRST_RIGHT, RIGHT_ON_RETRY, WRONG = "right", "right on retry", "wrong"


class Scorecard:
    """First-attempt grades of ``n`` questions (None until a question is done) and the latest ones."""

    def __init__(self, n: int) -> None:
        self.first: list[bool | None] = [None] * n
        self.latest: list[bool | None] = [None] * n

    def record(self, i: int, correct: bool) -> bool:
        """Record an attempt at question ``i`` (0-based); returns whether it was the first."""
        first = self.first[i] is None
        if first:
            self.first[i] = bool(correct)
        self.latest[i] = bool(correct)
        return first

    def status(self, i: int) -> str | None:
        """"right", "right on retry", "wrong" or None (not done yet)."""
        if self.first[i] is None:
            return None
        if self.first[i]:
            return FIRST_RIGHT
        return RIGHT_ON_RETRY if self.latest[i] else WRONG

    @property
    def score(self) -> tuple[int, int, int]:
        """(right at the first attempt, done, total)."""
        done = [r for r in self.first if r is not None]
        return sum(done), len(done), len(self.first)

    @property
    def right_on_retry(self) -> int:
        """Questions answered wrong first, then right: they do not score."""
        return sum(self.status(i) == RIGHT_ON_RETRY for i in range(len(self.first)))
