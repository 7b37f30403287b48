"""The comparisons only ``python -m utils.bench`` runs (notebook 06 shows the modules-vs-flat one).

Each takes the measuring tools of ``utils.perf`` (interleaved rounds, ``Stats``, paired ratios)
and returns a dict of results that ``utils.bench`` prints as a table and saves as JSON:

    cache_vs_recompute     case 1: ``generate`` with the KV cache against recomputing every step
    ours_vs_transformers   case 2: our ``generate`` against transformers' on the same weights
    modules_vs_flat        case 2: one decode step through the modules against the flat step
"""
from __future__ import annotations

import statistics

import torch

from .cache import StaticKVCache
from .config import ModelConfig
from .generate import generate
from .perf import BENCH_CONFIGS, Stats, check_lengths, paired_ratio, random_ids, repeated_step, time_interleaved


# --- case 1: cached decode against full recompute -----------------------------------------------

def cache_vs_recompute(
    model, prompt_len: int = 256, new_tokens: int = 128, repeats: int = 3, *, cache_kind: str = "static",
    warmup: int = 1, seed: int = 0, progress=None,
) -> dict:
    """``generate`` with the cache and without it (every step re-runs the whole sequence), interleaved.

    Returns, per variant, the end-to-end seconds, TTFT and TPOT (``Stats``), and the speedups
    of the cache on decode (1 / TPOT) and end to end.
    """
    check_lengths(model, [prompt_len], extra=new_tokens)
    ids = random_ids(model.cfg.vocab_size, prompt_len, seed=seed)  # (1, T)
    runs = {"cached": [], "recompute": []}
    options = {"cached": dict(use_cache=True, cache_kind=cache_kind), "recompute": dict(use_cache=False)}

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
    from .hf import from_hf, hf_llama_like

    hf = hf_llama_like(cfg, seed)
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
        "ours_static": keep("ours_static", lambda: generate(ours, ids, new_tokens, cache_kind="static").tokens),
        "ours_dynamic": keep("ours_dynamic", lambda: generate(ours, ids, new_tokens).tokens),
        "transformers": keep("transformers", lambda: hf_generate(hf, ids, new_tokens)),
        "ours_static_ttft": lambda: generate(ours, ids, 1, cache_kind="static"),
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


# --- case 2, where our speed comes from: the modules against the flat step ----------------------

def modules_vs_flat(
    model, context_len: int = 256, repeats: int = 5, *, steps_per_sample: int = 8, warmup: int = 1, seed: int = 0,
    progress=None,
) -> dict:
    """One batch-1 decode step two ways, interleaved: ``decode_stepper(..., step="modules")``
    (through ``Decoder.forward``) and ``step="flat"`` (what ``generate`` runs by default). Same
    arithmetic, same numbers; the difference is the module calls' Python and a few view ops. Returns ``{"modules": Stats,
    "flat": Stats, "speedup": Stats}`` (seconds per step; speedup = modules / flat, paired round by round).
    """
    (T,) = check_lengths(model, [context_len], extra=1)
    ids = random_ids(model.cfg.vocab_size, T + 1, seed=seed)  # (1, T + 1)
    dtype = model.lm_head.weight.dtype
    fns = {step: repeated_step(model, ids, T, StaticKVCache(model.cfg, 1, T + 1, dtype=dtype), step, steps_per_sample)
           for step in ("modules", "flat")}
    stats = time_interleaved(fns, repeats, warmup, progress)
    out = {name: stats[name].map(lambda x: x / steps_per_sample) for name in fns}
    out["speedup"] = paired_ratio(stats["modules"], stats["flat"])
    out["context_len"] = T
    return out


# --- case 5: the serving engine against one-at-a-time and static batching ------------------------

def serving_policies(model, n_requests: int, rounds: int, prompt_lens=(16, 64), new_tokens=(16, 64),
                     max_batch: int = 8, progress=None) -> dict:
    """The same seeded Poisson arrivals served three ways, ``rounds`` times interleaved:

    * ``fifo``: one request at a time (``utils.serving.PaddedBatchEngine``, policy "fifo");
    * ``static``: left-padded batches of up to ``max_batch``, waiting at most 20 ms for a full batch;
    * ``engine``: ``utils.serving.PagedEngine``: continuous batching, chunked prefill, paged blocks.

    The rate is set from the measured solo time of one request: twice what one-at-a-time can serve,
    so the queue builds up and the policies differ. Returns per policy the ``Run.summary()`` of every
    round, with tokens/s and p95 TTFT as ``Stats``, and the engine's ratios to the other two (paired).
    """
    from .serving import PaddedBatchEngine, PagedEngine, poisson_arrivals, random_workload, serve, solo_runs

    work = random_workload(n_requests, model.cfg.vocab_size, prompt_lens, new_tokens, seed=0)
    solo = solo_runs(model, work)  # also a warm-up
    service_s = statistics.median(r.ttft_s + sum(r.step_times_s) for r in solo)
    rate = 2.0 / service_s
    arrivals = poisson_arrivals(n_requests, rate, seed=0)
    expected = [r.tokens[0].tolist() for r in solo]
    block = 16
    n_blocks = max_batch * -(-(prompt_lens[1] + new_tokens[1]) // block)
    engines = {"fifo": lambda: PaddedBatchEngine(model, policy="fifo"),
               "static": lambda: PaddedBatchEngine(model, policy="static", max_batch=max_batch, timeout_s=0.02),
               "engine": lambda: PagedEngine(model, n_blocks=n_blocks, block_size=block, max_batch_tokens=128,
                                             prefill_chunk=64, max_batch=max_batch)}
    runs = {name: [] for name in engines}
    same = True
    for _ in range(rounds):
        for name, make in engines.items():
            run = serve(make(), work, arrivals)
            runs[name].append(run.summary())
            same &= run.tokens == expected
        if progress is not None:
            progress.update(1)
    out = {"rate": rate, "service_s": service_s, "n_requests": n_requests, "max_batch": max_batch,
           "same_tokens": same, "n_blocks": n_blocks, "block_size": block}
    for policy, rows in runs.items():
        out[policy] = {"tokens_per_s": Stats([r["tokens_per_s"] for r in rows]),
                       "ttft_p95_s": Stats([r["ttft_p95_s"] for r in rows]),
                       "ttft_p50_s": Stats([r["ttft_p50_s"] for r in rows]),
                       "tpot_p50_s": Stats([r["tpot_p50_s"] for r in rows])}
    for other in ("fifo", "static"):
        out[f"throughput_over_{other}"] = Stats([e["tokens_per_s"] / o["tokens_per_s"]
                                                 for e, o in zip(runs["engine"], runs[other])])
    return out


# --- case 6: speculative decoding against plain greedy decoding ------------------------------------

def speculative_vs_greedy(rounds: int, new_tokens: int = 64, ks=(1, 2, 4), progress=None) -> dict:
    """The course model generating ``new_tokens`` greedy tokens after a course prompt: plainly
    (``generate``), and by ``utils.speculative`` with the shipped draft model and with prompt lookup,
    for each draft length k, interleaved round by round. Per variant: seconds, the speed-up over plain
    (paired), the acceptance rate and the forward passes; and whether every variant gave the same tokens."""
    from .course_model import load_course_model, load_draft_model
    from .speculative import PromptLookup, speculative_generate

    model, tok = load_course_model()
    draft, _ = load_draft_model()
    ids = torch.tensor([tok.encode("<BOS> 他 喜欢 猫 。 她 也 喜欢 狗 。 我们 有 两 只 白 猫 。 他们")])  # (1, T)
    variants = {"plain": lambda: generate(model, ids, new_tokens).tokens[0]}
    for k in ks:
        variants[f"draft k={k}"] = lambda k=k: speculative_generate(model, draft, ids, new_tokens, k=k)
        variants[f"lookup k={k}"] = lambda k=k: speculative_generate(model, PromptLookup(), ids, new_tokens, k=k)
    times = time_interleaved(variants, rounds, progress=progress)  # after one warm-up round
    reference = variants["plain"]()
    out = {"new_tokens": new_tokens, "prompt_len": ids.shape[1], "same_tokens": True, "variants": {}}
    for name, fn in variants.items():
        if name == "plain":
            continue
        res = fn()
        out["same_tokens"] &= bool(torch.equal(res.tokens, reference))
        out["variants"][name] = {"seconds": times[name], "speedup": paired_ratio(times["plain"], times[name]),
                                 "acceptance_rate": res.acceptance_rate, "target_calls": res.target_calls,
                                 "draft_calls": res.draft_calls}
    out["plain"] = times["plain"]
    return out
