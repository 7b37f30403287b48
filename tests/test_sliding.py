"""The sliding-window cache (utils/sliding.py): memory stays at W, positions keep counting."""
import pytest
import torch

from conftest import prompt_ids, tiny_model
from utils import KVCache, prefill
from utils.sliding import (SlidingWindowKVCache, band_mask, compare_sliding, feed, memory_trace,
                           windowed_recompute)

TOL = 1e-4


# --- sliding window --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["MHA", "GQA", "MQA"])
def test_sliding_equals_full_attention_while_T_fits_the_window(kind):
    W = 12
    out = compare_sliding(tiny_model(kind), prompt_ids(W), W)
    assert max(out.diff_full) <= TOL


def test_sliding_differs_from_full_attention_after_the_window_but_equals_the_band_mask(model):
    W = 8
    out = compare_sliding(model, prompt_ids(30), W)
    assert max(out.diff_full[:W]) <= TOL
    assert out.first_differing_position(TOL) == W  # the first token that has lost one key
    assert min(out.diff_full[W:]) > TOL
    assert max(out.diff_windowed) <= TOL  # exactly sliding-window attention, at every position


def test_sliding_memory_stays_at_most_W_and_positions_keep_counting(model):
    W = 8
    out = compare_sliding(model, prompt_ids(30), W)
    assert out.stored == [min(t + 1, W) for t in range(30)]
    assert out.n_seen == list(range(1, 31))
    cfg = model.cfg
    per_position = 2 * cfg.n_layers * cfg.n_kv_heads * cfg.head_dim * 4  # K and V, all layers, float32
    assert max(out.nbytes) == W * per_position
    assert out.nbytes[W - 1:] == [W * per_position] * (30 - W + 1)


def test_feed_a_prompt_longer_than_the_window(model):
    W, ids = 6, prompt_ids(20, seed=1)
    cache = SlidingWindowKVCache(W)
    with torch.inference_mode():
        logits = feed(model, ids, cache)
    torch.testing.assert_close(logits, windowed_recompute(model, ids, W), atol=TOL, rtol=0)
    assert (cache.seq_len, cache.n_seen) == (W, 20)
    assert all(k.shape[2] == W for k in cache.k)


def test_generate_and_decode_step_continue_positions_with_a_sliding_cache(model):
    """The model reads positions from cache.n_seen: decode_step needs no special handling."""
    from utils import decode_step

    ids = prompt_ids(10, seed=2)
    W = 4
    cache = SlidingWindowKVCache(W)
    with torch.inference_mode():
        feed(model, ids[:, :7], cache)
        logits = decode_step(model, ids[:, 7], cache)
    ref = windowed_recompute(model, ids[:, :8], W)[:, -1]
    torch.testing.assert_close(logits, ref, atol=TOL, rtol=0)


def test_sliding_with_a_window_larger_than_the_text_is_a_normal_cache(model):
    ids = prompt_ids(16, seed=3)
    sliding, full = SlidingWindowKVCache(100), KVCache()
    with torch.inference_mode():
        a = feed(model, ids, sliding)
        b = model(ids, cache=full)
    torch.testing.assert_close(a, b, atol=TOL, rtol=0)
    assert sliding.seq_len == full.seq_len == sliding.n_seen == 16


def test_sliding_cache_rejects_what_it_cannot_do(model):
    with pytest.raises(ValueError, match="window"):
        SlidingWindowKVCache(0)
    cache = SlidingWindowKVCache(4)
    with torch.inference_mode():
        model(prompt_ids(3), cache=cache)
        with pytest.raises(ValueError, match="one token at a time"):
            model(prompt_ids(3), cache=cache)  # 3 + 3 > 4
    with pytest.raises(ValueError, match="cropped"):
        cache.crop(1)
    with pytest.raises(ValueError, match="padded"):
        with torch.inference_mode():
            prefill(model, prompt_ids(3), torch.tensor([[0, 1, 1]]), SlidingWindowKVCache(4))


def test_sliding_positions_stop_at_max_seq_len():
    m = tiny_model("GQA", max_seq_len=12)
    cache = SlidingWindowKVCache(4)
    with torch.inference_mode():
        feed(m, prompt_ids(12), cache)
        with pytest.raises(ValueError, match="max_seq_len"):
            m(prompt_ids(1), cache=cache)


def test_band_mask():
    assert band_mask(4, 2).int().tolist() == [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]


def test_memory_trace_static_allocates_once_dynamic_every_step(model):
    ids = prompt_ids(5)
    dyn = memory_trace(model, ids, 10, "dynamic")
    sta = memory_trace(model, ids, 10, "static")
    sli = memory_trace(model, ids, 10, "sliding", window=8)
    assert dyn.stored == sta.stored == list(range(5, 16))
    assert sli.stored == [5, 6, 7, 8] + [8] * 7
    assert sta.n_allocations == 0 and len(set(sta.nbytes)) == 1
    assert dyn.n_allocations == 11  # the prefill's tensors, then a new one per decode step
    assert dyn.nbytes[-1] == sta.nbytes[0]  # full at the end: the static one held it all along
    with pytest.raises(ValueError):
        memory_trace(model, ids, 1, "ring")


# --- beam search ---------------------------------------------------------------------------------


# --- the hub, offline ---------------------------------------------------------------------------------
