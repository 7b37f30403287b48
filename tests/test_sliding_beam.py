"""Sliding-window cache, beam search with cache reordering, and the offline-safe hub loader."""
import time

import pytest
import torch

from conftest import tiny_model
from utils import KVCache, generate, prefill
from utils import hub
from utils.beam import beam_search
from utils.sliding import (SlidingWindowKVCache, band_mask, compare_sliding, feed, memory_trace,
                           windowed_recompute)

TOL = 1e-4


@pytest.fixture(scope="module")
def model():
    return tiny_model("GQA")


def _ids(T, seed=0):
    return torch.randint(1, 101, (1, T), generator=torch.Generator().manual_seed(seed))


# --- sliding window --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["MHA", "GQA", "MQA"])
def test_sliding_equals_full_attention_while_T_fits_the_window(kind):
    W = 12
    out = compare_sliding(tiny_model(kind), _ids(W), W)
    assert max(out.diff_full) <= TOL


def test_sliding_differs_from_full_attention_after_the_window_but_equals_the_band_mask(model):
    W = 8
    out = compare_sliding(model, _ids(30), W)
    assert max(out.diff_full[:W]) <= TOL
    assert out.first_differing_position(TOL) == W  # the first token that has lost one key
    assert min(out.diff_full[W:]) > TOL
    assert max(out.diff_windowed) <= TOL  # exactly sliding-window attention, at every position


def test_sliding_memory_stays_at_most_W_and_positions_keep_counting(model):
    W = 8
    out = compare_sliding(model, _ids(30), W)
    assert out.stored == [min(t + 1, W) for t in range(30)]
    assert out.n_seen == list(range(1, 31))
    cfg = model.cfg
    per_position = 2 * cfg.n_layers * cfg.n_kv_heads * cfg.head_dim * 4  # K and V, all layers, float32
    assert max(out.nbytes) == W * per_position
    assert out.nbytes[W - 1:] == [W * per_position] * (30 - W + 1)


def test_feed_a_prompt_longer_than_the_window(model):
    W, ids = 6, _ids(20, seed=1)
    cache = SlidingWindowKVCache(W)
    with torch.inference_mode():
        logits = feed(model, ids, cache)
    torch.testing.assert_close(logits, windowed_recompute(model, ids, W), atol=TOL, rtol=0)
    assert (cache.seq_len, cache.n_seen) == (W, 20)
    assert all(k.shape[2] == W for k in cache.k)


def test_generate_and_decode_step_continue_positions_with_a_sliding_cache(model):
    """The model reads positions from cache.n_seen: decode_step needs no special handling."""
    from utils import decode_step

    ids = _ids(10, seed=2)
    W = 4
    cache = SlidingWindowKVCache(W)
    with torch.inference_mode():
        feed(model, ids[:, :7], cache)
        logits = decode_step(model, ids[:, 7], cache)
    ref = windowed_recompute(model, ids[:, :8], W)[:, -1]
    torch.testing.assert_close(logits, ref, atol=TOL, rtol=0)


def test_sliding_with_a_window_larger_than_the_text_is_a_normal_cache(model):
    ids = _ids(16, seed=3)
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
        model(_ids(3), cache=cache)
        with pytest.raises(ValueError, match="one token at a time"):
            model(_ids(3), cache=cache)  # 3 + 3 > 4
    with pytest.raises(ValueError, match="cropped"):
        cache.crop(1)
    with pytest.raises(ValueError, match="padded"):
        with torch.inference_mode():
            prefill(model, _ids(3), torch.tensor([[0, 1, 1]]), SlidingWindowKVCache(4))


def test_sliding_positions_stop_at_max_seq_len():
    m = tiny_model("GQA", max_seq_len=12)
    cache = SlidingWindowKVCache(4)
    with torch.inference_mode():
        feed(m, _ids(12), cache)
        with pytest.raises(ValueError, match="max_seq_len"):
            m(_ids(1), cache=cache)


def test_band_mask():
    assert band_mask(4, 2).int().tolist() == [[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]


def test_memory_trace_static_allocates_once_dynamic_every_step(model):
    ids = _ids(5)
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

@pytest.mark.parametrize("cache", ["dynamic", "static"])
def test_beam_search_with_reorder_equals_recompute_for_every_beam(model, cache):
    res = beam_search(model, _ids(6), 4, 10, cache_kind=cache, tol=TOL)
    assert res.report.ok, res.report.verdict
    assert res.sequences.shape == (4, 16) and len(res.parents) == 10
    assert torch.all(res.scores[:-1] >= res.scores[1:])  # best beam first
    assert len({tuple(s) for s in res.sequences.tolist()}) == 4  # distinct beams


@pytest.mark.parametrize("cache", ["dynamic", "static"])
def test_beam_search_without_reorder_diverges(model, cache):
    res = beam_search(model, _ids(6), 4, 10, reorder=False, cache_kind=cache, tol=TOL)
    assert not res.report.ok
    # it diverges exactly once the parents stop being 0, 1, 2, ... (step s uses parents[s - 1])
    first_shuffle = next(s for s, p in enumerate(res.parents, 1) if p != list(range(4)) and s > 1)
    assert res.report.first_bad_step <= first_shuffle


def test_beam_search_scores_are_the_sequences_log_probs(model):
    res = beam_search(model, _ids(5), 3, 6)
    with torch.inference_mode():
        logp = torch.log_softmax(model(res.sequences).float(), dim=-1)  # (beams, T, V)
    new = res.sequences[:, 5:]
    manual = logp[:, 4:-1].gather(-1, new[..., None]).squeeze(-1).sum(-1)
    torch.testing.assert_close(res.scores, manual, atol=1e-4, rtol=0)


def test_one_beam_is_greedy(model):
    ids = _ids(6, seed=4)
    res = beam_search(model, ids, 1, 8)
    assert res.sequences[0, 6:].tolist() == generate(model, ids, 8).tokens[0].tolist()


def test_beam_search_bad_input(model):
    for kwargs in (dict(n_beams=0, n_steps=2), dict(n_beams=2, n_steps=-1), dict(n_beams=2, n_steps=2, cache_kind="x")):
        with pytest.raises(ValueError):
            beam_search(model, _ids(3), **kwargs)
    with pytest.raises(ValueError, match="one sequence"):
        beam_search(model, torch.ones(2, 3, dtype=torch.long), 2, 2)


# --- the hub, offline ---------------------------------------------------------------------------------

def test_hub_detection_respects_hf_hub_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    t = time.perf_counter()
    assert hub.hub_available(timeout=3) is False
    model, tok, why = hub.load_pretrained("HuggingFaceTB/SmolLM2-135M-not-cached-anywhere")
    assert time.perf_counter() - t < 0.5
    assert model is None and "HF_HUB_OFFLINE" in why


def test_hub_detection_returns_quickly_without_network(monkeypatch):
    """Point the check at an address that never answers: it must give up within its timeout."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "https://10.255.255.1")  # unroutable: connect hangs
    t = time.perf_counter()
    assert hub.hub_available(timeout=1) is False
    assert time.perf_counter() - t < 2.5
    t = time.perf_counter()
    model, _, why = hub.load_pretrained("someone/not-cached-model", timeout=1)
    assert model is None and "network" in why and time.perf_counter() - t < 3.5
    t = time.perf_counter()
    hub.hub_available(timeout=60)  # capped at 3 s
    assert time.perf_counter() - t < 4.5


def test_load_pretrained_from_a_local_folder_gives_the_same_logits(tmp_path):
    transformers = pytest.importorskip("transformers")
    from utils import from_hf

    cfg = transformers.LlamaConfig(vocab_size=97, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(cfg).save_pretrained(tmp_path)
    hf_model, tok, why = hub.load_pretrained(str(tmp_path))
    assert why is None and tok is None and not hf_model.training
    assert next(hf_model.parameters()).dtype == torch.float32
    ours = from_hf(hf_model)
    assert hub.max_logit_diff(hf_model, ours, _ids(10) % 97) < 1e-4
