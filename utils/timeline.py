"""The timeline of one generation: when the prefill and each decode step ran, measured.

``generate`` records the time to the first token (``ttft_s``) and the time of every decode step
(``step_times_s``); a timeline lays them end to end as bars a plot can draw
(``utils.plots.plot_timeline``). A single run on a shared CPU can catch a pause of the scheduler
in any step, so ``median_timeline`` (each segment's median) and ``fastest_timeline`` (each segment's
minimum) combine several runs of the same generation, segment by segment. ``tensor_ops`` names the
tensor operations a call makes, as a dispatch mode sees them (``count_tensor_ops`` counts them).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable, Sequence

from torch.utils._python_dispatch import TorchDispatchMode

from .generate import GenerationResult


@dataclass(frozen=True)
class Segment:
    """One bar of a generation timeline: ``phase`` is ``"prefill"`` or ``"decode"``.

    ``step`` 0 is the prefill (which yields the first new token); decode step s yields token s + 1.
    ``token`` is the id produced at the end of the segment (or None if unknown).
    """

    phase: str
    step: int
    start_s: float
    duration_s: float
    token: int | None = None

    @property
    def end_s(self) -> float:
        return self.start_s + self.duration_s


def timeline(result: GenerationResult, row: int = 0) -> list[Segment]:
    """The segments of ``generate``'s ``result`` laid end to end in time.

    The first segment is ``ttft_s`` (prefill + picking the first token); each following one is
    a decode step from ``step_times_s`` (feed the token, read the cache, pick the next token).
    ``row`` picks which row's tokens label the segments.
    """
    if result.ttft_s is None:
        return []
    n = result.tokens.shape[1]
    tokens = result.tokens[row].tolist() if n else []
    durations = [result.ttft_s] + list(result.step_times_s)
    segments, t = [], 0.0
    for s, d in enumerate(durations):
        segments.append(Segment("prefill" if s == 0 else "decode", s, t, d, tokens[s] if s < len(tokens) else None))
        t += d
    return segments


def median_timeline(results: Sequence[GenerationResult], row: int = 0) -> list[Segment]:
    """One timeline from several runs of the same generation: each segment's median over the runs.

    A single run on a shared CPU can catch a 10 ms pause of the scheduler in any step; the
    per-step median over a few runs cannot (as long as fewer than half the runs are hit): the
    typical time of each step. The runs must have produced the same number of tokens (greedy
    decoding of the same prompt does); the tokens are taken from the first run.
    """
    return _combine(results, row, statistics.median)


def fastest_timeline(results: Sequence[GenerationResult], row: int = 0) -> list[Segment]:
    """One timeline from several runs of the same generation: each segment's fastest run (its minimum).

    Pauses of a busy machine only ever add time, so on a shared CPU the minimum over runs is the
    cleanest estimate of what a step itself costs (``median_timeline`` gives the typical time).
    The same runs as ``median_timeline`` takes.
    """
    return _combine(results, row, min)


def _combine(results: Sequence[GenerationResult], row: int, pick) -> list[Segment]:
    # segment i of the combined timeline lasts pick(segment i's durations over the runs)
    if not results:
        raise ValueError("a timeline over runs needs at least one GenerationResult")
    runs = [timeline(r, row) for r in results]
    n = len(runs[0])
    if any(len(segs) != n for segs in runs):
        raise ValueError(f"the runs have different lengths {[len(s) for s in runs]}; use the same prompt and greedy decoding")
    segments, t = [], 0.0
    for i, first in enumerate(runs[0]):
        d = pick([segs[i].duration_s for segs in runs])
        segments.append(Segment(first.phase, first.step, t, d, first.token))
        t += d
    return segments


class _OpLog(TorchDispatchMode):
    # sees each aten call that reaches the dispatch mode (aten::linear, aten::add, ...), names it, runs it
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(func.overloadpacket.__name__)  # e.g. "mm", "clone"
        return func(*args, **(kwargs or {}))


def tensor_ops(fn: Callable[[], object]) -> list[str]:
    """The tensor operations that calling ``fn()`` makes, by name, in order: the calls the dispatch
    mode sees. Under ``torch.inference_mode`` these are the top-level ops (a linear is one ``linear``),
    not the kernels inside them; outside it, some ops are seen decomposed (a linear as ``t`` and ``mm``).
    An operation that runs inside a fused kernel is not seen.
    """
    log = _OpLog()
    with log:
        fn()
    return log.names


def count_tensor_ops(fn: Callable[[], object]) -> int:
    """How many tensor operations calling ``fn()`` makes, as ``tensor_ops`` sees them: under
    ``torch.inference_mode``, the top-level ops (a linear is one), not the kernels inside them.
    """
    return len(tensor_ops(fn))
