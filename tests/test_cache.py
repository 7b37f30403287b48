"""The two caches (utils/cache.py): same logits, the sizing formula's bytes, the course layout, crop."""
import torch

from utils import KVCache, StaticKVCache, decode_step, prefill
from utils.sizing import kv_cache_bytes

TOL = 1e-5  # fp32: different summation order, so rounding-level differences only


def test_static_and_dynamic_caches_give_the_same_logits(gqa_model):
    ids = torch.randint(0, 101, (3, 7), generator=torch.Generator().manual_seed(3))
    dyn, sta = KVCache(), StaticKVCache(gqa_model.cfg, 3, 40)
    a, _ = prefill(gqa_model, ids, cache=dyn)
    b, _ = prefill(gqa_model, ids, cache=sta)
    torch.testing.assert_close(a, b, atol=1e-6, rtol=0)
    for _ in range(20):
        tok = a.argmax(-1)
        a, b = decode_step(gqa_model, tok, dyn), decode_step(gqa_model, tok, sta)
        torch.testing.assert_close(a, b, atol=1e-6, rtol=0)
    assert dyn.seq_len == sta.seq_len == 27
    for layer in range(gqa_model.cfg.n_layers):
        for x, y in zip(dyn.layer_kv(layer), sta.layer_kv(layer)):
            torch.testing.assert_close(x, y, atol=1e-6, rtol=0)


def test_cache_nbytes_equals_the_formula(gqa_model):
    cfg = gqa_model.cfg
    ids = torch.randint(0, 101, (2, 9))
    _, dyn = prefill(gqa_model, ids)
    assert dyn.nbytes == kv_cache_bytes(cfg.n_layers, 2, cfg.n_kv_heads, 9, cfg.head_dim, torch.float32)
    sta = StaticKVCache(cfg, 2, 50, dtype=torch.float16)
    assert sta.nbytes == kv_cache_bytes(cfg.n_layers, 2, cfg.n_kv_heads, 50, cfg.head_dim, "float16")


def test_cache_has_one_kv_per_layer_with_course_layout(gqa_model):
    cfg = gqa_model.cfg
    _, kv = prefill(gqa_model, torch.randint(0, 101, (2, 6)))
    assert kv.n_layers == cfg.n_layers
    for layer in range(cfg.n_layers):
        k, v = kv.layer_kv(layer)
        assert k.shape == v.shape == (2, cfg.n_kv_heads, 6, cfg.head_dim)  # [B, H_kv, T, d_h]
    # every layer has its own K (different inputs and weights), so layer 0's cannot stand in
    assert not torch.allclose(kv.layer_kv(0)[0], kv.layer_kv(1)[0])


def test_crop_then_redecode_matches(gqa_model):
    ids = torch.randint(0, 101, (1, 8))
    for kv in (KVCache(), StaticKVCache(gqa_model.cfg, 1, 30)):
        logits, _ = prefill(gqa_model, ids, cache=kv)
        first = decode_step(gqa_model, torch.tensor([5]), kv)
        kv.crop(8)
        assert kv.seq_len == 8
        again = decode_step(gqa_model, torch.tensor([5]), kv)
        torch.testing.assert_close(first, again, atol=1e-6, rtol=0)


def test_chunked_prefill_matches_single_prefill(gqa_model):
    """Feeding the prompt in two chunks (causal mask with a cache offset) changes nothing."""
    ids = torch.randint(0, 101, (2, 12), generator=torch.Generator().manual_seed(5))
    whole, _ = prefill(gqa_model, ids)
    kv = KVCache()
    prefill(gqa_model, ids[:, :5], cache=kv)
    chunked, _ = prefill(gqa_model, ids[:, 5:], cache=kv)
    torch.testing.assert_close(whole, chunked, atol=1e-5, rtol=0)
