"""Beam search with cache reordering (utils/beam.py): every beam equals its own recompute."""
import pytest
import torch

from conftest import prompt_ids
from utils import KVCache, StaticKVCache, decode_step, generate, prefill
from utils.beam import beam_search, reorder_copies

TOL = 1e-4


@pytest.mark.parametrize("cache", ["dynamic", "static"])
def test_beam_search_with_reorder_equals_recompute_for_every_beam(model, cache):
    res = beam_search(model, prompt_ids(6), 4, 10, cache_kind=cache, tol=TOL)
    assert res.report.ok, res.report.verdict
    assert res.sequences.shape == (4, 16) and len(res.parents) == 10
    assert torch.all(res.scores[:-1] >= res.scores[1:])  # best beam first
    assert len({tuple(s) for s in res.sequences.tolist()}) == 4  # distinct beams


@pytest.mark.parametrize("cache", ["dynamic", "static"])
def test_beam_search_without_reorder_diverges(model, cache):
    res = beam_search(model, prompt_ids(6), 4, 10, reorder=False, cache_kind=cache, tol=TOL)
    assert not res.report.ok
    # it diverges exactly once the parents stop being 0, 1, 2, ... (step s uses parents[s - 1])
    first_shuffle = next(s for s, p in enumerate(res.parents, 1) if p != list(range(4)) and s > 1)
    assert res.report.first_bad_step <= first_shuffle


def test_beam_search_scores_are_the_sequences_log_probs(model):
    res = beam_search(model, prompt_ids(5), 3, 6)
    with torch.inference_mode():
        logp = torch.log_softmax(model(res.sequences).float(), dim=-1)  # (beams, T, V)
    new = res.sequences[:, 5:]
    manual = logp[:, 4:-1].gather(-1, new[..., None]).squeeze(-1).sum(-1)
    torch.testing.assert_close(res.scores, manual, atol=1e-4, rtol=0)


def test_one_beam_is_greedy(model):
    ids = prompt_ids(6, seed=4)
    res = beam_search(model, ids, 1, 8)
    assert res.sequences[0, 6:].tolist() == generate(model, ids, 8).tokens[0].tolist()


def test_beam_search_bad_input(model):
    for kwargs in (dict(n_beams=0, n_steps=2), dict(n_beams=2, n_steps=-1), dict(n_beams=2, n_steps=2, cache_kind="x")):
        with pytest.raises(ValueError):
            beam_search(model, prompt_ids(3), **kwargs)
    with pytest.raises(ValueError, match="one sequence"):
        beam_search(model, torch.ones(2, 3, dtype=torch.long), 2, 2)


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


def test_reorder_copies_counts_copy_on_write_blocks_against_a_full_reorder(model):
    """Notebook 08 links reorder to notebook 10's copy-on-write: the paged search must be the same search,
    and copy at most one block per extra child, while a contiguous reorder copies every row at every step."""
    prompt = prompt_ids(5)
    c = reorder_copies(model, prompt, 3, 4, block_size=4)
    assert c.result.report.ok
    assert torch.equal(c.result.sequences, beam_search(model, prompt, 3, 4).sequences)
    assert c.reorder == sum(3 * (5 + s) for s in range(len(c.result.parents)))
    assert c.cow_blocks <= sum(len(p) - len(set(p)) for p in c.result.parents)
    assert c.cow == 4 * c.cow_blocks
