"""A learner who jumps into the middle of a notebook meets a bare ``NameError``. The setup cell calls
``explain_name_errors()``: after the usual traceback, one more line says where the course defines the
name (the notebook, its section, the line) and how to run the cells above.

Where each name is defined comes from ``utils/data/notebook_names.json``, which ``tools/nbsync.py``
writes from the notebooks' code (a test keeps it in step). In JupyterLab the kernel knows its
notebook (``JPY_SESSION_NAME``), so the hint names the section of *this* notebook; elsewhere (Colab)
it lists the notebooks that define the name, the likeliest first: the ones whose other names the kernel
already holds (a learner in notebook 13 has its ``docs`` and ``grid``, not notebook 04's ``llama3``).
"""
from __future__ import annotations

import json
import os
import re
from functools import cache
from pathlib import Path

from .i18n import language, tr

INDEX = Path(__file__).resolve().parent / "data" / "notebook_names.json"  # written by tools/nbsync.py


@cache
def _index() -> dict[str, dict[str, dict[str, list[str]]]]:
    return json.loads(INDEX.read_text(encoding="utf-8")) if INDEX.exists() else {}


def definitions(lang: str | None = None) -> dict[str, dict[str, str]]:
    """notebook -> name -> the section (heading) of the cell that first defines it, for the notebooks in
    ``lang`` (default: the current language; the sections are the notebook's own headings)."""
    return {nb: {name: entry["sections"][i] for name, i in entry["names"].items()}
            for nb, entry in _index().get(lang or language(), {}).items()}


def current_notebook() -> str | None:
    """The file name of the notebook this kernel runs, when the server says (JupyterLab does)."""
    name = Path(os.environ.get("JPY_SESSION_NAME", "")).name
    return name if name in definitions() else None


def hint(name: str, notebook: str | None = None, held=None) -> str:
    """What to tell a learner whose cell used ``name`` before any cell defined it. ``held``: the names the
    kernel holds (its ``user_ns``), to list first the notebooks the learner is most likely working in."""
    index = definitions()
    places = {nb: names[name] for nb, names in index.items() if name in names}
    if held:  # most names already held first; a tie keeps the course's order
        held = set(held)
        order = sorted(places, key=lambda nb: -len(held & set(index[nb])))
        places = {nb: places[nb] for nb in order}
    if notebook in places:
        return tr("`{name}` is defined further up in this notebook, in section \"{section}\". "
                  "Run the cells above first (Run > Run All Above Selected Cell).", name=name, section=places[notebook])
    if places:
        shown = list(places.items())[:3]
        where = tr("; ").join(tr("{notebook} (\"{section}\")", notebook=nb, section=section) for nb, section in shown)
        if len(places) > len(shown):
            where += tr("; and {n} more", n=len(places) - len(shown))
        return tr("`{name}` is defined by an earlier cell of the course notebook: {where}. Run the cells above "
                  "first (Run > Run All Above Selected Cell).", name=name, where=where)
    return tr("Run the cells above first (Run > Run All Above Selected Cell): a name is defined by an earlier cell.")


def explain_name_errors(shell=None) -> None:
    """Add the hint to every ``NameError`` in this IPython session (does nothing outside IPython)."""
    if shell is None:
        try:
            shell = get_ipython()  # noqa: F821 (defined by IPython)
        except NameError:
            return

    def handler(shell, etype, evalue, tb, tb_offset=None):
        shell.showtraceback((etype, evalue, tb), tb_offset=tb_offset)
        m = re.search(r"name '(\w+)' is not defined", str(evalue))
        if m:
            print(hint(m.group(1), current_notebook(), getattr(shell, "user_ns", None)))

    shell.set_custom_exc((NameError,), handler)
