"""Notebook 13's figures, panel and exercises in Chinese: after ``set_language("zh")`` every label, title,
legend and panel text of utils/plots/compression.py and utils/widgets/compression.py is Chinese, with no
missing glyph, and the exercises' checks answer in Chinese; symbols, code names and units may stay."""
import re
from pathlib import Path

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

import matplotlib.text  # noqa: E402

import utils.plots as plots  # noqa: E402
from i18n_support import chinese_screen, english_left, figure_texts, panel_texts  # noqa: E402
from utils import load_course_model  # noqa: E402
from utils.i18n import set_language  # noqa: E402
from utils.exercises.compression_exercises import evict_recent, quantize_group  # noqa: E402
from utils.i18n.zh import MESSAGES  # noqa: E402
from utils.widgets import CacheCompressionPanel  # noqa: E402
from utils.widgets.compression import describe, all_settings  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def chinese():
    with chinese_screen():
        yield


@pytest.fixture(scope="module")
def course():
    return load_course_model()


@pytest.fixture(scope="module")
def panel(course):
    model, tok = course
    set_language("zh")
    try:
        return CacheCompressionPanel(model, tok, n_docs=3)
    finally:
        set_language("en")


# --- figures: every plot function of utils/plots/compression.py ------------------------------------------
def _group():
    x = torch.tensor([0.3, -1.2, 0.8, 2.1, -0.4, 1.0, 0.05, -0.9])
    lo, scale = float(x.min()), float(x.max() - x.min()) / 15
    return x, torch.round((x - lo) / scale), scale, lo


_KEPT = {"recent": [[0, 7, 8, 9, 10, 11, 12, 13]] * 2, "key_norm": [[0, 2, 5, 9, 10, 11, 12, 13], [0, 1, 5, 9, 10, 11, 12, 13]],
         "attention": [[0, 1, 3, 9, 10, 11, 12, 13]] * 2}


def _state(panel, **values):
    settings = dict(bits=4, key_group="channel", value_group="token", residual=2, rule="none", budget=6, measure="loss")
    return panel.compute(**{**settings, **values})


CASES = {
    "plot_quantize_group": lambda panel: plots.plot_quantize_group(*_group(), 4),
    "plot_quantize_group 8 bits, titled": lambda panel: plots.plot_quantize_group(*_group()[:1], torch.round(
        (_group()[0] + 1.2) / (3.3 / 255)), 3.3 / 255, -1.2, 8, title="中文标题"),
    "plot_channel_magnitudes": lambda panel: plots.plot_channel_magnitudes(torch.rand(4, 2, 32), torch.rand(4, 2, 32)),
    "plot_kept_positions": lambda panel: plots.plot_kept_positions(_KEPT, 14, 1, 4),
    "plot_compression_tradeoff": lambda panel: plots.plot_compression_tradeoff(_state(panel)),
    "plot_compression_tradeoff match, evicting": lambda panel: plots.plot_compression_tradeoff(
        _state(panel, bits=16, rule="attention", measure="match")),
    "plot_compression_tradeoff max_diff, both": lambda panel: plots.plot_compression_tradeoff(
        _state(panel, bits=8, rule="recent", measure="max_diff")),
}


def test_every_plot_function_of_the_compression_module_has_a_case():
    here = {name for name in dir(plots)
            if name.startswith("plot_") and getattr(plots, name).__module__ == "utils.plots.compression"}
    assert {case.split()[0] for case in CASES} == here


@pytest.mark.parametrize("case", sorted(CASES))
def test_figure_is_chinese(case, panel):
    texts = figure_texts(CASES[case](panel))
    assert any(CJK.search(t) for t in texts)
    assert english_left(texts) == []


# --- the panel, each control moved ---------------------------------------------------------------------
def test_cache_compression_panel_is_chinese(panel):
    texts = panel_texts(panel)
    moves = [("bits", 8), ("key_group", "token"), ("value_group", "channel"), ("residual", 0), ("measure", "match"),
             ("bits", 16), ("rule", "recent"), ("budget", 10), ("rule", "key_norm"), ("measure", "max_diff"),
             ("rule", "attention"), ("bits", 4), ("rule", "none"), ("bits", 16), ("measure", "loss")]
    for name, value in moves:
        panel.controls[name].value = value
        texts += panel_texts(panel)
    assert english_left(texts) == []
    assert MESSAGES["A smaller KV cache: memory against quality"] in texts[0]
    assert any("没有测量同时量化和淘汰" in t for t in texts)  # bits 4 with a rule: said, in Chinese


def test_quality_table_is_chinese_and_its_columns_line_up():
    """The table of notebook 13's sections 4 and 5: Chinese headers (the prose names its 字节 column), and the
    numbers at the same screen column on every line, whatever the width of the Chinese labels."""
    from utils.cache_quality import CacheQuality, quality_table
    from utils.i18n import display_width

    q = CacheQuality(max_logit_diff=0.116, greedy_match=1.0, loss_exact=0.8788, loss_cache=0.87879, nbytes=1,
                     nbytes_exact=4)
    keys = [k for k in all_settings() if k[0] != "exact"][:3] + [k for k in all_settings() if k[0] == "evict"][:2]
    lines = quality_table([(describe(k), 0.28, q) for k in keys], exact_loss=0.8788).splitlines()
    assert english_left(lines) == [] and all(CJK.search(line) for line in lines)
    assert lines[0].split()[:2] == ["设置", "字节"] and "贪心 token 一致率" in lines[0]
    ends = {display_width(line) for line in lines}
    assert len(ends) == 1, lines  # right-aligned numbers end where the header ends
    bytes_end = display_width(lines[0][:lines[0].index("字节") + 2])
    assert all(display_width(line[:line.index("%") + 1]) == bytes_end for line in lines[1:])  # "28%" under 字节
    with pytest.raises(ValueError, match="CacheQuality"):
        quality_table([("no quality", 0.5, None)], exact_loss=0.0)


def test_every_setting_is_described_in_chinese():
    texts = [describe(key) for key in all_settings()] + [describe(None)]
    assert all(CJK.search(t) for t in texts) and english_left(texts) == []


# --- the exercises: Chinese feedback for the reference, a stub and the planted mistakes ----------------
def _floor_codes(x, bits):
    lo, scale = float(x.min()), float(x.max() - x.min()) / (2**bits - 1)
    return torch.floor((x - lo) / scale).long(), scale, lo


def _levels_2_to_the_bits(x, bits):
    lo, scale = float(x.min()), float(x.max() - x.min()) / 2**bits
    return torch.round((x - lo) / scale).long(), scale, lo


def _no_minimum(x, bits):
    lo, scale = float(x.min()), float(x.max() - x.min()) / (2**bits - 1)
    return torch.round(x / scale).long(), scale, lo


def _symmetric(x, bits):
    scale = float(x.abs().max()) / (2 ** (bits - 1) - 1)
    return torch.round(x / scale).long(), scale, 0.0


def _recent_only(n, budget, sinks):
    return list(range(max(0, n - budget), n)), n


# Mistakes learners make (the lead may move these into tests/test_exercises.py's MISTAKES).
MISTAKES_13 = {
    "13.quantize_group": [
        ("floor instead of round", _floor_codes),
        ("2**bits levels between min and max, not 2**bits - 1 steps", _levels_2_to_the_bits),
        ("codes not counted from the minimum", _no_minimum),
        ("symmetric absmax quantization", _symmetric),
        ("the values read back instead of the codes", lambda x, b: (x.clone(), *_floor_codes(x, b)[1:])),
        ("float codes: torch.round without .long()", lambda x, b: (quantize_group(x, b)[0].float(),
                                                                    *quantize_group(x, b)[1:])),
    ],
    "13.evict_recent": [
        ("no sinks: the last budget positions", _recent_only),
        ("the next position = the positions kept", lambda n, b, s: (evict_recent(n, b, s)[0],
                                                                     len(evict_recent(n, b, s)[0]))),
        ("sinks on top of the budget", lambda n, b, s: ((list(range(n)) if n <= b else
                                                         list(range(s)) + list(range(n - b, n))), n)),
        ("one recent position too few", lambda n, b, s: ((list(range(n)) if n <= b else
                                                          list(range(s)) + list(range(n - b + s + 1, n))), n)),
    ],
}


# Each planted mistake gets a hint about itself, not a neighbour's: (English needle, Chinese needle) of the hint
# line, the check's last line. The float codes are a form problem: the message names the dtype.
HINTS_13 = {
    "floor instead of round": ("truncating (`floor`", "截断（`floor`"),
    "2**bits levels between min and max, not 2**bits - 1 steps": ("`2**bits - 1` steps", "只有 `2**bits - 1` 步"),
    "codes not counted from the minimum": ("subtract `min` before dividing", "先减去 `min`"),
    "symmetric absmax quantization": ("asymmetric, not symmetric", "要非对称，不要对称"),
    "the values read back instead of the codes": ("not the values themselves", "而不是数值本身"),
    "float codes: torch.round without .long()": ("(type, shape, dtype)", "类型"),
    "no sinks: the last budget positions": ("the sinks are never evicted", "汇聚点永远不会被淘汰"),
    "the next position = the positions kept": ("not the number of positions kept", "而不是保留下来的位置数"),
    "sinks on top of the budget": ("the budget counts the sinks too", "预算里也算上了汇聚点"),
    "one recent position too few": ("one recent position too few", "最近的位置少了一个"),
}


@pytest.mark.parametrize("exercise_id, name, wrong", [(k, n, f) for k, ms in MISTAKES_13.items() for n, f in ms],
                         ids=[n for ms in MISTAKES_13.values() for n, _ in ms])
@pytest.mark.parametrize("language", ["en", "zh"])
def test_each_mistake_gets_its_own_hint(exercise_id, name, wrong, language, capsys):
    from utils import exercises

    set_language(language)
    try:
        assert not exercises.check(exercise_id, wrong).passed
    finally:
        set_language("zh")  # the fixture's language
    hint = capsys.readouterr().out.strip().splitlines()[-1]
    assert HINTS_13[name][language == "zh"] in hint, hint
    others = [needles[language == "zh"] for other, needles in HINTS_13.items() if other != name]
    assert not any(needle in hint for needle in others), hint


def test_float_codes_are_refused_with_their_dtype(capsys):
    from utils import exercises

    set_language("en")
    try:
        exercises.check("13.quantize_group", lambda x, b: (quantize_group(x, b)[0].float(), *quantize_group(x, b)[1:]))
    finally:
        set_language("zh")
    assert "expected an integer dtype" in capsys.readouterr().out
