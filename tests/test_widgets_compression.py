"""Panel of 13 (a smaller KV cache): every control position computes without error, the state's numbers are
the grid's and the formula's, the bytes formula equals what the caches store, and the exercises' reference
solutions agree with the package's caches."""
import itertools

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

from utils import load_course_model  # noqa: E402
from utils.cache_quality import held_out_docs  # noqa: E402
from utils.exercises.compression_exercises import evict_recent, quantize_group  # noqa: E402
from utils.kv_evict import EvictingKVCache  # noqa: E402
from utils.kv_quant import QuantizedKVCache, quantize  # noqa: E402
from utils.sizing import MODEL_PRESETS, kv_cache_bytes  # noqa: E402
from utils.widgets import CacheCompressionPanel  # noqa: E402
from utils.widgets.compression import (BITS, BUDGETS, GROUP_SIZE, GROUPINGS, RESIDUALS, RULES, SIZING_MODEL,  # noqa: E402
                                       SIZING_T, all_settings, cache_bytes, cache_ratio, make_cache, quality_grid,
                                       quantized_kv_bytes, setting_key)

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)

N_TEST_DOCS = 5  # the notebook measures more; the panel's logic is the same


@pytest.fixture(scope="module")
def course():
    return load_course_model()


@pytest.fixture(scope="module")
def panel(course):
    model, tok = course
    return CacheCompressionPanel(model, tok, n_docs=N_TEST_DOCS)


def _ok(panel):
    assert "error" not in panel.state, panel.state.get("error")
    assert panel.html.value


def test_every_setting_computes_and_is_the_grid_s(panel, course):
    model, _ = course
    lengths = [d.shape[1] for d in panel.docs]
    for bits, k, v, r, rule, n, measure in itertools.product(BITS, GROUPINGS, GROUPINGS, RESIDUALS, RULES, BUDGETS,
                                                             ("loss", "match", "max_diff")):
        s = panel.compute(bits=bits, key_group=k, value_group=v, residual=r, rule=rule, budget=n, measure=measure)
        key = setting_key(bits, k, v, r, rule, n)
        assert s["key"] == key
        assert (key is None) == (bits != 16 and rule != "none")
        if key is not None:
            assert s["quality"] is panel.grid[key]
            assert s["ratio"] == pytest.approx(cache_ratio(model.cfg, key, lengths))
            assert 0 < s["ratio"] <= 1.0 and (s["ratio"] == 1.0) == (key == ("exact",))
        assert [p[0] for p in s["points"]] == list(panel.grid)
        html = panel.render(s)
        assert ("not measured" in html) == (key is None)


def test_each_control_moves_without_error_and_draws(panel):
    for name, w in panel.controls.items():
        start = w.value
        for option in [o[1] if isinstance(o, tuple) else o for o in w.options]:
            w.value = option
            _ok(panel)
            assert panel.fig is not None
        w.value = start
    panel.controls["bits"].value, panel.controls["rule"].value = 8, "attention"
    _ok(panel)
    assert panel.state["key"] is None and "not measured" in panel.html.value and panel.fig is not None
    panel.controls["bits"].value, panel.controls["rule"].value = 4, "none"


def test_the_grid_holds_every_setting_and_the_exact_cache_changes_nothing(panel, course):
    model, _ = course
    assert list(panel.grid) == all_settings()
    exact = panel.grid[("exact",)]
    assert exact.max_logit_diff == 0.0 and exact.greedy_match == 1.0 and exact.loss_cache == exact.loss_exact
    last = panel.docs[-1].shape[1] - 1
    for key, q in panel.grid.items():
        assert q.loss_exact == exact.loss_exact  # the same documents in every run
        assert q.nbytes == cache_bytes(model.cfg, key, last)  # the formula == what the last document's cache stored
        if key[0] != "exact":
            assert q.max_logit_diff > 0  # lossy: never the exact logits


def test_the_sizing_part_is_notebook_04_s_formula_with_bits(panel):
    s = panel.compute(bits=4, key_group="channel", value_group="token", residual=2, rule="none", budget=6,
                      measure="loss")
    real = MODEL_PRESETS[SIZING_MODEL]
    fp16 = kv_cache_bytes(real.n_layers, 1, real.n_kv_heads, SIZING_T, real.head_dim, "float16")
    size = s["sizing"]
    assert size[16]["total"] == fp16 and size[16]["scales"] == 0
    assert size[4]["total"] < size[8]["total"] < fp16
    for b in (8, 4):
        assert size[b]["total"] == size[b]["codes"] + size[b]["scales"] + size[b]["tail"]
    assert "float16, no quantization" in panel.render(panel.compute(bits=16, key_group="channel", value_group="token",
                                                                    residual=2, rule="none", budget=6, measure="loss"))


def _feed(cache, n_layers, T, T0, H_kv=2, d_h=8, seed=0):
    """``T0`` positions at once, then one at a time up to ``T``, into every layer (random K/V)."""
    g = torch.Generator().manual_seed(seed)
    done = 0
    for step in [T0] + [1] * (T - T0):
        for layer in range(n_layers):
            cache.update(layer, torch.randn(1, H_kv, step, d_h, generator=g), torch.randn(1, H_kv, step, d_h, generator=g))
        done += step
    return cache


@pytest.mark.parametrize("bits", [8, 4])
@pytest.mark.parametrize("key_group, value_group", list(itertools.product(GROUPINGS, GROUPINGS)))
@pytest.mark.parametrize("residual, group_size", [(0, 4), (2, 4), (3, 5), (8, 2)])
def test_quantized_kv_bytes_is_what_the_cache_stores(bits, key_group, value_group, residual, group_size):
    for T, T0 in [(1, 1), (4, 4), (9, 3), (17, 1), (30, 12)]:
        cache = _feed(QuantizedKVCache(bits, key_group, value_group, residual, group_size), 3, T, T0)
        formula = quantized_kv_bytes(3, 1, 2, T, 8, bits, key_group, value_group, group_size, residual, "float32")
        assert formula["total"] == cache.nbytes, (T, T0)
        assert formula["quantized"] == sum(n for *_, n in cache.chunks[0]["k"])


@pytest.mark.parametrize("key", all_settings())
def test_cache_bytes_of_every_setting_is_what_its_cache_stores(key, course):
    model, _ = course
    cfg = model.cfg
    for T in (3, 7, 14):
        cache = _feed(make_cache(key), cfg.n_layers, T, min(T, 4), cfg.n_kv_heads, cfg.head_dim)
        assert cache_bytes(cfg, key, T) == cache.nbytes, T


def test_quality_grid_runs_a_subset_and_builds_the_exact_entry(course):
    model, tok = course
    docs = held_out_docs(tok, 2, 12)
    grid = quality_grid(model, docs, [("quant", 8, "channel", "token", 2), ("evict", "recent", BUDGETS[0])])
    assert set(grid) == {("quant", 8, "channel", "token", 2), ("evict", "recent", BUDGETS[0]), ("exact",)}
    assert grid[("exact",)].nbytes == grid[("exact",)].nbytes_exact
    assert GROUP_SIZE >= 2


def test_the_panel_needs_a_tokenizer_or_documents(course):
    model, _ = course
    with pytest.raises(ValueError, match="tokenizer"):
        CacheCompressionPanel(model)


# --- the exercises' reference solutions agree with the package ---------------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_quantize_group_matches_the_package_codes(seed):
    x = torch.randn(32, generator=torch.Generator().manual_seed(seed)) * (seed + 1)
    codes, scale, lo = quantize_group(x, 8)
    packed, scale16, lo16 = quantize(x, 8, dim=0)
    # the package computes its codes against the float16 scale and minimum it stores: a code may differ by one
    assert (codes - packed.long()).abs().max() <= 1
    assert torch.equal(packed.long(), torch.round((x - lo16.float()) / scale16.float()).long())
    assert scale == pytest.approx(float(scale16), rel=1e-3) and lo == pytest.approx(float(lo16), rel=1e-3)
    assert ((lo + codes * scale - x).abs() <= scale / 2 + 1e-6).all()


@pytest.mark.parametrize("n_seen, budget, sinks", [(3, 8, 1), (8, 8, 1), (9, 8, 1), (20, 8, 4), (20, 6, 0),
                                                   (31, 10, 2)])
def test_evict_recent_matches_the_evicting_cache(n_seen, budget, sinks):
    cache = EvictingKVCache(budget, "recent", sinks=sinks, window=1)
    _feed(cache, 2, n_seen, 1)
    kept, position = evict_recent(n_seen, budget, sinks)
    assert cache.positions[0][0].tolist() == kept and cache.seen_tokens() == position
