"""Widgets of 04_cache_sizing: the explorer shows exactly kv_cache_bytes, the planner max_concurrent_requests."""
import random
import re

import ipywidgets as widgets
import matplotlib
import pytest

matplotlib.use("Agg")

from utils import MODEL_PRESETS, kv_cache_bytes  # noqa: E402
from utils.sizing import DTYPE_BYTES, bytes_per_element, cache_bytes_for, max_concurrent_requests  # noqa: E402
from utils.widgets import CUSTOM, BudgetPlanner, KVCacheExplorer  # noqa: E402

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)

EXPLORER_CONTROLS = ("T", "L", "H_kv", "B", "d_h", "dtype")
BYTES_SPAN = re.compile(r'<span class="kv-bytes">([\d,]+) bytes \(([\d.]+ (?:B|KiB|MiB|GiB|TiB|PiB))\)</span>')


def full_range(w) -> list:
    """Every value a control can take, extremes included."""
    if isinstance(w, widgets.IntSlider):
        return list(range(w.min, w.max + 1, w.step))
    if isinstance(w, widgets.FloatSlider):
        n = round((w.max - w.min) / w.step)
        return [round(w.min + i * w.step, 10) for i in range(n + 1)]
    return [o[1] if isinstance(o, tuple) else o for o in w.options]


def no_plot(panel):
    """The figure only depends on ``state``; skip drawing it in the long sweeps (tested separately)."""
    panel.plot = lambda state: None
    return panel


def expected_bytes(v: dict) -> int:
    return kv_cache_bytes(v["L"], v["B"], v["H_kv"], v["T"], v["d_h"], v["dtype"])


def check_explorer(p: KVCacheExplorer) -> None:
    v = p.values()
    assert "error" not in p.state, p.state.get("error")
    n = expected_bytes(v)
    assert p.state["bytes"] == n
    m = BYTES_SPAN.search(p.html.value)
    assert m, p.html.value
    assert m.group(1) == f"{n:,}" and int(m.group(1).replace(",", "")) == n
    assert f"{n:,} bytes" in p.html.value


@pytest.fixture(scope="module")
def explorer():
    return no_plot(KVCacheExplorer())


def test_controls_are_named_for_the_browser_test(explorer):
    assert set(EXPLORER_CONTROLS) <= set(explorer.controls)
    assert isinstance(explorer.controls["dtype"], widgets.Dropdown)
    assert set(full_range(explorer.controls["dtype"])) == set(DTYPE_BYTES)


def test_default_shows_llama3_8b_at_4k():
    p = KVCacheExplorer()
    assert p.values() == {"preset": "Llama-3-8B", "T": 4096, "L": 32, "H_kv": 8, "B": 1, "d_h": 128, "dtype": "float16"}
    assert p.state["bytes"] == 536_870_912 == cache_bytes_for(MODEL_PRESETS["Llama-3-8B"], 1, 4096)
    assert '<span class="kv-bytes">536,870,912 bytes (512.0 MiB)</span>' in p.html.value
    assert p.fig is not None


def test_T_reaches_128k_and_every_preset_context(explorer):
    T = full_range(explorer.controls["T"])
    assert T == sorted(T) and T[0] == 1 and T[-1] >= 131072
    assert {4096, 32768, 131072} <= set(T)
    assert {cfg.max_seq_len for cfg in MODEL_PRESETS.values()} <= set(T)


@pytest.mark.parametrize("name", EXPLORER_CONTROLS)
def test_each_control_over_its_full_range(explorer, name):
    w = explorer.controls[name]
    for value in full_range(w):
        w.value = value
        assert explorer.values()[name] == value
        check_explorer(explorer)


def test_random_combinations():
    p = no_plot(KVCacheExplorer())
    rng = random.Random(0)
    ranges = {name: full_range(p.controls[name]) for name in ("preset",) + EXPLORER_CONTROLS}
    for _ in range(150):
        names = list(ranges)
        rng.shuffle(names)  # the order of moves must not matter
        for name in names:
            p.controls[name].value = rng.choice(ranges[name])
        check_explorer(p)


@pytest.mark.parametrize("name", list(MODEL_PRESETS))
def test_preset_fills_the_model_sliders(explorer, name):
    c = explorer.controls
    c["preset"].value = CUSTOM
    c["T"].value, c["B"].value, c["dtype"].value = 32768, 3, "bfloat16"
    c["preset"].value = name
    cfg = MODEL_PRESETS[name]
    assert (c["L"].value, c["H_kv"].value, c["d_h"].value) == (cfg.n_layers, cfg.n_kv_heads, cfg.head_dim)
    assert (c["T"].value, c["B"].value, c["dtype"].value) == (32768, 3, "bfloat16")  # the user's, untouched
    assert explorer.state["bytes"] == cache_bytes_for(cfg, 3, 32768, "bfloat16")
    check_explorer(explorer)
    assert f"{cfg.max_seq_len:,} tokens" in explorer.html.value


def test_moving_a_model_slider_leaves_the_preset(explorer):
    c = explorer.controls
    c["preset"].value = "Mistral-7B"
    c["B"].value = 7  # not a model property: the preset stays
    assert c["preset"].value == "Mistral-7B"
    c["H_kv"].value = 32
    assert c["preset"].value == CUSTOM
    check_explorer(explorer)


def test_plots_at_the_extremes():
    p = KVCacheExplorer()
    for pick in (min, max):
        for name in EXPLORER_CONTROLS:
            w = p.controls[name]
            w.value = pick(full_range(w)) if name != "dtype" else ("float32" if pick is max else "int8")
        assert "error" not in p.state
        ax = p.fig.axes[0]
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    p.controls["preset"].value = "Llama-2-7B"  # draws the max-context line
    assert "error" not in p.state and p.fig is not None


# --- the budget planner ---------------------------------------------------------------------


def check_planner(p: BudgetPlanner) -> None:
    v = p.values()
    assert "error" not in p.state, p.state.get("error")
    cfg = MODEL_PRESETS[v["model"]]
    weights = cfg.n_params * bytes_per_element(v["weights_dtype"])
    n = max_concurrent_requests(cfg, v["T"], v["GPU_GiB"] * 2**30, weight_bytes=weights, dtype=v["dtype"],
                                reserve_fraction=v["reserve"])
    assert p.state["n_requests"] == n
    assert p.state["per_request_bytes"] == cache_bytes_for(cfg, 1, v["T"], v["dtype"])
    assert p.state["weight_bytes"] == weights
    # what the requests hold plus the weights never exceeds the usable memory
    assert n * p.state["per_request_bytes"] + weights <= v["GPU_GiB"] * 2**30 * (1 - v["reserve"]) or n == 0
    if p.state["weights_fit"]:
        assert f'<b class="n-requests">{n:,}</b>' in p.html.value
    else:
        assert n == 0 and "do not fit" in p.html.value
    # padding: the reserved cache splits exactly into real tokens and padding
    real_T = v["T"] * (1 - v["padding"])  # on average: not rounded to whole tokens
    assert p.state["real_tokens_per_request"] == round(real_T)
    assert p.state["real_bytes"] == round(n * cache_bytes_for(cfg, 1, v["T"], v["dtype"]) * (1 - v["padding"]))
    assert p.state["real_bytes"] + p.state["padding_bytes"] == p.state["cache_used_bytes"] == n * p.state["per_request_bytes"]
    if real_T < 1:  # under one real token per request: no count of requests holding a fraction of one
        assert p.state["n_if_real_only"] is None
    else:
        assert p.state["n_if_real_only"] == max_concurrent_requests(
            cfg, real_T, v["GPU_GiB"] * 2**30, weight_bytes=weights, dtype=v["dtype"], reserve_fraction=v["reserve"])
        assert p.state["n_if_real_only"] >= n
    if v["padding"] > 0 and p.state["weights_fit"] and real_T >= 1:
        assert f'<b class="n-real-only">{p.state["n_if_real_only"]:,}</b>' in p.html.value
    else:
        assert "n-real-only" not in p.html.value


@pytest.fixture(scope="module")
def planner():
    return no_plot(BudgetPlanner())


def test_planner_default():
    p = BudgetPlanner()
    check_planner(p)
    cfg = MODEL_PRESETS["Llama-3-8B"]
    assert p.state["n_requests"] == max_concurrent_requests(
        cfg, 8192, 80 * 2**30, weight_bytes=cfg.n_params * 2, dtype="bfloat16", reserve_fraction=0.1)
    assert p.state["n_requests"] > 0 and p.fig is not None


@pytest.mark.parametrize("name", ["model", "GPU_GiB", "weights_dtype", "dtype", "T", "reserve", "padding"])
def test_planner_each_control_over_its_full_range(planner, name):
    for value in full_range(planner.controls[name]):
        planner.controls[name].value = value
        check_planner(planner)


def test_planner_random_combinations():
    p = no_plot(BudgetPlanner())
    rng = random.Random(1)
    ranges = {name: full_range(w) for name, w in p.controls.items()}
    for _ in range(120):
        for name, options in ranges.items():
            p.controls[name].value = rng.choice(options)
        check_planner(p)


def test_planner_fewer_requests_when_longer():
    p = no_plot(BudgetPlanner())
    counts = []
    for T in (1024, 2048, 4096, 8192):
        p.controls["T"].value = T
        counts.append(p.state["n_requests"])
    assert counts == sorted(counts, reverse=True) and counts[0] >= 7 * counts[-1]


def test_planner_weights_that_do_not_fit():
    p = BudgetPlanner(model="Llama-3.1-70B", GPU_GiB=8, weights_dtype="float32")
    check_planner(p)
    assert p.state["n_requests"] == 0 and not p.state["weights_fit"]


def test_planner_padding_reserves_memory_for_nothing():
    """A left-padded static batch reserves T positions per request; with half of them padding,
    half the reserved cache holds nothing and twice the requests would fit holding real tokens only."""
    p = BudgetPlanner(T=8192, padding=0.5)
    check_planner(p)
    s = p.state
    assert s["real_tokens_per_request"] == 4096
    assert s["padding_bytes"] == s["real_bytes"] == s["cache_used_bytes"] // 2
    assert s["n_if_real_only"] == max_concurrent_requests(
        MODEL_PRESETS["Llama-3-8B"], 4096, 80 * 2**30, weight_bytes=MODEL_PRESETS["Llama-3-8B"].n_params * 2,
        dtype="bfloat16", reserve_fraction=0.1) >= 2 * s["n_requests"]
    labels = [t.get_text() for t in p.fig.axes[0].get_legend().get_texts()]
    assert "KV cache: padding" in labels
    assert len(p.fig.axes[1].get_lines()) >= 3  # both curves and the current setting


def test_planner_real_tokens_curve_has_no_steps_at_small_T():
    """Regression: real tokens per request were rounded to whole tokens, so at small T the curve of
    requests that would fit held flat between neighbouring T (1 and 2, 3 and 4) and drew steps."""
    s = no_plot(BudgetPlanner(T=8192, padding=0.4375)).state
    curve = s["curve_n_real_only"]
    assert curve[0] is None and all(c is not None for c in curve[1:])  # T = 1 holds 0.56 real tokens: no count
    assert all(a > b for a, b in zip(curve[1:], curve[2:]) if b > 0)  # falls at every longer T
    share = 1 - 0.4375
    reserved = s["curve_n"]  # the same memory, each request holding share x T tokens: 1 / share times as many
    assert all(abs(r / share - c) <= 1 / share + 1 for r, c in zip(reserved[1:], curve[1:]))  # up to the floors


def test_planner_with_no_request_that_fits_says_nothing_about_padding():
    """Regression: 0 requests of 128k positions with padding printed "of the 0 B of cache these requests occupy,
    0 B hold padding"; now only what would fit holding real tokens is said."""
    p = no_plot(BudgetPlanner(model="Llama-2-13B", GPU_GiB=192, T=131072, dtype="float32", weights_dtype="int8",
                              reserve=0.0, padding=0.9))
    assert p.state["n_requests"] == 0 and p.state["weights_fit"] and p.state["n_if_real_only"] == 8
    assert "padding-bytes" not in p.html.value and "hold padding" not in p.html.value
    assert '<b class="n-real-only">8</b> requests would fit' in p.html.value


def test_planner_without_padding_draws_one_curve():
    p = BudgetPlanner()
    assert p.values()["padding"] == 0.0 and p.state["padding_bytes"] == 0
    assert p.state["curve_n_real_only"] is None and "n-real-only" not in p.html.value
    assert "padding" not in " ".join(t.get_text() for t in p.fig.axes[0].get_legend().get_texts())


def test_planner_bad_padding_is_shown_not_raised():
    p = no_plot(BudgetPlanner())
    p.controls["padding"].max = 1.0
    p.controls["padding"].value = 1.0  # no real token at all: not a batch
    assert "padding must be in [0, 1)" in p.state["error"] and "padding" in p.html.value


def test_planner_redraws_one_figure_in_place():
    """A slider step moves the artists of one figure (a new figure per step rebuilt every tick: 0.45 s a step)."""
    p = BudgetPlanner()
    fig = p.fig
    p.controls["T"].value = 4096
    p.controls["padding"].value = 0.25
    assert p.fig is fig and "error" not in p.state
    e = KVCacheExplorer()
    fig = e.fig
    e.controls["T"].value = 131072
    assert e.fig is fig and "error" not in e.state


def test_planner_legend_names_only_what_is_drawn():
    """Regression: "unused" stood in the legend with no unused memory left, and then with a sliver too thin to see
    (under 0.5 % of the bar); with a visible share unused it is named."""
    p = BudgetPlanner(T=8192, padding=0.4375)
    assert 0 < p.state["unused_bytes"] < 0.005 * p.state["gpu_bytes"]  # a sliver: not named
    labels = [t.get_text() for t in p.fig.axes[0].get_legend().get_texts()]
    assert "unused" not in labels
    p = BudgetPlanner(model="GPT-2 (124M)", GPU_GiB=8, T=131072, padding=0.9)  # 1 request: most of the card unused
    assert p.state["unused_bytes"] > 0.3 * p.state["gpu_bytes"]
    labels = [t.get_text() for t in p.fig.axes[0].get_legend().get_texts()]
    assert "unused" in labels
    p = BudgetPlanner(model="Llama-3.1-70B", GPU_GiB=8, weights_dtype="float32")  # only the weights, cut at 8 GiB
    labels = [t.get_text() for t in p.fig.axes[0].get_legend().get_texts()]
    assert labels == ["weights"]


def test_planner_count_near_the_bottom_sits_above_its_dot_not_on_the_tick_labels():
    """Regression: at 8 GiB, T = 128k and 90 % padding the count "1" was drawn below its dot, on the x tick labels."""
    p = BudgetPlanner(model="GPT-2 (124M)", GPU_GiB=8, T=131072, padding=0.9)
    assert p.state["n_requests"] == 1
    text = p._figure.n_text
    assert text.get_text() == "1" and text.xyann[1] > 0  # an offset upwards, in points
    p = BudgetPlanner()  # 57 requests, high on the axis: below its dot, under the falling curve
    assert p._figure.n_text.xyann[1] < 0


def test_planner_padding_slider_reaches_the_batch_share_and_speaks_of_a_few_tokens_with_decimals():
    """Regression: the slider's steps of 0.05 missed 0.4375 (the notebook's batch); at T = 1 and 90 % padding the
    text said "0 real tokens", and "1 tokens"."""
    p = BudgetPlanner(T=8192, padding=0.4375)
    assert 0.4375 in full_range(p.controls["padding"])
    assert "43.8% padding" in p.html.value and "4,608 real tokens on average" in p.html.value
    assert "of cache these requests occupy" in p.html.value  # not "reserved": the reserve is another part
    q = BudgetPlanner(T=1, padding=0.9)
    assert "less than one real token on average" in q.html.value and "One request of T = 1 token holds" in q.html.value
    assert "0.1 real tokens" not in q.html.value  # a tenth of a token is an average no request holds
    r = BudgetPlanner(T=2, padding=0.25)
    assert "1.5 real tokens on average" in r.html.value


def test_planner_labels_stay_inside_their_panel_at_the_extremes():
    """Regression: GPT-2 on 192 GiB at T = 16 and 90 % padding clipped the real-only count at the top of the right
    panel; weights larger than the card left that panel empty but for a "0": it now says why."""
    p = BudgetPlanner(model="GPT-2 (124M)", GPU_GiB=192, T=16, padding=0.9)
    fig = p.fig
    fig.canvas.draw()
    ax = fig.axes[1]
    label = p._figure.real_text
    assert label.get_visible() and label.get_text() == f"{p.state['n_if_real_only']:,}"
    box, frame = label.get_window_extent(), ax.get_window_extent()
    assert frame.y0 <= box.y0 and box.y1 <= frame.y1, (box, frame)
    q = BudgetPlanner(model="Llama-3.1-70B", GPU_GiB=8, weights_dtype="float32")
    assert not q.state["weights_fit"]
    assert q._figure.no_fit_text.get_visible() and "do not fit" in q._figure.no_fit_text.get_text()
    assert not q._figure.floor.get_visible() and not q._figure.n_text.get_visible()  # no lone "0" marker
    q.controls["GPU_GiB"].value = 192
    q.controls["weights_dtype"].value = "bfloat16"  # 131 GiB of weights on 192 GiB: fits again, the note goes
    assert q.state["weights_fit"]
    assert not q._figure.no_fit_text.get_visible() and q._figure.n_text.get_visible()


def test_format_bytes_reaches_pib_the_explorer_maximum():
    """Before: the explorer's largest setting (2**50 bytes) read "1024.0 TiB"."""
    from utils.plots import format_bytes

    assert (format_bytes(2**40), format_bytes(2**50), format_bytes(3 * 2**49)) == ("1.0 TiB", "1.0 PiB", "1.5 PiB")
    p = no_plot(KVCacheExplorer(preset=CUSTOM, T=131072, dtype="float32"))
    for name in ("L", "H_kv", "B", "d_h"):
        p.controls[name].value = p.controls[name].max
    assert p.state["bytes"] == 2**50 and "(1.0 PiB)" in p.html.value


@pytest.mark.parametrize("language", ["en", "zh"])
def test_explorer_max_context_label_stays_inside_the_plot_at_128k(language):
    """Before: Llama-3.1-70B's max context (128k, the right edge) put its label past the axes, cut off."""
    from utils.i18n import set_language

    set_language(language)
    try:
        p = KVCacheExplorer(preset="Llama-3.1-70B", T=131072)
        fig = p.fig
        fig.canvas.draw()
        label, frame = p._lines.limit_text, p._lines.ax.get_window_extent()
        box = label.get_window_extent()
        assert label.get_visible() and "131,072" in label.get_text()
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1, (box, frame)
    finally:
        set_language("en")


def test_explorer_says_what_per_position_means():
    e = KVCacheExplorer(B=4)
    assert "per token position, all B sequences: 524,288 bytes" in e.html.value  # 4 x 128 KiB


def test_planner_draws_a_setting_once_and_shows_it_again_when_a_slider_comes_back():
    """A planner step drew its figure afresh (~200 ms on a busy 2-core machine); a setting seen before now
    reuses its picture, so a slider moved back and forth costs only the first visit's draws."""
    from utils.widgets import BudgetPlanner

    planner = BudgetPlanner()
    draws = []
    original = planner._png

    def counting(fig, draw):
        return original(fig, lambda f: draws.append(1) or draw(f))

    planner._png = counting
    T = planner.controls["T"]
    start = T.value
    T.value = 4096
    T.value = start
    T.value = 4096
    assert len(draws) == 1  # 4096 once; the start's picture was drawn when the planner was built
    assert planner.state["n_requests"] == 114


def test_planner_names_no_real_only_count_under_one_real_token_per_request():
    """Regression: at T = 1 and 90 % padding the planner said "111,713,080 requests would fit" holding only their
    real tokens, 0.1 token each, and drew that count over the real-only curve. Under one real token per request
    there is no such count: no text, no dot, and the curve starts at the first T with one real token."""
    p = BudgetPlanner(T=1, padding=0.9)
    s = p.state
    assert s["n_if_real_only"] is None and "n-real-only" not in p.html.value
    assert "less than one real token on average" in p.html.value
    fig = p._figure
    assert not fig.real_dot.get_visible() and not fig.real_text.get_visible()
    shown_T = [t for t, c in zip(s["curve_T"], s["curve_n_real_only"]) if c is not None]
    assert min(shown_T) * (1 - 0.9) >= 1 and all(t * (1 - 0.9) < 1 for t in s["curve_T"] if t < min(shown_T))
    assert fig.real_curve.get_visible()  # the longer T still have a real-only count
    p.controls["T"].value = 16  # 1.6 real tokens: the count is back
    assert p.state["n_if_real_only"] > 0 and p._figure.real_text.get_visible()
