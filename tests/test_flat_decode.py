"""The flat decode step (utils/flat_decode.py) must compute bit for bit what the modules compute,
and must refuse, with a ValueError that says step="modules", whenever it would not (hooks,
training mode, other caches or classes): it never switches paths behind the caller's back."""
import pytest
import torch

from conftest import tiny_model
from utils import KVCache, StaticKVCache, decode_step, decode_stepper, generate, prefill
from utils import split_matvec
from utils.flat_decode import check_flat, flat_weights
from utils.generate import left_pad
from utils.sliding import SlidingWindowKVCache
from utils.weight_layout import LAYOUTS, set_weight_layout


def flat_ok(model, cache) -> bool:
    try:
        check_flat(model, cache)
    except ValueError as e:
        assert 'step="modules"' in str(e)
        return False
    return True


class OwnUpdateCache(KVCache):
    def update(self, layer, k, v):
        return super().update(layer, k, v)


def _caches(model, B, kind):
    if kind == "dynamic":
        return KVCache(), KVCache()
    return (StaticKVCache(model.cfg, B, 48), StaticKVCache(model.cfg, B, 48))


@pytest.mark.parametrize("weights", LAYOUTS)  # how the weights sit in memory (utils/weight_layout.py)
@pytest.mark.parametrize("kind", ["dynamic", "static"])
@pytest.mark.parametrize("padded", [False, True], ids=["no-padding", "left-padded"])
def test_flat_step_equals_module_step_bit_for_bit(any_layout_model, kind, padded, weights):
    model = set_weight_layout(any_layout_model, weights)
    if padded:
        ids, mask = left_pad([[5, 6, 7, 8, 9, 10], [11, 12], [13, 14, 15]])
    else:
        ids, mask = torch.randint(0, 101, (3, 6), generator=torch.Generator().manual_seed(0)), None
    mod_kv, flat_kv = _caches(model, 3, kind)
    logits, _ = prefill(model, ids, mask, mod_kv)
    prefill(model, ids, mask, flat_kv)
    step = decode_stepper(model, flat_kv)
    assert flat_ok(model, flat_kv)
    for _ in range(12):
        tok = logits.argmax(-1)
        logits, flat = decode_step(model, tok, mod_kv), step(tok)
        assert torch.equal(logits, flat)
    for layer in range(model.cfg.n_layers):
        for a, b in zip(mod_kv.layer_kv(layer), flat_kv.layer_kv(layer)):
            assert torch.equal(a, b)
    assert (mod_kv.mask is None) == (flat_kv.mask is None)
    if padded:
        assert torch.equal(mod_kv.mask, flat_kv.mask)


@pytest.fixture
def two_threads(monkeypatch):
    # make test runs one torch thread, where the batch-1 split (utils/split_matvec.py) is off: turn it on,
    # for the tiny model's matrices too
    monkeypatch.setattr(split_matvec, "MIN_BYTES", 0)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("weights", LAYOUTS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_flat_step_at_batch_1_on_two_cores_equals_module_step_bit_for_bit(two_threads, dtype, weights):
    model = set_weight_layout(tiny_model("GQA"), weights).to(dtype)
    ids = torch.randint(0, 101, (1, 7), generator=torch.Generator().manual_seed(3))
    a, b = (StaticKVCache(model.cfg, 1, 30, dtype=dtype) for _ in range(2))
    logits, _ = prefill(model, ids, cache=a)
    prefill(model, ids, cache=b)
    step = decode_stepper(model, b)
    assert flat_weights(model).layers[0].q.blocks is not None  # the split is on: each core streams a block
    for _ in range(10):
        tok = logits.argmax(-1)
        logits, flat = decode_step(model, tok, a), step(tok)
        assert torch.equal(logits, flat)


def test_flat_step_in_bfloat16_equals_module_step():
    model = tiny_model("GQA").to(torch.bfloat16)
    ids = torch.randint(0, 101, (2, 5), generator=torch.Generator().manual_seed(1))
    a, b = StaticKVCache(model.cfg, 2, 20, dtype=torch.bfloat16), StaticKVCache(model.cfg, 2, 20, dtype=torch.bfloat16)
    logits, _ = prefill(model, ids, cache=a)
    prefill(model, ids, cache=b)
    step = decode_stepper(model, b)
    for _ in range(6):
        tok = logits.argmax(-1)
        logits, flat = decode_step(model, tok, a), step(tok)
        assert flat.dtype == torch.bfloat16 and torch.equal(logits, flat)


def test_generate_gives_the_same_tokens_with_either_step(gqa_model):
    ids = torch.randint(0, 101, (2, 9), generator=torch.Generator().manual_seed(2))
    flat = generate(gqa_model, ids, 30, cache_kind="static")
    modules = generate(gqa_model, ids, 30, cache_kind="static", step="modules")
    assert torch.equal(flat.tokens, modules.tokens)


def test_a_hook_on_a_layer_fires_on_every_step_or_generate_refuses(gqa_model):
    """Both branches: step="modules" runs the hooked block at every step; step="flat" (the
    default) cannot run the hook, so it raises a ValueError before any work, never skips it."""
    ids = torch.randint(0, 101, (2, 9), generator=torch.Generator().manual_seed(2))
    expected = generate(gqa_model, ids, 30, cache_kind="static").tokens
    calls = []
    hook = gqa_model.layers[0].register_forward_hook(lambda *a: calls.append(1))
    try:
        with pytest.raises(ValueError, match=r"module 'layers\.0' has a forward hook.*step=\"modules\""):
            generate(gqa_model, ids, 30, cache_kind="static")
        assert calls == []  # refused before the prefill ran
        modules = generate(gqa_model, ids, 30, cache_kind="static", step="modules")
    finally:
        hook.remove()
    assert torch.equal(expected, modules.tokens)
    assert len(calls) == 30  # the prefill and 29 decode steps all ran through the hooked block


def test_a_registered_hook_always_fires(gqa_model):
    kv = KVCache()
    logits, _ = prefill(gqa_model, torch.tensor([[1, 2, 3]]), cache=kv)
    seen = []
    hook = gqa_model.layers[1].mlp.up_proj.register_forward_hook(lambda mod, args, out: seen.append(out.shape))
    try:
        assert not flat_ok(gqa_model, kv)
        with pytest.raises(ValueError, match="forward hook"):
            decode_stepper(gqa_model, kv)
        decode_stepper(gqa_model, kv, step="modules")(logits.argmax(-1))
    finally:
        hook.remove()
    assert seen == [torch.Size([1, 1, gqa_model.cfg.d_ff])]


def test_an_unknown_step_is_refused(gqa_model):
    with pytest.raises(ValueError, match="step='fast'"):
        generate(gqa_model, torch.tensor([[1, 2]]), 2, step="fast")
    with pytest.raises(ValueError, match="step='fast'"):
        decode_stepper(gqa_model, KVCache(), step="fast")


def test_the_flat_step_reads_the_live_weights(gqa_model):
    """It holds the model's own parameters, not copies: an in-place edit is seen at once."""
    ids = torch.tensor([[4, 5, 6, 7]])
    a, b = KVCache(), KVCache()
    logits, _ = prefill(gqa_model, ids, cache=a)
    prefill(gqa_model, ids, cache=b)
    step = decode_stepper(gqa_model, b)
    with torch.no_grad():
        gqa_model.layers[2].mlp.down_proj.weight.mul_(1.5)
    tok = logits.argmax(-1)
    assert torch.equal(decode_step(gqa_model, tok, a), step(tok))


@pytest.mark.parametrize("why", ["train", "explicit", "hook", "pre-hook", "global hook", "subclass cache",
                                 "sliding cache", "patched forward", "subclass module"])
def test_the_flat_step_refuses_where_it_would_differ(why):
    model = tiny_model("MQA")
    cache = StaticKVCache(model.cfg, 1, 32)
    if why == "train":
        model.train()
    elif why == "explicit":
        model.set_attn_impl("explicit")
    elif why == "hook":
        model.norm.register_forward_hook(lambda *a: None)
    elif why == "pre-hook":
        model.register_forward_pre_hook(lambda *a: None)
    elif why == "global hook":
        handle = torch.nn.modules.module.register_module_forward_hook(lambda *a: None)
        try:
            assert not flat_ok(model, cache)
        finally:
            handle.remove()
        assert flat_ok(model, cache)
        return
    elif why == "subclass cache":
        cache = OwnUpdateCache()
    elif why == "sliding cache":
        cache = SlidingWindowKVCache(8)
    elif why == "patched forward":
        model.layers[0].forward = model.layers[0].forward
    elif why == "subclass module":
        class LoudNorm(type(model.norm)):
            pass
        model.norm.__class__ = LoudNorm
    assert not flat_ok(model, cache)
    with pytest.raises(ValueError, match="step="):
        decode_stepper(model, cache)
    decode_stepper(model, cache, step="modules")  # the modules run whatever the model and cache
    assert flat_ok(tiny_model("MQA"), StaticKVCache(model.cfg, 1, 32))


@pytest.mark.parametrize("bad, match", [
    (torch.tensor([[1]]), "token_ids must be a \\[B\\] tensor"),
    (torch.tensor([101]), "token id 101 is outside the vocabulary"),
    (torch.tensor([1, 2]), "batch size 2 but the cache holds 1"),
])
def test_the_stepper_rejects_bad_ids_clearly(gqa_model, bad, match):
    kv = StaticKVCache(gqa_model.cfg, 1, 8)
    prefill(gqa_model, torch.tensor([[1, 2, 3]]), cache=kv)
    with pytest.raises(ValueError, match=match):
        decode_stepper(gqa_model, kv)(bad)


def test_the_stepper_refuses_an_empty_cache_like_decode_step(gqa_model):
    with pytest.raises(ValueError, match="needs a cache filled by prefill"):
        decode_stepper(gqa_model, KVCache())(torch.tensor([1]))


def test_the_stepper_stops_at_max_seq_len():
    model = tiny_model("GQA", max_seq_len=5)
    kv = KVCache()
    logits, _ = prefill(model, torch.tensor([[1, 2, 3, 4]]), cache=kv)
    step = decode_stepper(model, kv)
    logits = step(logits.argmax(-1))  # position 4: the last one
    with pytest.raises(ValueError, match="exceeds max_seq_len=5"):
        step(logits.argmax(-1))
