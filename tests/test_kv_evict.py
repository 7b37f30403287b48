"""The evicting KV cache (utils/kv_evict.py): the budget holds, each rule keeps what it says, and positions
keep counting the tokens seen."""
import pytest
import torch

from conftest import prompt_ids, tiny_model
from utils import KVCache, decode_step, prefill
from utils.kv_evict import EvictingKVCache


def _run(model, cache, ids, n):
    with torch.inference_mode():
        logits, _ = prefill(model, ids, cache=cache)
        out = [logits]
        for _ in range(n):
            logits = decode_step(model, logits.argmax(-1), cache)
            out.append(logits)
    return torch.stack(out, 1)


@pytest.mark.parametrize("rule", ["recent", "key_norm", "attention"])
def test_a_budget_larger_than_the_text_changes_nothing(rule):
    model = tiny_model("GQA")
    ids = prompt_ids(20)
    exact = _run(model, KVCache(), ids, 10)
    evicting = _run(model, EvictingKVCache(64, rule, sinks=2, window=4), ids, 10)
    torch.testing.assert_close(evicting, exact, atol=1e-5, rtol=0)


@pytest.mark.parametrize("rule", ["recent", "key_norm", "attention"])
def test_the_budget_holds_and_positions_count_the_tokens_seen(rule):
    model = tiny_model("GQA")
    cache = EvictingKVCache(16, rule, sinks=2, window=4)
    _run(model, cache, prompt_ids(30), 12)
    assert cache.seq_len == 16 and cache.seen_tokens() == 42  # the next token's position, not 16
    for layer in range(model.cfg.n_layers):
        pos = cache.positions[layer][0].tolist()
        assert pos[:2] == [0, 1] and pos[-4:] == [38, 39, 40, 41]  # the sinks and the window always stay
        assert pos == sorted(pos) and len(set(pos)) == 16


def test_recent_keeps_only_the_sinks_and_the_newest_positions():
    model = tiny_model("GQA")
    cache = EvictingKVCache(10, "recent", sinks=3, window=4)
    _run(model, cache, prompt_ids(25), 5)
    assert cache.positions[0][0].tolist() == [0, 1, 2] + list(range(23, 30))


def test_key_norm_keeps_the_smallest_keys_of_the_middle():
    cache = EvictingKVCache(6, "key_norm", sinks=1, window=2)
    k = torch.ones(1, 1, 9, 2)
    norms = torch.tensor([5.0, 9, 1, 8, 2, 7, 3, 6, 6])
    k = k * norms[None, None, :, None]
    cache.update(0, k, k.clone())
    assert cache.positions[0][0].tolist() == [0, 2, 4, 6, 7, 8]  # sink, the 3 smallest of 1..6, window


def test_attention_keeps_the_keys_that_drew_the_most_attention():
    cache = EvictingKVCache(4, "attention", sinks=1, window=1)
    k = torch.zeros(1, 1, 6, 2)
    k[0, 0, 3] = torch.tensor([10.0, 0.0])  # the key every query looks at
    k[0, 0, 2] = torch.tensor([5.0, 0.0])
    q = torch.zeros(1, 1, 6, 2)
    q[0, 0, :, 0] = 1.0
    cache.observe_queries(0, q)
    cache.update(0, k, k.clone())
    assert cache.positions[0][0].tolist() == [0, 2, 3, 5]


def test_the_attention_rule_runs_through_the_model_and_the_others_need_no_queries():
    model = tiny_model("MQA")
    cache = EvictingKVCache(12, "attention", sinks=2, window=4)
    _run(model, cache, prompt_ids(20), 6)
    assert cache.seq_len == 12 and cache.scores[0].shape == (1, 12) and cache.scores[0].sum() > 0


@pytest.mark.parametrize("kwargs, match", [
    (dict(budget=5, sinks=4, window=2), r"budget \(5\) must be at least sinks \+ window"),
    (dict(budget=8, rule="random"), "rule"),
    (dict(budget=0), "budget"),
    (dict(budget=8, window=0), "window"),
])
def test_bad_settings_are_clear_value_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        EvictingKVCache(**kwargs)


def test_padding_and_crop_are_refused_with_a_reason():
    cache = EvictingKVCache(8, sinks=2, window=2)
    with pytest.raises(ValueError, match="padded"):
        cache.append_mask(torch.ones(1, 2, dtype=torch.bool), 2)
    with pytest.raises(ValueError, match="cannot be cropped"):
        cache.crop(1)
