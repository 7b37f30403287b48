"""utils/arrivals.py and utils/batch_engine.py: requests arriving over time, served one at a time, in
static batches and by continuous batching, on the real model (every request's tokens equal its solo
run) and on replayed costs (the schedule's arithmetic, exactly)."""
import math
import statistics

import numpy as np
import pytest
import torch

from conftest import LAYOUTS, tiny_model
from utils import arrivals
from utils.arrivals import POLICIES, Workload, poisson_arrivals, random_workload, serve, solo_runs
from utils.batch_engine import ModelEngine, ReplayEngine, StepCosts, stack_caches, trim_left
from utils.cache import KVCache
from utils.generate import prefill


@pytest.fixture(autouse=True)
def one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


# --- the arrival process ----------------------------------------------------------------------------

def test_poisson_arrivals_are_reproducible_sorted_and_scale_with_the_rate():
    a = poisson_arrivals(200, 50.0, seed=3)
    assert a == poisson_arrivals(200, 50.0, seed=3)  # the same seed, the same pattern
    assert a != poisson_arrivals(200, 50.0, seed=4)
    assert len(a) == 200 and a == sorted(a) and a[0] > 0
    assert np.allclose(np.asarray(poisson_arrivals(200, 100.0, seed=3)) * 2, a)  # twice the rate: half the times
    gaps = np.diff([0.0] + a)
    assert 0.8 / 50 < gaps.mean() < 1.2 / 50  # exponential gaps of mean 1 / rate
    assert poisson_arrivals(1, 2, seed=0) == poisson_arrivals(1, 2.0, seed=0)  # an int rate is a rate
    assert poisson_arrivals(3, np.int64(2), seed=0) == poisson_arrivals(3, np.float32(2.0), seed=0)  # numpy numbers too


@pytest.mark.parametrize("n, rate, name", [(0, 10.0, "n"), (-3, 10.0, "n"), (2.5, 10.0, "n"), (5, 0.0, "rate"),
                                           (5, -1.0, "rate"), (5, math.inf, "rate"), (5, math.nan, "rate"),
                                           (5, "fast", "rate"), (5, True, "rate")])
def test_bad_arrival_arguments_raise_naming_them(n, rate, name):
    with pytest.raises(ValueError, match=name):
        poisson_arrivals(n, rate)


def test_random_workload_is_seeded_and_within_its_ranges():
    w = random_workload(30, 101, (3, 9), (2, 5), seed=1)
    assert w == random_workload(30, 101, (3, 9), (2, 5), seed=1)
    assert len(w) == 30 and all(3 <= len(p) <= 9 for p in w.prompts) and all(2 <= n <= 5 for n in w.max_new_tokens)
    assert all(0 <= t < 101 for p in w.prompts for t in p)
    with pytest.raises(ValueError, match="prompt_lens"):
        random_workload(3, 101, (5, 4))


# --- the real engine: tokens equal the solo run ---------------------------------------------------

PATTERNS = {"quiet": 20.0, "busy": 2000.0, "burst": 1e6}  # requests per second


@pytest.mark.parametrize("kind", list(LAYOUTS))
@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_every_policy_gives_each_request_its_solo_tokens(kind, pattern):
    model = tiny_model(kind)
    work = random_workload(10, model.cfg.vocab_size, (2, 14), (1, 9), seed=len(pattern))
    solo = [r.tokens[0].tolist() for r in solo_runs(model, work)]
    arrival = poisson_arrivals(len(work), PATTERNS[pattern], seed=7)
    engine = ModelEngine(model, work.prompts)
    for policy in POLICIES:
        run = serve(engine, work.max_new_tokens, arrival, policy, max_batch=4, timeout_s=0.005)
        assert run.tokens == solo, policy
        for r, n in zip(run.requests, work.max_new_tokens):
            assert len(r.token_times) == n and r.token_times == sorted(r.token_times)
            assert r.start_s >= r.arrival_s  # nobody starts before it arrives
            assert r.ttft_s == pytest.approx(r.wait_s + r.prefill_s + r.sample_s)  # TTFT has parts


def test_continuous_batching_reaches_full_batches_and_empties_the_cache():
    model = tiny_model("GQA")
    work = random_workload(9, model.cfg.vocab_size, (2, 12), (3, 8), seed=2)
    engine = ModelEngine(model, work.prompts)
    run = serve(engine, work.max_new_tokens, [0.0] * 9, "continuous", max_batch=4)
    assert max(size for kind, size, _ in engine.log if kind == "decode") == 4  # never more than max_batch
    assert engine.cache is None and engine.rows == []  # every row left
    assert run.tokens == [r.tokens[0].tolist() for r in solo_runs(model, work)]


def test_stacking_and_trimming_left_padded_caches():
    model = tiny_model("MQA")
    a, b = KVCache(), KVCache()
    prefill(model, torch.tensor([[5, 6, 7, 8, 9]]), cache=a)
    prefill(model, torch.tensor([[3, 4]]), cache=b)
    both = stack_caches(a, b)
    assert both.batch_size == 2 and both.seq_len == 5
    assert both.mask.tolist() == [[True] * 5, [False] * 3 + [True] * 2]
    assert both.valid_counts().tolist() == [5, 2]  # the next positions: each row's own count
    for layer in range(model.cfg.n_layers):
        k, v = both.layer_kv(layer)  # (2, H_kv, 5, d_h)
        assert torch.equal(k[0], a.k[layer][0]) and torch.equal(k[1, :, 3:], b.k[layer][0])
        assert torch.equal(v[1, :, :3], torch.zeros_like(v[1, :, :3]))
    both.reorder(torch.tensor([1]))  # the long row leaves: three columns are padding in every row
    short = trim_left(both)
    assert short.seq_len == 2 and short.mask is None and torch.equal(short.k[0], b.k[0])


# --- the schedules, on replayed costs: exact arithmetic -------------------------------------------

COSTS = StepCosts(prefill_fixed_s=0.001, prefill_per_token_s=0.0001, decode_fixed_s=0.002, decode_per_row_s=0.0005,
                  sample_s=0.0, join_s=0.0, leave_s=0.0)


def _replay(policy, arrival, n_new=3, lens=(10, 10, 10, 10), **kw):
    return serve(ReplayEngine(COSTS, list(lens)), [n_new] * len(lens), arrival, policy, **kw)


def test_fifo_serves_each_request_on_arrival_when_the_server_is_free():
    run = _replay("fifo", [0.0, 1.0, 2.0, 3.0])  # a second apart: each is done long before the next
    assert [r.wait_s for r in run.requests] == [0.0] * 4
    one = COSTS.prefill(10) + 2 * COSTS.decode(1)  # one request alone: a prefill and two decode steps
    assert [r.e2e_s for r in run.requests] == pytest.approx([one] * 4)
    assert run.busy_s == pytest.approx(4 * one) and run.makespan_s == pytest.approx(3 + one)
    s = run.summary()
    assert s["tokens_per_s"] == pytest.approx(12 / run.makespan_s) and s["requests_per_s"] == pytest.approx(4 / run.makespan_s)
    assert s["busy_tokens_per_s"] == pytest.approx(12 / run.busy_s)
    assert s["tpot_p50_s"] == pytest.approx(COSTS.decode(1))


def test_static_batch_waits_to_fill_and_counts_the_wait_in_ttft():
    run = _replay("static", [0.0, 1.0, 2.0, 3.0], max_batch=4, timeout_s=10.0)
    assert [r.wait_s for r in run.requests] == [3.0, 2.0, 1.0, 0.0]  # it starts when its last request is there
    assert len({r.ttft_s + r.arrival_s for r in run.requests}) == 1  # one batch: every first token at once
    assert run.requests[0].ttft_s == pytest.approx(3.0 + COSTS.prefill(40))  # 4 rows x 10 tokens in one prefill
    timed_out = _replay("static", [0.0, 1.0, 2.0, 3.0], max_batch=4, timeout_s=0.5)
    assert [r.wait_s for r in timed_out.requests] == [0.5] * 4  # nobody else came within the timeout


def test_static_rows_ride_along_to_the_longest_and_pad_to_the_longest_prompt():
    engine = ReplayEngine(COSTS, [4, 20])
    run = serve(engine, [2, 5], [0.0, 0.0], "static", max_batch=2)
    short, long = run.requests
    assert short.token_times[0] == long.token_times[0] == pytest.approx(COSTS.prefill(2 * 20))
    assert len(short.token_times) == 2 and len(long.token_times) == 5
    assert run.busy_s == pytest.approx(COSTS.prefill(40) + 4 * COSTS.decode(2))  # four steps of two rows


def test_continuous_batching_admits_at_the_next_step_and_finished_rows_leave():
    engine = ReplayEngine(COSTS, [10, 10])
    run = serve(engine, [4, 2], [0.0, 0.0025], "continuous", max_batch=2)
    first, second = run.requests
    p = COSTS.prefill(10)
    assert first.token_times[:2] == pytest.approx([p, p + COSTS.decode(1)])  # alone for one step
    assert second.start_s == pytest.approx(p + COSTS.decode(1))  # arrived during that step: joins after it
    assert second.wait_s == pytest.approx(second.start_s - 0.0025)
    t = second.start_s + p  # its prefill stalls the running row: an ITL spike for the first request
    assert first.token_times[2] == pytest.approx(t + COSTS.decode(2))
    assert second.token_times == pytest.approx([t, t + COSTS.decode(2)])
    assert first.token_times[3] == pytest.approx(t + COSTS.decode(2) + COSTS.decode(1))  # the second left
    assert max(first.itl_s) == pytest.approx(p + COSTS.decode(2))


def test_fifo_is_continuous_batching_with_one_row_and_static_with_one_row():
    arrival = poisson_arrivals(4, 300.0, seed=1)
    fifo = _replay("fifo", arrival)
    for other in (_replay("continuous", arrival, max_batch=1), _replay("static", arrival, max_batch=1, timeout_s=0)):
        for a, b in zip(other.requests, fifo.requests):
            assert a.token_times == pytest.approx(b.token_times)


def test_percentiles_are_numpys_default():
    run = _replay("fifo", [0.0, 0.001, 0.002, 0.5])
    ttft = [r.ttft_s for r in run.requests]
    s = run.summary()
    assert s["ttft_p50_s"] == np.percentile(ttft, 50) == np.median(ttft)
    assert s["ttft_p95_s"] == np.percentile(ttft, 95)
    assert s["itl_p95_s"] == np.percentile([g for r in run.requests for g in r.itl_s], 95)


def test_costs_fitted_to_a_measured_log_replay_its_calls():
    log = [("prefill", 10, 0.002), ("prefill", 20, 0.003), ("prefill", 20, 0.009), ("prefill", 20, 0.003),
           ("decode", 1, 0.001), ("decode", 2, 0.0015), ("decode", 4, 0.0025), ("sample", 1, 1e-5), ("join", 2, 2e-4)]
    c = StepCosts.fit(log)
    assert c.prefill(10) == pytest.approx(0.002) and c.prefill(20) == pytest.approx(0.005)  # means per size: the slow
    assert c.decode_fixed_s == pytest.approx(0.0005) and c.decode_per_row_s == pytest.approx(0.0005)  # call counts
    assert (c.sample_s, c.join_s, c.leave_s) == (1e-5, 2e-4, 0.0)
    assert StepCosts.fit([("prefill", 8, 0.004), ("decode", 1, 0.001), ("decode", 2, 0.0009)]).decode_per_row_s == 0
    with pytest.raises(ValueError, match="prefills and decode steps"):
        StepCosts.fit([("sample", 1, 1e-5)])


def test_replay_gives_back_the_measured_mean_cost_at_every_measured_size():
    model = tiny_model("GQA")
    work = random_workload(12, model.cfg.vocab_size, (2, 12), (2, 9), seed=5)
    engine = ModelEngine(model, work.prompts)
    for policy in POLICIES:
        serve(engine, work.max_new_tokens, poisson_arrivals(len(work), 3000.0, seed=1), policy, max_batch=4)
    costs = StepCosts.fit(engine.log)
    for kind, replayed in (("decode", costs.decode), ("prefill", costs.prefill)):
        measured = {}
        for k, size, s in engine.log:
            if k == kind:
                measured.setdefault(size, []).append(s)
        assert len(measured) > 1, kind
        for size, times in measured.items():  # exactly the measured mean, not a line through the means
            assert replayed(size) == pytest.approx(statistics.fmean(times), rel=1e-12, abs=0), (kind, size)
    replay = ReplayEngine(costs, [len(p) for p in work.prompts])
    for rows in sorted({size for k, size, _ in engine.log if k == "decode"}):
        replay.rows = list(range(rows))
        assert replay.step() == costs.decode(rows)  # a replayed step of that many rows


def test_replayed_costs_interpolate_between_measured_sizes_and_fall_back_to_the_line_beyond():
    log = [("prefill", 10, 0.002), ("prefill", 30, 0.004), ("decode", 1, 0.0005), ("decode", 1, 0.0007),
           ("decode", 2, 0.0009), ("decode", 4, 0.0012)]
    c = StepCosts.fit(log)
    assert [n for n, _ in c.decode_by_rows] == [1, 2, 4]
    assert [s for _, s in c.decode_by_rows] == pytest.approx([0.0006, 0.0009, 0.0012])  # the mean per row count
    assert c.decode(1) == pytest.approx(0.0006) and c.decode(2) == pytest.approx(0.0009)  # a line would miss both
    assert c.decode(3) == pytest.approx(0.00105)  # never measured, between 2 and 4 rows: halfway
    assert c.decode(8) == pytest.approx(c.decode_fixed_s + 8 * c.decode_per_row_s)  # beyond: the line
    assert c.prefill(20) == pytest.approx(0.003) and c.prefill(40) == pytest.approx(0.005)
    assert COSTS.decode(3) == COSTS.decode_fixed_s + 3 * COSTS.decode_per_row_s  # no measured sizes given: the line


def test_bad_serve_arguments_raise_naming_them():
    engine = ReplayEngine(COSTS, [4, 4])
    for kwargs, name in ((dict(policy="lifo"), "policy"), (dict(max_batch=0), "max_batch"),
                         (dict(timeout_s=-1.0), "timeout_s"), (dict(timeout_s=math.inf), "timeout_s"),
                         (dict(arrival_s=[1.0, 0.0]), "arrival_s"), (dict(arrival_s=[-1.0, 0.0]), "arrival_s"),
                         (dict(arrival_s=[0.0]), "arrival_s"), (dict(max_new_tokens=[2, 0]), "max_new_tokens")):
        args = dict(max_new_tokens=[2, 2], arrival_s=[0.0, 0.1], policy="static") | kwargs
        with pytest.raises(ValueError, match=name):
            serve(engine, args.pop("max_new_tokens"), args.pop("arrival_s"), args.pop("policy"), **args)
    with pytest.raises(ValueError, match="prompts"):
        serve(engine, [2, 2, 2], [0.0, 0.1, 0.2], "fifo")  # the engine holds two prompts
    with pytest.raises(ValueError, match=r"empty ones at \[1\]"):
        ModelEngine(tiny_model("GQA"), [[1, 2], []])
    with pytest.raises(ValueError, match="prompt_lens"):
        ReplayEngine(COSTS, [4, 0])


def test_workload_is_a_plain_record():
    w = Workload([[1, 2], [3]], [4, 5])
    assert len(w) == 2 and arrivals.POLICIES == ("fifo", "static", "continuous")
