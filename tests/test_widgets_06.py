"""Notebook 06's panel: the memory-bandwidth limit of decode, driven without a browser."""
import random

import matplotlib
import matplotlib.pyplot as plt
import pytest

matplotlib.use("Agg")

from utils.flops import decode_step_cost  # noqa: E402
from utils.perf import decode_bound  # noqa: E402
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
