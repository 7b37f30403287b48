"""Cached decoding must give the logits of a full recompute (utils/recompute.py), for every layout and both caches."""
import pytest
import torch

from conftest import tiny_model
from utils import compare_with_recompute, generate

TOL = 1e-5  # fp32: different summation order, so rounding-level differences only


@pytest.mark.parametrize("cache", ["dynamic", "static"])
def test_cached_decode_matches_recompute_for_32_steps(any_layout_model, cache):
    ids = torch.randint(0, 101, (2, 11), generator=torch.Generator().manual_seed(1))
    report = compare_with_recompute(any_layout_model, ids, 32, cache_kind=cache, tol=TOL)
    assert report.ok, report.verdict
    assert len(report.max_diffs) == 33
    assert report.positions[0] == 10 and report.positions[-1] == 42


def test_explicit_attention_matches_sdpa(gqa_model):
    ids = torch.randint(0, 101, (2, 13), generator=torch.Generator().manual_seed(2))
    with torch.inference_mode():
        fast = gqa_model(ids)
        gqa_model.set_attn_impl("explicit")
        slow = gqa_model(ids)
    torch.testing.assert_close(fast, slow, atol=1e-5, rtol=0)
    assert compare_with_recompute(gqa_model, ids, 8, step="modules").ok  # the flat step runs SDPA only


@pytest.mark.parametrize("kind", ["MHA", "GQA", "MQA"])
def test_generate_with_and_without_cache_gives_the_same_tokens(kind):
    model = tiny_model(kind)
    ids = torch.randint(0, 101, (2, 5), generator=torch.Generator().manual_seed(4))
    runs = [generate(model, ids, 24, use_cache=u, cache_kind=c) for u, c in
            [(True, "dynamic"), (True, "static"), (False, "dynamic")]]
    for r in runs[1:]:
        assert torch.equal(r.tokens, runs[0].tokens)
