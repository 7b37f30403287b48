"""Notebook 02's widget (PrefillKVPanel), no browser."""
import random

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

from utils import prefill  # noqa: E402
from utils.i18n import set_language  # noqa: E402
from utils.widgets import PrefillKVPanel  # noqa: E402
from utils.widgets.prefill import PREFILL_PROMPTS as BY_LANGUAGE  # noqa: E402

PREFILL_PROMPTS = BY_LANGUAGE["en"]  # the panel's prompts in English, the language of these tests

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)


@pytest.fixture(scope="module")
def panel(model_tok):
    return PrefillKVPanel(*model_tok)


def _check(state):
    assert "error" not in state, state.get("error")


def test_default_state_matches_a_direct_prefill(panel, model_tok):
    model, tok = model_tok
    s = panel.state
    _check(s)
    ids = torch.tensor([tok.encode(PREFILL_PROMPTS[0])])
    logits, kv = prefill(model, ids)
    cfg = model.cfg
    assert s["shape"] == (1, cfg.n_kv_heads, ids.shape[1], cfg.head_dim)  # [B, H_kv, T, d_h]
    assert s["T"] == ids.shape[1] == s["cache_len"] and s["n_layers"] == cfg.n_layers
    assert s["layer"] == 1  # not layer 0, whose distance to itself (0.00) would show nothing
    assert torch.allclose(torch.from_numpy(s["values"]), kv.k[1][0, 0], atol=1e-6)
    assert s["first_token"] == tok.decode([int(logits[0].argmax())])
    assert abs(s["cos_to_layer0"]) < 0.5  # notebook 02: about as unrelated to layer 0's as a random tensor
    assert panel.html.value and panel.fig is not None


def test_each_control_changes_what_is_shown(panel, model_tok):
    model, tok = model_tok
    c = panel.controls
    c["prompt"].value = PREFILL_PROMPTS[1]
    c["layer"].value = 2
    c["head"].value = 1
    c["tensor"].value = "V"
    s = panel.state
    _check(s)
    ids = torch.tensor([tok.encode(PREFILL_PROMPTS[1])])
    _, kv = prefill(model, ids)
    assert s["words"] == tok.tokens(ids[0])
    assert torch.allclose(torch.from_numpy(s["values"]), kv.v[2][0, 1], atol=1e-6)
    ref = torch.nn.functional.cosine_similarity(kv.v[2][0, 1].flatten(), kv.v[0][0, 1].flatten(), dim=0)
    assert abs(s["cos_to_layer0"] - float(ref)) < 1e-5
    assert abs(s["norm_ratio_to_layer0"] - float(kv.v[2][0, 1].norm() / kv.v[0][0, 1].norm())) < 1e-5
    assert s["cos_to_layer0"] < 0.9  # every layer keeps its own, different V
    assert "layer 2" in panel.html.value


def test_ranges_come_from_the_model(panel, model_tok):
    cfg = model_tok[0].cfg
    c = panel.controls
    assert (c["layer"].min, c["layer"].max) == (0, cfg.n_layers - 1)
    assert (c["head"].min, c["head"].max) == (0, cfg.n_kv_heads - 1)
    assert list(c["prompt"].options) == list(PREFILL_PROMPTS)


def test_sweep_every_control_and_random_combinations(panel):
    c = panel.controls
    for name in ("layer", "head"):
        for v in range(c[name].min, c[name].max + 1):
            c[name].value = v
            _check(panel.state)
            assert panel.html.value
    for name in ("prompt", "tensor"):
        for v in c[name].options:
            c[name].value = v
            _check(panel.state)
            assert panel.html.value
    rng = random.Random(0)
    for _ in range(100):
        values = {
            "prompt": rng.choice(list(c["prompt"].options)),
            "layer": rng.randint(c["layer"].min, c["layer"].max),
            "head": rng.randint(c["head"].min, c["head"].max),
            "tensor": rng.choice(list(c["tensor"].options)),
        }
        # compute/render directly (the figure is drawn in the sweep above): same code path, faster
        state = panel.compute(**values)
        _check(state)
        assert panel.render(state)
        assert (abs(state["cos_to_layer0"] - 1) < 1e-6) == (values["layer"] == 0)


def test_prompts_speak_the_notebooks_language(model_tok):
    """English prompts in English, Chinese ones in Chinese: the same four ideas in both."""
    assert all(p.isascii() for p in BY_LANGUAGE["en"])
    assert all(not p.isascii() for p in BY_LANGUAGE["zh"]) and len(BY_LANGUAGE["zh"]) == len(PREFILL_PROMPTS)
    set_language("zh")
    try:
        panel = PrefillKVPanel(*model_tok)
    finally:
        set_language("en")
    assert list(panel.controls["prompt"].options) == list(BY_LANGUAGE["zh"])
    assert panel.state["words"] == model_tok[1].tokens(model_tok[1].encode(BY_LANGUAGE["zh"][0]))


def test_chinese_tokens_are_glossed_in_english_with_the_grammars_probability(model_tok):
    model, tok = model_tok
    panel = PrefillKVPanel(model, tok, prompts=["<BOS> 他 有 两 只"])
    assert panel.controls["prompt"].options == (("<BOS> 他 (he) 有 (have) 两 (two) 只 (counter)", "<BOS> 他 有 两 只"),)
    assert "<code>&lt;BOS&gt; 他 (he) 有 (have) 两 (two) 只 (counter)</code>" in panel.html.value
    ticks = [t.get_text() for t in panel.fig.axes[0].get_yticklabels()]
    assert ticks[1] == "1: 他 (he)" and ticks[0] == "0: <BOS>"
    from utils.grammar import next_word_probs
    first = panel.state["first_token"]
    assert panel.state["first_grammar"] == next_word_probs("<BOS> 他 有 两 只").get(first, 0.0)
    assert f"(the grammar's exact probability: {panel.state['first_grammar']:.2f})" in panel.html.value


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_layer_after_0_points_elsewhere_than_layer_0(model_tok, lang):
    # notebook 02 tells the learner: from layer 1 on, the cosine to layer 0 is near 0 (|cos| < 0.5), as for
    # unrelated tensors, while the norms stay comparable (it once said the distance grows with the layer,
    # which it does not)
    model, tok = model_tok
    set_language(lang)
    try:
        panel = PrefillKVPanel(model, tok)
        for prompt in BY_LANGUAGE[lang]:
            for head in range(model.cfg.n_kv_heads):
                for tensor in ("K", "V"):
                    for layer in range(1, model.cfg.n_layers):
                        s = panel.compute(prompt, layer, head, tensor)
                        cos, ratio = s["cos_to_layer0"], s["norm_ratio_to_layer0"]
                        assert abs(cos) < 0.5 and 0.3 < ratio < 3, (prompt, head, tensor, layer, cos, ratio)
    finally:
        set_language("en")


def test_ranges_beyond_layer0_cover_every_setting_the_panel_offers_past_layer_0(panel, model_tok):
    # notebook 02 prints these ranges in place of the sliders for a reader without a kernel
    model, _ = model_tok
    r = panel.ranges_beyond_layer0()
    cfg = model.cfg
    assert r["n"] == len(PREFILL_PROMPTS) * (cfg.n_layers - 1) * cfg.n_kv_heads * 2
    s = panel.compute(PREFILL_PROMPTS[0], 1, 0, "V")
    assert r["cos"][0] <= s["cos_to_layer0"] <= r["cos"][1]
    assert r["norm_ratio"][0] <= s["norm_ratio_to_layer0"] <= r["norm_ratio"][1]
    assert r["cos"][1] < 0.99  # layer 0 itself (cosine 1) is left out


def test_colour_scale_is_one_clipped_scale_per_prompt_and_tensor_across_layers_and_heads(panel, model_tok):
    # regression: the scale was each tensor's own max, so the <BOS> row saturated it and layers were not comparable
    model, tok = model_tok
    c = panel.controls
    c["prompt"].value = PREFILL_PROMPTS[1]
    c["tensor"].value = "K"
    scales = set()
    for layer in range(model.cfg.n_layers):
        for head in range(model.cfg.n_kv_heads):
            c["layer"].value, c["head"].value = layer, head
            scales.add(panel.state["vmax"])
    assert len(scales) == 1  # the same scale whatever the layer and head
    _, kv = prefill(model, torch.tensor([tok.encode(PREFILL_PROMPTS[1])]))
    every_k = torch.stack([kv.k[i][0] for i in range(model.cfg.n_layers)])  # (L, H_kv, T, d_h)
    vmax = scales.pop()
    assert abs(vmax - float(every_k.abs().quantile(0.99))) < 1e-5
    assert vmax < float(every_k.abs().max())  # clipped: the largest values do not set the scale
    c["tensor"].value = "V"
    assert panel.state["vmax"] != vmax  # V gets its own scale
