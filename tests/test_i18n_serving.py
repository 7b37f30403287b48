"""Notebook 11's screen in Chinese: after ``set_language("zh")`` its figures (plot_iterations,
plot_engine_timeline), its panel (EngineTimelinePanel) and its exercises' feedback (11.plan_step,
11.itl_stall) leave no English word behind and draw no missing glyph. Also the mistakes those
exercises must catch, with a hint, in both languages (MISTAKES_11, for tests/test_exercises.py)."""
import re
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.text  # noqa: E402

import utils.plots as plots  # noqa: E402
from i18n_support import chinese_screen, english_left, figure_texts, widget_texts  # noqa: E402
from utils.course_model import COURSE_CONFIG  # noqa: E402
from utils.exercises.serving_exercises import _preempt_by, itl_stall, plan_step  # noqa: E402
from utils.i18n import display_width  # noqa: E402
from utils.serving import PagedEngine, StepCostModel, random_workload, summary_table  # noqa: E402
from utils.widgets import EngineTimelinePanel  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
COSTS = StepCostModel(fixed=4e-5, per_forward=7e-4, per_row=1.2e-4, per_token=3.4e-5)
WORK = random_workload(10, 64, prompt_lens=(8, 40), new_tokens=(4, 20), seed=5)
CJK = re.compile(r"[\u4e00-\u9fff]")


# --- the mistakes the exercises must catch (each one learners make) ---------------------------------
def _prefill_first(decoding, prefilling, budget, chunk):
    chunks = []
    for rid, left in prefilling:
        n = min(left, budget) if chunk is None else min(left, chunk, budget)
        if n < 1:
            break
        chunks.append((rid, n))
        budget -= n
    return list(decoding[:budget]), chunks


def _chunks_ignore_the_budget(decoding, prefilling, budget, chunk):
    return list(decoding[:budget]), [(rid, left if chunk is None else min(left, chunk)) for rid, left in prefilling]


def _whole_chunks_only(decoding, prefilling, budget, chunk):
    decode, chunks = list(decoding[:budget]), []
    budget -= len(decode)
    for rid, left in prefilling:
        n = left if chunk is None else min(left, chunk)
        if n > budget:
            break
        chunks.append((rid, n))
        budget -= n
    return decode, chunks


def _last_chunk_counted_full(prompt_len, chunk, n_decoding, fixed_s, per_token_s):
    c = prompt_len if chunk is None else chunk
    one = fixed_s + per_token_s * (n_decoding + c)
    return one, -(-prompt_len // c) * one


MISTAKES_11 = {
    "11.plan_step": [
        ("prefill first, decodes get what is left", _prefill_first),
        ("ignores prefill_chunk", lambda d, p, budget, chunk: plan_step(d, p, budget, None)),
        ("chunks ignore the budget", _chunks_ignore_the_budget),
        ("only whole chunks", _whole_chunks_only),
    ],
    "11.itl_stall": [
        ("the decode tokens forgotten", lambda P, c, n, f, t: itl_stall(P, c, 0, f, t)),
        ("the last chunk counted full", _last_chunk_counted_full),
        ("TTFT of one chunk only", lambda P, c, n, f, t: (itl_stall(P, c, n, f, t)[0],) * 2),
    ],
    "11.preempt": [
        ("the request asking is preempted", lambda running, free: _preempt_by(running, free, "asking")),
        ("the request admitted first is preempted", lambda running, free: _preempt_by(running, free, "first")),
        ("the request holding the most blocks is preempted", lambda running, free: _preempt_by(running, free, "most")),
        ("a victim's blocks never come back", lambda running, free: _preempt_by(running, free, give_back=False)),
    ],
}


# --- Chinese --------------------------------------------------------------------------------------------
@pytest.fixture
def chinese():
    with chinese_screen():
        yield


def _steps(chunk):
    engine = PagedEngine(COURSE_CONFIG, n_blocks=6, block_size=16, max_batch_tokens=32, prefill_chunk=chunk,
                         costs=COSTS)
    for p, n in zip(WORK.prompts, WORK.max_new_tokens):
        engine.add_request(p, n)
    return engine.run().steps


def test_plot_iterations_is_chinese(chinese):
    runs = {"不分块": _steps(None), "分块 8": _steps(8)}
    assert any(s["preempted"] for s in runs["不分块"] + runs["分块 8"])  # the preemption marker is drawn too
    for title in (None, "中文标题"):
        texts = figure_texts(plots.plot_iterations(runs, budget=32, title=title))
        assert any(CJK.search(t) for t in texts) and english_left(texts) == []
    plt.close("all")


def test_panel_and_plot_engine_timeline_are_chinese(chinese):
    panel = EngineTimelinePanel(COURSE_CONFIG, WORK, costs=COSTS)
    texts = []
    for name, value in [("prefill_chunk", 0), ("max_batch_tokens", 8), ("rate", 1600), ("prefill_chunk", 64),
                        ("max_batch_tokens", 256), ("rate", 25)]:
        panel.controls[name].value = value
        assert "error" not in panel.state, panel.state.get("error")
        texts += widget_texts(panel.widget) + figure_texts(panel.fig)
    assert english_left(texts) == []
    assert "关闭" in panel.controls["prefill_chunk"]._options_labels
    texts = figure_texts(plots.plot_engine_timeline(panel.state, title="中文标题"))
    assert english_left(texts) == []
    plt.close("all")




def test_summary_table_is_chinese_and_its_columns_line_up(chinese):
    """The table notebooks 06 and 11 print: Chinese headers, and every line as wide as the header on screen
    (a Chinese label takes two columns per character, so padding counts display width, not characters)."""
    run = PagedEngine(COURSE_CONFIG, n_blocks=6, block_size=16, max_batch_tokens=32, prefill_chunk=8, costs=COSTS)
    for p, n in zip(WORK.prompts, WORK.max_new_tokens):
        run.add_request(p, n)
    s = run.run().summary()
    by_load = {("低负载", "逐个处理（FIFO）"): s, ("高负载", "连续批处理"): s}
    for table in (summary_table(by_load, ("速率", "服务方式"), e2e=True),
                  summary_table({"分页引擎（分块预填充）": s, "笔记本 06 的填充批引擎": s})):
        lines = table.splitlines()
        assert english_left(lines) == [] and "吞吐量" in lines[0] and "计算期间" in lines[0]
        bars = {tuple(display_width(line[:i]) for i, ch in enumerate(line) if ch == "|") for line in lines}
        assert len(bars) == 1, table  # every "|" at the same screen column on every line
    assert "端到端" in summary_table({("a", "b"): s}, ("速率", "服务方式"), e2e=True)
    with pytest.raises(ValueError, match="2 part"):
        summary_table({"只有一个名字": s}, ("速率", "服务方式"))


# Each planted mistake of 11.preempt gets the hint about its own mistake (the last line), in both languages.
PREEMPT_HINTS = {
    "the request asking is preempted": ("not the one asking", "而不是正在要块的那个"),
    "the request admitted first is preempted": ("admitted first", "最先被接纳"),
    "the request holding the most blocks is preempted": ("holding the most blocks", "持有块最多"),
    "a victim's blocks never come back": ("go back to the pool at once", "立刻回到块池"),
}


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("name", list(PREEMPT_HINTS))
def test_each_preempt_mistake_gets_the_hint_that_names_it(name, language, capsys):
    from utils import exercises
    from utils.i18n import set_language

    set_language(language)
    try:
        exercises.check("11.preempt", dict(MISTAKES_11["11.preempt"])[name])
    finally:
        set_language("en")
    hint = capsys.readouterr().out.strip().splitlines()[-1]
    assert PREEMPT_HINTS[name][language == "zh"] in hint, hint
