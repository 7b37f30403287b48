"""Chinese catalogue part: what the exercises' judges say when they recognise a mistake, and the hint about
that mistake (utils/exercises/mistakes.py, utils/exercises/decode_exercise.py). Merged into zh_exercises.

Code names stay as they are; code inside a Chinese sentence sits in backticks (`dim=2`, `cache.seq_len`).
"""

MESSAGES: dict[str, str] = {
    # 01.causal_mask
    "your mask is [T_q, T_q] = {shape}: it has no column for the {n} cached keys":
        "你的掩码是 [T_q, T_q] = {shape}：缓存里的 {n} 个键没有对应的列",
    "the mask needs a column for every key, the cached ones first: [T_q, T_k]":
        "每个键都要有一列，缓存里的键排在前面：掩码形状是 [T_q, T_k]",
    "your diagonal starts at key 0, as if nothing were cached: query 0 sees key 0 only, "
    "expected {expected}, got {got}":
        "你的对角线从 0 号键开始，好像缓存是空的：查询 0 只能看到 0 号键。应为 {expected}，实际是 {got}",
    "the T_k - T_q cached keys come before the queries: query i sits at position T_k - T_q + i, so "
    "the diagonal moves right by T_k - T_q":
        "缓存里的 T_k - T_q 个键排在这些查询之前：查询 i 的位置是 T_k - T_q + i，所以对角线要右移 T_k - T_q 列",
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
    # 01.repeat_kv
    "you repeated along the time axis: shape {got}, expected {expected}":
        "你是在时间维上重复的：形状是 {got}，应为 {expected}",
    "the copies go on the heads axis, dim=1: [B, H_kv, T, d_h] -> [B, H_kv * n_rep, T, d_h]":
        "副本要放在头这一维（`dim=1`）上：[B, H_kv, T, d_h] -> [B, H_kv * n_rep, T, d_h]",
    "nothing was repeated: shape {got}, expected {expected}; each of the {H} query heads needs a K/V head":
        "什么都没有重复：形状是 {got}，应为 {expected}；{H} 个查询头每个都需要一个 K/V 头",
    "each K/V head appears n_rep times on dim=1, once for each query head of its group":
        "每个 K/V 头要在 `dim=1` 上出现 n_rep 次，组里的每个查询头各用一份",
    "query head i reads K/V head j: yours {mine}; expected {want}":
        "查询头 i 读 K/V 头 j：你的是 {mine}；应为 {want}",
    "`x.repeat` (or `torch.tile`) lays out all the heads, then all of them again, so query head i reads "
    "i % H_kv; the n_rep copies of one head must sit side by side: `repeat_interleave(n_rep, dim=1)`, "
    "or `expand` and `reshape`":
        "`x.repeat`（或 `torch.tile`）是把所有头排一遍、再整体排一遍，于是查询头 i 读的是 i % H_kv；"
        "同一个头的 n_rep 份副本必须挨在一起：用 `repeat_interleave(n_rep, dim=1)`，或者 `expand` 加 `reshape`",
    # 02.prefill_positions
    "number each row's real tokens from 0: a cumulative sum counts from 1, so subtract 1":
        "每行的真实 token 从 0 开始编号：`cumsum` 是从 1 数起的，所以要减 1",
    "padding positions are never attended to, but they still index the RoPE tables (-1 would read "
    "the last row): give them any position in [0, T), e.g. 0 with `.clamp(min=0)`":
        "填充位置永远不会被关注，但仍要拿去索引 RoPE 表（-1 会读到最后一行）：给它们 [0, T) 内的任意位置，"
        "比如用 `.clamp(min=0)` 置为 0",
    # 03.cache_update
    "{name}: the new positions come first; the {T} cached positions must come first, then the new ones":
        "{name}：新位置排在了前面；应该先放缓存里已有的 {T} 个位置，再放新位置",
    "order matters on the time axis: the old keys first, then the new: `torch.cat([cache_k, k_new], dim=2)`":
        "时间维上的顺序很重要：旧的键在前，新的在后，即 `torch.cat([cache_k, k_new], dim=2)`",
    "{name}: only the new positions came back; the {T} cached ones are gone":
        "{name}：只返回了新位置，缓存里原有的 {T} 个位置不见了",
    "the cache keeps everything it held: append the new positions after it (`torch.cat` on dim=2)":
        "缓存要保留原有的全部内容：把新位置接在后面（在 `dim=2` 上 `torch.cat`）",
    "{name}: shape {shape}: you concatenated on dim={dim}, the {axis} axis":
        "{name}：形状是 {shape}，你在 `dim={dim}`（{axis} 这一维）上做了拼接",
    "K and V are swapped": "K 和 V 弄反了",
    "return (K, V) in this order, as the cache stores them": "按 (K, V) 的顺序返回，和缓存里存放的顺序一致",
    # 03.decode_step
    "step {step}: your new token was rotated as if at position 0 (or not rotated at all, which is the same); "
    "it sits at position {pos}, the number of positions cached":
        "第 {step} 步：你的新 token 是按位置 0 旋转的（或者根本没旋转，效果一样）；它实际在位置 {pos}，"
        "也就是缓存里已有的位置数",
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
    "each layer has its own entry in the cache: attend over what `cache.update(i, k, v)` returns for that "
    "layer's index i":
        "每层在缓存里都有自己的一份：注意力要用 `cache.update(i, k, v)` 按这一层的编号 i 返回的 K 和 V",
    "step {step}: afterwards the cache holds {got} positions per layer, expected {want}":
        "第 {step} 步：这一步之后缓存每层有 {got} 个位置，应为 {want} 个",
    "append the new k, v with `cache.update(layer_index, k, v)` exactly once in every layer: the "
    "next step reads them":
        "每层都要用 `cache.update(layer_index, k, v)` 把新的 k、v 追加一次，而且只追加一次：下一步要读它们",
    "go through the contract line by line: the position (`cache.seq_len`, read once), RoPE on q and k "
    "before `cache.update`, both norms and both residuals of every layer, the final `model.norm`":
        "对照函数约定逐行检查：位置（`cache.seq_len`，只读一次）、在 `cache.update` 之前对 q 和 k 做 RoPE、"
        "每层的两个归一化和两个残差连接、最后的 `model.norm`",
    # 05.top_p
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
    "you kept tokens {mine}; the nucleus is {want}": "你保留的 token 是 {mine}；核应为 {want}",
    "the token that crosses p is kept: keep a token while the mass of the tokens ranked before it is < p":
        "使累计概率越过 p 的那个 token 要保留：只要排在它前面的 token 概率之和还小于 p，就保留它",
    "the nucleus holds the most likely tokens: sort by probability, descending":
        "核里是概率最高的那些 token：按概率从高到低排序",
    # 05.stop_text
    "you cut at position {at}, where the regular expression {s} matches; the text {s} is at {pos}":
        "你在位置 {at} 截断了，那里是正则表达式 {s} 匹配到的地方；而文本 {s} 本身在位置 {pos}",
    "a stop string is plain text: in a regular expression `.`, `?`, `[` and `(` mean something "
    "else; use `text.find(s)` (or `re.escape(s)`)":
        "停止字符串是普通文本：在正则表达式里，`.`、`?`、`[` 和 `(` 另有含义；用 `text.find(s)`（或 `re.escape(s)`）",
    "you kept the stop string {s}: expected {expected}, got {got}": "你保留了停止字符串 {s}：应为 {expected}，实际是 {got}",
    "drop the stop string itself: cut at its start, `text[:position]`": "停止字符串本身要去掉：在它的起点截断，即 `text[:position]`",
    "you cut at {listed}, the first string of the list; {s} occurs earlier in the text":
        "你在列表里的第一个字符串 {listed} 处截断了；但 {s} 在文本中出现得更早",
    "the order of the list does not matter: find every stop string and cut at the one "
    "that occurs first in the text (the smallest position)":
        "列表里的先后顺序无关紧要：找出每个停止字符串的位置，在文本中最先出现的那个（位置最小的）处截断",
    "you returned None, but {s} occurs at position {pos}": "你返回了 None，但 {s} 出现在位置 {pos}",
    "position 0 is a hit too: test `s in text` (or `pos != -1`), not whether the position is truthy":
        "位置 0 也算找到：要判断 `s in text`（或 `pos != -1`），不能看位置的真假值",
    "look for the stop string anywhere in the text (`text.find(s)`), not only at its end: it may cover "
    "several tokens":
        "在整段文本里查找停止字符串（`text.find(s)`），不只看结尾：它可能横跨好几个 token",
}
