"""Our Decoder against the independent reference: transformers' LlamaForCausalLM, tiny random configs."""
import inspect

import pytest
import torch

transformers = pytest.importorskip("transformers")
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

from utils import KVCache, StaticKVCache, decode_step, from_hf, prefill  # noqa: E402
from conftest import hf_cache_layers  # noqa: E402
from utils.hf import config_from_hf  # noqa: E402

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)

TOL = 1e-4
CONFIGS = {
    "MHA": dict(num_attention_heads=4, num_key_value_heads=4, hidden_size=64),
    "GQA": dict(num_attention_heads=8, num_key_value_heads=2, hidden_size=64),
    "MQA": dict(num_attention_heads=4, num_key_value_heads=1, hidden_size=64),
    "head_dim!=C/H": dict(num_attention_heads=4, num_key_value_heads=2, hidden_size=48, head_dim=32),
    "tied": dict(num_attention_heads=4, num_key_value_heads=2, hidden_size=64, tie_word_embeddings=True),
}


def _hf_model(**kw):
    torch.manual_seed(0)
    base = dict(vocab_size=113, intermediate_size=128, num_hidden_layers=3, max_position_embeddings=256,
                rms_norm_eps=1e-6)
    base["rope_theta" if int(transformers.__version__.split(".")[0]) < 5 else "rope_parameters"] = (
        500000.0 if int(transformers.__version__.split(".")[0]) < 5
        else {"rope_type": "default", "rope_theta": 500000.0}
    )
    return LlamaForCausalLM(LlamaConfig(**{**base, **kw})).eval()


def _cache_kw(cache):
    # transformers 5.x renamed past_key_values to cache in forward
    params = inspect.signature(LlamaForCausalLM.forward).parameters
    return {"cache" if "cache" in params else "past_key_values": cache}


@pytest.fixture(params=list(CONFIGS))
def pair(request):
    hf = _hf_model(**CONFIGS[request.param])
    return hf, from_hf(hf)


def test_config_is_read_correctly(pair):
    hf, ours = pair
    c = hf.config
    assert ours.cfg.n_kv_heads == c.num_key_value_heads
    assert ours.cfg.head_dim == (getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads)
    assert ours.cfg.rope_theta == 500000.0
    assert ours.cfg.tie_embeddings == bool(c.tie_word_embeddings)


def test_full_forward_logits_match(pair):
    hf, ours = pair
    ids = torch.randint(0, 113, (2, 17), generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        torch.testing.assert_close(ours(ids), hf(ids).logits, atol=TOL, rtol=0)


@pytest.mark.parametrize("cache_cls", ["dynamic", "static", "paged"])
def test_prefill_decode_logits_and_cache_contents_match(pair, cache_cls):
    from utils.paged import PagedKVCache

    hf, ours = pair
    ids = torch.randint(0, 113, (2, 9), generator=torch.Generator().manual_seed(2))
    kv = {"dynamic": KVCache, "static": lambda: StaticKVCache(ours.cfg, 2, 64),
          "paged": lambda: PagedKVCache(ours.cfg, 16, 4)}[cache_cls]()
    with torch.inference_mode():
        out = hf(ids, use_cache=True)
        hf_cache = out.past_key_values
        logits, _ = prefill(ours, ids, cache=kv)
        torch.testing.assert_close(logits, out.logits[:, -1], atol=TOL, rtol=0)
        for step in range(12):
            nxt = logits.argmax(-1)
            out = hf(nxt[:, None], use_cache=True, **_cache_kw(hf_cache))
            hf_cache = out.past_key_values
            logits = decode_step(ours, nxt, kv)
            torch.testing.assert_close(logits, out.logits[:, -1], atol=TOL, rtol=0, msg=f"step {step}")
        theirs = hf_cache_layers(hf_cache)
        assert len(theirs) == ours.cfg.n_layers
        for layer, (hk, hv) in enumerate(theirs):
            k, v = kv.layer_kv(layer)
            torch.testing.assert_close(k, hk, atol=TOL, rtol=0, msg=f"K of layer {layer}")
            torch.testing.assert_close(v, hv, atol=TOL, rtol=0, msg=f"V of layer {layer}")


def test_left_padded_batch_matches_transformers():
    hf = _hf_model(**CONFIGS["GQA"])
    ours = from_hf(hf)
    ids = torch.randint(1, 113, (2, 8), generator=torch.Generator().manual_seed(3))
    mask = torch.ones_like(ids)
    mask[0, :3] = 0
    with torch.inference_mode():
        theirs = hf(ids, attention_mask=mask).logits
        mine = ours(ids, attention_mask=mask)
    real = mask.bool()
    torch.testing.assert_close(mine[real], theirs[real], atol=TOL, rtol=0)


def test_unsupported_rope_scaling_is_refused():
    hf = _hf_model(**CONFIGS["GQA"])
    c = hf.config
    if hasattr(c, "rope_parameters") and isinstance(c.rope_parameters, dict):
        c.rope_parameters = {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0}
    else:
        c.rope_scaling = {"rope_type": "linear", "factor": 2.0}
    with pytest.raises(ValueError, match="linear"):
        from_hf(hf)


def test_unsupported_architecture_is_refused():
    hf = _hf_model(**CONFIGS["GQA"])
    hf.config.model_type = "qwen2"
    with pytest.raises(ValueError, match="qwen2"):
        config_from_hf(hf.config)
    hf.config.model_type = "llama"
    hf.config.attention_bias = True
    with pytest.raises(ValueError, match="attention_bias"):
        config_from_hf(hf.config)


def test_hf_prefill_fills_a_dynamic_cache_as_our_prefill_fills_a_kvcache(pair):
    from utils.hf import hf_prefill

    hf, ours = pair
    ids = torch.randint(0, 113, (2, 7), generator=torch.Generator().manual_seed(4))
    their_logits, theirs = hf_prefill(hf, ids)
    our_logits, kv = prefill(ours, ids)
    assert type(theirs).__name__ == "DynamicCache" and int(theirs.get_seq_length()) == kv.seq_len == 7
    torch.testing.assert_close(our_logits, their_logits, atol=TOL, rtol=0)
    for layer, (hk, hv) in enumerate(hf_cache_layers(theirs)):
        torch.testing.assert_close(kv.k[layer], hk, atol=TOL, rtol=0, msg=f"K of layer {layer}")
        torch.testing.assert_close(kv.v[layer], hv, atol=TOL, rtol=0, msg=f"V of layer {layer}")


def test_hf_crop_keeps_the_first_n_positions_as_our_crop_does():
    from utils.hf import hf_crop, hf_prefill

    hf = _hf_model(**CONFIGS["GQA"])
    ids = torch.randint(0, 113, (1, 9), generator=torch.Generator().manual_seed(5))
    _, theirs = hf_prefill(hf, ids)
    before = [k.clone() for k, _ in hf_cache_layers(theirs)]
    hf_crop(theirs, 4)
    assert int(theirs.get_seq_length()) == 4
    hf_crop(theirs, 4)  # keeping all it holds changes nothing
    assert int(theirs.get_seq_length()) == 4
    for k_before, (k, _) in zip(before, hf_cache_layers(theirs)):
        assert torch.equal(k, k_before[:, :, :4])
    with pytest.raises(ValueError, match="n must be <= 4"):
        hf_crop(theirs, 5)


def test_hf_decode_positions_numbers_the_new_token_with_the_cache_length_and_removes_its_hook():
    # notebook 00 reads transformers' position for a decode step through this helper, on 4.x and 5.x alike
    from utils.hf import hf_decode_positions, hf_prefill

    hf = _hf_model(**CONFIGS["GQA"])
    ids = torch.randint(0, 113, (2, 5), generator=torch.Generator().manual_seed(6))
    _, theirs = hf_prefill(hf, ids)
    positions = hf_decode_positions(hf, ids[:, -1], theirs)  # (B, 1) or (1, 1)
    assert positions.shape[-1] == 1 and set(positions.flatten().tolist()) == {5}
    assert int(theirs.get_seq_length()) == 6  # the step ran and appended one position
    assert not hf.model.rotary_emb._forward_hooks  # the model runs without the hook afterwards
