"""The numbers the lessons quote, each computed from the package or read from a notebook's outputs.

A lesson writes a quoted number as ``<span data-fact="NAME">VALUE</span>``; tests/test_lessons.py
recomputes ``FACTS[NAME](lang)`` and checks that VALUE is exactly that text. Any number of four or
more digits in a lesson's prose must be such a span, so no computed number is typed by hand.
Add a fact here when a lesson needs a new one: a name and a function of the language returning the text.

Facts have a language. A lesson in ``lessons/en`` quotes the English notebook (``notebooks/``), a lesson in
``lessons/zh`` its Chinese twin (``notebooks/zh/``): each ran on its own, so its timings are its own, and its
words are Chinese where the twin prints Chinese ("第 1 步（位置 10）", "访存受限"). So a fact read from a
notebook carries two patterns, ``from_notebook(notebook, pattern, zh=zh_pattern)``, one per language (a lesson
may only quote a fact that has a pattern for its language); a fact computed from the package,
``in_both(lambda: ...)``, is the same in both languages.

    python tools/lesson_facts.py              # prints every fact and its value in English
    python tools/lesson_facts.py --lang zh    # the same for the Chinese twins
    python tools/lesson_facts.py --update     # rewrites every fact span in lessons/<lang>/ from that language
    python tools/lesson_facts.py --update --only 03,05   # the same, for lessons 03 and 05 only

``make notebooks`` runs ``--update`` after re-executing the notebooks, so timings a lesson quotes
from a notebook follow the new run instead of going stale.
"""
from __future__ import annotations

import json
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from utils.sizing import MODEL_PRESETS, cache_bytes_for, kv_bytes_per_token, max_concurrent_requests  # noqa: E402

LANGS = ("en", "zh")
NOTEBOOK_DIRS = {"en": ROOT / "notebooks", "zh": ROOT / "notebooks" / "zh"}


@lru_cache(maxsize=None)
def notebook_text(notebook: str, lang: str = "en") -> str:
    """All text outputs of a committed notebook in one language, joined (what a reader of the notebook sees)."""
    nb = json.loads((NOTEBOOK_DIRS[lang] / notebook).read_text(encoding="utf-8"))
    parts = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            text = out.get("text") or out.get("data", {}).get("text/plain") or ""
            parts.append(text if isinstance(text, str) else "".join(text))
    return "\n".join(parts)


class NotebookFact:
    """A fact read from a notebook's committed outputs: the first group of the pattern of the reader's language.

    ``patterns`` maps a language to its regular expression; the English one matches ``notebooks/NOTEBOOK``,
    the Chinese one ``notebooks/zh/NOTEBOOK``."""

    def __init__(self, notebook: str, patterns: dict[str, str]):
        self.notebook = notebook
        self.patterns = {lang: p for lang, p in patterns.items() if p is not None}

    def __call__(self, lang: str = "en") -> str:
        if lang not in self.patterns:
            raise LookupError(f"{self.notebook}: no {lang} pattern for this fact (give from_notebook a {lang}= pattern)")
        m = re.search(self.patterns[lang], notebook_text(self.notebook, lang))
        if not m:
            raise LookupError(f"{lang}/{self.notebook}: no output matches {self.patterns[lang]!r}")
        return m.group(1)


def from_notebook(notebook: str, pattern: str, zh: str | None = None) -> NotebookFact:
    """A fact read from a notebook's outputs: ``pattern`` in the English notebook, ``zh`` in its Chinese twin."""
    return NotebookFact(notebook, {"en": pattern, "zh": zh})


def in_both(fn: Callable[[], str]) -> Callable[[str], str]:
    """A fact computed from the package: the same text whatever the language of the lesson."""
    return lambda lang="en": fn()


def derived(fn: Callable[[str], str]) -> Callable[[str], str]:
    """A fact computed from other facts of the same language (``fn(lang)``)."""
    return fn


def table_cell(notebook: str, rows: dict[str, tuple[str, str]], cells: list[str], i: int, end: str = "") -> NotebookFact:
    """Column ``i`` of one row of a printed table. ``rows`` maps a language to (header, row): ``header`` matches
    the table's header line, ``row`` the start of the row below it; ``cells`` are the patterns of the row's
    cells after ``row``, and ``end`` what follows the last one."""
    body = r"\s+" + r"\s+".join(f"({p})" if j == i else f"(?:{p})" for j, p in enumerate(cells)) + end
    patterns = {lang: header + r".*\n(?:.*\n)*?\s*" + row + body for lang, (header, row) in rows.items()}
    return from_notebook(notebook, patterns["en"], zh=patterns.get("zh"))


def _per_token(name: str, dtype: str = "float16") -> Callable[[str], str]:
    return in_both(lambda: f"{kv_bytes_per_token(MODEL_PRESETS[name], dtype):,}")


def _per_token_kib(name: str, dtype: str = "float16") -> Callable[[str], str]:
    return in_both(lambda: f"{kv_bytes_per_token(MODEL_PRESETS[name], dtype) / 1024:g}")


def _context_gib(name: str, T: int, dtype: str = "float16") -> Callable[[str], str]:
    return in_both(lambda: f"{cache_bytes_for(MODEL_PRESETS[name], 1, T, dtype) / 2**30:.1f}")


def _nucleus_example(temperature: float, what: str) -> Callable[[str], str]:
    """Lesson 05's worked example: top-p = 0.8 on the logits [1.5, 1.0, 0.0, -1.0] at one temperature.
    ``what``: "probs" (softmax of logits / T), "cumsum" (their running total), "kept" (the renormalised
    kept set, what ``sample`` draws from), "n_kept", or "kept_filter_first" (the other order: top-p on the
    raw logits, then the temperature)."""
    def read() -> str:
        import torch
        from utils.sampling import filtered_probs, top_p_filter
        logits = torch.tensor([[1.5, 1.0, 0.0, -1.0]])  # (1, V), already sorted
        probs = torch.softmax(logits / temperature, dim=-1)[0]  # (V,)
        kept = filtered_probs(logits, temperature, top_p=0.8)[0]  # (V,)
        if what == "n_kept":
            return str(int((kept > 0).sum()))
        if what == "kept_filter_first":
            kept = torch.softmax(top_p_filter(logits, 0.8) / temperature, dim=-1)[0]  # (V,)
        values = {"probs": probs, "cumsum": probs.cumsum(0), "kept": kept[kept > 0],
                  "kept_filter_first": kept[kept > 0]}[what]
        return ", ".join(f"{float(x):.2f}" for x in values)
    return in_both(read)


FACTS: dict[str, Callable[[str], str]] = {
    "llama2_7b_per_token_bytes": _per_token("Llama-2-7B"),
    "llama3_8b_per_token_bytes": _per_token("Llama-3-8B"),
    "llama2_7b_per_token_kib": _per_token_kib("Llama-2-7B"),
    "llama3_8b_per_token_kib": _per_token_kib("Llama-3-8B"),
    "llama2_7b_4k_gib": _context_gib("Llama-2-7B", 4096),
    "llama3_8b_8k_gib": _context_gib("Llama-3-8B", 8192),
    # --- 00 ---
    "nb00_course_model": from_notebook("00_tour.ipynb", r"course model: (L=\d+ layers, C=\d+, H=\d+ query heads, "
                                                        r"H_kv=\d+ K/V heads, d_h=\d+, V=\d+ tokens)",
                                       zh=r"课程模型：(L=\d+ 层，C=\d+，H=\d+ 个查询头，H_kv=\d+ 个 K/V 头，d_h=\d+，V=\d+ 个 token)"),
    "nb00_params": from_notebook("00_tour.ipynb", r"([\d,]+) parameters", zh=r"共 ([\d,]+) 个参数"),
    "nb00_prefill_ms": from_notebook("00_tour.ipynb", r"TTFT \(setup\+prefill\+pick\)\s+-> \S+\s*: ([\d.]+) ms",
                                     zh=r"TTFT（准备\+预填充\+选词）\s+-> \S+\s*：([\d.]+) ms"),
    "nb00_decode1_ms": from_notebook("00_tour.ipynb", r"decode step\s+-> \.\s*: ([\d.]+) ms", zh=r"解码步\s+-> 。\s*：([\d.]+) ms"),
    "nb00_decode2_ms": from_notebook("00_tour.ipynb", r"decode step\s+-> <EOS>\s*: ([\d.]+) ms", zh=r"解码步\s+-> <EOS>\s*：([\d.]+) ms"),
    "nb00_prefill_over_decode": from_notebook("00_tour.ipynb", r"TTFT / TPOT: ([\d.]+)x the time",
                                              zh=r"TTFT / TPOT：时间是 ([\d.]+) 倍"),
    "nb00_cats_p": from_notebook("00_tour.ipynb", r"token\s+model\s+grammar\n\S+\s+([\d.]+)",
                                 zh=r"token\s+模型\s+语法\n\S+\s+([\d.]+)"),
    "nb00_cats_grammar_p": from_notebook("00_tour.ipynb", r"token\s+model\s+grammar\n\S+\s+[\d.]+\s+([\d.]+)",
                                         zh=r"token\s+模型\s+语法\n\S+\s+[\d.]+\s+([\d.]+)"),
    "nb00_bare_prefill_ms": from_notebook("00_tour.ipynb", r"prefill, T = 3\s+([\d.]+) ms", zh=r"预填充，T = 3\s+([\d.]+) ms"),
    "nb00_bare_prefill30_ms": from_notebook("00_tour.ipynb", r"prefill, T = 30\s+([\d.]+) ms", zh=r"预填充，T = 30\s+([\d.]+) ms"),
    "nb00_pass_ratio": from_notebook("00_tour.ipynb", r"10x the tokens, ([\d.]+)x the time",
                                     zh=r"token 数是 10 倍，时间是 ([\d.]+) 倍"),
    "nb00_weight_mb": from_notebook("00_tour.ipynb", r"parameters, ([\d.]+) MB of weights", zh=r"权重共 ([\d.]+) MB"),
    "nb00_pushed_cached": from_notebook("00_tour.ipynb", r"with the cache (\d+(?: \+ \d+)* = \d+), without",
                                        zh=r"用缓存 (\d+(?: \+ \d+)* = \d+)，不用缓存"),
    "nb00_pushed_recomputed": from_notebook("00_tour.ipynb", r"without (\d+(?: \+ \d+)* = \d+)\n",
                                            zh=r"不用缓存 (\d+(?: \+ \d+)* = \d+)\n"),
    "nb00_fixed_share": from_notebook("00_tour.ipynb", r"ms per pass whatever T, (\d+%) of the 3-token pass",
                                      zh=r"与 T 无关，占 3 个 token 那次的 (\d+%)"),
    "nb00_flat_speedup": from_notebook("00_tour.ipynb", r"modules / flat, per round: median ([\d.]+)x",
                                       zh=r"逐模块 / 扁平写法，逐轮之比：中位数 ([\d.]+) 倍"),
    "nb00_flat_saved_share": from_notebook("00_tour.ipynb", r"saved by the flat step: (\d+%) of the step",
                                           zh=r"扁平写法省下：逐模块那一步的 (\d+%)"),
    "nb00_ops_modules": from_notebook("00_tour.ipynb", r"tensor operations in one decode step: modules (\d+)",
                                      zh=r"一个解码步的张量运算次数：逐模块 (\d+)"),
    "nb00_ops_flat": from_notebook("00_tour.ipynb", r"tensor operations in one decode step: modules \d+, flat (\d+)",
                                   zh=r"一个解码步的张量运算次数：逐模块 \d+，扁平写法 (\d+)"),
    # --- 01 ---
    "nb01_std_qk_d128": from_notebook("01_attention_block.ipynb", r"d_h = 128: std of q·k =\s+([\d.]+)",
                                      zh=r"d_h = 128：q·k 的标准差 =\s+([\d.]+)"),
    "nb01_std_scaled_d128": from_notebook("01_attention_block.ipynb", r"d_h = 128: .*?std of q·k / √d_h = ([\d.]+)",
                                          zh=r"d_h = 128：.*?q·k / √d_h 的标准差 = ([\d.]+)"),
    "nb01_rope_score_dist3": from_notebook("01_attention_block.ipynb", r"query at 30, key at 27 \(distance 3\): q·k = ([+-][\d.]+)",
                                           zh=r"查询在 30，键在 27（距离 3）：q·k = ([+-][\d.]+)"),
    "nb01_rope_score_dist0": from_notebook("01_attention_block.ipynb", r"query at 21, key at 21 \(distance 0\): q·k = ([+-][\d.]+)",
                                           zh=r"查询在 21，键在 21（距离 0）：q·k = ([+-][\d.]+)"),
    "nb01_rope_score_dist5": from_notebook("01_attention_block.ipynb", r"query at 10, key at  5 \(distance 5\): q·k = ([+-][\d.]+)",
                                           zh=r"查询在 10，键在  5（距离 5）：q·k = ([+-][\d.]+)"),
    "nb01_course_model_shape": from_notebook("01_attention_block.ipynb",
                                             r"course model: (L=\d+, C=\d+, H=\d+, H_kv=\d+ \(\w+\), d_h=\d+)",
                                             zh=r"课程模型：(L=\d+，C=\d+，H=\d+，H_kv=\d+（\w+），d_h=\d+)"),
    "nb01_sat_ln_keys": from_notebook("01_attention_block.ipynb", r"entropy ln \d+ = ([\d.]+) nats", zh=r"熵 ln \d+ = ([\d.]+) nats?"),
    "nb01_sat_raw_max_8": from_notebook("01_attention_block.ipynb", r"d_h =   8: largest weight [\d.]+ scaled, ([\d.]+) unscaled",
                                        zh=r"d_h =   8：.*?不缩放时最大权重 ([\d.]+)"),
    "nb01_sat_raw_max_512": from_notebook("01_attention_block.ipynb", r"d_h = 512: largest weight [\d.]+ scaled, ([\d.]+) unscaled",
                                          zh=r"d_h = 512：.*?不缩放时最大权重 ([\d.]+)"),
    "nb01_sat_raw_entropy_8": from_notebook("01_attention_block.ipynb", r"d_h =   8: .*?scaled, ([\d.]+) unscaled \(nats\)",
                                            zh=r"d_h =   8：.*?不缩放时最大权重 [\d.]+，熵 ([\d.]+)"),
    "nb01_sat_raw_entropy_512": from_notebook("01_attention_block.ipynb", r"d_h = 512: .*?scaled, ([\d.]+) unscaled \(nats\)",
                                              zh=r"d_h = 512：.*?不缩放时最大权重 [\d.]+，熵 ([\d.]+)"),
    "nb01_sat_scaled_max_low": from_notebook("01_attention_block.ipynb", r"scaled: the largest weight stays between ([\d.]+) and",
                                             zh=r"最大权重都在 ([\d.]+) 到"),
    "nb01_sat_scaled_max_high": from_notebook("01_attention_block.ipynb", r"scaled: the largest weight stays between [\d.]+ and ([\d.]+)",
                                              zh=r"最大权重都在 [\d.]+ 到 ([\d.]+)"),
    "nb01_sat_scaled_entropy_low": from_notebook("01_attention_block.ipynb", r"scaled: the entropy stays between ([\d.]+) and",
                                                 zh=r"熵都在 ([\d.]+) 到"),
    "nb01_sat_scaled_entropy_high": from_notebook("01_attention_block.ipynb", r"scaled: the entropy stays between [\d.]+ and ([\d.]+)",
                                                  zh=r"熵都在 [\d.]+ 到 ([\d.]+)"),
    "nb01_rope_base": from_notebook("01_attention_block.ipynb", r"course model: d_h = \d+, base = (\d+):",
                                    zh=r"课程模型：d_h = \d+，base = (\d+)："),
    "nb01_rope_deg_pair0": from_notebook("01_attention_block.ipynb", r"\n\s+0\s+\(0, \d+\)\s+\S+\s+([\d.]+)",
                                         zh=r"\n\s+0\s+\(0, \d+\)\s+\S+\s+([\d.]+)"),
    "nb01_rope_turn_pair0": from_notebook("01_attention_block.ipynb", r"\n\s+0\s+\(0, \d+\)\s+\S+\s+[\d.]+\s+([\d.,]+) positions",
                                          zh=r"\n\s+0\s+\(0, \d+\)\s+\S+\s+[\d.]+\s+([\d.,]+) 个位置"),
    "nb01_rope_deg_last": from_notebook("01_attention_block.ipynb", r"\n\s+15\s+\(15, \d+\)\s+\S+\s+([\d.]+)",
                                        zh=r"\n\s+15\s+\(15, \d+\)\s+\S+\s+([\d.]+)"),
    "nb01_rope_turn_last": from_notebook("01_attention_block.ipynb", r"\n\s+15\s+\(15, \d+\)\s+\S+\s+[\d.]+\s+([\d.,]+) positions",
                                         zh=r"\n\s+15\s+\(15, \d+\)\s+\S+\s+[\d.]+\s+([\d.,]+) 个位置"),
    "nb01_rope_ctx_deg_last": from_notebook("01_attention_block.ipynb", r"positions\): pair \d+ turns ([\d.]+)°",
                                            zh=r"个位置）内：第 \d+ 对共转 ([\d.]+)°"),
    "nb01_rope_ctx_deg_slow4": from_notebook("01_attention_block.ipynb", r"pairs \d+-\d+ at most ([\d.]+)°",
                                             zh=r"对最多转 ([\d.]+)°"),
    "nb01_adjacent_std": from_notebook("01_attention_block.ipynb", r"layer 0 scores as trained: std ([\d.]+)",
                                       zh=r"按训练时布局的第 0 层得分：标准差 ([\d.]+)"),
    "nb01_score_std_random": from_notebook("01_attention_block.ipynb", r"std of the scaled scores: section 5's random heads ([\d.]+)",
                                           zh=r"缩放后得分的标准差：第 5 节的随机头 ([\d.]+)"),
    "nb01_score_std_trained": from_notebook("01_attention_block.ipynb", r"std of the scaled scores: .*?the trained layer 0 ([\d.]+)",
                                            zh=r"训练过的第 0 层 ([\d.]+)"),
    "nb01_adjacent_max_gap": from_notebook("01_attention_block.ipynb", r"adjacent pairs, same weights: max \|Δscore\| = ([\d.]+)",
                                           zh=r"相邻配对，同一套权重：最大 \|Δ得分\| = ([\d.]+)"),
    "nb01_adjacent_mean_gap": from_notebook("01_attention_block.ipynb", r"adjacent pairs, same weights: .*?mean \|Δscore\| = ([\d.]+)",
                                            zh=r"相邻配对，同一套权重：.*?平均 \|Δ得分\| = ([\d.]+)"),
    "nb01_port_same": from_notebook("01_attention_block.ipynb", r"the wrong port writes the trained model's text for (\d+) of \d+",
                                    zh=r"错误移植的模型在 \d+ 个提示词中有 (\d+) 个写出了与原模型相同的文本"),
    "nb01_port_prompts": from_notebook("01_attention_block.ipynb", r"the wrong port writes the trained model's text for \d+ of (\d+)",
                                       zh=r"错误移植的模型在 (\d+) 个提示词中有 \d+ 个写出了与原模型相同的文本"),
    "nb01_ported_gap": from_notebook("01_attention_block.ipynb", r"after the permutation: max \|Δscore\| = ([\d.e+-]+)",
                                     zh=r"重排之后：最大 \|Δ得分\| = ([\d.e+-]+)"),
    "nb01_adjacent_diag_gap": from_notebook("01_attention_block.ipynb", r"at the same position \(m = n\): max \|Δscore\| = ([\d.e+-]+)",
                                            zh=r"在同一位置（m = n）：最大 \|Δ得分\| = ([\d.e+-]+)"),
    "nb01_gradq_scaled_p10": from_notebook("01_attention_block.ipynb", r"\n\s+scaled: p10 ([\d.e+-]+),",
                                           zh=r"\n\s+缩放：p10 ([\d.e+-]+)，"),
    "nb01_gradq_scaled_p90": from_notebook("01_attention_block.ipynb", r"\n\s+scaled: p10 \S+, median \S+, p90 ([\d.e+-]+),",
                                           zh=r"\n\s+缩放：p10 \S+，中位数 \S+，p90 ([\d.e+-]+)，"),
    "nb01_gradq_raw_p10": from_notebook("01_attention_block.ipynb", r"\nunscaled: p10 ([\d.e+-]+),",
                                        zh=r"\n\s*不缩放：p10 ([\d.e+-]+)，"),
    "nb01_gradq_raw_p90": from_notebook("01_attention_block.ipynb", r"\nunscaled: p10 \S+, median \S+, p90 ([\d.e+-]+),",
                                        zh=r"\n\s*不缩放：p10 \S+，中位数 \S+，p90 ([\d.e+-]+)，"),
    "nb01_gradq_starved": from_notebook("01_attention_block.ipynb", r"unscaled: (\d+%) of the rows get under 1%",
                                        zh=r"不缩放：(\d+%) 的行收到的梯度不到"),
    "nb01_gradq_flooded": from_notebook("01_attention_block.ipynb", r"unscaled: (\d+%) of the rows get over 10x",
                                        zh=r"不缩放：(\d+%) 的行收到的梯度超过"),
    "nb01_gradq_flood_share": from_notebook("01_attention_block.ipynb",
                                            r"of the rows carry (\d+%) of the gradient magnitude summed over rows",
                                            zh=r"的行占了各行梯度大小之和的 (\d+%)"),
    # --- 02 ---
    "nb02_course_model": from_notebook("02_prefill.ipynb",
                                       r"course model: (L=\d+, C=\d+, H=\d+, H_kv=\d+ \(\w+\), d_h=\d+, V=\d+)",
                                       zh=r"课程模型：(L=\d+，C=\d+，H=\d+，H_kv=\d+（\w+），d_h=\d+，V=\d+)"),
    "nb02_cache_nbytes": from_notebook("02_prefill.ipynb", r"cache length: \d+ positions, (\d+) bytes", zh=r"缓存长度：\d+ 个位置，(\d+) 字节"),
    "nb02_true_p": from_notebook("02_prefill.ipynb", r"true cache \(own K/V per layer\)\s+\S+\s+([\d.]+)\s",
                                 zh=r"真缓存：每层用自己的 K/V\s+\S+\s+([\d.]+)\s"),
    "nb02_impostor0_p": from_notebook("02_prefill.ipynb", r"layer 0's K/V in every layer\s+\S+\s+([\d.]+)\s",
                                      zh=r"每层都放第 0 层的 K/V\s+\S+\s+([\d.]+)\s"),
    "nb02_impostor1_p": from_notebook("02_prefill.ipynb", r"layer 1's K/V in every layer\s+\S+\s+([\d.]+)\s",
                                      zh=r"每层都放第 1 层的 K/V\s+\S+\s+([\d.]+)\s"),
    "nb02_impostor2_p": from_notebook("02_prefill.ipynb", r"layer 2's K/V in every layer\s+\S+\s+([\d.]+)\s",
                                      zh=r"每层都放第 2 层的 K/V\s+\S+\s+([\d.]+)\s"),
    "nb02_impostor3_p": from_notebook("02_prefill.ipynb", r"layer 3's K/V in every layer\s+\S+\s+([\d.]+)\s",
                                      zh=r"每层都放第 3 层的 K/V\s+\S+\s+([\d.]+)\s"),
    "nb02_true_kl": from_notebook("02_prefill.ipynb", r"true cache \(own K/V per layer\)\s+\S+\s+[\d.]+\s+[\d.]+e[-+]\d+\s+(-?[\d.]+e[-+]\d+)",
                                  zh=r"真缓存：每层用自己的 K/V\s+\S+\s+[\d.]+\s+[\d.]+e[-+]\d+\s+(-?[\d.]+e[-+]\d+)"),
    "nb02_impostor0_kl": from_notebook("02_prefill.ipynb", r"layer 0's K/V in every layer\s+\S+\s+[\d.]+\s+[\d.]+e[-+]\d+\s+([\d.]+e[-+]\d+)",
                                       zh=r"每层都放第 0 层的 K/V\s+\S+\s+[\d.]+\s+[\d.]+e[-+]\d+\s+([\d.]+e[-+]\d+)"),
    "nb02_impostor1_kl": from_notebook("02_prefill.ipynb", r"layer 1's K/V in every layer\s+\S+\s+[\d.]+\s+[\d.]+e[-+]\d+\s+([\d.]+e[-+]\d+)",
                                       zh=r"每层都放第 1 层的 K/V\s+\S+\s+[\d.]+\s+[\d.]+e[-+]\d+\s+([\d.]+e[-+]\d+)"),
    "nb02_impostor2_kl": from_notebook("02_prefill.ipynb", r"layer 2's K/V in every layer\s+\S+\s+[\d.]+\s+[\d.]+e[-+]\d+\s+([\d.]+e[-+]\d+)",
                                       zh=r"每层都放第 2 层的 K/V\s+\S+\s+[\d.]+\s+[\d.]+e[-+]\d+\s+([\d.]+e[-+]\d+)"),
    "nb02_impostor3_kl": from_notebook("02_prefill.ipynb", r"layer 3's K/V in every layer\s+\S+\s+[\d.]+\s+[\d.]+e[-+]\d+\s+([\d.]+e[-+]\d+)",
                                       zh=r"每层都放第 3 层的 K/V\s+\S+\s+[\d.]+\s+[\d.]+e[-+]\d+\s+([\d.]+e[-+]\d+)"),
    "nb02_impostor0_diff": from_notebook("02_prefill.ipynb", r"layer 0's K/V in every layer\s+\S+\s+[\d.]+\s+([\d.]+e[-+]\d+)",
                                         zh=r"每层都放第 0 层的 K/V\s+\S+\s+[\d.]+\s+([\d.]+e[-+]\d+)"),
    "nb02_flops_x_256": from_notebook("02_prefill.ipynb", r"per prompt token, T = 128 -> 256: .*?the FLOPs x([\d.]+) \(full square\)",
                                      zh=r"每个提示词 token，T = 128 -> 256：.*?FLOPs 是 ([\d.]+) 倍（完整方阵）"),
    "nb02_flops_x_512": from_notebook("02_prefill.ipynb", r"per prompt token, T = 256 -> 512: .*?the FLOPs x([\d.]+) \(full square\)",
                                      zh=r"每个提示词 token，T = 256 -> 512：.*?FLOPs 是 ([\d.]+) 倍（完整方阵）"),
    "nb02_timing_model_params": from_notebook("02_prefill.ipynb", r"timing model: .*?, ([\d,]+) parameters",
                                              zh=r"计时用的模型：.*?，([\d,]+) 个参数"),
    "nb02_ttft_8_ms": from_notebook("02_prefill.ipynb", r"T =\s+8: TTFT\s+([\d.]+) ms", zh=r"T =\s+8：TTFT\s+([\d.]+) ms"),
    "nb02_per_token_8_us": from_notebook("02_prefill.ipynb", r"T =\s+8: TTFT\s+[\d.]+ ms\s+\(\s*([\d.]+) µs",
                                         zh=r"T =\s+8：TTFT\s+[\d.]+ ms\s+（每个提示词 token\s+([\d.]+) µs"),
    "nb02_ttft_128_ms": from_notebook("02_prefill.ipynb", r"T =\s+128: TTFT\s+([\d.]+) ms", zh=r"T =\s+128：TTFT\s+([\d.]+) ms"),
    "nb02_per_token_128_us": from_notebook("02_prefill.ipynb", r"T =\s+128: TTFT\s+[\d.]+ ms\s+\(\s*([\d.]+) µs",
                                           zh=r"T =\s+128：TTFT\s+[\d.]+ ms\s+（每个提示词 token\s+([\d.]+) µs"),
    "nb02_ttft_512_ms": from_notebook("02_prefill.ipynb", r"T =\s+512: TTFT\s+([\d.]+) ms", zh=r"T =\s+512：TTFT\s+([\d.]+) ms"),
    "nb02_per_token_512_us": from_notebook("02_prefill.ipynb", r"T =\s+512: TTFT\s+[\d.]+ ms\s+\(\s*([\d.]+) µs",
                                           zh=r"T =\s+512：TTFT\s+[\d.]+ ms\s+（每个提示词 token\s+([\d.]+) µs"),
    "nb02_ttft_ratio_512_8": derived(lambda lang: f"{float(FACTS['nb02_ttft_512_ms'](lang)) / float(FACTS['nb02_ttft_8_ms'](lang)):.0f}"),
    "nb02_pad_cached": from_notebook("02_prefill.ipynb", r"cached positions per layer: \d+ rows x \d+ = (\d+)",
                                     zh=r"每层缓存的位置数：\d+ 行 x \d+ = (\d+)"),
    "nb02_pad_real": from_notebook("02_prefill.ipynb", r"cached positions per layer: .*?; real tokens: [\d +]+= (\d+)",
                                   zh=r"每层缓存的位置数：.*?；真实 token：[\d +]+= (\d+)"),
    "nb02_pad_n": from_notebook("02_prefill.ipynb", r"padding: (\d+) of \d+ cached positions", zh=r"填充：\d+ 个缓存位置中有 (\d+) 个"),
    "nb02_pad_pct": from_notebook("02_prefill.ipynb", r"padding: \d+ of \d+ cached positions = (\d+%)",
                                  zh=r"填充：\d+ 个缓存位置中有 \d+ 个，占 (\d+%)"),
    "nb02_pad_per_position": from_notebook("02_prefill.ipynb", r"bytes per cached position and layer \(K and V\): .*? = (\d+)",
                                           zh=r"每个缓存位置每层的字节数（K 和 V）：.*? = (\d+)"),
    "nb02_pad_bytes_layer": from_notebook("02_prefill.ipynb", r"bytes spent on padding: (\d+) per layer", zh=r"花在填充上的字节数：每层 (\d+)"),
    "nb02_pad_bytes_total": from_notebook("02_prefill.ipynb", r"bytes spent on padding: \d+ per layer, (\d+) in all",
                                          zh=r"花在填充上的字节数：每层 \d+，全部 \d+ 层共 (\d+)"),
    "nb02_pad_cache_bytes": from_notebook("02_prefill.ipynb", r"bytes spent on padding: .*?, of (\d+) cached",
                                          zh=r"花在填充上的字节数：.*?（整个缓存共 (\d+) 字节）"),
    "nb02_cos_n": from_notebook("02_prefill.ipynb", r"random vectors of n = (\d+) numbers", zh=r"长为 n = (\d+) 的随机向量"),
    "nb02_cos_baseline": from_notebook("02_prefill.ipynb", r"by about 1/√n = ([\d.]+)", zh=r"离散程度约 1/√n = ([\d.]+)"),
    "nb02_kv_cos": from_notebook("02_prefill.ipynb", r"cos\(K1, K0\) = (-?[\d.]+)", zh=r"cos\(K1, K0\) = (-?[\d.]+)"),
    "nb02_kv_norm_ratio": from_notebook("02_prefill.ipynb", r"\|\|K1\|\| / \|\|K0\|\| = ([\d.]+)",
                                        zh=r"\|\|K1\|\| / \|\|K0\|\| = ([\d.]+)"),
    "nb02_ttft_growth_ms": from_notebook("02_prefill.ipynb", r"from T = 8 to T = 512: TTFT grew by ([\d.]+) ms",
                                         zh=r"从 T = 8 到 T = 512：TTFT 增加了 ([\d.]+) ms"),
    "nb02_tokenize_ms": from_notebook("02_prefill.ipynb", r"tokenizing 512 words takes ([\d.]+) ms",
                                      zh=r"给 512 个词分词只要 ([\d.]+) ms"),
    "nb02_first_p": from_notebook("02_prefill.ipynb", r"token\s+model\s+grammar\n\S+\s+([\d.]+)",
                                  zh=r"token\s+模型\s+语法\n\S+\s+([\d.]+)"),
    "nb02_first_grammar_p": from_notebook("02_prefill.ipynb", r"token\s+model\s+grammar\n\S+\s+[\d.]+\s+([\d.]+)",
                                          zh=r"token\s+模型\s+语法\n\S+\s+[\d.]+\s+([\d.]+)"),
    "nb02_attn_share_512": from_notebook("02_prefill.ipynb", r"T =\s+512: .*?attention (\d+%) / \d+% of the FLOPs",
                                         zh=r"T =\s+512：.*?注意力占 FLOPs 的 (\d+%) / \d+%"),
    "nb02_attn_share_512_half": from_notebook("02_prefill.ipynb", r"T =\s+512: .*?attention \d+% / (\d+%) of the FLOPs",
                                              zh=r"T =\s+512：.*?注意力占 FLOPs 的 \d+% / (\d+%)"),
    "nb02_attn_share_256": from_notebook("02_prefill.ipynb", r"T =\s+256: .*?attention (\d+%) / \d+% of the FLOPs",
                                         zh=r"T =\s+256：.*?注意力占 FLOPs 的 (\d+%) / \d+%"),
    "nb02_attn_share_256_half": from_notebook("02_prefill.ipynb", r"T =\s+256: .*?attention \d+% / (\d+%) of the FLOPs",
                                              zh=r"T =\s+256：.*?注意力占 FLOPs 的 \d+% / (\d+%)"),
    "nb02_per_token_256_us": from_notebook("02_prefill.ipynb", r"T =\s+256: TTFT\s+[\d.]+ ms\s+\(\s*([\d.]+) µs",
                                           zh=r"T =\s+256：TTFT\s+[\d.]+ ms\s+（每个提示词 token\s+([\d.]+) µs"),
    "nb02_crossover_T_full": from_notebook("02_prefill.ipynb", r"at T ≈ ([\d,]+) counting the full",
                                           zh=r"按完整的 T x T 方阵算在 T ≈ ([\d,]+)"),
    "nb02_crossover_T": from_notebook("02_prefill.ipynb", r"at T ≈ ([\d,]+) with the masked half skipped \(both",
                                      zh=r"跳过被掩掉的一半则在 T ≈ ([\d,]+)"),
    "nb02_crossover_7b": from_notebook("02_prefill.ipynb", r"Llama-2-7B \(C=\d+\): at T ≈ ([\d,]+)",
                                       zh=r"Llama-2-7B（C=\d+）：跳过被掩掉的一半时在 T ≈ ([\d,]+)"),
    "nb02_panel_cos_min": from_notebook("02_prefill.ipynb", r"settings beyond layer 0: cos from (-?[\d.]+) to",
                                        zh=r"种设置：余弦从 (-?[\d.]+) 到"),
    "nb02_panel_cos_max": from_notebook("02_prefill.ipynb", r"settings beyond layer 0: cos from -?[\d.]+ to (-?[\d.]+)",
                                        zh=r"种设置：余弦从 -?[\d.]+ 到 (-?[\d.]+)"),
    "nb02_panel_ratio_min": from_notebook("02_prefill.ipynb", r"norm ratio from ([\d.]+) to", zh=r"范数之比从 ([\d.]+) 到"),
    "nb02_panel_ratio_max": from_notebook("02_prefill.ipynb", r"norm ratio from [\d.]+ to ([\d.]+)",
                                          zh=r"范数之比从 [\d.]+ 到 ([\d.]+)"),
    # --- 03 ---
    "nb03_course_model": from_notebook("03_decode.ipynb",
                                       r"course model: (L=\d+, C=\d+, H=\d+, H_kv=\d+ \(\w+\), d_h=\d+, V=\d+)",
                                       zh=r"课程模型：(L=\d+[,，] ?C=\d+[,，] ?H=\d+[,，] ?H_kv=\d+ ?[(（]\w+[)）][,，] ?d_h=\d+[,，] ?V=\d+)"),
    "nb03_recompute_steps": from_notebook("03_decode.ipynb", r"cached == recompute within 0\.0001 for (\d+) steps",
                                          zh=r"通过：(\d+) 步中缓存结果与完全重算一致"),
    "nb03_heads_on_two": from_notebook("03_decode.ipynb", r"\((\d+) of \d+ heads above 80%\)", zh=r"（\d+ 个头中有 (\d+) 个超过 80%）"),
    "nb03_recompute_worst": from_notebook("03_decode.ipynb", r"largest difference: ([\d.]+e[+-]\d+)", zh=r"最大差值：([\d.]+e[+-]\d+)"),
    "nb03_recompute_differ": from_notebook("03_decode.ipynb", r"decode steps that differ in the last bits: (\d+) of \d+",
                                           zh=r"最后几位有差异的解码步：\d+ 步中有 (\d+) 步"),
    "nb03_recompute_n_decode": from_notebook("03_decode.ipynb", r"decode steps that differ in the last bits: \d+ of (\d+)",
                                             zh=r"最后几位有差异的解码步：(\d+) 步中有"),
    "nb03_kproj_alone_vs_batch": from_notebook("03_decode.ipynb", r"alone vs in the batch : max \|diff\| = ([\d.]+e[+-]\d+)",
                                               zh=r"单独计算 vs 整批中的一行\s*：max \|diff\| = ([\d.]+e[+-]\d+)"),
    "nb03_kproj_alone_vs_reversed": from_notebook("03_decode.ipynb", r"alone vs reversed sum : max \|diff\| = ([\d.]+e[+-]\d+)",
                                                  zh=r"单独计算 vs 倒序求和\s*：max \|diff\| = ([\d.]+e[+-]\d+)"),
    "nb03_timing_T_min": from_notebook("03_decode.ipynb", r"cached step at T=\d+ vs T=(\d+):", zh=r"带缓存的一步：T=\d+ 时的耗时是 T=(\d+) 时的"),
    "nb03_timing_T_max": from_notebook("03_decode.ipynb", r"cached step at T=(\d+) vs T=\d+:", zh=r"带缓存的一步：T=(\d+) 时的耗时"),
    "nb03_cached_ms_min": from_notebook("03_decode.ipynb", r"cached ms   no-cache ms[^\n]*\n\s*\d+\s+([\d.]+)",
                                        zh=r"带缓存 ms\s+不带缓存 ms[^\n]*\n\s*\d+\s+([\d.]+)"),
    "nb03_cached_ms_max": from_notebook("03_decode.ipynb", r"cached ms   no-cache ms[^\n]*\n(?:.*\n)*?\s*\d+\s+([\d.]+)\s+-\s",
                                        zh=r"带缓存 ms\s+不带缓存 ms[^\n]*\n(?:.*\n)*?\s*\d+\s+([\d.]+)\s+-\s"),
    "nb03_cached_ratio": from_notebook("03_decode.ipynb", r"cached step at T=\d+ vs T=\d+: x([\d.]+)",
                                       zh=r"带缓存的一步：T=\d+ 时的耗时是 T=\d+ 时的 ([\d.]+) 倍"),
    "nb03_no_cache_T": from_notebook("03_decode.ipynb", r"at T=(\d+), a step without cache takes", zh=r"T=(\d+) 时，不带缓存的一步耗时"),
    "nb03_cached_ms_1024": from_notebook("03_decode.ipynb", r"cached ms   no-cache ms[^\n]*\n(?:.*\n)*?\s*1024\s+([\d.]+)\s+[\d.]+\s+[\d.]+ MiB\n",
                                         zh=r"带缓存 ms\s+不带缓存 ms[^\n]*\n(?:.*\n)*?\s*1024\s+([\d.]+)\s+[\d.]+\s+[\d.]+ MiB\n"),
    "nb03_no_cache_ms_1024": from_notebook("03_decode.ipynb", r"cached ms   no-cache ms[^\n]*\n(?:.*\n)*?\s*1024\s+[\d.]+\s+([\d.]+)\s+[\d.]+ MiB\n",
                                           zh=r"带缓存 ms\s+不带缓存 ms[^\n]*\n(?:.*\n)*?\s*1024\s+[\d.]+\s+([\d.]+)\s+[\d.]+ MiB\n"),
    "nb03_read_mib_1024": from_notebook("03_decode.ipynb", r"cached ms   no-cache ms[^\n]*\n(?:.*\n)*?\s*1024\s+[\d.]+\s+[\d.]+\s+([\d.]+ MiB)\n",
                                        zh=r"带缓存 ms\s+不带缓存 ms[^\n]*\n(?:.*\n)*?\s*1024\s+[\d.]+\s+[\d.]+\s+([\d.]+ MiB)\n"),
    "nb03_best_gflops": from_notebook("03_decode.ipynb", r"the best rate measured so far \(([\d.]+) GFLOP/s",
                                      zh=r"目前测到的最高速率（([\d.]+) GFLOP/s"),
    "nb03_cached_share_of_best": from_notebook("03_decode.ipynb", r"GFLOP/s, (\d+%) of the best rate measured so far",
                                               zh=r"时不带缓存的一步）的 (\d+%)"),
    "nb03_low_head": from_notebook("03_decode.ipynb", r"head (\d+), its top 3 keys:", zh=r"头 (\d+) 权重最大的 3 个键："),
    "nb03_low_head_top": from_notebook("03_decode.ipynb", r"head \d+, its top 3 keys: ([^\n]+)",
                                       zh=r"头 \d+ 权重最大的 3 个键：([^\n]+)"),
    "nb03_ulp": from_notebook("03_decode.ipynb", r"one float32 ULP at the largest \|logit\|[^(]*\([\d.]+\): ([\d.]+e[+-]\d+)",
                              zh=r"处一个 float32 ULP：([\d.]+e[+-]\d+)"),
    "nb03_worst_ulps": from_notebook("03_decode.ipynb", r"largest difference: [\d.]+e[+-]\d+ = ([\d.]+) ULPs",
                                     zh=r"最大差值：[\d.]+e[+-]\d+ = 最大 logit 处的 ([\d.]+) 个 ULP"),
    "nb03_tol_margin": from_notebook("03_decode.ipynb", r"TOL is ([\d.]+)x larger", zh=r"TOL 是它的 ([\d.]+) 倍"),
    "nb03_no_cache_ratio": from_notebook("03_decode.ipynb", r"a step without cache takes x(\d+) the time", zh=r"不带缓存的一步耗时是带缓存的 (\d+) 倍"),
    "nb03_linear_flops": from_notebook("03_decode.ipynb", r"the Linear layers ran ([\d,]+) FLOPs", zh=r"各 Linear 层实际运行了 ([\d,]+) FLOPs"),
    "nb03_counted_flops": from_notebook("03_decode.ipynb", r"utils\.flops counts ([\d,]+)", zh=r"utils\.flops 计得 ([\d,]+)"),
    "nb03_counted_attention_flops": from_notebook("03_decode.ipynb", r"\(\+ ([\d,]+) for attention over \d+ keys\)",
                                                  zh=r"（对 \d+ 个键的注意力另计 ([\d,]+)）"),
    # the savings table of section 6: one fact per (column, T) the lesson quotes
    **{f"nb03_{col}_{T}": table_cell("03_decode.ipynb", {"en": (r"weights read", str(T)), "zh": (r"读权重", str(T))},
                                     [r"[\d.]+", r"[\d.]+", r"[\d.]+%", r"[\d.]+%", r"[\d.]+ \w?i?B", r"[\d.]+ \w?i?B"], i)
       for i, col in enumerate(["mflop_cached", "mflop_no_cache", "saved", "attention_share", "kv_read", "weights_read"])
       for T in (128, 2047)},
    # the attention table of section 6: without the cache every query's attention runs again
    **{f"nb03_attention_{col}_2047": table_cell("03_decode.ipynb", {"en": (r"attention MFLOP: no cache", "2047"),
                                                                   "zh": (r"注意力 MFLOP：不带缓存", "2047")},
                                               [r"[\d.]+", r"[\d.]+%", r"[\d.]+"], i)
       for i, col in enumerate(["no_cache_mflop", "no_cache_share", "cached_mflop"])},
    "nb03_llama3_8b_checkpoint": from_notebook("03_decode.ipynb", r"parameters = ([\d.]+ \w+) \(a checkpoint's size\)",
                                               zh=r"个参数 = ([\d.]+ \w+)（即检查点的大小）"),
    "nb03_llama3_8b_weights": from_notebook("03_decode.ipynb", r"one decode step reads ([\d.]+ \w+) of them",
                                            zh=r"一个解码步读取其中的 ([\d.]+ \w+)"),
    "nb03_llama3_8b_embedding": from_notebook("03_decode.ipynb", r"of the ([\d.]+ \w+) embedding table",
                                              zh=r"一个解码步读取其中的 [\d.]+ \w+：([\d.]+ \w+) 的嵌入表"),
    # the Llama-3-8B table: T, B, weights read, K/V read, FLOPs per byte on the weights, on the K/V, whole step
    **{f"nb03_llama3_8b_{col}_{name}": table_cell("03_decode.ipynb", {"en": (r"on the K/V  whole step", row),
                                                                     "zh": (r"K/V 部分\s+整步", row)},
                                                 [r"[\d.]+ \w?i?B", r"[\d.]+ \w?i?B", r"[\d.]+", r"[\d.]+", r"[\d.]+"], i, end=r"\n")
       for i, col in enumerate(["weights", "kv", "per_byte_weights", "per_byte_kv", "per_byte_step"])
       for name, row in [("1k", r"1024\s+1"), ("8k", r"8192\s+1"), ("1k_b32", r"1024\s+32"), ("8k_b32", r"8192\s+32")]},
    "nb03_kv_equals_weights_T_b1": from_notebook("03_decode.ipynb", r"B =  1: the K/V read reaches .*? at T = ([\d,]+) tokens",
                                                 zh=r"B =  1：每条序列 T = ([\d,]+) 个 token 时，K/V 读取量追平"),
    "nb03_kv_equals_weights_T_b32": from_notebook("03_decode.ipynb", r"B = 32: the K/V read reaches .*? at T = ([\d,]+) tokens",
                                                  zh=r"B = 32：每条序列 T = ([\d,]+) 个 token 时，K/V 读取量追平"),
    "nb03_llama3_8b_max_context": from_notebook("03_decode.ipynb", r"Llama-3-8B reads at most ([\d,]+) tokens",
                                                zh=r"Llama-3-8B 的最大上下文长度：([\d,]+)"),
    # the ridge points and the batch at which a Llama-3-8B step reaches them
    "nb03_ridge_a100": from_notebook("03_decode.ipynb", r"A100 [^:]*: .*= ridge (\d+) FLOPs per byte",
                                     zh=r"A100 [^：\n]*：.*= 每字节 (\d+) FLOPs（脊点）"),
    "nb03_ridge_h100": from_notebook("03_decode.ipynb", r"H100 [^:]*: .*= ridge (\d+) FLOPs per byte",
                                     zh=r"H100 [^：\n]*：.*= 每字节 (\d+) FLOPs（脊点）"),
    "nb03_ridge_batch_a100": from_notebook("03_decode.ipynb", r"the matrix products turn compute-bound from B = (\d+) \(A100\)",
                                           zh=r"矩阵乘法从 B = (\d+)（A100）"),
    "nb03_ridge_batch_h100": from_notebook("03_decode.ipynb", r"the matrix products turn compute-bound from .*? and (\d+) \(H100\)",
                                           zh=r"矩阵乘法从 B = \d+（A100）和 (\d+)（H100）"),
    "nb03_ridge_max_batch": from_notebook("03_decode.ipynb", r"B = ([\d,]+), T = 1,024: FLOPs per byte;",
                                          zh=r"B = ([\d,]+)，T = 1,024：每字节 FLOPs"),
    # a Llama-3-8B step at B = 4,096, T = 1,024, split into its two kinds of kernel (utils.roofline.decode_parts)
    **{f"nb03_parts_{part}_{what}": from_notebook("03_decode.ipynb", en + tail_en, zh=zh + tail_zh)
       for part, en, zh in [("matmul", r"matrix products \(weights\)", r"矩阵乘法（权重）"),
                            ("attention", r"attention \(K/V\)", r"注意力（K/V）"),
                            ("pooled", r"whole step, pooled", r"整步合在一起")]
       for what, tail_en, tail_zh in [("intensity", r"\s+([\d.]+)", r"\s+([\d.]+)"),
                                      ("bound_a100", r"\s+[\d.]+\s+(\w+),", r"\s+[\d.]+\s+(\w+)，"),
                                      ("ms_a100", r"\s+[\d.]+\s+\w+, ([\d,]+) ms", r"\s+[\d.]+\s+\w+，([\d,]+) ms"),
                                      ("ms_h100", r"\s+[\d.]+\s+\w+, [\d,]+ ms\s+\w+, ([\d,]+) ms",
                                       r"\s+[\d.]+\s+\w+，[\d,]+ ms\s+\w+，([\d,]+) ms")]},
    "nb03_ridge_intensity_1k": from_notebook("03_decode.ipynb", r"whole step, pooled\s+([\d.]+)", zh=r"整步合在一起\s+([\d.]+)"),
    "nb03_parts_kv_bytes": from_notebook("03_decode.ipynb", r"that batch reads ([\d.]+ \w+) of K/V",
                                         zh=r"这样一批每步要读 ([\d.]+ \w+) 的 K/V"),
    "nb03_parts_fit": from_notebook("03_decode.ipynb", r"an 80 GiB GPU holds (\d+) such sequences", zh=r"只放得下 (\d+) 条这样的序列"),
    # a wrong position, measured on the whole model
    "nb03_wrong_pos_gap": from_notebook("03_decode.ipynb", r"at position 0 instead of \d+: max \|Δlogit\| = ([\d.]+)",
                                        zh=r"放在位置 0 而不是 \d+：max \|Δlogit\| = ([\d.]+)"),
    "nb03_wrong_pos_tol_x": from_notebook("03_decode.ipynb", r"at position 0 instead of \d+: .*= ([\d,]+) x TOL",
                                          zh=r"放在位置 0 而不是 \d+：.*= ([\d,]+) x TOL"),
    "nb03_wrong_pos_top": from_notebook("03_decode.ipynb", r"top next token: (\S+) -> \S+ \(unchanged\)",
                                        zh=r"概率最高的下一个 token：(\S+) -> \S+（未变）"),
    # the time the cache saves against the FLOPs it saves, at T = 1024 (section 5's fastest times)
    **{f"nb03_{name}_1024": from_notebook("03_decode.ipynb", r"\n\s*1024\s+" + pattern, zh=r"\n\s*1024\s+" + pattern)
       for name, pattern in [("flops_saved_x", r"(\d+)x\s+\d+x"), ("gflops_cached", r"\d+x\s+\d+x\s+([\d.]+)"),
                             ("gflops_no_cache", r"\d+x\s+\d+x\s+[\d.]+\s+([\d.]+)")]},
    # the same mistake through a greedy generation: the first decode step whose top token changes (viewer's prompt)
    "nb03_wrong_pos_step": from_notebook("03_decode.ipynb", r"decode step (\d+): fed \S+ at position \d+ \(bug: 0\); next token \S+ -> \S+ \(changed\)",
                                         zh=r"第 (\d+) 个解码步：在位置 \d+ 送入 \S+（bug：位置 0）；下一个 token \S+ -> \S+（变了）"),
    "nb03_wrong_pos_step_fed": from_notebook("03_decode.ipynb", r"fed (\S+) at position \d+ \(bug: 0\); next token \S+ -> \S+ \(changed\)",
                                             zh=r"送入 (\S+)（bug：位置 0）；下一个 token \S+ -> \S+（变了）"),
    "nb03_wrong_pos_step_from": from_notebook("03_decode.ipynb", r"; next token (\S+) -> \S+ \(changed\)", zh=r"；下一个 token (\S+) -> \S+（变了）"),
    "nb03_wrong_pos_step_to": from_notebook("03_decode.ipynb", r"; next token \S+ -> (\S+) \(changed\)",
                                            zh=r"；下一个 token \S+ -> ([^（\s]+)（变了）"),
    "nb03_wrong_pos_step_gap": from_notebook("03_decode.ipynb", r"\(changed\), max \|Δlogit\| = ([\d.]+)",
                                             zh=r"（变了），max \|Δlogit\| = ([\d.]+)"),
    # the long-context model: bytes per step against T, and its measured step times
    "nb03_long_kv_per_token": from_notebook("03_decode.ipynb", r"K/V per cached token: ([\d,]+) bytes", zh=r"每个缓存 token 的 K/V：([\d,]+) 字节"),
    "nb03_long_crossover": from_notebook("03_decode.ipynb", r"K/V per cached token: .*?reaches the weights read at T = ([\d,]+)",
                                         zh=r"每个缓存 token 的 K/V：.*?K/V 读取量在 T = ([\d,]+) 时追平权重读取量"),
    "nb03_long_weights": from_notebook("03_decode.ipynb", r"K/V share\n\s*512\s+([\d.]+ MiB)", zh=r"K/V 占比\n\s*512\s+([\d.]+ MiB)"),
    "nb03_long_kv_share_16k": from_notebook("03_decode.ipynb", r"K/V share\n(?:.*\n)*?16,384\s+(?:[\d.]+ MiB\s+){3}(\d+%)",
                                            zh=r"K/V 占比\n(?:.*\n)*?16,384\s+(?:[\d.]+ MiB\s+){3}(\d+%)"),
    # the fastest samples (the column after the quartiles), as the fitted line uses them
    "nb03_long_ms_min": from_notebook("03_decode.ipynb", r"median ms   quartiles ms.*\n\s*512\s+[\d.]+\s+[\d.]+ - [\d.]+\s+([\d.]+)",
                                      zh=r"中位数 ms\s+四分位区间 ms.*\n\s*512\s+[\d.]+\s+[\d.]+ - [\d.]+\s+([\d.]+)"),
    "nb03_long_ms_max": from_notebook("03_decode.ipynb",
                                      r"median ms   quartiles ms.*\n(?:.*\n)*?16,384\s+[\d.]+\s+[\d.]+ - [\d.]+\s+([\d.]+)",
                                      zh=r"中位数 ms\s+四分位区间 ms.*\n(?:.*\n)*?16,384\s+[\d.]+\s+[\d.]+ - [\d.]+\s+([\d.]+)"),
    "nb03_long_ratio": from_notebook("03_decode.ipynb", r"fastest step at T=16,384 vs T=512: x([\d.]+) the time",
                                     zh=r"最快的一步：T=16,384 时的耗时是 T=512 时的 ([\d.]+) 倍"),
    "nb03_long_bytes_ratio": from_notebook("03_decode.ipynb", r"fastest step at T=16,384 vs T=512: .*?, for x([\d.]+) the bytes",
                                           zh=r"最快的一步：T=16,384 时.*?读的字节数是 ([\d.]+) 倍"),
    "nb03_sec5_share_min": from_notebook("03_decode.ipynb", r"section 6's cached steps: [\d.]+ to [\d.]+ GB/s, (\d+%) to",
                                         zh=r"第 6 节带缓存的各步：[\d.]+ 到 [\d.]+ GB/s，为简单求和的 (\d+%) 到"),
    "nb03_sec5_share_max": from_notebook("03_decode.ipynb", r"section 6's cached steps: .*? to (\d+%) of a plain sum",
                                         zh=r"第 6 节带缓存的各步：.*?的 \d+% 到 (\d+%)"),
    "nb03_long_gbps_min": from_notebook("03_decode.ipynb", r"effective bandwidth ([\d.]+) to [\d.]+ GB/s",
                                        zh=r"有效带宽 ([\d.]+) 到 [\d.]+ GB/s"),
    "nb03_long_gbps_max": from_notebook("03_decode.ipynb", r"effective bandwidth [\d.]+ to ([\d.]+) GB/s",
                                        zh=r"有效带宽 [\d.]+ 到 ([\d.]+) GB/s"),
    "nb03_long_bw_share": from_notebook("03_decode.ipynb", r"effective bandwidth .*?: about (\d+%) of the",
                                        zh=r"有效带宽 .*?：约为.*? GB/s 的 (\d+%)"),
    "nb03_long_fit_fixed": from_notebook("03_decode.ipynb", r"fitted: ([\d.]+) ms \+", zh=r"拟合：([\d.]+) ms \+"),
    "nb03_long_fit_per_1k": from_notebook("03_decode.ipynb", r"fitted: [\d.]+ ms \+ ([\d.]+) ms per 1k",
                                          zh=r"拟合：[\d.]+ ms \+ 每 1k 个缓存 token ([\d.]+) ms"),
    "nb03_long_fit_crossover": from_notebook("03_decode.ipynb", r"the two parts are equal at T = ([\d,]+)", zh=r"两部分在 T = ([\d,]+) 时相等"),
    "nb03_long_fit_when": from_notebook("03_decode.ipynb", r"in time, the cache's part overtakes the fixed part ([a-z ]+):",
                                        zh=r"按耗时算，缓存部分超过固定部分的交点([^：]+)："),
    "nb03_long_fit_cache_gbps": from_notebook("03_decode.ipynb", r"the fit moves the cache at\s+([\d.]+) GB/s",
                                              zh=r"拟合中缓存按\s+([\d.]+) GB/s 搬运"),
    "nb03_long_fit_weights_gbps": from_notebook("03_decode.ipynb", r"the fit moves the cache at .*? at no less than ([\d.]+) GB/s",
                                                zh=r"拟合中缓存按.*?读权重的速率不低于\s+([\d.]+) GB/s"),
    # arithmetic intensity against the ridge points: two GPUs (published) and this CPU (measured)
    **{f"nb03_intensity_b{B}": from_notebook("03_decode.ipynb", rf"decode B = {B:2d}, T = 1,024\s+[\d,]+\s+[\d.]+\s+([\d.]+)",
                                             zh=rf"B = {B:2d}、T = 1,024 的解码步\s+[\d,]+\s+[\d.]+\s+([\d.]+)")
       for B in (1, 8, 64)},
    "nb03_prefill_intensity": from_notebook("03_decode.ipynb", r"prefill of 1,024 tokens\s+[\d,]+\s+[\d.]+\s+([\d.]+)\s+compute",
                                            zh=r"1,024 个 token 的预填充\s+[\d,]+\s+[\d.]+\s+([\d.]+)\s+计算受限"),
    "nb03_source_a100": from_notebook("03_decode.ipynb", r"A100 [^\n]*\n\s+source: ([^\n]+)", zh=r"A100 [^\n]*\n\s+来源：([^\n]+)"),
    "nb03_source_h100": from_notebook("03_decode.ipynb", r"H100 [^\n]*\n\s+source: ([^\n]+)", zh=r"H100 [^\n]*\n\s+来源：([^\n]+)"),
    "nb03_batch_sanity_512": from_notebook("03_decode.ipynb", r"the same model at T = 512 in the first deep dive, ([\d.]+) ms",
                                           zh=r"同一个模型在第一个深入部分、T = 512 时为 ([\d.]+) ms"),
    "nb03_eos_step": from_notebook("03_decode.ipynb", r"greedy decoding picks <EOS> at decode step (\d+);",
                                   zh=r"贪心解码在第 (\d+) 个解码步选出 <EOS>"),
    "nb03_past_eos": from_notebook("03_decode.ipynb", r"the last (\d+) steps go on past it", zh=r"之后的 (\d+) 步越过它继续比较"),
    "nb03_cpu_peak_from": from_notebook("03_decode.ipynb", r"peak: the highest of \d+ FLOP/s measured in this notebook, from ([^;]+);",
                                        zh=r"峰值：本笔记本测到的 \d+ 个 FLOP/s 中最高的一个（([^）]+)）；"),
    "nb03_cpu_gflops": from_notebook("03_decode.ipynb", r"this CPU [^:]*: ([\d.]+) GFLOP/s", zh=r"本机 CPU[^：]*：([\d.]+) GFLOP/s"),
    "nb03_cpu_gbps": from_notebook("03_decode.ipynb", r"this CPU [^:]*: [\d.]+ GFLOP/s / ([\d.]+) GB/s",
                                   zh=r"本机 CPU[^：]*：[\d.]+ GFLOP/s / ([\d.]+) GB/s"),
    "nb03_cpu_ridge": from_notebook("03_decode.ipynb", r"this CPU [^:]*: .*= ridge ([\d.]+) FLOPs per byte",
                                    zh=r"本机 CPU[^：]*：.*= 每字节 ([\d.]+) FLOPs（脊点）"),
    "nb03_cpu_decode_gbps": from_notebook("03_decode.ipynb", r"at the bandwidth a decode step reaches .*? / ([\d.]+) GB/s",
                                          zh=r"按解码步实际达到的带宽.*? / ([\d.]+) GB/s"),
    "nb03_cpu_decode_ridge": from_notebook("03_decode.ipynb", r"at the bandwidth a decode step reaches .*= ridge ([\d.]+) FLOPs",
                                           zh=r"按解码步实际达到的带宽.*= 每字节 ([\d.]+) FLOPs"),
    # the float32 table on this CPU: intensity, then the bound against the ideal ridge and against decode's
    # (the bound comes out in the notebook's words: "memory" in English, "访存受限" in Chinese)
    **{f"nb03_cpu_{col}_b{B}": table_cell("03_decode.ipynb", {"en": (r"FLOPs per byte\s+ideal ", f"decode B = {B:2d}"),
                                                             "zh": (r"每字节 FLOPs\s+理想脊点", f"B = {B:2d} 时的解码步")},
                                         [r"[\d.]+", r"\w+", r"\w+"], i, end=r"\n")
       for i, col in enumerate(["intensity", "bound", "bound_decode"]) for B in (1, 8, 64)},
    "nb03_cpu_prefill_intensity": from_notebook("03_decode.ipynb", r"FLOPs per byte\s+ideal .*\n(?:.*\n)*?\s*prefill of 1,024 tokens\s+([\d.]+)",
                                                zh=r"每字节 FLOPs\s+理想脊点 .*\n(?:.*\n)*?\s*1,024 个 token 的预填充\s+([\d.]+)"),
    "nb03_cpu_ridge_batch": from_notebook("03_decode.ipynb", r"first compute-bound B at T = 1,024: (\d+) against the ideal",
                                          zh=r"T = 1,024 时第一个计算受限的 B，对照理想脊点是 (\d+)"),
    "nb03_cpu_ridge_batch_decode": from_notebook("03_decode.ipynb", r"first compute-bound B at T = 1,024: .*?, (\d+) against decode's",
                                                 zh=r"T = 1,024 时第一个计算受限的 B，.*?对照解码步的脊点是 (\d+)"),
    # the batch measurement on this CPU (the long-context model, 16 cached tokens per row)
    "nb03_batch_est_ideal": from_notebook("03_decode.ipynb", r"roofline estimate for this model at T = \d+: compute-bound from B = (\d+)",
                                          zh=r"屋顶线估算（本模型，T = \d+）：对照理想脊点，从 B = (\d+) 起"),
    "nb03_batch_est_decode": from_notebook("03_decode.ipynb", r"roofline estimate for this model at T = \d+: .*?from B = (\d+) \(decode's ridge\)",
                                           zh=r"屋顶线估算（本模型，T = \d+）：.*?对照解码步的脊点，从 B = (\d+) 起"),
    **{f"nb03_batch_{col}_b{B}": table_cell("03_decode.ipynb", {"en": (r"ms per step\s+ms per row", f"{B}"),
                                                               "zh": (r"每步 ms\s+每行 ms", f"{B}")},
                                           [r"[\d.]+", r"[\d.]+", r"[\d.]+ \w+", r"[\d.]+", r"[\d.]+", r"\d+%"], i, end=r"\n")
       for i, col in [(0, "ms"), (3, "gbps"), (5, "share")] for B in (1, 4, 32, 128)},
    "nb03_batch_b4_ratio": from_notebook("03_decode.ipynb", r"B = 4 takes x([\d.]+) the time of B = 1",
                                         zh=r"B = 4 的耗时是 B = 1 的 ([\d.]+) 倍"),
    "nb03_batch_b1_bw_share": from_notebook("03_decode.ipynb", r"B = 1: (\d+%) of a plain sum's bandwidth",
                                            zh=r"B = 1：达到简单求和带宽的 (\d+%)"),
    "nb03_batch_bytes_growth": from_notebook("03_decode.ipynb", r"the bytes only ([\d.]+)x", zh=r"字节数只是原来的 ([\d.]+) 倍"),
    # --- 04 ---
    "nb04_llama3_8b_4k_bytes": in_both(lambda: f"{cache_bytes_for(MODEL_PRESETS['Llama-3-8B'], 1, 4096):,}"),
    "nb04_llama3_8b_4k_mib": in_both(lambda: f"{cache_bytes_for(MODEL_PRESETS['Llama-3-8B'], 1, 4096) / 2**20:.1f}"),
    "nb04_gemma2_9b_mha_form_ratio": from_notebook("04_cache_sizing.ipynb", r"Gemma-2-9B .*?MHA form / general = ([\d.]+)",
                                                   zh=r"Gemma-2-9B .*?MHA 形式 / 通用形式 = ([\d.]+)"),
    "nb04_gemma2_9b_group": from_notebook("04_cache_sizing.ipynb", r"Gemma-2-9B .*?H/H_kv=(\d+)", zh=r"Gemma-2-9B .*?H/H_kv=(\d+)"),
    "nb04_gemma2_9b_heads_width": from_notebook("04_cache_sizing.ipynb", r"Gemma-2-9B .*?H·d_h=(\d+)", zh=r"Gemma-2-9B .*?H·d_h=(\d+)"),
    "nb04_gemma2_9b_d_model": from_notebook("04_cache_sizing.ipynb", r"Gemma-2-9B .*? C=(\d+)", zh=r"Gemma-2-9B .*? C=(\d+)"),
    "nb04_prefill_nbytes": from_notebook("04_cache_sizing.ipynb", r"KVCache after prefill: seq_len=\d+, nbytes=([\d,]*\d)",
                                         zh=r"预填充之后的 KVCache：seq_len=\d+，nbytes=([\d,]*\d)"),
    "nb04_decode_step_bytes": from_notebook("04_cache_sizing.ipynb", r"decode step 0: \+([\d,]+) bytes", zh=r"解码步 0：\+([\d,]+) 字节"),
    "nb04_static_nbytes": from_notebook("04_cache_sizing.ipynb", r"StaticKVCache: \d+ of \d+ positions filled, nbytes=([\d,]*\d)",
                                        zh=r"StaticKVCache：\d+ 个位置中填了 \d+ 个，nbytes=([\d,]*\d)"),
    "nb04_bf16_nbytes": from_notebook("04_cache_sizing.ipynb", r"bfloat16 KVCache: nbytes=([\d,]+)",
                                      zh=r"bfloat16 的 KVCache：nbytes=([\d,]+)"),
    "nb04_llama2_13b_per_token_kib": _per_token_kib("Llama-2-13B"),
    "nb04_qwen25_7b_per_token_kib": _per_token_kib("Qwen2.5-7B"),
    "nb04_gemma2_9b_per_token_kib": _per_token_kib("Gemma-2-9B"),
    "nb04_llama31_70b_per_token_kib": _per_token_kib("Llama-3.1-70B"),
    # one fp16 sequence at 4k/32k/128k tokens, in GiB with three decimals as the notebook's table prints it
    **{f"nb04_{m}_{T // 1024}k_gib": in_both(lambda m=m, T=T: f"{cache_bytes_for(MODEL_PRESETS[m], 1, T) / 2**30:,.3f}")
       for m in ("Llama-2-7B", "Llama-2-13B", "Llama-3-8B", "Qwen2.5-7B", "Gemma-2-9B", "Llama-3.1-70B")
       for T in (4096, 32768, 131072)},
    "nb04_ratio_llama3_8b_vs_llama2_7b": from_notebook("04_cache_sizing.ipynb", r"Llama-3-8B \(GQA\) needs ([\d.]+)x",
                                                       zh=r"Llama-3-8B（GQA）每个 token 需要的缓存是 Llama-2-7B（MHA）的 ([\d.]+) 倍"),
    "nb04_ratio_llama2_70b_vs_13b": from_notebook("04_cache_sizing.ipynb", r"Llama-2-70B \(GQA\) needs ([\d.]+)x",
                                                  zh=r"Llama-2-70B（GQA）每个 token 需要的缓存是 Llama-2-13B（MHA）的 ([\d.]+) 倍"),
    "nb04_llama2_70b_mha_factor": from_notebook("04_cache_sizing.ipynb", r"H_kv=64\) would need (\d+)x",
                                                zh=r"（H_kv=64），缓存会是现在 GQA 缓存的 (\d+) 倍"),
    "nb04_falcon_per_token_kib": from_notebook("04_cache_sizing.ipynb", r"Falcon-7B \(MQA, H_kv=1\) needs [\d,]+ bytes \(([\d.]+) KiB\)",
                                               zh=r"Falcon-7B（MQA，H_kv=1）每个 token 需要 [\d,]+ 字节（([\d.]+) KiB）"),
    "nb04_falcon_vs_llama3": from_notebook("04_cache_sizing.ipynb", r"1/(\d+) of Llama-3-8B's", zh=r"是 Llama-3-8B 的 1/(\d+)"),
    "nb04_mistral_window_gib": from_notebook("04_cache_sizing.ipynb", r"rolling buffer holds at most ([\d.]+) GiB",
                                             zh=r"滚动缓冲区最多只存 ([\d.]+) GiB"),
    "nb04_gemma2_9b_hybrid_8k_gib": from_notebook("04_cache_sizing.ipynb", r"\(HybridCache\) ([\d.]+) GiB",
                                                  zh=r"（HybridCache）([\d.]+) GiB"),
    "nb04_gemma2_9b_8k_gib": from_notebook("04_cache_sizing.ipynb", r"Gemma-2-9B at 8k: .*?every position in every layer ([\d.]+) GiB",
                                           zh=r"Gemma-2-9B，8k：.*?每层都存所有位置 ([\d.]+) GiB"),
    "nb04_llama31_70b_8k_gib": from_notebook("04_cache_sizing.ipynb", r"Llama-3.1-70B at 8k, every position in every layer: ([\d.]+) GiB",
                                             zh=r"Llama-3.1-70B，8k，每层都存所有位置：([\d.]+) GiB"),
    "nb04_llama3_8b_params": from_notebook("04_cache_sizing.ipynb", r"Llama-3-8B: ([\d,]+) parameters", zh=r"Llama-3-8B：([\d,]+) 个参数"),
    "nb04_llama3_8b_weights_gib": from_notebook("04_cache_sizing.ipynb", r"parameters -> weights ([\d.]+) GiB",
                                                zh=r"个参数 -> 显存中的权重 ([\d.]+) GiB"),
    "nb04_fit_1k": from_notebook("04_cache_sizing.ipynb", r"T =\s+1,024 tokens: .*?->\s+(\d+) requests fit",
                                 zh=r"T =\s+1,024 个 token：.*?->\s+能容纳\s+(\d+) 个请求"),
    "nb04_fit_2k": from_notebook("04_cache_sizing.ipynb", r"T =\s+2,048 tokens: .*?->\s+(\d+) requests fit",
                                 zh=r"T =\s+2,048 个 token：.*?->\s+能容纳\s+(\d+) 个请求"),
    "nb04_fit_4k": from_notebook("04_cache_sizing.ipynb", r"T =\s+4,096 tokens: .*?->\s+(\d+) requests fit",
                                 zh=r"T =\s+4,096 个 token：.*?->\s+能容纳\s+(\d+) 个请求"),
    "nb04_fit_8k": from_notebook("04_cache_sizing.ipynb", r"T =\s+8,192 tokens: .*?->\s+(\d+) requests fit",
                                 zh=r"T =\s+8,192 个 token：.*?->\s+能容纳\s+(\d+) 个请求"),
    "nb04_free_gib": from_notebook("04_cache_sizing.ipynb", r"on 80 GiB leaves ([\d.]+) GiB for caches",
                                   zh=r"放在 80 GiB 上，留给缓存的是 ([\d.]+) GiB"),
    "nb04_free_tokens": from_notebook("04_cache_sizing.ipynb", r"= ([\d,]+) cached tokens in total", zh=r"总共能缓存 ([\d,]+) 个 token"),
    "nb04_fit_tokens_total": from_notebook("04_cache_sizing.ipynb", r"T =\s+2,048 tokens: .*?requests fit, ([\d,]+) tokens",
                                           zh=r"T =\s+2,048 个 token：.*?个请求，共 ([\d,]+) 个 token"),
    "nb04_fit_8k_fp8_cache": in_both(lambda: str(max_concurrent_requests(  # bf16 weights, an 8-bit cache
        MODEL_PRESETS["Llama-3-8B"], 8192, 80 * 2**30, weight_bytes=MODEL_PRESETS["Llama-3-8B"].n_params * 2,
        dtype="float8", reserve_fraction=0.1))),
    "nb04_positions_without_cache": from_notebook("04_cache_sizing.ipynb", r"new tokens: ([\d,]+) positions without",
                                                  zh=r"不带缓存要送入 ([\d,]+) 个位置"),
    "nb04_positions_with_cache": from_notebook("04_cache_sizing.ipynb", r"positions without a cache, ([\d,]+) with it",
                                               zh=r"带缓存只要 ([\d,]+) 个"),
    "nb04_positions_ratio": from_notebook("04_cache_sizing.ipynb", r"with it: (\d+)x fewer positions", zh=r"送进模型的位置只有前者的 1/(\d+)"),
    "nb04_tflop_without_cache": from_notebook("04_cache_sizing.ipynb", r"Llama-3-8B: ([\d,]+) TFLOP without a cache",
                                              zh=r"Llama-3-8B：不带缓存 ([\d,]+) TFLOP"),
    "nb04_tflop_with_cache": from_notebook("04_cache_sizing.ipynb", r"TFLOP without a cache, ([\d,]+) TFLOP with it",
                                           zh=r"TFLOP，带缓存 ([\d,]+) TFLOP"),
    "nb04_flop_ratio": from_notebook("04_cache_sizing.ipynb", r"TFLOP with it: (\d+)x less work", zh=r"TFLOP，工作量只有前者的 1/(\d+)"),
    "nb04_lm_head_tflop": from_notebook("04_cache_sizing.ipynb", r"\nlm_head\s+([\d.,]+)\s+[\d.,]+\s+\d+x",
                                        zh=r"\n输出层（LM head）\s+([\d.,]+)\s+[\d.,]+\s+\d+ 倍"),
    "nb04_attention_tflop_ratio": from_notebook("04_cache_sizing.ipynb", r"\nattention\s+[\d.,]+\s+[\d.,]+\s+(\d+)x",
                                                zh=r"\n注意力\s+[\d.,]+\s+[\d.,]+\s+(\d+) 倍"),
    "nb04_ratio_with_lm_head": from_notebook("04_cache_sizing.ipynb", r"projections \+ MLP \+ lm_head only: (\d+)x",
                                             zh=r"只计投影、MLP 与输出层：(\d+) 倍"),
    "nb04_ratio_with_attention": from_notebook("04_cache_sizing.ipynb", r"projections \+ MLP \+ attention only: (\d+)x",
                                               zh=r"只计投影、MLP 与注意力：(\d+) 倍"),
    "nb04_static_used_tokens": from_notebook("04_cache_sizing.ipynb", r"a ([\d,]+)-token request in a cache preallocated",
                                             zh=r"预分配的缓存中放一个 ([\d,]+) 个 token 的请求"),
    "nb04_static_used_mib": from_notebook("04_cache_sizing.ipynb", r"preallocated for 8,192: uses ([\d.]+) MiB",
                                          zh=r"预分配的缓存中放一个 .*?：只用了 [\d.]+ GiB 中的 ([\d.]+) MiB"),
    "nb04_static_wasted": from_notebook("04_cache_sizing.ipynb", r"\((\d+%) wasted\)", zh=r"（浪费 (\d+%)）"),
    "nb04_llama3_8b_b8_8k_gib": in_both(lambda: f"{cache_bytes_for(MODEL_PRESETS['Llama-3-8B'], 8, 8192) / 2**30:.1f}"),
    # padding: a static batch of 1k ... 8k-token requests, and the planner with its padding share
    "nb04_pad_batch_positions": from_notebook("04_cache_sizing.ipynb", r"padded to [\d,]+: ([\d,]+) positions for",
                                              zh=r"都填充到 [\d,]+：([\d,]+) 个位置"),
    "nb04_pad_batch_real": from_notebook("04_cache_sizing.ipynb", r"positions for ([\d,]+) real tokens", zh=r"个位置只装了 ([\d,]+) 个真实 token"),
    "nb04_pad_share": from_notebook("04_cache_sizing.ipynb", r"real tokens \(([\d.]+%) padding\)", zh=r"个真实 token（填充占 ([\d.]+%)）"),
    "nb04_pad_reserved": from_notebook("04_cache_sizing.ipynb", r"the batch's Llama-3-8B cache \(bfloat16\): ([\d.]+ GiB) for",
                                       zh=r"这个批的 Llama-3-8B 缓存（bfloat16）：共 ([\d.]+ GiB)"),
    "nb04_pad_real": from_notebook("04_cache_sizing.ipynb", r"GiB for ([\d.]+ GiB) of real tokens",
                                   zh=r"真实 token 只占 ([\d.]+ GiB)"),
    "nb04_pad_fit": from_notebook("04_cache_sizing.ipynb", r"% padding: (\d+) fit;", zh=r"填充占 [\d.]+%：能容纳 (\d+) 个；"),
    "nb04_pad_bytes": from_notebook("04_cache_sizing.ipynb", r"% padding: \d+ fit; ([\d.]+ GiB) of their",
                                    zh=r"能容纳 \d+ 个；它们 [\d.]+ GiB 的缓存中有 ([\d.]+ GiB) 存的是填充"),
    "nb04_pad_cache": from_notebook("04_cache_sizing.ipynb", r"% padding: \d+ fit; [\d.]+ GiB of their ([\d.]+ GiB)",
                                    zh=r"能容纳 \d+ 个；它们 ([\d.]+ GiB) 的缓存中"),
    "nb04_pad_real_tokens": from_notebook("04_cache_sizing.ipynb", r"holding only their real tokens \(([\d,]+) each\)",
                                          zh=r"如果每个请求只存自己的真实 token（各 ([\d,]+) 个）"),
    "nb04_pad_fit_real_only": from_notebook("04_cache_sizing.ipynb", r"each\), (\d+) requests would fit",
                                            zh=r"只存自己的真实 token（各 [\d,]+ 个），能容纳 (\d+) 个请求"),
    # --- 05 ---
    "nb05_vocab": from_notebook("05_sampling_and_stopping.ipynb", r"course model: .*?V=(\d+)", zh=r"课程模型：.*?V=(\d+)"),
    "nb05_p_cat": from_notebook("05_sampling_and_stopping.ipynb", r"\ncats\s+([\d.]+)\s+[\d.]+", zh=r"\n猫\s+([\d.]+)\s+[\d.]+"),
    "nb05_t05_p_cat": from_notebook("05_sampling_and_stopping.ipynb", r"τ = 0\.5\s+p\(cats\) = ([\d.]+)", zh=r"τ = 0\.5\s+p\(猫\) = ([\d.]+)"),
    "nb05_t2_p_cat": from_notebook("05_sampling_and_stopping.ipynb", r"τ = 2\.0\s+p\(cats\) = ([\d.]+)", zh=r"τ = 2\.0\s+p\(猫\) = ([\d.]+)"),
    # float32 rounds the least likely tokens' probabilities to 0 at a low temperature
    "nb05_underflow_t": from_notebook("05_sampling_and_stopping.ipynb", r"so below τ = ([\d.]+) the least likely",
                                      zh=r"所以 τ 低于 ([\d.]+) 时"),
    **{f"nb05_t{name}_float32_left": from_notebook("05_sampling_and_stopping.ipynb",
                                                   rf"τ = {T}\s+tokens with p > 0: float32\s+(\d+) of",
                                                   zh=rf"τ = {T}\s+p > 0 的 token：float32\s+(\d+) /")
       for name, T in (("01", r"0\.1"), ("005", r"0\.05"))},
    # the same counts with subnormals flushed to 0 (emulated in the notebook), as many GPU kernels do
    **{f"nb05_t{name}_float32_ftz_left": from_notebook("05_sampling_and_stopping.ipynb",
                                                       rf"τ = {T}\s+tokens with p > 0: float32\s+\d+ of \d+ \(subnormals flushed:\s+(\d+)\)",
                                                       zh=rf"τ = {T}\s+p > 0 的 token：float32\s+\d+ / \d+（次正规数清零后\s*(\d+)）")
       for name, T in (("01", r"0\.1"), ("005", r"0\.05"))},
    "nb05_t05_entropy": from_notebook("05_sampling_and_stopping.ipynb", r"τ = 0\.5 .*?entropy = ([\d.]+) nats",
                                      zh=r"τ = 0\.5 .*?熵 = ([\d.]+) nats?"),
    "nb05_t1_entropy": from_notebook("05_sampling_and_stopping.ipynb", r"τ = 1\.0 .*?entropy = ([\d.]+) nats",
                                     zh=r"τ = 1\.0 .*?熵 = ([\d.]+) nats?"),
    "nb05_t2_entropy": from_notebook("05_sampling_and_stopping.ipynb", r"τ = 2\.0 .*?entropy = ([\d.]+) nats",
                                     zh=r"τ = 2\.0 .*?熵 = ([\d.]+) nats?"),
    "nb05_topp_kept_like": from_notebook("05_sampling_and_stopping.ipynb",
                                         r"after “<BOS> I like”\n+.*\n+  top_p=0\.9 keeps\s+(\d+)", zh=r"“<BOS> 我 喜欢”之后\n+.*\n+  top_p=0\.9 保留\s+(\d+)"),
    "nb05_topp_kept_bos": from_notebook("05_sampling_and_stopping.ipynb",
                                        r"after “<BOS>”\n+.*\n+  top_p=0\.9 keeps\s+(\d+)", zh=r"“<BOS>”之后\n+.*\n+  top_p=0\.9 保留\s+(\d+)"),
    # the share of grammatical documents from <BOS>, with and without top-p (notebook 05, section 3)
    "nb05_gram_n": from_notebook("05_sampling_and_stopping.ipynb", r"τ = 1 +\d+ of (\d+) documents grammatical",
                                 zh=r"τ = 1 +(\d+) 篇中 +\d+ 篇合乎语法"),
    **{f"nb05_gram_{name}": from_notebook("05_sampling_and_stopping.ipynb", rf"{T} +(\d+) of \d+ documents grammatical",
                                          zh=rf"{T} +\d+ 篇中 +(\d+) 篇合乎语法")
       for name, T in (("t1", r"τ = 1"), ("t15", r"τ = 1\.5"), ("t15_topp", r"τ = 1\.5, top_p = 0\.9"),
                       ("t2", r"τ = 2"), ("t2_topp", r"τ = 2, top_p = 0\.9"))},
    "nb05_panel_kept": from_notebook("05_sampling_and_stopping.ipynb", r"kept set: (\d+) of \d+ tokens", zh=r"保留集合：\d+ 个 token 中的 (\d+) 个"),
    "nb05_panel_mass": from_notebook("05_sampling_and_stopping.ipynb", r"holding ([\d.]+) after temperature and top-k",
                                     zh=r"保留集合：.*?top-k 之后.*?合计 ([\d.]+)"),
    "nb05_panel_one_fewer": from_notebook("05_sampling_and_stopping.ipynb", r"tokens alone hold only ([\d.]+)",
                                          zh=r"个 token，合计只有 ([\d.]+)"),
    "nb05_step_t1_two": from_notebook("05_sampling_and_stopping.ipynb", r"τ = 1 +kept set.*?two ([\d.]+)",
                                      zh=r"τ = 1 +保留集合.*?two ([\d.]+)"),
    "nb05_step_t1_a": from_notebook("05_sampling_and_stopping.ipynb", r"τ = 1 +kept set.*?, a ([\d.]+)", zh=r"τ = 1 +保留集合.*?，a ([\d.]+)"),
    "nb05_step_t1_three": from_notebook("05_sampling_and_stopping.ipynb", r"τ = 1 +kept set.*?three ([\d.]+)",
                                        zh=r"τ = 1 +保留集合.*?three ([\d.]+)"),
    "nb05_step_nucleus_two": from_notebook("05_sampling_and_stopping.ipynb", r"top_p = 0\.6 +kept set.*?two ([\d.]+)",
                                           zh=r"top_p = 0\.6 +保留集合.*?two ([\d.]+)"),
    "nb05_step_nucleus_a": from_notebook("05_sampling_and_stopping.ipynb", r"top_p = 0\.6 +kept set.*?, a ([\d.]+)",
                                         zh=r"top_p = 0\.6 +保留集合.*?，a ([\d.]+)"),
    "nb05_naive_kept": from_notebook("05_sampling_and_stopping.ipynb", r"a test `mass ranked before it < 1` keeps (\d+) of",
                                     zh=r"个 token 只保留 (\d+) 个"),
    "nb05_seeds_agree": from_notebook("05_sampling_and_stopping.ipynb", r"(\d+ of \d+) seeds: the same tokens",
                                      zh=r"(\d+ / \d+) 个种子"),
    "nb05_eos_length": from_notebook("05_sampling_and_stopping.ipynb", r"row 0: eos +length (\d+)", zh=r"第 0 行：eos +长度 (\d+)"),
    "nb05_stop_string_length": from_notebook("05_sampling_and_stopping.ipynb", r"row 0: stop_string +length (\d+)",
                                             zh=r"第 0 行：stop_string +长度 (\d+)"),
    "nb05_batch_shape": from_notebook("05_sampling_and_stopping.ipynb", r"input_ids \[B, T\] = (\[\d+, \d+\])",
                                      zh=r"input_ids \[B, T\] = (\[\d+, \d+\])"),
    "nb05_batch_lengths": from_notebook("05_sampling_and_stopping.ipynb", r"lengths: +(\[[\d, ]+\])", zh=r"lengths: +(\[[\d, ]+\])"),
    **{f"nb05_example_{what}_t{T:g}": _nucleus_example(T, what)
       for T in (1.0, 2.0) for what in ("probs", "cumsum", "kept", "n_kept", "kept_filter_first")},
    # top_p = 0.9 after "我 喜欢": tokens kept with the temperature first and with the filter first
    **{f"nb05_order_{key}_t{name}": from_notebook("05_sampling_and_stopping.ipynb", rf"τ = {T}\s+tokens kept: " + pattern,
                                                 zh=rf"τ = {T}\s+保留的 token 数：" + zh)
       for name, T in (("05", 0.5), ("1", 1.0), ("2", 2.0), ("4", 4.0))
       for key, pattern, zh in (("temp_first", r"temperature first\s+(\d+)", r"先温度\s+(\d+)"),
                                ("filter_first", r".*?filtering first\s+(\d+)", r".*?先过滤\s+(\d+)"))},
    # --- 06 ---
    "nb06_course_model": from_notebook("06_performance_metrics.ipynb",
                                       r"course model: (L=\d+, C=\d+, H=\d+, H_kv=\d+, d_h=\d+, V=\d+), [\d,]+ parameters",
                                       zh=r"课程模型：(L=\d+, C=\d+, H=\d+, H_kv=\d+, d_h=\d+, V=\d+)，共 [\d,]+ 个参数"),
    "nb06_course_params": from_notebook("06_performance_metrics.ipynb", r"course model: .*?, ([\d,]+) parameters",
                                        zh=r"课程模型：.*?，共 ([\d,]+) 个参数"),
    "nb06_ex_latency_s": from_notebook("06_performance_metrics.ipynb", r"latency    = TTFT .*? = ([\d.]+) s",
                                       zh=r"端到端延迟\s+= TTFT .*? = ([\d.]+) s"),
    "nb06_ex_throughput": from_notebook("06_performance_metrics.ipynb", r"throughput = B x n / latency .*? = ([\d.]+) tokens/s",
                                        zh=r"吞吐量\s+= B x n / 端到端延迟 .*? = ([\d.]+) tokens/s"),
    "nb06_ex_decode_throughput": from_notebook("06_performance_metrics.ipynb", r"while decoding, B / TPOT .*? = (\d+) tokens/s",
                                               zh=r"解码阶段吞吐量 = B / TPOT .*? = (\d+) tokens/s"),
    "nb06_ex_kv_bytes": from_notebook("06_performance_metrics.ipynb", r"B=8, T=256, float32: .*? = ([\d,]+) bytes",
                                      zh=r"B=8, T=256, float32：.*? = ([\d,]+) 字节"),
    "nb06_ttft_ms": from_notebook("06_performance_metrics.ipynb", r"TTFT ([\d.]+) ms \| TPOT", zh=r"TTFT ([\d.]+) ms \| TPOT"),
    "nb06_tpot_ms": from_notebook("06_performance_metrics.ipynb", r"TTFT [\d.]+ ms \| TPOT ([\d.]+) ms",
                                  zh=r"TTFT [\d.]+ ms \| TPOT ([\d.]+) ms"),
    "nb06_latency_ms": from_notebook("06_performance_metrics.ipynb", r"\| latency ([\d.]+) ms \| throughput",
                                     zh=r"\| 延迟 ([\d.]+) ms \| 吞吐量"),
    "nb06_throughput": from_notebook("06_performance_metrics.ipynb", r"\| latency [\d.]+ ms \| throughput (\d+) tokens/s",
                                     zh=r"\| 延迟 [\d.]+ ms \| 吞吐量 (\d+) tokens/s"),
    "nb06_n_tokens": from_notebook("06_performance_metrics.ipynb", r"new tokens n: (\d+) \|", zh=r"新 token 数 n = (\d+) \|"),
    "nb06_tpot_samples": from_notebook("06_performance_metrics.ipynb", r"gaps between them: (\d+)", zh=r"它们之间的间隔数 = (\d+)"),
    # TPOT and ITL from the same gaps (section 2), and one made-up 20 ms stall
    "nb06_itl_tpot_ms": from_notebook("06_performance_metrics.ipynb", r"TPOT ([\d.]+) ms \| ITL over",
                                      zh=r"TPOT ([\d.]+) ms \| \d+ 个间隔的 ITL"),
    "nb06_itl_median_ms": from_notebook("06_performance_metrics.ipynb", r"ITL over \d+ gaps: median ([\d.]+)",
                                        zh=r"\d+ 个间隔的 ITL：中位数 ([\d.]+)"),
    "nb06_itl_p99_ms": from_notebook("06_performance_metrics.ipynb", r"ITL over \d+ gaps: .*?p99 ([\d.]+)",
                                     zh=r"\d+ 个间隔的 ITL：.*?p99 ([\d.]+)"),
    "nb06_itl_max_ms": from_notebook("06_performance_metrics.ipynb", r"ITL over \d+ gaps: .*?max ([\d.]+) ms",
                                     zh=r"\d+ 个间隔的 ITL：.*?最大值 ([\d.]+) ms"),
    "nb06_stall_tpot_ms": from_notebook("06_performance_metrics.ipynb", r"with one 20 ms stall: TPOT ([\d.]+) ms",
                                        zh=r"加入一次 20 ms 的卡顿后：TPOT ([\d.]+) ms"),
    "nb06_stall_p99_ms": from_notebook("06_performance_metrics.ipynb", r"with one 20 ms stall: .*?ITL p99 ([\d.]+) ms",
                                       zh=r"加入一次 20 ms 的卡顿后：.*?ITL p99 ([\d.]+) ms"),
    "nb06_stall_max_ms": from_notebook("06_performance_metrics.ipynb", r"with one 20 ms stall: .*?max ([\d.]+) ms",
                                       zh=r"加入一次 20 ms 的卡顿后：.*?最大值 ([\d.]+) ms"),
    "nb06_stall_median_ms": from_notebook("06_performance_metrics.ipynb", r"with one 20 ms stall: .*?ITL median ([\d.]+) ms",
                                          zh=r"加入一次 20 ms 的卡顿后：.*?ITL 中位数 ([\d.]+) ms"),
    "nb06_wall_ms": from_notebook("06_performance_metrics.ipynb", r"the call from outside ([\d.]+) ms", zh=r"从外部计时的整个调用 ([\d.]+) ms"),
    "nb06_kv_T": from_notebook("06_performance_metrics.ipynb", r"KV memory for T=(\d+):", zh=r"T=(\d+) 时的 KV 内存："),
    "nb06_kv_bytes": from_notebook("06_performance_metrics.ipynb", r"KV memory for T=\d+: ([\d,]+) bytes",
                                   zh=r"T=\d+ 时的 KV 内存：([\d,]+) 字节"),
    "nb06_small_shape": from_notebook("06_performance_metrics.ipynb", r"'small': (L=\d+, C=\d+, H=\d+, H_kv=\d+, V=\d+)",
                                      zh=r"'small'：(L=\d+, C=\d+, H=\d+, H_kv=\d+, V=\d+)"),
    "nb06_small_params": from_notebook("06_performance_metrics.ipynb", r"'small': .*?, ([\d.]+) M parameters",
                                       zh=r"'small'：.*?，([\d.]+) M 个?参数"),
    # the TTFT / TPOT table of section 3, one fact per (column, T) the lesson quotes
    **{f"nb06_{col}_{T}": from_notebook("06_performance_metrics.ipynb", r"TPOT cache  no cache[^\n]*\n(?:[^\n]*\n)*?\s*" + row,
                                        zh=r"TPOT 有缓存\s+无缓存[^\n]*\n(?:[^\n]*\n)*?\s*" + row)
       for T in (32, 512) for i, col in enumerate(("ttft_cached", "ttft_no_cache", "tpot_cached", "tpot_no_cache"))
       for row in [str(T) + r" \|\s+{}\s+{} \|\s+{}\s+{}\n".format(*[r"([\d.]+)" if j == i else r"[\d.]+" for j in range(4)])]},
    "nb06_tpot_speedup": from_notebook("06_performance_metrics.ipynb", r"a decode step without the cache takes (\d+)x",
                                       zh=r"不带缓存的一个解码步耗时是带缓存的 (\d+) 倍"),
    "nb06_speedup_T": from_notebook("06_performance_metrics.ipynb", r"at T=(\d+), a decode step without the cache",
                                    zh=r"T=(\d+) 时，不带缓存的一个解码步"),
    "nb06_flat_same": from_notebook("06_performance_metrics.ipynb", r"same logits, bit for bit: (\w+)", zh=r"logits 逐位相同：(\w+)"),
    "nb06_modules_ms": from_notebook("06_performance_metrics.ipynb", r"module by module ([\d.]+) ms", zh=r"逐模块 ([\d.]+) ms"),
    "nb06_flat_ms": from_notebook("06_performance_metrics.ipynb", r"module by module [\d.]+ ms, flat ([\d.]+) ms",
                                  zh=r"逐模块 [\d.]+ ms，扁平写法 ([\d.]+) ms"),
    "nb06_flat_speedup": from_notebook("06_performance_metrics.ipynb", r"the module step took ([\d.]+)x the flat one",
                                       zh=r"逐模块一步的耗时是扁平写法的 ([\d.]+) 倍"),
    "nb06_python_share": from_notebook("06_performance_metrics.ipynb", r"the module calls alone: about (\d+%) of the module step",
                                       zh=r"光是模块调用约占逐模块一步的 (\d+%)"),
    # bytes per batch-1 decode step (section 4), T = 256, float32
    **{f"nb06_bytes_{key}_{what}": from_notebook("06_performance_metrics.ipynb", rf"(?m)^\s*{name}: " + pattern, zh=rf"(?m)^\s*{name}：" + zh)
       for key, name in (("small", "small"), ("50m", "50M"), ("100m", "100M"))
       for what, pattern, zh in (("weights", r".*?weights\s+([\d.]+) MB", r".*?权重\s+([\d.]+) MB"),
                                 ("total", r".*?kB =\s+([\d.]+) MB", r".*?kB =\s+([\d.]+) MB"),
                                 ("flop_per_byte", r".*?([\d.]+) FLOP per byte", r".*?每字节 ([\d.]+) FLOP"))},
    "nb06_50m_params": from_notebook("06_performance_metrics.ipynb", r"(?m)^\s*50M: .*?\|\s+([\d.]+) M params",
                                     zh=r"(?m)^\s*50M：.*?\|\s*([\d.]+) M 个?参数"),
    "nb06_50m_kv_read": from_notebook("06_performance_metrics.ipynb", r"(?m)^\s*50M: .*?KV read ([\d.]+) MB",
                                      zh=r"(?m)^\s*50M：.*?读 KV ([\d.]+) MB"),
    "nb06_step_ms": from_notebook("06_performance_metrics.ipynb", r"decode step ([\d.]+) ms for", zh=r"解码步 ([\d.]+) ms，读取"),
    "nb06_step_mb": from_notebook("06_performance_metrics.ipynb", r"decode step [\d.]+ ms for (\d+) MB", zh=r"解码步 [\d.]+ ms，读取 (\d+) MB"),
    "nb06_achieved_gbps": from_notebook("06_performance_metrics.ipynb", r"decode step .*? -> ([\d.]+) GB/s",
                                        zh=r"解码步 [\d.]+ ms，读取 .*? -> ([\d.]+) GB/s"),
    "nb06_copy_gbps": from_notebook("06_performance_metrics.ipynb", r"measured: copy ([\d.]+) GB/s", zh=r"实测：复制 ([\d.]+) GB/s"),
    "nb06_sum_gbps": from_notebook("06_performance_metrics.ipynb", r"measured: copy .*?, sum ([\d.]+) GB/s",
                                   zh=r"实测：复制 .*?，求和 ([\d.]+) GB/s"),
    "nb06_fraction": from_notebook("06_performance_metrics.ipynb", r"the step reaches (\d+%) of the limit", zh=r"这一步达到上限的 (\d+%)"),
    "nb06_bound_ms": from_notebook("06_performance_metrics.ipynb", r"fastest possible step ([\d.]+) ms", zh=r"一步最快也要 ([\d.]+) ms"),
    # the parts of a waiting request's TTFT (section 2)
    **{f"nb06_parts_{key}": from_notebook("06_performance_metrics.ipynb", pattern, zh=zh) for key, pattern, zh in (
        ("arrival_ms", r"request 1 arrives at ([\d.]+) ms", r"请求 1 在 ([\d.]+) ms 时到达"),
        ("wait_ms", r"request 1 arrives at .*?waiting ([\d.]+) ms", r"请求 1 在 .*?排队等待 ([\d.]+) ms"),
        ("prefill_ms", r"setup and prefill ([\d.]+) ms \+ first", r"准备与预填充 ([\d.]+) ms \+ 第一次采样"),
        ("sample_ms", r"first sampling ([\d.]+) ms = TTFT", r"第一次采样 ([\d.]+) ms = TTFT"),
        ("ttft_ms", r"first sampling [\d.]+ ms = TTFT ([\d.]+) ms", r"第一次采样 [\d.]+ ms = TTFT ([\d.]+) ms"))},
    # the roofline of the 50M model on this machine's measured roofs (section 5)
    "nb06_roof_gflops": from_notebook("06_performance_metrics.ipynb", r"this machine: (\d+) GFLOP/s", zh=r"本机：(\d+) GFLOP/s"),
    "nb06_roof_gbps": from_notebook("06_performance_metrics.ipynb", r"this machine: \d+ GFLOP/s \(matmul\), ([\d.]+) GB/s",
                                    zh=r"本机：\d+ GFLOP/s（矩阵乘），([\d.]+) GB/s"),
    "nb06_roof_ridge": from_notebook("06_performance_metrics.ipynb", r"its ridge is ([\d.]+) FLOPs per byte",
                                     zh=r"本机：.*?脊点为每字节 ([\d.]+) FLOPs"),
    "nb06_roof_ridge_ratio": from_notebook("06_performance_metrics.ipynb", r"its ridge is [\d.]+ FLOPs per byte, (\d+)x the",
                                           zh=r"本机：.*?是批大小为 1 的一步（[\d.]+）的 (\d+) 倍"),
    # (the bound comes out in the notebook's words: "memory" in English, "访存受限" in Chinese)
    **{f"nb06_roof_b{B}_{key}": from_notebook("06_performance_metrics.ipynb", rf"B=\s*{B}: " + pattern, zh=rf"B=\s*{B}：" + zh)
       for B in (1, 64) for key, pattern, zh in (
           ("mb", r"([\d.]+) MB and", r"每步 ([\d.]+) MB、"), ("gflop", r"[\d.]+ MB and\s+([\d.]+) GFLOP", r"每步 [\d.]+ MB、\s*([\d.]+) GFLOP"),
           ("memory_ms", r".*?memory\s+([\d.]+) ms", r".*?访存\s+([\d.]+) ms"),
           ("compute_ms", r".*?compute\s+([\d.]+) ms", r".*?计算\s+([\d.]+) ms"),
           ("tpot_ms", r".*?TPOT >=\s+([\d.]+) ms", r".*?TPOT >=\s+([\d.]+) ms"),
           ("bound_by", r".*?\((\w+)-bound\)", r".*?（(\w+受限)）"),
           ("tokens_per_s", r".*?<= ([\d,]+) tokens/s", r".*?<= ([\d,]+) tokens/s"))},
    "nb06_ridge_batch": from_notebook("06_performance_metrics.ipynb", r"the two roofs cross at the ridge batch B = (\d+)",
                                      zh=r"两个屋顶在脊点批大小 B = (\d+) 处相交"),
    "nb06_memonly_tokens_per_s": from_notebook("06_performance_metrics.ipynb", r"the memory roof alone would allow ([\d,]+) tokens/s",
                                               zh=r"只看访存屋顶，B = \d+ 时可达 ([\d,]+) tokens/s"),
    "nb06_memonly_tflops": from_notebook("06_performance_metrics.ipynb", r"that takes ([\d.]+) TFLOP/s",
                                         zh=r"只看访存屋顶，.*?这需要 ([\d.]+) TFLOP/s"),
    "nb06_memonly_ratio": from_notebook("06_performance_metrics.ipynb", r"TFLOP/s, (\d+)x what this core computes",
                                        zh=r"TFLOP/s，是这个核心算力的 (\d+) 倍"),
    "nb06_bf16_flop_per_byte": from_notebook("06_performance_metrics.ipynb", r"in bfloat16 the 50 M model's step at B = 64 does ([\d.]+) FLOPs per byte",
                                             zh=r"在 bfloat16 下，50 M 模型在 B = 64 时的一步每字节做 ([\d.]+) FLOPs"),
    "nb06_gpu_ridge_a100": from_notebook("06_performance_metrics.ipynb", r"a GPU's ridge: .*?A100 (\d+)", zh=r"GPU 的脊点：.*?A100 (\d+)"),
    "nb06_gpu_ridge_h100": from_notebook("06_performance_metrics.ipynb", r"a GPU's ridge: .*?H100 (\d+)", zh=r"GPU 的脊点：.*?H100 (\d+)"),
    # the batch sweeps of the 50M and the 'small' model (section 5): first and last B, the fit, the regimes
    # (the rows print alike in both languages)
    **{f"nb06_sweep_{key}_b{B}_{col}": from_notebook("06_performance_metrics.ipynb", row, zh=row)
       for key, name, Bs in (("50m", "50M", (1, 32)), ("small", "small", (1, 32))) for B in Bs
       for i, col in enumerate(("ttft_ms", "tpot_ms", "latency_ms", "throughput", "decode_tps"))
       for row in [rf"(?m)^\s*{name}\s+{B} \|" + r"\s+[\d.]+ \|" * i + r"\s+([\d.]+)"]},
    **{f"nb06_fit_{key}_{what}": from_notebook("06_performance_metrics.ipynb", rf"'{name}', B >= 4: TPOT ≈ " + pattern,
                                               zh=rf"'{name}'，B >= 4：TPOT ≈ " + zh)
       for key, name in (("50m", "50M"), ("small", "small")) for what, pattern, zh in (
           ("fixed_ms", r"([\d.]+) ms", r"([\d.]+) ms"), ("per_row_ms", r"[\d.]+ ms \+ ([\d.]+) ms x B", r"[\d.]+ ms \+ ([\d.]+) ms x B"),
           ("rows", r".*?the fixed part worth (\d+) rows", r".*?固定部分相当于 (\d+) 行"),
           ("line_b1_ms", r".*?at B = 1 the line says ([\d.]+) ms", r".*?B = 1 时直线给出 ([\d.]+) ms"))},
    **{f"nb06_sweep_{key}_b{B}_{what}": from_notebook("06_performance_metrics.ipynb", rf"'{name}' decoding, B = +{B} against B = 1: " + pattern,
                                                      zh=rf"'{name}' 解码阶段，B = +{B} 对比 B = 1：" + zh)
       for key, name, Bs in (("50m", "50M", (4, 32)), ("small", "small", (4, 32))) for B in Bs
       for what, pattern, zh in (("decode_gain", r"([\d.]+)x the tokens/s", r"tokens/s 为 ([\d.]+) 倍"),
                                 ("tpot_ratio", r"[\d.]+x the tokens/s, ([\d.]+)x each request's TPOT",
                                  r"tokens/s 为 [\d.]+ 倍，每个请求的 TPOT 为 ([\d.]+) 倍"))},
    **{f"nb06_regime_{key}_{what}": from_notebook("06_performance_metrics.ipynb", rf"'{name}': B = 1 measured " + pattern,
                                                  zh=rf"'{name}'：B = 1 实测 " + zh)
       for key, name in (("50m", "50M"), ("small", "small")) for what, pattern, zh in (
           ("memory_ms", r"[\d.]+ ms against the memory roof's ([\d.]+) ms", r"[\d.]+ ms，访存屋顶给出 ([\d.]+) ms"),
           ("gbps", r".*?bytes / measured step: ([\d.]+) GB/s", r".*?字节数 / 实测一步 = ([\d.]+) GB/s"),
           ("fraction", r".*?GB/s, (\d+%) of the memory roof", r".*?是访存屋顶的 (\d+%)"),
           ("compute_ms", r".*?against the compute roof's ([\d.]+) ms", r".*?算力屋顶给出 ([\d.]+) ms"),
           ("mflop", r".*?for its (\d+) MFLOP", r".*?（对应 (\d+) MFLOP）"))},
    # what makes a step of the 'small' model cost the same for many rows (section 5)
    "nb06_twin_small_ms": from_notebook("06_performance_metrics.ipynb", r"one decode step at B = 1: 'small' ([\d.]+) ms",
                                        zh=r"B = 1 时的一个解码步：'small' ([\d.]+) ms"),
    "nb06_twin_thin_ms": from_notebook("06_performance_metrics.ipynb", r"one decode step at B = 1: .*?thin twin ([\d.]+) ms",
                                       zh=r"B = 1 时的一个解码步：'small' .*?参数），\S+ ([\d.]+) ms"),
    "nb06_twin_thin_params": from_notebook("06_performance_metrics.ipynb", r"thin twin [\d.]+ ms \(([\d,]+) parameters\)",
                                           zh=r"B = 1 时的一个解码步：'small' .*? [\d.]+ ms（([\d,]+) 个参数）"),
    "nb06_twin_overhead": from_notebook("06_performance_metrics.ipynb", r"per-operation overhead: about (\d+%)",
                                        zh=r"每个算子的固定开销：约占 'small' 一步的 (\d+%)"),
    # requests arriving over time, served three ways (section 6)
    "nb06_arr_n": from_notebook("06_performance_metrics.ipynb", r"(\d+) requests: prompts of", zh=r"(\d+) 个请求：提示词"),
    "nb06_arr_prompts": from_notebook("06_performance_metrics.ipynb", r"requests: prompts of (\d+-\d+) tokens",
                                      zh=r"个请求：提示词 (\d+-\d+) 个 token"),
    "nb06_arr_new": from_notebook("06_performance_metrics.ipynb", r"tokens, (\d+-\d+) new tokens each", zh=r"每个要 (\d+-\d+) 个新 token"),
    "nb06_arr_capacity": from_notebook("06_performance_metrics.ipynb", r"a capacity of ([\d.]+) requests/s",
                                       zh=r"处理能力为 ([\d.]+) requests/s"),
    "nb06_arr_quiet_rate": from_notebook("06_performance_metrics.ipynb", r"quiet = (\d+) requests/s", zh=r"低负载 (\d+) requests/s"),
    "nb06_arr_busy_rate": from_notebook("06_performance_metrics.ipynb", r"busy = (\d+) requests/s", zh=r"高负载 (\d+) requests/s"),
    **{f"nb06_arr_{load}_{policy}_{col}": from_notebook("06_performance_metrics.ipynb", rf"(?m)^{load}\s+{re.escape(name)}\s*" + cells,
                                                        zh=rf"(?m)^{load_zh}\s+{re.escape(name_zh)}\s*" + cells)
       for load, load_zh in (("quiet", "低负载"), ("busy", "高负载"))
       for policy, name, name_zh in (("fifo", "one at a time (FIFO)", "逐个处理（FIFO）"), ("static", "static batches", "静态批处理"),
                                     ("continuous", "continuous batching", "连续批处理"))
       for i, col in enumerate(("ttft_p50", "ttft_p95", "tpot_p50", "tpot_p95", "itl_p50", "itl_p95", "e2e_p50", "e2e_p95",
                                "tps", "rps", "busy_tps"))
       for cells in [r"[\s|]+[\d.,]+" * i + r"[\s|]+([\d.,]+)"]},
    "nb06_arr_ttft_ratio": from_notebook("06_performance_metrics.ipynb", r"the static batches' median TTFT is ([\d.]+)x as long",
                                         zh=r"静态批处理的 TTFT 中位数是后者的 ([\d.]+) 倍"),
    # continuous batching's TPOT at the busy rate: sharing the steps against the stalls of the joins
    "nb06_gap_join_ms": from_notebook("06_performance_metrics.ipynb", r"busy, replayed: median gap ([\d.]+) ms with another",
                                      zh=r"夹着别的请求预填充的间隔，中位数 ([\d.]+) ms"),
    "nb06_gap_clean_ms": from_notebook("06_performance_metrics.ipynb", r"prefill in it \(\d+ gaps\), ([\d.]+) ms without",
                                       zh=r"没有夹的，中位数 ([\d.]+) ms"),
    "nb06_gap_join_n": from_notebook("06_performance_metrics.ipynb", r"prefill in it \((\d+) gaps\)", zh=r"预填充的间隔，中位数 [\d.]+ ms（(\d+) 个间隔）"),
    "nb06_gap_total": from_notebook("06_performance_metrics.ipynb", r"\d+ of (\d+) gaps \(\d+%\) hold a join", zh=r"(\d+) 个间隔中有 \d+ 个（\d+%）夹着加入"),
    "nb06_gap_share": from_notebook("06_performance_metrics.ipynb", r"\d+ of \d+ gaps \((\d+%)\) hold a join", zh=r"\d+ 个间隔中有 \d+ 个（(\d+%)）夹着加入"),
    "nb06_llama_ridge_a100": from_notebook("06_performance_metrics.ipynb", r"Llama-3-8B, bfloat16, T = 256: compute-bound from B = (\d+) on an A100",
                                           zh=r"A100 上从 B = (\d+) 起计算受限"),
    "nb06_fit_50m_intercept_ratio": from_notebook("06_performance_metrics.ipynb", r"'50M': the intercept [\d.]+ ms is ([\d.]+)x the whole",
                                                  zh=r"'50M'：截距 [\d.]+ ms 是实测 B = 1 整整一步的 ([\d.]+) 倍"),
    "nb06_llama_ridge_h100": from_notebook("06_performance_metrics.ipynb", r"Llama-3-8B, bfloat16, .*?B = (\d+) on an H100",
                                           zh=r"H100 上从 B = (\d+) 起计算受限"),
    "nb06_llc_mb": from_notebook("06_performance_metrics.ipynb", r"this CPU's last-level cache: ([\d.]+) MB", zh=r"本机最后一级缓存：([\d.]+) MB"),
    "nb06_thin_vs_50m": from_notebook("06_performance_metrics.ipynb", r"the thin twin's overhead is (\d+%) of it",
                                      zh=r"精简版模型的开销只占它的 (\d+%)"),
    **{f"nb06_split_{key}": from_notebook("06_performance_metrics.ipynb", r"continuous batching, busy, replayed: " + pattern,
                                          zh=r"连续批处理，高负载，回放：" + zh)
       for key, pattern, zh in (("tpot_ms", r"TPOT p50 ([\d.]+) ms", r"TPOT p50 ([\d.]+) ms"),
                                ("no_stalls_ms", r".*?, ([\d.]+) ms without the gaps", r".*?去掉含有加入的间隔后为 ([\d.]+) ms"),
                                ("fifo_ms", r".*?one at a time ([\d.]+) ms", r".*?逐个处理为 ([\d.]+) ms"),
                                ("shared", r".*?sharing the steps makes (\d+%)", r".*?共享解码步占 (\d+%)"),
                                ("stalls", r".*?the stalls (\d+%)", r".*?卡顿占 (\d+%)"))},
    # the replayed costs: the mean decode step per row count, and StepCostModel's fitted straight line
    **{f"nb06_cost_decode_{rows}row_ms": from_notebook("06_performance_metrics.ipynb",
                                                       rf"decode step, mean per row count: .*?\b{rows}: ([\d.]+)",
                                                       zh=rf"解码步，按行数取平均：.*?\b{rows} 行 ([\d.]+)")
       for rows in (1, 2)},
    # the most rows a decode step carried in those runs (how many depends on how the arrivals fell), and its mean
    "nb06_cost_decode_most_rows": from_notebook("06_performance_metrics.ipynb",
                                                r"decode step, mean per row count: .*\b(\d+): [\d.]+ ms \(the fitted straight",
                                                zh=r"解码步，按行数取平均：.*\b(\d+) 行 [\d.]+ ms（拟合的直线"),
    "nb06_cost_decode_most_ms": from_notebook("06_performance_metrics.ipynb",
                                              r"decode step, mean per row count: .*\b\d+: ([\d.]+) ms \(the fitted straight",
                                              zh=r"解码步，按行数取平均：.*\b\d+ 行 ([\d.]+) ms（拟合的直线"),
    "nb06_cost_line_1row_ms": from_notebook("06_performance_metrics.ipynb", r"the fitted straight line says ([\d.]+) ms for one row",
                                            zh=r"拟合的直线给出：1 行 ([\d.]+) ms"),
    "nb06_cost_line_most_ms": from_notebook("06_performance_metrics.ipynb",
                                            r"the fitted straight line says [\d.]+ ms for one row, ([\d.]+) ms for \d+\)",
                                            zh=r"拟合的直线给出：1 行 [\d.]+ ms，\d+ 行 ([\d.]+) ms"),
    "nb06_cost_join_ms": from_notebook("06_performance_metrics.ipynb", r"joining a batch ([\d.]+) ms", zh=r"加入一个批 ([\d.]+) ms"),
    # one linear layer of the 50 M model at a few row counts: does the time bend at B = 2? (deep dive 2)
    "nb06_linear_second": from_notebook("06_performance_metrics.ipynb", r"the second row adds (\d+%) of a one-row call",
                                        zh=r"第二行增加的耗时是一行调用的 (\d+%)"),
    "nb06_linear_later": from_notebook("06_performance_metrics.ipynb", r"each row from 4 to 8 adds (\d+%)",
                                       zh=r"从 4 到 8 每多一行增加 (\d+%)"),
    # the roofline figure is drawn at the batch sweep's short context; section 5's table at T = 256
    "nb06_sweep_T_50m": from_notebook("06_performance_metrics.ipynb", r"at the sweep's T = (\d+) \(the figure\)",
                                      zh=r"扫描的上下文 T = (\d+) 时 B = \d+（图中）"),
    "nb06_ridge_batch_sweep": from_notebook("06_performance_metrics.ipynb", r"the 50 M model's ridge batch: B = (\d+) at the sweep's T",
                                            zh=r"扫描的上下文 T = \d+ 时 B = (\d+)（图中）"),
    # what a cached step at T = 512 adds over T = 32 (section 3), counted by utils.flops
    "nb06_cached_flops_growth": from_notebook("06_performance_metrics.ipynb", r"a cached step at T=\d+ against T=\d+: ([+-]\d+%) FLOPs",
                                              zh=r"带缓存的一步，T=\d+ 对比 T=\d+：FLOPs 变化 ([+-]\d+%)"),
    "nb06_cached_tpot_growth": from_notebook("06_performance_metrics.ipynb", r"bytes; measured ([+-]\d+%)",
                                             zh=r"实测耗时变化 ([+-]\d+%)"),
    "nb06_nocache_growth": from_notebook("06_performance_metrics.ipynb", r"without the cache: ([\d.]+)x\)",
                                         zh=r"不带缓存时变为 ([\d.]+) 倍"),
    "nb06_cached_bytes_growth": from_notebook("06_performance_metrics.ipynb", r"a cached step at T=\d+ against T=\d+: .*?, ([+-]\d+%) bytes",
                                              zh=r"带缓存的一步，T=\d+ 对比 T=\d+：.*?字节数变化 ([+-]\d+%)"),
    **{f"nb06_summax_b{B}_{key}": from_notebook("06_performance_metrics.ipynb", rf"(?m)^B=\s*{B}: measured " + pattern,
                                                zh=rf"(?m)^B=\s*{B}：实测 " + zh)
       for B in (16, 32) for key, pattern, zh in (("measured_ms", r"\s*([\d.]+)", r"\s*([\d.]+)"),
                                                 ("max_ms", r".*?max\(memory, compute\)\s+([\d.]+)", r".*?max\(访存, 计算\)\s+([\d.]+)"),
                                                 ("sum_ms", r".*?memory \+ compute\s+([\d.]+)", r".*?访存 \+ 计算\s+([\d.]+)"))},
    # --- 07 ---
    "nb07_prompt_T": from_notebook("07_bug_lab.ipynb", r"prompt: T = (\d+) tokens", zh=r"提示词：T = (\d+) 个 token"),
    "nb07_n_steps": from_notebook("07_bug_lab.ipynb", r"each check runs (\d+) decode steps", zh=r"每次检查运行 (\d+) 个解码步"),
    "nb07_tol": from_notebook("07_bug_lab.ipynb", r"; tolerance ([\d.]+)", zh=r"；容差 ([\d.]+)"),
    "nb07_ok_steps": from_notebook("07_bug_lab.ipynb", r"correct cache: OK: (\d+) steps equal", zh=r"正确的缓存：\s*通过：(\d+) 步都在容差"),
    # the "first divergence" column of the bug table, one fact per row
    # (in the notebook's words: "step 1 (pos 10)" in English, "第 1 步（位置 10）" in Chinese)
    **{f"nb07_first_{key}": from_notebook("07_bug_lab.ipynb", rf"(?m)^{re.escape(title)} .*\| (step \d+ \(pos \d+\)|raises at step \d+)",
                                          zh=rf"(?m)^{title_zh}.*\| (第 \d+ 步（位置 \d+）|第 \d+ 步报错)")
       for key, title, title_zh in (("positions", "Position ids restart at 0", "位置编号从 0"),
                                    ("refeed", "Prompt fed again with cache", r"有缓存还\S*提示词"),
                                    ("concat_axis", "K/V cat on the wrong axis", "K/V 拼接维度错误"),
                                    ("mask", "Mask ignores the cache", "掩码忽略了缓存"),
                                    ("padding", "Padded rows, lengths mixed", "填充批的有效长度弄混"),
                                    ("dropout", "Dropout left on (train mode)", r"dropout 没关"),
                                    ("layer0", "Layer 0's K/V for all layers", "各层都用第 0 层的 K/V"),
                                    ("beam", "Beam step without reorder", "束搜索后没有重排缓存"))},
    "nb07_hashes_equal": from_notebook("07_bug_lab.ipynb", r"use_cache changes weights\? .*\| hashes equal: (\w+)",
                                       zh=r"use_cache .*\| 哈希相同：(\w+)"),
    "nb07_fixes_pass": from_notebook("07_bug_lab.ipynb", r"with the fix: every check passes: (\w+)", zh=r"装上修复后，每项检查都通过：(\w+)"),
    "nb07_state_hash": from_notebook("07_bug_lab.ipynb", r"before: ([0-9a-f]+)", zh=r"生成之前: ([0-9a-f]+)"),
    "nb07_refeed_cache_len": from_notebook("07_bug_lab.ipynb", r"feed everything: cache length after one step = (\d+)",
                                           zh=r"一步之后的缓存长度 = (\d+)（应为"),
    "nb07_expected_cache_len": from_notebook("07_bug_lab.ipynb", r"feed the new token: cache length after one step = (\d+)",
                                             zh=r"一步之后的缓存长度为 T \+ 1：False.*\n.*?一步之后的缓存长度 = (\d+)（应为"),
    "nb07_concat_error": from_notebook("07_bug_lab.ipynb", r"(RuntimeError: Sizes of tensors must match[^\n]*)",
                                       zh=r"(RuntimeError: Sizes of tensors must match[^\n]*)"),
    "nb07_concat_t1_readable": from_notebook("07_bug_lab.ipynb", r"1-token prompt, readable attention:\s+(diverges at step \d+ \(position \d+\))",
                                             zh=r"dim=1、提示词 1 个 token、易读版注意力：\s+(第 \d+ 步（位置 \d+）出现偏差)"),
    "nb07_concat_t1_shape": from_notebook("07_bug_lab.ipynb", r"layer 0 K after one decode step: (\[[\d, ]+\])",
                                          zh=r"一个解码步之后，第 0 层的 K 为 (\[[\d, ]+\])"),
    "nb07_concat_t1_correct_shape": from_notebook("07_bug_lab.ipynb", r"layer 0 K after one decode step: .*\(correct: (\[[\d, ]+\])\)",
                                                  zh=r"一个解码步之后，第 0 层的 K 为 .*（正确形状：(\[[\d, ]+\])）"),
    "nb07_concat_t1_seq_len": from_notebook("07_bug_lab.ipynb", r"seq_len reported by the cache: (\d+)", zh=r"缓存报告的 seq_len 为 (\d+)"),
    "nb07_chunk_mask_error": from_notebook("07_bug_lab.ipynb", r"(RuntimeError: The size of tensor a[^\n]*)",
                                           zh=r"(RuntimeError: The size of tensor a[^\n]*)"),
    "nb07_beam_reshuffle_parents": from_notebook("07_bug_lab.ipynb", r"step 4: new beams continue beams (\[[\d, ]+\])",
                                                 zh=r"第 4 步：新束依次接在束 (\[[\d, ]+\]) 之后"),
    # caching hidden states instead of K/V: what it skips, what it redoes, what it stores
    **{f"nb07_{key}_{fact}": from_notebook("07_bug_lab.ipynb", rf"{name}: k_proj \+ v_proj = {pattern}",
                                           zh=rf"{name_zh}：k_proj \+ v_proj 占一层权重的 {zh}")
       for key, name, name_zh in (("course", "course model", "课程模型"), ("llama3", "Llama-3-8B", "Llama-3-8B"),
                                  ("llama2", "Llama-2-7B", "Llama-2-7B"))
       for fact, pattern, zh in (("kv_share", r"([\d.]+%)", r"([\d.]+%)"), ("reproject_T", r"[\s\S]*?once T > (\d+)", r"[\s\S]*?T > (\d+) 之后"),
                                 ("hidden_values", r"[\s\S]*?hidden state C = (\d+)", r"[\s\S]*?隐藏状态 C = (\d+)"),
                                 ("kv_values", r"[\s\S]*?K and V 2·H_kv·d_h = (\d+)", r"[\s\S]*?K 和 V 2·H_kv·d_h = (\d+)"))},
    # --- 08 ---
    "nb08_per_position_bytes": from_notebook("08_beyond_the_basics.ipynb", r"K/V of one position = (\d+) bytes",
                                             zh=r"一个位置的 K/V = (\d+) 字节"),
    "nb08_dynamic_bytes_start": from_notebook("08_beyond_the_basics.ipynb", r"dynamic: holds \d+ -> \d+ positions, bytes (\d+) ->",
                                              zh=r"(?:dynamic|动态) ?缓存：存 \d+ → \d+ 个位置，字节数 (\d+) →"),
    "nb08_dynamic_bytes_end": from_notebook("08_beyond_the_basics.ipynb", r"dynamic: holds \d+ -> \d+ positions, bytes \d+ -> (\d+)",
                                            zh=r"(?:dynamic|动态) ?缓存：存 \d+ → \d+ 个位置，字节数 \d+ → (\d+)"),
    "nb08_dynamic_new_buffers": from_notebook("08_beyond_the_basics.ipynb", r"dynamic: .*new buffers after the prefill: (\d+)",
                                              zh=r"(?:dynamic|动态) ?缓存：.*新分配的缓冲区：(\d+) 个"),
    "nb08_static_bytes": from_notebook("08_beyond_the_basics.ipynb", r"static: holds \d+ -> \d+ positions, bytes (\d+) ->",
                                       zh=r"(?:static|静态) ?缓存：存 \d+ → \d+ 个位置，字节数 (\d+) →"),
    "nb08_static_new_buffers": from_notebook("08_beyond_the_basics.ipynb", r"static: .*new buffers after the prefill: (\d+)",
                                             zh=r"(?:static|静态) ?缓存：.*新分配的缓冲区：(\d+) 个"),
    "nb08_positions_end": from_notebook("08_beyond_the_basics.ipynb", r"static: holds \d+ -> (\d+) positions",
                                        zh=r"(?:static|静态) ?缓存：存 \d+ → (\d+) 个位置"),
    "nb08_copy_allocs_512": from_notebook("08_beyond_the_basics.ipynb", r"T = 512: dynamic allocates (\d+) tensors",
                                          zh=r"T = 512：动态缓存分配 (\d+) 个张量"),
    "nb08_copy_bytes_512": from_notebook("08_beyond_the_basics.ipynb", r"T = 512: dynamic allocates \d+ tensors, ([\d.]+ \w+)",
                                         zh=r"T = 512：动态缓存分配 \d+ 个张量，共 ([\d.]+ \w+)"),
    "nb08_static_allocs": from_notebook("08_beyond_the_basics.ipynb", r"T = 512: .*; static allocates (\d+) tensors",
                                        zh=r"T = 512：.*；静态缓存分配 (\d+) 个张量"),
    "nb08_copy_faster": from_notebook("08_beyond_the_basics.ipynb", r"static step is over 10x faster than the dynamic one \(measured in this run\): (\w+)",
                                      zh=r"静态缓存的一步比动态缓存快 10 倍以上（本次运行实测）：(\w+)"),
    "nb08_reorder_positions": from_notebook("08_beyond_the_basics.ipynb", r"prompt of 13 tokens: reorder copies\s+(\d+) positions",
                                            zh=r"提示词 13 个 token：reorder 拷贝\s*(\d+) 个位置"),
    "nb08_cow_blocks": from_notebook("08_beyond_the_basics.ipynb", r"prompt of 13 tokens: .*copy-on-write copies (\d+) blocks",
                                     zh=r"提示词 13 个 token：.*写时复制复制 (\d+) 个块"),
    "nb08_cow_positions": from_notebook("08_beyond_the_basics.ipynb", r"prompt of 13 tokens: .*copy-on-write copies \d+ blocks = (\d+) positions",
                                        zh=r"提示词 13 个 token：.*写时复制复制 \d+ 个块 = (\d+) 个位置"),
    "nb08_ring_within_tol": from_notebook("08_beyond_the_basics.ipynb", r"ring == concatenating window within TOL = [\d.e-]+ at all \d+ positions: (\w+)",
                                          zh=r"环形缓存与拼接式窗口缓存的差都在 TOL = [\d.e-]+ 以内：(\w+)"),
    "nb08_llama2_7b_copy_4096": from_notebook("08_beyond_the_basics.ipynb", r"T = 4096: a growing cache copies ([\d.]+ \w+)",
                                              zh=r"T = 4096：增长式缓存每一步要拷贝 ([\d.]+ \w+)"),
    "nb08_sliding_last_equal": from_notebook("08_beyond_the_basics.ipynb", r"full attention at positions 0 \.\. (\d+)",
                                             zh=r"logits 与完全注意力相同的位置：0 \.\. (\d+)"),
    "nb08_sliding_first_diff": from_notebook("08_beyond_the_basics.ipynb", r"first position that differs: (\d+)", zh=r"第一个不同的位置是 (\d+)"),
    "nb08_sliding_band_equal": from_notebook("08_beyond_the_basics.ipynb", r"band-mask recompute at every position: (\w+)",
                                             zh=r"每个位置都与带状掩码重算结果相同：(\w+)"),
    "nb08_sliding_stored": from_notebook("08_beyond_the_basics.ipynb", r"positions stored: at most (\d+)", zh=r"存储的位置数最多为 (\d+)"),
    "nb08_sliding_seen": from_notebook("08_beyond_the_basics.ipynb", r"\| tokens seen: (\d+)", zh=r"\| 见过的 token 数为 (\d+)"),
    **{f"nb08_beam{b}_logprob": from_notebook("08_beyond_the_basics.ipynb", rf"beam {b}: log-prob\s+(-?[\d.]+)",
                                              zh=rf"束 {b}：对数概率\s+(-?[\d.]+)") for b in range(4)},
    "nb08_beam_parents_step2": from_notebook("08_beyond_the_basics.ipynb", r"step 2: parents (\[[\d, ]+\])", zh=r"第 2 步：父束 (\[[\d, ]+\])"),
    "nb08_beam_check_steps": from_notebook("08_beyond_the_basics.ipynb", r"dynamic cache, reorder: every beam equals its recompute at all (\d+) steps",
                                           zh=r"(?:dynamic|动态) ?缓存做 reorder 时，每个束在全部 (\d+) 步中都等于它的重算结果"),
    "nb08_beam_no_reorder": from_notebook("08_beyond_the_basics.ipynb", r"without reorder: first diverging (step \d+ \(position \d+\))",
                                          zh=r"不做 reorder 时，第一个出现偏差的是(第 \d+ 步（位置 \d+）)"),
    "nb08_smol_shape": from_notebook("08_beyond_the_basics.ipynb", r"SmolLM2-135M: (L=\d+, C=\d+, H=\d+, H_kv=\d+ \(GQA\), d_h=\d+, V=\d+)",
                                     zh=r"SmolLM2-135M：(L=\d+, C=\d+, H=\d+, H_kv=\d+ \(GQA\), d_h=\d+, V=\d+)"),
    "nb08_smol_float32": from_notebook("08_beyond_the_basics.ipynb", r"M parameters = ([\d.]+ \w+) in float32",
                                       zh=r"M 个参数，float32 下为 ([\d.]+ \w+)"),
    "nb08_smol_per_token_kib": from_notebook("08_beyond_the_basics.ipynb", r"SmolLM2-135M K/V cache: ([\d.]+) KiB per token in float32",
                                             zh=r"SmolLM2-135M 的 K/V 缓存：float32 下每个 token ([\d.]+) KiB"),
    "nb08_skip_reason": from_notebook("08_beyond_the_basics.ipynb", r"Skipped the pretrained-model cells: ([^\n]+)",
                                      zh=r"已跳过预训练模型相关的单元格：([^\n]+)"),
    # section 4: our cache beside transformers' DynamicCache, on a tiny random Llama
    "nb08_bridge_model": from_notebook("08_beyond_the_basics.ipynb", r"LlamaForCausalLM with random weights, (L=\d+, C=\d+, H=\d+, H_kv=\d+, d_h=\d+, V=\d+)",
                                       zh=r"随机权重的 LlamaForCausalLM，(L=\d+, C=\d+, H=\d+, H_kv=\d+, d_h=\d+, V=\d+)"),
    "nb08_bridge_shape": from_notebook("08_beyond_the_basics.ipynb", r"layer 0: K (\[[\d, ]+\]) and", zh=r"第 0 层：K (\[[\d, ]+\]) 与"),
    **{f"nb08_bridge_{kv.lower()}{layer}_diff": from_notebook(
        "08_beyond_the_basics.ipynb", rf"layer {layer}: K .*?max \|ours - theirs\| = " + (r"([\d.e+-]+);" if kv == "K" else r"[\d.e+-]+; V: ([\d.e+-]+)"),
        zh=rf"第 {layer} 层：K .*?最大差 " + (r"([\d.e+-]+)；" if kv == "K" else r"[\d.e+-]+；V 的最大差 ([\d.e+-]+)"))
       for layer in (0, 1) for kv in ("K", "V")},
    "nb08_bridge_logits_diff": from_notebook("08_beyond_the_basics.ipynb", r"logits of the last position: max \|ours - theirs\| = ([\d.e+-]+)",
                                             zh=r"最后一个位置的 logits，最大差 ([\d.e+-]+)"),
    "nb08_bridge_v0_bits": from_notebook("08_beyond_the_basics.ipynb", r"layer 0: V bit for bit the same: (\w+)",
                                         zh=r"第 0 层的 V 逐位相同：(\w+)"),
    "nb08_bridge_k0_readable_bits": from_notebook("08_beyond_the_basics.ipynb", r"layer 0: K rotated with apply_rope \(multiply, then add\) bit for bit the same: (\w+)",
                                                  zh=r"第 0 层的 K 用 apply_rope（先乘后加）旋转后逐位相同：(\w+)"),
    "nb08_bridge_tokens": from_notebook("08_beyond_the_basics.ipynb", r"the same (\d+) greedy tokens in both rows: True",
                                        zh=r"两行的 (\d+) 个贪心 token 都相同：True"),
    # --- 09 ---
    "nb09_questions": from_notebook("09_self_test.ipynb", r"(?m)^(\d+) questions$", zh=r"共 (\d+) 道题"),
    **{f"nb09_questions_nb{n:02d}": from_notebook("09_self_test.ipynb", rf"(?m)^  {n:02d} · .*?(\d+) questions$",
                                                  zh=rf"(?m)^  {n:02d} · .*?(\d+) 道题$")
       for n in range(9)},
    "nb09_predict": from_notebook("09_self_test.ipynb", r"predict what a snippet gives: (\d+)", zh=r"代码结果的填空题： (\d+)"),
    "nb09_kind_choice": from_notebook("09_self_test.ipynb", r"'single choice': (\d+)", zh=r"'单选题': (\d+)"),
    "nb09_kind_truefalse": from_notebook("09_self_test.ipynb", r"'true / false': (\d+)", zh=r"'判断题': (\d+)"),
    "nb09_kind_fill": from_notebook("09_self_test.ipynb", r"'fill in': (\d+)", zh=r"'填空题': (\d+)"),
    "nb09_kind_open": from_notebook("09_self_test.ipynb", r"'open question': (\d+)", zh=r"'开放题': (\d+)"),
    # notebook 09 prints no answer: the core question's answer comes from the question bank itself
    "nb09_first_new_position": in_both(lambda: next(q.answer_text() for q in __import__("utils.quiz", fromlist=["QUESTIONS"])
                                                    .QUESTIONS if q.prompt.endswith("position of the first new token?"))),
    # --- 10 ---
    "nb10_per_token_bytes": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"K/V of one token = (\d+) bytes",
                                          zh=r"一个 token 的 K/V = (\d+) 字节"),
    "nb10_need": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"positions the three requests need:\s+(\d+)",
                               zh=r"三个请求需要的位置：(\d+) 个"),
    "nb10_padded": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"a left-padded StaticKVCache, B x \(T \+ N_NEW\): (\d+)",
                                 zh=r"左填充的 StaticKVCache，B × \(T \+ N_NEW\)：(\d+) 个"),
    "nb10_padded_x": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"a left-padded StaticKVCache, B x \(T \+ N_NEW\): \d+ \(([\d.]+)x\)",
                                   zh=r"左填充的 StaticKVCache，B × \(T \+ N_NEW\)：\d+ 个（所需的 ([\d.]+) 倍）"),
    "nb10_max_len": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"one max_seq_len buffer per request, B x \d+: (\d+)",
                                  zh=r"每个请求一块 max_seq_len 缓冲区，B × \d+：(\d+) 个"),
    "nb10_max_seq_len": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"max_seq_len=(\d+);", zh=r"max_seq_len=(\d+)；"),
    "nb10_max_len_x": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"one max_seq_len buffer per request, B x \d+: \d+ \(([\d.]+)x\)",
                                    zh=r"每个请求一块 max_seq_len 缓冲区，B × \d+：\d+ 个（所需的 ([\d.]+) 倍）"),
    "nb10_blocks": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"blocks of 4: (\d+) blocks", zh=r"每块 4 个槽位：(\d+) 块"),
    "nb10_block_slots": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"blocks of 4: \d+ blocks = (\d+) slots",
                                      zh=r"每块 4 个槽位：\d+ 块 = (\d+) 个槽位"),
    "nb10_blocks_x": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"blocks of 4: \d+ blocks = \d+ slots \(([\d.]+)x\)",
                                   zh=r"每块 4 个槽位：\d+ 块 = \d+ 个槽位（所需的 ([\d.]+) 倍）"),
    **{f"nb10_logit_diff_{key}": from_notebook("10_paged_kv_and_prefix_caching.ipynb", rf"{name}: max \|logits KVCache - logits PagedKVCache\| = ([\d.e+-]+)",
                                               zh=rf"{name_zh}：max \|KVCache 的 logits - PagedKVCache 的 logits\| = ([\d.e+-]+)")
       for key, name, name_zh in (("one", "one prompt", "单条提示词"), ("batch", "ragged batch", "长短不一的批"))},
    "nb10_requests": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"(\d+) requests, \d+ of them after the system prompt",
                                   zh=r"(\d+) 个请求，其中 \d+ 个以第 6 节的系统提示词开头"),
    "nb10_requests_system": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"\d+ requests, (\d+) of them after the system prompt",
                                          zh=r"\d+ 个请求，其中 (\d+) 个以第 6 节的系统提示词开头"),
    "nb10_short_table": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"row 1:\s+\d+ tokens, block table (\[[\d, ]+\])",
                                      zh=r"第 1 行：\s+\d+ 个 token，块表 (\[[\d, ]+\])"),
    "nb10_short_second": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"row 1:\s+\d+ tokens, block table \[\d+, (\d+)\]",
                                       zh=r"第 1 行：\s+\d+ 个 token，块表 \[\d+, (\d+)\]"),
    "nb10_row2_table": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"row 2:\s+\d+ tokens, block table (\[[\d, ]+\])",
                                     zh=r"第 2 行：\s+\d+ 个 token，块表 (\[[\d, ]+\])"),
    "nb10_row2_prompt": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"request 2:\s+(\d+) prompt tokens",
                                      zh=r"请求 2：\s+(\d+) 个提示词 token"),
    **{f"nb10_{key}_bytes": from_notebook("10_paged_kv_and_prefix_caching.ipynb", pattern, zh=zh) for key, pattern, zh in (
        ("static", r"StaticKVCache, left-padded:\s+(\d+) bytes", r"(\d+) 字节：左填充的 StaticKVCache"),
        ("tokens", r"paged, K/V of the real tokens:\s+(\d+) bytes", r"(\d+) 字节：分页缓存中真实 token 的 K/V"),
        ("held", r"paged, blocks held by the rows:\s+(\d+) bytes", r"(\d+) 字节：分页缓存各行持有的块"),
        ("pool", r"paged, the pool:\s+(\d+) bytes", r"(\d+) 字节：分页缓存的块池"))},
    "nb10_buffers_bytes": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"one max_seq_len buffer per request: (\d+) bytes",
                                        zh=r"(\d+) 字节：每个请求一块 max_seq_len 缓冲区"),
    "nb10_buffers_x_pool": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"one max_seq_len buffer per request: .*?\(([\d.]+)x the pool\)",
                                         zh=r"字节：每个请求一块 max_seq_len 缓冲区.*?（块池的 ([\d.]+) 倍）"),
    # a citation's year (Kwon et al., the vLLM / PagedAttention paper, SOSP 2023): not computed, a fact so the digits are checked once
    "nb10_vllm_paper_year": in_both(lambda: "2023"),
    "nb10_pool_free": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"paged, the pool: .*?blocks, (\d+) still free",
                                    zh=r"字节：分页缓存的块池，.*?其中 (\d+) 块仍然空闲"),
    "nb10_cow_tables": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"after one token:  tables (\[\[[\d, \[\]]+\]\])",
                                     zh=r"解码一个 token 之后：块表 (\[\[[\d, \[\]]+\]\])"),
    "nb10_reuse_n": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"request 2: (\d+) of its \d+ prompt tokens found",
                                  zh=r"请求 2：\d+ 个提示词 token 中有 (\d+) 个在缓存中找到"),
    "nb10_reuse_rest": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"request 2: .*?it prefills only (\d+)",
                                     zh=r"请求 2：.*?只需预填充 (\d+) 个"),
    "nb10_lru_order": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"the pool hands out blocks in this order: (\[[\d, ]+\])",
                                    zh=r"块池分出块的顺序：\s*(\[[\d, ]+\])"),
    "nb10_hit_rate_16": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"system prompt  16 tokens: hit rate (\d+%)",
                                      zh=r"系统提示词  16 个 token：命中率 (\d+%)"),
    "nb10_hit_rate_192": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"system prompt 192 tokens: hit rate (\d+%)",
                                       zh=r"系统提示词 192 个 token：命中率 (\d+%)"),
    "nb10_ttft_full_192": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"system prompt 192 \+ question \d+ tokens: TTFT fresh\s+([\d.]+) ms",
                                        zh=r"系统提示词 192 \+ 问题 \d+ 个 token：从头预填充的 TTFT\s+([\d.]+) ms"),
    "nb10_ttft_cached_192": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"system prompt 192 \+ .*?with the prefix cache\s+([\d.]+) ms",
                                          zh=r"系统提示词 192 \+ .*?用前缀缓存\s+([\d.]+) ms"),
    "nb10_ttft_ratio_192": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"system prompt 192 \+ .*?\(cached/fresh ([\d.]+)\)",
                                         zh=r"系统提示词 192 \+ .*?（缓存/从头 ([\d.]+)）"),
    "nb10_ttft_ratio_16": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"system prompt  16 \+ .*?\(cached/fresh ([\d.]+)\)",
                                        zh=r"系统提示词  16 \+ .*?（缓存/从头 ([\d.]+)）"),
    "nb10_hit_ceiling": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"ceiling: \d+ of \d+ requests can find the system prompt: (\d+%)",
                                      zh=r"上限：\d+ 个请求中有 \d+ 个能找到系统提示词：(\d+%)"),
    "nb10_map_steps": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"(?m)^(\d+) steps$", zh=r"(?m)^共 (\d+) 步$"),
    "nb10_map_reused": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"blocks freed by one request and handed to another: (\d+)",
                                     zh=r"由一个请求释放、再分给另一个请求的块：(\d+) 次"),
    "nb10_map_chunk": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"the replay's engine: prefill_chunk = (\d+) tokens",
                                    zh=r"回放用的引擎：prefill_chunk = (\d+) 个 token"),
    "nb10_map_budget": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"the replay's engine: .*?max_batch_tokens = (\d+) tokens per step",
                                     zh=r"回放用的引擎：.*?max_batch_tokens = (\d+) 个 token"),
    **{f"nb10_wave{w}": from_notebook("10_paged_kv_and_prefix_caching.ipynb", rf"wave {w}: (\d+) requests", zh=rf"第 {w} 波：(\d+) 个请求")
       for w in (1, 2)},
    "nb10_map_r1_hit": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"r1: joins at step\s+\d+, prefix hit\s+(\d+) of",
                                     zh=r"r1：第\s+\d+ 步加入，\d+ 个提示词 token 中前缀命中\s+(\d+) 个"),
    "nb10_system_tokens": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"system prompt: (\d+) tokens = \d+ full blocks",
                                        zh=r"系统提示词：(\d+) 个 token = \d+ 个满块"),
    "nb10_full_blocks_16": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"blocks of 16: the \d+-token system prompt fills (\d+) full block",
                                         zh=r"每块 16 个 token：\d+ 个 token 的系统提示词填满 (\d+) 个整块"),
    "nb10_share_16": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"blocks of 16: .*?share at most (\d+) of its tokens",
                                   zh=r"每块 16 个 token：.*?一个请求最多能共享其中 (\d+) 个 token"),
    "nb10_pre_step": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"16 blocks of 4: step (\d+) preempts r\d+",
                                   zh=r"共 16 块：第 (\d+) 步抢占 r\d+"),
    "nb10_pre_victim": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"16 blocks of 4: step \d+ preempts r(\d+)",
                                     zh=r"共 16 块：第 \d+ 步抢占 r(\d+)"),
    # --- 11 ---
    "nb11_r3_joins": from_notebook("11_continuous_batching.ipynb", r"r3 joins in iteration (\d+)", zh=r"r3 在第 (\d+) 次迭代加入"),
    # the two requests r3 joins after, one fact each: ids only, so a Chinese lesson reads them too
    "nb11_r3_after_first": from_notebook("11_continuous_batching.ipynb", r"right after (r\d+) and r\d+ left",
                                         zh=r"就在 (r\d+) 和 r\d+ 于第 \d+ 次迭代结束时离开之后"),
    "nb11_r3_after_second": from_notebook("11_continuous_batching.ipynb", r"right after r\d+ and (r\d+) left",
                                          zh=r"就在 r\d+ 和 (r\d+) 于第 \d+ 次迭代结束时离开之后"),
    "nb11_rerun_on": from_notebook("11_continuous_batching.ipynb", r"prefix caching on: (\[[\d, ]+\]) \|",
                                   zh=r"前缀缓存开启：\s*(\[[\d, ]+\]) \|"),
    "nb11_rerun_off": from_notebook("11_continuous_batching.ipynb", r"\| off: (\[[\d, ]+\])", zh=r"\| 关闭：\s*(\[[\d, ]+\])"),
    "nb11_new_tokens": from_notebook("11_continuous_batching.ipynb", r"new tokens each, (\d+) in all", zh=r"个新 token，共 (\d+) 个"),
    "nb11_alone_ms": from_notebook("11_continuous_batching.ipynb", r"one request alone takes ([\d.]+) ms", zh=r"一个请求单独运行平均需要 ([\d.]+) ms"),
    "nb11_arrive_meanwhile": from_notebook("11_continuous_batching.ipynb", r"requests/s, ([\d.]+) requests arrive in that time",
                                           zh=r"这段时间里平均到达 ([\d.]+) 个请求"),
    "nb11_tight_need_x": from_notebook("11_continuous_batching.ipynb", r"may need up to \d+ blocks \(([\d.]+)x the pool\)",
                                       zh=r"最多可能需要 \d+ 块（块池的 ([\d.]+) 倍）"),
    "nb11_tight_preemptions": from_notebook("11_continuous_batching.ipynb", r"queued at time 0: \d+ iterations, (\d+) preemptions",
                                            zh=r"全部在时刻 0 排队：\d+ 次迭代，抢占 (\d+) 次"),
    "nb11_chunked_mixed": from_notebook("11_continuous_batching.ipynb", r"chunked\s*: \d+ iterations of [\d.]+ requests on average, (\d+) of them mixed",
                                        zh=r"分块\s*：\d+ 次迭代，平均每次 [\d.]+ 个请求，其中 (\d+) 次既有解码又有预填充"),
    "nb11_chunked_iterations": from_notebook("11_continuous_batching.ipynb", r"chunked\s*: (\d+) iterations", zh=r"分块\s*：(\d+) 次迭代"),
    # the metrics table of section 3, one fact per cell: the paged engine chunked, with whole prompts, and notebook
    # 06's padded engine
    **{f"nb11_{who}_{col}": from_notebook("11_continuous_batching.ipynb", rf"(?m)^{name}[\s|]+" + cells, zh=rf"(?m)^{name_zh}[\s|]+" + cells)
       for who, name, name_zh in (("engine", r"paged engine \(chunked\)", r"分页引擎（分块预填充）"),
                                  ("whole", r"paged engine \(whole prompts\)", r"分页引擎（整条提示词）"),
                                  ("padded", r"notebook 06's padded engine", r"笔记本 06 的填充批引擎"))
       for col in ("ttft_p50", "ttft_p95", "tpot_p50", "tpot_p95", "itl_p50", "itl_p95", "tokens_s", "requests_s",
                   "busy_tokens_s")
       for cells in [r"\s*\|?\s*".join(r"([\d.,]+)" if c == col else r"[\d.,]+" for c in (
           "ttft_p50", "ttft_p95", "tpot_p50", "tpot_p95", "itl_p50", "itl_p95", "tokens_s", "requests_s", "busy_tokens_s"))]},
    "nb11_last_arrival_ms": from_notebook("11_continuous_batching.ipynb", r"the last request arrives at (\d+) ms",
                                          zh=r"最后一个请求在 (\d+) ms 到达"),
    **{f"nb11_{who}_run_ms": from_notebook("11_continuous_batching.ipynb", rf"to the last token: .*?{name} (\d+) ms",
                                           zh=rf"到最后一个 token：.*?{name_zh} (\d+) ms")
       for who, name, name_zh in (("engine", r"paged engine \(chunked\)", r"分页引擎（分块预填充）"),
                                  ("whole", r"paged engine \(whole prompts\)", r"分页引擎（整条提示词）"),
                                  ("padded", r"notebook 06's padded engine", r"笔记本 06 的填充批引擎"))},
    # the last (most rows) line of the comparison of decode-only iterations
    **{f"nb11_step_{key}": from_notebook("11_continuous_batching.ipynb", r"(?s).*a decode-only iteration of " + pattern,
                                         zh=r"(?s).*\n" + zh)
       for key, pattern, zh in (("rows", r"(\d+) rows", r"(\d+) 行的纯解码迭代"),
                                ("paged_ms", r"\d+ rows, median: paged engine ([\d.]+) ms", r"\d+ 行的纯解码迭代，中位数：分页引擎 ([\d.]+) ms"),
                                ("padded_ms", r"\d+ rows, median: .*?padded engine ([\d.]+) ms", r"\d+ 行的纯解码迭代，.*?填充批引擎 ([\d.]+) ms"),
                                ("ratio", r"\d+ rows, median: .*?\(paged / padded: ([\d.]+)\)", r"\d+ 行的纯解码迭代，.*?（分页 / 填充：([\d.]+)）"))},
    # section 4: a 192-token prompt arrives while 4 requests decode
    **{f"nb11_stall_{key}_{chunk}": from_notebook("11_continuous_batching.ipynb", rf"prefill_chunk = {name}\s*: " + pattern,
                                                  zh=rf"prefill_chunk = {name}\s*：" + zh)
       for chunk, name in (("off", "None"), ("32", "32")) for key, pattern, zh in (
           ("itl_ms", r".*?worst ITL during the long prefill\s+([\d.]+) ms", r".*?最差 ITL\s+([\d.]+) ms"),
           ("ttft_ms", r".*?TTFT\s+([\d.]+) ms", r".*?长请求的 TTFT\s+([\d.]+) ms"))},
    "nb11_stall_itl_x": from_notebook("11_continuous_batching.ipynb", r"the worst stall is ([\d.]+)x shorter",
                                      zh=r"最差卡顿只有不分块时的 1/([\d.]+)"),
    "nb11_stall_ttft_x": from_notebook("11_continuous_batching.ipynb", r"the long TTFT ([\d.]+)x longer",
                                       zh=r"长请求的 TTFT 却是不分块时的 ([\d.]+) 倍"),
    "nb11_short_prefill": from_notebook("11_continuous_batching.ipynb", r"iteration 1 prefills the 4 short prompts: (\d+) tokens",
                                        zh=r"第 1 次迭代预填充 4 个短提示词：(\d+) 个 token"),
    # section 5: the step-cost fit and the replay against the measured runs
    **{f"nb11_fit_{key}": from_notebook("11_continuous_batching.ipynb", pattern, zh=zh) for key, pattern, zh in (
        ("one_pass", r"iterations fitted: (\d+) with one forward pass", r"参与拟合的迭代 \d+ 次：(\d+) 次只有一次"),
        ("two_pass", r"with one forward pass, (\d+) with two", r"参与拟合的迭代 \d+ 次：.*?，(\d+) 次有两次"),
        ("fixed", r"fitted: ([\d.]+) ms per iteration", r"拟合结果：每次迭代 ([\d.]+) ms"),
        ("forward", r"([\d.]+) ms per forward pass", r"拟合结果：.*?每次前向\S* ([\d.]+) ms"),
        ("row", r"([\d.]+) ms per decode row", r"每个解码行 ([\d.]+) ms"),
        ("token", r"([\d.]+) ms per prefill token", r"每个预填充 token ([\d.]+) ms"))},
    "nb11_replay_tpot": from_notebook("11_continuous_batching.ipynb", r"budget 32, .*?TPOT p50 ([\d.]+)", zh=r"预算 32，.*?TPOT p50 ([\d.]+)"),
    "nb11_replay_tokens": from_notebook("11_continuous_batching.ipynb", r"budget 32, .*?tokens/s ([\d.]+)",
                                        zh=r"预算 32，.*?tokens/s ([\d.]+)"),
    "nb11_hf_version": from_notebook("11_continuous_batching.ipynb", r"transformers ([\w.]+), generate_batch",
                                     zh=r"transformers ([\w.]+)，generate_batch"),
    "nb11_hf_same": from_notebook("11_continuous_batching.ipynb", r"give the same 8 greedy tokens for every prompt: (\w+)",
                                  zh=r"都给出相同的 8 个贪心 token：(\w+)"),
    # --- 12 ---
    # citation years, not computed: facts so the digits are checked once (Leviathan et al. and Chen et al.,
    # 2023; prompt lookup decoding, 2023; Medusa and EAGLE, ICML 2024)
    "nb12_spec_papers_year": in_both(lambda: "2023"),
    "nb12_tree_papers_year": in_both(lambda: "2024"),
    "nb12_target_params": from_notebook("12_speculative_decoding.ipynb", r"target \(course model\)\s*: .*?, ([\d,]+) parameters",
                                        zh=r"目标模型：.*?，([\d,]+) 个参数"),
    "nb12_draft_params": from_notebook("12_speculative_decoding.ipynb", r"draft model\s*: L=.*?, ([\d,]+) parameters",
                                       zh=r"草稿模型：L=.*?，([\d,]+) 个参数"),
    "nb12_draft_share": from_notebook("12_speculative_decoding.ipynb", r"the draft has ([\d.]+%) of the target's parameters",
                                      zh=r"草稿模型的参数量是目标模型的 ([\d.]+%)"),
    "nb12_greedy_runs": from_notebook("12_speculative_decoding.ipynb", r"all (\d+) runs \(\d+ prompts", zh=r"全部 (\d+) 次运行（\d+ 条提示词"),
    # the acceptance table of section 2: one row per (draft, k), one fact per cell used
    **{f"nb12_{who}_k{k}_{col}": from_notebook("12_speculative_decoding.ipynb", rf"(?m)^{name}\s+{k}\s+" + cells,
                                               zh=rf"(?m)^{name_zh}\s+{k}\s+" + cells)
       for who, name, name_zh in (("draft", "draft model", "草稿模型"), ("lookup", "prompt lookup", "提示词查找")) for k in (1, 2, 4, 8)
       for col in ("proposed", "acceptance", "alpha", "tokens", "model")
       for cells in [r"\s+".join(r"([\d.]+%?)" if c == col else r"[\d.]+%?" for c in ("proposed", "acceptance", "alpha", "tokens", "model"))]},
    "nb12_chi_runs": from_notebook("12_speculative_decoding.ipynb", r"(\d+) seeded runs per sampler", zh=r"每个采样器用 (\d+) 个随机种子"),
    **{f"nb12_chi_{who}_{key}": from_notebook("12_speculative_decoding.ipynb", rf"{name}: chi-square = " + pattern,
                                              zh=rf"{name_zh}：卡方统计量 = " + zh)
       for who, name, name_zh in (("draft", "speculative, draft model", "推测解码，草稿模型"),
                                  ("lookup", "speculative, prompt lookup", "推测解码，提示词查找"))
       for key, pattern, zh in (("stat", r"([\d.]+)", r"([\d.]+)"),
                                ("p", r"[\d.]+ with \d+ degrees of freedom, p-value = ([\d.e+-]+)", r"[\d.]+，自由度 \d+，p 值 = ([\d.e+-]+)"))},
    "nb12_chi_mistake_stat": from_notebook("12_speculative_decoding.ipynb", r"mistake: redraw from p: chi-square = ([\d.]+)",
                                           zh=r"错误做法：从 p 重新抽取：卡方统计量 = ([\d.]+)"),
    "nb12_lookup_refusal": from_notebook("12_speculative_decoding.ipynb", r"prompt lookup: refused with probability ([\d.]+)",
                                         zh=r"提示词查找：被拒绝的概率为 ([\d.]+)"),
    "nb12_bug_first_diff": from_notebook("12_speculative_decoding.ipynb", r"the first new token that differs: number (\d+)",
                                         zh=r"第一个不同的新 token：第 (\d+) 个"),
    "nb12_c_flat": from_notebook("12_speculative_decoding.ipynb", r"target, flat step \(generate's\): ([\d.]+) ms",
                                 zh=r"目标模型，扁平解码步（generate 所用）：([\d.]+) ms"),
    **{f"nb12_c_target_{n}_x": from_notebook("12_speculative_decoding.ipynb",
                                             rf"target through the modules, fed {n} token\(s\): [\d.]+ ms \(([\d.]+)x",
                                             zh=rf"目标模型逐个模块运行，送入 {n} 个 token：[\d.]+ ms（扁平解码步的 ([\d.]+) 倍")
       for n in (2, 5, 9)},
    "nb12_c_draft": from_notebook("12_speculative_decoding.ipynb", r"draft, flat step: ([\d.]+) ms",
                                  zh=r"草稿模型，扁平解码步：([\d.]+) ms"),
    "nb12_c_ratio": from_notebook("12_speculative_decoding.ipynb", r"c_draft / c_flat = ([\d.]+)", zh=r"c_draft / c_flat = ([\d.]+)"),
    "nb12_heavy_speedup": from_notebook("12_speculative_decoding.ipynb", r"draft model k=4 \d+ ms: measured speed-up ([\d.]+)",
                                        zh=r"草稿模型 k=4 \d+ ms：实测加速比 ([\d.]+)"),
    "nb12_heavy_verify_5": from_notebook("12_speculative_decoding.ipynb", r"verify pass over 5 tokens, through the modules: ([\d.]+) flat",
                                         zh=r"送入 5 个 token、逐个模块运行的验证前向：([\d.]+) 个扁平解码步"),
    **{f"nb12_speedup_{who}_k{k}_{key}": from_notebook("12_speculative_decoding.ipynb", rf"{name}\s+k={k}: .*?" + pattern,
                                                       zh=rf"{name_zh}\s+k={k}：.*?" + zh)
       for who, name, name_zh in (("draft", "draft model", "草稿模型"), ("lookup", "prompt lookup", "提示词查找")) for k in (1, 2, 4, 8)
       for key, pattern, zh in (("measured", r"speed-up over generate ([\d.]+)", r"相对 generate 的加速比 ([\d.]+)"),
                                ("model", r"cost model ([\d.]+)", r"成本模型 ([\d.]+)"))},
    "nb12_gpu_best_k": from_notebook("12_speculative_decoding.ipynb", r"the best k under these assumptions: (\d+)",
                                     zh=r"在这些假设下，最好的 k：(\d+)"),
    "nb12_gpu_speedup_k4": from_notebook("12_speculative_decoding.ipynb", r"k=4: alpha = [\d.]+, tokens per round [\d.]+, "
                                                                           r"modelled speed-up ([\d.]+)",
                                         zh=r"k=4：alpha = [\d.]+，每轮 token 数 [\d.]+，建模加速比 ([\d.]+)"),
    "nb12_gpu_pooled_alpha": from_notebook("12_speculative_decoding.ipynb", r"with one alpha for every k \(([\d.]+), pooled",
                                           zh=r"所有 k 共用一个 alpha（([\d.]+)，"),
    **{f"nb12_gpu_pooled_k{k}": from_notebook("12_speculative_decoding.ipynb", rf"with one alpha for every k \(.*?k={k} ([\d.]+)",
                                              zh=rf"所有 k 共用一个 alpha（.*?k={k} ([\d.]+)") for k in (4, 6)},
    # --- 13 ---
    # citation years of the papers lesson 13 names, not computed: facts so the digits are checked once
    "nb13_kivi_year": in_both(lambda: "2024"), "nb13_streamingllm_year": in_both(lambda: "2024"), "nb13_l2norm_year": in_both(lambda: "2024"),
    "nb13_h2o_year": in_both(lambda: "2023"), "nb13_snapkv_year": in_both(lambda: "2024"),
    **{f"nb13_{key}": from_notebook("13_smaller_kv_cache.ipynb", pattern, zh=zh) for key, pattern, zh in (
        ("docs", r"(\d+) held-out documents of", r"(\d+) 篇留出文档"),
        ("group_size", r"settings here: groups of (\d+) positions", r"这里的设置：每组 (\d+) 个位置"),
        ("worst_8", r"8-bit: the worst error is ([\d.]+) x", r"8 位：最大误差是 ([\d.]+) x"),
        ("worst_4", r"4-bit: the worst error is ([\d.]+) x", r"4 位：最大误差是 ([\d.]+) x"),
        ("k_outlier_3", r"layer 3: the largest channel of \|K\| is ([\d.]+)x", r"第 3 层：\|K\| 最大的通道是中位通道的 ([\d.]+)x"),
        ("k_token_3", r"layer 3: K: per token ([\d.]+)", r"第 3 层：K：按 token ([\d.]+)"),
        ("k_channel_3", r"layer 3: K: per token [\d.]+, per channel ([\d.]+)", r"第 3 层：K：按 token [\d.]+，按通道 ([\d.]+)"),
        ("doc_tokens", r"(\d+) positions: \d+ quantized in", r"(\d+) 个位置：\d+ 个已量化"),
        ("quant_bytes", r"QuantizedKVCache\.nbytes = (\d+);", r"QuantizedKVCache\.nbytes = (\d+)；"),
        ("exact_bytes", r"the exact KVCache: (\d+) bytes", r"精确 KVCache：(\d+) 字节"),
        ("quant_share", r"the exact KVCache: \d+ bytes \((\d+%) of it", r"精确 KVCache：\d+ 字节（前者是后者的 (\d+%)"),
        ("decode_steps", r"documents, (\d+) decode steps", r"篇文档，(\d+) 个解码步"),
        ("q8_diff", r"8-bit, K per channel, V per token, residual 2\s+\d+%\s+([\d.]+)",
         r"8 位，K 按通道分组，V 按 token 分组，残差窗口 2\s+\d+%\s+([\d.]+)"),
        ("q4_diff", r"4-bit, K per channel, V per token, residual 2\s+\d+%\s+([\d.]+)",
         r"4 位，K 按通道分组，V 按 token 分组，残差窗口 2\s+\d+%\s+([\d.]+)"),
        ("q4_tok_r0_bytes", r"4-bit, K per token, V per token, residual 0\s+(\d+%)",
         r"4 位，K 按 token 分组，V 按 token 分组，残差窗口 0\s+(\d+%)"),
        ("q4_tok_r0_diff", r"4-bit, K per token, V per token, residual 0\s+\d+%\s+([\d.]+)",
         r"4 位，K 按 token 分组，V 按 token 分组，残差窗口 0\s+\d+%\s+([\d.]+)"),
        ("budget_small", r"at budget (\d+), every rule raises", r"预算为 (\d+) 时，每条规则使损失增加的幅度"),
        ("restart_seen", r"after (\d+) tokens both hold", r"(\d+) 个 token 之后，两者都保存"),
        ("restart_wrong", r"vs (\d+) \(restarts at the length\)", r"vs (\d+)（从长度重新计数）"),
        ("restart_loss_right", r"positions = tokens seen\s*: loss ([\d.]+)", r"位置 = 已看过的 token 数\s*：损失 ([\d.]+)"),
        ("restart_loss_wrong", r"positions restart at the length\s*: loss ([\d.]+)", r"位置从长度重新计数\s*：损失 ([\d.]+)"),
        ("restart_match_right", r"positions = tokens seen\s*: .*?greedy match ([\d.]+%)", r"位置 = 已看过的 token 数\s*：.*?贪心一致率 ([\d.]+%)"),
        ("restart_match_wrong", r"positions restart at the length\s*: .*?greedy match ([\d.]+%)", r"位置从长度重新计数\s*：.*?贪心一致率 ([\d.]+%)"),
        ("T_long", r"T = (\d+), B = 1", r"T = (\d+), B = 1"),
        ("llama_fp16", r"float16: ([\d.]+) GiB", r"float16: ([\d.]+) GiB"),
        ("llama_8", r"8-bit: ([\d.]+) GiB = codes", r"8 位：([\d.]+) GiB = "),
        ("llama_4", r"4-bit: ([\d.]+) GiB = codes", r"4 位：([\d.]+) GiB = "),
        ("llama_4_x", r"4-bit: [\d.]+ GiB = .*?\(([\d.]+)x smaller", r"4 位：[\d.]+ GiB = .*?（比 float16 小 ([\d.]+)x"),
        ("bits_per_value_4", r"4-bit: ([\d.]+) bits per quantized value", r"4 位：每个量化值 ([\d.]+) 位"))},
    # the loss each eviction rule adds at the smallest budget (section 5's table)
    **{f"nb13_evict_{rule}_6": from_notebook("13_smaller_kv_cache.ipynb", rf"evict by {name}, budget 6\s+" + cells,
                                             zh=rf"按“{name_zh}”淘汰，预算 6\s+" + cells)
       for rule, name, name_zh in (("recent", r"sinks \+ recent", r"汇聚点 \+ 最近窗口"), ("key_norm", "key norm", "键范数最小"),
                                   ("attention", "attention received", "累计注意力最多"))
       for cells in [r"\d+%\s+[\d.]+\s+[\d.]+e[-+]\d+\s+[\d.]+%\s+\+([\d.]+)"]},
    # notebook 14: where the bits go, the batch-invariant cost, the tolerances, Hugging Face's use_cache
    **{f"nb14_{key}": from_notebook("14_numerics_of_cached_inference.ipynb", pattern, zh=zh) for key, pattern, zh in (
        ("first_op", r"the first op that differs: ([\w.]+),", r"第一个不同的算子：([\w.]+)，"),
        ("cached_gap", r"cached vs recomputed logits on this machine: [\w ]+, max \|Δ\| = ([\d.]+e[-+]\d+)",
         r"在这台机器上，缓存与重算的 logits \w+，max \|Δ\| = ([\d.]+e[-+]\d+)"),
        ("invariant_slower", r"the batch-invariant path is (\d+)x slower", r"批不变路径在这里慢 (\d+) 倍"),
        ("f32_honest", r"float32\s+largest honest difference ([\d.]+e[-+]\d+)", r"float32\s+正常计算的最大差 ([\d.]+e[-+]\d+)"),
        ("bf16_honest", r"bfloat16\s+largest honest difference ([\d.]+e[-+]\d+)", r"bfloat16\s+正常计算的最大差 ([\d.]+e[-+]\d+)"),
        ("bug", r"float32\s+largest honest difference \S+\s+a cache bug \(position restarted at 0\) ([\d.]+e[-+]\d+)",
         r"float32\s+正常计算的最大差 \S+\s+缓存 bug（位置从 0 重新开始）([\d.]+e[-+]\d+)"),
        ("hf_bf16_flips", r"bfloat16\s+use_cache=True vs False: .*generations differ in (\d+/\d+)",
         r"bfloat16\s+use_cache=True vs False：.*生成结果不同的有 (\d+/\d+)"))},
}


SPAN = re.compile(r'(<span\s+data-fact="([^"]+)">)([^<]*)(</span>)')  # a span may break across lines


def update_lessons(only: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """Rewrite the fact spans of every lesson with the current values of its own language
    (``lessons/en`` from the English notebooks, ``lessons/zh`` from the Chinese twins); with
    ``only`` (lesson numbers such as "03"), just those lessons.
    Return the files changed and the facts that could not be read (their spans are left as they were)."""
    changed, failed = [], []

    def value(m: re.Match, lang: str) -> str:
        try:
            return m.group(1) + FACTS[m.group(2)](lang) + m.group(4)
        except LookupError as e:
            failed.append(f"{lang}: {m.group(2)}: {e}")
            return m.group(0)

    for lang in LANGS:
        for path in sorted((ROOT / "lessons" / lang).glob("*.md")):
            if only and path.name[:2] not in only:
                continue
            text = path.read_text(encoding="utf-8")
            new = SPAN.sub(lambda m: value(m, lang), text)
            if new != text:
                path.write_text(new, encoding="utf-8")
                changed.append(str(path.relative_to(ROOT)))
    return changed, sorted(set(failed))


def main() -> None:
    args = sys.argv[1:]
    if "--update" in args:
        only = tuple(args[args.index("--only") + 1].split(",")) if "--only" in args else ()
        changed, failed = update_lessons(only)
        for name in changed:
            print(f"updated {name}")
        for line in failed:
            print(f"could not read {line}", file=sys.stderr)
        sys.exit(1 if failed else 0)
    lang = args[args.index("--lang") + 1] if "--lang" in args else "en"
    for name, fn in FACTS.items():
        try:
            value = fn(lang)
        except Exception as e:  # a fact that cannot be computed is shown, not hidden
            value = f"<error: {e}>"
        print(f"{name:40s} {value}")


if __name__ == "__main__":
    main()
