"""Notebook 11's panel: the engine's iterations over time, replayed on fitted step costs, driven without a browser."""
import random

import matplotlib
import matplotlib.pyplot as plt
import pytest

matplotlib.use("Agg")

from utils.serving import PagedEngine, StepCostModel, Workload, poisson_arrivals, random_workload  # noqa: E402
from utils.widgets import EngineTimelinePanel  # noqa: E402
from utils.widgets.serving import (  # noqa: E402
    BUDGET_CHOICES, CHUNK_CHOICES, FIT_SETTINGS, RATE_CHOICES, fit_step_costs,
)

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)

COSTS = StepCostModel(fixed=4e-5, per_forward=7e-4, per_row=1.2e-4, per_token=3.4e-5)
WORK = random_workload(12, 64, prompt_lens=(8, 40), new_tokens=(4, 24), seed=3)


def _ok(state):
    assert "error" not in state, state.get("error")


def no_plot(panel):
    """The sweeps check numbers and HTML; drawing a figure per setting would only make the test slow."""
    panel.plot = lambda state: None
    return panel


@pytest.fixture(scope="module")
def course():
    from utils.course_model import load_course_model

    return load_course_model()


@pytest.fixture(scope="module")
def panel(course):
    return no_plot(EngineTimelinePanel(course[0].cfg, WORK, seed=1, costs=COSTS))


def _replay(cfg, rate, budget, chunk, seed=1):
    engine = PagedEngine(cfg, n_blocks=64, block_size=16, max_batch=8, max_batch_tokens=budget, prefill_chunk=chunk,
                         costs=COSTS)
    for p, n, t in zip(WORK.prompts, WORK.max_new_tokens, poisson_arrivals(len(WORK), rate, seed)):
        engine.add_request(p, n, arrival_time=t)
    return engine.run()


def test_state_is_the_replayed_engine_run(panel, course):
    c = panel.controls
    c["rate"].value, c["max_batch_tokens"].value, c["prefill_chunk"].value = 400, 16, 8
    s = panel.state
    _ok(s)
    want = _replay(course[0].cfg, 400, 16, 8)
    assert s["steps"] == want.steps and s["summary"] == want.summary()
    assert s["schedule"]["token_times"] == [r.token_times for r in want.requests]
    assert s["n_preempted"] == sum(r.n_preempted for r in want.requests)
    assert s["longest_ms"] == pytest.approx(max(x["end_s"] - x["start_s"] for x in want.steps) * 1e3)
    assert s["summary"]["tokens"] == sum(WORK.max_new_tokens)
    html = panel.html.value
    assert all(k in html for k in ("TTFT p50 / p95", "TPOT p50 / p95", "ITL p50 / p95", "tokens/s", "requests/s"))
    assert f"{s['summary']['ttft_p50_s'] * 1e3:,.1f} / {s['summary']['ttft_p95_s'] * 1e3:,.1f} ms" in html


def test_off_means_no_chunk_limit(panel):
    c = panel.controls
    c["rate"].value, c["max_batch_tokens"].value, c["prefill_chunk"].value = 1600, 256, 0
    s = panel.state
    _ok(s)
    assert s["prefill_chunk"] is None
    first = {}
    for step in s["steps"]:
        for rid, n in step["prefill"]:
            first.setdefault(rid, n)
    assert first == {i: len(p) for i, p in enumerate(WORK.prompts)}  # each prompt in one piece
    assert [label for label, _ in c["prefill_chunk"].options][0] == "off"


def test_every_setting_computes_and_keeps_the_budget_and_the_chunk(panel):
    c = panel.controls
    settings = [(200, b, k) for b in BUDGET_CHOICES for k in CHUNK_CHOICES]
    settings += [(r, 32, 16) for r in RATE_CHOICES]
    rng = random.Random(0)
    settings += [(rng.choice(RATE_CHOICES), rng.choice(BUDGET_CHOICES), rng.choice(CHUNK_CHOICES)) for _ in range(8)]
    for rate, budget, chunk in settings:
        c["rate"].value, c["max_batch_tokens"].value, c["prefill_chunk"].value = rate, budget, chunk
        s = panel.state
        _ok(s)
        assert (s["rate"], s["max_batch_tokens"], s["prefill_chunk"]) == (rate, budget, chunk or None)
        assert all(len(x["decode"]) + sum(n for _, n in x["prefill"]) <= budget for x in s["steps"])
        assert s["max_chunk"] <= (chunk or budget)
        assert s["summary"]["tokens"] == sum(WORK.max_new_tokens) and s["summary"]["ttft_p50_s"] > 0
        assert panel.html.value and "&#9888;" not in panel.html.value


def test_chunks_bound_the_longest_iteration_and_delay_the_first_token(panel):
    c = panel.controls
    c["rate"].value, c["max_batch_tokens"].value = 100, 256
    c["prefill_chunk"].value = 0
    off = panel.state
    c["prefill_chunk"].value = 4
    small = panel.state
    assert small["longest_ms"] < off["longest_ms"]  # modelled costs: deterministic
    assert small["summary"]["ttft_p50_s"] > off["summary"]["ttft_p50_s"]


def test_the_figure_has_the_iterations_above_the_requests(course):
    p = EngineTimelinePanel(course[0].cfg, WORK, costs=COSTS)
    assert p.fig is not None and len(p.fig.axes) == 2
    assert p.fig.axes[0].get_ylabel() == "tokens in the iteration" and p.fig.axes[1].get_ylabel() == "request"
    assert p.fig.axes[1].get_xlabel() == "time (ms)"
    plt.close("all")


def test_costs_are_fitted_to_a_real_run_when_none_are_given(course):
    model, _ = course
    small = Workload(WORK.prompts[:6], WORK.max_new_tokens[:6])
    costs, runs = fit_step_costs(model, small, rate=500.0)
    assert isinstance(costs, StepCostModel) and costs.seconds(4, 16) > 0 and costs.decode_by_rows  # means kept
    assert list(runs) == list(FIT_SETTINGS) and all(r.tokens == runs[list(runs)[0]].tokens for r in runs.values())
    p = no_plot(EngineTimelinePanel(model, small))
    _ok(p.state)
    assert isinstance(p.costs, StepCostModel) and p.state["summary"]["tokens"] == sum(small.max_new_tokens)
    assert list(p.fit_runs) == list(FIT_SETTINGS)
    assert EngineTimelinePanel(model.cfg, small, costs=costs).fit_runs == {}


def test_a_bad_workload_is_refused(course):
    with pytest.raises(ValueError, match="workload"):
        EngineTimelinePanel(course[0].cfg, [[1, 2, 3]], costs=COSTS)
    with pytest.raises(ValueError, match="workload"):
        EngineTimelinePanel(course[0].cfg, Workload([], []), costs=COSTS)


def test_the_gpu_like_costs_replay_one_pass_per_iteration_and_the_chunk_barely_moves_itl(panel):
    from utils.widgets.serving import GPU_COSTS

    c = panel.controls
    c["machine"].value = "gpu"
    try:
        states = {}
        for chunk in (0, 16):
            c["rate"].value, c["max_batch_tokens"].value, c["prefill_chunk"].value = 200, 32, chunk
            states[chunk] = panel.state
            _ok(states[chunk])
            assert states[chunk]["machine"] == "gpu" and "roofline" in panel.html.value
            for s in states[chunk]["steps"]:
                want = GPU_COSTS.seconds(len(s["decode"]), s["prefill_tokens"])
                assert s["end_s"] - s["start_s"] == pytest.approx(want)
        # a budget of 32 stays below the ridge: every busy iteration costs the same, chunked or not
        assert states[0]["summary"]["itl_p95_s"] == pytest.approx(states[16]["summary"]["itl_p95_s"])
    finally:
        c["machine"].value = "cpu"
    assert panel.state["machine"] == "cpu"
