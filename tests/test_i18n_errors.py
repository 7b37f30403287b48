"""Error messages speak the learner's language: after ``set_language("zh")`` a ``ValueError`` of the engine's guards
(utils/validate.py), the caches, the tokenizer, the sampler, the bug lab, the exercises and the quiz is Chinese,
still names the bad value, and is never replaced by a ``KeyError`` for a missing translation. In English every
message is exactly what it was (tests across the suite match them).

The messages are English texts passed through ``tr`` with their values named; their Chinese is
utils/i18n/zh_errors.py. The widest check runs every scripted learner mistake (tools/learner_mistakes.py) in
Chinese, in its own process as tests/test_learner_mistakes.py does in English.
"""
import ast
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from i18n_support import english_left
from utils import bug_lab, exercises, load_course_model, prefill, decode_step
from utils.block_pool import BlockPool, PoolExhausted
from utils.i18n import catalogue, set_language
from utils.kv_evict import EvictingKVCache
from utils.kv_quant import QuantizedKVCache, quantize
from utils.paged import PagedKVCache
from utils.quiz import QUESTIONS, check_answer
from utils.sampling import sample
from utils.validate import WHOSE, as_id_batch, check_fits, check_int, check_tokenizer

ROOT = Path(__file__).resolve().parent.parent
CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef]")
QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")  # a quoted value (a prompt, a word) may be Chinese in any language

# The files whose every ValueError goes through tr. Each raise there that is still an English f-string is listed
# in ENGLISH_ON_PURPOSE with why.
TRANSLATED = ["utils/validate.py", "utils/tokenizer.py", "utils/sampling.py", "utils/paged.py", "utils/block_pool.py",
              "utils/kv_quant.py", "utils/kv_evict.py", "utils/cache.py", "utils/sliding.py", "utils/beam.py",
              *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "utils" / "bug_lab").glob("*.py")),
              *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "utils" / "exercises").glob("*.py")),
              *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "utils" / "quiz").glob("*.py"))]
ENGLISH_ON_PURPOSE = {
    # the argument's name, then a hint that tr has already put in the learner's language
    ("utils/validate.py", "as_id_batch"),
    # the question bank checks itself when it is written (at import, or when a computed answer is first read):
    # an author's mistake in the package, never a learner's
    ("utils/quiz/question.py", "__post_init__"), ("utils/quiz/question.py", "_checked"),
    ("utils/quiz/bilingual.py", "check_pair"), ("utils/quiz/bilingual.py", "fail"), ("utils/quiz/bilingual.py", "_in"),
    ("utils/quiz/bilingual.py", "_option"), ("utils/quiz/bank_00_04.py", "_prefill_vs_decode_why"),
    ("utils/quiz/bank_07_08.py", "_several_fit"), ("utils/quiz/numbers.py", "suspect"),
    ("utils/quiz/appendix.py", "chunk_this_iteration"), ("utils/quiz/snippet.py", "snippet_text"),
}
# Files outside this part of the package whose messages are not translated yet: a learner mistake that reaches one of
# them still gets its English message in Chinese (reported by the script with the file and line). Take a file off
# the list once its messages go through tr.
NOT_YET_TRANSLATED: set[str] = set()  # every file that raises a learner's error now speaks both languages


@pytest.fixture
def zh():
    set_language("zh")
    yield
    set_language("en")


def speaks_chinese(message: str) -> bool:
    """Chinese text of the message's own, beside the values it quotes (as tools/learner_mistakes.py judges it)."""
    return CJK.search(QUOTED.sub("", message)) is not None


def message_of(fn, error=ValueError) -> str:
    with pytest.raises(error) as caught:
        fn()
    return str(caught.value)


# --- every scripted learner mistake, in Chinese ---------------------------------------------------------------

def test_every_learner_mistake_behaves_in_chinese_too():
    """213 mistakes (tools/learner_mistakes.py): each gets a Chinese ValueError naming the bad value, or the right
    answer, exactly as in English; none gets a KeyError (a missing translation) or another raw error."""
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "learner_mistakes.py"), "--language", "zh"], cwd=ROOT,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    total = re.search(r"^(\d+) learner mistakes tried", done.stdout, re.M)
    assert total and int(total.group(1)) >= 213, done.stdout[-500:]
    cases = [(line, lines[i + 1] if i + 1 < len(lines) else "") for i, line in enumerate(lines) if " NOT " in line]
    pending = re.compile(r"^\s+English message in Chinese from (\S+):\d+: ")
    wrong = [f"{line}\n{detail}" for line, detail in cases
             if not (pending.match(detail) and pending.match(detail).group(1) in NOT_YET_TRANSLATED)]
    assert not wrong, "\n".join(wrong)


# --- the messages the Chinese notebooks print ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def course():
    return load_course_model()


def test_the_messages_the_chinese_notebooks_print_are_chinese(zh, course):
    model, tok = course
    logits = torch.randn(1, model.cfg.vocab_size)
    # zh/05: sample refuses top_p = 0
    assert message_of(lambda: sample(logits, 1.0, top_p=0.0)) == "top_p 必须是 None 或落在 (0, 1] 内的数，实际是 0.0"
    # zh/10: a pool too small for the next decode step
    small = PagedKVCache(model.cfg, n_blocks=3, block_size=4)
    twelve = torch.tensor([tok.encode("<BOS> 他 很 喜欢 猫 。 她 也 喜欢 狗 。 <EOS>")])
    with torch.inference_mode():
        step_logits, _ = prefill(model, twelve, cache=small)
        text = message_of(lambda: decode_step(model, step_logits.argmax(-1), small), PoolExhausted)
    assert text == "这一步还需要 1 个块（每块 4 个 token），但块池的 3 个块里只有 0 个空闲：把 n_blocks 调大"
    pool = BlockPool(model.cfg, 1, 4)
    pool.allocate()
    assert message_of(pool.allocate, PoolExhausted).startswith("块池已满：全部 1 个块（每块 4 个 token）都在使用中")
    # zh/13: bits other than 4 and 8, a budget below sinks + window
    assert message_of(lambda: QuantizedKVCache(bits=3)) == "`bits` 必须是 4 或 8，实际是 3（量化码按字节存储，每字节存一个或两个）"
    assert message_of(lambda: EvictingKVCache(4, "recent", sinks=1, window=4)) == \
        "`budget`（4）至少要等于 `sinks + window`（1 + 4）：这些位置总会保留"
    # the bug lab, the tokenizer
    assert message_of(lambda: tok.encode("<BOS> 我 喜欢 zebra")) == \
        f"未知的词 'zebra'；已知的 {tok.vocab_size} 个词见 tokenizer.vocab（词与词之间用空格分开，例如 '<BOS> 我 喜欢'）"


def test_english_messages_are_as_they_were(course):
    model, tok = course
    logits = torch.randn(1, model.cfg.vocab_size)
    assert message_of(lambda: sample(logits, 1.0, top_p=0.0)) == "top_p must be None or in (0, 1], got 0.0"
    assert message_of(lambda: QuantizedKVCache(bits=3)) == \
        "bits must be 4 or 8, got 3 (codes are stored one or two per byte)"
    assert message_of(lambda: EvictingKVCache(4, "recent", sinks=1, window=4)) == \
        "budget (4) must be at least sinks + window (1 + 4): those positions are always kept"
    assert message_of(lambda: tok.encode("<BOS> zebra")) == (
        f"unknown word 'zebra'; see tokenizer.vocab for the {tok.vocab_size} known words (words are separated by "
        "spaces, e.g. '<BOS> 我 喜欢')")
    assert message_of(lambda: check_int("n", 2.5)) == "n must be an int, got 2.5 (float)"
    assert message_of(lambda: as_id_batch(5)) == \
        "input_ids must be token ids: a [T] or [B, T] tensor, or a list of ints; got int 5"
    assert message_of(lambda: check_fits(model.cfg, 11, 300, "max_new_tokens", whose="the target's")) == \
        "prompt of 11 tokens + max_new_tokens=300 exceeds the target's max_seq_len=256"
    assert message_of(lambda: check_tokenizer(model, required=True)) == (
        "tokenizer must be a tokenizer with decode(), such as the course Tokenizer (model, tok = load_course_model()), "
        "got Decoder: pass the model first, the tokenizer as tokenizer=...")
    assert message_of(lambda: BlockPool(model.cfg, 10**6, 16)).startswith(
        "a block pool of n_blocks=1000000, block_size=16 would reserve 32.8 GB (32,768,000,000 bytes), over the "
        "course's limit of 4 GB")


BAD_CALLS = {  # a learner's call -> what the Chinese message must still name
    "check_int": (lambda: check_int("n_steps", -1, minimum=0), ["n_steps", "-1"]),
    "text for ids": (lambda: as_id_batch("<BOS> 他 有"), ["tok.encode", "'<BOS> 他 有'"]),
    "a 3-D tensor": (lambda: as_id_batch(torch.ones(1, 1, 3, dtype=torch.long)), ["(1, 1, 3)"]),
    "the draft's max_seq_len": (lambda: check_fits(load_course_model()[0].cfg, 11, 300, "max_new_tokens",
                                                  whose="the draft's"), ["草稿模型的", "max_seq_len=256"]),
    "a model for a tokenizer": (lambda: check_tokenizer(load_course_model()[0], required=True), ["tokenizer=..."]),
    "a 33 GB pool": (lambda: BlockPool(load_course_model()[0].cfg, 10**6, 16), ["n_blocks=1000000", "32.8 GB"]),
    "quantize bits": (lambda: quantize(torch.randn(4, 8), 3, -1), ["3", "bits"]),
    "an odd count for 4 bits": (lambda: quantize(torch.randn(5), 4, 0), ["(5,)", "bits=8"]),
    "quiz number": (lambda: check_answer(QUESTIONS, 0, "a"), ["0", str(len(QUESTIONS))]),
    "quiz empty answer": (lambda: check_answer(QUESTIONS, 1, " "), ["1"]),
    "exercise id": (lambda: exercises.check("01.nope", print), ["'01.nope'"]),
    "probe of mystery 11": (lambda: bug_lab.probe(load_course_model()[0], [1, 3, 10], 11), ["11", "10"]),
}


@pytest.mark.parametrize("what", sorted(BAD_CALLS))
def test_a_chinese_message_is_chinese_and_names_the_bad_value(what, zh):
    call, names = BAD_CALLS[what]
    text = message_of(call)
    assert speaks_chinese(text), text
    assert all(name in text for name in names), (names, text)


def test_a_quiz_answer_of_the_wrong_kind_is_refused_in_chinese(zh):
    choice = next(i for i, q in enumerate(QUESTIONS, 1) if q.kind == "choice")
    truefalse = next(i for i, q in enumerate(QUESTIONS, 1) if q.kind == "truefalse")
    assert message_of(lambda: check_answer(QUESTIONS, choice, "z")).startswith(f"第 {choice} 题是选择题：请用 a 到 ")
    assert message_of(lambda: check_answer(QUESTIONS, truefalse, "也许")).startswith(f"第 {truefalse} 题是判断题")


def test_the_probability_warning_speaks_chinese(zh):
    probs = torch.softmax(torch.randn(2, 8), -1)
    with pytest.warns(UserWarning, match="这些 logits 看起来像概率"):
        sample(probs, 1.0)


# --- statically: every message goes through tr, and every key has its Chinese ------------------------------------

def _raises(path: str):
    """(function name, line, first argument) of every ``raise X(...)`` in ``path``, by the innermost function."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    found = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.Raise) and isinstance(child.exc, ast.Call) and child.exc.args:
                found.append((name, child.lineno, child.exc.args[0]))
            visit(child, name)
    visit(tree, "<module>")
    return found


def test_every_message_of_these_files_goes_through_tr():
    english = [f"{path}:{line} ({function})" for path in TRANSLATED for function, line, arg in _raises(path)
               if isinstance(arg, (ast.JoinedStr, ast.Constant)) and (path, function) not in ENGLISH_ON_PURPOSE]
    assert not english, "pass these messages through tr (utils/i18n/zh_errors.py):\n" + "\n".join(english)


def _fields(text: str) -> set:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_every_message_key_has_chinese_with_the_same_fields():
    """A missing translation would turn the learner's ValueError into a KeyError: every literal key of these files,
    and every ``whose`` a caller of check_fits passes, is in the catalogue."""
    zh = catalogue("zh")
    keys = []
    for path in TRANSLATED:
        for node in ast.walk(ast.parse((ROOT / path).read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                keys.append(node.args[0].value)
    missing = [k for k in keys if k not in zh]
    assert not missing, missing
    assert all(_fields(k) == _fields(zh[k]) for k in keys)
    whose = {kw.value.value for path in (ROOT / "utils").rglob("*.py")
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "check_fits"
             for kw in node.keywords if kw.arg == "whose" and isinstance(kw.value, ast.Constant)}
    assert whose <= set(WHOSE) and all(w in zh for w in WHOSE), whose


def test_the_error_catalogue_leaves_no_english_word():
    from utils.i18n import zh_errors

    texts = [re.sub(r"\{[^{}]*\}", " ", v) for v in zh_errors.MESSAGES.values()]
    assert not english_left(texts), english_left(texts)
    assert all(CJK.search(v) for v in zh_errors.MESSAGES.values())
