"""Chinese screen, part a: the figures and panels of notebooks 00 to 04 speak Chinese after
``set_language("zh")``: no English word left, no missing catalogue entry, no missing glyph.

Covers utils/plots/{prefill,attention,decode,sizing}.py and utils/widgets/{prefill,attention,decode,sizing}.py
(the catalogue part is utils/i18n/zh_inference.py). Titles and tokens a caller passes are the caller's
business: they are Chinese here, as in the Chinese notebooks. Words the model writes (the panels run a
random model of the course shape) are data too, and are taken out before the check.
"""
import html
import io
import re
import string
from types import SimpleNamespace as NS

import ipywidgets as widgets
import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import utils.plots as plots  # noqa: E402
from i18n_support import english_left  # noqa: E402
from i18n_support import chinese_screen  # noqa: E402
from test_fonts import TITLE, _SEGMENTS, _T, _course_config, _stats  # noqa: E402
from utils.i18n import set_language  # noqa: E402
from utils.i18n import zh_inference  # noqa: E402
from utils.perf import torch_threads  # noqa: E402
from utils.widgets import (  # noqa: E402
    CUSTOM, T_CHOICES, AttentionShapesPanel, BudgetPlanner, DecodePanel, KVCacheExplorer, PrefillKVPanel,
)

WORDS = ["<BOS>", "我", "喜欢", "兔子", "。", "他们", "不", "也", "有", "三", "匹", "黑", "马"]  # no English token
N = len(WORDS)
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def chinese():
    """Every test here runs in Chinese, with a missing glyph an error; English again afterwards."""
    with chinese_screen():
        yield


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    with torch_threads(1):
        yield


def figure_texts(fig) -> list[str]:
    """Draw ``fig`` (tick labels are made, glyphs looked up), close it and return every text on it."""
    fig.savefig(io.BytesIO(), format="png", dpi=40)
    texts = [t.get_text() for t in fig.findobj(Text)]
    plt.close(fig)
    return texts


def without(texts, data_words) -> list[str]:
    """``texts`` with the words in ``data_words`` (tokens the model wrote, vocabulary examples) taken out."""
    out = []
    for text in texts:
        for w in sorted(set(data_words), key=len, reverse=True):
            text = re.sub(rf"(?<![\w']){re.escape(w)}(?![\w'])", "", str(text))
        out.append(text)
    return out


def check_chinese(texts) -> None:
    """Some Chinese, and no English word left. Not read as words: a panel's CSS, code names in
    ``<code>`` (x, k_rep, scores: the notebook's variables), mathtext's markup of log-axis ticks,
    and ln in a formula ("ln 64 = 4.16", as log and exp are kept by i18n_support)."""
    texts = [re.sub(r"<style>.*?</style>|<code[^>]*>.*?</code>|\\mathdefault|\bln(?= \d)", " ", t, flags=re.S)
             for t in texts if t]
    assert any(CJK.search(t) for t in texts), texts
    assert english_left(texts) == []


# --- every plot function of part a, with its defaults where it has any --------------------------
def _axes(draw):
    fig, (ax,) = plots.new_figure()
    draw(ax)
    return fig


def _decode_state():
    return dict(prompt_len=4, n_steps=3, step=2, n_recomputed=5, cache_len=6, cache_len_per_layer=[6, 6, 6, 6],
                tokens=WORDS[:7])


def _budget(**kw):
    return BudgetPlanner(**kw).state


FIGURES = {
    "plot_timeline": lambda: plots.plot_timeline(_SEGMENTS, WORDS[1:7]),
    "plot_top_probs": lambda: plots.plot_top_probs(WORDS[:6], [0.5, 0.2, 0.1, 0.1, 0.05, 0.05]),
    "plot_top_probs beside the grammar": lambda: plots.plot_top_probs(
        ["猫", "狗", "兔子"], [0.7, 0.2, 0.1], prompt="<BOS> 我 喜欢"),
    "plot_ttft": lambda: plots.plot_ttft(_T, [1e-3, 3e-3, 9e-3]),
    "plot_kv_heatmap": lambda: plots.plot_kv_heatmap(np.ones((N, 8)), WORDS, TITLE),
    "plot_padding_waste": lambda: plots.plot_padding_waste(
        [["<PAD>", "<PAD>", *WORDS[:3]], WORDS[:5], ["<PAD>", *WORDS[5:9]]],
        [[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [0, 1, 1, 1, 1]]),
    "plot_mask": lambda: _axes(lambda ax: plots.plot_mask(ax, np.tril(np.ones((N, N))), offset=3)),
    "plot_weights": lambda: _axes(lambda ax: plots.plot_weights(ax, np.eye(N))),
    "plot_head_groups GQA": lambda: _axes(lambda ax: plots.plot_head_groups(ax, 8, 2)),
    "plot_head_groups MHA": lambda: _axes(lambda ax: plots.plot_head_groups(ax, 4, 4)),
    "plot_head_groups MQA": lambda: _axes(lambda ax: plots.plot_head_groups(ax, 4, 1)),
    "plot_rope_scores": lambda: _axes(lambda ax: plots.plot_rope_scores(ax, np.eye(N))),
    "plot_softmax_saturation": lambda: plots.plot_softmax_saturation(
        _T, {"除以 √d_h": [0.1, 0.1, 0.1], "不缩放": [0.4, 0.7, 0.9]},
        {"除以 √d_h": [3.7, 3.7, 3.7], "不缩放": [2.1, 0.9, 0.2]}, 64),
    "plot_rope_frequencies": lambda: plots.plot_rope_frequencies(10000.0 ** (-np.arange(16) / 16), 256),
    "plot_kv_vs_context": lambda: _axes(lambda ax: plots.plot_kv_vs_context(
        ax, {"课程模型": 4096, "Llama-3-8B": 131072}, 262144, mark=(4096, 2**29), highlight="Llama-3-8B",
        max_context=131072, limits={"Llama-3-8B": 131072})),
    "plot_per_token_bars": lambda: _axes(lambda ax: plots.plot_per_token_bars(
        ax, ["课程模型", "Llama-3-8B", "Llama-2-7B"], [4096, 131072, 524288], ["GQA", "GQA", "MHA"])),
    "plot_budget": lambda: plots.plot_budget(_budget(model="TinyLlama-1.1B", GPU_GiB=24)),
    "plot_budget with padding": lambda: plots.plot_budget(_budget(model="TinyLlama-1.1B", T=1024, padding=0.3)),
    "plot_decode_grids": lambda: plots.plot_decode_grids(_decode_state()),
    "plot_recompute_diffs": lambda: plots.plot_recompute_diffs(NS(max_diffs=[0.0, 1e-6, 2e-6], tol=1e-4)),
    "plot_step_times": lambda: plots.plot_step_times(
        {"T": _T, "cached": _stats(1e-3, 1.1e-3, 1.3e-3), "no_cache": _stats(2e-3, 6e-3) + [None]}),
    "plot_step_costs": lambda: plots.plot_step_costs(_course_config(), _T),
    "plot_bytes_and_step_time": lambda: plots.plot_bytes_and_step_time(
        _course_config(), {"T": [1024, 4096, 8192], "step": _stats(1e-3, 1.5e-3, 2.2e-3)}),
    "plot_new_query_weights": lambda: plots.plot_new_query_weights(np.full((4, N), 1 / N), WORDS),
}
PART_A = {"prefill", "attention", "decode", "sizing"}


def test_every_plot_function_of_part_a_has_a_case():
    ours = {name for name in dir(plots) if name.startswith("plot_")
            and getattr(plots, name).__module__.rsplit(".", 1)[-1] in PART_A}
    assert ours == {name.split()[0] for name in FIGURES}


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_is_chinese(name):
    check_chinese(figure_texts(FIGURES[name]()))


# --- every panel of part a, each control moved through a few values -----------------------------
def widget_texts(w) -> list[str]:
    """What a learner reads on ``w`` and its children: labels, option labels, tooltips, HTML."""
    texts = [getattr(w, name, "") for name in ("description", "placeholder", "tooltip")]
    if isinstance(w, (widgets.HTML, widgets.Label)):
        texts.append(w.value)
    texts += list(getattr(w, "_options_labels", ()))
    for child in getattr(w, "children", ()):
        texts += widget_texts(child)
    return [t for t in texts if isinstance(t, str)]


def panel_texts(panel, data_words=()) -> list[str]:
    assert "error" not in panel.state, panel.state.get("error")  # a missing catalogue entry lands here
    texts = widget_texts(panel.widget) + [panel.html.value]
    if panel.fig is not None:
        texts += figure_texts(panel.fig)
    return without(texts, data_words)


def sweep(panel, moves, data_words=lambda s: ()) -> None:
    """Set each control to each value in turn; after every move the panel must be all Chinese."""
    check_chinese(panel_texts(panel, data_words(panel.state)))
    for name, values in moves:
        for value in values:
            panel.controls[name].value = value
            check_chinese(panel_texts(panel, data_words(panel.state)))


def test_attention_shapes_panel():
    panel = AttentionShapesPanel()
    sweep(panel, [("T", [1, 9]), ("H", [8, 6]), ("H_kv", [1, 6, 3]), ("H", [1])])


def test_prefill_panel(model_tok):
    panel = PrefillKVPanel(*model_tok, prompts=("<BOS> 他 有 两 只", "<BOS> 我 很 喜欢 猫 。 他 有 两 只"))
    sweep(panel, [("prompt", list(panel.controls["prompt"].options)[::-1]), ("layer", [0, 3, 1]),
                  ("head", [1, 0]), ("tensor", ["V", "K"])], lambda s: [s["first_token"]])


def test_decode_panel(model_tok):
    model, tok = model_tok
    english = [w for w in tok.vocab if w.isascii()]  # the message about an unknown word lists them
    english += [html.escape(w) for w in english]  # as the panel shows them: don&#x27;t
    panel = DecodePanel(model, tok, prompt="<BOS> 他 有 三 只 小 狗 。 他们 有 两 匹", max_new_tokens=6)
    sweep(panel, [("step", [1, 3, 5, 0]), ("prompt", ["我 喜欢 notaword", "我 " * 260, "她 也 喜欢 鱼"]),
                  ("step", [2])],
          lambda s: s.get("tokens", []) + english + ["notaword"])


def test_kv_cache_explorer():
    panel = KVCacheExplorer()
    assert CUSTOM in [value for _, value in panel.controls["preset"].options]
    sweep(panel, [("T", [T_CHOICES[-1], 1, 4096]), ("preset", ["GPT-2 (124M)", "Llama-3.1-70B"]),
                  ("dtype", ["int8", "float32"]), ("L", [3]), ("B", [4]), ("H_kv", [1]), ("d_h", [8])])
    assert panel.controls["preset"].value == CUSTOM


def test_budget_planner():
    panel = BudgetPlanner()
    sweep(panel, [("padding", [0.3, 0.0]), ("GPU_GiB", [8, 192]), ("model", ["GPT-2 (124M)", "Llama-2-70B"]),
                  ("T", [T_CHOICES[-1]]), ("weights_dtype", ["float32"]), ("dtype", ["int8"]),
                  ("reserve", [0.5])])


# --- the catalogue part itself -------------------------------------------------------------------
def _fields(text: str) -> list:
    return sorted((name, spec) for _, name, spec, _ in string.Formatter().parse(text) if name is not None)


def test_each_translation_keeps_the_english_fields():
    for english, chinese in zh_inference.MESSAGES.items():
        assert _fields(chinese) == _fields(english), english


def test_chinese_tokens_are_not_glossed_in_chinese(model_tok):
    """The English notebooks gloss 猫 as "猫 (cat)"; a Chinese reader sees 猫 alone, in figures and panels."""
    fig = plots.plot_top_probs(["猫", "狗"], [0.7, 0.3], prompt="<BOS> 我 喜欢")
    texts = figure_texts(fig)
    assert "猫" in texts and not any("(cat)" in t for t in texts)
    assert "语法给出的精确概率" in texts  # the grammar's line, named in Chinese
    panel = PrefillKVPanel(*model_tok)
    assert "(he)" not in panel.html.value and "他" in panel.html.value  # its default prompt is Chinese here
    assert all(not p.isascii() for p in panel.controls["prompt"].options)


def test_english_is_unchanged_by_the_switch():
    set_language("en")
    fig = plots.plot_top_probs(["猫"], [1.0])
    assert fig.axes[0].get_title() == "Next-token probabilities" and fig.axes[0].get_ylabel() == "probability"
    plt.close(fig)
    assert KVCacheExplorer().state["bytes_text"] == "536,870,912 bytes (512.0 MiB)"
