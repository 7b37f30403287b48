"""Chinese catalogue part: what the exercises' judges say when they recognise a mistake, and the hint about
that mistake (utils/exercises/mistakes.py, utils/exercises/decode_exercise.py). Merged into zh_exercises.

Code names stay as they are; code inside a Chinese sentence sits in backticks (`dim=2`, `cache.seq_len`).
"""

MESSAGES: dict[str, str] = {
    # 01.causal_mask
    "your function uses PyTorch's `causal_lower_right` (its `CausalBias`): that is PyTorch's version "
    "of this mask, not yours, so it was not run":
        "你的函数用了 PyTorch 的 `causal_lower_right`（即它的 `CausalBias`）：那是 PyTorch 自带的掩码，"
        "不是你写的，所以没有运行它",
    "write the mask yourself from T_q and T_k, as a bool tensor [T_q, T_k]: True where key j's "
    "position <= query i's position T_k - T_q + i":
        "用 T_q 和 T_k 自己构造掩码，返回形状为 [T_q, T_k] 的布尔张量：键 j 的位置 <= 查询 i 的位置 T_k - T_q + i "
        "时为 True",
    "you returned a CausalBias, SDPA's own mask object (torch.nn.attention.bias), not a boolean "
    "tensor: expected a torch.bool tensor of shape {expected}":
        "你返回的是 CausalBias，这是 SDPA 自己的掩码对象（torch.nn.attention.bias），不是布尔张量："
        "应返回形状为 {expected} 的 torch.bool 张量",
    "build the mask yourself as a bool tensor [T_q, T_k], True = may attend: compare the keys' "
    "positions with the queries' positions T_k - T_q + i":
        "自己把掩码构造成 [T_q, T_k] 的布尔张量，True 表示可以关注：拿键的位置和查询的位置 T_k - T_q + i 比较",
    "your mask is [T_q, T_q] = {shape}: it has no column for the {n} cached keys":
        "你的掩码是 [T_q, T_q] = {shape}：缓存里的 {n} 个键没有对应的列",
    "the mask needs a column for every key, the cached ones first: [T_q, T_k]":
        "每个键都要有一列，缓存里的键排在前面：掩码形状是 [T_q, T_k]",
    "your mask is the whole square [T_k, T_k] = {shape}: only the new queries make rows "
    "(T_q = {n}), expected [T_q, T_k] = {expected}":
        "你的掩码是整个方阵 [T_k, T_k] = {shape}：只有新查询才占行（T_q = {n}），应为 [T_q, T_k] = {expected}",
    "the cached keys' queries were computed earlier and are not made again: keep one row per new "
    "query, the last T_q rows of the square (or build [T_q, T_k] with the diagonal shifted right)":
        "缓存里那些键对应的查询早就算过了，不会再算一遍：每个新查询一行就够，即方阵的最后 T_q 行"
        "（或者直接构造 [T_q, T_k]，对角线右移）",
    "your diagonal starts at key 0, as if nothing were cached: query 0 sees key 0 only, "
    "expected {expected}, got {got}":
        "你的对角线从 0 号键开始，好像缓存是空的：查询 0 只能看到 0 号键。应为 {expected}，实际是 {got}",
    "the T_k - T_q cached keys come before the queries: query i sits at position T_k - T_q + i, so "
    "the diagonal moves right by T_k - T_q":
        "缓存里的 T_k - T_q 个键排在这些查询之前：查询 i 的位置是 T_k - T_q + i，所以对角线要右移 T_k - T_q 列",
    "no query may see any key, not even its own: expected {expected}, got {got}":
        "没有一个查询能看到任何键，连它自己的键也看不到：应为 {expected}，实际是 {got}",
    "True = may attend, and the T_k - T_q cached keys come before the queries: query i sees keys "
    "0 ... T_k - T_q + i, a diagonal shifted right (`tril(T_k - T_q)`), not left":
        "True 表示可以关注；缓存里的 T_k - T_q 个键排在这些查询之前，查询 i 能看到键 0 ... T_k - T_q + i，"
        "对角线往右移（`tril(T_k - T_q)`），不是往左移",
    "your diagonal moved left by T_k - T_q = {n} instead of right: expected {expected}, got {got}":
        "你的对角线往左移了 T_k - T_q = {n} 列，应该往右移：应为 {expected}，实际是 {got}",
    "the cached keys come before the queries, so the diagonal shifts right: `tril(T_k - T_q)`, not `tril(T_q - T_k)`":
        "缓存的键排在这些查询之前，所以对角线往右移：用 `tril(T_k - T_q)`，不是 `tril(T_q - T_k)`",
    "you copied along the time axis, then reshaped to {H} heads: each query head now holds repeated time steps "
    "of one K/V head, not the whole head":
        "你在时间维上复制，再用 `reshape` 变成 {H} 个头：每个查询头拿到的是某个 K/V 头重复过的几个时间步，而不是整个头",
    "copy whole heads, on the heads axis (dim=1): `repeat_interleave(n_rep, dim=1)`, or "
    "`x[:, :, None].expand(B, H_kv, n_rep, T, d_h).reshape(B, H_kv * n_rep, T, d_h)`":
        "要复制整个头，在头这一维（`dim=1`）上复制：`repeat_interleave(n_rep, dim=1)`，或者 "
        "`x[:, :, None].expand(B, H_kv, n_rep, T, d_h).reshape(B, H_kv * n_rep, T, d_h)`",
    "rows are queries, columns keys: you returned the transpose, [T_k, T_q]: expected "
    "{expected}, got {got}":
        "行是查询、列是键：你返回的是按 [T_k, T_q] 排的转置。应为 {expected}，实际是 {got}",
    "row i of the mask is query i, column j is key j: build it as [T_q, T_k], True where key j's "
    "position <= query i's position T_k - T_q + i":
        "掩码的第 i 行是查询 i，第 j 列是键 j：按 [T_q, T_k] 来构造，键 j 的位置 <= 查询 i 的位置 T_k - T_q + i 时为 True",
    " (or True and False are swapped: True = may attend)": "（也可能是 True 和 False 弄反了：True 表示可以关注）",
    " (? = that head holds numbers from no single K/V head)": "（? 表示这个头里的数并非来自同一个 K/V 头）",
    "each query misses its own key: expected {expected}, got {got}":
        "每个查询都看不到它自己的键：应为 {expected}，实际是 {got}",
    "a query attends to itself too: query i sees keys 0 ... T_k - T_q + i, that key included (<=, not <)":
        "查询也要关注它自己：查询 i 能看到键 0 … T_k - T_q + i，包括最后这个键（用 <=，不是 <）",
    "True and False are swapped: expected {expected}, got {got}": "True 和 False 弄反了：应为 {expected}，实际是 {got}",
    "True means may attend (as in `causal_mask` and SDPA's bool mask): True at the keys at "
    "or before each query's position":
        "True 表示可以关注（和 `causal_mask`、SDPA 的布尔掩码一样）：每个查询所在位置及之前的键为 True",
    "each query sees one key of its future: expected {expected}, got {got}":
        "每个查询都多看到了一个未来的键：应为 {expected}，实际是 {got}",
    "query i sees keys 0 ... T_k - T_q + i and no further: the next key is its future":
        "查询 i 只能看到键 0 … T_k - T_q + i，再往后一个就是它的未来了",
    "upper triangle: True where the key is at or after the query (comparison reversed, or rows and columns "
    "swapped): expected {expected}, got {got}":
        "上三角：键在查询所在位置或之后时为 True（比较方向反了，或者行和列对调了）：应为 {expected}，实际是 {got}",
    "True where the key is at or after the query's position: the comparison is reversed (key >= query): "
    "expected {expected}, got {got}":
        "键在查询所在位置或之后时为 True：比较方向反了（键 >= 查询）：应为 {expected}，实际是 {got}",
    "row i of the mask is query i, column j is key j: True where key j's position <= query i's position "
    "T_k - T_q + i (the key on the small side)":
        "掩码的第 i 行是查询 i，第 j 列是键 j：键 j 的位置 <= 查询 i 的位置 T_k - T_q + i 时为 True（键的位置在小的那一边）",
    # 01.repeat_kv
    "you returned a flat tensor, shape {got}: expected {expected}. Without `dim=`, "
    "`repeat_interleave` flattens its input first and repeats single numbers":
        "你返回的是一维张量，形状是 {got}：应为 {expected}。不传 `dim=` 时，`repeat_interleave` 会先把输入"
        "展平，再逐个数字重复",
    "give the axis: `x.repeat_interleave(n_rep, dim=1)` copies whole heads on the heads "
    "axis and keeps the 4 axes":
        "指明维度：`x.repeat_interleave(n_rep, dim=1)` 在头这一维上复制整个头，结果仍是 4 维",
    "you returned 5 axes, shape {got}: expected 4, {expected}":
        "你返回了 5 维，形状是 {got}：应为 4 维，{expected}",
    "merge the H_kv and n_rep axes with reshape: `x[:, :, None].expand(B, H_kv, n_rep, T, d_h).reshape(B, "
    "H_kv * n_rep, T, d_h)`":
        "用 `reshape` 把 H_kv 和 n_rep 两维合成一维：`x[:, :, None].expand(B, H_kv, n_rep, T, d_h).reshape(B, "
        "H_kv * n_rep, T, d_h)`",
    "you repeated along dim 2, the time axis: shape {got}, expected {expected} (a repeat_kv written for the "
    "[B, T, H, d_h] layout repeats dim 2)":
        "你在第 2 维也就是时间维上重复了：形状是 {got}，应为 {expected}（按 [B, T, H, d_h] 布局写的 repeat_kv 重复的就是第 2 维）",
    "you repeated along the last axis (`dim=-1` is dim 3, d_h): shape {got}, expected {expected}":
        "你沿最后一维重复了（`dim=-1` 就是第 3 维 d_h）：形状是 {got}，应为 {expected}",
    "`expand` only stretches axes of size 1, and the heads axis has size H_kv: add a new axis of size 1 after the "
    "heads, `x[:, :, None]`, expand that one to n_rep, then `reshape` to [B, H_kv * n_rep, T, d_h]":
        "`expand` 只能拉伸长度为 1 的维，而头这一维的长度是 H_kv：先在头维后面插入一个长度为 1 的新维 `x[:, :, None]`，"
        "把它扩展到 n_rep，再 `reshape` 成 [B, H_kv * n_rep, T, d_h]",
    "`expand` makes no copy (the n_rep copies share memory), so `view` cannot merge the H_kv and n_rep axes: use "
    "`reshape`, which copies when it must":
        "`expand` 不复制数据（n_rep 份副本共用同一块内存），所以 `view` 没法把 H_kv 和 n_rep 两维合成一维：改用 "
        "`reshape`，必要时它会复制",
    "your function calls the course's own `utils.attention.{name}`: it would pass without a line of yours, so it "
    "was not run":
        "你的函数调用了课程包自带的 `utils.attention.{name}`：不用写一行自己的代码就能通过，所以没有运行它",
    "write the body yourself, with torch operations only: the package's `{name}` is what your function is checked "
    "against":
        "函数体要自己用 torch 运算来写：检查时拿来对照的正是课程包的 `{name}`",
    "here heads are on dim 1: [B, H_kv, T, d_h] -> [B, H_kv * n_rep, T, d_h], the copies go on the heads axis, "
    "dim=1":
        "这里头在第 1 维：[B, H_kv, T, d_h] -> [B, H_kv * n_rep, T, d_h]，副本要放在头这一维（`dim=1`）上",
    "you returned the [B, T, H, d_h] layout, shape {got}: expected {expected} = [B, H, T, d_h]":
        "你返回的是 [B, T, H, d_h] 布局，形状是 {got}：应为 {expected} = [B, H, T, d_h]",
    "heads are on dim 1: the cache layout is [B, H_kv, T, d_h], and the result keeps it, [B, H_kv * n_rep, T, d_h]":
        "头在第 1 维：缓存的布局是 [B, H_kv, T, d_h]，结果也保持这个布局，[B, H_kv * n_rep, T, d_h]",
    "nothing was repeated: shape {got}, expected {expected}; each of the {H} query heads needs a K/V head":
        "什么都没有重复：形状是 {got}，应为 {expected}；{H} 个查询头每个都需要一个 K/V 头",
    "each K/V head appears n_rep times on dim=1, once for each query head of its group":
        "每个 K/V 头要在 `dim=1` 上出现 n_rep 次，组里的每个查询头各用一份",
    "query head i reads K/V head j: yours {mine}; expected {want}":
        "查询头 i 读 K/V 头 j：你的是 {mine}；应为 {want}",
    "your copies are tiled: all the heads, then all of them again, so query head i reads K/V head i % H_kv "
    "(what `x.repeat`, `torch.tile` or an `expand` with the new axis before the heads, "
    "`x[:, None].expand(B, n_rep, H_kv, T, d_h)`, lay out); the n_rep copies of one head must sit side by side: "
    "`repeat_interleave(n_rep, dim=1)`, or the new axis after the heads, "
    "`x[:, :, None].expand(B, H_kv, n_rep, T, d_h)`, then `reshape`":
        "你的副本是整组平铺的：所有头排一遍、再整体排一遍，于是查询头 i 读的是 K/V 头 i % H_kv"
        "（`x.repeat`、`torch.tile`，或者把新维度放在头之前的 `expand`，即 `x[:, None].expand(B, n_rep, H_kv, T, d_h)`，"
        "排出来都是这样）；同一个头的 n_rep 份副本必须挨在一起：用 `repeat_interleave(n_rep, dim=1)`，"
        "或者把新维度放在头之后，`x[:, :, None].expand(B, H_kv, n_rep, T, d_h)`，再 `reshape`",
    "you returned a float 0/1 mask (dtype {dtype}): the check wants booleans, and SDPA treats a float mask as "
    "additive, so a 0/1 mask masks nothing":
        "你返回的是 0/1 浮点掩码（dtype 为 {dtype}），这里要的是布尔值；而且 SDPA 把浮点掩码当作加性掩码，"
        "加到得分上，0/1 掩码什么也屏蔽不了",
    "return booleans, True = may attend: build the mask with a comparison, or end with `.bool()`":
        "返回布尔值，True 表示可以关注：用比较运算构造掩码，或者最后加上 `.bool()`",
    "you returned an integer 0/1 mask (dtype {dtype}): the check wants dtype torch.bool, and SDPA and masked_fill "
    "refuse an integer mask":
        "你返回的是 0/1 整数掩码（dtype 为 {dtype}），这里要的是 dtype 为 torch.bool 的掩码；SDPA 和 masked_fill "
        "也都不接受整数掩码",
    "return dtype torch.bool, True = may attend: build the mask with a comparison (`<=` gives torch.bool), or end "
    "with `.bool()`":
        "返回 dtype 为 torch.bool 的掩码，True 表示可以关注：用比较运算构造（`<=` 得到的就是 torch.bool），"
        "或者最后加上 `.bool()`",
    "you repeated along dim 0, the batch axis: shape {got}, expected {expected}; that copies whole sequences, "
    "not heads":
        "你在第 0 维也就是批这一维上重复了：形状是 {got}，应为 {expected}；这样复制的是整条序列，而不是头",
    "time and d_h changed places: your [T, d_h] matrices are transposed":
        "时间维和 d_h 换了位置：你的 [T, d_h] 矩阵被转置了",
    "time and d_h changed places: shape {got}, expected {expected} = [B, H, T, d_h]":
        "时间维和 d_h 换了位置：形状是 {got}，应为 {expected} = [B, H, T, d_h]",
    "only the heads axis (dim=1) grows: time stays on dim=2 and d_h on dim=3, so no "
    "transpose, and a reshape or view lists the axes in that order":
        "只有头这一维（`dim=1`）变大：时间维留在 `dim=2`，d_h 留在 `dim=3`。不要转置，`reshape` 或 `view` 也按这个顺序写各维",
    # 02.prefill_positions
    "number each row's real tokens from 0: a cumulative sum counts from 1, so subtract 1":
        "每行的真实 token 从 0 开始编号：`cumsum` 是从 1 数起的，所以要减 1",
    "you took the batch's largest pad count off every row: count each row's own pads (or number each row's real "
    "tokens with `cumsum(1)` along the row)":
        "你给每一行都减去了整批里最多的填充数：要数每一行自己的填充（或者沿行用 `cumsum(1)` 给这一行的真实 token 编号）",
    "you numbered the columns, pads included: row {b}'s first real token got position {p}, the number of pads "
    "before it. Number each row's real tokens from 0 (with RoPE the column numbering gives the same logits if "
    "decode continues it, but the contract, the course's model and transformers' `generate` number from the first "
    "real token)":
        "你按列编号了，填充也算在内：第 {b} 行的第一个真实 token 得到的位置是 {p}，也就是它前面的填充数。"
        "应该把每行的真实 token 从 0 开始编号（用 RoPE 时，只要解码接着同一种编号，按列编号得到的 logits 也一样；"
        "但函数约定、课程模型和 transformers 的 `generate` 都是从第一个真实 token 起编号）",
    "you counted from the row's end: its last real token got 0. Number from the "
    "first real token, left to right: `cumsum(1)` along the row":
        "你是从行尾倒着数的：最后一个真实 token 成了 0。应该从第一个真实 token 起从左往右编号：沿行做 `cumsum(1)`",
    "padding positions are never attended to, but they still index the RoPE tables (-1 would read "
    "the last row): give them any position in [0, T), e.g. 0 with `.clamp(min=0)`":
        "填充位置永远不会被关注，但仍要拿去索引 RoPE 表（-1 会读到最后一行）：给它们 [0, T) 内的任意位置，"
        "比如用 `.clamp(min=0)` 置为 0",
    # 03.cache_update
    "{name}: the new positions come first; the cached positions (T = {T}) must come first, then the new ones":
        "{name}：新位置排在了前面；应该先放缓存里已有的位置（T = {T}），再放新位置",
    "order matters on the time axis: the old keys first, then the new: `torch.cat([cache_k, k_new], dim=2)`":
        "时间维上的顺序很重要：旧的键在前，新的在后，即 `torch.cat([cache_k, k_new], dim=2)`",
    "{name}: only the new positions came back; the cached ones (T = {T}) are gone":
        "{name}：只返回了新位置，缓存里原有的位置（T = {T}）不见了",
    "the cache was empty (None) and None came back":
        "缓存为空（None），返回的也是 None",
    "from an empty cache return k_new, v_new: they are all the layer holds":
        "缓存为空时直接返回 k_new、v_new：这一层此时只存着它们",
    "expected a pair of tensors (K, V), got ({a}, {b})":
        "应返回一对张量 (K, V)，实际得到 ({a}, {b})",
    "the cache keeps everything it held: append the new positions after it (`torch.cat` on dim=2)":
        "缓存要保留原有的全部内容：把新位置接在后面（在 `dim=2` 上 `torch.cat`）",
    "{name}: shape {shape}: you concatenated on dim={dim}, the {axis} axis":
        "{name}：形状是 {shape}，你在 `dim={dim}`（{axis} 这一维）上做了拼接",
    "{name}: {got} positions on the time axis, expected T + T_new = {T} + {T_new} = {want}":
        "{name}：时间维上有 {got} 个位置，应为 T + T_new = {T} + {T_new} = {want} 个",
    "append every new position, not only the last: `torch.cat([cache_k, k_new], dim=2)`":
        "每个新位置都要追加，不能只追加最后一个：`torch.cat([cache_k, k_new], dim=2)`",
    "K and V are swapped": "K 和 V 弄反了",
    "return (K, V) in this order, as the cache stores them": "按 (K, V) 的顺序返回，和缓存里存放的顺序一致",
    "{name}: its new positions hold {other}, not {own}": "{name}：新位置上放的是 {other}，而不是 {own}",
    "K grows by k_new and V by v_new: `torch.cat([cache_k, k_new], dim=2)`, `torch.cat([cache_v, v_new], dim=2)`":
        "K 接上 k_new，V 接上 v_new：`torch.cat([cache_k, k_new], dim=2)`、`torch.cat([cache_v, v_new], dim=2)`",
    # 03.decode_step
    "step {step}: your new token was rotated as if at position 0 (or not rotated at all, which is the same, or q "
    "and all of K rotated by the same angle, e.g. RoPE applied after `cache.update`); it sits at position {pos}, "
    "the number of positions cached":
        "第 {step} 步：你的新 token 是按位置 0 旋转的（或者根本没旋转，效果一样；又或者 q 和整个 K 转了同一个角度，"
        "比如在 `cache.update` 之后才做 RoPE）；它实际在位置 {pos}，也就是缓存里已有的位置数",
    "rotate q and k at the new token's position, the number of positions already cached: "
    "`pos = cache.seq_len`, read once before layer 0 appends, then `apply_rope` with "
    "`model.rope_cos[pos : pos + 1]` and `model.rope_sin[pos : pos + 1]`":
        "在新 token 的位置上旋转 q 和 k，这个位置就是缓存里已有的位置数：在第 0 层追加之前读一次 "
        "`pos = cache.seq_len`，再用 `model.rope_cos[pos : pos + 1]` 和 `model.rope_sin[pos : pos + 1]` "
        "调用 `apply_rope`",
    "step {step}: your logits are the new token's at position {wrong}, one before its own ({pos})":
        "第 {step} 步：你的 logits 对应的是位置 {wrong}，比新 token 的真实位置（{pos}）小 1",
    "positions count from 0: the T cached tokens hold positions 0 ... T - 1, so the new one is at "
    "T = `cache.seq_len` (no - 1)":
        "位置从 0 开始数：缓存里的 T 个 token 占据位置 0 … T - 1，所以新 token 在 T = `cache.seq_len`（不要减 1）",
    "step {step}: your logits are the new token's at position {wrong}, one past its own ({pos})":
        "第 {step} 步：你的 logits 对应的是位置 {wrong}，比新 token 的真实位置（{pos}）大 1",
    "the new token is at `cache.seq_len` as it is before this step (no + 1)":
        "新 token 的位置是这一步开始前的 `cache.seq_len`（不要加 1）",
    "step {step}: from layer 1 on, your new token sits at position {wrong}, not {pos}: cache.seq_len grew "
    "when layer 0 appended":
        "第 {step} 步：从第 1 层起，你的新 token 在位置 {wrong} 而不是 {pos}：第 0 层追加之后 "
        "`cache.seq_len` 已经变大了",
    "read `pos = cache.seq_len` once, before the loop over the layers: layer 0's `cache.update` makes it "
    "one more":
        "在遍历各层的循环之前读一次 `pos = cache.seq_len`：第 0 层的 `cache.update` 会让它加 1",
    "step {step}: your logits are those of the step without the final `model.norm`":
        "第 {step} 步：你的 logits 和少了最后的 `model.norm` 的解码步一致",
    "after the last layer the stream is normalised once more: `model.lm_head(model.norm(x))`":
        "最后一层之后还要再做一次归一化：`model.lm_head(model.norm(x))`",
    "step {step}: your logits are those of the step without the residual around attention":
        "第 {step} 步：你的 logits 和注意力外面少了残差连接的解码步一致",
    "add the attention output to the stream: `x = x + self_attn.o_proj(...)`, not `x = self_attn.o_proj(...)`":
        "把注意力的输出加到残差流上：`x = x + self_attn.o_proj(...)`，而不是 `x = self_attn.o_proj(...)`",
    "step {step}: your logits are those of the step without the residual around the MLP":
        "第 {step} 步：你的 logits 和 MLP 外面少了残差连接的解码步一致",
    "add the MLP output to the stream: `x = x + mlp(post_attention_layernorm(x))`":
        "把 MLP 的输出加到残差流上：`x = x + mlp(post_attention_layernorm(x))`",
    "step {step}: your residuals add to the normalised h, not to x":
        "第 {step} 步：你的残差加在了归一化之后的 h 上，而不是 x 上",
    "the residual stream is x: the norm's output h feeds the projections (or the MLP), then `x = x + ...`":
        "残差流是 x：归一化的输出 h 只送入投影（或 MLP），然后 `x = x + ...`",
    "step {step}: your attention residual adds to the normalised h (`x = h + o_proj(...)`), not to x":
        "第 {step} 步：你把注意力的残差加在了归一化之后的 h 上（`x = h + o_proj(...)`），而不是 x 上",
    "q, k and v read `h = input_layernorm(x)`, but the residual adds to x: `x = x + self_attn.o_proj(...)`, not `h + ...`":
        "q、k、v 读的是 `h = input_layernorm(x)`，残差却要加在 x 上：`x = x + self_attn.o_proj(...)`，不是 `h + ...`",
    "step {step}: you rotated with `model.rope_sin_rolled`, the table of `apply_rope_rolled` (its first half negated): with `apply_rope` it turns the first half of every pair the wrong way":
        "第 {step} 步：你用了 `model.rope_sin_rolled` 来旋转，它是给 `apply_rope_rolled` 用的表（前一半取了负号），配上 `apply_rope` 会把每一对的前一半转反",
    "`apply_rope` takes the plain tables: `model.rope_cos[pos : pos + 1]` and `model.rope_sin[pos : pos + 1]`":
        "`apply_rope` 要用普通的表：`model.rope_cos[pos : pos + 1]` 和 `model.rope_sin[pos : pos + 1]`",
    "step {step}: your logits are those of the step without `input_layernorm`":
        "第 {step} 步：你的 logits 和少了 `input_layernorm` 的解码步一致",
    "each layer normalises x before q, k and v: `h = layer.input_layernorm(x)`":
        "每层在算 q、k、v 之前都要先归一化 x：`h = layer.input_layernorm(x)`",
    "step {step}: your logits are those of the step without `post_attention_layernorm`":
        "第 {step} 步：你的 logits 和少了 `post_attention_layernorm` 的解码步一致",
    "the MLP reads `layer.post_attention_layernorm(x)`, not x": "MLP 的输入是 `layer.post_attention_layernorm(x)`，不是 x",
    "step {step}: your new k was not rotated (RoPE on q only)": "第 {step} 步：你的新 k 没有旋转（只对 q 做了 RoPE）",
    "rotate k as well as q, before `cache.update`: the cache holds rotated keys":
        "k 也要和 q 一样旋转，而且要在 `cache.update` 之前：缓存里存的是旋转后的键",
    "step {step}: your q was not rotated (RoPE on k only)": "第 {step} 步：你的 q 没有旋转（只对 k 做了 RoPE）",
    "rotate q as well as k: the scores compare rotated queries with rotated keys":
        "q 也要和 k 一样旋转：注意力得分比较的是旋转后的查询和旋转后的键",
    "step {step}: every layer attended over layer 0's keys and values": "第 {step} 步：每一层关注的都是第 0 层的键和值",
    "step {step}: your q was rotated twice (RoPE applied again): it sits at position {wrong}, not {pos}":
        "第 {step} 步：你的 q 被旋转了两次（RoPE 多做了一遍），相当于放在位置 {wrong}，而不是 {pos}",
    "step {step}: your q and k were rotated twice (RoPE applied again): they sit at position {wrong}, not {pos}":
        "第 {step} 步：你的 q 和 k 都被旋转了两次（RoPE 多做了一遍），相当于放在位置 {wrong}，而不是 {pos}",
    "apply RoPE once to q and once to k, at `pos = cache.seq_len`; `attention` does not rotate them":
        "q 和 k 各在 `pos = cache.seq_len` 处做一次 RoPE 就够了；`attention` 内部不会再旋转",
    "step {step}: your scores were not divided by √d_h": "第 {step} 步：你的注意力得分没有除以 √d_h",
    "scaled dot-product attention divides q · Kᵀ by √d_h before the softmax: call `attention(q, K, V)`, "
    "which does it, or divide yourself":
        "缩放点积注意力在 softmax 之前要把 q · Kᵀ 除以 √d_h：直接调用 `attention(q, K, V)`（它会做这一步），"
        "或者自己除",
    "step {step}: a size mismatch at dim 1: the query has {H} heads, the cached K/V {H_kv}":
        "第 {step} 步：第 1 维大小对不上：查询有 {H} 个头，缓存里的 K/V 只有 {H_kv} 个",
    "expand the K/V heads H_kv → H before the scores: `repeat_kv(K, H // H_kv)` (grouped), "
    "or pass `enable_gqa=True` to `scaled_dot_product_attention`; `attention` does it for you":
        "算得分之前先把 K/V 的头从 H_kv 展开到 H：`repeat_kv(K, H // H_kv)`（按组展开），"
        "或者给 `scaled_dot_product_attention` 传 `enable_gqa=True`；`attention` 会替你做这一步",
    "step {step}: a `.view(1, 1, ...)` failed: the batch here holds {B} rows":
        "第 {step} 步：`.view(1, 1, ...)` 出错了：这里的批有 {B} 行",
    "B is `token_ids.shape[0]` ({B} here): `.view(B, 1, H, d_h)`, not `.view(1, 1, H, d_h)`":
        "B 要取 `token_ids.shape[0]`（这里是 {B}）：写 `.view(B, 1, H, d_h)`，不要写死成 `.view(1, 1, H, d_h)`",
    "step {step}: your query attended over the new token's own k and v alone; the {pos} cached positions were "
    "left out":
        "第 {step} 步：你的查询只对新 token 自己的 k 和 v 做了注意力，缓存里的 {pos} 个位置都被漏掉了",
    "attend over the K, V that `cache.update(i, k, v)` returns: the cached positions and the new one":
        "注意力要用 `cache.update(i, k, v)` 返回的 K、V：缓存里的位置加上新位置",
    "step {step}: your query did not see its own k, v: it attended over the {pos} cached positions alone":
        "第 {step} 步：你的查询没有看到它自己的 k、v，只对缓存里的 {pos} 个位置做了注意力",
    "append first, then attend over what `cache.update(i, k, v)` returns: the cached positions and the new token's "
    "own k, v":
        "先追加，再对 `cache.update(i, k, v)` 返回的 K、V 做注意力：缓存里的位置加上新 token 自己的 k、v",
    "step {step}: your query saw key 0 alone: a causal mask (`is_causal=True`) is aligned to the top left, so a "
    "single query gets the first key only":
        "第 {step} 步：你的查询只看到了键 0：因果掩码（`is_causal=True`）按左上角对齐，单个查询只能看到第一个键",
    "a decode step needs no mask: its one query comes after every cached key (no `is_causal`, no mask)":
        "解码步不需要掩码：它唯一的查询排在所有缓存的键之后（不要 `is_causal`，也不要掩码）",
    "step {step}: your query heads read the wrong K/V heads: `repeat` tiles them, so query head i reads K/V head "
    "i % H_kv, not the one of its group":
        "第 {step} 步：你的查询头读错了 K/V 头：`repeat` 是把所有头整体平铺，于是查询头 i 读的是 K/V 头 i % H_kv，"
        "而不是它所在组的那个",
    "a GQA group is consecutive query heads: expand with `repeat_interleave(H // H_kv, dim=1)`, as `repeat_kv` "
    "does, or hand `attention` the H_kv heads and let it expand them":
        "GQA 的一组是相邻的几个查询头：用 `repeat_interleave(H // H_kv, dim=1)` 展开（`repeat_kv` 就是这么做的），"
        "或者直接把 H_kv 个头交给 `attention`，让它自己展开",
    "step {step}: your step called the model itself (`model(...)`, `model.forward` or `decode_step`), the step "
    "this check compares yours with":
        "第 {step} 步：你的实现直接调用了模型本身（`model(...)`、`model.forward` 或 `decode_step`），"
        "而检查正是拿它来和你的实现对比的",
    "write the step from the model's pieces: the loop over `model.layers`, then `model.norm` and `model.lm_head`, "
    "as the contract lists them":
        "用模型的各个部件写出这一步：按函数说明，先遍历 `model.layers`，再接 `model.norm` 和 `model.lm_head`",
    "each layer has its own entry in the cache: attend over what `cache.update(i, k, v)` returns for that "
    "layer's index i":
        "每层在缓存里都有自己的一份：注意力要用 `cache.update(i, k, v)` 按这一层的编号 i 返回的 K 和 V",
    "step {step}: afterwards the cache holds {got} positions per layer, expected {want}":
        "第 {step} 步：这一步之后缓存每层有 {got} 个位置，应为 {want} 个",
    "append the new k, v with `cache.update(layer_index, k, v)` exactly once in every layer: the "
    "next step reads them":
        "每层都要用 `cache.update(layer_index, k, v)` 把新的 k、v 追加一次，而且只追加一次：下一步要读它们",
    "go through the contract line by line: the position (`cache.seq_len`, read once), RoPE on q and k "
    "before `cache.update`, both norms and both residuals of every layer, the final `model.norm`; "
    "attention: softmax over the keys (last dim), scores ÷ √d_h":
        "对照函数约定逐行检查：位置（`cache.seq_len`，只读一次）、在 `cache.update` 之前对 q 和 k 做 RoPE、"
        "每层的两个归一化和两个残差连接、最后的 `model.norm`；注意力：softmax 沿键的维度（最后一维）做，"
        "分数要除以 √d_h",
    # 04.kv_bytes_from_config, 04.max_requests (sizing_mistakes.py)
    "expected {expected:,} bytes, got {got:,}: one token too many per sequence ({T:,} positions, not {seq_len:,})":
        "应为 {expected:,} 字节，实际是 {got:,}：每条序列多算了一个 token（{T:,} 个位置，而不是 {seq_len:,} 个）",
    "expected {expected:,} bytes, got {got:,}: one token too few per sequence ({T:,} positions, not {seq_len:,})":
        "应为 {expected:,} 字节，实际是 {got:,}：每条序列少算了一个 token（{T:,} 个位置，而不是 {seq_len:,} 个）",
    "the cache holds exactly seq_len positions per sequence: T = seq_len, no more, no less":
        "每条序列的缓存正好有 seq_len 个位置：T = seq_len，不多也不少",
    "expected {expected:,} bytes, got {got:,} ({diff:+,} bytes)": "应为 {expected:,} 字节，实际是 {got:,}（差 {diff:+,} 字节）",
    "expected {expected:,}, got {got:,}: that is what fits once the weights are taken off free_bytes":
        "应为 {expected:,}，实际是 {got:,}：这是从 free_bytes 里再扣掉权重之后放得下的请求数",
    "free_bytes is already what is left after the weights and the reserve: do not subtract the weights again":
        "free_bytes 已经是扣掉权重和预留之后剩下的显存：不要再扣一次权重",
    "expected {expected:,}, got {got:,}: a count below zero; free_bytes is already what the weights and the "
    "reserve leave":
        "应为 {expected:,}，实际是 {got:,}：请求数成了负数；free_bytes 已经是扣掉权重和预留之后剩下的显存",
    "your function raised KeyError: {name!r}; this config.json has no {name} (the field is optional)":
        "你的函数抛出了 KeyError: {name!r}；这个 config.json 里没有 {name}（这个字段是可选的）",
    "head_dim is optional in a config.json: read it with config.get(\"head_dim\"), and when it is missing, "
    "d_h = hidden_size // num_attention_heads":
        "config.json 里的 head_dim 是可选的：用 config.get(\"head_dim\") 读取，没有时 d_h = hidden_size // num_attention_heads",
    "num_key_value_heads is optional in a config.json: read it with config.get(\"num_key_value_heads\"), and when "
    "it is missing, the model is MHA: H_kv = num_attention_heads":
        "config.json 里的 num_key_value_heads 是可选的：用 config.get(\"num_key_value_heads\") 读取，"
        "没有时模型就是 MHA：H_kv = num_attention_heads",
    "expected an int, got {got!r:.60} (`{type}`)": "应返回 `int`，实际是 {got!r:.60}（`{type}`）",
    "{got:,} bytes is one sequence's cache; the batch holds {B}": "{got:,} 字节只是一条序列的缓存；这个批有 {B} 条",
    "every sequence of the batch has its own cache: multiply by batch_size": "批中每条序列都有自己的缓存：要乘以 batch_size",
    "{got:,} bytes is {n} times the cache: you stored all {H} query heads":
        "{got:,} 字节是应有值的 {n} 倍：你把 {H} 个查询头都存进去了",
    "{got:,} bytes is {n} times the cache: you stored all {H} query heads (or used the MHA form 2·L·B·T·C·bytes, "
    "which assumes H_kv = H)":
        "{got:,} 字节是应有值的 {n} 倍：你把 {H} 个查询头都存进去了（或者用了 MHA 形式 2·L·B·T·C·bytes，它默认 H_kv = H）",
    "{got:,} bytes is twice the cache: bfloat16 and float16 take 2 bytes per number":
        "{got:,} 字节是缓存的两倍：bfloat16 和 float16 每个数只占 2 字节",
    "{got:,} bytes is 8 times the cache: you counted bits, not bytes ({dtype} takes {n} byte(s) per number, {bits} "
    "bits)":
        "{got:,} 字节是缓存的 8 倍：你算的是位数，不是字节数（{dtype} 每个数占 {n} 字节，即 {bits} 位）",
    "the 16 in float16 (and the 32 in float32) counts bits: divide by 8 for the bytes per number":
        "float16 里的 16（float32 里的 32）是位数：除以 8 才是每个数的字节数",
    "expected {expected:,}, got {got:,}: your requests are 8 times their size; you counted bits, not bytes, per "
    "number":
        "应为 {expected:,}，实际是 {got:,}：你把每个请求算成了 8 倍大；每个数算的是位数，不是字节数",
    "right value, but an int is expected (got {type}). `/` always returns a float, even when it divides exactly: use "
    "`//`. One float operand makes even // return a float: keep every operand an int, or wrap the result in int()":
        "数值对了，但应返回 `int`（实际是 `{type}`）。`/` 的结果总是浮点数，即使恰好整除也一样：请用 `//`。"
        "只要有一个操作数是浮点数，连 // 的结果也是浮点数：让所有操作数都保持整数，或者用 `int()` 把结果包起来",
    "; or you counted {dtype} as 4 bytes per number (it takes 2)":
        "；也可能是把 {dtype} 按每个数 4 字节算了（它只占 2 字节）",
    "; and {dtype} takes 2 bytes per number, not 4": "；另外 {dtype} 每个数占 2 字节，不是 4 字节",
    "expected {expected:,}, got {got:,}: your requests are twice their size; {dtype} takes 2 bytes per number, not 4":
        "应为 {expected:,}，实际是 {got:,}：你算的每个请求是实际大小的两倍；{dtype} 每个数占 2 字节，不是 4 字节",
    "your function calls {name}, which still raises NotImplementedError":
        "你的函数调用了 {name}，而它还会抛出 NotImplementedError",
    "solve the exercise of {name} first (or compute the bytes inside your function), then run this cell again":
        "先完成 {name} 那道练习（或者在你的函数里自己算出字节数），再运行这个单元格",
    "check each factor against the config: L = num_hidden_layers, H_kv = num_key_value_heads (H when it is "
    "missing), d_h = head_dim (C / H when it is missing), and the bytes per number of the dtype; then "
    "2 x L x B x H_kv x T x d_h x bytes":
        "对照配置逐个核对每个因子：L = num_hidden_layers，H_kv = num_key_value_heads（没有时取 H），"
        "d_h = head_dim（没有时取 C / H），再加上该 dtype 每个数的字节数；然后算 2 x L x B x H_kv x T x d_h x bytes",
    "only the K/V heads are cached: use num_key_value_heads (H_kv = {H_kv}), not num_attention_heads":
        "缓存里只存 K/V 头：要用 num_key_value_heads（H_kv = {H_kv}），不是 num_attention_heads",
    "{got:,} bytes uses d_h = hidden_size / num_attention_heads = {d}; this config says head_dim = {head_dim}":
        "{got:,} 字节用的是 d_h = hidden_size / num_attention_heads = {d}；而这个配置写明了 head_dim = {head_dim}",
    "{got:,} bytes is twice the cache: an int8 cache takes 1 byte per number":
        "{got:,} 字节是缓存的两倍：int8 缓存每个数只占 1 字节",
    "bytes per number: 4 for float32, 2 for float16 and bfloat16, 1 for int8":
        "每个数的字节数：float32 为 4，float16 和 bfloat16 为 2，int8 为 1",
    "{got:,} bytes is half the cache: float32 takes 4 bytes per number, and K and V are two tensors: is one of "
    "them missing?":
        "{got:,} 字节只有缓存的一半：float32 每个数占 4 字节，K 和 V 又是两个张量，是不是漏了其中一个？",
    "bytes per number: 4 for float32, 2 for float16 and bfloat16, 1 for int8; and the factor 2 counts K and V":
        "每个数的字节数：float32 为 4，float16 和 bfloat16 为 2，int8 为 1；另外，因子 2 算的是 K 和 V",
    "{got:,} bytes is half the cache: K and V are two tensors": "{got:,} 字节只有缓存的一半：K 和 V 是两个张量",
    "the factor 2 counts K and V: every layer stores both": "因子 2 算的是 K 和 V：每一层两者都要存",
    "{got:,} bytes is the cache of one token; each sequence holds {T:,}":
        "{got:,} 字节只是一个 token 的缓存；每条序列有 {T:,} 个",
    "the cache holds every position: multiply by seq_len": "缓存保存每个位置：要乘以 seq_len",
    "{got:,} bytes is one layer's cache; the model has {L} layers": "{got:,} 字节只是一层的缓存；模型有 {L} 层",
    "{got:,} bytes is the cache with H_kv = 1 (MQA), 1/{H} of the right size":
        "{got:,} 字节是按 H_kv = 1（MQA）算出的缓存，只有应有值的 1/{H}",
    "a config without num_key_value_heads is MHA: H_kv = H = {H}, not 1":
        "配置里没有 num_key_value_heads 就是 MHA：H_kv = H = {H}，不是 1",
    "{got:,} bytes is the cache with H_kv = 1 (MQA), or of a single layer (L = H = {H} here), 1/{H} of the right size":
        "{got:,} 字节是按 H_kv = 1（MQA）算出的缓存，也可能是只算了一层（这里 L = H = {H}），只有应有值的 1/{H}",
    "a config without num_key_value_heads is MHA: H_kv = H = {H}, not 1; if you left out "
    "the layers instead, count all num_hidden_layers of them":
        "配置里没有 num_key_value_heads 就是 MHA：H_kv = H = {H}，不是 1；如果你是漏算了层数，就要把 num_hidden_layers 层全部算上",
    "expected {expected:,}, got {got:,}: that is a 10 % reserve taken off free_bytes":
        "应为 {expected:,}，实际是 {got:,}：你从 free_bytes 里又扣掉了 10% 的预留",
    "free_bytes is already what is left for the caches: do not subtract a reserve again":
        "free_bytes 已经是留给缓存的显存了：不要再扣一次预留",
    "every layer keeps its own K and V: multiply by num_hidden_layers": "每一层都有自己的 K 和 V：要乘以 num_hidden_layers",
    "expected {expected:,} bytes: {message}": "应为 {expected:,} 字节：{message}",
    "expected {expected:,} bytes, got {got:,} ({ratio:.4g} times as many)":
        "应为 {expected:,} 字节，实际是 {got:,}（是应有值的 {ratio:.4g} 倍）",
    "you returned the quotient {q} itself; only whole requests fit: {expected:,}":
        "你直接返回了商 {q}；只能放下整数个请求：{expected:,}",
    "round down to whole requests with //: a part of a request cannot run": "用 // 向下取整到整数个请求：半个请求跑不起来",
    "expected {expected:,}, got {got:,}: {q} rounded up; only whole requests fit":
        "应为 {expected:,}，实际是 {got:,}：你把 {q} 向上取整了；只能放下整数个请求",
    "expected {expected:,}, got {got:,}: your requests are half their size (K and V are two tensors)":
        "应为 {expected:,}，实际是 {got:,}：你算的每个请求只有实际大小的一半（K 和 V 是两个张量）",
    "one request's cache is `kv_bytes_from_config(config, seq_len, 1, dtype)`, the factor 2 included":
        "一个请求的缓存是 `kv_bytes_from_config(config, seq_len, 1, dtype)`，因子 2 也在内",
    "expected {expected:,}, got {got:,}: that many tokens fit, not requests of {T:,} tokens":
        "应为 {expected:,}，实际是 {got:,}：这是能放下的 token 数，而不是 {T:,} 个 token 的请求数",
    "one request holds seq_len tokens: divide by the cache of one sequence of seq_len tokens":
        "一个请求有 seq_len 个 token：要除以一条 seq_len 个 token 的序列的缓存",
    "expected {expected:,}, got {got:,}; one request's cache is {per:,} bytes here":
        "应为 {expected:,}，实际是 {got:,}；这里一个请求的缓存是 {per:,} 字节",
    "compute one request's bytes first, `kv_bytes_from_config(config, seq_len, 1, dtype)`, and check it; then "
    "divide free_bytes by it with //":
        "先算出一个请求的字节数 `kv_bytes_from_config(config, seq_len, 1, dtype)` 并核对它，再用 // 拿 free_bytes 除以它",
    "{got:,} bytes is the MHA form 2·L·B·T·C·bytes; this model keeps H_kv = {H_kv} K/V heads of d_h = {d_h}, "
    "H_kv·d_h = {width}, not C = {C}":
        "{got:,} 字节是 MHA 形式 2·L·B·T·C·bytes 的结果；这个模型只存 H_kv = {H_kv} 个 K/V 头，每个 d_h = {d_h}，"
        "H_kv·d_h = {width}，不等于 C = {C}",
    "use the general form 2·L·B·H_kv·T·d_h·bytes: the MHA form holds only when H_kv·d_h = C":
        "请用通用公式 2·L·B·H_kv·T·d_h·bytes：只有 H_kv·d_h = C 时 MHA 形式才成立",
    "expected {expected:,}, got {got:,}: your requests store all {H} query heads, {n} times the cache":
        "应为 {expected:,}，实际是 {got:,}：你让每个请求存下了全部 {H} 个查询头，缓存算成了 {n} 倍",
    "expected {expected:,}, got {got:,}: your requests store all {H} query heads, {n} times the cache (or use the MHA "
    "form 2·L·B·T·C·bytes, which assumes H_kv = H)":
        "应为 {expected:,}，实际是 {got:,}：你让每个请求存下了全部 {H} 个查询头，缓存算成了 {n} 倍"
        "（或者用了 MHA 形式 2·L·B·T·C·bytes，它默认 H_kv = H）",
    "expected {expected:,}, got {got:,}: your requests are twice their size; an int8 cache takes 1 byte per number":
        "应为 {expected:,}，实际是 {got:,}：你算的每个请求是实际大小的两倍；int8 缓存每个数只占 1 字节",
    "expected {expected:,}, got {got:,}: your requests use the MHA form 2·L·B·T·C·bytes; this model's H_kv·d_h = "
    "{width}, not C = {C}":
        "应为 {expected:,}，实际是 {got:,}：你按 MHA 形式 2·L·B·T·C·bytes 算每个请求；这个模型的 H_kv·d_h = {width}，"
        "不等于 C = {C}",
    "expected {expected:,}, got {got:,}: your requests use d_h = hidden_size / num_attention_heads = {d}; this config "
    "says head_dim = {head_dim}":
        "应为 {expected:,}，实际是 {got:,}：你用的是 d_h = hidden_size / num_attention_heads = {d}；而这个配置写明了 "
        "head_dim = {head_dim}",
    # 05.top_p
    "at p = 1 you kept {n} of {V} tokens; p = 1 keeps them all": "p = 1 时你保留了 {V} 个 token 中的 {n} 个；p = 1 应全部保留",
    "at p = 1 keep every token: float32 running sums reach 1.0 before the tail ends, so `before < p` drops it; "
    "return the logits unchanged when p >= 1":
        "p = 1 时要保留所有 token：float32 的累计概率在长尾结束之前就已等于 1.0，`before < p` 会把长尾丢掉；"
        "p >= 1 时原样返回 logits",
    "you kept tokens {mine}; the tokens before {t} already reach p = {p} exactly, so the nucleus is {want}":
        "你保留的 token 是 {mine}；排在 {t} 前面的 token 概率之和已经恰好等于 p = {p}，所以核应为 {want}",
    "keep a token only while the tokens above it hold less than p (<, not <= p): once the running total equals p, "
    "the set is complete":
        "只有排在前面的 token 合计不到 p 时才保留这个 token（是 <，不是 <= p）：累计概率一旦等于 p，集合就已完整",
    "you kept tokens {mine}, the first {n} token ids: your mask is in sorted order, the logits are not; the nucleus "
    "is {want}":
        "你保留的 token 是 {mine}，即前 {n} 个 token id：你的掩码是按排序后的顺序排的，logits 却不是；核应为 {want}",
    "the mask you built follows the sorted order: put it back at the token ids (`scatter` with the sort's indices) "
    "before masking the logits":
        "你构造的掩码是排序后的顺序：先用排序返回的下标 `scatter` 回各个 token id，再拿它去遮 logits",
    "you returned probabilities {got}; the contract asks for logits": "你返回的是概率 {got}；函数约定要求返回 logits",
    "softmax only decides which tokens stay: return the logits themselves, unchanged in "
    "the nucleus and -inf outside it (`logits.masked_fill(~keep, float('-inf'))`)":
        "softmax 只用来决定保留哪些 token：返回 logits 本身，核内保持不变，核外为 -inf"
        "（`logits.masked_fill(~keep, float('-inf'))`）",
    "outside the nucleus you put 0: expected {expected}, got {got}": "你在核外填的是 0：应为 {expected}，实际是 {got}",
    "a logit of 0 still has weight after softmax: put -inf outside the nucleus":
        "logits 为 0 的 token 在 softmax 之后仍有概率：核外要填 -inf",
    "your logits are in sorted order: expected {expected}, got {got}":
        "你返回的 logits 是排过序的：应为 {expected}，实际是 {got}",
    "keep each logit at its token id: sort only to choose the tokens, then mark them "
    "in the original order (scatter with the sort's indices)":
        "每个 token 的 logits 要留在它自己的 token id 上：排序只用来挑选 token，再按原来的顺序标记出来（用排序返回的下标做 `scatter`）",
    "you kept the right tokens {ids}, but changed their logits: expected {expected}, got {got}":
        "保留的 token {ids} 是对的，但它们的 logits 被改了：应为 {expected}，实际是 {got}",
    "keep the nucleus's logits as they are (no renormalising): sampling's softmax "
    "renormalises anyway":
        "核内的 logits 原样保留（不要重新归一化）：采样时的 softmax 自然会重新归一化",
    "your logits are in sorted order": "你返回的 logits 是排过序的",
    "you kept the right tokens, but changed their logits": "保留的 token 是对的，但它们的 logits 被改了",
    "expected float logits, got a bool mask: return `logits.masked_fill(~keep, float('-inf'))`, not `keep`":
        "应返回浮点的 logits，你返回的是布尔掩码：要返回 `logits.masked_fill(~keep, float('-inf'))`，而不是 `keep`",
    "you kept tokens {mine}, as a running total of the logits themselves would; the nucleus is {want}":
        "你保留的 token 是 {mine}，这正是直接对 logits 求累计和会得到的结果；核应为 {want}",
    "the running total is over softmax(logits), not the logits: take the softmax, sort it, then sum the "
    "probabilities":
        "累计的是 softmax(logits) 的概率，不是 logits 本身：先做 softmax，排好序，再把概率逐个累加",
    "you returned None, but {s} occurs at position {pos}, not at the end of the text: did you test only the end "
    "(`endswith`)?":
        "你返回了 None，但 {s} 出现在位置 {pos}，并不在文本末尾：你是不是只检查了结尾（`endswith`）？",
    "you kept tokens {mine}; the nucleus is {want}": "你保留的 token 是 {mine}；核应为 {want}",
    "the token that crosses p is kept: keep a token while the mass of the tokens ranked before it is < p":
        "使累计概率越过 p 的那个 token 要保留：只要排在它前面的 token 概率之和还小于 p，就保留它",
    "the nucleus holds the most likely tokens: sort by probability, descending":
        "核里是概率最高的那些 token：按概率从高到低排序",
    # 05.stop_text
    "you cut at position {at}, where the regular expression {s} matches; the text {s} does not occur":
        "你在位置 {at} 截断了，那里是正则表达式 {s} 匹配到的地方；而文本 {s} 根本没有出现",
    "you cut at position {at}, where the regular expression {s} matches; the text {s} is at {pos}":
        "你在位置 {at} 截断了，那里是正则表达式 {s} 匹配到的地方；而文本 {s} 本身在位置 {pos}",
    "a stop string is plain text: in a regular expression `.`, `?`, `[` and `(` mean something "
    "else; use `text.find(s)` (or `re.escape(s)`)":
        "停止字符串是普通文本：在正则表达式里，`.`、`?`、`[` 和 `(` 另有含义；用 `text.find(s)`（或 `re.escape(s)`）",
    "you kept the stop string {s}: expected {expected}, got {got}": "你保留了停止字符串 {s}：应为 {expected}，实际是 {got}",
    "drop the stop string itself: cut at its start, `text[:position]`": "停止字符串本身要去掉：在它的起点截断，即 `text[:position]`",
    "you cut at {listed}, which ends the text and is the first string of the list; {s} "
    "occurs earlier: did you test only the end (`endswith`) or take the first listed?":
        "你在 {listed} 处截断了，它既在文本末尾，又是列表里的第一个字符串；但 {s} 出现得更早：你是只检查了末尾（`endswith`），"
        "还是取了列表里的第一个？",
    "you cut at {listed}, the first string of the list; {s} occurs earlier in the text":
        "你在列表里的第一个字符串 {listed} 处截断了；但 {s} 在文本中出现得更早",
    "the order of the list does not matter: find every stop string and cut at the one "
    "that occurs first in the text (the smallest position)":
        "列表里的先后顺序无关紧要：找出每个停止字符串的位置，在文本中最先出现的那个（位置最小的）处截断",
    "you cut at the last {s} (position {last}); it first occurs at position {pos}":
        "你在最后一次出现的 {s} 处（位置 {last}）截断了；它第一次出现在位置 {pos}",
    "generation stops at the first occurrence: `text.find(s)` finds it, `text.rfind(s)` the last one":
        "生成在第一次出现处就停止：`text.find(s)` 找的是第一次出现，`text.rfind(s)` 找的是最后一次",
    "you removed the space before the stop string: expected {expected}, got {got}":
        "你把停止字符串前面的空格也去掉了：应为 {expected}，实际是 {got}",
    "cut exactly at the stop string's start, `text[:position]`: the text before it stays as it is, spaces included":
        "正好在停止字符串的起点截断，即 `text[:position]`：它前面的文本原样保留，空格也不例外",
    "you returned None, but {s} occurs at position {pos}": "你返回了 None，但 {s} 出现在位置 {pos}",
    "you returned None, but {s} occurs at position {pos}: either you looked only at the end of the text "
    "(`endswith`), or you took the smallest `text.find` over every stop string, where the -1 of {m}, which does not "
    "occur, was smallest":
        "你返回了 None，但 {s} 出现在位置 {pos}：要么你只检查了文本末尾（`endswith`），"
        "要么你对每个停止字符串的 `text.find` 取了最小值，而没有出现的 {m} 返回的 -1 最小",
    "a stop string can stand anywhere in the text: search for it anywhere in the text, not only at its end; and "
    "`text.find(s)` returns -1 for one that does not occur: leave those out before taking the smallest position":
        "停止字符串可能出现在文本的任何位置，要在整段文本里查找，不能只看末尾；"
        "另外，没有出现的停止字符串 `text.find(s)` 返回 -1：先把这些排除掉，再取最小位置",
    "{m} does not occur, so `text.find({m})` is -1, and the smallest position was that -1 "
    "(you returned {got}); {s} occurs at position {pos}":
        "{m} 没有出现，`text.find({m})` 返回 -1，结果最小的位置就成了这个 -1（你返回了 {got}）；"
        "而 {s} 出现在位置 {pos}",
    "`text.find(s)` returns -1 for a stop string that does not occur: leave those out before "
    "taking the smallest position":
        "停止字符串没有出现时 `text.find(s)` 返回 -1：先把这些排除掉，再取最小的位置",
    "position 0 is a hit too: test `s in text` (or `pos != -1`), not whether the position is truthy":
        "位置 0 也算找到：要判断 `s in text`（或 `pos != -1`），不能看位置的真假值",
    "look for the stop string anywhere in the text (`text.find(s)`), not only at its end: it may cover "
    "several tokens":
        "在整段文本里查找停止字符串（`text.find(s)`），不只看结尾：它可能横跨好几个 token",
}
