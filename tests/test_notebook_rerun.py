"""Learners run a cell twice: every code cell of every notebook, run twice in a row in one kernel,
raises nothing the second time, and a checked cell (``# NBVAL_CHECK_OUTPUT``) prints the same thing
both times. (The Chinese twins run the same code, so the English notebooks stand for both.)"""
import copy
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
pytestmark = pytest.mark.slow


def _text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        text = out.get("text") or out.get("data", {}).get("text/plain") or ""
        parts.append(text if isinstance(text, str) else "".join(text))
    return "".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_cell_survives_a_second_run_with_the_same_checked_output(path):
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        if cell.cell_type == "code":
            again = copy.deepcopy(cell)
            again.metadata["rerun"] = True
            cells.append(again)
    nb.cells = cells
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}},
                   store_widget_state=True).execute()  # raises CellExecutionError naming the cell
    differ = []
    for first, second in zip(nb.cells, nb.cells[1:]):
        if second.metadata.get("rerun") and first.source.lstrip().startswith("# NBVAL_CHECK_OUTPUT"):
            a, b = _text(first), _text(second)
            if a != b:
                differ.append(f"{first.source.splitlines()[1][:70]!r}:\n  first:  {a[:300]!r}\n  second: {b[:300]!r}")
    assert not differ, f"{path.name}: checked cells that print something else when run again:\n" + "\n".join(differ)

