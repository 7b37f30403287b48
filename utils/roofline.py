"""The roofline of a forward pass: is it limited by memory bandwidth or by arithmetic?

A step that performs F FLOPs and must move N bytes takes at least

    max(N / bandwidth, F / peak_flops)

Its **arithmetic intensity** is F / N (FLOPs per byte). A machine's **ridge point** is
peak_flops / bandwidth: a step whose intensity is below it is bandwidth-bound (the arithmetic
units wait for memory), above it compute-bound. A decode step multiplies B vectors by every
weight matrix, so each weight byte read serves about B multiply-adds: its intensity grows with
the batch and is tiny at B = 1. Prefill multiplies T vectors at once, so its intensity is ~T.

The counts come from ``utils.flops``; ``measure_machine`` measures this machine's two roofs.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from .config import ModelConfig
from .flops import decode_step_cost, mlp_flops_per_token, projection_flops_per_token, weight_bytes
from .sizing import bytes_per_element
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


# Published dense (no sparsity) bf16 tensor-core peaks and HBM bandwidths, from NVIDIA's datasheets.
GPU_ROOFS = [
    Roofs("NVIDIA A100 80GB SXM", 312e12, 2.039e12, "NVIDIA A100 datasheet (bf16 dense 312 TFLOPS, HBM2e 2,039 GB/s)"),
    Roofs("NVIDIA H100 SXM", 989e12, 3.35e12, "NVIDIA H100 datasheet (bf16 dense 989 TFLOPS, HBM3 3.35 TB/s)"),
]


def intensity(flops: float, nbytes: float) -> float:
    return flops / nbytes


def step_time(flops: float, nbytes: float, roofs: Roofs) -> float:
    """The roofline's lower bound on a step's time: the slower of moving its bytes and doing its FLOPs."""
    return max(nbytes / roofs.bandwidth, flops / roofs.peak_flops)


def decode_point(cfg: ModelConfig, batch_size: int, context_len: int, dtype="float16") -> dict:
    """FLOPs, bytes and intensity of one cached decode step of B rows after T tokens."""
    c = decode_step_cost(cfg, context_len, cached=True, batch_size=batch_size, dtype=dtype)
    nbytes = sum(c.bytes.values())
    return {"B": batch_size, "T": context_len, "flops": c.total_flops, "bytes": nbytes,
            "intensity": c.total_flops / nbytes, "weight_bytes": c.bytes["weights"], "kv_bytes": c.bytes["kv_read"]}


def prefill_point(cfg: ModelConfig, prompt_len: int, dtype="float16") -> dict:
    """The same for a batch-1 prefill of T tokens: the weights are read once for all T tokens."""
    check_int("prompt_len", prompt_len)
    L, T = cfg.n_layers, prompt_len
    flops = T * L * (projection_flops_per_token(cfg) + mlp_flops_per_token(cfg)) \
        + L * 2 * 2 * cfg.n_heads * cfg.head_dim * T * (T + 1) // 2 + 2 * cfg.d_model * cfg.vocab_size
    kv_write = T * 2 * L * cfg.n_kv_heads * cfg.head_dim * bytes_per_element(dtype)
    nbytes = weight_bytes(cfg, dtype, n_tokens=T) + kv_write
    return {"T": T, "flops": flops, "bytes": nbytes, "intensity": flops / nbytes}


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


def _median_time(fn, repeats: int) -> float:
    fn()  # warm-up: first touch of the pages, kernel selection
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def measure_machine(matmul_n: int = 1024, n_bytes: int = 128 * 2**20, repeats: int = 5) -> Roofs:
    """This machine's roofs with the current torch threads, float32: a square matmul's FLOP/s and
    the read bandwidth of summing a buffer far larger than the CPU caches (``n_bytes``)."""
    check_int("matmul_n", matmul_n, minimum=64)
    check_int("n_bytes", n_bytes, minimum=2**20)
    a = torch.randn(matmul_n, matmul_n, generator=torch.Generator().manual_seed(0))
    b = torch.randn(matmul_n, matmul_n, generator=torch.Generator().manual_seed(1))
    flops = 2 * matmul_n**3 / _median_time(lambda: a @ b, repeats)
    buf = torch.ones(n_bytes // 4)
    bandwidth = n_bytes / _median_time(buf.sum, repeats)
    return Roofs(f"this CPU ({torch.get_num_threads()} thread(s), float32)", flops, bandwidth,
                 "measured: a square float32 matmul and a sum over a large buffer")
