"""Chinese catalogue part: the exercises' feedback, the mystery lab and the bug lab (see utils/i18n/__init__.py).

Code names stay as they are; code inside a Chinese sentence sits in backticks (`dim=2`, `model.eval()`).
"""

MESSAGES: dict[str, str] = {
    # --- utils/exercises/__init__.py: check() and run() ------------------------------------------
    "{id}: not written yet: your turn (replace `raise NotImplementedError`, then run this cell again)":
        "{id}：还没有写：轮到你了（把 `raise NotImplementedError` 换成你的实现，再运行这个单元格）",
    "{id}: `{name}` is the course's own function, not yours: nothing was checked. Write yours in the "
    "exercise cell (don't pass the package's version), then run this cell again":
        "{id}：`{name}` 是课程包自带的函数，不是你写的，所以什么也没检查。请在练习单元格里写你自己的实现"
        "（不要传入课程包里的版本），再运行这个单元格",
    "{case}: {problem}": "{case}：{problem}",
    "{id}: {n_ok}/{n} cases pass.": "{id}：{n_ok}/{n} 个用例通过。",
    "{summary} Hint: first return what the contract asks for (type, shape, dtype), then run again.":
        "{summary}提示：先按函数约定返回正确的类型、形状和 dtype，再运行一次。",
    "{summary} Hint: {hint}": "{summary}提示：{hint}",
    "{id}: all {n} cases pass.": "{id}：全部 {n} 个用例通过。",
    "your function raised {error}": "你的函数抛出了 {error}",
    "your function changed its input in place: it changed the tensor it was given as its argument {name}, "
    "which the caller reads again":
        "你的函数原地修改了输入：它改动了传给它的参数 {name} 这个张量，而调用方还要接着读它",
    "number {n}": "第 {n} 个",
    "leave the inputs as they are: the caller reads them again after your function returns (in "
    "an engine, the cache). No in-place operation such as `x.zero_()` or `x[...] = ...` on an "
    "input: build a new tensor (`masked_fill`, `torch.where`, `torch.cat`), or `.clone()` first":
        "不要改动传进来的输入：函数返回后，调用方还要接着用它们（在推理引擎里就是缓存）。不要对输入做 `x.zero_()`、"
        "`x[...] = ...` 这类原地操作：请生成新的张量（`masked_fill`、`torch.where`、`torch.cat`），或者先 `.clone()`",
    "could not compare what came back ({error})": "无法比较返回的结果（{error}）",

    # --- utils/exercises/judges.py: what was expected, what came back ----------------------------
    "a {shape} {dtype} tensor": "形状为 {shape} 的 {dtype} 张量",
    "expected a tensor, got {type}": "应返回张量，实际是 `{type}`",
    "expected shape {expected}, got {got}": "形状应为 {expected}，实际是 {got}",
    "expected a bool tensor, got dtype {dtype}": "应返回 bool 张量，实际的 dtype 是 {dtype}",
    "you returned an additive float mask (0 / -inf, dtype {dtype}): the check wants booleans":
        "你返回的是加性浮点掩码（0 / -inf，dtype 为 {dtype}），这里要的是布尔值",
    "return booleans, True = may attend (an additive mask is 0 where True and -inf where False)":
        "返回布尔值，True 表示可以关注（加性掩码在 True 处为 0，在 False 处为 -inf）",
    "expected {expected}, got {got}": "应为 {expected}，实际是 {got}",
    "expected None, got {got}": "应为 None，实际是 {got}",
    "expected {n} values {expected}, got {got}": "应返回 {n} 个值 {expected}，实际是 {got}",
    "{bad} of {n} values differ (max |diff| {diff:.3g})": "{n} 个值里有 {bad} 个不对（max |diff| {diff:.3g}）",
    "right value, but an int is expected (got {type}: use // to stay in integers)":
        "数值对了，但应返回 `int`（实际是 `{type}`：用 // 保持整数运算）",
    "expected a pair (K, V), got {type}": "应返回一对 (K, V)，实际是 `{type}`",
    "expected a pair (K, V), got a {type} of {n}": "应返回一对 (K, V)，实际是含 {n} 个元素的 `{type}`",
    "expected a str or None, got {type}": "应返回 `str` 或 None，实际是 `{type}`",
    "{tensor}: {problem}": "{tensor}：{problem}",

    # --- utils/exercises/catalogue.py: the exercises' own judges ---------------------------------
    "the logits of position {t}": "位置 {t} 的 logits",
    "logits of no position": "不属于任何位置的 logits",
    "row {b}: you returned {which}; its last real token is at {last}":
        "第 {b} 行：你返回的是{which}，而这一行最后一个真实 token 在位置 {last}",
    "you returned shape {got} = [B, 1, V]{rows}: the time axis is still there, with length 1":
        "你返回的形状是 {got} = [B, 1, V]{rows}：时间这一维还在，长度为 1",
    ", the right rows": "，取的行是对的",
    "`gather`, a slice such as `[:, -1:]` and an index such as `idx[:, None]` keep the axis they pick from: drop "
    "it with `.squeeze(1)` to return [B, V]":
        "`gather`、`[:, -1:]` 这样的切片和 `idx[:, None]` 这样的索引都会保留取值的那一维：用 `.squeeze(1)` 去掉它，返回 [B, V]",
    "you returned shape {got} = [B, B, V]: every row's logits at all B positions, not one per row":
        "你返回的形状是 {got} = [B, B, V]：每一行都取了全部 B 个位置的 logits，而不是每行一个",
    "`logits[:, idx]` takes every row at every index of `idx`; pair row b with `idx[b]`: "
    "`logits[torch.arange(B), idx]`":
        "`logits[:, idx]` 会让每一行都取 `idx` 里的每一个下标；要让第 b 行只配 `idx[b]`：`logits[torch.arange(B), idx]`",
    "row {b}: you returned position {t}, its first real token; its last real token is at {last}":
        "第 {b} 行：你返回的是位置 {t}，即这一行的第一个真实 token；而这一行最后一个真实 token 在位置 {last}",
    "`argmax` returns the first position of the maximum, so `mask.argmax(1)` finds each row's "
    "first 1; the last 1 is where `mask.cumsum(1)` first reaches its maximum":
        "`argmax` 返回的是最大值第一次出现的位置，所以 `mask.argmax(1)` 找到的是每行的第一个 1；"
        "最后一个 1 在 `mask.cumsum(1)` 第一次达到最大值的地方",
    "row {b}: you returned position {t} = its number of real tokens - 1; its last real token is at {last}":
        "第 {b} 行：你返回的是位置 {t}，即这一行的真实 token 数减 1；而这一行最后一个真实 token 在位置 {last}",
    "the number of real tokens - 1 is the last real index only with right padding (pads last); with left "
    "padding the pads come first: find each row's last 1":
        "真实 token 数减 1 只在右填充时（填充在后）才是最后一个真实位置；左填充时填充在前：要找出每行掩码里的最后一个 1",
    "your function raised {error}: index {T} is one past the last column":
        "你的函数抛出了 {error}：下标 {T} 已经越过最后一列",
    "the number of real tokens is one past the last index: a row of {T} real tokens ends at index {T} - 1 = {last}":
        "真实 token 数比最后一个下标大 1：有 {T} 个真实 token 的一行，最后一个下标是 {T} - 1 = {last}",
    "positions index the RoPE tables: expected an integer dtype, got {dtype}":
        "位置要用来索引 RoPE 表：dtype 应为整数类型，实际是 {dtype}",
    "you returned probabilities, the softmax of the right rows; the contract asks for logits":
        "你返回的是概率，即对的那几行再做 softmax；函数约定要求返回 logits",
    "return the rows of `logits` themselves: sampling applies the softmax later":
        "直接返回 `logits` 里的那几行：softmax 留给之后的采样去做",
    "row {b}: you returned position {t}, the last real token's distance from the end; it is at {last}":
        "第 {b} 行：你返回的是位置 {t}，即最后一个真实 token 到行尾的距离；它实际在位置 {last}",
    "`mask.flip(1).argmax(1)` counts from the end of the row: the position is T - 1 minus it":
        "`mask.flip(1).argmax(1)` 是从行尾往回数的：真正的位置是 T - 1 减去它",
    "at the real tokens expected {expected} (-1: padding), got {got}":
        "真实 token 处应为 {expected}（-1 表示填充），实际是 {got}",
    "your real tokens are numbered right; the padding columns hold {bad}, outside [0, {T}): {got}":
        "真实 token 的编号都对了；但填充列里是 {bad}，不在 [0, {T}) 之内：{got}",
    "expected logits of shape [2, {V}], got {shape}": "logits 的形状应为 [2, {V}]，实际是 {shape}",
    "expected a logits tensor, got {type}": "应返回 logits 张量，实际是 `{type}`",
    "step {step}: max |your logits - decode_step| = {diff:.3g} > TOL = {tol:g}":
        "第 {step} 步：max |你的 logits - decode_step| = {diff:.3g} > TOL = {tol:g}",
    "the result holds {n} positions; it should hold min(W' + 1, window) = {want}":
        "结果里有 {n} 个位置，应为 `min(W' + 1, window)` = {want} 个",
    "expected logits of shape [B, V] = [2, {V}], got {type}": "logits 的形状应为 [B, V] = [2, {V}]，实际是 `{type}`",
    "expected logits of shape [B, V] = [2, {V}], got {shape}": "logits 的形状应为 [B, V] = [2, {V}]，实际是 {shape}",
    "compare_with_recompute: {summary}: {error}": "compare_with_recompute：{summary}：{error}",
    "compare_with_recompute: {summary}": "compare_with_recompute：{summary}",

    # --- the cases (what the learner reads next to ✓ or ✗) and the hints, by exercise -------------
    # 01.causal_mask
    "prefill: T_q = T_k = 4": "预填充（T_q = T_k = 4）",
    "decode: T_q = 1 after 5 cached, T_k = 6": "解码（已缓存 5 个，T_q = 1，T_k = 6）",
    "a chunk: T_q = 3 after 2 cached, T_k = 5": "分块（已缓存 2 个，T_q = 3，T_k = 5）",
    "first token: T_q = T_k = 1": "第一个 token（T_q = T_k = 1）",
    "query i is the token at position T_k - T_q + i (the cached keys come first): it sees keys 0 ... T_k - T_q + i":
        "查询 i 是位置 T_k - T_q + i 上的 token（缓存的键排在前面）：它能看到键 0 … T_k - T_q + i",
    "query i is at position T_k - T_q + i": "查询 i 在位置 T_k - T_q + i",
    # 01.repeat_kv
    "GQA: B=2, H_kv=3, n_rep=2": "GQA（B=2，H_kv=3，n_rep=2）",
    "MHA: n_rep=1 changes nothing": "MHA（n_rep=1，什么都不变）",
    "MQA: H_kv=1, n_rep=4": "MQA（H_kv=1，n_rep=4）",
    "# Reference solution of {id}; its contract is the docstring of the exercise cell above.\n":
        "# {id} 的参考解答；接口约定见上面练习单元格里的文档字符串。\n",
    "GQA with T != d_h: H_kv=2, n_rep=2, T=3, d_h=2": "GQA，T ≠ d_h（H_kv=2，n_rep=2，T=3，d_h=2）",
    "only the heads axis grows: [B, H_kv, T, d_h] -> [B, H_kv * n_rep, T, d_h]":
        "只有头这一维变大：[B, H_kv, T, d_h] -> [B, H_kv * n_rep, T, d_h]",
    "query head h reads K/V head h // n_rep: the copies of one head sit side by side":
        "查询头 h 读的是 K/V 头 h // n_rep：同一个头的几份副本要挨在一起",
    "query head h reads K/V head h // n_rep": "查询头 h 读的是 K/V 头 h // n_rep",
    # 02.last_valid_logits
    "left-padded rows (B=3, T=5, V=7)": "左填充的批（B=3，T=5，V=7）",
    "right-padded rows": "右填充的批",
    "with right padding the last real token is not in the last column: find each row's last 1":
        "右填充时，最后一个真实 token 不在最后一列：找出每行掩码里的最后一个 1",
    "each row's last position whose mask is 1": "每行掩码为 1 的最后一个位置",
    # 02.prefill_positions
    "no padding (B=1, T=4)": "没有填充（B=1，T=4）",
    "left padding: 0, 2 and 1 pads": "左填充，三行分别有 0、2、1 个填充",
    "a row's first real token is position 0, however many pads come before it":
        "每行第一个真实 token 的位置都是 0，不管它前面有多少个填充",
    "count each row's real tokens": "逐行数真实 token",
    # 03.cache_update
    "from empty: the first 3 positions": "从空缓存开始，写入前 3 个位置",
    "T_new = 1 after 1 cached": "已缓存 1 个位置，T_new = 1",
    "T_new = 1 after 3 cached": "已缓存 3 个位置，T_new = 1",
    "T_new = 2 after 3 cached": "已缓存 3 个位置，T_new = 2",
    "an empty cache (None) simply becomes the new K and V": "空缓存（None）直接变成新的 K 和 V",
    "the cache layout is [B, H_kv, T, d_h]: new positions go on the time axis, dim=2":
        "缓存布局是 [B, H_kv, T, d_h]：新位置接在时间维上，即 `dim=2`",
    "concatenate on the time axis": "在时间维上拼接",
    # 03.decode_step
    "course model (GQA), B=2, 16 steps": "课程模型（GQA），B=2，16 步",
    "random MQA model, B=2, 16 steps": "随机 MQA 模型，B=2，16 步",
    "the new token's position is the cache length": "新 token 的位置就是缓存长度",
    # 04.kv_bytes_from_config
    "Llama-3-8B (GQA), T=4096, B=3, float16": "Llama-3-8B（GQA），T=4096，B=3，float16",
    "Llama-2-7B's shape without num_key_value_heads (MHA), T=2048, B=4, bfloat16":
        "Llama-2-7B 的结构，配置里没有 num_key_value_heads（MHA），T=2048，B=4，bfloat16",
    "Gemma-2-9B: head_dim given, T=8192, B=1, float32": "Gemma-2-9B，配置给出了 head_dim，T=8192，B=1，float32",
    "Llama-3-8B, int8 cache, T=1000, B=4": "Llama-3-8B，int8 缓存，T=1000，B=4",
    "2 x L x B x H_kv x T x d_h x bytes: K and V, only the K/V heads":
        "2 x L x B x H_kv x T x d_h x 每个数的字节数：K 和 V 都要算，头数只算 K/V 头",
    "a config without num_key_value_heads is MHA: H_kv = H": "配置里没有 num_key_value_heads 就是 MHA：H_kv = H",
    "when head_dim is in the config, use it: it is not always C / H": "配置里有 head_dim 就用它：它不一定等于 C / H",
    "2 x L x B x H_kv x T x d_h x bytes": "2 x L x B x H_kv x T x d_h x 每个数的字节数",
    # 04.max_requests
    "Llama-3-8B, T=8192, 37.5 GiB free, float16": "Llama-3-8B，T=8192，空闲 37.5 GiB，float16",
    "Gemma-2-9B, T=4096, 24 GiB free, bfloat16": "Gemma-2-9B，T=4096，空闲 24 GiB，bfloat16",
    "Llama-3-8B, T=4096, 6 GiB free, int8 cache": "Llama-3-8B，T=4096，空闲 6 GiB，int8 缓存",
    "Llama-2-7B, T=4096, 1 MiB free: less than one request": "Llama-2-7B，T=4096，空闲 1 MiB：连一个请求都放不下",
    "free bytes over one request's cache bytes, rounded down": "空闲字节数除以单个请求的缓存字节数，向下取整",
    # 05.top_p
    "p=0.7: 0.5 + 0.25 crosses 0.7, so two tokens": "p=0.7，0.5 + 0.25 越过了 0.7，所以保留两个 token",
    "p=0.8: three tokens (0.5 + 0.25 + 0.125)": "p=0.8，保留三个 token（0.5 + 0.25 + 0.125）",
    "p=0.3: the top token alone already reaches p": "p=0.3，概率最高的 token 单独就已达到 p",
    "p=1.0 keeps every token": "p=1.0 保留所有 token",
    "p=0.75: 0.5 + 0.25 reaches p exactly, so two tokens": "p=0.75，0.5 + 0.25 恰好等于 p，所以保留两个 token",
    "a token is kept while the mass ranked before it is < p: at exactly p the set is complete":
        "排在一个 token 前面的概率之和小于 p 时才保留它：累计概率恰好等于 p 时，集合已经完整",
    "p=1.0 on 64 tokens with a long tail: all 64 kept": "p=1.0，64 个 token、带长尾：64 个全部保留",
    "at p = 1 keep every token: float32 running sums reach 1.0 before the tail":
        "p = 1 时保留所有 token：float32 的累计概率在长尾结束之前就已经等于 1.0",
    "keep the most likely tokens until their mass reaches p, including the token that crosses p":
        "按概率从高到低保留 token，直到累计概率达到 p；使累计概率越过 p 的那个 token 也要保留",
    "never empty: the most likely token is always kept": "结果不能为空：概率最高的 token 总要保留",
    "the token that crosses p is kept": "使累计概率越过 p 的那个 token 要保留",
    # 05.stop_text
    "the stop string spans two tokens": "停止字符串横跨两个 token",
    "the later-listed string occurs first": "列在后面的停止字符串先出现",
    "one stop string does not occur, the other does": "一个停止字符串没出现，另一个出现了",
    "a stop string that does not occur has no position (`text.find` gives -1): leave it out":
        "没出现的停止字符串没有位置（`text.find` 返回 -1）：把它排除掉",
    "no stop string occurs": "没有出现任何停止字符串",
    "the text starts with a stop string": "文本以停止字符串开头",
    "the stop string occurs twice: the first one stops": "停止字符串出现两次：在第一次出现处停止",
    "cut at the first occurrence: `text.find(s)`, not `text.rfind(s)`":
        "在第一次出现的位置截断：用 `text.find(s)`，不是 `text.rfind(s)`",
    "search the decoded text for the whole string; it may cover several tokens":
        "在解码出的文本里查找整个字符串；它可能横跨好几个 token",
    "cut at the stop string that occurs first in the text, wherever it is in the list":
        "在文本中最先出现的停止字符串处截断，不管它在列表里排第几",
    "a stop string with a regex character: '...'": "停止字符串里有正则表达式的特殊字符：'...'",
    "a stop string with a regex character: '?'": "停止字符串里有正则表达式的特殊字符：'?'",
    "a stop string is plain text: in a regular expression `.`, `?`, `[` and `(` mean something else":
        "停止字符串是普通文本：在正则表达式里，`.`、`?`、`[` 和 `(` 另有含义",
    "return None when no stop string occurs": "没有出现停止字符串时返回 None",
    "the earliest stop string wins": "以最早出现的停止字符串为准",
    # 06.ttft_tpot
    "request at 10.0 s, four tokens (seconds)": "请求在 10.0 s 到达，四个 token（单位：秒）",
    "one token only: no TPOT": "只有一个 token，没有 TPOT",
    "a long wait in the queue: request at 1.0 s": "在队列里等了很久：请求在 1.0 s 到达",
    "{problem}: {mistake}": "{problem}：{mistake}",
    "your TTFT is the first token's time on the clock": "你的 TTFT 是第一个 token 在时钟上的时刻",
    "TTFT counts from the request's arrival, t_request": "TTFT 从请求到达的时刻 t_request 算起",
    "your TPOT divides by n": "你的 TPOT 除以了 n",
    "n tokens have n - 1 gaps between them": "n 个 token 之间只有 n - 1 个间隔",
    "your TPOT counts from the request": "你的 TPOT 从请求到达算起",
    "your values are 1000 times too large: milliseconds": "你的结果大了 1000 倍：单位是毫秒",
    "return seconds, not ms: the times in the log are in seconds": "请返回秒而不是毫秒：日志里的时间以秒计",
    "your TTFT and TPOT are swapped": "你把 TTFT 和 TPOT 的位置弄反了",
    "return (ttft, tpot), in this order": "按 `(ttft, tpot)` 的顺序返回",
    "TPOT starts at the first token: the wait before it is TTFT's": "TPOT 从第一个 token 算起：在那之前的等待属于 TTFT",
    "n = 1 gives TPOT None": "n = 1 时 TPOT 为 None",
    "TTFT from the request, TPOT over the n - 1 gaps": "TTFT 从请求算起，TPOT 是 n - 1 个间隔的平均",
    # 06.itl_p95
    "seven tokens, one stall (seconds)": "七个 token，中间卡顿一次（单位：秒）",
    "two tokens: one gap": "两个 token，只有一个间隔",
    "25 tokens, two stalls (seconds)": "25 个 token，卡顿两次（单位：秒）",
    "your value is the mean gap (that is TPOT)": "你算的是间隔的平均值（那是 TPOT）",
    "your value is the largest gap, not the 95th percentile": "你算的是最大的间隔，不是第 95 百分位",
    "your value is the nearest-rank percentile": "你用的是最近秩法求的百分位",
    "your value is the 0.95th percentile: np.percentile takes q in percent": "你算的是第 0.95 百分位：np.percentile 的 q 以百分数计（0 到 100）",
    "your value is 1000 times too large: milliseconds": "你的结果大了 1000 倍：单位是毫秒",
    "take `np.percentile(gaps, 95)`: numpy's default interpolates linearly": "用 `np.percentile(gaps, 95)`：它默认做线性插值",
    "ITLs are the gaps between consecutive tokens; numpy's percentile interpolates linearly":
        "ITL 是相邻两个 token 之间的间隔；`np.percentile` 默认做线性插值",
    "gaps between consecutive tokens": "相邻 token 之间的间隔",
    # 07.fix_position
    "course model, 6 decode steps": "课程模型，解码 6 步",
    "random MQA model, 6 decode steps": "随机 MQA 模型，解码 6 步",
    "the new token's position is the number of tokens the cache already holds":
        "新 token 的位置等于缓存里已有的 token 数",
    "position = cache length": "位置 = 缓存长度",
    # 08.reorder
    "beam_idx [0, 0, 3, 1] (a repeat)": "beam_idx [0, 0, 3, 1]（有重复）",
    "identity [0, 1, 2, 3]": "恒等排列 [0, 1, 2, 3]",
    "row i of the new cache is row beam_idx[i] of the old one: gather on the batch axis, dim=0":
        "新缓存的第 i 行是旧缓存的第 beam_idx[i] 行：在批维（`dim=0`）上按索引取行",
    "gather rows on dim=0": "在 `dim=0` 上按索引取行",
    # 08.window_update
    "from empty, window 4": "从空缓存开始，窗口为 4",
    "3 stored, window 4: nothing dropped yet": "已存 3 个位置、窗口为 4，还没有位置被丢掉",
    "3 stored, window 3: the oldest falls out": "已存 3 个位置、窗口为 3，最旧的一个被挤出去",
    "before the first token cache_k is None: the result is k_new": "第一个 token 之前 cache_k 是 None：结果就是 k_new",
    "keep the newest `window` positions, oldest first: the last ones on the time axis":
        "保留最新的 `window` 个位置，按从旧到新排列：也就是时间维上的最后几个",
    "keep the newest `window` positions": "保留最新的 `window` 个位置",

    # --- utils/bug_lab/harness.py: a check's outcome and the bug table -----------------------------------
    "OK": "通过",
    "OK: {n} steps equal within {tol:g}": "通过：{n} 步都在容差 {tol:g} 以内一致",
    "diverges at step {step} (position {position})": "第 {step} 步（位置 {position}）出现偏差",
    "raises {error} at step {step}": "第 {step} 步抛出 {error}",
    "step {step} (pos {position})": "第 {step} 步（位置 {position}）",
    "raises at step {step}": "第 {step} 步报错",
    "bug": "bug",
    "symptom": "症状",
    "cause": "原因",
    "check / fix": "检查 / 修复",
    "first divergence": "首次出现差异",
    "use_cache changes weights?": "use_cache 会改权重？",
    "none: a myth": "不会：这是误解",
    "cache holds activations": "缓存存的是激活值",
    "hash the state_dict": "对 state_dict 做哈希",
    "hashes equal: {equal}": "哈希相同：{equal}",
    # utils/bug_lab/catalogue.py BUGS: title, symptom, cause, check (the titles also label the bug lab's figure and panel)
    "Position ids restart at 0": "位置编号从 0 重新开始",
    "prefill OK, decode wrong": "预填充正常，解码出错",
    "new token's RoPE position = 0": "新 token 的 RoPE 位置为 0",
    "Prompt fed again with cache": "有缓存还把提示词重新送入",
    "decode wrong, cache too long": "解码出错，缓存过长",
    "history cached twice": "历史被缓存了两遍",
    "feed only the new token": "只送入新 token",
    "K/V cat on the wrong axis": "K/V 拼接维度错误",
    "shape error (T=1: can be silent)": "形状报错（T=1 时可能静默出错）",
    "cat on dim=1 (heads), not 2": "在 `dim=1`（头）而不是 `dim=2` 上拼接",
    "cat on dim=2; check seq_len": "在 `dim=2` 上拼接；检查 seq_len",
    "Mask ignores the cache": "掩码忽略了缓存",
    "decode wrong (or shape error)": "解码出错（或形状报错）",
    "mask not offset/sized by past": "掩码的大小和偏移没算上历史长度",
    "mask [T, past + T], offset past": "掩码为 `[T, past + T]`，偏移 `past`",
    "Padded rows, lengths mixed": "填充批的有效长度弄混",
    "wrong from the prefill on": "从预填充起就错",
    "row masked with wrong length": "某行按错误的长度做了掩码",
    "row alone == row in batch": "单独跑一行 == 批中的这一行",
    "Dropout left on (train mode)": "dropout 没关（训练模式）",
    "random diffs, even at step 0": "随机出现差异，第 0 步就有",
    "model.train(): random masks": "`model.train()`：随机掩码",
    "model.eval()": "`model.eval()`",
    "Layer 0's K/V for all layers": "各层都用第 0 层的 K/V",
    "layers read layer 0's keys": "各层读的是第 0 层的键",
    "one K/V per layer": "每层一份 K/V",
    "Beam step without reorder": "束搜索后没有重排缓存",
    "beams drift after a reshuffle": "束重排后开始跑偏",
    "row i keeps old beam i": "第 i 行还是旧的第 i 个束",
    "cache.reorder(parents)": "`cache.reorder(parents)`",

    # --- utils/bug_lab/mysteries.py and probe.py (the rest: zh_bug_lab.py) ---------------------------------------------
    "✓ mystery {n} is '{word}': {title}. Cause: {cause}; check: {check}.":
        "✓ 谜题 {n} 就是 '{word}'：{title}。原因：{cause}；检查：{check}。",
    "pass": "前向计算",
    "tokens fed": "送入的 token 数",
    "last position": "最后的位置",
    "seq_len": "seq_len",
    "prefill": "预填充",
    "step {n}": "第 {n} 步",
    "yes": "是",
    "no": "否",

    # --- utils/bug_lab/harness.py show_diff: the diff's two sides, and the comments and docstrings of the
    # variants it shows (catalogue.py; harness.speak puts each in the reader's language) --------------------------
    "broken": "坏版本",
    "fixed": "修好版本",
    # 1. positions
    "Decode step that passes the new token's position explicitly.": "显式传入新 token 位置的解码步。",
    "BUG: as if nothing came before": "BUG：好像前面什么都没有",
    "FIX: position = number of cached tokens": "修复：位置 = 已缓存的 token 数",
    # 2. the prompt fed again
    "Each decode step feeds some of the text so far, on top of the cache.":
        "除了用缓存，每个解码步还送入目前文本的一部分。",
    "(B, T + 1): the text so far": "(B, T + 1)：目前为止的全部文本",
    "BUG: the cache already holds all but the last token": "BUG：除了最后一个 token，其余的缓存里都已经有了",
    "FIX: only the token the cache has not seen": "修复：只送入缓存还没见过的那个 token",
    # 3. the concatenation axis
    "Appends new K/V ``[B, H_kv, T_new, d_h]`` to what each layer holds.":
        "把新的 K/V ``[B, H_kv, T_new, d_h]`` 接在各层已存的内容后面。",
    "first write of this layer: nothing to append to": "这一层第一次写入：前面没有可接的内容",
    "BUG: dim=1 is H_kv, not time": "BUG：`dim=1` 是 H_kv，不是时间维",
    "FIX: dim=2 is time": "修复：`dim=2` 才是时间维",
    # 4. the mask
    "Decode step with an explicit mask ``[T_q=1, S]`` over the S = cached + 1 keys.":
        "带显式掩码 ``[T_q=1, S]`` 的解码步，S = 已缓存的键数 + 1。",
    "BUG: query 0 sees key 0 only, as without a cache": "BUG：查询 0 只能看到键 0，就像没有缓存一样",
    "FIX: shifted by the cache length": "修复：按缓存长度整体平移",
    "Prefill in two chunks; the second chunk's mask covers only its own T2 keys.":
        "分两块预填充；第二块的掩码只覆盖它自己的 T2 个键。",
    "Prefill in two chunks; the second chunk's mask covers the cached keys too.":
        "分两块预填充；第二块的掩码连已缓存的键也覆盖。",
    "chunk 1: an ordinary prefill": "第 1 块：普通的预填充",
    "BUG: [T2, T2], the cached keys are missing": "BUG：[T2, T2]，缺了已缓存的键",
    "FIX: [T2, cached + T2]": "修复：[T2, 已缓存数 + T2]",
    # 5. padding
    "Prefill a left-padded batch, rebuilding its mask from the rows' valid lengths.":
        "预填充一个左填充的批，并按各行的有效长度重建掩码。",
    "(B,): real tokens per row": "(B,)：每行的真实 token 数",
    "BUG: the lengths no longer line up with the rows (e.g. sorted elsewhere)": "BUG：长度和行对不上了（比如在别处排过序）",
    "(B, T): 1 on the last lengths[b]": "(B, T)：每行最后 `lengths[b]` 个位置为 1",
    "FIX: row b keeps its own length": "修复：第 b 行用它自己的长度",
    # 6. dropout
    "Get a model ready to decode: its mode decides whether dropout draws random masks.":
        "让模型准备好解码：它处于哪种模式，决定了 dropout 会不会抽取随机掩码。",
    "BUG: dropout stays on, as in training": "BUG：dropout 还开着，和训练时一样",
    "FIX: dropout is the identity": "修复：dropout 成了恒等映射",
    # 7. layer 0's K/V
    "Stores every layer's K/V; hands each layer a history to attend over.":
        "存下每一层的 K/V，并交给每一层一段历史，供注意力使用。",
    "(B, H_kv, T_past + T_new, d_h) stored for this layer": "(B, H_kv, T_past + T_new, d_h)：存为这一层的 K/V",
    "BUG: layer 0's history": "BUG：用的是第 0 层的历史",
    "FIX: its own": "修复：用这一层自己的历史",
    # 8. beams
    "Beam search with 3 beams; every step checks each beam's cached logits against a recompute.":
        "3 个束的束搜索；每一步都把每个束的缓存 logits 和重算结果对比。",
    "BUG: row i keeps old beam i": "BUG：第 i 行还是旧的第 i 个束",
    "FIX: cache.reorder(parents)": "修复：`cache.reorder(parents)`",
}

# The judges' diagnoses (utils/exercises/mistakes.py, decode_exercise.py) sit in their own part, to keep this one short.
from .zh_exercise_mistakes import MESSAGES as _MISTAKES  # noqa: E402

if set(_MISTAKES) & set(MESSAGES):
    raise ValueError(f"zh_exercise_mistakes repeats keys of zh_exercises: {sorted(set(_MISTAKES) & set(MESSAGES))}")
MESSAGES.update(_MISTAKES)
# Notebook 07's mysteries and chunk exercise, likewise in their own part.
from .zh_bug_lab import MESSAGES as _BUG_LAB  # noqa: E402

if set(_BUG_LAB) & set(MESSAGES):
    raise ValueError(f"zh_bug_lab repeats keys of zh_exercises: {sorted(set(_BUG_LAB) & set(MESSAGES))}")
MESSAGES.update(_BUG_LAB)
