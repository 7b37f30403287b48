"""Sampling: pure functions of the logits."""
import warnings

import pytest
import torch

from utils import sample
from utils.sampling import filtered_probs

LOGITS = torch.tensor([[2.0, 1.0, 0.5, 0.1, -1.0, -3.0]])


def test_temperature_zero_is_greedy():
    logits = torch.randn(5, 50, generator=torch.Generator().manual_seed(0))
    assert torch.equal(sample(logits, temperature=0), logits.argmax(-1))


def test_tiny_temperature_approaches_greedy():
    logits = torch.randn(4, 30, generator=torch.Generator().manual_seed(1))
    g = torch.Generator().manual_seed(2)
    assert torch.equal(sample(logits, temperature=1e-4, generator=g), logits.argmax(-1))


def test_top_k_keeps_exactly_k_tokens():
    for k in (1, 2, 4, 6, 100):
        probs = filtered_probs(LOGITS, 1.0, top_k=k)
        assert int((probs > 0).sum()) == min(k, 6)
        assert torch.isclose(probs.sum(), torch.tensor(1.0))


def test_top_p_keeps_the_smallest_set_reaching_p():
    p_full = torch.softmax(LOGITS, -1)[0]
    cum = p_full.cumsum(0)
    for p in (0.1, 0.5, 0.8, 0.95, 1.0):
        kept = int((filtered_probs(LOGITS, 1.0, top_p=p) > 0).sum())
        expected = int((cum < p).sum()) + 1 if p < 1 else 6
        assert kept == min(expected, 6), p
        assert cum[kept - 1] >= p - 1e-6 or kept == 6  # the kept set reaches p...
        if kept > 1:
            assert cum[kept - 2] < p  # ...and one token fewer would not


def test_top_p_filter_at_p_1_keeps_every_token_of_a_long_tail():
    """Regression: the float32 running total reached 1.0 before the tail, and p = 1 dropped tokens
    (62 of 64 kept after the course model's <BOS>, 46,886 of 50,000 for random logits)."""
    from utils.sampling import top_p_filter

    tail = -0.5 * torch.arange(64.0)[None]  # geometric probabilities: the float32 cumsum hits 1.0 near token 33
    probs = torch.softmax(tail, -1)
    assert float((probs.cumsum(-1) - probs)[0, -1]) >= 1.0  # the trap is there
    assert bool(torch.isfinite(top_p_filter(tail, 1.0)).all())
    wide = torch.randn(1, 50_000, generator=torch.Generator().manual_seed(0)) * 3
    assert bool(torch.isfinite(top_p_filter(wide, 1.0)).all())
    assert torch.equal(top_p_filter(tail, 1.0), tail) and top_p_filter(tail, 1.0) is not tail  # a copy, unchanged


def test_seeded_runs_repeat_and_different_seeds_differ():
    logits = torch.zeros(1, 1000)
    draw = lambda s: [int(sample(logits, 1.0, generator=torch.Generator().manual_seed(s))) for _ in range(1)]
    a = [int(sample(logits, generator=g)) for g in [torch.Generator().manual_seed(3)] for _ in range(20)]
    g = torch.Generator().manual_seed(3)
    b = [int(sample(logits, generator=g)) for _ in range(20)]
    assert a == b
    assert draw(3) == draw(3)
    g2 = torch.Generator().manual_seed(4)
    assert [int(sample(logits, generator=g2)) for _ in range(20)] != a


def test_samples_only_from_the_kept_set():
    g = torch.Generator().manual_seed(5)
    picks = {int(sample(LOGITS, 1.5, top_k=3, generator=g)) for _ in range(200)}
    assert picks <= {0, 1, 2} and len(picks) == 3


def test_probabilities_passed_as_logits_get_a_warning_naming_the_mistake():
    probs = torch.softmax(torch.randn(2, 50, generator=torch.Generator().manual_seed(0)), -1)
    with pytest.warns(UserWarning, match="look like probabilities"):
        sample(probs, generator=torch.Generator().manual_seed(0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sample(torch.log(probs), generator=torch.Generator().manual_seed(0))  # logits: no warning
        sample(probs, temperature=0)  # greedy: the argmax is the same, nothing to warn about
