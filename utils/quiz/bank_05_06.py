"""The questions on notebooks 05 and 06 (sampling and stopping, performance metrics), in both languages.

Each is written once, its English and Chinese side by side (``ask``, ``bilingual.py``).

Numbers are computed on first read (``numbers.py``): a nucleus with ``filtered_probs``, a TPOT from a
``GenerationResult``, intensities and ridge points with ``utils.roofline``.
"""
from __future__ import annotations

from ..roofline import GPU_ROOFS
from ..sizing import MODEL_PRESETS, cache_bytes_for
from . import numbers as N
from .bilingual import ask
from .question import Question, format_answer
from .snippet import run_snippet, snippet_text

_NUCLEUS_LOGITS = [2.0, 1.0, 0.5, 0.1, -1.0]
_LONG = 4096  # the context of the long-context roofline question
_A100 = next(r for r in GPU_ROOFS if "A100" in r.name)
_H100 = next(r for r in GPU_ROOFS if "H100" in r.name)


def _nucleus_why() -> dict[str, str]:
    n = N.nucleus_size(_NUCLEUS_LOGITS, 0.8)
    return {"en": "Top-p keeps the smallest set of most likely tokens whose probabilities reach p (computed with "
                  f"filtered_probs: {n} tokens).",
            "zh": f"top-p 保留概率最高、累计概率达到 p 的最小 token 集合（用 filtered_probs 算出：{n} 个 token）。"}


def _tpot_why() -> dict[str, str]:
    ms = format_answer(N.tpot_ms(0.2, 1.0, 50))
    return {"en": f"TPOT counts the decode steps after the first token: 1000 ms / 50 tokens = {ms} ms. The 200 ms "
                  "are the TTFT, reported separately.",
            "zh": f"TPOT 只算第一个 token 之后的解码步：1000 ms / 50 个 token = {ms} ms。那 200 ms 是 TTFT，单独报告。"}


def _long_context_why() -> dict[str, str]:
    x = N.decode_intensities(N.ROOF_MODEL, (64, 512, 4096), _LONG)
    kv_gib = format_answer(cache_bytes_for(MODEL_PRESETS[N.ROOF_MODEL], 1, _LONG, "float16") / 2**30)
    short = N.ridge_batch_of(N.ROOF_MODEL, 1, _H100.name)
    return {"en": f"Every row brings its own K/V to read: {kv_gib} GiB per row at {_LONG} tokens, while the weights "
                  "are read once for all rows. So the FLOPs per byte level off: "
                  f"{', '.join(f'{v:.1f}' for v in x)} at B = 64, 512 and 4096, below the H100's ridge of "
                  f"{_H100.ridge:.0f}; utils.roofline.ridge_batch finds no compute-bound batch up to 4096. With a "
                  f"1-token context it would be B = {short}.",
            "zh": f"每一行都要读它自己的 K/V：{_LONG} 个 token 时每行 {kv_gib} GiB，而权重对所有行只读一次。所以每字节的 "
                  f"FLOPs 会趋于平稳：B = 64、512 和 4096 时分别为 {'、'.join(f'{v:.1f}' for v in x)}，都低于 H100 的"
                  f"脊点 {_H100.ridge:.0f}；utils.roofline.ridge_batch 在 4096 以内找不到计算受限的批大小。如果上下文只有 "
                  f"1 个 token，脊点批大小会是 B = {short}。"}


def _temperature_code():
    import torch
    from utils.sampling import filtered_probs

    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    return [int((filtered_probs(logits, t, top_p=0.9) > 0).sum()) for t in (1.0, 0.5)]


_TEMPERATURE_CODE = snippet_text(_temperature_code)  # the code the question shows


def _temperature_why() -> dict[str, str]:
    import torch

    got = run_snippet(_temperature_code)
    logits = torch.tensor([2.0, 1.0, 0.0, -1.0])
    probs = {t: ", ".join(f"{p:.0%}" for p in torch.softmax(logits / t, -1).tolist()) for t in (1.0, 0.5)}
    return {"en": f"It gives {got}. The temperature divides the logits before top-p cuts: at 1 the probabilities are "
                  f"{probs[1.0]}, and it takes the first {got[0]} to reach 90%; at 0.5 they are {probs[0.5]}, and the first "
                  f"{got[1]} suffice. A "
                  "lower temperature sharpens the distribution, so the nucleus shrinks.",
            "zh": f"结果是 {got}。温度先除 logits，top-p 再截断：温度为 1 时概率是 {probs[1.0]}，要前 {got[0]} 个才能达到 90%；"
                  f"温度为 0.5 时是 {probs[0.5]}，前 {got[1]} 个就够了。温度越低分布越尖，核就越小。"}


SAMPLING_AND_METRICS: list[Question] = [
    # 05 · sampling and stopping
    ask(5, "fill",
        prompt={"en": f"The logits are {_NUCLEUS_LOGITS} and top_p = 0.8 (temperature 1). How many tokens are in the "
                      "kept set?",
                "zh": f"logits 为 {_NUCLEUS_LOGITS}，top_p = 0.8（温度为 1）。保留下来的集合里有几个 token？"},
        answer=lambda: N.nucleus_size(_NUCLEUS_LOGITS, 0.8), unit="tokens",
        why=_nucleus_why),
    ask(5, "truefalse",
        prompt={"en": "Switching from greedy decoding to top-p sampling requires recomputing the KV cache.",
                "zh": "从贪心解码换成 top-p 采样，需要重新计算 KV 缓存。"},
        answer=False,
        why={"en": "Caching decides how the logits are computed; sampling only decides what is picked from them. The "
                   "same cached logits can be sampled any way.",
             "zh": "缓存决定 logits 怎么算出来；采样只决定从 logits 中挑哪个 token。同一份带缓存算出的 logits 可以用任何方式采样。"}),
    ask(5, "choice",
        prompt={"en": "A stop string may span several tokens, or end inside one. How does a serving engine find every "
                      "occurrence, at the token that completes it?",
                "zh": "停止字符串可能跨好几个 token，也可能在某个 token 的中间结束。推理服务引擎怎样在补全它的那个 token 上"
                      "发现每一次出现？"},
        options={"en": ("it compares the last token id with the stop string's id",
                        "it decodes the new tokens to text and checks whether the text ends with the stop string",
                        "it decodes the new tokens to text and searches the text's tail for the stop string",
                        "it cannot: stop strings must be single tokens"),
                 "zh": ("比较最后一个 token id 和停止字符串的 id", "把新生成的 token 解码成文本，检查文本是否以停止字符串结尾",
                        "把新生成的 token 解码成文本，在文本末尾一段里搜索停止字符串", "做不到：停止字符串必须是单个 token")},
        answer=2,
        why={"en": "Token ids cannot see a string that is cut across tokens; the decoded text can. An endswith test, "
                   "the short form the course's generate uses, misses a stop string that ends inside the last token "
                   "(\"ca\" inside \"cats\", notebook 05). A search catches it, and only the tail can hold a new match: "
                   "the text this token added plus len(stop) - 1 characters before it.",
             "zh": "token id 看不到被切在两个 token 之间的字符串，解码出的文本却看得到。endswith 检查（课程的 generate 为了简短用的"
                   "就是它）会漏掉在最后一个 token 内部结束的停止字符串（“cats”里的“ca”，见笔记本 05）。搜索能发现它，"
                   "而新的匹配只可能出现在末尾一段：这个 token 新加的文本，再往前 len(stop) - 1 个字符。"}),
    ask(5, "truefalse",
        prompt={"en": "temperature = 0 means greedy decoding: always the most likely token, no randomness.",
                "zh": "温度为 0 就是贪心解码：总是选概率最大的 token，没有随机性。"},
        answer=True,
        why={"en": "Dividing by a temperature that approaches 0 puts all mass on the argmax; sample() uses argmax "
                   "directly at 0.",
             "zh": "温度趋近 0 时，logits 除以温度会把全部概率集中到 argmax 上；sample() 在温度为 0 时直接取 argmax。"}),
    ask(5, "fill", code=_TEMPERATURE_CODE,
        prompt={"en": "Run this, predict, then check: the same logits and top_p = 0.9, at temperature 1 and at "
                      "temperature 0.5. How many tokens does each keep? (write the two counts, e.g. [4, 4])",
                "zh": "先预测，再检查，最后自己运行：同一组 logits，top_p = 0.9，温度分别取 1 和 0.5。各保留几个 token？"
                      "（写出两个数，例如 [4, 4]）"},
        answer=lambda: str(run_snippet(_temperature_code)),
        why=_temperature_why),
    # 06 · performance metrics
    ask(6, "fill",
        prompt={"en": "A request's first token arrives after 200 ms; the next 50 tokens take 1000 ms in total. What "
                      "is its TPOT (time per output token) in ms?",
                "zh": "请求发出 200 ms 后拿到第一个 token；之后的 50 个 token 一共用了 1000 ms。它的 TPOT"
                      "（每个输出 token 的时间）是多少 ms？"},
        answer=lambda: N.tpot_ms(0.2, 1.0, 50), unit="ms",
        why=_tpot_why),
    ask(6, "choice",
        prompt={"en": "Which work does the KV cache NOT save in a decode step?",
                "zh": "在一个解码步中，KV 缓存省不掉哪部分工作？"},
        options={"en": ("re-embedding the history", "the history's K and V projections",
                        "running the history through the MLPs", "the new query's attention over all cached keys"),
                 "zh": ("重新嵌入历史", "历史的 K 和 V 投影", "让历史再过一遍各个 MLP", "新查询对所有缓存键的注意力")},
        answer=3,
        why={"en": "The cache saves re-embedding the history and re-running it through every block (its K/V "
                   "projections and MLPs). The new token's full forward pass, its attention over ever more keys and "
                   "the cache reads remain, so decode still slows as the context grows.",
             "zh": "缓存省掉的是重新嵌入历史、让历史再过一遍每个块（它的 K/V 投影和 MLP）。新 token 完整的前向计算、它对越来越多的键"
                   "做的注意力，以及读缓存的开销都还在，所以上下文越长，解码仍然越慢。"}),
    ask(6, "truefalse",
        prompt={"en": "Batching more requests together raises throughput and can raise each request's latency.",
                "zh": "把更多请求合成一批，能提高吞吐量，也可能增加每个请求的延迟。"},
        answer=True,
        why={"en": "More rows per step use the hardware better (tokens/s up) but every step does more work, so each "
                   "user may wait longer per token.",
             "zh": "每步处理更多行，硬件利用得更充分（tokens/s 上升），但每一步的工作量也更大，所以每个用户等下一个 token 的时间可能更长。"}),
    ask(6, "open",
        prompt={"en": "Why is reporting only total tokens/s not enough to judge a serving setup?",
                "zh": "为什么只报告总的 tokens/s，不足以评判一套推理服务的配置？"},
        answer={"en": "A high total throughput can hide a long time to first token or a slow TPOT for each user (for "
                      "example because of large batches or queueing); report TTFT, TPOT, throughput and KV memory "
                      "together.",
                "zh": "总吞吐量很高，也可能掩盖了每个用户很长的首 token 延迟或很慢的 TPOT（比如批太大或排队太久）；"
                      "应当把 TTFT、TPOT、吞吐量和 KV 内存一起报告。"},
        why={"en": "Users feel latency (TTFT, TPOT); operators care about throughput and memory.",
             "zh": "用户感受到的是延迟（TTFT、TPOT）；运维关心的是吞吐量和内存。"}),
    ask(6, "fill",
        prompt={"en": f"An {_A100.name} does {_A100.peak_flops / 1e12:g} TFLOP/s (bf16, dense) and reads "
                      f"{_A100.bandwidth / 1e12:g} TB/s from its memory. What is its ridge point in FLOPs per byte? "
                      "(round to a whole number)",
                "zh": f"{_A100.name} 的峰值算力是 {_A100.peak_flops / 1e12:g} TFLOP/s（bf16，稠密），显存带宽是 "
                      f"{_A100.bandwidth / 1e12:g} TB/s。它的脊点是每字节多少 FLOPs？（四舍五入到整数）"},
        answer=round(_A100.ridge), unit="FLOPs/byte",
        why={"en": f"Ridge = peak FLOP/s / bandwidth = {_A100.peak_flops:.4g} / {_A100.bandwidth:.4g} = "
                   f"{_A100.ridge:.1f} FLOPs per byte (source: {_A100.source}). A step that does fewer FLOPs per byte "
                   "it moves waits on memory; a decode step at batch B does about B.",
             "zh": f"脊点 = 峰值 FLOP/s / 带宽 = {_A100.peak_flops:.4g} / {_A100.bandwidth:.4g} = {_A100.ridge:.1f} "
                   f"FLOPs/字节（来源：{_A100.source}）。一步计算每搬运一个字节做的 FLOPs 如果比它少，就得等内存；批大小为 B "
                   "的解码步大约是 B。"}),
    ask(6, "truefalse",
        prompt={"en": f"{N.ROOF_MODEL} ({MODEL_PRESETS[N.ROOF_MODEL].attention_kind}), float16, a context of {_LONG} "
                      f"tokens per row: on an {_H100.name}, a large enough batch makes the decode step compute-bound.",
                "zh": f"{N.ROOF_MODEL}（{MODEL_PRESETS[N.ROOF_MODEL].attention_kind}），float16，每行上下文 {_LONG} 个 "
                      f"token：在 {_H100.name} 上，只要批足够大，解码步就会变成计算受限。"},
        answer=lambda: N.ridge_batch_of(N.ROOF_MODEL, _LONG, _H100.name) is not None,
        why=_long_context_why),
]
