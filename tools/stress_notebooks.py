"""Run every notebook while two busy processes load both cores, and list every check that fails.

Usage: python tools/stress_notebooks.py [--load N] [NOTEBOOK.ipynb ...]

A learner's machine is rarely quiet: a free Colab CPU is shared, a laptop has a browser open. A
``check()`` over measured times must hold there too, so this runs each notebook (by default every
English notebook and every Chinese twin) with nbclient while N processes (default 2, one per core
here) spin on arithmetic. Execution goes on past an error, so one run lists every failed claim,
every other error, and every ``# NBVAL_CHECK_OUTPUT`` cell whose output differs from the committed
one (what nbval would reject). Nothing is written back. The load is bounded: each busy process stops
by itself after ``--max-seconds`` and is killed when the run ends.

Exit status 0 when nothing failed, 1 otherwise. Not part of ``make test`` (it takes several
minutes and wants the machine for itself).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from nbclient.exceptions import CellTimeoutError, DeadKernelError

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from utils.series import SERIES  # noqa: E402

from notebook_client import SteadyNotebookClient  # noqa: E402  (tools/ is on sys.path when run as a script)

# A busy process: arithmetic in a loop, until its deadline (so a crashed parent leaves nothing behind).
BUSY = "import sys, time\nend = time.monotonic() + float(sys.argv[1])\nx = 0.0\nwhile time.monotonic() < end:\n" \
       "    for i in range(100_000):\n        x = (x + i * 1.000001) % 1e9\n"


def _text(outputs) -> str:
    parts = []
    for out in outputs:
        if out.get("output_type") == "stream":
            parts.append(out["text"] if isinstance(out["text"], str) else "".join(out["text"]))
        elif "data" in out and "text/plain" in out["data"]:
            text = out["data"]["text/plain"]
            parts.append(text if isinstance(text, str) else "".join(text))
    return "".join(parts)


def stress(path: Path, timeout: int) -> tuple[float, list[str]]:
    """Execute ``path`` in a fresh kernel, going on past errors; return its wall time and its failures."""
    committed = nbformat.read(path, as_version=4)
    nb = nbformat.read(path, as_version=4)
    client = SteadyNotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    failures = []
    try:
        client.execute()
    except (CellTimeoutError, DeadKernelError) as e:
        failures.append(f"execution stopped: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    wall = time.perf_counter() - start
    for i, (cell, old) in enumerate(zip(nb.cells, committed.cells)):
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                value = out.get("evalue", "")
                kind = "claim failed" if value.startswith("claim failed") else out.get("ename", "error")
                failures.append(f"cell {i}: {kind}: {value[:300]}")
        if cell.source.lstrip().startswith("# NBVAL_CHECK_OUTPUT") and cell.get("outputs"):
            new, before = _text(cell.outputs), _text(old.get("outputs", []))
            if new != before:
                failures.append(f"cell {i}: checked output differs from the committed one:\n"
                                f"      committed: {before[:300]!r}\n      now:       {new[:300]!r}")
    return wall, failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--load", type=int, default=2, help="busy processes (default 2: both cores here)")
    parser.add_argument("--max-seconds", type=float, default=3600, help="each busy process stops by itself after this")
    parser.add_argument("--timeout", type=int, default=300, help="seconds a cell may run")
    args = parser.parse_args(argv)
    paths = args.notebooks or ([REPO / "notebooks" / name for name, _ in SERIES]
                               + [REPO / "notebooks" / "zh" / name for name, _ in SERIES])
    busy = [subprocess.Popen([sys.executable, "-c", BUSY, str(args.max_seconds)]) for _ in range(args.load)]
    print(f"{len(busy)} busy processes load the cores; running {len(paths)} notebooks", flush=True)
    report = {}
    try:
        for path in paths:
            wall, failures = stress(path.resolve(), args.timeout)
            report[path] = failures
            status = "ok" if not failures else f"{len(failures)} failed"
            print(f"{wall:6.1f} s  {path.relative_to(REPO) if path.is_relative_to(REPO) else path}: {status}", flush=True)
            for line in failures:
                print(f"    {line}", flush=True)
    finally:
        for proc in busy:
            proc.kill()
        for proc in busy:
            proc.wait()
    failed = {p: f for p, f in report.items() if f}
    print(f"\n{len(report) - len(failed)} of {len(report)} notebooks passed every check under load"
          + (f"; failed: {', '.join(p.name if p.parent.name != 'zh' else 'zh/' + p.name for p in failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    sys.exit(main())
