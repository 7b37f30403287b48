"""Notebook 03's side-by-side viewer (DecodePanel), no browser, no kernel."""
import random
import re

import matplotlib
import pytest

matplotlib.use("Agg")

from utils import generate  # noqa: E402
from utils.course_model import COURSE_CONFIG  # noqa: E402
from utils.perf import torch_threads  # noqa: E402
from utils.i18n import set_language  # noqa: E402
from utils.widgets import DecodePanel, trace_decode  # noqa: E402
from utils.widgets.decode import DECODE_PROMPT as BY_LANGUAGE  # noqa: E402

DECODE_PROMPT = BY_LANGUAGE["en"]  # the panel's prompt in English, the language of these tests

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)

N_NEW = 10


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    # The course-shaped model is tiny: one thread is faster, and steady on a busy shared machine.
    with torch_threads(1):
        yield


@pytest.fixture(scope="module")
def panel(model_tok):
    return DecodePanel(*model_tok, max_new_tokens=N_NEW)


def _summary_cache_len(html: str) -> int:
    m = re.search(r"<span class='decode-summary'[^>]*>(.*?)</span>", html, re.S)
    assert m, html
    return int(re.search(r"cache now holds <b>(\d+)</b>", m.group(1)).group(1))


def _check_ok(panel, s, T0=None):
    assert "error" not in s, s.get("error")
    assert s["ok"], s.get("message")
    T0 = s["prompt_len"] if T0 is None else T0
    step, L = s["step"], COURSE_CONFIG.n_layers
    assert 0 <= step <= s["n_steps"] == panel.controls["step"].max
    assert s["tokens"][0] == "<BOS>" and len(s["tokens"]) == T0 + s["n_steps"] + 1
    assert s["cache_len_per_layer"] == [T0 + step] * L and s["cache_len"] == T0 + step
    assert s["n_recomputed"] == (T0 + step - 1 if step else 0)
    assert s["total_recomputed"] == sum(T0 + k - 1 for k in range(1, step + 1))
    if step:
        assert s["position"] == T0 + step - 1 == s["positions"][0] and s["fed"] == [s["tokens"][T0 + step - 1]]
    else:
        assert s["positions"] == list(range(T0)) and s["fed"] == s["tokens"][:T0]
    assert s["produced"] == s["tokens"][T0 + step]
    html = panel.html.value
    assert _summary_cache_len(html) == s["cache_len"]
    # the two grids: every step's recomputed history on the left, the layers' caches on the right
    left, right = html.split("class='decode-grid decode-nocache'")[1].split("class='decode-grid decode-cache'")
    n = s["n_steps"]
    assert left.count("class='recomputed'") == sum(T0 + r - 1 for r in range(1, n + 1))
    assert left.count("class='new'") == n and left.count("<tr class='now'>") == 1
    assert right.count("class='appended") == L * step and right.count(" last'") == (L if step else 0)
    assert right.count("class='prompt'") == L * T0


def test_default_state(panel, model_tok):
    model, tok = model_tok
    s = panel.state
    T0 = len(tok.encode(DECODE_PROMPT))
    _check_ok(panel, s, T0)
    assert s["step"] == 0 and s["cache_len"] == T0 and s["n_recomputed"] == 0
    assert set(panel.controls) == {"prompt", "step"}
    assert panel.controls["prompt"].value == DECODE_PROMPT
    assert "decode-nocache" in panel.html.value and "decode-cache" in panel.html.value


def test_static_figure_of_a_state(panel):
    import matplotlib.pyplot as plt

    from utils.plots import plot_decode_grids

    panel.set(prompt=DECODE_PROMPT, step=1)
    fig = plot_decode_grids(panel.state)
    assert len(fig.axes) == 2 and "step 1" in fig.axes[0].get_title()
    plt.close(fig)


def test_tokens_are_the_greedy_continuation(panel, model_tok):
    model, tok = model_tok
    s = panel.state
    ids = tok.encode(s["prompt"])
    res = generate(model, ids, N_NEW, eos_id=tok.eos_id)
    assert s["generated"] == tok.tokens(res.tokens[0, : res.lengths[0]])
    assert s["stop"] == res.stop_reasons[0]


def test_recomputed_positions_are_what_a_no_cache_loop_feeds(panel, model_tok):
    # Count, with a hook, how many positions each forward pass of a loop without cache runs.
    model, tok = model_tok
    panel.controls["prompt"].value = "<BOS> we have two"
    lengths = []
    hook = model.register_forward_pre_hook(lambda mod, args: lengths.append(args[0].shape[1]))
    try:
        generate(model, tok.encode("<BOS> we have two"), N_NEW, eos_id=tok.eos_id, use_cache=False)
    finally:
        hook.remove()
    # forward pass s is step s: it runs the history (recomputed) plus the one new position
    assert len(lengths) == panel.state["n_steps"] + 1
    for step in range(panel.state["n_steps"] + 1):
        panel.controls["step"].value = step
        s = panel.state
        _check_ok(panel, s)
        assert s["n_recomputed"] == (lengths[step] - 1 if step else 0)


def test_step_slider_sweeps_its_full_range(panel):
    panel.controls["prompt"].value = "<BOS> she has"
    for step in range(panel.controls["step"].min, panel.controls["step"].max + 1):
        panel.controls["step"].value = step
        assert panel.state["step"] == step
        _check_ok(panel, panel.state)


def test_step_range_follows_the_prompt(panel, model_tok):
    model, tok = model_tok
    panel.controls["prompt"].value = "<BOS> I like"
    panel.controls["step"].value = panel.controls["step"].max
    for prompt in ["<BOS> he", "<BOS> 我 喜欢 猫 。", "<BOS> they have three big"]:
        panel.controls["prompt"].value = prompt
        tr = trace_decode(model, tok.encode(prompt), N_NEW, tok.eos_id)
        assert panel.controls["step"].max == panel.state["n_steps"] == len(tr["new_ids"]) - 1
        _check_ok(panel, panel.state)


def test_bos_is_added_and_blank_prompt_works(panel):
    panel.controls["prompt"].value = "she has two"
    s = panel.state
    _check_ok(panel, s)
    assert s["tokens"][:4] == ["<BOS>", "she", "has", "two"] and s["prompt_len"] == 4
    for blank in ["", "   "]:
        panel.controls["prompt"].value = blank
        _check_ok(panel, panel.state)
        assert panel.state["prompt_len"] == 1


@pytest.mark.parametrize("bad", ["i like cats", "<BOS> hello", "<bos> 我", "猫猫", "cats!", "<BOS> she has 2"])
def test_bad_words_give_a_friendly_message(panel, bad):
    panel.controls["prompt"].value = bad
    s = panel.state
    assert "error" not in s and s["ok"] is False
    assert "Unknown word" in s["message"] and "decode-message" in panel.html.value
    assert "Error" not in panel.html.value
    panel.controls["step"].value = 0  # moving the slider under a bad prompt is harmless too
    assert "error" not in panel.state


def test_too_long_prompt_gives_a_friendly_message(panel):
    panel.controls["prompt"].value = "<BOS> " + "cats " * COURSE_CONFIG.max_seq_len
    s = panel.state
    assert "error" not in s and s["ok"] is False and "at most" in s["message"]


def test_random_prompts_and_steps(panel, model_tok):
    model, tok = model_tok
    rng = random.Random(3)
    words = [w for w in tok.vocab[1:] if w not in ("<PAD>", "<EOS>")]  # refused in a prompt: tested on their own
    n_ok = 0
    for _ in range(100):
        if rng.random() < 0.15:
            prompt = " ".join(rng.choice(words) for _ in range(rng.randint(0, 3))) + " notaword"
        else:
            prompt = " ".join(rng.choice(words) for _ in range(rng.randint(0, 20)))
        # as a user would: type the prompt (which sets the step range), then move the step slider
        panel.controls["prompt"].value = prompt
        panel.controls["step"].value = rng.randint(0, panel.controls["step"].max)
        s = panel.state
        assert "error" not in s, (prompt, s.get("error"))
        assert panel.html.value
        if s["ok"]:
            n_ok += 1
            _check_ok(panel, s)
        else:
            assert "notaword" in s["message"]
    assert n_ok > 70


def test_set_moves_both_controls_with_one_recompute(panel, model_tok):
    model, tok = model_tok
    calls = []
    compute = panel.compute
    panel.compute = lambda **v: calls.append(v) or compute(**v)
    try:
        s = panel.set(prompt="<BOS> you have a", step=99)
    finally:
        del panel.compute
    assert len(calls) == 1 and calls[0]["prompt"] == "<BOS> you have a"
    _check_ok(panel, s)
    assert s["step"] == s["n_steps"] == panel.controls["step"].value  # clamped to the last step
    assert panel.set(step=0)["step"] == 0 and panel.state["prompt"] == "<BOS> you have a"
    assert panel.set(prompt="no such words")["ok"] is False


def test_trace_decode_stops_at_eos(model_tok):
    model, tok = model_tok
    ids = tok.encode("<BOS> I like cats .")
    tr = trace_decode(model, ids, 5, eos_id=None)
    assert len(tr["new_ids"]) == 5 and tr["stop"] == "max_new_tokens"
    eos = tr["new_ids"][2]  # pretend the third new token is the end: the loop must stop there
    tr = trace_decode(model, ids, 5, eos_id=eos)
    first = tr["new_ids"].index(eos)
    assert tr["stop"] == "eos" and len(tr["new_ids"]) == first + 1
    assert tr["cache_after"][-1] == [len(ids) + first] * model.cfg.n_layers  # the stop token is not fed


def test_the_course_model_in_the_viewer():
    from utils import load_course_model

    model, tok = load_course_model()
    panel = DecodePanel(model, tok)  # the notebook's default: a trained model stops at <EOS>
    s = panel.set(step=99)
    _check_ok(panel, s)
    assert s["stop"] == "eos" and s["generated"][-1] == "<EOS>" and s["produced"] == "<EOS>"
    assert panel.controls["step"].max == s["n_steps"] == len(s["generated"]) - 1


# --- what the prompt box assumed, said in the panel (the bad-input cases of the decode viewer) ---

def test_an_empty_prompt_decodes_from_bos_and_says_so(model_tok):
    model, tok = model_tok
    panel = DecodePanel(model, tok)
    for empty in ("", "   "):
        panel.controls["prompt"].value = empty
        assert panel.state["ok"] and panel.state["tokens"][0] == "<BOS>" and panel.state["prompt_len"] == 1
        assert "prompt is empty" in panel.state["note"] and "prompt is empty" in panel.html.value


def test_a_second_bos_inside_the_prompt_is_accepted_with_a_warning(model_tok):
    model, tok = model_tok
    panel = DecodePanel(model, tok)
    panel.controls["prompt"].value = "<BOS> 他 <BOS> 喜欢"
    assert panel.state["ok"] and "<BOS>" in panel.state["note"] and "ordinary token" in panel.state["note"]


@pytest.mark.parametrize("prompt", ["<PAD> he", "<BOS> <EOS>", "<BOS> 他 <PAD> 喜欢", "<EOS>"])
def test_pad_or_eos_in_a_prompt_is_refused_with_a_friendly_message(model_tok, prompt):
    # regression: "<PAD> he" got <BOS> prepended before the <PAD>, and "<BOS> <EOS>" decoded on past the <EOS>
    model, tok = model_tok
    panel = DecodePanel(model, tok)
    panel.controls["prompt"].value = prompt
    assert not panel.state["ok"] and "cannot be in a prompt" in panel.state["message"]
    assert "cannot be in a prompt" in panel.html.value  # shown, not raised


def test_a_long_list_of_unknown_words_is_capped(model_tok):
    model, tok = model_tok
    panel = DecodePanel(model, tok)
    panel.controls["prompt"].value = " ".join(f"w{i}" for i in range(2000))
    message = panel.state["message"]
    assert not panel.state["ok"] and "'w9'" in message and "'w10'" not in message and "and 1,990 more" in message
    assert len(message) < 1000


def test_the_default_prompt_speaks_the_notebooks_language(model_tok):
    assert BY_LANGUAGE == {"en": "<BOS> he has three small dogs . they", "zh": "<BOS> 他 有 三 只 小 狗 。 他们"}
    set_language("zh")
    try:
        panel = DecodePanel(*model_tok, max_new_tokens=3)
    finally:
        set_language("en")
    assert panel.controls["prompt"].value == BY_LANGUAGE["zh"] and panel.state["ok"]
    assert "(dog)" not in panel.html.value and "狗" in panel.html.value


def test_chinese_tokens_are_glossed_in_english(model_tok):
    panel = DecodePanel(*model_tok, prompt="<BOS> 他 有 三 只 小 狗 。 他们", max_new_tokens=3)
    s = panel.set(step=1)
    html = panel.html.value
    assert "&lt;BOS&gt; 他 (he) 有 (have) 三 (three) 只 (counter) 小 (small) 狗 (dog) 。 他们 (they)" in html
    assert "<span>狗 (dog) 6</span>" in html  # the grids' column headers
    import matplotlib.pyplot as plt
    from utils.plots import plot_decode_grids
    fig = plot_decode_grids(s)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "狗 (dog) 6" in texts and "他们 (they) 8" in texts
    plt.close(fig)


def test_step_0_is_called_the_prefill_not_a_recompute_of_0_positions(panel):
    """Step 0 is the prefill: neither the viewer's grid heading nor the static figure says "recomputes 0"."""
    import matplotlib.pyplot as plt

    from utils.plots import plot_decode_grids
    from utils.widgets.decode import decode_grids_html

    state = panel.set(prompt="<BOS> he has three small dogs . they", step=0)  # its own prompt: the panel is shared
    assert "step 0 is the prefill" in decode_grids_html(state)
    assert "recomputes 0" not in decode_grids_html(state)
    fig = plot_decode_grids(state)
    assert "step 0 is the prefill" in fig.axes[0].get_title()
    plt.close(fig)


def test_a_lone_period_is_labelled_in_quotes_in_the_figures(panel):
    """A "." column label in quotes, so that it reads as a token, not as a speck."""
    import matplotlib.pyplot as plt

    from utils.plots import plot_decode_grids

    fig = plot_decode_grids(panel.set(prompt="<BOS> he has three small dogs . they", step=1))  # its own prompt
    labels = [t.get_text() for t in fig.axes[0].texts] + [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert any(label.startswith("'.'") for label in labels), labels
    plt.close(fig)


@pytest.mark.parametrize("language, example, other", [("en", "'<BOS> she has'", "我"), ("zh", "'<BOS> 我 喜欢'", "she")])
def test_an_unknown_word_message_offers_the_notebooks_language_only(panel, language, example, other):
    """The English message used to offer '<BOS> 我 喜欢' as well, and the Chinese one the English words."""
    set_language(language)
    try:
        panel.controls["prompt"].value = "<BOS> hello"
        message = panel.state["message"]
    finally:
        set_language("en")
        panel.controls["prompt"].value = BY_LANGUAGE["en"]
    assert example in message and other not in message
