"""Chinese text of the compression appendix's screen (its panel, figures, checks and exercises): English -> Chinese."""
from __future__ import annotations

MESSAGES: dict[str, str] = {
    # --- plots/compression.py ------------------------------------------------------------------------
    # plot_quantize_group
    "One group, {bits}-bit asymmetric min-max": "一个分组，{bits} 位非对称 min-max 量化",
    "value x": "原值 x",
    "read back: lo + code × scale\n(the number: its code)": "读回的值：最小值 + 量化码 × 缩放系数\n（旁边的数字：它的量化码）",
    "error (at most scale / 2)": "误差（不超过缩放系数的一半）",
    "the {n} levels of {bits} bits": "{bits} 位的 {n} 个量化级",
    "index in the group": "组内下标",
    "value": "数值",
    # plot_channel_magnitudes
    "Where the large numbers are: K and V per channel": "大数值在哪里：按通道看 K 和 V",
    "{name}, layer {layer}: max / median {r:.1f}": "{name}，第 {layer} 层：最大 / 中位数 = {r:.1f}",
    "mean |{name}|": "|{name}| 的均值",
    "channel (head × d_h + i)": "通道（头编号 × d_h + i）",
    "median channel": "中位数通道",
    "next K/V head": "下一个 K/V 头",
    # plot_kept_positions
    "What each rule keeps after {n} tokens": "看过 {n} 个 token 后，每条规则保留了哪些位置",
    "{rule}, layer {layer}": "{rule}，第 {layer} 层",
    "position (0 = <BOS>)": "位置（0 = <BOS>）",
    "sink: always kept": "注意力汇聚点：始终保留",
    "recent window: always kept": "最近窗口：始终保留",
    "kept by the rule": "由规则选中保留",
    "evicted": "已淘汰",
    # the rules, in words (the panel's dropdown too)
    "none": "不淘汰",
    "sinks + recent": "汇聚点 + 最近窗口",
    "key norm": "键范数最小",
    "attention received": "累计注意力最多",
    # plot_compression_tradeoff
    "Memory against quality": "内存与质量的权衡",
    "Course model, {n} held-out documents (measured)": "课程模型，{n} 篇留出文档（实测）",
    "cache bytes / exact cache bytes": "缓存字节数 / 精确缓存字节数",
    "held-out loss (nats/token)": "留出集损失（nat/token）",
    "greedy match with the exact cache (%)": "与精确缓存的贪心 token 一致率（%）",
    "max |Δlogits| (logit units, log scale)": "最大 |Δlogits|（对数坐标）",
    "exact cache (0: on the floor)": "精确缓存（值为 0，画在底线上）",
    "8-bit (any grouping, residual)": "8 位（任意分组和残差窗口）",
    "4-bit (any grouping, residual)": "4 位（任意分组和残差窗口）",
    "evict: sinks + recent": "淘汰：汇聚点 + 最近窗口",
    "evict: key norm": "淘汰：键范数最小",
    "evict: attention received": "淘汰：累计注意力最多",
    "exact cache": "精确缓存",
    "the setting chosen": "当前选择的设置",
    "exact cache's loss": "精确缓存的损失",
    "codes": "量化码",
    "scales and minimums": "缩放系数与最小值",
    "float16 (exact) positions": "float16（精确）位置",
    "16 (off)": "16 位",
    "{b}-bit": "{b} 位",
    "K/V cache (GiB)": "K/V 缓存（GiB）",
    "{model}, {T} tokens (formula)\ngroups of {g}, residual {r}": "{model}，{T} 个 token（公式计算）\n每组 {g} 个位置，残差窗口 {r}",

    # --- widgets/compression.py ----------------------------------------------------------------------
    "A smaller KV cache: memory against quality": "更小的 KV 缓存：内存与质量的权衡",
    "bits per value": "每个数值的位数",
    "K grouping": "K 的分组方式",
    "V grouping": "V 的分组方式",
    "per channel": "按通道分组",
    "per token": "按 token 分组",
    "residual (exact positions)": "残差窗口（精确保存的位置数）",
    "eviction rule": "淘汰规则",
    "budget (positions)": "预算（位置数）",
    "quality measure": "质量指标",
    "held-out loss": "留出集损失",
    "greedy match": "贪心 token 一致率",
    "max |Δlogits|": "最大 |Δlogits|",
    "quantized and evicting at once": "同时量化和淘汰",
    "exact cache (no quantization, no eviction)": "精确缓存（不量化，不淘汰）",
    "{bits}-bit, K {k}, V {v}, residual {r}": "{bits} 位，K {k}，V {v}，残差窗口 {r}",
    "evict by {rule}, budget {n}": "按“{rule}”淘汰，预算 {n}",
    "Quantizing and evicting at once is not measured here: this course's caches do one or the other. Set bits to "
    "16 (off) to see eviction, or the rule to none to see quantization.":
        "这里没有测量同时量化和淘汰的情形：本课程的缓存只做其中一种。把位数设为 16（不量化）可以查看淘汰，"
        "把淘汰规则设为“不淘汰”可以查看量化。",
    "<b>{setting}</b>: the cache holds <b>{ratio:.0%}</b> of the exact cache's bytes. On {n} held-out documents: "
    "loss {exact:.4f} → <b>{loss:.4f}</b> nats/token, greedy match <b>{match:.1%}</b>, max |Δlogits| "
    "<b>{diff:.3f}</b>.":
        "<b>{setting}</b>：缓存占精确缓存字节数的 <b>{ratio:.0%}</b>。在 {n} 篇留出文档上：损失 {exact:.4f} → "
        "<b>{loss:.4f}</b> nat/token，贪心 token 一致率 <b>{match:.1%}</b>，最大 |Δlogits| <b>{diff:.3f}</b>。",
    "Sizing formula, {model} at {T} tokens (B = 1): float16, no quantization: <b>{full}</b>.":
        "容量公式，{model}，{T} 个 token（B = 1）：float16，不量化：<b>{full}</b>。",
    "Sizing formula, {model} at {T} tokens (B = 1, groups of {g}, residual {r}): float16 {full}; {bits}-bit: "
    "<b>{total}</b> = codes {codes} + scales and minimums {scales} + exact tail {tail}.":
        "容量公式，{model}，{T} 个 token（B = 1，每组 {g} 个位置，残差窗口 {r}）：float16 为 {full}；{bits} 位："
        "<b>{total}</b> = 量化码 {codes} + 缩放系数与最小值 {scales} + 精确尾部 {tail}。",

    # --- cache_quality.py: quality_table (the table of notebook 13's sections 4 and 5) ---------------------
    "setting": "设置",
    "bytes": "字节",
    "Δ loss": "Δ 损失",
    "KL": "KL 散度",
    "± s.e.": "± 标准误",

    # --- exercises/compression_exercises.py --------------------------------------------------------------
    "expected 3 values (`codes`, `scale`, `lo`), got {type}": "应返回 3 个值（`codes`、`scale`、`lo`），实际是 `{type}`",
    "`{name}`: expected a number, got {type}": "`{name}`：应为一个数，实际是 `{type}`",
    "`{name}`: expected {expected}, got {got}": "`{name}`：应为 {expected}，实际是 {got}",
    "`codes`: {problem}": "`codes`：{problem}",
    # 13.quantize_group
    "`scale = (max - min) / (2**bits - 1)`; `code = round((x - min) / scale)`":
        "`scale = (max - min) / (2**bits - 1)`；`code = round((x - min) / scale)`",
    "asymmetric min-max: the minimum gets code 0 and the maximum code `2**bits - 1`, so "
    "`scale = (max - min) / (2**bits - 1)` and `code = round((x - min) / scale)`":
        "非对称 min-max：最小值的量化码是 0，最大值的量化码是 `2**bits - 1`，所以 "
        "`scale = (max - min) / (2**bits - 1)`，`code = round((x - min) / scale)`",
    "8 values, 4 bits: from -1.2 to 2.55": "8 个数值，4 位：从 -1.2 到 2.55",
    "every value negative, 4 bits": "全部为负数，4 位",
    "codes count from the group's minimum, not from zero: subtract `min` before dividing":
        "量化码从组内最小值算起，而不是从 0 算起：先减去 `min` 再做除法",
    "values just below a level: round, do not truncate": "数值略低于某个量化级：要四舍五入，不要截断",
    "round to the nearest level (`torch.round`); truncating (`floor`, `int()`) is off by one code for these":
        "取最近的量化级（`torch.round`）；截断（`floor`、`int()`）会让这些数值的量化码少 1",
    "8 bits: 256 levels": "8 位：256 个量化级",
    "the maximum first and the minimum last": "最大值排在最前，最小值排在最后",
    # 13.evict_recent
    "the sinks, then the newest `budget - sinks` positions; the next position is `n_seen`":
        "先是汇聚点，再是最新的 `budget - sinks` 个位置；下一个位置是 `n_seen`",
    "the sinks (positions `0 .. sinks - 1`) stay, then the newest `budget - sinks` positions; the next "
    "position is the number of tokens seen":
        "汇聚点（位置 `0 .. sinks - 1`）始终保留，其余是最新的 `budget - sinks` 个位置；下一个位置等于已看过的 token 数",
    "the next token's position is `n_seen`, the tokens seen, not the number of positions kept":
        "下一个 token 的位置是 `n_seen`，即已看过的 token 数，而不是保留下来的位置数",
    "5 tokens seen, budget 8: nothing evicted yet": "已看过 5 个 token，预算 8：还没有淘汰任何位置",
    "exactly the budget: 8 tokens, budget 8": "正好达到预算：8 个 token，预算 8",
    "20 tokens seen, budget 8, 1 sink": "已看过 20 个 token，预算 8，1 个汇聚点",
    "20 tokens seen, budget 8, 4 sinks": "已看过 20 个 token，预算 8，4 个汇聚点",
    "9 tokens seen, budget 8, no sinks": "已看过 9 个 token，预算 8，没有汇聚点",
    # the mistakes the two judges recognise, each with its own hint
    "`codes` are integers: expected an integer dtype (`torch.round(...).long()`), got {dtype}":
        "`codes` 是整数：应为整数类型（`torch.round(...).long()`），实际是 {dtype}",
    "round to the nearest level (`torch.round`); truncating (`floor`, `int()`) is off by one code for values "
    "just below a level":
        "取最近的量化级（`torch.round`）；截断（`floor`、`int()`）会让略低于某个量化级的数值的量化码少 1",
    "`2**bits` codes are `2**bits - 1` steps from the minimum to the maximum: divide the range by "
    "`2**bits - 1`, so the maximum gets the top code":
        "`2**bits` 个量化码之间只有 `2**bits - 1` 步：范围要除以 `2**bits - 1`，最大值才落在最高的量化码上",
    "asymmetric, not symmetric: the range runs from the group's minimum to its maximum (`lo = min`), so codes "
    "go from 0 to `2**bits - 1`, never below 0":
        "要非对称，不要对称：范围从组内最小值到最大值（`lo = min`），量化码从 0 到 `2**bits - 1`，不会小于 0",
    "return the integer codes, `round((x - min) / scale)`, not the values themselves":
        "返回整数量化码 `round((x - min) / scale)`，而不是数值本身",
    "expected 2 values (`kept`, `next_position`), got {type}": "应返回 2 个值（`kept`、`next_position`），实际是 `{type}`",
    "`kept`: expected a list of ints, got {got}": "`kept`：应为整数列表，实际是 {got}",
    "`next_position`: expected an int, got {type}": "`next_position`：应为整数，实际是 `{type}`",
    "`kept`: {problem}": "`kept`：{problem}",
    "`next_position`: {problem}": "`next_position`：{problem}",
    "the sinks are never evicted: keep positions `0 .. sinks - 1`, then the newest `budget - sinks`":
        "汇聚点永远不会被淘汰：保留位置 `0 .. sinks - 1`，再保留最新的 `budget - sinks` 个位置",
    "the budget counts the sinks too: `sinks` of them plus the newest `budget - sinks`, `budget` positions "
    "in all":
        "预算里也算上了汇聚点：`sinks` 个汇聚点加上最新的 `budget - sinks` 个位置，一共 `budget` 个",
    "one recent position too few: after the sinks come exactly `budget - sinks` recent positions, "
    "`n_seen - (budget - sinks) .. n_seen - 1`":
        "最近的位置少了一个：汇聚点之后正好是 `budget - sinks` 个最近的位置，即 `n_seen - (budget - sinks) .. n_seen - 1`",
    "one recent position too many: the cache holds `budget` positions, the sinks included":
        "最近的位置多了一个：缓存一共只保留 `budget` 个位置，汇聚点也算在内",
}
