"""The stop-string exercise names the mistake a learner made, not a neighbouring one (notebook 05)."""
import pytest

from test_exercises import MISTAKES
from utils import exercises as E
from utils.i18n import set_language


@pytest.fixture(autouse=True)
def english_after():
    yield
    set_language("en")


@pytest.mark.parametrize("language, says, not_says", [
    ("en", "you returned None, but", "the smallest position was that -1 (you returned None)"),
    ("zh", "你返回了 None，但", "结果最小的位置就成了这个 -1（你返回了 None）")])
def test_an_endswith_solution_is_not_told_it_took_the_minus_one(language, says, not_says, capsys):
    """Regression: generate's endswith test returned None on the case where one stop string does not occur,
    and the check said "the smallest position was that -1 (you returned None)": a mistake it never made."""
    set_language(language)
    E.check("05.stop_text", dict(MISTAKES["05.stop_text"])["endswith on the text"])
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("  ✗") and ("-1" in ln))
    assert says in line and not_says not in line, line
    assert "endswith" in line, line  # the None names both causes: an endswith test, or min() over find's -1


def test_min_over_every_find_that_returns_text_minus_one_is_still_named(capsys):
    """Without the `None if p == -1` guard, min() over every find gives -1 and text[:-1]: named outright."""
    E.check("05.stop_text", lambda text, stops: text[: min(text.find(s) for s in stops)])
    out = capsys.readouterr().out
    assert "the smallest position was that -1" in out and "leave those out before taking the smallest" in out
