"""The self-test of notebook 09: its question bank, and the question sheet and answer key to print.

Every question (``utils.question.Question``) is tagged with the notebook (0-8) that teaches it.
Answers that are numbers are computed here with the course package (``kv_cache_bytes``, a real
prefill, ...), never typed. What needs torch (a model, a cache, a tensor) is given as a
function, run the first time the question's answer or explanation is read: importing this
module builds no model. The widget that asks the questions is ``utils.widgets.Quiz``.
"""
from __future__ import annotations

from functools import cache
from typing import Sequence

import torch

from .attention import causal_mask
from .cache import StaticKVCache
from .config import ModelConfig
from .generate import GenerationResult, prefill
from .model import Decoder
from .recompute import TOL
from .question import KIND_NAMES, Question, format_answer
from .sampling import filtered_probs
from .sizing import MODEL_PRESETS, kv_bytes_per_token, kv_cache_bytes
from .sliding import SlidingWindowKVCache, feed


def question_sheet(questions: Sequence[Question], answers: bool = False) -> str:
    """Every question (and its options) as plain text to print; with ``answers``, the answer key."""
    lines = []
    for i, q in enumerate(questions):
        lines.append(f"Q{i + 1}. [notebook {q.notebook:02d} · {KIND_NAMES[q.kind]}] {q.prompt}")
        lines += [f"      - {o}" for o in q.options]
        if answers:
            lines.append(f"   Answer: {q.answer_text()}")
            lines.append(f"   Why: {q.explanation}")
        lines.append("")
    return "\n".join(lines).rstrip()


def answer_key(questions: Sequence[Question]) -> str:
    """Every question with its answer and explanation, as plain text to print."""
    return question_sheet(questions, answers=True)


# --- numbers the questions need, computed with the course package on first read ---------------
# (cached where they build a model or a cache, so the answer and its explanation build it once)
_TINY = ModelConfig(vocab_size=64, n_layers=2, n_heads=4, n_kv_heads=2, d_model=64, d_ff=128, max_seq_len=64)


@cache
def _tiny_model() -> Decoder:
    with torch.random.fork_rng():  # do not disturb the caller's seed
        torch.manual_seed(0)
        return Decoder(_TINY).eval()


@cache
def _first_new_position(prompt_len: int) -> int:
    """Prefill a ``prompt_len``-token prompt: the next token's position is the cache length."""
    _, kv = prefill(_tiny_model(), torch.zeros(1, prompt_len, dtype=torch.long))
    return kv.seq_len


@cache
def _prefill_k_shape(B: int, T: int) -> str:
    """Shape of layer 0's cached K after prefilling ``B`` prompts of ``T`` tokens, as ``[B, H_kv, T, d_h]``."""
    _, kv = prefill(_tiny_model(), torch.zeros(B, T, dtype=torch.long))
    return str(list(kv.layer_kv(0)[0].shape))  # (B, H_kv, T, d_h)


@cache
def _sliding_window(window: int, n_tokens: int) -> tuple[int, int]:
    """Feed ``n_tokens`` into a sliding-window cache: (positions stored per layer, next position)."""
    kv = SlidingWindowKVCache(window)
    feed(_tiny_model(), torch.zeros(1, n_tokens, dtype=torch.long), kv)
    return kv.seq_len, kv.n_seen


@cache
def _static_bytes(max_len: int) -> int:
    """Bytes of a float32 ``StaticKVCache`` of the tiny model for one row of ``max_len`` positions."""
    return StaticKVCache(_TINY, batch_size=1, max_len=max_len, dtype=torch.float32).nbytes


def _tpot_ms(ttft_s: float, decode_s: float, n_after_first: int) -> float:
    """TPOT of a generation whose ``n_after_first`` tokens after the first took ``decode_s`` in all."""
    steps = [decode_s / n_after_first] * n_after_first
    tokens = torch.zeros(1, n_after_first + 1, dtype=torch.long)  # (B, n): only the timings matter here
    result = GenerationResult(tokens, [n_after_first + 1], ["max_new_tokens"], ttft_s, steps)
    return round(result.tpot_s * 1e3, 6)


def _nucleus_size(logits: list[float], p: float) -> int:
    return int((filtered_probs(torch.tensor([logits]), 1.0, top_p=p) > 0).sum())


def _decode_row_all_true() -> bool:
    return bool(causal_mask(1, 13).all())  # the one new query vs 12 cached keys + itself


_L7B = MODEL_PRESETS["Llama-2-7B"]
_L7B_GIB = kv_cache_bytes(_L7B.n_layers, 1, _L7B.n_kv_heads, 4096, _L7B.head_dim, "float16") / 2**30
_L3 = MODEL_PRESETS["Llama-3-8B"]
_L3_KIB = kv_bytes_per_token(_L3, "float16") / 2**10
_L3_GROUP = _L3.n_heads // _L3.n_kv_heads
_MQA_KIND = ModelConfig(vocab_size=8, n_layers=1, n_heads=8, n_kv_heads=1, d_model=64, d_ff=64,
                        max_seq_len=8).attention_kind
_L3_KIND = _L3.attention_kind
_NUCLEUS_LOGITS = [2.0, 1.0, 0.5, 0.1, -1.0]
_STATIC_LEN = 32
_WINDOW, _FED = 8, 11


# --- the question bank -----------------------------------------------------------------------
QUESTIONS: list[Question] = [
    # 00 · tour
    Question(0, "choice", "Which phase runs the whole prompt through the model in one parallel pass and yields the "
             "logits of the first new token?",
             "prefill", "Prefill processes all prompt tokens at once (a matrix of queries) and fills the cache; "
             "decode then adds one token per step.",
             options=("prefill", "decode", "sampling", "tokenisation")),
    Question(0, "truefalse", "In decode with a KV cache, only the newest token is fed to the model at each step.",
             True, "The history is already in the cache as K and V; the model only needs the new token's "
             "q, k and v, and it appends that k and v."),
    # 01 · attention block
    Question(1, "choice", f"A model has H = {_L3.n_heads} query heads and H_kv = {_L3.n_kv_heads} key/value heads. "
             "What kind of attention is that?",
             _L3_KIND, f"{_L3_GROUP} query heads share each K/V head: grouped-query attention (GQA). "
             "H_kv = H is MHA, H_kv = 1 is MQA.", options=("MHA", "GQA", "MQA")),
    Question(1, "fill", "Multi-query attention (MQA) keeps how many key/value heads (H_kv)?",
             1, f"All query heads share a single K/V head (ModelConfig reports it as {_MQA_KIND!r}); the cache is "
             "H times smaller than with MHA."),
    Question(1, "truefalse", "Prefill processes all prompt tokens in parallel, so it does not need a causal mask.",
             False, "Inside the prompt, token t must still not see tokens after t; the causal mask applies in "
             "prefill exactly as in training."),
    # 02 · prefill
    Question(2, "choice", "Which two tensors does the KV cache keep for every layer?",
             "K and V", "Keys and values of past tokens are all a new query needs; queries are recomputed for the "
             "new token only and never reused.",
             options=("Q and K", "K and V", "Q and V", "hidden states and logits"), seed=True),
    Question(2, "fill", f"A model with H = {_TINY.n_heads}, H_kv = {_TINY.n_kv_heads}, d_h = {_TINY.head_dim} "
             "prefills B = 2 prompts of T = 7 tokens. What is the shape of layer 0's cached K? "
             "(write it like [1, 2, 3, 4])",
             lambda: (_prefill_k_shape(2, 7),),
             "Layout [B, H_kv, T, d_h]: only the H_kv key/value heads are stored, time on dim 2 "
             "(computed by a real prefill)."),
    Question(2, "choice", "With left-padded prompts in a batch, which logits pick each row's first new token?",
             "the last position (every row's last real token)",
             "Left padding puts every prompt's last real token in the last column, so logits[:, -1] "
             "([B, V]) is right for every row.",
             options=("the first position", "the last position (every row's last real token)",
                      "the mean over all positions", "the logits of the <BOS> token")),
    # 03 · decode
    Question(3, "truefalse", "With a KV cache, the new token skips the decoder blocks: its output is read from the "
             "cache.", False, "The new token still goes through every layer (attention and MLP). The cache only "
             "saves recomputing the history's K and V.", seed=True),
    Question(3, "fill", "A prompt has 12 tokens. What is the zero-based position of the first "
             "new token?", lambda: _first_new_position(12),
             lambda: "The new token's position is the cache length: after prefilling 12 tokens the cache holds "
             f"{_first_new_position(12)} positions, so RoPE rotates the new token as position "
             f"{_first_new_position(12)}.", seed=True),
    Question(3, "truefalse", "In a decode step the single new query attends to every cached key (its mask row is "
             "all True).", _decode_row_all_true, "The new token is the latest one, so every cached token lies in "
             "its past: causal_mask(1, 13), one query over 12 cached keys + itself, is all True."),
    Question(3, "choice", "How should cached logits be compared with full-recompute logits?",
             f"with a tolerance, e.g. max |diff| <= {TOL:g}",
             "Same weights, eval mode, dtype and positions give the same result up to float rounding: the sums "
             "run in a different order, so bit-for-bit equality is not expected. The bug lab uses this "
             "tolerance too, in float32.",
             options=("bit for bit (torch.equal)", f"with a tolerance, e.g. max |diff| <= {TOL:g}",
                      "only the argmax token must match", "they cannot be compared")),
    # 04 · cache sizing
    Question(4, "fill", f"Llama-2-7B (L = {_L7B.n_layers}, H_kv = {_L7B.n_kv_heads}, d_h = {_L7B.head_dim}), one "
             "sequence of 4096 tokens, float16: how many GiB does the KV cache take?",
             _L7B_GIB, f"2 x L x B x H_kv x T x d_h x bytes = 2 x {_L7B.n_layers} x 1 x {_L7B.n_kv_heads} x 4096 x "
             f"{_L7B.head_dim} x 2 bytes = {format_answer(_L7B_GIB)} GiB (kv_cache_bytes)."),
    Question(4, "fill", f"Llama-3-8B (L = {_L3.n_layers}, H_kv = {_L3.n_kv_heads}, d_h = {_L3.head_dim}), float16: "
             "how many KiB of cache does each new token add (batch of one)?",
             _L3_KIB, f"2 x {_L3.n_layers} x {_L3.n_kv_heads} x {_L3.head_dim} x 2 bytes = "
             f"{format_answer(_L3_KIB)} KiB "
             "per token (kv_bytes_per_token)."),
    Question(4, "fill", f"Llama-3-8B uses H = {_L3.n_heads} and H_kv = {_L3.n_kv_heads}. How many times smaller is "
             "its cache than the same model with MHA?",
             _L3_GROUP, "The cache grows with H_kv, not H: H / H_kv = "
             f"{_L3.n_heads} / {_L3.n_kv_heads} = {_L3_GROUP}."),
    Question(4, "open", "Why can the KV cache make each request faster yet limit how many requests a server runs "
             "at once?",
             "It trades memory for compute: storing every layer's K and V avoids recomputing the history at each "
             "step (faster per token), but that memory grows with layers, batch, H_kv, sequence length and "
             "bytes per element, so GPU memory fills up and fewer requests fit at the same time.",
             "Cache bytes = 2 x L x B x H_kv x T x d_h x bytes: what speeds one request up is memory that "
             "another request cannot use.", seed=True),
    # 05 · sampling and stopping
    Question(5, "fill", f"The logits are {_NUCLEUS_LOGITS} and top_p = 0.8 (temperature 1). How many tokens are in "
             "the kept set?",
             lambda: _nucleus_size(_NUCLEUS_LOGITS, 0.8),
             lambda: "Top-p keeps the smallest set of most likely tokens whose probabilities reach p "
             f"(computed with filtered_probs: {_nucleus_size(_NUCLEUS_LOGITS, 0.8)} tokens)."),
    Question(5, "truefalse", "Switching from greedy decoding to top-p sampling requires recomputing the KV cache.",
             False, "Caching decides how the logits are computed; sampling only decides what is picked from them. "
             "The same cached logits can be sampled any way."),
    Question(5, "choice", "A stop string such as \"cats .\" can span two tokens. How does generate detect it?",
             "it decodes the new tokens to text and checks whether the text ends with the stop string",
             "Token ids cannot see a string that is cut across tokens; the decoded text can. An endswith test "
             "still misses a stop string that ends inside the last token (notebook 05); a search over the text's "
             "tail catches it.",
             options=("it compares the last token id with the stop string's id",
                      "it decodes the new tokens to text and checks whether the text ends with the stop string",
                      "it cannot: stop strings must be single tokens",
                      "it stops when the cache reaches the string's length")),
    Question(5, "truefalse", "temperature = 0 means greedy decoding: always the most likely token, no randomness.",
             True, "Dividing by a temperature that approaches 0 puts all mass on the argmax; sample() uses argmax "
             "directly at 0."),
    # 06 · performance metrics
    Question(6, "fill", "A request's first token arrives after 200 ms; the next 50 tokens take 1000 ms in total. "
             "What is its TPOT (time per output token) in ms?",
             lambda: _tpot_ms(0.2, 1.0, 50), lambda: "TPOT counts the decode steps after the first token: "
             f"1000 ms / 50 tokens = {format_answer(_tpot_ms(0.2, 1.0, 50))} ms. The 200 ms are the TTFT, "
             "reported separately."),
    Question(6, "choice", "Which work does the KV cache NOT save in a decode step?",
             "the new query's attention over all cached keys",
             "The cache saves re-embedding the history and re-running it through every block (its K/V "
             "projections and MLPs). The new token's full forward pass, its attention over ever more keys and "
             "the cache reads remain, so decode still slows as the context grows.",
             options=("re-embedding the history", "the history's K and V projections",
                      "running the history through the MLPs", "the new query's attention over all cached keys")),
    Question(6, "truefalse", "Batching more requests together raises throughput and can raise each request's "
             "latency.", True, "More rows per step use the hardware better (tokens/s up) but every step does "
             "more work, so each user may wait longer per token."),
    Question(6, "open", "Why is reporting only total tokens/s not enough to judge a serving setup?",
             "A high total throughput can hide a long time to first token or a slow TPOT for each user (for "
             "example because of large batches or queueing); report TTFT, TPOT, throughput and KV memory together.",
             "Users feel latency (TTFT, TPOT); operators pay for throughput and memory."),
    # 07 · bug lab
    Question(7, "choice", "Cached logits match recompute after prefill but diverge from the first decode step on. "
             "Which bug fits best?",
             "decode restarts the position ids at 0",
             "The new token must take the position equal to the cache length; restarting at 0 rotates it as "
             "the first token. Also check the other bugs that leave step 0 intact: a re-fed prompt, a mask "
             "without the cache offset, the concatenation axis, one layer's K/V for all layers.",
             options=("decode restarts the position ids at 0", "the temperature is too high",
                      "the prompt is too short", "the tokenizer adds <BOS>")),
    Question(7, "truefalse", "Setting use_cache=False changes the model's parameters.", False,
             "use_cache only decides whether past K/V are stored and reused; the weights are the same and the "
             "logits agree within float rounding."),
    Question(7, "choice", "After a beam-search step keeps some beams and drops others, what must happen to the "
             "cache?",
             "reorder its rows so each surviving beam gets its parent's K/V (cache.reorder)",
             "Each beam's history is its parent's; without reordering, a beam attends over another beam's past.",
             options=("nothing: the cache is shared by all beams",
                      "reorder its rows so each surviving beam gets its parent's K/V (cache.reorder)",
                      "clear it and prefill again every step", "crop it to the prompt length")),
    Question(7, "open", "What goes wrong if you cache each layer's hidden states (or layer 0's K/V) instead of "
             "each layer's own K and V?",
             "Each layer computes K and V from its own input with its own weights, so layer 0's K/V are wrong "
             "for layer 1. Caching each layer's input (its hidden states) can be made correct, and it still skips "
             "the history's Q, O and MLP. But every step must then re-project K and V for all T history positions "
             "in every layer, so the work per step grows with T (with B·T in a batch). And with GQA a hidden state "
             f"can take more memory than K and V: C values per token and layer against 2·H_kv·d_h ({_L3.d_model} "
             f"against {2 * _L3.n_kv_heads * _L3.head_dim} in Llama-3-8B). Without GQA it is half the size of K "
             f"and V ({_L7B.d_model} against {2 * _L7B.n_kv_heads * _L7B.head_dim} in Llama-2-7B): there it trades "
             "memory for compute.",
             "Cache per layer, shape [B, H_kv, T, d_h]: layer 0's K/V cannot stand in for layer 1's. k_proj and "
             "v_proj are a small part of a layer's weights (notebook 07 computes the share), so a hidden-state "
             "cache still skips most of a layer's work on the history; its costs are the re-projection, which "
             "grows with T (a single sequence's memory-bound step can hide part of it; a batch multiplies it by "
             "B), and, with GQA, memory."),
    # 08 · beyond the basics
    Question(8, "fill", f"A StaticKVCache for a model with L = {_TINY.n_layers}, H_kv = {_TINY.n_kv_heads}, "
             f"d_h = {_TINY.head_dim} is allocated for B = 1 and max_len = {_STATIC_LEN} positions in float32. How "
             "many bytes does it hold before any token is written?",
             lambda: _static_bytes(_STATIC_LEN),
             lambda: f"It is preallocated: 2 x {_TINY.n_layers} x 1 x {_TINY.n_kv_heads} x {_STATIC_LEN} x "
             f"{_TINY.head_dim} x 4 = {_static_bytes(_STATIC_LEN)} bytes from the start (StaticKVCache.nbytes), "
             "and it never grows."),
    Question(8, "fill", f"A sliding-window cache keeps the last W = {_WINDOW} positions. After {_FED} tokens, how "
             "many positions does each layer's cache hold?",
             lambda: _sliding_window(_WINDOW, _FED)[0],
             lambda: f"Older keys fall out of the window: min({_FED}, {_WINDOW}) = {_sliding_window(_WINDOW, _FED)[0]} "
             "(SlidingWindowKVCache.seq_len). Memory stays at W positions however long the text grows."),
    Question(8, "fill", f"The same sliding-window cache (W = {_WINDOW}, {_FED} tokens fed so far): what is the "
             "zero-based RoPE position of the next token?",
             lambda: _sliding_window(_WINDOW, _FED)[1],
             lambda: f"The position counts the tokens seen (n_seen = {_sliding_window(_WINDOW, _FED)[1]}), not the "
             f"positions stored ({_sliding_window(_WINDOW, _FED)[0]}): once a window or eviction drops old "
             "entries, the cache length is no longer the position."),
    Question(8, "truefalse", "Beam search with 4 beams keeps 4 rows of K/V per request, so it needs about 4 times "
             "the cache memory of greedy decoding.", True,
             "Each beam is a row of the batch (B = 4 in the sizing formula); the shared prompt could be stored "
             "once only with extra bookkeeping (prefix sharing)."),
]


def questions_for(*notebooks: int) -> list[Question]:
    """The questions tagged with any of ``notebooks`` (e.g. ``questions_for(3)`` after notebook 03)."""
    return [q for q in QUESTIONS if q.notebook in notebooks]
