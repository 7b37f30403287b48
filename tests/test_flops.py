"""utils.flops counts what torch really computes (FlopCounterMode), and what the cache saves."""
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from utils import KVCache, ModelConfig, decode_step, prefill
from utils.flops import (
    StepCost, attention_flops_per_query, decode_step_cost, mlp_flops_per_token, projection_flops_per_token,
    savings_table, weight_bytes,
)
from utils.sizing import MODEL_PRESETS, cache_bytes_for

from conftest import LAYOUTS, tiny_model


def _counted(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


@pytest.mark.parametrize("kind", list(LAYOUTS))
@pytest.mark.parametrize("T", [1, 7, 30])
def test_cached_step_flops_equal_torch_count(kind, T):
    # The explicit attention is plain matmuls, which FlopCounterMode counts exactly.
    model = tiny_model(kind)
    model.set_attn_impl("explicit")
    ids = torch.randint(0, model.cfg.vocab_size, (1, T + 1), generator=torch.Generator().manual_seed(T))
    with torch.inference_mode():
        _, kv = prefill(model, ids[:, :T], cache=KVCache())
        counted = _counted(lambda: decode_step(model, ids[:, T], kv))
    assert counted == decode_step_cost(model.cfg, T).total_flops


@pytest.mark.parametrize("T", [1, 9, 40])
def test_uncached_step_flops_match_torch_count_up_to_what_our_decoder_wastes(T):
    # Our Decoder, without a cache, computes lm_head for all T + 1 rows and (explicit attention)
    # the full (T+1) x (T+1) score matrix; the count keeps only what the step needs.
    model = tiny_model("GQA")
    model.set_attn_impl("explicit")
    cfg, S = model.cfg, T + 1
    ids = torch.randint(0, cfg.vocab_size, (1, S), generator=torch.Generator().manual_seed(T))
    with torch.inference_mode():
        counted = _counted(lambda: model(ids))
    c = decode_step_cost(cfg, T, cached=False)
    extra_head = (S - 1) * 2 * cfg.d_model * cfg.vocab_size
    extra_attn = cfg.n_layers * attention_flops_per_query(cfg, S * S - S * (S + 1) // 2)
    assert counted == c.total_flops + extra_head + extra_attn


def test_parts_and_what_is_saved():
    cfg = ModelConfig(vocab_size=100, n_layers=3, n_heads=4, n_kv_heads=2, d_model=64, d_ff=160, max_seq_len=512)
    for T in (0, 1, 10, 300):
        c, n = decode_step_cost(cfg, T), decode_step_cost(cfg, T, cached=False)
        assert isinstance(c, StepCost) and c.cached and not n.cached
        # the cache removes the history's projections and MLPs ...
        assert n.flops["projections"] - c.flops["projections"] == T * cfg.n_layers * projection_flops_per_token(cfg)
        assert n.flops["mlp"] - c.flops["mlp"] == T * cfg.n_layers * mlp_flops_per_token(cfg)
        # ... but the new query still attends over all T + 1 keys, and the cache is read
        assert c.flops["attention"] == cfg.n_layers * attention_flops_per_query(cfg, T + 1)
        assert c.bytes["kv_read"] == cache_bytes_for(cfg, 1, T, "float32")
        assert c.bytes["kv_write"] == cache_bytes_for(cfg, 1, 1, "float32")
        assert n.bytes["kv_read"] == n.bytes["kv_write"] == 0
        assert c.flops["lm_head"] == n.flops["lm_head"] == 2 * cfg.d_model * cfg.vocab_size
    # the cached step still grows with T (attention and cache reads), the uncached one much faster
    a, b = decode_step_cost(cfg, 100), decode_step_cost(cfg, 200)
    assert b.total_flops > a.total_flops and b.bytes["kv_read"] == 2 * a.bytes["kv_read"]
    rows = savings_table(cfg, [1, 10, 100, 400])
    assert [r["T"] for r in rows] == [1, 10, 100, 400]
    assert all(r["saved_flops"] == r["flops_no_cache"] - r["flops_cached"] > 0 for r in rows)
    ratios = [r["flop_ratio"] for r in rows]
    assert ratios == sorted(ratios)


def test_batch_and_dtype_scaling():
    cfg = MODEL_PRESETS["Llama-3-8B"]
    one, four = decode_step_cost(cfg, 1000, dtype="bfloat16"), decode_step_cost(cfg, 1000, batch_size=4, dtype="bfloat16")
    assert four.total_flops == 4 * one.total_flops
    assert four.bytes["kv_read"] == 4 * one.bytes["kv_read"]
    assert four.bytes["weights"] - one.bytes["weights"] == 3 * cfg.d_model * 2  # 3 more embedding rows
    # an 8B model in bf16 reads about 15 GB of weights per step (embedding table aside)
    assert 14e9 < weight_bytes(cfg, "bfloat16") < 16.5e9
    assert decode_step_cost(cfg, 0).bytes["kv_read"] == 0


@pytest.mark.parametrize("bad", [-1, 1.5, True, "10", None])
def test_bad_input_raises_value_error(bad):
    cfg = MODEL_PRESETS["GPT-2 (124M)"]
    with pytest.raises(ValueError):
        decode_step_cost(cfg, bad)
    with pytest.raises(ValueError):
        decode_step_cost(cfg, 10, batch_size=bad if bad is not None else 0)
    with pytest.raises(ValueError):
        decode_step_cost("not a config", 10)
