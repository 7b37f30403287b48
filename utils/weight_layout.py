"""Where a weight matrix's numbers sit in memory, and why batch-1 decode cares.

``nn.Linear`` computes ``y = x @ W.T`` with ``W`` of shape ``[C_out, C_in]``. The shape says nothing
about the order of the numbers in memory: ``W`` can be stored row by row (``"out_in"``, what
``nn.Linear`` allocates: strides ``(C_in, 1)``) or as the transpose of a row-by-row ``[C_in, C_out]``
matrix (``"in_out"``: strides ``(1, C_out)``). Same tensor to every op, same shape, same values.

In a batch-1 decode step every matrix is multiplied by one vector, and the time is the time to
stream the matrix from memory. How fast a CPU library streams it depends on the order:

* ``"in_out"``: ``x @ W.T`` is a plain ``[1, C_in] @ [C_in, C_out]`` product over a row-major
  matrix; the kernel adds ``x[i] * row i`` into the output, reading memory front to back.
* ``"out_in"``: the kernel takes a dot product per output, one row of ``W`` each; on this course's
  CPU build (MKL) that kernel streams slower.

``python -m utils.bench`` (case 4) measures both layouts on the same bytes in one run, beside the
memory's read rate: that measurement is the reason for the rule below. The modules and the flat
decode step read the same tensors through the same ops, so they stay bit for bit equal to each other
in either layout. Against the same model stored the other way, the last bits can differ: the kernel
for one layout sums in another order than the kernel for the other (float rounding, within ``TOL``).

The rule: ``Decoder`` stores its linear weights ``"in_out"`` (``MATVEC_LAYOUT``). It is measured on
this CPU only; on a GPU, measure again before keeping it. With two or more torch threads the flat
decode step also cuts each matrix into row blocks, one per core (``utils/split_matvec.py``); bench
case 4 times both layouts both ways, and with the work split the two layouts come much closer. An embedding tied to ``lm_head`` is left
as it is: the lookup reads rows of it.
"""
from __future__ import annotations

import torch
import torch.nn as nn

from .validate import check_choice

LAYOUTS = ("out_in", "in_out")
MATVEC_LAYOUT = "in_out"  # bench case 4 measures both; see the module docstring


def _linears(model: nn.Module):
    tied = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)}
    return [m for m in model.modules() if isinstance(m, nn.Linear) and id(m.weight) not in tied]


def layout_of(weight: torch.Tensor) -> str:
    """``"out_in"`` (row-major ``[C_out, C_in]``), ``"in_out"`` (its transpose is row-major), or
    ``"other"`` (a view with other strides)."""
    if weight.is_contiguous():
        return "out_in"
    return "in_out" if weight.t().is_contiguous() else "other"


def set_weight_layout(model: nn.Module, layout: str) -> nn.Module:
    """Store every ``nn.Linear`` weight of ``model`` in ``layout`` (values unchanged), in place.

    The ``Parameter`` objects stay the same (only their storage changes), so hooks, optimizers and
    ``flat_weights`` keep pointing at them; the old storage is freed.
    """
    check_choice("layout", layout, LAYOUTS)
    with torch.no_grad():
        for lin in _linears(model):
            w = lin.weight.data
            if layout_of(w) != layout:
                # (C_out, C_in) either way; only the strides differ
                lin.weight.data = w.contiguous() if layout == "out_in" else w.t().contiguous().t()
    return model


def weight_layout(model: nn.Module) -> str:
    """The layout every linear weight of ``model`` shares, or ``"mixed"``."""
    found = {layout_of(lin.weight) for lin in _linears(model)}
    return found.pop() if len(found) == 1 else "mixed"
