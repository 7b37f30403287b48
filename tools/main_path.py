"""Words of prose on each notebook's main path, and in its deep dives.

Usage: python tools/main_path.py [notebook.ipynb ...]

A notebook's main path carries its idea from start to end; what is advanced sits in optional
deep dives: sections whose level-2 heading starts with "Deep dive" (Chinese: "深入"). A deep dive
runs to the next level-2 heading that is not one. English prose is counted in words, Chinese in
characters divided by 1.6 (about as many characters as an English text of the same content has
words times 1.6), so the two languages' limits read the same. tests/test_notebook_hygiene.py
holds every main path to MAIN_PATH_WORDS.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent
MAIN_PATH_WORDS = 2600  # "about 2,500 words" (DESIGN.md), with a little room
DEEP_DIVE = re.compile(r"^## +(Deep dive|深入)")
CJK = re.compile(r"[\u3400-\u9fff]")
ZH_CHARS_PER_WORD = 1.6


def _prose_words(text: str) -> float:
    text = re.sub(r"```.*?```", " ", text, flags=re.S)  # code blocks are not prose
    cjk = len(CJK.findall(text))
    if cjk:
        return cjk / ZH_CHARS_PER_WORD + len(re.findall(r"[A-Za-z]+", text))
    return len(re.findall(r"\S+", text))


def count(nb: nbformat.NotebookNode) -> tuple[int, int]:
    """(main-path words, deep-dive words) of a notebook's markdown cells."""
    main = deep = 0.0
    in_deep = False
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        heading = re.match(r"^## ", cell.source)
        if heading:
            in_deep = bool(DEEP_DIVE.match(cell.source))
        if in_deep:
            deep += _prose_words(cell.source)
        else:
            main += _prose_words(cell.source)
    return round(main), round(deep)


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((REPO / "notebooks").glob("*.ipynb"))
    print(f"{'notebook':40s} {'main path':>9s} {'deep dives':>10s}")
    over = 0
    for path in paths:
        m, d = count(nbformat.read(path, as_version=4))
        flag = "  over" if m > MAIN_PATH_WORDS else ""
        over += bool(flag)
        print(f"{path.name:40s} {m:9d} {d:10d}{flag}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
