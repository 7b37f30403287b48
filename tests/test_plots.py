"""What every figure shares (utils/plots/base.py): panel figures invisible to pyplot; tokens written so that
every reader can read them (a Chinese token glossed in English, "猫 (cat)", plain in Chinese); the grammar's
exact probabilities beside the model's; legends and small texts large enough; the block map's contrast."""
import matplotlib.pyplot as plt
import numpy as np

from utils.plots import detached, subplots
from utils.widgets import KVCacheExplorer


def test_panel_figures_are_invisible_to_pyplot():
    """Regression: JupyterLab runs widget messages on a kernel subshell while the inline backend
    draws and closes every pyplot figure after each message, which left the explorer's plot blank
    or half drawn in the browser test. Panel figures must not be pyplot figures."""
    before = set(plt.get_fignums())
    panel = KVCacheExplorer()
    from utils.widgets import T_CHOICES
    panel.controls["T"].value = T_CHOICES[-1]
    assert panel.fig is not None and "error" not in panel.state
    assert set(plt.get_fignums()) == before
    assert panel.fig.axes and panel.fig.axes[0].get_xlabel()


def test_subplots_outside_a_panel_is_plain_pyplot():
    fig, ax = subplots(figsize=(2, 2))
    assert fig.number in plt.get_fignums()
    plt.close(fig)
    with detached():
        fig, ax = subplots(figsize=(2, 2))
    assert not hasattr(fig, "number") or fig.number not in plt.get_fignums()


# --- every reader can read every figure: Chinese tokens glossed in English, legends large enough ---------
import ast  # noqa: E402
from pathlib import Path  # noqa: E402
from types import SimpleNamespace as NS  # noqa: E402

import matplotlib.colors  # noqa: E402
import pytest  # noqa: E402

from utils import plots  # noqa: E402
from utils.i18n import set_language  # noqa: E402
from utils.plots.base import LEGEND_SIZE, SMALL_SIZE, glossary, grammar_probs, text_label, token_label  # noqa: E402

PLOTS = Path(__file__).resolve().parent.parent / "utils" / "plots"


@pytest.fixture
def zh():
    set_language("zh")
    yield
    set_language("en")


def _texts(fig) -> list[str]:
    fig.canvas.draw()
    texts = [t.get_text() for t in fig.findobj(matplotlib.text.Text)]
    plt.close(fig)
    return texts


def test_token_labels_gloss_chinese_in_english_only():
    assert token_label("猫") == "猫 (cat)" and token_label("猫", stacked=True) == "猫\n(cat)"
    assert token_label("cats") == token_label("cats", stacked=True) == "cats"
    assert token_label("<BOS>") == "<BOS>" and token_label("。") == "。"
    assert text_label("<BOS> 我 喜欢 cats") == "<BOS> 我 (I) 喜欢 (like) cats"
    assert glossary(["我", "cats", "我", "猫"]) == "Chinese words here: 我 (I), 猫 (cat)"
    assert glossary(["I", "like", "<EOS>"]) == ""


def test_token_labels_are_plain_in_chinese(zh):
    assert token_label("猫") == token_label("猫", stacked=True) == "猫"
    assert text_label("<BOS> 我 喜欢") == "<BOS> 我 喜欢" and glossary(["我", "猫"]) == ""


def test_the_grammars_probabilities_or_none():
    assert grammar_probs("<BOS> I like", ["cats", "dogs", "我"]) == pytest.approx([0.75, 0.05, 0.0])
    assert grammar_probs("I like", ["cats"]) == pytest.approx([0.75])  # read with <BOS> in front
    assert grammar_probs("<BOS> cats cats", ["cats"]) is None and grammar_probs(None, ["cats"]) is None


def _figures_with_tokens():
    """Each figure that writes tokens, drawn with Chinese and English ones: name -> figure."""
    words = ["<BOS>", "我", "喜欢", "猫", "。", "she", "has"]
    segments = [NS(phase="prefill" if i == 0 else "decode", step=i, start_s=i * 1e-3, duration_s=1e-3,
                   end_s=(i + 1) * 1e-3) for i in range(4)]
    stages = {name: [0.4, 0.3, 0.2, 0.1] for name in plots.SAMPLING_STAGES}
    state = dict(prompt_len=3, n_steps=3, step=2, n_recomputed=3, cache_len=5, cache_len_per_layer=[5, 5],
                 tokens=words[:6])
    beams = NS(step_tokens=[[3, 31], [10, 38]], parents=[[0, 0], [0, 1]])
    vocab = {3: "我", 31: "I", 10: "猫", 38: "like"}
    rounds = {"rounds": [{"start": 2, "proposed": [25, 14], "words": ["猫", "。"], "accepted": 1, "extra": 2,
                          "extra_word": "<EOS>", "kind": "correction", "target_len": 4, "draft_len": 4}],
              "prompt_len": 2, "max_new_tokens": 2, "temperature": 0.0, "lookup": False, "rollback": True, "k": 2,
              "acceptance_rate": 0.5}
    return {
        "plot_timeline": lambda: plots.plot_timeline(segments, ["猫", "。", "she", "has"]),
        "plot_top_probs": lambda: plots.plot_top_probs(["猫", "狗", "cats"], [0.7, 0.2, 0.1], prompt="<BOS> 我 喜欢"),
        "plot_kv_heatmap": lambda: plots.plot_kv_heatmap(np.ones((len(words), 4)), words, "K"),
        "plot_padding_waste": lambda: plots.plot_padding_waste([["<PAD>", "我", "喜欢"], ["she", "has", "猫"]],
                                                               [[0, 1, 1], [1, 1, 1]]),
        "plot_sampling_stages": lambda: plots.plot_sampling_stages(
            stages, [25, 26, 54, 14], ["猫", "狗", "cats", "。"], {"temperature": 1.0, "top_k": None, "top_p": None},
            grammar=[0.75, 0.05, 0.0, 0.0]),
        "plot_temperature_sweep": lambda: plots.plot_temperature_sweep(
            ["猫", "狗"], {0: [1, 0], 1.0: [0.7, 0.3]}, prompt="<BOS> 我 喜欢"),
        "plot_decode_grids": lambda: plots.plot_decode_grids(state),
        "plot_new_query_weights": lambda: plots.plot_new_query_weights(np.full((2, 4), 0.25), words[:4]),
        "plot_beam_tree": lambda: plots.plot_beam_tree(beams, lambda ids: [vocab[i] for i in ids]),
        "plot_speculative_rounds": lambda: plots.plot_speculative_rounds(rounds),
        "plot_first_token_counts": lambda: plots.plot_first_token_counts(["猫", "cats"], [0.6, 0.3, 0.1],
                                                                         {"draft": [6, 3, 1]}),
    }


@pytest.mark.parametrize("name", sorted(_figures_with_tokens()))
def test_an_english_figure_glosses_its_chinese_tokens(name):
    shown = "\n".join(_texts(_figures_with_tokens()[name]()))
    assert "(cat)" in shown, shown
    assert "(she)" not in shown and "(<BOS>)" not in shown  # English words and markers stay as they are


@pytest.mark.parametrize("name", sorted(_figures_with_tokens()))
def test_a_chinese_figure_does_not(name, zh):
    shown = "\n".join(_texts(_figures_with_tokens()[name]()))
    assert "猫" in shown and "(cat)" not in shown and "Chinese words" not in shown


def test_the_temperature_sweeps_grammar_marks_stand_beside_each_group_not_across_its_bars():
    """Regression: a white-haloed line across each group notched the tall bars (τ = 0 and 0.5 on "cats");
    the grammar's probability is now a black triangle just right of the group, outside every bar."""
    fig = plots.plot_temperature_sweep(["cats", "dogs"], {0: [1.0, 0.0], 0.5: [0.97, 0.01], 1.0: [0.73, 0.06]},
                                       prompt="<BOS> I like")
    (ax,) = fig.axes
    (marks,) = [ln for ln in ax.lines if ln.get_label() == "the grammar's exact probability"]
    assert list(marks.get_ydata()) == pytest.approx([0.75, 0.05])
    right_edges = [p.get_x() + p.get_width() for p in ax.patches]
    for xi, group in zip(marks.get_xdata(), (0, 1)):
        assert xi > max(e for e in right_edges if e < group + 0.5)  # beside the group's last bar, not on one
        assert xi < group + 0.6  # and before the next group begins
    assert not ax.collections  # no line across the bars
    plt.close(fig)


def test_the_grammars_line_stands_beside_the_models_bars():
    fig = plots.plot_top_probs(["猫", "狗", "cats"], [0.7, 0.2, 0.1], prompt="<BOS> 我 喜欢")
    (ax,) = fig.axes
    (lines,) = [c for c in ax.collections if c.get_label() == "the grammar's exact probability"]
    tops = sorted(round(float(seg[0][1]), 6) for seg in lines.get_segments())
    assert tops == [0.05, 0.75]  # 猫 0.75, 狗 0.05; cats never follows 我 喜欢: no line at 0
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["the model's probability (blue: the token picked)",
                                                                   "the grammar's exact probability"]
    plt.close(fig)
    for prompt in (None, "<BOS> cats cats"):  # no prompt, or one the grammar never produces: bars alone
        fig = plots.plot_top_probs(["猫"], [1.0], prompt=prompt)
        assert fig.axes[0].get_legend() is None and not fig.axes[0].collections
        plt.close(fig)


def _legend_calls() -> list[tuple[str, int, object]]:
    """(file, line, the fontsize keyword's node or None) of every legend call in utils/plots (not the bug lab's)."""
    calls = []
    for path in sorted(PLOTS.glob("*.py")):
        if path.name == "bug_lab.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "legend":
                size = next((k.value for k in node.keywords if k.arg == "fontsize"), None)
                calls.append((path.name, node.lineno, size))
    return calls


def test_every_legend_is_at_least_9_points():
    calls = _legend_calls()
    assert len(calls) > 30 and LEGEND_SIZE >= 9
    small = [f"{f}:{line}" for f, line, size in calls
             if size is not None and not (isinstance(size, ast.Name) and size.id == "LEGEND_SIZE")
             and not (isinstance(size, ast.Constant) and size.value >= 9)]
    assert not small, f"legends smaller than {LEGEND_SIZE} pt: {small}"


def test_no_text_is_smaller_than_the_small_size():
    tiny = []
    for path in sorted(PLOTS.glob("*.py")):
        if path.name == "bug_lab.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg in ("fontsize", "labelsize", "size"):
                if isinstance(node.value, ast.Constant) and isinstance(node.value.value, (int, float)) \
                        and node.value.value < SMALL_SIZE:
                    tiny.append(f"{path.name}:{node.value.lineno}")
    assert SMALL_SIZE >= 8 and not tiny, tiny


def test_a_drawn_legend_is_9_points():
    fig = plots.plot_top_probs(["猫", "狗"], [0.7, 0.3], prompt="<BOS> 我 喜欢")
    assert {t.get_fontsize() for t in fig.axes[0].get_legend().get_texts()} == {LEGEND_SIZE}
    plt.close(fig)


# --- the block map of notebook 10: labels that read on every colour, a legend that matches the blocks ------
def _luminance(color) -> float:
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in matplotlib.colors.to_rgb(color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a, b) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@pytest.fixture(scope="module")
def block_map_state():
    from utils.course_model import COURSE_CONFIG
    from utils.widgets.paged import block_counts, replay_block_map

    workload = {"prompts": [[1] * 6, [2] * 9, [3] * 5, [4] * 7, [5] * 8, [6] * 6, [7] * 5, [8] * 9, [9] * 4],
                "max_new_tokens": [6] * 9, "arrival_s": [0.0] * 9}
    frames = replay_block_map(COURSE_CONFIG, workload, 4, 48)
    step = max(range(len(frames)), key=lambda i: len({o for o in frames[i]["owners"] if len(o) == 1}))
    return {"frame": frames[step], "n_blocks": 48, "counts": block_counts(frames, 48), "step": step, "block_size": 4}


def test_every_block_label_reads_on_its_block(block_map_state):
    from utils.plots.paged import REQUEST_COLORS, ink

    for color in REQUEST_COLORS:  # whichever of black and white reads better; at least WCAG's 4.5:1
        assert _contrast(ink(color), color) >= 4.5 and _contrast(ink(color), color) >= _contrast(
            "white" if ink(color) == "black" else "black", color), color
    assert ink("#ff9da7") == "black" and ink("#1f3b5c") == "white"
    fig = plots.plot_block_map(block_map_state)
    ax = fig.axes[0]
    assert sum(len(c.get_paths()) for c in ax.collections) == block_map_state["n_blocks"]  # every block drawn
    for text in ax.texts:
        if "\nr" in text.get_text():  # a block one request holds: "12\nr3"
            rid = int(text.get_text().split("\n")[1][1:])
            assert _contrast(text.get_color(), REQUEST_COLORS[rid % 10]) >= 4.5, text.get_text()
    plt.close(fig)


def test_the_block_maps_legend_shows_the_colours_of_the_blocks(block_map_state):
    from utils.plots.paged import REQUEST_COLORS, SINGLE_COLOR

    fig = plots.plot_block_map(block_map_state)
    grid, chart = fig.axes
    held = sorted({o[0] for o in block_map_state["frame"]["owners"] if len(o) == 1})
    assert len(held) >= 3
    legend_colors = {matplotlib.colors.to_hex(p.get_facecolor())
                     for p in grid.get_legend().findobj(matplotlib.patches.Rectangle)}
    assert {REQUEST_COLORS[r % 10] for r in held[:4]} <= legend_colors  # the "held by one request" chip
    chart_colors = {matplotlib.colors.to_hex(c.get_facecolor()[0]) for c in chart.collections}
    chart_legend = {matplotlib.colors.to_hex(p.get_facecolor())
                    for p in chart.get_legend().findobj(matplotlib.patches.Rectangle)}
    assert matplotlib.colors.to_hex(SINGLE_COLOR) in chart_colors & chart_legend
    assert not chart_colors & {REQUEST_COLORS[r % 10] for r in held}  # the chart does not reuse a request's colour
    assert {t.get_fontsize() for ax in (grid, chart) for t in ax.get_legend().get_texts()} == {LEGEND_SIZE}
    plt.close(fig)


# --- notebook 01's figures: K/V heads under their groups, RoPE speeds without aliasing, upright Chinese ----
def test_each_kv_head_sits_under_the_middle_of_its_query_group():
    for H, H_kv in ((8, 8), (8, 2), (8, 1), (6, 3)):
        fig, ax = subplots()
        plots.plot_head_groups(ax, H, H_kv)
        queries, kv = (c.get_offsets()[:, 0] for c in ax.collections)  # (H,), (H_kv,): x of each marker
        groups = np.asarray(queries).reshape(H_kv, H // H_kv)
        np.testing.assert_allclose(kv, groups.mean(axis=1))
        plt.close(fig)
    with pytest.raises(ValueError, match="must divide"):
        plots.plot_head_groups(plt.figure().add_subplot(), 8, 3)


def test_rope_speeds_draw_a_fast_pair_only_where_its_turns_are_wide():
    theta = 10000.0 ** (-2 * np.arange(16) / 32)  # the course model's 16 pairs
    fig = plots.plot_rope_frequencies(theta, 256, window=32)
    _, window, context = fig.axes[:3]
    shown = np.ma.getdata(context.get_images()[0].get_array())  # (pairs, 256): NaN where a pair is left blank
    period = 2 * np.pi / theta  # positions per full turn of each pair
    assert np.isnan(shown[period < 8]).all() and not np.isnan(shown[period >= 8]).any()
    # only pair 0 (a turn every 6.3 positions) is blank; pair 1 (11.2, about a dozen pixels a turn) was blank
    # once though drawable
    assert np.isnan(shown[0]).all() and not np.isnan(shown[1]).any()
    assert window.get_images()[0].get_array().shape == (16, 32 * 8)  # pair 0 turns 5 times in 32
    # pair 0 (1 rad per position) is drawn between whole positions too: sampled only at whole p it aliased into
    # what looked like noise; at 8 samples per position, neighbouring columns differ by at most 1/8 rad
    pair0 = np.ma.getdata(window.get_images()[0].get_array())[0]
    assert np.abs(np.diff(pair0)).max() < 0.13 and window.get_images()[0].get_extent() == [-0.5, 31.5, 15.5, -0.5]
    assert not np.isnan(np.ma.getdata(window.get_images()[0].get_array())).any()
    plt.close(fig)


def test_token_ticks_stay_upright_when_they_fit(zh):
    """Before, "<BOS>" stood on end beside upright Chinese labels even with room to spare (notebook 01's
    course-model heads: 8 tokens in a 5.6-inch panel)."""
    words = "<BOS> 我 很 喜欢 猫 。 他 有".split()
    fig, axes = plots.new_figure(ncols=2, width=5.6, height=3.8)
    plots.plot_weights(axes[0], np.eye(8), tokens=words)
    assert [t.get_rotation() for t in axes[0].get_xticklabels()] == [0] * 8
    assert [t.get_text() for t in axes[0].get_yticklabels()] == words
    plt.close(fig)


def test_token_ticks_stand_latin_labels_on_end_when_they_would_collide(zh):
    words = ["<BOS>", "我", "喜欢", "。"] * 4  # 16 columns in a 2-inch axes: "<BOS>" is wider than its column
    fig, ax = subplots(figsize=(2.5, 2.5))
    plots.plot_weights(ax, np.eye(16), tokens=words)
    assert [t.get_rotation() for t in ax.get_xticklabels()] == [90, 0, 0, 0] * 4
    plt.close(fig)


def test_a_mask_says_which_colour_may_attend():
    """A mask panel carries its key (before, blue and grey were left to guess); key=False leaves it out."""
    fig, (ax, bare) = plots.new_figure(ncols=2)
    plots.plot_mask(ax, np.tril(np.ones((4, 4), bool)))
    plots.plot_mask(bare, np.tril(np.ones((4, 4), bool)), key=False)
    bar = fig.axes[-1]
    assert len(fig.axes) == 3 and [t.get_text() for t in bar.get_yticklabels()] == ["False:\nmasked",
                                                                                      "True:\nmay attend"]
    plt.close(fig)


def test_head_groups_number_their_heads_and_call_one_head_mha_and_mqa():
    fig, ax = subplots()
    plots.plot_head_groups(ax, 8, 2)
    numbers = [t.get_text() for t in ax.texts]
    assert numbers == [str(h) for h in range(8)] + ["0", "1"]
    plots.plot_head_groups(ax, 1, 1)
    assert ax.get_title().startswith("MHA (= MQA)")
    plt.close(fig)


# --- notebook 03's figures ------------------------------------------------------------------------------

def _decode_state(prompt_len=8, n_steps=3, step=2):
    words = "<BOS> he has three small dogs . they like horses . <EOS>".split()
    return {"prompt_len": prompt_len, "n_steps": n_steps, "step": step, "tokens": words[:prompt_len + n_steps],
            "cache_len_per_layer": [prompt_len + step] * 4, "cache_len": prompt_len + step, "n_recomputed": prompt_len + step - 1}


def test_decode_grids_label_columns_straight_and_name_every_mark():
    """Before, the token labels stood on end (rotated 90°), the pale rows and grey slots of steps not yet
    run were missing from the legend, and then the black frames were not in it either."""
    fig = plots.plot_decode_grids(_decode_state())
    labels = [t for t in fig.axes[0].texts if "\n" in t.get_text()]
    assert [t.get_text() for t in labels[:2]] == ["<BOS>\n0", "he\n1"] and {t.get_rotation() for t in labels} == {0}
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert {"pale: later steps, not run yet", "grey: no token there yet", "black frame: this step; its new K/V"} <= set(legend)
    plt.close(fig)


def test_new_query_weights_put_each_position_under_its_token():
    fig = plots.plot_new_query_weights(np.full((2, 4), 0.25), ["<BOS>", "he", "has", "dogs"])
    ticks = fig.axes[0].get_xticklabels()
    assert [t.get_text() for t in ticks] == ["<BOS>\n0", "he\n1", "has\n2", "dogs\n3"]
    assert {t.get_rotation() for t in ticks} == {0}
    plt.close(fig)


def test_recompute_diffs_mark_exact_zeros_with_a_zero_tick():
    """Before, step 0's exact zero was drawn on the 1e-7 grid line and read as 1e-7."""
    fig = plots.plot_recompute_diffs(NS(max_diffs=[0.0, 2e-6, 1e-5, 3e-6], tol=1e-4))
    ax = fig.axes[0]
    zero_y = ax.lines[1].get_ydata()[0]  # the hollow dot of step 0
    ticks = dict(zip(ax.get_yticks(), [t.get_text() for t in ax.get_yticklabels()]))
    assert ticks[zero_y] == "0" and all(t >= 3 * zero_y for t in ticks if t != zero_y)
    plt.close(fig)


def test_long_context_ticks_are_plain_tokens_and_both_crossings_are_named_in_the_legend():
    """Before, the ticks read 4k, 8k (1,024-based) beside a crossing printed as 7,090, and the fitted parts'
    crossing was not marked; then the crossings' labels stood at the lines' feet, where a fitted line could
    run through them: the legend names them now, and no label sits inside the axes."""
    from utils.config import ModelConfig
    from utils.perf import Stats

    cfg = ModelConfig(vocab_size=16000, n_layers=2, n_heads=8, n_kv_heads=8, d_model=512, d_ff=1376, max_seq_len=16385)
    Ts = [512, 4096, 8192, 16384]
    measured = {"T": Ts, "step": [Stats([0.010 + 1e-6 * T] * 3) for T in Ts]}  # fixed 10 ms, equal at T = 10,000
    fig = plots.plot_bytes_and_step_time(cfg, measured)
    fig.canvas.draw()
    ax0, ax1 = fig.axes[:2]
    shown = [t.get_text() for t, x in zip(ax0.get_xticklabels(), ax0.get_xticks()) if 0 <= x <= ax0.get_xlim()[1]]
    assert shown == ["0", "4,096", "8,192", "12,288", "16,384"]
    notes = [t.get_text() for t in fig.legends[0].get_texts()]  # the right panel's legend, under the panels
    assert any("7,090" in n for n in notes) and any("10,000" in n for n in notes)
    assert any("7,090" in t.get_text() for t in ax0.get_legend().get_texts())
    assert not ax0.texts and not ax1.texts
    plt.close(fig)


def test_the_long_context_legend_covers_no_line_and_the_fit_can_go_through_the_fastest_samples():
    """Before, the right panel's legend sat over the dash-dotted crossing and pushed the y axis to about
    1.75x the data; and the fit went through the medians while every rate used the fastest samples."""
    from utils.config import ModelConfig
    from utils.perf import Stats

    cfg = ModelConfig(vocab_size=16000, n_layers=2, n_heads=8, n_kv_heads=8, d_model=512, d_ff=1376, max_seq_len=16385)
    Ts = [512, 4096, 8192, 16384]
    measured = {"T": Ts, "step": [Stats([0.010 + 1e-6 * T, 0.05, 0.05]) for T in Ts]}  # fastest: 10 ms + 1 µs per token
    fig = plots.plot_bytes_and_step_time(cfg, measured, through="fastest")
    fig.canvas.draw()
    ax1 = fig.axes[1]
    assert ax1.get_legend() is None
    legend_box, axes_box = fig.legends[0].get_window_extent(), ax1.get_window_extent()
    assert legend_box.y1 < axes_box.y0  # under the panel, not over its lines
    assert ax1.get_ylim()[1] < 1.2 * 50  # no room kept for a legend inside: the slowest median is 50 ms
    notes = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("10.00 ms" in n for n in notes) and any("10,000" in n for n in notes)  # the fit through the fastest
    plt.close(fig)


def test_a_lone_punctuation_token_is_quoted_in_the_prefill_figures():
    # notebook 02: a bare "." in a heatmap's tick or a padding cell read as a speck, not as a token
    words = ["<BOS>", "cats", "."]
    fig = plots.plot_kv_heatmap(np.ones((3, 4)), words, "K")
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["0: <BOS>", "1: cats", "2: '.'"]
    fig = plots.plot_padding_waste([["<PAD>", "cats", "."]], np.array([[0, 1, 1]]))
    assert {"cats", "'.'"} <= {t.get_text() for t in fig.axes[0].texts}
    plt.close("all")


def test_timeline_labels_name_the_token_each_segment_produced_not_the_one_fed():
    # notebook 00: a bare 'cats' above the prefill bar could be read as the token fed to that segment
    segments = [NS(phase="prefill" if i == 0 else "decode", step=i, start_s=i * 1e-3, duration_s=1e-3,
                   end_s=(i + 1) * 1e-3) for i in range(3)]
    fig = plots.plot_timeline(segments, ["cats", ".", "<EOS>"])
    assert {"→ 'cats'", "→ '.'", "→ '<EOS>'"} <= {t.get_text() for t in fig.axes[0].texts}
    plt.close("all")


def test_the_ttft_per_token_panel_says_its_axis_is_logarithmic():
    fig = plots.plot_ttft([8, 16, 32], [0.004, 0.0045, 0.0055])
    assert fig.axes[1].get_yscale() == "log" and "log scale" in fig.axes[1].get_ylabel()
    plt.close("all")


def test_ttft_time_panel_has_a_linear_x_axis_and_the_per_token_panel_a_log_one():
    """Linear x on the time panel, so a + b·T reads as a straight line, not as a hockey stick; log x on the
    per-token panel, so the short prompts do not crowd."""
    fig = plots.plot_ttft([8, 16, 32, 512], [0.004, 0.0045, 0.0055, 0.14])
    assert [ax.get_xscale() for ax in fig.axes] == ["linear", "log"]
    assert "200" in [t.get_text() for t in fig.axes[1].get_yticklabels()]  # 273 µs at T = 512: the tick below it
    plt.close("all")


def test_the_step_costs_bytes_panel_marks_where_the_kv_read_reaches_the_weights():
    """Before, notebook 03 cited the crossing (T = 1,554 for its timed model) but the bytes panel did not mark it;
    now a dotted vertical line stands there, named in the legend, as in the long-context figure."""
    from utils.config import ModelConfig
    from utils.roofline import kv_weights_crossover

    cfg = ModelConfig(vocab_size=64, n_layers=4, n_heads=8, n_kv_heads=8, d_model=256, d_ff=688, max_seq_len=2048)
    cross = kv_weights_crossover(cfg, dtype="float32")
    fig = plots.plot_step_costs(cfg, [2**i for i in range(4, 12)] + [2047])
    ax1 = fig.axes[1]
    vertical = [ln for ln in ax1.get_lines() if len(set(ln.get_xdata())) == 1]
    assert [ln.get_xdata()[0] for ln in vertical] == [cross] and vertical[0].get_linestyle() == ":"
    assert any(f"{cross:,}" in t.get_text() for t in ax1.get_legend().get_texts())
    plt.close(fig)


def test_the_bandwidth_figure_draws_min_to_max_whiskers_and_says_so():
    """Regression (notebook 06): quartile bars of three samples looked like a wide spread around the median;
    the whiskers now run from the smallest to the largest sample, and the axis label says so."""
    from utils.perf import Stats
    from utils.plots import plot_bandwidth

    res = {"copy_Bps": Stats([7e9, 8e9, 9e9]), "read_Bps": Stats([4e9, 1e10, 1.1e10]),
           "achieved_Bps": Stats([3e9, 3.2e9, 3.5e9]), "limit_Bps": 1.1e10, "fraction": 0.3}
    ax = plot_bandwidth(res).axes[0]
    segments = [seg for coll in ax.collections for seg in coll.get_segments()]  # the error bars' vertical lines
    spans = sorted((round(min(s[:, 1]), 3), round(max(s[:, 1]), 3)) for s in segments)
    assert spans == [(3.0, 3.5), (4.0, 11.0), (7.0, 9.0)]
    assert "smallest to the largest" in ax.get_xlabel() and "3 samples" in ax.get_xlabel()
