"""How the bank writes a question: once, with its two languages side by side.

    ask(2, "choice",
        prompt={"en": "Which two tensors does the KV cache keep for every layer?",
                "zh": "KV 缓存为每一层保存哪两个张量？"},
        options={"en": ("Q and K", "K and V", "Q and V", "hidden states and logits"),
                 "zh": ("Q 和 K", "K 和 V", "Q 和 V", "隐藏状态和 logits")},
        answer=1,  # the right option's index: the same in both languages
        why={"en": "Keys and values of past tokens are all a new query needs; ...",
             "zh": "新的查询需要的只是过去 token 的键和值；..."},
        seed=True)

Every text (``prompt``, ``options``, ``why``, an open question's model answer) is a dict
``{"en": ..., "zh": ...}``. The answer is given once, for both languages:

    choice     the index of the right option
    truefalse  a bool
    fill       a number, a string or a tuple of accepted strings (a dict by language where the two
               write it differently, e.g. "13 to 20" and "13 到 20")
    open       the model answer, a dict by language

A fill-in counted in a unit names it (``unit="GiB"``: "2 GiB" and "2048 MiB" are then right, "2 MiB"
wrong); a "run this, predict, then check" question gives its ``code``, shown under the prompt, and
computes its answer by running that very code (``snippet.py``).

``answer`` and ``why`` may also be functions of no argument that compute what they stand for (a
``why`` function returns the dict of both languages): each runs once, the first time either
language reads it, so a number in an explanation is computed once for both texts.

``check_pair`` is the one place that checks a question's two languages against each other; ``ask``
calls it for every question, at import, without computing anything.
"""
from __future__ import annotations

from functools import cache

from ..i18n import LANGUAGES  # ("en", "zh"): every question is written in each
from .question import KINDS, Question


def ask(notebook: int, kind: str, *, prompt: dict, answer, why, options: dict | None = None,
        seed: bool = False, unit: str | None = None, code: str = "") -> Question:
    """One question in both languages: returns the English ``Question``; ``q.languages`` holds both.
    ``unit`` (a fill-in's unit, e.g. "GiB") and ``code`` (a snippet to predict) are the same in both."""
    check_pair(notebook, kind, prompt=prompt, answer=answer, why=why, options=options, seed=seed)
    answer, why = _once(answer), _once(why)
    languages: dict[str, Question] = {}  # shared by the two: each holds both
    for lang in LANGUAGES:
        shown = tuple(options[lang]) if options else ()
        languages[lang] = Question(notebook, kind, prompt[lang], _answer_in(kind, answer, shown, lang, prompt["en"]),
                                   _in(why, lang, prompt["en"]), options=shown, seed=seed, unit=unit, code=code,
                                   languages=languages)
    return languages["en"]


def check_pair(notebook: int, kind: str, *, prompt, answer, why, options=None, seed: bool = False) -> None:
    """Raise ``ValueError`` naming the question unless both languages are there and agree: a prompt and an
    explanation in each, options of the same number in each (choice only), a static answer that is
    valid (an option's index, a bool, a fill-in in each language, a model answer in each)."""
    name = prompt.get("en", prompt) if isinstance(prompt, dict) else prompt

    def fail(problem: str):
        raise ValueError(f"question {name!r} (notebook {notebook!r}, {kind!r}): {problem}")

    if kind not in KINDS:
        fail(f"kind must be one of {KINDS}")
    if not isinstance(notebook, int) or not isinstance(seed, bool):
        fail(f"notebook must be an int and seed a bool, got {notebook!r} and {seed!r}")
    if not _both(prompt, str):
        fail(f"the prompt needs a text in each of {LANGUAGES}, got {prompt!r}")
    if not (callable(why) or _both(why, str)):
        fail(f"the explanation needs a text in each of {LANGUAGES} (or a function returning both), got {why!r}")
    if kind != "choice":
        if options:
            fail(f"only a choice question has options, got {options!r}")
    elif not _both(options, tuple) or len({len(options[lang]) for lang in LANGUAGES}) != 1:
        fail(f"the options need a tuple in each of {LANGUAGES}, as many in each, got {options!r}")
    elif len(options["en"]) < 2 or any(len(set(options[lang])) != len(options[lang]) for lang in LANGUAGES):
        fail(f"a choice needs two or more distinct options in each language, got {options!r}")
    if callable(answer):  # computed: checked when first read
        return
    if kind == "choice" and not (type(answer) is int and 0 <= answer < len(options["en"])):
        fail(f"a choice's answer is the index of its right option (0 to {len(options['en']) - 1}), got {answer!r}")
    if kind == "truefalse" and not isinstance(answer, bool):
        fail(f"a true/false answer must be a bool, got {answer!r}")
    if kind == "fill" and (isinstance(answer, bool) or answer in ("", ())
                           or (isinstance(answer, dict) and not _both(answer, (str, int, float, tuple)))):
        fail(f"a fill-in answer is a number, a text or a tuple of texts (a dict by language), got {answer!r}")
    if kind == "open" and not _both(answer, str):
        fail(f"an open question's model answer needs a text in each of {LANGUAGES}, got {answer!r}")


def _both(texts, kind) -> bool:
    """Whether ``texts`` is a dict with exactly the course's languages, each a non-empty ``kind``."""
    return (isinstance(texts, dict) and set(texts) == set(LANGUAGES)
            and all(isinstance(t, kind) and t not in ("", ()) for t in texts.values()))


def _once(given):
    """A function of no argument runs once, for both languages; a value stays as it is."""
    return cache(given) if callable(given) else given


def _in(given, lang: str, name: str):
    """``given`` in ``lang``: a dict by language gives its ``lang`` entry, any other value is the same in
    both; a function gives a function that picks from what it computes."""
    if callable(given):
        return lambda: _in(given(), lang, name)
    if isinstance(given, dict):
        if lang not in given:
            raise ValueError(f"question {name!r}: no {lang} text among {sorted(given)}")
        return given[lang]
    return given


def _answer_in(kind: str, answer, options: tuple[str, ...], lang: str, name: str):
    """The answer as a ``Question`` in ``lang`` takes it: a choice's index becomes that language's option."""
    if kind != "choice":
        return _in(answer, lang, name)
    if callable(answer):
        return lambda: _option(options, answer())
    return options[answer]


def _option(options: tuple[str, ...], index) -> str:
    if type(index) is not int or not 0 <= index < len(options):
        raise ValueError(f"a computed choice answer must be an option's index (0 to {len(options) - 1}), got {index!r}")
    return options[index]
