"""Chinese feedback: after ``set_language("zh")`` the exercises' checks, the mystery lab and the bug lab
print Chinese, judge exactly as in English, and leave no English word behind.

Covers utils/exercises (check and its judges), utils/bug_lab/mysteries.py (diagnose, probe),
utils/bug_lab/harness.py and the texts of utils/bug_lab/catalogue.py, the comments and docstrings of its code diffs
included (the catalogue part is utils/i18n/zh_exercises.py). What stays as it is:
Python string literals in a message (a case's own text, such as a stop string, and the words of
``VOCABULARY``) and the text of an exception raised by Python or torch in the learner's code.
"""
import inspect
import re
import textwrap

import pytest
import torch

from i18n_support import english_left
from test_exercises import MISTAKES
from utils import bug_lab as bugs
from utils.bug_lab import mysteries
from utils import exercises as E
from utils.bug_lab.harness import speak
from utils.i18n import display_width, set_language
from utils.course_model import load_course_model
from utils.i18n import tr

DATA = re.compile(r"'[^']*'")  # a Python string literal: data, or a word of VOCABULARY
# what Python, torch or a module said (re.error: ...); ValueError is ours
ERROR_TEXT = re.compile(r"\b(?!ValueError)(?:[a-z_]\w*\.)*(?:[A-Z]\w*Error|error): .*")
# Words the Chinese lessons keep in English (lessons/zh/07-bug-lab.md) that i18n_support.KEPT lacks.
KEPT_HERE = {"bug", "dropout"}
CJK = re.compile(r"[\u4e00-\u9fff]")
FORM_HINT = {"en": "first return what the contract asks for", "zh": "先按函数约定返回"}


@pytest.fixture(autouse=True)
def zh():
    set_language("zh")
    mysteries._tries.clear()
    yield
    set_language("en")
    mysteries._tries.clear()


def english_in(text: str) -> list[str]:
    lines = [ERROR_TEXT.sub("", DATA.sub("", line)) for line in text.splitlines()]
    return [w for w in english_left(lines) if w.split("'")[1] not in KEPT_HERE]


def printed(capsys, fn, *args):
    result = fn(*args)
    return result, capsys.readouterr().out


@pytest.fixture(scope="module")
def course():
    model, tok = load_course_model()
    return model, torch.tensor([tok.encode("<BOS> she has two white cats . she also likes")])


# --- exercises.check ---------------------------------------------------------------------------------

def _stub(*args):
    raise NotImplementedError


@pytest.mark.parametrize("exercise_id", sorted(E.EXERCISES))
def test_a_stub_the_reference_and_a_wrong_function_get_chinese_feedback(exercise_id, capsys):
    report, out = printed(capsys, E.check, exercise_id, _stub)
    assert not report.written and out.startswith(f"{exercise_id}：还没有写：轮到你了") and not english_in(out)

    report, out = printed(capsys, E.check, exercise_id, E.EXERCISES[exercise_id].solution)
    assert report.passed and f"{exercise_id}：全部 {len(report.cases)} 个用例通过。" in out
    assert out.count("✓") == len(report.cases) and not english_in(out), english_in(out)

    for wrong in [lambda *args: None] + [fn for _, fn in MISTAKES[exercise_id]]:
        report, out = printed(capsys, E.check, exercise_id, wrong)
        assert not report.passed and "✗" in out and "提示：" in out and "Traceback" not in out
        assert not english_in(out), english_in(out)
        assert all(CJK.search(line) for line in out.splitlines() if not line.startswith("  ✓")), out


@pytest.mark.parametrize("exercise_id", sorted(E.EXERCISES))
def test_a_mistake_gets_the_same_verdict_and_the_same_kind_of_hint_in_both_languages(exercise_id, capsys):
    """A slip of form (type, shape, dtype) gets the form hint, the idea going wrong the idea's hint,
    whatever the language: the judges mark form problems, they do not rely on English words."""
    wrongs = [lambda *args: None, lambda *args: [1.0]] + [fn for _, fn in MISTAKES[exercise_id]]
    for wrong in wrongs:
        seen = {}
        for lang in ("en", "zh"):
            set_language(lang)
            report, out = printed(capsys, E.check, exercise_id, wrong)
            marks = [line.split()[0] for line in out.splitlines() if line.startswith("  ")]
            seen[lang] = (report.passed, [c.ok for c in report.cases], marks, FORM_HINT[lang] in out)
            assert lang == "en" or not english_in(out), english_in(out)
        assert seen["en"] == seen["zh"], (exercise_id, seen)


def test_the_judges_name_what_came_back_in_chinese(capsys):
    E.check("02.last_valid_logits", lambda logits, mask: logits[:, -1])
    assert "第 0 行：你返回的是位置 4 的 logits，而这一行最后一个真实 token 在位置 2" in capsys.readouterr().out
    kv_bytes = E.EXERCISES["04.kv_bytes_from_config"].solution
    E.check("04.kv_bytes_from_config", lambda c, T, B, dt: float(kv_bytes(c, T, B, dt)))
    out = capsys.readouterr().out
    assert "数值对了，但应返回 `int`（实际是 `float`" in out and FORM_HINT["zh"] in out and not english_in(out)
    E.check("07.fix_position", lambda m, t, c: m(t[:, None], cache=c, position_ids=torch.tensor([c.seq_len])))
    out = capsys.readouterr().out  # the contract's shape, said in Chinese though it travels as a ValueError
    assert "logits 的形状应为 [B, V] = [2, 64]，实际是 [2, 1, 64]" in out and FORM_HINT["zh"] in out
    E.check("07.fix_position", lambda m, t, c: m(t[:, None], cache=c, position_ids=torch.tensor([0]))[:, -1])
    out = capsys.readouterr().out
    assert "compare_with_recompute：第 1 步（位置 9）出现偏差" in out and "提示：新 token 的位置等于缓存里已有的 token 数" in out


def test_a_wrong_exercise_or_diagnosis_is_refused_in_chinese():
    with pytest.raises(ValueError, match=r"^没有练习 '09.nope'；现有的练习是 \['01.causal_mask'"):
        E.check("09.nope", lambda: None)
    with pytest.raises(ValueError, match=r"^`check\('01.causal_mask', fn\)` 需要你的函数本身.*实际传入的是 5（int）$"):
        E.check("01.causal_mask", 5)
    set_language("en")  # the English messages are as they were
    with pytest.raises(ValueError, match="unknown exercise '09.nope'"):
        E.check("09.nope", lambda: None)


# --- the mystery lab -----------------------------------------------------------------------------------

def test_the_probe_prints_chinese_and_keeps_its_rows(course):
    model, prompt = course
    for n in [None, *range(1, 11)]:
        probe = mysteries.probe(model, prompt, n)
        text = str(probe)
        assert not english_in(text), (n, english_in(text))
        head = [c.strip() for c in text.splitlines()[1].split("|")]
        assert head == ["前向计算", "行", "输入 ids", "位置", "最后一个查询的掩码行", "缓存：长度（真实）", "新 K", "新 V",
                        "各层输出", "logits"]
        assert [r["pass"] for r in probe.rows] == ["prefill", "step 1", "step 2"]  # the data stays as it was
        names = [line.split("|")[0].strip() for line in text.splitlines()[3:]]
        assert [name for name in names if name] == ["预填充", "第 1 步", "第 2 步"]
        widths = {display_width(line) for line in text.splitlines()[1:3]}
        assert len(widths) == 1  # the header and the rule line up, Chinese characters counted two columns wide


def test_each_mystery_checks_and_diagnoses_in_chinese(course, capsys):
    model, prompt = course
    for n in range(1, 11):
        m = E.mystery(n)
        summary = m.check(model, prompt).summary()
        assert re.fullmatch(r"第 \d 步（位置 \d+）出现偏差|第 \d 步抛出 \w+", summary), summary
        accepted = {w for words in m._answers for w in words}
        wrong = [w for w in E.VOCABULARY if w not in accepted][:3]
        for k, word in enumerate(wrong):
            assert E.diagnose(n, word) is False
            out = capsys.readouterr().out
            assert out.startswith(f"✗ 不是 '{word}'：") and not english_in(out), english_in(out)
            assert ("提示：" in out) == (k == 1) and (f"谜题 {n} 是 '{m._answer}'" in out) == (k == 2)
        assert E.diagnose(n, m._answer) is True
        out = capsys.readouterr().out
        assert out.startswith(f"✓ 谜题 {n} 就是 '{m._answer}'") and ("原因：" in out or "检查：" in out)
        assert not english_in(out), english_in(out)
    assert E.diagnose(3, "香蕉") is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 谜题 3：'香蕉' 不在词表里") and ", ".join(E.VOCABULARY) in out


@pytest.mark.parametrize("language", ["en", "zh"])
def test_diagnose_also_takes_the_chinese_words(language, capsys):
    set_language(language)
    chinese = {"position": "位置", "mask": "掩码", "axis": "拼接维度", "padding": "填充", "dropout": "随机失活",
               "layer0": "第 0 层", "refeed": "重复送入", "beam": "束搜索", "reset": "重置", "value": "值"}
    assert {mysteries.ALIASES[w.replace(" ", "")] for w in chinese.values()} == set(chinese)
    assert set(mysteries.ALIASES.values()) <= set(E.VOCABULARY)
    for n in range(1, 10):
        answer = E.mystery(n)._answer
        assert E.diagnose(n, chinese[answer]) is True
        assert f"'{answer}'" in capsys.readouterr().out  # named by its word of VOCABULARY
    assert E.diagnose(10, "第 0 层和填充") is True
    mysteries._tries.clear()
    E.diagnose(3, "掩码")
    E.diagnose(3, "mask")  # the same guess in the other language counts once: no hint yet
    assert "提示" not in capsys.readouterr().out and "Hint" not in capsys.readouterr().out


# --- the bug lab -------------------------------------------------------------------------------------

def test_every_bug_text_has_chinese(capsys):
    for bug in bugs.BUGS:
        for text in (bug.title, bug.symptom, bug.cause, bug.check):
            assert CJK.search(tr(text)) or text in ("model.eval()", "cache.reorder(parents)"), text
            assert not english_in(tr(text)), english_in(tr(text))


def test_the_bug_table_and_the_outcomes_are_chinese(course):
    model, prompt = course
    results = bugs.run_all(model, prompt)
    text = bugs.table(results, bugs.use_cache_hashes(model, prompt, 2))
    assert not english_in(text), english_in(text)
    lines = text.splitlines()
    assert [c.strip() for c in lines[0].split("|")] == ["bug", "症状", "原因", "检查 / 修复", "首次出现差异"]
    assert lines[-1].endswith("哈希相同：True") and len(lines) == 2 + len(bugs.BUGS) + 1
    assert len({display_width(line) for line in lines[:2]}) == 1
    for bug, broken, fixed in results:
        assert tr(bug.title) in text
        assert fixed.summary().startswith("通过：") and fixed.short() == "通过"
        assert not english_in(broken.summary() + "\n" + broken.short())


def test_english_is_unchanged_after_chinese(course, capsys):
    set_language("en")
    model, prompt = course
    out = bugs.run_check(model, prompt, prefill_fn=bugs.prefill_into(bugs.ConcatOnHeadsKVCache))
    assert out.summary() == "raises RuntimeError at step 1" and out.short() == "raises at step 1"
    assert bugs.run_check(model, prompt).summary() == "OK: 7 steps equal within 0.0001"
    assert str(mysteries.probe(model, prompt)).splitlines()[1].startswith("pass    | row | input ids | positions")
    E.check("01.causal_mask", _stub)
    assert capsys.readouterr().out.startswith("01.causal_mask: not written yet: your turn")


# --- the bug lab's code diffs: their comments and docstrings in Chinese ---------------------------------------

COMMENT = re.compile(r"#\s*(.*)$")  # the code of the bug lab holds no "#" inside a string
DOCSTRING = re.compile(r'"""(.*)"""')


def _diffs() -> dict[str, str]:
    """Every diff the bug lab shows: each bug's (show_fix, the panel), and the chunked prefill's (notebook 07)."""
    diffs = {bug.key: bugs.show_fix(bug) for bug in bugs.BUGS}
    diffs["chunks"] = bugs.show_diff(bugs.prefill_chunks_short_mask, bugs.prefill_chunks_full_mask)
    return diffs


def _prose_lines(code: str) -> list[str]:
    """The comments and the docstrings of ``code`` (a diff or a source)."""
    found = []
    for line in code.splitlines():
        if line.startswith(("---", "+++", "@@")):
            continue
        found += [m.group(1) for m in (COMMENT.search(line), DOCSTRING.search(line)) if m]
    return found


def test_no_english_comment_is_left_in_a_chinese_diff():
    for key, diff in _diffs().items():
        assert diff.startswith("--- 坏版本\n+++ 修好版本\n"), key
        prose = _prose_lines(diff)
        assert prose and all(CJK.search(text) for text in prose), (key, [t for t in prose if not CJK.search(t)])
        assert not english_in("\n".join(prose)), (key, english_in("\n".join(prose)))
        marks = [text for text in prose if text.startswith(("BUG", "修复"))]
        assert any(m.startswith("BUG：") for m in marks) and any(m.startswith("修复：") for m in marks), key


def test_every_comment_of_the_variants_is_chinese_whatever_the_diff_shows():
    """Not only the lines a diff shows today: every comment and docstring of every variant, so that a change in
    the code (another context line) cannot bring an English comment into a Chinese notebook."""
    variants = [v for bug in bugs.BUGS for v in (bug.broken, bug.fixed)]
    variants += [bugs.prefill_chunks_short_mask, bugs.prefill_chunks_full_mask]
    for variant in variants:
        prose = _prose_lines(speak(textwrap.dedent(inspect.getsource(variant))))
        assert prose and all(CJK.search(text) for text in prose), (variant, prose)


def test_the_diff_changes_only_comments_and_docstrings():
    """Chinese and English diffs are the same code, line for line: only the text after "#" and inside the
    docstrings differs."""
    chinese = _diffs()
    set_language("en")
    english = _diffs()
    for key in english:
        zh_lines, en_lines = chinese[key].splitlines()[2:], english[key].splitlines()[2:]  # after the two file names
        assert len(zh_lines) == len(en_lines), key
        for zh_line, en_line in zip(zh_lines, en_lines):
            assert COMMENT.sub("", DOCSTRING.sub("", zh_line)) == COMMENT.sub("", DOCSTRING.sub("", en_line)), key
        assert english[key].startswith("--- broken\n+++ fixed\n") and "# BUG: " in english[key]


def test_a_comment_the_catalogue_does_not_hold_stays_as_written():
    """``show_diff`` also works on the learner's own code: their comments (English, Chinese, anything) stay."""
    def mine(x):
        """My own docstring."""
        return x + 1  # my comment, not the course's

    def mine_fixed(x):
        """My own docstring."""
        return x + 2  # 我自己的注释

    diff = bugs.show_diff(mine, mine_fixed)
    assert "# my comment, not the course's" in diff and "# 我自己的注释" in diff and '"""My own docstring."""' in diff
