"""prefill, decode and the generation loop (utils/generate.py): stopping, padding finished rows,
timings, and left-padded batches, where per-row positions and masks matter."""
import torch

from conftest import tiny_model
from utils import KVCache, StaticKVCache, compare_with_recompute, decode_step, generate, prefill
from utils.generate import left_pad


def test_eos_stops_a_row_and_pads_after_it():
    model = tiny_model("GQA")
    ids = torch.randint(0, 101, (2, 4), generator=torch.Generator().manual_seed(0))
    free = generate(model, ids, 12)
    eos = int(free.tokens[0, 3])  # the 4th token row 0 would produce
    r = generate(model, ids, 12, eos_id=eos, pad_id=0)
    first = (free.tokens[0] == eos).nonzero()[0].item()
    assert r.stop_reasons[0] == "eos" and r.lengths[0] == first + 1
    assert (r.tokens[0, first + 1:] == 0).all()
    assert torch.equal(r.tokens[0, : first + 1], free.tokens[0, : first + 1])


def test_max_new_tokens_and_timings():
    model = tiny_model("MQA")
    r = generate(model, torch.tensor([1, 2, 3]), 7)
    assert r.tokens.shape == (1, 7) and r.stop_reasons == ["max_new_tokens"] and r.lengths == [7]
    assert r.ttft_s > 0 and len(r.step_times_s) == 6 and all(t > 0 for t in r.step_times_s)
    assert generate(model, torch.tensor([1, 2]), 0).tokens.shape == (1, 0)


def test_seeded_sampling_repeats():
    model = tiny_model("GQA")
    ids = torch.tensor([[4, 5, 6]])
    a = generate(model, ids, 10, temperature=1.0, top_k=20, seed=7)
    b = generate(model, ids, 10, temperature=1.0, top_k=20, seed=7)
    c = generate(model, ids, 10, temperature=1.0, top_k=20, seed=7, use_cache=False)
    assert torch.equal(a.tokens, b.tokens) and torch.equal(a.tokens, c.tokens)


class _Chars:
    """A stand-in tokenizer: token i decodes to a letter, joined with spaces."""

    def decode(self, ids):
        return " ".join(chr(ord("a") + i % 26) for i in ids)


def test_stop_string_spanning_two_tokens_and_per_row_stopping():
    model = tiny_model("GQA")
    ids = torch.randint(0, 101, (2, 4), generator=torch.Generator().manual_seed(1))
    free = generate(model, ids, 10)
    tok = _Chars()
    target = tok.decode(free.tokens[0, 2:4].tolist())  # two tokens of row 0, e.g. "x y"
    r = generate(model, ids, 10, stop_strings=[target], tokenizer=tok)
    assert r.stop_reasons[0] == "stop_string" and r.texts[0].endswith(target)
    assert r.lengths[0] <= 4
    if not tok.decode(free.tokens[1].tolist()).count(target):
        assert r.stop_reasons[1] == "max_new_tokens" and r.lengths[1] == 10


# --- left-padded batches -----------------------------------------------------------------------

def test_left_padded_batch_matches_each_prompt_alone_step_by_step(any_layout_model):
    model = any_layout_model
    g = torch.Generator().manual_seed(6)
    prompts = [torch.randint(1, 101, (n,), generator=g).tolist() for n in (3, 9, 6)]
    ids, mask = left_pad(prompts)
    for make in (lambda: KVCache(), lambda: StaticKVCache(model.cfg, 3, 40)):
        batch_kv = make()
        batch_logits, _ = prefill(model, ids, mask, batch_kv)
        alone = []
        for p in prompts:
            kv = KVCache()
            logits, _ = prefill(model, torch.tensor([p]), cache=kv)
            alone.append((kv, logits))
        for step in range(16):
            for i, (kv, logits) in enumerate(alone):
                torch.testing.assert_close(batch_logits[i], logits[0], atol=1e-5, rtol=0,
                                           msg=f"row {i} step {step}")
            nxt = batch_logits.argmax(-1)
            batch_logits = decode_step(model, nxt, batch_kv)
            alone = [(kv, decode_step(model, nxt[i:i + 1], kv)) for i, (kv, _) in enumerate(alone)]


def test_padded_batch_cached_equals_recompute(any_layout_model):
    ids, mask = left_pad([[5, 6, 7], [1, 2, 3, 4, 5, 6, 7, 8], [9]])
    for cache in ("dynamic", "static"):
        report = compare_with_recompute(any_layout_model, ids, 32, attention_mask=mask, cache_kind=cache)
        assert report.ok, report.verdict


def test_new_token_position_is_the_real_cache_length():
    """A 12-token prompt puts the first new token at position 12, per row when padded."""
    from conftest import tiny_model

    model = tiny_model("GQA")
    ids, mask = left_pad([list(range(1, 13)), list(range(1, 6))])
    kv = KVCache()
    prefill(model, ids, mask, kv)
    assert kv.valid_counts().tolist() == [12, 5]
