"""Each Chinese notebook is the twin of its English one: the same cells, the same code (strings and
comments aside, compared on the AST), the same nbval markers and tags, every markdown cell in
Chinese, and made from the English cells as they are now (tools/nbzh.py keeps them so)."""
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import nbzh  # noqa: E402

from utils.series import SERIES  # noqa: E402

NAMES = [name for name, _ in SERIES]


@pytest.mark.parametrize("name", NAMES)
def test_chinese_twin_has_the_same_code_and_translated_prose(name):
    zh_path = ROOT / "notebooks" / "zh" / name
    assert zh_path.exists(), "make it with `python tools/nbzh.py`, then translate it"
    en = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    problems = nbzh.check_twin(en, nbformat.read(zh_path, as_version=4))
    assert not problems, "\n".join(problems)


# --- what "the same code" means ---------------------------------------------------------------------

def test_strings_and_comments_may_differ():
    assert nbzh.same_code('x = f(1)  # one\nprint("T =", T)', 'x = f(1)  # 一\nprint("T 为", T)')
    assert nbzh.same_code('check("same tokens", a == b)', 'check("token 相同", a == b)')


def test_an_f_string_keeps_its_fields_but_may_reorder_them():
    assert nbzh.same_code('print(f"{n} tokens in {ms:.1f} ms")', 'print(f"用时 {ms:.1f} ms，共 {n} 个 token")')
    assert not nbzh.same_code('print(f"{n} tokens")', 'print(f"{n + 1} 个 token")')
    assert not nbzh.same_code('print(f"{n} tokens")', 'print(f"{n:.1f} 个 token")')


def test_any_change_to_the_code_itself_is_drift():
    en = "out = generate(model, ids, 5, seed=0)"
    for zh in ("out = generate(model, ids, 6, seed=0)", "out = generate(model, ids, 5)",
               "out = generate(model, ids, 5, seed=0)\nprint(out)", "res = generate(model, ids, 5, seed=0)"):
        assert not nbzh.same_code(en, zh), zh


def test_ipython_magics_are_compared_too():
    assert nbzh.same_code("%matplotlib inline\nx = 1", "%matplotlib inline\nx = 1  # 注释")
    assert not nbzh.same_code("%matplotlib inline", "%matplotlib widget\n")
    assert nbzh.nbval_markers("# NBVAL_CHECK_OUTPUT\nx") == ["NBVAL_CHECK_OUTPUT"]


# --- keeping twins in step ---------------------------------------------------------------------------

def _nb(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(c[1]) if c[0] == "md" else nbformat.v4.new_code_cell(c[1]) for c in cells]
    return nb


def test_a_new_twin_is_all_to_translate_and_a_translated_one_is_in_step():
    en = _nb(("md", "# 00 · Title"), ("code", "# the answer\nprint('the answer is', 42)"))
    twin, todo = nbzh.sync_twin(en, None)
    assert len(todo) == 2 and nbzh.check_twin(en, twin)
    twin.cells[0].source = "# 00 · 标题"
    twin.cells[0].metadata[nbzh.KEY].pop("todo")
    twin.cells[1].source = "# 答案\nprint('答案是', 42)"
    assert nbzh.check_twin(en, twin) == []
    again, todo = nbzh.sync_twin(en, twin)
    assert todo == [] and again.cells[1].source == twin.cells[1].source


def test_a_code_change_in_english_keeps_the_chinese_strings_and_reports_the_new_ones():
    old_en = _nb(("md", "Intro"), ("code", "# the answer\nprint('the answer is', 42)"))
    twin, _ = nbzh.sync_twin(old_en, None)
    twin.cells[0].source = "介绍"
    twin.cells[1].source = "# 答案\nprint('答案是', 42)"
    new_en = _nb(("md", "Intro"), ("code", "# the answer\nprint('the answer is', 43)\nprint('and one more line of it')"))
    old_english = {nbzh.en_hash(c.source): c.source for c in old_en.cells}
    synced, todo = nbzh.sync_twin(new_en, twin, old_english)
    code = synced.cells[1].source
    assert "答案是" in code and "# 答案" in code and "43" in code, code
    assert nbzh.same_code(new_en.cells[1].source, code)
    assert any("and one more line of it" in t for t in todo)
    assert synced.cells[0].source == "介绍"


def test_a_changed_english_markdown_cell_is_flagged_not_lost():
    en = _nb(("md", "Intro"))
    twin, _ = nbzh.sync_twin(en, None)
    twin.cells[0].source = "介绍"
    twin.cells[0].metadata[nbzh.KEY].pop("todo")
    synced, todo = nbzh.sync_twin(_nb(("md", "A new intro")), twin)
    assert synced.cells[0].source == "介绍" and todo == ["cell 0: the English changed: update this translation"]


def test_translations_pair_strings_where_they_stand_never_across_a_reordered_f_string():
    en = 'fits = {"thin twin": 1}\nprint(f"{n} x, TPOT {t:.1f} ms per request")\nprint("done")'
    zh = 'fits = {"thin twin": 1}\nprint(f"每个请求的 TPOT 为 {t:.1f} ms，共 {n} 倍")\nprint("完成")'
    pairs = nbzh.translations(en, zh)
    assert pairs == {"done": "完成"}  # the f-string's pieces are not paired: its fields were reordered
    same_order = 'print(f"{n} 倍，每个请求的 TPOT 为 {t:.1f} ms")'
    assert nbzh.translations('print(f"{n} x, TPOT {t:.1f} ms per request")', same_order) == {
        " x, TPOT ": " 倍，每个请求的 TPOT 为 ", " ms per request": " ms"}


def test_a_changed_english_string_in_unchanged_code_is_flagged_not_kept_silently():
    old_en = _nb(("code", "check('the label', True)"))
    twin, _ = nbzh.sync_twin(old_en, None)
    twin.cells[0].source = "check('标签', True)"
    new_en = _nb(("code", "check('a much better label here', True)"))
    old_english = {nbzh.en_hash(c.source): c.source for c in old_en.cells}
    synced, todo = nbzh.sync_twin(new_en, twin, old_english)  # the old English is known: rebuilt
    assert synced.cells[0].source == "check('a much better label here', True)" and any("much better" in t for t in todo)
    synced, todo = nbzh.sync_twin(new_en, twin, {})  # not known (never committed): kept, and flagged
    assert synced.cells[0].source == "check('标签', True)"
    assert todo == ["cell 0: the English changed: update this translation"]


def test_a_pending_todo_survives_a_second_run():
    en = _nb(("md", "Intro"))
    twin, _ = nbzh.sync_twin(en, None)
    twin.cells[0].source = "介绍"
    twin.cells[0].metadata[nbzh.KEY].pop("todo")
    flagged, _ = nbzh.sync_twin(_nb(("md", "A new intro")), twin)
    again, todo = nbzh.sync_twin(_nb(("md", "A new intro")), flagged)
    assert todo == ["cell 0: the English changed: update this translation"]
    assert nbzh.check_twin(_nb(("md", "A new intro")), again)


def test_translations_are_put_back_into_prose_literals_only_never_into_code_data():
    table = {", ": "，", "the answer": "答案", "accepted": "接受"}
    source = ('shown = ("ttft_p50_s", "tpot_p50_s")\nrounds = {"accepted": 3}\n'
              'print(", ".join(shown), "the answer", rounds["accepted"])')
    out = nbzh._apply(source, table)  # a separator and a one-word key may be code: they stay
    assert out == source.replace('"the answer"', '"答案"')
    assert nbzh._apply('"""A docstring line."""', {"A docstring line.": "一行文档。"}) == '"""一行文档。"""'
