"""What a Colab user gets: the built wheel, installed (not editable), and one notebook in an empty folder.

In Colab the setup cell pip-installs the package from GitHub, which builds a wheel from
``pyproject.toml``; the notebook then runs with nothing of the repository around it. These tests do
the same offline: build the wheel from the files git tracks, install it with ``--target`` into a
folder of its own, and run the notebooks under nbval from a temporary folder where only that
install is importable. A package left out of the wheel, a data file not shipped, or a notebook that
reads a file of the repository (a lesson, a figure, ``tools/``) fails here.

``make test`` runs them in the Colab-like environment (``.venv-colab``), which holds the
dependencies but not the course package; in ``.venv`` (an editable install) they are skipped.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from utils.series import SERIES

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.colab, pytest.mark.wheel]

# Two Chinese twins run from the wheel too: 00 (figures with the shipped CJK font, the course map)
# and 07 (exercise and diagnosis feedback through the language catalogue). The other twins run
# the same code (test_notebook_twins) and run under nbval in the main environment.
ZH_FROM_WHEEL = ("00_tour.ipynb", "07_bug_lab.ipynb")
# What the package must carry besides its modules: the course model, its draft, the vocabulary,
# the index of notebook names (the NameError hint) and the figures' font with its licence.
PACKAGE_DATA = ("utils/data/course_model.safetensors", "utils/data/course_draft.safetensors",
                "utils/data/course_tokenizer.json", "utils/data/notebook_names.json",
                "utils/data/fonts/NotoSansSC-course-subset.otf", "utils/data/fonts/OFL.txt")


def _require_wheel_environment() -> None:
    """Skip in an environment where the checkout itself is importable from anywhere (``make
    venv``'s editable install): there an empty folder would still see the repository."""
    probe = subprocess.run([sys.executable, "-c", "import utils"], cwd="/", capture_output=True, text=True)
    if probe.returncode == 0:
        message = ("the course package is installed in this environment (pip install -e .): the wheel "
                   "test needs one without it; make test-colab runs it in .venv-colab")
        if os.environ.get("COURSE_REQUIRE_WHEEL_TEST"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from the files git tracks (as they are in the working tree)."""
    _require_wheel_environment()
    src = tmp_path_factory.mktemp("src")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "-q", "-w", str(dist), str(src)], check=True, capture_output=True, text=True)
    (built,) = dist.glob("*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The wheel installed, not editable, into a folder of its own (``--target``)."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target",
                    str(target), str(wheel)], check=True, capture_output=True, text=True)
    return target


def test_the_wheel_holds_every_package_and_the_data_files(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    packages = sorted(str(p.parent.relative_to(ROOT)) for p in (ROOT / "utils").rglob("__init__.py")
                      if "__pycache__" not in p.parts)
    missing = [p for p in packages if f"{p}/__init__.py" not in names]
    assert not missing, f"packages left out of the wheel: {missing} (pyproject.toml: [tool.setuptools.packages.find])"
    modules = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "utils").rglob("*.py") if "__pycache__" not in p.parts)
    assert not [m for m in modules if m not in names], "modules left out of the wheel"
    assert not [d for d in PACKAGE_DATA if d not in names], "data files left out of the wheel"


WHEEL_NOTEBOOKS = [name for name, _ in SERIES] + [f"zh/{name}" for name in ZH_FROM_WHEEL]


@pytest.mark.parametrize("notebook", WHEEL_NOTEBOOKS)
def test_the_notebook_runs_from_an_empty_folder_with_only_the_installed_wheel(notebook, installed, tmp_path):
    """Every English notebook and two Chinese twins, under nbval, as a Colab user runs them: one
    ``.ipynb`` in a folder of its own (a twin in ``zh/``, where it knows its language), the package
    importable only from the installed wheel."""
    copy = tmp_path / notebook
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "notebooks" / notebook, copy)
    env = {**os.environ, "PYTHONPATH": str(installed), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
           "HF_HUB_OFFLINE": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    where = subprocess.run([sys.executable, "-c", "import utils; print(utils.__file__)"], cwd=copy.parent, env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(installed), f"utils imported from {where}, not from the installed wheel"
    run = subprocess.run([sys.executable, "-m", "pytest", "--nbval-lax", "-q", "-p", "no:cacheprovider",
                          "--rootdir", str(tmp_path), str(copy)],
                         cwd=copy.parent, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
