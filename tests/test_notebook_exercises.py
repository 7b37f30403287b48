"""The notebooks' exercises, and every cell run twice: stubs committed unsolved, every check passing once solved.

Each notebook 01-08 and 10-13, and its Chinese twin, has at least two stub cells tagged
``exercise:<id>``, each followed by a check cell. The committed outputs show the stubs unsolved
("not written yet"). Then every English notebook is run once, in one kernel, with its stubs
swapped for the reference solutions (tools/solve_exercises.py) and every code cell executed twice
in a row, as a learner who runs a cell again does: every check must pass, every mystery must be
named, nothing may raise the second time, and a checked cell (``# NBVAL_CHECK_OUTPUT``) must print
the same thing both times. The Chinese twins run the same code (test_notebook_twins checks it), so
the English notebooks stand for both; the Chinese feedback on the reference solutions is checked
in test_i18n_exercises, and every twin runs under nbval.
"""
import copy
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import solve_exercises  # noqa: E402
from notebook_client import SteadyNotebookClient  # noqa: E402

from utils.series import notebook_language  # noqa: E402
from utils.exercises import EXERCISES  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
WITH_EXERCISES = [p for p in NOTEBOOKS if "01" <= p.name[:2] <= "08" or p.name[:2] in ("10", "11", "12", "13")]
TWINS = [ROOT / "notebooks" / "zh" / p.name for p in WITH_EXERCISES]  # the Chinese twins: the same exercises
# What the checks print, per language (utils/exercises, through utils.i18n).
NOT_WRITTEN = {"en": "not written yet", "zh": "还没有写"}
ALL_PASS = {"en": r": all \d+ cases pass\.", "zh": r"：全部 \d+ 个用例通过。"}


def _id(path) -> str:
    return str(path.relative_to(ROOT / "notebooks"))


def _lang(path) -> str:
    return notebook_language(path)


def _text(cell) -> str:
    """What a code cell printed or returned, as text."""
    parts = []
    for out in cell.get("outputs", []):
        text = out.get("text") or out.get("data", {}).get("text/plain") or ""
        parts.append(text if isinstance(text, str) else "".join(text))
    return "".join(parts)


def _exercise_cells(nb):
    return [(i, t.split(":", 1)[1]) for i, c in enumerate(nb.cells) for t in solve_exercises.tags(c)
            if t.startswith("exercise:")]


@pytest.mark.parametrize("path", WITH_EXERCISES + TWINS, ids=_id)
def test_stubs_are_committed_unsolved_and_checked(path):
    nb = nbformat.read(path, as_version=4)
    stubs = _exercise_cells(nb)
    assert len(stubs) >= 2, "each notebook 01-08 has at least two exercises"
    for i, exercise_id in stubs:
        assert exercise_id in EXERCISES, f"cell {i}: unknown exercise {exercise_id!r}"
        assert exercise_id.startswith(path.name[:2]), f"cell {i}: {exercise_id} belongs to another notebook"
        assert "raise NotImplementedError" in nb.cells[i].source, f"cell {i}: the stub is committed solved"
        assert '"""' in nb.cells[i].source, f"cell {i}: a stub states its contract in a docstring"
        check = next(c for c in nb.cells[i + 1:] if c.cell_type == "code")
        assert re.search(rf"exercises\.check\(\s*[\"']{re.escape(exercise_id)}[\"']", check.source), \
            f"cell {i}: the next code cell must check {exercise_id}"
        assert NOT_WRITTEN[_lang(path)] in _text(check), \
            f"cell {i}: the committed check should say {NOT_WRITTEN[_lang(path)]!r}"


def test_every_exercise_appears_in_a_notebook():
    used = {eid for p in WITH_EXERCISES for _, eid in _exercise_cells(nbformat.read(p, as_version=4))}
    assert used == set(EXERCISES)


def _run_each_code_cell_twice(nb) -> None:
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        if cell.cell_type == "code":
            again = copy.deepcopy(cell)
            again.metadata["rerun"] = True
            cells.append(again)
    nb.cells = cells


def _checked_cells_that_print_something_else_the_second_time(nb) -> list[str]:
    differ = []
    for first, second in zip(nb.cells, nb.cells[1:]):
        if second.metadata.get("rerun") and first.source.lstrip().startswith("# NBVAL_CHECK_OUTPUT"):
            a, b = _text(first), _text(second)
            if a != b:
                differ.append(f"{first.source.splitlines()[1][:70]!r}:\n  first:  {a[:300]!r}\n  second: {b[:300]!r}")
    return differ


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=_id)
def test_the_solved_notebook_passes_every_check_and_every_cell_survives_a_second_run(path):
    nb = nbformat.read(path, as_version=4)
    n_solved = solve_exercises.solve(nb)
    assert n_solved >= 2 or path not in WITH_EXERCISES
    _run_each_code_cell_twice(nb)
    SteadyNotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}},
                         store_widget_state=True).execute()  # raises CellExecutionError naming the cell
    differ = _checked_cells_that_print_something_else_the_second_time(nb)
    assert not differ, f"{path.name}: checked cells that print something else when run again:\n" + "\n".join(differ)
    if path not in WITH_EXERCISES:
        return
    outputs = "\n".join(_text(c) for c in nb.cells if c.cell_type == "code")
    assert NOT_WRITTEN[_lang(path)] not in outputs
    n_checks = len(_exercise_cells(nb)) // 2  # every cell appears twice
    assert len(re.findall(ALL_PASS[_lang(path)], outputs)) >= 2 * n_checks, outputs[-2000:]
    assert "✗" not in outputs.replace("✗ not '", "").replace("✗ 不是 '", "")  # diagnosis lines aside, no case fails
