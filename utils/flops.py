"""What the KV cache saves, counted: FLOPs and bytes of one decode step, with and without it.

One decode step produces the logits of the next token when ``T`` tokens are already in the
context (``T`` = the cache length = the new token's position). Two ways to do it:

* **cached**: run only the new token through the model; its query attends over the ``T`` cached
  keys plus its own (``S = T + 1`` keys); read the cached K/V, append one new K/V per layer.
* **no cache**: run all ``T + 1`` tokens through every layer again (history included) and keep
  only the last position's logits.

Counting rules (a matrix-vector product ``[n, m] @ [m]`` costs ``2 n m`` FLOPs: one multiply and
one add per weight):

    projections  per token and layer: q, k, v, o  = 2 C (H d_h + 2 H_kv d_h) + 2 H d_h C
    mlp          per token and layer: SwiGLU gate, up, down = 3 * 2 C d_ff (GPT-2: 2 * 2 C d_ff)
    attention    per query and layer that sees S keys: q.K (2 H d_h S) + weights.V (2 H d_h S)
    lm_head      2 C V, once per step (only the last position's logits are needed)

Norms, RoPE, softmax and the residual adds are left out: they are a few FLOPs per element,
small next to the matrix products. In the no-cache step the causal mask means query ``i`` sees
``i + 1`` keys, so attention costs ``sum_{i=1}^{S} i = S (S + 1) / 2`` key visits (a kernel that
skips masked blocks; a naive one computes all ``S * S`` and throws half away).

Bytes are the memory one step has to read or write (batch of one unless ``batch_size``):

    weights   every layer's matrices and the lm_head, once per step (same in both loops), plus
              the embedding rows of the tokens fed in
    kv_read   cached: the K and V of the ``T`` history tokens, every layer: 2 L H_kv d_h T bytes/elt
    kv_write  cached: the new token's K and V, every layer: 2 L H_kv d_h bytes/elt

``prefill_flops`` counts a prefill of T tokens with the same per-token parts (all T tokens run,
attention over the causal triangle or the whole square), and ``attention_crossover`` gives the
prompt length at which its attention reaches its projections and MLPs.

What the cache saves: the history's projections and MLPs (and the history queries' attention).
What it does not: the new token's whole forward pass, the new query's attention over ever more
keys, and reading the growing cache. So a cached step still gets slower as ``T`` grows.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .config import ModelConfig
from .sizing import bytes_per_element
from .validate import check_int

FLOP_PARTS = ("projections", "mlp", "attention", "lm_head")


@dataclass(frozen=True)
class StepCost:
    """FLOPs and bytes of one decode step at context length ``context_len`` (see module docstring)."""

    context_len: int
    cached: bool
    flops: dict[str, int]
    bytes: dict[str, int]

    @property
    def total_flops(self) -> int:
        return sum(self.flops.values())


def projection_flops_per_token(cfg: ModelConfig) -> int:
    """q, k, v and o projections of one token in one layer."""
    C, H, H_kv, d_h = cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.head_dim
    return 2 * C * (H * d_h + 2 * H_kv * d_h) + 2 * H * d_h * C


def mlp_flops_per_token(cfg: ModelConfig) -> int:
    """SwiGLU MLP (gate, up, down) of one token in one layer; GPT-2's GELU MLP has two matrices."""
    return cfg.mlp_matrices * 2 * cfg.d_model * cfg.d_ff


def attention_flops_per_query(cfg: ModelConfig, n_keys: int) -> int:
    """One query (all H heads) against ``n_keys`` keys in one layer: q.K and weights.V."""
    return 2 * 2 * cfg.n_heads * cfg.head_dim * n_keys


def weight_bytes(cfg: ModelConfig, dtype: torch.dtype | str = "float32", n_tokens: int = 1) -> int:
    """Bytes of weights one forward pass reads: every layer, the final norm and lm_head, plus the
    embedding rows of ``n_tokens`` tokens (a lookup reads only those rows)."""
    embed = cfg.vocab_size * cfg.d_model
    lookups = 1  # embedding tables read a row per token, not whole
    if cfg.arch == "gpt2":
        embed += cfg.max_seq_len * cfg.d_model  # the learned position table is a lookup too
        lookups = 2
    untied = cfg.n_params - embed - (0 if cfg.tie_embeddings else cfg.vocab_size * cfg.d_model)
    head = cfg.vocab_size * cfg.d_model  # tied or not, the lm_head matrix is read once
    return (untied + head + lookups * n_tokens * cfg.d_model) * bytes_per_element(dtype)


def decode_step_cost(
    cfg: ModelConfig,
    context_len: int,
    *,
    cached: bool = True,
    batch_size: int = 1,
    dtype: torch.dtype | str = "float32",
) -> StepCost:
    """FLOPs and bytes of one decode step after ``context_len`` tokens (T), per part.

    ``cached=True``: only the new token runs (S = T + 1 keys for its query).
    ``cached=False``: all T + 1 tokens run through every layer again.
    FLOPs and K/V bytes scale with ``batch_size``; the weights are read once for the batch.
    """
    if not isinstance(cfg, ModelConfig):
        raise ValueError(f"cfg must be a ModelConfig, got {type(cfg).__name__}")
    check_int("context_len", context_len, minimum=0)
    check_int("batch_size", batch_size)
    B, L, T = batch_size, cfg.n_layers, context_len
    S = T + 1  # keys visible to the new token (history + itself)
    n_tokens = 1 if cached else S  # tokens pushed through every layer in this step
    # Queries x keys summed over the queries of this step: 1 x S cached, 1 + 2 + ... + S without.
    key_visits = S if cached else S * (S + 1) // 2
    flops = {
        "projections": B * L * n_tokens * projection_flops_per_token(cfg),
        "mlp": B * L * n_tokens * mlp_flops_per_token(cfg),
        "attention": B * L * attention_flops_per_query(cfg, key_visits),
        "lm_head": B * 2 * cfg.d_model * cfg.vocab_size,
    }
    kv_per_token = 2 * L * cfg.n_kv_heads * cfg.head_dim * bytes_per_element(dtype)  # K and V, all layers
    nbytes = {
        "weights": weight_bytes(cfg, dtype, n_tokens=B * n_tokens),
        "kv_read": B * T * kv_per_token if cached else 0,
        "kv_write": B * kv_per_token if cached else 0,
    }
    return StepCost(context_len=T, cached=bool(cached), flops=flops, bytes=nbytes)


def savings_table(
    cfg: ModelConfig, context_lens, *, batch_size: int = 1, dtype: torch.dtype | str = "float32"
) -> list[dict]:
    """One row per context length: what a cached and an uncached step cost, and what is saved.

    Keys: ``T``, ``flops_cached``, ``flops_no_cache``, ``saved_flops`` (history projections, MLPs
    and history queries' attention), ``attention_cached`` (still paid, grows with T),
    ``kv_read_bytes`` (cached step), ``weight_bytes``, ``flop_ratio`` (no cache / cached).
    """
    rows = []
    for T in context_lens:
        c = decode_step_cost(cfg, T, cached=True, batch_size=batch_size, dtype=dtype)
        n = decode_step_cost(cfg, T, cached=False, batch_size=batch_size, dtype=dtype)
        rows.append({
            "T": T,
            "flops_cached": c.total_flops,
            "flops_no_cache": n.total_flops,
            "saved_flops": n.total_flops - c.total_flops,
            "attention_cached": c.flops["attention"],
            "kv_read_bytes": c.bytes["kv_read"],
            "weight_bytes": c.bytes["weights"],
            "flop_ratio": n.total_flops / c.total_flops,
        })
    return rows


def prefill_flops(cfg: ModelConfig, prompt_len: int, *, masked_half_skipped: bool) -> dict[str, int]:
    """FLOPs of a batch-1 prefill of ``prompt_len`` tokens (T), per part: what runs, not only what is needed.

    Attention counts T(T+1)/2 query-key pairs per head and layer if the kernel skips the masked half,
    T x T if it computes the whole square and drops half. The LM head runs on all T rows, as the
    course's ``prefill`` does (a lean engine computes only the last row's logits).
    """
    check_int("prompt_len", prompt_len)
    L, T = cfg.n_layers, prompt_len
    pairs = T * (T + 1) // 2 if masked_half_skipped else T * T  # query-key pairs per head and layer
    return {"projections": L * T * projection_flops_per_token(cfg),
            "mlp": L * T * mlp_flops_per_token(cfg),
            "attention": L * attention_flops_per_query(cfg, 1) * pairs,
            "lm_head": T * 2 * cfg.d_model * cfg.vocab_size}


def prefill_flops_per_token(cfg: ModelConfig, prompt_len: int, *, masked_half_skipped: bool) -> float:
    """The FLOPs of a prefill of ``prompt_len`` tokens, per prompt token."""
    return sum(prefill_flops(cfg, prompt_len, masked_half_skipped=masked_half_skipped).values()) / prompt_len


def attention_crossover(cfg: ModelConfig, *, masked_half_skipped: bool) -> int:
    """The prompt length T at which a prefill's attention FLOPs reach its projections' and MLPs'.

    Solves a1 * pairs(T) = T * per_token, with a1 the FLOPs of one query-key pair (all heads, one
    layer): pairs = T(T+1)/2 gives T = 2 per_token / a1 - 1, pairs = T x T gives T = per_token / a1.
    """
    per_token = projection_flops_per_token(cfg) + mlp_flops_per_token(cfg)  # one token, one layer
    a1 = attention_flops_per_query(cfg, 1)  # one query against one key, one layer
    return 2 * per_token // a1 - 1 if masked_half_skipped else per_token // a1
