"""Committed notebooks, English and their Chinese twins (notebooks/zh/), come from a clean top-to-bottom run
and share the same header and setup cells."""
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import nbsync  # noqa: E402
import nbformat  # noqa: E402

from utils.series import SERIES, next_notebook, notebook_language  # noqa: E402

ENGLISH = sorted((ROOT / "notebooks").glob("*.ipynb"))
NOTEBOOKS = ENGLISH + sorted((ROOT / "notebooks" / "zh").glob("*.ipynb"))
pytestmark = pytest.mark.skipif(not NOTEBOOKS, reason="no notebooks yet")


def _load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _id(path) -> str:
    return str(path.relative_to(ROOT / "notebooks"))


def _lang(path) -> str:
    return notebook_language(path)


def test_notebooks_are_the_series_of_utils_course_in_both_languages():
    assert [p.name for p in ENGLISH] == [name for name, _ in SERIES]
    assert [p.name for p in NOTEBOOKS[len(ENGLISH):]] == [name for name, _ in SERIES], "every notebook has a zh twin"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_id)
def test_committed_from_a_clean_run(path):
    nb = _load(path)
    counts = [c.get("execution_count") for c in nb["cells"] if c["cell_type"] == "code"]
    assert counts == list(range(1, len(counts) + 1)), "re-run with `make notebooks`"
    errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert "widgets" not in nb["metadata"], "widget state must not be committed"
    assert nb["metadata"].get("kernelspec", {}).get("name") == "python3"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_id)
def test_has_checked_outputs(path):
    nb = _load(path)
    checked = [c for c in nb["cells"] if c["cell_type"] == "code"
               and "".join(c["source"]).lstrip().startswith("# NBVAL_CHECK_OUTPUT")]
    assert checked, "key results belong in a '# NBVAL_CHECK_OUTPUT' cell"
    assert all(c.get("outputs") for c in checked), "a checked cell must print something"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_id)
def test_badge_and_setup_cell_come_from_utils_series(path):
    nb = nbformat.read(path, as_version=4)
    assert nbsync.sync(nb, path.name, _lang(path)) == [], "run `python tools/nbsync.py`"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_id)
def test_ends_with_summary_questions_and_next_link(path):
    nb = _load(path)
    tail = "\n".join("".join(c["source"]) for c in nb["cells"][-3:] if c["cell_type"] == "markdown")
    summary, questions = (r"小结", r"自测") if _lang(path) == "zh" else (r"summary", r"self-check|check yourself")
    assert re.search(summary, tail, re.I), "end with a short summary"
    assert re.search(questions, tail, re.I), "end with self-check questions"
    assert f"({next_notebook(path.name)})" in tail, "link to the next notebook"


def test_readme_course_map_is_generated_from_utils_series():
    assert nbsync.sync_readme(check=True) is False, "run `python tools/nbsync.py`"
