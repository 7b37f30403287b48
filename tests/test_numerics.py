"""utils/numerics: ulps, the first differing op, the equal-shape recompute, batch invariance, greedy flips."""
import pytest
import torch

from utils import ModelConfig, load_course_model
from utils.generate import decode_step, prefill
from utils.numerics import (cached_and_recomputed, chunked_recompute, compositions, divergence, first_difference, greedy,
                            invariant_logits, keys_sum, logits_of, reorder_sums, settings_table, sum_in_orders,
                            trace_last_row, tree_sum, ulp_distance)
from utils.model import Decoder
from utils.recompute import TOL


@pytest.fixture(scope="module")
def course():
    torch.set_num_threads(1)
    return load_course_model()


def test_ulp_distance_counts_neighbouring_floats_in_every_dtype():
    one = torch.tensor([1.0])
    assert int(ulp_distance(one, torch.nextafter(one, torch.tensor([2.0])))) == 1
    assert int(ulp_distance(torch.tensor([-0.0]), torch.tensor([0.0]))) == 0
    assert int(ulp_distance(torch.tensor([-1e-45]), torch.tensor([1e-45]))) == 2  # across zero: -denormal, 0, +denormal
    for dtype in (torch.bfloat16, torch.float16):
        a = torch.tensor([1.0], dtype=dtype)
        assert int(ulp_distance(a, torch.nextafter(a, torch.tensor([2.0], dtype=dtype)))) == 1
    with pytest.raises(ValueError):
        ulp_distance(one, one.double())


def test_summing_in_other_orders_gives_other_float32_results():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4096, generator=g) * 10.0 ** torch.randint(-3, 4, (4096,), generator=g)
    sums = sum_in_orders(x)
    assert len({s.item() for s in sums.values()}) > 1
    assert all(abs(float(s) - float(x.double().sum())) < 1e-3 * float(x.abs().sum()) for s in sums.values())


def test_tree_and_keys_sums_are_the_sum_and_keys_sum_ignores_leading_zeros():
    x = torch.randn(3, 5, 37)
    assert torch.allclose(tree_sum(x), x.sum(-1), atol=1e-5)
    v = torch.randn(2, 3, 6, 4)  # (B, H, S, d)
    padded = torch.cat([torch.zeros(2, 3, 4, 4), v], dim=2)
    assert torch.equal(keys_sum(v), keys_sum(padded))


def test_first_difference_names_an_op_whose_inputs_were_equal(course):
    model, tok = course
    ids = torch.tensor([tok.encode("<BOS> he has three small dogs . they")])
    with torch.inference_mode():
        _, cache = prefill(model, ids[:, :-1])
        cached, a = trace_last_row(model, lambda: decode_step(model, ids[:, -1], cache))
        recomputed, b = trace_last_row(model, lambda: model(ids)[:, -1])
    diff = first_difference(a, b)
    assert (cached - recomputed).abs().max() <= TOL
    assert diff.name is None or diff.inputs_equal
    assert first_difference(a, a).name is None


def test_recompute_at_the_cached_runs_shapes_is_bit_for_bit_the_cached_run(course):
    model, tok = course
    ids = torch.tensor([tok.encode("<BOS> he has three small dogs . they")])
    cached, _ = cached_and_recomputed(model, ids)
    assert torch.equal(chunked_recompute(model, ids, [ids.shape[1] - 1, 1])[-1], cached)
    with pytest.raises(ValueError):
        chunked_recompute(model, ids, [2])


def test_batch_invariant_path_gives_a_prompt_the_same_bits_in_every_batch(course):
    model, tok = course
    prompt = tok.encode("<BOS> he has three")
    others = [tok.encode("<BOS> he has three small dogs . they")] + [tok.encode("<BOS> she has a")] * 6
    batches = compositions(prompt, others)
    alone = logits_of(model, *batches["alone"], "batch-invariant")
    for rows, index in batches.values():
        assert torch.equal(logits_of(model, rows, index, "batch-invariant"), alone)
    assert (alone - logits_of(model, *batches["alone"], "standard")).abs().max() <= TOL
    with pytest.raises(ValueError):
        invariant_logits(Decoder(model.cfg).to(torch.bfloat16), [prompt])


def test_reorder_sums_is_the_same_function_in_another_order(course):
    model, tok = course
    ids = torch.tensor([tok.encode("<BOS> he has three small dogs . they")])
    with torch.inference_mode():
        a, b = model(ids), reorder_sums(model)(ids)
    assert (a - b).abs().max() <= TOL


def test_divergence_finds_the_first_differing_token_and_its_gap():
    tokens_a = torch.tensor([[1, 2, 3], [4, 5, 6]])
    tokens_b = torch.tensor([[1, 2, 3], [4, 7, 6]])
    logits_a = torch.zeros(2, 3, 8)
    logits_a[1, 1, 5], logits_a[1, 1, 7] = 1.0, 0.9
    d = divergence(tokens_a, logits_a, tokens_b, logits_a.clone())
    assert (d.n_diverged, d.steps) == (1, [1])
    assert d.gaps[0] == pytest.approx(0.1)


def test_greedy_with_and_without_the_cache_agree_on_a_random_float32_model():
    torch.manual_seed(0)
    model = Decoder(ModelConfig(vocab_size=64, n_layers=2, n_heads=4, n_kv_heads=2, d_model=32, d_ff=64,
                                max_seq_len=64)).eval()
    rows = [[1, 2, 3], [4, 5]]
    (ta, la), (tb, lb) = greedy(model, rows, 5, cached=True), greedy(model, rows, 5, cached=False)
    assert divergence(ta, la, tb, lb).max_delta <= TOL


def test_settings_table_restores_threads_deterministic_mode_and_kernel(course):
    model, tok = course
    ids = torch.tensor([tok.encode("<BOS> he has three")])
    threads = torch.get_num_threads()
    rows = settings_table(model, ids)
    assert rows[0].baseline_equal and torch.get_num_threads() == threads
    assert not torch.are_deterministic_algorithms_enabled() and model.attn_impl == "sdpa"
