"""The self-tests (notebook 09's on 00 to 08, the appendices' at the end of 13): the engine, driven without a
browser, its grading and first-attempt scoring, and the question banks."""
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from utils.quiz import (APPENDIX, PLACEHOLDER, QUESTIONS, Question, Scorecard, answer_key, check_answer, question_sheet,
                        questions_for)
from utils.quiz.snippet import run_snippet, snippet_text
from utils.quiz import numbers as quiz_numbers
from utils.recompute import TOL
from utils.sizing import MODEL_PRESETS, kv_cache_bytes
from utils.widgets import Quiz

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)

ROOT = Path(__file__).resolve().parent.parent


def _wrong(q: Question):
    """An answer to ``q`` that must not score."""
    if q.kind == "choice":
        return next(o for o in q.options if o != q.answer)
    if q.kind == "truefalse":
        return not q.answer
    return "certainly not this"


def _right(q: Question):
    return q.answer[0] if isinstance(q.answer, tuple) else q.answer


@pytest.fixture
def quiz():
    return Quiz(QUESTIONS)


@pytest.mark.parametrize("bank", [QUESTIONS, APPENDIX], ids=["00-08", "appendices"])
def test_every_correct_answer_scores_and_every_wrong_one_does_not(bank):
    right, wrong = Quiz(bank), Quiz(bank)
    n, n_open = len(bank), sum(q.kind == "open" for q in bank)
    for i, q in enumerate(bank):
        if q.kind == "open":
            assert right.answer(i, "my own words") is None  # "check" only reveals the model answer
            assert right.results[i] is None
            right.self_mark(i, True)
            assert right.results[i] is True
            continue
        assert right.answer(i, _right(q)) is True, q.prompt
        assert "Why:" in right.feedback[i].value  # the explanation is revealed after answering
        assert wrong.answer(i, _wrong(q)) is False, q.prompt
    assert right.score == (n, n, n)
    assert wrong.score == (0, n - n_open, n)


def test_wrong_then_right_scores_as_wrong_and_is_marked_right_on_retry(quiz):
    """A check shows the answer: answering again with it must not score (it did, before)."""
    i = next(i for i, q in enumerate(QUESTIONS) if q.kind == "truefalse")
    assert quiz.answer(i, _wrong(QUESTIONS[i])) is False
    assert quiz.answer(i, _right(QUESTIONS[i])) is True  # this answer is right...
    assert quiz.results[i] is False and quiz.score == (0, 1, len(QUESTIONS))  # ...but the first one counts
    assert quiz.card.status(i) == "right on retry" and quiz.card.right_on_retry == 1
    assert "only the first answer scores" in quiz.feedback[i].value
    assert "right on retry 1 (not scored)" in quiz.score_html.value
    j = next(j for j, q in enumerate(QUESTIONS) if q.kind == "choice")
    assert quiz.answer(j, _right(QUESTIONS[j])) is True and quiz.answer(j, _wrong(QUESTIONS[j])) is False
    assert quiz.results[j] is True and quiz.score == (1, 2, len(QUESTIONS))  # right first, then wrong: still right
    k = next(k for k, q in enumerate(QUESTIONS) if q.kind == "open")
    quiz.answer(k, "my answer")
    quiz.self_mark(k, False)
    assert quiz.mark_buttons[k][0].layout is not None and quiz._marks_box[k].layout.display == "none"
    quiz.self_mark(k, True)  # a second mark does not change the first
    assert quiz.results[k] is False and quiz.score == (1, 3, len(QUESTIONS))


def test_only_the_first_attempt_scores_without_a_widget(capsys):
    card = Scorecard(len(QUESTIONS))
    i = next(i for i, q in enumerate(QUESTIONS) if q.seed and q.kind == "fill")  # the first new position
    assert check_answer(QUESTIONS, i + 1, "11", card) is False
    assert check_answer(QUESTIONS, i + 1, "12", card) is True
    assert "only the first answer scores" in capsys.readouterr().out.split(f"Q{i + 1}. ✓ correct")[1]
    assert card.score == (0, 1, len(QUESTIONS)) and card.status(i) == "right on retry" and card.right_on_retry == 1
    j = next(j for j, q in enumerate(QUESTIONS) if q.kind == "choice")
    check_answer(QUESTIONS, j + 1, _right(QUESTIONS[j]), card)
    check_answer(QUESTIONS, j + 1, _wrong(QUESTIONS[j]), card)
    assert card.score == (1, 2, len(QUESTIONS)) and card.status(j) == "right"
    assert check_answer(QUESTIONS, i + 1, "12") is True  # without a card nothing is recorded
    assert card.score == (1, 2, len(QUESTIONS))


def test_running_score_counts(quiz):
    n = len(QUESTIONS)
    assert quiz.score == (0, 0, n)
    assert f"done 0 / {n}" in quiz.score_html.value
    auto = [i for i, q in enumerate(QUESTIONS) if q.kind != "open"]
    quiz.answer(auto[0], _right(QUESTIONS[auto[0]]))
    quiz.answer(auto[1], _wrong(QUESTIONS[auto[1]]))
    assert quiz.score == (1, 2, n)
    assert f"done 2 / {n}" in quiz.score_html.value
    quiz.answer(auto[1], _right(QUESTIONS[auto[1]]))  # a second try does not replace the first
    assert quiz.score == (1, 2, n)
    opened = next(i for i, q in enumerate(QUESTIONS) if q.kind == "open")
    quiz.answer(opened, "memory for compute")
    assert quiz.score == (1, 2, n)  # not done until self-marked
    quiz.self_mark(opened, False)
    assert quiz.score == (1, 3, n)


def test_clicking_the_widgets_works_like_answer(quiz):
    i = next(i for i, q in enumerate(QUESTIONS) if q.kind == "fill")
    quiz.check_buttons[i].click()  # nothing typed yet: not graded
    assert quiz.results[i] is None and quiz.score[1] == 0
    quiz.inputs[i].value = str(_right(QUESTIONS[i]))
    quiz.check_buttons[i].click()
    assert quiz.results[i] is True
    j = next(i for i, q in enumerate(QUESTIONS) if q.kind == "choice")
    assert quiz.inputs[j].value == PLACEHOLDER
    quiz.inputs[j].value = QUESTIONS[j].answer
    quiz.check_buttons[j].click()
    assert quiz.results[j] is True
    k = next(i for i, q in enumerate(QUESTIONS) if q.kind == "open")
    quiz.inputs[k].value = "some text"
    quiz.check_buttons[k].click()
    assert "Model answer" in quiz.feedback[k].value
    quiz.mark_buttons[k][0].click()
    assert quiz.results[k] is True


def test_fill_in_is_tolerant_to_case_whitespace_and_number_format():
    q = next(q for q in QUESTIONS if q.kind == "fill" and isinstance(q.answer, tuple))  # the shape question
    shape = q.answer[0]
    assert q.is_correct(shape) and q.is_correct(f"  {shape.replace(' ', '')}  ")
    assert q.is_correct(shape.replace("[", "(").replace("]", ")")) and q.is_correct(shape.strip("[]"))
    pos = next(q for q in QUESTIONS if q.seed and q.kind == "fill")
    for typed in ("12", " 12 ", "12.0", "1_2"):
        assert pos.is_correct(typed), typed
    assert not pos.is_correct("11") and not pos.is_correct("twelve-ish")
    text = Question(0, "fill", "?", "Prefill", "")
    assert text.is_correct("  prefill ") and text.is_correct("PREFILL.") and not text.is_correct("decode")
    big = Question(4, "fill", "?", 131072, "")
    assert big.is_correct("131,072") and big.is_correct("131 072") and not big.is_correct("131073")


def _fill(unit: str, bank=QUESTIONS) -> Question:
    return next(q for q in bank if q.kind == "fill" and q.unit == unit)


def test_fill_ins_accept_a_unit_of_the_right_kind_and_a_fraction():
    gib = _fill("GiB")  # Llama-2-7B, 4096 tokens: 2 GiB
    assert gib.answer == 2 and gib.answer_text() == "2 GiB"
    for typed in ("2", "2 GiB", "2GiB", "2 gib", "2048 MiB", "2097152 KiB", "4/2 GiB"):
        assert gib.is_correct(typed), typed
    for typed in ("2 MiB", "2 GB", "2 ms", "2 bits", "3 GiB", "2 apples"):
        assert not gib.is_correct(typed), typed
    ms = _fill("ms")  # the TPOT: 20 ms
    assert ms.is_correct("20 ms") and ms.is_correct("0.02 s") and not ms.is_correct("20 s")
    bits = _fill("bits", APPENDIX)  # 4-bit codes with a float16 scale and minimum per 128 values
    assert bits.is_correct("4.25 bits") and bits.is_correct("17/4") and bits.is_correct("4.25 位")
    assert not bits.is_correct("4.25 bytes") and not bits.is_correct("4 bits")
    per_round = next(q for q in APPENDIX if q.kind == "fill" and "on average" in q.prompt)  # 1 + 0.5 + 0.25
    assert per_round.answer == 1.75 and per_round.is_correct("7/4") and per_round.is_correct("1.75 tokens")
    assert not per_round.is_correct("7/5") and not per_round.is_correct("1/0")
    unitless = next(q for q in QUESTIONS if q.seed and q.kind == "fill")  # a position has no unit
    assert unitless.is_correct("12") and not unitless.is_correct("12 GiB")
    quiz = Quiz(QUESTIONS)  # the widget grades the same way
    assert quiz.answer(QUESTIONS.index(gib), "2 GiB") is True
    assert Quiz(QUESTIONS).answer(QUESTIONS.index(gib), "2 MiB") is False
    with pytest.raises(ValueError):
        Question(4, "fill", "?", 2, "", unit="furlongs")


def test_every_numeric_fill_in_that_names_a_unit_counts_in_it():
    for q in [*QUESTIONS, *APPENDIX]:
        if q.kind == "fill" and isinstance(q.answer, (int, float)) and q.unit:
            assert q.is_correct(f"{q.answer} {q.unit}") and q.is_correct(q.answer_text()), q.prompt
    named = {"GiB": "GiB", "KiB": "KiB", "ms": "in ms", "bytes": "bytes", "bits": "bits"}
    for q in [*QUESTIONS, *APPENDIX]:
        for unit, word in named.items():
            if q.kind == "fill" and isinstance(q.answer, (int, float)) and word in q.prompt:
                assert q.unit == unit, q.prompt


# --- run this, predict, then check ------------------------------------------------------------------

def _predictions() -> list[Question]:
    return [q for q in QUESTIONS if q.code]


def test_a_few_questions_ask_to_predict_what_a_snippet_gives_and_their_answers_are_its_output():
    assert len(_predictions()) >= 3 and len({q.notebook for q in _predictions()}) >= 3
    sheet = question_sheet(QUESTIONS)
    for q in _predictions():
        assert q.prompt.startswith("Run this, predict, then check") and q.kind == "fill"
        assert str(_as_a_cell(q.code)) == q.answer, q.prompt  # the code shown gives the answer when run
        assert all(line in sheet for line in q.code.splitlines() if line.strip())  # the code is on the sheet
        assert q.answer not in sheet and q.answer not in q.prompt
        assert f"It gives {q.answer}" in q.explanation
    quiz = Quiz(QUESTIONS)
    i = QUESTIONS.index(_predictions()[0])
    assert "<pre" in quiz.widget.children[2 + i].children[0].value  # the card shows the code
    shape = next(q for q in _predictions() if "What shape" in q.prompt)
    assert shape.answer == "[3, 2, 9, 16]" and shape.is_correct("(3, 2, 9, 16)") and not shape.is_correct("[3, 4, 9, 16]")
    reorder = next(q for q in _predictions() if "parents" in q.prompt)
    assert reorder.is_correct("[2, 2, 0, 1]") and not reorder.is_correct("[0, 1, 2, 2]")


def _as_a_cell(code: str):
    """Run a snippet's text as a fresh notebook cell would (seeded like run_snippet) and return its last line's value."""
    *body, last = code.strip().splitlines()
    namespace: dict = {}
    with torch.random.fork_rng():
        torch.manual_seed(0)
        exec("\n".join(body), namespace)  # the bank's own snippet text, in a test
        return eval(last, namespace)


def _rand_sum():
    import torch

    return torch.rand(5).sum()


def _no_value():
    x = 1  # noqa: F841


def test_run_snippet_leaves_the_random_state_alone_and_snippets_end_with_a_value():
    torch.manual_seed(3)
    expected = torch.rand(1)
    torch.manual_seed(3)
    run_snippet(_rand_sum)
    assert torch.equal(torch.rand(1), expected)
    assert snippet_text(_rand_sum) == "import torch\n\ntorch.rand(5).sum()"
    with pytest.raises(ValueError, match="return"):
        snippet_text(_no_value)


def test_at_least_two_questions_per_notebook_00_to_08_and_notebook_09_asks_only_those():
    for nb in range(9):
        assert len(questions_for(nb)) >= 2, nb
    assert {q.notebook for q in QUESTIONS} == set(range(9))
    assert {q.notebook for q in APPENDIX} == {10, 11, 12, 13}
    assert questions_for(10, 11, 12, 13) == APPENDIX


def test_at_least_three_questions_per_appendix_notebook():
    for nb in (10, 11, 12, 13):
        assert len(questions_for(nb)) >= 3, nb


def test_all_four_kinds_are_used():
    assert {q.kind for q in QUESTIONS} == {"choice", "truefalse", "fill", "open"}


def test_the_four_seed_questions():
    seeds = [q for q in QUESTIONS if q.seed]
    assert len(seeds) == 4
    kv = next(q for q in seeds if q.kind == "choice")
    assert kv.answer == "layer 2's own K and V of every earlier token"
    assert any("layer 0" in o for o in kv.options) and any("Q, K and V" in o for o in kv.options)
    skip = next(q for q in seeds if q.kind == "truefalse")
    assert "skips the decoder blocks" in skip.prompt and skip.answer is False
    pos = next(q for q in seeds if q.kind == "fill")
    assert "12" in pos.prompt and pos.answer == 12
    trade = next(q for q in seeds if q.kind == "open")
    assert "faster" in trade.prompt and "at once" in trade.prompt
    assert "memory for compute" in trade.answer


def test_sizing_answer_is_computed_with_kv_cache_bytes():
    q = next(q for q in QUESTIONS if "Llama-2-7B" in q.prompt)
    assert q.answer == kv_cache_bytes(32, 1, 32, 4096, 128, "float16") / 2**30


def test_the_tolerance_question_quotes_the_courses_one_tolerance():
    q = next(q for q in QUESTIONS if "compared with full-recompute" in q.prompt)
    assert q.answer.endswith(f"<= {TOL:g}") and q.answer in q.options


def test_the_hidden_state_answer_gives_llama_3_8b_per_token_sizes():
    q = next(q for q in QUESTIONS if "hidden states" in q.prompt)
    cfg = MODEL_PRESETS["Llama-3-8B"]
    assert f"{cfg.d_model} against {2 * cfg.n_kv_heads * cfg.head_dim} in Llama-3-8B" in q.answer
    assert "grows with T" in q.answer and "saves little" not in q.answer
    mha = MODEL_PRESETS["Llama-2-7B"]  # without GQA a hidden state is half the size of K and V
    assert f"{mha.d_model} against {2 * mha.n_kv_heads * mha.head_dim} in Llama-2-7B" in q.answer


def test_the_first_decode_step_question_names_no_bug_that_already_fails_at_the_prefill():
    """Padding masks (per-row lengths) and dropout are wrong from step 0: they cannot explain a step-0 match."""
    q = next(q for q in QUESTIONS if "diverge from the first decode step" in q.prompt)
    why = q.explanation.casefold()
    assert "leave step 0 intact" in why
    assert not any(word in why for word in ("dropout", "per-row", "padding"))


def test_the_sliding_window_position_question_does_not_count_truncation_as_dropping_entries():
    """Truncating and prefilling again restarts positions at 0: only windows and eviction keep counting."""
    q = next(q for q in QUESTIONS if "RoPE position of the next token" in q.prompt)
    assert "eviction" in q.explanation and "truncation" not in q.explanation


def test_answer_key_lists_every_question_with_its_answer():
    key = answer_key(QUESTIONS)
    assert key.count("Answer:") == len(QUESTIONS) and key.count("Why:") == len(QUESTIONS)
    for i, q in enumerate(QUESTIONS):
        assert f"Q{i + 1}. [notebook {q.notebook:02d}" in key


def test_bad_questions_and_answers_raise():
    with pytest.raises(ValueError):
        Question(0, "choice", "?", "x", "", options=("a", "b"))
    with pytest.raises(ValueError):
        Question(0, "essay", "?", "x", "")
    with pytest.raises(ValueError):
        Question(0, "truefalse", "?", "yes", "")
    quiz = Quiz(QUESTIONS[:3])
    with pytest.raises(ValueError):
        quiz.answer(0, "not an option")
    with pytest.raises(ValueError):
        quiz.self_mark(0, True)  # a choice question is graded, not self-marked
    with pytest.raises(ValueError):
        Quiz([])


def test_true_false_accepts_words_and_rejects_nonsense():
    i = next(i for i, q in enumerate(QUESTIONS) if q.kind == "truefalse")
    quiz = Quiz(QUESTIONS)
    assert quiz.answer(i, str(QUESTIONS[i].answer).lower()) is True
    with pytest.raises(ValueError):
        quiz.answer(i, "maybe")


def run_counting_models(code: str) -> list[str]:
    """Run ``code`` in a fresh interpreter where every Decoder and StaticKVCache built is counted in
    ``built``; return the lines it prints (``print(sorted(set(built)))`` says which were built)."""
    script = textwrap.dedent("""
        from utils.cache import StaticKVCache
        from utils.model import Decoder

        built = []
        for cls in (Decoder, StaticKVCache):
            def counted(self, *args, _init=cls.__init__, _name=cls.__name__, **kwargs):
                built.append(_name)
                _init(self, *args, **kwargs)
            cls.__init__ = counted
    """) + textwrap.dedent(code)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_importing_the_question_bank_builds_no_model_and_reading_the_answers_does():
    """The bank's computed answers run on first read: importing it builds no model and allocates no cache."""
    at_import, after_reading = run_counting_models("""
        from utils.quiz import QUESTIONS, questions_for
        from utils.widgets import Quiz

        Quiz(QUESTIONS)  # drawing the cards reads prompts and options only
        print(sorted(set(built)))
        [q.answer for q in QUESTIONS]
        print(sorted(set(built)))
    """)[:2]
    assert at_import == "[]"
    assert after_reading == "['Decoder', 'StaticKVCache']"


def test_a_computed_answer_is_checked_when_first_read():
    q = Question(0, "truefalse", "?", lambda: "yes", "")  # built fine: nothing is computed yet
    with pytest.raises(ValueError):
        q.answer
    calls = []
    q = Question(0, "fill", "?", lambda: calls.append(1) or 12, lambda: f"{len(calls)} call")
    assert not calls
    assert q.answer == 12 and q.answer == 12 and q.explanation == "1 call"
    assert q.is_correct("12") and calls == [1]


# --- no answer before the learner answers ----------------------------------------------------------

def _texts(q: Question) -> list[str]:
    """The parts of a question's answer a learner must not see before answering (long enough to spot)."""
    answers = q.answer if isinstance(q.answer, tuple) else (q.answer,)
    return [q.explanation] + [str(a) for a in answers if q.kind in ("open", "fill") and len(str(a)) > 8]


def test_the_question_sheet_prints_no_answer():
    sheet = question_sheet(QUESTIONS)
    assert "Answer:" not in sheet and "Why:" not in sheet
    for i, q in enumerate(QUESTIONS):
        assert f"Q{i + 1}. [notebook {q.notebook:02d}" in sheet
        assert not any(t in sheet for t in _texts(q)), q.prompt
        for letter, option in zip("abcd", q.options):
            assert f"{letter}) {option}" in sheet  # choices are lettered, the answer among them unmarked


def test_the_widget_shows_an_answer_only_after_that_question_is_answered(quiz):
    def shown(widget) -> str:
        parts = [str(getattr(widget, attr, "")) for attr in ("value", "description", "placeholder")]
        return " ".join(parts + [shown(c) for c in getattr(widget, "children", ())])

    before = shown(quiz.widget)
    for q in QUESTIONS:
        assert not any(t in before for t in _texts(q)), q.prompt
    i = next(i for i, q in enumerate(QUESTIONS) if q.kind == "fill")
    quiz.answer(i, "certainly not this")
    assert "not quite" in quiz.feedback[i].value and "Why:" in quiz.feedback[i].value
    others = [fb.value for j, fb in enumerate(quiz.feedback) if j != i]
    assert all(v == "" for v in others)  # every other card still shows nothing


def test_check_answer_grades_then_shows_that_questions_answer(capsys):
    i = next(i for i, q in enumerate(QUESTIONS) if q.seed and q.kind == "fill")  # the first new position
    assert check_answer(QUESTIONS, i + 1, "11") is False
    out = capsys.readouterr().out
    assert f"Q{i + 1}. ✗ not quite: the answer is {QUESTIONS[i].answer_text()}" in out and "Why:" in out
    assert check_answer(QUESTIONS, i + 1, " 12 ") is True
    assert "✓ correct" in capsys.readouterr().out
    c = next(i for i, q in enumerate(QUESTIONS) if q.kind == "choice")
    letter = "abcdefgh"[QUESTIONS[c].options.index(QUESTIONS[c].answer)]
    assert check_answer(QUESTIONS, c + 1, letter) is True  # a choice by its letter on the sheet
    assert check_answer(QUESTIONS, c + 1, QUESTIONS[c].answer) is True
    o = next(i for i, q in enumerate(QUESTIONS) if q.kind == "open")
    assert check_answer(QUESTIONS, o + 1, "memory for compute") is None
    assert "Model answer:" in capsys.readouterr().out
    for bad in (0, len(QUESTIONS) + 1, True, "3"):
        with pytest.raises(ValueError):
            check_answer(QUESTIONS, bad, "x")
    with pytest.raises(ValueError):
        check_answer(QUESTIONS, 1, "  ")
    tf = next(i for i, q in enumerate(QUESTIONS) if q.kind == "truefalse")
    for nonsense, number in (("maybe", tf + 1), ("z", c + 1), ("not an option", c + 1)):
        with pytest.raises(ValueError):  # nonsense is refused, not graded: it would reveal the answer
            check_answer(QUESTIONS, number, nonsense)
    assert capsys.readouterr().out == ""


def test_the_committed_self_test_notebook_shows_no_answer_and_explains_how_to_get_the_key():
    nb = json.loads((ROOT / "notebooks" / "09_self_test.ipynb").read_text(encoding="utf-8"))
    outputs = "\n".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                        for c in nb["cells"] for o in c.get("outputs", []))
    assert "Answer:" not in outputs and "Why:" not in outputs
    for q in QUESTIONS:
        assert not any(t in outputs for t in _texts(q)), q.prompt
    key_cells = [c for c in nb["cells"] if c["cell_type"] == "code" and "answer_key(" in "".join(c["source"])]
    assert len(key_cells) == 1
    assert re.search(r"^SHOW_KEY = False", "".join(key_cells[0]["source"]), re.M), "the key is off by default"
    markdown = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "SHOW_KEY = True" in markdown and "check_answer" in markdown


# --- one tolerance ---------------------------------------------------------------------------------

def test_every_tolerance_the_quiz_quotes_is_the_courses_one_tolerance():
    for q in QUESTIONS:
        text = " ".join([q.prompt, *q.options, q.explanation, str(q.answer)])
        for quoted in re.findall(r"(?<![\w.])(?:\d+(?:\.\d+)?e-\d+|0\.0+\d+)(?![\w.])", text):
            assert float(quoted) == TOL, f"{quoted} in {q.prompt!r}"
        if re.search(r"toleran|within", text):
            assert f"{TOL:g}" in text, q.prompt


# --- diagnosing the bug lab's bugs -----------------------------------------------------------------

STEP1_BUGS = ("position", "mask", "axis", "layer0", "refeed")


def _diagnoses() -> list[Question]:
    return [q for q in QUESTIONS if q.prompt.endswith("Which bug is it?")]


def test_each_step_1_bug_is_the_answer_of_one_diagnosis_whose_options_are_the_other_bugs():
    from utils.bug_lab.mysteries import VOCABULARY

    diagnoses = _diagnoses()
    assert len(diagnoses) == len(STEP1_BUGS)
    answers = [q.answer.split(":")[0] for q in diagnoses]
    assert sorted(answers) == sorted(STEP1_BUGS)
    for q in diagnoses:
        assert q.notebook == 7 and [o.split(":")[0] for o in q.options] == list(STEP1_BUGS)
        assert set(STEP1_BUGS) <= set(VOCABULARY)  # the words notebook 07's diagnose() accepts


def test_the_diagnoses_state_the_step_and_cache_length_the_bug_lab_measures():
    evidence = quiz_numbers.bug_evidence()
    for q in _diagnoses():
        ev = evidence[q.answer.split(":")[0]]
        step = ev.step.removeprefix("raises at ")
        assert ("raises" in q.prompt) == ev.step.startswith("raises"), q.prompt
        assert step in q.prompt.casefold().replace("first decode step", "step 1"), (ev.step, q.prompt)
        assert f"cache.seq_len {'still reads ' if ev.seq_len == 'T' else 'is '}{ev.seq_len}" in q.prompt, q.prompt
        assert ev.words() in q.explanation
        others = [w for w in STEP1_BUGS if w != q.answer.split(":")[0]]
        assert not any(evidence[w].words() in q.explanation for w in others)  # they answer the other diagnoses
    T = quiz_numbers.PROMPT_LEN
    assert evidence["refeed"].n_cached == 2 * T + 1 and evidence["axis"].n_cached == T
    assert all(evidence[w].n_cached == T + 1 for w in ("position", "mask", "layer0"))


def test_step_and_cache_length_alone_leave_three_bugs_that_other_evidence_tells_apart():
    evidence = quiz_numbers.bug_evidence()
    same = [w for w, ev in evidence.items() if (ev.step, ev.seq_len) == ("step 1", "T + 1")]
    assert sorted(same) == ["layer0", "mask", "position"]
    assert len({(evidence[w].new_key, evidence[w].first_layer) for w in same}) == 3
    with pytest.raises(ValueError):
        quiz_numbers.suspect(step="step 1", seq_len="T + 1")  # ambiguous: a quiz question may not ask this


def test_the_bug_lab_itself_finds_these_bugs_first_at_step_1_on_the_course_model():
    from utils import load_course_model
    from utils import bug_lab as bugs
    model, tok = load_course_model()
    prompt = torch.tensor([tok.encode("<BOS> she has two white cats .")])
    catalogued = {"position": "positions", "mask": "mask", "axis": "concat_axis", "layer0": "layer0", "refeed": "refeed"}
    assert set(catalogued) == set(STEP1_BUGS)
    for word, key in catalogued.items():
        assert bugs.BUG_BY_KEY[key].run(model, prompt, fixed=False).first_step == 1, word


def test_diverging_from_step_1_is_not_taught_as_one_bug():
    q = next(q for q in QUESTIONS if "diverge from the first decode step" in q.prompt)
    assert q.answer not in [o for o in q.options if "position" in o]
    assert "several" in q.answer
    assert all(w in q.explanation for w in STEP1_BUGS) and "step 1" in q.explanation


def test_no_explanation_gives_away_a_diagnosis_asked_later():
    """Q29's explanation used to print every bug's evidence, which answered the five diagnoses after it."""
    evidence = quiz_numbers.bug_evidence()
    diagnoses = _diagnoses()
    for q in QUESTIONS:
        told = [w for w in STEP1_BUGS if evidence[w].words() in q.explanation]
        assert told == ([q.answer.split(":")[0]] if q in diagnoses else []), q.prompt
        assert q in diagnoses or "cache.seq_len 1" not in q.explanation, q.prompt


# --- the roofline and the sliding window -----------------------------------------------------------

def test_the_roofline_answers_follow_utils_roofline():
    from utils.roofline import GPU_ROOFS, decode_point, prefill_point, ridge_batch

    cfg = MODEL_PRESETS["Llama-2-7B"]
    law = next(q for q in QUESTIONS if q.prompt.startswith("In float16, about how many FLOPs"))
    assert law.answer == "about B"
    for B in (1, 8, 64):
        assert decode_point(cfg, B, 1, "float16")["intensity"] == pytest.approx(B, rel=0.01)
    ridge = next(q for q in QUESTIONS if "ridge point in FLOPs per byte" in q.prompt)
    a100 = next(r for r in GPU_ROOFS if "A100" in r.name)
    assert ridge.answer == round(a100.peak_flops / a100.bandwidth) and ridge.is_correct("153")
    long = next(q for q in QUESTIONS if "large enough batch makes the decode step compute-bound" in q.prompt)
    h100 = next(r for r in GPU_ROOFS if "H100" in r.name)
    assert long.answer is False and ridge_batch(cfg, 4096, h100) is None
    assert str(ridge_batch(cfg, 1, h100)) in long.explanation
    why = next(q for q in QUESTIONS if q.prompt.startswith("Why is a prefill"))
    assert "about T FLOPs per byte" in why.answer
    assert prefill_point(cfg, 512)["intensity"] > max(r.ridge for r in GPU_ROOFS)
    assert decode_point(cfg, 1, 512)["intensity"] < min(r.ridge for r in GPU_ROOFS)


def test_the_sliding_window_range_answers_follow_the_band_mask_and_the_cache():
    from utils.sliding import band_mask

    span = next(q for q in QUESTIONS if "which positions does the query at position" in q.prompt)
    keys = band_mask(21, 8)[20].nonzero().flatten().tolist()
    assert keys == list(range(13, 21))
    for typed in ("13..20", "13 - 20", "13 to 20", "13, 14, 15, 16, 17, 18, 19, 20", "[13..20]"):
        assert span.is_correct(typed), typed
    assert not span.is_correct("12..20") and not span.is_correct("13..21")
    nxt = next(q for q in QUESTIONS if "decodes one more token" in q.prompt)
    assert nxt.answer == "4..11" and quiz_numbers.next_token_span(8, 11) == (11, "4..11")
    assert "3..10" in nxt.options and "0..7" in nxt.options  # the stored-before and the slot-index mistakes


# --- answers the course's own notebooks bear out ---------------------------------------------------

def test_the_stop_string_answer_is_a_search_not_the_endswith_test_its_explanation_faults():
    q = next(q for q in QUESTIONS if "stop string" in q.prompt.casefold())
    assert "searches" in q.answer and "ends with" not in q.answer
    assert any("ends with" in o for o in q.options)  # the endswith test is a distractor
    assert "misses" in q.explanation and "inside the last token" in q.explanation


def test_the_beam_memory_question_says_which_cache_it_means():
    q = next(q for q in QUESTIONS if "4 beams" in q.prompt)
    assert "one row per beam" in q.prompt and q.answer is True
    assert "copy-on-write" in q.explanation  # the paged cache of appendix 10 shares the prompt's blocks


def test_the_appendix_answers_match_what_notebooks_11_and_12_measure():
    chunked = next(q for q in APPENDIX if q.prompt.startswith("Chunked prefill lowers"))
    assert chunked.answer is False and "a little" not in chunked.explanation and "raises" in chunked.explanation
    slower = next(q for q in APPENDIX if "can be slower" in q.prompt)
    assert "large fraction" in slower.answer and "flat" in slower.answer  # a draft pass is not cheap here
    assert not any("costs little more than a pass of its draft" in o for o in slower.options)
    assert "k + 1 times" in " ".join(slower.options)  # notebook 12 measures a pass over k + 1 tokens at far less


def test_the_appendix_self_test_is_its_own_quiz_with_the_same_scoring():
    quiz = Quiz(APPENDIX, title="Appendices")
    assert quiz.questions == APPENDIX and quiz.score == (0, 0, len(APPENDIX))
    i = next(i for i, q in enumerate(APPENDIX) if q.kind == "fill" and q.unit == "bits")
    assert quiz.answer(i, "4 bits") is False and quiz.answer(i, "4.25 bits") is True
    assert quiz.score == (0, 1, len(APPENDIX)) and quiz.card.right_on_retry == 1
    assert "Q1. [notebook 10" in question_sheet(APPENDIX)
