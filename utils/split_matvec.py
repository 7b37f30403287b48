"""Batch-1 decode on every core: one matrix-vector product cut into row blocks, one block per thread.

At batch 1 a decode step multiplies one vector by each weight matrix, and its time is the time to
stream the matrix from memory. On this course's CPU build, torch's matrix-vector kernel streams a
matrix with one core: it is no faster with two threads than with one (``python -m utils.bench``,
case 4, times it), while reading memory on both cores is faster than on one. ``torch.bmm`` gives
each matrix of a batch to its own thread. So cut ``W``'s ``C_out`` output rows into ``k`` blocks
(a view, nothing is copied) and multiply the same vector by every block in one ``bmm``: each core
streams its own block, and the blocks' outputs, side by side, are the product's output.

Each output is still one dot product over ``C_in`` computed by the same kernel, so on this build the
result is bit for bit ``F.linear``'s. That is a property of the kernels, not of the maths, so it is
checked, not assumed: the first time a (shape, layout, dtype, k) is seen, ``rows_split`` compares the
two on random numbers and keeps the split only if every bit agrees. Elsewhere it falls back to
``F.linear``, and the flat decode step stays bit for bit equal to the modules on any machine.

Only batch 1 takes the split: with more rows the product is a matrix-matrix product, whose kernel
already uses every core. And only a matrix of at least ``MIN_BYTES``: handing a matrix to two threads costs a fixed
time to wake the second one and wait for both, which a small matrix need not win back. 1 MiB is a
round value between the sizes measured: the course model's matrices (32-172 KiB) and the 'small'
model's (up to 688 KiB, ``python -m utils.bench`` case 2) gained nothing from the split, the 50 M
model's 6 MiB MLP matrices about 1.2x per step; sizes in between were not measured.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

MIN_BYTES = 1 << 20  # 1 MiB: smaller matrices stay whole (see above for what was measured)
_agrees: dict[tuple, bool] = {}  # (C_out, C_in, strides, dtype, k) -> the split gives F.linear's bits


def _blocks(w: torch.Tensor, k: int) -> torch.Tensor:
    """``w`` (C_out, C_in) as ``k`` blocks of its rows, each transposed: (k, C_in, C_out // k), a view."""
    C_out, C_in = w.shape
    # w.t() is (C_in, C_out) in either memory layout; split its columns (the output rows of w)
    return w.t().reshape(C_in, k, C_out // k).permute(1, 0, 2)  # (k, C_in, C_out // k)


def _split_matvec(x: torch.Tensor, blocks: torch.Tensor) -> torch.Tensor:
    k, C_in, n = blocks.shape
    return torch.bmm(x.expand(k, 1, C_in), blocks).view(1, k * n)  # (k, 1, n) -> (1, C_out): block order


def _same_bits(w: torch.Tensor, k: int) -> bool:
    key = (*w.shape, w.stride(), w.dtype, k)
    if key not in _agrees:
        g = torch.Generator().manual_seed(0)
        probe = torch.randn(w.shape[1], w.shape[0], generator=g).to(w.dtype)  # (C_in, C_out)
        probe = probe.t() if w.stride(0) == 1 else probe.t().contiguous()  # (C_out, C_in), w's layout
        x = torch.randn(1, w.shape[1], generator=g).to(w.dtype)  # (1, C_in)
        _agrees[key] = torch.equal(_split_matvec(x, _blocks(probe, k)), F.linear(x, probe))
    return _agrees[key]


def rows_split(w: torch.Tensor, k: int | None = None, min_bytes: int | None = None) -> torch.Tensor | None:
    """``w``'s rows as ``k`` blocks (default: torch's thread count) for ``matvec``, or ``None`` where
    the split cannot help or would change the bits: one thread, a matrix under ``min_bytes`` (default
    ``MIN_BYTES``), ``C_out`` not a multiple of ``k``, a view ``reshape`` would have to copy, or a
    kernel that sums in another order than ``F.linear``'s."""
    k = torch.get_num_threads() if k is None else k
    min_bytes = MIN_BYTES if min_bytes is None else min_bytes
    if w.dim() != 2 or k < 2 or w.shape[0] % k or w.numel() * w.element_size() < min_bytes:
        return None
    blocks = _blocks(w, k)
    if blocks.data_ptr() != w.data_ptr() or not _same_bits(w, k):
        return None  # reshape copied: the blocks would not see later in-place edits of w
    return blocks


def matvec(x: torch.Tensor, w: torch.Tensor, blocks: torch.Tensor | None) -> torch.Tensor:
    """``F.linear(x, w)`` for ``x`` (B, C_in) -> (B, C_out); at ``B == 1`` through ``blocks``
    (from ``rows_split(w)``) when there are any."""
    if blocks is None or x.shape[0] != 1:
        return F.linear(x, w)  # (B, C_out)
    return _split_matvec(x, blocks)  # (1, C_out)
