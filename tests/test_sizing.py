"""Cache sizing formula and the real-model presets."""
import pytest
import torch

from utils import MODEL_PRESETS, kv_cache_bytes
from utils.sizing import cache_bytes_for, kv_bytes_per_token, max_concurrent_requests


def test_published_per_token_sizes():
    # 2 * L * H_kv * d_h * 2 bytes: 2*32*32*128*2 and 2*32*8*128*2
    assert kv_bytes_per_token(MODEL_PRESETS["Llama-2-7B"], "float16") == 524_288
    assert kv_bytes_per_token(MODEL_PRESETS["Llama-3-8B"], "float16") == 131_072


def test_at_least_ten_presets_with_the_gqa_and_head_dim_traps():
    assert len(MODEL_PRESETS) >= 10
    assert MODEL_PRESETS["Llama-2-70B"].n_kv_heads == 8  # GQA, not 64
    gemma = MODEL_PRESETS["Gemma-2-9B"]
    assert gemma.head_dim == 256 and gemma.head_dim != gemma.d_model // gemma.n_heads


def test_mha_form_equals_general_form():
    cfg = MODEL_PRESETS["Llama-2-7B"]
    assert cfg.attention_kind == "MHA"
    L, B, T, C = cfg.n_layers, 3, 1000, cfg.d_model
    assert cache_bytes_for(cfg, B, T, "float16") == 2 * L * B * T * C * 2


@pytest.mark.parametrize("dtype,nbytes", [("float32", 4), (torch.float32, 4), ("float16", 2),
                                          (torch.bfloat16, 2), ("bfloat16", 2), ("float8", 1), ("int8", 1)])
def test_dtype_sizes(dtype, nbytes):
    assert kv_cache_bytes(1, 1, 1, 1, 1, dtype) == 2 * nbytes


def test_zero_length_is_zero_bytes():
    assert kv_cache_bytes(32, 1, 8, 0, 128) == 0


def test_budget_planner():
    cfg = MODEL_PRESETS["Llama-3-8B"]
    per_req = cache_bytes_for(cfg, 1, 4096, "float16")
    n = max_concurrent_requests(cfg, 4096, gpu_bytes=80 * 2**30, weight_bytes=16 * 2**30)
    assert n == (64 * 2**30) // per_req
    assert max_concurrent_requests(cfg, 4096, gpu_bytes=8 * 2**30) == 0  # weights alone do not fit
