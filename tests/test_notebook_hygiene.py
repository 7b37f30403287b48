"""Committed notebooks, English and their Chinese twins (notebooks/zh/), come from a clean top-to-bottom run
and share the same header and setup cells."""
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import main_path  # noqa: E402
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
    """The main path ends with them; optional deep dives may follow (tools/main_path.py)."""
    nb = _load(path)
    cells = nb["cells"]
    starts = [i for i, c in enumerate(cells)
              if c["cell_type"] == "markdown" and main_path.DEEP_DIVE.match("".join(c["source"]))]
    main_cells = cells[:starts[0]] if starts else cells
    tail = "\n".join("".join(c["source"]) for c in main_cells[-3:] if c["cell_type"] == "markdown")
    summary, questions = (r"小结", r"自测") if _lang(path) == "zh" else (r"summary", r"self-check|check yourself")
    assert re.search(summary, tail, re.I), "end with a short summary"
    assert re.search(questions, tail, re.I), "end with self-check questions"
    assert f"({next_notebook(path.name)})" in tail, "link to the next notebook"


# Issue 28 brought 00-06 to it; the appendices follow when they are split (their issue).
SHORT_MAIN_PATH = [p for p in ENGLISH if p.name[:2] in {"00", "01", "02", "03", "04", "05", "06"}]


@pytest.mark.parametrize("path", SHORT_MAIN_PATH, ids=_id)
def test_main_path_is_about_2500_words_at_most(path):
    words, _ = main_path.count(nbformat.read(path, as_version=4))
    assert words <= main_path.MAIN_PATH_WORDS, (
        f"{words} words of prose on the main path: move what is advanced into a '## Deep dive' section")


@pytest.mark.parametrize("path", ENGLISH, ids=_id)
def test_deep_dives_are_marked_alike_in_both_languages(path):
    en = nbformat.read(path, as_version=4)
    zh = nbformat.read(path.parent / "zh" / path.name, as_version=4)
    deep = [[i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and main_path.DEEP_DIVE.match(c.source)]
            for nb in (en, zh)]
    assert deep[0] == deep[1], f"deep-dive headings at cells {deep[0]} in English, {deep[1]} in Chinese"


def test_readme_course_map_is_generated_from_utils_series():
    assert nbsync.sync_readme(check=True) is False, "run `python tools/nbsync.py`"


def test_readme_names_every_module_and_wing_of_the_package():
    import package_map

    package_map.check_rooms()  # every module on disk is placed in a ring, every placed room exists
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- package-map:start -->", 1)[1].split("<!-- package-map:end -->", 1)[0]
    missing = sorted(m for m in package_map.modules_on_disk() if f"(utils/{m})" not in block)
    assert not missing, f"the README's package map does not name {missing}: run `python tools/nbsync.py`"


def test_a_module_the_map_does_not_place_stops_the_build(tmp_path, monkeypatch):
    import package_map

    (tmp_path / "new_module.py").write_text('"""Something new."""\n')
    (tmp_path / "__init__.py").write_text('"""The face."""\n')
    monkeypatch.setattr(package_map, "UTILS", tmp_path)
    monkeypatch.setattr(package_map, "ROOMS", [("1", "the engine", ["other.py"])])
    with pytest.raises(ValueError, match=r"not placed \['new_module.py'\], not on disk \['other.py'\]"):
        package_map.package_map()


def test_imports_point_inward_across_the_rings_of_the_package():
    """The rings of the README's package map hold: no module imports one of an outer ring (the engine
    never imports the serving wing, a plot, the quiz...), inside a function or not."""
    import package_map

    assert package_map.imports_outward() == []


def test_an_engine_module_importing_the_screen_is_caught(tmp_path, monkeypatch):
    import package_map

    utils = tmp_path / "utils"
    (utils / "plots").mkdir(parents=True)
    (utils / "plots" / "__init__.py").write_text("", encoding="utf-8")
    (utils / "model.py").write_text("def f():\n    from .plots import new_figure\n", encoding="utf-8")
    monkeypatch.setattr(package_map, "UTILS", utils)
    monkeypatch.setattr(package_map, "ROOMS", [("1", "the engine", ["model.py"]), ("3", "the screen", ["plots/"])])
    assert package_map.imports_outward() == ["utils.model (ring 1) -> utils.plots (ring 3)"]
