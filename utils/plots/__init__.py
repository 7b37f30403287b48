"""Matplotlib figures the notebooks share, one module per notebook; the shared code is ``base.py``.

This face only re-exports: ``from utils.plots import plot_ttft`` as before. Importing it registers
the course's CJK font (``base.py``).
"""
from __future__ import annotations

from .base import (  # noqa: F401
    COLORS, COURSE_FONT, COURSE_FONT_FAMILY, PANEL_DPI, detached, figure_png, format_bytes, new_figure, subplots,
)
# The sections' public names, importable from ``utils.plots`` as before the split (notebooks and tests rely on it).
from .prefill import plot_timeline, plot_top_probs, plot_ttft, plot_kv_heatmap, plot_padding_waste  # noqa: F401
from .sampling import SAMPLING_STAGES, plot_sampling_stages, plot_temperature_sweep  # noqa: F401
from .attention import (  # noqa: F401
    plot_mask, plot_weights, plot_head_groups, plot_rope_scores, plot_softmax_saturation, plot_rope_frequencies,
)
from .sizing import byte_unit, plot_kv_vs_context, plot_per_token_bars, plot_budget  # noqa: F401
from .decode import (  # noqa: F401
    plot_decode_grids, plot_recompute_diffs, plot_step_times, plot_step_costs, plot_new_query_weights,
    plot_bytes_and_step_time,
)
from .bug_lab import plot_bug_divergence, plot_bug_overview  # noqa: F401
from .beyond import (  # noqa: F401
    plot_cache_memory, plot_sliding_window, plot_copy_cost, plot_beam_tree,
)
from .metrics import (  # noqa: F401
    plot_ttft_tpot, plot_batch_sweep, plot_ttft_parts, plot_batch_roofline, plot_bandwidth, plot_decode_bound,
)
from .paged import plot_block_table, plot_paged_memory, plot_prefix_caching, plot_block_map  # noqa: F401
from .serving import plot_iterations, plot_engine_timeline, plot_schedules, plot_rate_sweep  # noqa: F401
from .speculative import plot_speculative_rounds, plot_first_token_counts, plot_speculative_speedup  # noqa: F401
from .compression import plot_quantize_group, plot_channel_magnitudes, plot_kept_positions, plot_compression_tradeoff  # noqa: F401
