"""utils.flops counts what torch really computes (FlopCounterMode), and what the cache saves."""
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from utils import KVCache, ModelConfig, decode_step, prefill
from utils.flops import (
    StepCost, attention_crossover, attention_flops_per_query, decode_step_cost, mlp_flops_per_token,
    prefill_flops, prefill_flops_per_token, projection_flops_per_token, savings_table, weight_bytes,
)
from utils.sizing import MODEL_PRESETS, cache_bytes_for

from conftest import LAYOUTS, tiny_model


def _counted(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


@pytest.mark.parametrize("kind", list(LAYOUTS))
@pytest.mark.parametrize("T", [1, 7, 30])
def test_cached_step_flops_equal_torch_count(kind, T):
    # The explicit attention is plain matmuls, which FlopCounterMode counts exactly.
    model = tiny_model(kind)
    model.set_attn_impl("explicit")
    ids = torch.randint(0, model.cfg.vocab_size, (1, T + 1), generator=torch.Generator().manual_seed(T))
    with torch.inference_mode():
        _, kv = prefill(model, ids[:, :T], cache=KVCache())
        counted = _counted(lambda: decode_step(model, ids[:, T], kv))
    assert counted == decode_step_cost(model.cfg, T).total_flops


@pytest.mark.parametrize("T", [1, 9, 40])
def test_uncached_step_flops_match_torch_count_up_to_what_our_decoder_wastes(T):
    # Our Decoder, without a cache, computes lm_head for all T + 1 rows and (explicit attention)
    # the full (T+1) x (T+1) score matrix; the count keeps only what the step needs.
    model = tiny_model("GQA")
    model.set_attn_impl("explicit")
    cfg, S = model.cfg, T + 1
    ids = torch.randint(0, cfg.vocab_size, (1, S), generator=torch.Generator().manual_seed(T))
    with torch.inference_mode():
        counted = _counted(lambda: model(ids))
    c = decode_step_cost(cfg, T, cached=False)
    extra_head = (S - 1) * 2 * cfg.d_model * cfg.vocab_size
    extra_attn = cfg.n_layers * attention_flops_per_query(cfg, S * S - S * (S + 1) // 2)
    assert counted == c.total_flops + extra_head + extra_attn


def test_parts_and_what_is_saved():
    cfg = ModelConfig(vocab_size=100, n_layers=3, n_heads=4, n_kv_heads=2, d_model=64, d_ff=160, max_seq_len=512)
    for T in (0, 1, 10, 300):
        c, n = decode_step_cost(cfg, T), decode_step_cost(cfg, T, cached=False)
        assert isinstance(c, StepCost) and c.cached and not n.cached
        # the cache removes the history's projections and MLPs ...
        assert n.flops["projections"] - c.flops["projections"] == T * cfg.n_layers * projection_flops_per_token(cfg)
        assert n.flops["mlp"] - c.flops["mlp"] == T * cfg.n_layers * mlp_flops_per_token(cfg)
        # ... but the new query still attends over all T + 1 keys, and the cache is read
        assert c.flops["attention"] == cfg.n_layers * attention_flops_per_query(cfg, T + 1)
        assert c.bytes["kv_read"] == cache_bytes_for(cfg, 1, T, "float32")
        assert c.bytes["kv_write"] == cache_bytes_for(cfg, 1, 1, "float32")
        assert n.bytes["kv_read"] == n.bytes["kv_write"] == 0
        assert c.flops["lm_head"] == n.flops["lm_head"] == 2 * cfg.d_model * cfg.vocab_size
    # the cached step still grows with T (attention and cache reads), the uncached one much faster
    a, b = decode_step_cost(cfg, 100), decode_step_cost(cfg, 200)
    assert b.total_flops > a.total_flops and b.bytes["kv_read"] == 2 * a.bytes["kv_read"]
    rows = savings_table(cfg, [1, 10, 100, 400])
    assert [r["T"] for r in rows] == [1, 10, 100, 400]
    assert all(r["saved_flops"] == r["flops_no_cache"] - r["flops_cached"] > 0 for r in rows)
    ratios = [r["flop_ratio"] for r in rows]
    assert ratios == sorted(ratios)



@pytest.mark.parametrize("T", [0, 1, 7, 300])
def test_the_cache_saves_the_old_queries_pairs_not_the_new_querys(T):
    # Notebook 03 counts the attention of a step without a cache as (T + 1)(T + 2) / 2 query-key pairs per
    # layer (query i over i + 1 keys). The cache saves the old queries' T(T + 1) / 2 of them; the new
    # query's T + 1 remain. (It once said all (T + 1)^2 / 2 pairs were saved.)
    cfg = ModelConfig(vocab_size=100, n_layers=3, n_heads=4, n_kv_heads=2, d_model=64, d_ff=160, max_seq_len=512)
    per_pair = attention_flops_per_query(cfg, 1)  # one query against one key, one layer
    cached, uncached = decode_step_cost(cfg, T), decode_step_cost(cfg, T, cached=False)
    L = cfg.n_layers
    assert uncached.flops["attention"] == L * per_pair * (T + 1) * (T + 2) // 2
    assert cached.flops["attention"] == L * per_pair * (T + 1)
    assert uncached.flops["attention"] - cached.flops["attention"] == L * per_pair * T * (T + 1) // 2

def test_batch_and_dtype_scaling():
    cfg = MODEL_PRESETS["Llama-3-8B"]
    one, four = decode_step_cost(cfg, 1000, dtype="bfloat16"), decode_step_cost(cfg, 1000, batch_size=4, dtype="bfloat16")
    assert four.total_flops == 4 * one.total_flops
    assert four.bytes["kv_read"] == 4 * one.bytes["kv_read"]
    assert four.bytes["weights"] - one.bytes["weights"] == 3 * cfg.d_model * 2  # 3 more embedding rows
    # an 8B model in bf16 reads about 15 GB of weights per step (embedding table aside)
    assert 14e9 < weight_bytes(cfg, "bfloat16") < 16.5e9
    assert decode_step_cost(cfg, 0).bytes["kv_read"] == 0


@pytest.mark.parametrize("bad", [-1, 1.5, True, "10", None])
def test_bad_input_raises_value_error(bad):
    cfg = MODEL_PRESETS["GPT-2 (124M)"]
    with pytest.raises(ValueError):
        decode_step_cost(cfg, bad)
    with pytest.raises(ValueError):
        decode_step_cost(cfg, 10, batch_size=bad if bad is not None else 0)
    with pytest.raises(ValueError):
        decode_step_cost("not a config", 10)


def test_decode_parts_split_a_step_into_weight_products_and_attention():
    """A pooled intensity hid that at B = 4,096 a step's matrix products are compute-bound while attention
    waits on memory (notebook 03's last deep dive): the parts add up to the step, the products do about
    B FLOPs per bfloat16 byte whatever T is, attention about H / H_kv whatever B is."""
    from utils.roofline import GPU_ROOFS, decode_parts, decode_point

    cfg = MODEL_PRESETS["Llama-3-8B"]
    for B, T in [(1, 0), (8, 1024), (4096, 1024), (64, 8192)]:
        parts, whole = decode_parts(cfg, B, T, "bfloat16"), decode_point(cfg, B, T, "bfloat16")
        assert sum(p["flops"] for p in parts.values()) == whole["flops"]
        assert sum(p["bytes"] for p in parts.values()) == whole["bytes"]
        assert 0.9 * B <= parts["matmul"]["intensity"] <= B
    for B in (1, 4096):
        assert decode_parts(cfg, B, 1024, "bfloat16")["attention"]["intensity"] == pytest.approx(
            cfg.n_heads / cfg.n_kv_heads, rel=0.01)
    big = decode_parts(cfg, 4096, 1024, "bfloat16")
    assert all(big["matmul"]["intensity"] > r.ridge > big["attention"]["intensity"] for r in GPU_ROOFS)
    assert all(decode_point(cfg, 4096, 1024, "bfloat16")["intensity"] < r.ridge for r in GPU_ROOFS)


def test_published_and_measured_roofs_cite_their_source_in_the_learners_language():
    """Before, notebook 03's Chinese twin printed the GPUs' datasheet sources in English."""
    from utils.i18n import set_language
    from utils.perf import measure_machine
    from utils.roofline import GPU_ROOFS

    cpu = measure_machine(matmul_n=128, n_bytes=2**21, repeats=2, fastest=True)
    assert cpu.peak_flops > 0 and cpu.bandwidth > 0
    try:
        set_language("zh")
        assert GPU_ROOFS[0].cited_source.startswith("NVIDIA A100 数据手册（")
        assert cpu.cited_source.startswith("实测（")
    finally:
        set_language("en")
    assert GPU_ROOFS[0].cited_source == GPU_ROOFS[0].source


@pytest.mark.parametrize("T", [1, 6, 25])
def test_prefill_flops_equal_torch_count_of_the_explicit_prefill(T):
    # The explicit attention computes the whole T x T square and the course's prefill computes the
    # LM head for all T rows: that is the count with masked_half_skipped=False.
    model = tiny_model("GQA")
    model.set_attn_impl("explicit")
    ids = torch.randint(0, model.cfg.vocab_size, (1, T), generator=torch.Generator().manual_seed(T))
    with torch.inference_mode():
        counted = _counted(lambda: prefill(model, ids, cache=KVCache()))
    assert counted == sum(prefill_flops(model.cfg, T, masked_half_skipped=False).values())
    assert prefill_flops_per_token(model.cfg, T, masked_half_skipped=False) == counted / T


def test_prefill_attention_skipping_the_masked_half_counts_the_triangle():
    cfg = MODEL_PRESETS["Llama-2-7B"]
    full = prefill_flops(cfg, 10, masked_half_skipped=False)
    half = prefill_flops(cfg, 10, masked_half_skipped=True)
    assert half["attention"] * 100 == full["attention"] * 55  # 10 x 11 / 2 pairs of 10 x 10
    assert {k: v for k, v in half.items() if k != "attention"} == {k: v for k, v in full.items() if k != "attention"}


@pytest.mark.parametrize("skipped", [False, True])
def test_attention_crossover_is_where_attention_reaches_projections_and_mlps(skipped):
    for cfg in (MODEL_PRESETS["Llama-2-7B"], ModelConfig(vocab_size=1000, n_layers=4, n_heads=8, n_kv_heads=2,
                                                         d_model=256, d_ff=688, max_seq_len=1024)):
        T = attention_crossover(cfg, masked_half_skipped=skipped)
        at = {n: prefill_flops(cfg, n, masked_half_skipped=skipped) for n in (T, T + 1)}
        rest = {n: f["projections"] + f["mlp"] for n, f in at.items()}
        assert at[T]["attention"] <= rest[T]  # not yet at T
        assert at[T + 1]["attention"] > rest[T + 1]  # past it one token later
