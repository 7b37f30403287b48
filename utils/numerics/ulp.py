"""Floating-point addition is not associative: the same numbers, summed in two orders, give two sums.

Every float is a number with a fixed count of significant bits (24 in float32, 8 in bfloat16, 11 in
float16). A sum rounds to that many bits after each addition, so what is lost depends on which numbers
met first. How far apart two results are is counted in **ulps** (units in the last place): the number
of representable floats between them. Two results 1 ulp apart are neighbours; 0 ulps is bit for bit.

    ulp_distance(a, b)        # elementwise int64: how many floats of a's dtype lie from a to b
    sum_in_orders(x)          # {order: the float32 sum of the same numbers added in that order}
"""
from __future__ import annotations

import torch

# A float's bits, read as a signed integer of the same width, are ordered like the floats themselves
# once negative numbers are flipped: consecutive floats are consecutive integers (IEEE 754 by design).
_INT_OF = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float64: torch.int64}


def ordered_int(x: torch.Tensor) -> torch.Tensor:
    """The position of each float of ``x`` on the number line of its dtype, as int64: neighbours differ by 1."""
    if x.dtype not in _INT_OF:
        raise ValueError(f"ulp_distance needs float16, bfloat16, float32 or float64 tensors, got {x.dtype}")
    bits = x.contiguous().view(_INT_OF[x.dtype]).long()  # same bits, read as a signed integer
    sign_flip = torch.iinfo(_INT_OF[x.dtype]).min  # -2**(w-1): the sign bit alone
    # Negative floats count down as their integers count up: mirror them, so -0.0 and +0.0 meet at 0.
    return torch.where(bits < 0, sign_flip - bits, bits)


def ulp_distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """How many floats of their (common) dtype lie between ``a`` and ``b``, elementwise (int64, >= 0).

    0 means the same bits (or +0.0 against -0.0); 1 means neighbours."""
    if a.dtype != b.dtype:
        raise ValueError(f"ulp_distance compares one dtype: got {a.dtype} and {b.dtype}")
    return (ordered_int(a) - ordered_int(b)).abs()


def ulp_of(x: torch.Tensor) -> torch.Tensor:
    """The gap from each value of ``x`` to the next float away from zero (one ulp at x), as a float tensor."""
    return (torch.nextafter(x.abs(), torch.tensor(float("inf"), dtype=x.dtype)) - x.abs())


def pairwise_sum(x: torch.Tensor) -> torch.Tensor:
    """The sum of a 1-D tensor by halves: pairs, then pairs of pairs (a tree), each step rounded."""
    while x.numel() > 1:
        if x.numel() % 2:
            x = torch.cat([x, x.new_zeros(1)])  # adding 0.0 is exact: pad to an even count
        x = x[0::2] + x[1::2]  # (n / 2,): each pair added once
    return x[0]


def sequential_sum(x: torch.Tensor) -> torch.Tensor:
    """The sum of a 1-D tensor left to right, one rounding after each addition."""
    total = x.new_zeros(())
    for value in x:
        total = total + value
    return total


def sum_in_orders(x: torch.Tensor, seed: int = 0) -> dict[str, torch.Tensor]:
    """The same numbers (1-D, float32) summed in five orders: left to right, right to left, smallest
    magnitude first, a random shuffle (``seed``), and a pairwise tree; plus ``torch.sum``'s own order."""
    g = torch.Generator().manual_seed(seed)
    return {
        "left to right": sequential_sum(x),
        "right to left": sequential_sum(x.flip(0)),
        "smallest first": sequential_sum(x[x.abs().argsort()]),
        "shuffled": sequential_sum(x[torch.randperm(x.numel(), generator=g)]),
        "pairwise": pairwise_sum(x),
        "torch.sum": x.sum(),
    }
