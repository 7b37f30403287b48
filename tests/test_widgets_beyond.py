"""Notebook 08's panel (utils/widgets/beyond.py): the sliding window's numbers, and every control position."""
import random

import pytest
import torch

from utils import load_course_model
from utils.widgets import SLIDING_WINDOWS, SlidingWindowPanel

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)


@pytest.fixture(scope="module")
def course():
    model, tok = load_course_model()
    prompt = torch.tensor([tok.encode("<BOS> she has two white cats . she also likes")])
    return model, tok, prompt


@pytest.fixture(scope="module")
def sliding_panel(course):
    model, tok, prompt = course
    ids = torch.cat([prompt, torch.tensor([tok.encode("<BOS> we like birds . <EOS> <BOS> he likes dogs . <EOS>")])], 1)
    return SlidingWindowPanel(model, ids)


def _ok(panel):
    assert "error" not in panel.state, panel.state.get("error")
    assert panel.html.value


def test_sliding_panel_numbers(sliding_panel, course):
    model, _, _ = course
    p = sliding_panel
    N = p.ids.shape[1]
    p.controls["window"].value = 8
    p.controls["n_tokens"].value = N
    _ok(p)
    s = p.state
    assert s["stored"] == 8 and s["n_seen"] == N and s["first_diff"] == 8 and s["equals_windowed"]
    per_position = 2 * model.cfg.n_layers * model.cfg.n_kv_heads * model.cfg.head_dim * 4
    assert s["nbytes"] == 8 * per_position and s["full_nbytes"] == N * per_position
    p.controls["n_tokens"].value = 5
    assert p.state["first_diff"] is None and p.state["stored"] == 5


def test_sliding_panel_sweeps_and_random_combinations(sliding_panel, monkeypatch):
    p = sliding_panel
    N = p.ids.shape[1]
    for W in SLIDING_WINDOWS:  # every window, at the extremes of the token count (with figures)
        p.controls["window"].value = W
        for n in (1, W, N):
            p.controls["n_tokens"].value = min(n, N)
            _ok(p)
            assert p.state["stored"] == min(W, p.state["n_tokens"])
            assert p.state["equals_windowed"]
            assert p.fig is not None
    # Random combinations check the numbers; building ~100 more figures would only cost time
    # (the figure code ran above, for every window and both extremes).
    monkeypatch.setattr(p, "plot", lambda state: None)
    rng = random.Random(1)
    for _ in range(100):
        p.controls["window"].value = rng.choice(SLIDING_WINDOWS)
        p.controls["n_tokens"].value = rng.randint(1, N)
        _ok(p)
        first = p.state["first_diff"]
        assert first is None or first == p.state["window"]
