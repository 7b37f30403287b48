"""Left-padded batches and beam reordering: the cases where per-row bookkeeping matters."""
import torch

from utils import KVCache, StaticKVCache, compare_with_recompute, decode_step, prefill
from utils.generate import left_pad


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


def test_reorder_keeps_beam_search_equal_to_recompute(gqa_model):
    """After each beam step the cache rows follow their parents; every beam then matches a recompute."""
    model = gqa_model
    n_beams = 3
    prompt = torch.randint(1, 101, (1, 6), generator=torch.Generator().manual_seed(7))
    ids = prompt.repeat(n_beams, 1)
    for kv in (KVCache(), StaticKVCache(model.cfg, n_beams, 30)):
        logits, _ = prefill(model, ids, cache=kv)
        seqs = ids.clone()
        scores = torch.zeros(n_beams)
        scores[1:] = -1e9  # identical beams at the start: only the first may expand
        for _ in range(8):
            logp = torch.log_softmax(logits, -1) + scores[:, None]  # (beams, V)
            top = logp.flatten().topk(n_beams)
            parents, tokens = top.indices // logp.shape[1], top.indices % logp.shape[1]
            scores = top.values
            kv.reorder(parents)
            seqs = torch.cat([seqs[parents], tokens[:, None]], dim=1)
            logits = decode_step(model, tokens, kv)
            with torch.inference_mode():
                full = model(seqs)[:, -1]
            torch.testing.assert_close(logits, full, atol=1e-5, rtol=0)


def test_beam_step_without_reorder_diverges(gqa_model):
    """The bug the previous test guards against is real: skip reorder and the logits go wrong."""
    model = gqa_model
    ids = torch.randint(1, 101, (2, 5), generator=torch.Generator().manual_seed(8))
    kv = KVCache()
    prefill(model, ids, cache=kv)
    parents = torch.tensor([1, 1])  # both beams continue row 1, but the cache is not reordered
    seqs = torch.cat([ids[parents], torch.tensor([[3], [4]])], dim=1)
    logits = decode_step(model, torch.tensor([3, 4]), kv)
    with torch.inference_mode():
        full = model(seqs)[:, -1]
    assert (logits[0] - full[0]).abs().max() > 1e-3
