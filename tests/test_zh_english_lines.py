"""No English teaching text in what a Chinese reader reads: the committed outputs of the Chinese notebooks
(notebooks/zh) and the prose of the Chinese lessons (lessons/zh).

A printed line is **English text** when all of these hold:

* it has no CJK character (Han characters, CJK punctuation such as ：and （, full-width forms): a line
  that mixes Chinese and English is the business of the catalogue tests (tests/test_i18n*.py), not this one;
* it is not **code**: a line of Python as the bug lab's diffs print it (``-def step(...)``,
  ``+    # FIX: ...``, ``    return model(...)``, an indented assignment or call, a docstring line);
* it holds **four or more English words**;
* not every one of those words is a word of the course language (``utils.corpus.vocabulary()``): a line
  like ``<BOS> he has three small dogs . they like horses . <EOS>`` is **model text**, the same in both
  languages.

An **English word** is a run of two or more ASCII letters (a contraction such as ``doesn't`` is one word),
after URLs, ``<...>`` spans (special tokens such as ``<BOS>``, object reprs such as
``<Figure size 550x320 with 1 Axes>``, HTML tags) and backtick-quoted code are taken out, that is none of:

* part of an **identifier, call or value**: a letter run touching ``_``, a digit, ``.`` inside a dotted name
  (``cache.seq_len``, ``torch.int32``), a call or index (``max(``, ``table[``), ``=`` (``dtype=torch``,
  ``lo = -3.6``), a hyphenated model name with digits (``Llama-3-8B``, ``GPT-2``), a ``/`` unit
  (``tokens/s``, ``requests/s``, ``nats/token``, ``K/V``), or a one-word quoted value (``'eos'``);
* a **symbol or unit kept in both languages**: an acronym in capitals (TTFT, TPOT, ITL, GQA, KV, GPU, and
  FLOPs, GPUs), a mixed-case name (``KVCache``, ``GiB``, ``MiB``), a unit (ms, us, ns, kB, MB, GB, nat,
  nats, rad, tok), a dtype (``float``, ``bool``, float16 by the digit rule), a term the glossary keeps in
  English in Chinese text (token, logits, softmax, argmax, top, dropout), or a name the package exports
  (``utils.__all__``: ``Decoder``, ``prefill``, ``generate``, ``sample``).

Symbols of one letter (B, T, L, H, V, k, p) are not words at all. A line of symbols and numbers
(``TTFT p50  p95 ms | TPOT p50  p95 ms | tokens/s``) therefore has no English words; a table header such
as ``setting  bytes  max |Δlogits|  greedy match  Δ loss`` has five (setting, bytes, greedy, match, loss)
and is flagged.

``english_lines(notebook)`` applies this to every line of the stream outputs and ``text/plain`` results of
a notebook's code cells; ``english_prose_lines(lesson)`` to the lines of a markdown file outside code
fences and ``$$`` formulas, with inline code, ``$math$`` and link targets taken out. When a Chinese notebook
fails, the fix is in the package (the text goes through ``utils.i18n.tr`` and gets its entry in
``utils/i18n/zh_*.py``) or, for a string the notebook prints itself, in the notebook's cell.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
ZH_NOTEBOOKS = sorted((ROOT / "notebooks" / "zh").glob("*.ipynb"))
ZH_LESSONS = sorted((ROOT / "lessons" / "zh").glob("*.md"))

# Han, CJK punctuation, kana, full-width forms (：（），), CJK compatibility and extension planes.
CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0002ffff]")
WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")  # don't, doesn't: one word
MIN_WORDS = 4

# What is taken out of a line before its words are counted.
URL = re.compile(r"https?://\S+")
ANGLE = re.compile(r"<[A-Za-z/][^<>\n]*>")  # <BOS>, <Figure size 550x320 with 1 Axes>, <b>
INLINE_CODE = re.compile(r"`[^`\n]*`")

KEPT = {
    # units
    "ms", "us", "ns", "kB", "KB", "MB", "GB", "TB", "nat", "nats", "rad", "tok",
    # dtypes written without digits
    "float", "half", "bool", "int", "dtype",
    # terms the glossary keeps in English inside Chinese text
    "token", "tokens", "logits", "logit", "softmax", "argmax", "top", "dropout",
    # code names printed bare
    "torch", "transformers", "numpy", "utils", "nbytes",
}

# Python as a notebook prints it (the bug lab's diffs, a function's source): the optional diff marker, then
# a statement. Assignments and calls count only when indented as in a function body, so that a formula
# line of prose ("TTFT = queue + prefill") is still read as prose.
_MARK = r"^[-+ ]?\s*"
CODE = re.compile(
    _MARK + r"(?:def|class)\s+\w+"
    r"|" + _MARK + r"(?:#|\"\"\"|''')"
    r"|" + _MARK + r"(?:return|yield|raise|assert|import|pass|break|continue)\b"
    r"|" + _MARK + r"from\s+[\w.]+\s+import\b"
    r"|" + _MARK + r"(?:if|elif|else|for|while|with|try|except|finally)\b.*:\s*(?:#.*)?$"
    r"|" + _MARK + r"@\w"
    r"|^[-+ ]?\s{4,}[\w.\[\]]+(?:\s*,\s*[\w.\[\]]+)*\s*[-+*/]?=(?!=)"  # an indented assignment
    r"|^[-+ ]?\s{4,}[\w.]+(?:\(\))?(?:\.\w+)*\("  # an indented call: self.v.append(v), super().update(
)


@lru_cache(maxsize=None)
def course_words() -> frozenset[str]:
    """The words of the course language (model text), English ones included: she, likes, doesn't, horses."""
    from utils.corpus import vocabulary

    return frozenset(vocabulary())


@lru_cache(maxsize=None)
def code_names() -> frozenset[str]:
    """The names the package exports (``Decoder``, ``prefill``, ``generate``, ``sample``): code in both
    languages. Other class names are caught by the mixed-case rule (``PagedKVCache``, ``PoolExhausted``)."""
    import utils

    return frozenset(utils.__all__)


def _is_symbol(word: str) -> bool:
    """A word that is a symbol, a unit, an acronym, a code name or a kept term (see the module docstring)."""
    return (word in KEPT or word.lower() in KEPT or word in code_names()
            or word.isupper()                                               # TTFT, GQA, NVIDIA
            or re.fullmatch(r"[A-Z]{2,}s", word) is not None                # FLOPs, GPUs
            or re.search(r"[a-z][A-Z]|[A-Z]{2}[a-z]", word) is not None)    # KVCache, GiB, SmolLM


def _in_code(line: str, start: int, end: int) -> bool:
    """Whether the letters ``line[start:end]`` are part of an identifier, a call, a value or a unit."""
    before, after = line[start - 1] if start else "", line[end] if end < len(line) else ""
    rest = line[end:]
    return (before in ("_", ".", "=", "/") or before.isdigit()
            or after in ("_", "(", "[", "/") or after.isdigit()
            or re.match(r"\.[A-Za-z_(]", rest) is not None              # cache.seq_len
            or re.match(r"\s*=", rest) is not None                       # lo = -3.6, dtype=...
            or re.match(r"-\d", rest) is not None                        # Llama-3-8B, GPT-2
            or (before in "'\"" and before != "" and after == before))   # 'eos'


def english_words(line: str) -> list[str]:
    """The English words of ``line`` (see the module docstring): what is left once identifiers, symbols,
    units, kept terms, special tokens, reprs, URLs and inline code are set aside."""
    for pattern in (URL, ANGLE, INLINE_CODE):
        line = pattern.sub(" ", line)
    words = []
    for m in WORD.finditer(line):
        w = m.group()
        if len(re.sub(r"[^A-Za-z]", "", w)) < 2 or _in_code(line, m.start(), m.end()) or _is_symbol(w):
            continue
        words.append(w)
    return words


def is_english_text(line: str) -> bool:
    """True for a line a Chinese reader should not meet: no CJK, not code, four or more English words, and
    not model text."""
    if CJK.search(line) or CODE.match(line):
        return False
    words = english_words(line)
    return len(words) >= MIN_WORDS and not all(w in course_words() for w in words)


class OutputLine(NamedTuple):
    cell: int  # index in the notebook's cells (markdown cells counted), as an editor shows it
    text: str


def output_texts(notebook_path) -> list[tuple[int, str]]:
    """(cell index, text) of every stream output and ``text/plain`` result of a notebook's code cells."""
    nb = json.loads(Path(notebook_path).read_text(encoding="utf-8"))
    texts = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                text = out.get("text", "")
            elif "text/plain" in out.get("data", {}):
                text = out["data"]["text/plain"]
            else:
                continue
            texts.append((i, "".join(text) if isinstance(text, list) else text))
    return texts


def _english_in(text: str) -> list[str]:
    """The English lines of one printed text, with the lines inside a printed docstring read as code."""
    found, in_docstring = [], False
    for line in text.splitlines():
        quotes = line.count('"""') + line.count("'''")
        if not in_docstring and is_english_text(line):
            found.append(line)
        if quotes % 2:
            in_docstring = not in_docstring
    return found


def english_lines(notebook_path) -> list[OutputLine]:
    """The output lines of ``notebook_path`` that are English text (see the module docstring)."""
    return [OutputLine(i, line) for i, text in output_texts(notebook_path) for line in _english_in(text)]


def english_prose_lines(markdown_path) -> list[str]:
    """The lines of a markdown file that are English text (see the module docstring): read outside code
    fences and ``$$`` formulas, with inline code, ``$math$`` and link targets taken out."""
    found, fenced, math = [], False, False
    for line in Path(markdown_path).read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        if line.count("$$") % 2:  # a display formula opened or closed on this line
            math = not math
            continue
        if math:
            continue
        prose = re.sub(r"\]\([^)]*\)", "]", INLINE_CODE.sub(" ", line))  # a link's target is not prose
        prose = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", " ", prose)             # nor is math
        if is_english_text(prose):
            found.append(line)
    return found


# --- the detector, on hand-made lines ------------------------------------------------------------------
FLAGGED = [
    "setting                                          bytes  max |Δlogits|  greedy match    Δ loss",
    "PoolExhausted: this step needs 1 more block(s) of 4 tokens but the pool has 0 free of 3",
    "The cached logits equal the recomputed ones within the tolerance.",
    "low load, 11 requests/s: static batching waits for a full batch",
    "Prompt 0: <BOS> she has two | fish . <EOS> (greedy pick of the model)",  # English around model text
    "TTFT = queue wait + prefill time + first sampling step",  # a formula line of prose is still prose
    "    Source: NVIDIA A100 datasheet (bf16 dense 312 TFLOPS, HBM2e 2,039 GB/s), read on the spec page",
]
PASSED = [
    "分块　　　：123 次迭代，平均每次 6.6 个请求",                     # Chinese
    "只计 FLOPs 中的 projections、mlp 和 lm_head 三部分时：723 倍",  # mixed: the catalogue tests' business
    "<BOS> he has three small dogs . they like horses . <EOS>",          # model text
    "  <BOS> she has two      -> fish . <PAD> <PAD>",
    "  T = 0.7, top_p = 0.6  two two a a a two two two two a a two",
    "<BOS> she doesn't like birds . we have a white cat . <EOS>",
    "                   TTFT p50  p95 ms | TPOT p50  p95 ms | ITL p50  p95 ms | tokens/s  requests/s",
    "GPT-2 (124M)     MHA     12  12   12   64        36       0.14*       1.12*       4.50*             1,024",
    "Llama-3-8B: L=32, H_kv=8, d_h=128; T = 32768, B = 1",
    "lo = -3.616, hi = 0.188, scale = (hi - lo) / 15 = 0.2536",
    "{'preset': 'Llama-3-8B', 'T': 4096, 'L': 32, 'H_kv': 8, 'B': 1, 'd_h': 128, 'dtype': 'float16'}",
    "stop_reasons: ['eos', 'stop_string', 'max_new_tokens']",
    "tensor([[1, 1, 1, 1, 1, 1, 1]], dtype=torch.int32)",
    "<Figure size 1200x390 with 2 Axes>",
    "<IPython.core.display.HTML object>",
    "QuantizedKVCache.nbytes = 12672",
    "-def step_position_restarts(model, token_ids, cache):",                                  # a diff of code
    "-    position = torch.tensor([0])  # BUG: as if nothing came before",
    "+    # FIX: row b keeps its own length",
    '     """Decode step that passes the new token\'s position explicitly."""',
    "         return model(token_ids[:, None], cache=cache, position_ids=position)[:, -1]",
    "          super().update(layer, k, v)  # (B, H_kv, T_past + T_new, d_h) stored for this layer",
]


@pytest.mark.parametrize("line", FLAGGED)
def test_the_detector_flags_english_sentences_and_headers(line):
    assert is_english_text(line), english_words(line)


@pytest.mark.parametrize("line", PASSED)
def test_the_detector_passes_chinese_code_model_text_and_symbol_rows(line):
    assert not is_english_text(line), english_words(line)


def test_a_docstring_printed_over_several_lines_is_code():
    source = ('-def f(x):\n     """A docstring that runs\n     over two lines of English words."""\n'
              "     return x\nThis line after the function is English prose again.")
    assert _english_in(source) == ["This line after the function is English prose again."]


def test_markdown_prose_is_read_outside_fences_and_inline_code(tmp_path):
    lesson = tmp_path / "lesson.md"
    lesson.write_text("# 标题\n\n中文段落，`the code keeps its English words here` 不算。\n\n```python\n"
                      "# a comment in a fenced block is code, not prose\nx = 1\n```\n\n"
                      "[链接](https://example.com/some/long/english/path)\n\n"
                      "$$\\text{the cached keys and the new key, in one formula}$$\n\n$$\n\\text{a formula over}\n"
                      "\\text{several lines of English text}\n$$\n\n"
                      "This sentence was left in English by mistake.\n", encoding="utf-8")
    assert english_prose_lines(lesson) == ["This sentence was left in English by mistake."]


# --- the Chinese notebooks and lessons -----------------------------------------------------------------
@pytest.mark.skipif(not ZH_NOTEBOOKS, reason="no Chinese notebooks")
@pytest.mark.parametrize("path", ZH_NOTEBOOKS, ids=lambda p: p.name)
def test_a_chinese_notebook_prints_no_english_text(path):
    found = english_lines(path)
    assert not found, "English text in the outputs (cell index: line):\n" + "\n".join(
        f"  cell {c}: {t}" for c, t in found)


@pytest.mark.skipif(not ZH_LESSONS, reason="no Chinese lessons")
@pytest.mark.parametrize("path", ZH_LESSONS, ids=lambda p: p.name)
def test_a_chinese_lesson_has_no_english_prose(path):
    found = english_prose_lines(path)
    assert not found, "English prose:\n" + "\n".join(f"  {line}" for line in found)
