"""Chinese text of the serving appendix's screen (its panel, figures, checks and exercises): English -> Chinese."""
from __future__ import annotations

MESSAGES: dict[str, str] = {
    # --- utils/plots/serving.py ------------------------------------------------------------------
    "{name}: {n} iterations, at most {tokens} tokens in one, the longest {ms:.2f} ms":
        "{name}：{n} 次迭代，单次最多 {tokens} 个 token，最长的一次 {ms:.2f} ms",
    "decode tokens (one per running request)": "解码 token（每个运行中的请求一个）",
    "prefill-chunk tokens": "预填充分块的 token",
    "a request preempted": "有请求被抢占",
    "one_pass_s needs a measured iteration (a replay's records have no pass_s)":
        "one_pass_s 需要实测的迭代（回放的记录里没有 pass_s）",
    "token budget max_batch_tokens = {n}": "token 预算 max_batch_tokens = {n}",
    "tokens in the iteration": "本次迭代的 token 数",
    "What each iteration ran": "每次迭代都运行了什么",
    "off": "关闭",
    "{rate} requests/s, max_batch_tokens = {budget}, prefill_chunk = {chunk}: TTFT p50 {ttft:.1f} ms, ITL p95 {itl:.2f} ms "
    "(replayed with {costs})":
        "每秒 {rate} 个请求，max_batch_tokens = {budget}，prefill_chunk = {chunk}：TTFT p50 {ttft:.1f} ms，ITL p95 {itl:.2f} ms"
        "（按{costs}回放）",
    "GPU-like costs": "类 GPU 的开销",
    "the fitted costs": "拟合的开销",
    "costs (the machine the replay models)": "开销（回放所模拟的机器）",
    "this CPU (fitted)": "这台 CPU（拟合）",
    "GPU-like: {machine} (roofline)": "类 GPU：{machine}（屋顶线模型）",
    "times replayed from GPU-like step costs ({machine}, bfloat16, a roofline, not a measurement): one forward pass "
    "per iteration takes the longer of reading every weight once ({weights:.2f} ms) and its tokens' FLOPs "
    "({token:.4f} ms per token), so up to {ridge:.0f} tokens an iteration costs the same; + {row:.4f} ms per decode "
    "row (its K/V) + {fixed:.2f} ms per iteration; percentiles: numpy's default (linear interpolation)":
        "时间按类 GPU 的单步开销回放（{machine}，bfloat16，屋顶线模型，不是实测）：每次迭代一次前向计算，耗时取"
        "“把全部权重读一遍”（{weights:.2f} ms）与“它的 token 的浮点运算”（每个 token {token:.4f} ms）中较长的那个，"
        "所以 {ridge:.0f} 个 token 以内，一次迭代的开销都一样；另加每个解码行 {row:.4f} ms（读它的 K/V），每次迭代 "
        "{fixed:.2f} ms；百分位数按 NumPy 的默认方式（线性插值）计算",
    "decode: its tokens in each iteration (above), one segment per token of a request (below)":
        "解码：上图是每次迭代里的解码 token，下图中请求的每个 token 画成一段",
    "prefill: its chunk tokens in each iteration (above), a request's prefill (below)":
        "预填充：上图是每次迭代里的分块 token，下图是请求的预填充",

    # --- utils/widgets/serving.py: EngineTimelinePanel -------------------------------------------
    "The engine's iterations over time: continuous batching with chunked prefill":
        "引擎的迭代随时间展开：连续批处理与分块预填充",
    "max_batch_tokens (tokens per iteration)": "max_batch_tokens（每次迭代的 token 数）",
    "prefill_chunk (tokens per chunk)": "prefill_chunk（每个分块的 token 数）",
    "iterations": "迭代次数",
    "the longest iteration": "最长的一次迭代",
    "largest prefill chunk": "最大的预填充分块",
    "{n} tokens": "{n} 个 token",
    "preemptions": "抢占次数",
    "times replayed from step costs fitted to real runs on this machine: a decode-only or prefill-only iteration "
    "of a measured size costs its measured mean, any other {fixed:.3f} ms per iteration + {forward:.3f} ms per "
    "forward pass + {row:.4f} ms per decode row + {token:.4f} ms per prefill token; percentiles: numpy's default "
    "(linear interpolation)":
        "时间按每次迭代的开销回放，开销模型拟合自本机上的真实运行：只解码或只预填充的迭代，规模实测过的取实测均值；"
        "其余迭代按每次迭代 {fixed:.3f} ms + 每次前向计算 {forward:.3f} ms + 每个解码行 {row:.4f} ms + "
        "每个预填充 token {token:.4f} ms 计算；百分位数按 NumPy 的默认方式（线性插值）计算",

    # --- utils/serving/run.py: summary_table (notebooks 06 and 11) -------------------------------------
    "end to end (ms)": "端到端（ms）",
    "throughput": "吞吐量",
    "while computing": "计算期间",
    # --- utils/serving/run.py: trace (notebook 06) ------------------------------------------------
    "r{rid} ({ms:.1f} ms)": "r{rid}（{ms:.1f} ms）",
    "arrived: {who}": "到达：{who}",
    ", ": "，",
    "joined: {ids}": "加入批：{ids}",
    "preempted: {ids}": "被抢占：{ids}",
    "r{rid} done, its row rides along": "r{rid} 完成，它的行继续陪跑",
    "r{rid} done, leaves": "r{rid} 完成，离开批",
    "prefill {ids} ({n} tokens)": "预填充 {ids}（{n} 个 token）",
    "decode {ids}": "解码 {ids}",
    "{n} decode steps of {ids}": "{ids} 连续解码 {n} 步",
    "iteration": "迭代",
    "clock (ms)": "时钟（ms）",
    "ran": "运行了什么",
    "batch after": "之后的批",
    "what happened": "发生了什么",

    # --- utils/exercises/serving_exercises.py: the judges ----------------------------------------
    "expected a pair (decode ids, chunks), got {type}": "应返回一对（解码请求的 id 列表，分块列表），实际是 `{type}`",
    "expected a list of ids and a list of (id, n) pairs, got {got!r}":
        "应返回一个 id 列表和一个 (id, n) 对的列表，实际是 {got!r}",
    "decode rows: expected {expected}, got {got}": "解码行：应为 {expected}，实际是 {got}",
    "prefill chunks: expected {expected}, got {got}": "预填充分块：应为 {expected}，实际是 {got}",
    "expected a pair (worst ITL, TTFT) in seconds, got {type}": "应返回一对（最差 ITL，TTFT），以秒计，实际是 `{type}`",
    "{name}: expected a number of seconds, got {type}": "{name}：应为以秒计的数值，实际是 `{type}`",
    "{name}: expected {want:.4f} ms, got {got:.4f} ms": "{name}：应为 {want:.4f} ms，实际是 {got:.4f} ms",
    "worst ITL": "最差 ITL",
    "TTFT": "TTFT",

    # 11.plan_step: cases and hints
    "2 decoding, a 40-token prompt, budget 16, chunks of 8": "2 个请求在解码，一个 40 token 的提示词，预算 16，分块 8",
    "5 decoding, a budget of 3, a prompt waiting": "5 个请求在解码，预算只有 3，还有一个提示词在等",
    "3 decoding, prompts of 10 and 12 tokens left, budget 16, chunks of 8":
        "3 个请求在解码，两个提示词分别还剩 10 和 12 个 token，预算 16，分块 8",
    "prefill_chunk None: a 30-token prompt in one piece, budget 64":
        "prefill_chunk 为 None：30 token 的提示词一次跑完，预算 64",
    "nothing decoding: two prompts share the budget": "没有请求在解码：两个提示词共用预算",
    "a chunk is at most prefill_chunk tokens, however much budget is left":
        "一个分块最多 prefill_chunk 个 token，不管预算还剩多少",
    "decode first: the running requests get their token before any prefill, and once the budget is spent "
    "nothing else runs":
        "先解码：运行中的请求先各拿到一个 token，然后才轮到预填充；预算用完，就什么都不再运行",
    "the last chunk takes what is left of the budget: part of a prompt is fine":
        "最后一个分块用掉剩下的预算：只跑提示词的一部分也可以",
    "None means no chunk limit: the prompt goes in whole if the budget allows":
        "None 表示不限制分块：预算允许时，整个提示词一次跑完",
    "decode tokens first, one per decoding request; then each prompt gets min(left, chunk, budget left)":
        "先排解码 token，每个在解码的请求一个；然后每个提示词分到 min(剩余 token, 分块大小, 剩余预算)",

    # 11.preempt
    "in admission order, each request takes its blocks; while they do not fit, the request admitted last "
    "gives all its blocks back":
        "按接纳顺序，每个请求依次取自己要的块；放不下时，就让最后被接纳的请求交还它的全部块，直到放得下",
    "expected a pair (decode ids, preempted ids), got {type}": "应返回一对（解码的请求 id，被抢占的请求 id），实际是 `{type}`",
    "expected two lists of request ids, got {got!r}": "应返回两个请求 id 列表，实际是 {got!r}",
    "expected decode {decode} and preempted {preempted}, got decode {got_decode} and preempted {got_preempted}":
        "应为解码 {decode}、被抢占 {preempted}，实际是解码 {got_decode}、被抢占 {got_preempted}",
    "the engine preempts the request admitted last (the last of `running` still running), not the one asking "
    "for a block: the newest request has done the least work, so its recompute costs least":
        "引擎抢占的是最后被接纳的请求（`running` 中仍在运行的最后一个），而不是正在要块的那个：最新的请求做过的工作最少，重算的代价也最小",
    "you preempted the request admitted first, the one that has done the most work: take the last one that still "
    "runs":
        "你抢占的是最先被接纳、做过最多工作的请求：应该选仍在运行的请求里最后被接纳的那个",
    "the victim is not the request holding the most blocks: it is the one admitted last (the newest, with the "
    "least work to recompute)":
        "被抢占的不是持有块最多的请求，而是最后被接纳的那个（最新的，要重算的工作最少）",
    "a preempted request's blocks go back to the pool at once: add what it held to the free blocks, or every "
    "request after it is preempted too":
        "被抢占请求的块立刻回到块池：把它持有的块加进空闲块，否则它后面的请求也会一个个被抢占",
    "when the request asking is itself the last one running, it is the victim: it stops asking, and its blocks "
    "go back":
        "正在要块的请求自己就是最后一个仍在运行的请求时，被抢占的就是它：它不再要块，它的块也回到块池",
    "1 block free, r0 and r1 need one each, r2 holds the most blocks": "1 个空闲块，r0 和 r1 各要一块，r2 持有的块最多",
    "section 1: r0 and r1 need a block each, r2 none, 1 block free": "第 1 节的情形：r0 和 r1 各要一块，r2 不要，1 个空闲块",
    "2 blocks free, 2 needed: nobody goes": "2 个空闲块，要 2 块：谁都不用让出",
    "no block free, r0 needs one: r1 goes": "没有空闲块，r0 要一块：r1 被抢占",
    "no block free, each victim frees 1: two preemptions": "没有空闲块，每个被抢占的请求腾出 1 块：抢占两次",
    "no block free: r2 goes for r0, then r1 is the last left to go for itself":
        "没有空闲块：r2 为 r0 让出，之后 r1 成了最后一个，只能为自己让出",

    # 11.itl_stall: cases and hints
    "no chunks: 200 prompt tokens in one iteration, 4 decoding":
        "不分块：200 个提示词 token 在一次迭代里跑完，4 个请求在解码",
    "chunks of 32 divide 128 exactly, 2 decoding": "分块 32 正好整除 128，2 个请求在解码",
    "chunks of 64: 200 = 64 + 64 + 64 + 8, 4 decoding": "分块 64：200 = 64 + 64 + 64 + 8，4 个请求在解码",
    "a chunk larger than the prompt, 3 decoding": "分块比提示词还大，3 个请求在解码",
    "prefill_chunk None: the whole prompt runs in one iteration, beside the decode tokens":
        "prefill_chunk 为 None：整个提示词在一次迭代里跑完，和解码 token 一起",
    "the TTFT adds up every iteration of the prompt, each with its fixed cost":
        "TTFT 要把提示词的每一次迭代都加起来，每次都有固定开销",
    "the last chunk is only what is left of the prompt, and every iteration also runs the decodes":
        "最后一个分块只是提示词剩下的部分；而且每次迭代也都要跑解码",
    "a chunk never holds more tokens than the prompt has": "一个分块里的 token 不会比提示词本身还多",
    "each iteration of the prefill runs the decode tokens and one chunk; the decoding requests wait one "
    "iteration per token, the new request all of them":
        "预填充的每次迭代都要跑解码 token 和一个分块；在解码的请求每个 token 等一次迭代，新请求要等完全部这些迭代",
}
