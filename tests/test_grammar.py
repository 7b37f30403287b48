"""The grammar's next-word distribution and the English glosses of the Chinese words."""
import math

import pytest

from utils.corpus import doc_log_prob, make_corpus, vocabulary
from utils.grammar import gloss, interlinear, label, next_word_probs
from utils.i18n import display_width, pad, set_language


@pytest.mark.parametrize("doc", make_corpus(40, seed=3))
def test_next_word_probs_chain_to_the_document_probability(doc):
    # The product of P(word | everything before it) over a document is its probability (chain rule).
    words = doc.split()
    log_p = sum(math.log(next_word_probs(" ".join(words[:i]))[words[i]]) for i in range(1, len(words)))
    assert log_p == pytest.approx(doc_log_prob(doc), abs=1e-9)


@pytest.mark.parametrize("prefix", ["<BOS>", "<BOS> I like", "<BOS> 他 有 两", "<BOS> we like birds . we also like"])
def test_next_word_probs_is_a_distribution_over_words_of_the_vocabulary(prefix):
    probs = next_word_probs(prefix)
    assert sum(probs.values()) == pytest.approx(1.0)
    assert set(probs) <= set(vocabulary())
    assert list(probs.values()) == sorted(probs.values(), reverse=True)


def test_the_favourite_follows_like_three_times_out_of_four():
    assert next_word_probs("<BOS> I like")["cats"] == pytest.approx(0.75)
    assert next_word_probs("<BOS> 我 喜欢")["猫"] == pytest.approx(0.75)


@pytest.mark.parametrize("bad", ["I like", "<BOS> I 喜欢", "<BOS> I like cats . <EOS>", 3])
def test_an_impossible_prefix_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="prefix|never produces"):
        next_word_probs(bad)


def test_every_chinese_word_has_a_gloss_and_no_english_word_has_one():
    for word in vocabulary():
        chinese = any("\u3400" <= ch <= "\u9fff" or ch == "。" for ch in word)
        assert (gloss(word) is not None) == chinese, word


def test_label_glosses_in_english_only():
    assert label("猫") == "猫 (cat)" and label("cats") == "cats"
    set_language("zh")
    try:
        assert label("猫") == "猫"
    finally:
        set_language("en")


def test_interlinear_puts_each_gloss_under_its_word():
    top, bottom = interlinear("<BOS> 我 喜欢 猫").split("\n")
    assert bottom.split() == ["I", "like", "cat"]
    for word, meaning in (("我", "I"), ("喜欢", "like"), ("猫", "cat")):
        assert display_width(top[: top.index(word)]) == bottom.index(meaning)


def test_pad_counts_a_chinese_character_as_two_columns():
    assert pad("兔子", 6) == "兔子  " and display_width(pad("兔子", 6)) == 6
    assert pad("ab", 4, ">") == "  ab" and pad("ab", 6, "^") == "  ab  "
    assert pad("toolong", 3) == "toolong"
    with pytest.raises(ValueError, match="align"):
        pad("x", 3, "left")
