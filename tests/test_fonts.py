"""Figures draw Chinese with the course's own font, the same pixels on every machine, and never
a missing-glyph box: every plot function and the panels that plot tokens render with Chinese
tokens and titles while a "Glyph ... missing" warning is an error, once with the machine's
fonts and once as on a machine without any CJK font."""
import io
import json
import sys
import tomllib
import warnings
from pathlib import Path
from types import SimpleNamespace as NS

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import font_manager  # noqa: E402

import utils.plots as plots  # noqa: E402
from utils.plots import COURSE_FONT, COURSE_FONT_FAMILY, new_figure  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import subset_font  # noqa: E402

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)

WORDS = ["<BOS>", "我", "喜欢", "兔子", "。", "他们", "不", "也", "有", "三", "匹", "黑", "马", "cats"]
TITLE = "中文标题：缓存大小探索器（解码步）"


def png(fig) -> bytes:
    """Draw ``fig`` the way the inline backend does (fonts are looked up now) and close it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=60)
    plt.close(fig)
    return buf.getvalue()


@pytest.fixture(autouse=True)
def glyph_warnings_are_errors():
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=r"Glyph .* missing", category=UserWarning)
        yield


def _matplotlib_fonts_only(monkeypatch) -> None:
    """Let matplotlib see only its own fonts and the course font: a machine with no CJK font."""
    manager = font_manager.fontManager
    own = [f for f in manager.ttflist if "mpl-data" in Path(f.fname).parts or Path(f.fname) == COURSE_FONT]
    assert any(Path(f.fname) == COURSE_FONT for f in own)
    monkeypatch.setattr(manager, "ttflist", own)
    manager._findfont_cached.cache_clear()  # lookups cached with the machine's fonts


@pytest.fixture(params=["machine fonts", "no CJK font"])
def fonts(request, monkeypatch):
    if request.param == "no CJK font":
        _matplotlib_fonts_only(monkeypatch)
    yield request.param
    font_manager.fontManager._findfont_cached.cache_clear()


# --- one call per plot function, with Chinese tokens and titles ----------------------------------
def _on_axes(draw, token_ticks: bool = False):
    fig, (ax,) = new_figure()
    draw(ax)
    if token_ticks:  # what notebook 01 does with the course model's attention weights
        ax.set_xticks(range(len(WORDS)), WORDS, rotation=90)
    return fig


def _stats(*medians):
    return [NS(median=m, q1=0.9 * m, q3=1.1 * m) for m in medians]


_T = [16, 64, 256]
_SEGMENTS = [NS(phase="prefill" if i == 0 else "decode", step=i, start_s=i * 1e-3, duration_s=1e-3,
                end_s=(i + 1) * 1e-3) for i in range(6)]
CASES = {
    "plot_timeline": lambda: plots.plot_timeline(_SEGMENTS, WORDS[1:7], TITLE),
    "plot_top_probs": lambda: plots.plot_top_probs(WORDS[:6], [0.5, 0.2, 0.1, 0.1, 0.05, 0.05], TITLE),
    "plot_ttft": lambda: plots.plot_ttft(_T, [1e-3, 3e-3, 9e-3], TITLE),
    "plot_kv_heatmap": lambda: plots.plot_kv_heatmap(np.ones((len(WORDS), 8)), WORDS, TITLE),
    "plot_padding_waste": lambda: plots.plot_padding_waste(
        [["<PAD>", "<PAD>", *WORDS[:3]], WORDS[:5], ["<PAD>", *WORDS[5:9]]],
        [[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [0, 1, 1, 1, 1]], TITLE),
    "plot_sampling_stages": lambda: plots.plot_sampling_stages(
        {name: [0.4, 0.3, 0.2, 0.1] for name in plots.SAMPLING_STAGES}, [3, 10, 29, 14], WORDS[1:5],
        {"temperature": 1.0, "top_k": None, "top_p": None}, TITLE),
    "plot_temperature_sweep": lambda: plots.plot_temperature_sweep(
        WORDS[1:5], {0: [1, 0, 0, 0], 1.0: [0.4, 0.3, 0.2, 0.1]}, TITLE),
    "plot_mask": lambda: _on_axes(lambda ax: plots.plot_mask(ax, np.tril(np.ones((len(WORDS),) * 2)), TITLE), True),
    "plot_weights": lambda: _on_axes(lambda ax: plots.plot_weights(ax, np.eye(len(WORDS)), TITLE), True),
    "plot_head_groups": lambda: _on_axes(lambda ax: plots.plot_head_groups(ax, 8, 2, TITLE)),
    "plot_rope_scores": lambda: _on_axes(lambda ax: plots.plot_rope_scores(ax, np.eye(len(WORDS)), TITLE), True),
    "plot_softmax_saturation": lambda: plots.plot_softmax_saturation(
        _T, {"除以 √d_h": [0.1, 0.1, 0.1], "不缩放": [0.4, 0.7, 0.9]}, {"除以 √d_h": [3.7, 3.7, 3.7], "不缩放": [2.1, 0.9, 0.2]},
        64, TITLE),
    "plot_rope_frequencies": lambda: plots.plot_rope_frequencies(10000.0 ** (-np.arange(16) / 16), 256, TITLE),
    "plot_kv_vs_context": lambda: _on_axes(lambda ax: plots.plot_kv_vs_context(
        ax, {"课程模型": 4096, "Llama-3-8B": 131072}, 8192, mark=(4096, 2**28), title=TITLE)),
    "plot_per_token_bars": lambda: _on_axes(lambda ax: plots.plot_per_token_bars(
        ax, ["课程模型", "Llama-3-8B"], [4096, 131072], ["MHA", "GQA"], TITLE)),
    "plot_budget": lambda: plots.plot_budget(dict(
        weight_bytes=16 * 2**30, reserve_bytes=4 * 2**30, n_requests=12, cache_used_bytes=48 * 2**30,
        unused_bytes=12 * 2**30, gpu_bytes=80 * 2**30, curve_T=[1024, 8192, 65536], curve_n=[96, 12, 1],
        T=8192, max_context=131072, padding=0.25, real_bytes=36 * 2**30, padding_bytes=12 * 2**30,
        n_if_real_only=16, curve_n_real_only=[128, 16, 1])),
    "plot_decode_grids": lambda: plots.plot_decode_grids(dict(
        prompt_len=4, n_steps=3, step=2, n_recomputed=5, cache_len=6, cache_len_per_layer=[6, 6],
        tokens=WORDS[:7])),
    "plot_recompute_diffs": lambda: plots.plot_recompute_diffs(NS(max_diffs=[0.0, 1e-6, 2e-6], tol=1e-4), TITLE),
    "plot_step_times": lambda: plots.plot_step_times(
        {"T": _T, "cached": _stats(1e-3, 1.1e-3, 1.3e-3), "no_cache": _stats(2e-3, 6e-3) + [None]}, TITLE),
    "plot_step_costs": lambda: plots.plot_step_costs(_course_config(), _T, title=TITLE),
    "plot_bytes_and_step_time": lambda: plots.plot_bytes_and_step_time(
        _course_config(), {"T": [1024, 4096, 8192], "step": _stats(1e-3, 1.5e-3, 2.2e-3)}, title=TITLE),
    "plot_new_query_weights": lambda: plots.plot_new_query_weights(
        np.full((4, len(WORDS)), 1 / len(WORDS)), WORDS, TITLE),
    "plot_bug_divergence": lambda: plots.plot_bug_divergence(
        {"位置从 0 开始（错误）": [0, 1.5, 2.0], "修好了": [0, 1e-6, 0]}, 1e-4, TITLE),
    "plot_bug_overview": lambda: plots.plot_bug_overview(
        [(NS(title="缓存了隐藏状态"), NS(report=NS(max_diffs=[0, 0.5, 1.0]), error=None, error_step=None,
                                       first_step=1), None),
         (NS(title="拼接的维度错了"), NS(report=None, error="RuntimeError", error_step=1, first_step=None), None)],
        1e-4, TITLE),
    "plot_cache_memory": lambda: plots.plot_cache_memory(
        [NS(kind=k, tokens=[1, 2, 3], nbytes=[1024, 2048, 3072], new_buffer=[1, 1, 1]) for k in ("dynamic", "静态")],
        TITLE),
    "plot_sliding_window": lambda: plots.plot_sliding_window(
        NS(window=2, diff_full=[0, 0, 0.1, 0.2], diff_windowed=[0, 0, 1e-7, 0], n_seen=[1, 2, 3, 4],
           stored=[1, 2, 2, 2]), 1e-4, TITLE),
    "plot_cache_step_times": lambda: plots.plot_cache_step_times(
        _T, {"dynamic": [1e-3, 2e-3, 3e-3], "static": [1e-3, 1.5e-3, 2e-3]}, TITLE),
    "plot_beam_tree": lambda: plots.plot_beam_tree(
        NS(step_tokens=[[3, 4], [10, 10], [25, 29]], parents=[[0, 0], [0, 1], [1, 0]]),
        lambda ids: [WORDS[i % len(WORDS)] for i in ids], TITLE),
    "plot_ttft_tpot": lambda: plots.plot_ttft_tpot(
        {"T": _T, "cached": _stats(1e-3, 2e-3, 4e-3), "no_cache": None},
        {"T": _T, "cached": _stats(1e-3, 1e-3, 1e-3), "no_cache": _stats(1e-3, 3e-3, 9e-3)}, TITLE),
    "plot_batch_sweep": lambda: plots.plot_batch_sweep(dict(
        B=[1, 4, 16], throughput=[100, 300, 800], decode_throughput=[120, 400, 1000],
        latency_s=[0.1, 0.12, 0.2], ttft_s=[0.01, 0.02, 0.05], tpot_s=[0.005, 0.006, 0.01]), TITLE),
    "plot_schedules": lambda: plots.plot_schedules({"逐个处理": _schedule(), "连续批处理": _schedule()}, TITLE),
    "plot_ttft_parts": lambda: plots.plot_ttft_parts(_schedule(), 1, TITLE),
    "plot_rate_sweep": lambda: plots.plot_rate_sweep(
        {"rate": [10, 100], "逐个处理": [_schedule(), _schedule()], "连续批处理": [_schedule(), _schedule()]}, TITLE),
    "plot_batch_roofline": lambda: plots.plot_batch_roofline(
        {"50M 模型": dict(B=[1, 2, 4, 8], memory_tps=[100, 200, 400, 800], compute_tps=[300] * 4, ridge=3,
                         measured_B=[1, 4], measured_tps=[80, 250])}, TITLE),
    "plot_bandwidth": lambda: plots.plot_bandwidth(dict(
        copy_Bps=_stats(1e10)[0], read_Bps=_stats(2e10)[0], achieved_Bps=_stats(1e10)[0],
        limit_Bps=2e10, fraction=0.5), TITLE),
    "plot_decode_bound": lambda: plots.plot_decode_bound(_decode_bound_state(), TITLE),
    # the appendices (10: paged blocks; 11: the serving engine)
    "plot_block_table": lambda: plots.plot_block_table([4, 7], 4, 6, 16, others=[0, 1, 2, 3, 5, 6], title=TITLE),
    "plot_paged_memory": lambda: plots.plot_paged_memory(
        {"tokens": 92160, "held": 106496, "pool": 122880, "blocks_held": 13, "blocks_free": 2}, 129024),
    "plot_prefix_caching": lambda: plots.plot_prefix_caching(
        {"prefix": [16, 64, 192], "full": _stats(1e-3, 2e-3, 5e-3), "cached": _stats(1e-3, 1e-3, 1.2e-3),
         "hit_rate": [0.5, 0.7, 0.73]}),
    "plot_block_map": lambda: plots.plot_block_map(_block_map_state()),
    "plot_iterations": lambda: plots.plot_iterations({"不分块": _ENGINE_STEPS, "分块 8": _ENGINE_STEPS}, 16, TITLE),
    "plot_engine_timeline": lambda: plots.plot_engine_timeline(dict(
        steps=_ENGINE_STEPS, schedule=_schedule(), max_batch_tokens=16, prefill_chunk=8, rate=100,
        summary=dict(ttft_p50_s=0.006, itl_p95_s=0.001)), TITLE),
    "plot_speculative_rounds": lambda: plots.plot_speculative_rounds(_speculative_state(), TITLE),
    "plot_first_token_counts": lambda: plots.plot_first_token_counts(
        WORDS[1:5], [0.4, 0.3, 0.2, 0.05, 0.05], {"草稿模型": [40, 30, 20, 6, 4], "提示词查找": [38, 33, 19, 5, 5]}, TITLE),
    "plot_speculative_speedup": lambda: plots.plot_speculative_speedup(_speedup_data(), TITLE),
    # 13: a smaller KV cache
    "plot_quantize_group": lambda: plots.plot_quantize_group([0.3, -1.2, 0.8, 2.1], [7, 0, 9, 15], 0.22, -1.2, 4, TITLE),
    "plot_channel_magnitudes": lambda: plots.plot_channel_magnitudes(np.random.default_rng(0).random((4, 2, 32)),
                                                                     np.random.default_rng(1).random((4, 2, 32)), TITLE),
    "plot_kept_positions": lambda: plots.plot_kept_positions({"recent": [[0, 3, 4, 5]], "key_norm": [[0, 1, 4, 5]]},
                                                             6, 1, 2, TITLE),
    "plot_compression_tradeoff": lambda: plots.plot_compression_tradeoff(_compression_state(), TITLE),
}


def _compression_state():
    from utils.cache_quality import CacheQuality
    from utils.widgets.compression import tradeoff_state

    q = CacheQuality(0.5, 0.99, 0.88, 0.89, 100, 200)
    points = [(("exact",), 1.0, CacheQuality(0.0, 1.0, 0.88, 0.88, 200, 200)),
              (("quant", 4, "channel", "token", 2), 0.5, q), (("evict", "recent", 6), 0.6, q)]
    return tradeoff_state(points, 3, 4, "channel", "token", 2, "none", 6, "loss")

def _speculative_state():
    import torch

    from utils import load_course_model
    from utils.course_model import load_draft_model
    from utils.widgets.speculative import speculative_rounds

    model, tok = load_course_model()
    ids = torch.tensor([tok.encode("<BOS> 他们 也 喜欢 马 。 他们 也")])
    return speculative_rounds(model, load_draft_model(), tok, ids, 12, k=4, rollback=False)


def _speedup_data():
    stats = [{"median": m, "q1": 0.95 * m, "q3": 1.05 * m} for m in (1.0, 1.1, 0.95, 0.7)]
    return {"pass_tokens": list(range(1, 10)), "target_pass_ms": [0.46 + 0.03 * n for n in range(9)],
            "draft_pass_ms": 0.13, "ks": [1, 2, 4, 8],
            "drafts": {"草稿模型": {"tokens_per_round": [1.6, 2.2, 2.8, 3.0], "model_tokens_per_round": [1.6, 2.2, 2.8, 3.0],
                                "measured": stats, "predicted": [1.1, 1.2, 1.06, 0.8]},
                       "提示词查找": {"tokens_per_round": [1.3, 1.5, 1.6, 1.6], "model_tokens_per_round": None,
                                 "measured": stats, "predicted": [1.2, 1.3, 1.35, 1.3]}}}


_ENGINE_STEPS = [dict(start_s=0.0, end_s=0.002, decode=[], prefill=[(0, 8), (1, 8)], preempted=[], running=[0, 1]),
                 dict(start_s=0.002, end_s=0.003, decode=[0, 1], prefill=[], preempted=[1], running=[0])]


def _block_map_state():
    from utils import load_course_model
    from utils.widgets import BlockMapPanel

    model, tok = load_course_model()
    return BlockMapPanel(model, tok).compute(step=24, block_size=4, n_blocks=24)


def _schedule():
    """What ``utils.arrivals.Run.schedule()`` returns, for two requests (seconds)."""
    return dict(arrival_s=[0.0, 0.002], wait_s=[0.0, 0.004], prefill_s=[0.003, 0.003], sample_s=[1e-5, 1e-5],
                token_times=[[0.003, 0.004, 0.005], [0.009, 0.010]], ttft_p50_s=0.006, ttft_p95_s=0.007,
                tpot_p50_s=0.001, tpot_p95_s=0.001, tokens_per_s=500.0, requests_per_s=200.0, busy_tokens_per_s=600.0)


def _course_config():
    from utils.course_model import COURSE_CONFIG
    return COURSE_CONFIG


def _decode_bound_state():
    from utils.widgets import DecodeBoundPanel
    return DecodeBoundPanel(measured_GBps=5.0).state


def test_every_plot_function_has_a_chinese_case():
    assert {name for name in dir(plots) if name.startswith("plot_")} == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_plot_draws_chinese_without_a_missing_glyph(name, fonts):
    png(CASES[name]())


def test_panels_that_plot_tokens_draw_chinese(model_tok, fonts):
    from utils.widgets import PrefillKVPanel, SamplingPanel

    model, tok = model_tok
    sampling = SamplingPanel(model, tok, prompts=("<BOS> 我 喜欢",))
    prefill = PrefillKVPanel(model, tok, prompts=("<BOS> 他们 不 喜欢 兔子 。",))
    for panel in (sampling, prefill):
        assert "error" not in panel.state, panel.state.get("error")
        png(panel.fig)


def test_the_same_pixels_with_and_without_cjk_fonts_on_the_machine(monkeypatch):
    machine = png(CASES["plot_top_probs"]())
    _matplotlib_fonts_only(monkeypatch)
    try:
        assert png(CASES["plot_top_probs"]()) == machine
    finally:
        font_manager.fontManager._findfont_cached.cache_clear()


def test_tokens_are_written_as_themselves():
    fig = plots.plot_top_probs(["猫", "兔子", "cats"], [0.5, 0.3, 0.2], TITLE)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["猫", "兔子", "cats"]
    assert ax.get_title() == TITLE
    plt.close(fig)


def test_course_font_is_the_fallback_after_the_default_family():
    family = matplotlib.rcParams["font.family"]
    assert family[-1] == COURSE_FONT_FAMILY and len(family) >= 2  # the default family first: Latin keeps its font
    found = font_manager.findfont(font_manager.FontProperties(family=COURSE_FONT_FAMILY), fallback_to_default=False)
    assert Path(found) == COURSE_FONT


def test_shipped_font_has_a_glyph_for_every_character_figures_draw():
    assert subset_font.FONT == COURSE_FONT
    vocab = json.loads((ROOT / "utils" / "data" / "course_tokenizer.json").read_text("utf-8"))["vocab"]
    assert subset_font.missing_glyphs(COURSE_FONT, {ch for w in vocab for ch in w}) == []
    drawn = subset_font.drawn_characters()
    assert "猫" in drawn and "a" not in drawn
    assert subset_font.missing_glyphs(COURSE_FONT, drawn) == [], "run: python tools/subset_font.py"


def test_font_ships_small_with_its_licence():
    assert COURSE_FONT.stat().st_size < 500 * 1024
    licence = (COURSE_FONT.parent / "OFL.txt").read_text("utf-8")
    assert "SIL OPEN FONT LICENSE Version 1.1" in licence and "Adobe" in licence
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "data/fonts/*" in package_data["utils"]
