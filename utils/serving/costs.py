"""One replay cost model for both engines: the seconds of one iteration, without running the model.

An iteration runs at most one decode forward (``rows`` rows, one token each) and prefill tokens (in
the paged engine, chunks in one forward; in the padded engine, one joining prompt or one left-padded
batch). ``StepCostModel`` prices it in two ways:

* **the line**: ``fixed + per_forward * forwards + per_row * decode rows + per_token * prefill
  tokens``, fitted by non-negative least squares to a real run's iterations;
* **the measured means**: for an iteration that only decodes, the mean time the run measured at that
  many rows; for one that only prefills, the mean at that many tokens; interpolated between two
  measured sizes, and pooled where a bigger size measured cheaper (isotonic: never falling).

``RooflineStepCost`` is the other machine, a GPU-like one (``gpu_like_costs()``): one packed forward pass
per iteration, as GPU engines run it, that takes the longer of reading every weight once and doing its
tokens' FLOPs. A decode-only iteration is then bound by the weight read, and prefill tokens beside it ride
along for free up to the ridge point: the side of chunked prefill this CPU cannot show.

A replay takes the measured mean where it has one and the line everywhere else (beyond the measured
sizes, and for an iteration that mixes decodes and chunks). Why both: measured step times need not lie
on a straight line in the rows, and a line through them misses at the ends, where one-at-a-time
serving runs every step (one row); a slider that moves the rate, the budget or the chunk still needs
a price for sizes nobody measured. The mean, not the median: a queue adds the costs up, so a replay
of the measured run must give back their sum, slow iterations included.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

import numpy as np

from ..flops import mlp_flops_per_token, projection_flops_per_token, weight_bytes
from ..i18n import tr
from ..roofline import GPU_ROOFS
from ..sizing import MODEL_PRESETS, kv_bytes_per_token

Means = tuple[tuple[int, float], ...]  # (size, mean seconds), sizes increasing


def _nonnegative_lstsq(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least squares with every coefficient >= 0: a coefficient that comes out negative is set to 0 and the
    others are fitted again without it (clipping after one fit would bias every prediction)."""
    keep, coef = list(range(X.shape[1])), np.zeros(X.shape[1])
    while keep:
        fit = np.linalg.lstsq(X[:, keep], y, rcond=None)[0]
        if (fit >= 0).all():
            coef[keep] = fit
            break
        keep.pop(int(np.argmin(fit)))
    return coef


def _means(points: list[tuple[int, float]]) -> Means:
    """The mean seconds at each size, sizes increasing, made non-decreasing in the size.

    More rows or more tokens never cost less, but the means of a few noisy iterations can say so (a
    stall, a slow kernel shape). Adjacent sizes whose means fall are pooled into their weighted mean
    (isotonic regression, pool-adjacent-violators, weighted by how many iterations each size had), so a
    replay never finds a bigger step cheaper; the total of all measured seconds is kept."""
    by_size: dict[int, list[float]] = {}
    for size, s in points:
        by_size.setdefault(size, []).append(s)
    blocks: list[list] = []  # [mean, weight, sizes]: pooled runs of adjacent sizes
    for x in sorted(by_size):
        blocks.append([statistics.fmean(by_size[x]), len(by_size[x]), [x]])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:  # a bigger size came out cheaper: pool
            (m1, w1, x1), (m2, w2, x2) = blocks.pop(-2), blocks.pop()
            blocks.append([(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2, x1 + x2])
    return tuple((x, mean) for mean, _, sizes in blocks for x in sizes)


def _measured(size: int, means: Means) -> float | None:
    """The measured mean at ``size``, interpolated between the two nearest measured sizes; None outside."""
    if means and means[0][0] <= size <= means[-1][0]:
        return float(np.interp(size, [x for x, _ in means], [y for _, y in means]))
    return None


def _steps_of(runs) -> list[dict]:
    """The iterations of a run (anything with ``.steps``), of several runs, or a list of step records."""
    if hasattr(runs, "steps"):
        return list(runs.steps)
    steps = []
    for item in runs:
        steps.extend(item.steps if hasattr(item, "steps") else [item])
    return steps


@dataclass(frozen=True)
class StepCostModel:
    """Seconds of one iteration (see the module): the line ``fixed + per_forward * forwards + per_row *
    decode rows + per_token * prefill tokens``, and where a run measured them, the mean of the
    decode-only iterations per row count and of the prefill-only iterations per token count."""

    fixed: float
    per_forward: float
    per_row: float
    per_token: float
    decode_by_rows: Means = ()  # decode-only iterations: (rows, mean seconds)
    prefill_by_tokens: Means = ()  # prefill-only iterations: (prefill tokens, mean seconds)

    def __post_init__(self) -> None:
        for name in ("fixed", "per_forward", "per_row", "per_token"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number of seconds >= 0, got {value!r}")

    def line(self, n_decode: int, n_prefill_tokens: int) -> float:
        """The straight line's seconds for an iteration of ``n_decode`` rows and ``n_prefill_tokens`` tokens."""
        forwards = int(n_decode > 0) + int(n_prefill_tokens > 0)
        return (self.fixed + self.per_forward * forwards + self.per_row * n_decode
                + self.per_token * n_prefill_tokens)

    def seconds(self, n_decode: int, n_prefill_tokens: int) -> float:
        """Seconds of one iteration: the measured mean for a pure iteration of a measured size, else the line."""
        measured = None
        if n_prefill_tokens == 0:
            measured = _measured(n_decode, self.decode_by_rows)
        elif n_decode == 0:
            measured = _measured(n_prefill_tokens, self.prefill_by_tokens)
        return self.line(n_decode, n_prefill_tokens) if measured is None else measured

    @classmethod
    def fit(cls, runs, *, by_size: bool = True) -> "StepCostModel":
        """Fit to real runs: ``runs`` is a run of either engine (its ``steps``), several runs, or step records.

        The line: non-negative least squares on the busy iterations, fitted again without the iterations a
        stall of the machine made more than 3x longer than the first fit predicts. ``by_size``: also keep
        the mean of the pure iterations at every measured size (False: the line alone)."""
        steps = [s for s in _steps_of(runs) if s["decode"] or s["prefill"]]
        if len(steps) < 4:
            raise ValueError(tr("fitting step costs needs at least 4 busy iterations, got {n}", n=len(steps)))
        X = np.array([[1.0, bool(s["decode"]) + bool(s["prefill"]), len(s["decode"]), s["prefill_tokens"]]
                      for s in steps])  # (iterations, 4): 1, forwards, decode rows, prefill tokens
        y = np.array([s["end_s"] - s["start_s"] for s in steps])  # (iterations,) seconds
        coef = _nonnegative_lstsq(X, y)
        ok = y <= 3 * np.maximum(X @ coef, 1e-9)  # an iteration a stall of the machine made 3x longer: left out
        if 4 <= ok.sum() < len(y):
            coef = _nonnegative_lstsq(X[ok], y[ok])
        if not by_size:
            return cls(*(float(c) for c in coef))
        decode = _means([(len(s["decode"]), t) for s, t in zip(steps, y) if not s["prefill"]])
        prefill = _means([(s["prefill_tokens"], t) for s, t in zip(steps, y) if not s["decode"]])
        return cls(*(float(c) for c in coef), decode_by_rows=decode, prefill_by_tokens=prefill)



@dataclass(frozen=True)
class RooflineStepCost(StepCostModel):
    """A GPU-like iteration: ``fixed + max(weight_read, per_token * tokens) + per_row * decode rows`` for an
    iteration of ``tokens`` tokens (decodes and chunks packed in **one** forward pass); ``fixed`` alone for an
    empty one. ``weight_read``: seconds to read every weight once; ``per_token``: seconds of one token's
    FLOPs at peak; ``per_row``: seconds to read one decode row's K/V. ``per_forward`` is unused (0)."""

    weight_read: float = 0.0
    machine: str = ""  # what the preset models, for a caption

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.weight_read, (int, float)) or not math.isfinite(self.weight_read) or self.weight_read < 0:
            raise ValueError(f"weight_read must be a finite number of seconds >= 0, got {self.weight_read!r}")

    def line(self, n_decode: int, n_prefill_tokens: int) -> float:
        tokens = n_decode + n_prefill_tokens
        if tokens == 0:
            return self.fixed
        return self.fixed + max(self.weight_read, self.per_token * tokens) + self.per_row * n_decode

    def seconds(self, n_decode: int, n_prefill_tokens: int) -> float:
        return self.line(n_decode, n_prefill_tokens)

    @property
    def ridge_tokens(self) -> float:
        """Tokens per iteration at which the FLOPs take as long as the weight read: below, tokens ride along."""
        return self.weight_read / self.per_token if self.per_token else math.inf


def gpu_like_costs(preset: str = "Llama-2-7B", gpu: int = 0, context_len: int = 64,
                   fixed: float = 5e-4) -> RooflineStepCost:
    """``RooflineStepCost`` of a model preset (``MODEL_PRESETS``) in bfloat16 on a GPU of ``GPU_ROOFS``
    (0: the A100): the weight bytes over the bandwidth, one token's FLOPs (projections, MLP; the lm_head
    counted per token too) over the peak, one row's K/V of ``context_len`` tokens over the bandwidth, and
    ``fixed`` seconds per iteration (launches and scheduling; CUDA graphs keep it small)."""
    cfg, roofs = MODEL_PRESETS[preset], GPU_ROOFS[gpu]
    flops = cfg.n_layers * (projection_flops_per_token(cfg) + mlp_flops_per_token(cfg)) + 2 * cfg.d_model * cfg.vocab_size
    return RooflineStepCost(fixed=fixed, per_forward=0.0, per_row=context_len * kv_bytes_per_token(cfg, "bfloat16")
                            / roofs.bandwidth, per_token=flops / roofs.peak_flops,
                            weight_read=weight_bytes(cfg, "bfloat16") / roofs.bandwidth, machine=f"{preset}, {roofs.name}")
