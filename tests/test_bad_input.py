"""Bad input gets a ValueError naming the bad value, never a shape error from deep inside torch."""
import pytest
import torch

from conftest import tiny_model
from utils import (KVCache, ModelConfig, StaticKVCache, compare_with_recompute, decode_step, generate,
                   kv_cache_bytes, prefill, sample)

BASE = dict(vocab_size=50, n_layers=2, n_heads=4, n_kv_heads=2, d_model=32, d_ff=64, max_seq_len=32)


@pytest.mark.parametrize("overrides,needle", [
    (dict(n_heads=6, n_kv_heads=4), "n_heads=6"),
    (dict(n_kv_heads=0), "n_kv_heads"),
    (dict(n_kv_heads=8), "n_kv_heads=8"),
    (dict(d_model=30), "d_model=30"),
    (dict(head_dim=7), "head_dim=7"),
    (dict(n_layers=0), "n_layers"),
    (dict(vocab_size=-3), "vocab_size"),
    (dict(max_seq_len=2.5), "max_seq_len"),
    (dict(rope_theta=0.0), "rope_theta"),
    (dict(norm_eps=-1.0), "norm_eps"),
])
def test_bad_config(overrides, needle):
    with pytest.raises(ValueError, match=needle.replace("(", r"\(")):
        ModelConfig(**{**BASE, **overrides})


def test_head_dim_may_differ_from_c_over_h():
    assert ModelConfig(**{**BASE, "d_model": 30, "head_dim": 16}).head_dim == 16


@pytest.fixture(scope="module")
def model():
    return tiny_model("GQA", max_seq_len=32)


def test_empty_prompt(model):
    with pytest.raises(ValueError, match="empty"):
        prefill(model, torch.zeros(1, 0, dtype=torch.long))


def test_token_id_outside_vocab(model):
    with pytest.raises(ValueError, match="token id 101"):
        prefill(model, torch.tensor([[1, 101]]))
    with pytest.raises(ValueError, match="token id -1"):
        prefill(model, torch.tensor([[1, -1]]))


def test_float_ids(model):
    with pytest.raises(ValueError, match="float32"):
        model(torch.zeros(1, 3))


def test_prompt_longer_than_max_seq_len(model):
    with pytest.raises(ValueError, match="max_seq_len=32"):
        prefill(model, torch.ones(1, 33, dtype=torch.long))


def test_decoding_past_max_seq_len(model):
    kv = KVCache()
    prefill(model, torch.ones(1, 32, dtype=torch.long), cache=kv)
    with pytest.raises(ValueError, match="33 positions"):
        decode_step(model, torch.tensor([1]), kv)


def test_attention_mask_of_wrong_shape(model):
    with pytest.raises(ValueError, match=r"\(2, 5\)"):
        prefill(model, torch.ones(2, 5, dtype=torch.long), attention_mask=torch.ones(2, 4))


def test_right_padding_is_refused(model):
    mask = torch.tensor([[1, 1, 0]])
    with pytest.raises(ValueError, match="left-padded"):
        prefill(model, torch.ones(1, 3, dtype=torch.long), attention_mask=mask)


def test_writing_past_a_static_cache(model):
    kv = StaticKVCache(model.cfg, 1, 6)
    prefill(model, torch.ones(1, 6, dtype=torch.long), cache=kv)
    with pytest.raises(ValueError, match="max_len=6"):
        decode_step(model, torch.tensor([1]), kv)


def test_cache_batch_mismatch(model):
    kv = KVCache()
    prefill(model, torch.ones(2, 3, dtype=torch.long), cache=kv)
    with pytest.raises(ValueError, match="batch size 3"):
        decode_step(model, torch.tensor([1, 2, 3]), kv)


def test_decode_step_needs_a_filled_cache(model):
    with pytest.raises(ValueError, match="empty cache"):
        decode_step(model, torch.tensor([1]), KVCache())
    with pytest.raises(ValueError, match=r"\[B\]"):
        decode_step(model, torch.tensor([[1]]), KVCache())


@pytest.mark.parametrize("kwargs,needle", [
    (dict(temperature=-0.5), "temperature"),
    (dict(top_p=0.0), "top_p"),
    (dict(top_p=1.5), "top_p"),
    (dict(top_k=0), "top_k"),
])
def test_bad_sampling_arguments(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        sample(torch.zeros(1, 5), **kwargs)


def test_bad_generate_arguments(model):
    ids = torch.ones(1, 3, dtype=torch.long)
    with pytest.raises(ValueError, match="max_new_tokens"):
        generate(model, ids, -1)
    with pytest.raises(ValueError, match="'pagedd'"):
        generate(model, ids, 2, cache_kind="pagedd")
    with pytest.raises(ValueError, match="tokenizer"):
        generate(model, ids, 2, stop_strings=["x"])
    with pytest.raises(ValueError, match="max_seq_len=32"):
        generate(model, ids, 30)


@pytest.mark.parametrize("args,needle", [
    ((32, 1, 8, -1, 128), "seq_len"),
    ((-2, 1, 8, 10, 128), "n_layers"),
    ((32, 1, 8, 10, 128, "float12"), "float12"),
    ((32, 1.5, 8, 10, 128), "batch_size"),
])
def test_bad_kv_cache_bytes(args, needle):
    with pytest.raises(ValueError, match=needle):
        kv_cache_bytes(*args)


def test_bad_cache_operations(model):
    kv = KVCache()
    prefill(model, torch.ones(2, 3, dtype=torch.long), cache=kv)
    with pytest.raises(ValueError, match="crop length 9"):
        kv.crop(9)
    with pytest.raises(ValueError, match="out of range"):
        kv.reorder(torch.tensor([0, 5]))
    with pytest.raises(ValueError, match="max_len=99"):
        StaticKVCache(model.cfg, 1, 99)


def test_compare_with_recompute_bad_steps(model):
    with pytest.raises(ValueError, match="n_steps"):
        compare_with_recompute(model, torch.ones(1, 3, dtype=torch.long), -1)
