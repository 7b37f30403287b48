"""The questions on the appendices, notebooks 10 to 13, in both languages.

Paged blocks and prefix caching, continuous batching, speculative decoding, a smaller KV cache: each
question is written once, its English and Chinese side by side (``ask``, ``bilingual.py``).

Numbers in the answers are computed by the package on first read (a real block table, a real scheduler
iteration, a real ``quantize`` output), not typed here.
"""
from __future__ import annotations

from functools import cache

from ..recompute import TOL
from .bilingual import ask
from .question import Question

_TABLE, _BLOCK, _TOKEN = [7, 2, 9], 16, 35  # a block table, the block size and a token of the request
_BUDGET, _CHUNK, _DECODING, _PROMPT = 64, 32, 10, 100  # one iteration of the serving engine
_ALPHA, _K = 0.5, 2  # a draft token's acceptance probability (independent) and the draft length
_D_H, _BITS = 128, 4  # per-token groups over d_h channels, 4-bit codes


@cache
def slot_of_token() -> int:
    """The pool slot holding token ``_TOKEN`` of a request whose block table is ``_TABLE``."""
    from ..block_pool import BlockPool
    from ..course_model import COURSE_CONFIG
    from ..paged import PagedKVCache

    pool = BlockPool(COURSE_CONFIG, max(_TABLE) + 1, _BLOCK)
    view = PagedKVCache.view(pool, [list(_TABLE)], [len(_TABLE) * _BLOCK])  # (1, 48) slots
    return int(view.slots[0, _TOKEN])


@cache
def chunk_this_iteration() -> int:
    """Prompt tokens the engine prefills for a waiting ``_PROMPT``-token request in an iteration where
    ``_DECODING`` requests decode, under ``max_batch_tokens=_BUDGET`` and ``prefill_chunk=_CHUNK``
    (the scheduler replayed without a model)."""
    from ..course_model import COURSE_CONFIG
    from ..serving import PagedEngine, StepCostModel

    engine = PagedEngine(COURSE_CONFIG, n_blocks=64, block_size=16, max_batch_tokens=_BUDGET, prefill_chunk=_CHUNK,
                         max_batch=_DECODING + 1, costs=StepCostModel(1e-3, 0.0, 0.0, 0.0))
    for _ in range(_DECODING):
        engine.add_request([1], 20)
    engine.step()  # the one-token prompts: each gets its first token, then they decode
    rid = engine.add_request([1] * _PROMPT, 5, arrival_time=engine.now)
    record = engine.step()
    if len(record["decode"]) != _DECODING:
        raise ValueError(f"expected {_DECODING} decoding requests, the iteration had {len(record['decode'])}")
    return dict(record["prefill"])[rid]


def expected_tokens_per_round(alpha: float, k: int) -> float:
    """Tokens a round of speculative decoding adds on average when each draft token is accepted with
    probability ``alpha`` independently: 1 + alpha + ... + alpha^k (the accepted prefix, then one more)."""
    return sum(alpha**i for i in range(k + 1))


@cache
def bits_per_value() -> float:
    """Bits per cached value of a 4-bit per-token group over d_h channels, float16 scale and minimum
    included (measured on a real ``quantize`` output)."""
    import torch

    from ..kv_quant import quantize

    codes, scale, lo = quantize(torch.randn(1, 1, 1, _D_H), _BITS, dim=3)
    return 8 * sum(t.numel() * t.element_size() for t in (codes, scale, lo)) / _D_H


def _slot_why() -> dict[str, str]:
    block, offset, slot = _TOKEN // _BLOCK, _TOKEN % _BLOCK, slot_of_token()
    return {"en": f"Token {_TOKEN} is in the request's block {block} (= {_TOKEN} // {_BLOCK}), which is pool block "
                  f"{_TABLE[block]}, at offset {offset}: slot {_TABLE[block]} × {_BLOCK} + {offset} = {slot} (read "
                  "from a real PagedKVCache's slots).",
            "zh": f"第 {_TOKEN} 个 token 落在请求的第 {block} 个块（{_TOKEN} // {_BLOCK}），也就是池里的 {_TABLE[block]} "
                  f"号块，块内偏移 {offset}：槽位 {_TABLE[block]} × {_BLOCK} + {offset} = {slot}（读自一个真实 "
                  "PagedKVCache 的 slots）。"}


def _chunk_why() -> dict[str, str]:
    left, chunk = _BUDGET - _DECODING, chunk_this_iteration()
    return {"en": f"Decode first: the {_DECODING} running requests take 1 token each, which leaves {left} of the "
                  f"{_BUDGET}. The prompt then gets min({_PROMPT}, prefill_chunk {_CHUNK}, {left}) = {chunk} tokens "
                  "(the engine's scheduler, replayed).",
            "zh": f"先排解码：{_DECODING} 个请求各占 1 个 token，{_BUDGET} 个 token 的预算还剩 {left} 个。提示词再拿 "
                  f"min({_PROMPT}, prefill_chunk {_CHUNK}, {left}) = {chunk} 个 token（由引擎的调度器回放得出）。"}


def _round_why() -> dict[str, str]:
    n = expected_tokens_per_round(_ALPHA, _K)
    powers = [f"{_ALPHA}" if i == 1 else f"{_ALPHA}^{i}" for i in range(1, _K + 1)]  # P(draft token i is kept)
    return {"en": f"Draft token i (i = 1..{_K}) is kept only if it and every draft before it are accepted: probability "
                  f"{_ALPHA}^i. So the accepted prefix is {' + '.join(powers)} tokens long on average, and the target "
                  f"always adds one token of its own: 1 + {' + '.join(powers)} = {n:g} tokens per target pass.",
            "zh": f"第 i 个草稿 token（i = 1..{_K}）只有在它和它前面的草稿全部被接受时才会留下，概率是 {_ALPHA}^i。所以被接受的"
                  f"前缀平均有 {' + '.join(powers)} 个 token，再加上目标模型自己总会补上的一个：1 + {' + '.join(powers)} = "
                  f"{n:g}，这就是目标模型每做一次前向计算平均得到的 token 数。"}


def _bits_why() -> dict[str, str]:
    bits = bits_per_value()
    return {"en": f"{_BITS} bits of code, plus 2 × 16 bits of scale and minimum shared by {_D_H} values: {_BITS} + "
                  f"32 / {_D_H} = {bits:g} (measured on utils.kv_quant.quantize's output).",
            "zh": f"{_BITS} 位量化码，加上 {_D_H} 个值共用的 2 × 16 位缩放系数和最小值：{_BITS} + 32 / {_D_H} = "
                  f"{bits:g}（在 utils.kv_quant.quantize 的输出上实测）。"}


APPENDIX: list[Question] = [
    # 10 · paged KV blocks and prefix caching
    ask(10, "fill",
        prompt={"en": f"A request's block table is {_TABLE} and blocks hold {_BLOCK} tokens. Which pool slot (block "
                      f"id × block size + offset) holds its token {_TOKEN} (0-based)?",
                "zh": f"某个请求的块表是 {_TABLE}，每个块放 {_BLOCK} 个 token。它的第 {_TOKEN} 个 token（从 0 开始计）存在池里的"
                      "哪个槽位（块编号 × 块大小 + 块内偏移）？"},
        answer=slot_of_token,
        why=_slot_why),
    ask(10, "truefalse",
        prompt={"en": "With prefix caching, a request whose whole prompt is already cached needs no forward pass "
                      "before its first new token.",
                "zh": "开启前缀缓存后，如果一个请求的整条提示词都已在缓存里，那么在得到第一个新 token 之前，它不需要做任何前向计算。"},
        answer=False,
        why={"en": "The cache holds K and V, not logits. The first new token needs the logits of the last prompt "
                   "token, so that token runs again (its K/V go into a private copy of the last block, since a shared "
                   "block is never written). Skipping the whole prompt is a bug teaching engines easily make.",
             "zh": "缓存里存的是 K 和 V，不是 logits。第一个新 token 要用最后一个提示词 token 的 logits，所以这个 token 必须再算一遍"
                   "（它的 K/V 写进最后一个块的私有副本，因为共享的块从不被写入）。跳过整条提示词，是教学用推理引擎很容易犯的 bug。"}),
    ask(10, "choice",
        prompt={"en": "Request A must write its next token into a partly filled block that request B also holds "
                      "(the block's reference count is 2). What does the paged cache do?",
                "zh": "请求 A 要把下一个 token 写进一个没写满、请求 B 也持有的块（引用计数为 2）。分页缓存会怎么做？"},
        options={"en": ("copy the block for A, then write into the copy", "write into the shared block",
                        "free B's reference first", "raise an error"),
                 "zh": ("先给 A 复制一份这个块，再写进副本", "直接写进共享块", "先释放 B 的引用", "报错")},
        answer=0,
        why={"en": "Copy-on-write: B keeps the block as it was, A gets its own copy with the same first tokens, and "
                   "the reference counts follow (beams share blocks this way).",
             "zh": "写时复制（copy-on-write）：B 持有的块保持原样，A 得到一份前面 token 相同的副本，引用计数随之更新"
                   "（束搜索的各条束就是这样共享块的）。"}),
    ask(10, "choice",
        prompt={"en": "Why is a block's prefix key a hash of its tokens chained with the previous block's key?",
                "zh": "为什么块键是把本块 token 和前一个块的键串起来再做哈希？"},
        options={"en": ("the same tokens after a different prefix have different K and V", "to use less memory",
                        "to avoid hash collisions", "because blocks are stored in order"),
                 "zh": ("同样的 token 接在不同前缀后面，K 和 V 也不同", "为了省内存", "为了避免哈希冲突", "因为块是按顺序存的")},
        answer=0,
        why={"en": "Attention mixes every earlier token into each K/V (and RoPE adds the position), so a block can "
                   "be reused only after the very same prefix.",
             "zh": "注意力会把前面所有 token 的信息混进每个位置的 K/V（RoPE 还带上了位置），所以只有前缀完全相同时块才能复用。"}),
    # 11 · continuous batching and chunked prefill
    ask(11, "fill",
        prompt={"en": f"The serving engine runs one iteration with max_batch_tokens = {_BUDGET} and prefill_chunk = "
                      f"{_CHUNK}. {_DECODING} requests are decoding and a {_PROMPT}-token prompt is waiting. How many "
                      "of its prompt tokens are prefilled in this iteration?",
                "zh": f"推理服务引擎跑一次迭代，max_batch_tokens = {_BUDGET}，prefill_chunk = {_CHUNK}。有 {_DECODING} "
                      f"个请求正在解码，一条 {_PROMPT} 个 token 的提示词在排队。这次迭代会预填充它的多少个提示词 token？"},
        answer=chunk_this_iteration, unit="tokens",
        why=_chunk_why),
    ask(11, "truefalse",
        prompt={"en": "Chunked prefill lowers the time to first token of the long prompt that is chunked.",
                "zh": "分块预填充能降低被分块的那条长提示词的首 token 延迟（TTFT）。"},
        answer=False,
        why={"en": "It raises it, by a clear factor in notebook 11's measurement (the cell prints it): the prompt is "
                   "spread over several iterations, and each of them pays a forward pass's fixed cost and shares the "
                   "token budget with the decodes. What chunking buys is a shorter stall for the requests already "
                   "decoding (their worst inter-token latency).",
             "zh": "不降反升，笔记本 11 实测它明显变长（倍数由那个单元格打印）：这条提示词被摊到好几次迭代里，每次迭代都要付一次前向计算的"
                   "固定开销，还要和解码共用 token 预算。分块换来的是正在解码的请求被卡住的时间更短（它们最长的 token 间延迟变小）。"}),
    ask(11, "choice",
        prompt={"en": "The block pool runs out while running requests decode. What does the engine of notebook 11 do?",
                "zh": "请求正在解码时块池用完了，笔记本 11 里的引擎会怎么做？"},
        options={"en": ("preempt the request admitted last and recompute it later", "drop the request",
                        "stop every request", "write the blocks to disk"),
                 "zh": ("抢占最后被接纳的请求，之后重算", "丢弃这个请求", "停掉所有请求", "把块写到磁盘")},
        answer=0,
        why={"en": "It gives that request's blocks back and puts it at the front of the queue; when it is admitted "
                   "again its prompt and the tokens it already produced are prefilled again, so its output does not "
                   "change.",
             "zh": "它把这个请求的块还给块池，把请求放回队首；再次被接纳时，提示词和已经生成的 token 会重新预填充，所以输出不变。"}),
    ask(11, "truefalse",
        prompt={"en": "Under continuous batching, every request gets the same greedy tokens as when it runs alone.",
                "zh": "在连续批处理下，每个请求得到的贪心 token 都和它单独运行时一样。"},
        answer=True,
        why={"en": "Batching changes when a request's tokens are computed, not what they are: notebook 11 checks "
                   "every request against its solo run, with chunks, joins, leaves and preemption.",
             "zh": "批处理改变的是请求的 token 什么时候算，而不是算出来是什么：笔记本 11 在分块、中途加入和离开、抢占的情况下，"
                   "把每个请求都和它单独运行的结果逐一做了对比。"}),
    # 12 · speculative decoding
    ask(12, "fill",
        prompt={"en": f"In speculative decoding each draft token is accepted with probability {_ALPHA} "
                      f"(independently) and the draft proposes k = {_K}. How many tokens does one round add on average?",
                "zh": f"推测解码中，每个草稿 token 被接受的概率是 {_ALPHA}（相互独立），草稿一次提出 k = {_K} 个。"
                      "平均每轮能新增几个 token？"},
        answer=lambda: expected_tokens_per_round(_ALPHA, _K), unit="tokens",
        why=_round_why),
    ask(12, "truefalse",
        prompt={"en": "Greedy speculative decoding can produce tokens that the target model alone would not.",
                "zh": "贪心的推测解码可能生成目标模型单独运行时不会生成的 token。"},
        answer=False,
        why={"en": "Every kept draft token equals the target's own argmax at that position, and the extra token is "
                   "the target's pick: the output is the target's greedy output (up to float rounding); the draft only "
                   "changes how many target passes it takes.",
             "zh": "被接受的每个草稿 token 都等于目标模型在该位置的 argmax，额外那个 token 也是目标模型选的：输出就是目标模型的贪心输出"
                   "（浮点舍入误差之内）。草稿只影响目标模型要做几次前向计算。"}),
    ask(12, "choice",
        prompt={"en": "The target refuses draft token 3 of 4. What must happen to the two KV caches before the next "
                      "round?",
                "zh": "目标模型拒绝了 4 个草稿 token 中的第 3 个。下一轮之前，两个 KV 缓存要怎么处理？"},
        options={"en": ("both are cropped back to the accepted tokens", "only the draft's cache is cropped",
                        "nothing: the next round overwrites them", "both caches are rebuilt from the prompt"),
                 "zh": ("都裁回到已接受的 token", "只裁草稿模型的缓存", "不用管：下一轮会覆盖它们", "都从提示词开始重建")},
        answer=0,
        why={"en": "Both caches hold K/V of draft tokens that are not part of the text any more (the target's for all "
                   "four, the draft's for those it ran). Left in the target's cache, they are attended to in the next "
                   "round and push every new token's position past them: notebook 12 shows the text drift from the "
                   "target's own run. Left in the draft's, they only make its proposals worse, so it is cropped too.",
             "zh": "两个缓存里都存着已经不属于文本的草稿 token 的 K/V（目标模型的缓存里四个都有，草稿模型的缓存里有它跑过的那几个）。"
                   "目标模型的缓存不裁，下一轮就会关注这些 K/V，新 token 的位置也会排到它们后面：笔记本 12 演示了输出随之偏离目标模型"
                   "自己的结果。草稿模型的缓存不裁，只会让它的提议变差，所以也一起裁掉。"}),
    ask(12, "choice",
        prompt={"en": "On this course's CPU, speculative decoding with the small draft can be slower than plain greedy "
                      "decoding. Why?",
                "zh": "在本课程的 CPU 上，用小草稿模型做推测解码可能比普通贪心解码还慢。为什么？"},
        options={"en": ("a draft pass still costs a large fraction of a target pass, and plain greedy decoding runs "
                        "the faster flat step",
                        "the target refuses most drafts, so nearly every round adds a single token",
                        "a target pass over k + 1 tokens costs about k + 1 times a pass over one",
                        "rolling a refused draft back recomputes the whole cache"),
                 "zh": ("草稿模型的一次前向计算仍要花掉目标模型的一大部分，而普通贪心解码用的是更快的扁平写法解码步",
                        "目标模型拒绝了大部分草稿，几乎每轮只新增一个 token",
                        "目标模型对 k + 1 个 token 做一次前向计算，开销约是只算一个 token 的 k + 1 倍",
                        "回滚被拒绝的草稿要重算整个缓存")},
        answer=0,
        why={"en": "A round costs k draft passes plus one target pass over k + 1 tokens. The speed-up needs draft passes "
                   "much cheaper than target passes (a large target on a GPU, whose decode pass is bound by reading the "
                   "weights, with a draft a few percent of its cost). On models this small a pass is mostly per-call "
                   "work, so notebook 12 measures a draft pass at a large fraction of a target pass, far above its share "
                   "of the parameters. The drafts are accepted often and a pass over k + 1 tokens costs little more "
                   "than one, yet the speculative loop runs the target module by module, while generate runs the flat "
                   "decode step: against it, speculation loses on this CPU.",
             "zh": "一轮的开销是草稿模型的 k 次前向计算，加上目标模型对 k + 1 个 token 的一次前向计算。要有加速，草稿模型的前向计算必须"
                   "比目标模型的便宜得多（比如 GPU 上的大目标模型：它的解码受限于读权重，草稿模型的开销只有它的百分之几）。这么小的模型，"
                   "一次前向计算主要是每次调用的开销，所以笔记本 12 实测草稿模型的一次前向计算占目标模型的一大部分，远高于它的参数占比。"
                   "草稿被接受得不算少，对 k + 1 个 token 做一次前向计算也只比算一个贵一点；但推测解码的循环逐个模块运行目标模型，"
                   "generate 用的却是扁平写法的解码步：在这台 CPU 上，推测解码比不过它。"}),
    # 13 · a smaller KV cache
    ask(13, "fill",
        prompt={"en": f"Values are quantized to {_BITS} bits in groups of d_h = {_D_H} channels (one group per token "
                      "and head), with a float16 scale and a float16 minimum per group. How many bits does one value "
                      "take on average?",
                "zh": f"把值量化成 {_BITS} 位，每组是 d_h = {_D_H} 个通道（每个 token 每个头一组），每组另存一个 float16 "
                      "缩放系数和一个 float16 最小值。平均每个值占多少位？"},
        answer=bits_per_value, unit="bits",
        why=_bits_why),
    ask(13, "truefalse",
        prompt={"en": "With attention sinks and a recent window, the next token's RoPE position is the number of "
                      "positions stored in the cache.",
                "zh": "缓存只保留注意力汇聚点和最近窗口时，下一个 token 的 RoPE 位置等于缓存里存的位置数。"},
        answer=False,
        why={"en": "It is the number of tokens seen. The kept keys were rotated at their own positions when they were "
                   "cached; a new token rotated at the cache's length would stand, for RoPE, before the recent keys "
                   "it attends to: the distances RoPE encodes would be wrong.",
             "zh": "它等于已经看过的 token 数。留下的键在写入缓存时已按各自的位置旋转过；如果按缓存长度去旋转新 token，"
                   "在 RoPE 看来它反而排在它要关注的最近那些键之前，RoPE 编码的距离就错了。"}),
    ask(13, "choice",
        prompt={"en": "Why does the KIVI recipe quantize keys per channel rather than per token?",
                "zh": "KIVI 为什么按通道而不是按 token 量化键？"},
        options={"en": ("a few key channels are much larger than the rest in every token", "keys are stored transposed",
                        "per-channel scales take fewer bytes", "values are never quantized"),
                 "zh": ("少数几个键通道在每个 token 里都比其他通道大得多", "键是转置存储的", "按通道的缩放系数占的字节更少", "值从不量化")},
        answer=0,
        why={"en": "Those outlier channels would stretch every token's scale and crush the small channels to a few "
                   "codes; a per-channel scale gives each channel its own range. Values have no such channels, so "
                   "they are quantized per token.",
             "zh": "这些离群通道会把每个 token 的缩放范围撑大，让小通道只剩下几个量化码可用；按通道设缩放系数，每个通道就有自己的范围。"
                   "值没有这样的通道，所以按 token 量化。"}),
    ask(13, "truefalse",
        prompt={"en": f"An 8-bit quantized KV cache gives the full-precision cache's logits within the course's "
                      f"tolerance {TOL:g}.",
                "zh": f"8 位量化的 KV 缓存给出的 logits 与全精度缓存相差在课程容差 {TOL:g} 以内。"},
        answer=False,
        why={"en": "Close, not exact: each value comes back within about half a quantization step (plus the float16 "
                   "rounding of the scale and the minimum), and no quantized setting gives back the exact logits. "
                   "Notebook 13 measures the logit difference, the greedy-match rate and the held-out loss: small at "
                   "8 bits, larger at 4.",
             "zh": "只是接近，并不精确：每个值读回来的误差大约在半个量化步长之内（另有缩放系数和最小值的 float16 舍入），任何量化设置"
                   "都给不出与精确缓存相同的 logits。笔记本 13 测了 logits 差值、贪心一致率和留出集损失：8 位时很小，4 位时更大。"}),
]
