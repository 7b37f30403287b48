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
    "nb01_sat_ln_keys": from_notebook("01_attention_block.ipynb", r"entropy ln \d+ = ([\d.]+) nats"),
    "nb01_sat_raw_max_8": from_notebook("01_attention_block.ipynb", r"d_h =   8: largest weight [\d.]+ scaled, ([\d.]+) unscaled"),
    "nb01_sat_raw_max_512": from_notebook("01_attention_block.ipynb", r"d_h = 512: largest weight [\d.]+ scaled, ([\d.]+) unscaled"),
    "nb01_sat_raw_entropy_8": from_notebook("01_attention_block.ipynb", r"d_h =   8: .*?scaled, ([\d.]+) unscaled \(nats\)"),
    "nb01_sat_raw_entropy_512": from_notebook("01_attention_block.ipynb", r"d_h = 512: .*?scaled, ([\d.]+) unscaled \(nats\)"),
    "nb01_sat_scaled_max_low": from_notebook("01_attention_block.ipynb", r"scaled: the largest weight stays between ([\d.]+) and"),
    "nb01_sat_scaled_max_high": from_notebook("01_attention_block.ipynb", r"scaled: the largest weight stays between [\d.]+ and ([\d.]+)"),
    "nb01_sat_scaled_entropy_low": from_notebook("01_attention_block.ipynb", r"scaled: the entropy stays between ([\d.]+) and"),
    "nb01_sat_scaled_entropy_high": from_notebook("01_attention_block.ipynb", r"scaled: the entropy stays between [\d.]+ and ([\d.]+)"),
    "nb01_rope_base": from_notebook("01_attention_block.ipynb", r"course model: d_h = \d+, base = (\d+):"),
    "nb01_rope_deg_pair0": from_notebook("01_attention_block.ipynb", r"\n\s+0\s+\(0, \d+\)\s+\S+\s+([\d.]+)"),
    "nb01_rope_turn_pair0": from_notebook("01_attention_block.ipynb", r"\n\s+0\s+\(0, \d+\)\s+\S+\s+[\d.]+\s+([\d.,]+) positions"),
    "nb01_rope_deg_last": from_notebook("01_attention_block.ipynb", r"\n\s+15\s+\(15, \d+\)\s+\S+\s+([\d.]+)"),
    "nb01_rope_turn_last": from_notebook("01_attention_block.ipynb", r"\n\s+15\s+\(15, \d+\)\s+\S+\s+[\d.]+\s+([\d.,]+) positions"),
    "nb01_adjacent_std": from_notebook("01_attention_block.ipynb", r"layer 0 scores as trained: std ([\d.]+)"),
    "nb01_adjacent_max_gap": from_notebook("01_attention_block.ipynb", r"adjacent pairs, same weights: max \|Δscore\| = ([\d.]+)"),
    "nb01_adjacent_mean_gap": from_notebook("01_attention_block.ipynb", r"adjacent pairs, same weights: .*?mean \|Δscore\| = ([\d.]+)"),
    "nb01_ported_gap": from_notebook("01_attention_block.ipynb", r"after the permutation: max \|Δscore\| = ([\d.e+-]+)"),
    "nb01_adjacent_diag_gap": from_notebook("01_attention_block.ipynb", r"at the same position \(m = n\): max \|Δscore\| = ([\d.e+-]+)"),
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
    "nb02_pad_cached": from_notebook("02_prefill.ipynb", r"cached positions per layer: \d+ rows x \d+ = (\d+)"),
    "nb02_pad_real": from_notebook("02_prefill.ipynb", r"cached positions per layer: .*?; real tokens: [\d +]+= (\d+)"),
    "nb02_pad_n": from_notebook("02_prefill.ipynb", r"padding: (\d+) of \d+ cached positions"),
    "nb02_pad_pct": from_notebook("02_prefill.ipynb", r"padding: \d+ of \d+ cached positions = (\d+%)"),
    "nb02_pad_per_position": from_notebook("02_prefill.ipynb", r"bytes per cached position and layer \(K and V\): .*? = (\d+)"),
    "nb02_pad_bytes_layer": from_notebook("02_prefill.ipynb", r"bytes spent on padding: (\d+) per layer"),
    "nb02_pad_bytes_total": from_notebook("02_prefill.ipynb", r"bytes spent on padding: \d+ per layer, (\d+) in all"),
    "nb02_pad_cache_bytes": from_notebook("02_prefill.ipynb", r"bytes spent on padding: .*?, of (\d+) cached"),
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
    "nb03_ridge_a100": from_notebook("03_decode.ipynb", r"A100 [^:]*: .*= ridge (\d+) FLOPs per byte"),
    "nb03_ridge_h100": from_notebook("03_decode.ipynb", r"H100 [^:]*: .*= ridge (\d+) FLOPs per byte"),
    "nb03_ridge_batch_a100": from_notebook("03_decode.ipynb", r"first compute-bound B:.*\n\s*0\s+[\d.]+\s+(\d+)\s+\d+\n"),
    "nb03_ridge_batch_h100": from_notebook("03_decode.ipynb", r"first compute-bound B:.*\n\s*0\s+[\d.]+\s+\d+\s+(\d+)\n"),
    "nb03_ridge_max_batch": from_notebook("03_decode.ipynb", r"\(-: not within B <= ([\d,]+)\)"),
    "nb03_ridge_intensity_1k": from_notebook("03_decode.ipynb", r"first compute-bound B:.*\n(?:.*\n)*?\s*1024\s+([\d.]+)\s+-"),
    "nb03_ridge_intensity_8k": from_notebook("03_decode.ipynb", r"first compute-bound B:.*\n(?:.*\n)*?\s*8192\s+([\d.]+)\s+-"),
    # a wrong position, measured on the whole model
    "nb03_wrong_pos_gap": from_notebook("03_decode.ipynb", r"at position 0 instead of \d+: max \|Δlogit\| = ([\d.]+)"),
    "nb03_wrong_pos_tol_x": from_notebook("03_decode.ipynb", r"at position 0 instead of \d+: .*= ([\d,]+) x TOL"),
    "nb03_wrong_pos_top": from_notebook("03_decode.ipynb", r"top next token: (\S+) -> \S+ \(unchanged\)"),
    "nb03_wrong_pos_step": from_notebook("03_decode.ipynb", r"decode step (\d+) \(position \d+ fed at 0\)"),
    "nb03_wrong_pos_step_from": from_notebook("03_decode.ipynb", r"fed at 0\): top token (\S+) ->"),
    "nb03_wrong_pos_step_to": from_notebook("03_decode.ipynb", r"fed at 0\): top token \S+ -> (\S+),"),
    "nb03_wrong_pos_step_gap": from_notebook("03_decode.ipynb", r"fed at 0\): .*max \|Δlogit\| = ([\d.]+)"),
    # the long-context model: bytes per step against T, and its measured step times
    "nb03_long_kv_per_token": from_notebook("03_decode.ipynb", r"K/V per cached token: ([\d,]+) bytes"),
    "nb03_long_crossover": from_notebook("03_decode.ipynb", r"K/V per cached token: .*?reaches the weights read at T = ([\d,]+)"),
    "nb03_long_weights": from_notebook("03_decode.ipynb", r"K/V share\n\s*512\s+([\d.]+ MiB)"),
    "nb03_long_kv_share_16k": from_notebook("03_decode.ipynb", r"K/V share\n(?:.*\n)*?16,384\s+(?:[\d.]+ MiB\s+){3}(\d+%)"),
    "nb03_long_ms_min": from_notebook("03_decode.ipynb", r"median ms   quartiles ms.*\n\s*512\s+([\d.]+)"),
    "nb03_long_ms_max": from_notebook("03_decode.ipynb", r"median ms   quartiles ms.*\n(?:.*\n)*?16,384\s+([\d.]+)"),
    "nb03_long_ratio": from_notebook("03_decode.ipynb", r"step at T=16,384 vs T=512: x([\d.]+)"),
    "nb03_long_gbps_min": from_notebook("03_decode.ipynb", r"effective bandwidth ([\d.]+) to [\d.]+ GB/s"),
    "nb03_long_gbps_max": from_notebook("03_decode.ipynb", r"effective bandwidth [\d.]+ to ([\d.]+) GB/s"),
    "nb03_long_bw_share": from_notebook("03_decode.ipynb", r"effective bandwidth .*?: about (\d+%) of the"),
    "nb03_long_fit_fixed": from_notebook("03_decode.ipynb", r"fitted: ([\d.]+) ms \+"),
    "nb03_long_fit_per_1k": from_notebook("03_decode.ipynb", r"fitted: [\d.]+ ms \+ ([\d.]+) ms per 1k"),
    "nb03_long_fit_crossover": from_notebook("03_decode.ipynb", r"the two parts are equal at T = ([\d,]+)"),
    # arithmetic intensity against the ridge points: two GPUs (published) and this CPU (measured)
    **{f"nb03_intensity_b{B}": from_notebook("03_decode.ipynb", rf"decode B = {B:2d}, T = 1,024\s+[\d,]+\s+[\d.]+\s+([\d.]+)")
       for B in (1, 8, 64)},
    "nb03_prefill_intensity": from_notebook("03_decode.ipynb", r"prefill of 1,024 tokens\s+[\d,]+\s+[\d.]+\s+([\d.]+)\s+compute"),
    "nb03_source_a100": from_notebook("03_decode.ipynb", r"A100 [^\n]*\n\s+source: ([^\n]+)"),
    "nb03_source_h100": from_notebook("03_decode.ipynb", r"H100 [^\n]*\n\s+source: ([^\n]+)"),
    "nb03_cpu_gflops": from_notebook("03_decode.ipynb", r"this CPU [^:]*: (\d+) GFLOP/s"),
    "nb03_cpu_gbps": from_notebook("03_decode.ipynb", r"this CPU [^:]*: \d+ GFLOP/s / ([\d.]+) GB/s"),
    "nb03_cpu_ridge": from_notebook("03_decode.ipynb", r"this CPU [^:]*: .*= ridge ([\d.]+) FLOPs per byte"),
    "nb03_cpu_decode_gbps": from_notebook("03_decode.ipynb", r"at the bandwidth a decode step reaches .*? / ([\d.]+) GB/s"),
    "nb03_cpu_decode_ridge": from_notebook("03_decode.ipynb", r"at the bandwidth a decode step reaches .*= ridge ([\d.]+) FLOPs"),
    # the float32 table on this CPU: intensity, then the bound against the ideal ridge and against decode's
    **{f"nb03_cpu_{col}_b{B}": from_notebook("03_decode.ipynb", r"FLOPs per byte  ideal .*\n(?:.*\n)*?\s*decode B = " + f"{B:2d}"
                                              + r"\s+" + r"\s+".join(f"({pat})" if j == i else f"(?:{pat})"
                                                                     for j, pat in enumerate([r"[\d.]+", r"\w+", r"\w+"])) + r"\n")
       for i, col in enumerate(["intensity", "bound", "bound_decode"]) for B in (1, 8, 64)},
    "nb03_cpu_prefill_intensity": from_notebook("03_decode.ipynb", r"FLOPs per byte  ideal .*\n(?:.*\n)*?\s*prefill of 1,024 tokens\s+([\d.]+)"),
    "nb03_cpu_ridge_batch": from_notebook("03_decode.ipynb", r"first compute-bound B at T = 1,024: (\d+) against the ideal"),
    "nb03_cpu_ridge_batch_decode": from_notebook("03_decode.ipynb", r"first compute-bound B at T = 1,024: .*?, (\d+) against decode's"),
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
    # padding: a static batch of 1k ... 8k-token requests, and the planner with its padding share
    "nb04_pad_batch_positions": from_notebook("04_cache_sizing.ipynb", r"padded to [\d,]+: ([\d,]+) positions for"),
    "nb04_pad_batch_real": from_notebook("04_cache_sizing.ipynb", r"positions for ([\d,]+) real tokens"),
    "nb04_pad_share": from_notebook("04_cache_sizing.ipynb", r"real tokens \(([\d.]+%) padding\)"),
    "nb04_pad_reserved": from_notebook("04_cache_sizing.ipynb", r"Llama-3-8B cache, bfloat16: ([\d.]+ GiB) reserved"),
    "nb04_pad_real": from_notebook("04_cache_sizing.ipynb", r"GiB reserved, ([\d.]+ GiB) of it for real tokens"),
    "nb04_pad_fit": from_notebook("04_cache_sizing.ipynb", r"% padding: (\d+) fit;"),
    "nb04_pad_bytes": from_notebook("04_cache_sizing.ipynb", r"% padding: \d+ fit; ([\d.]+ GiB) of their"),
    "nb04_pad_cache": from_notebook("04_cache_sizing.ipynb", r"% padding: \d+ fit; [\d.]+ GiB of their ([\d.]+ GiB)"),
    "nb04_pad_real_tokens": from_notebook("04_cache_sizing.ipynb", r"holding only their real tokens \(([\d,]+) each\)"),
    "nb04_pad_fit_real_only": from_notebook("04_cache_sizing.ipynb", r"each\), (\d+) requests would fit"),
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
    # the parts of a waiting request's TTFT (section 2)
    **{f"nb06_parts_{key}": from_notebook("06_performance_metrics.ipynb", pattern) for key, pattern in (
        ("arrival_ms", r"request 1 arrives at ([\d.]+) ms"), ("wait_ms", r"request 1 arrives at .*?waiting ([\d.]+) ms"),
        ("prefill_ms", r"setup and prefill ([\d.]+) ms \+ first"), ("sample_ms", r"first sampling ([\d.]+) ms = TTFT"),
        ("ttft_ms", r"first sampling [\d.]+ ms = TTFT ([\d.]+) ms"))},
    # the roofline of the 50M model on this machine's measured roofs (section 5)
    "nb06_roof_gflops": from_notebook("06_performance_metrics.ipynb", r"this machine: (\d+) GFLOP/s"),
    "nb06_roof_gbps": from_notebook("06_performance_metrics.ipynb", r"this machine: \d+ GFLOP/s \(matmul\), ([\d.]+) GB/s"),
    "nb06_roof_ridge": from_notebook("06_performance_metrics.ipynb", r"its ridge is ([\d.]+) FLOPs per byte"),
    **{f"nb06_roof_b{B}_{key}": from_notebook("06_performance_metrics.ipynb", rf"B=\s*{B}: " + pattern)
       for B in (1, 64) for key, pattern in (
           ("mb", r"([\d.]+) MB and"), ("gflop", r"[\d.]+ MB and\s+([\d.]+) GFLOP"), ("memory_ms", r".*?memory\s+([\d.]+) ms"),
           ("compute_ms", r".*?compute\s+([\d.]+) ms"), ("tpot_ms", r".*?TPOT >=\s+([\d.]+) ms"),
           ("bound_by", r".*?\((\w+)-bound\)"), ("tokens_per_s", r".*?<= ([\d,]+) tokens/s"))},
    # the same bound in the Chinese lesson's words (the numbers come from the English notebook)
    **{f"nb06_roof_b{B}_bound_by_zh": (lambda read: lambda: {"memory": "访存受限", "compute": "计算受限"}[read()])(
        from_notebook("06_performance_metrics.ipynb", rf"B=\s*{B}: .*?\((\w+)-bound\)")) for B in (1, 64)},
    "nb06_ridge_batch": from_notebook("06_performance_metrics.ipynb", r"the two roofs cross at the ridge batch B = (\d+)"),
    "nb06_memonly_tokens_per_s": from_notebook("06_performance_metrics.ipynb", r"the memory roof alone would allow ([\d,]+) tokens/s"),
    "nb06_memonly_tflops": from_notebook("06_performance_metrics.ipynb", r"that takes ([\d.]+) TFLOP/s"),
    "nb06_memonly_ratio": from_notebook("06_performance_metrics.ipynb", r"TFLOP/s, (\d+)x what this core computes"),
    "nb06_bf16_flop_per_byte": from_notebook("06_performance_metrics.ipynb", r"in bfloat16 the 50 M model's step at B = 64 does ([\d.]+) FLOPs per byte"),
    "nb06_gpu_ridge_a100": from_notebook("06_performance_metrics.ipynb", r"a GPU's ridge: .*?A100 (\d+)"),
    "nb06_gpu_ridge_h100": from_notebook("06_performance_metrics.ipynb", r"a GPU's ridge: .*?H100 (\d+)"),
    # the batch sweeps of the 50M and the 'small' model (section 5): first and last B, the fit, the regimes
    **{f"nb06_sweep_{key}_b{B}_{col}": from_notebook("06_performance_metrics.ipynb", rf"(?m)^\s*{name}\s+{B} \|"
                                                     + r"\s+[\d.]+ \|" * i + r"\s+([\d.]+)")
       for key, name, Bs in (("50m", "50M", (1, 32)), ("small", "small", (1, 32))) for B in Bs
       for i, col in enumerate(("ttft_ms", "tpot_ms", "latency_ms", "throughput", "decode_tps"))},
    **{f"nb06_fit_{key}_{what}": from_notebook("06_performance_metrics.ipynb", rf"'{name}': TPOT ≈ " + pattern)
       for key, name in (("50m", "50M"), ("small", "small")) for what, pattern in (
           ("fixed_ms", r"([\d.]+) ms"), ("per_row_ms", r"[\d.]+ ms \+ ([\d.]+) ms x B"),
           ("fixed_share", r".*?the fixed part is (\d+%)"), ("rows", r".*?as much work as (\d+) rows"))},
    **{f"nb06_sweep_{key}_b{B}_{what}": from_notebook("06_performance_metrics.ipynb", rf"'{name}' decoding, B = +{B} against B = 1: " + pattern)
       for key, name, Bs in (("50m", "50M", (4, 32)), ("small", "small", (4, 32))) for B in Bs
       for what, pattern in (("decode_gain", r"([\d.]+)x the tokens/s"),
                             ("tpot_ratio", r"[\d.]+x the tokens/s, ([\d.]+)x each request's TPOT"))},
    **{f"nb06_regime_{key}_{what}": from_notebook("06_performance_metrics.ipynb", rf"'{name}': fixed " + pattern)
       for key, name in (("50m", "50M"), ("small", "small")) for what, pattern in (
           ("memory_ms", r"[\d.]+ ms against the memory roof's ([\d.]+) ms"), ("gbps", r".*?bytes / fixed part: ([\d.]+) GB/s"),
           ("compute_ms", r".*?against the compute roof's ([\d.]+) ms"), ("mflop", r".*?for its (\d+) MFLOP"))},
    # what makes a step of the 'small' model cost the same for many rows (section 5)
    "nb06_twin_small_ms": from_notebook("06_performance_metrics.ipynb", r"one decode step at B = 1: 'small' ([\d.]+) ms"),
    "nb06_twin_thin_ms": from_notebook("06_performance_metrics.ipynb", r"one decode step at B = 1: .*?thin twin ([\d.]+) ms"),
    "nb06_twin_thin_params": from_notebook("06_performance_metrics.ipynb", r"thin twin [\d.]+ ms \(([\d,]+) parameters\)"),
    "nb06_twin_overhead": from_notebook("06_performance_metrics.ipynb", r"per-operation overhead: about (\d+%)"),
    # requests arriving over time, served three ways (section 6)
    "nb06_arr_n": from_notebook("06_performance_metrics.ipynb", r"(\d+) requests: prompts of"),
    "nb06_arr_prompts": from_notebook("06_performance_metrics.ipynb", r"requests: prompts of (\d+-\d+) tokens"),
    "nb06_arr_new": from_notebook("06_performance_metrics.ipynb", r"tokens, (\d+-\d+) new tokens each"),
    "nb06_arr_alone_ms": from_notebook("06_performance_metrics.ipynb", r"one request alone takes ([\d.]+) ms"),
    "nb06_arr_quiet_rate": from_notebook("06_performance_metrics.ipynb", r"quiet = (\d+) requests/s"),
    "nb06_arr_busy_rate": from_notebook("06_performance_metrics.ipynb", r"busy = (\d+) requests/s"),
    **{f"nb06_arr_{load}_{policy}_{col}": from_notebook("06_performance_metrics.ipynb", rf"(?m)^{load}\s+{re.escape(name)}\s*"
                                                        + r"[\s|]+[\d.]+" * i + r"[\s|]+([\d.]+)")
       for load in ("quiet", "busy")
       for policy, name in (("fifo", "one at a time (FIFO)"), ("static", "static batches"), ("continuous", "continuous batching"))
       for i, col in enumerate(("ttft_p50", "ttft_p95", "tpot_p50", "tpot_p95", "itl_p50", "itl_p95", "e2e_p50", "e2e_p95",
                                "tps", "rps", "busy_tps"))},
    "nb06_arr_work_ratio": from_notebook("06_performance_metrics.ipynb", r"static batches compute ([\d.]+)x the tokens per second"),
    "nb06_arr_ttft_ratio": from_notebook("06_performance_metrics.ipynb", r"their median TTFT is (\d+)x as long"),
    # continuous batching's TPOT at the busy rate: sharing the steps against the stalls of the joins
    **{f"nb06_split_{key}": from_notebook("06_performance_metrics.ipynb", r"continuous batching, busy: " + pattern)
       for key, pattern in (("tpot_ms", r"TPOT p50 ([\d.]+) ms"), ("no_stalls_ms", r".*?, ([\d.]+) ms without the gaps"),
                            ("fifo_ms", r".*?one at a time ([\d.]+) ms"), ("shared", r".*?sharing the steps makes (\d+%)"),
                            ("stalls", r".*?the stalls (\d+%)"))},
    # the replayed costs: the mean decode step per row count, and StepCostModel's fitted straight line
    **{f"nb06_cost_decode_{rows}row_ms": from_notebook("06_performance_metrics.ipynb",
                                                       rf"decode step, mean per row count: .*?\b{rows}: ([\d.]+)")
       for rows in (1, 2)},
    # the most rows a decode step carried in those runs (how many depends on how the arrivals fell), and its mean
    "nb06_cost_decode_most_rows": from_notebook("06_performance_metrics.ipynb",
                                                r"decode step, mean per row count: .*\b(\d+): [\d.]+ ms \(the fitted straight"),
    "nb06_cost_decode_most_ms": from_notebook("06_performance_metrics.ipynb",
                                              r"decode step, mean per row count: .*\b\d+: ([\d.]+) ms \(the fitted straight"),
    "nb06_cost_line_1row_ms": from_notebook("06_performance_metrics.ipynb", r"the fitted straight line says ([\d.]+) ms for one row"),
    "nb06_cost_line_most_ms": from_notebook("06_performance_metrics.ipynb",
                                            r"the fitted straight line says [\d.]+ ms for one row, ([\d.]+) ms for \d+\)"),
    "nb06_cost_join_ms": from_notebook("06_performance_metrics.ipynb", r"joining a batch ([\d.]+) ms"),
    # the roofline at the bandwidth the decode step reaches (section 5), and TPOT against max and sum of the roofs
    "nb06_kernel_gbps": from_notebook("06_performance_metrics.ipynb", r"the decode step itself reaches \(([\d.]+) GB/s"),
    "nb06_kernel_ridge": from_notebook("06_performance_metrics.ipynb", r"section 4\), the ridge is ([\d.]+) FLOPs per byte"),
    "nb06_kernel_ridge_batch": from_notebook("06_performance_metrics.ipynb", r"this machine's kernels cross at B = (\d+)"),
    **{f"nb06_summax_b{B}_{key}": from_notebook("06_performance_metrics.ipynb", rf"(?m)^B=\s*{B}: measured " + pattern)
       for B in (8, 32) for key, pattern in (("measured_ms", r"\s*([\d.]+)"), ("max_ms", r".*?max\(memory, compute\)\s+([\d.]+)"),
                                             ("sum_ms", r".*?memory \+ compute\s+([\d.]+)"))},
    "nb06_twin_fixed_share": from_notebook("06_performance_metrics.ipynb", r"the thin twin's step is (\d+%) of the fitted fixed part"),
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
    # section 4: our cache beside transformers' DynamicCache, on a tiny random Llama
    "nb08_bridge_model": from_notebook("08_beyond_the_basics.ipynb", r"LlamaForCausalLM with random weights, (L=\d+, C=\d+, H=\d+, H_kv=\d+, d_h=\d+, V=\d+)"),
    "nb08_bridge_shape": from_notebook("08_beyond_the_basics.ipynb", r"layer 0: K (\[[\d, ]+\]) and"),
    **{f"nb08_bridge_{kv.lower()}{layer}_diff": from_notebook(
        "08_beyond_the_basics.ipynb", rf"layer {layer}: K .*?max \|ours - theirs\| = " + (r"([\d.e+-]+);" if kv == "K" else r"[\d.e+-]+; V: ([\d.e+-]+)"))
       for layer in (0, 1) for kv in ("K", "V")},
    "nb08_bridge_logits_diff": from_notebook("08_beyond_the_basics.ipynb", r"logits of the last position: max \|ours - theirs\| = ([\d.e+-]+)"),
    "nb08_bridge_v0_bits": from_notebook("08_beyond_the_basics.ipynb", r"layer 0: V bit for bit the same: (\w+)"),
    "nb08_bridge_k0_readable_bits": from_notebook("08_beyond_the_basics.ipynb", r"layer 0: K rotated with apply_rope \(multiply, then add\) bit for bit the same: (\w+)"),
    "nb08_bridge_tokens": from_notebook("08_beyond_the_basics.ipynb", r"the same (\d+) greedy tokens in both rows: True"),
    # --- 09 ---
    "nb09_questions": from_notebook("09_self_test.ipynb", r"(?m)^(\d+) questions$"),
    **{f"nb09_questions_nb{n:02d}": from_notebook("09_self_test.ipynb", rf"(?m)^  {n:02d} · .*?(\d+) questions$")
       for n in (*range(9), *range(10, 14))},
    "nb09_kind_choice": from_notebook("09_self_test.ipynb", r"'single choice': (\d+)"),
    "nb09_kind_truefalse": from_notebook("09_self_test.ipynb", r"'true / false': (\d+)"),
    "nb09_kind_fill": from_notebook("09_self_test.ipynb", r"'fill in': (\d+)"),
    "nb09_kind_open": from_notebook("09_self_test.ipynb", r"'open question': (\d+)"),
    # notebook 09 prints no answer: the core question's answer comes from the question bank itself
    "nb09_first_new_position": lambda: next(q.answer_text() for q in __import__("utils.quiz", fromlist=["QUESTIONS"])
                                            .QUESTIONS if q.prompt.endswith("position of the first new token?")),
    # --- 10 ---
    "nb10_per_token_bytes": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"K/V of one token = (\d+) bytes"),
    "nb10_need": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"positions the three requests need:\s+(\d+)"),
    "nb10_padded": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"a left-padded StaticKVCache, B x \(T \+ N_NEW\): (\d+)"),
    "nb10_padded_x": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"a left-padded StaticKVCache, B x \(T \+ N_NEW\): \d+ \(([\d.]+)x\)"),
    "nb10_max_len": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"one max_seq_len buffer per request, B x \d+: (\d+)"),
    "nb10_max_seq_len": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"max_seq_len=(\d+);"),
    "nb10_max_len_x": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"one max_seq_len buffer per request, B x \d+: \d+ \(([\d.]+)x\)"),
    "nb10_blocks": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"blocks of 4: (\d+) blocks"),
    "nb10_block_slots": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"blocks of 4: \d+ blocks = (\d+) slots"),
    "nb10_blocks_x": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"blocks of 4: \d+ blocks = \d+ slots \(([\d.]+)x\)"),
    **{f"nb10_logit_diff_{key}": from_notebook("10_paged_kv_and_prefix_caching.ipynb", rf"{name}: max \|logits KVCache - logits PagedKVCache\| = ([\d.e+-]+)")
       for key, name in (("one", "one prompt"), ("batch", "ragged batch"))},
    "nb10_requests": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"(\d+) requests, \d+ of them after the system prompt"),
    "nb10_requests_system": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"\d+ requests, (\d+) of them after the system prompt"),
    "nb10_short_table": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"row 1:\s+\d+ tokens, block table (\[[\d, ]+\])"),
    "nb10_short_second": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"row 1:\s+\d+ tokens, block table \[\d+, (\d+)\]"),
    "nb10_row2_table": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"row 2:\s+\d+ tokens, block table (\[[\d, ]+\])"),
    "nb10_row2_prompt": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"request 2:\s+(\d+) prompt tokens"),
    **{f"nb10_{key}_bytes": from_notebook("10_paged_kv_and_prefix_caching.ipynb", pattern) for key, pattern in (
        ("static", r"StaticKVCache, left-padded:\s+(\d+) bytes"), ("tokens", r"paged, K/V of the real tokens:\s+(\d+) bytes"),
        ("held", r"paged, blocks held by the rows:\s+(\d+) bytes"), ("pool", r"paged, the pool:\s+(\d+) bytes"))},
    "nb10_buffers_bytes": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"one max_seq_len buffer per request: (\d+) bytes"),
    "nb10_buffers_x_pool": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"one max_seq_len buffer per request: .*?\(([\d.]+)x the pool\)"),
    # a citation's year (Kwon et al., the vLLM / PagedAttention paper, SOSP 2023): not computed, a fact so the digits are checked once
    "nb10_vllm_paper_year": lambda: "2023",
    "nb10_pool_free": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"paged, the pool: .*?blocks, (\d+) still free"),
    "nb10_cow_tables": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"after one token:  tables (\[\[[\d, \[\]]+\]\])"),
    "nb10_reuse_n": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"request 2: (\d+) of its \d+ prompt tokens found"),
    "nb10_reuse_rest": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"request 2: .*?it prefills only (\d+)"),
    "nb10_lru_order": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"the pool hands out blocks in this order: (\[[\d, ]+\])"),
    "nb10_hit_rate_16": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"system prompt  16 tokens: hit rate (\d+%)"),
    "nb10_hit_rate_192": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"system prompt 192 tokens: hit rate (\d+%)"),
    "nb10_ttft_full_192": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"system prompt 192 \+ question \d+ tokens: TTFT fresh\s+([\d.]+) ms"),
    "nb10_ttft_cached_192": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"system prompt 192 \+ .*?with the prefix cache\s+([\d.]+) ms"),
    "nb10_ttft_ratio_192": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"system prompt 192 \+ .*?\(cached/fresh ([\d.]+)\)"),
    "nb10_ttft_ratio_16": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"system prompt  16 \+ .*?\(cached/fresh ([\d.]+)\)"),
    "nb10_hit_ceiling": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"ceiling: \d+ of \d+ requests can find the system prompt: (\d+%)"),
    "nb10_map_steps": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"(?m)^(\d+) steps$"),
    "nb10_map_reused": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"blocks freed by one request and handed to another: (\d+)"),
    "nb10_map_chunk": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"the replay's engine: prefill_chunk = (\d+) tokens"),
    "nb10_map_budget": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"the replay's engine: .*?max_batch_tokens = (\d+) tokens per step"),
    **{f"nb10_wave{w}": from_notebook("10_paged_kv_and_prefix_caching.ipynb", rf"wave {w}: (\d+) requests") for w in (1, 2)},
    "nb10_map_r1_hit": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"r1: joins at step\s+\d+, prefix hit\s+(\d+) of"),
    "nb10_system_tokens": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"system prompt: (\d+) tokens = \d+ full blocks"),
    "nb10_full_blocks_16": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"blocks of 16: the \d+-token system prompt fills (\d+) full block"),
    "nb10_share_16": from_notebook("10_paged_kv_and_prefix_caching.ipynb", r"blocks of 16: .*?share at most (\d+) of its tokens"),
    # --- 11 ---
    "nb11_r3_joins": from_notebook("11_continuous_batching.ipynb", r"r3 joins in iteration (\d+)"),
    # the two requests r3 joins after, one fact each: ids only, so a Chinese lesson reads them too
    "nb11_r3_after_first": from_notebook("11_continuous_batching.ipynb", r"right after (r\d+) and r\d+ left"),
    "nb11_r3_after_second": from_notebook("11_continuous_batching.ipynb", r"right after r\d+ and (r\d+) left"),
    "nb11_rerun_on": from_notebook("11_continuous_batching.ipynb", r"prefix caching on: (\[[\d, ]+\]) \|"),
    "nb11_rerun_off": from_notebook("11_continuous_batching.ipynb", r"\| off: (\[[\d, ]+\])"),
    "nb11_new_tokens": from_notebook("11_continuous_batching.ipynb", r"new tokens each, (\d+) in all"),
    "nb11_alone_ms": from_notebook("11_continuous_batching.ipynb", r"one request alone takes ([\d.]+) ms"),
    "nb11_arrive_meanwhile": from_notebook("11_continuous_batching.ipynb", r"requests/s, ([\d.]+) requests arrive in that time"),
    "nb11_tight_need_x": from_notebook("11_continuous_batching.ipynb", r"may need up to \d+ blocks \(([\d.]+)x the pool\)"),
    "nb11_tight_preemptions": from_notebook("11_continuous_batching.ipynb", r"queued at time 0: \d+ iterations, (\d+) preemptions"),
    "nb11_chunked_mixed": from_notebook("11_continuous_batching.ipynb", r"chunked\s*: \d+ iterations of [\d.]+ requests on average, (\d+) of them mixed"),
    "nb11_chunked_iterations": from_notebook("11_continuous_batching.ipynb", r"chunked\s*: (\d+) iterations"),
    # the metrics table of section 3, one fact per cell: the paged engine chunked, with whole prompts, and notebook
    # 06's padded engine
    **{f"nb11_{who}_{col}": from_notebook("11_continuous_batching.ipynb", rf"(?m)^{name}\s+" + r"\s*\|?\s*".join(
        r"([\d.]+)" if c == col else r"[\d.]+" for c in ("ttft_p50", "ttft_p95", "tpot_p50", "tpot_p95", "itl_p50",
                                                         "itl_p95", "tokens_s", "requests_s", "busy_tokens_s")))
       for who, name in (("engine", r"paged engine \(chunked\)"), ("whole", r"paged engine \(whole prompts\)"),
                         ("padded", r"notebook 06's padded engine"))
       for col in ("ttft_p50", "ttft_p95", "tpot_p50", "tpot_p95", "itl_p50", "itl_p95", "tokens_s", "requests_s",
                   "busy_tokens_s")},
    "nb11_last_arrival_ms": from_notebook("11_continuous_batching.ipynb", r"the last request arrives at (\d+) ms"),
    **{f"nb11_{who}_run_ms": from_notebook("11_continuous_batching.ipynb", rf"to the last token: .*?{name} (\d+) ms")
       for who, name in (("engine", r"paged engine \(chunked\)"), ("whole", r"paged engine \(whole prompts\)"),
                         ("padded", r"notebook 06's padded engine"))},
    # the last (most rows) line of the comparison of decode-only iterations
    **{f"nb11_step_{key}": from_notebook("11_continuous_batching.ipynb", r"(?s).*a decode-only iteration of " + pattern)
       for key, pattern in (("rows", r"(\d+) rows"), ("paged_ms", r"\d+ rows, median: paged engine ([\d.]+) ms"),
                            ("padded_ms", r"\d+ rows, median: .*?padded engine ([\d.]+) ms"),
                            ("ratio", r"\d+ rows, median: .*?\(paged / padded: ([\d.]+)\)"))},
    # section 4: a 192-token prompt arrives while 4 requests decode
    **{f"nb11_stall_{key}_{chunk}": from_notebook("11_continuous_batching.ipynb", rf"prefill_chunk = {name}\s*: " + pattern)
       for chunk, name in (("off", "None"), ("32", "32")) for key, pattern in (
           ("itl_ms", r".*?worst ITL during the long prefill\s+([\d.]+) ms"), ("ttft_ms", r".*?TTFT\s+([\d.]+) ms"))},
    "nb11_stall_itl_x": from_notebook("11_continuous_batching.ipynb", r"the worst stall is ([\d.]+)x shorter"),
    "nb11_stall_ttft_x": from_notebook("11_continuous_batching.ipynb", r"the long TTFT ([\d.]+)x longer"),
    "nb11_short_prefill": from_notebook("11_continuous_batching.ipynb", r"iteration 1 prefills the 4 short prompts: (\d+) tokens"),
    # section 5: the step-cost fit and the replay against the measured runs
    **{f"nb11_fit_{key}": from_notebook("11_continuous_batching.ipynb", pattern) for key, pattern in (
        ("one_pass", r"iterations fitted: (\d+) with one forward pass"), ("two_pass", r"with one forward pass, (\d+) with two"),
        ("fixed", r"fitted: ([\d.]+) ms per iteration"), ("forward", r"([\d.]+) ms per forward pass"),
        ("row", r"([\d.]+) ms per decode row"), ("token", r"([\d.]+) ms per prefill token"))},
    "nb11_replay_tpot": from_notebook("11_continuous_batching.ipynb", r"budget 32, .*?TPOT p50 ([\d.]+)"),
    "nb11_replay_tokens": from_notebook("11_continuous_batching.ipynb", r"budget 32, .*?tokens/s ([\d.]+)"),
    "nb11_hf_version": from_notebook("11_continuous_batching.ipynb", r"transformers ([\w.]+), generate_batch"),
    "nb11_hf_same": from_notebook("11_continuous_batching.ipynb", r"give the same 8 greedy tokens for every prompt: (\w+)"),
    # --- 12 ---
    # citation years, not computed: facts so the digits are checked once (Leviathan et al. and Chen et al.,
    # 2023; prompt lookup decoding, 2023; Medusa and EAGLE, ICML 2024)
    "nb12_spec_papers_year": lambda: "2023",
    "nb12_tree_papers_year": lambda: "2024",
    "nb12_target_params": from_notebook("12_speculative_decoding.ipynb", r"target \(course model\)\s*: .*?, ([\d,]+) parameters"),
    "nb12_draft_params": from_notebook("12_speculative_decoding.ipynb", r"draft model\s*: L=.*?, ([\d,]+) parameters"),
    "nb12_draft_share": from_notebook("12_speculative_decoding.ipynb", r"the draft has ([\d.]+%) of the target's parameters"),
    "nb12_greedy_runs": from_notebook("12_speculative_decoding.ipynb", r"all (\d+) runs \(\d+ prompts"),
    # the acceptance table of section 2: one row per (draft, k), one fact per cell used
    **{f"nb12_{who}_k{k}_{col}": from_notebook("12_speculative_decoding.ipynb", rf"(?m)^{name}\s+{k}\s+" + r"\s+".join(
        r"([\d.]+%?)" if c == col else r"[\d.]+%?" for c in ("proposed", "acceptance", "alpha", "tokens", "model")))
       for who, name in (("draft", "draft model"), ("lookup", "prompt lookup")) for k in (1, 2, 4, 8)
       for col in ("proposed", "acceptance", "alpha", "tokens", "model")},
    "nb12_chi_runs": from_notebook("12_speculative_decoding.ipynb", r"(\d+) seeded runs per sampler"),
    **{f"nb12_chi_{who}_{key}": from_notebook("12_speculative_decoding.ipynb", rf"{name}: chi-square = " + pattern)
       for who, name in (("draft", "speculative, draft model"), ("lookup", "speculative, prompt lookup"))
       for key, pattern in (("stat", r"([\d.]+)"), ("p", r"[\d.]+ with \d+ degrees of freedom, p-value = ([\d.e+-]+)"))},
    "nb12_chi_mistake_stat": from_notebook("12_speculative_decoding.ipynb", r"mistake: redraw from p: chi-square = ([\d.]+)"),
    "nb12_lookup_refusal": from_notebook("12_speculative_decoding.ipynb", r"prompt lookup: refused with probability ([\d.]+)"),
    "nb12_bug_first_diff": from_notebook("12_speculative_decoding.ipynb", r"the first new token that differs: number (\d+)"),
    "nb12_c_target_1": from_notebook("12_speculative_decoding.ipynb", r"target pass fed 1 token\(s\): ([\d.]+) ms"),
    "nb12_c_target_9": from_notebook("12_speculative_decoding.ipynb", r"target pass fed 9 token\(s\): ([\d.]+) ms"),
    "nb12_c_target_9_x": from_notebook("12_speculative_decoding.ipynb", r"target pass fed 9 token\(s\): [\d.]+ ms \(([\d.]+)x"),
    "nb12_c_draft": from_notebook("12_speculative_decoding.ipynb", r"draft pass fed 1 token:\s+([\d.]+) ms"),
    "nb12_c_ratio": from_notebook("12_speculative_decoding.ipynb", r"c_draft / c_target = ([\d.]+)"),
    **{f"nb12_speedup_{who}_k{k}_{key}": from_notebook("12_speculative_decoding.ipynb", rf"{name}\s+k={k}: .*?" + pattern)
       for who, name in (("draft", "draft model"), ("lookup", "prompt lookup")) for k in (1, 2, 4, 8)
       for key, pattern in (("measured", r"speed-up over the target alone ([\d.]+)"), ("model", r"cost model ([\d.]+)"),
                            ("generate", r"over generate ([\d.]+)"))},
    "nb12_gpu_best_k": from_notebook("12_speculative_decoding.ipynb", r"the best k under these assumptions: (\d+)"),
    "nb12_gpu_speedup_k4": from_notebook("12_speculative_decoding.ipynb", r"k=4: alpha = [\d.]+, tokens per round [\d.]+, "
                                                                           r"modelled speed-up ([\d.]+)"),
    "nb12_gpu_pooled_alpha": from_notebook("12_speculative_decoding.ipynb", r"with one alpha for every k \(([\d.]+), pooled"),
    **{f"nb12_gpu_pooled_k{k}": from_notebook("12_speculative_decoding.ipynb",
                                              rf"with one alpha for every k \(.*?k={k} ([\d.]+)") for k in (4, 6)},
    # --- 13 ---
    # citation years of the papers lesson 13 names, not computed: facts so the digits are checked once
    "nb13_kivi_year": lambda: "2024", "nb13_streamingllm_year": lambda: "2024", "nb13_l2norm_year": lambda: "2024",
    "nb13_h2o_year": lambda: "2023", "nb13_snapkv_year": lambda: "2024",
    **{f"nb13_{key}": from_notebook("13_smaller_kv_cache.ipynb", pattern) for key, pattern in (
        ("docs", r"(\d+) held-out documents of"), ("group_size", r"settings here: groups of (\d+) positions"),
        ("worst_8", r"8-bit: \d+ steps per range; the worst error is ([\d.]+) x"),
        ("worst_4", r"4-bit: \d+ steps per range; the worst error is ([\d.]+) x"),
        ("k_outlier_3", r"layer 3: the largest channel of \|K\| is ([\d.]+)x"),
        ("k_token_3", r"layer 3: K: per token ([\d.]+)"), ("k_channel_3", r"layer 3: K: per token [\d.]+, per channel ([\d.]+)"),
        ("doc_tokens", r"(\d+) positions: \d+ quantized in"), ("quant_bytes", r"QuantizedKVCache\.nbytes = (\d+);"),
        ("exact_bytes", r"the exact KVCache: (\d+) bytes"), ("quant_share", r"the exact KVCache: \d+ bytes \((\d+%) of it"),
        ("decode_steps", r"documents, (\d+) decode steps"),
        ("q8_diff", r"8-bit, K per channel, V per token, residual 2\s+\d+%\s+([\d.]+)"),
        ("q4_diff", r"4-bit, K per channel, V per token, residual 2\s+\d+%\s+([\d.]+)"),
        ("q4_tok_r0_bytes", r"4-bit, K per token, V per token, residual 0\s+(\d+%)"),
        ("q4_tok_r0_diff", r"4-bit, K per token, V per token, residual 0\s+\d+%\s+([\d.]+)"),
        ("budget_small", r"at budget (\d+), every rule raises"),
        ("restart_seen", r"after (\d+) tokens both hold"), ("restart_wrong", r"vs (\d+) \(restarts at the length\)"),
        ("restart_loss_right", r"positions = tokens seen\s*: loss ([\d.]+)"),
        ("restart_loss_wrong", r"positions restart at the length\s*: loss ([\d.]+)"),
        ("restart_match_right", r"positions = tokens seen\s*: .*?greedy match ([\d.]+%)"),
        ("restart_match_wrong", r"positions restart at the length\s*: .*?greedy match ([\d.]+%)"),
        ("T_long", r"T = (\d+), B = 1"), ("llama_fp16", r"float16: ([\d.]+) GiB"),
        ("llama_8", r"8-bit: ([\d.]+) GiB = codes"), ("llama_4", r"4-bit: ([\d.]+) GiB = codes"),
        ("llama_4_x", r"4-bit: [\d.]+ GiB = .*?\(([\d.]+)x smaller"),
        ("bits_per_value_4", r"4-bit: ([\d.]+) bits per quantized value"))},
    # the loss each eviction rule adds at the smallest budget (section 5's table)
    **{f"nb13_evict_{rule}_6": from_notebook("13_smaller_kv_cache.ipynb", rf"evict by {name}, budget 6\s+\d+%\s+[\d.]+\s+"
                                                                          r"[\d.]+%\s+\+([\d.]+)")
       for rule, name in (("recent", r"sinks \+ recent"), ("key_norm", "key norm"), ("attention", "attention received"))},
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
