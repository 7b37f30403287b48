"""The numbers the lessons quote, each computed from the package or read from a notebook's outputs.

A lesson writes a quoted number as ``<span data-fact="NAME">VALUE</span>``; tests/test_lessons.py
recomputes ``FACTS[NAME]()`` and checks that VALUE is exactly that text. Any number of four or
more digits in a lesson's prose must be such a span, so no computed number is typed by hand.
Add a fact here when a lesson needs a new one: a name and a function returning the text.

    python tools/lesson_facts.py            # prints every fact and its current value
    python tools/lesson_facts.py --update   # rewrites every fact span in lessons/ with its value

``make notebooks`` runs ``--update`` after re-executing the notebooks, so timings a lesson quotes
from a notebook follow the new run instead of going stale.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from utils.sizing import MODEL_PRESETS, cache_bytes_for, kv_bytes_per_token, max_concurrent_requests  # noqa: E402


def notebook_text(notebook: str) -> str:
    """All text outputs of a committed notebook, joined (what a reader of the notebook sees)."""
    nb = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))
    parts = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            text = out.get("text") or out.get("data", {}).get("text/plain") or ""
            parts.append(text if isinstance(text, str) else "".join(text))
    return "\n".join(parts)


def from_notebook(notebook: str, pattern: str) -> Callable[[], str]:
    """A fact read from a notebook's committed outputs: the first group of ``pattern``."""
    def read() -> str:
        m = re.search(pattern, notebook_text(notebook))
        if not m:
            raise LookupError(f"{notebook}: no output matches {pattern!r}")
        return m.group(1)
    return read


def _per_token(name: str, dtype: str = "float16") -> Callable[[], str]:
    return lambda: f"{kv_bytes_per_token(MODEL_PRESETS[name], dtype):,}"


def _per_token_kib(name: str, dtype: str = "float16") -> Callable[[], str]:
    return lambda: f"{kv_bytes_per_token(MODEL_PRESETS[name], dtype) / 1024:g}"


def _context_gib(name: str, T: int, dtype: str = "float16") -> Callable[[], str]:
    return lambda: f"{cache_bytes_for(MODEL_PRESETS[name], 1, T, dtype) / 2**30:.1f}"


def _nucleus_example(temperature: float, what: str) -> Callable[[], str]:
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
    return read


FACTS: dict[str, Callable[[], str]] = {
    "llama2_7b_per_token_bytes": _per_token("Llama-2-7B"),
    "llama3_8b_per_token_bytes": _per_token("Llama-3-8B"),
    "llama2_7b_per_token_kib": _per_token_kib("Llama-2-7B"),
    "llama3_8b_per_token_kib": _per_token_kib("Llama-3-8B"),
    "llama2_7b_4k_gib": _context_gib("Llama-2-7B", 4096),
    "llama3_8b_8k_gib": _context_gib("Llama-3-8B", 8192),
    # --- 00 ---
    "nb00_course_model": from_notebook("00_tour.ipynb", r"course model: (L=\d+ layers, C=\d+, H=\d+ query heads, "
                                                        r"H_kv=\d+ K/V heads, d_h=\d+, V=\d+ tokens)"),
    "nb00_params": from_notebook("00_tour.ipynb", r"([\d,]+) parameters"),
    "nb00_prefill_ms": from_notebook("00_tour.ipynb", r"prefill -> \S+\s*: ([\d.]+) ms"),
    "nb00_decode1_ms": from_notebook("00_tour.ipynb", r"decode  -> 。\s*: ([\d.]+) ms"),
    "nb00_decode2_ms": from_notebook("00_tour.ipynb", r"decode  -> <EOS>\s*: ([\d.]+) ms"),
    "nb00_prefill_over_decode": from_notebook("00_tour.ipynb", r"prefill / decode step: ([\d.]+)x the time"),
    # --- 01 ---
    "nb01_std_qk_d128": from_notebook("01_attention_block.ipynb", r"d_h = 128: std of q·k =\s+([\d.]+)"),
    "nb01_std_scaled_d128": from_notebook("01_attention_block.ipynb", r"d_h = 128: .*?std of q·k / √d_h = ([\d.]+)"),
    "nb01_rope_score_dist3": from_notebook("01_attention_block.ipynb", r"query at 30, key at 27 \(distance 3\): q·k = ([+-][\d.]+)"),
    "nb01_rope_score_dist0": from_notebook("01_attention_block.ipynb", r"query at 21, key at 21 \(distance 0\): q·k = ([+-][\d.]+)"),
    "nb01_rope_score_dist5": from_notebook("01_attention_block.ipynb", r"query at 10, key at  5 \(distance 5\): q·k = ([+-][\d.]+)"),
    "nb01_course_model_shape": from_notebook("01_attention_block.ipynb",
                                             r"course model: (L=\d+, C=\d+, H=\d+, H_kv=\d+ \(\w+\), d_h=\d+)"),
    # --- 02 ---
    "nb02_course_model": from_notebook("02_prefill.ipynb",
                                       r"course model: (L=\d+, C=\d+, H=\d+, H_kv=\d+ \(\w+\), d_h=\d+, V=\d+)"),
    "nb02_cache_nbytes": from_notebook("02_prefill.ipynb", r"cache length: \d+ positions, (\d+) bytes"),
    "nb02_true_p": from_notebook("02_prefill.ipynb", r"true cache \(own K/V per layer\)\s+-> \S+\s+\(p = ([\d.]+)\)"),
    "nb02_impostor0_p": from_notebook("02_prefill.ipynb", r"layer 0's K/V in every layer\s+-> \S+\s+\(p = ([\d.]+)\)"),
    "nb02_impostor1_p": from_notebook("02_prefill.ipynb", r"layer 1's K/V in every layer\s+-> \S+\s+\(p = ([\d.]+)\)"),
    "nb02_impostor2_p": from_notebook("02_prefill.ipynb", r"layer 2's K/V in every layer\s+-> \S+\s+\(p = ([\d.]+)\)"),
    "nb02_impostor3_p": from_notebook("02_prefill.ipynb", r"layer 3's K/V in every layer\s+-> \S+\s+\(p = ([\d.]+)\)"),
    "nb02_timing_model_params": from_notebook("02_prefill.ipynb", r"timing model: .*?, ([\d.]+) M parameters"),
    "nb02_ttft_8_ms": from_notebook("02_prefill.ipynb", r"T =\s+8: TTFT\s+([\d.]+) ms"),
    "nb02_per_token_8_us": from_notebook("02_prefill.ipynb", r"T =\s+8: TTFT\s+[\d.]+ ms\s+\(\s*([\d.]+) µs"),
    "nb02_ttft_128_ms": from_notebook("02_prefill.ipynb", r"T =\s+128: TTFT\s+([\d.]+) ms"),
    "nb02_per_token_128_us": from_notebook("02_prefill.ipynb", r"T =\s+128: TTFT\s+[\d.]+ ms\s+\(\s*([\d.]+) µs"),
    "nb02_ttft_512_ms": from_notebook("02_prefill.ipynb", r"T =\s+512: TTFT\s+([\d.]+) ms"),
    "nb02_per_token_512_us": from_notebook("02_prefill.ipynb", r"T =\s+512: TTFT\s+[\d.]+ ms\s+\(\s*([\d.]+) µs"),
    "nb02_ttft_ratio_512_8": lambda: f"{float(FACTS['nb02_ttft_512_ms']()) / float(FACTS['nb02_ttft_8_ms']()):.0f}",
    # --- 03 ---
    "nb03_course_model": from_notebook("03_decode.ipynb",
                                       r"course model: (L=\d+, C=\d+, H=\d+, H_kv=\d+ \(\w+\), d_h=\d+, V=\d+)"),
    "nb03_recompute_steps": from_notebook("03_decode.ipynb", r"cached == recompute within 0\.0001 for (\d+) steps"),
    "nb03_weight_on_two_min": from_notebook("03_decode.ipynb", r"weight on 狗 \+ the new token, per query head: .*\(at least (\d+%)\)"),
    "nb03_recompute_worst": from_notebook("03_decode.ipynb", r"largest difference: ([\d.]+e[+-]\d+);"),
    "nb03_recompute_exact": from_notebook("03_decode.ipynb", r"bit-for-bit equal at (\d+) of \d+ steps"),
    "nb03_kproj_alone_vs_batch": from_notebook("03_decode.ipynb", r"alone vs in the batch : max \|diff\| = ([\d.]+e[+-]\d+)"),
    "nb03_kproj_alone_vs_reversed": from_notebook("03_decode.ipynb", r"alone vs reversed sum : max \|diff\| = ([\d.]+e[+-]\d+)"),
    "nb03_timing_T_min": from_notebook("03_decode.ipynb", r"cached step at T=\d+ vs T=(\d+):"),
    "nb03_timing_T_max": from_notebook("03_decode.ipynb", r"cached step at T=(\d+) vs T=\d+:"),
    "nb03_cached_ms_min": from_notebook("03_decode.ipynb", r"cached ms   no-cache ms\n\s*\d+\s+([\d.]+)"),
    "nb03_cached_ms_max": from_notebook("03_decode.ipynb", r"cached ms   no-cache ms\n(?:.*\n)*?\s*\d+\s+([\d.]+)\s+-\n"),
    "nb03_cached_ratio": from_notebook("03_decode.ipynb", r"cached step at T=\d+ vs T=\d+: x([\d.]+)"),
    "nb03_no_cache_T": from_notebook("03_decode.ipynb", r"at T=(\d+), a step without cache takes"),
    "nb03_cached_ms_1024": from_notebook("03_decode.ipynb", r"cached ms   no-cache ms\n(?:.*\n)*?\s*1024\s+([\d.]+)\s+[\d.]+\n"),
    "nb03_no_cache_ms_1024": from_notebook("03_decode.ipynb", r"cached ms   no-cache ms\n(?:.*\n)*?\s*1024\s+[\d.]+\s+([\d.]+)\n"),
    "nb03_no_cache_ratio": from_notebook("03_decode.ipynb", r"a step without cache takes x(\d+) the time"),
    "nb03_linear_flops": from_notebook("03_decode.ipynb", r"the Linear layers ran ([\d,]+) FLOPs"),
    "nb03_counted_flops": from_notebook("03_decode.ipynb", r"utils\.flops counts ([\d,]+)"),
    "nb03_counted_attention_flops": from_notebook("03_decode.ipynb", r"\(\+ ([\d,]+) for attention over \d+ keys\)"),
    # the savings table of section 6: one fact per (column, T) the lesson quotes
    **{f"nb03_{col}_{T}": from_notebook("03_decode.ipynb", r"weights read\n(?:.*\n)*?\s*" + str(T) + r"\s+" + r"\s+".join(
           f"({pat})" if j == i else f"(?:{pat})"
           for j, pat in enumerate([r"[\d.]+", r"[\d.]+", r"[\d.]+%", r"[\d.]+%", r"[\d.]+ \w?i?B", r"[\d.]+ \w?i?B"])))
       for i, col in enumerate(["mflop_cached", "mflop_no_cache", "saved", "attention_share", "kv_read", "weights_read"])
       for T in (128, 2047)},
    # the attention table of section 6: without the cache every query's attention runs again
    **{f"nb03_attention_{col}_2047": from_notebook("03_decode.ipynb", r"attention MFLOP: no cache.*\n(?:.*\n)*?\s*2047\s+" + r"\s+".join(
           f"({pat})" if j == i else f"(?:{pat})" for j, pat in enumerate([r"[\d.]+", r"[\d.]+%", r"[\d.]+"])))
       for i, col in enumerate(["no_cache_mflop", "no_cache_share", "cached_mflop"])},
    "nb03_llama3_8b_checkpoint": from_notebook("03_decode.ipynb", r"parameters = ([\d.]+ \w+) \(a checkpoint's size\)"),
    "nb03_llama3_8b_weights": from_notebook("03_decode.ipynb", r"one decode step reads ([\d.]+ \w+) of them"),
    "nb03_llama3_8b_embedding": from_notebook("03_decode.ipynb", r"of the ([\d.]+ \w+) embedding table"),
    # the Llama-3-8B table: T, B, weights read, K/V read, FLOPs per byte on the weights, on the K/V, whole step
    **{f"nb03_llama3_8b_{col}_{name}": from_notebook("03_decode.ipynb", r"on the K/V  whole step\n(?:.*\n)*?\s*" + row + r"\s+" + r"\s+".join(
           f"({pat})" if j == i else f"(?:{pat})"
           for j, pat in enumerate([r"[\d.]+ \w?i?B", r"[\d.]+ \w?i?B", r"[\d.]+", r"[\d.]+", r"[\d.]+"])) + r"\n")
       for i, col in enumerate(["weights", "kv", "per_byte_weights", "per_byte_kv", "per_byte_step"])
       for name, row in [("1k", r"1024\s+1"), ("8k", r"8192\s+1"), ("1k_b32", r"1024\s+32"), ("8k_b32", r"8192\s+32")]},
    "nb03_kv_equals_weights_T_b1": from_notebook("03_decode.ipynb", r"B =  1: the K/V read reaches .*? at T = ([\d,]+) tokens"),
    "nb03_kv_equals_weights_T_b32": from_notebook("03_decode.ipynb", r"B = 32: the K/V read reaches .*? at T = ([\d,]+) tokens"),
    "nb03_llama3_8b_max_context": from_notebook("03_decode.ipynb", r"Llama-3-8B reads at most ([\d,]+) tokens"),
    # the ridge points and the batch at which a Llama-3-8B step reaches them
    "nb03_ridge_a100": from_notebook("03_decode.ipynb", r"A100 [^:]*: ridge (\d+) FLOPs per byte"),
    "nb03_ridge_h100": from_notebook("03_decode.ipynb", r"H100 [^:]*: ridge (\d+) FLOPs per byte"),
    "nb03_ridge_batch_a100": from_notebook("03_decode.ipynb", r"first compute-bound B:.*\n\s*0\s+[\d.]+\s+(\d+)\s+\d+\n"),
    "nb03_ridge_batch_h100": from_notebook("03_decode.ipynb", r"first compute-bound B:.*\n\s*0\s+[\d.]+\s+\d+\s+(\d+)\n"),
    "nb03_ridge_max_batch": from_notebook("03_decode.ipynb", r"\(-: not within B <= ([\d,]+)\)"),
    "nb03_ridge_intensity_1k": from_notebook("03_decode.ipynb", r"first compute-bound B:.*\n(?:.*\n)*?\s*1024\s+([\d.]+)\s+-"),
    "nb03_ridge_intensity_8k": from_notebook("03_decode.ipynb", r"first compute-bound B:.*\n(?:.*\n)*?\s*8192\s+([\d.]+)\s+-"),
    # --- 04 ---
    "nb04_llama3_8b_4k_bytes": lambda: f"{cache_bytes_for(MODEL_PRESETS['Llama-3-8B'], 1, 4096):,}",
    "nb04_llama3_8b_4k_mib": lambda: f"{cache_bytes_for(MODEL_PRESETS['Llama-3-8B'], 1, 4096) / 2**20:.1f}",
    "nb04_gemma2_9b_mha_form_ratio": from_notebook("04_cache_sizing.ipynb", r"Gemma-2-9B .*?MHA form / general = ([\d.]+)"),
    "nb04_gemma2_9b_group": from_notebook("04_cache_sizing.ipynb", r"Gemma-2-9B .*?H/H_kv=(\d+)"),
    "nb04_gemma2_9b_heads_width": from_notebook("04_cache_sizing.ipynb", r"Gemma-2-9B .*?H·d_h=(\d+)"),
    "nb04_gemma2_9b_d_model": from_notebook("04_cache_sizing.ipynb", r"Gemma-2-9B .*? C=(\d+)"),
    "nb04_prefill_nbytes": from_notebook("04_cache_sizing.ipynb", r"KVCache after prefill: seq_len=\d+, nbytes=([\d,]*\d)"),
    "nb04_decode_step_bytes": from_notebook("04_cache_sizing.ipynb", r"decode step 0: \+([\d,]+) bytes"),
    "nb04_static_nbytes": from_notebook("04_cache_sizing.ipynb", r"StaticKVCache: \d+ of \d+ positions filled, nbytes=([\d,]*\d)"),
    "nb04_bf16_nbytes": from_notebook("04_cache_sizing.ipynb", r"bfloat16 KVCache: nbytes=([\d,]+)"),
    "nb04_llama2_13b_per_token_kib": _per_token_kib("Llama-2-13B"),
    "nb04_qwen25_7b_per_token_kib": _per_token_kib("Qwen2.5-7B"),
    "nb04_gemma2_9b_per_token_kib": _per_token_kib("Gemma-2-9B"),
    "nb04_llama31_70b_per_token_kib": _per_token_kib("Llama-3.1-70B"),
    # one fp16 sequence at 4k/32k/128k tokens, in GiB with two decimals as the notebook's table prints it
    **{f"nb04_{m}_{T // 1024}k_gib": (lambda m=m, T=T: f"{cache_bytes_for(MODEL_PRESETS[m], 1, T) / 2**30:,.2f}")
       for m in ("Llama-2-7B", "Llama-2-13B", "Llama-3-8B", "Qwen2.5-7B", "Gemma-2-9B", "Llama-3.1-70B")
       for T in (4096, 32768, 131072)},
    "nb04_ratio_llama3_8b_vs_llama2_7b": from_notebook("04_cache_sizing.ipynb", r"Llama-3-8B \(GQA\) needs ([\d.]+)x"),
    "nb04_ratio_llama2_70b_vs_13b": from_notebook("04_cache_sizing.ipynb", r"Llama-2-70B \(GQA\) needs ([\d.]+)x"),
    "nb04_llama2_70b_mha_factor": from_notebook("04_cache_sizing.ipynb", r"H_kv=64\) would need (\d+)x"),
    "nb04_llama3_8b_params": from_notebook("04_cache_sizing.ipynb", r"Llama-3-8B: ([\d,]+) parameters"),
    "nb04_llama3_8b_weights_gib": from_notebook("04_cache_sizing.ipynb", r"parameters -> weights ([\d.]+) GiB"),
    "nb04_fit_1k": from_notebook("04_cache_sizing.ipynb", r"T =\s+1,024 tokens: .*?->\s+(\d+) requests fit"),
    "nb04_fit_2k": from_notebook("04_cache_sizing.ipynb", r"T =\s+2,048 tokens: .*?->\s+(\d+) requests fit"),
    "nb04_fit_4k": from_notebook("04_cache_sizing.ipynb", r"T =\s+4,096 tokens: .*?->\s+(\d+) requests fit"),
    "nb04_fit_8k": from_notebook("04_cache_sizing.ipynb", r"T =\s+8,192 tokens: .*?->\s+(\d+) requests fit"),
    "nb04_free_gib": from_notebook("04_cache_sizing.ipynb", r"on 80 GiB leaves ([\d.]+) GiB for caches"),
    "nb04_free_tokens": from_notebook("04_cache_sizing.ipynb", r"= ([\d,]+) cached tokens in total"),
    "nb04_fit_tokens_total": from_notebook("04_cache_sizing.ipynb", r"requests x\s+2,048 tokens = ([\d,]+) tokens"),
    "nb04_fit_8k_fp8_cache": lambda: str(max_concurrent_requests(  # bf16 weights, an 8-bit cache
        MODEL_PRESETS["Llama-3-8B"], 8192, 80 * 2**30, weight_bytes=MODEL_PRESETS["Llama-3-8B"].n_params * 2,
        dtype="float8", reserve_fraction=0.1)),
    "nb04_positions_without_cache": from_notebook("04_cache_sizing.ipynb", r"new tokens: ([\d,]+) positions without"),
    "nb04_positions_with_cache": from_notebook("04_cache_sizing.ipynb", r"positions without a cache, ([\d,]+) with it"),
    "nb04_positions_ratio": from_notebook("04_cache_sizing.ipynb", r"with it: (\d+)x fewer positions"),
    "nb04_tflop_without_cache": from_notebook("04_cache_sizing.ipynb", r"Llama-3-8B: ([\d,]+) TFLOP without a cache"),
    "nb04_tflop_with_cache": from_notebook("04_cache_sizing.ipynb", r"TFLOP without a cache, ([\d,]+) TFLOP with it"),
    "nb04_flop_ratio": from_notebook("04_cache_sizing.ipynb", r"TFLOP with it: (\d+)x less work"),
    "nb04_lm_head_tflop": from_notebook("04_cache_sizing.ipynb", r"\nlm_head\s+([\d.,]+)\s+[\d.,]+\s+\d+x"),
    "nb04_attention_tflop_ratio": from_notebook("04_cache_sizing.ipynb", r"\nattention\s+[\d.,]+\s+[\d.,]+\s+(\d+)x"),
    "nb04_ratio_with_lm_head": from_notebook("04_cache_sizing.ipynb", r"projections \+ MLP \+ lm_head only: (\d+)x"),
    "nb04_ratio_with_attention": from_notebook("04_cache_sizing.ipynb", r"projections \+ MLP \+ attention only: (\d+)x"),
    "nb04_llama3_8b_weights_read_gib": from_notebook("04_cache_sizing.ipynb", r"a decode step reads ([\d.]+) GiB of them"),
    "nb04_static_used_tokens": from_notebook("04_cache_sizing.ipynb", r"a ([\d,]+)-token request in a cache preallocated"),
    "nb04_static_used_mib": from_notebook("04_cache_sizing.ipynb", r"preallocated for 8,192: uses ([\d.]+) MiB"),
    "nb04_static_wasted": from_notebook("04_cache_sizing.ipynb", r"\((\d+%) wasted\)"),
    "nb04_llama3_8b_b8_8k_gib": lambda: f"{cache_bytes_for(MODEL_PRESETS['Llama-3-8B'], 8, 8192) / 2**30:.1f}",
    # --- 05 ---
    "nb05_vocab": from_notebook("05_sampling_and_stopping.ipynb", r"course model: .*?V=(\d+)"),
    "nb05_p_cat": from_notebook("05_sampling_and_stopping.ipynb", r"猫\s+p = ([\d.]+)"),
    "nb05_t05_p_cat": from_notebook("05_sampling_and_stopping.ipynb", r"T = 0\.5\s+p\(猫\) = ([\d.]+)"),
    "nb05_t2_p_cat": from_notebook("05_sampling_and_stopping.ipynb", r"T = 2\.0\s+p\(猫\) = ([\d.]+)"),
    "nb05_t05_entropy": from_notebook("05_sampling_and_stopping.ipynb", r"T = 0\.5 .*?entropy = ([\d.]+) nats"),
    "nb05_t1_entropy": from_notebook("05_sampling_and_stopping.ipynb", r"T = 1\.0 .*?entropy = ([\d.]+) nats"),
    "nb05_t2_entropy": from_notebook("05_sampling_and_stopping.ipynb", r"T = 2\.0 .*?entropy = ([\d.]+) nats"),
    "nb05_topp_kept_like": from_notebook("05_sampling_and_stopping.ipynb",
                                         r"after “<BOS> 我 喜欢”\n.*\n  top_p=0\.9 keeps\s+(\d+)"),
    "nb05_topp_kept_bos": from_notebook("05_sampling_and_stopping.ipynb",
                                        r"after “<BOS>”\n.*\n  top_p=0\.9 keeps\s+(\d+)"),
    "nb05_panel_kept": from_notebook("05_sampling_and_stopping.ipynb", r"kept set: (\d+) of \d+ tokens"),
    "nb05_panel_mass": from_notebook("05_sampling_and_stopping.ipynb", r"holding (\d+%) of the model's probability"),
    "nb05_step_t1_two": from_notebook("05_sampling_and_stopping.ipynb", r"T = 1 +kept set.*?two ([\d.]+)"),
    "nb05_step_t1_a": from_notebook("05_sampling_and_stopping.ipynb", r"T = 1 +kept set.*?, a ([\d.]+)"),
    "nb05_step_t1_three": from_notebook("05_sampling_and_stopping.ipynb", r"T = 1 +kept set.*?three ([\d.]+)"),
    "nb05_step_nucleus_two": from_notebook("05_sampling_and_stopping.ipynb", r"top_p = 0\.6 +kept set.*?two ([\d.]+)"),
    "nb05_step_nucleus_a": from_notebook("05_sampling_and_stopping.ipynb", r"top_p = 0\.6 +kept set.*?, a ([\d.]+)"),
    "nb05_eos_length": from_notebook("05_sampling_and_stopping.ipynb", r"row 0: eos +length (\d+)"),
    "nb05_stop_string_length": from_notebook("05_sampling_and_stopping.ipynb", r"row 0: stop_string +length (\d+)"),
    "nb05_batch_shape": from_notebook("05_sampling_and_stopping.ipynb", r"input_ids \[B, T\] = (\[\d+, \d+\])"),
    "nb05_batch_lengths": from_notebook("05_sampling_and_stopping.ipynb", r"lengths: +(\[[\d, ]+\])"),
    **{f"nb05_example_{what}_t{T:g}": _nucleus_example(T, what)
       for T in (1.0, 2.0) for what in ("probs", "cumsum", "kept", "n_kept", "kept_filter_first")},
    # top_p = 0.9 after "我 喜欢": tokens kept with the temperature first and with the filter first
    **{f"nb05_order_{key}_t{name}": from_notebook("05_sampling_and_stopping.ipynb",
                                                 rf"T = {T}\s+tokens kept: " + pattern)
       for name, T in (("05", 0.5), ("1", 1.0), ("2", 2.0), ("4", 4.0))
       for key, pattern in (("temp_first", r"temperature first\s+(\d+)"), ("filter_first", r".*?filtering first\s+(\d+)"))},
    # --- 06 ---
    "nb06_course_model": from_notebook("06_performance_metrics.ipynb",
                                       r"course model: (L=\d+, C=\d+, H=\d+, H_kv=\d+, d_h=\d+, V=\d+), [\d,]+ parameters"),
    "nb06_course_params": from_notebook("06_performance_metrics.ipynb", r"course model: .*?, ([\d,]+) parameters"),
    "nb06_ex_latency_s": from_notebook("06_performance_metrics.ipynb", r"latency    = TTFT .*? = ([\d.]+) s"),
    "nb06_ex_throughput": from_notebook("06_performance_metrics.ipynb", r"throughput = B x n / latency .*? = ([\d.]+) tokens/s"),
    "nb06_ex_decode_throughput": from_notebook("06_performance_metrics.ipynb", r"while decoding, B / TPOT .*? = (\d+) tokens/s"),
    "nb06_ex_kv_bytes": from_notebook("06_performance_metrics.ipynb", r"B=8, T=256, float32: .*? = ([\d,]+) bytes"),
    "nb06_ttft_ms": from_notebook("06_performance_metrics.ipynb", r"TTFT ([\d.]+) ms \| TPOT"),
    "nb06_tpot_ms": from_notebook("06_performance_metrics.ipynb", r"TTFT [\d.]+ ms \| TPOT ([\d.]+) ms"),
    "nb06_latency_ms": from_notebook("06_performance_metrics.ipynb", r"\| latency ([\d.]+) ms \| throughput"),
    "nb06_throughput": from_notebook("06_performance_metrics.ipynb", r"\| latency [\d.]+ ms \| throughput (\d+) tokens/s"),
    "nb06_n_tokens": from_notebook("06_performance_metrics.ipynb", r"new tokens n: (\d+) \|"),
    "nb06_tpot_samples": from_notebook("06_performance_metrics.ipynb", r"gaps between them: (\d+)"),
    # TPOT and ITL from the same gaps (section 2), and one made-up 20 ms stall
    "nb06_itl_tpot_ms": from_notebook("06_performance_metrics.ipynb", r"TPOT ([\d.]+) ms \| ITL over"),
    "nb06_itl_median_ms": from_notebook("06_performance_metrics.ipynb", r"ITL over \d+ gaps: median ([\d.]+)"),
    "nb06_itl_p99_ms": from_notebook("06_performance_metrics.ipynb", r"ITL over \d+ gaps: .*?p99 ([\d.]+)"),
    "nb06_itl_max_ms": from_notebook("06_performance_metrics.ipynb", r"ITL over \d+ gaps: .*?max ([\d.]+) ms"),
    "nb06_stall_tpot_ms": from_notebook("06_performance_metrics.ipynb", r"with one 20 ms stall: TPOT ([\d.]+) ms"),
    "nb06_stall_p99_ms": from_notebook("06_performance_metrics.ipynb", r"with one 20 ms stall: .*?ITL p99 ([\d.]+) ms"),
    "nb06_stall_max_ms": from_notebook("06_performance_metrics.ipynb", r"with one 20 ms stall: .*?max ([\d.]+) ms"),
    "nb06_stall_median_ms": from_notebook("06_performance_metrics.ipynb", r"with one 20 ms stall: .*?ITL median ([\d.]+) ms"),
    "nb06_wall_ms": from_notebook("06_performance_metrics.ipynb", r"the call from outside ([\d.]+) ms"),
    "nb06_kv_T": from_notebook("06_performance_metrics.ipynb", r"KV memory for T=(\d+):"),
    "nb06_kv_bytes": from_notebook("06_performance_metrics.ipynb", r"KV memory for T=\d+: ([\d,]+) bytes"),
    "nb06_small_shape": from_notebook("06_performance_metrics.ipynb", r"'small': (L=\d+, C=\d+, H=\d+, H_kv=\d+, V=\d+)"),
    "nb06_small_params": from_notebook("06_performance_metrics.ipynb", r"'small': .*?, ([\d.]+) M parameters"),
    # the TTFT / TPOT table of section 3, one fact per (column, T) the lesson quotes
    **{f"nb06_{col}_{T}": from_notebook("06_performance_metrics.ipynb", r"TPOT cache  no cache[^\n]*\n(?:[^\n]*\n)*?\s*" + str(T)
                                        + r" \|\s+{}\s+{} \|\s+{}\s+{}\n".format(*[r"([\d.]+)" if j == i else r"[\d.]+" for j in range(4)]))
       for T in (32, 512) for i, col in enumerate(("ttft_cached", "ttft_no_cache", "tpot_cached", "tpot_no_cache"))},
    "nb06_tpot_speedup": from_notebook("06_performance_metrics.ipynb", r"a decode step without the cache takes (\d+)x"),
    "nb06_speedup_T": from_notebook("06_performance_metrics.ipynb", r"at T=(\d+), a decode step without the cache"),
    "nb06_flat_same": from_notebook("06_performance_metrics.ipynb", r"same logits, bit for bit: (\w+)"),
    "nb06_modules_ms": from_notebook("06_performance_metrics.ipynb", r"module by module ([\d.]+) ms"),
    "nb06_flat_ms": from_notebook("06_performance_metrics.ipynb", r"module by module [\d.]+ ms, flat ([\d.]+) ms"),
    "nb06_flat_speedup": from_notebook("06_performance_metrics.ipynb", r"the flat step is ([\d.]+)x faster"),
    "nb06_python_share": from_notebook("06_performance_metrics.ipynb", r"the module calls alone cost (\d+%) of the module step"),
    # bytes per batch-1 decode step (section 4), T = 256, float32
    **{f"nb06_bytes_{key}_{what}": from_notebook("06_performance_metrics.ipynb", rf"(?m)^\s*{name}: " + pattern)
       for key, name in (("small", "small"), ("50m", "50M"), ("100m", "100M"))
       for what, pattern in (("weights", r".*?weights\s+([\d.]+) MB"), ("total", r".*?kB =\s+([\d.]+) MB"),
                             ("flop_per_byte", r".*?([\d.]+) FLOP per byte"))},
    "nb06_50m_params": from_notebook("06_performance_metrics.ipynb", r"(?m)^\s*50M: +([\d.]+) M params"),
    "nb06_50m_kv_read": from_notebook("06_performance_metrics.ipynb", r"(?m)^\s*50M: .*?KV read ([\d.]+) MB"),
    "nb06_step_ms": from_notebook("06_performance_metrics.ipynb", r"decode step ([\d.]+) ms for"),
    "nb06_step_mb": from_notebook("06_performance_metrics.ipynb", r"decode step [\d.]+ ms for (\d+) MB"),
    "nb06_achieved_gbps": from_notebook("06_performance_metrics.ipynb", r"decode step .*? -> ([\d.]+) GB/s"),
    "nb06_copy_gbps": from_notebook("06_performance_metrics.ipynb", r"measured: copy ([\d.]+) GB/s"),
    "nb06_sum_gbps": from_notebook("06_performance_metrics.ipynb", r"measured: copy .*?, sum ([\d.]+) GB/s"),
    "nb06_fraction": from_notebook("06_performance_metrics.ipynb", r"the step reaches (\d+%) of the limit"),
    "nb06_bound_ms": from_notebook("06_performance_metrics.ipynb", r"fastest possible step ([\d.]+) ms"),
    # the memory-bound limit of the 100M model at 100 GB/s, per B (section 5)
    **{f"nb06_bound_b{B}_{what}": from_notebook("06_performance_metrics.ipynb", rf"B=\s*{B}: +[\d.]+ MB per step = +"
                                                + {"per_token_mb": r"([\d.]+) MB per new token",
                                                   "tpot_ms": r"[\d.]+ MB per new token -> TPOT >= ([\d.]+) ms",
                                                   "tokens_per_s": r".*?<= ([\d,]+) tokens/s"}[what])
       for B in (1, 64) for what in ("per_token_mb", "tpot_ms", "tokens_per_s")},
    # where compute takes over: FLOPs per byte at B = 64, against a GPU's ridge (section 5)
    "nb06_bound_b64_flop_per_byte": from_notebook("06_performance_metrics.ipynb", r"at B = 64 the step does ([\d.]+) FLOPs per byte"),
    "nb06_bound_b64_tflops": from_notebook("06_performance_metrics.ipynb", r"takes ([\d.]+) TFLOP/s of float32 arithmetic"),
    "nb06_bound_b64_bf16_flop_per_byte": from_notebook("06_performance_metrics.ipynb", r"in bfloat16 it does ([\d.]+) FLOPs per byte"),
    "nb06_gpu_ridge_a100": from_notebook("06_performance_metrics.ipynb", r"a GPU's ridge: .*?A100 (\d+)"),
    "nb06_gpu_ridge_h100": from_notebook("06_performance_metrics.ipynb", r"a GPU's ridge: .*?H100 (\d+)"),
    # the batch sweep of the 'small' model (section 5), B = 1 and B = 32
    **{f"nb06_sweep_b{B}_{col}": from_notebook("06_performance_metrics.ipynb", r"B \| TTFT ms[^\n]*\n(?:[^\n]*\n)*?\s*" + str(B) + r" \|"
                                               + r"\s+[\d.]+ \|" * i + r"\s+([\d.]+)")
       for B in (1, 32) for i, col in enumerate(("ttft_ms", "tpot_ms", "latency_ms", "throughput"))},
    # while decoding, B rows against one: the tokens/s gained and each request's TPOT (section 5)
    **{f"nb06_sweep_b{B}_{what}": from_notebook("06_performance_metrics.ipynb", rf"decoding, B = +{B} against B = 1: " + pattern)
       for B in (4, 32) for what, pattern in (("decode_gain", r"([\d.]+)x the tokens/s"),
                                              ("tpot_ratio", r"[\d.]+x the tokens/s, ([\d.]+)x each request's TPOT"))},
    # what makes a step of the 'small' model cost the same for many rows (section 5)
    "nb06_fit_fixed_ms": from_notebook("06_performance_metrics.ipynb", r"TPOT ≈ ([\d.]+) ms \+"),
    "nb06_fit_per_row_ms": from_notebook("06_performance_metrics.ipynb", r"TPOT ≈ [\d.]+ ms \+ ([\d.]+) ms x B"),
    "nb06_fit_fixed_share": from_notebook("06_performance_metrics.ipynb", r"at B = 1 the fixed part is (\d+%)"),
    "nb06_fit_rows": from_notebook("06_performance_metrics.ipynb", r"as much work as (\d+) rows"),
    "nb06_twin_small_ms": from_notebook("06_performance_metrics.ipynb", r"one decode step at B = 1: 'small' ([\d.]+) ms"),
    "nb06_twin_thin_ms": from_notebook("06_performance_metrics.ipynb", r"one decode step at B = 1: .*?thin twin ([\d.]+) ms"),
    "nb06_twin_thin_params": from_notebook("06_performance_metrics.ipynb", r"thin twin [\d.]+ ms \(([\d,]+) parameters\)"),
    "nb06_twin_overhead": from_notebook("06_performance_metrics.ipynb", r"per-operation overhead: about (\d+%)"),
    # the worked case of section 6: eight requests arriving one every `gap` ms, two schedules
    "nb06_case_gap_ms": from_notebook("06_performance_metrics.ipynb", r"one request every (\d+) ms \|"),
    **{f"nb06_{key}_{what}": from_notebook("06_performance_metrics.ipynb", rf"{name}\s*: " + pattern)
       for key, name in (("batch", "static batch of 8"), ("alone", "one at a time, on arrival"))
       for what, pattern in (("median_ttft_ms", r"TTFT median\s+(\d+) ms"), ("p90_ttft_ms", r".*?p90\s+(\d+) ms"),
                             ("work_tps", r".*?while computing\s+(\d+)"), ("run_tps", r".*?over the run\s+(\d+)"))},
    "nb06_case_work_ratio": from_notebook("06_performance_metrics.ipynb", r"the batch: ([\d.]+)x the tokens per second of work"),
    "nb06_case_ttft_ratio": from_notebook("06_performance_metrics.ipynb", r"the batch: .*?, (\d+)x the median TTFT"),
    # --- 07 ---
    "nb07_prompt_T": from_notebook("07_bug_lab.ipynb", r"prompt: T = (\d+) tokens"),
    "nb07_n_steps": from_notebook("07_bug_lab.ipynb", r"each check runs (\d+) decode steps"),
    "nb07_tol": from_notebook("07_bug_lab.ipynb", r"; tolerance ([\d.]+)"),
    "nb07_ok_steps": from_notebook("07_bug_lab.ipynb", r"correct cache: OK: (\d+) steps equal"),
    # the "first divergence" column of the bug table, one fact per row
    **{f"nb07_first_{key}": from_notebook("07_bug_lab.ipynb", rf"(?m)^{re.escape(title)} .*\| (step \d+ \(pos \d+\)|raises at step \d+)")
       for key, title in (("positions", "Position ids restart at 0"), ("refeed", "Prompt fed again with cache"),
                          ("concat_axis", "K/V cat on the wrong axis"), ("mask", "Mask ignores the cache"),
                          ("padding", "Padded rows, lengths mixed"), ("dropout", "Dropout left on (train mode)"),
                          ("layer0", "Layer 0's K/V for all layers"), ("beam", "Beam step without reorder"))},
    "nb07_hashes_equal": from_notebook("07_bug_lab.ipynb", r"use_cache changes weights\? .*\| hashes equal: (\w+)"),
    "nb07_fixes_pass": from_notebook("07_bug_lab.ipynb", r"with the fix: every check passes: (\w+)"),
    "nb07_state_hash": from_notebook("07_bug_lab.ipynb", r"before: ([0-9a-f]+)"),
    "nb07_refeed_cache_len": from_notebook("07_bug_lab.ipynb", r"feed everything: cache length after one step = (\d+)"),
    "nb07_expected_cache_len": from_notebook("07_bug_lab.ipynb", r"feed the new token: cache length after one step = (\d+)"),
    "nb07_concat_error": from_notebook("07_bug_lab.ipynb", r"(RuntimeError: Sizes of tensors must match[^\n]*)"),
    "nb07_concat_t1_readable": from_notebook("07_bug_lab.ipynb", r"1-token prompt, readable attention:\s+(diverges at step \d+ \(position \d+\))"),
    "nb07_concat_t1_shape": from_notebook("07_bug_lab.ipynb", r"layer 0 K after one decode step: (\[[\d, ]+\])"),
    "nb07_concat_t1_correct_shape": from_notebook("07_bug_lab.ipynb", r"layer 0 K after one decode step: .*\(correct: (\[[\d, ]+\])\)"),
    "nb07_concat_t1_seq_len": from_notebook("07_bug_lab.ipynb", r"seq_len reported by the cache: (\d+)"),
    "nb07_chunk_mask_error": from_notebook("07_bug_lab.ipynb", r"(RuntimeError: The size of tensor a[^\n]*)"),
    "nb07_beam_reshuffle_parents": from_notebook("07_bug_lab.ipynb", r"step 4: new beams continue beams (\[[\d, ]+\])"),
    # caching hidden states instead of K/V: what it skips, what it redoes, what it stores
    **{f"nb07_{key}_{fact}": from_notebook("07_bug_lab.ipynb", rf"{name}: k_proj \+ v_proj = {pattern}")
       for key, name in (("course", "course model"), ("llama3", "Llama-3-8B"), ("llama2", "Llama-2-7B"))
       for fact, pattern in (("kv_share", r"([\d.]+%)"), ("reproject_T", r"[\s\S]*?once T > (\d+)"),
                             ("hidden_values", r"[\s\S]*?hidden state C = (\d+)"),
                             ("kv_values", r"[\s\S]*?K and V 2·H_kv·d_h = (\d+)"))},
    # --- 08 ---
    "nb08_per_position_bytes": from_notebook("08_beyond_the_basics.ipynb", r"K/V of one position = (\d+) bytes"),
    "nb08_dynamic_bytes_start": from_notebook("08_beyond_the_basics.ipynb", r"dynamic: holds \d+ -> \d+ positions, bytes (\d+) ->"),
    "nb08_dynamic_bytes_end": from_notebook("08_beyond_the_basics.ipynb", r"dynamic: holds \d+ -> \d+ positions, bytes \d+ -> (\d+)"),
    "nb08_dynamic_new_buffers": from_notebook("08_beyond_the_basics.ipynb", r"dynamic: .*new buffers after the prefill: (\d+)"),
    "nb08_static_bytes": from_notebook("08_beyond_the_basics.ipynb", r"static: holds \d+ -> \d+ positions, bytes (\d+) ->"),
    "nb08_static_new_buffers": from_notebook("08_beyond_the_basics.ipynb", r"static: .*new buffers after the prefill: (\d+)"),
    "nb08_positions_end": from_notebook("08_beyond_the_basics.ipynb", r"static: holds \d+ -> (\d+) positions"),
    "nb08_copy_at_250": from_notebook("08_beyond_the_basics.ipynb", r"T=250: dynamic .*?copies\s+([\d.]+ KiB)"),
    "nb08_static_faster": from_notebook("08_beyond_the_basics.ipynb", r"static faster at (\d+) of \d+ cache lengths"),
    "nb08_timing_lengths": from_notebook("08_beyond_the_basics.ipynb", r"static faster at \d+ of (\d+) cache lengths"),
    "nb08_step_ms_min": from_notebook("08_beyond_the_basics.ipynb", r"every step took ([\d.]+) to [\d.]+ ms"),
    "nb08_step_ms_max": from_notebook("08_beyond_the_basics.ipynb", r"every step took [\d.]+ to ([\d.]+) ms"),
    "nb08_llama2_7b_copy_512": from_notebook("08_beyond_the_basics.ipynb", r"T =  512: a growing cache copies ([\d.]+ \w+)"),
    "nb08_llama2_7b_copy_4096": from_notebook("08_beyond_the_basics.ipynb", r"T = 4096: a growing cache copies ([\d.]+ \w+)"),
    "nb08_sliding_last_equal": from_notebook("08_beyond_the_basics.ipynb", r"full attention at positions 0 \.\. (\d+)"),
    "nb08_sliding_first_diff": from_notebook("08_beyond_the_basics.ipynb", r"first position that differs: (\d+)"),
    "nb08_sliding_band_equal": from_notebook("08_beyond_the_basics.ipynb", r"band-mask recompute at every position: (\w+)"),
    "nb08_sliding_stored": from_notebook("08_beyond_the_basics.ipynb", r"positions stored: at most (\d+)"),
    "nb08_sliding_seen": from_notebook("08_beyond_the_basics.ipynb", r"\| tokens seen: (\d+)"),
    **{f"nb08_beam{b}_logprob": from_notebook("08_beyond_the_basics.ipynb", rf"beam {b}: log-prob\s+(-?[\d.]+)") for b in range(4)},
    "nb08_beam_parents_step2": from_notebook("08_beyond_the_basics.ipynb", r"step 2: parents (\[[\d, ]+\])"),
    "nb08_beam_check_steps": from_notebook("08_beyond_the_basics.ipynb", r"dynamic cache, reorder: every beam equals its recompute at all (\d+) steps"),
    "nb08_beam_no_reorder": from_notebook("08_beyond_the_basics.ipynb", r"without reorder: first diverging (step \d+ \(position \d+\))"),
    "nb08_smol_shape": from_notebook("08_beyond_the_basics.ipynb", r"SmolLM2-135M: (L=\d+, C=\d+, H=\d+, H_kv=\d+ \(GQA\), d_h=\d+, V=\d+)"),
    "nb08_smol_float32": from_notebook("08_beyond_the_basics.ipynb", r"M parameters = ([\d.]+ \w+) in float32"),
    "nb08_smol_per_token_kib": from_notebook("08_beyond_the_basics.ipynb", r"SmolLM2-135M K/V cache: ([\d.]+) KiB per token in float32"),
    "nb08_skip_reason": from_notebook("08_beyond_the_basics.ipynb", r"Skipped the pretrained-model cells: ([^\n]+)"),
    # --- 09 ---
    "nb09_questions": from_notebook("09_self_test.ipynb", r"(?m)^(\d+) questions$"),
    **{f"nb09_questions_nb{n:02d}": from_notebook("09_self_test.ipynb", rf"(?m)^  {n:02d} · .*?(\d+) questions$")
       for n in range(9)},
    "nb09_kind_choice": from_notebook("09_self_test.ipynb", r"'single choice': (\d+)"),
    "nb09_kind_truefalse": from_notebook("09_self_test.ipynb", r"'true / false': (\d+)"),
    "nb09_kind_fill": from_notebook("09_self_test.ipynb", r"'fill in': (\d+)"),
    "nb09_kind_open": from_notebook("09_self_test.ipynb", r"'open question': (\d+)"),
    "nb09_first_new_position": from_notebook("09_self_test.ipynb", r"Q10\. [^\n]*\n   Answer: (\d+)"),
}


SPAN = re.compile(r'(<span data-fact="([^"]+)">)([^<]*)(</span>)')


def update_lessons() -> list[str]:
    """Rewrite the fact spans of every lesson with the current values; return the files changed."""
    changed = []
    for path in sorted((ROOT / "lessons").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        new = SPAN.sub(lambda m: m.group(1) + FACTS[m.group(2)]() + m.group(4), text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(str(path.relative_to(ROOT)))
    return changed


def main() -> None:
    if "--update" in sys.argv[1:]:
        for name in update_lessons():
            print(f"updated {name}")
        return
    for name, fn in FACTS.items():
        try:
            value = fn()
        except Exception as e:  # a fact that cannot be computed is shown, not hidden
            value = f"<error: {e}>"
        print(f"{name:40s} {value}")


if __name__ == "__main__":
    main()
