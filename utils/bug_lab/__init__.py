"""The bug lab of notebook 07: broken KV-cache engines, found by comparing with full recompute.

Three rooms and their helpers, one face (``from utils import bug_lab``; every name below is ``bug_lab.<name>``):

* ``harness.py``   the bench every bug shares: ``run_check`` (the recompute check that never lets an
                   error escape), ``show_diff``, the bug ``table``;
* ``catalogue.py`` the classic bugs, each a broken and a fixed variant (``BUGS``, ``show_fix``, ``run_all``);
* ``mysteries.py`` the same bugs and a few more (``mystery_engines.py``) with no name on them, to diagnose
                   (``mystery``, ``probe``, ``diagnose``); ``probe.py`` records what an engine does, pass by pass,
                   next to a full recompute; ``rules_out.py`` tells a wrong guess which observation rules it out.
"""
from __future__ import annotations

from .catalogue import (  # noqa: F401
    BUG_BY_KEY, BUGS, Bug, ConcatOnHeadsKVCache, ConcatOnTimeKVCache, FeedEverything, FeedNewTokenOnly,
    Layer0HistoryKVCache, OwnHistoryKVCache, TextSoFar, as_beam_search, as_cache, as_dropout_twin_mode,
    as_padded_prefill, as_prefill_and_step, as_step, beams_with_reorder, beams_without_reorder, keep_train_mode,
    padded_batch, prefill_chunks_full_mask, prefill_chunks_short_mask, prefill_into, prefill_lengths_matched,
    prefill_lengths_mixed_up, run_all, show_fix, state_hash, step_mask_counts_cache, step_mask_ignores_cache,
    step_position_continues, step_position_restarts, switch_to_eval, use_cache_hashes, with_dropout,
)
from .harness import N_STEPS, TOL, Outcome, run_check, show_diff, table, text_table  # noqa: F401
from .mysteries import ALIASES, VOCABULARY, Mystery, diagnose, mystery, probe  # noqa: F401
from .probe import PROBE_HEAD, Probe  # noqa: F401
