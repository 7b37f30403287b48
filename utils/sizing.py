"""How many bytes a KV cache takes, and the shapes of real published models.

    bytes = 2 (K and V) x L x B x H_kv x T x d_h x bytes_per_element

With MHA (H_kv = H, so H_kv x d_h = C) this is 2 x L x B x T x C x bytes.
"""
from __future__ import annotations

import torch

from .config import ModelConfig
from .i18n import tr
from .validate import check_int

# Bytes per stored element. float8 and int8 are quantised caches (plus small scale tensors,
# not counted here).
DTYPE_BYTES: dict[str, int] = {"float32": 4, "float16": 2, "bfloat16": 2, "float8": 1, "int8": 1}
_TORCH_NAMES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16", torch.int8: "int8"}
for _name in ("float8_e4m3fn", "float8_e5m2"):
    if hasattr(torch, _name):
        _TORCH_NAMES[getattr(torch, _name)] = "float8"


def bytes_per_element(dtype: torch.dtype | str) -> int:
    """Size of one element of ``dtype`` (a torch dtype or one of ``DTYPE_BYTES``' names)."""
    if isinstance(dtype, torch.dtype):
        if dtype not in _TORCH_NAMES:
            raise ValueError(f"dtype {dtype} is not a cache dtype; use one of {sorted(DTYPE_BYTES)}")
        return DTYPE_BYTES[_TORCH_NAMES[dtype]]
    if dtype not in DTYPE_BYTES:
        raise ValueError(f"unknown dtype {dtype!r}; use a torch dtype or one of {sorted(DTYPE_BYTES)}")
    return DTYPE_BYTES[dtype]


def kv_cache_bytes(
    n_layers: int, batch_size: int, n_kv_heads: int, seq_len: int, head_dim: int, dtype: torch.dtype | str = "float16"
) -> int:
    """``2 * L * B * H_kv * T * d_h * bytes``: the memory of the K and V caches of every layer."""
    sizes = {"n_layers": n_layers, "batch_size": batch_size, "n_kv_heads": n_kv_heads,
             "seq_len": seq_len, "head_dim": head_dim}
    for name, value in sizes.items():
        check_int(name, value, minimum=0)
    return 2 * n_layers * batch_size * n_kv_heads * seq_len * head_dim * bytes_per_element(dtype)


def kv_bytes_per_token(cfg: ModelConfig, dtype: torch.dtype | str = "float16") -> int:
    """Cache bytes one token adds (all layers, K and V, batch of one)."""
    return kv_cache_bytes(cfg.n_layers, 1, cfg.n_kv_heads, 1, cfg.head_dim, dtype)


def cache_bytes_for(cfg: ModelConfig, batch_size: int, seq_len: int, dtype: torch.dtype | str = "float16") -> int:
    """``kv_cache_bytes`` with the shape taken from a model's config."""
    return kv_cache_bytes(cfg.n_layers, batch_size, cfg.n_kv_heads, seq_len, cfg.head_dim, dtype)


def max_concurrent_requests(
    cfg: ModelConfig, seq_len: int | float, gpu_bytes: int, weight_bytes: int | None = None,
    dtype: torch.dtype | str = "float16", reserve_fraction: float = 0.0,
) -> int:
    """How many requests of ``seq_len`` tokens fit in what the weights leave of ``gpu_bytes``.

    ``weight_bytes`` defaults to the config's parameter count in ``dtype``; ``reserve_fraction``
    keeps part of the memory for activations and the allocator. ``seq_len`` may be a float: the
    average length of requests that differ (a padded batch's real tokens, 0.56 x T on average).
    """
    if not 0 <= reserve_fraction < 1:
        raise ValueError(f"reserve_fraction must be in [0, 1), got {reserve_fraction}")
    if gpu_bytes < 0:
        raise ValueError(f"gpu_bytes must be >= 0, got {gpu_bytes}")
    if isinstance(seq_len, float):
        if not seq_len >= 0:  # also refuses NaN
            raise ValueError(tr("{name} must be >= {minimum}, got {value}", name="seq_len", minimum=0, value=seq_len))
    else:
        check_int("seq_len", seq_len, minimum=0)
    if weight_bytes is None:
        weight_bytes = cfg.n_params * bytes_per_element(dtype)
    free = gpu_bytes * (1 - reserve_fraction) - weight_bytes
    per_request = kv_bytes_per_token(cfg, dtype) * seq_len  # = cache_bytes_for(cfg, 1, seq_len) for whole tokens
    if free <= 0 or per_request == 0:
        return 0
    return int(free // per_request)


# Shapes of real models, copied from the config.json each publishes on the Hugging Face hub
# (num_hidden_layers, num_attention_heads, num_key_value_heads, hidden_size, head_dim,
# intermediate_size, vocab_size, max_position_embeddings, rope_theta, rms_norm_eps).
# Only the Llama-family ones could be run by our Decoder; GPT-2 and Gemma-2 are here for sizing.
MODEL_PRESETS: dict[str, ModelConfig] = {
    # openai-community/gpt2 (n_layer=12, n_head=12, n_embd=768, n_positions=1024; MHA, LayerNorm, learned positions)
    "GPT-2 (124M)": ModelConfig(vocab_size=50257, n_layers=12, n_heads=12, n_kv_heads=12, d_model=768,
                                d_ff=3072, max_seq_len=1024, tie_embeddings=True, arch="gpt2"),
    # HuggingFaceTB/SmolLM2-135M
    "SmolLM2-135M": ModelConfig(vocab_size=49152, n_layers=30, n_heads=9, n_kv_heads=3, d_model=576,
                                d_ff=1536, max_seq_len=8192, rope_theta=100000.0, tie_embeddings=True),
    # Qwen/Qwen2.5-0.5B-Instruct
    "Qwen2.5-0.5B": ModelConfig(vocab_size=151936, n_layers=24, n_heads=14, n_kv_heads=2, d_model=896,
                                d_ff=4864, max_seq_len=32768, rope_theta=1000000.0, norm_eps=1e-6,
                                tie_embeddings=True),
    # TinyLlama/TinyLlama-1.1B-Chat-v1.0
    "TinyLlama-1.1B": ModelConfig(vocab_size=32000, n_layers=22, n_heads=32, n_kv_heads=4, d_model=2048,
                                  d_ff=5632, max_seq_len=2048),
    # google/gemma-2-2b (head_dim=256 while hidden_size / num_attention_heads = 288)
    "Gemma-2-2B": ModelConfig(vocab_size=256000, n_layers=26, n_heads=8, n_kv_heads=4, d_model=2304,
                              d_ff=9216, max_seq_len=8192, head_dim=256, norm_eps=1e-6, tie_embeddings=True),
    # meta-llama/Llama-2-7b-hf
    "Llama-2-7B": ModelConfig(vocab_size=32000, n_layers=32, n_heads=32, n_kv_heads=32, d_model=4096,
                              d_ff=11008, max_seq_len=4096),
    # mistralai/Mistral-7B-v0.1 (sliding_window=4096)
    "Mistral-7B": ModelConfig(vocab_size=32000, n_layers=32, n_heads=32, n_kv_heads=8, d_model=4096,
                              d_ff=14336, max_seq_len=32768),
    # Qwen/Qwen2.5-7B-Instruct
    "Qwen2.5-7B": ModelConfig(vocab_size=152064, n_layers=28, n_heads=28, n_kv_heads=4, d_model=3584,
                              d_ff=18944, max_seq_len=32768, rope_theta=1000000.0, norm_eps=1e-6),
    # meta-llama/Meta-Llama-3-8B
    "Llama-3-8B": ModelConfig(vocab_size=128256, n_layers=32, n_heads=32, n_kv_heads=8, d_model=4096,
                              d_ff=14336, max_seq_len=8192, rope_theta=500000.0),
    # google/gemma-2-9b (head_dim=256 while hidden_size / num_attention_heads = 224)
    "Gemma-2-9B": ModelConfig(vocab_size=256000, n_layers=42, n_heads=16, n_kv_heads=8, d_model=3584,
                              d_ff=14336, max_seq_len=8192, head_dim=256, norm_eps=1e-6, tie_embeddings=True),
    # meta-llama/Llama-2-13b-hf
    "Llama-2-13B": ModelConfig(vocab_size=32000, n_layers=40, n_heads=40, n_kv_heads=40, d_model=5120,
                               d_ff=13824, max_seq_len=4096),
    # meta-llama/Llama-2-70b-hf
    "Llama-2-70B": ModelConfig(vocab_size=32000, n_layers=80, n_heads=64, n_kv_heads=8, d_model=8192,
                               d_ff=28672, max_seq_len=4096),
    # meta-llama/Llama-3.1-70B (rope_scaling "llama3" stretches positions to 131072)
    "Llama-3.1-70B": ModelConfig(vocab_size=128256, n_layers=80, n_heads=64, n_kv_heads=8, d_model=8192,
                                 d_ff=28672, max_seq_len=131072, rope_theta=500000.0),
}


def preset_table(contexts: tuple[int, ...] = (4096, 32768, 131072), dtype: torch.dtype | str = "float16",
                 batch_size: int = 1) -> list[dict]:
    """One row per ``MODEL_PRESETS`` model: its shape, cache bytes per token, and per context length.

    ``row["bytes"][T]`` is the cache of ``batch_size`` sequences of ``T`` tokens (even beyond the
    model's ``max_context``: the formula does not care, the model would).
    """
    return [
        {"model": name, "L": cfg.n_layers, "H": cfg.n_heads, "H_kv": cfg.n_kv_heads, "d_h": cfg.head_dim,
         "C": cfg.d_model, "kind": cfg.attention_kind, "max_context": cfg.max_seq_len,
         "per_token_bytes": kv_bytes_per_token(cfg, dtype),
         "bytes": {T: cache_bytes_for(cfg, batch_size, T, dtype) for T in contexts}}
        for name, cfg in MODEL_PRESETS.items()
    ]
