"""Performance measured: how the course times things (``stats.py``) and what it times (``timers.py``).

This face only re-exports: ``from utils import perf`` then ``perf.tpot_vs_context(...)``, or
``from utils.perf import paired_ratio, time_interleaved``, as before the split. The arithmetic the
measurements are compared with (bytes, FLOPs, the roofline bound of a step) is ``utils.roofline``.

The metrics, for a request of B rows that each produce n new tokens:

    TTFT        time to first token: in generate prefill + one sample (a server adds queueing, scheduling)
    TPOT        time per output token: one request's mean gap after its first token (ITL: each single gap)
    latency     end to end: TTFT + (n - 1) x TPOT
    throughput  new tokens per second, all rows together: B x n / latency;  while decoding: B / TPOT
    KV memory   2 x L x B x H_kv x T x d_h x bytes per element
"""
from __future__ import annotations

from .bandwidth import MATVEC_KERNELS, decode_dtypes, decode_vs_bandwidth, products_vs_rows  # noqa: F401
from .stats import Stats, metrics, paired_ratio, time_interleaved, torch_threads  # noqa: F401
from .timers import (  # noqa: F401
    BENCH_CONFIGS, batch_sweep, check_lengths, decode_time_vs_context, fit_step_time,
    measure_machine, random_ids, random_model, repeated_step, tpot_vs_context, ttft_vs_prompt_length,
)
