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


def test_parameter_counts_match_the_published_models():
    """Regression: GPT-2 was counted with the Llama formula (3-matrix MLP, no biases): 152M, not 124M."""
    assert MODEL_PRESETS["GPT-2 (124M)"].n_params == 124_439_808  # openai-community/gpt2, model.num_parameters()
    assert MODEL_PRESETS["Llama-2-7B"].n_params == 6_738_415_616  # meta-llama/Llama-2-7b-hf
    assert MODEL_PRESETS["SmolLM2-135M"].n_params == 134_515_008  # HuggingFaceTB/SmolLM2-135M


def test_gpt2_weights_read_per_step_leave_out_both_lookup_tables():
    from utils.flops import mlp_flops_per_token, weight_bytes

    cfg = MODEL_PRESETS["GPT-2 (124M)"]
    C, V, P = cfg.d_model, cfg.vocab_size, cfg.max_seq_len
    # every parameter but the token and position tables, + the (tied) lm_head, + one row of each table
    assert weight_bytes(cfg, "float32") == (cfg.n_params - V * C - P * C + V * C + 2 * C) * 4
    assert mlp_flops_per_token(cfg) == 2 * 2 * C * cfg.d_ff  # up and down only


def test_sizing_only_archs_are_refused_by_the_decoder():
    from utils import Decoder, ModelConfig

    with pytest.raises(ValueError, match="sizing only"):
        Decoder(MODEL_PRESETS["GPT-2 (124M)"])
    with pytest.raises(ValueError, match="arch='mamba'"):
        ModelConfig(vocab_size=8, n_layers=1, n_heads=2, n_kv_heads=2, d_model=8, d_ff=8, max_seq_len=8, arch="mamba")


def test_max_concurrent_requests_takes_an_average_length():
    """Requests of different lengths fit as many as their average length says (a padded batch's real
    tokens, 4,608.5 on average); whole tokens give the same answer as before."""
    cfg = MODEL_PRESETS["Llama-3-8B"]
    kw = dict(gpu_bytes=80 * 2**30, weight_bytes=16 * 2**30, dtype="bfloat16")
    assert max_concurrent_requests(cfg, 4608.0, **kw) == max_concurrent_requests(cfg, 4608, **kw)
    per_token = kv_bytes_per_token(cfg, "bfloat16")
    assert max_concurrent_requests(cfg, 4608.5, **kw) == int(64 * 2**30 // (per_token * 4608.5))
    for bad in (-1.0, float("nan"), -3):
        with pytest.raises(ValueError, match="seq_len"):
            max_concurrent_requests(cfg, bad, **kw)
