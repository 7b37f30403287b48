"""The self-test's questions in Chinese: the text of every question of ``utils.quiz.QUESTIONS``.

``ZH[i]`` is the Chinese text of ``QUESTIONS[i]`` (same position, same notebook and kind, options in
the same order). The numbers are not typed here either: the texts are f-strings and functions over the
values ``utils/quiz.py`` computes them from. ``bank()`` builds the Chinese questions: a choice's answer
is the Chinese option at the index of the English answer, a true/false or fill-in answer is the English
one (a range of positions may also be written "13 到 20"), and computed answers stay computed on first
read. ``translate(q)`` is a bank question's Chinese twin; ``questions()`` the bank in the current language.
"""
from __future__ import annotations

from functools import cache

from . import quiz_numbers as N
from .i18n import language
from .question import Question, format_answer
from .quiz_appendix import APPENDIX_ZH
from .quiz import (_A100, _BATCHES, _BUG_OPTIONS, _FED, _H100, _L3, _L3_GROUP, _L3_KIB,
                   _L7B, _L7B_GIB, _LONG, _MQA_KIND, _NUCLEUS_LOGITS, _PREFILL_LEN, _QUERY_POS, _ROOF_MODEL,
                   _STATIC_LEN, _WINDOW, QUESTIONS, _prefill_vs_decode)
from .recompute import TOL
from .sizing import MODEL_PRESETS, cache_bytes_for


def _z(notebook: int, kind: str, prompt: str, why, options=(), answer=None) -> dict:
    """One question's Chinese text. ``answer``: an open question's model answer, or a function of the
    English answer (a fill-in written differently in Chinese); ``options=None``: the English options."""
    return {"notebook": notebook, "kind": kind, "prompt": prompt, "why": why, "options": options, "answer": answer}


# --- the texts built from computed values ----------------------------------------------------------

def _decode_law_why() -> str:
    got = "、".join(f"{x:.1f}" for x in N.decode_intensities(_ROOF_MODEL, _BATCHES, 1))
    return ("解码步把每个权重读一次（float16 下 2 字节），对每一行只用它做一次乘加（2 FLOPs）：每 2 字节对应 2B FLOPs。"
            f"在 {_ROOF_MODEL} 上、上下文只有 1 个 token 时，utils.roofline.decode_point 给出 B = "
            f"{'、'.join(map(str, _BATCHES))} 时每字节分别做 {got} FLOPs。读取 K/V 缓存会带来随上下文增长的字节数，"
            "所以上下文一长，这个数会被拉低。")


_PREFILL_WHY = "预填充读到的每个权重都要用于全部 T 个提示词 token（每字节约 T FLOPs）；B = 1 的解码只用于一个 token（约 1）"


def _prefill_vs_decode_why() -> str:
    _prefill_vs_decode()  # raises if the measured points no longer straddle the ridges
    prefill = N.prefill_intensity(_ROOF_MODEL, _PREFILL_LEN)
    decode = N.decode_intensities(_ROOF_MODEL, (1,), _PREFILL_LEN)[0]
    listed = "、".join(f"{ridge:.0f}（{name}）" for name, ridge in N.gpu_ridges().items())
    return (f"用 utils.roofline 计算 {_ROOF_MODEL}（float16）：{_PREFILL_LEN} 个 token 的预填充每字节做 {prefill:.0f} "
            f"FLOPs，B = 1 的解码步只有 {decode:.1f}。GPU 的脊点（峰值 FLOP/s 除以带宽，单位 FLOPs/字节）是 {listed}："
            "预填充在脊点之上（瓶颈是运算单元），解码远在其下（在等内存）。")


def _long_context_why() -> str:
    x = "、".join(f"{v:.1f}" for v in N.decode_intensities(_ROOF_MODEL, (64, 512, 4096), _LONG))
    kv_gib = cache_bytes_for(MODEL_PRESETS[_ROOF_MODEL], 1, _LONG, "float16") / 2**30
    return (f"每一行都要读它自己的 K/V：{_LONG} 个 token 时每行 {format_answer(kv_gib)} GiB，而权重对所有行只读一次。"
            f"所以每字节的 FLOPs 会趋于平稳：B = 64、512 和 4096 时分别为 {x}，都低于 H100 的脊点 {_H100.ridge:.0f}；"
            "utils.roofline.ridge_batch 在 4096 以内找不到计算受限的批大小。如果上下文只有 1 个 token，"
            f"脊点批大小会是 B = {N.ridge_batch_of(_ROOF_MODEL, 1, _H100.name)}。")


# The bug lab's step-1 bugs: the same words and order as utils.quiz._BUG_OPTIONS.
_BUGS_ZH = {"position": "position：新 token 的位置从 0 重新开始",
            "mask": "mask：解码步的掩码忽略了缓存中的键",
            "axis": "axis：新的 K/V 沿头维（第 1 维）拼接",
            "layer0": "layer0：每一层都拿第 0 层缓存的 K/V 做注意力",
            "refeed": "refeed：在缓存之上又把整段文本重新送入一遍"}
if list(_BUGS_ZH) != list(_BUG_OPTIONS):
    raise ValueError("the Chinese bug options must follow utils.quiz._BUG_OPTIONS, word for word and in order")
_CHECKED_ZH = f"把一个解码引擎与完全重算逐步比较（容差 {TOL:g}），提示词有 T 个 token。第 0 步（预填充）一致。"
_SEVERAL = "预填充是对的，解码出了错；好几种 bug 都会这样，先探查，再下结论"


def _evidence(ev: N.Evidence) -> str:
    """``Evidence.words()`` in Chinese."""
    step = ev.step.rsplit(" ", 1)[1]
    said = f"第 {step} 步抛出异常" if ev.step.startswith("raises") else f"第 {step} 步起偏离"
    parts = [said, f"cache.seq_len 为 {ev.n_cached}（{ev.seq_len}）"]
    if ev.new_key is not None:
        parts += [f"第 0 层新写入的键与完整预填充的{'一致' if ev.new_key == 'matches' else '不同'}",
                  f"第一个出错的输出在第 {ev.first_layer} 层"]
    return "，".join(parts)


def _evidence_lines(words=None) -> str:
    evidence = N.bug_evidence()
    return "；".join(f"{w}：{_evidence(evidence[w])}" for w in (words or evidence))


def _which_bug(observed: str, why: str, **evidence) -> dict:
    """The Chinese of ``utils.quiz._which_bug``: the same evidence picks the same bug."""
    def explain() -> str:
        word = N.suspect(**evidence)
        others = [w for w in _BUGS_ZH if w != word]
        return (f"{why}在 {N.PROMPT_LEN} 个 token 的提示词上实测：{_evidence_lines([word])}。"
                f"其他几个 bug：{_evidence_lines(others)}。")

    return _z(7, "choice", f"{_CHECKED_ZH}{observed}是哪个 bug？", explain, options=tuple(_BUGS_ZH.values()))


def _first_position_why() -> str:
    p = N.first_new_position(12)
    return (f"预填充之后缓存里有 {p} 个位置，编号 0 到 {p - 1}；新 token 的位置等于缓存长度，"
            f"所以 RoPE 按位置 {p} 旋转它。从 0 重新计数是经典错误。")


_HIDDEN_ANSWER = (
    "每一层都用自己的输入和自己的权重算 K 和 V，所以第 0 层的 K/V 对第 1 层来说是错的。缓存每一层的输入（它的隐藏状态）"
    "可以做到正确，而且仍然省掉了历史的 Q、O 和 MLP。但这样每一步都要在每一层为全部 T 个历史位置重新投影 K 和 V，"
    "每步的工作量随 T 增长（在批中随 B·T 增长）。而且在 GQA 下，隐藏状态可能比 K 和 V 更占内存：每个 token 每层 C 个值，"
    f"对比 2·H_kv·d_h 个（Llama-3-8B 中是 {_L3.d_model} 对 {2 * _L3.n_kv_heads * _L3.head_dim}）。没有 GQA 时，它只有 "
    f"K 和 V 的一半大（Llama-2-7B 中是 {_L7B.d_model} 对 {2 * _L7B.n_kv_heads * _L7B.head_dim}）：这时它是拿计算换内存。")

# --- the question bank, in the order of utils.quiz.QUESTIONS ---------------------------------------
ZH: list[dict] = [
    # 00 · tour
    _z(0, "choice", "哪个阶段把整个提示词一次性并行送进模型，并得到第一个新 token 的 logits？",
       "预填充一次处理全部提示词 token（查询是一个矩阵），并填满缓存；之后解码每步只添加一个 token。",
       options=("预填充", "解码", "采样", "分词")),
    _z(0, "truefalse", "在使用 KV 缓存的解码中，每一步只把最新的那个 token 送进模型。",
       "历史已经以 K 和 V 的形式存在缓存里；模型只需要算出新 token 的 q、k、v，再把这个 k 和 v 追加进缓存。"),
    # 01 · attention block
    _z(1, "choice", f"一个模型有 H = {_L3.n_heads} 个查询头、H_kv = {_L3.n_kv_heads} 个键/值头。这是哪种注意力？",
       f"每 {_L3_GROUP} 个查询头共享一个 K/V 头：这是分组查询注意力（GQA）。H_kv = H 是 MHA，H_kv = 1 是 MQA。",
       options=None),
    _z(1, "fill", "多查询注意力（MQA）保留几个键/值头（H_kv）？",
       f"所有查询头共享同一个 K/V 头（ModelConfig 把它报告为 {_MQA_KIND!r}）；缓存只有 MHA 时的 1/H。"),
    _z(1, "truefalse", "预填充并行处理全部提示词 token，所以不需要因果掩码。",
       "在提示词内部，第 t 个 token 仍然不能看到它之后的 token；预填充用的因果掩码和训练时完全一样。"),
    # 02 · prefill
    _z(2, "choice", "KV 缓存为每一层保存哪两个张量？",
       "新的查询需要的只是过去 token 的键和值；每个新 token 的查询都是现算的，从不复用，缓存它只会浪费显存。",
       options=("Q 和 K", "K 和 V", "Q 和 V", "隐藏状态和 logits")),
    _z(2, "fill", f"一个 H = {N.TINY.n_heads}、H_kv = {N.TINY.n_kv_heads}、d_h = {N.TINY.head_dim} 的模型对 B = 2 条"
       "提示词做预填充，每条 T = 7 个 token。第 0 层缓存的 K 是什么形状？（按 [1, 2, 3, 4] 的格式写）",
       "布局是 [B, H_kv, T, d_h]：只存 H_kv 个键/值头，时间在第 2 维（由一次真实的预填充算出）。"),
    _z(2, "choice", "一批提示词做了左填充，要为每一行选出第一个新 token，该用哪个位置的 logits？",
       "左填充让每条提示词的最后一个真实 token 都落在最后一列，所以 logits[:, -1]（[B, V]）对每一行都是对的。",
       options=("第一个位置的 logits", "最后一个位置的 logits（每一行最后一个真实 token）", "所有位置 logits 的平均",
                "<BOS> token 的 logits")),
    # 03 · decode
    _z(3, "truefalse", "有了 KV 缓存，新 token 可以跳过解码器块，它的输出直接从缓存读出。",
       "新 token 仍要经过每一层的注意力和 MLP。缓存省掉的只是重算历史 token 的 K 和 V（以及让历史再过一遍各层）。"),
    _z(3, "fill", "提示词有 12 个 token。第一个新 token 的位置（从 0 开始计）是多少？", _first_position_why),
    _z(3, "truefalse", "在一个解码步中，唯一的新查询会关注每一个缓存的键（它那一行掩码全为 True）。",
       "新 token 是最新的一个，所有缓存的 token 都在它之前：causal_mask(1, 13)（一个查询对 12 个缓存的键加它自己）"
       "全为 True。"),
    _z(3, "choice", "带缓存算出的 logits 应该怎样和完全重算的 logits 比较？",
       "权重、eval 模式、数据类型和位置都相同，结果就只差浮点舍入：求和的顺序不同，所以不要指望逐位相等。"
       "Bug 实验室在 float32 下用的也是这个容差。",
       options=("逐位相等（torch.equal）", f"在容差内比较，例如 max |diff| <= {TOL:g}", "只要 argmax 的 token 一致即可",
                "两者没法比较")),
    _z(3, "choice", "在 float16 下、上下文还很短（字节主要来自权重）时，批大小为 B 的解码步每读一个字节大约做多少 FLOPs？",
       _decode_law_why, options=("约 1/B", "约 1，与 B 无关", "约 B", "约 B²")),
    _z(3, "choice", "为什么几百个 token 的预填充在 GPU 上是计算受限，而 B = 1 的解码步是访存受限？",
       _prefill_vs_decode_why,
       options=(_PREFILL_WHY, "预填充不读权重，只读提示词的嵌入", "解码要读 KV 缓存，而读缓存的字节比读权重的字节慢",
                "预填充跳过了因果掩码，省下了访存流量")),
    # 04 · cache sizing
    _z(4, "fill", f"Llama-2-7B（L = {_L7B.n_layers}，H_kv = {_L7B.n_kv_heads}，d_h = {_L7B.head_dim}），一条 4096 个 token "
       "的序列，float16：KV 缓存占多少 GiB？",
       f"2 × L × B × H_kv × T × d_h × 字节数 = 2 × {_L7B.n_layers} × 1 × {_L7B.n_kv_heads} × 4096 × {_L7B.head_dim} × "
       f"2 字节 = {format_answer(_L7B_GIB)} GiB（kv_cache_bytes）。"),
    _z(4, "fill", f"Llama-3-8B（L = {_L3.n_layers}，H_kv = {_L3.n_kv_heads}，d_h = {_L3.head_dim}），float16："
       "每个新 token 让缓存增加多少 KiB（批大小为 1）？",
       f"2 × {_L3.n_layers} × {_L3.n_kv_heads} × {_L3.head_dim} × 2 字节 = 每个 token {format_answer(_L3_KIB)} KiB"
       "（kv_bytes_per_token）。"),
    _z(4, "fill", f"Llama-3-8B 用 H = {_L3.n_heads}、H_kv = {_L3.n_kv_heads}。同一个模型如果改用 MHA，缓存会是现在的几倍？",
       f"缓存随 H_kv 增长，而不是随 H：H / H_kv = {_L3.n_heads} / {_L3.n_kv_heads} = {_L3_GROUP}。"),
    _z(4, "open", "为什么 KV 缓存能让每个请求更快，却又限制了服务器能同时运行的请求数？",
       "缓存字节数 = 2 × L × B × H_kv × T × d_h × 字节数：给一个请求提速的显存，就装不下另一个请求的缓存。",
       answer="它是用显存换计算。保存每一层的 K 和 V，就不必每一步都重算历史，每个 token 都更快。但这块显存随层数、批大小、"
              "H_kv、序列长度和每个元素的字节数增长，每生成一个 token 就增长一截，而且在请求运行期间一直占着；"
              "GPU 显存被占满，能同时容纳的请求就少了。"),
    # 05 · sampling and stopping
    _z(5, "fill", f"logits 为 {_NUCLEUS_LOGITS}，top_p = 0.8（温度为 1）。保留下来的集合里有几个 token？",
       lambda: "top-p 保留概率最高、累计概率达到 p 的最小 token 集合（用 filtered_probs 算出："
       f"{N.nucleus_size(_NUCLEUS_LOGITS, 0.8)} 个 token）。"),
    _z(5, "truefalse", "从贪心解码换成 top-p 采样，需要重新计算 KV 缓存。",
       "缓存决定 logits 怎么算出来；采样只决定从 logits 中挑哪个。同一份带缓存算出的 logits 可以用任何方式采样。"),
    _z(5, "choice", "像 `cats .` 这样的停止字符串可能跨两个 token。generate 怎样发现它？",
       "token id 看不到被切在两个 token 之间的字符串，解码出的文本却看得到。endswith 检查仍会漏掉在最后一个 token "
       "内部结束的停止字符串（见笔记本 05）；在文本末尾一段里搜索才能抓到它。",
       options=("比较最后一个 token id 和停止字符串的 id", "把新生成的 token 解码成文本，检查文本是否以停止字符串结尾",
                "做不到：停止字符串必须是单个 token", "缓存长度达到字符串的长度时停止")),
    _z(5, "truefalse", "温度为 0 就是贪心解码：总是选概率最大的 token，没有随机性。",
       "温度趋近 0 时，除以它会把全部概率集中到 argmax 上；sample() 在温度为 0 时直接取 argmax。"),
    # 06 · performance metrics
    _z(6, "fill", "一个请求的第一个 token 在 200 ms 后到达；之后的 50 个 token 一共用了 1000 ms。它的 TPOT"
       "（每个输出 token 的时间）是多少 ms？",
       lambda: f"TPOT 只算首 token 之后的解码步：1000 ms / 50 个 token = {format_answer(N.tpot_ms(0.2, 1.0, 50))} ms。"
       "那 200 ms 是 TTFT，单独报告。"),
    _z(6, "choice", "在一个解码步中，KV 缓存省不掉哪部分工作？",
       "缓存省掉的是重新嵌入历史、让历史再过一遍每个块（它的 K/V 投影和 MLP）。新 token 完整的前向计算、它对越来越多的键"
       "做的注意力，以及读缓存的开销都还在，所以上下文越长，解码仍然越慢。",
       options=("重新嵌入历史", "历史的 K 和 V 投影", "让历史再过一遍各个 MLP", "新查询对所有缓存键的注意力")),
    _z(6, "truefalse", "把更多请求合成一批，能提高吞吐量，也可能增加每个请求的延迟。",
       "每步处理更多行，硬件利用得更充分（token/s 上升），但每一步的工作量也更大，所以每个用户等每个 token 的时间可能更长。"),
    _z(6, "open", "为什么只报告总的 token/s，不足以评判一套推理服务的配置？",
       "用户感受到的是延迟（TTFT、TPOT）；运营方要为吞吐量和显存买单。",
       answer="总吞吐量很高，也可能掩盖了每个用户很长的首 token 延迟或很慢的 TPOT（比如批太大或排队太久）；"
              "应当把 TTFT、TPOT、吞吐量和 KV 显存一起报告。"),
    _z(6, "fill", f"{_A100.name} 的峰值算力是 {_A100.peak_flops / 1e12:g} TFLOP/s（bf16，稠密），显存带宽是 "
       f"{_A100.bandwidth / 1e12:g} TB/s。它的脊点是每字节多少 FLOPs？（四舍五入到整数）",
       lambda: f"脊点 = 峰值 FLOP/s / 带宽 = {_A100.peak_flops:.4g} / {_A100.bandwidth:.4g} = {_A100.ridge:.1f} FLOPs/字节"
       f"（来源：{_A100.source}）。一步计算每搬运一个字节做的 FLOPs 如果比它少，就得等内存；批大小为 B 的解码步大约是 B。"),
    _z(6, "truefalse", f"{_ROOF_MODEL}（{MODEL_PRESETS[_ROOF_MODEL].attention_kind}），float16，每行上下文 {_LONG} 个 "
       f"token：在 {_H100.name} 上，只要批足够大，解码步就会变成计算受限。", _long_context_why),
    # 07 · bug lab
    _z(7, "choice", f"预填充之后，带缓存的 logits 与重算一致（差值在 {TOL:g} 以内），但从第一个解码步起就出现偏差。"
       "这说明什么？",
       lambda: "预填充的 logits 是对的；出错的是解码使用缓存的方式。这类 bug 不影响第 0 步，而且在 logits 上看起来都差不多。"
       f"在测验用的小模型上实测：{_evidence_lines()}。缓存长度、第 0 层新写入的键、第一个出错的层能把它们区分开"
       f"（笔记本 07 的谜题）；正确的缓存始终在 {TOL:g} 以内。",
       options=("解码时位置编号从 0 重新计数：这个症状指的就是这个 bug", _SEVERAL,
                f"说明不了什么：单是 float32 的舍入误差就常常超过 {TOL:g}", "两次运行之间 use_cache 改变了权重")),
    _z(7, "truefalse", "设置 use_cache=False 会改变模型的参数。",
       "use_cache 只决定是否保存并复用过去的 K/V；权重不变，logits 在课程的容差"
       f"（{TOL:g}）内一致：差别来自浮点舍入，而不是参数变了。"),
    _z(7, "choice", "束搜索的一步保留了一些束、丢掉了另一些之后，缓存要怎么处理？",
       "每个束的历史就是它父束的历史；不重排的话，一个束会去关注另一个束的过去。",
       options=("什么都不用做：所有束共享同一个缓存", "重排缓存的行，让每个留下来的束拿到它父束的 K/V（cache.reorder）",
                "清空缓存，每一步都重新预填充", "把缓存裁剪到提示词的长度")),
    _z(7, "open", "如果缓存的是每一层的隐藏状态（或第 0 层的 K/V），而不是每一层自己的 K 和 V，会出什么问题？",
       "每一层缓存自己的 K/V，形状 [B, H_kv, T, d_h]：第 0 层的 K/V 代替不了第 1 层的。k_proj 和 v_proj 只占一层权重的"
       "一小部分（笔记本 07 算了这个比例），所以隐藏状态缓存仍能省掉一层在历史上的大部分计算；它的代价一是随 T 增长的"
       "重新投影（单条序列的访存受限步能掩盖其中一部分；批处理则把它乘以 B），二是在 GQA 下的内存。",
       answer=_HIDDEN_ANSWER),
    _which_bug("从第 1 步起 logits 出现偏差，第一个解码步之后 cache.seq_len 是 2T + 1，而不是 T + 1。",
               "把整段文本重新送入，会在第一步追加 T + 1 个位置：历史被缓存了两遍。",
               step="step 1", seq_len="2T + 1"),
    _which_bug("第一个解码步在 cache.update 内部抛出 RuntimeError，而 cache.seq_len 仍然是 T。",
               "沿 dim=1（头维）拼接，只要新 token 的时间长度和缓存的不同就会失败；而 seq_len 是从第 2 维读的，永远不会增长。",
               step="raises at step 1", seq_len="T"),
    _which_bug("第 1 步出现偏差；cache.seq_len 是 T + 1，符合预期，但第 0 层新缓存的键和完整预填充在该位置算出的键不同，"
               "尽管 token 是同一个。",
               "第 0 层的键只取决于 token 和它的位置：token 相同而键不同，说明 RoPE 位置不同。",
               step="step 1", seq_len="T + 1", new_key="differs"),
    _which_bug("第 1 步出现偏差；cache.seq_len 是 T + 1，第 0 层新缓存的键和完整预填充的一致，但第 0 层对新 token 的输出"
               "已经和重算的不同。",
               "第 0 层的键是对的，输出却错了：新查询关注了错误的键，而关注哪些键由它的掩码决定。",
               step="step 1", seq_len="T + 1", new_key="matches", first_layer=0),
    _which_bug("第 1 步出现偏差；cache.seq_len 是 T + 1，第 0 层对新 token 的输出和重算的一致：第一个不同的是第 1 层。",
               "第 0 层对、第 1 层错：第 1 层读到的历史不是它自己的。",
               step="step 1", seq_len="T + 1", first_layer=1),
    # 08 · beyond the basics
    _z(8, "fill", f"为一个 L = {N.TINY.n_layers}、H_kv = {N.TINY.n_kv_heads}、d_h = {N.TINY.head_dim} 的模型分配一个 "
       f"StaticKVCache，B = 1，max_len = {_STATIC_LEN} 个位置，float32。还没写入任何 token 时，它占多少字节？",
       lambda: f"它是预先分配的：2 × {N.TINY.n_layers} × 1 × {N.TINY.n_kv_heads} × {_STATIC_LEN} × {N.TINY.head_dim} × 4 = "
       f"{N.static_bytes(_STATIC_LEN)} 字节，从一开始就占着（StaticKVCache.nbytes），而且永远不会增长。"),
    _z(8, "fill", f"一个滑动窗口缓存保留最近 W = {_WINDOW} 个位置。送入 {_FED} 个 token 之后，每层缓存里有几个位置？",
       lambda: f"较早的键会滑出窗口：min({_FED}, {_WINDOW}) = {N.sliding_window(_WINDOW, _FED)[0]}"
       "（SlidingWindowKVCache.seq_len）。无论文本多长，缓存都只占 W 个位置的内存。"),
    _z(8, "fill", f"同一个滑动窗口缓存（W = {_WINDOW}，目前已送入 {_FED} 个 token）：下一个 token 的 RoPE 位置"
       "（从 0 开始计）是多少？",
       lambda: f"位置按见过的 token 数来算（n_seen = {N.sliding_window(_WINDOW, _FED)[1]}），而不是按存着的位置数"
       f"（{N.sliding_window(_WINDOW, _FED)[0]}）：一旦窗口或驱逐丢掉了旧条目，缓存长度就不再等于位置。"),
    _z(8, "fill", f"W = {_WINDOW} 的滑动窗口注意力：位置 {_QUERY_POS} 上的查询关注哪些位置？（写成“起..止”，例如 3..9）",
       lambda: f"位置 p 上的查询看到 p - W + 1 .. p，包括它自己：{N.window_span(_WINDOW, _QUERY_POS)}（band_mask 中它的"
       f"那一行）。无论文本多长都是 W = {_WINDOW} 个键，这也正是滑动窗口缓存需要保留的全部内容。",
       answer=lambda accepted: tuple(a.replace(" to ", " 到 ") for a in accepted)),
    _z(8, "choice", f"同一个缓存（W = {_WINDOW}，已送入 {_FED} 个 token，窗口已满）再解码一个 token。它关注的键覆盖哪些位置？",
       lambda: f"新 token 的位置是见过的 token 数，{N.next_token_span(_WINDOW, _FED)[0]}。它自己的键进入窗口，最旧的位置 "
       f"{_FED - _WINDOW} 滑出：键覆盖 {N.next_token_span(_WINDOW, _FED)[1]}，仍然是 W = {_WINDOW} 个。缓存的槽位 "
       f"0..{_WINDOW - 1} 只是存储槽，不是 token 的位置。",
       options=None),
    _z(8, "truefalse", "4 个束的束搜索为每个请求保留 4 行 K/V，所以它需要的缓存内存大约是贪心解码的 4 倍。",
       "每个束是批中的一行（在缓存大小公式里 B = 4）；共享的提示词要做额外的簿记（前缀共享）才能只存一份。"),
]
ZH += APPENDIX_ZH  # the appendices' questions, in the order of utils.quiz_appendix.APPENDIX


def _twin(en: Question, z: dict) -> Question:
    """The Chinese question of ``en``: the same notebook, kind, seed flag and answer."""
    options = en.options if z["options"] is None else z["options"]
    if (z["notebook"], z["kind"], len(options)) != (en.notebook, en.kind, len(en.options)):
        raise ValueError(f"the Chinese text {z['prompt']!r} does not match the question {en.prompt!r}")
    given = en.given_answer
    if en.kind == "open":
        answer = z["answer"]
    elif en.kind == "choice":
        answer = (lambda: options[en.options.index(en.answer)]) if callable(given) else options[en.options.index(given)]
    elif z["answer"] is not None:
        answer = lambda: z["answer"](en.answer)  # noqa: E731
    else:
        answer = (lambda: en.answer) if callable(given) else given
    return Question(en.notebook, en.kind, z["prompt"], answer, z["why"], options=options, seed=en.seed)


@cache
def bank() -> list[Question]:
    """The Chinese bank: ``bank()[i]`` is the twin of ``QUESTIONS[i]`` (built once; computes nothing)."""
    if len(ZH) != len(QUESTIONS):
        raise ValueError(f"{len(ZH)} Chinese texts for {len(QUESTIONS)} questions")
    return [_twin(en, z) for en, z in zip(QUESTIONS, ZH)]


@cache
def _position() -> dict[int, int]:
    return {id(q): i for i, q in enumerate(QUESTIONS)}


def translate(q: Question) -> Question:
    """The Chinese twin of a question of the bank; any other question as it is."""
    i = _position().get(id(q))
    return q if i is None or QUESTIONS[i] is not q else bank()[i]


def questions() -> list[Question]:
    """The bank in the current language."""
    return bank() if language() == "zh" else list(QUESTIONS)
