"""Chinese catalogue part: the inference screens, the figures and panels of notebooks 00 to 04.

utils/plots/{prefill,attention,decode,sizing}.py and utils/widgets/{prefill,attention,decode,sizing}.py.
"""

MESSAGES: dict[str, str] = {
    # --- utils/plots/prefill.py (notebooks 00 and 02) ---------------------------------------------
    "One generation, measured": "一次生成的实测时间线",
    "setup + prefill (whole prompt) + first token": "准备 + 预填充（整个提示词）+ 第一个 token",
    "decode step (one token)": "解码步（每步一个 token）",
    "time (ms), fastest segments laid end to end": "时间（ms），各段取最快的一次，首尾相接",
    "zoom: the other candidates": "放大：其余候选",
    "TTFT {ms:.2f} ms": "TTFT {ms:.2f} ms",
    "'{token}'": "“{token}”",
    "→ '{token}'": "→ “{token}”",
    "{n} decode steps; TPOT, their mean: {ms:.2f} ms": "{n} 个解码步；TPOT 是它们的平均值：{ms:.2f} ms",
    "Next-token probabilities": "下一个 token 的概率",
    "candidate next token": "候选的下一个 token",
    "probability": "概率",
    "TTFT vs prompt length": "TTFT 与提示词长度",
    "prompt length T (tokens)": "提示词长度 T（token 数）",
    "TTFT: setup + prefill + first pick (ms)": "TTFT（ms）：准备 + 预填充 + 选词",
    "TTFT grows with T": "TTFT 随 T 增长",
    "value (colours clipped at ±{vmax:.1f},\nthe {p:g}th percentile of |value|)":
        "数值（颜色截断在 ±{vmax:.1f}，\n即 |数值| 的第 {p:g} 百分位数）",
    "prompt length T (tokens, log scale)": "提示词长度 T（token 数，对数坐标）",
    "TTFT per prompt token (µs, log scale)": "每个提示词 token 的 TTFT\n（µs，对数坐标）",  # two lines: one is taller than the axes
    "time per prompt token": "每个提示词 token 的耗时",
    "dimension of the head (0 .. d_h-1)": "头内的维度（0 .. d_h-1）",
    "position t: token": "位置 t：token",
    "value": "数值",
    "What a left-padded batch caches": "左填充的批在缓存里存了什么",
    "real token ({n})": "真实 token（{n}）",
    "padding ({n_pad}): cached anyway": "填充（{n_pad}）：照样占用缓存",
    "the model's probability (blue: the token picked)": "模型给出的概率（蓝色：选中的 token）",
    "row {b}: {n} real": "第 {b} 行：{n} 个真实 token",
    "cache position (one slot per row and position, in every layer)": "缓存位置（每层中每行每个位置占一格）",

    # --- utils/plots/attention.py (notebook 01) ----------------------------------------------------
    "Causal mask": "因果掩码",
    "key position j (token index)": "键的位置 j（token 序号）",
    "query position i (token index)": "查询的位置 i（token 序号）",
    "cached tokens:\nno query this step": "已缓存的 token：\n这一步没有查询",
    "query position offset + i (offset = {n})": "查询的位置：偏移量 + i（偏移量 = {n}）",
    "Attention weights (one head)": "注意力权重（单个头）",
    "key j (its token)": "键 j（对应的 token）",
    "query i (its token)": "查询 i（对应的 token）",
    "weight (row sums to 1)": "权重（每行之和为 1）",
    "K/V heads\n(H_kv={H_kv})": "K/V 头\n（H_kv={H_kv}）",
    "query heads\n(H={H})": "查询头\n（H={H}）",
    "head index\n(line: query head → its K/V head)": "头编号\n（连线：查询头 → 它读取的 K/V 头）",
    "{kind}: a single head": "{kind}：只有一个头",
    "False:\nmasked": "False：\n屏蔽",
    "MHA (= MQA)": "MHA（也是 MQA）",
    "True:\nmay attend": "True：\n可以关注",
    "{kind}: 1 query head per K/V head": "{kind}：每个 K/V 头对应 1 个查询头",
    "{kind}: {n_rep} query heads per K/V head": "{kind}：每个 K/V 头对应 {n_rep} 个查询头",
    "q·k after RoPE, for every pair of positions": "经过 RoPE 后的 q·k：任意两个位置之间",
    "key position n (token index)": "键的位置 n（token 序号）",
    "query position m (token index)": "查询的位置 m（token 序号）",
    "q·k score": "q·k 得分",
    "Softmax of q·k as the head grows wider": "头越宽，q·k 的 softmax 如何变化",
    " uniform: 1/{n_keys}": " 均匀分布：1/{n_keys}",
    " one-hot: 1": " 独热：1",
    "largest weight in a row (mean)": "一行的最大权重（均值）",
    "one key takes the weight": "权重集中到一个键上",
    " uniform: ln {n_keys} = {ln:.2f}": " 均匀分布：ln {n_keys} = {ln:.2f}",
    " one-hot: 0": " 独热：0",
    "entropy of a row (nats, mean)": "一行的熵（nat，均值）",
    "the row's spread collapses": "一行的分布迅速收窄",
    "head width d_h (log scale)": "头维度 d_h（对数坐标）",
    "RoPE: how fast each pair turns": "RoPE：每一对维度转得多快",
    "one turn in {n_positions} positions ": "{n_positions} 个位置转一整圈 ",
    "pair i (its dimensions: i and i + d_h/2)": "维度对 i（由维度 i 与 i + d_h/2 组成）",
    "θ_i (degrees per position, log)": "θ_i（每个位置转过的度数，对数坐标）",
    "θ_i = base^(−2i/d_h), shown in degrees": "θ_i = base^(−2i/d_h)，单位为度",
    "position p (token index)": "位置 p（token 序号）",
    "pair i": "维度对 i",
    "cos(p·θ_i), first {n} positions": "cos(p·θ_i)：前 {n} 个位置",
    "cos(p·θ_i), whole context ({n} positions)": "cos(p·θ_i)：整个上下文（{n} 个位置）",
    "too fast to draw here: see the middle panel": "转得太快，这里画不清：见中间一幅",
    "cos of the angle": "旋转角的 cos",

    # --- utils/plots/decode.py (notebook 03) -------------------------------------------------------
    "step (0 = prefill)": "步（0 = 预填充）",
    "position (token)": "位置（token）",
    "Loop without cache: step 0 is the prefill, nothing recomputed yet": "不带缓存的循环：第 0 步是预填充，还没有重算任何位置",
    "Loop without cache: step {step} recomputes {n} history positions":
        "不带缓存的循环：第 {step} 步重算 {n} 个历史位置",
    "layer": "层",
    "cached position (token)": "已缓存的位置（token）",
    "KV cache after step {step}: every layer holds {n} positions": "第 {step} 步之后的 KV 缓存：每层保存 {n} 个位置",
    "prompt (prefill)": "提示词（预填充）",
    "history recomputed (no cache)": "重算的历史位置（不带缓存）",
    "new token (both loops compute it)": "新 token（两种循环都要算）",
    "K/V appended by decode": "解码步追加的 K/V",
    "black frame: this step; its new K/V": "黑框：当前这一步；它新追加的 K/V",
    "pale: later steps, not run yet": "浅色：之后的步，还没运行",
    "grey: no token there yet": "灰色：这里还没有 token",
    "Cached vs full recompute, per step": "逐步对比：带缓存与完全重算",
    "max |diff| over the vocabulary": "整个词表上的 max |diff|",
    "exactly 0 (the line marked 0)": "恰好为 0（标为 0 的那条线）",
    "tolerance {tol:g}": "容差 {tol:g}",
    "step (0 = prefill logits, s = s-th decode step)": "步（0 = 预填充得到的 logits，s = 第 s 个解码步）",
    "max |logit difference|": "max |logits 之差|",
    "Time of one decode step vs context length": "单个解码步的耗时与上下文长度",
    "with KV cache (1 new token)": "带 KV 缓存（只送入 1 个新 token）",
    "without cache (all T + 1 tokens again)": "不带缓存（T + 1 个 token 全部重算）",
    "Both loops (log-log)": "两种循环（双对数坐标）",
    "with KV cache": "使用 KV 缓存",
    "The cached step alone (linear axes)": "只看带缓存的一步（线性坐标）",
    "context length T (tokens already in the context)": "上下文长度 T（上下文中已有的 token 数）",
    "fastest time per step (ms)": "每步最快耗时（ms）",
    "without cache: total": "不带缓存：总计",
    "with cache: total": "带缓存：总计",
    "with cache: attention over T + 1 keys": "带缓存：对 T + 1 个键的注意力",
    "context length T (tokens)": "上下文长度 T（token 数）",
    "tokens per sequence T": "每条序列的 token 数 T",
    "FLOPs per decode step": "每个解码步的 FLOPs",
    "Compute of one step": "一步的计算量",
    "weights read": "读取的权重",
    "K/V cache read": "读取的 K/V 缓存",
    "total": "总计",
    "MiB read per cached step ({dtype})": "带缓存时每步读取的 MiB（{dtype}）",
    "Memory one cached step reads": "带缓存时一步读取的数据量",
    "One decode step, counted: L={L}, C={C}, H={H}, H_kv={H_kv}, d_h={d_h}, d_ff={d_ff}, V={V}":
        "一个解码步的逐项计数：L={L}, C={C}, H={H}, H_kv={H_kv}, d_h={d_h}, d_ff={d_ff}, V={V}",
    "weights (the same at every T)": "权重（与 T 无关）",
    "K/V cache (grows with T)": "K/V 缓存（随 T 增长）",
    "What one step reads (counted)": "一步要读多少字节（逐项计数）",
    "fitted fixed part: {ms:.2f} ms": "拟合出的固定部分：{ms:.2f} ms",
    "fitted growing part: {ms:.2f} ms per 1k tokens": "拟合出的增长部分：每 1k 个 token {ms:.2f} ms",
    "fitted total": "拟合总计",
    "measured: median, bars first to third quartile": "实测：中位数，误差棒为第一至第三四分位数",
    "measured: fastest sample": "实测：每个 T 最快的一次采样",
    "right panel": "右图",
    "time per step (ms)": "每步耗时（ms）",
    "What one step takes (measured)": "一步要花多少时间（实测）",
    "K/V bytes = weight bytes at T = {T:,}": "K/V 字节数 = 权重字节数（T = {T:,}）",
    "fitted parts equal at T = {T:,.0f}": "拟合出的两部分相等（T = {T:,.0f}）",
    "context length T (tokens in the cache)": "上下文长度 T（缓存中的 token 数）",
    "Decode over a long context: L={L}, C={C}, H={H}, H_kv={H_kv}, d_h={d_h}, V={V} (1 CPU thread)":
        "长上下文下的解码：L={L}, C={C}, H={H}, H_kv={H_kv}, d_h={d_h}, V={V}（1 个 CPU 线程）",
    "The new token's query, one row per head": "新 token 的查询：每个头一行",
    "query head": "查询头",
    "key position (token); the last key is the new token's own": "键的位置（token）；最后一个是新 token 自己的键",
    "attention weight": "注意力权重",

    # --- utils/plots/sizing.py (notebook 04) -------------------------------------------------------
    " model's max context\n {n:,} tokens": " 模型的最大上下文\n {n:,} 个 token",
    "; dotted: past the model's max context": "；点线：超出模型的最大上下文",
    "KV cache memory ({unit})": "KV 缓存占用（{unit}）",
    "KV cache memory ({unit}, log scale)": "KV 缓存占用（{unit}，对数坐标）",
    "context length T (tokens, log scale)\neach line ends at its model's max context (dot)":
        "上下文长度 T（token 数，对数坐标）\n每条线止于该模型的最大上下文（圆点）",
    "KV cache memory vs context length T": "KV 缓存占用与上下文长度 T",
    "{g} GiB: a whole GPU, weights not counted": "{g} GiB：整张 GPU，未扣除权重",
    "{g} GiB: a whole GPU,\nweights not counted": "{g} GiB：整张 GPU，\n未扣除权重",
    "KV cache per token (KiB)": "每个 token 的 KV 缓存（KiB）",
    "KV cache per token (fp16, all layers, K and V)": "每个 token 的 KV 缓存（fp16，所有层，K 和 V）",
    "KV cache: real tokens of 1 request": "KV 缓存：1 个请求的真实 token",
    "KV cache: real tokens of {n:,} requests": "KV 缓存：{n:,} 个请求的真实 token",
    "KV cache: padding": "KV 缓存：填充",
    "KV cache of 1 request": "1 个请求的 KV 缓存",
    "KV cache of {n:,} requests": "{n:,} 个请求的 KV 缓存",
    "weights": "权重",
    "reserve": "预留",
    "unused": "未使用",
    "GPU memory (GiB)": "GPU 显存（GiB）",
    "Where the memory goes": "显存都花在了哪里",
    "each request reserves T positions": "每个请求预留 T 个位置",
    "each holds only its real tokens ({share:.0%} of T)": "每个请求只存真实 token（占 T 的 {share:.0%}）",
    " model's\n max context": " 模型的\n 最大上下文",
    "tokens per request T (log scale)": "每个请求的 token 数 T（对数坐标）",
    "requests that fit (log scale)": "能容纳的请求数（对数坐标）",
    "Longer requests, fewer of them": "请求越长，能容纳的越少",
    "the weights do not fit\non this GPU": "权重放不进\n这块 GPU",

    # --- utils/widgets/attention.py (notebook 01) --------------------------------------------------
    "Attention shapes: move T, H and H_kv": "注意力里的张量形状：拖动 T、H 和 H_kv",
    "T (tokens)": "T（token 数）",
    "H (query heads)": "H（查询头数）",
    "H_kv (K/V heads)": "H_kv（K/V 头数）",
    "input": "输入",
    "queries: x @ W_q, split into heads": "查询：x @ W_q，再按头拆开",
    "keys: x @ W_k (what the cache stores)": "键：x @ W_k（缓存存的就是它）",
    "values: x @ W_v (what the cache stores)": "值：x @ W_v（缓存存的就是它）",
    "keys after repeat_kv (same for values)": "repeat_kv 之后的键（值也一样）",
    "softmax of the masked scores q @ kᵀ / √d_h": "加掩码后的分数 q @ kᵀ / √d_h 做 softmax 得到的权重",
    "weights @ v": "权重 @ v",
    "heads concatenated (then W_o)": "各头拼接起来（之后乘 W_o）",
    "; ": "；",
    "query heads {heads} → K/V head {j}": "查询头 {heads} → K/V 头 {j}",
    "query head {head} → K/V head {j}": "查询头 {head} → K/V 头 {j}",
    "True: may attend": "True：可以关注",
    "False: masked": "False：屏蔽",
    "tensor": "张量",
    "what": "含义",
    "symbols": "符号",
    "shape": "形状",
    "<b>{kind}</b>: <span class=\"kv-heads\">{n_kv}</span> K/V head(s) for {H} query head(s) "
    "({n_rep} query head(s) per K/V head). {groups}.":
        "<b>{kind}</b>：{H} 个查询头共用 <span class=\"kv-heads\">{n_kv}</span> 个 K/V 头"
        "（每个 K/V 头对应 {n_rep} 个查询头）。{groups}。",
    "Per token and layer the cache keeps 2·H_kv·d_h = <b>{n}</b> numbers "
    "(MHA with the same H would keep {n_mha}).":
        "缓存为每个 token、每一层保存 2·H_kv·d_h = <b>{n}</b> 个数（H 相同的 MHA 要保存 {n_mha} 个）。",
    "Per token and layer the cache keeps 2·H_kv·d_h = <b>{n}</b> numbers.":
        "缓存为每个 token、每一层保存 2·H_kv·d_h = <b>{n}</b> 个数。",
    "Equals torch's scaled_dot_product_attention: <b>{same}</b>":
        "与 torch 的 scaled_dot_product_attention 结果一致：<b>{same}</b>",
    "Causal mask, T={T}": "因果掩码，T={T}",
    "Weights of query head 0": "查询头 0 的注意力权重",

    # --- utils/widgets/prefill.py (notebook 02) ----------------------------------------------------
    "Prefill: the K/V every layer keeps": "预填充：每一层各自保存的 K/V",
    "prompt": "提示词",
    "K/V head": "K/V 头",
    "this is layer 0 itself": "这就是第 0 层本身",
    "other numbers, not a rescaled copy of layer 0's": "是另一组数，不是第 0 层的缩放版",
    "prompt ({T} tokens): <code>{words}</code>": "提示词（{T} 个 token）：<code>{words}</code>",
    "cache after prefill: {L} layers &times; (K, V), each <code>[B, H_kv, T, d_h] = {shape}</code>, "
    "cache length {n}":
        "预填充后的缓存：{L} 层 &times; (K, V)，每个都是 <code>[B, H_kv, T, d_h] = {shape}</code>，缓存长度 {n}",
    "{x} of layer {layer}, head {head}: ": "第 {layer} 层、头 {head} 的 {x}：",
    "({same})": "（{same}）",
    "first token picked from the last position's logits: <b>{token}</b> (p = {p:.2f})":
        "由最后一个位置的 logits 选出的第一个 token：<b>{token}</b>（p = {p:.2f}）",
    "cached {x}, layer {layer}, K/V head {head}: [T={T}, d_h={d_h}]":
        "缓存中的 {x}，第 {layer} 层，K/V 头 {head}：[T={T}, d_h={d_h}]",
    "<small>colours: one scale for all layers and heads of this prompt's {x} (the {p}th percentile of "
    "|value|), so in some layers more cells reach the end colours</small>":
        "<small>颜色：这个提示词的 {x} 在所有层、所有头上共用一个色标（|值| 的第 {p} 百分位），"
        "所以有些层会有更多格子落在两端的颜色上</small>",

    # --- utils/widgets/decode.py (notebook 03) -----------------------------------------------------
    "prefill": "预填充",
    "step {r}": "第 {r} 步",
    "layer {layer}": "第 {layer} 层",
    "<b>Loop without cache</b>: step 0 is the prefill, nothing recomputed yet":
        "<b>不带缓存的循环</b>：第 0 步是预填充，还没有重算任何位置",
    "<b>Loop without cache</b>: step {step} recomputes {n} history positions":
        "<b>不带缓存的循环</b>：第 {step} 步重算 {n} 个历史位置",
    "<b>KV cache</b> after step {step}: every layer holds {n} positions":
        "第 {step} 步之后的 <b>KV 缓存</b>：每层保存 {n} 个位置",
    "Decode, step by step: what a loop without cache recomputes, and how the cache grows":
        "逐步解码：不带缓存的循环要重算什么，缓存又是怎样增长的",
    "<BOS> she has": "<BOS> 我 喜欢",
    "step": "步",
    "Unknown word(s): {words}. Use words of the course vocabulary separated by spaces, "
    "e.g. '{example}'. Known words: {examples}":
        "词表里没有这些词：{words}。请用课程词表中的词，以空格分隔，例如 '{example}'。词表中的中文词：{examples}",
    "The prompt has {n} tokens; at most {limit} fit (max_seq_len={max_seq_len} minus {new} new tokens).":
        "提示词有 {n} 个 token，最多只能放 {limit} 个（max_seq_len={max_seq_len} 减去 {new} 个新 token）。",
    "prefill: {T0} prompt tokens at positions 0..{last} go through all {L} layers at once":
        "预填充：位置 0..{last} 上的 {T0} 个提示词 token 一次性经过全部 {L} 层",
    "decode step {step} of {n}: feeds <b>{token}</b> at position {position} (= the cache length "
    "before the step); a loop without cache would recompute {n_recomputed} history positions ({total} so far)":
        "解码第 {step} 步（共 {n} 步）：在位置 {position}（= 这一步之前的缓存长度）送入 <b>{token}</b>；"
        "无缓存的循环要重算 {n_recomputed} 个历史位置（到这一步累计 {total} 个）",
    "{what}; every layer's cache now holds <b>{n}</b> positions; this step's logits pick <b>{token}</b>":
        "{what}；现在每层的缓存保存 <b>{n}</b> 个位置；这一步的 logits 选出 <b>{token}</b>",
    "stopped at &lt;EOS&gt;": "遇到 &lt;EOS&gt; 停止",
    "stopped after {n} new tokens": "生成 {n} 个新 token 后停止",
    "prompt: {prompt} &rarr; greedy continuation: <b>{generated}</b> ({stop})":
        "提示词：{prompt} &rarr; 贪心续写：<b>{generated}</b>（{stop}）",

    # --- utils/widgets/sizing.py (notebook 04) -----------------------------------------------------
    "(custom)": "（自定义）",
    "{n:,} bytes ({human})": "{n:,} 字节（{human}）",
    "model preset": "模型预设",
    "L (layers)": "L（层数）",
    "B (sequences)": "B（序列数）",
    "d_h (head width)": "d_h（头维度）",
    "KV cache explorer: 2 · L · B · H_kv · T · d_h · bytes": "KV 缓存探索器：2 · L · B · H_kv · T · d_h · 字节数",
    "2 × L {L} × B {B} × H_kv {H_kv} × T {T:,} × d_h {d_h} × {size} byte(s) ({dtype})":
        "2 × L {L} × B {B} × H_kv {H_kv} × T {T:,} × d_h {d_h} × {size} 字节（{dtype}）",
    "{preset} reads at most {n:,} tokens": "{preset} 的最大上下文为 {n:,} 个 token",
    "(T is beyond it)": "（T 超出了这个上限）",
    "KV cache: ": "KV 缓存：",
    "per token position, all B sequences: {bytes}": "每个 token 位置（B 条序列合计）：{bytes}",
    "{size} bytes per number: {names}": "每个数 {size} 字节：{names}",
    "{size} byte per number: {names}": "每个数 {size} 字节：{names}",
    "KV cache vs T  (L={L}, B={B}, H_kv={H_kv}, d_h={d_h})": "KV 缓存随 T 的变化（L={L}，B={B}，H_kv={H_kv}，d_h={d_h}）",
    "Budget planner: how many requests of T tokens fit?": "显存预算：长度为 T 的请求能同时放下多少个？",
    "model": "模型",
    "weights dtype": "权重 dtype",
    "cache dtype": "缓存 dtype",
    "reserve (activations, ...)": "预留（激活值等）",
    "padding (share of T)": "填充（占 T 的比例）",
    "<b>{model}</b>: weights {weights}, reserve {reserve}, left for the KV cache {free}.":
        "<b>{model}</b>：权重 {weights}，预留 {reserve}，留给 KV 缓存 {free}。",
    "The weights alone do not fit on this GPU: 0 requests.": "光是权重就放不进这块 GPU：0 个请求。",
    "One request of T = {T:,} tokens holds {bytes} of cache.": "一个 T = {T:,} 个 token 的请求占用缓存 {bytes}。",
    "One request of T = 1 token holds {bytes} of cache.": "一个 T = 1 个 token 的请求占用缓存 {bytes}。",
    "Concurrent requests that fit: ": "能同时容纳的请求数：",
    " ({n:,} tokens cached in total).": "（缓存中共 {n:,} 个 token）。",
    " (1 token cached in total).": "（缓存中共 1 个 token）。",
    "With {padding:.1%} padding each request holds {real} real tokens on average: of the {used} of cache these "
    "requests occupy, <b class=\"padding-bytes\">{padding_bytes}</b> hold padding.":
        "填充占 {padding:.1%} 时，每个请求平均只有 {real} 个真实 token：这些请求占用的 {used} 缓存中，"
        "<b class=\"padding-bytes\">{padding_bytes}</b> 存的是填充。",
    "With {padding:.1%} padding each request holds less than one real token on average: of the {used} of cache "
    "these requests occupy, <b class=\"padding-bytes\">{padding_bytes}</b> hold padding.":
        "填充占 {padding:.1%} 时，每个请求平均连一个真实 token 都不到：这些请求占用的 {used} 缓存中，"
        "<b class=\"padding-bytes\">{padding_bytes}</b> 存的是填充。",
    "Holding only real tokens, <b class=\"n-real-only\">{n:,}</b> requests would fit.":
        "如果每个请求只存真实 token，能放下 <b class=\"n-real-only\">{n:,}</b> 个请求。",
    "Holding only real tokens, <b class=\"n-real-only\">1</b> request would fit.":
        "如果每个请求只存真实 token，能放下 <b class=\"n-real-only\">1</b> 个请求。",
    "Note: T is beyond this model's max context ({n:,}).": "注意：T 超出了这个模型的最大上下文（{n:,}）。",
    # DecodePanel: what a prompt box assumed
    " ... and {n:,} more": " …… 另有 {n:,} 个",
    "The prompt is empty: decoding starts from <BOS> alone.": "提示词是空的：解码只从 <BOS> 开始。",
    "{tokens} cannot be in a prompt: <PAD> only fills a batch's empty slots, and <EOS> ends the text. Remove it, "
    "e.g. '<BOS> she has'.":
        "提示词里不能有 {tokens}：<PAD> 只用来填充一批中的空位，<EOS> 表示文本结束。请删掉它，例如 '<BOS> 我 喜欢'。",
    "{tokens} inside a prompt is read as an ordinary token (the model saw <BOS> only at the start, <PAD> never, "
    "<EOS> only at the end): expect odd continuations.":
        "提示词中间的 {tokens} 会被当作普通 token 读入（训练时模型只在开头见过 <BOS>，从没见过 <PAD>，"
        "<EOS> 只出现在结尾）：续写可能很奇怪。",
}
