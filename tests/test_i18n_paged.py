"""Notebook 10's figures, panel and exercises in Chinese: after ``set_language("zh")`` every label, title,
legend and panel text of utils/plots/paged.py and utils/widgets/paged.py is Chinese, with no missing
glyph, and the exercises' checks answer in Chinese; symbols, code names and units may stay."""
import re
from pathlib import Path
from types import SimpleNamespace as NS

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.text  # noqa: E402

import utils.plots as plots  # noqa: E402
from i18n_support import chinese_screen, english_left, figure_texts, panel_texts  # noqa: E402
from utils import load_course_model  # noqa: E402
from utils.i18n import set_language  # noqa: E402
from utils.i18n.zh import MESSAGES  # noqa: E402
from utils.widgets import BlockMapPanel  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def chinese():
    with chinese_screen():
        yield


# --- figures: every plot function of utils/plots/paged.py -------------------------------------------
def _stats(*medians):
    return [NS(median=m, q1=0.9 * m, q3=1.1 * m) for m in medians]


@pytest.fixture(scope="module")
def course():
    return load_course_model()


@pytest.fixture(scope="module")
def map_state(course):
    model, tok = course
    set_language("zh")
    try:
        return BlockMapPanel(model, tok).compute(step=24, block_size=4, n_blocks=24)
    finally:
        set_language("en")


CASES = {
    "plot_block_table": lambda state: plots.plot_block_table([4, 7], 4, 6, 16, others=[0, 1, 2, 3, 5, 6]),
    "plot_block_table titled": lambda state: plots.plot_block_table([1, 0], 4, 8, 4, title="中文标题"),
    "plot_paged_memory": lambda state: plots.plot_paged_memory(
        {"tokens": 92160, "held": 106496, "pool": 122880, "blocks_held": 13, "blocks_free": 2}, 129024),
    "plot_prefix_caching": lambda state: plots.plot_prefix_caching(
        {"prefix": [16, 64, 192], "full": _stats(1e-3, 2e-3, 5e-3), "cached": _stats(1e-3, 1e-3, 1.2e-3),
         "hit_rate": [0.5, 0.7, 0.73]}),
    "plot_block_map": lambda state: plots.plot_block_map(state),
}


def test_every_plot_function_of_the_paged_module_has_a_case():
    here = {name for name in dir(plots) if name.startswith("plot_") and getattr(plots, name).__module__ == "utils.plots.paged"}
    assert {case.split()[0] for case in CASES} == here


@pytest.mark.parametrize("case", sorted(CASES))
def test_figure_is_chinese(case, map_state):
    texts = figure_texts(CASES[case](map_state))
    assert any(CJK.search(t) for t in texts)
    assert english_left(texts) == []


# --- the panel, each control moved ---------------------------------------------------------------------
def test_block_map_panel_is_chinese(course):
    model, tok = course
    panel = BlockMapPanel(model, tok)
    texts = panel_texts(panel)
    moves = [("step", 0), ("step", 9), ("step", 24), ("step", panel.controls["step"].max), ("n_blocks", 12),
             ("step", 20), ("block_size", 16), ("n_blocks", 48), ("block_size", 8), ("step", 3)]
    for name, value in moves:
        panel.controls[name].value = value
        texts += panel_texts(panel)
    assert english_left(texts) == []
    assert MESSAGES["The block pool of a small serving run, step by step"] in texts[0]


def test_a_pool_too_small_is_said_in_chinese(course):
    model, _ = course
    workload = {"prompts": [[1] * 30], "max_new_tokens": [30], "arrival_s": [0.0]}
    panel = BlockMapPanel(model.cfg, workload=workload, block_size=4, n_blocks=12)
    assert "problem" in panel.state and CJK.search(panel.html.value)
    assert english_left(panel_texts(panel)) == []


# --- the exercises: Chinese feedback for the reference, a stub and the planted mistakes ----------------
def _leading(keys, cached) -> int:
    return next((i for i, k in enumerate(keys) if k not in cached), len(keys))


def _grow_wrong(table, n, m, bs, allocate, copy=None):
    """New blocks until n + m tokens fit, with no copy (copy=(n, writable): the copy-on-write of the right
    answer first, then blocks counted from a wrong n)."""
    table = list(table)
    if copy is not None and m and copy[0] % bs and table and not copy[1](table[-1]):
        table[-1] = allocate()
    while len(table) * bs < n + m:
        table.append(allocate())
    return table


# Mistakes learners make (the lead may move these into tests/test_exercises.py's MISTAKES).
MISTAKES_10 = {
    "10.grow_table": [
        ("no copy-on-write: a shared block written", lambda t, n, m, bs, w, a: _grow_wrong(t, n, m, bs, a)),
        ("the copy appended after the old block",
         lambda t, n, m, bs, w, a: _grow_wrong(t + ([a()] if m and n % bs and t and not w(t[-1]) else []), n, m, bs, a)),
        ("new blocks for m alone", lambda t, n, m, bs, w, a: _grow_wrong(t, len(t) * bs, m, bs, a, copy=(n, w))),
        ("a full shared block copied too",
         lambda t, n, m, bs, w, a: _grow_wrong(t[:-1] + [a()] if m and t and not w(t[-1]) else list(t), n, m, bs, a)),
    ],
    "10.prefix_hit": [
        ("every cached key counts, holes too", lambda k, c, n, bs: min(sum(x in c for x in k) * bs, n - 1)),
        ("no full-hit rule", lambda k, c, n, bs: _leading(k, c) * bs),
        ("blocks, not tokens", lambda k, c, n, bs: min(_leading(k, c), n - 1)),
        ("always one token less", lambda k, c, n, bs: max(0, _leading(k, c) * bs - 1)),
    ],
}


# Each planted mistake of 10.grow_table gets the hint about its own mistake (the last line), in both languages.
GROW_HINTS = {
    "no copy-on-write: a shared block written": ("`table[-1] = allocate()`", "写时复制"),
    "the copy appended after the old block": ("replaces the last block", "副本替换块表里的最后一块"),
    "new blocks for m alone": ("`ceil((n + m) / block_size)` blocks", "要算上最后一块剩下的空位"),
    "a full shared block copied too": ("the next token starts a new block", "下一个 token 从新块开始"),
}


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("name", list(GROW_HINTS))
def test_each_grow_table_mistake_gets_the_hint_that_names_it(name, language, capsys):
    from utils import exercises

    set_language(language)
    try:
        exercises.check("10.grow_table", dict(MISTAKES_10["10.grow_table"])[name])
    finally:
        set_language("en")
    hint = capsys.readouterr().out.strip().splitlines()[-1]
    assert GROW_HINTS[name][language == "zh"] in hint, hint
