"""The questions on notebooks 00 to 04 (tour, attention block, prefill, decode, cache sizing), in both languages.

Each is written once, its English and Chinese side by side (``ask``, ``bilingual.py``).

Numbers are computed, never typed: sizes with ``utils.sizing``, a shape and a position by a real prefill,
intensities with ``utils.roofline`` (``numbers.py``, on first read: importing this builds no model).
"""
from __future__ import annotations

from functools import cache

from ..config import ModelConfig
from ..recompute import TOL
from ..sizing import kv_bytes_per_token, kv_cache_bytes
from . import numbers as N
from .bilingual import ask
from .question import Question, format_answer
from .snippet import run_snippet, snippet_text

_L7B, _L3 = N.LLAMA2, N.LLAMA3
_L7B_GIB = kv_cache_bytes(_L7B.n_layers, 1, _L7B.n_kv_heads, 4096, _L7B.head_dim, "float16") / 2**30
_L3_KIB = kv_bytes_per_token(_L3, "float16") / 2**10
_L3_GROUP = _L3.n_heads // _L3.n_kv_heads
_ATTENTION_KINDS = ("MHA", "GQA", "MQA")

# The roofline questions: Llama-2-7B in float16 against the published GPU roofs.
_BATCHES, _PREFILL_LEN = (1, 8, 64), 512
_LAWS = {"about 1/B": lambda B: 1 / B, "about 1, whatever B": lambda B: 1.0, "about B": lambda B: float(B),
         "about B²": lambda B: float(B * B)}
_LAWS_ZH = ("约 1/B", "约 1，与 B 无关", "约 B", "约 B²")  # the same laws, in the same order


def _first_position_why() -> dict[str, str]:
    p = N.first_new_position(12)
    return {"en": f"After prefilling 12 tokens the cache holds {p} positions, numbered 0 to {p - 1}. The new token's "
                  f"position is the cache length, so RoPE rotates it as position {p}. Restarting at 0 is a classic bug.",
            "zh": f"预填充之后缓存里有 {p} 个位置，编号 0 到 {p - 1}；新 token 的位置等于缓存长度，"
                  f"所以 RoPE 按位置 {p} 旋转它。从 0 重新计数是典型的 bug。"}


def _decode_law() -> int:
    """The index of the law closest to the measured decode steps."""
    return list(_LAWS).index(N.closest_law(_LAWS, N.ROOF_MODEL, _BATCHES))


def _decode_law_why() -> dict[str, str]:
    got = N.decode_intensities(N.ROOF_MODEL, _BATCHES, 1)
    return {"en": "A decode step reads every weight once (2 bytes in float16) and uses it for one multiply-add "
                  "(2 FLOPs) per row: 2B FLOPs per 2 bytes. utils.roofline.decode_point on "
                  f"{N.ROOF_MODEL} with a 1-token context gives {', '.join(f'{x:.1f}' for x in got)} FLOPs per "
                  f"byte at B = {', '.join(map(str, _BATCHES))}. Reading the K/V cache adds bytes that grow with "
                  "the context, so a long context pulls it lower.",
            "zh": "解码步把每个权重读一次（float16 下 2 字节），对每一行只用它做一次乘加（2 FLOPs）：每 2 字节对应 2B "
                  f"FLOPs。在 {N.ROOF_MODEL} 上、上下文只有 1 个 token 时，utils.roofline.decode_point 给出 B = "
                  f"{'、'.join(map(str, _BATCHES))} 时每字节分别做 {'、'.join(f'{x:.1f}' for x in got)} FLOPs。"
                  "读取 K/V 缓存会带来随上下文增长的字节数，所以上下文一长，这个数会被拉低。"}


_PREFILL_WHY = {"en": "prefill uses each weight it reads for all T prompt tokens (about T FLOPs per byte); decode "
                      "at B = 1 uses it for one token (about 1)",
                "zh": "预填充读到的每个权重都要用于全部 T 个提示词 token（每字节约 T FLOPs）；B = 1 的解码只用于一个 "
                      "token（约 1）"}


@cache
def _prefill_vs_decode_why() -> dict[str, str]:
    """Raises unless the measured prefill lies above every GPU ridge and decode below (the answer holds)."""
    prefill = N.prefill_intensity(N.ROOF_MODEL, _PREFILL_LEN)
    decode = N.decode_intensities(N.ROOF_MODEL, (1,), _PREFILL_LEN)[0]
    ridges = N.gpu_ridges()
    if not (decode < min(ridges.values()) and max(ridges.values()) < prefill):
        raise ValueError(f"prefill {prefill:.0f} and decode {decode:.1f} FLOPs/byte do not straddle the ridges {ridges}")
    listed = {"en": ", ".join(f"{ridge:.0f} ({name})" for name, ridge in ridges.items()),
              "zh": "、".join(f"{ridge:.0f}（{name}）" for name, ridge in ridges.items())}
    return {"en": f"utils.roofline on {N.ROOF_MODEL}, float16: a {_PREFILL_LEN}-token prefill does {prefill:.0f} "
                  f"FLOPs per byte, a decode step at B = 1 {decode:.1f}. A GPU's ridge point, peak FLOP/s over "
                  f"bandwidth, is {listed['en']} FLOPs per byte: prefill lies above it (the arithmetic units are "
                  "the limit), decode far below (it waits on memory).",
            "zh": f"用 utils.roofline 计算 {N.ROOF_MODEL}（float16）：{_PREFILL_LEN} 个 token 的预填充每字节做 "
                  f"{prefill:.0f} FLOPs，B = 1 的解码步只有 {decode:.1f}。GPU 的脊点（峰值 FLOP/s 除以带宽，单位 "
                  f"FLOPs/字节）是 {listed['zh']}：预填充在脊点之上（瓶颈是运算单元），解码远在其下（瓶颈是访存）。"}


def _prefill_above_decode_below() -> int:
    """The index of the option "prefill uses each weight for all T tokens", once the measured points bear it out."""
    _prefill_vs_decode_why()  # raises if the measured points no longer straddle the ridges
    return 0


def _gqa_code():
    import torch
    from utils.attention import repeat_kv

    kv = torch.tensor([10.0, 20.0]).view(1, 2, 1, 1)
    return repeat_kv(kv, 4).flatten().tolist()


_GQA_CODE = snippet_text(_gqa_code)  # the code the question shows


def _decode_code():
    import torch
    from utils import Decoder, ModelConfig, decode_step, prefill

    cfg = ModelConfig(vocab_size=64, n_layers=2, n_heads=4, n_kv_heads=2, d_model=64, d_ff=128, max_seq_len=64)
    model = Decoder(cfg).eval()
    logits, cache = prefill(model, torch.zeros(3, 5, dtype=torch.long))
    for _ in range(4):
        logits = decode_step(model, logits.argmax(-1), cache)
    return list(cache.layer_kv(1)[1].shape)


_DECODE_CODE = snippet_text(_decode_code)  # the code the question shows


def _gqa_why() -> dict[str, str]:
    got = run_snippet(_gqa_code)
    return {"en": f"It gives {got}: query head h reads K/V head h // (H / H_kv) = h // 4, so heads 0 to 3 share K/V "
                  "head 0 and heads 4 to 7 share head 1 (neighbours form a group; the heads are not interleaved). ",
            "zh": f"结果是 {got}：查询头 h 读 h // (H / H_kv) = h // 4 号 K/V 头，所以 0 到 3 号查询头共用 0 号 K/V 头，4 到 7 号"
                  "共用 1 号（相邻的头组成一组，不是交错分配）。缓存只存这 2 个头，扩展发生在读出缓存之后。"}


def _decode_shape_why() -> dict[str, str]:
    got = run_snippet(_decode_code)
    return {"en": f"It gives {got}: [B, H_kv, T, d_h], the value tensor of layer 1 (every layer has its own). Only "
                  "the H_kv = 2 heads are stored, and T is the 5 prompt positions plus one per decode step, 9.",
            "zh": f"结果是 {got}：[B, H_kv, T, d_h]，第 1 层的 V 张量（每一层都有自己的一份）。只存 H_kv = 2 个头；"
                  "T 是 5 个提示词位置，再加上每个解码步一个，共 9 个。"}


BASICS: list[Question] = [
    # 00 · tour
    ask(0, "choice",
        prompt={"en": "Which phase runs the whole prompt through the model in one parallel pass and yields the "
                      "logits of the first new token?",
                "zh": "哪个阶段把整个提示词一次性并行送进模型，并得到第一个新 token 的 logits？"},
        options={"en": ("prefill", "decode", "sampling", "tokenisation"), "zh": ("预填充", "解码", "采样", "分词")},
        answer=0,
        why={"en": "Prefill processes all prompt tokens at once (a matrix of queries) and fills the cache; decode "
                   "then adds one token per step.",
             "zh": "预填充一次处理全部提示词 token（查询是一个矩阵），并把各层的 K/V 写入缓存；之后解码每步只添加一个 token。"}),
    ask(0, "truefalse",
        prompt={"en": "In decode with a KV cache, only the newest token is fed to the model at each step.",
                "zh": "在使用 KV 缓存的解码中，每一步只把最新的那个 token 送进模型。"},
        answer=True,
        why={"en": "The history is already in the cache as K and V; the model only needs the new token's q, k and "
                   "v, and it appends that k and v.",
             "zh": "历史已经以 K 和 V 的形式存在缓存里；模型只需要算出新 token 的 q、k、v，再把这个 k 和 v 追加进缓存。"}),
    # 01 · attention block
    ask(1, "choice",
        prompt={"en": f"A model has H = {_L3.n_heads} query heads and H_kv = {_L3.n_kv_heads} key/value heads. "
                      "What kind of attention is that?",
                "zh": f"一个模型有 H = {_L3.n_heads} 个查询头、H_kv = {_L3.n_kv_heads} 个键/值头。这是哪种注意力？"},
        options={"en": _ATTENTION_KINDS, "zh": _ATTENTION_KINDS},
        answer=_ATTENTION_KINDS.index(_L3.attention_kind),
        why={"en": f"{_L3_GROUP} query heads share each K/V head: grouped-query attention (GQA). H_kv = H is MHA, "
                   "H_kv = 1 is MQA.",
             "zh": f"每 {_L3_GROUP} 个查询头共享一个 K/V 头：这是分组查询注意力（GQA）。H_kv = H 是 MHA，H_kv = 1 是 MQA。"}),
    ask(1, "fill", code=_GQA_CODE,
        prompt={"en": "Run this, predict, then check. A model has H = 8 query heads and H_kv = 2 K/V heads; below, "
                      "K/V head 0 holds the value 10 and head 1 the value 20 (shape [B, H_kv, T, d_h] = [1, 2, 1, 1]). "
                      "repeat_kv gives every query head the K/V head it reads. What does the last line give? (write "
                      "the list)",
                "zh": "先预测，再检查，最后自己运行。模型有 H = 8 个查询头、H_kv = 2 个 K/V 头；下面 0 号 K/V 头的值是 10，1 号是 20"
                      "（形状 [B, H_kv, T, d_h] = [1, 2, 1, 1]）。repeat_kv 给每个查询头配上它要读的 K/V 头。最后一行的结果是什么？"
                      "（写出整个列表）"},
        answer=lambda: str(run_snippet(_gqa_code)),
        why=_gqa_why),
    ask(1, "truefalse",
        prompt={"en": "Prefill processes all prompt tokens in parallel, so it does not need a causal mask.",
                "zh": "预填充并行处理全部提示词 token，所以不需要因果掩码。"},
        answer=False,
        why={"en": "Inside the prompt, token t must still not see tokens after t; the causal mask applies in "
                   "prefill exactly as in training.",
             "zh": "在提示词内部，第 t 个 token 仍然不能看到它之后的 token；预填充用的因果掩码和训练时完全一样。"}),
    # 02 · prefill
    ask(2, "choice", seed=True,
        prompt={"en": "During a decode step, layer 2's attention reads what from the KV cache?",
                "zh": "解码步中，第 2 层的注意力从 KV 缓存里读什么？"},
        options={"en": ("layer 2's own K and V of every earlier token", "layer 2's Q, K and V of every earlier token",
                        "layer 0's K and V, which every layer shares", "the last layer's hidden state of every earlier token"),
                 "zh": ("第 2 层自己存的、之前每个 token 的 K 和 V", "第 2 层存的、之前每个 token 的 Q、K 和 V",
                        "第 0 层的 K 和 V，所有层共用", "之前每个 token 在最后一层的隐藏状态")},
        answer=0,
        why={"en": "The cache keeps K and V, per layer: each layer computes them from its own input with its own "
                   "weights, so layer 0's cannot stand in for layer 2's. Queries are computed fresh for each new token "
                   "and never reused, so caching them would only waste memory.",
             "zh": "缓存按层保存 K 和 V：每一层都用自己的输入和自己的权重算出它们，所以第 0 层的 K/V 代替不了第 2 层的。"
                   "每个新 token 的查询都是现算的，从不复用，缓存它只会浪费显存。"}),
    ask(2, "fill",
        prompt={"en": f"A model with H = {N.TINY.n_heads}, H_kv = {N.TINY.n_kv_heads}, d_h = {N.TINY.head_dim} "
                      "prefills B = 2 prompts of T = 7 tokens. What is the shape of layer 0's cached K? "
                      "(write it like [1, 2, 3, 4])",
                "zh": f"一个 H = {N.TINY.n_heads}、H_kv = {N.TINY.n_kv_heads}、d_h = {N.TINY.head_dim} 的模型对 "
                      "B = 2 条提示词做预填充，每条 T = 7 个 token。第 0 层缓存的 K 是什么形状？（按 [1, 2, 3, 4] 的格式写）"},
        answer=lambda: (N.prefill_k_shape(2, 7),),
        why={"en": "Layout [B, H_kv, T, d_h]: only the H_kv key/value heads are stored, time on dim 2 (computed by "
                   "a real prefill).",
             "zh": "布局是 [B, H_kv, T, d_h]：只存 H_kv 个键/值头，时间在第 2 维（由一次真实的预填充算出）。"}),
    ask(2, "choice",
        prompt={"en": "With left-padded prompts in a batch, which logits pick each row's first new token?",
                "zh": "一批提示词做了左填充，要为每一行选出第一个新 token，该用哪个位置的 logits？"},
        options={"en": ("the first position", "the last position (every row's last real token)",
                        "the mean over all positions", "the logits of the <BOS> token"),
                 "zh": ("第一个位置的 logits", "最后一个位置的 logits（每一行最后一个真实 token）", "所有位置 logits 的平均",
                        "<BOS> token 的 logits")},
        answer=1,
        why={"en": "Left padding puts every prompt's last real token in the last column, so logits[:, -1] ([B, V]) "
                   "is right for every row.",
             "zh": "左填充让每条提示词的最后一个真实 token 都落在最后一列，所以 logits[:, -1]（[B, V]）对每一行都是对的。"}),
    # 03 · decode
    ask(3, "truefalse", seed=True,
        prompt={"en": "With a KV cache, the new token skips the decoder blocks: its output is read from the cache.",
                "zh": "有了 KV 缓存，新 token 可以跳过解码器块，它的输出直接从缓存读出。"},
        answer=False,
        why={"en": "The new token still goes through every layer (attention and MLP). The cache only saves "
                   "recomputing the history's K and V (and running the history through the layers again).",
             "zh": "新 token 仍要经过每一层的注意力和 MLP。缓存省掉的只是重算历史 token 的 K 和 V（以及让历史再过一遍各层）。"}),
    ask(3, "fill", seed=True,
        prompt={"en": "A prompt has 12 tokens. What is the zero-based position of the first new token?",
                "zh": "提示词有 12 个 token。第一个新 token 的位置（从 0 开始计）是多少？"},
        answer=lambda: N.first_new_position(12),
        why=_first_position_why),
    ask(3, "truefalse",
        prompt={"en": "In a decode step the single new query attends to every cached key (its mask row is all True).",
                "zh": "在一个解码步中，新 token 的那一个查询会关注缓存里的每一个键（它那一行掩码全为 True）。"},
        answer=N.decode_row_all_true,
        why={"en": "The new token is the latest one, so every cached token lies in its past: causal_mask(1, 13), "
                   "one query over 12 cached keys + itself, is all True.",
             "zh": "新 token 是序列里最新的一个，缓存里的 token 都在它之前：causal_mask(1, 13)（一个查询，对 12 个缓存的键加上它"
                   "自己的键）全为 True。"}),
    ask(3, "fill", code=_DECODE_CODE,
        prompt={"en": "Run this, predict, then check: B = 3 prompts of 5 tokens are prefilled, then decoded for 4 steps "
                      "(H = 4, H_kv = 2, d_h = 16). What shape does the last line give? (write it like [1, 2, 3, 4])",
                "zh": "先预测，再检查，最后自己运行：B = 3 条 5 个 token 的提示词做完预填充，再解码 4 步"
                      "（H = 4，H_kv = 2，d_h = 16）。最后一行给出什么形状？（按 [1, 2, 3, 4] 的格式写）"},
        answer=lambda: str(run_snippet(_decode_code)),
        why=_decode_shape_why),
    ask(3, "choice",
        prompt={"en": "How should cached logits be compared with full-recompute logits?",
                "zh": "带缓存算出的 logits 应该怎样和完全重算的 logits 比较？"},
        options={"en": ("bit for bit (torch.equal)", f"with a tolerance, e.g. max |diff| <= {TOL:g}",
                        "only the argmax token must match", "they cannot be compared"),
                 "zh": ("逐位相等（torch.equal）", f"在容差内比较，例如 max |diff| <= {TOL:g}", "只要 argmax 的 token 一致即可",
                        "两者没法比较")},
        answer=1,
        why={"en": "Same weights, eval mode, dtype and positions give the same result up to float rounding: the "
                   "sums run in a different order, so bit-for-bit equality is not expected. The bug lab uses this "
                   "tolerance too, in float32.",
             "zh": "权重、评估模式、数据类型和位置都相同，结果就只差浮点舍入：求和的顺序不同，所以不要指望逐位相等。"
                   "Bug 实验室在 float32 下用的也是这个容差。"}),
    ask(3, "choice",
        prompt={"en": "In float16, about how many FLOPs does a decode step of batch size B do per byte it reads, "
                      "while the context is short (the weights are most of the bytes)?",
                "zh": "在 float16 下、上下文还很短（字节主要来自权重）时，批大小为 B 的解码步每读一个字节大约做多少 FLOPs？"},
        options={"en": tuple(_LAWS), "zh": _LAWS_ZH},
        answer=_decode_law,
        why=_decode_law_why),
    ask(3, "choice",
        prompt={"en": "Why is a prefill of a few hundred tokens compute-bound on a GPU, while a decode step at "
                      "B = 1 is bandwidth-bound?",
                "zh": "为什么几百个 token 的预填充在 GPU 上是计算受限，而 B = 1 的解码步是访存受限？"},
        options={"en": (_PREFILL_WHY["en"], "prefill reads no weights, only the prompt's embeddings",
                        "decode reads the KV cache, and cache bytes are slower to read than weight bytes",
                        "prefill skips the causal mask, which saves memory traffic"),
                 "zh": (_PREFILL_WHY["zh"], "预填充不读权重，只读提示词的嵌入", "解码要读 KV 缓存，而读缓存的字节比读权重的字节慢",
                        "预填充跳过了因果掩码，省下了访存流量")},
        answer=_prefill_above_decode_below,
        why=_prefill_vs_decode_why),
    # 04 · cache sizing
    ask(4, "fill",
        prompt={"en": f"Llama-2-7B (L = {_L7B.n_layers}, H_kv = {_L7B.n_kv_heads}, d_h = {_L7B.head_dim}), one "
                      "sequence of 4096 tokens, float16: how many GiB does the KV cache take?",
                "zh": f"Llama-2-7B（L = {_L7B.n_layers}，H_kv = {_L7B.n_kv_heads}，d_h = {_L7B.head_dim}），一条 "
                      "4096 个 token 的序列，float16：KV 缓存占多少 GiB？"},
        answer=_L7B_GIB, unit="GiB",
        why={"en": f"2 x L x B x H_kv x T x d_h x bytes = 2 x {_L7B.n_layers} x 1 x {_L7B.n_kv_heads} x 4096 x "
                   f"{_L7B.head_dim} x 2 bytes = {format_answer(_L7B_GIB)} GiB (kv_cache_bytes).",
             "zh": f"2 × L × B × H_kv × T × d_h × 字节数 = 2 × {_L7B.n_layers} × 1 × {_L7B.n_kv_heads} × 4096 × "
                   f"{_L7B.head_dim} × 2 字节 = {format_answer(_L7B_GIB)} GiB（kv_cache_bytes）。"}),
    ask(4, "fill",
        prompt={"en": f"Llama-3-8B (L = {_L3.n_layers}, H_kv = {_L3.n_kv_heads}, d_h = {_L3.head_dim}), float16: "
                      "how many KiB of cache does each new token add (batch of one)?",
                "zh": f"Llama-3-8B（L = {_L3.n_layers}，H_kv = {_L3.n_kv_heads}，d_h = {_L3.head_dim}），float16："
                      "每个新 token 让缓存增加多少 KiB（批大小为 1）？"},
        answer=_L3_KIB, unit="KiB",
        why={"en": f"2 x {_L3.n_layers} x {_L3.n_kv_heads} x {_L3.head_dim} x 2 bytes = {format_answer(_L3_KIB)} KiB "
                   "per token (kv_bytes_per_token).",
             "zh": f"2 × {_L3.n_layers} × {_L3.n_kv_heads} × {_L3.head_dim} × 2 字节 = 每个 token "
                   f"{format_answer(_L3_KIB)} KiB（kv_bytes_per_token）。"}),
    ask(4, "fill",
        prompt={"en": f"Llama-3-8B uses H = {_L3.n_heads} and H_kv = {_L3.n_kv_heads}. How many times smaller is "
                      "its cache than the same model with MHA?",
                "zh": f"Llama-3-8B 用 H = {_L3.n_heads}、H_kv = {_L3.n_kv_heads}。同一个模型如果改用 MHA，缓存会是现在的几倍？"},
        answer=_L3_GROUP, unit="times",
        why={"en": f"The cache grows with H_kv, not H: H / H_kv = {_L3.n_heads} / {_L3.n_kv_heads} = {_L3_GROUP}.",
             "zh": f"缓存随 H_kv 增长，而不是随 H：H / H_kv = {_L3.n_heads} / {_L3.n_kv_heads} = {_L3_GROUP}。"}),
    ask(4, "open", seed=True,
        prompt={"en": "Why can the KV cache make each request faster yet limit how many requests a server runs at "
                      "once?",
                "zh": "为什么 KV 缓存能让每个请求更快，却又限制了服务器能同时运行的请求数？"},
        answer={"en": "It trades memory for compute: storing every layer's K and V avoids recomputing the history "
                      "at each step (faster per token), but that memory grows with layers, batch, H_kv, sequence "
                      "length and bytes per element, grows with every generated token and stays allocated while the "
                      "request runs, so GPU memory fills up and fewer requests fit at the same time.",
                "zh": "它是用显存换计算。保存每一层的 K 和 V，就不必每一步都重算历史，每个 token 都算得更快。但这块显存随层数、批大小、"
                      "H_kv、序列长度和每个元素的字节数增长，每生成一个 token 就增长一截，而且在请求运行期间一直占着；"
                      "GPU 显存被占满，能同时容纳的请求就少了。"},
        why={"en": "Cache bytes = 2 x L x B x H_kv x T x d_h x bytes: what speeds one request up is memory that "
                   "another request cannot use.",
             "zh": "缓存字节数 = 2 × L × B × H_kv × T × d_h × 字节数：给一个请求提速的显存，就装不下另一个请求的缓存。"}),
]
