"""Performance of the engine, measured: every timing helper the notebooks and ``python -m utils.bench`` use.

The metrics, for a request of B rows that each produce n new tokens:

    TTFT        time to first token: in generate prefill + one sample (a server adds queueing, scheduling)
    TPOT        time per output token: one request's mean gap after its first token (ITL: each single gap)
    latency     end to end: TTFT + (n - 1) x TPOT
    throughput  new tokens per second, all rows together: B x n / latency;  while decoding: B / TPOT
    KV memory   2 x L x B x H_kv x T x d_h x bytes per element

Requests that arrive over time and are served one at a time or in batches: ``utils.arrivals``.

Timing on a shared CPU is noisy, so every comparison is measured **interleaved** (``time_interleaved``):
each round runs every variant once (A B C, A B C, ...) after a warm-up, so a burst of load from another
process slows one sample of each variant instead of every sample of one. Results are ``Stats``: the raw
samples with median and quartiles. Ratios are taken within one run, where both sides saw the same machine.
"""
from __future__ import annotations

import contextlib
import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import torch

from .cache import StaticKVCache
from .config import ModelConfig
from .flops import decode_step_cost
from .generate import decode_stepper, generate, make_cache, prefill
from .model import Decoder
from .validate import CACHE_KINDS, check_choice, check_int

# Model shapes the benchmark and the notebooks measure. d_ff follows Llama's ~8/3 x C rule.
BENCH_CONFIGS: dict[str, ModelConfig] = {
    # the benchmark's cases 1-3: small enough that per-step overhead matters, big enough to compute
    "small": ModelConfig(vocab_size=512, n_layers=4, n_heads=8, n_kv_heads=2, d_model=256, d_ff=688, max_seq_len=1280),
    # the benchmark's case 4: ~100 M parameters, 0.4 GB of float32 weights, more than CPU caches hold
    "100M": ModelConfig(vocab_size=16000, n_layers=12, n_heads=12, n_kv_heads=4, d_model=768, d_ff=2048,
                        max_seq_len=1024),
    # notebook 06's memory-bound example: ~50 M parameters, 0.2 GB, quick to build
    "50M": ModelConfig(vocab_size=16000, n_layers=4, n_heads=12, n_kv_heads=4, d_model=768, d_ff=2048,
                       max_seq_len=1024),
    # the quick mode of the benchmark and its test: seconds, not minutes
    "tiny": ModelConfig(vocab_size=128, n_layers=2, n_heads=4, n_kv_heads=2, d_model=64, d_ff=172, max_seq_len=160),
}


def metrics(ttft_s: float, tpot_s: float, n_tokens: int, batch_size: int = 1) -> dict:
    """The request-level numbers that follow from TTFT and TPOT (seconds) for n new tokens per row.

    ``latency_s`` = TTFT + (n - 1) x TPOT (end to end, what one request waits in total);
    ``throughput`` = B x n / latency (new tokens per second, all rows);
    ``decode_throughput`` = B / TPOT (the rate while decoding, once the prefill is done).
    """
    check_int("n_tokens", n_tokens)
    check_int("batch_size", batch_size)
    if not ttft_s > 0 or not tpot_s > 0:
        raise ValueError(f"ttft_s and tpot_s must be > 0, got {ttft_s!r} and {tpot_s!r}")
    latency = ttft_s + (n_tokens - 1) * tpot_s
    return {"ttft_s": ttft_s, "tpot_s": tpot_s, "latency_s": latency,
            "throughput": batch_size * n_tokens / latency, "decode_throughput": batch_size / tpot_s}


# --- the timing loop and its samples -------------------------------------------------------------

@dataclass
class Stats:
    """Samples of one measured quantity (seconds, or a ratio) with median and spread."""

    samples: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def quantile(self, q: float) -> float:
        """Linear-interpolated quantile ``q`` in [0, 1] of the samples."""
        xs = sorted(self.samples)
        pos = q * (len(xs) - 1)
        lo, hi = math.floor(pos), math.ceil(pos)
        return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)

    @property
    def q1(self) -> float:
        return self.quantile(0.25)

    @property
    def q3(self) -> float:
        return self.quantile(0.75)

    @property
    def spread(self) -> float:
        """Interquartile range relative to the median (0.1 = the middle half lies within 10 %)."""
        return (self.q3 - self.q1) / self.median if self.median else 0.0

    def map(self, f: Callable[[float], float]) -> "Stats":
        """The same samples through ``f`` (e.g. seconds -> tokens per second)."""
        return Stats([f(x) for x in self.samples])

    def as_dict(self) -> dict:
        return {"median": self.median, "q1": self.q1, "q3": self.q3, "min": min(self.samples),
                "max": max(self.samples), "n": len(self.samples)}


def paired_ratio(a: Stats, b: Stats) -> Stats:
    """Round-by-round ``a / b`` of two interleaved measurements (sample i of each ran back to back)."""
    if len(a.samples) != len(b.samples):
        raise ValueError(f"paired samples need equal counts, got {len(a.samples)} and {len(b.samples)}")
    return Stats([x / y for x, y in zip(a.samples, b.samples)])


def time_interleaved(
    fns: Mapping[object, Callable[[], object]], repeats: int = 5, warmup: int = 1, progress=None
) -> dict[object, Stats]:
    """Wall-clock seconds of each function, ``repeats`` rounds of A B C ... after ``warmup`` rounds.

    The first calls pay for memory allocation and kernel selection, hence the warm-up.
    ``progress``: an optional tqdm-like bar, advanced by one per round.
    """
    check_int("repeats", repeats)
    check_int("warmup", warmup, minimum=0)
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    out = {name: Stats() for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            out[name].samples.append(time.perf_counter() - t0)
        if progress is not None:
            progress.update(1)
    return out


@contextlib.contextmanager
def torch_threads(n: int | None):
    """Run the block with ``n`` CPU threads for torch (None: leave the setting alone), then restore it.

    On a machine shared with other busy processes, one thread gives much steadier timings than
    several threads fighting for the same cores; on an idle laptop, more threads are faster.
    """
    if n is None:
        yield
        return
    check_int("threads", n)
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


# --- models and prompts ----------------------------------------------------------------------

def random_model(cfg: ModelConfig | str, seed: int = 0) -> Decoder:
    """A seeded, randomly initialised ``Decoder`` in eval mode (``cfg`` or a ``BENCH_CONFIGS`` name)."""
    if isinstance(cfg, str):
        check_choice("cfg", cfg, sorted(BENCH_CONFIGS))
        cfg = BENCH_CONFIGS[cfg]
    torch.manual_seed(seed)
    return Decoder(cfg).eval()


def random_ids(vocab_size: int, T: int, batch_size: int = 1, seed: int = 0) -> torch.Tensor:
    """Seeded random token ids ``[B, T]`` (speed does not depend on which tokens they are)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab_size, (batch_size, T), generator=g)  # (B, T)


def check_lengths(model, lengths: Sequence[int], extra: int = 0) -> list[int]:
    """``lengths`` as ints >= 1 that leave room for ``extra`` more positions within max_seq_len."""
    Ts = [int(T) for T in lengths]
    if not Ts or min(Ts) < 1:
        raise ValueError(f"lengths must be non-empty and >= 1, got {list(lengths)!r}")
    if max(Ts) + extra > model.cfg.max_seq_len:
        raise ValueError(f"{max(Ts)} + {extra} positions exceed the model's max_seq_len={model.cfg.max_seq_len}")
    return Ts


def repeated_step(model, ids: torch.Tensor, T: int, cache, step: str = "flat", n: int = 1) -> Callable[[], None]:
    """Prefill ``cache`` with ``ids[:, :T]`` (not timed); return a function that runs ``n`` decode
    steps (``decode_stepper(model, cache, step=step)``, what ``generate`` runs) of token ``ids[:, T]``,
    each cropped back to T positions afterwards, so that every step is the same step."""
    prefill(model, ids[:, :T], cache=cache)
    one_step = decode_stepper(model, cache, step=step)

    def steps() -> None:
        for _ in range(n):
            one_step(ids[:, T])  # reads T cached positions, writes one
            cache.crop(T)

    return steps


# --- TTFT against prompt length, TPOT against context length --------------------------------------

def ttft_vs_prompt_length(
    model, prompt_lens: Sequence[int], repeats: int = 5, *, no_cache: bool = True, cache_kind: str = "static",
    batch_size: int = 1, warmup: int = 1, seed: int = 0, progress=None,
) -> dict:
    """TTFT (``generate`` of one token: cache and step setup + prefill + sample) per prompt length T, with and without the cache.

    Returns ``{"T": [...], "cached": [Stats...], "no_cache": [Stats...] or None}``. The two should
    agree: the first token needs the whole prompt either way; the cache only pays off afterwards.
    """
    Ts = check_lengths(model, prompt_lens)
    ids = random_ids(model.cfg.vocab_size, max(Ts), batch_size, seed)  # (B, T_max)
    fns = {}
    for T in Ts:
        fns[("cached", T)] = lambda T=T: generate(model, ids[:, :T], 1, cache_kind=cache_kind)
        if no_cache:
            fns[("no_cache", T)] = lambda T=T: generate(model, ids[:, :T], 1, use_cache=False)
    stats = time_interleaved(fns, repeats, warmup, progress)
    return {"T": Ts, "cached": [stats[("cached", T)] for T in Ts],
            "no_cache": [stats[("no_cache", T)] for T in Ts] if no_cache else None}


def tpot_vs_context(
    model, context_lens: Sequence[int], repeats: int = 5, *, no_cache: bool = True, no_cache_max: int | None = None,
    batch_size: int = 1, cache_kind: str = "static", step: str = "flat", steps_per_sample: int = 8,
    warmup: int = 1, seed: int = 0, progress=None,
) -> dict:
    """Seconds of one decode step with T tokens of context, per T, with the cache and without.

    With the cache: ``repeated_step`` on a cache holding T positions (``cache_kind="static"``: a
    ``StaticKVCache``; ``"dynamic"``: a ``KVCache``). A sample is the mean of ``steps_per_sample``
    steps in a row, as in a real generation loop (a lone step right after a long forward pass of
    another variant would find the CPU caches cold). Without the cache: one forward pass over all
    T + 1 tokens, what every step of a loop without a cache does; skipped (None) above ``no_cache_max``.
    Returns ``{"T": [...], "cached": [Stats...], "no_cache": [Stats or None...] or None}``.
    """
    check_choice("cache_kind", cache_kind, CACHE_KINDS)  # before any cache is made
    check_int("steps_per_sample", steps_per_sample)
    Ts = check_lengths(model, context_lens, extra=1)
    ids = random_ids(model.cfg.vocab_size, max(Ts) + 1, batch_size, seed)  # (B, T_max + 1)
    dtype = model.lm_head.weight.dtype
    fns = {}
    for T in Ts:
        kv = make_cache(cache_kind, model.cfg, batch_size, T + 1, dtype=dtype)
        fns[("cached", T)] = repeated_step(model, ids, T, kv, step, steps_per_sample)
        if no_cache and (no_cache_max is None or T <= no_cache_max):
            def full(T=T):
                with torch.inference_mode():
                    return model(ids[:, : T + 1])[:, -1]  # (B, V): every position recomputed
            fns[("no_cache", T)] = full
    stats = time_interleaved(fns, repeats, warmup, progress)
    return {"T": Ts, "cached": [stats[("cached", T)].map(lambda s: s / steps_per_sample) for T in Ts],
            "no_cache": [stats.get(("no_cache", T)) for T in Ts] if no_cache else None}


# --- batch-1 decode against the memory bandwidth --------------------------------------------------

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
    memory, compute = total / bandwidth_Bps, cost.total_flops / peak_flops if peak_flops else 0.0
    tpot = max(memory, compute)
    return {**b, "total": total, "bytes_per_token": total / batch_size, "flops": cost.total_flops,
            "memory_s": memory, "compute_s": compute, "tpot_min_s": tpot, "max_tokens_per_s": batch_size / tpot,
            "bound_by": "compute" if compute > memory else "memory"}


def decode_vs_bandwidth(
    model, context_len: int = 256, repeats: int = 10, *, n_bytes: int = 512 * 2**20, step: str = "flat",
    warmup: int = 1, seed: int = 0, progress=None,
) -> dict:
    """Batch-1 decode step against the machine's memory bandwidth, measured interleaved.

    Batch-1 decode multiplies one vector by every weight matrix: each weight is read once and used
    for two flops only, so the step cannot be faster than (bytes to read) / (memory bandwidth),
    measured here on a float32 buffer of ``n_bytes`` (far larger than the CPU caches) by a copy
    (read + write) and a sum (read). Returns the step time, its bytes, the bandwidth it achieves,
    the copy/read bandwidth, and ``fraction`` = achieved / the higher of the two.
    """
    (T,) = check_lengths(model, [context_len], extra=1)
    cfg = model.cfg
    ids = random_ids(cfg.vocab_size, T + 1, seed=seed)  # (1, T + 1)
    decode = repeated_step(model, ids, T, StaticKVCache(cfg, 1, T + 1, dtype=model.lm_head.weight.dtype), step)
    n = n_bytes // 4
    src, dst = torch.ones(n), torch.zeros(n)  # first touch: the pages exist before we time anything
    fns = {"step": decode, "copy": lambda: dst.copy_(src), "read": src.sum}
    stats = time_interleaved(fns, repeats, warmup, progress)
    nbytes = decode_bytes_per_token(cfg, T, model.lm_head.weight.dtype)
    achieved = stats["step"].map(lambda s: nbytes["total"] / s)
    copy_bps = stats["copy"].map(lambda s: 2 * 4 * n / s)
    read_bps = stats["read"].map(lambda s: 4 * n / s)
    limit = max(copy_bps.median, read_bps.median)
    return {"context_len": T, "n_params": cfg.n_params, "bytes": nbytes, "step_s": stats["step"],
            "achieved_Bps": achieved, "copy_Bps": copy_bps, "read_Bps": read_bps, "limit_Bps": limit,
            "fraction": achieved.median / limit, "bound_s": nbytes["total"] / limit}


# --- batching: throughput against latency ---------------------------------------------------------

def batch_sweep(
    model, batch_sizes: Sequence[int], prompt_len: int = 32, new_tokens: int = 16, repeats: int = 3, *,
    cache_kind: str = "static", warmup: int = 1, seed: int = 0, progress=None,
) -> dict:
    """``generate`` with B identical-length prompts per B: TTFT, TPOT, latency and throughput, medians.

    Returns lists aligned with ``batch_sizes``: ``ttft_s``, ``tpot_s``, ``latency_s`` (one request, end
    to end), ``throughput`` (B x n / latency, tokens/s) and ``decode_throughput`` (B / TPOT).
    """
    Bs = [int(B) for B in batch_sizes]
    check_lengths(model, [prompt_len], extra=new_tokens)
    ids = random_ids(model.cfg.vocab_size, prompt_len, max(Bs), seed)  # (B_max, T)
    runs: dict[int, list] = {B: [] for B in Bs}
    fns = {B: (lambda B=B: runs[B].append(generate(model, ids[:B], new_tokens, cache_kind=cache_kind))) for B in Bs}
    time_interleaved(fns, repeats, warmup, progress)
    med = {key: [statistics.median(getattr(r, key) for r in runs[B][warmup:]) for B in Bs]
           for key in ("ttft_s", "tpot_s", "total_s")}  # the warm-up rounds are not measured
    return {"B": Bs, "ttft_s": med["ttft_s"], "tpot_s": med["tpot_s"], "latency_s": med["total_s"],
            "throughput": [B * new_tokens / t for B, t in zip(Bs, med["total_s"])],
            "decode_throughput": [B / t for B, t in zip(Bs, med["tpot_s"])]}
