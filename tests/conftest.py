"""Shared fixtures: tiny seeded models in the three attention layouts the course teaches."""
import pytest
import torch

from utils import Decoder, ModelConfig

TINY = dict(vocab_size=101, n_layers=3, d_model=64, d_ff=128, max_seq_len=256)
LAYOUTS = {
    "MHA": dict(n_heads=4, n_kv_heads=4),
    "GQA": dict(n_heads=4, n_kv_heads=2),
    "MQA": dict(n_heads=4, n_kv_heads=1),
}


def tiny_model(kind: str = "GQA", seed: int = 0, **overrides) -> Decoder:
    torch.manual_seed(seed)
    cfg = ModelConfig(**{**TINY, **LAYOUTS[kind], **overrides})
    return Decoder(cfg).eval()


@pytest.fixture(params=list(LAYOUTS))
def any_layout_model(request) -> Decoder:
    return tiny_model(request.param)


@pytest.fixture
def gqa_model() -> Decoder:
    return tiny_model("GQA")
