"""The course model's training text: a tiny, fully specified language about who likes which pet.

Every document is one or two short sentences, all in Chinese or all in English, between
``<BOS>`` and ``<EOS>``, with words separated by single spaces (one word = one token)::

    <BOS> 我 喜欢 猫 。 <EOS>
    <BOS> she has two small fish . <EOS>
    <BOS> 他 不 喜欢 猫 。 我们 有 一 只 鸟 。 <EOS>
    <BOS> I like cats . I also like horses . <EOS>

Because the grammar is known exactly, we know what a perfect model would predict, and we can
check any generated text with ``is_grammatical``.

The grammar (every random choice, with its probability)
--------------------------------------------------------

Document::

    language     Chinese 1/2, English 1/2                      (all sentences in one language)
    sentence 1   subject: 我/I 0.30; 你/you, 他/he, 她/she, 我们/we, 他们/they 0.14 each
    sentence 2   with probability 0.30 a second sentence follows, else <EOS>:
                   after a "like" sentence: "also" 1/2, "another subject" 1/2
                   after "dislike" or "have": "another subject"
                 "another subject": a new subject (weights above, renormalised without the
                 first subject), then a sentence drawn like sentence 1
                 "also": the same subject, 也 喜欢 / also like(s), an object other than
                 sentence 1's (uniform over the other five)

Sentence, given its subject::

    kind         like 0.50, dislike 0.20, have 0.30
    like         [很 / really] 0.15, then 喜欢 / like(s), then an object
    dislike      不 喜欢 / don't like, doesn't like, then a disliked object
    have         有 / have, has, a number, [an adjective] 0.30, then an object
    number       一 / a 0.40, 两 / two 0.35, 三 / three 0.25
    adjective    小 small, 大 big, 白 white, 黑 black, 1/4 each

Objects depend on the subject (this is the structure the model must learn from context)::

    subject      favourite (like, have)    disliked (dislike)
    我  / I      猫 cats                   狗 dogs
    你  / you    兔子 rabbits              鱼 fish
    他  / he     狗 dogs                   猫 cats
    她  / she    鱼 fish                   鸟 birds
    我们 / we    鸟 birds                  马 horses
    他们 / they  马 horses                 兔子 rabbits

    like, have:  the favourite 0.75, each of the other five 0.05
    dislike:     the disliked one 0.70, each of the other four 0.075; never the favourite

So ``<BOS> 我 喜欢`` continues with 猫 three times out of four.

Agreement rules:

* English verbs agree with the subject: I/you/we/they like, have, don't like;
  he/she likes, has, doesn't like.
* English nouns are plural after like(s), two and three, singular after "a" ("fish" is both).
* Chinese measure words agree with the noun: 只 for 猫 狗 鸟 兔子, 条 for 鱼, 匹 for 马
  (一 只 猫, 两 条 鱼, 三 匹 黑 马).
* Chinese sentences end with 。, English sentences with "." (a separate word).

``make_corpus(n_docs, seed)`` draws documents; ``make_splits`` cuts them into a training and a
held-out set; ``doc_log_prob(text)`` gives a document's exact probability under this grammar
(so we can compute the best loss any model could reach); ``is_grammatical(text)`` checks a
document; ``vocabulary()`` lists every word, in the fixed order the tokenizer uses.
"""
from __future__ import annotations

import math
import random
from functools import lru_cache
from typing import NamedTuple

from .validate import check_int

SPECIALS = ("<PAD>", "<BOS>", "<EOS>")  # ids 0, 1, 2

# --- the lexicon ----------------------------------------------------------------------------
# Subjects: Chinese, English, English third person singular?, weight in sentence 1.
SUBJECTS = {
    "I": ("我", "I", False, 0.30),
    "you": ("你", "you", False, 0.14),
    "he": ("他", "he", True, 0.14),
    "she": ("她", "she", True, 0.14),
    "we": ("我们", "we", False, 0.14),
    "they": ("他们", "they", False, 0.14),
}
# Animals: Chinese noun, Chinese measure word, English singular, English plural.
ANIMALS = {
    "cat": ("猫", "只", "cat", "cats"),
    "dog": ("狗", "只", "dog", "dogs"),
    "fish": ("鱼", "条", "fish", "fish"),
    "bird": ("鸟", "只", "bird", "birds"),
    "rabbit": ("兔子", "只", "rabbit", "rabbits"),
    "horse": ("马", "匹", "horse", "horses"),
}
FAVOURITE = {"I": "cat", "you": "rabbit", "he": "dog", "she": "fish", "we": "bird", "they": "horse"}
DISLIKED = {"I": "dog", "you": "fish", "he": "cat", "she": "bird", "we": "horse", "they": "rabbit"}
NUMBERS = {1: ("一", "a", 0.40), 2: ("两", "two", 0.35), 3: ("三", "three", 0.25)}
ADJECTIVES = {"small": "小", "big": "大", "white": "白", "black": "黑"}

P_KIND = {"like": 0.50, "dislike": 0.20, "have": 0.30}
P_REALLY = 0.15  # 很 / really before like(s)
P_FAVOURITE = 0.75  # like/have: the subject's favourite; the other five share the rest
P_DISLIKED = 0.70  # dislike: the subject's disliked animal; the other four share the rest
P_ADJECTIVE = 0.30
P_SECOND = 0.30  # a second sentence follows
P_ALSO = 0.50  # after a "like" sentence, the second one is an "also" sentence

# Extra words of each language, in the order they appear in the vocabulary.
_ZH_WORDS = ("很", "喜欢", "不", "也", "有", "。")
_EN_WORDS = ("really", "like", "likes", "don't", "doesn't", "also", "have", "has", ".")


class Sentence(NamedTuple):
    """One sentence, before it is put into words. ``kind``: like, dislike, have or also."""

    kind: str
    subject: str
    obj: str
    number: int = 0  # have: 1, 2 or 3
    adjective: str = ""  # have: "" or a key of ADJECTIVES
    really: bool = False  # like: 很 / really


def vocabulary() -> list[str]:
    """Every word of the language, in a fixed order: the specials first (ids 0, 1, 2)."""
    words = list(SPECIALS)
    words += [s[0] for s in SUBJECTS.values()] + list(_ZH_WORDS)
    words += [n[0] for n in NUMBERS.values()] + ["只", "条", "匹"] + list(ADJECTIVES.values())
    words += [a[0] for a in ANIMALS.values()]
    words += [s[1] for s in SUBJECTS.values()] + list(_EN_WORDS)
    words += [n[1] for n in NUMBERS.values()] + list(ADJECTIVES)
    for _, _, singular, plural in ANIMALS.values():
        words += [singular] if singular == plural else [singular, plural]
    assert len(words) == len(set(words)), "a word is listed twice"
    return words


# --- putting a sentence into words ----------------------------------------------------------
def render(s: Sentence, lang: str) -> list[str]:
    """The words of sentence ``s`` in ``lang`` ("zh" or "en"), ending with 。 or "."."""
    zh_subj, en_subj, third, _ = SUBJECTS[s.subject]
    noun, measure, singular, plural = ANIMALS[s.obj]
    if lang == "zh":
        words = [zh_subj]
        if s.kind == "like":
            words += (["很"] if s.really else []) + ["喜欢", noun]
        elif s.kind == "also":
            words += ["也", "喜欢", noun]
        elif s.kind == "dislike":
            words += ["不", "喜欢", noun]
        else:  # have
            words += ["有", NUMBERS[s.number][0], measure] + ([ADJECTIVES[s.adjective]] if s.adjective else []) + [noun]
        return words + ["。"]
    words = [en_subj]
    if s.kind == "like":
        words += (["really"] if s.really else []) + ["likes" if third else "like", plural]
    elif s.kind == "also":
        words += ["also", "likes" if third else "like", plural]
    elif s.kind == "dislike":
        words += ["doesn't" if third else "don't", "like", plural]
    else:  # have
        words += ["has" if third else "have", NUMBERS[s.number][1]] + ([s.adjective] if s.adjective else [])
        words += [singular if s.number == 1 else plural]
    return words + ["."]


# --- probabilities of the choices -----------------------------------------------------------
def _subject_probs(exclude: str | None = None) -> dict[str, float]:
    w = {k: v[3] for k, v in SUBJECTS.items() if k != exclude}
    total = sum(w.values())
    return {k: p / total for k, p in w.items()}


def _object_probs(kind: str, subject: str, first_obj: str | None = None) -> dict[str, float]:
    if kind == "also":  # anything but the first sentence's object, uniformly
        others = [a for a in ANIMALS if a != first_obj]
        return {a: 1 / len(others) for a in others}
    if kind == "dislike":
        fav, bad = FAVOURITE[subject], DISLIKED[subject]
        rest = [a for a in ANIMALS if a not in (fav, bad)]
        return {bad: P_DISLIKED, **{a: (1 - P_DISLIKED) / len(rest) for a in rest}}
    fav = FAVOURITE[subject]
    rest = [a for a in ANIMALS if a != fav]
    return {fav: P_FAVOURITE, **{a: (1 - P_FAVOURITE) / len(rest) for a in rest}}


def _sentence_prob(s: Sentence, first: Sentence | None = None) -> float:
    """P(sentence | its subject was chosen[, the first sentence]): the product of its choices."""
    if s.kind == "also":
        return _object_probs("also", s.subject, first.obj).get(s.obj, 0.0)
    p = P_KIND[s.kind] * _object_probs(s.kind, s.subject).get(s.obj, 0.0)
    if s.kind == "like":
        p *= P_REALLY if s.really else 1 - P_REALLY
    if s.kind == "have":
        p *= NUMBERS[s.number][2]
        p *= P_ADJECTIVE / len(ADJECTIVES) if s.adjective else 1 - P_ADJECTIVE
    return p


def _doc_prob(lang_p: float, first: Sentence, second: Sentence | None) -> float:
    p = lang_p * _subject_probs()[first.subject] * _sentence_prob(first)
    if second is None:
        return p * (1 - P_SECOND)
    p *= P_SECOND
    if second.kind == "also":
        if first.kind != "like" or second.subject != first.subject:
            return 0.0
        return p * P_ALSO * _sentence_prob(second, first)
    if second.subject == first.subject:
        return 0.0
    p *= (1 - P_ALSO) if first.kind == "like" else 1.0
    return p * _subject_probs(exclude=first.subject)[second.subject] * _sentence_prob(second)


# --- drawing documents ----------------------------------------------------------------------
def _pick(rng: random.Random, probs: dict):
    return rng.choices(list(probs), weights=list(probs.values()))[0]


def _draw_sentence(rng: random.Random, subject: str) -> Sentence:
    kind = _pick(rng, P_KIND)
    obj = _pick(rng, _object_probs(kind, subject))
    if kind == "like":
        return Sentence(kind, subject, obj, really=rng.random() < P_REALLY)
    if kind == "have":
        number = _pick(rng, {n: v[2] for n, v in NUMBERS.items()})
        adjective = rng.choice(list(ADJECTIVES)) if rng.random() < P_ADJECTIVE else ""
        return Sentence(kind, subject, obj, number=number, adjective=adjective)
    return Sentence(kind, subject, obj)


def _draw_doc(rng: random.Random) -> str:
    lang = rng.choice(["zh", "en"])
    first = _draw_sentence(rng, _pick(rng, _subject_probs()))
    sentences = [first]
    if rng.random() < P_SECOND:
        if first.kind == "like" and rng.random() < P_ALSO:
            sentences.append(Sentence("also", first.subject, _pick(rng, _object_probs("also", first.subject, first.obj))))
        else:
            sentences.append(_draw_sentence(rng, _pick(rng, _subject_probs(exclude=first.subject))))
    words = ["<BOS>"] + [w for s in sentences for w in render(s, lang)] + ["<EOS>"]
    return " ".join(words)


def make_corpus(n_docs: int, seed: int = 0) -> list[str]:
    """``n_docs`` documents drawn from the grammar; the same ``seed`` gives the same list."""
    check_int("n_docs", n_docs, minimum=0)
    rng = random.Random(seed)
    return [_draw_doc(rng) for _ in range(n_docs)]


def make_splits(n_train: int, n_heldout: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """A training set and a held-out set: the first ``n_train`` documents and the next ``n_heldout``.

    Both are independent draws from the same grammar; the model never trains on the held-out
    ones (some short documents occur in both, as they would in any sample of this language).
    """
    docs = make_corpus(n_train + n_heldout, seed)
    return docs[:n_train], docs[n_train:]


# --- reading documents back: the checker ----------------------------------------------------
@lru_cache(maxsize=None)
def _sentence_table() -> dict[tuple[str, ...], tuple[str, Sentence]]:
    """Every possible sentence, keyed by its words: (language, Sentence). Finite and small."""
    table = {}
    for lang in ("zh", "en"):
        for subject in SUBJECTS:
            for obj in ANIMALS:
                candidates = [
                    Sentence("like", subject, obj, really=r) for r in (False, True)
                ] + [Sentence("also", subject, obj), Sentence("dislike", subject, obj)] + [
                    Sentence("have", subject, obj, number=n, adjective=a)
                    for n in NUMBERS for a in ("", *ADJECTIVES)
                ]
                for s in candidates:
                    words = tuple(render(s, lang))
                    assert words not in table, f"two sentences render as {words}"
                    table[words] = (lang, s)
    return table


def _parse(text: str) -> tuple[str, list[Sentence]] | None:
    """(language, sentences) of a well-formed document, or None."""
    words = text.split()
    if len(words) < 3 or words[0] != "<BOS>" or words[-1] != "<EOS>":
        return None
    body, sentences, langs, start = words[1:-1], [], set(), 0
    for i, w in enumerate(body):
        if w in ("。", "."):
            found = _sentence_table().get(tuple(body[start : i + 1]))
            if found is None:
                return None
            langs.add(found[0])
            sentences.append(found[1])
            start = i + 1
    if start != len(body) or not 1 <= len(sentences) <= 2 or len(langs) != 1:
        return None
    return langs.pop(), sentences


def doc_log_prob(text: str) -> float:
    """Natural log of the probability the grammar gives the document ``text`` (-inf if impossible)."""
    parsed = _parse(text)
    if parsed is None:
        return float("-inf")
    _, sentences = parsed
    first, second = sentences[0], (sentences[1] if len(sentences) == 2 else None)
    if first.kind == "also":
        return float("-inf")
    p = _doc_prob(0.5, first, second)
    return math.log(p) if p > 0 else float("-inf")


def is_grammatical(text: str) -> bool:
    """True if ``text`` is a whole document the grammar can produce, ``<BOS>`` to ``<EOS>``.

    Checks the words, their order, agreement (likes/has/doesn't, a cat / two cats, 只/条/匹),
    one language per document, at most two sentences, and the rules that need context: a
    dislike is never the subject's favourite, an "also" sentence repeats the first subject after
    a "like" sentence and names a different animal, and a second plain sentence has a new subject.
    """
    return doc_log_prob(text) > float("-inf")


def entropy_per_token(docs: list[str]) -> float:
    """Mean -log p per predicted token (every token after ``<BOS>``) of ``docs`` under the grammar.

    The loss (in nats) a perfect model would score on these documents: the floor for training.
    """
    total = sum(-doc_log_prob(d) for d in docs)
    n_tokens = sum(len(d.split()) - 1 for d in docs)
    return total / n_tokens
