"""The README's map of the package: every module and sub-package of ``utils/``, by ring, generated.

``ROOMS`` places each module and wing in one of the package's rings (the course's text; the engine;
what is built around it; the screen), and ``imports_outward`` lists any import that breaks them. The map is built from the files on disk: each row gives the file, its length and the
first line of its docstring, so the map cannot drift from the code. A module on disk that ``ROOMS``
does not place, or a room in ``ROOMS`` that is not on disk, stops the build (``tools/nbsync.py`` writes
the map between the README's package-map markers; ``tests/test_notebook_hygiene.py`` checks it).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
UTILS = REPO / "utils"

# (ring, what the group is, rooms): a room is a module ("sizing.py") or a wing ("serving/").
ROOMS = [
    ("0", "the course's text in English and Chinese (every ring calls its tr)", ["i18n/"]),
    ("1", "the engine, in the order to read it", ["config.py", "attention.py", "cache.py", "model.py", "sampling.py",
                                                  "generate.py", "flat_decode.py", "split_matvec.py",
                                                  "weight_layout.py", "validate.py"]),
    ("1", "the paged cache, the third kind generate builds by name", ["block_pool.py", "paged.py"]),
    ("2", "measuring", ["sizing.py", "flops.py", "roofline.py", "perf/", "timeline.py", "recompute.py", "bench.py",
                        "bench_cases.py", "copy_cost.py"]),
    ("2", "variants on the cache interface", ["sliding.py", "ring_window.py", "beam.py", "kv_quant.py", "kv_evict.py",
                                              "cache_quality.py", "speculative.py"]),
    ("2", "the course model and the bridge to transformers", ["corpus.py", "grammar.py", "tokenizer.py", "course_model.py",
                                                              "hub.py", "hf.py"]),
    ("2", "wings", ["bug_lab/", "serving/", "quiz/", "numerics/"]),
    ("3", "the screen", ["widgets/", "plots/", "exercises/", "check.py", "series.py", "name_hints.py"]),
]


def summary(path: Path) -> str:
    """The first sentence of a module's docstring (what it holds), on one line; '' when it has none."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    first = " ".join(doc.strip().split("\n\n")[0].split())  # the first paragraph, on one line
    end = re.search(r"\.(\s|$)", first)
    return first[: end.start() + 1] if end else first


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def modules_on_disk() -> set[str]:
    """Every module and package of utils/, as ROOMS names them ("x.py", "wing/", "wing/x.py")."""
    found = set()
    for path in UTILS.rglob("*.py"):
        rel = path.relative_to(UTILS)
        if "__pycache__" in rel.parts or rel.name == "__init__.py":
            continue
        found.add(str(rel))
    for init in UTILS.rglob("__init__.py"):
        if init.parent != UTILS and "__pycache__" not in init.parts:
            found.add(f"{init.parent.relative_to(UTILS)}/")
    return found


def check_rooms() -> None:
    """Every module on disk is placed, and every placed room exists: else ValueError naming them."""
    placed = {room for _, _, rooms in ROOMS for room in rooms}
    on_disk = modules_on_disk()
    wings = {room for room in placed if room.endswith("/")}
    loose = sorted(m for m in on_disk if m not in placed and not any(m.startswith(w) for w in wings))
    missing = sorted(room for room in placed if room not in on_disk)
    if loose or missing:
        raise ValueError(f"tools/package_map.py ROOMS is out of step with utils/: not placed {loose}, "
                         f"not on disk {missing}")


def package_map() -> str:
    """The README's table of every module and wing of utils/, by ring."""
    check_rooms()
    rows = ["| ring | room | lines | what it holds |", "|---|---|---|---|",
            f"| | [`utils/__init__.py`](utils/__init__.py) | {_lines(UTILS / '__init__.py')} | {summary(UTILS / '__init__.py')} |"]
    for ring, group, rooms in ROOMS:
        rows.append(f"| **{ring}** | **{group}** | | |")
        for room in rooms:
            if not room.endswith("/"):
                rows.append(f"| {ring} | [`utils/{room}`](utils/{room}) | {_lines(UTILS / room)} | {summary(UTILS / room)} |")
                continue
            face = UTILS / room / "__init__.py"
            rows.append(f"| {ring} | [`utils/{room}`](utils/{room}) (face: `__init__.py`, {_lines(face)} lines) | | "
                        f"{summary(face)} |")
            for path in sorted((UTILS / room).glob("*.py")):
                if path.name != "__init__.py":
                    rel = f"{room}{path.name}"
                    rows.append(f"| {ring} | &nbsp;&nbsp;[`{path.name}`](utils/{rel}) | {_lines(path)} | {summary(path)} |")
    return "\n".join(rows)


def ring_of(module: str) -> str | None:
    """The ring of a module named as Python imports it (``utils.serving.engine`` -> "2"); None outside."""
    parts = module.split(".")
    if parts[0] != "utils" or len(parts) == 1:
        return None
    for ring, _, rooms in ROOMS:
        for room in rooms:
            if room == f"{parts[1]}.py" or room == f"{parts[1]}/":
                return ring
    return None


def imports_outward() -> list[str]:
    """Every import that points outward (a module of an inner ring importing one of an outer ring), as
    "importer -> imported" lines: the rings hold only while this is empty. Imports inside functions count."""
    found = []
    for path in sorted(UTILS.rglob("*.py")):
        rel = path.relative_to(UTILS.parent).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        mine = ring_of(name)
        if mine is None:
            continue
        package = name if rel.name == "__init__" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                targets = [target] if node.module else [f"{target}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                theirs = ring_of(target)
                if theirs is not None and theirs > mine:
                    found.append(f"{name} (ring {mine}) -> {target} (ring {theirs})")
    return found

