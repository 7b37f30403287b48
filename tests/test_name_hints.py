"""Jumping into the middle of a notebook: a NameError also says where the course defines the name."""
import sys
from pathlib import Path

import pytest

from utils.i18n import set_language
from utils.name_hints import definitions, explain_name_errors, hint

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import nbsync  # noqa: E402


def test_the_index_of_defined_names_is_generated_from_the_notebooks():
    assert nbsync.sync_names(check=True) is False, "run `python tools/nbsync.py`"
    assert set(definitions("en")) == set(definitions("zh")) and "04_cache_sizing.ipynb" in definitions("en")


def test_the_hint_names_the_section_of_this_notebook_that_defines_the_name():
    section = definitions("en")["04_cache_sizing.ipynb"]["llama3"]
    text = hint("llama3", "04_cache_sizing.ipynb")
    assert f'section "{section}"' in text and "Run All Above Selected Cell" in text


def test_without_the_notebook_the_hint_lists_where_the_course_defines_it():
    text = hint("cfg")
    n = sum("cfg" in names for names in definitions("en").values())
    assert n > 3 and text.count(".ipynb") == 3 and f"and {n - 3} more" in text  # the first three are named
    assert "Run All Above" in hint("not_a_course_name")


def test_the_hint_speaks_chinese_with_the_chinese_notebooks_sections():
    set_language("zh")
    try:
        text = hint("llama3", "04_cache_sizing.ipynb")
        assert definitions("zh")["04_cache_sizing.ipynb"]["llama3"] in text and "请先运行上面的单元格" in text
    finally:
        set_language("en")


class FakeShell:
    def __init__(self):
        self.handler, self.shown = None, []

    def set_custom_exc(self, types, handler):
        assert types == (NameError,)
        self.handler = handler

    def showtraceback(self, exc_tuple, tb_offset=None):
        self.shown.append(exc_tuple[0])


def test_a_name_error_shows_its_traceback_then_the_hint(capsys, monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", str(ROOT / "notebooks" / "04_cache_sizing.ipynb"))
    shell = FakeShell()
    explain_name_errors(shell)
    try:
        llama3  # noqa: F821, B018
    except NameError as err:
        shell.handler(shell, NameError, err, err.__traceback__)
    assert shell.shown == [NameError]
    assert capsys.readouterr().out.strip() == hint("llama3", "04_cache_sizing.ipynb")


@pytest.mark.parametrize("message", ["division by zero", "name is not a name"])
def test_other_errors_get_no_hint(capsys, message):
    shell = FakeShell()
    explain_name_errors(shell)
    shell.handler(shell, NameError, NameError(message), None)
    assert capsys.readouterr().out == ""
