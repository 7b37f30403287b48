"""Figures draw Chinese with the course's own font, the same pixels on every machine, and never
a missing-glyph box. Every plot function and panel is drawn in Chinese, with only the course font
able to draw it and a "Glyph ... missing" warning an error, by the Chinese-screen tests
(tests/test_i18n_*.py, through i18n_support.chinese_screen); here: the panels that plot the model's
Chinese tokens in an English notebook, the same pixels with and without the machine's CJK fonts,
the font's place in the fallback list, and the shipped subset's glyphs and licence."""
import io
import json
import sys
import tomllib
import warnings
from pathlib import Path
from types import SimpleNamespace as NS

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import font_manager  # noqa: E402

import utils.plots as plots  # noqa: E402
from utils.plots import COURSE_FONT, COURSE_FONT_FAMILY  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import subset_font  # noqa: E402
from i18n_support import no_cjk_font  # noqa: E402

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


# --- data the Chinese-screen tests draw (tests/test_i18n_*.py) -----------------------------------
def _stats(*medians):
    return [NS(median=m, q1=0.9 * m, q3=1.1 * m, samples=[0.8 * m, m, 1.2 * m]) for m in medians]


_T = [16, 64, 256]
_SEGMENTS = [NS(phase="prefill" if i == 0 else "decode", step=i, start_s=i * 1e-3, duration_s=1e-3,
                end_s=(i + 1) * 1e-3) for i in range(6)]


def _speedup_data():
    stats = [{"median": m, "q1": 0.95 * m, "q3": 1.05 * m} for m in (1.0, 1.1, 0.95, 0.7)]
    return {"pass_tokens": list(range(1, 10)), "target_pass_ms": [0.46 + 0.03 * n for n in range(9)],
            "draft_pass_ms": 0.13, "ks": [1, 2, 4, 8],
            "drafts": {"草稿模型": {"tokens_per_round": [1.6, 2.2, 2.8, 3.0], "model_tokens_per_round": [1.6, 2.2, 2.8, 3.0],
                                "measured": stats, "predicted": [1.1, 1.2, 1.06, 0.8]},
                       "提示词查找": {"tokens_per_round": [1.3, 1.5, 1.6, 1.6], "model_tokens_per_round": None,
                                 "measured": stats, "predicted": [1.2, 1.3, 1.35, 1.3]}}}


def _schedule():
    """What ``utils.serving.Run.schedule()`` returns, for two requests (seconds)."""
    return dict(arrival_s=[0.0, 0.002], wait_s=[0.0, 0.004], prefill_s=[0.003, 0.003], sample_s=[1e-5, 1e-5],
                token_times=[[0.003, 0.004, 0.005], [0.009, 0.010]], ttft_p50_s=0.006, ttft_p95_s=0.007,
                tpot_p50_s=0.001, tpot_p95_s=0.001, tokens_per_s=500.0, requests_per_s=200.0, busy_tokens_per_s=600.0)


def _course_config():
    from utils.course_model import COURSE_CONFIG
    return COURSE_CONFIG


def test_panels_that_plot_tokens_draw_chinese_in_an_english_notebook(model_tok):
    from utils.widgets import PrefillKVPanel, SamplingPanel

    model, tok = model_tok
    with no_cjk_font():
        sampling = SamplingPanel(model, tok, prompts=("<BOS> 我 喜欢",))
        prefill = PrefillKVPanel(model, tok, prompts=("<BOS> 他们 不 喜欢 兔子 。",))
        for panel in (sampling, prefill):
            assert "error" not in panel.state, panel.state.get("error")
            png(panel.fig)


def test_the_same_pixels_with_and_without_cjk_fonts_on_the_machine():
    def draw():
        return png(plots.plot_top_probs(WORDS[:6], [0.5, 0.2, 0.1, 0.1, 0.05, 0.05], TITLE))

    machine = draw()
    with no_cjk_font():
        assert draw() == machine


def test_tokens_are_written_as_themselves():
    # in English a Chinese token carries its meaning under it; the token itself is drawn as it is
    fig = plots.plot_top_probs(["猫", "兔子", "cats"], [0.5, 0.3, 0.2], TITLE)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["猫\n(cat)", "兔子\n(rabbit)", "cats"]
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
