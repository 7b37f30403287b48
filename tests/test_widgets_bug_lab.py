"""Notebook 07's panel (utils/widgets/bug_lab.py): every bug, broken and fixed, and random control moves."""
import random

import pytest
import torch

from utils import bug_lab as bugs
from utils import load_course_model
from utils.widgets import BugLabPanel

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)


@pytest.fixture(scope="module")
def course():
    model, tok = load_course_model()
    prompt = torch.tensor([tok.encode("<BOS> she has two white cats . she also likes")])
    return model, tok, prompt


@pytest.fixture(scope="module")
def bug_panel(course):
    model, _, prompt = course
    return BugLabPanel(model, prompt)


def _ok(panel):
    assert "error" not in panel.state, panel.state.get("error")
    assert panel.html.value


def test_bug_panel_every_bug_broken_and_fixed(bug_panel):
    for bug in bugs.BUGS:
        for fixed in (False, True):
            bug_panel.controls["bug"].value = bug.key
            bug_panel.controls["fixed"].value = fixed
            _ok(bug_panel)
            s = bug_panel.state
            assert s["bug"] == bug.key and s["fixed"] == fixed
            assert s["caught"] is (not fixed), (bug.key, fixed, s["summary"])
            assert ("diverges" in s["summary"] or "raises" in s["summary"]) is (not fixed)
            assert "<div" in bug_panel.html.value and "broken" in bug_panel.html.value


def test_bug_panel_agrees_with_the_table(bug_panel, course):
    model, _, prompt = course
    bug_panel.controls["bug"].value = "positions"
    bug_panel.controls["fixed"].value = False
    assert bug_panel.state["first_step"] == bugs.BUG_BY_KEY["positions"].run(model, prompt, False).first_step == 1
    bug_panel.controls["bug"].value = "concat_axis"
    assert bug_panel.state["raised"].startswith("RuntimeError") and bug_panel.state["first_step"] == 1


def test_bug_panel_random_combinations(bug_panel):
    rng = random.Random(0)
    keys = [b.key for b in bugs.BUGS]
    for _ in range(100):
        bug_panel.controls["bug"].value = rng.choice(keys)
        bug_panel.controls["fixed"].value = rng.random() < 0.5
        _ok(bug_panel)
