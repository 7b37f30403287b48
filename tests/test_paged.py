"""The paged KV cache (utils/paged.py, utils/block_pool.py): equal to the contiguous caches, blocks
counted right, prefixes shared safely."""
import pytest
import torch

from conftest import prompt_ids, tiny_model
from utils import KVCache, StaticKVCache, decode_step, generate, prefill
from utils.beam import beam_search
from utils.block_pool import BlockPool, PoolExhausted, block_keys
from utils.generate import left_pad
from utils.paged import PagedKVCache

TOL = 1e-5  # paged vs contiguous logits (the same numbers gathered from elsewhere: in practice equal)


def _decode(model, cache, logits, n):
    out = []
    for _ in range(n):
        nxt = logits.argmax(-1)
        out.append(nxt)
        logits = decode_step(model, nxt, cache)
    return torch.stack(out, 1), logits


@pytest.mark.parametrize("kind", ["MHA", "GQA", "MQA"])
@pytest.mark.parametrize("block_size", [1, 3, 16])
def test_paged_cache_equals_kvcache_logits_and_contents(kind, block_size):
    model = tiny_model(kind)
    ids = prompt_ids(11)
    with torch.inference_mode():
        l1, c1 = prefill(model, ids)
        l2, c2 = prefill(model, ids, cache=PagedKVCache(model.cfg, 40, block_size))
        assert (l1 - l2).abs().max() <= TOL
        t1, l1 = _decode(model, c1, l1, 9)
        t2, l2 = _decode(model, c2, l2, 9)
    assert torch.equal(t1, t2) and (l1 - l2).abs().max() <= TOL
    assert c2.seq_len == c1.seq_len == 20
    for layer in range(model.cfg.n_layers):
        torch.testing.assert_close(c2.k[layer], c1.k[layer], atol=0, rtol=0)
        torch.testing.assert_close(c2.v[layer], c1.v[layer], atol=0, rtol=0)


@pytest.mark.parametrize("step", ["flat", "modules"])
def test_generate_with_paged_cache_gives_the_same_tokens_for_ragged_batches(step):
    model = tiny_model("GQA")
    rows = [prompt_ids(9, seed=1)[0].tolist(), prompt_ids(4, seed=2)[0].tolist(), prompt_ids(6, seed=3)[0].tolist()]
    ids, mask = left_pad(rows)
    a = generate(model, ids, 12, attention_mask=mask, step=step)
    b = generate(model, ids, 12, attention_mask=mask, step=step, cache_kind="paged")
    assert torch.equal(a.tokens, b.tokens)
    mem = b.cache.memory()
    # padding is never stored: the pool holds exactly the real tokens of each row
    assert sum(b.cache.lengths) == sum(len(r) for r in rows) + 3 * 11
    assert mem["tokens"] <= mem["held"] <= mem["pool"] == b.cache.nbytes


def test_padding_is_not_stored_so_paged_uses_fewer_bytes_than_a_left_padded_static_cache():
    model = tiny_model("GQA")
    rows = [prompt_ids(30, seed=1)[0].tolist(), prompt_ids(3, seed=2)[0].tolist()]
    ids, mask = left_pad(rows)
    with torch.inference_mode():
        _, static = prefill(model, ids, mask, StaticKVCache(model.cfg, 2, 30))
        _, paged = prefill(model, ids, mask, PagedKVCache(model.cfg, 16, 4))
    mem = paged.memory()
    per_token = paged.pool.block_bytes // 4
    assert static.nbytes == 2 * 30 * per_token  # the short row's 27 pad positions are stored
    assert mem["tokens"] == 33 * per_token and mem["held"] == (8 + 1) * 4 * per_token


def test_beam_search_on_paged_cache_equals_recompute():
    res = beam_search(tiny_model("GQA"), prompt_ids(6), 4, 10, cache_kind="paged", tol=1e-4)
    assert res.report.ok, res.report.verdict


def test_reorder_shares_blocks_and_copies_a_shared_last_block_before_writing():
    model = tiny_model("GQA")
    ids = prompt_ids(7).repeat(3, 1)
    with torch.inference_mode():
        _, c = prefill(model, ids, cache=PagedKVCache(model.cfg, 12, 4))
        c.reorder(torch.tensor([0, 0, 2]))
        assert c.tables[0] == c.tables[1] and c.pool.ref[c.tables[0][1]] == 2
        decode_step(model, torch.tensor([5, 6, 7]), c)
    assert c.tables[0][0] == c.tables[1][0]  # the full first block stays shared
    assert c.tables[0][1] != c.tables[1][1]  # the partial block was copied before the write
    assert sorted(c.pool.ref) == sorted([0] * 7 + [2, 1, 1, 1, 1])


def test_crop_gives_blocks_back_and_release_returns_every_ref_count_to_zero():
    model = tiny_model("GQA")
    with torch.inference_mode():
        _, c = prefill(model, prompt_ids(10), cache=PagedKVCache(model.cfg, 8, 4))
        assert len(c.tables[0]) == 3
        c.crop(4)
        assert c.tables[0] == [0] and c.lengths == [4] and c.pool.n_free() == 7
        decode_step(model, torch.tensor([3]), c)  # writes position 4 again, in a fresh block
    c.release()
    assert c.pool.ref == [0] * 8 and c.pool.n_free() == 8


def test_prefix_reuse_prefills_only_the_suffix_and_matches_a_fresh_prefill():
    model = tiny_model("GQA")
    system, question = prompt_ids(12, seed=5)[0].tolist(), prompt_ids(5, seed=6)[0].tolist()
    with torch.inference_mode():
        _, first = prefill(model, torch.tensor([system + [7]]), cache=PagedKVCache(model.cfg, 16, 4))
        assert first.publish_prefix(system + [7]) == 3
        second = PagedKVCache(pool=first.pool)
        n = second.reuse_prefix(system + question)
        assert n == 12 and second.tables[0] == first.tables[0][:3]
        cached, _ = prefill(model, torch.tensor([question]), cache=second)
        fresh, _ = prefill(model, torch.tensor([system + question]))
    assert (cached - fresh).abs().max() <= TOL
    assert first.pool.hit_rate() == 12 / 17


def test_full_prefix_hit_still_runs_the_last_prompt_token_in_a_private_copy():
    model = tiny_model("GQA")
    prompt = prompt_ids(8, seed=7)[0].tolist()  # exactly two blocks of 4
    with torch.inference_mode():
        fresh, first = prefill(model, torch.tensor([prompt]), cache=PagedKVCache(model.cfg, 8, 4))
        first.publish_prefix(prompt)
        second = PagedKVCache(pool=first.pool)
        n = second.reuse_prefix(prompt)
        assert n == 7  # not 8: the first new token's logits need the last prompt token run
        logits, _ = prefill(model, torch.tensor([prompt[n:]]), cache=second)
    assert (logits - fresh).abs().max() <= TOL
    assert second.tables[0][0] == first.tables[0][0] and second.tables[0][1] != first.tables[0][1]
    second.release()
    first.release()
    assert first.pool.ref == [0] * 8 and first.pool.n_free() == 8


def test_a_block_in_use_is_never_handed_out_again():
    pool = BlockPool(tiny_model("GQA").cfg, 3, 2)
    a, b = pool.allocate(), pool.allocate()
    pool.share(a)
    pool.release(a)  # still held once
    c = pool.allocate()
    assert c not in (a, b)
    with pytest.raises(PoolExhausted, match="pool is full"):
        pool.allocate()
    with pytest.raises(ValueError, match="released more times"):
        pool.release(a); pool.release(a)  # noqa: E702


def test_cached_free_blocks_are_reused_last_and_then_forgotten():
    pool = BlockPool(tiny_model("GQA").cfg, 2, 2)
    b = pool.allocate()
    pool.publish([b], [1, 2], 2)
    pool.release(b)
    assert pool.match_prefix([1, 2, 3]) == [b]  # found again after its user finished
    pool.release(b)
    other = pool.allocate()
    assert other != b  # the empty block goes first
    pool.allocate()  # now the cached one is taken, and its key forgotten
    assert pool.block_of == {} and pool.match_prefix([1, 2]) == []


def test_block_keys_chain_over_the_prefix():
    assert len(block_keys([1, 2, 3, 4, 5], 2)) == 2
    assert block_keys([1, 2, 3, 4], 2)[1] != block_keys([9, 9, 3, 4], 2)[1]  # same tokens, other past
    assert block_keys([1, 2, 3, 4], 2) == block_keys([1, 2, 3, 4, 7], 2)


def test_running_out_of_blocks_is_a_clear_error_that_leaves_the_cache_unchanged():
    model = tiny_model("GQA")
    cache = PagedKVCache(model.cfg, 2, 4)
    with torch.inference_mode():
        prefill(model, prompt_ids(8), cache=cache)
        with pytest.raises(ValueError, match=r"needs 1 more block\(s\) .* make n_blocks larger"):
            decode_step(model, torch.tensor([1]), cache)
    assert cache.lengths == [8] and cache.seq_len == 8 and cache.pool.n_free() == 0


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_blocks=4, block_size=0), "block_size"),
    (dict(n_blocks=0, block_size=4), "n_blocks"),
    (dict(n_blocks=4, block_size=2.5), "block_size"),
])
def test_bad_pool_sizes_are_clear_value_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PagedKVCache(tiny_model("GQA").cfg, **kwargs)


def test_paged_cache_accepts_the_model_and_dtype_names_and_names_what_is_wrong():
    model = tiny_model("GQA")
    assert PagedKVCache(model, 2, 4, dtype="float16").pool.dtype == torch.float16
    with pytest.raises(ValueError, match="ModelConfig"):
        PagedKVCache("llama", 2, 4)
    with pytest.raises(ValueError, match="pool="):
        PagedKVCache()
    cache = PagedKVCache(model, 4, 4, dtype="float16")
    with pytest.raises(ValueError, match="dtype"), torch.inference_mode():
        prefill(model, prompt_ids(3), cache=cache)
    with pytest.raises(ValueError, match="reuse_prefix starts an empty cache"):
        c = PagedKVCache(model, 4, 4)
        c.begin_step(1, 2, None)
        c.reuse_prefix([1, 2, 3])


def test_paged_cache_works_where_the_contiguous_one_does_with_kvcache_defaults():
    model = tiny_model("MQA")
    a = generate(model, prompt_ids(5), 6)
    b = generate(model, prompt_ids(5), 6, cache_kind="paged")
    assert torch.equal(a.tokens, b.tokens) and isinstance(a.cache, KVCache)


def test_a_finished_request_frees_its_last_block_first_so_eviction_keeps_the_prefix_head_findable():
    model = tiny_model("GQA")
    system = prompt_ids(20, seed=9)[0].tolist()  # 5 full blocks of 4
    with torch.inference_mode():
        _, user = prefill(model, torch.tensor([system]), cache=PagedKVCache(model.cfg, 8, 4))
    user.publish_prefix(system)
    head = list(user.tables[0])
    user.release()
    assert list(user.pool.cached_free) == head[::-1]  # the tail first in line for reuse
    for _ in range(user.pool.n_free() - 2):  # new data takes the empty blocks, then the tail of the prefix
        user.pool.allocate()
    assert user.pool.match_prefix(system) == head[:2]  # the head is still found


def test_a_full_hit_counts_one_token_less_in_the_hit_rate():
    model = tiny_model("GQA")
    prompt = prompt_ids(8, seed=7)[0].tolist()
    with torch.inference_mode():
        _, first = prefill(model, torch.tensor([prompt]), cache=PagedKVCache(model.cfg, 8, 4))
    first.publish_prefix(prompt)
    assert PagedKVCache(pool=first.pool).reuse_prefix(prompt) == 7 and first.pool.hit_tokens == 7


@pytest.mark.parametrize("kind", ["MHA", "GQA", "MQA"])
@pytest.mark.parametrize("block_size", [1, 3, 16])
def test_the_block_by_block_read_with_an_online_softmax_equals_attention_over_the_gathered_keys(kind, block_size):
    from utils.paged import blockwise_attention

    model = tiny_model(kind)
    cfg = model.cfg
    cache = PagedKVCache(cfg, n_blocks=40, block_size=block_size)
    with torch.inference_mode():
        prefill(model, prompt_ids(19, 1), cache=cache)  # 19 tokens: the last block part full (but with blocks of 1)
    q = torch.randn(cfg.n_heads, cfg.head_dim, generator=torch.Generator().manual_seed(1)) * 4  # large scores too
    for layer in range(cfg.n_layers):
        k, v = (t[layer][cache.slots[0]].transpose(0, 1) for t in (cache.pool.k, cache.pool.v))  # (H_kv, n, d_h)
        rep = cfg.n_heads // cfg.n_kv_heads
        want = torch.nn.functional.scaled_dot_product_attention(
            q[:, None], k.repeat_interleave(rep, 0), v.repeat_interleave(rep, 0))[:, 0]  # (H, d_h)
        got = blockwise_attention(q, cache.pool, layer, cache.tables[0], cache.lengths[0])
        assert got.shape == want.shape and torch.allclose(got, want, atol=1e-5, rtol=0)
