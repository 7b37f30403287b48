"""Chinese text of the paged appendix's screen (its panel, figures, checks and exercises): English -> Chinese.

utils/plots/paged.py, utils/widgets/paged.py and the cases and hints of utils/exercises/paged_exercises.py.
"""
from __future__ import annotations

MESSAGES: dict[str, str] = {
    # --- plots/paged.py: the block table -----------------------------------------------------------
    "A block table maps a request's tokens to blocks of the pool": "块表把一个请求的 token 映射到块池中的块",
    "logical block {i}": "逻辑块 {i}",
    "slots {first}-{last}": "槽位 {first}-{last}",
    "the request's tokens (position j)": "请求的 token（位置 j）",
    "the pool: {n} blocks of {size} slots (block id)": "块池：{n} 个块，每块 {size} 个槽位（块编号）",
    "grey: held by other requests; white: free": "灰色：被其他请求持有；白色：空闲",
    # the memory bars
    "The same requests: a left-padded cache vs a paged one": "同样的请求：左填充的缓存与分页缓存",
    "StaticKVCache, left-padded": "StaticKVCache（左填充）",
    "paged: the pool (reserved once)": "分页：整个块池（一次性预留）",
    "paged: blocks held by the rows": "分页：各行持有的块",
    "paged: K/V of the real tokens": "分页：真实 token 的 K/V",
    "K/V bytes, all layers (KiB)": "K/V 字节数，所有层合计（KiB）",
    "{n:,} bytes ({size})": "{n:,} 字节（{size}）",
    # the prefix-cache sweep
    "A shared prefix, computed once": "共享前缀只算一次",
    "Time to the first token": "首 token 延迟",
    "fresh prefill of the whole prompt": "从头预填充整条提示词",
    "prefix cache: prefill the rest only": "前缀缓存：只预填充剩下的部分",
    "shared prefix (system prompt) length (tokens)": "共享前缀（系统提示词）长度（token 数）",
    "TTFT, model only (ms)": "TTFT，仅模型部分（ms）",
    "Hit rate": "命中率",
    "prompt tokens found in the cache (%)": "在缓存中找到的提示词 token（%）",
    # the block map
    "Step {step}: blocks of {size} tokens": "第 {step} 步：每块 {size} 个 token",
    "; preempted: {rids} (its blocks say \"was rN\")": "；被抢占：{rids}（它交还的块标着“原属 rN”）",
    "was r{rid}": "原属 r{rid}",
    "found": "命中",
    "reused": "回收再用",
    "shared (×holders)": "共享（×持有者数）",
    "cached, free (ref 0)": "已缓存、空闲（引用计数 0）",
    "free": "空块（未缓存）",
    "holds a findable prefix": "存有可查找的前缀",
    "the step shown above": "上方所示的这一步",
    "step": "步",
    "blocks": "块数",
    "The pool over the whole run: blocks held, shared, cached and free": "整个运行过程中的块池：持有、共享、已缓存和空的块",

    # --- widgets/paged.py ----------------------------------------------------------------------------
    "The block pool of a small serving run, step by step": "一次小规模推理服务运行中的块池，逐步查看",
    "block_size (tokens per block)": "block_size（每块的 token 数）",
    "n_blocks (blocks in the pool)": "n_blocks（块池中的块数）",
    "request r{rid} needs up to {need} blocks of {size} tokens, and the whole pool has {n}":
        "请求 r{rid} 最多需要 {need} 个每块 {size} 个 token 的块，而整个块池只有 {n} 个",
    "This pool cannot serve the script: {problem}": "这个块池跑不完这份脚本：{problem}",
    "<b>Step {step} of {n}</b> (clock {ms:.1f} ms)": "<b>第 {step} 步，共 {n} 步</b>（时钟 {ms:.1f} ms）",
    "(the run ended at step {n})": "（运行在第 {n} 步结束）",
    "r{rid} (prefix hit: {hit} of {n} prompt tokens)": "r{rid}（前缀命中：提示词 {n} 个 token 中的 {hit} 个）",
    "block {b} (last held by r{rid})": "块 {b}（上一个持有者是 r{rid}）",
    "r{rid} ({n} tokens)": "r{rid}（{n} 个 token）",
    "decode": "解码",
    "prefill": "预填充",
    "joined": "加入",
    "resumed after preemption": "被抢占后恢复",
    "finished": "结束",
    "preempted": "被抢占",
    "cached blocks found again": "再次找到的已缓存块",
    "freed blocks reused": "回收再用的已释放块",
    "no request running": "没有正在运行的请求",
    "Blocks: <b>{used}</b> held ({shared} shared), <b>{cached}</b> cached and free, <b>{free}</b> empty, of {n}. "
    "Requests waiting: {waiting}; still to arrive: {to_come}. Prefix hit rate so far: <b>{rate:.0%}</b>. "
    "Over the whole run: {pre} preemptions.":
        "块：共 {n} 个，其中 <b>{used}</b> 个被持有（{shared} 个共享），<b>{cached}</b> 个已缓存且空闲，"
        "<b>{free}</b> 个为空。等待中的请求：{waiting} 个；尚未到达：{to_come} 个。目前的前缀命中率："
        "<b>{rate:.0%}</b>。整个运行中共抢占 {pre} 次。",
    "request": "请求",
    "tokens held": "持有的 token 数",
    "block table": "块表",

    # --- exercises/paged_exercises.py -------------------------------------------------------------------
    # 10.grow_table
    "a copy of the last block when the next token lands in a block the row may not write, then new blocks "
    "until `ceil((n + m) / block_size)` fit":
        "下一个 token 要落进本行不能写的块时，先复制最后一块；再加新块，直到放得下 `ceil((n + m) / block_size)` 块",
    "expected the new block table, a list of block ids, got {got!r}": "应返回新的块表（块编号的列表），实际是 {got!r}",
    "expected the table {expected}, got {got}": "块表应为 {expected}，实际是 {got}",
    "the last block is shared or published, and the row is about to write into it: copy it first "
    "(copy-on-write, `table[-1] = allocate()`), or another holder's K/V change under it":
        "最后一块是共享的或已发布的，而本行正要往里写：先复制它（写时复制，`table[-1] = allocate()`），否则别的持有者的 K/V 会被悄悄改掉",
    "the last block is full, so the next token starts a new block: nothing is written into the full one, and it "
    "needs no copy":
        "最后一块已经满了，下一个 token 从新块开始：满块不会再被写入，所以不用复制",
    "copy only a block the row may not write: when `writable(table[-1])` is True the row holds it alone and writes "
    "in place":
        "只复制本行不能写的块：`writable(table[-1])` 为 True 时，本行独占这一块，直接原地写入",
    "the copy replaces the last block in the table (the row lets go of the original), it is not added after it":
        "副本替换块表里的最后一块（本行放开原块），而不是追加在它后面",
    "take the copy first, then the new blocks: the pool hands out blocks in that order, so the copy gets the first "
    "id":
        "先取副本，再取新块：块池按这个顺序分配，所以副本拿到第一个编号",
    "count the room left in the last block: the row needs `ceil((n + m) / block_size)` blocks in all, not "
    "`ceil(m / block_size)` more":
        "要算上最后一块剩下的空位：本行总共需要 `ceil((n + m) / block_size)` 块，而不是再加 `ceil(m / block_size)` 块",
    "a block that is exactly full needs no successor: grow while `len(table) * block_size < n + m`":
        "恰好装满的块不需要再接一块：只在 `len(table) * block_size < n + m` 时增长",
    "no token to add: nothing is written, so nothing is copied or taken": "没有要加的 token：什么都不写，所以既不复制也不取新块",
    "table [3, 7], 6 tokens, 3 more, blocks of 4, both blocks private": "块表 [3, 7]，6 个 token，再加 3 个，每块 4 个，两块都是私有的",
    "table [3, 7], 6 tokens, 1 more, block 7 shared": "块表 [3, 7]，6 个 token，再加 1 个，块 7 是共享的",
    "table [3, 7], 8 tokens (block 7 full and shared), 1 more": "块表 [3, 7]，8 个 token（块 7 已满且共享），再加 1 个",
    "table [5], 2 tokens in a published block, 9 more": "块表 [5]，2 个 token 在一个已发布的块里，再加 9 个",
    "table [1, 2], 5 tokens, 0 more, block 2 shared": "块表 [1, 2]，5 个 token，再加 0 个，块 2 是共享的",
    "an empty row, 5 tokens to add, blocks of 4": "空行，要加 5 个 token，每块 4 个",
    "blocks of 1 token: table [4, 2], 2 more": "每块 1 个 token：块表 [4, 2]，再加 2 个",
    # 10.prefix_hit
    "the leading run of cached blocks, in tokens, at most prompt_len - 1":
        "开头连续命中的块，换算成 token 数，最多 prompt_len - 1",
    "count the prompt's leading blocks found in the cache, in tokens; a full hit still runs the last token":
        "数出提示词开头在缓存中连续找到的块，换算成 token 数；即使全部命中，最后一个 token 仍要重新计算",
    "nothing cached yet": "缓存里还什么都没有",
    "the first 2 of 3 blocks cached (15-token prompt, block_size 4)":
        "3 个块中前 2 个已缓存（提示词 15 个 token，block_size 4）",
    "blocks 0 and 2 cached, block 1 evicted": "块 0 和块 2 已缓存，块 1 已被淘汰",
    "keys are chained: a block counts only if every block before it is cached too; stop at the first miss":
        "键是链式的：只有前面所有块都已缓存，这个块才算数；遇到第一个未命中就停下",
    "all 3 blocks cached, 3 more prompt tokens after them": "3 个块全部已缓存，后面还有 3 个提示词 token",
    "all 3 blocks cached and the prompt is exactly 12 tokens": "3 个块全部已缓存，且提示词恰好 12 个 token",
    "a full hit: every prompt token is cached, but the model must still run the last one, or it has no logits "
    "to pick the first new token: reuse one token less":
        "完全命中：提示词的每个 token 都已缓存，但模型仍要重新计算最后一个，否则就没有 logits 来选出第一个新 "
        "token：少复用一个 token",
    "a 3-token prompt: no full block, nothing to look up": "3 个 token 的提示词：没有满块，无需查找",
}
