"""What the course language says next, exactly, and what its Chinese words mean in English.

The course model learns a grammar we wrote down (``utils.corpus``), so for any prompt we can
compute the next-word distribution a *perfect* model would give, and set the trained model's
probabilities beside it::

    >>> next_word_probs("<BOS> I like")["cats"]      # the favourite of "I", 3 times out of 4
    0.75

Half the language is Chinese. For a reader who does not read it, ``gloss`` gives each Chinese
word's English meaning, and ``label`` writes a token as a figure or table shows it: ``猫 (cat)``
in the English notebooks, plain ``猫`` in the Chinese ones.
"""
from __future__ import annotations

from functools import lru_cache

from .corpus import (ADJECTIVES, ANIMALS, NUMBERS, P_SECOND, SUBJECTS, _doc_prob, _sentence_table,
                     _subject_probs, _sentence_prob)
from .i18n import display_width, language, pad, tr

_ENDS = ("。", ".")


# --- the grammar's next word ----------------------------------------------------------------------
@lru_cache(maxsize=None)
def _first_sentences() -> list[tuple[tuple[str, ...], float]]:
    """Every sentence that can open a document, with its probability (language 1/2 included)."""
    out = []
    for words, (lang, s) in _sentence_table().items():
        if s.kind != "also":
            p = 0.5 * _subject_probs()[s.subject] * _sentence_prob(s)
            if p > 0:
                out.append((words, p))
    return out


def next_word_probs(prefix: str) -> dict[str, float]:
    """The grammar's distribution of the word after ``prefix`` (a prompt starting with ``<BOS>``).

    Returns ``{word: probability}``, most likely first, summing to 1. A prefix the grammar can never
    produce raises ``ValueError`` naming it.
    """
    if not isinstance(prefix, str):
        raise ValueError(f"prefix must be a string of words starting with <BOS>, got {type(prefix).__name__}")
    words = prefix.split()
    if not words or words[0] != "<BOS>" or "<EOS>" in words or "<PAD>" in words:
        raise ValueError(f"prefix must start with <BOS> and hold no <EOS> or <PAD>, got {prefix!r}")
    body = words[1:]
    cut = next((i + 1 for i, w in enumerate(body) if w in _ENDS), None)  # end of sentence 1
    counts: dict[str, float] = {}

    def add(word: str, p: float) -> None:
        counts[word] = counts.get(word, 0.0) + p

    if cut is None:  # inside sentence 1: only that sentence decides the next word
        for sent, p in _first_sentences():
            if sent[: len(body)] == tuple(body):
                add(sent[len(body)], p)
    else:
        first = _sentence_table().get(tuple(body[:cut]))
        second = tuple(body[cut:])
        if first is not None and first[1].kind != "also":
            lang, f = first
            if not second:
                add("<EOS>", _doc_prob(0.5, f, None))
            for sent, (lang2, s) in _sentence_table().items():
                if lang2 != lang or sent[: len(second)] != second:
                    continue
                p = _doc_prob(0.5, f, s)
                if p > 0:
                    add("<EOS>" if len(sent) == len(second) else sent[len(second)], p)
    total = sum(counts.values())
    if total <= 0:
        raise ValueError(f"the course grammar never produces {prefix!r}: no word can follow it")
    return {w: p / total for w, p in sorted(counts.items(), key=lambda kv: -kv[1])}


# --- English glosses of the Chinese words ---------------------------------------------------------
@lru_cache(maxsize=None)
def _glosses() -> dict[str, str]:
    table = {zh: en for zh, en, _, _ in SUBJECTS.values()}
    table.update({zh: singular for zh, _, singular, _ in ANIMALS.values()})
    table.update({zh: en for zh, en, _ in NUMBERS.values()})
    table.update({zh: en for en, zh in ADJECTIVES.items()})
    table.update({"很": "really", "喜欢": "like", "不": "not", "也": "also", "有": "have", "。": ".",
                  "只": "counter", "条": "counter", "匹": "counter"})  # 只/条/匹: measure words, as in "two head of cattle"
    table["一"] = "a/one"
    return table


def gloss(word: str) -> str | None:
    """The English meaning of a Chinese word of the course language (``"猫"`` -> ``"cat"``); None for
    a word that is not Chinese (English words, ``<BOS>``). 只, 条 and 匹 are measure words: "counter"."""
    return _glosses().get(word)


def label(word: str) -> str:
    """A token as a figure or table shows it: ``猫 (cat)`` in English, ``猫`` in Chinese."""
    meaning = gloss(word)
    if meaning is None or language() != "en" or word == "。":
        return word
    return f"{word} ({meaning})"


def interlinear(text: str) -> str:
    """Two lines: the words of ``text``, and under each Chinese word its English meaning, aligned::

        <BOS> 我  喜欢  猫
              I   like  cat

    In Chinese, or for a text without Chinese words, just ``text``.
    """
    words = text.split()
    unders = [gloss(w) or "" for w in words]
    if language() != "en" or not any(unders):  # a Chinese reader needs no gloss; English text has none
        return text
    widths = [max(display_width(w), display_width(u)) for w, u in zip(words, unders)]
    top = " ".join(pad(w, n) for w, n in zip(words, widths))
    bottom = " ".join(pad(u, n) for u, n in zip(unders, widths))
    return top.rstrip() + "\n" + bottom.rstrip()


def model_vs_grammar(prompt: str, probs, vocab: list[str], k: int = 5) -> str:
    """A small table: the model's ``k`` most likely next tokens after ``prompt``, each with the model's
    probability (``probs``: ``[V]``) and the grammar's exact one, so a learner sees how close training got.

    Tokens are shown with ``label`` (glossed in English). A prompt the grammar cannot produce gets "-".
    """
    try:
        exact = next_word_probs(prompt)
    except ValueError:
        exact = {}
    probs = [float(p) for p in probs]
    if len(probs) != len(vocab):
        raise ValueError(f"probs must have one entry per vocabulary word ({len(vocab)}), got {len(probs)}")
    order = sorted(range(len(probs)), key=lambda i: -probs[i])[:k]
    labels = [label(vocab[i]) for i in order]
    width = max([display_width(s) for s in labels] + [display_width(tr("token"))]) + 2
    lines = [pad(tr("token"), width) + pad(tr("model"), 8, ">") + pad(tr("grammar"), 10, ">")]
    for i, text in zip(order, labels):
        g = f"{exact[vocab[i]]:.2f}" if vocab[i] in exact else ("0.00" if exact else "-")
        lines.append(pad(text, width) + f"{probs[i]:>8.2f}" + pad(g, 10, ">"))
    return "\n".join(lines)
