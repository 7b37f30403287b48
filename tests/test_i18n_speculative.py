"""Notebook 12's screen in Chinese: after ``set_language("zh")`` its figures (plot_speculative_rounds,
plot_first_token_counts, plot_speculative_speedup), its panel (SpeculativePanel) and its exercises'
feedback (12.accept_prefix, 12.residual) leave no English word behind and draw no missing glyph; the
course's tokens (the learner's data, drawn as they are) aside. Also the mistakes those exercises must
catch, with a hint, in both languages (MISTAKES_12, for tests/test_exercises.py)."""
import re
from pathlib import Path

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.text  # noqa: E402

import utils.plots as plots  # noqa: E402
from test_fonts import _speedup_data  # noqa: E402
from i18n_support import chinese_screen, english_left, figure_texts, widget_texts  # noqa: E402
from utils.exercises.speculative_exercises import accept_prefix  # noqa: E402
from utils.i18n.zh import MESSAGES  # noqa: E402
from utils.speculative import PromptLookup  # noqa: E402
from utils.widgets import SpeculativePanel  # noqa: E402
from utils.widgets.speculative import speculative_rounds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CJK = re.compile(r"[\u4e00-\u9fff]")


# --- the mistakes the exercises must catch (each one learners make) ---------------------------------
def _every_match_counts(drafts, best):
    n = sum(d == b for d, b in zip(drafts, best))
    return n, best[n]


def _the_refused_draft_as_extra(drafts, best):
    n, _ = accept_prefix(drafts, best)
    return n, drafts[n] if n < len(drafts) else best[n]


def _compared_one_position_late(drafts, best):
    n = 0
    while n < len(drafts) and drafts[n] == best[n + 1]:
        n += 1
    return n, best[n]


def _no_bonus(drafts, best):
    n, _ = accept_prefix(drafts, best)
    return n, best[min(n, max(len(drafts) - 1, 0))]


MISTAKES_12 = {
    "12.accept_prefix": [
        ("every matching draft counts, after a refusal too", _every_match_counts),
        ("the refused draft kept instead of the target's token", _the_refused_draft_as_extra),
        ("draft i compared with the target's choice one position later", _compared_one_position_late),
        ("no bonus: the last draft's position reused", _no_bonus),
    ],
    "12.residual": [
        ("p - q without the max(0, .)", lambda p, q: (p - q) / (p - q).sum()),
        ("not renormalised", lambda p, q: (p - q).clamp(min=0)),
        ("q - p: the draft's excess", lambda p, q: (q - p).clamp(min=0) / (q - p).clamp(min=0).sum()),
        ("drawn from p again", lambda p, q: p.clone()),
        ("no p == q case: 0 / 0", lambda p, q: (p - q).clamp(min=0) / (p - q).clamp(min=0).sum()),
    ],
    "12.accept_or_resample": [
        ("u compared with p(d) alone", lambda p, q, d, u, g: d if u < p[d] else _draw((p - q).clamp(min=0), g)),
        ("the ratio upside down: q(d)/p(d)", lambda p, q, d, u, g: d if u < q[d] / p[d] else _draw((p - q).clamp(min=0), g)),
        ("drawn from p again at a refusal", lambda p, q, d, u, g: d if u < p[d] / q[d] else _draw(p, g)),
        ("the draft's excess max(0, q - p)", lambda p, q, d, u, g: d if u < p[d] / q[d] else _draw((q - p).clamp(min=0), g)),
        ("the draft's token kept at a refusal", lambda p, q, d, u, g: d),
    ],
}
# what each mistake's hint says, in English and in Chinese: the hint names that mistake
RESAMPLE_HINTS = {"u compared with p(d) alone": ("not with p(d) alone", "而不是只和 p(d) 比较"),
                  "the ratio upside down: q(d)/p(d)": ("is upside down", "就颠倒了"),
                  "drawn from p again at a refusal": ("you drew from p again", "你又从 p 中抽取"),
                  "the draft's excess max(0, q - p)": ("where the draft overrates tokens", "草稿模型高估的部分"),
                  "the draft's token kept at a refusal": ("the draft's token is out", "草稿 token 就作废")}


def _draw(r, g):
    return int(torch.multinomial(r / r.sum(), 1, generator=g))


@pytest.mark.parametrize("mistake", sorted(RESAMPLE_HINTS))
def test_accept_or_resample_names_each_mistake_in_both_languages(mistake, capsys):
    from utils import exercises as E
    from utils.i18n import set_language

    wrong = dict(MISTAKES_12["12.accept_or_resample"])[mistake]
    try:
        for language, needle in zip(("en", "zh"), RESAMPLE_HINTS[mistake]):
            set_language(language)
            assert not E.check("12.accept_or_resample", wrong).passed
            hint = capsys.readouterr().out.strip().splitlines()[-1]
            assert needle in hint, (language, hint)
    finally:
        set_language("en")


# --- Chinese --------------------------------------------------------------------------------------------
@pytest.fixture
def chinese():
    with chinese_screen():
        yield


@pytest.fixture(scope="module")
def models():
    from utils.course_model import load_course_model, load_draft_model

    model, tok = load_course_model()
    return model, tok, load_draft_model()[0]


def without_tokens(texts, tok) -> list[str]:
    """``texts`` with the course's words taken out: tokens are the learner's data, drawn as they are."""
    words = sorted({w for w in tok.vocab if w.isascii()}, key=len, reverse=True)
    out = []
    for text in texts:
        for w in words:
            text = re.sub(rf"(?<![\w']){re.escape(w)}(?![\w'])", "", str(text))
        out.append(text)
    return out




def test_plot_speculative_rounds_is_chinese(chinese, models):
    model, tok, draft = models
    ids = torch.tensor([tok.encode("<BOS> I have two cats . I")])
    for drafter, kw in [(draft, dict(k=4)), (draft, dict(k=3, rollback=False)), (draft, dict(k=2, temperature=1.0)),
                        (PromptLookup(), dict(k=4))]:
        state = speculative_rounds(model, drafter, tok, ids, 12, **kw)
        assert all(CJK.search(r["kind_label"]) for r in state["rounds"])  # what a notebook prints per round
        for title in (None, "中文标题"):
            texts = without_tokens(figure_texts(plots.plot_speculative_rounds(state, title=title)), tok)
            assert any(CJK.search(t) for t in texts) and english_left(texts) == []
    plt.close("all")


def test_plot_first_token_counts_and_plot_speculative_speedup_are_chinese(chinese):
    for title in (None, "中文标题"):
        fig = plots.plot_first_token_counts(["鱼", "兔子", "马"], [0.4, 0.35, 0.2, 0.05],
                                            {"草稿模型": [41, 33, 21, 5], "提示词查找": [30, 30, 38, 2]},
                                            title=title)
        texts = figure_texts(fig)
        assert any(CJK.search(t) for t in texts) and english_left(texts) == []
        texts = figure_texts(plots.plot_speculative_speedup(_speedup_data(), title=title))
        assert any(CJK.search(t) for t in texts) and english_left(texts) == []
    plt.close("all")


def test_speculative_panel_is_chinese(chinese, models):
    model, tok, draft = models
    panel = SpeculativePanel(model, tok, draft)
    texts = []
    for name, value in [("k", 1), ("draft", "lookup"), ("prompt", 2), ("temperature", 1.0), ("rollback", False),
                        ("temperature", 0.0), ("k", 8), ("draft", "model"), ("prompt", 3), ("rollback", True)]:
        panel.controls[name].value = value
        assert "error" not in panel.state, panel.state.get("error")
        texts += widget_texts(panel.widget) + figure_texts(panel.fig)
    texts = without_tokens(texts, tok)
    assert english_left(texts) == []
    assert MESSAGES[SpeculativePanel.title] in texts[0]
    assert "裁剪两个缓存（正确做法）" in panel.controls["rollback"]._options_labels
    plt.close("all")


