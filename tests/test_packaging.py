"""The three dependency files agree: pyproject.toml (loose ranges, what Colab and `pip install`
see), environment.yml (the same for conda) and requirements-lock.txt (exact pins for `make`/CI).
Also checks that the python3 Jupyter kernel is the interpreter running the tests."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parent.parent


def _name(name: str) -> str:
    return canonicalize_name(name)  # lowercase, runs of -_. become -


def pyproject_requirements() -> dict[str, Requirement]:
    """Dependencies plus every optional extra, keyed by normalized name."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    lines = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        lines.extend(extra)
    reqs = [Requirement(line) for line in lines]
    names = [_name(r.name) for r in reqs]
    assert len(names) == len(set(names)), f"a package is listed twice in pyproject: {names}"
    return dict(zip(names, reqs))


def environment_requirements() -> dict[str, Requirement]:
    """The pip section of environment.yml, without the editable `-e .` line."""
    yaml = pytest.importorskip("yaml")
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip_sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(pip_sections) == 1, "environment.yml needs exactly one `pip:` section"
    lines = [line for line in pip_sections[0] if not line.startswith("-e")]
    assert "-e ." in pip_sections[0], "environment.yml should install the course package (-e .)"
    return {_name(Requirement(line).name): Requirement(line) for line in lines}


def locked_versions() -> dict[str, Version]:
    pins = {}
    for raw in (REPO / "requirements-lock.txt").read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        assert sep, f"requirements-lock.txt: not an exact pin: {raw!r}"
        pins[_name(name)] = Version(version)
    return pins


def test_environment_yml_lists_the_same_packages_and_ranges_as_pyproject():
    env = environment_requirements()
    project = pyproject_requirements()
    assert set(env) == set(project)
    for name, req in project.items():
        assert env[name].specifier == req.specifier, name


def test_every_pyproject_package_is_pinned_in_the_lock():
    missing = set(pyproject_requirements()) - set(locked_versions())
    assert not missing, f"not pinned in requirements-lock.txt: {sorted(missing)}"


def test_every_pyproject_range_admits_the_locked_version():
    locked = locked_versions()
    for name, req in pyproject_requirements().items():
        assert req.specifier.contains(locked[name], prereleases=True), (
            f"{name}=={locked[name]} (lock) is outside {req} (pyproject)"
        )


def test_lock_pins_the_cpu_torch_release_without_local_tag():
    assert str(locked_versions()["torch"]) == "2.13.0"
    assert "torch==2.13.0\n" in (REPO / "requirements-lock.txt").read_text()


def test_pyproject_torch_is_a_lower_bound_only():
    # An upper pin would make pip replace Colab's preinstalled torch.
    spec = pyproject_requirements()["torch"].specifier
    assert spec, "torch needs a lower bound"
    assert all(s.operator == ">=" for s in spec), f"torch range must be a lower bound only: {spec}"


def test_python3_kernel_runs_this_interpreter():
    """nbval and nbclient start the kernel named `python3`; it must be this venv's python."""
    pytest.importorskip("ipykernel")
    jupyter_client = pytest.importorskip("jupyter_client")
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        msg_id = kc.execute("import sys; print(sys.executable)")
        printed = []
        while True:
            msg = kc.get_iopub_msg(timeout=60)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                printed.append(msg["content"]["text"])
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert Path("".join(printed).strip()) == Path(sys.executable)
