"""Speculative decoding (utils/speculative.py): greedy equals the target alone; sampling keeps the target's
distribution; the caches are rolled back to the accepted tokens; bad input is a clear ValueError."""
import math

import pytest
import torch

from utils import Decoder, ModelConfig, generate
from utils.speculative import PromptLookup, speculative_generate


@pytest.fixture(scope="module")
def course():
    from utils.course_model import load_course_model

    return load_course_model()


@pytest.fixture(scope="module")
def small_draft(course):
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=course[0].cfg.vocab_size, n_layers=1, n_heads=2, n_kv_heads=1, d_model=32, d_ff=64,
                      max_seq_len=256)
    return Decoder(cfg).eval()


PROMPTS = ["<BOS> 他 喜欢 猫 。 她", "<BOS> she has two white cats . she", "<BOS> 我", "<BOS> we have three small",
           "<BOS>", "<BOS> 他们 有 两 匹 黑 马 。 他们 也"]


@pytest.mark.parametrize("draft_kind", ["itself", "small", "lookup"])
@pytest.mark.parametrize("k", [1, 2, 4, 7])
def test_greedy_speculative_decoding_gives_the_targets_own_greedy_tokens(course, small_draft, draft_kind, k):
    model, tok = course
    draft = {"itself": model, "small": small_draft, "lookup": PromptLookup()}[draft_kind]
    for text in PROMPTS:
        ids = torch.tensor([tok.encode(text)])
        res = speculative_generate(model, draft, ids, 25, k=k)
        assert torch.equal(res.tokens, generate(model, ids, 25).tokens[0]), text
        assert res.target_calls <= 1 + 25  # never more target passes than plain decoding
    if draft_kind == "itself":
        assert res.acceptance_rate == 1.0  # the target agrees with itself


def test_every_round_rolls_both_caches_back_to_the_accepted_tokens(course, small_draft):
    model, tok = course
    ids = torch.tensor([tok.encode(PROMPTS[1])])
    res = speculative_generate(model, small_draft, ids, 30, k=4)
    T = ids.shape[1]
    for r in res.rounds:
        T += len(r["added"])
        assert r["target_len"] == T - 1  # the target holds everything but the newest token
        assert r["draft_len"] <= T - 1
        assert len(r["added"]) == r["accepted"] + 1
    assert any(r["accepted"] < len(r["proposed"]) for r in res.rounds)  # some drafts were refused


def _chi2_critical(dof: int, z: float = 3.09) -> float:
    """The chi-square quantile at 1 - 0.001 (z = 3.09), by the Wilson-Hilferty approximation."""
    return dof * (1 - 2 / (9 * dof) + z * math.sqrt(2 / (9 * dof))) ** 3


@pytest.mark.parametrize("draft_kind", ["small", "lookup"])
def test_sampling_keeps_the_targets_distribution(course, small_draft, draft_kind):
    """2000 seeded runs: the first new token's counts against the target's own probabilities (temperature
    1), a chi-square goodness-of-fit test over the tokens expected at least 5 times, at the 0.1 % level."""
    model, tok = course
    draft = small_draft if draft_kind == "small" else PromptLookup()
    ids = torch.tensor([tok.encode("<BOS> 他 喜欢 猫 。 他 喜欢")])  # prompt lookup proposes "猫 。" here
    with torch.inference_mode():
        p = torch.softmax(model(ids)[0, -1].float(), dim=-1)  # (V,)
    N = 2000
    counts = torch.zeros_like(p)
    for seed in range(N):
        counts[speculative_generate(model, draft, ids, 1, k=3, temperature=1.0, seed=seed).tokens[0]] += 1
    expected = p * N
    keep = expected >= 5
    chi2 = float((((counts - expected) ** 2) / expected)[keep].sum())
    assert chi2 < _chi2_critical(int(keep.sum()) - 1), (chi2, int(keep.sum()))
    assert counts[~keep].sum() <= max(10, 3 * expected[~keep].sum())  # the rare tokens stay rare


def test_sampling_is_reproducible_with_a_seed(course, small_draft):
    model, tok = course
    ids = torch.tensor([tok.encode(PROMPTS[0])])
    a = speculative_generate(model, small_draft, ids, 20, k=3, temperature=0.8, top_k=10, seed=7)
    b = speculative_generate(model, small_draft, ids, 20, k=3, temperature=0.8, top_k=10, seed=7)
    assert torch.equal(a.tokens, b.tokens) and len(a.tokens) == 20


def test_prompt_lookup_proposes_what_followed_the_last_ngram():
    assert PromptLookup(2).propose([5, 6, 7, 8, 5, 6], 3) == [7, 8, 5]
    assert PromptLookup(2).propose([1, 2, 3], 3) == []
    assert PromptLookup(1).propose([4, 9, 4], 2) == [9, 4]


def test_bad_input_is_a_clear_value_error(course, small_draft):
    model, tok = course
    ids = torch.tensor([tok.encode(PROMPTS[0])])
    with pytest.raises(ValueError, match="k"):
        speculative_generate(model, small_draft, ids, 5, k=0)
    other = Decoder(ModelConfig(vocab_size=50, n_layers=1, n_heads=2, n_kv_heads=1, d_model=32, d_ff=64,
                                max_seq_len=64)).eval()
    with pytest.raises(ValueError, match="vocabulary"):
        speculative_generate(model, other, ids, 5)
    with pytest.raises(ValueError, match="one prompt"):
        speculative_generate(model, small_draft, ids.repeat(2, 1), 5)
    with pytest.raises(ValueError, match="temperature"):
        speculative_generate(model, small_draft, ids, 5, temperature=-1)
    with pytest.raises(ValueError, match="max_ngram"):
        PromptLookup(0)


def test_the_shipped_draft_model_is_small_and_learned_the_course_language(course):
    import json

    from safetensors import safe_open

    from utils.course_model import DRAFT_CONFIG, DRAFT_WEIGHTS_PATH, load_draft_model

    assert DRAFT_WEIGHTS_PATH.stat().st_size <= 2**20  # ships inside the package: at most 1 MB
    draft, _ = load_draft_model()
    assert draft.cfg == DRAFT_CONFIG and draft.cfg.vocab_size == course[0].cfg.vocab_size
    with safe_open(str(DRAFT_WEIGHTS_PATH), framework="pt") as f:
        history = json.loads(f.metadata()["history"])
    assert history["heldout_loss"][-1] < history["unigram_heldout_loss"] / 2  # far better than word counts
    ids = torch.tensor([course[1].encode(PROMPTS[0])])
    res = speculative_generate(course[0], draft, ids, 40, k=3)
    assert torch.equal(res.tokens, generate(course[0], ids, 40).tokens[0]) and res.acceptance_rate > 0.3


def test_without_the_rollback_the_rejected_drafts_corrupt_the_output_and_a_recompute_check_catches_it(course):
    """The bug-lab check: the target's greedy run is the reference; skipping the crop keeps rejected K/V."""
    from utils.course_model import load_draft_model

    model, tok = course
    ids = torch.tensor([tok.encode(PROMPTS[1])])
    reference = generate(model, ids, 30).tokens[0]
    good = speculative_generate(model, load_draft_model()[0], ids, 30, k=4)
    broken = speculative_generate(model, load_draft_model()[0], ids, 30, k=4, rollback=False)
    assert torch.equal(good.tokens, reference)
    assert not torch.equal(broken.tokens, reference)  # caught: the tokens drift from the target's own
    assert any(r["target_len"] > ids.shape[1] + sum(len(x["added"]) for x in broken.rounds[:i + 1]) - 1
               for i, r in enumerate(broken.rounds))  # the target's cache holds more than the accepted history
