"""The language the package speaks: English by default, Chinese after ``set_language("zh")``.

Everything the package shows a learner (widget labels, panel titles, figure titles and axis labels,
the check helper's lines, the recompute verdict, the quiz, the exercises' feedback) is written in
English in the code and passed through ``tr``:

    ax.set_title(tr("Cache bytes vs context"))
    tr("{n} tokens cached", n=len(ids))        # the English text is the key; values are named

``tr`` looks the English text up in the catalogue of the current language and fills in the values
with ``str.format``. English needs no catalogue: the key is the text. The Chinese catalogue is one
dict, ``utils.i18n.zh.MESSAGES``, kept in parts by screen area (``zh_*.py``) so that each part sits
next to what it translates. A text missing from the catalogue raises in Chinese, so a new English
label cannot slip into a Chinese notebook unnoticed (``tests/test_i18n.py`` renders every panel and
figure in both languages).

Symbols and code names (B, T, H_kv, ``KVCache``, ``cache_kind``) are the same in both languages.
"""
from __future__ import annotations

LANGUAGES = ("en", "zh")
_state = {"language": "en"}


def set_language(language: str) -> None:
    """Speak ``language`` ("en" or "zh") from now on: call it once, in a notebook's setup cell.

    Panels and figures made after the call use it; a panel made before keeps its labels.
    """
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {LANGUAGES}, got {language!r}")
    if language != "en":
        catalogue(language)  # load it now, so a broken catalogue fails here and not in a widget
    _state["language"] = language


def language() -> str:
    """The current language: "en" or "zh"."""
    return _state["language"]


def catalogue(language: str) -> dict[str, str]:
    """English text -> its translation, for ``language`` ("zh"); English itself has none."""
    if language == "zh":
        from .zh import MESSAGES
        return MESSAGES
    raise ValueError(f"no catalogue for {language!r}: English is the keys, and the others are {LANGUAGES[1:]}")


def tr(message: str, /, **values) -> str:
    """``message`` in the current language, with ``{name}`` fields filled from ``values``.

    In Chinese a message that is not in the catalogue raises ``KeyError`` naming it: add it to
    the right ``utils/i18n/zh_*.py``.
    """
    lang = _state["language"]
    text = message
    if lang != "en":
        try:
            text = catalogue(lang)[message]
        except KeyError:
            raise KeyError(f"no {lang} translation of {message!r}: add it to utils/i18n/{lang}_*.py") from None
    return text.format(**values) if values else text


class Names(dict):
    """A dict of names whose values are English catalogue keys: ``names[key]`` is the name in the
    current language (``POLICY_NAMES["fifo"]``, ``KIND_NAMES["choice"]``). The keys, which code
    compares, stay as they are; ``.values()`` and ``.items()`` give the English keys."""

    def __getitem__(self, key):
        return tr(super().__getitem__(key))


def in_language(texts: dict[str, str]) -> str:
    """Pick one of ``{"en": ..., "zh": ...}`` by the current language: for a long text (a question's
    explanation, a hint) that is better written whole in each language than as one catalogue key."""
    lang = _state["language"]
    if lang not in texts:
        raise KeyError(f"no {lang} text among {sorted(texts)}")
    return texts[lang]


from .width import display_width, pad  # noqa: E402  (tables that hold Chinese pad by columns, not characters)
