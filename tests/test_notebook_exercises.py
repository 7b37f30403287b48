"""The notebooks' exercises: stubs committed unsolved, and every check passing once solved.

Each notebook 01-08, and its Chinese twin, has at least two stub cells tagged ``exercise:<id>``, each followed by a check
cell. The committed outputs show the stubs unsolved ("not written yet"). Then every notebook is
run with its stubs swapped for the reference solutions (tools/solve_exercises.py): every check
must pass, and every mystery must be named.
"""
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import solve_exercises  # noqa: E402

from utils.course import notebook_language  # noqa: E402
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
    return "".join(o.get("text", "") if isinstance(o.get("text", ""), str) else "".join(o["text"])
                   for o in cell.get("outputs", []))


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


@pytest.mark.slow
@pytest.mark.parametrize("path", WITH_EXERCISES + TWINS, ids=_id)
def test_the_solved_notebook_passes_every_check(path, tmp_path):
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    assert solve_exercises.solve(nb) >= 2
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = "\n".join(_text(c) for c in nb.cells if c.cell_type == "code")
    assert NOT_WRITTEN[_lang(path)] not in outputs
    n_checks = len(_exercise_cells(nb))
    assert len(re.findall(ALL_PASS[_lang(path)], outputs)) >= n_checks, outputs[-2000:]
    assert "✗" not in outputs.replace("✗ not '", "").replace("✗ 不是 '", "")  # diagnosis lines aside, no case fails
