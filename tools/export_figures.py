"""Copy the figures the notebooks drew into lessons/figures/, so lessons show what the code computed.

Usage: python tools/export_figures.py [--check]

A code cell whose source has a line ``# figure: <slug>`` exports its (first) PNG output as
``lessons/figures/<NN>-<slug>.png``, NN being the notebook's number; the Chinese twins' figures
(Chinese titles and labels) go to ``lessons/figures/zh/``, for the Chinese lessons. The images are taken from
the committed outputs, byte for byte; nothing is redrawn. With --check, writes nothing and exits
1 if a file is missing or differs (tests/test_lessons.py runs the same comparison).
"""
from __future__ import annotations

import base64
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from utils.series import notebook_language  # noqa: E402

FIGURES = ROOT / "lessons" / "figures"
MARK = re.compile(r"^#\s*figure:\s*([a-z0-9][a-z0-9_-]*)\s*$", re.M)


def notebook_figures(path: Path) -> dict[str, bytes]:
    """``{path under lessons/figures: PNG bytes}`` for the marked cells of one notebook."""
    folder = "" if notebook_language(path) == "en" else f"{notebook_language(path)}/"
    nb = json.loads(path.read_text(encoding="utf-8"))
    found = {}
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        m = MARK.search("".join(cell["source"]))
        if not m:
            continue
        pngs = [o["data"]["image/png"] for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        if not pngs:
            raise SystemExit(f"{path.name}: cell marked 'figure: {m.group(1)}' has no PNG output")
        png = pngs[0] if isinstance(pngs[0], str) else "".join(pngs[0])
        found[f"{folder}{path.name[:2]}-{m.group(1)}.png"] = base64.b64decode(png)
    return found


def all_figures() -> dict[str, bytes]:
    out = {}
    for path in [*sorted((ROOT / "notebooks").glob("*.ipynb")), *sorted((ROOT / "notebooks" / "zh").glob("*.ipynb"))]:
        out.update(notebook_figures(path))
    return out


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for name, data in all_figures().items():
        target = FIGURES / name
        if not target.exists() or target.read_bytes() != data:
            stale.append(name)
            if not check:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
    for name in stale:
        print(("stale: " if check else "wrote: ") + f"lessons/figures/{name}")
    return 1 if (check and stale) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
