"""Re-execute course notebooks in place, top to bottom, each from a clean kernel.

Usage: python tools/run_notebooks.py [NOTEBOOK.ipynb ...]
With no arguments, runs every notebooks/*.ipynb in name order, then the Chinese twins in
notebooks/zh/. `make notebooks` calls this.

Outputs are committed, so the written files must be reproducible and small:
- a cell may run at most CELL_TIMEOUT seconds;
- widget state is not stored (`metadata.widgets`), and widget-view outputs, which point at
  widget models that no longer exist once the kernel is gone, are dropped (their text/plain
  fallback is kept);
- no per-cell execution timestamps are recorded.
Each notebook's wall time and its kernel's peak memory are printed (the course keeps every notebook
under 30 s on a 2-core machine and under 800 MB, to fit a free Colab session next to other tabs).
A notebook that raises is reported and left unchanged on disk; the script then exits 1.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from utils.series import notebook_language  # noqa: E402

from notebook_client import SteadyNotebookClient  # noqa: E402  (tools/ is on sys.path when run as a script)

CELL_TIMEOUT = int(__import__("os").environ.get("CELL_TIMEOUT", 300))  # seconds per cell
KERNEL_NAME = "python3"  # ipykernel's kernel: the interpreter running this script
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# What a saved notebook shows where a live widget was (GitHub, nbviewer): its repr,
# "VBox(children=(HTML(value=...", helps nobody.
WIDGET_PLACEHOLDER = "[interactive widget: run this notebook (JupyterLab or Colab) to use it]"


def widget_placeholder(lang: str = "en") -> str:
    """WIDGET_PLACEHOLDER in the notebook's language (a Chinese twin says it in Chinese)."""
    from utils.i18n import catalogue
    return WIDGET_PLACEHOLDER if lang == "en" else catalogue(lang)[WIDGET_PLACEHOLDER]


def strip_widget_state(nb: nbformat.NotebookNode, lang: str = "en") -> None:
    """Remove stored widget state and widget-view outputs from `nb` in place."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        kept = []
        for output in cell.outputs:
            data = output.get("data")
            if data is not None and WIDGET_VIEW in data:
                del data[WIDGET_VIEW]
                if "text/plain" in data:
                    data["text/plain"] = widget_placeholder(lang)
                if not data:
                    continue
            kept.append(output)
        cell.outputs = kept


# Run after the last cell, then removed: the kernel's peak resident memory (Linux: ru_maxrss in KiB).
PEAK_MEMORY_CELL = "import resource\nprint('PEAK_RSS_KIB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"


def run_notebook(path: Path) -> tuple[float, float]:
    """Execute `path` in a fresh kernel with its folder as working directory, write it back.

    Returns the wall time in seconds and the kernel's peak memory in MiB. Raises nbclient's
    CellExecutionError, CellTimeoutError or DeadKernelError if a cell fails, runs too long or kills
    the kernel.
    """
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PEAK_MEMORY_CELL))
    client = SteadyNotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name=KERNEL_NAME,
        resources={"metadata": {"path": str(path.parent)}},
        # True although the state is stripped below: with False, nbclient (0.10) raises KeyError
        # as soon as a cell displays into an ipywidgets Output (every Panel does).
        store_widget_state=True,
        record_timing=False,
    )
    start = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - start
    probe = nb.cells.pop()
    peak_kib = int("".join(o.get("text", "") for o in probe.outputs).split()[-1])
    strip_widget_state(nb, notebook_language(path))
    nbformat.write(nb, path)
    return elapsed, peak_kib / 1024


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or [*sorted((REPO / "notebooks").glob("*.ipynb")),
                                        *sorted((REPO / "notebooks" / "zh").glob("*.ipynb"))]
    if not paths:
        print("run_notebooks: no notebooks to run")
        return 0
    failed = []
    total = 0.0
    for path in paths:
        try:
            elapsed, peak_mib = run_notebook(path)
        except (CellExecutionError, CellTimeoutError, DeadKernelError) as err:
            failed.append(path)
            print(f"FAILED  {path}\n{err}", file=sys.stderr)
            continue
        total += elapsed
        print(f"{elapsed:7.1f} s  {peak_mib:6.0f} MiB peak  {path}", flush=True)
    print(f"{total:7.1f} s  total, {len(paths) - len(failed)}/{len(paths)} notebooks ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
