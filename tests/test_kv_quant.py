"""The quantized KV cache (utils/kv_quant.py): the bytes it stores, the error it makes, the tail it keeps exact."""
import pytest
import torch

from conftest import prompt_ids, tiny_model
from utils import KVCache, decode_step, prefill
from utils.kv_quant import QuantizedKVCache, dequantize, quantize


@pytest.mark.parametrize("bits", [8, 4])
@pytest.mark.parametrize("dim", [2, 3])
def test_a_value_comes_back_within_half_a_step_of_its_group(bits, dim):
    x = torch.randn(2, 3, 16, 8, generator=torch.Generator().manual_seed(0)) * 3  # (B, H_kv, T, d_h)
    codes, scale, lo = quantize(x, bits, dim)
    back = dequantize(codes, scale, lo, bits, torch.float32)
    assert back.shape == x.shape
    # the codes are computed against the stored float16 scale and minimum: half a stored step, plus float32 rounding
    assert ((back - x).abs() <= scale.float() / 2 + 2.0**-22 * x.abs().amax()).all()
    if bits == 4:
        assert codes.shape[-1] == x.shape[-1] // 2  # two codes per byte


@pytest.mark.parametrize("bits", [8, 4])
def test_the_worst_error_is_half_a_stored_step_even_far_from_zero(bits):
    # Regression: codes computed against the float32 minimum and scale, then stored in float16, came back up to
    # 1.3 half-steps off at 8 bits on groups far from zero. Against the stored numbers (rounded outward) it is 1.
    g = torch.Generator().manual_seed(1)
    x = torch.randn(8, 2, 16, 32, generator=g) + 40 * torch.randn(8, 1, 1, 1, generator=g)  # (B, H_kv, T, d_h)
    for dim in (2, 3):
        codes, scale, lo = quantize(x, bits, dim)
        back = dequantize(codes, scale, lo, bits, torch.float32)
        worst = float(((back - x).abs() / (scale.float() / 2)).max())
        assert worst <= 1.0 + 1e-3, worst  # float32 rounding of values near 40 is ~2e-6, a step ~1e-2 at 8 bits
        lo32 = x.amin(dim, keepdim=True)
        step = (x.amax(dim, keepdim=True) - lo32) / (2**bits - 1)  # the float32 range's step
        # outward: the stored step is at least that, and wider only by float16's rounding of the minimum and scale
        assert (scale.float() >= step).all() and (lo.float() <= lo32).all()
        assert (scale.float() <= (step + 2**-10 * lo32.abs() / (2**bits - 1)) * (1 + 2**-10)).all()
        assert codes.dtype == torch.uint8


def test_a_group_of_equal_values_comes_back_exact_up_to_float16():
    x = torch.full((2, 4), 1.2345)
    codes, scale, lo = quantize(x, 8, 1)
    assert (dequantize(codes, scale, lo, 8, torch.float32) - x).abs().max() <= 1e-6


def _kv(T, seed=0, B=1, H_kv=2, d_h=8):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(B, H_kv, T, d_h, generator=g), torch.randn(B, H_kv, T, d_h, generator=g)


@pytest.mark.parametrize("bits", [8, 4])
def test_nbytes_counts_codes_scales_minimums_and_the_exact_tail(bits):
    cache = QuantizedKVCache(bits=bits, key_group="channel", value_group="token", residual=4, group_size=8)
    k, v = _kv(21)
    cache.update(0, k, v)
    # 21 positions: two groups of 8 quantized (21 - 4 = 17 > 8 twice), 5 exact in the tail
    B, H, d = 1, 2, 8
    codes = 2 * (B * H * 16 * d * bits // 8)  # K and V codes
    key_stats = 2 * (B * H * 1 * d * 2) * 2  # per channel: scale and lo (float16) per group of 8, two groups
    value_stats = 2 * (B * H * 16 * 1 * 2)  # per token: scale and lo for 16 positions
    tail = 2 * B * H * 5 * d * 4  # float32
    assert cache.nbytes == codes + key_stats + value_stats + tail
    assert cache.seq_len == 21 and cache.tail_k[0].shape[2] == 5


def test_the_newest_positions_stay_exact_and_the_rest_is_close():
    cache = QuantizedKVCache(bits=8, residual=6, group_size=4)
    k, v = _kv(30)
    got_k, got_v = cache.update(0, k, v)
    assert torch.equal(got_k[:, :, -6:], k[:, :, -6:]) and torch.equal(got_v[:, :, -6:], v[:, :, -6:])
    assert (got_k - k).abs().max() < 0.05 and not torch.equal(got_k, k)


@pytest.mark.parametrize("bits, tol", [(8, 0.5), (4, 3.0)])
def test_decoding_with_a_quantized_cache_stays_near_the_exact_one(bits, tol):
    model = tiny_model("GQA")
    ids = prompt_ids(40)
    ref, q = KVCache(), QuantizedKVCache(bits=bits, residual=8, group_size=8)
    with torch.inference_mode():
        a, _ = prefill(model, ids, cache=ref)
        b, _ = prefill(model, ids, cache=q)
        for _ in range(10):
            t = a.argmax(-1)
            a, b = decode_step(model, t, ref), decode_step(model, t, q)
            assert (a - b).abs().max() < tol
    assert q.seq_len == ref.seq_len == 50 and q.nbytes < ref.nbytes


def test_crop_and_reorder_keep_the_cache_consistent():
    cache = QuantizedKVCache(bits=8, residual=2, group_size=4)
    k, v = _kv(14, B=3)
    full_k, _ = cache.update(0, k, v)
    cache.crop(9)  # inside the quantized part: whole chunks kept, the rest re-read as an exact tail
    assert cache.seq_len == 9
    torch.testing.assert_close(cache.layer_kv(0)[0], full_k[:, :, :9])
    cache.reorder(torch.tensor([2, 2, 0]))
    assert torch.equal(cache.layer_kv(0)[0][0], cache.layer_kv(0)[0][1])


@pytest.mark.parametrize("kwargs, match", [
    (dict(bits=3), "bits must be 4 or 8"),
    (dict(key_group="head"), "key_group"),
    (dict(value_group="row"), "value_group"),
    (dict(residual=-1), "residual"),
    (dict(group_size=0), "group_size"),
])
def test_bad_settings_are_clear_value_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        QuantizedKVCache(**kwargs)


def test_a_dtype_change_mid_generation_is_refused():
    cache = QuantizedKVCache()
    k, v = _kv(4)
    cache.update(0, k, v)
    with pytest.raises(ValueError, match="dtype"):
        cache.update(0, k.half(), v.half())
