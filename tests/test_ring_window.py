"""The ring-buffer window cache (utils/ring_window.py): in place, and the same window as the concatenating cache."""
import pytest
import torch

from conftest import prompt_ids, tiny_model
from utils.ring_window import RingWindowKVCache, compare_ring
from utils.sliding import SlidingWindowKVCache, feed

TOL = 1e-4


@pytest.mark.parametrize("kind", ["MHA", "GQA", "MQA"])
def test_ring_equals_the_concatenating_window_past_the_window(kind):
    W = 6
    out = compare_ring(tiny_model(kind), prompt_ids(20), W)
    assert max(out.max_diff) <= TOL  # the same keys and values, in another order
    assert all(out.bitwise[:W])  # nothing overwritten yet: the same order, the same bits
    assert out.ring_moves == 0 and out.concat_moves == 19


def test_ring_slots_hold_the_window_rotated(model):
    cache = RingWindowKVCache(4)
    feed(model, prompt_ids(6), cache)
    assert cache.slot_positions() == [4, 5, 2, 3]
    assert cache.seq_len == 4 and cache.seen_tokens() == 6  # stored vs seen: the next position is 6


def test_ring_prefill_in_one_pass_equals_token_by_token(model):
    ids = prompt_ids(10)
    a, b = RingWindowKVCache(4), SlidingWindowKVCache(4)
    la, lb = feed(model, ids, a), feed(model, ids, b)  # prompt part in one pass, the rest one at a time
    assert (la - lb).abs().max() <= TOL


def test_ring_refuses_a_multi_token_write_that_would_wrap(model):
    cache = RingWindowKVCache(4)
    feed(model, prompt_ids(3), cache)
    with pytest.raises(ValueError, match="one token at a time"):
        model(prompt_ids(2), cache=cache)


def test_ring_refuses_padding_and_crop(model):
    cache = RingWindowKVCache(4)
    with pytest.raises(ValueError):
        cache.crop(1)
    with pytest.raises(ValueError, match="padded"):
        cache.append_mask(torch.ones(1, 1, dtype=torch.bool), 1)


def test_ring_reorder_keeps_its_buffers(model):
    cache = RingWindowKVCache(4)
    with torch.inference_mode():
        model(prompt_ids(3).repeat(2, 1), cache=cache)
    ptr, row1 = cache.k[0].data_ptr(), cache.k[0][1].clone()
    cache.reorder(torch.tensor([1, 1]))
    assert cache.k[0].data_ptr() == ptr and torch.equal(cache.k[0][0], row1)
    with pytest.raises(ValueError):
        cache.reorder(torch.tensor([0]))
