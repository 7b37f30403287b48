"""The self-test of notebook 09: its question bank.

Every question (``utils.question.Question``) is tagged with the notebook (0-8) that teaches it.
Answers that are numbers or observations are computed with the course package
(``utils/quiz_numbers.py``: ``kv_cache_bytes``, a real prefill, ``utils.roofline``, the bug lab's
broken engines...), never typed. What needs torch is given as a function, run the first time the
question's answer or explanation is read: importing this module builds no model.

How a question is graded and printed (``question_sheet``, ``check_answer``, ``answer_key``) is
``utils/question.py``; the widget that asks the questions is ``utils.widgets.Quiz``.
"""
from __future__ import annotations

from . import quiz_numbers as N
from .config import ModelConfig
from .question import Question, format_answer, range_answers
from .question import answer_key, check_answer, question_sheet  # noqa: F401 (notebook 09 imports them from here)
from .quiz_appendix import APPENDIX
from .recompute import TOL
from .roofline import GPU_ROOFS
from .sizing import MODEL_PRESETS, cache_bytes_for, kv_bytes_per_token, kv_cache_bytes


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
_WINDOW, _FED, _QUERY_POS = 8, 11, 20

# The roofline questions: Llama-2-7B in float16 against the published GPU roofs.
_ROOF_MODEL, _BATCHES, _PREFILL_LEN, _LONG = "Llama-2-7B", (1, 8, 64), 512, 4096
_A100 = next(r for r in GPU_ROOFS if "A100" in r.name)
_H100 = next(r for r in GPU_ROOFS if "H100" in r.name)
_LAWS = {"about 1/B": lambda B: 1 / B, "about 1, whatever B": lambda B: 1.0, "about B": lambda B: float(B),
         "about B²": lambda B: float(B * B)}


def _decode_law_why() -> str:
    got = ", ".join(f"{x:.1f}" for x in N.decode_intensities(_ROOF_MODEL, _BATCHES, 1))
    return ("A decode step reads every weight once (2 bytes in float16) and uses it for one multiply-add (2 FLOPs) "
            f"per row: 2B FLOPs per 2 bytes. utils.roofline.decode_point on {_ROOF_MODEL} with a 1-token context "
            f"gives {got} FLOPs per byte at B = {', '.join(map(str, _BATCHES))}. Reading the K/V cache adds bytes "
            "that grow with the context, so a long context pulls it lower.")


_PREFILL_WHY = ("prefill uses each weight it reads for all T prompt tokens (about T FLOPs per byte); decode at B = 1 "
                "uses it for one token (about 1)")


def _prefill_vs_decode() -> tuple[str, str]:
    """(answer, explanation): the answer holds while the measured prefill lies above every GPU ridge, decode below."""
    prefill = N.prefill_intensity(_ROOF_MODEL, _PREFILL_LEN)
    decode = N.decode_intensities(_ROOF_MODEL, (1,), _PREFILL_LEN)[0]
    ridges = N.gpu_ridges()
    if not (decode < min(ridges.values()) and max(ridges.values()) < prefill):
        raise ValueError(f"prefill {prefill:.0f} and decode {decode:.1f} FLOPs/byte do not straddle the ridges {ridges}")
    listed = ", ".join(f"{ridge:.0f} ({name})" for name, ridge in ridges.items())
    return _PREFILL_WHY, (
        f"utils.roofline on {_ROOF_MODEL}, float16: a {_PREFILL_LEN}-token prefill does {prefill:.0f} FLOPs per byte, "
        f"a decode step at B = 1 {decode:.1f}. A GPU's ridge point, peak FLOP/s over bandwidth, is {listed} FLOPs per "
        "byte: prefill lies above it (the arithmetic units are the limit), decode far below (it waits on memory).")


def _long_context_why() -> str:
    x = ", ".join(f"{v:.1f}" for v in N.decode_intensities(_ROOF_MODEL, (64, 512, 4096), _LONG))
    kv_gib = cache_bytes_for(MODEL_PRESETS[_ROOF_MODEL], 1, _LONG, "float16") / 2**30
    return (f"Every row brings its own K/V to read: {format_answer(kv_gib)} GiB per row at {_LONG} tokens, while "
            f"the weights are read once for all rows. So the FLOPs per byte level off: {x} at B = 64, 512 and 4096, "
            f"below the H100's ridge of {_H100.ridge:.0f}; utils.roofline.ridge_batch finds no compute-bound batch up "
            f"to 4096. With a 1-token context it would be B = {N.ridge_batch_of(_ROOF_MODEL, 1, _H100.name)}.")


# The bug lab's bugs that leave the prefill intact, in the order of notebook 07's diagnosis vocabulary.
_BUG_OPTIONS = {"position": "position: the new token's position restarts at 0",
                "mask": "mask: the decode step's mask ignores the cached keys",
                "axis": "axis: new K/V concatenated on the heads axis (dim=1)",
                "layer0": "layer0: every layer attends over layer 0's cached K/V",
                "refeed": "refeed: the whole text is fed again on top of the cache"}
_CHECKED = (f"A decode engine is compared with a full recompute (tolerance {TOL:g}) on a T-token prompt. Step 0, "
            "the prefill, matches.")
_SEVERAL = "the prefill is right and decode is wrong; several bugs do this, so probe before naming one"


def _several_fit() -> str:
    steps = {w: ev.step for w, ev in N.bug_evidence().items()}
    if not all(s.endswith("step 1") for s in steps.values()):
        raise ValueError(f"not every bug of the list first fails at step 1: {steps}")
    return _SEVERAL


def _which_bug(observed: str, why: str, **evidence) -> Question:
    """A diagnosis: the symptom in words; the answer is the one bug whose measured evidence shows it all."""
    def explain() -> str:
        word = N.suspect(**evidence)
        others = [w for w in _BUG_OPTIONS if w != word]
        return (f"{why} Measured on a {N.PROMPT_LEN}-token prompt: {N.evidence_lines([word])}. "
                f"The other bugs: {N.evidence_lines(others)}.")

    return Question(7, "choice", f"{_CHECKED} {observed} Which bug is it?",
                    lambda: _BUG_OPTIONS[N.suspect(**evidence)], explain, options=tuple(_BUG_OPTIONS.values()))


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
    Question(2, "fill", f"A model with H = {N.TINY.n_heads}, H_kv = {N.TINY.n_kv_heads}, d_h = {N.TINY.head_dim} "
             "prefills B = 2 prompts of T = 7 tokens. What is the shape of layer 0's cached K? "
             "(write it like [1, 2, 3, 4])",
             lambda: (N.prefill_k_shape(2, 7),),
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
             "new token?", lambda: N.first_new_position(12),
             lambda: "The new token's position is the cache length: after prefilling 12 tokens the cache holds "
             f"{N.first_new_position(12)} positions, so RoPE rotates the new token as position "
             f"{N.first_new_position(12)}.", seed=True),
    Question(3, "truefalse", "In a decode step the single new query attends to every cached key (its mask row is "
             "all True).", N.decode_row_all_true, "The new token is the latest one, so every cached token lies in "
             "its past: causal_mask(1, 13), one query over 12 cached keys + itself, is all True."),
    Question(3, "choice", "How should cached logits be compared with full-recompute logits?",
             f"with a tolerance, e.g. max |diff| <= {TOL:g}",
             "Same weights, eval mode, dtype and positions give the same result up to float rounding: the sums "
             "run in a different order, so bit-for-bit equality is not expected. The bug lab uses this "
             "tolerance too, in float32.",
             options=("bit for bit (torch.equal)", f"with a tolerance, e.g. max |diff| <= {TOL:g}",
                      "only the argmax token must match", "they cannot be compared")),
    Question(3, "choice", "In float16, about how many FLOPs does a decode step of batch size B do per byte it reads, "
             "while the context is short (the weights are most of the bytes)?",
             lambda: N.closest_law(_LAWS, _ROOF_MODEL, _BATCHES), _decode_law_why, options=tuple(_LAWS)),
    Question(3, "choice", "Why is a prefill of a few hundred tokens compute-bound on a GPU, while a decode step at "
             "B = 1 is bandwidth-bound?",
             lambda: _prefill_vs_decode()[0], lambda: _prefill_vs_decode()[1],
             options=(_PREFILL_WHY, "prefill reads no weights, only the prompt's embeddings",
                      "decode reads the KV cache, and cache bytes are slower to read than weight bytes",
                      "prefill skips the causal mask, which saves memory traffic")),
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
             lambda: N.nucleus_size(_NUCLEUS_LOGITS, 0.8),
             lambda: "Top-p keeps the smallest set of most likely tokens whose probabilities reach p "
             f"(computed with filtered_probs: {N.nucleus_size(_NUCLEUS_LOGITS, 0.8)} tokens)."),
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
             lambda: N.tpot_ms(0.2, 1.0, 50), lambda: "TPOT counts the decode steps after the first token: "
             f"1000 ms / 50 tokens = {format_answer(N.tpot_ms(0.2, 1.0, 50))} ms. The 200 ms are the TTFT, "
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
    Question(6, "fill", f"An {_A100.name} does {_A100.peak_flops / 1e12:g} TFLOP/s (bf16, dense) and reads "
             f"{_A100.bandwidth / 1e12:g} TB/s from its memory. What is its ridge point in FLOPs per byte? (round to "
             "a whole number)",
             lambda: round(_A100.ridge),
             lambda: f"Ridge = peak FLOP/s / bandwidth = {_A100.peak_flops:.4g} / {_A100.bandwidth:.4g} = "
             f"{_A100.ridge:.1f} FLOPs per byte (source: {_A100.source}). A step that does fewer FLOPs per byte "
             "it moves waits on memory; a decode step at batch B does about B."),
    Question(6, "truefalse", f"{_ROOF_MODEL} ({MODEL_PRESETS[_ROOF_MODEL].attention_kind}), float16, a context of "
             f"{_LONG} tokens per row: on an {_H100.name}, a large enough batch makes the decode step compute-bound.",
             lambda: N.ridge_batch_of(_ROOF_MODEL, _LONG, _H100.name) is not None, _long_context_why),
    # 07 · bug lab
    Question(7, "choice", f"Cached logits match recompute (within {TOL:g}) after prefill but diverge from the first "
             "decode step on. What does that tell you?",
             _several_fit,
             lambda: "The prefill's logits are right; what goes wrong is how decode uses the cache. Bugs of this kind "
             "leave step 0 intact, and several look alike in the logits. Measured on the quiz's model: "
             f"{N.evidence_lines()}. The cache length, layer 0's new key and the first layer that differs tell them "
             f"apart (notebook 07's mysteries); a correct cache stays within {TOL:g}.",
             options=("decode restarts the position ids at 0: this symptom names that bug", _SEVERAL,
                      f"nothing: float32 rounding alone often exceeds {TOL:g}",
                      "use_cache changed the weights between the two runs")),
    Question(7, "truefalse", "Setting use_cache=False changes the model's parameters.", False,
             "use_cache only decides whether past K/V are stored and reused; the weights are the same and the "
             f"logits agree within the course's tolerance ({TOL:g}): float rounding, not a change of parameters."),
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
    _which_bug("From step 1 on the logits diverge, and after the first decode step cache.seq_len is 2T + 1 "
               "instead of T + 1.",
               "Feeding the whole text again appends T + 1 positions at the first step: the history is cached twice.",
               step="step 1", seq_len="2T + 1"),
    _which_bug("The first decode step raises a RuntimeError inside cache.update, and cache.seq_len still reads T.",
               "Concatenating on dim=1 (the heads) fails as soon as the new token's time length differs from the "
               "cache's, and seq_len, read on dim 2, never grows.",
               step="raises at step 1", seq_len="T"),
    _which_bug("Step 1 diverges; cache.seq_len is T + 1, as it should be, but layer 0's newly cached key differs "
               "from the key a full prefill computes at that position, although the token is the same.",
               "Layer 0's key depends only on the token and its position: with the same token, a different key "
               "means a different RoPE position.",
               step="step 1", seq_len="T + 1", new_key="differs"),
    _which_bug("Step 1 diverges; cache.seq_len is T + 1 and layer 0's newly cached key matches a full prefill's, "
               "yet layer 0's output for the new token already differs from the recompute's.",
               "Right keys in layer 0 and a wrong output there: the new query attends over the wrong keys, which "
               "is what its mask decides.",
               step="step 1", seq_len="T + 1", new_key="matches", first_layer=0),
    _which_bug("Step 1 diverges; cache.seq_len is T + 1 and layer 0's output for the new token matches the "
               "recompute's: layer 1's is the first that differs.",
               "Layer 0 is right and layer 1 is not: layer 1 reads a history that is not its own.",
               step="step 1", seq_len="T + 1", first_layer=1),
    # 08 · beyond the basics
    Question(8, "fill", f"A StaticKVCache for a model with L = {N.TINY.n_layers}, H_kv = {N.TINY.n_kv_heads}, "
             f"d_h = {N.TINY.head_dim} is allocated for B = 1 and max_len = {_STATIC_LEN} positions in float32. How "
             "many bytes does it hold before any token is written?",
             lambda: N.static_bytes(_STATIC_LEN),
             lambda: f"It is preallocated: 2 x {N.TINY.n_layers} x 1 x {N.TINY.n_kv_heads} x {_STATIC_LEN} x "
             f"{N.TINY.head_dim} x 4 = {N.static_bytes(_STATIC_LEN)} bytes from the start (StaticKVCache.nbytes), "
             "and it never grows."),
    Question(8, "fill", f"A sliding-window cache keeps the last W = {_WINDOW} positions. After {_FED} tokens, how "
             "many positions does each layer's cache hold?",
             lambda: N.sliding_window(_WINDOW, _FED)[0],
             lambda: f"Older keys fall out of the window: min({_FED}, {_WINDOW}) = {N.sliding_window(_WINDOW, _FED)[0]} "
             "(SlidingWindowKVCache.seq_len). Memory stays at W positions however long the text grows."),
    Question(8, "fill", f"The same sliding-window cache (W = {_WINDOW}, {_FED} tokens fed so far): what is the "
             "zero-based RoPE position of the next token?",
             lambda: N.sliding_window(_WINDOW, _FED)[1],
             lambda: f"The position counts the tokens seen (n_seen = {N.sliding_window(_WINDOW, _FED)[1]}), not the "
             f"positions stored ({N.sliding_window(_WINDOW, _FED)[0]}): once a window or eviction drops old "
             "entries, the cache length is no longer the position."),
    Question(8, "fill", f"Sliding-window attention with W = {_WINDOW}: which positions does the query at position "
             f"{_QUERY_POS} attend to? (write first..last, e.g. 3..9)",
             lambda: range_answers(N.window_span(_WINDOW, _QUERY_POS)),
             lambda: f"The query at position p sees p - W + 1 .. p, itself included: "
             f"{N.window_span(_WINDOW, _QUERY_POS)} (its row of band_mask). That is W = {_WINDOW} keys however long "
             "the text grows, and all a sliding-window cache must keep."),
    Question(8, "choice", f"The same cache (W = {_WINDOW}, {_FED} tokens fed: the window is full) decodes one more "
             "token. Which positions do the keys it attends to cover?",
             lambda: N.next_token_span(_WINDOW, _FED)[1],
             lambda: f"The new token's position is the number of tokens seen, {N.next_token_span(_WINDOW, _FED)[0]}. "
             f"Its own key joins the window and the oldest, position {_FED - _WINDOW}, drops out: keys "
             f"{N.next_token_span(_WINDOW, _FED)[1]}, still W = {_WINDOW} of them. The cache's slots 0..{_WINDOW - 1} "
             "are storage places, not positions.",
             options=(f"{_FED - _WINDOW}..{_FED - 1}", f"{_FED - _WINDOW + 1}..{_FED}", f"0..{_WINDOW - 1}",
                      f"0..{_FED}")),
    Question(8, "truefalse", "Beam search with 4 beams keeps 4 rows of K/V per request, so it needs about 4 times "
             "the cache memory of greedy decoding.", True,
             "Each beam is a row of the batch (B = 4 in the sizing formula); the shared prompt could be stored "
             "once only with extra bookkeeping (prefix sharing)."),
]

QUESTIONS += APPENDIX  # the appendices, notebooks 10 to 13 (utils/quiz_appendix.py)

def questions_for(*notebooks: int) -> list[Question]:
    """The questions tagged with any of ``notebooks`` (e.g. ``questions_for(3)`` after notebook 03)."""
    return [q for q in QUESTIONS if q.notebook in notebooks]
