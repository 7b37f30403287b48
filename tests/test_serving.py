"""The paged serving engine (utils/serving/paged_engine.py): every request gets exactly its solo greedy
tokens, whatever the schedule (chunked prefill, requests joining and leaving, preemption, prefix hits);
the one engine API both engines answer; the one replay cost model (utils/serving/costs.py)."""
import pytest
import torch

from utils.course_model import COURSE_CONFIG
from utils.generate import generate
from utils.serving import (
    PaddedBatchEngine, PagedEngine, Run, StepCostModel, Workload, one_pass_s, poisson_arrivals, random_workload,
    serve, summary_table,
)


@pytest.fixture(scope="module")
def course():
    from utils.course_model import load_course_model

    return load_course_model()


def _solo(model, prompts, n_new):
    return [generate(model, [p], n).tokens[0].tolist() for p, n in zip(prompts, n_new)]


def _serve(engine, prompts, n_new, arrivals):
    return serve(engine, Workload(prompts, n_new), arrivals)


# (n_blocks, block_size, max_batch_tokens, prefill_chunk): tight pools preempt, small chunks split prompts
SCHEDULES = [(18, 4, 16, 5), (40, 4, 48, 16), (18, 4, 64, None), (12, 8, 24, 7), (64, 16, 32, 3), (32, 2, 8, 4)]


@pytest.mark.parametrize("seed", range(12))
def test_every_request_equals_its_solo_greedy_run_under_random_schedules(course, seed):
    model, _ = course
    n_blocks, block_size, budget, chunk = SCHEDULES[seed % len(SCHEDULES)]
    w = random_workload(10, model.cfg.vocab_size, prompt_lens=(3, 36), new_tokens=(1, 24), seed=seed)
    engine = PagedEngine(model, n_blocks=n_blocks, block_size=block_size, max_batch_tokens=budget,
                         prefill_chunk=chunk, max_batch=4 + seed % 5)
    res = _serve(engine, w.prompts, w.max_new_tokens, poisson_arrivals(10, [50, 400, 5000][seed % 3], seed))
    assert res.tokens == _solo(model, w.prompts, w.max_new_tokens)
    assert engine.pool.ref == [0] * n_blocks  # every block given back
    if chunk is not None:
        assert all(n <= chunk for s in res.steps for _, n in s["prefill"])
    assert all(len(s["decode"]) + sum(n for _, n in s["prefill"]) <= budget for s in res.steps)


def test_tight_pools_preempt_and_still_give_the_solo_tokens(course):
    model, _ = course
    w = random_workload(8, model.cfg.vocab_size, prompt_lens=(10, 20), new_tokens=(20, 30), seed=3)
    engine = PagedEngine(model, n_blocks=14, block_size=4, max_batch_tokens=64, prefill_chunk=8)
    res = _serve(engine, w.prompts, w.max_new_tokens, [0.0] * 8)
    assert sum(r.n_preempted for r in res.requests) > 0
    assert res.tokens == _solo(model, w.prompts, w.max_new_tokens)


def test_shared_system_prompt_is_prefilled_once_and_a_full_hit_still_gives_the_first_token(course):
    model, tok = course
    system = tok.encode("<BOS> 他 喜欢 猫 。 她 喜欢 狗 。")  # 9 tokens
    prompts = [system + tok.encode(x) for x in ("我", "她 喜欢", "")] + [system[:8]] * 2  # the last two: full hits
    engine = PagedEngine(model, n_blocks=32, block_size=4, max_batch_tokens=64, prefill_chunk=16)
    res = _serve(engine, prompts, [5] * 5, [0.0, 1.0, 2.0, 3.0, 4.0])
    assert res.tokens == _solo(model, prompts, [5] * 5)
    assert [r.hit_tokens for r in res.requests] == [0, 8, 8, 7, 7]  # whole blocks; a full hit reruns the last token
    prefilled = {rid: n for s in res.steps for rid, n in s["prefill"]}
    assert prefilled[1] == len(prompts[1]) - 8 and prefilled[4] == 1
    assert engine.pool.ref == [0] * 32


def test_prefix_caching_off_prefills_everything(course):
    model, tok = course
    prompt = tok.encode("<BOS> 他 喜欢 猫 。 她 喜欢 狗 。")
    engine = PagedEngine(model, n_blocks=16, block_size=4, max_batch_tokens=64, prefill_chunk=None, prefix_caching=False)
    res = _serve(engine, [prompt, prompt], [3, 3], [0.0, 1.0])
    assert [r.hit_tokens for r in res.requests] == [0, 0] and res.tokens[0] == res.tokens[1]


def test_chunked_prefill_bounds_every_iteration_and_eos_stops_a_request(course):
    model, tok = course
    w = random_workload(4, model.cfg.vocab_size, prompt_lens=(30, 40), new_tokens=(10, 10), seed=1)
    solo = _solo(model, w.prompts, w.max_new_tokens)
    eos = solo[0][3]
    engine = PagedEngine(model, n_blocks=64, block_size=4, max_batch_tokens=12, prefill_chunk=8, max_batch=4)
    rid = engine.add_request(w.prompts[0], 10, eos_id=eos)
    res = engine.run()
    assert res.tokens[rid] == solo[0][: solo[0].index(eos) + 1] and res.requests[rid].done == "eos"


def test_run_reports_the_metrics_of_utils_serving_run(course):
    model, _ = course
    w = random_workload(6, model.cfg.vocab_size, seed=2)
    res = _serve(PagedEngine(model, n_blocks=64, block_size=8, max_batch_tokens=32), w.prompts, w.max_new_tokens,
                 poisson_arrivals(6, 100, 2))
    s = res.summary()
    assert s["n"] == 6 and s["tokens"] == sum(w.max_new_tokens)
    assert 0 < s["ttft_p50_s"] <= s["ttft_p95_s"] and s["tokens_per_s"] > 0
    assert all(r.token_times == sorted(r.token_times) for r in res.requests)


def test_summary_table_prints_each_run_in_milliseconds_and_per_second(course):
    model, _ = course
    w = random_workload(6, model.cfg.vocab_size, seed=2)
    runs = {policy: serve(PaddedBatchEngine(model, policy=policy, max_batch=4), w, poisson_arrivals(6, 100, 2))
            for policy in ("fifo", "continuous")}
    table = summary_table({("busy", p): r.summary() for p, r in runs.items()}, ("rate", "policy"), e2e=True)
    title, head, *rows = table.splitlines()
    assert title.split("|")[0].split() == ["rate", "policy"] and "end to end (ms)" in title and "throughput" in title
    assert head.split("|")[1].split() == ["p50", "p95"] and "requests/s" in head
    for row, (p, r) in zip(rows, runs.items()):
        s = r.summary()
        cells = row.split("|")
        assert cells[0].split() == ["busy", p]
        assert cells[1].split() == [f"{s['ttft_p50_s'] * 1e3:,.1f}", f"{s['ttft_p95_s'] * 1e3:,.1f}"]
        assert cells[-1].split() == [f"{s['busy_tokens_per_s']:,.0f}"]
    assert "end to end" not in summary_table({"one run": runs["fifo"].summary()})
    with pytest.raises(ValueError, match="one per header"):
        summary_table({"one run": runs["fifo"].summary()}, ("rate", "policy"))


def test_replayed_costs_run_the_same_schedule_without_the_model(course):
    model, _ = course
    w = random_workload(8, model.cfg.vocab_size, seed=4)
    arrivals = poisson_arrivals(8, 200, 4)
    real = _serve(PagedEngine(model, n_blocks=40, block_size=4, max_batch_tokens=24, prefill_chunk=8),
                  w.prompts, w.max_new_tokens, arrivals)
    costs = StepCostModel.fit(real)
    replay = _serve(PagedEngine(model.cfg, n_blocks=40, block_size=4, max_batch_tokens=24, prefill_chunk=8,
                                costs=costs), w.prompts, w.max_new_tokens, arrivals)
    assert [len(t) for t in replay.tokens] == w.max_new_tokens and replay.tokens[0][0] == -1  # placeholders
    assert len(replay.steps) > 0 and replay.summary()["tokens"] == real.summary()["tokens"]
    for s in replay.steps:  # a pure iteration of a measured size costs the mean measured for it
        if s["decode"] and not s["prefill"] and len(s["decode"]) in dict(costs.decode_by_rows):
            assert s["end_s"] - s["start_s"] == pytest.approx(dict(costs.decode_by_rows)[len(s["decode"])])


def test_abort_gives_the_blocks_back(course):
    model, _ = course
    engine = PagedEngine(model, n_blocks=8, block_size=4, max_batch_tokens=16)
    rid = engine.add_request([1, 5, 10], 20)
    engine.step()
    assert engine.pool.n_used() > 0
    engine.abort(rid)
    assert engine.pool.ref == [0] * 8 and not engine.has_work() and engine.request(rid).done == "aborted"


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_blocks=8, block_size=0), "block_size"),
    (dict(n_blocks=0), "n_blocks"),
    (dict(n_blocks=8, max_batch_tokens=0), "max_batch_tokens"),
    (dict(n_blocks=8, prefill_chunk=0), "prefill_chunk"),
    (dict(n_blocks=8, costs="fast"), "costs"),
    (dict(n_blocks=8, max_batch_tokens=4, max_batch=8), "max_batch_tokens \\(4\\) must be >= max_batch \\(8\\)"),
])
def test_bad_engine_settings_are_clear_value_errors(course, kwargs, match):
    with pytest.raises(ValueError, match=match):
        PagedEngine(course[0], **kwargs)


def test_bad_requests_are_clear_value_errors(course):
    engine = PagedEngine(course[0], n_blocks=4, block_size=4)
    with pytest.raises(ValueError, match="needs up to 5 blocks of 4 tokens but the whole pool has 4"):
        engine.add_request([1] * 10, 10)  # longer than the pool: it could never finish
    with pytest.raises(ValueError, match="arrival_time"):
        engine.add_request([1, 2], 3, arrival_time=-1)
    with pytest.raises(ValueError, match="one prompt"):
        engine.add_request([[1, 2], [3, 4]], 3)
    with pytest.raises(ValueError, match="token ids"):
        engine.add_request([1, 10_000], 3)
    with pytest.raises(ValueError, match="unknown request id 7"):
        engine.request(7)
    with pytest.raises(ValueError, match="unknown request id"):
        engine.abort("0")
    with pytest.raises(ValueError, match="model"):
        PagedEngine(torch.nn.Linear(2, 2), n_blocks=4)


def test_the_hit_rate_counts_each_request_once_even_when_it_waits_or_is_preempted(course):
    model, tok = course
    system = tok.encode("<BOS> 他 喜欢 猫 。 她 喜欢 狗 。 我 喜欢 鱼 。")
    prompts = [system + tok.encode(x) for x in ("我", "她 喜欢", "他", "我 喜欢", "她")]
    engine = PagedEngine(model, n_blocks=12, block_size=4, max_batch_tokens=32, prefill_chunk=16)
    res = _serve(engine, prompts, [20] * 5, [0.0, 0.0, 0.0, 0.0, 0.0])
    assert sum(r.n_preempted for r in res.requests) > 0  # a tight pool: requests wait and are preempted
    per_request = sum(r.hit_tokens for r in res.requests) / sum(len(p) for p in prompts)
    assert engine.pool.query_tokens == sum(len(p) for p in prompts)
    assert engine.pool.hit_rate() == pytest.approx(per_request)
    assert res.tokens == _solo(model, prompts, [20] * 5)


def test_fitted_step_costs_are_non_negative_and_unbiased():
    # iterations whose true cost is 1 ms + 0.1 ms per decode row + 0.01 ms per prefill token
    steps, t = [], 0.0
    for i in range(40):
        n_dec, n_pre = i % 7, (i * 13) % 50
        dt = 1e-3 + 1e-4 * n_dec + 1e-5 * n_pre
        steps.append({"start_s": t, "end_s": t + dt, "decode": list(range(n_dec)),
                      "prefill": [(0, n_pre)] if n_pre else [], "prefill_tokens": n_pre})
        t += dt
    model = StepCostModel.fit(steps, by_size=False)
    assert model.decode_by_rows == model.prefill_by_tokens == ()  # the line alone
    assert min(model.fixed, model.per_forward, model.per_row, model.per_token) >= 0
    errors = [model.seconds(len(s["decode"]), sum(n for _, n in s["prefill"])) - (s["end_s"] - s["start_s"])
              for s in steps if s["decode"] or s["prefill"]]
    assert abs(sum(errors) / len(errors)) < 1e-6  # no bias: the mean residual of a least-squares fit is 0


def test_a_stall_of_the_machine_does_not_pull_the_fitted_costs_up():
    steps, t = [], 0.0
    for i in range(40):
        n_dec, n_pre = i % 7, (i * 13) % 50
        dt = 1e-3 + 1e-4 * n_dec + 1e-5 * n_pre + (60e-3 if i == 17 else 0.0)  # one 60 ms stall
        steps.append({"start_s": t, "end_s": t + dt, "decode": list(range(n_dec)),
                      "prefill": [(0, n_pre)] if n_pre else [], "prefill_tokens": n_pre})
        t += dt
    model = StepCostModel.fit(steps)
    assert model.seconds(3, 20) == pytest.approx(1e-3 + 3e-4 + 2e-4, rel=1e-6)


# --- one engine API, one cost model ---------------------------------------------------------------------

def test_both_engines_answer_the_same_calls_and_return_the_same_run(course):
    model, _ = course
    w = random_workload(5, model.cfg.vocab_size, prompt_lens=(4, 12), new_tokens=(2, 6), seed=7)
    solo = _solo(model, w.prompts, w.max_new_tokens)
    for engine in (PaddedBatchEngine(model, policy="continuous", max_batch=4),
                   PagedEngine(model, n_blocks=32, block_size=4, max_batch_tokens=16, prefill_chunk=8)):
        rids = [engine.add_request(p, n, arrival_time=0.001 * i) for i, (p, n) in enumerate(zip(w.prompts,
                                                                                                w.max_new_tokens))]
        assert rids == list(range(5)) and engine.now == 0.0
        rec = engine.step()
        assert {"start_s", "end_s", "decode", "prefill", "prefill_tokens", "running", "preempted"} <= set(rec)
        assert engine.now == rec["end_s"] > 0
        run = engine.run()
        assert isinstance(run, Run) and run.tokens == solo and run.steps[0] is rec
        assert [r.rid for r in run.requests] == rids and len(run.schedule()["token_times"]) == 5
        assert set(run.summary()) >= {"ttft_p50_s", "tpot_p95_s", "itl_p95_s", "tokens_per_s", "busy_tokens_per_s"}


def test_the_self_tests_replay_keeps_working():
    from utils.course_model import COURSE_CONFIG

    # the appendix's self-test: 10 one-token prompts decode while a 100-token prompt waits
    engine = PagedEngine(COURSE_CONFIG, n_blocks=64, block_size=16, max_batch_tokens=64, prefill_chunk=32,
                         max_batch=11, costs=StepCostModel(1e-3, 0.0, 0.0, 0.0))
    for _ in range(10):
        engine.add_request([1], 20)
    engine.step()
    rid = engine.add_request([1] * 100, 5, arrival_time=engine.now)
    record = engine.step()
    assert len(record["decode"]) == 10 and dict(record["prefill"])[rid] == 32
    assert engine.now == pytest.approx(2e-3)


def _steps(sizes):
    """Step records of (decode rows, prefill tokens, seconds)."""
    out, t = [], 0.0
    for rows, tokens, dt in sizes:
        out.append({"start_s": t, "end_s": t + dt, "decode": list(range(rows)), "prefill": [(0, tokens)] if tokens
                    else [], "prefill_tokens": tokens})
        t += dt
    return out


def test_the_cost_model_keeps_the_measured_mean_per_size_and_the_line_elsewhere():
    steps = _steps([(1, 0, 5e-4), (1, 0, 7e-4), (2, 0, 9e-4), (4, 0, 1.2e-3), (0, 10, 2e-3), (0, 30, 4e-3),
                    (2, 16, 3e-3)])
    c = StepCostModel.fit(steps)
    assert [n for n, _ in c.decode_by_rows] == [1, 2, 4] and [n for n, _ in c.prefill_by_tokens] == [10, 30]
    assert c.seconds(1, 0) == pytest.approx(6e-4) and c.seconds(2, 0) == pytest.approx(9e-4)  # the mean per size
    assert c.seconds(3, 0) == pytest.approx(1.05e-3)  # never measured, between 2 and 4 rows: halfway
    assert c.seconds(0, 20) == pytest.approx(3e-3)
    for rows, tokens in ((8, 0), (0, 40), (2, 16), (0, 0)):  # beyond the measured sizes, or mixed: the line
        assert c.seconds(rows, tokens) == c.line(rows, tokens)
    assert StepCostModel.fit(steps, by_size=False) == StepCostModel(c.fixed, c.per_forward, c.per_row, c.per_token)
    assert c.line(2, 16) == c.fixed + 2 * c.per_forward + 2 * c.per_row + 16 * c.per_token
    assert StepCostModel.fit([Run("a", [], steps[:4]), Run("b", [], steps[4:])]) == c  # several runs: their steps
    with pytest.raises(ValueError, match="at least 4 busy iterations"):
        StepCostModel.fit(steps[:3])
    for bad in (dict(fixed=-1e-3), dict(per_row=float("nan")), dict(per_token="fast")):
        with pytest.raises(ValueError, match=list(bad)[0]):
            StepCostModel(**{"fixed": 0.0, "per_forward": 0.0, "per_row": 0.0, "per_token": 0.0, **bad})


def test_the_measured_means_never_make_a_bigger_step_cheaper():
    # a noisy run: 2 rows measured slower than 3 and 4 (a slow kernel shape, a stall); the replay must not
    # find 4 rows cheaper than 2, so falling means are pooled into their weighted mean (isotonic)
    steps = _steps([(1, 0, 3e-3), (2, 0, 6e-3), (3, 0, 4e-3), (3, 0, 4e-3), (4, 0, 4.5e-3), (0, 10, 2e-3),
                    (0, 20, 1e-3), (0, 30, 4e-3)])
    c = StepCostModel.fit(steps)
    rows = [s for _, s in c.decode_by_rows]
    assert rows == sorted(rows) and rows[0] == pytest.approx(3e-3)
    # 2 rows (1 step) pool with 3 rows (2 steps), then with 4 rows (1 step), which is still below their mean
    assert rows[1] == rows[2] == rows[3] == pytest.approx((6e-3 + 2 * 4e-3 + 4.5e-3) / 4)
    assert dict(c.prefill_by_tokens)[10] == dict(c.prefill_by_tokens)[20] == pytest.approx(1.5e-3)
    total = sum(s["end_s"] - s["start_s"] for s in steps if not s["prefill"])
    assert sum(c.seconds(len(s["decode"]), 0) for s in steps if not s["prefill"]) == pytest.approx(total)


def test_each_forward_pass_is_timed_and_one_pass_s_takes_the_second_one_out(course):
    model, _ = course
    engine = PagedEngine(model, n_blocks=32, block_size=4, max_batch_tokens=12, prefill_chunk=6, max_batch=3)
    for p, n in zip([[1] + list(range(5, 15)), [1, 5, 6, 7, 8, 9], [1, 9, 8, 7, 6]], [4, 4, 3]):
        engine.add_request(p, n)
    run = engine.run()
    for s in run.steps:
        kinds = {k for k, on in (("decode", s["decode"]), ("prefill", s["prefill"])) if on}
        assert set(s["pass_s"]) == kinds and all(t > 0 for t in s["pass_s"].values())
        assert sum(s["pass_s"].values()) <= s["end_s"] - s["start_s"] + 1e-9
        total = s["end_s"] - s["start_s"]
        if kinds == {"decode", "prefill"}:  # two passes: the estimate drops the decodes' pass, stretches the chunks'
            p = s["pass_s"]
            want = total - p["decode"] + p["prefill"] * len(s["decode"]) / s["prefill_tokens"]
            assert one_pass_s(s) == pytest.approx(want)
        else:
            assert one_pass_s(s) == total
    assert any(len(s["pass_s"]) == 2 for s in run.steps)
    replay = PagedEngine(course[0].cfg, n_blocks=32, block_size=4, costs=StepCostModel(1e-4, 1e-4, 1e-5, 1e-6))
    replay.add_request([1, 2, 3], 2)
    with pytest.raises(ValueError, match="pass_s"):
        one_pass_s(replay.run().steps[0])


def test_gpu_like_costs_are_one_pass_bound_by_the_weight_read_up_to_the_ridge():
    from utils.serving.costs import RooflineStepCost, gpu_like_costs

    g = gpu_like_costs()
    assert isinstance(g, StepCostModel) and g.weight_read > 0 and 100 < g.ridge_tokens < 300
    assert g.seconds(4, 0) == g.seconds(4, 64) == g.seconds(4, int(g.ridge_tokens) - 4)  # chunks ride along
    assert g.seconds(4, 400) > g.seconds(4, 0)  # past the ridge the FLOPs set the time
    assert g.seconds(0, 0) == g.fixed and g.seconds(8, 0) > g.seconds(1, 0)  # each decode row reads its own K/V
    with pytest.raises(ValueError, match="weight_read"):
        RooflineStepCost(0.0, 0.0, 0.0, 1e-5, weight_read=-1.0)
    engine = PagedEngine(COURSE_CONFIG, n_blocks=16, block_size=16, costs=g)
    engine.add_request(list(range(1, 20)), 3)
    run = engine.run()
    assert all(s["end_s"] - s["start_s"] == pytest.approx(g.seconds(len(s["decode"]), s["prefill_tokens"]))
               for s in run.steps)
