"""The word-level tokenizer and the grammar of the course corpus."""
import json

import pytest
import torch

from utils import Tokenizer
from utils.corpus import doc_log_prob, entropy_per_token, is_grammatical, make_corpus, make_splits, vocabulary
from utils.course_model import TOKENIZER_PATH, course_tokenizer


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return course_tokenizer()


def test_seed_prompt_is_three_tokens_and_specials_come_first(tok):
    ids = tok.encode("<BOS> 我 喜欢")
    assert len(ids) == 3 and ids[0] == tok.bos_id
    assert (tok.pad_id, tok.bos_id, tok.eos_id) == (0, 1, 2)
    assert tok.vocab[:3] == ["<PAD>", "<BOS>", "<EOS>"]
    assert 60 <= tok.vocab_size <= 150 and len(tok) == tok.vocab_size


def test_round_trip_chinese_and_english(tok):
    for text in ["<BOS> 我 喜欢 猫 。 <EOS>", "<BOS> she doesn't like birds . <EOS>", "他们 有 两 匹 黑 马 。"]:
        assert tok.decode(tok.encode(text)) == text
    assert tok.encode("  <BOS>\t我   喜欢 ") == tok.encode("<BOS> 我 喜欢")  # any whitespace separates
    assert tok.decode(torch.tensor(tok.encode("I like cats ."))) == "I like cats ."
    assert tok.decode(tok.encode("<BOS> 我 喜欢 猫 <EOS>"), skip_special=True) == "我 喜欢 猫"
    assert tok.tokens(tok.encode("<BOS> 我 喜欢")) == ["<BOS>", "我", "喜欢"]


def test_unknown_word_and_bad_ids_raise_clear_errors(tok):
    with pytest.raises(ValueError, match=r"unknown word 'zebra'.*tokenizer\.vocab.*64 known words"):
        tok.encode("<BOS> I like zebra")
    with pytest.raises(ValueError, match="unknown word '猫。'"):  # words need spaces between them
        tok.encode("我 喜欢 猫。")
    for bad in (tok.vocab_size, -1):
        with pytest.raises(ValueError, match=f"token id {bad} "):
            tok.decode([1, bad])
    with pytest.raises(ValueError, match="start with"):
        Tokenizer(["a", "b"])


def test_json_round_trip_and_shipped_vocab_matches_the_grammar(tmp_path, tok):
    path = tmp_path / "vocab.json"
    tok.to_json(path)
    assert "猫" in path.read_text(encoding="utf-8")  # readable, not \u escapes
    assert Tokenizer.from_json(path).vocab == tok.vocab
    shipped = json.loads(TOKENIZER_PATH.read_text(encoding="utf-8"))
    assert shipped["vocab"] == vocabulary() == tok.vocab


def test_encode_batch_left_pads(tok):
    ids, mask = tok.encode_batch(["<BOS> 我 喜欢", "<BOS> 他们 不 喜欢"])
    assert ids.shape == mask.shape == (2, 4)
    assert ids[0, 0] == tok.pad_id and mask[0].tolist() == [0, 1, 1, 1] and mask[1].tolist() == [1, 1, 1, 1]
    assert tok.decode(ids[0, 1:].tolist()) == "<BOS> 我 喜欢"


def test_corpus_is_deterministic_grammatical_and_in_vocabulary(tok):
    docs = make_corpus(500, seed=3)
    assert docs == make_corpus(500, seed=3) and docs != make_corpus(500, seed=4)
    assert all(is_grammatical(d) for d in docs)
    assert all(d.startswith("<BOS> ") and d.endswith((" 。 <EOS>", " . <EOS>")) for d in docs)
    for d in docs:
        tok.encode(d)  # every word is known
    train, held = make_splits(300, 50, seed=0)
    assert len(train) == 300 and len(held) == 50
    # 我 喜欢 -> 猫 is the most common continuation by far
    after = [d.split()[3] for d in make_corpus(4000, seed=0) if d.startswith("<BOS> 我 喜欢 ")]
    assert after.count("猫") / len(after) > 0.65


def test_checker_rejects_what_the_grammar_forbids():
    bad = [
        "<BOS> 我 不 喜欢 猫 。 <EOS>",  # never dislikes the favourite
        "<BOS> he like dogs . <EOS>",  # agreement
        "<BOS> I have a cats . <EOS>",  # a + plural
        "<BOS> 我 有 两 条 猫 。 <EOS>",  # measure word: 只 猫
        "<BOS> 我 喜欢 猫 。 我 也 喜欢 猫 。 <EOS>",  # "also" needs another animal
        "<BOS> 我 喜欢 猫 。 他 也 喜欢 狗 。 <EOS>",  # "also" keeps the subject
        "<BOS> 我 喜欢 猫 。 I like cats . <EOS>",  # one language per document
        "<BOS> 我 喜欢 猫 。",  # no <EOS>
        "<BOS> 我 喜欢 猫 <EOS>",  # no 。
        "<BOS> 我 喜欢 猫 。 他 喜欢 狗 。 她 喜欢 鱼 。 <EOS>",  # at most two sentences
    ]
    for text in bad:
        assert not is_grammatical(text), text
    assert is_grammatical("<BOS> 我 喜欢 猫 。 我 也 喜欢 狗 。 <EOS>")
    assert is_grammatical("<BOS> they have three white horses . <EOS>")


def test_grammar_probabilities_are_consistent():
    docs = make_corpus(3000, seed=1)
    assert abs(doc_log_prob("<BOS> 我 喜欢 猫 。 <EOS>") - torch.tensor(0.5 * 0.3 * 0.5 * 0.85 * 0.75 * 0.7).log().item()) < 1e-6
    frac = docs.count("<BOS> 我 喜欢 猫 。 <EOS>") / len(docs)
    assert abs(frac - 0.5 * 0.3 * 0.5 * 0.85 * 0.75 * 0.7) < 0.01
    assert 0.8 < entropy_per_token(docs) < 1.2
