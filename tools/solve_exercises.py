"""Swap every exercise stub of a notebook for its reference solution (for the solved-notebooks test).

Usage: python tools/solve_exercises.py NOTEBOOK.ipynb OUT.ipynb

A stub cell carries the cell tag ``exercise:<id>`` (e.g. ``exercise:03.decode_step``): its function
becomes the reference solution (``utils.exercises.EXERCISES[id].solution``), under the stub's own
function name. A diagnosis cell carries ``diagnose:<n>``: it becomes a call that names mystery
``n`` correctly. Everything else is left as it is, so the check cells then run on the solutions.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from utils.exercises import EXERCISES  # noqa: E402


def tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def stub_name(source: str) -> str:
    """The name of the (first) function a stub cell defines."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            return node.name
    raise ValueError("an exercise stub cell must define a function")


def solved_source(exercise_id: str, stub_source: str) -> str:
    """The stub's function bound to the reference solution, and nothing else: the notebook's
    other names (the package's own ``causal_mask``, ``decode_step``...) stay as they were."""
    name = stub_name(stub_source)
    return (f"from utils.exercises import EXERCISES as _EXERCISES\n"
            f"{name} = _EXERCISES[{exercise_id!r}].solution  # the reference solution, under the stub's name")


def solve(nb: nbformat.NotebookNode) -> int:
    """Swap the stubs of ``nb`` in place; return how many cells changed."""
    n = 0
    for cell in nb.cells:
        for tag in tags(cell):
            if tag.startswith("exercise:"):
                exercise_id = tag.split(":", 1)[1]
                if exercise_id not in EXERCISES:
                    raise ValueError(f"cell tag {tag!r}: no such exercise; the exercises are {sorted(EXERCISES)}")
                cell.source = solved_source(exercise_id, cell.source)
                n += 1
            elif tag.startswith("diagnose:"):
                k = int(tag.split(":", 1)[1])
                cell.source = f"from utils import exercises\nexercises.diagnose({k}, exercises.mystery({k})._answer)"
                n += 1
    return n


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    nb = nbformat.read(argv[0], as_version=4)
    print(f"{argv[0]}: {solve(nb)} exercise cell(s) solved")
    nbformat.write(nb, argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
