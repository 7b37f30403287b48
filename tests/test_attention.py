"""The model's fast forms of RoPE and RMSNorm must equal the readable ones they replace."""
import pytest
import torch

from utils.attention import apply_rope, apply_rope_rolled, rolled_sin, rope_angles
from utils.model import RMSNorm


@pytest.mark.parametrize("shape", [(2, 4, 7, 16), (1, 2, 3, 1, 32)], ids=["[B,H,T,d_h]", "grouped"])
def test_rolled_rope_equals_rotate_half_rope(shape):
    d_h, T = shape[-1], shape[-2]
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    cos, sin = rope_angles(d_h, 64)
    pos = torch.arange(20, 20 + T)
    slow = apply_rope(x, cos[pos], sin[pos])
    fast = apply_rope_rolled(x, cos[pos], rolled_sin(sin)[pos])
    torch.testing.assert_close(fast, slow, atol=1e-6, rtol=0)


def test_rolled_sin_negates_the_first_half_only():
    _, sin = rope_angles(8, 5)
    r = rolled_sin(sin)
    assert torch.equal(r[:, :4], -sin[:, :4]) and torch.equal(r[:, 4:], sin[:, 4:])


def test_rmsnorm_equals_its_formula():
    norm = RMSNorm(16, eps=1e-5)
    with torch.no_grad():
        norm.weight.copy_(torch.linspace(0.5, 1.5, 16))
    x = torch.randn(3, 5, 16, generator=torch.Generator().manual_seed(1))
    formula = norm.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)
    torch.testing.assert_close(norm(x), formula, atol=1e-6, rtol=0)


def test_rmsnorm_does_not_overflow_in_float16():
    """The mean of squares of 1000s overflows float16 (max 65504); the norm must not."""
    norm = RMSNorm(8, eps=1e-5).half()
    x = torch.full((1, 8), 1000.0, dtype=torch.float16)
    out = norm(x)
    assert out.dtype == torch.float16 and torch.isfinite(out).all()
    torch.testing.assert_close(out.float(), torch.ones(1, 8), atol=1e-3, rtol=0)
