"""Chinese catalogue part: the check helper, the recompute verdict and the panels' frame."""

MESSAGES: dict[str, str] = {
    # utils/check.py: check(label, condition, expect)
    "{label}: {value}{note}": "{label}：{value}{note}",
    " (a broken variant: expected False)": "（故意展示的错误版本：预期就是 False）",
    " (expected False)": "（预期为 False）",
    # utils/recompute.py: RecomputeReport.verdict
    "OK: cached == recompute within {tol} for {n} steps": "通过：{n} 步中缓存结果与完全重算一致（容差 {tol}）",
    "DIVERGED at step {step} (position {position}): max |diff| = {diff} > tol {tol}":
        "第 {step} 步（位置 {position}）出现偏差：max |diff| = {diff} > 容差 {tol}",
    # utils/series.py: the course map of notebook 00 (titles as the Chinese lessons have them)
    "| # | notebook | what it teaches |": "| # | 笔记本 | 讲什么 |",
    "Tour: prefill, then decode": "导览：先预填充，再解码",
    "The attention block": "注意力块",
    "Prefill": "预填充",
    "Decode with a KV cache": "带 KV 缓存的解码",
    "Cache sizing": "缓存大小估算",
    "Sampling and stopping": "采样与停止",
    "Performance metrics": "性能指标",
    "Bug lab": "Bug 实验室",
    "Beyond the basics": "进阶",
    "Self-test": "自测",
    "Appendix A1: paged KV blocks and prefix caching": "附录 A1：分页 KV 块与前缀缓存",
    "Appendix A2: continuous batching and chunked prefill": "附录 A2：连续批处理与分块预填充",
    "Appendix B1: speculative decoding with cache rollback": "附录 B1：推测解码与缓存回滚",
    "Appendix B2: a smaller KV cache, by quantization and eviction": "附录 B2：更小的 KV 缓存：量化与淘汰",
    "Appendix C: the numerics of cached inference": "附录 C：带缓存推理的数值问题",
    "why cached and recomputed logits differ in the last bits: summation order, the first op that differs, "
    "batch invariance, when a greedy token flips, and transformers' use_cache":
        "带缓存与重算的 logits 为什么在最后几位上不同：求和顺序、第一个出现差异的算子、批不变性、"
        "贪心选出的 token 何时翻转，以及 transformers 的 use_cache",
    "a draft proposes k tokens, the target checks them in one pass; greedy equals the target alone, "
    "sampling keeps its distribution, both caches roll back; the speed-up, measured and modelled":
        "草稿模型提出 k 个 token，目标模型在一次前向计算中把它们全部验证；贪心时输出与目标模型单独运行一致，"
        "采样时保持目标模型的分布，两个缓存都要回滚；加速比的实测与建模",
    "K/V quantized to 8 or 4 bits (keys per channel, values per token, an exact recent window) and "
    "evicted under a budget (sinks + window, key norm, attention); memory against quality, measured":
        "把 K/V 量化到 8 位或 4 位（键按通道、值按 token，最近的窗口保持精确），以及在位置预算下淘汰"
        "（汇聚点 + 窗口、键范数、注意力得分）；实测内存与质量的取舍",
    "one pool of fixed-size blocks shared by every request, block tables, copy-on-write, and prefix "
    "caching that prefills a shared system prompt once":
        "所有请求共用一个由固定大小的块组成的池；块表、写时复制，以及让共享的系统提示词只预填充一次的前缀缓存",
    "a small serving engine on the paged cache: continuous batching, chunked prefill, preemption, "
    "every request equal to its solo run":
        "基于分页缓存的小型推理服务引擎：连续批处理、分块预填充、抢占，每个请求的输出都和它单独运行时一致",
    "the two phases on the course model: prefill reads the prompt in one pass and fills the cache, decode adds one "
    "token per step; a measured timeline":
        "在课程模型上看两个阶段：预填充在一次前向计算中读完整个提示词并填好缓存，解码每步只加一个 token；附实测时间线",
    "one attention block: q, k, v projections, RoPE, the causal mask, softmax; MHA, GQA and MQA by the number of "
    "K/V heads H_kv":
        "一个注意力块：q、k、v 投影，RoPE，因果掩码，softmax；按 K/V 头数 H_kv 区分 MHA、GQA 和 MQA",
    "the prompt through all L layers at once: each layer's K/V [B, H_kv, T, d_h], the last valid position's logits, "
    "left-padded batches, TTFT vs prompt length":
        "提示词一次性经过全部 L 层：每层的 K/V [B, H_kv, T, d_h]，最后一个有效位置的 logits，左填充的批，"
        "TTFT 随提示词长度的变化",
    "one new token per step: its query attends over the cached keys plus its own; cached logits equal full "
    "recompute within a tolerance; what the cache saves and what it does not; why decode is bandwidth-bound (arithmetic intensity vs "
    "the ridge) and slows as the context grows":
        "每步一个新 token：它的查询关注缓存里的键和它自己的键；带缓存的 logits 在容差以内等于完全重算的结果；缓存省下了什么、"
        "省不下什么；为什么解码是访存受限的（算术强度与脊点相比），以及为什么上下文越长越慢",
    "cache bytes = 2 × L × B × H_kv × T × d_h × bytes per value, for real models; how GQA/MQA and the dtype shrink "
    "it":
        "缓存字节数 = 2 × L × B × H_kv × T × d_h × 每个值的字节数，用真实模型算一遍；GQA/MQA 和 dtype 如何让它变小",
    "from logits to a token: greedy, temperature, top-k, top-p; stopping on EOS, a stop string or the length limit":
        "从 logits 到 token：贪心、温度、top-k、top-p；遇到 EOS、停止字符串或长度上限时停止",
    "TTFT (in parts), TPOT, ITL, throughput and KV memory, measured; the batch roofline; arrivals served one at a "
    "time, in static batches and by continuous batching":
        "实测 TTFT（分段）、TPOT、ITL、吞吐量和 KV 缓存占用；按批大小看的屋顶线模型；请求陆续到达时，逐个处理、静态批处理"
        "与连续批处理的对比",
    "ten mystery bugs to diagnose and fix, then the catalogue of classic KV-cache bugs (positions, masks, "
    "concatenation axis, padding, beams), found by comparing with full recompute":
        "十个神秘 bug，先诊断再修复；然后是经典 KV 缓存 bug 目录（位置、掩码、拼接维度、填充、束搜索），"
        "都靠与完全重算对比来发现",
    "what real engines add on top: preallocated caches, sliding windows and truncation, beam search, transformers' "
    "caches side by side, a real pretrained model":
        "真实推理引擎在此之上加了什么：预分配缓存、滑动窗口与截断、束搜索、并排对比 transformers 的各种缓存、"
        "一个真实的预训练模型",
    "questions and exercises across the whole course, to check yourself": "覆盖整门课的题目和练习，用来检验自己",
    # utils/bug_lab/catalogue.py: use_cache_hashes, the state hashes notebook 07 prints
    "before": "生成之前",
    "after use_cache={flag}": "use_cache={flag} 生成之后",
    # utils/hub.py: why a real model's cells are skipped
    "no network: the Hugging Face hub is not reachable (checked for at most {s:g} s)":
        "没有网络：连不上 Hugging Face Hub（最多等待了 {s:g} 秒）",
    "HF_HUB_OFFLINE is set and {name} is not in the local cache": "设置了 HF_HUB_OFFLINE，而本地缓存里没有 {name}",
    "transformers is not installed (pip install transformers)": "没有安装 transformers（`pip install transformers`）",
    # tools/run_notebooks.py: what a saved notebook shows where a live widget was
    "[interactive widget: run this notebook (JupyterLab or Colab) to use it]":
        "[交互控件：在 JupyterLab 或 Colab 中运行本笔记本即可使用]",
    # utils/name_hints.py: what a NameError adds
    "`{name}` is defined further up in this notebook, in section \"{section}\". "
    "Run the cells above first (Run > Run All Above Selected Cell).":
        "`{name}` 在本笔记本前面的“{section}”一节里定义。请先运行上面的单元格（菜单 `Run > Run All Above Selected Cell`）。",
    "`{name}` is defined by an earlier cell of the course notebook: {where}. Run the cells above "
    "first (Run > Run All Above Selected Cell).":
        "`{name}` 由课程笔记本中靠前的单元格定义：{where}。请先运行上面的单元格（菜单 `Run > Run All Above Selected Cell`）。",
    "; and {n} more": "；另有 {n} 处",
    "; ": "；",
    "{notebook} (\"{section}\")": "{notebook}（“{section}”）",
    "Run the cells above first (Run > Run All Above Selected Cell): a name is defined by an earlier cell.":
        "请先运行上面的单元格（菜单 `Run > Run All Above Selected Cell`）：变量名由前面的单元格定义。",
    # --- shared by the figures and panels of every notebook (utils/plots/base.py, utils/widgets) ----
    "the grammar's exact probability": "语法给出的精确概率",
    "the model's probability": "模型给出的概率",
    "probability after the filters": "过滤之后的概率",
    "(the grammar's exact probability: {p:.2f})": "（语法给出的精确概率：{p:.2f}）",
    "The course grammar never produces this prompt: no exact probabilities to compare.":
        "课程语法不会生成这个提示词：没有可以对照的精确概率。",
    "Chinese words here: {words}": "图中的中文词：{words}",
    # the block map of notebook 10 (utils/plots/paged.py): its legends
    "held by one request, rN\n(the request's colour)": "被一个请求持有，rN\n（按各自的请求着色）",
    "held by one request": "被一个请求持有",
    # utils/roofline.py: fit_batch_line
    "a line needs at least two batches >= {from_batch}, got {batches}": "拟合直线至少需要两个 >= {from_batch} 的批大小，实际是 {batches}",
}
