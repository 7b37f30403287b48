"""The shipped course model: it loads safely, speaks the grammar, stops where asked, and trains."""
import json
import math
import pickle

import pytest
import torch

from utils import generate, load_course_model
from utils.corpus import is_grammatical
from utils.course_model import COURSE_CONFIG, TRAINING_LOG_PATH, WEIGHTS_PATH, train


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """A model this small runs fastest on one thread, and on shared cores far faster than on two."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def course():
    return load_course_model()


def test_config_is_the_documented_gqa_shape(course):
    model, tok = course
    cfg = model.cfg
    assert (cfg.n_layers, cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.max_seq_len) == (4, 128, 4, 2, 256)
    assert cfg.attention_kind == "GQA" and cfg.vocab_size == tok.vocab_size
    assert not model.training
    assert WEIGHTS_PATH.stat().st_size <= 5_000_000


def test_greedy_continuation_of_the_seed_prompt_is_cat(course):
    model, tok = course
    r = generate(model, tok.encode("<BOS> 我 喜欢"), 10, eos_id=tok.eos_id, tokenizer=tok)
    assert tok.vocab[int(r.tokens[0, 0])] == "猫"
    assert r.texts == ["猫 。 <EOS>"] and r.stop_reasons == ["eos"] and r.lengths == [3]


def test_loading_uses_safetensors_only(monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("the course model must load without pickle")

    monkeypatch.setattr(torch, "load", forbidden)
    monkeypatch.setattr(pickle, "load", forbidden)
    monkeypatch.setattr(pickle, "loads", forbidden)
    model, tok = load_course_model()
    assert model.cfg == COURSE_CONFIG and tok.vocab_size == COURSE_CONFIG.vocab_size


def test_missing_weights_say_how_to_make_them(tmp_path):
    with pytest.raises(FileNotFoundError, match="--train"):
        load_course_model(tmp_path)


def test_stop_string_spanning_two_tokens(course):
    model, tok = course
    r = generate(model, torch.tensor([tok.encode("<BOS> 我 喜欢")]), 10, stop_strings=["猫 。"], tokenizer=tok)
    assert r.stop_reasons == ["stop_string"] and r.lengths == [2] and r.texts == ["猫 。"]


def test_each_row_of_a_batch_stops_on_its_own(course):
    model, tok = course
    ids, mask = tok.encode_batch(["<BOS> 我 喜欢", "<BOS> 他们 很 喜欢"])  # left-padded: lengths 3 and 4
    r = generate(model, ids, 10, attention_mask=mask, eos_id=tok.eos_id, stop_strings=["猫 。"], tokenizer=tok)
    assert r.stop_reasons == ["stop_string", "eos"]
    assert r.texts == ["猫 。", "马 。 <EOS>"] and r.lengths == [2, 3]
    assert int(r.tokens[0, 2]) == tok.eos_id  # a finished row is padded (pad_id defaults to the EOS id)
    # Without eos_id the second row runs to the length limit while the first still stops.
    free = generate(model, ids, 3, attention_mask=mask, stop_strings=["猫 。"], tokenizer=tok)
    assert free.stop_reasons == ["stop_string", "max_new_tokens"] and free.lengths == [2, 3]


@pytest.mark.parametrize("prompt", ["<BOS> 我 喜欢", "<BOS> she has two", "<BOS> 他们 不 喜欢 兔子 。 我们"])
def test_cached_and_uncached_greedy_agree_for_64_steps(course, prompt):
    model, tok = course
    ids = tok.encode(prompt)
    cached = generate(model, ids, 64)  # no eos_id: past <EOS> the model is off its data, still must agree
    static = generate(model, ids, 64, cache_kind="static")
    uncached = generate(model, ids, 64, use_cache=False)
    assert cached.lengths == [64]
    assert torch.equal(cached.tokens, uncached.tokens) and torch.equal(cached.tokens, static.tokens)


@pytest.mark.parametrize("prompt", ["<BOS> 我 喜欢", "<BOS>", "<BOS> he"])
def test_sampled_continuations_are_grammatical(course, prompt):
    model, tok = course
    ok = 0
    for seed in range(20):
        r = generate(model, tok.encode(prompt), 40, temperature=1.0, seed=seed, eos_id=tok.eos_id, tokenizer=tok)
        text = f"{prompt} {r.texts[0]}"
        assert r.stop_reasons == ["eos"], text
        assert text.endswith(("。 <EOS>", ". <EOS>")), text
        ok += is_grammatical(text)
    assert ok >= 18, f"only {ok}/20 samples after {prompt!r} are grammatical"


def test_training_log_beats_the_unigram_baseline():
    log = json.loads(TRAINING_LOG_PATH.read_text())
    for key in ("step", "train_loss", "eval_step", "heldout_loss", "unigram_heldout_loss", "grammar_entropy",
                "seconds", "cpu_seconds", "torch_version"):
        assert key in log, key
    final = log["heldout_loss"][-1]
    assert final < log["unigram_heldout_loss"] - 1.0  # far below the unigram model
    assert log["grammar_entropy"] <= final < log["grammar_entropy"] + 0.1  # close to the best possible
    assert math.exp(final) < math.exp(log["unigram_heldout_loss"]) / 2


def test_a_short_training_run_lowers_the_loss_and_is_deterministic():
    kw = dict(batch_size=16, n_train_docs=600, n_heldout_docs=100, eval_every=10, progress=False, threads=1)
    model, hist = train(steps=30, seed=0, **kw)
    assert not model.training
    first, last = hist["train_loss"][0], sum(hist["train_loss"][-5:]) / 5
    assert last < first - 1.0, hist["train_loss"]
    assert hist["heldout_loss"][-1] < hist["heldout_loss"][0] and len(hist["heldout_loss"]) == 3
    again, hist2 = train(steps=30, seed=0, **kw)
    assert hist2["train_loss"] == hist["train_loss"]
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), again.state_dict().values()))
