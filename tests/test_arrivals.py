"""utils/serving: requests arriving over time (arrivals.py), their metrics (run.py), and notebook 06's
engine (padded.py) serving them one at a time, in static batches and by continuous batching, on the
real model (every request's tokens equal its solo run) and on replayed costs (the schedule's arithmetic,
exactly)."""
import math

import numpy as np
import pytest
import torch

from conftest import LAYOUTS, tiny_model
from utils.cache import KVCache
from utils.generate import prefill
from utils.serving import (
    POLICIES, PaddedBatchEngine, StepCostModel, Workload, poisson_arrivals, random_workload, serve, solo_runs,
    stack_caches, trim_left,
)


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
    for policy in POLICIES:
        run = serve(PaddedBatchEngine(model, policy=policy, max_batch=4, timeout_s=0.005), work, arrival)
        assert run.tokens == solo, policy
        assert run.name == policy
        for r, n in zip(run.requests, work.max_new_tokens):
            assert len(r.token_times) == n and r.token_times == sorted(r.token_times)
            assert r.start_s >= r.arrival_s  # nobody starts before it arrives
            assert r.ttft_s == pytest.approx(r.wait_s + r.prefill_s + r.sample_s)  # TTFT has parts
        assert all(s["end_s"] >= s["start_s"] for s in run.steps)
        assert all(bool(s["decode"]) != bool(s["prefill"]) for s in run.steps)  # one forward per iteration


def test_continuous_batching_reaches_full_batches_and_empties_the_cache():
    model = tiny_model("GQA")
    work = random_workload(9, model.cfg.vocab_size, (2, 12), (3, 8), seed=2)
    engine = PaddedBatchEngine(model, policy="continuous", max_batch=4)
    run = serve(engine, work, [0.0] * 9)
    assert max(len(s["decode"]) for s in run.steps) == 4  # never more than max_batch
    assert engine.cache is None and engine.rows == [] and not engine.has_work()  # every row left
    assert run.tokens == [r.tokens[0].tolist() for r in solo_runs(model, work)]
    kinds = {kind for s in run.steps for kind, _, _ in s["calls"]}
    assert {"prefill", "sample", "setup", "join", "decode", "leave"} <= kinds  # every part of an iteration timed


def test_eos_ends_a_row_and_abort_drops_a_request():
    model = tiny_model("GQA")
    prompts = [[5, 6, 7], [8, 9], [10, 11, 12, 13]]
    solo = [r.tokens[0].tolist() for r in solo_runs(model, Workload(prompts, [8, 8, 8]))]
    for policy in POLICIES:
        engine = PaddedBatchEngine(model, policy=policy, max_batch=3, timeout_s=0.0)
        eos = solo[0][2]
        rid = engine.add_request(prompts[0], 8, eos_id=eos)
        engine.add_request(prompts[1], 8)
        gone = engine.add_request(prompts[2], 8, arrival_time=10.0)
        engine.abort(gone)  # it never starts
        run = engine.run()
        assert run.tokens[rid] == solo[0][:solo[0].index(eos) + 1] and run.requests[rid].done == "eos", policy
        assert run.tokens[1] == solo[1] and run.requests[gone].done == "aborted" and run.tokens[gone] == []
        assert run.summary()["n"] == 2  # the aborted request got no token: not counted


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

COSTS = StepCostModel(fixed=0.0005, per_forward=0.001, per_row=0.0005, per_token=0.0001)


def P(tokens: int) -> float:
    """A replayed prefill iteration of ``tokens`` tokens."""
    return COSTS.seconds(0, tokens)


def D(rows: int) -> float:
    """A replayed decode iteration of ``rows`` rows."""
    return COSTS.seconds(rows, 0)


def _replay(policy, arrival, n_new=3, lens=(10, 10, 10, 10), **kw):
    work = Workload([[1] * n for n in lens], [n_new] * len(lens) if isinstance(n_new, int) else list(n_new))
    return serve(PaddedBatchEngine(None, policy=policy, costs=COSTS, **kw), work, arrival)


def test_fifo_serves_each_request_on_arrival_when_the_server_is_free():
    run = _replay("fifo", [0.0, 1.0, 2.0, 3.0])  # a second apart: each is done long before the next
    assert [r.wait_s for r in run.requests] == [0.0] * 4
    one = P(10) + 2 * D(1)  # one request alone: a prefill and two decode steps
    assert [r.e2e_s for r in run.requests] == pytest.approx([one] * 4)
    assert run.busy_s == pytest.approx(4 * one) and run.makespan_s == pytest.approx(3 + one)
    s = run.summary()
    assert s["tokens_per_s"] == pytest.approx(12 / run.makespan_s) and s["requests_per_s"] == pytest.approx(4 / run.makespan_s)
    assert s["busy_tokens_per_s"] == pytest.approx(12 / run.busy_s)
    assert s["tpot_p50_s"] == pytest.approx(D(1))
    assert run.tokens == [[-1] * 3] * 4  # a replay: placeholder tokens


def test_static_batch_waits_to_fill_and_counts_the_wait_in_ttft():
    run = _replay("static", [0.0, 1.0, 2.0, 3.0], max_batch=4, timeout_s=10.0)
    assert [r.wait_s for r in run.requests] == [3.0, 2.0, 1.0, 0.0]  # it starts when its last request is there
    assert len({r.ttft_s + r.arrival_s for r in run.requests}) == 1  # one batch: every first token at once
    assert run.requests[0].ttft_s == pytest.approx(3.0 + P(40))  # 4 rows x 10 tokens in one prefill
    timed_out = _replay("static", [0.0, 1.0, 2.0, 3.0], max_batch=4, timeout_s=0.5)
    assert [r.wait_s for r in timed_out.requests] == [0.5] * 4  # nobody else came within the timeout


def test_static_rows_ride_along_to_the_longest_and_pad_to_the_longest_prompt():
    run = _replay("static", [0.0, 0.0], n_new=[2, 5], lens=(4, 20), max_batch=2)
    short, long = run.requests
    assert short.token_times[0] == long.token_times[0] == pytest.approx(P(2 * 20))
    assert len(short.token_times) == 2 and len(long.token_times) == 5
    assert run.busy_s == pytest.approx(P(40) + 4 * D(2))  # four steps of two rows
    assert [len(s["decode"]) for s in run.steps[1:]] == [2] * 4 and run.steps[0]["prefill_tokens"] == 40


def test_continuous_batching_admits_at_the_next_step_and_finished_rows_leave():
    p = P(10)
    run = _replay("continuous", [0.0, p + D(1) / 2], n_new=[4, 2], lens=(10, 10), max_batch=2)
    first, second = run.requests
    assert first.token_times[:2] == pytest.approx([p, p + D(1)])  # alone for one step
    assert second.start_s == pytest.approx(p + D(1))  # arrived during that step: joins after it
    assert second.wait_s == pytest.approx(D(1) / 2)
    t = second.start_s + p  # its prefill stalls the running row: an ITL spike for the first request
    assert first.token_times[2] == pytest.approx(t + D(2))
    assert second.token_times == pytest.approx([t, t + D(2)])
    assert first.token_times[3] == pytest.approx(t + D(2) + D(1))  # the second left
    assert max(first.itl_s) == pytest.approx(p + D(2))


def test_the_trace_shows_arrivals_joins_and_leaves_and_folds_quiet_decode_steps():
    p = P(10)
    run = _replay("continuous", [0.0, p + D(1) / 2], n_new=[6, 2], lens=(10, 10), max_batch=2)
    lines = run.trace().splitlines()
    assert lines[0].split() == ["iteration", "clock", "(ms)", "ran", "batch", "after", "what", "happened"]
    assert "prefill r0 (10 tokens)" in lines[1] and "arrived: r0 (0.0 ms); joined: r0" in lines[1]
    assert "decode r0" in lines[2] and f"arrived: r1 ({(p + D(1) / 2) * 1e3:.1f} ms)" in lines[2]  # waits for the step
    assert "prefill r1 (10 tokens)" in lines[3] and "r0 r1" in lines[3] and "joined: r1" in lines[3]
    assert "decode r0 r1" in lines[4] and "r1 done, leaves" in lines[4]  # its second token: its last
    assert lines[5].split()[0] == "4-5" and "2 decode steps of r0" in lines[5]  # nothing happens: folded
    assert lines[6].split()[0] == "6" and "r0 done, leaves" in lines[6] and len(lines) == 7
    words = [line.split() for line in lines]  # the columns' widths follow the lines shown
    assert [line.split() for line in run.trace(until_leaves=1).splitlines()] == words[:5]
    assert [line.split() for line in run.trace(max_lines=2).splitlines()] == words[:3]
    with pytest.raises(ValueError, match="max_lines"):
        run.trace(max_lines=0)


def test_the_trace_of_a_static_batch_says_finished_rows_ride_along_and_speaks_chinese():
    from utils.i18n import set_language

    run = _replay("static", [0.0, 0.0], n_new=[2, 4], lens=(4, 20), max_batch=2)
    text = run.trace()
    assert "prefill r0 r1 (24 tokens)" in text and "r0 done, its row rides along" in text
    assert "decode r0 r1" in text.splitlines()[-1] and "r1 done, leaves" in text.splitlines()[-1]
    set_language("zh")
    try:
        zh = run.trace()
    finally:
        set_language("en")
    assert zh.splitlines()[0].split() == ["迭代", "时钟（ms）", "运行了什么", "之后的批", "发生了什么"]
    assert "预填充 r0 r1（24 个 token）" in zh and "r0 完成，它的行继续陪跑" in zh


def test_the_rate_sweep_figure_names_the_policies_once_under_its_three_panels():
    """The legend used to sit in the third panel only; it is one legend for the figure, with the two line styles."""
    from utils.plots import plot_rate_sweep

    rates = [100.0, 300.0]
    sweep = {"rate": rates, **{p: [_replay(p, poisson_arrivals(4, r, seed=1)).summary() for r in rates]
                               for p in POLICIES}}
    fig = plot_rate_sweep(sweep)
    assert len(fig.axes) == 3 and all(ax.get_legend() is None for ax in fig.axes)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [*POLICIES, "p50 (median)", "p95"]


def test_tied_policies_in_the_rate_sweep_stay_visible_nested_and_the_figure_says_so():
    """Where the policies tied (low rates), the last line drawn hid the others: each policy now has its own
    marker and width, wide and hollow under narrow and filled, and a note says coinciding lines are ties."""
    from utils.plots import plot_rate_sweep

    rates = [10.0, 20.0]  # far apart arrivals: the three policies serve alike
    sweep = {"rate": rates, **{p: [_replay(p, poisson_arrivals(4, r, seed=1)).summary() for r in rates]
                               for p in POLICIES}}
    fig = plot_rate_sweep(sweep)
    lines = [line for line in fig.axes[2].get_lines()]
    assert len({line.get_marker() for line in lines}) == 3
    widths = [line.get_linewidth() for line in lines]
    assert widths == sorted(widths, reverse=True) and widths[0] > widths[-1]  # the first drawn is the widest
    assert any("coincide" in t.get_text() for t in fig.texts)


def test_the_schedule_draws_every_decode_gap_as_one_path():
    """A thousand bars were a thousand paths (most of a panel step); now one path holds every bar of a part."""
    from matplotlib.patches import PathPatch

    from utils.plots import plot_schedules

    run = _replay("continuous", poisson_arrivals(4, 300.0, seed=1))
    fig = plot_schedules({"continuous": run.schedule()})
    (decode,) = [a for a in fig.axes[0].patches if a.get_label() == "decode steps (one per token)"]
    gaps = sum(len(r.token_times) - 1 for r in run.requests)
    assert isinstance(decode, PathPatch) and len(decode.get_path().vertices) == 5 * gaps
    ends = max(t for r in run.requests for t in r.token_times) * 1e3
    assert fig.axes[0].get_xlim()[1] >= ends  # the axes reach the last token: the limits saw the path


def test_the_ttft_parts_figure_keeps_its_legend_off_the_bars():
    """The timeline's legend sat inside the axes, over the first request's decode steps: it goes above them."""
    from utils.plots import plot_ttft_parts

    run = _replay("fifo", [0.0, P(10)], n_new=[6, 3], lens=(10, 10))
    fig = plot_ttft_parts(run.schedule(), 1)
    fig.canvas.draw()
    timeline = fig.axes[0]
    legend = timeline.get_legend().get_window_extent()
    assert legend.y0 >= timeline.get_window_extent().y1 - 1  # above the axes, not over the bars


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


def test_a_replay_of_a_real_run_gives_back_its_measured_time_never_falling_with_size():
    """Each measured size replays at its measured mean, except where a bigger size measured cheaper:
    those are pooled (isotonic), so the replayed cost never falls and the total time is kept."""
    model = tiny_model("GQA")
    work = random_workload(12, model.cfg.vocab_size, (2, 12), (2, 9), seed=5)
    arrival = poisson_arrivals(len(work), 3000.0, seed=1)
    runs = [serve(PaddedBatchEngine(model, policy=p, max_batch=4), work, arrival) for p in POLICIES]
    costs = StepCostModel.fit(runs)
    for pure, size, replayed in (("decode", lambda s: len(s["decode"]), lambda n: costs.seconds(n, 0)),
                                 ("prefill", lambda s: s["prefill_tokens"], lambda n: costs.seconds(0, n))):
        measured = {}
        for s in (s for run in runs for s in run.steps):
            if s[pure]:
                measured.setdefault(size(s), []).append(s["end_s"] - s["start_s"])
        assert len(measured) > 1, pure
        sizes = sorted(measured)
        replays = [replayed(n) for n in sizes]
        assert replays == sorted(replays), (pure, replays)  # never cheaper for more work
        total = sum(sum(measured[n]) for n in sizes)
        assert sum(len(measured[n]) * r for n, r in zip(sizes, replays)) == pytest.approx(total, rel=1e-9), pure
        means = [np.mean(measured[n]) for n in sizes]
        for i, n in enumerate(sizes):  # a size that no neighbour undercut keeps exactly its own mean
            if all(means[j] <= means[i] for j in range(i)) and all(means[j] >= means[i] for j in range(i + 1, len(sizes))):
                assert replayed(n) == pytest.approx(means[i], rel=1e-9, abs=0), (pure, n)
    replay = serve(PaddedBatchEngine(model.cfg, policy="fifo", costs=costs), work, arrival)
    assert replay.summary()["tokens"] == runs[0].summary()["tokens"]
    assert [len(t) for t in replay.tokens] == work.max_new_tokens


def test_bad_engine_and_request_arguments_raise_naming_them():
    model = tiny_model("GQA")
    for kwargs, name in ((dict(policy="lifo"), "policy"), (dict(max_batch=0), "max_batch"),
                         (dict(timeout_s=-1.0), "timeout_s"), (dict(timeout_s=math.inf), "timeout_s"),
                         (dict(step="fast"), "step"), (dict(costs="fast"), "costs")):
        with pytest.raises(ValueError, match=name):
            PaddedBatchEngine(model, **kwargs)
    with pytest.raises(ValueError, match="model"):
        PaddedBatchEngine(None)  # no costs: a model must run
    engine = PaddedBatchEngine(model)
    for args, kwargs, name in ((([1, 2], 0), {}, "max_new_tokens"), (([1, 2], 2), dict(arrival_time=-1.0), "arrival_time"),
                               (([], 2), {}, "at least one token"), (([1, 500], 2), {}, "token ids"),
                               (([1] * 250, 10), {}, "max_seq_len")):
        with pytest.raises(ValueError, match=name):
            engine.add_request(*args, **kwargs)
    with pytest.raises(ValueError, match="arrival_s"):
        serve(engine, Workload([[1, 2], [3]], [2, 2]), [0.0])
    with pytest.raises(ValueError, match="unknown request id"):
        engine.abort(3)
