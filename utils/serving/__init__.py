"""Serving: requests that arrive over time, two engines with one API, and one replay cost model.

This face only re-exports (``from utils.serving import PagedEngine, serve``). Its rooms:

* ``arrivals.py``     Poisson arrival times, ``Workload``, ``random_workload``, ``solo_runs``;
* ``run.py``          what ``run()`` returns: ``Run`` (tokens, steps, requests, ``summary()`` with
                      TTFT, TPOT, ITL and throughput, ``schedule()``, ``trace()``: the first iterations
                      as lines, with arrivals, joins and leaves), each ``Request``'s record, and
                      ``summary_table`` (several runs' summaries as a printed table);
* ``costs.py``        ``StepCostModel``: the seconds of one iteration, fitted to a run, for a replay;
* ``engine.py``       the engine API both engines answer (``add_request``, ``step``, ``run``, ``now``)
                      and ``serve(engine, workload, arrival_s)``;
* ``padded.py``       ``PaddedBatchEngine`` (notebook 06): one left-padded ``KVCache``, served one at a
                      time, in static batches or by continuous batching (``policy``);
* ``paged_engine.py`` ``PagedEngine`` (notebook 11): continuous batching with chunked prefill, prefix
                      caching and preemption, on a paged KV cache; ``one_pass_s``: a measured iteration's
                      time had its two forward passes been one.
"""
from __future__ import annotations

from .arrivals import Workload, poisson_arrivals, random_workload, solo_runs  # noqa: F401
from .costs import StepCostModel  # noqa: F401
from .engine import ServingEngine, serve  # noqa: F401
from .padded import POLICIES, PaddedBatchEngine, stack_caches, trim_left  # noqa: F401
from .paged_engine import PagedEngine, PagedRequest, one_pass_s  # noqa: F401
from .run import Request, Run, summary_table  # noqa: F401
