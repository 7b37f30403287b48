"""An English reader can read every output of the English notebooks: a Chinese token is glossed.

The course model speaks Chinese and English. The English notebooks use English prompts, but a Chinese
word can still reach an output (the lesson page's example in notebook 00, a mixed held-out document, a
model that switches language after <EOS>). Each one must carry its English meaning: right after it,
``猫 (cat)`` (``utils.grammar.label``), or on the line below, in the same columns
(``utils.grammar.interlinear``).
"""
import json
import re
from pathlib import Path

import pytest

from utils.grammar import gloss
from utils.i18n import display_width

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
CJK = re.compile(r"[\u3400-\u9fff]")


def _output_lines(path: Path) -> list[tuple[int, list[str]]]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for i, cell in enumerate(nb["cells"]):
        for o in cell.get("outputs", []):
            text = o.get("text") or o.get("data", {}).get("text/plain") or ""
            out.append((i, ("".join(text) if isinstance(text, list) else text).splitlines()))
    return out


def unglossed(lines: list[str]) -> list[str]:
    """The lines of ``lines`` holding a Chinese word that has neither ``(its gloss)`` right after it nor
    its gloss in the same columns of the next line."""
    bad = []
    for n, line in enumerate(lines):
        below = lines[n + 1] if n + 1 < len(lines) else ""
        for m in re.finditer(r"\S+", line):
            word = m.group().strip("'\"“”[],:")
            if not CJK.search(word):
                continue
            meaning = gloss(word)
            after = line[m.end():].lstrip()
            column = display_width(line[: m.start()])
            under = below[next((i for i in range(len(below) + 1) if display_width(below[:i]) >= column), len(below)):]
            if meaning and (after.startswith(f"({meaning})") or under.startswith(meaning)):
                continue
            bad.append(line)
            break
    return bad


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_chinese_token_in_an_english_output_is_glossed(path):
    bad = [(i, line) for i, lines in _output_lines(path) for line in unglossed(lines)]
    assert not bad, f"{path.name}: Chinese without an English gloss in cells {bad}"


def test_the_detector_accepts_both_gloss_styles_and_flags_a_bare_token():
    assert unglossed(["top_k keeps: I 我 (I) they"]) == []
    assert unglossed(["<BOS> 我 喜欢 -> 猫", "      I  like    cat"]) == []
    assert unglossed(["first token: 猫"]) == ["first token: 猫"]
    assert unglossed(["<BOS> 我 喜欢", "      we like"]) == ["<BOS> 我 喜欢"]
