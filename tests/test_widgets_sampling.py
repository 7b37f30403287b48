"""Notebook 05's widget: temperature, top-k and top-p sliders on the course model, no browser."""
import random

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

from utils import load_course_model  # noqa: E402
from utils.i18n import set_language  # noqa: E402
from utils.sampling import filtered_probs  # noqa: E402
from utils.widgets import SAMPLING_PROMPTS, SamplingPanel  # noqa: E402
from utils.widgets.base import option_values  # noqa: E402

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)


@pytest.fixture(scope="module")
def course():
    return load_course_model()


@pytest.fixture(scope="module")
def panel(course):
    return SamplingPanel(*course)


def _check(state):
    assert "error" not in state, state.get("error")
    assert state["kept_size"] >= 1
    assert state["kept_size"] == len(state["kept"])
    assert abs(state["probs_sum"] - 1) < 1e-5
    assert abs(sum(p for _, p in state["kept"]) - 1) < 1e-5


def test_controls_are_named_and_ranges_are_valid(panel):
    c = panel.controls
    assert {"temperature", "top_k", "top_p"} <= set(c)
    assert c["temperature"].min == 0  # greedy is on the slider
    assert (c["top_k"].min, c["top_k"].max) == (1, panel.V)
    assert 0 < c["top_p"].min and c["top_p"].max == 1  # top_p = 0 would keep nothing


def test_defaults_keep_the_whole_vocabulary(panel):
    for name, w in panel.controls.items():
        if name != "prompt":
            w.value = {"temperature": 1.0, "top_k": panel.V, "top_p": 1.0}[name]
    s = panel.state
    _check(s)
    assert s["kept_size"] == panel.V and s["top_k"] is None and s["top_p"] is None
    assert panel.html.value and panel.fig is not None


def test_greedy_keeps_one_token_the_argmax(panel):
    panel.controls["temperature"].value = 0.0
    s = panel.state
    _check(s)
    assert s["kept_size"] == 1 and s["kept"][0][0] == s["greedy"]
    panel.controls["temperature"].value = 1.0


def test_every_slider_over_its_full_range(panel, monkeypatch):
    monkeypatch.setattr(panel, "plot", lambda state: None)  # drawn at the extremes below; keeps this fast
    for name in ("temperature", "top_k", "top_p"):
        w = panel.controls[name]
        before = w.value
        n = round((w.max - w.min) / w.step)
        for i in range(n + 1):
            w.value = w.min + i * w.step if i < n else w.max  # extremes included
            _check(panel.state)
        w.value = before


def test_extremes_match_the_sampling_functions(panel):
    c = panel.controls
    logits = panel.next_logits(c["prompt"].value)  # (1, V)
    for T, k, p in [(0.0, 1, 0.05), (0.0, panel.V, 1.0), (2.0, 1, 1.0), (2.0, panel.V, 0.05),
                    (0.05, panel.V, 1.0), (2.0, panel.V, 1.0), (1.0, 3, 0.5)]:
        c["temperature"].value, c["top_k"].value, c["top_p"].value = T, k, p
        s = panel.state
        _check(s)
        ref = filtered_probs(logits, T, None if k == panel.V else k, None if p == 1 else p)[0]
        assert s["kept_size"] == int((ref > 0).sum()), (T, k, p)
        if T > 0 and k < panel.V:
            assert s["kept_size"] <= k
        assert panel.html.value and panel.fig is not None
        assert len(panel.fig.axes) == 4  # original, temperature, top-k, top-p


def test_every_prompt(panel):
    for prompt in panel.controls["prompt"].options:
        panel.controls["prompt"].value = prompt
        _check(panel.state)
        assert panel.state["prompt"] == prompt


def test_random_combinations(panel, monkeypatch):
    # The figure is a pure function of the state and is drawn at the extremes; skip it here
    # so that a few hundred slider moves stay fast.
    monkeypatch.setattr(panel, "plot", lambda state: None)
    rng = random.Random(0)
    c = panel.controls
    for _ in range(150):
        c["prompt"].value = rng.choice(list(c["prompt"].options))
        c["temperature"].value = rng.choice([0.0, rng.uniform(0, 2)])
        c["top_k"].value = rng.randint(1, panel.V)
        c["top_p"].value = rng.uniform(c["top_p"].min, 1.0)
        s = panel.state
        _check(s)
        assert panel.html.value
        if s["temperature"] == 0:
            assert s["kept_size"] == 1
        if s["top_k"] is not None:
            assert s["kept_size"] <= s["top_k"] or s["temperature"] == 0


def test_sliders_never_touch_the_model(panel):
    """The logits are computed once per prompt; moving a slider only re-picks from them."""
    prompt = panel.controls["prompt"].value
    before = panel.next_logits(prompt).clone()
    panel.controls["temperature"].value = 1.5
    assert torch.equal(panel.next_logits(prompt), before)


def test_filter_stages_end_in_what_sample_draws_from():
    from utils.sampling import filter_stages
    logits = torch.randn(3, 40, generator=torch.Generator().manual_seed(0))
    for T in (0, 0.3, 1.0, 2.0):
        for k in (None, 1, 5, 40):
            for p in (None, 0.05, 0.5, 1.0):
                stages = filter_stages(logits, T, k, p)
                assert list(stages) == ["original", "temperature", "top_k", "top_p"]
                assert torch.allclose(stages["top_p"], filtered_probs(logits, T, k, p).float())
                assert torch.allclose(stages["original"], torch.softmax(logits, -1))
                for probs in stages.values():
                    assert torch.allclose(probs.sum(-1), torch.ones(3))


# --- the prompts speak the notebook's language; the grammar's exact answer sits beside the model's ---------
def test_default_prompts_are_english_in_english_and_chinese_in_chinese(course, monkeypatch):
    monkeypatch.setattr(SamplingPanel, "plot", lambda self, state: None)
    english = SamplingPanel(*course)
    assert list(english.controls["prompt"].options) == list(SAMPLING_PROMPTS["en"])
    assert all(p.isascii() for p in SAMPLING_PROMPTS["en"])
    set_language("zh")
    try:
        chinese = SamplingPanel(*course)
    finally:
        set_language("en")
    assert list(chinese.controls["prompt"].options) == list(SAMPLING_PROMPTS["zh"])
    assert all(p == "<BOS>" or not p.isascii() for p in SAMPLING_PROMPTS["zh"])
    assert len(SAMPLING_PROMPTS["en"]) == len(SAMPLING_PROMPTS["zh"])


def test_the_grammar_stands_beside_the_model(panel):
    c = panel.controls
    c["prompt"].value, c["temperature"].value, c["top_k"].value, c["top_p"].value = "<BOS> I like", 1.0, 5, 1.0
    s = panel.state
    _check(s)
    assert s["grammar"]["cats"] == pytest.approx(0.75) and abs(sum(s["grammar"].values()) - 1) < 1e-9
    assert s["shown_grammar"] == [s["grammar"][w] for w in s["shown_words"]]
    assert "<th>the grammar's exact probability</th>" in panel.html.value
    assert panel.html.value.count("<tr>") == 1 + s["kept_size"]  # the header and one row per kept token
    first_row = panel.fig.axes[0]
    assert any(t.get_text() == "the grammar's exact probability" for t in first_row.get_legend().get_texts())


def test_a_prompt_the_grammar_never_produces_shows_no_exact_column(course):
    odd = "<BOS> cats cats"
    p = SamplingPanel(*course, prompts=[odd])
    _check(p.state)
    assert p.state["grammar"] is None and p.state["shown_grammar"] is None
    assert "never produces this prompt" in p.html.value and "exact probability</th>" not in p.html.value
    assert p.fig.axes[0].get_legend() is None


def test_a_chinese_prompt_is_glossed_in_english_and_plain_in_chinese(course):
    p = SamplingPanel(*course, prompts=["<BOS> 我 喜欢", "<BOS> she has"])
    labels = [label for label, _ in p.controls["prompt"].options]
    assert labels == ["<BOS> 我 (I) 喜欢 (like)", "<BOS> she has"]
    assert option_values(p.controls["prompt"].options) == ["<BOS> 我 喜欢", "<BOS> she has"]
    assert "我 (I) 喜欢 (like)" in p.html.value and "<td>猫 (cat)</td>" in p.html.value
    assert "猫\n(cat)\n#" in "|".join(t.get_text() for t in p.fig.axes[-1].get_xticklabels())
    set_language("zh")
    try:
        q = SamplingPanel(*course, prompts=["<BOS> 我 喜欢"])
    finally:
        set_language("en")
    assert list(q.controls["prompt"].options) == ["<BOS> 我 喜欢"]
    assert "(cat)" not in q.html.value and "<td>猫</td>" in q.html.value


def test_at_temperature_0_a_set_filter_says_it_has_no_effect_and_one_token_is_singular(course):
    """Regression: at T = 0 the titles said "top-k off" / "top-p off" even with k = 1 and p = 0.05, and the
    kept set read "1 tokens"."""
    from utils.plots.sampling import plot_sampling_stages

    p = SamplingPanel(*course)
    s = p.compute(prompt=p.controls["prompt"].value, temperature=0.0, top_k=1, top_p=0.05)
    fig = plot_sampling_stages(s["stages"], s["shown_ids"], s["shown_words"], s)
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert "top-k = 1: no effect at τ = 0" in titles[2] and "top-p = 0.05: no effect at τ = 0" in titles[3]
    assert titles[3].endswith("(kept set: 1 token)")
    s = p.compute(prompt=p.controls["prompt"].value, temperature=0.0, top_k=p.V, top_p=1.0)  # filters off
    titles = [ax.get_title(loc="left") for ax in plot_sampling_stages(s["stages"], s["shown_ids"], s["shown_words"],
                                                                      s).axes]
    assert "3 · top-k off" in titles[2] and titles[3].startswith("4 · top-p off")
    assert "#id = its token id" in fig.axes[-1].get_xlabel()  # the numbers under the tokens are explained


def test_a_probability_float32_rounds_to_0_is_not_marked_removed(course):
    """Regression: at τ = 0.05 the tokens whose probability underflowed to 0 in float32 got the × of "removed" at
    the temperature stage, which contradicts "temperature removes no token"; they get their own ○ marker."""
    from utils.plots.sampling import plot_sampling_stages

    p = SamplingPanel(*course)  # English: the prompt "<BOS> I like"
    prompt = p.controls["prompt"].value
    s = p.compute(prompt=prompt, temperature=0.05, top_k=p.V, top_p=1.0)  # filters off
    assert 0 in s["stages"]["temperature"]  # some shown token underflowed: the case this test is about
    fig = plot_sampling_stages(s["stages"], s["shown_ids"], s["shown_words"], s)
    from utils.plots.sampling import SAMPLING_STAGES, SamplingFigure
    f = SamplingFigure(len(s["shown_ids"]))
    f.update(s["stages"], s["shown_ids"], s["shown_words"], s)
    n_zero = sum(v == 0 for v in s["stages"]["temperature"])
    for name in SAMPLING_STAGES[1:]:  # temperature and the filters that are off: rounded, never removed
        assert len(f.crosses[name].get_xdata()) == 0, name
        assert len(f.zeros[name].get_xdata()) == n_zero, name
    assert "○ = 0 in float32" in fig.axes[-1].get_xlabel()
    s = p.compute(prompt=prompt, temperature=0.05, top_k=2, top_p=1.0)  # top-k removes some that were not 0
    f.update(s["stages"], s["shown_ids"], s["shown_words"], s)
    dropped = sum(v > 0 for v in s["stages"]["temperature"]) - 2  # > 0 after temperature, outside the top 2
    assert len(f.crosses["top_k"].get_xdata()) == dropped and len(f.zeros["top_k"].get_xdata()) == n_zero
    s = p.compute(prompt=prompt, temperature=0.0, top_k=p.V, top_p=1.0)  # greedy removes every other token
    f.update(s["stages"], s["shown_ids"], s["shown_words"], s)
    assert len(f.zeros["temperature"].get_xdata()) == 0 and len(f.crosses["temperature"].get_xdata()) == len(s["shown_ids"]) - 1


def test_a_kept_token_with_a_tiny_probability_is_labelled_kept_but_about_0(course):
    """Regression: at τ = 0.05 the kept tokens other than the top one showed "0.00" (figure) and "0.000" (table),
    which read as "sampled sometimes"; they now say they are kept, but ≈ 0."""
    from utils.plots.sampling import SamplingFigure

    p = SamplingPanel(*course)
    s = p.compute(prompt=p.controls["prompt"].value, temperature=0.05, top_k=p.V, top_p=1.0)
    tiny = [w for w, q in s["kept"] if q < 0.0005]
    assert tiny  # the case this test is about: kept, p > 0, far below what a draw would ever pick
    f = SamplingFigure(len(s["shown_ids"]))
    f.update(s["stages"], s["shown_ids"], s["shown_words"], s)
    labels = [t.get_text() for t in f.values["top_p"] if t.get_visible()]
    footer = f.axes[-1].get_xlabel()
    assert "≈0" in labels and "0.00" not in labels and "≈0 = still in at this stage, p < 0.005" in footer
    # a "≈0" token at τ = 1.5 (p ≈ 0.002) is still drawn now and then: the footer no longer says "never drawn"
    assert "never" not in footer
    assert p.render(s).count("kept, but ≈ 0") == sum(q < 0.0005 for _, q in s["kept"][:8])  # the table's 8 rows
