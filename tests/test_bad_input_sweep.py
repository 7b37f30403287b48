"""Bad input, table-driven, across every public entry point of the engine: each row must raise ValueError, and
the message must name the offending value, never a shape error from deep inside torch."""
import pytest
import torch

from conftest import tiny_model
from utils import (KVCache, ModelConfig, StaticKVCache, compare_with_recompute, decode_step, generate,
                   kv_cache_bytes, load_course_model, prefill, sample)
from utils.beam import beam_search
from utils.hf import from_hf
from utils.perf import metrics, torch_threads, ttft_vs_prompt_length
from utils.sizing import bytes_per_element, max_concurrent_requests
from utils.sliding import SlidingWindowKVCache

M = tiny_model("GQA", max_seq_len=32)  # vocab 101, L=3, H=4, H_kv=2
_, TOK = load_course_model()
CFG = dict(vocab_size=50, n_layers=2, n_heads=4, n_kv_heads=2, d_model=32, d_ff=64, max_seq_len=32)
IDS = torch.tensor([[1, 2, 3]])


def _filled(kind="dynamic", prompt=IDS):
    kv = KVCache() if kind == "dynamic" else StaticKVCache(M.cfg, 1, 4)
    prefill(M, prompt, cache=kv)
    return kv


CASES = [
    # (what, call, text the message must contain)
    ("H not divisible by H_kv", lambda: ModelConfig(**{**CFG, "n_heads": 6, "n_kv_heads": 4}), "n_kv_heads=4"),
    ("H_kv < 1", lambda: ModelConfig(**{**CFG, "n_kv_heads": 0}), "got 0"),
    ("odd head_dim", lambda: ModelConfig(**{**CFG, "head_dim": 9}), "head_dim=9"),
    ("C not divisible by H", lambda: ModelConfig(**{**CFG, "d_model": 33}), "d_model=33"),
    ("negative vocab", lambda: ModelConfig(**{**CFG, "vocab_size": -1}), "-1"),
    ("H_kv > H", lambda: ModelConfig(**{**CFG, "n_kv_heads": 8}), "n_kv_heads=8"),
    ("no layers", lambda: ModelConfig(**{**CFG, "n_layers": 0}), "n_layers"),
    ("max_seq_len not an int", lambda: ModelConfig(**{**CFG, "max_seq_len": 2.5}), "max_seq_len"),
    ("rope_theta of 0", lambda: ModelConfig(**{**CFG, "rope_theta": 0.0}), "rope_theta"),
    ("negative norm_eps", lambda: ModelConfig(**{**CFG, "norm_eps": -1.0}), "norm_eps"),
    ("dropout of 1", lambda: ModelConfig(**{**CFG, "dropout": 1.0}), "1.0"),
    ("Decoder without a config", lambda: __import__("utils").Decoder({"vocab_size": 3}), "dict"),
    ("unknown attention impl", lambda: M.set_attn_impl("flash"), "'flash'"),
    ("empty prompt", lambda: prefill(M, torch.zeros(1, 0, dtype=torch.long)), "(1, 0)"),
    ("1-D ids to the model", lambda: M(torch.tensor([1, 2])), "(2,)"),
    ("float ids", lambda: M(torch.ones(1, 2)), "float32"),
    ("token id = vocab", lambda: prefill(M, torch.tensor([[1, 101]])), "101"),
    ("negative token id", lambda: prefill(M, torch.tensor([[1, -1]])), "token id -1"),
    ("prompt longer than max_seq_len", lambda: prefill(M, torch.ones(1, 40, dtype=torch.long)), "40"),
    ("mask of the wrong shape", lambda: M(IDS, attention_mask=torch.ones(1, 2)), "(1, 2)"),
    ("mask with a 2", lambda: M(IDS, attention_mask=torch.tensor([[1, 2, 1]])), "0 (padding) and 1"),
    ("right-padded mask", lambda: prefill(M, IDS, attention_mask=torch.tensor([[1, 1, 0]])), "[0]"),
    ("position id past the table", lambda: M(IDS, position_ids=torch.tensor([0, 1, 99])), "31"),
    ("decode with [B, 1] ids", lambda: decode_step(M, torch.tensor([[1]]), _filled()), "(1, 1)"),
    ("decode on an empty cache", lambda: decode_step(M, torch.tensor([1]), KVCache()), "empty cache"),
    ("decoding past max_seq_len", lambda: decode_step(M, torch.tensor([1]), _filled(prompt=torch.ones(1, 32, dtype=torch.long))),
     "33 positions"),
    ("writing past a static cache", lambda: [decode_step(M, torch.tensor([1]), kv) for kv in [_filled("static")]
                                             for _ in range(2)], "max_len=4"),
    ("static cache longer than the model", lambda: StaticKVCache(M.cfg, 1, 33), "max_len=33"),
    ("static cache of batch 0", lambda: StaticKVCache(M.cfg, 0, 8), "0"),
    ("reorder out of range", lambda: _filled().reorder(torch.tensor([3])), "[3]"),
    ("reorder with floats", lambda: _filled().reorder(torch.tensor([0.0])), "float32"),
    ("crop longer than the cache", lambda: _filled().crop(7), "7"),
    ("cache with another batch size", lambda: decode_step(M, torch.tensor([1, 2]), _filled()), "batch size 2"),
    ("negative temperature", lambda: sample(torch.zeros(1, 4), temperature=-1.0), "-1.0"),
    ("top_p = 0", lambda: sample(torch.zeros(1, 4), top_p=0.0), "0.0"),
    ("top_p > 1", lambda: sample(torch.zeros(1, 4), top_p=1.01), "1.01"),
    ("top_k = 0", lambda: sample(torch.zeros(1, 4), top_k=0), "0"),
    ("1-D logits", lambda: sample(torch.zeros(4)), "(4,)"),
    ("max_new_tokens < 0", lambda: generate(M, IDS, -2), "-2"),
    ("unknown cache kind", lambda: generate(M, IDS, 2, cache_kind="pages"), "'pages'"),
    ("eos_id of the wrong type", lambda: generate(M, IDS, 2, eos_id="<EOS>"), "<EOS>"),
    ("pad_id outside the vocab", lambda: generate(M, IDS, 2, pad_id=500), "pad_id=500"),
    ("stop strings without tokenizer", lambda: generate(M, IDS, 2, stop_strings=["猫"]), "tokenizer"),
    ("empty stop string", lambda: generate(M, IDS, 2, stop_strings=[""], tokenizer=TOK), "''"),
    ("generation past max_seq_len", lambda: generate(M, IDS, 40), "max_new_tokens=40"),
    ("negative n_steps", lambda: compare_with_recompute(M, IDS, -1), "-1"),
    ("zero tolerance", lambda: compare_with_recompute(M, IDS, 2, tol=0.0), "0.0"),
    ("negative seq_len", lambda: kv_cache_bytes(32, 1, 8, -5, 128), "-5"),
    ("negative layer count", lambda: kv_cache_bytes(-2, 1, 8, 10, 128), "n_layers"),
    ("half a request", lambda: kv_cache_bytes(32, 1.5, 8, 10, 128), "batch_size"),
    ("unknown dtype name", lambda: kv_cache_bytes(32, 1, 8, 5, 128, "fp12"), "'fp12'"),
    ("non-cache torch dtype", lambda: bytes_per_element(torch.int64), "torch.int64"),
    ("reserve fraction of 1", lambda: max_concurrent_requests(M.cfg, 10, 2**30, reserve_fraction=1.0), "1.0"),
    ("unknown word", lambda: TOK.encode("<BOS> 我 喜欢 zebra"), "'zebra'"),
    ("id outside the vocabulary", lambda: TOK.decode([1, 999]), "999"),
    ("not a transformers model", lambda: from_hf(object()), "object"),
    ("sliding window of 0", lambda: SlidingWindowKVCache(0), "0"),
    ("beam count above V", lambda: beam_search(M, IDS, n_beams=500, n_steps=2), "500"),
    ("thread count 0", lambda: torch_threads(0).__enter__(), "0"),
    ("prefill timing of length 0", lambda: ttft_vs_prompt_length(M, [0]), "[0]"),
    ("metrics of zero tokens", lambda: metrics(ttft_s=0.1, tpot_s=0.01, n_tokens=0), "0"),
    # what learners really pass
    ("prefill's (logits, cache) tuple as the cache", lambda: decode_step(M, torch.tensor([1]), prefill(M, IDS)), "unpack"),
    ("a cache kind's name as the cache", lambda: prefill(M, IDS, cache="dynamic"), "cache_kind="),
    ("an empty prompt from tok.encode('')", lambda: prefill(M, torch.tensor([[]])), "is the prompt empty"),
    ("eos_id as a float", lambda: generate(M, IDS, 2, eos_id=2.0), "eos_id"),
    ("the tokenizer in the model's place", lambda: generate(TOK, IDS, 3), "tokenizer="),
    ("the model as the tokenizer", lambda: generate(M, IDS, 3, tokenizer=M), "tokenizer="),
    ("ragged prompts", lambda: generate(M, [[1, 3, 10], [1, 3]], 3), "left_pad"),
    ("seed as a string", lambda: generate(M, IDS, 3, seed="42"), "seed"),
    ("cache update with a string layer", lambda: KVCache().update("0", torch.zeros(1, 2, 1, 4), torch.zeros(1, 2, 1, 4)),
     "'0'"),
    ("cache update with lists", lambda: KVCache().update(0, [0.0], [0.0]), "k and v"),
    ("cache update of layer -1", lambda: KVCache().update(-1, torch.zeros(1, 2, 1, 4), torch.zeros(1, 2, 1, 4)), "-1"),
    ("half k into a float32 cache", lambda: _filled().update(0, torch.zeros(1, 2, 1, 16).half(),
                                                             torch.zeros(1, 2, 1, 16).half()), "torch.float16"),
    ("a half model decoding into a float32 cache", lambda: decode_step(tiny_model("GQA", max_seq_len=32).half(),
                                                                        torch.tensor([1]), _filled()), "dtype"),
    ("a static cache of an unknown dtype name", lambda: StaticKVCache(M.cfg, 1, 8, dtype="fp12"), "'fp12'"),
    ("an object that is not a config", lambda: StaticKVCache({"n_layers": 2}, 1, 8), "model.cfg"),
    ("all -inf logits", lambda: sample(torch.full((1, 4), float("-inf")), temperature=1.0), "all -inf"),
]


def test_reasonable_inputs_are_accepted():
    """What a learner means is done: a dtype name, the model instead of its config, an eos tensor, a
    head size other than C / H."""
    assert ModelConfig(**{**CFG, "d_model": 30, "head_dim": 16}).head_dim == 16
    assert StaticKVCache(M, 1, 8, dtype="float16").k[0].dtype == torch.float16
    assert generate(M, IDS, 2, eos_id=torch.tensor(2)).tokens.shape[0] == 1
    assert generate(M, [1, 2, 3], 2).tokens.shape == (1, 2)
    logits = torch.tensor([[0.0, 1.0, 2.0, 3.0]]).half()
    assert sample(logits, temperature=1e-4).item() == 3  # computed in float32: no overflow to inf


@pytest.mark.parametrize("what,call,needle", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_a_clear_value_error(what, call, needle):
    with pytest.raises(ValueError) as err:
        call()
    assert needle in str(err.value), f"{what}: message {str(err.value)!r} does not name {needle!r}"


def test_the_table_is_large():
    assert len(CASES) >= 25
