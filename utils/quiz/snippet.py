"""The "run this, predict, then check" questions: a short snippet, and its answer computed by running it.

The question shows the snippet; the learner predicts what its last line gives, checks, and can then
paste it into a new cell to watch it run. The answer is not typed: each snippet is written once, as a
function of the bank, and ``snippet_text`` shows that function's own body (its final ``return x``
shown as the line ``x``, the value a notebook cell would display), while ``run_snippet`` calls it. So
the code shown and the answer cannot disagree, and no text is ever executed.
"""
from __future__ import annotations

import inspect
import textwrap
from typing import Callable

import torch


def snippet_text(fn: Callable[[], object]) -> str:
    """The body of ``fn`` as a learner would type it in a cell: dedented, its last ``return x`` as ``x``."""
    lines = inspect.getsource(fn).splitlines()
    body = textwrap.dedent("\n".join(lines[1:]))  # drop the `def` line
    head, _, last = body.rstrip().rpartition("\n")
    if not last.startswith("return "):
        raise ValueError(f"a snippet must end with `return <the value to predict>`: {fn.__name__}")
    return f"{head}\n{last.removeprefix('return ')}"


def run_snippet(fn: Callable[[], object]):
    """The value of ``fn``'s snippet, as a new cell would give it. The global random state is left as it
    was (a model built inside is seeded)."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return fn()
