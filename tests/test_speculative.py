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
        # 2 new tokens: the first is then drafted (a run of 1 drafts nothing: its only token is the target's own)
        counts[speculative_generate(model, draft, ids, 2, k=3, temperature=1.0, seed=seed).tokens[0]] += 1
    expected = p * N
    keep = expected >= 5
    chi2 = float((((counts - expected) ** 2) / expected)[keep].sum())
    assert chi2 < _chi2_critical(int(keep.sum()) - 1), (chi2, int(keep.sum()))
    assert counts[~keep].sum() <= max(10, 3 * expected[~keep].sum())  # the rare tokens stay rare


def _chi2_pooled(counts: dict, expected: dict) -> tuple[float, int]:
    """Pearson's statistic over the outcomes expected at least 5 times, the rarer ones pooled into one more
    bin (into the smallest bin when even the pool is expected fewer than 5 times): (statistic, bins)."""
    big = [o for o in expected if expected[o] >= 5]
    obs, exp = [counts.get(o, 0) for o in big], [expected[o] for o in big]
    rest_obs = sum(c for o, c in counts.items() if o not in big)
    rest_exp = sum(e for o, e in expected.items() if o not in big)
    if rest_exp >= 5:
        obs, exp = obs + [rest_obs], exp + [rest_exp]
    elif rest_exp > 0 or rest_obs:
        i = exp.index(min(exp))
        obs[i], exp[i] = obs[i] + rest_obs, exp[i] + rest_exp
    return sum((o - e) ** 2 / e for o, e in zip(obs, exp)), len(obs)


def _sequence_probs(model, ids, n: int, **sampling) -> dict:
    """The exact probability of every n-token continuation of ``ids`` under the target's own sampling
    distribution (temperature, top-k, top-p), enumerated over the filtered support of each step."""
    from utils.sampling import filtered_probs

    out = {(): 1.0}
    for _ in range(n):
        nxt = {}
        for seq, prob in out.items():
            with torch.inference_mode():
                p = filtered_probs(model(torch.cat([ids, torch.tensor([list(seq)], dtype=torch.long)], 1))[:, -1],
                                   **sampling)[0].double()  # (V,)
            for t in torch.nonzero(p).flatten().tolist():
                nxt[seq + (t,)] = prob * float(p[t])
        out = nxt
    return out


def test_sampling_keeps_the_targets_distribution_past_the_first_token_with_top_k_and_top_p(course):
    """Tokens 1-3 together, so tokens 2 and 3 are tested too, among them the bonus token after two accepted
    drafts: 2000 seeded runs of 3 new tokens (k = 2: the first round drafts 2 and, when both pass, adds the
    bonus as token 3), temperature 1 with top-k 4 and top-p 0.9 on both models. A chi-square goodness-of-fit
    test of the 3-token sequences against their exact probabilities under the target alone, at the 0.1 %
    level (a right sampler fails it with probability about 0.001; the seeds make the outcome fixed). The test
    has power: the same counts against the draft's own 3-token distribution are rejected."""
    from utils.course_model import load_draft_model

    model, tok = course
    draft = load_draft_model()[0]
    sampling = {"temperature": 1.0, "top_k": 4, "top_p": 0.9}
    ids = torch.tensor([tok.encode("<BOS> she has two white cats . she")])  # (1, T)
    probs = _sequence_probs(model, ids, 3, **sampling)
    assert abs(sum(probs.values()) - 1) < 1e-6
    N, counts, bonus_third = 2000, {}, 0
    for seed in range(N):
        res = speculative_generate(model, draft, ids, 3, k=2, seed=seed, **sampling)
        seq = tuple(res.tokens.tolist())
        counts[seq] = counts.get(seq, 0) + 1
        first = res.rounds[0]
        bonus_third += len(first["proposed"]) == 2 and first["accepted"] == 2  # token 3 is the first round's bonus
    assert set(counts) <= set(probs), "a sequence the target's filtered distribution never writes"
    assert bonus_third >= N // 10, bonus_third  # the bonus token is well represented among the draws
    chi2, bins = _chi2_pooled(counts, {s: p * N for s, p in probs.items()})
    assert chi2 < _chi2_critical(bins - 1), (chi2, bins)
    q_chi2, q_bins = _chi2_pooled(counts, {s: q * N for s, q in _sequence_probs(draft, ids, 3, **sampling).items()})
    assert q_chi2 > _chi2_critical(q_bins - 1), (q_chi2, q_bins)  # the draft's own distribution is told apart


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


@pytest.mark.parametrize("k", [1, 3, 4])
def test_a_run_writes_exactly_the_tokens_asked_and_never_computes_a_bonus_past_the_end(course, small_draft, k):
    """Regression: the last round drafted as many tokens as were left, so when all passed its bonus fell one
    past max_new_tokens and was computed only to be cut off (12 asked, the rounds reported 13). Now it drafts
    one fewer than the tokens left: the rounds add up to exactly the tokens asked."""
    model, tok = course
    ids = torch.tensor([tok.encode(PROMPTS[1])])
    for n_new in (1, 2, 5, 12):
        res = speculative_generate(model, model, ids, n_new, k=k)  # the target as draft: every draft passes
        assert sum(len(r["added"]) for r in res.rounds) == n_new == len(res.tokens)
        left = n_new - sum(len(r["added"]) for r in res.rounds[:-1])
        assert len(res.rounds[-1]["proposed"]) == min(k, left - 1)


def test_single_token_passes_run_the_flat_step_and_give_the_same_tokens_as_the_modules(course, small_draft, monkeypatch):
    """The draft's steps and a target pass with nothing to check run generate's flat decode step; a verify pass
    over several tokens runs the modules. step="modules" runs everything through the modules, hooks included."""
    import utils.speculative as spec

    model, tok = course
    ids = torch.tensor([tok.encode(PROMPTS[0])])
    calls = []
    real = spec.flat_decode_step
    monkeypatch.setattr(spec, "flat_decode_step", lambda m, w, t, c: calls.append(m) or real(m, w, t, c))
    flat = speculative_generate(model, small_draft, ids, 20, k=3)
    assert small_draft in calls  # the draft's steps
    assert model not in calls or any(not r["proposed"] for r in flat.rounds)  # the target only when nothing was proposed
    calls.clear()
    modules = speculative_generate(model, small_draft, ids, 20, k=3, step="modules")
    assert not calls and torch.equal(flat.tokens, modules.tokens)
    calls.clear()
    look = speculative_generate(model, PromptLookup(), ids, 20, k=3)
    assert calls.count(model) == sum(1 for r in look.rounds if not r["proposed"])  # one flat step each
    handle = model.layers[0].register_forward_hook(lambda *a: None)
    try:
        with pytest.raises(ValueError, match="modules"):
            speculative_generate(model, small_draft, ids, 5)  # a hook would be skipped by the flat step: say so
        speculative_generate(model, small_draft, ids, 5, step="modules")
    finally:
        handle.remove()


def test_weight_bound_target_computes_the_models_logits_with_wider_mlps(course):
    from utils.recompute import TOL
    from utils.speculative import weight_bound_target

    model, tok = course
    big = weight_bound_target(model, 4 * model.cfg.d_ff)
    assert big.cfg.d_ff == 4 * model.cfg.d_ff
    assert sum(p.numel() for p in big.parameters()) > 2 * sum(p.numel() for p in model.parameters())
    ids = torch.tensor([tok.encode(PROMPTS[1])])
    with torch.inference_mode():
        assert float((big(ids) - model(ids)).abs().max()) <= TOL
    assert torch.equal(speculative_generate(big, model, ids, 10, k=3).tokens, generate(model, ids, 10).tokens[0])
    with pytest.raises(ValueError, match="d_ff"):
        weight_bound_target(model, model.cfg.d_ff - 1)
