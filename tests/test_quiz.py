"""The self-test quiz (notebook 09): its engine, driven without a browser, and its question bank."""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from utils.question import PLACEHOLDER, Question
from utils.quiz import QUESTIONS, answer_key, questions_for
from utils.sizing import MODEL_PRESETS, kv_cache_bytes
from utils.widgets import Quiz

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


def test_every_correct_answer_scores_and_every_wrong_one_does_not(quiz):
    for i, q in enumerate(QUESTIONS):
        if q.kind == "open":
            assert quiz.answer(i, "my own words") is None  # "check" only reveals the model answer
            assert quiz.results[i] is None
            quiz.self_mark(i, True)
            assert quiz.results[i] is True
            continue
        assert quiz.answer(i, _wrong(q)) is False, q.prompt
        assert quiz.answer(i, _right(q)) is True, q.prompt
        assert "Why:" in quiz.feedback[i].value  # the explanation is revealed after answering
    assert quiz.score == (len(QUESTIONS), len(QUESTIONS), len(QUESTIONS))


def test_running_score_counts(quiz):
    n = len(QUESTIONS)
    assert quiz.score == (0, 0, n)
    assert f"done 0 / {n}" in quiz.score_html.value
    auto = [i for i, q in enumerate(QUESTIONS) if q.kind != "open"]
    quiz.answer(auto[0], _right(QUESTIONS[auto[0]]))
    quiz.answer(auto[1], _wrong(QUESTIONS[auto[1]]))
    assert quiz.score == (1, 2, n)
    assert f"done 2 / {n}" in quiz.score_html.value
    quiz.answer(auto[1], _right(QUESTIONS[auto[1]]))  # a second try replaces the first
    assert quiz.score == (2, 2, n)
    opened = next(i for i, q in enumerate(QUESTIONS) if q.kind == "open")
    quiz.answer(opened, "memory for compute")
    assert quiz.score == (2, 2, n)  # not done until self-marked
    quiz.self_mark(opened, False)
    assert quiz.score == (2, 3, n)


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


def test_at_least_two_questions_per_notebook_00_to_08():
    for nb in range(9):
        assert len(questions_for(nb)) >= 2, nb
    assert {q.notebook for q in QUESTIONS} <= set(range(9))


def test_all_four_kinds_are_used():
    assert {q.kind for q in QUESTIONS} == {"choice", "truefalse", "fill", "open"}


def test_the_four_seed_questions():
    seeds = [q for q in QUESTIONS if q.seed]
    assert len(seeds) == 4
    kv = next(q for q in seeds if q.kind == "choice")
    assert kv.answer == "K and V"
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
    from utils.recompute import TOL

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


def test_importing_the_question_bank_builds_no_model_and_reading_the_answers_does():
    """The bank's computed answers run on first read: importing it builds no model and allocates no cache."""
    script = textwrap.dedent("""
        from utils.cache import StaticKVCache
        from utils.model import Decoder

        built = []
        for cls in (Decoder, StaticKVCache):
            def counted(self, *args, _init=cls.__init__, _name=cls.__name__, **kwargs):
                built.append(_name)
                _init(self, *args, **kwargs)
            cls.__init__ = counted

        from utils.quiz import QUESTIONS, questions_for
        from utils.widgets import Quiz

        Quiz(QUESTIONS)  # drawing the cards reads prompts and options only
        print(sorted(set(built)))
        [q.answer for q in QUESTIONS]
        print(sorted(set(built)))
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    at_import, after_reading = out.stdout.split("\n")[:2]
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
