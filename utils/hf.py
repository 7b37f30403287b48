"""Build our ``Decoder`` from a Hugging Face ``LlamaForCausalLM`` (same weights, same logits).

``transformers`` is an optional dependency: it is imported by the caller, not here.
"""
from __future__ import annotations

import torch

from .config import ModelConfig
from .model import Decoder

SUPPORTED_MODEL_TYPES = ("llama",)


def _rope_theta(config) -> float:
    # transformers 5.x: config.rope_parameters = {"rope_type": ..., "rope_theta": ...}
    # transformers 4.x: config.rope_theta and config.rope_scaling (None or {"rope_type"/"type": ...})
    params = getattr(config, "rope_parameters", None)
    if isinstance(params, dict) and params:
        rope_type = params.get("rope_type", params.get("type", "default"))
        theta = params.get("rope_theta", getattr(config, "rope_theta", None))
    else:
        scaling = getattr(config, "rope_scaling", None) or {}
        rope_type = scaling.get("rope_type", scaling.get("type", "default"))
        theta = getattr(config, "rope_theta", None)
    if rope_type != "default":
        raise ValueError(
            f"RoPE scaling type {rope_type!r} is not supported (only plain RoPE); "
            "converting anyway would give a silently wrong model"
        )
    if theta is None:
        raise ValueError("the config names no rope_theta")
    return float(theta)


def config_from_hf(config) -> ModelConfig:
    """Our ``ModelConfig`` from a ``transformers`` ``LlamaConfig``; ``ValueError`` if we cannot run it."""
    model_type = getattr(config, "model_type", None)
    if model_type not in SUPPORTED_MODEL_TYPES:
        raise ValueError(f"model_type {model_type!r} is not supported; supported: {SUPPORTED_MODEL_TYPES}")
    for flag in ("attention_bias", "mlp_bias"):
        if getattr(config, flag, False):
            raise ValueError(f"{flag}=True is not supported: our projections have no bias")
    act = getattr(config, "hidden_act", "silu")
    if act != "silu":
        raise ValueError(f"hidden_act {act!r} is not supported; our MLP is SwiGLU with silu")
    if getattr(config, "pretraining_tp", 1) not in (None, 1):
        raise ValueError(f"pretraining_tp={config.pretraining_tp} is not supported")
    n_heads = config.num_attention_heads
    return ModelConfig(
        vocab_size=config.vocab_size,
        n_layers=config.num_hidden_layers,
        n_heads=n_heads,
        n_kv_heads=getattr(config, "num_key_value_heads", None) or n_heads,
        d_model=config.hidden_size,
        d_ff=config.intermediate_size,
        max_seq_len=config.max_position_embeddings,
        head_dim=getattr(config, "head_dim", None) or config.hidden_size // n_heads,
        rope_theta=_rope_theta(config),
        norm_eps=config.rms_norm_eps,
        tie_embeddings=bool(getattr(config, "tie_word_embeddings", False)),
    )


def from_hf(hf_model) -> Decoder:
    """A ``Decoder`` with the weights of ``hf_model`` (a ``LlamaForCausalLM``), in eval mode."""
    config = getattr(hf_model, "config", None)
    if config is None:
        raise ValueError(f"expected a transformers model with a .config, got {type(hf_model).__name__}")
    cfg = config_from_hf(config)
    state = hf_model.state_dict()
    ours = {}
    for name, tensor in state.items():
        if name.startswith("model."):
            name = name[len("model."):]  # LlamaModel's parameters sit under "model."
        if "rotary_emb" in name:
            continue  # RoPE tables are recomputed, not loaded
        ours[name] = tensor
    if cfg.tie_embeddings:
        ours.pop("lm_head.weight", None)
    dtype = next(iter(state.values())).dtype
    model = Decoder(cfg).to(dtype)
    missing, unexpected = model.load_state_dict(ours, strict=False)
    missing = [m for m in missing if not (cfg.tie_embeddings and m == "lm_head.weight")]
    if missing or unexpected:
        raise ValueError(f"weights do not match a Llama decoder: missing {missing}, unexpected {unexpected}")
    # keep the RoPE tables in float32 whatever the weights' dtype, as transformers does
    for name in ("rope_cos", "rope_sin", "rope_sin_rolled"):
        setattr(model, name, getattr(model, name).float())
    return model.eval()
