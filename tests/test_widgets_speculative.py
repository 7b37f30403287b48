"""Notebook 12's panel: speculative decoding round by round, driven without a browser."""
import random

import matplotlib
import matplotlib.pyplot as plt
import pytest
import torch

matplotlib.use("Agg")

from utils import generate  # noqa: E402
from utils.speculative import PromptLookup, speculative_generate  # noqa: E402
from utils.i18n import set_language  # noqa: E402
from utils.widgets import SpeculativePanel  # noqa: E402
from utils.widgets.speculative import SPEC_PROMPTS as BY_LANGUAGE  # noqa: E402
from utils.widgets.speculative import (MAX_K, NEW_TOKENS, TEMPERATURES, kind_label, round_kind,  # noqa: E402
                                      speculative_rounds)

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)

SPEC_PROMPTS = BY_LANGUAGE["en"]  # the panel's prompts in English, the language of these tests


def _ok(state):
    assert "error" not in state, state.get("error")


@pytest.fixture(scope="module")
def models():
    from utils.course_model import load_course_model, load_draft_model

    model, tok = load_course_model()
    return model, tok, load_draft_model()[0]


@pytest.fixture(scope="module")
def panel(models):
    p = SpeculativePanel(*models)
    p.plot = lambda state: None  # the sweeps check numbers and HTML; one test below draws the figure
    return p


def _set(panel, **values):
    for name, value in values.items():
        panel.controls[name].value = value
    return panel.state


def test_round_kind():
    assert round_kind([], 0) == "none" and kind_label("none") == "no drafts"
    assert round_kind([5, 6], 2) == "bonus"
    assert round_kind([5, 6], 1) == "correction" and round_kind([5], 0) == "correction"


def test_state_is_the_engine_run(panel, models):
    model, tok, draft = models
    for k, draft_name, prompt in [(4, "model", 0), (2, "lookup", 2), (8, "model", 3), (1, "lookup", 1)]:
        s = _set(panel, k=k, draft=draft_name, prompt=prompt, temperature=0.0, rollback=True)
        _ok(s)
        ids = torch.tensor([tok.encode(SPEC_PROMPTS[prompt])])
        drafter = draft if draft_name == "model" else PromptLookup()
        res = speculative_generate(model, drafter, ids, NEW_TOKENS, k=k)
        assert s["tokens"] == res.tokens.tolist() == generate(model, ids, NEW_TOKENS).tokens[0].tolist()
        assert s["first_diff"] is None and s["reference"] == s["tokens"]
        assert (s["acceptance_rate"], s["target_calls"], s["draft_calls"]) == (
            res.acceptance_rate, res.target_calls, res.draft_calls)
        assert s["n_rounds"] == len(res.rounds) and s["tokens_per_round"] == pytest.approx(NEW_TOKENS / len(res.rounds))
        assert s["target_calls"] == 1 + s["n_rounds"]  # the prefill, then one pass per round
        length = ids.shape[1]
        for r, raw in zip(s["rounds"], res.rounds):
            assert r["start"] == length and r["proposed"] == raw["proposed"] and r["accepted"] == raw["accepted"]
            length += len(raw["added"])
            assert r["length"] == length and r["extra"] == raw["added"][-1]
            assert r["target_len"] == length - 1 and r["draft_len"] <= length - 1  # rolled back
            assert r["words"] == tok.tokens(raw["proposed"]) and r["kind"] == round_kind(raw["proposed"], raw["accepted"])
            assert r["kind_label"] == kind_label(r["kind"]) and r["kind_label"] in (r["kind"], "no drafts")
        html = panel.html.value
        assert f"{s['tokens_per_round']:.2f}" in html and f"{s['target_calls']} (plain decoding: {NEW_TOKENS})" in html
        assert "the same 12 tokens as the target&#x27;s own greedy run" in html


def test_the_missing_crop_is_caught(panel, models):
    model, tok, draft = models
    s = _set(panel, k=4, draft="model", prompt=0, temperature=0.0, rollback=False)
    _ok(s)
    assert s["first_diff"] is not None and s["tokens"][:s["first_diff"]] == s["reference"][:s["first_diff"]]
    assert any(r["target_len"] > r["length"] - 1 for r in s["rounds"])
    assert f"first at new token {s['first_diff'] + 1}" in panel.html.value
    ids = torch.tensor([tok.encode(SPEC_PROMPTS[0])])
    assert s["tokens"] == speculative_generate(model, draft, ids, NEW_TOKENS, k=4, rollback=False).tokens.tolist()


def test_sampling_uses_seed_0_and_says_it_is_sampled(panel, models):
    model, tok, draft = models
    s = _set(panel, k=3, draft="model", prompt=1, rollback=True, temperature=1.0)
    _ok(s)
    ids = torch.tensor([tok.encode(SPEC_PROMPTS[1])])
    res = speculative_generate(model, draft, ids, NEW_TOKENS, k=3, temperature=1.0, seed=0)
    assert s["tokens"] == res.tokens.tolist() and s["reference"] is None and s["first_diff"] is None
    assert "sampled (seed 0): the target&#x27;s distribution is kept" in panel.html.value


def test_sampling_without_the_crop_says_the_distribution_is_lost(panel):
    s = _set(panel, k=3, draft="model", prompt=1, temperature=1.0, rollback=False)
    _ok(s)
    html = panel.html.value
    assert "without the crop" in html and "is NOT kept" in html and "is kept (section 3)" not in html


def test_the_bug_hides_when_the_draft_is_the_target(models):
    model, tok, _ = models
    for prompt in SPEC_PROMPTS:  # every draft accepted: nothing to crop, so no crop does no harm
        ids = torch.tensor([tok.encode(prompt)])
        s = speculative_rounds(model, model, tok, ids, NEW_TOKENS, k=4, rollback=False)
        assert s["acceptance_rate"] == 1.0 and s["first_diff"] is None


def test_every_control_value_computes(panel):
    c = panel.controls
    settings = [dict(k=k) for k in range(1, MAX_K + 1)] + [dict(temperature=t) for t in TEMPERATURES]
    settings += [dict(draft=d) for d in ("lookup", "model")] + [dict(prompt=i) for i in range(len(SPEC_PROMPTS))]
    settings += [dict(rollback=False), dict(rollback=True)]
    rng = random.Random(0)
    settings += [dict(k=rng.randint(1, MAX_K), temperature=rng.choice(TEMPERATURES), draft=rng.choice(["model", "lookup"]),
                      prompt=rng.randrange(len(SPEC_PROMPTS)), rollback=rng.random() < 0.5) for _ in range(25)]
    for values in settings:
        s = _set(panel, **values)
        _ok(s)
        assert len(s["tokens"]) == NEW_TOKENS and 1 <= s["n_rounds"] <= NEW_TOKENS
        assert all(len(r["proposed"]) <= c["k"].value for r in s["rounds"])
        assert (s["draft_calls"] == 0) == (c["draft"].value == "lookup")
        if c["rollback"].value:
            assert all(r["target_len"] == r["length"] - 1 for r in s["rounds"])
        if c["temperature"].value == 0 and c["rollback"].value:
            assert s["first_diff"] is None
        assert panel.html.value and "&#9888;" not in panel.html.value


def test_a_setting_seen_before_is_not_run_again(panel):
    first = _set(panel, k=5, draft="model", prompt=2, temperature=0.5, rollback=True)
    _set(panel, k=6)
    assert _set(panel, k=5) is first


def test_the_figure_shows_every_round(models):
    model, tok, draft = models
    p = SpeculativePanel(model, tok, draft)
    fig = p.fig
    assert fig is not None and len(fig.axes) == 1
    ax = fig.axes[0]
    assert ax.get_ylabel() == "round" and ax.get_xlabel().startswith("position in the sequence")
    assert len(ax.get_yticks()) == p.state["n_rounds"]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "draft refused" in legend and "end of the target's cache after the round" in legend
    words = [t.get_text() for t in ax.texts]
    assert words == [w for r in p.state["rounds"] for w in r["words"] + [r["extra_word"]]]
    plt.close("all")


def test_speculative_rounds_counts_and_rejects_bad_input(models):
    model, tok, draft = models
    ids = torch.tensor([tok.encode("<BOS> 我 有")])
    s = speculative_rounds(model, draft, tok, ids, 12, k=4)
    assert sum(len(r["proposed"]) for r in s["rounds"]) * s["acceptance_rate"] == pytest.approx(
        sum(r["accepted"] for r in s["rounds"]))
    assert s["rounds"][-1]["length"] >= ids.shape[1] + 12
    with pytest.raises(ValueError, match="prompts"):
        SpeculativePanel(model, tok, draft, prompts=[])
    with pytest.raises(ValueError, match="k"):
        speculative_rounds(model, draft, tok, ids, 5, k=0)


def test_prompts_speak_the_notebooks_language(models):
    assert all(p.isascii() for p in BY_LANGUAGE["en"]) and all(not p.isascii() for p in BY_LANGUAGE["zh"])
    assert len(BY_LANGUAGE["en"]) == len(BY_LANGUAGE["zh"])
    set_language("zh")
    try:
        panel = SpeculativePanel(*models)
    finally:
        set_language("en")
    assert [label for label, _ in panel.controls["prompt"].options] == BY_LANGUAGE["zh"]
    assert "(have)" not in panel.html.value


def test_chinese_tokens_are_glossed_in_english(models):
    panel = SpeculativePanel(*models, prompts=["<BOS> 我 有"])
    assert panel.controls["prompt"].options == (("<BOS> 我 (I) 有 (have)", 0),)
    assert "只 (counter)" in panel.html.value  # the text the run wrote, glossed
    texts = [t.get_text() for t in panel.fig.texts]
    assert any(t.startswith("Chinese words here: ") and "只 (counter)" in t for t in texts)
    plt.close(panel.fig)
