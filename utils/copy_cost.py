"""What one decode step's cache writes cost, measured: ``torch.cat`` growth against in-place writes.

A decode step writes one new position per layer into the cache. ``KVCache`` does it with
``torch.cat``: every layer gets a new K and a new V tensor one position longer, and the whole history
is copied into them. ``StaticKVCache`` writes the position into a buffer allocated up front. At the
course model's size the copy is a few hundred KiB and disappears next to the rest of a step; at a
real model's size it is hundreds of MiB per step. Such a cache cannot run here with its model (the
weights alone would take GBs), but its cache writes can: ``cache_write_cost`` fills a cache of a
``ModelConfig`` (e.g. ``MODEL_PRESETS["Llama-2-7B"]``) with T positions of zeros and measures the
step that adds position T to every layer, with nothing else around it:

    allocations, bytes    counted by ``torch.profiler`` (``profile_memory=True``): every tensor the
                          step allocates on the CPU, with its size
    freed                 bytes the step gave back (the old tensors each new one replaced)
    seconds               median wall time of the step, measured without the profiler

The allocation counts are exact and the same on every machine; the times are not, so compare the
two kinds measured in the same run, not the digits.
"""
from __future__ import annotations

import ctypes
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from .cache import KVCache, StaticKVCache
from .config import ModelConfig
from .i18n import tr
from .validate import as_torch_dtype, check_choice, check_int

STEP = "one decode step"  # the profiler's name for the measured step


@dataclass
class WriteCost:
    """One decode step's cache writes, for a cache of ``kind`` already holding ``T`` positions.

    kind          "dynamic" (``KVCache``) or "static" (``StaticKVCache``)
    T             positions in the cache before the step
    held          bytes the cache's K/V tensors held before the step
    allocations   tensors the step allocated (the profiler's count)
    allocated     bytes the step allocated
    freed         bytes the step freed
    seconds       median wall time of one step (all layers, K and V)
    """

    kind: str
    T: int
    held: int
    allocations: int
    allocated: int
    freed: int
    seconds: float


@contextmanager
def _quiet_c_output():
    """Drop what C code writes to the process's stdout and stderr inside the block: the profiler's own
    library logs a line at every start and stop, which would land in the notebook. Python's prints are
    not touched (Jupyter sends them through ``sys.stdout``, not file descriptor 1)."""
    try:
        libc = ctypes.CDLL(None)
        fds = [sys.__stdout__.fileno(), sys.__stderr__.fileno()]
    except (OSError, AttributeError, ValueError):  # no C library or no real stdout (e.g. Windows): say nothing
        yield
        return
    libc.fflush(None)
    saved = [os.dup(fd) for fd in fds]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in fds:
            os.dup2(devnull, fd)
        yield
    finally:
        libc.fflush(None)  # what the C library buffered inside the block goes to /dev/null too
        for fd, old in zip(fds, saved):
            os.dup2(old, fd)
            os.close(old)
        os.close(devnull)


def _fill(cfg: ModelConfig, kind: str, T: int, extra: int, dtype: torch.dtype):
    """A cache of ``kind`` holding ``T`` positions of zeros in every layer (``extra`` more fit in a static one)."""
    shape = (1, cfg.n_kv_heads, T, cfg.head_dim)  # (B, H_kv, T, d_h)
    cache = KVCache() if kind == "dynamic" else StaticKVCache(cfg, 1, T + extra, dtype=dtype)
    for layer in range(cfg.n_layers):
        cache.update(layer, torch.zeros(shape, dtype=dtype), torch.zeros(shape, dtype=dtype))
    return cache


def _step(cache, cfg: ModelConfig, new: torch.Tensor) -> None:
    """What a decode step does to the cache: one new position (``new`` ``[1, H_kv, 1, d_h]``) per layer."""
    for layer in range(cfg.n_layers):
        cache.update(layer, new, new)


@torch.inference_mode()
def cache_write_cost(cfg: ModelConfig, T: int, kind: str, dtype="float16", repeats: int = 3) -> WriteCost:
    """Measure the cache writes of one decode step at ``T`` cached positions (see the module docstring).

    The cache is built inside the profiled region, so every free the step makes belongs to an
    allocation the profiler saw; only the events inside the step's ``record_function`` are counted.
    """
    if not isinstance(cfg, ModelConfig):
        raise ValueError(tr("cfg must be a ModelConfig (e.g. MODEL_PRESETS['Llama-2-7B']), got {type}",
                            type=type(cfg).__name__))
    check_choice("kind", kind, ("dynamic", "static"))
    check_int("T", T)
    check_int("repeats", repeats)
    dtype = as_torch_dtype(dtype)
    new = torch.ones(1, cfg.n_kv_heads, 1, cfg.head_dim, dtype=dtype)  # (1, H_kv, 1, d_h)
    with _quiet_c_output(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        cache = _fill(cfg, kind, T, 1 + repeats, dtype)
        held = cache.nbytes
        with record_function(STEP):
            _step(cache, cfg, new)
    events = prof.events()
    step = next(e for e in events if e.name == STEP)
    start, end = step.time_range.start, step.time_range.end
    # + an allocation, - a free; a free outside any operator is booked to the step itself
    sizes = [e.self_cpu_memory_usage for e in events if start <= e.time_range.start <= end and e.self_cpu_memory_usage]
    times = []
    for _ in range(repeats):  # timed without the profiler
        t0 = time.perf_counter()
        _step(cache, cfg, new)
        times.append(time.perf_counter() - t0)
    return WriteCost(kind, T, held, sum(s > 0 for s in sizes), sum(s for s in sizes if s > 0), -sum(s for s in sizes if s < 0),
                     sorted(times)[len(times) // 2])
