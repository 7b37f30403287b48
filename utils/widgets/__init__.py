"""The notebooks' interactive panels (ipywidgets 7.7.1 and 8.x), one module per notebook.

The pattern every panel follows and its shared code are ``base.py``; this face only re-exports:
``from utils.widgets import DecodePanel`` as before.
"""
from __future__ import annotations

from .base import Panel, dropdown, float_slider, int_slider, selection_slider  # noqa: F401
# The sections' public names, importable from ``utils.widgets`` as before the split (notebooks and tests rely on it).
from .sampling import SAMPLING_PROMPTS, SamplingPanel  # noqa: F401
from .attention import divisors, AttentionShapesPanel  # noqa: F401
from .sizing import T_CHOICES, CUSTOM, bytes_text, KVCacheExplorer, BudgetPlanner  # noqa: F401
from .prefill import PREFILL_PROMPTS, PrefillKVPanel  # noqa: F401
from .decode import DECODE_PROMPT, decode_grids_html, trace_decode, DecodePanel  # noqa: F401
from .bug_lab import diff_html, BugLabPanel  # noqa: F401
from .beyond import SLIDING_WINDOWS, SlidingWindowPanel  # noqa: F401
from .quiz import Quiz  # noqa: F401
from .metrics import (  # noqa: F401
    HARDWARE_BANDWIDTH_GBPS, BATCH_CHOICES, CONTEXT_CHOICES, DecodeBoundPanel,
)
from .paged import BLOCK_SIZES, POOL_SIZES, BlockMapPanel  # noqa: F401
from .serving import EngineTimelinePanel  # noqa: F401
from .speculative import SPEC_PROMPTS, SpeculativePanel  # noqa: F401
from .compression import CacheCompressionPanel  # noqa: F401
