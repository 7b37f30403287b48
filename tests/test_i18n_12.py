"""Notebook 12's screen in Chinese: after ``set_language("zh")`` its figures (plot_speculative_rounds,
plot_first_token_counts, plot_speculative_speedup), its panel (SpeculativePanel) and its exercises'
feedback (12.accept_prefix, 12.residual) leave no English word behind and draw no missing glyph; the
course's tokens (the learner's data, drawn as they are) aside. Also the mistakes those exercises must
catch, with a hint, in both languages (MISTAKES_12, for tests/test_exercises.py)."""
import ast
import re
import warnings
from pathlib import Path

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.text  # noqa: E402

import utils.plots as plots  # noqa: E402
from i18n_support import english_left  # noqa: E402
from test_fonts import png  # noqa: E402
from utils import exercises as E  # noqa: E402
from utils.course import set_language  # noqa: E402
from utils.exercises.speculative_exercises import EXERCISES_12, accept_prefix  # noqa: E402
from utils.i18n.zh import MESSAGES  # noqa: E402
from utils.speculative import PromptLookup  # noqa: E402
from utils.widgets import SpeculativePanel  # noqa: E402
from utils.widgets.speculative import speculative_rounds  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODULES = ["utils/plots/speculative.py", "utils/widgets/speculative.py"]
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
}


@pytest.mark.parametrize("exercise_id, name, wrong", [(k, n, f) for k, ms in MISTAKES_12.items() for n, f in ms],
                         ids=[f"{k}:{n}" for k, ms in MISTAKES_12.items() for n, _ in ms])
def test_a_planted_mistake_fails_with_a_hint(exercise_id, name, wrong, capsys):
    report = E.check(exercise_id, wrong)
    out = capsys.readouterr().out
    assert not report.passed and "✗" in out and "Hint:" in out and "Traceback" not in out


@pytest.mark.parametrize("exercise_id", sorted(MISTAKES_12))
def test_the_reference_passes_and_a_stub_is_not_written_yet(exercise_id, capsys):
    assert E.check(exercise_id, E.EXERCISES[exercise_id].solution).passed

    def stub(*args):
        raise NotImplementedError
    assert not E.check(exercise_id, stub).written and "not written yet" in capsys.readouterr().out


# --- Chinese --------------------------------------------------------------------------------------------
@pytest.fixture
def chinese():
    set_language("zh")
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=r"Glyph .* missing", category=UserWarning)
        yield
    set_language("en")


@pytest.fixture(scope="module")
def models():
    from utils.course_model import load_course_model, load_draft_model

    model, tok = load_course_model()
    return model, tok, load_draft_model()


def without_tokens(texts, tok) -> list[str]:
    """``texts`` with the course's words taken out: tokens are the learner's data, drawn as they are."""
    words = sorted({w for w in tok.vocab if w.isascii()}, key=len, reverse=True)
    out = []
    for text in texts:
        for w in words:
            text = re.sub(rf"(?<![\w']){re.escape(w)}(?![\w'])", "", str(text))
        out.append(text)
    return out


def figure_texts(fig) -> list[str]:
    fig.canvas.draw()
    texts = [t.get_text() for t in fig.findobj(matplotlib.text.Text)]
    png(fig)  # glyph warnings are errors here
    return [t for t in texts if t]


def widget_texts(w) -> list[str]:
    texts = [getattr(w, name, None) or "" for name in ("description", "tooltip")]
    texts += list(getattr(w, "_options_labels", ()))
    if isinstance(w, (widgets.HTML, widgets.Label)):
        texts.append(w.value)
    for child in getattr(w, "children", ()):
        texts += widget_texts(child)
    return [t for t in texts if t]


def _speedup_data():
    stats = [{"median": m, "q1": 0.95 * m, "q3": 1.05 * m} for m in (1.0, 1.1, 1.0, 0.8)]
    return {"pass_tokens": list(range(1, 10)), "target_pass_ms": [0.5 + 0.03 * n for n in range(9)],
            "draft_pass_ms": 0.13, "ks": [1, 2, 4, 8],
            "drafts": {"草稿模型": {"tokens_per_round": [1.6, 2.2, 2.7, 2.9], "model_tokens_per_round": [1.6, 2.2, 2.8, 2.9],
                                "measured": stats, "predicted": [1.05, 1.3, 1.15, 0.9]},
                       "提示词查找": {"tokens_per_round": [1.3, 1.5, 1.6, 1.6], "model_tokens_per_round": None,
                                 "measured": stats, "predicted": [1.2, 1.3, 1.4, 1.35]}}}


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


@pytest.mark.parametrize("exercise_id", sorted(MISTAKES_12))
def test_exercise_feedback_is_chinese(exercise_id, chinese, capsys):
    def stub(*args):
        raise NotImplementedError
    outs = []
    for fn in [stub, E.EXERCISES[exercise_id].solution, lambda *a: None, lambda *a: ([1], "x")]:
        E.check(exercise_id, fn)
        outs.append(capsys.readouterr().out)
    for _, wrong in MISTAKES_12[exercise_id]:
        assert not E.check(exercise_id, wrong).passed
        outs.append(capsys.readouterr().out)
    assert outs[0].startswith(f"{exercise_id}：还没有写") and "全部" in outs[1]
    lines = [re.sub(r"[A-Za-z]*Error: .*", "", line) for out in outs for line in out.splitlines()]
    assert english_left(re.sub(r"'[^']*'", "", line) for line in lines) == []
    assert all(CJK.search(line) for line in lines if not line.startswith("  ✓")), lines


def test_every_literal_tr_key_of_notebook_12_is_in_the_catalogue():
    keys = set()
    for path in MODULES:
        for node in ast.walk(ast.parse((ROOT / path).read_text("utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr" and node.args \
                    and isinstance(node.args[0], ast.Constant):
                keys.add(node.args[0].value)
    keys.add(SpeculativePanel.title)
    for ex in EXERCISES_12:  # the cases' words and hints are shown through tr
        keys |= {ex.hint} | {c.words for c in ex.cases()} | {c.hint for c in ex.cases() if c.hint}
    assert len(keys) > 60
    assert sorted(k for k in keys if k not in MESSAGES) == []
