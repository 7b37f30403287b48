"""utils/validate.py: the engine's argument guards, each naming the bad value and what is allowed."""
import pytest
import torch

from conftest import tiny_model
from utils import KVCache, StaticKVCache, prefill
from utils.attention import RopeTables, apply_rope, rope_angles
from utils.model import check_rope
from utils.validate import check_choice, check_crop, check_ids, check_int, check_kv, check_reorder_index, eos_set, is_int


def test_bools_are_not_ints():
    assert is_int(3) and not is_int(True) and not is_int(3.0)
    with pytest.raises(ValueError, match=r"n_layers must be an int, got True \(bool\)"):
        check_int("n_layers", True)


@pytest.mark.parametrize("value, kwargs, needle", [
    (0, {}, "x must be >= 1, got 0"),
    (9, dict(maximum=8), "x must be <= 8, got 9"),
    ("3", {}, "x must be an int, got '3'"),
])
def test_check_int_names_the_value_and_the_bound(value, kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        check_int("x", value, **kwargs)


def test_check_choice_lists_the_choices():
    with pytest.raises(ValueError, match=r"cache_kind='paged'; choose one of \('dynamic', 'static'\)"):
        check_choice("cache_kind", "paged", ("dynamic", "static"))


@pytest.mark.parametrize("ids, needle", [
    ([[1, 2]], "a \\[B, T\\] tensor of token ids, got list"),
    (torch.zeros(1, 2), "dtype torch.float32"),
    (torch.zeros(1, 0, dtype=torch.long), "empty input"),
    (torch.tensor([[1, 50]]), "token id 50 is outside the vocabulary \\[0, 49\\]"),
])
def test_check_ids(ids, needle):
    with pytest.raises(ValueError, match=needle):
        check_ids(ids, 50)


def test_cache_guards():
    with pytest.raises(ValueError, match="k and v must both be"):
        check_kv(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3))
    with pytest.raises(ValueError, match="out of range for a batch of 2"):
        check_reorder_index(torch.tensor([0, 2]), 2)
    with pytest.raises(ValueError, match=r"crop length 5 must be an int in \[0, seq_len=4\]"):
        check_crop(5, 4)


def test_eos_set():
    assert eos_set(None) == set() and eos_set(2) == {2} and eos_set([2, 3]) == {2, 3}
    with pytest.raises(ValueError, match="eos_id"):
        eos_set([2.0])


def test_a_plain_sin_table_cannot_reach_the_layers():
    """The layers rotate with the rolled sin table; the plain one from rope_angles ran silently
    and gave wrong attention (a notebook once compared against it). Now it is refused."""
    model = tiny_model("GQA")
    T = 5
    h = torch.randn(1, T, model.cfg.d_model)
    attn = model.layers[0].self_attn
    with pytest.raises(ValueError, match="rope must be a RopeTables"):
        attn(h, (model.rope_cos[:T], model.rope_sin[:T]), None, None, 0, is_causal=True)
    with pytest.raises(ValueError, match="RopeTables"):
        check_rope((model.rope_cos[:T], model.rope_sin[:T]))
    # the two ways to build the tables agree, and match the readable apply_rope
    cos, sin = rope_angles(model.cfg.head_dim, T, model.cfg.rope_theta)
    built = RopeTables.from_angles(cos, sin)
    ours = model.rope_tables(slice(0, T), torch.float32)
    assert torch.equal(built.cos, ours.cos) and torch.equal(built.sin_rolled, ours.sin_rolled)
    x = torch.randn(1, 4, T, model.cfg.head_dim)
    from utils.attention import apply_rope_rolled
    torch.testing.assert_close(apply_rope_rolled(x, *ours), apply_rope(x, cos, sin), atol=1e-6, rtol=0)


def test_every_cache_answers_the_next_position_the_same_way():
    from utils.sliding import SlidingWindowKVCache

    model = tiny_model("MQA")
    ids = torch.tensor([[1, 2, 3, 4]])
    for cache in (KVCache(), StaticKVCache(model.cfg, 1, 16), SlidingWindowKVCache(8)):
        assert cache.seen_tokens() == 0
        prefill(model, ids, cache=cache)
        assert cache.seen_tokens() == 4


def test_a_tuple_or_a_string_passed_as_the_cache_is_named():
    from utils import decode_step

    model = tiny_model("GQA")
    logits_and_cache = prefill(model, torch.tensor([[1, 2, 3]]))
    with pytest.raises(ValueError, match="cache must be a KVCache or StaticKVCache.*got tuple.*unpack"):
        model(torch.tensor([[4]]), cache=logits_and_cache)
    with pytest.raises(ValueError, match="got tuple.*unpack"):
        decode_step(model, torch.tensor([4]), logits_and_cache)
    with pytest.raises(ValueError, match="got str.*cache_kind="):
        prefill(model, torch.tensor([[1, 2]]), cache="dynamic")


def test_cache_update_names_a_bad_layer():
    cache = KVCache()
    k = torch.zeros(1, 2, 1, 4)
    with pytest.raises(ValueError, match="layer must be an int in \\[0, 0\\].*got '0'"):
        cache.update("0", k, k)
    with pytest.raises(ValueError, match="got -1"):
        cache.update(-1, k, k)
