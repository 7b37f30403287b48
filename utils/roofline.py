"""The roofline of a forward pass: is it limited by memory bandwidth or by arithmetic?

A step that performs F FLOPs and must move N bytes takes at least

    max(N / bandwidth, F / peak_flops)

Its **arithmetic intensity** is F / N (FLOPs per byte). A machine's **ridge point** is
peak_flops / bandwidth: a step whose intensity is below it is bandwidth-bound (the arithmetic
units wait for memory), above it compute-bound. A decode step multiplies B vectors by every
weight matrix, so each weight byte read serves about B multiply-adds: its intensity grows with
the batch and is tiny at B = 1. Prefill multiplies T vectors at once, so its intensity is ~T.

The counts come from ``utils.flops``. A step's bytes are the weights (the same at every context)
plus the K/V cache (growing with T): ``kv_weights_crossover`` is the context at which the second
reaches the first. This module is arithmetic only: ``utils.perf`` measures (``measure_machine``: this
machine's two roofs; ``decode_time_vs_context``: steps at long contexts, to see the time follow the bytes).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .config import ModelConfig
from .flops import decode_step_cost, mlp_flops_per_token, projection_flops_per_token, weight_bytes
from .i18n import tr
from .sizing import bytes_per_element, kv_bytes_per_token
from .validate import check_int


@dataclass(frozen=True)
class Roofs:
    """A machine's two limits: peak FLOP/s and memory read bandwidth (bytes/s)."""

    name: str
    peak_flops: float
    bandwidth: float
    source: str = ""

    @property
    def ridge(self) -> float:
        """FLOPs per byte at which a step stops being bandwidth-bound."""
        return self.peak_flops / self.bandwidth

    @property
    def cited_source(self) -> str:
        """``source`` (kept in English, as published) in the language the package speaks now."""
        return tr(self.source) if self.source else ""


# Published dense (no sparsity) bf16 tensor-core peaks and HBM bandwidths, from NVIDIA's datasheets.
GPU_ROOFS = [
    Roofs("NVIDIA A100 80GB SXM", 312e12, 2.039e12, "NVIDIA A100 datasheet (bf16 dense 312 TFLOPS, HBM2e 2,039 GB/s)"),
    Roofs("NVIDIA H100 SXM", 989e12, 3.35e12, "NVIDIA H100 datasheet (bf16 dense 989 TFLOPS, HBM3 3.35 TB/s)"),
]


def intensity(flops: float, nbytes: float) -> float:
    """Arithmetic intensity: FLOPs done per byte moved (compare it with a machine's ``ridge``)."""
    return flops / nbytes


def step_time(flops: float, nbytes: float, roofs: Roofs) -> float:
    """The roofline's lower bound on a step's time: the slower of moving its bytes and doing its FLOPs."""
    return max(nbytes / roofs.bandwidth, flops / roofs.peak_flops)


def decode_point(cfg: ModelConfig, batch_size: int, context_len: int, dtype="float16") -> dict:
    """FLOPs, bytes and intensity of one cached decode step of B rows after T tokens."""
    c = decode_step_cost(cfg, context_len, cached=True, batch_size=batch_size, dtype=dtype)
    nbytes = sum(c.bytes.values())
    return {"B": batch_size, "T": context_len, "flops": c.total_flops, "bytes": nbytes,
            "intensity": intensity(c.total_flops, nbytes), "weight_bytes": c.bytes["weights"], "kv_bytes": c.bytes["kv_read"]}


def decode_parts(cfg: ModelConfig, batch_size: int, context_len: int, dtype="float16") -> dict:
    """One cached decode step split into its two kinds of kernel, each with FLOPs, bytes and intensity.

    ``"matmul"``: the products with the weight matrices (projections, MLPs, lm_head), which read the
    weights once for all B rows: about B FLOPs per bfloat16 byte, whatever T is. ``"attention"``: the new
    queries against each row's own cached K/V: about H / H_kv FLOPs per bfloat16 byte, whatever B is.
    A kernel runs at its own bound, so the pooled intensity of ``decode_point`` can hide that one part
    is compute-bound while the other waits on memory.
    """
    c = decode_step_cost(cfg, context_len, cached=True, batch_size=batch_size, dtype=dtype)
    parts = {"matmul": (c.flops["projections"] + c.flops["mlp"] + c.flops["lm_head"], c.bytes["weights"]),
             "attention": (c.flops["attention"], c.bytes["kv_read"] + c.bytes["kv_write"])}
    return {name: {"flops": f, "bytes": n, "intensity": intensity(f, n)} for name, (f, n) in parts.items()}


def prefill_point(cfg: ModelConfig, prompt_len: int, dtype="float16") -> dict:
    """The same for a batch-1 prefill of T tokens: the weights are read once for all T tokens."""
    check_int("prompt_len", prompt_len)
    L, T = cfg.n_layers, prompt_len
    flops = T * L * (projection_flops_per_token(cfg) + mlp_flops_per_token(cfg)) \
        + L * 2 * 2 * cfg.n_heads * cfg.head_dim * T * (T + 1) // 2 + 2 * cfg.d_model * cfg.vocab_size
    kv_write = T * 2 * L * cfg.n_kv_heads * cfg.head_dim * bytes_per_element(dtype)
    nbytes = weight_bytes(cfg, dtype, n_tokens=T) + kv_write
    return {"T": T, "flops": flops, "bytes": nbytes, "intensity": intensity(flops, nbytes)}


def ridge_batch(cfg: ModelConfig, context_len: int, roofs: Roofs, dtype="float16", max_batch: int = 4096) -> int | None:
    """The smallest batch whose decode step is compute-bound on ``roofs`` (None up to ``max_batch``).

    Each row adds its own K/V bytes, so with a long context the intensity levels off below the
    weights-only value and the ridge may never be reached.
    """
    for B in range(1, max_batch + 1):
        p = decode_point(cfg, B, context_len, dtype)
        if p["intensity"] >= roofs.ridge:
            return B
    return None


def kv_weights_crossover(cfg: ModelConfig, batch_size: int = 1, dtype="float16") -> int:
    """The smallest context T at which a decode step reads as many K/V bytes as weight bytes:
    B x T x (K/V bytes of one token) >= the weights one step reads. Below it the weights dominate
    what a step reads, above it the cache does."""
    weights = decode_step_cost(cfg, 0, batch_size=batch_size, dtype=dtype).bytes["weights"]
    return -(-weights // (batch_size * kv_bytes_per_token(cfg, dtype)))  # ceiling division


def decode_bytes_per_token(cfg: ModelConfig, context_len: int, dtype: torch.dtype | str = "float32") -> dict:
    """Bytes one batch-1 decode step moves (``utils.flops``): ``weights``, ``kv_read``, ``kv_write``, ``total``."""
    b = dict(decode_step_cost(cfg, context_len, dtype=dtype).bytes)
    b["total"] = sum(b.values())
    return b


def decode_bound(cfg: ModelConfig, batch_size: int, context_len: int, bandwidth_Bps: float,
                 dtype: torch.dtype | str = "float32", peak_flops: float | None = None) -> dict:
    """The roofline limit of one decode step of B rows with T tokens of context each.

    Every weight is read once per step whatever B is; the K/V cache is read once per row, so
    ``memory_s`` = bytes per step / bandwidth. Every row does its own arithmetic, so ``compute_s`` =
    FLOPs per step / ``peak_flops`` (0 without a peak: a memory-only bound). ``tpot_min_s`` is the
    larger of the two (``bound_by`` says which), and at most ``B / tpot_min_s`` tokens come out per
    second. Also returns the bytes per new token, which fall like 1 / B while the weights dominate.
    """
    if not bandwidth_Bps > 0:
        raise ValueError(f"bandwidth_Bps must be > 0, got {bandwidth_Bps!r}")
    if peak_flops is not None and not peak_flops > 0:
        raise ValueError(f"peak_flops must be > 0 (or None: memory only), got {peak_flops!r}")
    cost = decode_step_cost(cfg, context_len, batch_size=batch_size, dtype=dtype)
    b = dict(cost.bytes)
    total = sum(b.values())
    roofs = Roofs("", peak_flops or float("inf"), bandwidth_Bps)  # no peak: the memory roof alone
    memory, compute = total / bandwidth_Bps, cost.total_flops / peak_flops if peak_flops else 0.0
    tpot = step_time(cost.total_flops, total, roofs)  # the larger of the two
    return {**b, "total": total, "bytes_per_token": total / batch_size, "flops": cost.total_flops,
            "memory_s": memory, "compute_s": compute, "tpot_min_s": tpot, "max_tokens_per_s": batch_size / tpot,
            "bound_by": "compute" if compute > memory else "memory"}


def fit_batch_line(batches, tpot, from_batch: int = 4) -> tuple[float, float]:
    """Least squares over the batches >= ``from_batch``: TPOT ≈ fixed + per_row × B; returns (fixed, per_row).

    The smallest batches are left out: a few points measured on a busy machine, which need not lie
    on one line with the rest and would pull it (notebook 06, section 5).
    """
    keep = [i for i, B in enumerate(batches) if B >= from_batch]
    if len(keep) < 2:
        raise ValueError(tr("a line needs at least two batches >= {from_batch}, got {batches}",
                            from_batch=from_batch, batches=list(batches)))
    per_row, fixed = np.polyfit(np.asarray(batches, dtype=float)[keep], np.asarray(tpot, dtype=float)[keep], 1)
    return float(fixed), float(per_row)


def last_level_cache_bytes(cpu_dir: str = "/sys/devices/system/cpu/cpu0/cache") -> int | None:
    """This CPU's largest cache (the last level), in bytes, from Linux's sysfs; None where it is not there."""
    sizes = []
    for size in Path(cpu_dir).glob("index*/size"):
        text = size.read_text().strip()  # e.g. "32768K"
        unit = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:].upper(), 1)
        digits = text[:-1] if text[-1:].isalpha() else text
        if digits.isdigit():
            sizes.append(int(digits) * unit)
    return max(sizes) if sizes else None
