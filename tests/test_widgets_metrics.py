"""Notebook 06's panel: the memory-bandwidth limit of decode, driven without a browser."""
import random
import re

import matplotlib
import matplotlib.pyplot as plt

import pytest

matplotlib.use("Agg")

from utils.flops import decode_step_cost  # noqa: E402
from utils.roofline import decode_bound  # noqa: E402
from utils.sizing import cache_bytes_for  # noqa: E402
from utils.widgets import BATCH_CHOICES, CONTEXT_CHOICES, DecodeBoundPanel  # noqa: E402


def _ok(state):
    assert "error" not in state, state.get("error")


def no_plot(panel):
    """The sweeps check numbers and HTML; drawing ~600 figures would only make the test slow."""
    panel.plot = lambda state: None
    return panel


@pytest.fixture(scope="module")
def panel():
    return no_plot(DecodeBoundPanel(measured_GBps=5.0))


def test_default_state_is_the_formula(panel):
    s = panel.state
    _ok(s)
    cfg = panel.models[s["model"]]
    bw = panel.hardware[s["hardware"]] * 1e9
    assert s["hardware"].startswith("this machine") and s["bandwidth_GBps"] == 5.0
    assert s["total"] == sum(decode_step_cost(cfg, s["T"], batch_size=s["B"], dtype=s["dtype"]).bytes.values())
    assert s["tpot_min_s"] == pytest.approx(s["total"] / bw)
    assert s["max_tokens_per_s"] == pytest.approx(s["B"] / s["tpot_min_s"])
    assert s["kv_memory"] == cache_bytes_for(cfg, s["B"], s["T"], s["dtype"])
    assert "fastest possible TPOT" in panel.html.value


def test_figures_at_the_extremes():
    p = DecodeBoundPanel(measured_GBps=5.0)
    assert p.fig is not None  # the default state is drawn
    c = p.controls
    for model, dtype, T in [("bench tiny", "int8", CONTEXT_CHOICES[0]), ("Llama-3.1-70B", "float32", CONTEXT_CHOICES[-1])]:
        c["model"].value, c["dtype"].value, c["T"].value = model, dtype, T
        for B in (BATCH_CHOICES[0], BATCH_CHOICES[-1]):
            c["B"].value = B
            _ok(p.state)
            fig = p.fig
            assert fig is not None and len(fig.axes) == 2
            assert all(ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes)
    plt.close("all")


def test_setting_controls_updates_the_state(panel):
    c = panel.controls
    c["model"].value, c["dtype"].value, c["B"].value, c["T"].value = "bench 100M", "float32", 8, 256
    c["hardware"].value = "NVIDIA H100 SXM (HBM3)"
    s = panel.state
    _ok(s)
    want = decode_bound(panel.models["bench 100M"], 8, 256, 3350e9, "float32")
    assert s["total"] == want["total"] and s["tpot_min_s"] == pytest.approx(want["tpot_min_s"])
    assert s["bytes_per_token"] == pytest.approx(want["total"] / 8)
    # batching shares the weights: bytes per new token fall as B grows
    per_token = [r["bytes_per_token"] for r in s["sweep"]]
    assert per_token == sorted(per_token, reverse=True)
    assert [r["B"] for r in s["sweep"]] == BATCH_CHOICES


def test_every_control_over_its_whole_range(panel):
    for name, w in panel.controls.items():
        start = w.value
        for option in w.options:
            w.value = option[1] if isinstance(option, tuple) else option
            _ok(panel.state)
            assert panel.html.value
        w.value = start


def test_random_combinations_never_fail(panel):
    rng = random.Random(6)
    c = panel.controls
    for _ in range(120):
        for w in c.values():
            w.value = rng.choice(list(w.options))
        s = panel.state
        _ok(s)
        assert panel.html.value and s["tpot_min_s"] > 0 and 0 <= s["kv_share"] < 1


def test_without_a_measurement_and_beyond_the_context():
    p = DecodeBoundPanel(model="GPT-2 (124M)", T=CONTEXT_CHOICES[-1])
    _ok(p.state)
    assert not any(h.startswith("this machine") for h in p.hardware)
    assert "beyond" in p.html.value  # GPT-2 reads 1024 tokens at most: shown, not an error


# --- the compute roof: the limit is max(bytes / bandwidth, FLOPs / peak) ---------------------------

def test_a_measured_peak_adds_the_compute_roof_and_the_ridge_batch():
    from utils.roofline import Roofs, ridge_batch

    p = no_plot(DecodeBoundPanel(measured_GBps=40.0, measured_GFLOPS=100.0, model="bench 50M", dtype="float32", T=256))
    cfg = p.models["bench 50M"]
    for B in BATCH_CHOICES:
        p.controls["B"].value = B
        s = p.state
        _ok(s)
        want = decode_bound(cfg, B, 256, 40e9, "float32", 100e9)
        assert s["peak_flops"] == 100e9 and s["compute_s"] == pytest.approx(want["flops"] / 100e9)
        assert s["tpot_min_s"] == pytest.approx(max(s["memory_s"], s["compute_s"]))
        assert s["max_tokens_per_s"] == pytest.approx(B / s["tpot_min_s"])
        assert s["ridge"] == ridge_batch(cfg, 256, Roofs("cpu", 100e9, 40e9), "float32")
        assert s["bound_by"] == ("compute" if B >= s["ridge"] else "memory")
        assert "ridge batch" in p.html.value
    limits = [r["max_tokens_per_s"] for r in s["sweep"]]
    assert limits[-1] == pytest.approx(limits[-2], rel=0.05)  # past the ridge, tokens/s stay at the compute roof


def test_without_a_published_peak_the_limit_is_memory_only(panel):
    c = panel.controls
    c["model"].value, c["B"].value, c["T"].value, c["dtype"].value = "bench 50M", 256, 256, "bfloat16"
    for hardware in ("laptop, 2 x DDR5-5600", next(h for h in panel.hardware if h.startswith("this machine"))):
        c["hardware"].value = hardware
        s = panel.state
        _ok(s)
        assert s["peak_flops"] is None and s["compute_s"] == 0 and s["ridge"] is None
        assert s["tpot_min_s"] == pytest.approx(s["memory_s"]) and "memory roof only" in panel.html.value
    c["hardware"].value = "NVIDIA H100 SXM (HBM3)"
    assert panel.state["peak_flops"] == 989e12  # bfloat16, dense, from the datasheet


def test_the_measured_machine_says_not_measured_and_the_table_has_one_ms_format():
    """Before: "no published bfloat16 peak" for this machine (measured), and "6.08e+03 ms" beside "6,084.75 ms"."""
    p = no_plot(DecodeBoundPanel(measured_GBps=0.05, measured_GFLOPS=1.0, model="bench 50M", dtype="bfloat16", T=256))
    p.controls["B"].value = 256
    assert "not measured in bfloat16 on this machine" in p.html.value and "no published" not in p.html.value
    assert not re.search(r"\de[+-]\d", p.html.value)  # no scientific notation
    p.controls["dtype"].value = "float32"
    assert not re.search(r"\de[+-]\d", p.html.value) and "GFLOP / " in p.html.value
    # thousands of GFLOP per step (an 8B model, 256 rows) read "4,390 GFLOP", not "4.39e+03 GFLOP"
    s = p.compute("Llama-3-8B", "float32", 256, 4096, next(h for h in p.hardware if h.startswith("this machine")))
    assert s["flops"] > 1e12 and not re.search(r"\de[+-]\d", p.render(s))


def test_the_panel_speaks_the_notebooks_units_and_warns_when_the_batch_does_not_fit():
    """Before: 142.9 MiB in the panel for the 152.0 MB the notebook prints, and 77 tok/s shown for a
    10 TiB cache on an 80 GB H100 without a word."""
    p = DecodeBoundPanel(measured_GBps=14, model="bench 50M", dtype="float32", T=256)
    assert "152.0 MB" in p.html.value and "MiB" not in p.html.value and "does not fit" not in p.html.value
    s = p.compute("Llama-3.1-70B", "bfloat16", 256, 131072, "NVIDIA H100 SXM (HBM3)")
    assert s["weight_memory"] + s["kv_memory"] > s["device_memory"] == 80e9
    assert "does not fit" in p.render(s)
    s = p.compute("Llama-3-8B", "bfloat16", 1, 4096, "NVIDIA H100 SXM (HBM3)")  # 16 GB + 0.5 GB: fits
    assert "does not fit" not in p.render(s)


def test_the_bound_figure_draws_both_roofs_and_the_ridge():
    p = DecodeBoundPanel(measured_GBps=40.0, measured_GFLOPS=100.0, model="bench 50M", dtype="float32", T=256)
    labels = p.fig.axes[0].get_legend_handles_labels()[1]
    assert {"memory roof", "compute roof", "the limit"} <= set(labels)
    assert any(label.startswith("ridge batch B = ") for label in labels)
    # the limit follows the roofs: drawn under them as a pale band, it no longer hides them
    lines = {line.get_label(): line for line in p.fig.axes[0].get_lines()}
    limit = lines["the limit"]
    assert all(lines[roof].get_zorder() > limit.get_zorder() for roof in ("memory roof", "compute roof"))
    assert limit.get_alpha() < 1
    plt.close("all")


# --- staggered arrivals, served three ways on replayed costs ------------------------------------

from utils.serving import POLICIES, PaddedBatchEngine, StepCostModel, Workload, poisson_arrivals, serve  # noqa: E402
from utils.widgets.metrics import MAX_BATCH_CHOICES, RATE_CHOICES, TIMEOUT_CHOICES_MS, ArrivalsPanel  # noqa: E402

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)

COSTS = StepCostModel(fixed=1e-5, per_forward=5e-4, per_row=1e-4, per_token=7e-5,
                      decode_by_rows=((1, 6e-4), (2, 6.5e-4), (4, 9e-4)))
LENS, NEW = [8, 40, 17, 25, 48, 9, 30, 12, 44, 20], [10, 3, 25, 40, 8, 16, 1, 33, 12, 20]


@pytest.fixture(scope="module")
def arrivals_panel():
    return no_plot(ArrivalsPanel(COSTS, LENS, NEW, seed=2))


def test_arrivals_state_is_the_schedule_of_each_policy(arrivals_panel):
    c = arrivals_panel.controls
    c["rate"].value, c["max_batch"].value, c["timeout_ms"].value = 200, 4, 50
    s = arrivals_panel.state
    _ok(s)
    arrival = poisson_arrivals(len(NEW), 200, seed=2)
    for p in POLICIES:
        engine = PaddedBatchEngine(None, policy=p, max_batch=4, timeout_s=0.05, costs=COSTS)
        want = serve(engine, Workload([[0] * n for n in LENS], NEW), arrival).summary()
        got = s["runs"][p]
        assert all(got[k] == pytest.approx(v) for k, v in want.items() if k != "name")
        assert got["arrival_s"] == arrival
    html_text = arrivals_panel.html.value
    assert all(name in html_text for name in ("one at a time (FIFO)", "static batches", "continuous batching"))
    assert "numpy's default" in html_text
    assert "ITL p50 / p95" in html_text  # the stalls of continuous batching show in the ITL, not in the TPOT


def test_every_arrivals_setting_computes_without_an_error(arrivals_panel):
    c = arrivals_panel.controls
    for rate in RATE_CHOICES:
        for B in MAX_BATCH_CHOICES:
            for timeout in TIMEOUT_CHOICES_MS:
                c["rate"].value, c["max_batch"].value, c["timeout_ms"].value = rate, B, timeout
                s = arrivals_panel.state
                _ok(s)
                for r in s["runs"].values():
                    assert r["ttft_p50_s"] > 0 and r["tokens_per_s"] > 0 and r["requests_per_s"] > 0
                    assert sum(len(t) for t in r["token_times"]) == sum(NEW)


def test_arrivals_figure_has_a_timeline_per_policy():
    p = ArrivalsPanel(COSTS, LENS, NEW, rate=50)
    assert p.fig is not None and len(p.fig.axes) == len(POLICIES)
    assert all(ax.get_ylabel() == "request" for ax in p.fig.axes) and p.fig.axes[-1].get_xlabel() == "time (ms)"
    plt.close("all")


def test_the_same_rate_gives_the_same_schedule_and_a_bad_workload_is_refused():
    a, b = no_plot(ArrivalsPanel(COSTS, LENS, NEW, rate=100)), no_plot(ArrivalsPanel(COSTS, LENS, NEW, rate=100))
    assert a.state["runs"]["continuous"]["token_times"] == b.state["runs"]["continuous"]["token_times"]
    with pytest.raises(ValueError, match="one prompt length per request"):
        ArrivalsPanel(COSTS, LENS, NEW[:-1])
    with pytest.raises(ValueError, match="prompt_lens"):
        ArrivalsPanel(COSTS, [4, 0], [2, 2])
    with pytest.raises(ValueError, match="StepCostModel"):
        ArrivalsPanel("fast", LENS, NEW)


def test_arrivals_panel_draws_its_extreme_positions_and_shows_a_seen_position_again_without_drawing():
    """A slider step drew three timelines (0.6-0.8 s on a loaded machine); a position seen before now
    reuses its figure and picture, and the extreme positions draw without an error."""
    p = ArrivalsPanel(COSTS, LENS, NEW, rate=50)
    c = p.controls
    for rate, B, timeout in ((RATE_CHOICES[0], MAX_BATCH_CHOICES[0], TIMEOUT_CHOICES_MS[-1]),
                             (RATE_CHOICES[-1], MAX_BATCH_CHOICES[-1], TIMEOUT_CHOICES_MS[0])):
        c["rate"].value, c["max_batch"].value, c["timeout_ms"].value = rate, B, timeout
        _ok(p.state)
        assert p.fig is not None and "error" not in p.state
    c["rate"].value = RATE_CHOICES[-2]
    seen = p.fig
    c["rate"].value = RATE_CHOICES[-1]
    c["rate"].value = RATE_CHOICES[-2]
    assert p.fig is seen
    plt.close("all")
