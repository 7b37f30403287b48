"""Keep every notebook's shared cells in step with utils/course.py.

Usage: python tools/nbsync.py [--check] [NOTEBOOK.ipynb ...]

Rewrites, in place, the Colab badge line of each notebook's first (title) cell and the whole
setup cell (the first code cell, starting with "# Course setup"). With --check, changes
nothing and exits 1 if any notebook is out of step. `make notebooks` runs it first.
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
from utils.course import BADGE_MARKER, SETUP_MARKER, colab_badge, setup_cell_source  # noqa: E402


def sync(nb: nbformat.NotebookNode, name: str) -> list[str]:
    """Fix ``nb`` in place; return what was wrong (empty when it was already in step)."""
    problems = []
    title = nb.cells[0] if nb.cells else None
    if title is None or title.cell_type != "markdown" or not title.source.startswith("# "):
        problems.append("first cell is not a markdown title ('# NN · ...')")
    else:
        lines = title.source.split("\n")
        badge = colab_badge(name)
        idx = [i for i, line in enumerate(lines) if line.startswith(BADGE_MARKER)]
        if not idx:
            lines[1:1] = ["", badge]
            problems.append("no Colab badge")
        elif lines[idx[0]] != badge:
            lines[idx[0]] = badge
            problems.append("Colab badge out of date")
        title.source = "\n".join(lines)
    code = [c for c in nb.cells if c.cell_type == "code"]
    if not code or not code[0].source.startswith(SETUP_MARKER):
        problems.append("first code cell is not the setup cell")
    elif code[0].source != setup_cell_source():
        code[0].source = setup_cell_source()
        problems.append("setup cell differs from utils/course.py")
    return problems


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [Path(a) for a in argv if a != "--check"] or sorted((REPO_ROOT / "notebooks").glob("*.ipynb"))
    bad = 0
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        problems = sync(nb, path.name)
        if problems:
            bad += 1
            print(f"{path.name}: {'; '.join(problems)}")
            if not check:
                nbformat.write(nb, path)
    return 1 if (check and bad) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
