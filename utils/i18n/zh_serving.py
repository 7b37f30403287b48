"""Chinese text of the serving appendix's screen (its panel, figures, checks and exercises): English -> Chinese."""
from __future__ import annotations

MESSAGES: dict[str, str] = {
    # --- utils/plots/serving.py ------------------------------------------------------------------
    "{name}: {n} iterations, at most {tokens} tokens in one, the longest {ms:.2f} ms":
        "{name}：{n} 次迭代，单次最多 {tokens} 个 token，最长的一次 {ms:.2f} ms",
    "decode tokens (one per running request)": "解码 token（每个运行中的请求一个）",
    "prefill-chunk tokens": "预填充分块的 token",
    "a request preempted": "有请求被抢占",
    "token budget max_batch_tokens = {n}": "token 预算 max_batch_tokens = {n}",
    "tokens in the iteration": "本次迭代的 token 数",
    "What each iteration ran": "每次迭代都运行了什么",
    "off": "关闭",
    "{rate} requests/s, max_batch_tokens = {budget}, prefill_chunk = {chunk}: TTFT p50 {ttft:.1f} ms, ITL p95 {itl:.2f} ms "
    "(replayed with the fitted costs)":
        "每秒 {rate} 个请求，max_batch_tokens = {budget}，prefill_chunk = {chunk}：TTFT p50 {ttft:.1f} ms，ITL p95 {itl:.2f} ms"
        "（按拟合的开销回放）",
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
