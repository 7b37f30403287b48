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


def test_repeat_kv_copies_while_grouped_queries_and_sdpa_read_the_heads_in_place():
    """What notebook 01 says of the GQA copy: repeat_kv writes a new tensor n_rep times the stored one, and the
    decode step's grouped queries (model.py, T == 1) and SDPA's enable_gqa give the same output without it."""
    import torch.nn.functional as F

    from utils.attention import attention, repeat_kv

    g = torch.Generator().manual_seed(0)
    B, H, H_kv, S, d_h = 2, 8, 2, 5, 16
    q = torch.randn(B, H, 1, d_h, generator=g)  # one decode step
    k, v = torch.randn(B, H_kv, S, d_h, generator=g), torch.randn(B, H_kv, S, d_h, generator=g)
    k_rep = repeat_kv(k, H // H_kv)
    assert k_rep.untyped_storage().nbytes() == (H // H_kv) * k.untyped_storage().nbytes()
    assert k_rep.data_ptr() != k.data_ptr() and repeat_kv(k, 1) is k  # MHA: nothing copied
    reference = attention(q, k, v)  # (B, H, 1, d_h), through repeat_kv
    grouped = F.scaled_dot_product_attention(q.reshape(B, H_kv, H // H_kv, d_h), k, v)  # (B, H_kv, n_rep, d_h)
    torch.testing.assert_close(grouped.reshape(B, H, 1, d_h), reference, atol=1e-6, rtol=0)
    torch.testing.assert_close(F.scaled_dot_product_attention(q, k, v, enable_gqa=True), reference, atol=1e-6, rtol=0)
