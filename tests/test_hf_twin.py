"""utils.hf's random transformers twin of a course config, and its one-token decode step (notebooks 00 and 02)."""
import pytest
import torch

pytest.importorskip("transformers")

from utils import KVCache, ModelConfig, decode_step, from_hf, load_course_model, prefill  # noqa: E402
from utils.hf import hf_cache_gap, hf_cache_layers, hf_decode_step, hf_llama_like, hf_prefill  # noqa: E402

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)

TOL = 1e-4
GQA = ModelConfig(vocab_size=97, n_layers=2, n_heads=4, n_kv_heads=2, d_model=64, d_ff=96, max_seq_len=64)


@pytest.mark.parametrize("cfg", [GQA, load_course_model()[0].cfg], ids=["GQA", "course model"])
def test_hf_llama_like_has_the_shape_of_the_config(cfg):
    hf = hf_llama_like(cfg)
    assert type(hf).__name__ == "LlamaForCausalLM" and not hf.training
    assert from_hf(hf).cfg == cfg  # every field: L, C, H, H_kv, d_h, V, d_ff, RoPE theta, norm eps, tying


def test_hf_llama_like_is_seeded():
    a, b, c = hf_llama_like(GQA, seed=1), hf_llama_like(GQA, seed=1), hf_llama_like(GQA, seed=2)
    wa, wb, wc = (m.model.layers[0].self_attn.k_proj.weight for m in (a, b, c))
    assert torch.equal(wa, wb) and not torch.equal(wa, wc)


def test_hf_decode_step_appends_one_position_as_our_decode_step_does():
    hf = hf_llama_like(GQA)
    ours = from_hf(hf)
    ids = torch.randint(0, GQA.vocab_size, (2, 5), generator=torch.Generator().manual_seed(0))  # (B, T)
    their_logits, their_cache = hf_prefill(hf, ids)
    our_logits, our_cache = prefill(ours, ids, cache=KVCache())
    for _ in range(3):
        token = our_logits.argmax(-1)  # (B,)
        their_logits = hf_decode_step(hf, token, their_cache)
        our_logits = decode_step(ours, token, our_cache)
        assert their_logits.shape == (2, GQA.vocab_size)
        torch.testing.assert_close(our_logits, their_logits, atol=TOL, rtol=0)
    assert int(their_cache.get_seq_length()) == our_cache.seq_len == 8
    for layer, (k, v) in enumerate(hf_cache_layers(their_cache)):
        assert k.shape == v.shape == our_cache.layer_kv(layer)[0].shape == (2, GQA.n_kv_heads, 8, GQA.head_dim)


def test_hf_cache_gap_compares_values_and_refuses_other_shapes():
    # notebook 00 checks with it that both libraries cache the same numbers, and where a step writes
    hf = hf_llama_like(GQA)
    ours = from_hf(hf)
    ids = torch.randint(0, GQA.vocab_size, (1, 4), generator=torch.Generator().manual_seed(1))  # (B, T)
    _, their_cache = hf_prefill(hf, ids)
    _, our_cache = prefill(ours, ids, cache=KVCache())
    assert hf_cache_gap(our_cache, their_cache) < TOL
    token = ids[:, 0]
    hf_decode_step(hf, token, their_cache)
    decode_step(ours, token, our_cache)
    assert hf_cache_gap(our_cache, their_cache, slice(4, 5)) < TOL  # the new K/V: slot 4, rotated at position 4
    _, other = hf_prefill(hf_llama_like(GQA, seed=3), torch.cat([ids, token[:, None]], 1))
    assert hf_cache_gap(our_cache, other) > 0.01  # other weights: other numbers, and the gap says so
    _, shorter = hf_prefill(hf, ids)
    with pytest.raises(ValueError, match="layer 0"):
        hf_cache_gap(our_cache, shorter)  # 5 positions against 4
