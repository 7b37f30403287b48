"""The questions on notebooks 07 and 08 (the bug lab, beyond the basics), in both languages.

Each is written once, its English and Chinese side by side (``ask``, ``bilingual.py``).

The diagnoses' answers and evidence are measured on first read (``numbers.py``): the bug lab's broken
engines probed on a tiny model; so are a real ``StaticKVCache`` and ``SlidingWindowKVCache``.
"""
from __future__ import annotations

from ..recompute import TOL
from . import numbers as N
from .bilingual import LANGUAGES, ask
from .question import Question, range_answers
from .snippet import run_snippet, snippet_text

_L7B, _L3 = N.LLAMA2, N.LLAMA3
_STATIC_LEN = 32
_WINDOW, _FED, _QUERY_POS = 8, 11, 20
_SPANS = (f"{_FED - _WINDOW}..{_FED - 1}", f"{_FED - _WINDOW + 1}..{_FED}", f"0..{_WINDOW - 1}", f"0..{_FED}")


# The bug lab's bugs that leave the prefill intact, in the order of notebook 07's diagnosis vocabulary.
_BUGS = {"position": {"en": "position: the new token's position restarts at 0", "zh": "position：新 token 的位置从 0 重新开始"},
         "mask": {"en": "mask: the decode step's mask ignores the cached keys", "zh": "mask：解码步的掩码忽略了缓存中的键"},
         "axis": {"en": "axis: new K/V concatenated on the heads axis (dim=1)", "zh": "axis：新的 K/V 沿头维（第 1 维）拼接"},
         "layer0": {"en": "layer0: every layer attends over layer 0's cached K/V",
                    "zh": "layer0：每一层都拿第 0 层缓存的 K/V 做注意力"},
         "refeed": {"en": "refeed: the whole text is fed again on top of the cache",
                    "zh": "refeed：在缓存之上又把整段文本重新送入一遍"}}
_BUG_OPTIONS = {lang: tuple(bug[lang] for bug in _BUGS.values()) for lang in LANGUAGES}
_CHECKED = {"en": f"A decode engine is compared with a full recompute (tolerance {TOL:g}) on a T-token prompt. Step 0, "
                  "the prefill, matches.",
            "zh": f"把一个解码引擎与完全重算逐步比较（容差 {TOL:g}），提示词有 T 个 token。第 0 步（预填充）一致。"}
_SEVERAL = {"en": "the prefill is right and decode is wrong; several bugs do this, so probe before naming one",
            "zh": "预填充是对的，解码出了错；好几种 bug 都会这样，先探查，再下结论"}


_FIRST_STEP_OPTIONS = {"en": ("decode restarts the position ids at 0: this symptom names that bug", _SEVERAL["en"],
                              f"nothing: float32 rounding alone often exceeds {TOL:g}",
                              "use_cache changed the weights between the two runs"),
                       "zh": ("解码时位置编号从 0 重新计数：这个症状指的就是这个 bug", _SEVERAL["zh"],
                              f"说明不了什么：单是 float32 的舍入误差就常常超过 {TOL:g}", "两次运行之间 use_cache 改变了权重")}


def _several_fit() -> int:
    """The index of the option "several bugs do this", once every bug of the list first fails at step 1."""
    steps = {w: ev.step for w, ev in N.bug_evidence().items()}
    if not all(s.endswith("step 1") for s in steps.values()):
        raise ValueError(f"not every bug of the list first fails at step 1: {steps}")
    return _FIRST_STEP_OPTIONS["en"].index(_SEVERAL["en"])


def _several_why() -> dict[str, str]:
    words = list(_BUGS)
    names = {"en": f"{', '.join(words[:-1])} and {words[-1]}", "zh": "、".join(words)}
    _several_fit()  # raises unless every one of them first fails at step 1
    return {"en": "The prefill's logits are right; what goes wrong is how decode uses the cache. Bugs of this kind "
                  "leave step 0 intact, and several look alike in the logits: measured on the quiz's model, "
                  f"{names['en']} all first go wrong at step 1. More evidence tells them apart (the diagnoses below "
                  f"ask for it, as notebook 07's mysteries do); a correct cache stays within {TOL:g}.",
            "zh": "预填充的 logits 是对的；出错的是解码使用缓存的方式。这类 bug 不影响第 0 步，而且在 logits 上看起来都差不多："
                  f"在测验用的小模型上实测，{names['zh']} 都是从第 1 步起出错。要靠更多证据才能把它们区分开（后面的诊断题"
                  f"和笔记本 07 的谜题一样，会给出这些证据）；正确的缓存始终在 {TOL:g} 以内。"}


def _which_bug(observed: dict, why: dict, **evidence) -> Question:
    """A diagnosis: the symptom in words; the answer is the one bug whose measured evidence shows it all."""
    def explain() -> dict[str, str]:
        mine = N.evidence_lines([N.suspect(**evidence)])  # this bug's only: the others answer the other diagnoses
        return {"en": f"{why['en']} Measured on a {N.PROMPT_LEN}-token prompt: {mine['en']}.",
                "zh": f"{why['zh']}在 {N.PROMPT_LEN} 个 token 的提示词上实测：{mine['zh']}。"}

    return ask(7, "choice", prompt={"en": f"{_CHECKED['en']} {observed['en']} Which bug is it?",
                                    "zh": f"{_CHECKED['zh']}{observed['zh']}是哪个 bug？"},
               options=_BUG_OPTIONS, answer=lambda: list(_BUGS).index(N.suspect(**evidence)), why=explain)


def _static_why() -> dict[str, str]:
    n = N.static_bytes(_STATIC_LEN)
    t = N.TINY
    return {"en": f"It is preallocated: 2 x {t.n_layers} x 1 x {t.n_kv_heads} x {_STATIC_LEN} x {t.head_dim} x 4 = "
                  f"{n} bytes from the start (StaticKVCache.nbytes), and it never grows.",
            "zh": f"它是预先分配的：2 × {t.n_layers} × 1 × {t.n_kv_heads} × {_STATIC_LEN} × {t.head_dim} × 4 = "
                  f"{n} 字节，从一开始就占着（StaticKVCache.nbytes），而且永远不会增长。"}


def _held_why() -> dict[str, str]:
    held = N.sliding_window(_WINDOW, _FED)[0]
    return {"en": f"Older keys fall out of the window: min({_FED}, {_WINDOW}) = {held} (SlidingWindowKVCache.seq_len). "
                  "Memory stays at W positions however long the text grows.",
            "zh": f"较早的键会滑出窗口：min({_FED}, {_WINDOW}) = {held}（SlidingWindowKVCache.seq_len）。无论文本多长，"
                  "缓存都只占 W 个位置的内存。"}


def _next_position_why() -> dict[str, str]:
    held, seen = N.sliding_window(_WINDOW, _FED)
    return {"en": f"The position counts the tokens seen (n_seen = {seen}), not the positions stored ({held}): once a "
                  "window or eviction drops old entries, the cache length is no longer the position.",
            "zh": f"位置按见过的 token 数来算（n_seen = {seen}），而不是按缓存里存的位置数（{held}）：一旦滑动窗口或淘汰丢掉了"
                  "旧条目，缓存长度就不再等于位置。"}


def _span_why() -> dict[str, str]:
    span = N.window_span(_WINDOW, _QUERY_POS)
    return {"en": f"The query at position p sees p - W + 1 .. p, itself included: {span} (its row of band_mask). "
                  f"That is W = {_WINDOW} keys however long the text grows, and all a sliding-window cache must keep.",
            "zh": f"位置 p 上的查询看到 p - W + 1 .. p，包括它自己：{span}（band_mask 中它的那一行）。无论文本多长都是 "
                  f"W = {_WINDOW} 个键，这也正是滑动窗口缓存需要保留的全部内容。"}


def _next_span_why() -> dict[str, str]:
    position, span = N.next_token_span(_WINDOW, _FED)
    return {"en": f"The new token's position is the number of tokens seen, {position}. Its own key joins the window "
                  f"and the oldest, position {_FED - _WINDOW}, drops out: keys {span}, still W = {_WINDOW} of them. "
                  f"The cache's slots 0..{_WINDOW - 1} are storage places, not positions.",
            "zh": f"新 token 的位置是见过的 token 数，{position}。它自己的键进入窗口，最旧的位置 {_FED - _WINDOW} 滑出："
                  f"键覆盖 {span}，仍然是 W = {_WINDOW} 个。缓存的槽位 0..{_WINDOW - 1} 只是存储槽，不是 token 的位置。"}


def _reorder_code():
    import torch
    from utils.cache import KVCache

    cache = KVCache()
    k = torch.tensor([0.0, 1.0, 2.0, 3.0]).view(4, 1, 1, 1)
    cache.update(0, k, k)
    cache.reorder(torch.tensor([2, 2, 0, 1]))
    return cache.layer_kv(0)[0].flatten().tolist()


_REORDER_CODE = snippet_text(_reorder_code)  # the code the question shows


def _reorder_why() -> dict[str, str]:
    got = run_snippet(_reorder_code)
    return {"en": f"It gives {got}: new row i is a copy of old row parents[i], in every layer, K and V alike. Beam 2's "
                  "history now fills two rows, and beam 3, which has no child, is gone. Without the reorder, row 1 "
                  "would keep beam 1's history under a token chosen to follow beam 2's: it would attend over another "
                  "beam's past.",
            "zh": f"结果是 {got}：新的第 i 行复制自旧的第 parents[i] 行，每一层都是，K 和 V 都一样。2 号束的历史现在占了两行，"
                  "没有后代的 3 号束消失了。不重排的话，第 1 行会留着 1 号束的历史，却接上一个按 2 号束选出的 token："
                  "它会去关注另一条束的过去。"}


BUG_LAB_AND_BEYOND: list[Question] = [
    # 07 · bug lab
    ask(7, "choice",
        prompt={"en": f"Cached logits match recompute (within {TOL:g}) after prefill but diverge from the first decode "
                      "step on. What does that tell you?",
                "zh": f"预填充之后，带缓存的 logits 与重算一致（差值在 {TOL:g} 以内），但从第一个解码步起就出现偏差。"
                      "这说明什么？"},
        options=_FIRST_STEP_OPTIONS,
        answer=_several_fit,
        why=_several_why),
    ask(7, "choice",
        prompt={"en": "Greedy generate with use_cache=True and with use_cache=False gives the same first 6 tokens, "
                      f"then a different token 7. At every step, token 7's included, the two runs' logits agree within "
                      f"{TOL:g}; at token 7 the two highest logits are closer together than that. What happened?",
                "zh": "贪心 generate 分别用 use_cache=True 和 use_cache=False 运行，前 6 个 token 相同，第 7 个不同。每一步（包括第 7 个"
                      f" token）两次运行的 logits 都相差在 {TOL:g} 以内；而在第 7 个 token 上，最高的两个 logits 之间的差距比这还小。"
                      "这是怎么回事？"},
        options={"en": ("float rounding flipped a near-tie: no bug, and no parameter changed",
                        "use_cache=False changed the model's parameters",
                        "the cache is buggy: a correct cache gives bit-identical logits",
                        "greedy decoding draws at random among the top tokens"),
                 "zh": ("浮点舍入让一对几乎相等的 logits 换了先后：既没有 bug，参数也没变", "use_cache=False 改变了模型的参数",
                        "缓存有 bug：正确的缓存给出逐位相同的 logits", "贪心解码会在最靠前的几个 token 里随机抽取")},
        answer=0,
        why={"en": "use_cache only decides whether past K/V are stored and reused; the weights are the same. The two "
                   "runs add the same products in a different order, so their logits differ by float rounding (within "
                   f"{TOL:g}, the course's tolerance). Where the top two logits are closer than that, the argmax can "
                   "flip; from there the texts differ because their inputs differ. A bug shows as a difference beyond "
                   "the tolerance, usually from step 1 on (notebook 07).",
             "zh": "use_cache 只决定是否保存并复用过去的 K/V，权重不变。两次运行把同样的乘积按不同的顺序相加，所以 logits 只差浮点舍入"
                   f"（在课程的容差 {TOL:g} 以内）。最高的两个 logits 比这还接近时，argmax 就可能换人；从那以后，两段文本的输入"
                   "不同了，结果自然也不同。bug 的表现是超出容差的差异，通常从第 1 步就开始（见笔记本 07）。"}),
    ask(7, "fill", code=_REORDER_CODE,
        prompt={"en": "Run this, predict, then check: four beams, one cache row each, and row b holds the value b. "
                      "After a beam-search step the surviving beams' parents are [2, 2, 0, 1]. What does the last line "
                      "give? (write the list)",
                "zh": "先预测，再检查，最后自己运行：四条束，每条占缓存的一行，第 b 行的值是 b。束搜索的一步之后，留下来的束的父束是 "
                      "[2, 2, 0, 1]。最后一行的结果是什么？（写出整个列表）"},
        answer=lambda: str(run_snippet(_reorder_code)),
        why=_reorder_why),
    ask(7, "open",
        prompt={"en": "What goes wrong if you cache each layer's hidden states (or layer 0's K/V) instead of each "
                      "layer's own K and V?",
                "zh": "如果缓存的是每一层的隐藏状态（或第 0 层的 K/V），而不是每一层自己的 K 和 V，会出什么问题？"},
        answer={"en": "Each layer computes K and V from its own input with its own weights, so layer 0's K/V are wrong "
                      "for layer 1. Caching each layer's input (its hidden states) can be made correct, and it still "
                      "skips the history's Q, O and MLP. But every step must then re-project K and V for all T history "
                      "positions in every layer, so the work per step grows with T (with B·T in a batch). And with GQA "
                      "a hidden state can take more memory than K and V: C values per token and layer against "
                      f"2·H_kv·d_h ({_L3.d_model} against {2 * _L3.n_kv_heads * _L3.head_dim} in Llama-3-8B). Without "
                      f"GQA it is half the size of K and V ({_L7B.d_model} against "
                      f"{2 * _L7B.n_kv_heads * _L7B.head_dim} in Llama-2-7B): there it trades memory for compute.",
                "zh": "每一层都用自己的输入和自己的权重算 K 和 V，所以第 0 层的 K/V 对第 1 层来说是错的。缓存每一层的输入（它的隐藏状态）"
                      "可以做到正确，而且仍然省掉了历史的 Q、O 和 MLP。但这样每一步都要在每一层为全部 T 个历史位置重新投影 K 和 V，"
                      "每步的工作量随 T 增长（在批中随 B·T 增长）。而且在 GQA 下，隐藏状态可能比 K 和 V 更占内存：每个 token 每层 C 个值，"
                      f"对比 2·H_kv·d_h 个（Llama-3-8B 中是 {_L3.d_model} 对 {2 * _L3.n_kv_heads * _L3.head_dim}）。没有 GQA 时，"
                      f"它只有 K 和 V 的一半大（Llama-2-7B 中是 {_L7B.d_model} 对 {2 * _L7B.n_kv_heads * _L7B.head_dim}）："
                      "这时它是拿计算换内存。"},
        why={"en": "Cache per layer, shape [B, H_kv, T, d_h]: layer 0's K/V cannot stand in for layer 1's. k_proj and "
                   "v_proj are a small part of a layer's weights (notebook 07 computes the share), so a hidden-state "
                   "cache still skips most of a layer's work on the history; its costs are the re-projection, which "
                   "grows with T (a single sequence's memory-bound step can hide part of it; a batch multiplies it by "
                   "B), and, with GQA, memory.",
             "zh": "每一层缓存自己的 K/V，形状 [B, H_kv, T, d_h]：第 0 层的 K/V 代替不了第 1 层的。k_proj 和 v_proj 只占一层权重的"
                   "一小部分（笔记本 07 算了这个比例），所以隐藏状态缓存仍能省掉一层在历史上的大部分计算；它的代价一是随 T 增长的"
                   "重新投影（单条序列的访存受限步能掩盖其中一部分；批处理则把它乘以 B），二是在 GQA 下的内存。"}),
    _which_bug({"en": "From step 1 on the logits diverge, and after the first decode step cache.seq_len is 2T + 1 "
                      "instead of T + 1.",
                "zh": "从第 1 步起 logits 出现偏差，第一个解码步之后 cache.seq_len 是 2T + 1，而不是 T + 1。"},
               {"en": "Feeding the whole text again appends T + 1 positions at the first step: the history is cached "
                      "twice.",
                "zh": "把整段文本重新送入，会在第一步追加 T + 1 个位置：历史被缓存了两遍。"},
               step="step 1", seq_len="2T + 1"),
    _which_bug({"en": "The first decode step raises a RuntimeError inside cache.update, and cache.seq_len still reads T.",
                "zh": "第一个解码步在 cache.update 内部抛出 RuntimeError，而 cache.seq_len 仍然是 T。"},
               {"en": "Concatenating on dim=1 (the heads) fails as soon as the new token's time length differs from "
                      "the cache's, and seq_len, read on dim 2, never grows.",
                "zh": "沿 dim=1（头维）拼接，只要新 token 的时间长度和缓存的不同就会失败；而 seq_len 是从第 2 维读的，永远不会增长。"},
               step="raises at step 1", seq_len="T"),
    _which_bug({"en": "Step 1 diverges; cache.seq_len is T + 1, as it should be, but layer 0's newly cached key "
                      "differs from the key a full prefill computes at that position, although the token is the same.",
                "zh": "第 1 步出现偏差；cache.seq_len 是 T + 1，符合预期，但第 0 层新缓存的键和完整预填充在该位置算出的键不同，"
                      "尽管 token 是同一个。"},
               {"en": "Layer 0's key depends only on the token and its position: with the same token, a different key "
                      "means a different RoPE position.",
                "zh": "第 0 层的键只取决于 token 和它的位置：token 相同而键不同，说明 RoPE 位置不同。"},
               step="step 1", seq_len="T + 1", new_key="differs"),
    _which_bug({"en": "Step 1 diverges; cache.seq_len is T + 1 and layer 0's newly cached key matches a full "
                      "prefill's, yet layer 0's output for the new token already differs from the recompute's.",
                "zh": "第 1 步出现偏差；cache.seq_len 是 T + 1，第 0 层新缓存的键和完整预填充的一致，但第 0 层对新 token 的输出"
                      "已经和重算的不同。"},
               {"en": "Right keys in layer 0 and a wrong output there: the new query attends over the wrong keys, "
                      "which is what its mask decides.",
                "zh": "第 0 层的键是对的，输出却错了：新查询关注了错误的键，而关注哪些键由它的掩码决定。"},
               step="step 1", seq_len="T + 1", new_key="matches", first_layer=0),
    _which_bug({"en": "Step 1 diverges; cache.seq_len is T + 1 and layer 0's output for the new token matches the "
                      "recompute's: layer 1's is the first that differs.",
                "zh": "第 1 步出现偏差；cache.seq_len 是 T + 1，第 0 层对新 token 的输出和重算的一致：第一个不同的是第 1 层。"},
               {"en": "Layer 0 is right and layer 1 is not: layer 1 reads a history that is not its own.",
                "zh": "第 0 层对、第 1 层错：第 1 层读到的历史不是它自己的。"},
               step="step 1", seq_len="T + 1", first_layer=1),
    # 08 · beyond the basics
    ask(8, "fill",
        prompt={"en": f"A StaticKVCache for a model with L = {N.TINY.n_layers}, H_kv = {N.TINY.n_kv_heads}, "
                      f"d_h = {N.TINY.head_dim} is allocated for B = 1 and max_len = {_STATIC_LEN} positions in "
                      "float32. How many bytes does it hold before any token is written?",
                "zh": f"为一个 L = {N.TINY.n_layers}、H_kv = {N.TINY.n_kv_heads}、d_h = {N.TINY.head_dim} 的模型分配一个 "
                      f"StaticKVCache，B = 1，max_len = {_STATIC_LEN} 个位置，float32。还没写入任何 token 时，它占多少字节？"},
        answer=lambda: N.static_bytes(_STATIC_LEN), unit="bytes",
        why=_static_why),
    ask(8, "fill",
        prompt={"en": f"A sliding-window cache keeps the last W = {_WINDOW} positions. After {_FED} tokens, how many "
                      "positions does each layer's cache hold?",
                "zh": f"一个滑动窗口缓存保留最近 W = {_WINDOW} 个位置。送入 {_FED} 个 token 之后，每层缓存里有几个位置？"},
        answer=lambda: N.sliding_window(_WINDOW, _FED)[0], unit="positions",
        why=_held_why),
    ask(8, "fill",
        prompt={"en": f"The same sliding-window cache (W = {_WINDOW}, {_FED} tokens fed so far): what is the "
                      "zero-based RoPE position of the next token?",
                "zh": f"同一个滑动窗口缓存（W = {_WINDOW}，目前已送入 {_FED} 个 token）：下一个 token 的 RoPE 位置"
                      "（从 0 开始计）是多少？"},
        answer=lambda: N.sliding_window(_WINDOW, _FED)[1],
        why=_next_position_why),
    ask(8, "fill",
        prompt={"en": f"Sliding-window attention with W = {_WINDOW}: which positions does the query at position "
                      f"{_QUERY_POS} attend to? (write first..last, e.g. 3..9)",
                "zh": f"W = {_WINDOW} 的滑动窗口注意力：位置 {_QUERY_POS} 上的查询关注哪些位置？（写成“起..止”，例如 3..9）"},
        answer=lambda: range_answers(N.window_span(_WINDOW, _QUERY_POS)),
        why=_span_why),
    ask(8, "choice",
        prompt={"en": f"The same cache (W = {_WINDOW}, {_FED} tokens fed: the window is full) decodes one more token. "
                      "Which positions do the keys it attends to cover?",
                "zh": f"同一个缓存（W = {_WINDOW}，已送入 {_FED} 个 token，窗口已满）再解码一个 token。它关注的键覆盖哪些位置？"},
        options={"en": _SPANS, "zh": _SPANS},
        answer=lambda: _SPANS.index(N.next_token_span(_WINDOW, _FED)[1]),
        why=_next_span_why),
    ask(8, "truefalse",
        prompt={"en": "On notebook 08's cache, one row per beam, beam search with 4 beams needs about 4 times the cache "
                      "memory of greedy decoding.",
                "zh": "在笔记本 08 的缓存上（每条束占一行），4 条束的束搜索需要的缓存内存大约是贪心解码的 4 倍。"},
        answer=True,
        why={"en": "Each beam is a row of the batch, holding the whole history, prompt included (B = 4 in the sizing "
                   "formula). A paged cache can do better: beams share the prompt's blocks and copy a block only when "
                   "they write into it (copy-on-write, appendix 10).",
             "zh": "每条束是批中的一行，存着包括提示词在内的全部历史（在缓存大小公式里 B = 4）。分页缓存可以做得更好：各条束共享提示词的块，"
                   "只在要写入某个块时才复制它（写时复制，见附录 10）。"}),
]
