"""The model's shape, in one dataclass.

Every size in the course is named with the same symbols:

    V     vocab_size      number of tokens the model knows
    L     n_layers        decoder blocks
    H     n_heads         query heads
    H_kv  n_kv_heads      key/value heads (H_kv = H: MHA, 1 < H_kv < H: GQA, H_kv = 1: MQA)
    C     d_model         width of the residual stream
    d_h   head_dim        width of one head (usually C // H, but not always: Gemma-2)
"""
from __future__ import annotations

from dataclasses import dataclass

from .i18n import tr
from .validate import check_choice, check_int


ARCHS = ("llama", "gpt2")


@dataclass(frozen=True)
class ModelConfig:
    """Shape of a Llama-style decoder. Invalid combinations raise ``ValueError``.

    ``arch="gpt2"`` describes a GPT-2-style model for sizing only (``Decoder`` builds Llama-style
    models): a two-matrix GELU MLP, biases, LayerNorms and learned position embeddings change its
    parameter count and FLOPs, not its KV cache.
    """

    vocab_size: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_model: int
    d_ff: int
    max_seq_len: int
    head_dim: int | None = None
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    tie_embeddings: bool = False
    dropout: float = 0.0  # on the attention and MLP outputs, active only in train mode
    arch: str = "llama"  # or "gpt2", for sizing (see the class docstring)

    def __post_init__(self) -> None:
        for name in ("vocab_size", "n_layers", "n_heads", "n_kv_heads", "d_model", "d_ff", "max_seq_len"):
            check_int(name, getattr(self, name))
        if self.n_kv_heads > self.n_heads:
            raise ValueError(tr("n_kv_heads={n_kv_heads} is larger than n_heads={n_heads}; each K/V head must serve "
                                "at least one query head", n_kv_heads=self.n_kv_heads, n_heads=self.n_heads))
        if self.n_heads % self.n_kv_heads != 0:
            raise ValueError(tr("n_heads={n_heads} is not divisible by n_kv_heads={n_kv_heads}; in GQA every K/V head "
                                "serves the same number of query heads", n_heads=self.n_heads,
                                n_kv_heads=self.n_kv_heads))
        if self.head_dim is None:
            if self.d_model % self.n_heads != 0:
                raise ValueError(tr("d_model={d_model} is not divisible by n_heads={n_heads}; pass head_dim explicitly "
                                    "if the heads are not C // H wide", d_model=self.d_model, n_heads=self.n_heads))
            # frozen dataclass: fill in the derived default once, here.
            object.__setattr__(self, "head_dim", self.d_model // self.n_heads)
        check_int("head_dim", self.head_dim)
        if self.head_dim % 2 != 0:
            raise ValueError(tr("head_dim={head_dim} must be even: RoPE rotates pairs of dimensions",
                                head_dim=self.head_dim))
        if not self.rope_theta > 0:
            raise ValueError(tr("rope_theta must be > 0, got {value}", value=self.rope_theta))
        if not self.norm_eps > 0:
            raise ValueError(tr("norm_eps must be > 0, got {value}", value=self.norm_eps))
        if not 0 <= self.dropout < 1:
            raise ValueError(tr("dropout must be in [0, 1), got {value}", value=self.dropout))
        check_choice("arch", self.arch, ARCHS)

    @property
    def n_rep(self) -> int:
        """How many query heads share one K/V head (H // H_kv)."""
        return self.n_heads // self.n_kv_heads

    @property
    def attention_kind(self) -> str:
        """'MHA', 'GQA' or 'MQA', decided by H_kv."""
        if self.n_kv_heads == self.n_heads:
            return "MHA"
        return "MQA" if self.n_kv_heads == 1 else "GQA"

    @property
    def mlp_matrices(self) -> int:
        """Weight matrices of one MLP: 3 for SwiGLU (gate, up, down), 2 for GPT-2's GELU MLP."""
        return 2 if self.arch == "gpt2" else 3

    @property
    def n_params(self) -> int:
        """Number of parameters of a model with this shape (Llama-style, or GPT-2-style for arch="gpt2")."""
        C, H, H_kv, d_h, V = self.d_model, self.n_heads, self.n_kv_heads, self.head_dim, self.vocab_size
        attn = C * H * d_h + 2 * C * H_kv * d_h + H * d_h * C  # q, k, v, o projections
        mlp = self.mlp_matrices * C * self.d_ff  # gate, up, down (GPT-2: up, down)
        per_layer = attn + mlp + 2 * C  # + two RMSNorm weights
        embed = V * C
        head = 0 if self.tie_embeddings else V * C
        if self.arch == "gpt2":
            # every projection has a bias, and each LayerNorm a bias next to its weight
            per_layer += (H * d_h + 2 * H_kv * d_h) + C + self.d_ff + C + 2 * C
            return self.n_layers * per_layer + embed + head + self.max_seq_len * C + 2 * C  # + positions, final LN
        return self.n_layers * per_layer + embed + head + C  # + final norm
