"""The numerics of cached inference: where the last bits of cached and recomputed logits go, measured.

One idea per module: ``ulp`` (non-associative sums, distances in ulps), ``trace`` (the first op that
differs, the recompute at the cached run's shapes), ``settings`` (dtype, kernel, threads, deterministic
mode), ``invariant`` and ``batches`` (batch composition and a batch-invariant step), ``divergence`` (greedy
flips at near-ties). This face only re-exports.
"""
from __future__ import annotations

from .batches import PATHS, compositions, logits_of  # noqa: F401
from .divergence import Divergence, divergence, greedy, reorder_sums  # noqa: F401
from .invariant import invariant_logits, invariant_step, keys_sum, tree_sum  # noqa: F401
from .settings import SETTINGS, SettingRow, settings_table  # noqa: F401
from .trace import OpDifference, cached_and_recomputed, chunked_recompute, first_difference, last_row_vs_alone, trace_last_row  # noqa: F401
from .ulp import ordered_int, pairwise_sum, sequential_sum, sum_in_orders, ulp_distance, ulp_of  # noqa: F401
