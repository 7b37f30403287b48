"""Chinese catalogue part: notebook 07's mysteries (the probe, the diagnoses, why a wrong guess is wrong) and
its chunk exercise (utils/bug_lab/probe.py, mysteries.py, rules_out.py; utils/exercises/chunk_exercise.py).
Merged into the catalogue by ``zh_exercises``."""
from __future__ import annotations

MESSAGES = {
    # --- utils/bug_lab/probe.py: the table ------------------------------------------------------------------
    "row": "行",
    "input ids": "输入 ids",
    "positions": "位置",
    "last query's mask row": "最后一个查询的掩码行",
    "cache: len (real)": "缓存：长度（真实）",
    "new K": "新 K",
    "new V": "新 V",
    "layer outputs": "各层输出",
    "logits": "logits",
    "new K, new V: the last token's key and value as each layer reads them; layer outputs: each "
    "layer's output at that token. One mark per layer, 0 to {last}: = equal to a full recompute "
    "within {tol:g}, ≠ not.":
        "新 K、新 V：最后一个 token 的键和值，即各层读到的那一份；各层输出：每一层在这个 token 上的输出。"
        "每层一个记号，第 0 到 {last} 层：= 表示与完全重算的结果相差不超过 {tol:g}，≠ 表示超过。",

    # --- utils/bug_lab/mysteries.py: diagnose() --------------------------------------------------------------
    "✗ mystery {n}: {guess!r} is not a word of the list. Name the bug with one of: {words}":
        "✗ 谜题 {n}：{guess!r} 不在词表里。请用其中一个词说出这个 bug：{words}",
    "✓ mystery {n} is '{word}', {k} bugs at once:": "✓ 谜题 {n} 就是 '{word}'，同时有 {k} 个 bug：",
    "  {title}: {cause}; check: {check}.": "  {title}：{cause}；检查：{check}。",
    "✗ not '{word}': {why}": "✗ 不是 '{word}'：{why}",
    "✓ '{word}' is one of the bugs of mystery {n}; it holds {k}: name them all, as 'word + word'.":
        "✓ '{word}' 是谜题 {n} 的 bug 之一；它一共有 {k} 个，请全部说出来，写成 '词 + 词'。",
    "Mystery {n} is '{answer}':": "谜题 {n} 是 '{answer}'：",
    "The catalogue below shows its bugs broken and fixed.": "下文的 bug 目录里有它们的坏版本和修好版本。",
    "Hint: {hint}": "提示：{hint}",
    # the hints, after two wrong guesses
    "compare the last query's mask row with the correct engine's": "把最后一个查询的掩码行和正确引擎的对照一下",
    "compare the input ids and the cache length after step 1 with the correct engine's":
        "把第 1 步的输入 ids 和之后的缓存长度，与正确引擎的对照一下",
    "the prefill agrees; compare each row's position in step 1 with the batch's position line":
        "预填充是对的；把第 1 步里每行的位置和批表格中的 `position` 行对照一下",
    "compare each row's position in step 1 with the position after its last one in the batch":
        "看第 1 步里每行的位置：它是不是该行在批里最后一个位置的下一个？",
    "look at the cache length and the positions right after the prefill": "看预填充刚结束时的缓存长度和位置",
    "wrong from the prefill on: count the 1s of each row's mask row, and each row's real tokens":
        "从预填充起就错了：数一数每行掩码行里 1 的个数，再数一数每行的真实 token",
    "row 1, without padding, stays right: read row 0's mask row key by key":
        "没有填充的第 1 行一直是对的：把第 0 行的掩码行逐个键读一遍",
    "find the first layer whose output goes wrong; its input and its own new K are right: what else "
    "does a layer read?":
        "找出第一个输出出错的层；它的输入和它自己的新 K 都是对的：一层还会读什么？",
    "wrong from the prefill on, with positions and masks right: compare new K and new V in layer 0":
        "从预填充起就错，位置和掩码却都对：比较第 0 层的新 K 和新 V",
    "two bugs: read the rows one at a time. Where does each first go wrong, and in which layer?":
        "两个 bug：一行一行地看。每一行最早在哪一步出错，从哪一层开始？",
    # the bugs the catalogue does not hold: title, cause, fix
    "Decode mask shows the padding": "解码掩码露出了填充",
    "a [1, S] mask of ones: right without padding, but a short row's query sees its pad keys too":
        "全为 1 的 `[1, S]` 掩码：没有填充时是对的，但短行的查询连它的填充键也能看到",
    "the new query sees its row's real keys and itself, never padding": "新查询只看本行的真实键和它自己，从不看填充",
    "Cache not reset between requests": "请求之间没有重置缓存",
    "the engine keeps one cache: the last request's K/V stay in front of the new prompt":
        "引擎一直用同一个缓存：上一个请求的 K/V 还留在新提示词前面",
    "a new (or cleared) cache per request; seq_len == T after the prefill":
        "每个请求用一个新的（或清空的）缓存；预填充后 seq_len == T",
    "Position off by one": "位置差一",
    "the new token gets the position of the last cached token": "新 token 拿到的是最后一个已缓存 token 的位置",
    "position = real tokens already cached": "位置 = 已缓存的真实 token 数",
    "RoPE applied to V": "对 V 也做了 RoPE",
    "the cache rotates values by their positions, as it should only keys": "缓存按位置旋转了值，而该旋转的只有键",
    "rotate q and k; V stays as v_proj made it": "只旋转 q 和 k；V 保持 `v_proj` 算出来的样子",

    # --- utils/bug_lab/rules_out.py: the observation that rules a word out ---------------------------------
    "the prefill": "预填充",
    "every decode step adds to seq_len exactly the tokens it fed, and nothing raised: "
    "new keys and values go onto the time axis":
        "每个解码步让 seq_len 恰好增加它送入的 token 数，而且没有报错：新的键和值是接在时间维上的",
    "the model runs in eval mode: probing the same mystery again prints the same table, where "
    "dropout would draw new random masks every run":
        "模型处于 `eval` 模式：同一个谜题再探查一次，打印的表格完全相同；如果 dropout 开着，每次都会抽出新的随机掩码",
    "no beam search runs here: each row only ever continues its own text, so no cache row "
    "needs to be reordered":
        "这里没有束搜索：每一行只续写它自己的文本，没有哪一行缓存需要重排",
    "every decode step feeds one token per row (input ids {shape}), as the correct engine does":
        "每个解码步每行只送入一个 token（输入 ids 为 {shape}），和正确引擎一样",
    "right after the prefill the cache holds {n} positions, exactly the prompt's: nothing is left "
    "over from an earlier request":
        "预填充刚结束时缓存里有 {n} 个位置，正好是提示词的长度：没有残留之前请求的内容",
    "in {pass_} the positions number on from the keys the cache already held: its cache holds {S} "
    "positions after the pass, the correct engine's {S_ok}. The positions follow the cache: "
    "compare what goes into it":
        "在{pass_}中，位置是接着缓存里已有的键往后编号的：这次前向计算之后它的缓存有 {S} 个位置，"
        "正确引擎的是 {S_ok} 个。位置只是跟着缓存走：去比较送进缓存的是什么",
    "every pass gives each row the same positions as the correct engine": "每次前向计算里，每行的位置都和正确引擎的一样",
    "in every pass each row's last position is the number of keys its mask row lets it see, "
    "minus one: the positions follow the mask":
        "每次前向计算里，每行最后的位置都等于它的掩码行允许看到的键数减一：位置是跟着掩码走的",
    "every pass gives each row's last query the same mask row as the correct engine":
        "每次前向计算里，每行最后一个查询的掩码行都和正确引擎的一样",
    "in {pass_} the last query's mask row has one entry per key the cache then holds, {S}; the "
    "correct engine's cache holds {S_ok}. The mask fits the cache: compare the cache lengths":
        "在{pass_}中，最后一个查询的掩码行对缓存当时的每个键都有一项，共 {S} 项；正确引擎的缓存只有 {S_ok} 个。"
        "掩码和缓存是吻合的：去比较缓存长度",
    "row {b}, which has no padding, goes wrong in the same pass as row 0 ({pass_})":
        "没有填充的第 {b} 行和第 0 行在同一次前向计算（{pass_}）里出错",
    "in {pass_}, the first pass that goes wrong, layer 0's output is already wrong (row {b}): a layer "
    "that reads another layer's keys goes wrong from layer 1 on":
        "在最早出错的{pass_}中，第 0 层的输出就已经错了（第 {b} 行）；而读错了别层键的情况要从第 1 层才开始出错",
    "layer 0's new V equals the recompute's in every pass and row": "每次前向计算、每一行，第 0 层的新 V 都和重算结果一致",
    "compare the mystery's probe with the correct engine's, pass by pass: which observation differs first?":
        "逐次对照谜题和正确引擎的探查结果：哪一项观察最先不同？",

    # --- utils/exercises/chunk_exercise.py and the 07 entries of catalogue.py ---------------------------------
    "a chunk on top of the cache: positions and mask": "在缓存之上送入一块 token：位置和掩码",
    "each row counts on from its real tokens; query i sees keys up to past + i, never padding":
        "每行从自己的真实 token 数接着编号；第 i 个查询看到 `past + i` 及之前的键，从不看填充",
    "position = real tokens the row already holds": "位置 = 该行已有的真实 token 数",
    "in a left-padded batch each row counts its own real tokens: cache.valid_counts() (None without padding)":
        "在左填充的批中，每行数它自己的真实 token：`cache.valid_counts()`（没有填充时为 None）",
    "course model, a left-padded batch, 6 decode steps": "课程模型，一个左填充的批，6 个解码步",
    "course model, no padding: 6 cached, a chunk of T = 4": "课程模型，无填充：已缓存 6 个，送入一块 T = 4",
    "course model, left padding (3 and 6 real tokens): a chunk of T = 4":
        "课程模型，左填充（真实 token 分别为 3 个和 6 个）：送入一块 T = 4",
    "course model, left padding: a chunk of T = 1 (a decode step)": "课程模型，左填充：送入一块 T = 1（即一个解码步）",
    "random MQA model, left padding (2 and 5 real tokens): a chunk of T = 3":
        "随机 MQA 模型，左填充（真实 token 分别为 2 个和 5 个）：送入一块 T = 3",
    "the chunk's positions start at 0, as if nothing were cached": "这块 token 的位置从 0 开始，好像缓存里什么都没有",
    "the first new token of a row comes after the row's real cached tokens: its position is their count":
        "一行的第一个新 token 排在该行已缓存的真实 token 之后：它的位置就是这些 token 的个数",
    "every row's positions start at cache.seq_len: a left-padded row counts its padding as tokens":
        "每行的位置都从 `cache.seq_len` 开始：左填充的行把填充也算成了 token",
    "count each row's real tokens (cache.mask.sum(1)); only without padding is that cache.seq_len":
        "数每行的真实 token（`cache.mask.sum(1)`）；只有没有填充时它才等于 `cache.seq_len`",
    "the positions are one too low: the first new token gets the last cached token's position":
        "位置小了一：第一个新 token 拿到的是最后一个已缓存 token 的位置",
    "the next position is the count of real tokens cached, not that count - 1":
        "下一个位置等于已缓存的真实 token 数，而不是这个数减一",
    "the positions are one too high": "位置大了一",
    "the next position is the count of real tokens cached, not that count + 1":
        "下一个位置等于已缓存的真实 token 数，而不是这个数加一",
    "the causal triangle starts at key 0: new query i sees keys 0..i instead of 0..past + i":
        "因果三角从键 0 开始：第 i 个新查询看到的是键 `0..i`，而不是 `0..past + i`",
    "query i of the chunk sits at key column past + i: shift the triangle by past":
        "这块里的第 i 个查询对应键的第 `past + i` 列：把三角整体平移 `past`",
    "a padded row's queries see its padding keys": "有填充的行，它的查询能看到填充键",
    "AND the causal triangle with each row's real keys (cache.mask, then True for the chunk)":
        "把因果三角和每行的真实键做与运算（先是 `cache.mask`，再接上这块 token 的 True）",
    "each new query sees the chunk's later tokens too: the causal triangle is missing inside the chunk":
        "每个新查询连这块里后面的 token 也能看到：块内缺了因果三角",
    "new query i may see the chunk's keys up to its own, past + i, never later ones":
        "第 i 个新查询能看到块内直到它自己（`past + i`）的键，不能看后面的",
    "your logits match a forward with no mask at all: every query sees every key, padding and later "
    "tokens included":
        "你的 logits 和完全不加掩码的前向计算一致：每个查询都能看到所有键，连填充和后面的 token 也能看到",
    "hide both the padded keys and the chunk's later keys": "填充键和块内后面的键都要遮住",
    "your mask is the right one inverted: True where attention is forbidden": "你的掩码正好取反了：True 放在了不许关注的位置",
    "True means may attend: a query sees the keys where its mask row is True": "True 表示可以关注：查询看到的是掩码行中为 True 的键",
    "torch raised {error}: the mask does not fit the scores [B, H, T, past + T]":
        "torch 抛出了 {error}：掩码和得分 `[B, H, T, past + T]` 的形状对不上",
    "the mask needs one column per key, the cached ones first: past + T columns, e.g. [B, 1, T, past + T]":
        "掩码要为每个键留一列，已缓存的键在前：共 `past + T` 列，例如 `[B, 1, T, past + T]`",
    "expected logits of shape [B, T, V] = {want}, got {got}": "logits 的形状应为 [B, T, V] = {want}，实际是 `{got}`",
    "some logits are NaN: a query whose mask row is all False sees no key at all":
        "有些 logits 是 NaN：掩码行全为 False 的查询一个键也看不到",
    "True means may attend: every new query sees at least its own key": "True 表示可以关注：每个新查询至少要看到它自己的键",
    "the cache grew by {grew} positions instead of T = {T}": "缓存增长了 {grew} 个位置，而不是 T = {T} 个",
    "run the chunk through masked_forward once, with the cache: it appends the chunk's K/V":
        "带着缓存把这块 token 送进 `masked_forward` 一次即可：它会把这块的 K/V 追加进缓存",
    "the logits differ from a full recompute by up to {worst:.3g}": "logits 与完全重算的结果最多相差 {worst:.3g}",
}
