"""The self-test's questions on the appendices (notebooks 10 and 11), in English and in Chinese.

``APPENDIX`` joins ``utils.quiz.QUESTIONS`` and ``APPENDIX_ZH`` joins ``utils.quiz_zh.ZH``, at the same
positions. Numbers in the answers are computed by the package (a real block table, a real scheduler
iteration), not typed here.
"""
from __future__ import annotations

from functools import cache

from .question import Question

_TABLE, _BLOCK, _TOKEN = [7, 2, 9], 16, 35  # a block table, the block size and a token of the request
_BUDGET, _CHUNK, _DECODING, _PROMPT = 64, 32, 10, 100  # one iteration of the serving engine


@cache
def slot_of_token() -> int:
    """The pool slot holding token ``_TOKEN`` of a request whose block table is ``_TABLE``."""
    from .block_pool import BlockPool
    from .course_model import COURSE_CONFIG
    from .paged import PagedKVCache

    pool = BlockPool(COURSE_CONFIG, max(_TABLE) + 1, _BLOCK)
    view = PagedKVCache.view(pool, [list(_TABLE)], [len(_TABLE) * _BLOCK])  # (1, 48) slots
    return int(view.slots[0, _TOKEN])


@cache
def chunk_this_iteration() -> int:
    """Prompt tokens the engine prefills for a waiting ``_PROMPT``-token request in an iteration where
    ``_DECODING`` requests decode, under ``max_batch_tokens=_BUDGET`` and ``prefill_chunk=_CHUNK``
    (the scheduler replayed without a model)."""
    from .course_model import COURSE_CONFIG
    from .serving import Engine, StepCostModel

    engine = Engine(COURSE_CONFIG, n_blocks=64, block_size=16, max_batch_tokens=_BUDGET, prefill_chunk=_CHUNK,
                    max_batch=_DECODING + 1, costs=StepCostModel(1e-3, 0.0, 0.0, 0.0))
    for _ in range(_DECODING):
        engine.add_request([1], 20)
    engine.step()  # the one-token prompts: each gets its first token, then they decode
    rid = engine.add_request([1] * _PROMPT, 5, arrival_time=engine.now)
    record = engine.step()
    if len(record["decode"]) != _DECODING:
        raise ValueError(f"expected {_DECODING} decoding requests, the iteration had {len(record['decode'])}")
    return dict(record["prefill"])[rid]


_SLOT_Q = (f"A request's block table is {_TABLE} and blocks hold {_BLOCK} tokens. Which pool slot (block id × "
           f"block size + offset) holds its token {_TOKEN} (0-based)?")
_ITER_Q = (f"The serving engine runs one iteration with max_batch_tokens = {_BUDGET} and prefill_chunk = {_CHUNK}. "
           f"{_DECODING} requests are decoding and a {_PROMPT}-token prompt is waiting. How many of its prompt tokens "
           "are prefilled in this iteration?")

APPENDIX: list[Question] = [
    # 10 · paged KV blocks and prefix caching
    Question(10, "fill", _SLOT_Q, lambda: slot_of_token(),
             lambda: f"Token {_TOKEN} is in the request's block {_TOKEN // _BLOCK} (= {_TOKEN} // {_BLOCK}), which is "
             f"pool block {_TABLE[_TOKEN // _BLOCK]}, at offset {_TOKEN % _BLOCK}: slot "
             f"{_TABLE[_TOKEN // _BLOCK]} × {_BLOCK} + {_TOKEN % _BLOCK} = {slot_of_token()} (read from a real "
             "PagedKVCache's slots)."),
    Question(10, "truefalse", "With prefix caching, a request whose whole prompt is already cached needs no forward "
             "pass before its first new token.", False,
             "The cache holds K and V, not logits. The first new token needs the logits of the last prompt token, so "
             "that token is run again (its K/V written into a private copy of the shared block). Skipping it is a "
             "known bug of teaching engines."),
    Question(10, "choice", "Request A must write its next token into a partly filled block that request B also "
             "holds (their reference count is 2). What does the paged cache do?",
             "copy the block for A, then write into the copy", "Copy-on-write: B keeps the block as it was, A gets "
             "its own copy with the same first tokens, and the reference counts follow (beams share blocks this way).",
             options=("copy the block for A, then write into the copy", "write into the shared block",
                      "free B's reference first", "raise an error")),
    Question(10, "choice", "Why is a block's prefix key a hash of its tokens chained with the previous block's key?",
             "the same tokens after a different prefix have different K and V",
             "Attention mixes every earlier token into each K/V (and RoPE adds the position), so a block can be "
             "reused only after the very same prefix.",
             options=("the same tokens after a different prefix have different K and V", "to use less memory",
                      "to avoid hash collisions", "because blocks are stored in order")),
    # 11 · continuous batching and chunked prefill
    Question(11, "fill", _ITER_Q, lambda: chunk_this_iteration(),
             lambda: f"Decode first: the {_DECODING} running requests take 1 token each, which leaves "
             f"{_BUDGET - _DECODING} of the {_BUDGET}. The prompt then gets min({_PROMPT}, prefill_chunk {_CHUNK}, "
             f"{_BUDGET - _DECODING}) = {chunk_this_iteration()} tokens (the engine's scheduler, replayed)."),
    Question(11, "truefalse", "Chunked prefill lowers the time to first token of the long prompt that is chunked.",
             False, "It raises it a little: the prompt now spreads over several iterations, each shared with the "
             "decodes. What it buys is a bounded stall for the requests already decoding (their inter-token latency)."),
    Question(11, "choice", "The block pool runs out while running requests decode. What does the engine of "
             "notebook 11 do?", "preempt the request admitted last and recompute it later",
             "It gives that request's blocks back and puts it at the front of the queue; when it is admitted again "
             "its prompt and the tokens it already produced are prefilled again, so its output does not change.",
             options=("preempt the request admitted last and recompute it later", "drop the request",
                      "stop every request", "write the blocks to disk")),
    Question(11, "truefalse", "Under continuous batching, every request gets the same greedy tokens as when it runs "
             "alone.", True, "Batching changes when a request's tokens are computed, not what they are: notebook 11 "
             "checks every request against its solo run, with chunks, joins, leaves and preemption."),
]

APPENDIX_ZH: list[dict] = [
    {"notebook": 10, "kind": "fill", "options": (), "answer": None,
     "prompt": f"某个请求的块表是 {_TABLE}，每个块放 {_BLOCK} 个 token。它的第 {_TOKEN} 个 token（从 0 数）存在池里的"
               "哪个槽位（块编号 × 块大小 + 块内偏移）？",
     "why": lambda: f"第 {_TOKEN} 个 token 落在请求的第 {_TOKEN // _BLOCK} 个块（{_TOKEN} // {_BLOCK}），也就是池里的 "
                    f"{_TABLE[_TOKEN // _BLOCK]} 号块，块内偏移 {_TOKEN % _BLOCK}：槽位 {_TABLE[_TOKEN // _BLOCK]} × "
                    f"{_BLOCK} + {_TOKEN % _BLOCK} = {slot_of_token()}（读自一个真实 PagedKVCache 的 slots）。"},
    {"notebook": 10, "kind": "truefalse", "options": (), "answer": None,
     "prompt": "开了前缀缓存后，如果一个请求的整个提示词都已在缓存里，它在生成第一个新 token 之前就不需要任何前向计算。",
     "why": "缓存里存的是 K 和 V，不是 logits。第一个新 token 要用最后一个提示词 token 的 logits，所以这个 token 必须再算一遍"
            "（它的 K/V 写进共享块的一份私有副本）。跳过它是教学用推理引擎里的一个常见 bug。"},
    {"notebook": 10, "kind": "choice", "answer": None,
     "prompt": "请求 A 要把下一个 token 写进一个没写满、请求 B 也持有的块（引用计数为 2）。分页缓存会怎么做？",
     "options": ("先给 A 复制一份这个块，再写进副本", "直接写进共享块", "先释放 B 的引用", "报错"),
     "why": "写时复制（copy-on-write）：B 持有的块保持原样，A 得到一份前面 token 相同的副本，引用计数随之更新"
            "（束搜索的各条束就是这样共享块的）。"},
    {"notebook": 10, "kind": "choice", "answer": None,
     "prompt": "为什么块的前缀键是把本块 token 和前一个块的键串起来再做哈希？",
     "options": ("同样的 token 接在不同前缀后面，K 和 V 也不同", "为了省内存", "为了避免哈希冲突", "因为块是按顺序存的"),
     "why": "注意力会把前面所有 token 的信息混进每个位置的 K/V（RoPE 还带上了位置），所以只有前缀完全相同时块才能复用。"},
    {"notebook": 11, "kind": "fill", "options": (), "answer": None,
     "prompt": f"推理服务引擎跑一轮迭代，max_batch_tokens = {_BUDGET}，prefill_chunk = {_CHUNK}。有 {_DECODING} 个请求正在"
               f"解码，一个 {_PROMPT} 个 token 的提示词在排队。这一轮会预填充它多少个提示词 token？",
     "why": lambda: f"先排解码：{_DECODING} 个请求各占 1 个 token，{_BUDGET} 个里还剩 {_BUDGET - _DECODING} 个。提示词再拿 "
                    f"min({_PROMPT}, prefill_chunk {_CHUNK}, {_BUDGET - _DECODING}) = {chunk_this_iteration()} 个 token"
                    "（由引擎的调度器回放得出）。"},
    {"notebook": 11, "kind": "truefalse", "options": (), "answer": None,
     "prompt": "分块预填充能降低被分块的那个长提示词的首 token 延迟（TTFT）。",
     "why": "反而会略升：这个提示词要分摊到好几轮迭代里，每轮还要和解码共用预算。它换来的是正在解码的请求只会被短暂卡一下"
            "（它们的 token 间延迟有上限）。"},
    {"notebook": 11, "kind": "choice", "answer": None,
     "prompt": "正在解码时块池用完了，第 11 本笔记本里的引擎会怎么做？",
     "options": ("抢占最后被接纳的请求，之后重算", "丢弃这个请求", "停掉所有请求", "把块写到磁盘"),
     "why": "它把这个请求的块还给块池，把请求放回队首；再次被接纳时，提示词和已经生成的 token 会重新预填充，所以输出不变。"},
    {"notebook": 11, "kind": "truefalse", "options": (), "answer": None,
     "prompt": "在连续批处理下，每个请求得到的贪心 token 都和它单独运行时一样。",
     "why": "批处理改变的是请求的 token 什么时候算，而不是算出来是什么：第 11 本笔记本在分块、中途加入和离开、抢占的情况下，"
            "逐个请求和单独运行的结果做了对比。"},
]
