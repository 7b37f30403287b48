"""The roofline of a forward pass: is it limited by memory bandwidth or by arithmetic?

A step that performs F FLOPs and must move N bytes takes at least

    max(N / bandwidth, F / peak_flops)

Its **arithmetic intensity** is F / N (FLOPs per byte). A machine's **ridge point** is
peak_flops / bandwidth: a step whose intensity is below it is bandwidth-bound (the arithmetic
units wait for memory), above it compute-bound. A decode step multiplies B vectors by every
weight matrix, so each weight byte read serves about B multiply-adds: its intensity grows with
the batch and is tiny at B = 1. Prefill multiplies T vectors at once, so its intensity is ~T.

The counts come from ``utils.flops``; ``measure_machine`` measures this machine's two roofs.
A step's bytes are the weights (the same at every context) plus the K/V cache (growing with T):
``kv_weights_crossover`` is the context at which the second reaches the first, and
``decode_time_vs_context`` times steps at long contexts to see the time follow the bytes.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from .cache import StaticKVCache
from .config import ModelConfig
from .flops import decode_step_cost, mlp_flops_per_token, projection_flops_per_token, weight_bytes
from .generate import decode_stepper
from .i18n import tr
from .perf import Stats, check_lengths, random_ids
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


def kv_weights_crossover(cfg: ModelConfig, batch_size: int = 1, dtype="float16") -> int:
    """The smallest context T at which a decode step reads as many K/V bytes as weight bytes:
    B x T x (K/V bytes of one token) >= the weights one step reads. Below it the weights dominate
    what a step reads, above it the cache does."""
    weights = decode_step_cost(cfg, 0, batch_size=batch_size, dtype=dtype).bytes["weights"]
    return -(-weights // (batch_size * kv_bytes_per_token(cfg, dtype)))  # ceiling division


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
    return Roofs(tr("this CPU ({n} thread(s), float32)", n=torch.get_num_threads()), flops, bandwidth,
                 tr("measured: a square float32 matmul and a sum over a large buffer"))


@torch.inference_mode()
def decode_time_vs_context(model, context_lens, repeats: int = 9, *, steps_per_sample: int = 3, warmup: int = 1,
                           batch_size: int = 1, seed: int = 0, chunk: int = 1024) -> dict:
    """Seconds of one decode step (``generate``'s flat step) after T cached tokens, for long contexts.

    No prefill: one ``StaticKVCache`` of ``max(T) + 1`` positions is filled through ``cache.update``
    with random K/V (one random block of ``chunk`` positions, repeated: a step's time does not depend
    on the values). Each round visits every T from the longest down (``crop(T)``, then
    ``steps_per_sample`` steps, each cropped back to T), then fills the cache again, so the lengths
    are interleaved: a burst of load on a shared machine slows one sample of each T, not all of one.
    Returns ``{"T": [...], "step": [Stats, ...]}``, seconds per step.
    """
    Ts = check_lengths(model, context_lens, extra=1)
    for name, value in (("repeats", repeats), ("steps_per_sample", steps_per_sample), ("chunk", chunk)):
        check_int(name, value)
    check_int("warmup", warmup, minimum=0)
    cfg, dtype = model.cfg, model.lm_head.weight.dtype
    cache = StaticKVCache(cfg, batch_size, max(Ts) + 1, dtype=dtype)
    g = torch.Generator().manual_seed(seed)
    k, v = (torch.randn(batch_size, cfg.n_kv_heads, chunk, cfg.head_dim, generator=g, dtype=dtype)
            for _ in range(2))  # (B, H_kv, chunk, d_h)

    def fill(n: int) -> None:
        while cache.seq_len < n:
            m = min(chunk, n - cache.seq_len)
            for layer in range(cfg.n_layers):
                cache.update(layer, k[:, :, :m], v[:, :, :m])

    step = decode_stepper(model, cache)
    token = random_ids(cfg.vocab_size, 1, batch_size, seed)[:, 0]  # (B,)
    samples: dict[int, list[float]] = {T: [] for T in Ts}
    for r in range(warmup + repeats):
        fill(max(Ts))
        for T in sorted(Ts, reverse=True):
            cache.crop(T)
            t0 = time.perf_counter()
            for _ in range(steps_per_sample):
                step(token)  # reads T cached positions, writes one
                cache.crop(T)
            if r >= warmup:
                samples[T].append((time.perf_counter() - t0) / steps_per_sample)
    return {"T": Ts, "step": [Stats(samples[T]) for T in Ts]}


def fit_step_time(measured: dict) -> tuple[float, float]:
    """Least-squares line through ``decode_time_vs_context``'s medians: ``(fixed_s, per_token_s)``,
    the seconds a step takes at T = 0 (the weights' part) and what each cached token adds."""
    per_token, fixed = np.polyfit(np.asarray(measured["T"], dtype=float),
                                  [s.median for s in measured["step"]], 1)
    return float(fixed), float(per_token)
