"""The Chinese texts keep the course's term decisions: one word for each idea, the same everywhere.

What is checked, wherever a learner reads Chinese: the markdown of the Chinese notebooks, their code cells'
string literals and comments, their committed outputs, the Chinese lessons, the glossary, the Chinese
catalogue (utils.i18n.zh.MESSAGES) and the quiz's Chinese questions. REJECTED below is the table of the
variants the course decided against, each with the form to write instead.

Two exceptions: notebook 12 and lesson 12 each say once that speculative decoding is "又称投机解码", and
the glossary may name a rejected variant as an alias on a line that says so (别名, 又称 or alias).
"""
import ast
import io
import re
import tokenize
from pathlib import Path

import nbformat
import pytest

from utils.series import SERIES

ROOT = Path(__file__).resolve().parent.parent
CJK = r"\u3400-\u9fff\uf900-\ufaff"
HAS_CJK = re.compile(f"[{CJK}]")

# (rejected variant as a regular expression, what to write instead). "输入" as the verb "feed" is left out:
# it cannot be told from the noun "input" by a pattern.
REJECTED = [
    (r"投机解码", "推测解码"),
    (r"算力受限", "计算受限"),
    (r"喂[入给进]", "送入"),
    (r"前向传播", "前向计算"),
    (r"一次前向(?!计算|传播)", "一次前向计算"),  # 一次前向传播: caught as 前向传播
    (r"eval\s*模式", "评估模式"),
    (r"批次", "批（批大小、一批、批处理）"),
    (r"重击者", "高注意力 token（heavy hitter）"),
    (r"瘦身孪生", "精简版模型"),
    (r"词元|令牌", "token"),
    (r"[「」『』]", "“ ”"),
    (r"(?<![A-Za-z_])nats(?![A-Za-z_])", "nat"),
]
# An ASCII-quoted span holding Chinese ("猫") in Chinese prose: write “猫”. Checked on prose only, never on code.
ASCII_QUOTED = (f'"[^"\\n]*[{CJK}][^"\\n]*"', "“ ”")
ALLOWED_ONCE = "又称投机解码"  # notebook 12 and lesson 12 may say this once
ALIAS_LINE = re.compile(r"别名|又称|alias", re.I)

ZH_NOTEBOOKS = [ROOT / "notebooks" / "zh" / name for name, _ in SERIES]
ZH_LESSONS = sorted((ROOT / "lessons" / "zh").glob("*.md"))


def _scan(text: str, rules) -> list[str]:
    """Each match of ``rules`` in ``text`` (which must hold Chinese), as "'found' -> write 'preferred': …context…"."""
    if not HAS_CJK.search(text):
        return []  # an English text may say "nats"
    hits = []
    for pattern, good in rules:
        for m in re.finditer(pattern, text):
            context = text[max(0, m.start() - 12): m.end() + 12].replace("\n", " ")
            hits.append(f"{m.group(0)!r} -> write {good!r}: …{context}…")
    return hits


def find_rejected(text: str, prose: bool = True) -> list[str]:
    """The rejected variants in ``text``; with ``prose``, ASCII quotes around Chinese too (HTML tags aside:
    a catalogue text may hold ``<b class="...">``)."""
    return _scan(text, REJECTED) + (_scan(re.sub(r'<[^>\n]*>|"""', " ", text), [ASCII_QUOTED]) if prose else [])


def _without_code(markdown: str) -> str:
    """Markdown prose only: fenced code, code spans, math, HTML tags and comments, link targets removed."""
    text = re.sub(r"```.*?```", " ", markdown, flags=re.S)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", " ", text)
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$", " ", text, flags=re.S)
    text = re.sub(r"<[^>\n]*>", " ", text)
    return re.sub(r"\]\([^)]*\)", "]", text)


def check_markdown(markdown: str) -> list[str]:
    """Terms anywhere in the markdown (the Chinese of a code span is prose too); quotes in its prose only."""
    return ([h for line in markdown.splitlines() for h in find_rejected(line, prose=False)]
            + [h for line in _without_code(markdown).splitlines() for h in _scan(line, [ASCII_QUOTED])])


def _allow_once(text: str, path: Path) -> str:
    """Notebook 12 and lesson 12 may gloss the rejected name once."""
    return text.replace(ALLOWED_ONCE, "又称", 1) if path.name.startswith("12") else text


def code_texts(source: str) -> list[str]:
    """The string literals (f-string pieces included) and comments of a code cell."""
    from IPython.core.inputtransformer2 import TransformerManager

    python = TransformerManager().transform_cell(source)
    texts = [node.value for node in ast.walk(ast.parse(python))
             if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    texts += [tok.string for tok in tokenize.generate_tokens(io.StringIO(python).readline)
              if tok.type == tokenize.COMMENT]
    return texts


def output_texts(cell) -> list[str]:
    """A code cell's committed text outputs (HTML without its tags)."""
    texts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            texts.append(out.get("text", ""))
        for mime in ("text/plain", "text/markdown", "text/html"):
            value = out.get("data", {}).get(mime)
            if value:
                texts.append(re.sub(r"<[^>\n]*>", " ", value) if mime == "text/html" else value)
    return texts


def _report(found: dict[str, list[str]]) -> str:
    return "\n".join(f"{where}: {hit}" for where, hits in found.items() for hit in hits)


def _notebook(path: Path):
    return nbformat.read(path, as_version=4)


# --- the table itself ------------------------------------------------------------------------------

def test_the_table_never_rejects_its_own_preferred_forms():
    for _, good in REJECTED:
        assert find_rejected("中文 " + good) == [], good


@pytest.mark.parametrize("text", ["分批送入模型", "一次前向计算", "前向计算", "评估模式", "批大小为 8", "批处理",
                                  "推测解码", "计算受限", "访存受限", "精简版模型", "“猫”", "0.18 nat",
                                  "print(\"猫\")", "the word nats in English"])
def test_the_preferred_forms_pass(text):
    assert find_rejected(text, prose=False) == [], text


@pytest.mark.parametrize("text", ["按批次送入", "一次前向就够了", "一次前向。", "前向传播", "喂入模型", "eval 模式",
                                  "eval模式", "算力受限", "投机解码", "重击者", "瘦身孪生模型", "「猫」",
                                  "0.18 nats 的差", "token（词元）"])
def test_the_rejected_forms_are_caught(text):
    assert find_rejected(text, prose=False), text


def test_ascii_quotes_around_chinese_count_in_prose_not_in_code():
    assert check_markdown('他说 "猫" 会出现') and not check_markdown('代码 `print("猫")` 照常')
    assert not check_markdown('英文 "cat" 不算')  # an English word in ASCII quotes is not this rule's business
    assert find_rejected('提示 "猫 坐"', prose=True) and not find_rejected('提示 "猫 坐"', prose=False)
    assert not find_rejected('<b class="a">猫</b> 和 <b class="b">狗</b>')  # HTML attributes are not quotes
    assert not find_rejected('    """显式传入位置的解码步。"""', prose=True)  # a docstring in a printed diff is code


def test_notebook_12_and_lesson_12_may_gloss_the_rejected_name_once():
    path = Path("12_speculative_decoding.ipynb")
    assert find_rejected(_allow_once("推测解码（又称投机解码）", path)) == []
    assert find_rejected(_allow_once("又称投机解码，又称投机解码", path))
    assert find_rejected(_allow_once("推测解码（又称投机解码）", Path("11_continuous_batching.ipynb")))


# --- where a learner reads Chinese -----------------------------------------------------------------

@pytest.mark.parametrize("path", ZH_NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_markdown(path):
    nb = _notebook(path)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    found = {}
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            hits = check_markdown(_allow_once(cell.source, path))
            if hits:
                found[f"{path.name} cell {i}"] = hits
    if path.name.startswith("12"):  # the one allowed gloss is allowed once, not once per cell
        assert markdown.count(ALLOWED_ONCE) <= 1, f"{path.name}: say {ALLOWED_ONCE!r} once"
    assert not found, "\n" + _report(found)


@pytest.mark.parametrize("path", ZH_NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_code_strings_and_comments(path):
    found = {}
    for i, cell in enumerate(_notebook(path).cells):
        if cell.cell_type == "code":
            hits = [h for text in code_texts(cell.source) for h in find_rejected(text, prose=True)]
            if hits:
                found[f"{path.name} cell {i} (code)"] = hits
    assert not found, "\n" + _report(found)


@pytest.mark.parametrize("path", ZH_NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_committed_outputs(path):
    found = {}
    for i, cell in enumerate(_notebook(path).cells):
        if cell.cell_type == "code":
            hits = [h for text in output_texts(cell) for line in text.splitlines()
                    for h in find_rejected(line, prose=True)]
            if hits:
                found[f"{path.name} cell {i} (output)"] = hits
    assert not found, "\n" + _report(found)


@pytest.mark.parametrize("path", ZH_LESSONS, ids=lambda p: p.stem)
def test_lesson(path):
    text = path.read_text(encoding="utf-8")
    if path.name.startswith("12"):
        assert text.count(ALLOWED_ONCE) <= 1, f"{path.name}: say {ALLOWED_ONCE!r} once"
    hits = check_markdown(_allow_once(text, path))
    assert not hits, f"\n{path.relative_to(ROOT)}:\n" + "\n".join(hits)


def test_glossary():
    text = (ROOT / "lessons" / "glossary.md").read_text(encoding="utf-8")
    hits = [f"line {n}: {h}" for n, line in enumerate(text.splitlines(), 1) if not ALIAS_LINE.search(line)
            for h in check_markdown(line)]
    assert not hits, "\nlessons/glossary.md:\n" + "\n".join(hits)


def test_chinese_catalogue():
    from utils.i18n.zh import MESSAGES

    hits = [f"{key!r}: {h}" for key, value in MESSAGES.items() for h in find_rejected(value, prose=True)]
    assert not hits, "\nutils.i18n.zh.MESSAGES:\n" + "\n".join(hits)


def test_quiz_chinese_texts():
    from utils.quiz import QUESTIONS

    hits = []
    for n, question in enumerate(QUESTIONS):
        zh = question.languages.get("zh")
        if zh is None:
            continue
        answer = zh.answer if isinstance(zh.answer, (str, tuple)) else ()
        texts = [zh.prompt, *zh.options, zh.explanation, *([answer] if isinstance(answer, str) else answer)]
        hits += [f"Q{n + 1} (notebook {zh.notebook}): {h}" for text in texts if isinstance(text, str)
                 for h in find_rejected(text, prose=True)]
    assert not hits, "\nutils.quiz (Chinese):\n" + "\n".join(hits)
