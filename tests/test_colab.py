"""The notebooks' setup cell in Colab: what it would install, checked without installing anything."""
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from utils.series import PACKAGE, REPO, colab_install_args, setup_cell_source

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)

ROOT = Path(__file__).resolve().parent.parent

# Runs the setup cell in a fresh IPython shell where `google.colab` exists and `%pip` only records.
_SIMULATION = textwrap.dedent('''
    import json, sys, types
    if sys.argv[1] == "colab":
        sys.modules["google"] = types.ModuleType("google")
        sys.modules["google.colab"] = types.ModuleType("google.colab")
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    calls = []
    shell.register_magic_function(lambda line: calls.append(line), "line", "pip")
    shell.register_magic_function(lambda line: None, "line", "matplotlib")
    result = shell.run_cell(sys.stdin.read())
    print(json.dumps({"ok": result.success, "calls": calls}))
''')


def _run_setup_cell(colab: bool) -> dict:
    out = subprocess.run([sys.executable, "-c", _SIMULATION, "colab" if colab else "local"], input=setup_cell_source(), capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_in_colab_the_setup_cell_pip_installs_the_course_package_only():
    result = _run_setup_cell(colab=True)
    assert result["ok"]
    assert len(result["calls"]) == 1
    call = result["calls"][0]
    assert call.split()[0] == "install" and f"git+https://github.com/{REPO}.git" in call
    assert call.count("torch") == 0, "the install must not name torch: Colab's own torch stays"
    assert "--upgrade" not in call and "-U" not in call.split()


def test_locally_the_setup_cell_installs_nothing():
    result = _run_setup_cell(colab=False)
    assert result["ok"] and result["calls"] == []


def test_package_ranges_keep_colabs_torch():
    """Colab's own torch satisfies the package's requirement, so pip leaves it alone."""
    import tomllib
    from packaging.requirements import Requirement

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    torch_req = next(Requirement(d) for d in deps if Requirement(d).name == "torch")
    for colab_torch in ("2.5.1", "2.6.0", "2.8.0", "2.9.0"):
        assert torch_req.specifier.contains(colab_torch), colab_torch
    widgets_req = next(Requirement(d) for d in deps if Requirement(d).name == "ipywidgets")
    assert widgets_req.specifier.contains("7.7.1") and widgets_req.specifier.contains("8.1.5")
    assert colab_install_args()[-1].startswith(f"{PACKAGE} @ git+")


def test_colab_like_lock_pins_what_colab_ships():
    pins = dict(line.split("==", 1) for line in (ROOT / "requirements-colab.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    assert pins["ipywidgets"] == "7.7.1"
    assert pins["matplotlib"].startswith("3.10.")
    assert pins["transformers"].startswith("4.")
    assert "jupyterlab" not in pins, "Colab has no JupyterLab extensions"
