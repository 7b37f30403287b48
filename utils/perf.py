"""Performance of the engine, measured: what ``python -m utils.bench`` prints and notebooks 06 and 08 plot.

The metrics, for a request of B rows that each produce n new tokens:

    TTFT        time to first token: from the call until the first new token exists (prefill + one sample)
    TPOT        time per output token after the first: the mean decode step (inter-token latency)
    latency     end to end: TTFT + (n - 1) x TPOT
    throughput  new tokens per second, all rows together: B x n / latency;  while decoding: B / TPOT
    KV memory   2 x L x B x H_kv x T x d_h x bytes per element

Timing on a shared CPU is noisy, so every comparison here is measured **interleaved**: each round
runs every variant once (A B C, A B C, ...) after a warm-up, so a burst of load from another
process slows one sample of each variant instead of every sample of one. Results are ``Stats``:
the raw samples with their median and quartiles. Ratios are taken within one run, where both
sides saw the same machine.
"""
from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import torch

from .cache import KVCache, StaticKVCache
from .config import ModelConfig
from .flops import decode_step_cost
from .generate import decode_step, decode_stepper, generate, prefill
from .model import Decoder
from .timing import random_prompt

# Model shapes the benchmark and the notebooks measure. d_ff follows Llama's ~8/3 x C rule.
BENCH_CONFIGS: dict[str, ModelConfig] = {
    # issue 6, cases 1-3: small enough that per-step overhead matters, big enough to compute
    "small": ModelConfig(vocab_size=512, n_layers=4, n_heads=8, n_kv_heads=2, d_model=256, d_ff=688,
                         max_seq_len=1280),
    # issue 6, case 4: ~100 M parameters, 0.4 GB of float32 weights, more than CPU caches hold
    "100M": ModelConfig(vocab_size=16000, n_layers=12, n_heads=12, n_kv_heads=4, d_model=768, d_ff=2048,
                        max_seq_len=1024),
    # notebook 06's memory-bound example: ~50 M parameters, 0.2 GB, quick to build
    "50M": ModelConfig(vocab_size=16000, n_layers=4, n_heads=12, n_kv_heads=4, d_model=768, d_ff=2048,
                       max_seq_len=1024),
    # the quick mode of the benchmark and its test: seconds, not minutes
    "tiny": ModelConfig(vocab_size=128, n_layers=2, n_heads=4, n_kv_heads=2, d_model=64, d_ff=172,
                        max_seq_len=160),
}


# --- the definitions, as functions ------------------------------------------------------------

def metrics(ttft_s: float, tpot_s: float, n_tokens: int, batch_size: int = 1) -> dict:
    """The request-level numbers that follow from TTFT and TPOT (seconds) for n new tokens per row.

    ``latency_s`` = TTFT + (n - 1) x TPOT (end to end, what one request waits in total);
    ``throughput`` = B x n / latency (new tokens per second, all rows);
    ``decode_throughput`` = B / TPOT (the rate while decoding, once the prefill is done).
    """
    if isinstance(n_tokens, bool) or not isinstance(n_tokens, int) or n_tokens < 1:
        raise ValueError(f"n_tokens must be an int >= 1, got {n_tokens!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
    if not ttft_s > 0 or not tpot_s > 0:
        raise ValueError(f"ttft_s and tpot_s must be > 0, got {ttft_s!r} and {tpot_s!r}")
    latency = ttft_s + (n_tokens - 1) * tpot_s
    return {"ttft_s": ttft_s, "tpot_s": tpot_s, "latency_s": latency,
            "throughput": batch_size * n_tokens / latency, "decode_throughput": batch_size / tpot_s}


# --- samples and their summary ----------------------------------------------------------------

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
    fns: Mapping[str, Callable[[], object]], repeats: int = 5, warmup: int = 1, progress=None
) -> dict[str, Stats]:
    """Wall-clock seconds of each function, ``repeats`` rounds of A B C ... after ``warmup`` rounds.

    ``progress``: an optional tqdm-like bar, advanced by one per round.
    """
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an int >= 1, got {repeats!r}")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be an int >= 0, got {warmup!r}")
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


# --- models and prompts ----------------------------------------------------------------------

def random_model(cfg: ModelConfig | str, seed: int = 0) -> Decoder:
    """A seeded, randomly initialised ``Decoder`` in eval mode (``cfg`` or a ``BENCH_CONFIGS`` name)."""
    if isinstance(cfg, str):
        if cfg not in BENCH_CONFIGS:
            raise ValueError(f"unknown config {cfg!r}; choose one of {sorted(BENCH_CONFIGS)}")
        cfg = BENCH_CONFIGS[cfg]
    torch.manual_seed(seed)
    return Decoder(cfg).eval()


# Seeded random token ids [B, T]: the same helper notebooks 00/02 time with (speed does not
# depend on which tokens they are).
random_ids = random_prompt


def _check_fits(model, n_positions: int) -> None:
    if n_positions > model.cfg.max_seq_len:
        raise ValueError(f"{n_positions} positions exceed the model's max_seq_len={model.cfg.max_seq_len}")


# --- case 1: cached decode against full recompute -----------------------------------------------

def cache_vs_recompute(
    model, prompt_len: int = 256, new_tokens: int = 128, repeats: int = 3, *, cache: str = "static",
    warmup: int = 1, seed: int = 0, progress=None,
) -> dict:
    """``generate`` with the cache and without it (every step re-runs the whole sequence), interleaved.

    Returns, per variant, the end-to-end seconds, TTFT and TPOT (``Stats``), and the speedups
    of the cache on decode (1 / TPOT) and end to end.
    """
    _check_fits(model, prompt_len + new_tokens)
    ids = random_ids(model.cfg.vocab_size, prompt_len, seed=seed)  # (1, T)
    runs = {"cached": [], "recompute": []}
    options = {"cached": dict(use_cache=True, cache=cache), "recompute": dict(use_cache=False)}

    def runner(name):
        return lambda: runs[name].append(generate(model, ids, new_tokens, **options[name]))

    total = time_interleaved({n: runner(n) for n in runs}, repeats, warmup, progress)
    out = {}
    for name, results in runs.items():
        results = results[warmup:]  # the warm-up rounds are not measured
        out[name] = {"total_s": total[name], "ttft_s": Stats([r.ttft_s for r in results]),
                     "tpot_s": Stats([r.tpot_s for r in results])}
    for name in runs:
        out[name]["decode_tok_s"] = out[name]["tpot_s"].map(lambda s: 1 / s)
        out[name]["e2e_tok_s"] = out[name]["total_s"].map(lambda s: new_tokens / s)
    out["speedup_decode"] = paired_ratio(out["recompute"]["tpot_s"], out["cached"]["tpot_s"])
    out["speedup_e2e"] = paired_ratio(out["recompute"]["total_s"], out["cached"]["total_s"])
    out["same_tokens"] = all(torch.equal(a.tokens, b.tokens) for a, b in zip(runs["cached"], runs["recompute"]))
    return out


# --- case 2: our generate against transformers' ---------------------------------------------------

def hf_twin(cfg: ModelConfig, seed: int = 0):
    """A random ``transformers`` ``LlamaForCausalLM`` of shape ``cfg`` and our ``Decoder`` with its weights."""
    import transformers
    from transformers import LlamaConfig, LlamaForCausalLM

    from .hf import from_hf

    kw = dict(vocab_size=cfg.vocab_size, hidden_size=cfg.d_model, intermediate_size=cfg.d_ff,
              num_hidden_layers=cfg.n_layers, num_attention_heads=cfg.n_heads,
              num_key_value_heads=cfg.n_kv_heads, head_dim=cfg.head_dim,
              max_position_embeddings=cfg.max_seq_len, rms_norm_eps=cfg.norm_eps,
              tie_word_embeddings=cfg.tie_embeddings)
    if int(transformers.__version__.split(".")[0]) >= 5:
        kw["rope_parameters"] = {"rope_type": "default", "rope_theta": cfg.rope_theta}
    else:
        kw["rope_theta"] = cfg.rope_theta
    torch.manual_seed(seed)
    hf = LlamaForCausalLM(LlamaConfig(**kw)).eval()
    # No EOS: both sides must produce exactly the requested number of tokens.
    hf.generation_config.eos_token_id = None
    hf.generation_config.pad_token_id = 0
    return hf, from_hf(hf)


def hf_generate(hf_model, ids: torch.Tensor, new_tokens: int) -> torch.Tensor:
    """Greedy ``LlamaForCausalLM.generate``; returns the new tokens ``[B, new_tokens]``.

    The all-ones ``attention_mask`` matters: without it transformers guesses one from
    ``pad_token_id`` and hides every prompt token that happens to equal it.
    """
    with torch.inference_mode():
        out = hf_model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new_tokens,
                                do_sample=False, eos_token_id=None, pad_token_id=0)
    return out[:, ids.shape[1]:]  # (B, new_tokens)


def ours_vs_transformers(
    cfg: ModelConfig | str = "small", prompt_len: int = 256, new_tokens: int = 128, repeats: int = 5, *,
    warmup: int = 1, seed: int = 0, progress=None,
) -> dict:
    """Our ``generate`` (static and dynamic cache) against transformers' on identical weights, greedy.

    Every round also runs ours (static) and theirs for one token only: that is each side's TTFT,
    and (median total - median TTFT) / (n - 1) its TPOT. Returns end-to-end seconds per variant, the speedups
    (end to end and decode only), and whether all three produced the same tokens
    (``first_difference``: the first new token where ours and theirs differ, or None).
    """
    import logging
    import warnings

    if isinstance(cfg, str):
        cfg = BENCH_CONFIGS[cfg]
    hf, ours = hf_twin(cfg, seed)
    ids = random_ids(cfg.vocab_size, prompt_len, seed=seed)  # (1, T)
    tokens = {}

    def keep(name, run):  # time run(), remember the tokens it produced
        return lambda: tokens.__setitem__(name, run())

    fns = {
        "ours_static": keep("ours_static", lambda: generate(ours, ids, new_tokens, cache="static").tokens),
        "ours_dynamic": keep("ours_dynamic", lambda: generate(ours, ids, new_tokens).tokens),
        "transformers": keep("transformers", lambda: hf_generate(hf, ids, new_tokens)),
        "ours_static_ttft": lambda: generate(ours, ids, 1, cache="static"),
        "transformers_ttft": lambda: hf_generate(hf, ids, 1),
    }
    logger = logging.getLogger("transformers")
    level = logger.level
    logger.setLevel(logging.ERROR)  # generation-config chatter, once per call
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            total = time_interleaved(fns, repeats, warmup, progress)
    finally:
        logger.setLevel(level)
    a, b = tokens["ours_static"], tokens["transformers"]
    diff = (a != b).any(0).nonzero().flatten() if a.shape == b.shape else torch.tensor([0])
    out = {name: {"total_s": total[name], "e2e_tok_s": total[name].map(lambda x: new_tokens / x)}
           for name in ("ours_static", "ours_dynamic", "transformers")}
    for name in ("ours_static", "transformers"):
        out[name]["ttft_s"] = total[name + "_ttft"]
        # from the medians: a difference of single samples would carry both samples' noise
        out[name]["tpot_s"] = (total[name].median - total[name + "_ttft"].median) / max(new_tokens - 1, 1)
    out["speedup_static"] = paired_ratio(total["transformers"], total["ours_static"])
    out["speedup_dynamic"] = paired_ratio(total["transformers"], total["ours_dynamic"])
    out["speedup_decode"] = out["transformers"]["tpot_s"] / out["ours_static"]["tpot_s"]
    # Noise only ever adds time, so the fastest rounds are the least disturbed: a second estimate.
    out["speedup_static_fastest"] = min(total["transformers"].samples) / min(total["ours_static"].samples)
    out["static_over_dynamic"] = paired_ratio(total["ours_dynamic"], total["ours_static"])
    out["same_tokens"] = bool(diff.numel() == 0 and torch.equal(a, tokens["ours_dynamic"]))
    out["first_difference"] = None if diff.numel() == 0 else int(diff[0])
    out["n_params"] = cfg.n_params
    return out


def modules_vs_flat(
    model, context_len: int = 256, repeats: int = 5, *, steps_per_sample: int = 8, warmup: int = 1, seed: int = 0,
    progress=None,
) -> dict:
    """One batch-1 decode step two ways, interleaved: through the modules (``decode_step``) and
    flat (``decode_stepper``, what ``generate`` runs). Same kernels, same numbers; the difference
    is the Python around them. Returns ``{"modules": Stats, "flat": Stats, "speedup": Stats}``
    (seconds per step; speedup = modules / flat, paired round by round).
    """
    _check_fits(model, context_len + 1)
    ids = random_ids(model.cfg.vocab_size, context_len + 1, seed=seed)  # (1, T + 1)
    dtype = model.lm_head.weight.dtype
    caches = {name: StaticKVCache(model.cfg, 1, context_len + 1, dtype=dtype) for name in ("modules", "flat")}
    for kv in caches.values():
        prefill(model, ids[:, :context_len], cache=kv)
    flat_step = decode_stepper(model, caches["flat"])

    def run(step, kv):
        def steps():
            for _ in range(steps_per_sample):
                step(ids[:, context_len])
                kv.crop(context_len)  # back to T: every step is the same step
        return steps

    fns = {"modules": run(lambda t: decode_step(model, t, caches["modules"]), caches["modules"]),
           "flat": run(flat_step, caches["flat"])}
    stats = time_interleaved(fns, repeats, warmup, progress)
    out = {name: stats[name].map(lambda x: x / steps_per_sample) for name in fns}
    out["speedup"] = paired_ratio(stats["modules"], stats["flat"])
    out["context_len"] = context_len
    return out


# --- case 3: TTFT against prompt length, TPOT against context length ----------------------------

def ttft_vs_prompt_length(
    model, prompt_lens: Sequence[int], repeats: int = 5, *, no_cache: bool = True, cache: str = "static",
    batch_size: int = 1, warmup: int = 1, seed: int = 0, progress=None,
) -> dict:
    """TTFT (``generate`` of one token: prefill + sample) per prompt length T, with and without the cache.

    Returns ``{"T": [...], "cached": [Stats...], "no_cache": [Stats...] or None}``. The two should
    agree: the first token needs the whole prompt either way; the cache only pays off afterwards.
    """
    Ts = [int(T) for T in prompt_lens]
    _check_fits(model, max(Ts))
    ids = random_ids(model.cfg.vocab_size, max(Ts), batch_size, seed)  # (B, T_max)
    fns = {}
    for T in Ts:
        fns[("cached", T)] = lambda T=T: generate(model, ids[:, :T], 1, cache=cache)
        if no_cache:
            fns[("no_cache", T)] = lambda T=T: generate(model, ids[:, :T], 1, use_cache=False)
    stats = time_interleaved(fns, repeats, warmup, progress)
    return {"T": Ts, "cached": [stats[("cached", T)] for T in Ts],
            "no_cache": [stats[("no_cache", T)] for T in Ts] if no_cache else None}


def tpot_vs_context(
    model, context_lens: Sequence[int], repeats: int = 5, *, no_cache: bool = True, batch_size: int = 1,
    cache: str = "static", steps_per_sample: int = 8, warmup: int = 1, seed: int = 0, progress=None,
) -> dict:
    """Seconds of one decode step with T tokens of context, per T, with the cache and without.

    With the cache: the decode step ``generate`` runs (``decode_stepper``) of one new token
    against a cache holding T positions
    (``cache="static"``: a ``StaticKVCache``; ``"dynamic"``: a ``KVCache``), cropped back to T
    after each step, so every step is the same one. A sample is the mean of ``steps_per_sample``
    such steps in a row, as in a real generation loop (a lone step right after a long forward pass
    of another variant would find the CPU caches cold). Without the cache: one forward pass over
    all T + 1 tokens, which is what every step of a loop without a cache does.
    Returns ``{"T": [...], "cached": [Stats...], "no_cache": [Stats...] or None}``.
    """
    if cache not in ("static", "dynamic"):
        raise ValueError(f"cache={cache!r}; choose 'static' or 'dynamic'")
    if isinstance(steps_per_sample, bool) or not isinstance(steps_per_sample, int) or steps_per_sample < 1:
        raise ValueError(f"steps_per_sample must be an int >= 1, got {steps_per_sample!r}")
    Ts = [int(T) for T in context_lens]
    _check_fits(model, max(Ts) + 1)
    ids = random_ids(model.cfg.vocab_size, max(Ts) + 1, batch_size, seed)  # (B, T_max + 1)
    dtype = model.lm_head.weight.dtype
    fns = {}
    for T in Ts:
        kv = StaticKVCache(model.cfg, batch_size, T + 1, dtype=dtype) if cache == "static" else KVCache()
        prefill(model, ids[:, :T], cache=kv)  # T positions cached (not timed)

        def steps(kv=kv, T=T, step=decode_stepper(model, kv)):  # generate's step
            for _ in range(steps_per_sample):
                step(ids[:, T])  # reads T cached positions, writes one
                kv.crop(T)  # back to T: every step is the same step

        fns[("cached", T)] = steps
        if no_cache:
            def full(T=T):
                with torch.inference_mode():
                    return model(ids[:, : T + 1])[:, -1]  # (B, V): every position recomputed
            fns[("no_cache", T)] = full
    stats = time_interleaved(fns, repeats, warmup, progress)
    return {"T": Ts, "cached": [stats[("cached", T)].map(lambda s: s / steps_per_sample) for T in Ts],
            "no_cache": [stats[("no_cache", T)] for T in Ts] if no_cache else None}


# --- case 4: batch-1 decode against the memory bandwidth -----------------------------------------

def decode_bytes_per_token(cfg: ModelConfig, context_len: int, dtype: torch.dtype | str = "float32") -> dict:
    """Bytes one batch-1 decode step must move: every weight once, the cached K/V, the new K/V.

    ``{"weights": ..., "kv_read": ..., "kv_write": ..., "total": ...}`` (from ``utils.flops``).
    """
    b = dict(decode_step_cost(cfg, context_len, dtype=dtype).bytes)
    b["total"] = sum(b.values())
    return b


def decode_bound(cfg: ModelConfig, batch_size: int, context_len: int, bandwidth_Bps: float,
                 dtype: torch.dtype | str = "float32") -> dict:
    """The memory-bandwidth limit of one decode step of B rows with T tokens of context each.

    Every weight is read once per step whatever B is; the K/V cache is read once per row. So
    ``tpot_min_s`` = bytes per step / bandwidth, and at most ``B / tpot_min_s`` tokens per second.
    Also returns the bytes per new token, which falls like 1 / B while the weights dominate.
    """
    if not bandwidth_Bps > 0:
        raise ValueError(f"bandwidth_Bps must be > 0, got {bandwidth_Bps!r}")
    b = dict(decode_step_cost(cfg, context_len, batch_size=batch_size, dtype=dtype).bytes)
    total = sum(b.values())
    tpot = total / bandwidth_Bps
    return {**b, "total": total, "bytes_per_token": total / batch_size, "tpot_min_s": tpot,
            "max_tokens_per_s": batch_size / tpot}


class _Bandwidth:
    """A large float32 buffer and the two memory-bound operations that measure bandwidth."""

    def __init__(self, n_bytes: int) -> None:
        n = n_bytes // 4
        self.n_bytes = n * 4
        self.src = torch.ones(n)  # first touch: the pages exist before we time anything
        self.dst = torch.zeros(n)

    def copy(self) -> None:  # reads n_bytes and writes n_bytes
        self.dst.copy_(self.src)

    def read(self) -> None:  # reads n_bytes
        self.src.sum()


def memory_bandwidth(n_bytes: int = 512 * 2**20, repeats: int = 7, warmup: int = 1, progress=None) -> dict:
    """Measured memory bandwidth in bytes/s of a copy (read + write) and a reduction (read only).

    ``n_bytes`` must be much larger than the CPU caches, or this measures the caches instead.
    """
    bw = _Bandwidth(n_bytes)
    stats = time_interleaved({"copy": bw.copy, "read": bw.read}, repeats, warmup, progress)
    copy_bps = stats["copy"].map(lambda s: 2 * bw.n_bytes / s)
    read_bps = stats["read"].map(lambda s: bw.n_bytes / s)
    return {"n_bytes": bw.n_bytes, "copy_Bps": copy_bps, "read_Bps": read_bps,
            "limit_Bps": max(copy_bps.median, read_bps.median)}


def decode_vs_bandwidth(
    model, context_len: int = 256, repeats: int = 10, *, n_bytes: int = 512 * 2**20, warmup: int = 1,
    seed: int = 0, progress=None,
) -> dict:
    """Batch-1 decode step against the machine's memory bandwidth, measured interleaved.

    Batch-1 decode multiplies one vector by every weight matrix: each weight is read once and used
    for two flops only, so the step cannot be faster than (bytes to read) / (memory bandwidth).
    Returns the step time, the bytes per step, the bandwidth the step achieves, the measured
    copy/read bandwidth, and ``fraction`` = achieved / the higher of the two.
    """
    _check_fits(model, context_len + 1)
    cfg = model.cfg
    ids = random_ids(cfg.vocab_size, context_len + 1, seed=seed)  # (1, T + 1)
    dtype = model.lm_head.weight.dtype
    kv = StaticKVCache(cfg, 1, context_len + 1, dtype=dtype)
    prefill(model, ids[:, :context_len], cache=kv)
    stepper = decode_stepper(model, kv)  # the step generate runs

    def step():
        stepper(ids[:, context_len])
        kv.crop(context_len)

    bw = _Bandwidth(n_bytes)
    stats = time_interleaved({"step": step, "copy": bw.copy, "read": bw.read}, repeats, warmup, progress)
    nbytes = decode_bytes_per_token(cfg, context_len, dtype)
    achieved = stats["step"].map(lambda s: nbytes["total"] / s)
    copy_bps = stats["copy"].map(lambda s: 2 * bw.n_bytes / s)
    read_bps = stats["read"].map(lambda s: bw.n_bytes / s)
    limit = max(copy_bps.median, read_bps.median)
    return {"context_len": context_len, "n_params": cfg.n_params, "bytes": nbytes, "step_s": stats["step"],
            "achieved_Bps": achieved, "copy_Bps": copy_bps, "read_Bps": read_bps, "limit_Bps": limit,
            "fraction": achieved.median / limit, "bound_s": nbytes["total"] / limit}


# --- batching: throughput against latency ---------------------------------------------------------

def batch_sweep(
    model, batch_sizes: Sequence[int], prompt_len: int = 32, new_tokens: int = 16, repeats: int = 3, *,
    cache: str = "static", warmup: int = 1, seed: int = 0, progress=None,
) -> dict:
    """``generate`` with B identical-length prompts per B: TTFT, TPOT, latency and throughput, medians.

    Returns lists aligned with ``batch_sizes``: ``ttft_s``, ``tpot_s``, ``latency_s`` (one
    request, end to end), ``throughput`` (B x n / latency, tokens/s) and ``decode_throughput``
    (B / TPOT).
    """
    Bs = [int(B) for B in batch_sizes]
    _check_fits(model, prompt_len + new_tokens)
    ids = random_ids(model.cfg.vocab_size, prompt_len, max(Bs), seed)  # (B_max, T)
    runs: dict[int, list] = {B: [] for B in Bs}
    fns = {B: (lambda B=B: runs[B].append(generate(model, ids[:B], new_tokens, cache=cache))) for B in Bs}
    time_interleaved(fns, repeats, warmup, progress)
    out = {"B": Bs, "ttft_s": [], "tpot_s": [], "latency_s": [], "throughput": [], "decode_throughput": []}
    for B in Bs:
        rs = runs[B][warmup:]
        ttft = statistics.median(r.ttft_s for r in rs)
        tpot = statistics.median(r.tpot_s for r in rs)
        latency = statistics.median(r.total_s for r in rs)
        out["ttft_s"].append(ttft)
        out["tpot_s"].append(tpot)
        out["latency_s"].append(latency)
        out["throughput"].append(B * new_tokens / latency)
        out["decode_throughput"].append(B / tpot)
    return out


def serve(model, prompts: torch.Tensor, new_tokens: int, group_size: int, *, cache: str = "static") -> dict:
    """Serve N requests that all arrive at t = 0, ``group_size`` at a time, each group start to finish.

    ``group_size = N``: one big batch, every prompt prefilled together. ``group_size = 1``: a
    queue, one request after the other. Returns per request ``ttft_s`` and ``done_s`` (seconds
    since t = 0), the ``makespan_s`` and the total ``throughput`` (all new tokens / makespan).
    """
    N = prompts.shape[0]
    if isinstance(group_size, bool) or not isinstance(group_size, int) or not 1 <= group_size <= N:
        raise ValueError(f"group_size must be an int in [1, {N}], got {group_size!r}")
    ttft, done, clock = [], [], 0.0
    for start in range(0, N, group_size):
        r = generate(model, prompts[start:start + group_size], new_tokens, cache=cache)
        rows = r.tokens.shape[0]
        ttft += [clock + r.ttft_s] * rows  # every row of the group gets its first token together
        done += [clock + r.total_s] * rows
        clock += r.total_s
    return {"ttft_s": ttft, "done_s": done, "makespan_s": clock, "throughput": N * new_tokens / clock}
