"""The engine measured: every timer the notebooks and ``python -m utils.bench`` run.

The metrics, for a request of B rows that each produce n new tokens:

    TTFT        time to first token: in generate prefill + one sample (a server adds queueing, scheduling)
    TPOT        time per output token: one request's mean gap after its first token (ITL: each single gap)
    latency     end to end: TTFT + (n - 1) x TPOT
    throughput  new tokens per second, all rows together: B x n / latency;  while decoding: B / TPOT
    KV memory   2 x L x B x H_kv x T x d_h x bytes per element

Requests that arrive over time and are served one at a time or in batches: ``utils.serving``.

Every timer here measures interleaved (``stats.time_interleaved``) and returns ``Stats``. What the
measurements are compared with, the roofline's arithmetic (bytes, FLOPs, the bound on a step), is
``utils.roofline``; nothing there runs a clock.
"""
from __future__ import annotations

import statistics
import time
from typing import Callable, Sequence

import numpy as np
import torch

from ..cache import StaticKVCache
from ..config import ModelConfig
from ..generate import decode_stepper, generate, make_cache, prefill
from ..i18n import tr
from ..model import Decoder
from ..roofline import Roofs, decode_bytes_per_token
from ..validate import CACHE_KINDS, check_choice, check_int
from .stats import Stats, time_interleaved


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


# --- this machine's roofs, and decode against long contexts ---------------------------------------

def _median_time(fn, repeats: int, fastest: bool = False) -> float:
    """The median of ``repeats`` timings of ``fn`` after a warm-up (``fastest``: the shortest one)."""
    fn()  # warm-up: first touch of the pages, kernel selection
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) if fastest else sorted(times)[len(times) // 2]


def measure_machine(matmul_n: int = 1024, n_bytes: int = 128 * 2**20, repeats: int = 5, *,
                    fastest: bool = False) -> Roofs:
    """This machine's roofs with the current torch threads, float32: a square matmul's FLOP/s and
    the read bandwidth of summing a buffer far larger than the CPU caches (``n_bytes``).

    Each roof comes from the median of ``repeats`` timings, or with ``fastest=True`` from the fastest
    one: the timing least disturbed by other work on a shared machine, to compare with the fastest
    samples of other measurements. ``source`` is kept in English (``cited_source`` shows it translated).
    """
    check_int("matmul_n", matmul_n, minimum=64)
    check_int("n_bytes", n_bytes, minimum=2**20)
    a = torch.randn(matmul_n, matmul_n, generator=torch.Generator().manual_seed(0))
    b = torch.randn(matmul_n, matmul_n, generator=torch.Generator().manual_seed(1))
    flops = 2 * matmul_n**3 / _median_time(lambda: a @ b, repeats, fastest)
    buf = torch.ones(n_bytes // 4)
    bandwidth = n_bytes / _median_time(buf.sum, repeats, fastest)
    return Roofs(tr("this CPU ({n} thread(s), float32)", n=torch.get_num_threads()), flops, bandwidth,
                 "measured (a square float32 matmul and a sum over a large buffer)")


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


def fit_step_time(measured: dict, through: str = "median") -> tuple[float, float]:
    """Least-squares line through ``decode_time_vs_context``'s medians (``through="fastest"``: through
    each T's fastest sample, the one least disturbed by other work): ``(fixed_s, per_token_s)``, the
    seconds a step takes at T = 0 (the weights' part and per-step overhead) and what each cached token adds."""
    check_choice("through", through, ("median", "fastest"))
    times = [s.median if through == "median" else min(s.samples) for s in measured["step"]]
    per_token, fixed = np.polyfit(np.asarray(measured["T"], dtype=float), times, 1)
    return float(fixed), float(per_token)
