"""The self-test in Chinese (notebook 09's Chinese twin): after set_language("zh") the same bank, graded the
same way, speaks Chinese: the questions (each holds both languages, utils/quiz/), the text helpers and the
Quiz widget."""
import json
import re
from collections import Counter
from functools import reduce
from pathlib import Path

import pytest

from i18n_support import english_left
from test_quiz import _right, _wrong, run_counting_models
from utils.i18n import set_language
from utils.bug_lab.mysteries import VOCABULARY
from utils.quiz import (QUESTIONS, Question, answer_key, ask, check_answer, localized, parse_true_false,
                        question_sheet, questions_for)
from utils.quiz import numbers as quiz_numbers
from utils.recompute import TOL
from utils.widgets import Quiz
from utils.widgets.quiz import _rich

ROOT = Path(__file__).resolve().parent.parent
CJK = re.compile(r"[\u3400-\u9fff]")
STEP1_BUGS = ("position", "mask", "axis", "layer0", "refeed")


@pytest.fixture
def zh():
    set_language("zh")
    yield
    set_language("en")


def _no_english(texts) -> list[str]:
    """``english_left``, where code may stay: in <code> (a `span` the widget renders), or a name written with a
    dot (cache.seq_len, torch.equal); the diagnosis words notebook 07 accepts (VOCABULARY: position,
    axis...) and "bug", as the Chinese lessons write it; and the unit tokens/s, as notebook 06 writes it."""
    kept = "|".join(["bug", "tokens(?=/s)", *VOCABULARY])
    code = r"(?s)<pre.*?</pre>|<code>.*?</code>|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?"
    cleaned = [re.sub(rf"(?<![A-Za-z])(?:{kept})(?![A-Za-z0-9_])", "", re.sub(code, "", str(t)), flags=re.I)
               for t in texts]
    return english_left(cleaned)


def bank() -> list[Question]:
    """The bank in Chinese: each question of ``QUESTIONS`` as it is written in Chinese, in the same order."""
    return [q.languages["zh"] for q in QUESTIONS]


# --- one bank, two languages -----------------------------------------------------------------------

def test_every_question_holds_both_languages_and_they_are_the_same_question():
    zh = bank()
    assert len(zh) == len(QUESTIONS)
    for en, q in zip(QUESTIONS, zh):
        assert set(en.languages) == {"en", "zh"} and en.languages is q.languages and en.languages["en"] is en
        assert (q.notebook, q.kind, q.seed, len(q.options)) == (en.notebook, en.kind, en.seed, len(en.options))
        if en.kind == "choice":  # the right option is the one at the same index
            assert q.options.index(q.answer) == en.options.index(en.answer), en.prompt
        elif en.kind in ("truefalse", "fill"):
            assert q.is_correct(_right(en)) and not q.is_correct(_wrong(en)), en.prompt
            assert q.answer == en.answer or q.answer[0] == en.answer[0], en.prompt
    assert [q for q in bank() if q.seed] and all(a is b for a, b in zip(bank(), bank()))  # built once


def test_every_chinese_text_is_chinese_and_no_english_is_left():
    zh = bank()
    for en, q in zip(QUESTIONS, zh):
        assert CJK.search(q.prompt) and CJK.search(q.explanation), en.prompt
        if en.kind == "open":
            assert CJK.search(q.answer), en.prompt
        for mine, theirs in zip(q.options, en.options):  # an option is Chinese, or a symbol the same in both
            assert CJK.search(mine) or (mine == theirs and not english_left([mine])), mine
    assert _no_english([q.prompt for q in zh] + [o for q in zh for o in q.options]) == []


def test_every_number_a_chinese_text_quotes_is_the_english_ones():
    """The texts are f-strings over the same values: each prompt and option quotes the English numbers, and
    no other but a 0 or 1 that English writes as a word ("zero-based", "a batch of one")."""
    def numbers(text: str) -> Counter:
        return Counter(re.findall(r"\d+(?:\.\d+)?", text))

    for en, q in zip(QUESTIONS, bank()):
        for mine, theirs in [(q.prompt, en.prompt), *zip(q.options, en.options)]:
            assert not numbers(theirs) - numbers(mine), (theirs, mine)
            assert set(numbers(mine) - numbers(theirs)) <= {"0", "1"}, (theirs, mine)


def test_the_four_seed_questions_keep_the_chinese_lessons_wording():
    page = (ROOT / "lessons" / "zh" / "09-self-test.md").read_text(encoding="utf-8")
    section = page.split("## 自测", 1)[1]
    asked = [re.sub(r"^判断：|（KV cache）", "", m) for m in re.findall(r"^\d\. (.+)$", section, re.M)]
    seeds = [q for q in bank() if q.seed]
    assert len(asked) == len(seeds) == 4 and sorted(asked) == sorted(q.prompt for q in seeds)
    kv, skip, pos, trade = sorted(seeds, key=lambda q: ["choice", "truefalse", "fill", "open"].index(q.kind))
    assert kv.answer == "第 2 层自己存的、之前每个 token 的 K 和 V" and "从不复用" in kv.explanation
    assert skip.answer is False and "注意力和 MLP" in skip.explanation
    assert pos.answer == 12 and f"按位置 {quiz_numbers.first_new_position(12)} 旋转" in pos.explanation
    assert "用显存换计算" in trade.answer


def test_the_tolerance_and_the_diagnoses_read_the_same_in_chinese():
    for q in bank():
        text = " ".join([q.prompt, *q.options, q.explanation, str(q.answer)])
        for quoted in re.findall(r"(?<![\w.])(?:\d+(?:\.\d+)?e-\d+|0\.0+\d+)(?![\w.])", text):
            assert float(quoted) == TOL, f"{quoted} in {q.prompt!r}"
        if "容差" in text:
            assert f"{TOL:g}" in text, q.prompt
    diagnoses = [q for q in bank() if q.prompt.endswith("是哪个 bug？")]
    assert sorted(q.answer.split("：")[0] for q in diagnoses) == sorted(STEP1_BUGS)
    for q in diagnoses:
        assert [o.split("：")[0] for o in q.options] == list(STEP1_BUGS)
        mine = q.answer.split("：")[0]  # its own evidence only: the others answer the other diagnoses
        assert [w for w in STEP1_BUGS if f"{w}：第 1 步" in q.explanation] == [mine]
    several = next(q for q in bank() if "从第一个解码步起就出现偏差" in q.prompt)
    assert "好几种" in several.answer and all(w in several.explanation for w in STEP1_BUGS)
    assert not any(f"{w}：第 1 步" in several.explanation for w in STEP1_BUGS)
    window = next(q for q in bank() if "下一个 token 的 RoPE 位置" in q.prompt)
    assert "淘汰" in window.explanation and "截断" not in window.explanation  # eviction: 淘汰, as notebook 13 says


def test_a_question_from_outside_the_bank_stays_as_it_is(zh):
    own = Question(0, "fill", "?", 3, "")
    assert own.in_language("zh") is own and localized([own, QUESTIONS[0]]) == [own, bank()[0]]
    assert localized(QUESTIONS) == bank()
    set_language("en")
    assert localized(QUESTIONS) == QUESTIONS and localized(QUESTIONS[:2]) == QUESTIONS[:2]


# --- writing a question in both languages ----------------------------------------------------------

_GOOD = dict(prompt={"en": "Which tensor?", "zh": "哪个张量？"}, options={"en": ("K", "hidden"), "zh": ("K", "隐藏状态")},
             answer=1, why={"en": "Because.", "zh": "因为。"})


def test_a_choice_answer_given_once_is_the_option_at_its_index_in_both_languages():
    q = ask(2, "choice", **_GOOD)
    assert (q.answer, q.in_language("zh").answer, q.in_language("zh").prompt) == ("hidden", "隐藏状态", "哪个张量？")
    assert q.in_language("zh").in_language("en") is q


@pytest.mark.parametrize("change", [
    {"prompt": {"en": "Which tensor?"}},  # no Chinese
    {"prompt": {"en": "Which tensor?", "zh": ""}},
    {"options": {"en": ("K", "hidden"), "zh": ("K",)}},  # not as many options in Chinese
    {"options": {"en": ("K", "hidden", "Q")}},
    {"options": {"en": ("K", "K"), "zh": ("K", "隐藏状态")}},  # not distinct
    {"answer": 2},  # no such option
    {"answer": "hidden"},  # the option's text: a choice's answer is its index, given once for both
    {"answer": True},
    {"why": {"en": "Because."}},
    {"why": "Because."},
])
def test_the_pairing_check_names_the_question_it_refuses(change):
    with pytest.raises(ValueError, match="Which tensor"):
        ask(2, "choice", **{**_GOOD, **change})


def test_the_pairing_check_knows_each_kind():
    texts = dict(prompt={"en": "How many?", "zh": "几个？"}, why={"en": "Because.", "zh": "因为。"})
    for kind, answer in [("truefalse", "yes"), ("fill", ""), ("fill", {"en": ("3 to 4",)}), ("open", "memory"),
                         ("open", {"en": "memory", "zh": ""}), ("essay", 1)]:
        with pytest.raises(ValueError, match="How many"):
            ask(0, kind, answer=answer, **texts)
    with pytest.raises(ValueError, match="How many"):
        ask(0, "fill", answer=3, options={"en": ("3",), "zh": ("3",)}, **texts)  # only a choice has options
    fill = ask(0, "fill", answer={"en": ("3 to 4",), "zh": ("3 到 4",)}, **texts)
    assert fill.is_correct("3 to 4") and fill.in_language("zh").is_correct("3 到 4")


def test_a_computed_answer_and_explanation_run_once_for_both_languages():
    calls = []
    q = ask(0, "fill", prompt={"en": "How many?", "zh": "几个？"}, answer=lambda: calls.append("answer") or 12,
            why=lambda: calls.append("why") or {"en": f"{len(calls)} calls", "zh": f"{len(calls)} 次"})
    zh = q.in_language("zh")
    assert not calls  # nothing runs when the question is written
    assert (q.answer, zh.answer, q.explanation, zh.explanation) == (12, 12, "2 calls", "2 次")
    assert calls == ["answer", "why"]
    half = ask(0, "fill", prompt={"en": "How many?", "zh": "几个？"}, answer=3, why=lambda: {"en": "Because."})
    assert half.explanation == "Because."
    with pytest.raises(ValueError, match="How many"):  # a computed explanation that forgot a language
        half.in_language("zh").explanation
    chosen = ask(2, "choice", **{**_GOOD, "answer": lambda: 5})
    with pytest.raises(ValueError, match="index"):
        chosen.answer


# --- true / false in both languages ------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "zh"])
def test_true_false_accepts_chinese_and_english_words_in_both_languages(lang):
    set_language(lang)
    try:
        for word in ("对", "是", "正确", "True", "true", "yes", " 对 "):
            assert parse_true_false(word) is True, word
        for word in ("错", "否", "错误", "False", "f", "no"):
            assert parse_true_false(word) is False, word
        assert parse_true_false("也许") is None
        i = next(i for i, q in enumerate(QUESTIONS) if q.kind == "truefalse" and q.answer is False)
        assert check_answer(QUESTIONS, i + 1, "错") is True and check_answer(QUESTIONS, i + 1, "是") is False
        assert Quiz(QUESTIONS).answer(i, "错误") is True
    finally:
        set_language("en")


# --- the text helpers ------------------------------------------------------------------------------

def test_the_sheet_and_the_key_speak_chinese_and_the_sheet_shows_no_answer(zh):
    sheet, key = question_sheet(QUESTIONS), answer_key(QUESTIONS)
    for i, q in enumerate(bank()):
        assert f"第 {i + 1} 题 [笔记本 {q.notebook:02d} · " in sheet and q.prompt in sheet
        assert all(f"{letter}) {o}" in sheet for letter, o in zip("abcdefgh", q.options))
        assert q.explanation not in sheet
    assert "[笔记本 02 · 单选题]" in sheet and "[笔记本 04 · 开放题]" in sheet
    assert "答案：" not in sheet and "解析：" not in sheet and "Q1." not in sheet
    assert key.count("   答案：") == key.count("   解析：") == len(QUESTIONS)
    assert "   答案：错" in key and "Answer:" not in key and "Why:" not in key
    frame = [line for line in sheet.splitlines() if line.startswith("第 ")]
    assert _no_english([re.sub(r"\] .*", "]", line) for line in frame]) == []


def test_check_answer_grades_chinese_answers_and_english_options(capsys, zh):
    i = next(i for i, q in enumerate(QUESTIONS) if q.seed and q.kind == "fill")
    assert check_answer(QUESTIONS, i + 1, "11") is False
    out = capsys.readouterr().out
    assert out.startswith(f"第 {i + 1} 题 ✗ 不太对，正确答案是：12\n   解析：") and "从 0 重新计数" in out
    assert check_answer(QUESTIONS, i + 1, " 12 ") is True
    assert capsys.readouterr().out.startswith(f"第 {i + 1} 题 ✓ 正确\n   解析：")
    for c, q in enumerate(QUESTIONS):
        if q.kind != "choice":
            continue
        right = bank()[c].answer
        letter = "abcdefgh"[bank()[c].options.index(right)]
        assert check_answer(QUESTIONS, c + 1, letter) is True  # its letter on the sheet
        assert check_answer(QUESTIONS, c + 1, right) is True  # the Chinese option
        assert check_answer(QUESTIONS, c + 1, q.answer) is True  # the English option at the same index
        assert check_answer(QUESTIONS, c + 1, bank()[c].options[q.options.index(_wrong(q))]) is False
    o = next(i for i, q in enumerate(QUESTIONS) if q.kind == "open")
    capsys.readouterr()
    assert check_answer(QUESTIONS, o + 1, "用显存换计算") is None
    assert capsys.readouterr().out.startswith(f"第 {o + 1} 题 参考答案：{bank()[o].answer}\n   解析：")
    with pytest.raises(ValueError):
        check_answer(QUESTIONS, c + 1, "不是选项")


# --- the widget --------------------------------------------------------------------------------------

def _shown(widget) -> list[str]:
    texts = [str(getattr(widget, a)) for a in ("value", "description", "placeholder") if getattr(widget, a, "")]
    texts += [str(o) for o in getattr(widget, "options", ())]
    return texts + [t for c in getattr(widget, "children", ()) for t in _shown(c)]


def test_every_correct_chinese_answer_scores_and_every_wrong_one_does_not(zh):
    quiz, zh_bank = Quiz(QUESTIONS), bank()
    assert quiz.questions == zh_bank and quiz.inputs[0].value == "（请选择）"
    for i, q in enumerate(zh_bank):
        if q.kind == "open":
            assert quiz.answer(i, "我自己的话") is None and quiz.results[i] is None
            assert "参考答案：" in quiz.feedback[i].value and "你答出来了吗？" in quiz.feedback[i].value
            quiz.mark_buttons[i][0].click()
            assert quiz.results[i] is True and "已标记为掌握" in quiz.feedback[i].value
            continue
        assert quiz.answer(i, _wrong(q)) is False, q.prompt
        assert "不太对" in quiz.feedback[i].value and "正确答案是" in quiz.feedback[i].value
        assert quiz.answer(i, _right(q)) is True, q.prompt
        assert "正确" in quiz.feedback[i].value and "<b>解析：</b>" in quiz.feedback[i].value
        assert "只有第一次作答计分" in quiz.feedback[i].value  # a retry: right, but it does not score
    n, n_open = len(QUESTIONS), sum(q.kind == "open" for q in QUESTIONS)
    assert quiz.score == (n_open, n, n)
    assert quiz.score_html.value == (f"<b>得分：</b>已完成 {n} / {n} · 首次答对 {n_open} · 重答才对 {n - n_open}（不计分）")


def test_clicking_the_chinese_widgets_works_like_answer(zh):
    quiz = Quiz(QUESTIONS)
    j = next(i for i, q in enumerate(QUESTIONS) if q.kind == "choice")
    quiz.check_buttons[j].click()  # nothing picked yet: not graded
    assert quiz.results[j] is None and "请先作答" in quiz.feedback[j].value
    quiz.inputs[j].value = bank()[j].answer
    quiz.check_buttons[j].click()
    assert quiz.results[j] is True
    t = next(i for i, q in enumerate(QUESTIONS) if q.kind == "truefalse")
    assert quiz.inputs[t].options == ("（请选择）", "对", "错")
    quiz.inputs[t].value = "对" if QUESTIONS[t].answer else "错"
    quiz.check_buttons[t].click()
    assert quiz.results[t] is True
    assert quiz.answer(j, QUESTIONS[j].answer) is True  # an English option is the Chinese one at its index
    k = next(i for i, q in enumerate(QUESTIONS) if q.kind == "open")
    quiz.inputs[k].value = "一些文字"
    quiz.check_buttons[k].click()
    quiz.mark_buttons[k][1].click()
    assert quiz.results[k] is False and "已标记为待复习" in quiz.feedback[k].value


def test_the_quiz_widget_shows_no_english_and_no_answer_before_answering(zh):
    quiz = Quiz(QUESTIONS)
    before = _shown(quiz.widget)
    assert "<h3>自测</h3>" in before and "检查" in before and "你的答案" in before
    assert "我答出来了" in _shown(quiz.widget) and "用一两句话写下你的答案" in before
    assert any(t.startswith("<b>第 1 题</b> <i>（单选题 · 笔记本 00 导览：先预填充，再解码）</i><br>") for t in before)
    for q in bank():
        assert not any(q.explanation in t for t in before), q.prompt
    assert _no_english(before) == []
    frames, marks = [], iter([True, False] * len(QUESTIONS))
    for i, q in enumerate(bank()):  # every feedback, with the question's own answer and explanation taken out
        quiz.answer(i, _wrong(q) if q.kind != "open" else "我的答案")
        shown = [quiz.feedback[i].value]
        if q.kind == "open":
            quiz.self_mark(i, next(marks))
            shown.append(quiz.feedback[i].value)
        own = [_rich(q.explanation)] + ([_rich(q.answer_text())] if q.kind != "truefalse" else [])
        frames += [reduce(lambda text, part: text.replace(part, ""), own, f) for f in shown]
    assert all("解析" in f for f in frames) and "已标记为掌握" in " ".join(frames) and "待复习" in " ".join(frames)
    assert _no_english(frames + [quiz.score_html.value]) == []
    small = Quiz(questions_for(5), title="学完 05 · 采样与停止之后")
    assert small.questions == [bank()[i] for i, q in enumerate(QUESTIONS) if q.notebook == 5]


def test_building_the_chinese_quiz_builds_no_model():
    out = run_counting_models("""
        from utils.i18n import set_language
        from utils.quiz import QUESTIONS, question_sheet
        from utils.widgets import Quiz

        set_language("zh")
        Quiz(QUESTIONS)
        question_sheet(QUESTIONS)
        print(sorted(set(built)))
    """)
    assert "\n".join(out).strip() == "[]"


def test_the_committed_chinese_self_test_notebook_shows_no_answer():
    path = ROOT / "notebooks" / "zh" / "09_self_test.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    outputs = "\n".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                        for c in nb["cells"] for o in c.get("outputs", []))
    assert "答案：" not in outputs and "解析：" not in outputs
    for q in bank():
        assert q.explanation not in outputs and (q.kind != "open" or q.answer not in outputs), q.prompt
    key_cells = [c for c in nb["cells"] if c["cell_type"] == "code" and "answer_key(" in "".join(c["source"])]
    assert len(key_cells) == 1 and re.search(r"^SHOW_KEY = False", "".join(key_cells[0]["source"]), re.M)
