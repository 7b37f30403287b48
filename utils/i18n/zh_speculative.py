"""Chinese text of the speculative appendix's screen (its panel, figures, checks and exercises): English -> Chinese."""
from __future__ import annotations

MESSAGES: dict[str, str] = {
    # --- utils/plots/speculative.py: plot_speculative_rounds ---------------------------------------
    "round": "轮次",
    "position in the sequence (the prompt shaded: {n} tokens)": "序列中的位置（灰底为提示词：{n} 个 token）",
    "{draft}, k = {k}, {temp}{crop}: {n} rounds, {rate:.0%} of the drafts accepted":
        "{draft}，k = {k}，{temp}{crop}：共 {n} 轮，{rate:.0%} 的草稿 token 被接受",
    "greedy": "贪心",
    "temperature {t:g}": "温度 {t:g}",
    "prompt lookup": "提示词查找",
    "draft model": "草稿模型",
    ", no crop (the bug)": "，不裁剪（bug）",
    "draft accepted": "草稿 token 被接受",
    "draft refused": "草稿 token 被拒绝",
    "draft thrown away after a refusal": "拒绝之后被丢弃的草稿 token",
    "target's token at the refusal (correction)": "目标模型在拒绝处给出的 token（修正）",
    "target's bonus token (every draft accepted)": "目标模型附赠的 token（草稿全部被接受）",
    "target's token (nothing proposed)": "目标模型自己的 token（没有草稿）",
    "end of the target's cache after the round": "本轮结束后目标模型缓存的末尾",
    "end of the draft's cache after the round": "本轮结束后草稿模型缓存的末尾",

    # --- utils/widgets/speculative.py: kind_label (the kind of a round's target token, for display) ---
    "correction": "修正",
    "bonus": "附赠",
    "no drafts": "无草稿",

    # --- plot_first_token_counts --------------------------------------------------------------------
    "target's probability p": "目标模型的概率 p",
    "the rest": "其余 token",
    "probability / frequency": "概率 / 频率",
    "first new token": "第一个新 token",
    "The first new token: sampled frequencies against the target's probabilities":
        "第一个新 token：采样频率与目标模型的概率对比",

    # --- plot_speculative_speedup -------------------------------------------------------------------
    "target (course model)": "目标模型（课程模型）",
    "draft model, flat step": "草稿模型，扁平解码步",
    "tokens fed in one pass (k + 1)": "一次前向计算送入的 token 数（k + 1）",
    "ms per forward pass": "每次前向计算的耗时（ms）",
    "The cost of one pass": "一次前向计算的开销",
    "{name}: measured": "{name}：实测",
    "{name}: i.i.d. model (1 - α^(k+1)) / (1 - α)": "{name}：独立同分布模型 (1 - α^(k+1)) / (1 - α)",
    "{name}: measured (median, quartiles)": "{name}：实测（中位数与四分位数）",
    "{name}: cost model": "{name}：成本模型",
    "k + 1: every draft accepted": "k + 1：草稿全部被接受",
    "tokens per round (per target pass)": "每轮的 token 数（即目标模型每次前向计算得到的 token 数）",
    "Tokens per round": "每轮的 token 数",
    "1: as fast as generate": "1：与 generate 一样快",
    "speed-up over generate": "相对 generate 的加速比",
    "target, flat step (generate's)": "目标模型，扁平解码步（generate 所用）",
    "Speed-up": "加速比",
    "Speculative decoding on this CPU: costs, tokens per round, speed-up":
        "本机 CPU 上的推测解码：开销、每轮 token 数、加速比",

    # --- utils/widgets/speculative.py: SpeculativePanel ---------------------------------------------
    "Speculative decoding: what each round proposed, accepted and kept in the caches":
        "推测解码：每一轮提出了什么、接受了什么、缓存里留下了什么",
    "draft model ({L} block, C={C})": "草稿模型（{L} 个块，C={C}）",
    "prompt lookup (no weights)": "提示词查找（没有权重）",
    "0 (greedy)": "0（贪心）",
    "crop both caches (correct)": "裁剪两个缓存（正确做法）",
    "no crop (the bug)": "不裁剪（bug）",
    "k (drafts per round)": "k（每轮的草稿 token 数）",
    "draft": "草稿",
    "after each round": "每轮结束后",
    "acceptance rate": "接受率",
    "{rate:.0%} of the drafts": "草稿 token 的 {rate:.0%}",
    "rounds": "轮数",
    "target passes": "目标模型前向计算次数",
    "{n} (plain decoding: {plain})": "{n}（普通解码：{plain}）",
    "draft passes": "草稿模型前向计算次数",
    "tokens per target pass": "目标模型每次前向计算得到的 token 数",
    "sampled (seed 0): the target's distribution is kept (section 3), not a fixed sequence":
        "采样（随机种子 0）：保持的是目标模型的分布（第 3 节），而不是某个固定的序列",
    "sampled (seed 0) without the crop: the target's cache holds refused drafts, so the target's "
    "distribution is NOT kept":
        "采样（随机种子 0）且不裁剪：目标模型的缓存里留着被拒绝的草稿 token，所以输出不再服从目标模型的分布",
    "the same {n} tokens as the target's own greedy run": "与目标模型自己贪心生成的 {n} 个 token 完全相同",
    "differs from the target's own greedy run first at new token {i}": "第一个与目标模型自己的贪心结果不同的是第 {i} 个新 token",
    "target passes: the prefill of the prompt's first T - 1 tokens, then one per round; "
    "tokens per target pass: new tokens / rounds":
        "目标模型前向计算次数：先预填充提示词的前 T - 1 个 token，之后每轮一次；目标模型每次前向计算得到的 token 数：新 token 数 / 轮数",

    # --- utils/exercises/speculative_exercises.py -----------------------------------------------------
    # 12.accept_prefix
    "count the drafts equal to the target's argmax at the same position, from the first on, stopping at the "
    "first that differs; then take target_argmax at that count":
        "从第一个草稿 token 开始，逐个与目标模型在同一位置的 argmax 比较，遇到第一个不同的就停下，数出相同的个数；"
        "然后取 target_argmax 在这个下标上的值",
    "k = 4, the target agrees with every draft": "k = 4，目标模型认同每一个草稿 token",
    "when all k drafts are accepted, the target's last logits (position k) give one more token: k + 1 tokens "
    "from one pass":
        "k 个草稿 token 全部被接受时，目标模型最后一个位置（位置 k）的 logits 还能再给出一个 token：一次前向计算得到 k + 1 个 token",
    "k = 4, the first draft is refused": "k = 4，第一个草稿 token 就被拒绝",
    "a refused first draft still gives the round one token: the target's own choice at that position":
        "第一个草稿 token 被拒绝，这一轮仍然得到一个 token：目标模型在该位置自己的选择",
    "k = 4, refused at the third draft, the fourth agrees again": "k = 4，第三个草稿 token 被拒绝，第四个又与目标一致",
    "accept the longest agreeing prefix only: after a refusal, the later drafts were written after a token that "
    "is not kept, so they count for nothing even when they agree":
        "只接受最长的一致前缀：被拒绝之后的草稿 token 是接在一个没有保留下来的 token 后面写的，即使与目标一致也不算数",
    "k = 1, accepted": "k = 1，被接受",
    "k = 3, the same token three times, refused at the last": "k = 3，同一个 token 连续三次，最后一个被拒绝",
    "nothing proposed (prompt lookup found no match)": "没有草稿（提示词查找没有找到匹配）",
    "with no drafts the round is a plain decode step: 0 accepted, and the target's token":
        "没有草稿时，这一轮就是一次普通的解码步：接受 0 个，再加上目标模型自己的 token",
    # 12.residual
    "max(0, p - q), divided by its sum; p itself when that sum is 0": "max(0, p - q) 再除以它的和；和为 0 时直接返回 p",
    "V = 4, the draft prefers other tokens": "V = 4，草稿模型偏爱别的 token",
    "keep only where p is larger than q (max(0, p - q)), then divide by the sum so it adds up to 1":
        "只保留 p 大于 q 的部分（max(0, p - q)），再除以总和，使它加起来等于 1",
    "prompt lookup: q is one-hot on the refused token 1": "提示词查找：q 是落在被拒绝的 token 1 上的独热分布",
    "with a one-hot q the residual is p without the refused token, renormalised":
        "q 是独热分布时，残差分布就是去掉被拒绝 token 之后的 p，再重新归一化",
    "a draft filtered by top-k: q is 0 on two tokens": "草稿经过 top-k 过滤：q 在两个 token 上为 0",
    "p == q: the draft is never refused": "p == q：草稿永远不会被拒绝",
    "when p == q, max(0, p - q) is all zeros: dividing by its sum gives NaN. A refusal cannot happen then, so "
    "return p":
        "p == q 时，max(0, p - q) 全为 0，除以它的和会得到 NaN。这时根本不会发生拒绝，所以返回 p",
    "V = 16, random p and q (seed 12)": "V = 16，随机的 p 和 q（随机种子 12）",
    # 12.accept_or_resample
    "sampling: accept a draft, or draw from the residual": "采样：接受草稿 token，或者从残差分布中重新抽取",
    "return d when u < p[d] / q[d]; otherwise r = (p - q).clamp(min=0) and "
    "int(torch.multinomial(r / r.sum(), 1, generator=g))":
        "`u < p[d] / q[d]` 时返回 d；否则令 `r = (p - q).clamp(min=0)`，返回 `int(torch.multinomial(r / r.sum(), 1, generator=g))`",
    "expected one token id (an int), got {got}": "应返回一个 token id（一个整数），实际得到 {got}",
    "got {t}: refused, but u = {u} < p(d)/q(d) = {r} accepts d = {d}":
        "得到 {t}：被拒绝了，但 u = {u} < p(d)/q(d) = {r}，应当接受 d = {d}",
    "accept when u < p(d)/q(d), the target's probability over the draft's: a token the target likes at least as "
    "much as the draft did is always accepted; compare u with the ratio, not with p(d) alone":
        "u < p(d)/q(d) 时接受，这个比值是目标模型的概率除以草稿模型的概率：目标模型至少和草稿模型一样看好的 token 总会被接受；"
        "要拿 u 和这个比值比较，而不是只和 p(d) 比较",
    "got d = {d}: accepted, but u = {u} ≥ p(d)/q(d) = {r} refuses it":
        "得到 d = {d}：被接受了，但 u = {u} ≥ p(d)/q(d) = {r}，应当拒绝",
    "the ratio is p(d)/q(d) (q(d)/p(d) is upside down); at a refusal the draft's token is out and a new one is "
    "drawn from the residual":
        "比值是 p(d)/q(d)（q(d)/p(d) 就颠倒了）；一旦拒绝，草稿 token 就作废，要从残差分布中重新抽一个",
    "got {t}, a token the residual max(0, p - q) gives probability 0": "得到 {t}，而残差分布 max(0, p - q) 给它的概率是 0",
    "at a refusal draw from max(0, p - q) renormalised, not from p again: a token the draft already proposed "
    "often enough (p ≤ q there) must not come back":
        "拒绝之后要从归一化后的 max(0, p - q) 中抽取，而不是再从 p 中抽：草稿模型已经提议得足够多的 token（那里 p ≤ q）不能再出现",
    "expected frequencies {e}, got {g}": "期望频率 {e}，实际得到 {g}",
    "at a refusal you drew from p again: the draft's token gets a second chance. Draw from the residual "
    "max(0, p - q) renormalised":
        "拒绝之后你又从 p 中抽取：草稿 token 因此多了一次机会。应从归一化后的残差分布 max(0, p - q) 中抽取",
    "max(0, q - p) is where the draft overrates tokens: the residual is max(0, p - q), where the target wants "
    "more than the draft proposed":
        "max(0, q - p) 是草稿模型高估的部分；残差分布是 max(0, p - q)，即目标模型想要的比草稿模型提议的更多的部分",
    "d = 0, p(d) = 0.4 ≥ q(d) = 0.1, u = 0.95: accepted": "d = 0，p(d) = 0.4 ≥ q(d) = 0.1，u = 0.95：接受",
    "d = 2, p(d) = 0.2, q(d) = 0.5, u = 0.3 < 0.4: accepted": "d = 2，p(d) = 0.2，q(d) = 0.5，u = 0.3 < 0.4：接受",
    "4000 refusals of d = 2 (u = 0.99): the tokens follow the residual [0.75, 0.25, 0, 0]":
        "d = 2 被拒绝 4000 次（u = 0.99）：抽出的 token 服从残差分布 [0.75, 0.25, 0, 0]",
    "d = 2, u = 0.7 ≥ p(d)/q(d) = 0.4: refused, a token of the residual":
        "d = 2，u = 0.7 ≥ p(d)/q(d) = 0.4：拒绝，从残差分布中抽一个 token",
    "prompt lookup (q one-hot on d = 1), u = 0.25 < p(d) = 0.3: accepted":
        "提示词查找（q 是落在 d = 1 上的独热分布），u = 0.25 < p(d) = 0.3：接受",
    "prompt lookup, u = 0.5 ≥ p(d) = 0.3: refused, a token of p without d":
        "提示词查找，u = 0.5 ≥ p(d) = 0.3：拒绝，从去掉 d 的 p 中抽一个 token",
    "the whole rule 4000 times (d drawn from q, u uniform): the kept tokens follow p":
        "整条规则运行 4000 次（d 从 q 中抽取，u 均匀分布）：保留下来的 token 服从 p",
    "accept d when u < p(d)/q(d); otherwise draw from max(0, p - q) renormalised: min(p, q) + max(0, p - q) = p":
        "u < p(d)/q(d) 时接受 d；否则从归一化后的 max(0, p - q) 中抽取：min(p, q) + max(0, p - q) = p",
}
