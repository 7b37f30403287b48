"""The language switch (utils/i18n): English by default, Chinese after set_language("zh"); every text the
package passes through ``tr`` has a Chinese translation with the same fields; the check helper and the
recompute verdict speak the current language. Each screen area's "no English left in Chinese" test is
tests/test_i18n_<area>.py; the last test here makes sure every panel and plot function has one."""
import ast
import importlib
import inspect
import pkgutil
import re
import string
from pathlib import Path

import pytest
import torch

import utils.plots as plots
import utils.widgets as widgets
from utils import compare_with_recompute
from utils.config import ModelConfig
from utils.i18n import set_language
from utils.i18n import LANGUAGES, catalogue, in_language, language, tr
from utils.i18n import zh as zh_catalogue
from utils.model import Decoder
from utils.check import check

from i18n_support import english_left

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def zh():
    set_language("zh")
    yield
    set_language("en")


def test_english_is_the_default_and_its_keys_are_its_text():
    assert language() == "en" and LANGUAGES == ("en", "zh")
    assert tr("{n} tokens", n=3) == "3 tokens"


@pytest.mark.parametrize("bad", ["fr", "ZH", "", None, 1])
def test_an_unknown_language_is_refused_by_name(bad):
    with pytest.raises(ValueError, match=re.escape(repr(bad))):
        set_language(bad)
    assert language() == "en"


def test_a_text_missing_in_chinese_raises_naming_it(zh):
    with pytest.raises(KeyError, match="no zh translation of 'not a catalogue key'"):
        tr("not a catalogue key")
    assert in_language({"en": "yes", "zh": "是"}) == "是"


def test_a_key_translated_two_ways_in_two_parts_is_refused():
    class Part:
        def __init__(self, name, messages):
            self.__name__, self.MESSAGES = name, messages
    assert zh_catalogue._merge(Part("a", {"x": "甲"}), Part("b", {"x": "甲"})) == {"x": "甲"}
    with pytest.raises(ValueError, match="translated two ways"):
        zh_catalogue._merge(Part("a", {"x": "甲"}), Part("b", {"x": "乙"}))


def _tr_literals() -> list[tuple[str, str]]:
    """(file, key) for every ``tr("literal", ...)`` call in the package, and every panel's ``title``
    (the Panel base shows it through tr)."""
    found = []
    for path in sorted((ROOT / "utils").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr" and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                found.append((str(path.relative_to(ROOT)), node.args[0].value))
            if isinstance(node, ast.ClassDef):
                found += [(str(path.relative_to(ROOT)), b.value.value) for b in node.body if isinstance(b, ast.Assign)
                          and getattr(b.targets[0], "id", None) == "title" and isinstance(b.value, ast.Constant) and b.value.value]
    return found


def _keys_passed_to_tr_from_tables() -> set[str]:
    """Texts the package passes to tr from a table rather than as a literal: names of rules, groupings,
    policies and hardware, the parts of a TTFT, the caches' names; every exercise's hint, case words
    and case hints."""
    from utils.exercises import EXERCISES
    from utils.plots.compression import RULE_NAMES
    from utils.widgets.compression import GROUP_NAMES
    from utils.widgets.metrics import HARDWARE_BANDWIDTH_GBPS, POLICY_NAMES

    keys = {*RULE_NAMES.values(), *GROUP_NAMES.values(), *POLICY_NAMES.values(), *HARDWARE_BANDWIDTH_GBPS,
            "waiting", "setup + prefill", "first sampling", "dynamic", "static", "sliding", "symptom", "cause",
            "worst ITL", "TTFT"}
    for ex in EXERCISES.values():
        keys |= {ex.hint} | {c.words for c in ex.cases()} | {c.hint for c in ex.cases() if c.hint}
    return keys


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_every_text_the_package_translates_has_chinese_with_the_same_fields():
    literals = _tr_literals() + [("(a table)", k) for k in sorted(_keys_passed_to_tr_from_tables())]
    assert len(literals) > 500
    missing = [f"{f}: {k!r}" for f, k in literals if k not in catalogue("zh")]
    assert not missing, "add to utils/i18n/zh_*.py:\n" + "\n".join(missing)
    bad = [f"{k!r} -> {v!r}" for k, v in catalogue("zh").items() if _fields(k) != _fields(v)]
    assert not bad, "a translation must keep every {field} of its key:\n" + "\n".join(bad)
    english = english_left(re.sub(r"\{[^{}]*\}", " ", v) for v in catalogue("zh").values())
    assert not english, "English left in Chinese translations:\n" + "\n".join(english)


def test_the_check_helper_speaks_the_current_language(capsys, zh):
    check("缓存结果等于重算结果", True)
    check("坏掉的缓存给出同样的 token", False, expect=False)
    out = capsys.readouterr().out.splitlines()
    assert out == ["缓存结果等于重算结果：True", "坏掉的缓存给出同样的 token：False（故意展示的错误版本：预期就是 False）"]


def test_the_recompute_verdict_speaks_the_current_language(zh):
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=32, n_layers=2, n_heads=4, n_kv_heads=2, d_model=32, d_ff=64, max_seq_len=64)
    report = compare_with_recompute(Decoder(cfg).eval(), torch.randint(0, 32, (1, 5)), 3)
    assert report.ok and report.verdict == f"通过：{len(report.max_diffs)} 步中缓存结果与完全重算一致（容差 {report.tol:g}）"


def _screen_names() -> list[str]:
    """Every plot function and every panel class the notebooks use."""
    names = [n for n, f in vars(plots).items() if n.startswith("plot_") and inspect.isfunction(f)]
    for module in pkgutil.iter_modules(widgets.__path__):
        mod = importlib.import_module(f"utils.widgets.{module.name}")
        names += [n for n, c in vars(mod).items() if inspect.isclass(c) and issubclass(c, widgets.Panel)
                  and c is not widgets.Panel]
    return sorted(set(names + ["Quiz"]))


def test_every_panel_and_plot_function_has_a_chinese_screen_test():
    tests = "\n".join(p.read_text(encoding="utf-8") for p in ROOT.glob("tests/test_i18n_*.py"))
    missing = [n for n in _screen_names() if not re.search(rf"\b{n}\b", tests)]
    assert not missing, f"render these in Chinese in a tests/test_i18n_<area>.py: {missing}"
