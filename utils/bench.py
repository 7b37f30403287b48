"""The performance benchmark: ``python -m utils.bench`` (or ``make bench``).

Six cases, each measured side by side in one run on this machine (float32, batch 1, the
compared variants interleaved, medians with their quartiles):

  1. cached decode against full recompute, prompt 256 -> 128 new tokens      goal: >= 10x
  2. our ``generate`` against transformers' ``generate`` on the same weights,  goal: >= 2.0x
     greedy (and the same tokens); also ``KVCache`` against ``StaticKVCache``, and one decode
     step through the modules against the flat step
  3. TTFT against prompt length and TPOT against context length, with and without the cache
  4. a ~100 M-parameter batch-1 decode step: bytes it must read / its time,     goal: >= 50 %
     against the memory bandwidth measured in the same run, and against torch's own
     matrix-vector product over the same weights in both layouts                goal: >= 90 %
     (``utils/weight_layout.py``), one call per matrix or row blocks on every core
     (``utils/split_matvec.py``); the same step in bfloat16 and float16, with the logit change
  5. serving seeded Poisson arrivals on the course model: the serving engine (``utils.serving``,
     continuous batching with chunked prefill on paged blocks) against one request at a time and
     static batches: throughput and p95 TTFT
  6. speculative decoding (``utils.speculative``) with the shipped draft model and with prompt lookup,
     for several k, against plain greedy decoding on the course model: speed-up and acceptance rate

The cases are measured by ``utils.bench_cases`` (1, 2, 5, 6) and ``utils.perf`` (3, 4). It prints a
table and writes every sample to a JSON file (default ``bench-results.json``).

    python -m utils.bench                 # everything, a few minutes
    python -m utils.bench --cases 1,2     # some cases only
    python -m utils.bench --quick         # tiny sizes, seconds: keeps the code path working (tests)

Wall-clock numbers depend on the machine and on whatever else runs on it; the ratios, measured
within one run, are what to compare.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import dataclass

import torch

from . import bench_cases, perf
from .perf import BENCH_CONFIGS, Stats, torch_threads
from .perf.bandwidth import bandwidth_lines
from .weight_layout import LAYOUTS

GOALS = {1: ("cache speedup on decode", 10.0), 2: ("ours / transformers, end to end", 2.0),
         4: ("fraction of the memory bandwidth", 0.5), "4m": ("fraction of torch's best matvec", 0.9)}


@dataclass(frozen=True)
class Sizes:
    """What one benchmark run measures (``FULL`` or ``QUICK``)."""

    config: str  # cases 1-3
    big_config: str  # case 4
    prompt_len: int
    new_tokens: int
    lengths: tuple[int, ...]  # case 3
    context_len: int  # case 4
    bandwidth_bytes: int
    repeats: dict  # case -> rounds
    n_requests: int  # case 5


FULL = Sizes("small", "100M", 256, 128, (64, 128, 256, 512, 1024), 256, 512 * 2**20,
             {1: 5, 2: 11, 3: 5, 4: 11, 5: 3, 6: 7}, 32)
QUICK = Sizes("tiny", "tiny", 16, 8, (8, 16, 32), 16, 8 * 2**20, {1: 2, 2: 2, 3: 2, 4: 3, 5: 1, 6: 2}, 6)


def _shape(cfg) -> str:
    return (f"L={cfg.n_layers} C={cfg.d_model} H={cfg.n_heads} H_kv={cfg.n_kv_heads} V={cfg.vocab_size}, "
            f"{cfg.n_params / 1e6:.1f}M params")


def _rounds(case: int, sizes: Sizes, repeats: int | None) -> int:
    return repeats if repeats is not None else sizes.repeats[case]


def run(cases=(1, 2, 3, 4, 5, 6), quick: bool = False, threads: int = 2, repeats: int | None = None,
        progress: bool = True) -> dict:
    """Run the chosen cases with ``threads`` torch threads; return every result (``Stats`` inside)."""
    with torch_threads(threads):
        return _run(cases, QUICK if quick else FULL, quick, threads, repeats, progress)


def _run(cases, sizes: Sizes, quick: bool, threads: int, repeats: int | None, progress: bool) -> dict:
    bar = None
    if progress:
        from tqdm.auto import tqdm

        total = 0
        for c in cases:
            total += _rounds(c, sizes, repeats) * (2 if c in (2, 3) else 1)  # measured rounds
        bar = tqdm(total=total, desc="utils.bench", unit="round", leave=False)
    results: dict = {"machine": _machine(threads), "quick": quick, "cases": {}}
    results["machine"]["load_before"] = _load()
    t_start = time.perf_counter()
    try:
        if 1 in cases:
            model = perf.random_model(sizes.config)
            res = bench_cases.cache_vs_recompute(model, sizes.prompt_len, sizes.new_tokens,
                                                 _rounds(1, sizes, repeats), progress=bar)
            res.update(shape=_shape(model.cfg), prompt_len=sizes.prompt_len, new_tokens=sizes.new_tokens)
            results["cases"][1] = res
        if 2 in cases:
            try:
                import transformers  # noqa: F401
            except ImportError:
                results["cases"][2] = {"skipped": "transformers is not installed"}
            else:
                res = bench_cases.ours_vs_transformers(sizes.config, sizes.prompt_len, sizes.new_tokens,
                                                       _rounds(2, sizes, repeats), progress=bar)
                res.update(shape=_shape(BENCH_CONFIGS[sizes.config]), prompt_len=sizes.prompt_len,
                           new_tokens=sizes.new_tokens, transformers_version=transformers.__version__)
                results["cases"][2] = res
            # where our speed comes from: the same step through the modules and flat
            results["cases"].setdefault(2, {})["step_paths"] = bench_cases.modules_vs_flat(
                perf.random_model(sizes.config), sizes.prompt_len, _rounds(2, sizes, repeats), progress=bar)
        if 3 in cases:
            model = perf.random_model(sizes.config)
            n = _rounds(3, sizes, repeats)
            results["cases"][3] = {
                "shape": _shape(model.cfg),
                "ttft": perf.ttft_vs_prompt_length(model, sizes.lengths, n, progress=bar),
                "tpot": perf.tpot_vs_context(model, sizes.lengths, n, progress=bar),
            }
        if 4 in cases:
            model = perf.random_model(sizes.big_config)
            res = perf.decode_vs_bandwidth(model, sizes.context_len, _rounds(4, sizes, repeats),
                                           n_bytes=sizes.bandwidth_bytes, layouts=LAYOUTS, progress=bar)
            res["shape"] = _shape(model.cfg)
            res["dtypes"] = perf.decode_dtypes(model, context_len=sizes.context_len,
                                               repeats=_rounds(4, sizes, repeats), progress=bar)
            results["cases"][4] = res
        if 5 in cases:
            from .course_model import load_course_model

            model, _ = load_course_model()
            res = bench_cases.serving_policies(model, sizes.n_requests, _rounds(5, sizes, repeats), progress=bar)
            res["shape"] = _shape(model.cfg)
            results["cases"][5] = res
        if 6 in cases:
            results["cases"][6] = bench_cases.speculative_vs_greedy(
                _rounds(6, sizes, repeats), new_tokens=16 if quick else 64, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    results["machine"]["load_after"] = _load()
    results["seconds"] = time.perf_counter() - t_start
    results["goals"] = goals(results)
    return results


def goals(results: dict) -> list[dict]:
    """The benchmark's goals: measured value (median), target, met or not, per case that ran."""
    cases, out = results["cases"], []
    measured = {}
    if 1 in cases:
        measured[1] = cases[1]["speedup_decode"].median
    if 2 in cases and "skipped" not in cases[2]:
        measured[2] = cases[2]["speedup_static"].median
    if 4 in cases:
        measured[4] = cases[4]["fraction"]
        measured["4m"] = cases[4]["matvec_fraction"]
    for case, value in measured.items():
        name, target = GOALS[case]
        out.append({"case": case, "goal": name, "target": target, "measured": value, "met": value >= target,
                    "margin": value / target})
    return out


def _machine(threads: int) -> dict:
    info = {"threads": threads, "cpus": os.cpu_count(), "torch": torch.__version__, "python": platform.python_version(),
            "platform": platform.platform(), "dtype": "float32", "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    try:
        import transformers

        info["transformers"] = transformers.__version__
    except ImportError:
        info["transformers"] = None
    return info


def _load() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


# --- the table -----------------------------------------------------------------------------------

def _fmt_load(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def _q(s: Stats, scale: float = 1.0, fmt: str = ".2f") -> str:
    """'median [q1, q3]' of ``s`` times ``scale``."""
    return f"{s.median * scale:{fmt}} [{s.q1 * scale:{fmt}}, {s.q3 * scale:{fmt}}]"


def format_table(results: dict) -> str:
    """The benchmark's results as a plain-text table (what ``main`` prints)."""
    m, cases = results["machine"], results["cases"]
    lines = [
        f"utils.bench{' --quick' if results['quick'] else ''}: {m['threads']} torch threads, {m['cpus']} CPUs, "
        f"{m['dtype']}, batch 1, torch {m['torch']}, transformers {m['transformers']}",
        f"load average {_fmt_load(m['load_before'])} before, {_fmt_load(m['load_after'])} after; "
        f"{results['seconds']:.0f} s",
        "median [quartiles] of interleaved repeats; ratios are paired round by round",
    ]
    if 1 in cases:
        c = cases[1]
        lines += ["", f"1. Cached decode vs full recompute: {c['shape']}; prompt {c['prompt_len']} -> "
                      f"{c['new_tokens']} new tokens; {c['cached']['total_s'].as_dict()['n']} repeats",
                  f"   {'':10s} {'decode tok/s (1/TPOT)':>24s} {'TPOT ms':>24s} {'TTFT ms':>24s} {'end-to-end tok/s':>24s}"]
        for name in ("cached", "recompute"):
            v = c[name]
            lines.append(f"   {name:10s} {_q(v['decode_tok_s'], 1, '.1f'):>24s} {_q(v['tpot_s'], 1e3):>24s} "
                         f"{_q(v['ttft_s'], 1e3):>24s} {_q(v['e2e_tok_s'], 1, '.1f'):>24s}")
        lines.append(f"   speedup of the cache: decode {_q(c['speedup_decode'])}x, end to end {_q(c['speedup_e2e'])}x; "
                     f"same tokens: {c['same_tokens']}")
    if 2 in cases:
        c = cases[2]
        if "skipped" in c:
            lines += ["", f"2. Ours vs transformers: skipped ({c['skipped']})"]
        else:
            n = c["transformers"]["total_s"].as_dict()["n"]
            lines += ["", f"2. Our generate vs transformers {c['transformers_version']} LlamaForCausalLM.generate, "
                          f"same weights, greedy: {c['shape']}; prompt {c['prompt_len']} -> {c['new_tokens']}; "
                          f"{n} repeats",
                      f"   {'':14s} {'end to end ms':>26s} {'tok/s':>8s} {'TTFT ms':>24s} {'TPOT ms':>11s}"]
            for name in ("ours_static", "ours_dynamic", "transformers"):
                v = c[name]
                tt = (f" {_q(v['ttft_s'], 1e3):>24s} {v['tpot_s'] * 1e3:11.2f}" if "ttft_s" in v else "")
                lines.append(f"   {name:14s} {_q(v['total_s'], 1e3, '.1f'):>26s} {v['e2e_tok_s'].median:8.1f}{tt}")
            diff = c["first_difference"]
            lines += [f"   ours (StaticKVCache) / transformers: end to end {_q(c['speedup_static'])}x, "
                      f"fastest rounds {c['speedup_static_fastest']:.2f}x, "
                      f"decode (TPOT = (total - TTFT) / (n - 1), medians) {c['speedup_decode']:.2f}x",
                      f"   ours (KVCache) / transformers: end to end {_q(c['speedup_dynamic'])}x;  "
                      f"StaticKVCache / KVCache: {_q(c['static_over_dynamic'])}x",
                      f"   same tokens (all three): {c['same_tokens']}"
                      + ("" if diff is None else f" (first difference at new token {diff})")]
    if 2 in cases and "step_paths" in cases[2]:
        p = cases[2]["step_paths"]
        lines.append(f"   one decode step at T={p['context_len']}: through the modules {_q(p['modules'], 1e3)} ms, "
                     f"flat {_q(p['flat'], 1e3)} ms: {_q(p['speedup'])}x (same kernels, same logits)")
    if 3 in cases:
        c = cases[3]
        ttft, tpot = c["ttft"], c["tpot"]
        lines += ["", f"3. TTFT vs prompt length T, TPOT vs context length T (median ms): {c['shape']}",
                  f"   {'T':>6s} {'TTFT cache':>11s} {'TTFT no cache':>14s} {'TPOT cache':>11s} "
                  f"{'TPOT no cache':>14s} {'no cache / cache':>17s}"]
        for i, T in enumerate(ttft["T"]):
            a, b = tpot["cached"][i].median, tpot["no_cache"][i].median
            lines.append(f"   {T:6d} {ttft['cached'][i].median * 1e3:11.2f} {ttft['no_cache'][i].median * 1e3:14.2f} "
                         f"{a * 1e3:11.2f} {b * 1e3:14.2f} {b / a:16.1f}x")
    if 4 in cases:
        c = cases[4]
        lines += bandwidth_lines(c, _q)
    if 5 in cases:
        c = cases[5]
        lines += ["", f"5. Serving {c['n_requests']} requests (Poisson, {c['rate']:.0f}/s = twice what one at a time "
                      f"serves, {c['service_s'] * 1e3:.1f} ms each alone) on the course model: {c['shape']}",
                  f"   {'':8s} {'tokens/s over the run':>24s} {'TTFT p95 ms':>24s} {'TTFT p50 ms':>24s} {'TPOT p50 ms':>12s}"]
        for name in ("fifo", "static", "engine"):
            v = c[name]
            lines.append(f"   {name:8s} {_q(v['tokens_per_s'], 1, '.0f'):>24s} {_q(v['ttft_p95_s'], 1e3, '.1f'):>24s} "
                         f"{_q(v['ttft_p50_s'], 1e3, '.1f'):>24s} {v['tpot_p50_s'].median * 1e3:12.2f}")
        lines.append(f"   engine throughput / one at a time {_q(c['throughput_over_fifo'])}x, / static batches "
                     f"{_q(c['throughput_over_static'])}x (static: B <= {c['max_batch']}, 20 ms timeout; engine: "
                     f"{c['n_blocks']} blocks of {c['block_size']}); same tokens as solo runs: {c['same_tokens']}")
    if 6 in cases:
        c = cases[6]
        lines += ["", f"6. Speculative decoding on the course model (target) vs plain greedy: prompt {c['prompt_len']} -> "
                      f"{c['new_tokens']} new tokens; plain {_q(c['plain'], 1e3)} ms",
                  f"   {'':14s} {'ms':>22s} {'speed-up':>20s} {'accepted':>9s} {'target/draft passes':>20s}"]
        for name, v in c["variants"].items():
            lines.append(f"   {name:14s} {_q(v['seconds'], 1e3):>22s} {_q(v['speedup']):>20s} "
                         f"{v['acceptance_rate']:9.0%} {v['target_calls']:>10d} / {v['draft_calls']:<8d}")
        lines.append(f"   same tokens as plain greedy: {c['same_tokens']} (on a CPU a draft pass still costs a good "
                     "fraction of the tiny target's, and plain decoding runs the flat step: the speed-up can be below 1)")
    if results["goals"]:
        lines += ["", "Goals" + ("  (quick mode: tiny sizes, these say nothing; the goals are for the full run)"
                                 if results["quick"] else "")]
        for g in results["goals"]:
            share = g["case"] in (4, "4m")
            value = f"{g['measured']:.0%}" if share else f"{g['measured']:.2f}x"
            target = f"{g['target']:.0%}" if share else f"{g['target']:.1f}x"
            lines.append(f"   case {g['case']!s:2s}: {g['goal']:34s} {value:>7s}  (goal >= {target}): "
                         f"{'met' if g['met'] else 'NOT met'}, {g['margin']:.2f} of the goal")
    return "\n".join(lines)


# --- JSON ------------------------------------------------------------------------------------------

def to_jsonable(x):
    """Results with every ``Stats`` turned into its summary plus the raw samples."""
    if isinstance(x, Stats):
        return {**x.as_dict(), "samples": x.samples}
    if isinstance(x, dict):
        return {str(k): to_jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_jsonable(v) for v in x]
    return x


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m utils.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, a few seconds (for the test)")
    parser.add_argument("--out", default="bench-results.json", help="JSON file (default: bench-results.json)")
    parser.add_argument("--cases", default="1,2,3,4,5,6", help="comma-separated cases to run (default: 1,2,3,4,5,6)")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (default: 2)")
    parser.add_argument("--repeats", type=int, default=None, help="rounds per case (default: per case)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        cases = sorted({int(c) for c in args.cases.split(",") if c.strip()})
    except ValueError:
        parser.error(f"--cases must be numbers from 1 to 6, got {args.cases!r}")
    if not cases or not set(cases) <= {1, 2, 3, 4, 5, 6}:
        parser.error(f"--cases must be numbers from 1 to 6, got {args.cases!r}")
    if args.threads < 1 or (args.repeats is not None and args.repeats < 1):
        parser.error("--threads and --repeats must be >= 1")
    results = run(cases, quick=args.quick, threads=args.threads, repeats=args.repeats,
                  progress=not args.no_progress)
    print(format_table(results))
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(to_jsonable(results), f, indent=1)
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
