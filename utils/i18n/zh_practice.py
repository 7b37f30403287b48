"""Chinese catalogue part: notebooks 05 to 08 (sampling, metrics, the bug lab, beyond the basics),
the text of their figures and panels (see utils/i18n/__init__.py).

utils/plots/{sampling,metrics,bug_lab,beyond}.py and utils/widgets/{sampling,metrics,bug_lab,beyond}.py.
The bug titles, symptoms, causes and fixes these show come from utils/bug_lab/catalogue.py: their Chinese is in zh_exercises.py.
"""

MESSAGES: dict[str, str] = {
    # --- 05 · sampling: plots/sampling.py ------------------------------------------------------------
    "1 · the model's distribution: softmax(logits)": "1 · 模型的分布：softmax(logits)",
    "2 · greedy: all mass on the argmax": "2 · 贪心：全部概率都给 argmax",
    "2 · temperature τ = {T:g}: softmax(logits / {T:g})": "2 · 温度 τ = {T:g}：softmax(logits / {T:g})",
    "3 · top-k off": "3 · top-k 关闭",
    "3 · top-k = {k}: no effect at τ = 0": "3 · top-k = {k}：τ = 0 时不起作用",
    "3 · top-k = {k}: only the {k} most likely stay": "3 · top-k = {k}：只留下概率最高的 {k} 个",
    "4 · top-p off": "4 · top-p 关闭",
    "4 · top-p = {p:g}: no effect at τ = 0": "4 · top-p = {p:g}：τ = 0 时不起作用",
    "4 · top-p = {p:g}: smallest set reaching {p:g}": "4 · top-p = {p:g}：累计概率达到 {p:g} 的最小集合",
    " → what sample() draws from": " → 实际采样用的分布",
    " (kept set: {n} tokens)": "（保留集合：{n} 个 token）",
    " (kept set: 1 token)": "（保留集合：1 个 token）",
    "probability": "概率",
    "next token (the {n} most likely under the model; #id = its token id)":
        "下一个 token（模型认为最可能的 {n} 个；#id 是它的 token id）",
    "{p:.0e}: kept, but ≈ 0": "{p:.0e}：仍保留，但 ≈ 0",
    "× = removed; ○ = 0 in float32, not removed; ≈0 = still in at this stage, p < 0.005 (it would print as 0.00)":
        "× = 已被去掉；○ = 在 float32 中为 0，并未被去掉；≈0 = 在这一阶段仍在，p < 0.005（按两位小数会显示成 0.00）",
    "τ = 0 (greedy)": "τ = 0（贪心）",
    "next token (most likely first)": "下一个 token（按概率从高到低）",
    "Temperature reshapes the distribution": "温度改变分布的形状",
    # widgets/sampling.py
    "From logits to a token: temperature, top-k, top-p": "从 logits 到 token：温度、top-k、top-p",
    "prompt": "提示词",
    "temperature (0 = greedy)": "温度（0 = 贪心）",
    "top_k ({V} = off)": "top_k（{V} = 关闭）",
    "top_p (1 = off)": "top_p（1 = 关闭）",
    "<b>{prompt}</b> → kept set: <b>{kept}</b> of {V} tokens, holding {measured:.3f} of the probability "
    "after temperature and top-k (where top-p measures it) and {mass:.3f} of the model's own "
    "(renormalised to {total:.3f}); greedy would pick <b>{greedy}</b>":
        "<b>{prompt}</b> → 保留集合：{V} 个 token 中的 <b>{kept}</b> 个。经过温度和 top-k 之后（top-p 就在这里算概率之和），"
        "它们的概率之和是 {measured:.3f}；在模型原始分布上是 {mass:.3f}（重新归一化后总和为 {total:.3f}）；"
        "贪心解码会选 <b>{greedy}</b>",
    "… and {n} more": "……还有 {n} 个",
    "kept token": "保留的 token",
    "Next token after “{prompt}”": "“{prompt}”之后的下一个 token",

    # --- 06 · performance metrics: plots/metrics.py -------------------------------------------------
    "bench {name}": "基准测试模型 {name}",
    "prompt length T (tokens)": "提示词长度 T（token 数）",
    "TTFT: the first token needs the whole prompt": "TTFT：第一个 token 要等整个提示词处理完",
    "context length T (tokens already there)": "上下文长度 T（已有的 token 数）",
    "TPOT: time of one decode step (ms)": "TPOT：一个解码步的时间（ms）",
    "TPOT: the cache makes each step small": "TPOT：有了缓存，每步开销都很小",
    "with KV cache": "使用 KV 缓存",
    "without cache (recompute everything)": "不用缓存（完全重算）",
    "TTFT and TPOT, with and without the KV cache": "有无 KV 缓存时的 TTFT 与 TPOT",
    "end to end: B × n / latency": "端到端：B × n / 延迟",
    "while decoding: B / TPOT": "解码期间：B / TPOT",
    "throughput (new tokens/s, all rows)": "吞吐量（新 tokens/s，所有行合计）",
    "The server's view: throughput": "服务器视角：吞吐量",
    "latency (end to end)": "端到端延迟",
    "time (ms, log scale)": "时间（ms，对数坐标）",
    "One request's view: latency": "单个请求视角：延迟",
    "batch size B (requests decoded together)": "批大小 B（一起解码的请求数）",
    "Batching: more tokens per second, slower for each request": "批处理：每秒产出的 token 更多，每个请求却更慢",
    "waiting": "等待",
    "setup + prefill": "准备 + 预填充",
    "first sampling": "第一次采样",
    "first sampling (too short to see)": "第一次采样（太短，看不见）",
    "weights + KV cache need {need}, more than the {memory} this GPU holds: this batch does not fit":
        "权重加 KV 缓存需要 {need}，超过这块 GPU 的 {memory} 显存：这个批放不下",
    "decode steps (one per token)": "解码步（每个 token 一步）",
    "arrives": "到达",
    "request": "请求",
    "time (ms)": "时间（ms）",
    "{name}: TTFT p50 {p50:.1f} ms, p95 {p95:.1f} ms | {tokens:.0f} tokens/s and {requests:.0f} requests/s over "
    "the run, {busy:.0f} tokens/s while computing":
        "{name}：TTFT p50 {p50:.1f} ms，p95 {p95:.1f} ms | 全程 {tokens:.0f} tokens/s、{requests:.0f} requests/s，"
        "计算期间 {busy:.0f} tokens/s",
    "The same requests, served three ways": "同一批请求，三种服务方式",
    "{part}: {ms:.2f} ms": "{part}：{ms:.2f} ms",
    "request {request}: time since it arrived (ms); TTFT = {ttft:.2f} ms":
        "请求 {request}：从到达起经过的时间（ms）；TTFT = {ttft:.2f} ms",
    "Request {request}'s TTFT = waiting + setup and prefill + first sampling":
        "请求 {request} 的 TTFT = 等待 + 准备与预填充 + 第一次采样",
    "TTFT has parts": "TTFT 由几部分组成",
    "TTFT (ms, log scale)": "TTFT（ms，对数坐标）",
    "TTFT (ms)": "TTFT（ms）",
    "TPOT (ms)": "TPOT（ms）",
    "tokens/s over the run": "全程 tokens/s",
    "Time to first token (solid p50, dashed p95)": "首 token 延迟（实线 p50，虚线 p95）",
    "Time per output token (solid p50, dashed p95)": "每个输出 token 的时间（实线 p50，虚线 p95）",
    "Throughput": "吞吐量",
    "arrival rate (requests/s, log scale)": "到达率（requests/s，对数坐标）",
    "Three policies as the arrival rate grows": "到达率上升时的三种策略",
    "Where markers nest, the policies' values coincide: a line that seems missing lies under another one.":
        "标记套在一起的地方，几种策略的数值相同：看似缺了的线就压在另一条线下面。",
    "p50 (median)": "p50（中位数）",
    "memory roof: B / (bytes / bandwidth)": "访存屋顶：B / (字节数 / 带宽)",
    "compute roof: B / (FLOPs / peak)": "算力屋顶：B / (FLOPs / 峰值)",
    "roofline (the lower roof)": "屋顶线（取较低的屋顶）",
    "ridge batch B = {B}": "脊点批大小 B = {B}",
    "ridge B = {B}": "脊点 B = {B}",
    "decode step's own bandwidth: B = {B}": "按解码步实际带宽：B = {B}",
    "measured: B / TPOT": "实测：B / TPOT",
    "batch size B (rows decoded together)": "批大小 B（一起解码的行数）",
    "decode tokens/s (all rows)": "解码 tokens/s（所有行合计）",
    "Decode throughput against the roofline": "解码吞吐量与屋顶线",
    "copy\n(read + write)": "复制\n（读 + 写）",
    "sum\n(read only)": "求和\n（只读）",
    "decode step\n(bytes / time)": "解码步\n（字节数 / 时间）",
    "measured limit": "实测上限",
    "bars: the median of {n} samples; whiskers: the smallest to the largest": "柱高：{n} 个样本的中位数；误差线：从最小值到最大值",
    "{fraction:.0%} of the limit": "达到上限的 {fraction:.0%}",
    "memory bandwidth (GB/s)": "内存带宽（GB/s）",
    "Batch-1 decode against the memory bandwidth": "批大小为 1 的解码与内存带宽",
    "memory roof": "访存屋顶",
    "compute roof": "算力屋顶",
    "the limit": "上限",
    "most tokens/s (all rows)": "最高 tokens/s（所有行合计）",
    "Throughput limit = B / max(bytes / bandwidth, FLOPs / peak)": "吞吐量上限 = B / max(字节数 / 带宽, FLOPs / 峰值)",
    "weights (read once per step)": "权重（每步读一次）",
    "K/V cache (read once per row)": "K/V 缓存（每行读一次）",
    "bytes read per decode step (GB)": "每个解码步读取的字节数（GB）",
    "What one step reads": "一步读取了什么",
    "batch size B": "批大小 B",
    ", {peak} TFLOP/s": "，{peak} TFLOP/s",
    "{model}, {dtype}, T = {T:,} per row, {bandwidth} GB/s{peak}":
        "{model}，{dtype}，每行 T = {T:,}，{bandwidth} GB/s{peak}",
    # widgets/metrics.py: DecodeBoundPanel
    "The roofline of decode: fastest TPOT = max(bytes / bandwidth, FLOPs / peak)":
        "解码的屋顶线：最快 TPOT = max(字节数 / 带宽, FLOPs / 峰值)",
    "laptop, 2 x DDR5-5600": "笔记本电脑，双通道 DDR5-5600",
    "Apple M2 Max": "Apple M2 Max",
    "NVIDIA A100 80GB SXM (HBM2e)": "NVIDIA A100 80GB SXM（HBM2e）",
    "NVIDIA H100 SXM (HBM3)": "NVIDIA H100 SXM（HBM3）",
    "this machine (measured, {bandwidth:.1f} GB/s)": "本机（实测 {bandwidth:.1f} GB/s）",
    "this machine (measured, {bandwidth:.1f} GB/s, {flops:.0f} GFLOP/s float32)":
        "本机（实测 {bandwidth:.1f} GB/s，{flops:.0f} GFLOP/s float32）",
    # utils/perf/timers.py: measure_machine, the roofs of this machine
    "this CPU ({n} thread(s), float32)": "本机 CPU（{n} 个线程，float32）",
    "measured (a square float32 matmul and a sum over a large buffer)":
        "实测（一次 float32 方阵乘法，以及对一大块缓冲区求和）",
    # utils/roofline.py: GPU_ROOFS, the published roofs (Roofs.cited_source)
    "NVIDIA A100 datasheet (bf16 dense 312 TFLOPS, HBM2e 2,039 GB/s)":
        "NVIDIA A100 数据手册（bf16 稠密算力 312 TFLOPS，HBM2e 2,039 GB/s）",
    "NVIDIA H100 datasheet (bf16 dense 989 TFLOPS, HBM3 3.35 TB/s)":
        "NVIDIA H100 数据手册（bf16 稠密算力 989 TFLOPS，HBM3 3.35 TB/s）",
    "model": "模型",
    "dtype (weights and cache)": "dtype（权重与缓存）",
    "B (rows decoded together)": "B（一起解码的行数）",
    "T (tokens per row so far)": "T（每行目前的 token 数）",
    "hardware": "硬件",
    "T is beyond what {model} reads ({n:,})": "T 超出了 {model} 的最大上下文（{n:,}）",
    "beyond B = 4,096": "超过 B = 4,096",
    "FLOPs per step / at the peak ({peak} TFLOP/s)": "每步 FLOPs / 按峰值（{peak} TFLOP/s）算的时间",
    "ridge batch (compute-bound from)": "脊点批大小（从这里起计算受限）",
    "no published {dtype} peak for this hardware here: memory roof only": "没有该硬件公开的 {dtype} 峰值：只看访存屋顶",
    "not measured in {dtype} on this machine: memory roof only": "本机没有测 {dtype} 的峰值：只看访存屋顶",
    "weights read per step": "每步读取的权重",
    "K/V cache read per step (B × T positions)": "每步读取的 K/V 缓存（B × T 个位置）",
    "bytes per step / per new token": "每步 / 每个新 token 的字节数",
    "time to read them (memory roof)": "读完它们的时间（访存屋顶）",
    "fastest possible TPOT (memory-bound)": "最快可能的 TPOT（访存受限）",
    "fastest possible TPOT (compute-bound)": "最快可能的 TPOT（计算受限）",
    "K/V share of the bytes read": "读取字节中 K/V 的占比",
    "KV cache memory": "KV 缓存占用",
    # widgets/metrics.py: ArrivalsPanel and POLICY_NAMES
    "Requests arriving over time, served three ways": "陆续到达的请求，三种服务方式",
    "one at a time (FIFO)": "逐个处理（FIFO）",
    "static batches": "静态批处理",
    "continuous batching": "连续批处理",
    "arrival rate (requests/s)": "到达率（requests/s）",
    "B (most rows in a batch)": "B（一批最多几行）",
    "static: longest wait for a full batch (ms)": "静态批处理：凑满一批最多等待（ms）",
    "policy": "策略",
    "end to end p50 / p95": "端到端 p50 / p95",
    "tokens/s": "tokens/s",
    "requests/s": "requests/s",
    "tokens/s while computing": "计算期间 tokens/s",
    "percentiles: numpy's default (linear interpolation); times from per-iteration costs measured on this machine "
    "(StepCostModel)":
        "分位数按 NumPy 的默认方式（线性插值）计算；时间来自在本机实测、按迭代拟合的开销（StepCostModel）",
    "{n} requests at {rate} per second, B = {B}, static timeout {timeout} ms":
        "{n} 个请求，每秒到达 {rate} 个，B = {B}，静态批处理超时 {timeout} ms",

    # --- 07 · bug lab: plots/bug_lab.py ------------------------------------------------------------
    "tolerance {tol:g}": "容差 {tol:g}",
    "hollow: exactly 0 (drawn at the bottom)": "空心：恰好为 0（画在底边）",
    "step (0 = prefill, s = s-th decode step)": "步（0 = 预填充，s = 第 s 个解码步）",
    "max |logit difference| (logit units)": "max |logits 之差|（与 logits 同单位）",
    "Cached vs recomputed logits, per step": "逐步对比：带缓存与完全重算的 logits",
    "Where each bug shows up (broken variants)": "每个 bug 在哪一步暴露（坏版本）",
    "(white: steps not reached, torch raised an error)": "（白色：torch 已报错，这些步没有运行）",
    "raises": "报错",
    "log10 max |logit diff|": "log10 max |logits 之差|",
    # widgets/bug_lab.py
    "Bug lab: break the cache, then fix it": "Bug 实验室：先弄坏缓存，再把它修好",
    "bug": "bug",
    "apply the fix": "应用修复",
    "fixed code": "修好版本的代码",
    "broken code": "坏版本的代码",
    "{code}, checked against a full recompute: {verdict}": "{code}与完全重算对比：{verdict}",
    "symptom": "症状",
    "cause": "原因",
    "check / fix": "检查 / 修复",
    "{title} (fixed)": "{title}（修好版本）",
    "{title} (broken)": "{title}（坏版本）",

    # --- 08 · beyond the basics: plots/beyond.py ---------------------------------------------------
    "dynamic": "动态",
    "static": "静态",
    "sliding": "滑动窗口",
    "tokens processed (prompt + generated)": "已处理的 token 数（提示词 + 生成）",
    "K/V memory held (KiB)": "K/V 占用的内存（KiB）",
    "Memory": "内存",
    "new K buffers allocated (layer 0)": "新分配的 K 缓冲区个数（第 0 层）",
    "New buffers (the static cache allocated once, before the prompt)": "新缓冲区（静态缓存只在处理提示词前分配一次）",
    "What each cache holds and allocates": "每种缓存占用多少、分配几次",
    "vs full attention": "对比完全注意力",
    "vs sliding-window recompute (band mask)": "对比滑动窗口重算（带状掩码）",
    "window full (W = {W})": "窗口已满（W = {W}）",
    "position of the token (0-based)": "token 的位置（从 0 开始）",
    "Sliding-window cache: logits": "滑动窗口缓存：logits",
    "tokens seen = next RoPE position": "已见 token 数 = 下一个 RoPE 位置",
    "positions stored in the cache": "缓存中存着的位置数",
    "count (tokens)": "数量（token）",
    "Memory stays at W, positions keep counting": "内存停在 W，位置编号继续增长",
    "Sliding window W = {W}": "滑动窗口 W = {W}",
    "KVCache (grows by torch.cat)": "KVCache（用 torch.cat 变长）",
    "StaticKVCache (writes in place)": "StaticKVCache（原地写入）",
    "tokens already in the cache (T)": "缓存中已有的 token 数（T）",
    "median time per decode step (ms)": "每个解码步耗时中位数（ms）",
    "One decode step: KVCache vs StaticKVCache": "一个解码步：KVCache 对比 StaticKVCache",
    "step (new token number)": "步（第几个新 token）",
    "beam = cache row": "束 = 缓存行",
    "Beam search: which beam continues which": "束搜索：哪条束接着哪条束",
    # widgets/beyond.py
    "Sliding-window cache: memory vs exactness": "滑动窗口缓存：内存与精确性的取舍",
    "window W": "窗口 W",
    "tokens fed": "送入的 token 数",
    "never: every position still sees all its history": "从不，每个位置仍能看到全部历史",
    "from position {position} on (the first token whose window has dropped a key)":
        "从位置 {position} 起（第一个窗口丢掉了键的 token）",
    "W = {W}, {n} tokens fed: the cache holds <b>{stored}</b> positions ({nbytes:,} bytes; a full cache would hold "
    "{n} positions, {full_nbytes:,} bytes); the next token gets RoPE position <b>{seen}</b>.":
        "W = {W}，已送入 {n} 个 token：缓存存着 <b>{stored}</b> 个位置（{nbytes:,} 字节；完整缓存要存 {n} 个位置，"
        "{full_nbytes:,} 字节）；下一个 token 的 RoPE 位置是 <b>{seen}</b>。",
    "Logits differ from full attention: <b>{first}</b>.": "logits 何时开始与完全注意力不同：<b>{first}</b>。",
    "Equal to the sliding-window recompute (band mask) at every position: <b>{equal}</b>":
        "每个位置都与滑动窗口重算（带状掩码）一致：<b>{equal}</b>",
}
