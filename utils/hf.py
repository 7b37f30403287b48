"""The bridge to Hugging Face ``transformers``: our ``Decoder`` from a ``LlamaForCausalLM`` (same
weights, same logits), and their caches read in our terms.

    ours = from_hf(hf_model)                        # weight for weight
    logits, their_cache = hf_prefill(hf_model, ids)  # a DynamicCache, as prefill(ours, ids) fills a KVCache
    hf_decode_step(hf_model, token, their_cache)    # one token per row, as decode_step(ours, token, cache)
    hf_decode_positions(hf_model, token, their_cache)  # the same step; returns the positions RoPE got, [B, 1]
    hf_cache_layers(their_cache)                    # [(K, V) per layer], each [B, H_kv, T, d_h]
    hf_cache_gap(our_cache, their_cache)            # the largest |ours - theirs| over every layer's K and V
    hf_crop(their_cache, n)                         # keep the first n positions, as our cache.crop(n)
    hf_llama_like(cfg)                              # a random LlamaForCausalLM of our config's shape, offline

``transformers`` is an optional dependency: only the functions that need it import it, when called.
Tested with transformers 4.57 (what Colab ships) and 5.x, whose cache API moved in places.
"""
from __future__ import annotations

import inspect

import torch

from .config import ModelConfig
from .model import Decoder
from .validate import check_int

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


def hf_llama_like(cfg: ModelConfig, seed: int = 0):
    """A ``transformers`` ``LlamaForCausalLM`` with random weights and the shape of ``cfg`` (L, C, H,
    H_kv, d_h, V, RoPE theta), in eval mode. Built from a ``LlamaConfig`` on the spot: nothing is
    downloaded. ``from_hf`` of it is our ``Decoder`` with the same weights."""
    try:
        import transformers  # optional dependency: imported only when used
        from transformers import LlamaConfig, LlamaForCausalLM
    except ImportError as err:
        raise ImportError(f"{err}: this cell needs transformers (pip install transformers)") from err
    kw = dict(vocab_size=cfg.vocab_size, hidden_size=cfg.d_model, intermediate_size=cfg.d_ff,
              num_hidden_layers=cfg.n_layers, num_attention_heads=cfg.n_heads,
              num_key_value_heads=cfg.n_kv_heads, head_dim=cfg.head_dim,
              max_position_embeddings=cfg.max_seq_len, rms_norm_eps=cfg.norm_eps,
              tie_word_embeddings=cfg.tie_embeddings, bos_token_id=None, eos_token_id=None, pad_token_id=None)
    if int(transformers.__version__.split(".")[0]) >= 5:  # 5.x: RoPE settings moved into rope_parameters
        kw["rope_parameters"] = {"rope_type": "default", "rope_theta": cfg.rope_theta}
    else:
        kw["rope_theta"] = cfg.rope_theta
    torch.manual_seed(seed)
    return LlamaForCausalLM(LlamaConfig(**kw)).eval()


def hf_cache_layers(past_key_values) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Per-layer ``(K, V)`` ``[B, H_kv, T, d_h]`` of a transformers cache (4.x and 5.x layouts)."""
    if hasattr(past_key_values, "layers"):  # transformers >= 4.54: DynamicCache.layers[i].keys
        return [(layer.keys, layer.values) for layer in past_key_values.layers]
    if hasattr(past_key_values, "key_cache"):  # older DynamicCache: two lists
        return list(zip(past_key_values.key_cache, past_key_values.value_cache))
    return [(k, v) for k, v in past_key_values]  # the legacy tuple of (K, V) pairs


def hf_cache_gap(cache, past_key_values, positions: slice = slice(None)) -> float:
    """The largest ``|ours - theirs|`` over every layer's K and V at ``positions`` (a slice of the time
    axis): our ``cache`` against a transformers cache of the same model. ``ValueError`` when the two do
    not hold the same layers and shapes, so a gap of 0 can only mean the same numbers."""
    theirs = hf_cache_layers(past_key_values)
    if len(theirs) != cache.n_layers:
        raise ValueError(f"our cache has {cache.n_layers} layers, theirs {len(theirs)}")
    gap = 0.0
    for layer, pair in enumerate(theirs):
        for ours, their in zip(cache.layer_kv(layer), pair):  # K, then V: (B, H_kv, T, d_h) each
            if ours.shape != their.shape:
                raise ValueError(f"layer {layer}: our {list(ours.shape)} against their {list(their.shape)}")
            gap = max(gap, (ours[:, :, positions].float() - their[:, :, positions].float()).abs().max().item())
    return gap


def _cache_argument(hf_model) -> str:
    # the forward argument that takes a cache: past_key_values in 4.x, cache in 5.x
    return "cache" if "cache" in inspect.signature(type(hf_model).forward).parameters else "past_key_values"


@torch.inference_mode()
def hf_prefill(hf_model, input_ids: torch.Tensor, cache=None):
    """transformers' side of ``prefill``: the prompt ``[B, T]`` in one forward pass, filling ``cache``
    (a new ``DynamicCache`` if None). Returns ``(logits [B, V], cache)``, like ``prefill``."""
    if cache is None:
        from transformers import DynamicCache  # optional dependency: imported only when used

        cache = DynamicCache()
    out = hf_model(input_ids, use_cache=True, **{_cache_argument(hf_model): cache})
    return out.logits[:, -1], cache  # (B, V)


def hf_decode_step(hf_model, token_ids: torch.Tensor, cache) -> torch.Tensor:
    """transformers' side of ``decode_step``: one new token per row (``token_ids`` ``[B]``), its K/V
    appended to ``cache``; returns its logits ``[B, V]``. transformers numbers the new token with the
    cache length (``position_ids = arange(1) + cache.get_seq_length()``); 4.x also passes that index on as
    ``cache_position`` (where a static cache writes), while a ``DynamicCache`` simply appends."""
    return hf_prefill(hf_model, token_ids[:, None], cache)[0]  # (B, 1) in, (B, V) out


def hf_decode_positions(hf_model, token_ids: torch.Tensor, cache) -> torch.Tensor:
    """Run ``hf_decode_step`` (``cache`` grows by one position) and return the position ids ``[B, 1]``
    transformers handed its rotary embedding (RoPE) for the new token: the position it numbered it with.

    A forward hook on ``hf_model.model.rotary_emb`` reads them: 5.x passes ``position_ids`` by keyword,
    4.x by position. The hook is removed afterwards, even if the step raised.
    """
    seen = []

    def record(module, args, kwargs, output):  # rotary_emb(hidden_states, position_ids)
        seen.append(kwargs["position_ids"] if "position_ids" in kwargs else args[1])

    hook = hf_model.model.rotary_emb.register_forward_hook(record, with_kwargs=True)
    try:
        hf_decode_step(hf_model, token_ids, cache)
    finally:
        hook.remove()
    return seen[0]  # (B, 1), or (1, 1) when every row shares the positions


def hf_crop(past_key_values, n: int) -> None:
    """Keep the first ``n`` positions of a transformers cache, as our ``cache.crop(n)`` does.

    Their ``crop`` changed meaning: in 4.x ``crop(max_length)`` keeps ``max_length`` positions, in
    5.x ``crop(tokens_to_remove)`` refuses a positive number. A negative one means "drop that many"
    in both, so that is what we pass.
    """
    held = int(past_key_values.get_seq_length())
    n = check_int("n", n, minimum=0, maximum=held)  # at most the positions the cache holds
    if n < held:  # crop(0) would empty a 4.x cache: call it only to drop something
        past_key_values.crop(n - held)
