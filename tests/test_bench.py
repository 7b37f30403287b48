"""``python -m utils.bench`` keeps working (tiny mode), and the measuring helpers say what they measure.

No wall-clock thresholds here: the machines are shared and noisy. Speed is what the benchmark
reports; these tests check its structure, its byte counts and its correctness checks.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from utils import bench, perf, roofline
from utils.flops import decode_step_cost
from utils.perf import Stats

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    proc = subprocess.run(
        [sys.executable, "-m", "utils.bench", "--quick", "--threads", "1", "--no-progress", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, json.loads(out.read_text())


def test_quick_run_prints_all_six_cases_and_the_goals(quick):
    table, _ = quick
    for heading in ("1. Cached decode vs full recompute", "2. Our generate vs transformers",
                    "3. TTFT vs prompt length", "through the modules", "4. Batch-1 decode step vs memory bandwidth",
                    "5. Serving", "engine throughput / one at a time", "6. Speculative decoding", "Goals"):
        assert heading in table
    assert "quick mode" in table  # the tiny sizes say nothing about the goals, and the table says so


def test_json_holds_samples_and_correctness_checks(quick):
    _, res = quick
    assert res["quick"] is True and res["machine"]["threads"] == 1
    cases = res["cases"]
    assert set(cases) == {"1", "2", "3", "4", "5", "6"}
    c1 = cases["1"]
    assert c1["same_tokens"] is True  # the cache changes the speed, never the tokens
    assert len(c1["cached"]["tpot_s"]["samples"]) == c1["cached"]["tpot_s"]["n"] >= 2
    c2 = cases["2"]
    if "skipped" not in c2:
        assert c2["same_tokens"] is True and c2["first_difference"] is None
        for name in ("ours_static", "ours_dynamic", "transformers"):
            assert c2[name]["total_s"]["median"] > 0
    paths = c2["step_paths"]  # measured even without transformers: the modules and the flat step
    assert paths["context_len"] == bench.QUICK.prompt_len
    assert len(paths["speedup"]["samples"]) == len(paths["flat"]["samples"]) == paths["modules"]["n"]
    c3 = cases["3"]
    assert c3["ttft"]["T"] == list(bench.QUICK.lengths) == c3["tpot"]["T"]
    assert len(c3["tpot"]["no_cache"]) == len(c3["tpot"]["T"])
    c4 = cases["4"]
    cfg = perf.BENCH_CONFIGS[bench.QUICK.big_config]
    assert c4["bytes"]["total"] == sum(decode_step_cost(cfg, bench.QUICK.context_len).bytes.values())
    assert c4["fraction"] == pytest.approx(c4["achieved_Bps"]["median"] / c4["limit_Bps"])
    assert set(c4["steps_s"]) == {"in_out", "out_in"}  # both layouts, same run; and each matvec both ways
    assert set(c4["matvec_Bps"]) == {f"{lay}, {k}" for lay in ("in_out", "out_in") for k in perf.MATVEC_KERNELS}
    assert c4["layout"] == "in_out" and c4["best_matvec"] in c4["matvec_Bps"]
    assert c4["matvec_fraction"] == pytest.approx(
        c4["achieved_Bps"]["median"] / c4["matvec_Bps"][c4["best_matvec"]]["median"])
    dts = c4["dtypes"]["dtypes"]
    assert dts["float32"]["max_logit_diff"] == 0 and dts["bfloat16"]["bytes"] < dts["float32"]["bytes"]
    assert 0 < dts["float16"]["max_logit_diff"] < dts["bfloat16"]["max_logit_diff"] < 0.5  # 10 vs 7 mantissa bits
    assert [g["case"] for g in res["goals"]] == [1, 2, 4, "4m"] or "skipped" in c2
    c5 = cases["5"]
    assert c5["same_tokens"] is True  # every policy, the engine included, gives each request its solo tokens
    for name in ("fifo", "static", "engine"):
        assert c5[name]["tokens_per_s"]["n"] == bench.QUICK.repeats[5] and c5[name]["ttft_p95_s"]["median"] > 0
    assert c5["throughput_over_fifo"]["median"] == pytest.approx(
        c5["engine"]["tokens_per_s"]["median"] / c5["fifo"]["tokens_per_s"]["median"])  # one round: the ratio itself
    c6 = cases["6"]
    assert c6["same_tokens"] is True  # speculative greedy decoding gives the target's own tokens
    for name, v in c6["variants"].items():
        assert 0 <= v["acceptance_rate"] <= 1 and len(v["speedup"]["samples"]) == bench.QUICK.repeats[6], name
        assert v["target_calls"] <= 1 + c6["new_tokens"]


def test_cli_rejects_unknown_cases():
    with pytest.raises(SystemExit):
        bench.main(["--cases", "7", "--quick"])


def test_stats_median_quartiles_and_paired_ratio():
    s = Stats([4.0, 1.0, 3.0, 2.0, 5.0])
    assert (s.median, s.q1, s.q3, s.as_dict()["n"]) == (3.0, 2.0, 4.0, 5)
    assert s.spread == pytest.approx(2 / 3)
    r = perf.paired_ratio(Stats([2.0, 9.0]), Stats([1.0, 3.0]))
    assert r.samples == [2.0, 3.0]
    with pytest.raises(ValueError):
        perf.paired_ratio(Stats([1.0]), Stats([1.0, 2.0]))


def test_metrics_follow_their_definitions():
    m = perf.metrics(ttft_s=0.2, tpot_s=0.02, n_tokens=100, batch_size=8)
    assert m["latency_s"] == pytest.approx(0.2 + 99 * 0.02)
    assert m["throughput"] == pytest.approx(8 * 100 / m["latency_s"])
    assert m["decode_throughput"] == pytest.approx(8 / 0.02)
    with pytest.raises(ValueError):
        perf.metrics(0.2, 0.0, 10)


def test_decode_bound_shares_the_weights_across_the_batch():
    cfg = perf.BENCH_CONFIGS["100M"]
    one, eight = roofline.decode_bound(cfg, 1, 256, 10e9), roofline.decode_bound(cfg, 8, 256, 10e9)
    assert eight["kv_read"] == 8 * one["kv_read"]
    assert eight["weights"] - one["weights"] == 7 * cfg.d_model * 4  # 7 more embedding rows
    assert eight["bytes_per_token"] < one["bytes_per_token"] / 6
    assert one["tpot_min_s"] == pytest.approx(one["total"] / 10e9)


def test_decode_bound_takes_the_larger_of_the_two_roofs():
    cfg = perf.BENCH_CONFIGS["50M"]
    peak = 100e9  # FLOP/s: a CPU core
    for B in (1, 4, 64):
        d = roofline.decode_bound(cfg, B, 256, 40e9, peak_flops=peak)
        cost = decode_step_cost(cfg, 256, batch_size=B)
        assert d["flops"] == cost.total_flops and d["compute_s"] == pytest.approx(cost.total_flops / peak)
        assert d["memory_s"] == pytest.approx(d["total"] / 40e9)
        assert d["tpot_min_s"] == max(d["memory_s"], d["compute_s"]) and d["max_tokens_per_s"] == B / d["tpot_min_s"]
        assert d["bound_by"] == ("memory" if d["memory_s"] >= d["compute_s"] else "compute")
    assert roofline.decode_bound(cfg, 1, 256, 40e9, peak_flops=peak)["bound_by"] == "memory"
    assert roofline.decode_bound(cfg, 64, 256, 40e9, peak_flops=peak)["bound_by"] == "compute"
    assert roofline.decode_bound(cfg, 64, 256, 40e9)["compute_s"] == 0  # no peak: the memory roof alone
    with pytest.raises(ValueError, match="peak_flops"):
        roofline.decode_bound(cfg, 1, 256, 40e9, peak_flops=0.0)


def test_batch_sweep_throughput_follows_its_definition():
    torch.set_num_threads(1)
    model = perf.random_model("tiny")
    sweep = perf.batch_sweep(model, [1, 2], prompt_len=8, new_tokens=3, repeats=1)
    assert sweep["B"] == [1, 2]
    for B, thr, lat in zip(sweep["B"], sweep["throughput"], sweep["latency_s"]):
        assert thr == pytest.approx(B * 3 / lat)
    for B, thr, tpot in zip(sweep["B"], sweep["decode_throughput"], sweep["tpot_s"]):
        assert thr == pytest.approx(B / tpot)
