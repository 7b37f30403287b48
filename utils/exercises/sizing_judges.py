"""Notebook 04's judges (cache bytes from a config.json, requests that fit): each recognises a wrong answer by its
ratio to the right one and names the factor behind it. The cases they judge are in ``sizing_mistakes.py``.

A byte count that is off by a whole factor tells which factor went wrong: half is the lost factor 2 (K and V), H / H_kv
times more is the query heads stored, 1 / B is one sequence instead of the batch... Each candidate is the
reference solution run on the input the mistake implies, so the diagnosis holds for any case's numbers.
Numbers are shown with thousands separators (536,870,912, not 536870912).
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Callable

from ..i18n import tr
from . import solutions as S
from .judges import FormProblem, diagnosis, plain_number

Judge = Callable[[Any], "str | None"]


def _as_int(got) -> int | None:
    """``got`` as the int it is (a Python or numpy int, a 0-d integer tensor), else None."""
    got = plain_number(got)[0]
    return int(got) if isinstance(got, numbers.Integral) and not isinstance(got, bool) else None


def _form(expected: int, got) -> str | None:
    """A result that is not an int: say so (a float of the right value is a slip of form)."""
    number = plain_number(got)[0]
    if _as_int(got) is not None:
        return None
    if isinstance(number, numbers.Real) and not isinstance(number, bool) and number == expected:
        # free_bytes // float(per_request) used // and still got a float: say what makes one
        return FormProblem(tr("right value, but an int is expected (got {type}). `/` always returns a float, even "
                              "when it divides exactly: use `//`. One float operand makes even // return a float: "
                              "keep every operand an int, or wrap the result in int()", type=type(got).__name__))
    return FormProblem(tr("expected an int, got {got!r:.60} (`{type}`)", got=got, type=type(got).__name__))


def bytes_judge(config: dict, seq_len: int, batch_size: int, dtype: str) -> Judge:
    """The cache bytes of ``kv_bytes_from_config``; a result off by one factor names that factor."""
    f = S.kv_bytes_from_config
    expected = f(config, seq_len, batch_size, dtype)
    per_token = f(config, 1, batch_size, dtype)  # one position of every sequence of the batch
    H = config["num_attention_heads"]
    H_kv = config.get("num_key_value_heads") or H
    L, C = config["num_hidden_layers"], config["hidden_size"]
    d_h = config.get("head_dim") or C // H
    # (what a mistake returns, the message, the hint), in the order they are tried
    candidates = []
    if batch_size != 1:
        candidates.append((f(config, seq_len, 1, dtype),
                           tr("{got:,} bytes is one sequence's cache; the batch holds {B}", got=f(config, seq_len, 1, dtype),
                              B=batch_size),
                           tr("every sequence of the batch has its own cache: multiply by batch_size")))
    mha_form = 2 * L * batch_size * seq_len * C * S.DTYPE_BYTES[dtype]  # 2·L·B·T·C·bytes: right if H_kv·d_h = C
    as_4_bytes = f(config, seq_len, batch_size, "float32") if S.DTYPE_BYTES[dtype] == 2 else None  # 16-bit as 4 bytes
    if H_kv != H:
        wrong = f({**config, "num_key_value_heads": H}, seq_len, batch_size, dtype)
        # when H·d_h = C, storing all H heads and the MHA form give the same number: name both
        message = (tr("{got:,} bytes is {n} times the cache: you stored all {H} query heads (or used the MHA form "
                      "2·L·B·T·C·bytes, which assumes H_kv = H)", got=wrong, n=H // H_kv, H=H) if wrong == mha_form
                   else tr("{got:,} bytes is {n} times the cache: you stored all {H} query heads", got=wrong,
                           n=H // H_kv, H=H))
        hint = tr("only the K/V heads are cached: use num_key_value_heads (H_kv = {H_kv}), not num_attention_heads",
                  H_kv=H_kv)
        if wrong == as_4_bytes:  # H / H_kv = 2 (Gemma-2-9B): the same count, so name both mistakes
            message += tr("; or you counted {dtype} as 4 bytes per number (it takes 2)", dtype=dtype)
            hint += tr("; and {dtype} takes 2 bytes per number, not 4", dtype=dtype)
        candidates.append((wrong, message, hint))
    if mha_form not in (expected, *(c[0] for c in candidates)):  # Gemma-2-9B: neither H nor H_kv heads of C / H
        candidates.append((mha_form, tr("{got:,} bytes is the MHA form 2·L·B·T·C·bytes; this model keeps "
                                        "H_kv = {H_kv} K/V heads of d_h = {d_h}, H_kv·d_h = {width}, not C = {C}",
                                        got=mha_form, H_kv=H_kv, d_h=d_h, width=H_kv * d_h, C=C),
                           tr("use the general form 2·L·B·H_kv·T·d_h·bytes: the MHA form holds only when "
                              "H_kv·d_h = C")))
    if "head_dim" in config and config["head_dim"] != C // H:
        wrong = f({k: v for k, v in config.items() if k != "head_dim"}, seq_len, batch_size, dtype)
        candidates.append((wrong, tr("{got:,} bytes uses d_h = hidden_size / num_attention_heads = {d}; this config "
                                     "says head_dim = {head_dim}", got=wrong, d=C // H, head_dim=config["head_dim"]),
                           tr("when head_dim is in the config, use it: it is not always C / H")))
    if dtype == "int8":
        wrong = f(config, seq_len, batch_size, "float16")
        candidates.append((wrong, tr("{got:,} bytes is twice the cache: an int8 cache takes 1 byte per number",
                                     got=wrong),
                           tr("bytes per number: 4 for float32, 2 for float16 and bfloat16, 1 for int8")))
    if as_4_bytes is not None and as_4_bytes not in (c[0] for c in candidates):  # bfloat16 or float16 as float32
        candidates.append((as_4_bytes, tr("{got:,} bytes is twice the cache: bfloat16 and float16 take 2 bytes per "
                                          "number", got=as_4_bytes),
                           tr("bytes per number: 4 for float32, 2 for float16 and bfloat16, 1 for int8")))
    if dtype == "float32":  # half of float32 is also what forgetting the 2 gives: the message names both
        wrong = f(config, seq_len, batch_size, "float16")
        candidates.append((wrong, tr("{got:,} bytes is half the cache: float32 takes 4 bytes per number, and K and V "
                                     "are two tensors: is one of them missing?", got=wrong),
                           tr("bytes per number: 4 for float32, 2 for float16 and bfloat16, 1 for int8; and the "
                              "factor 2 counts K and V")))
    # float16's 16 (or float32's 32) taken as the bytes per number: 8 times the cache
    candidates.append((8 * expected, tr("{got:,} bytes is 8 times the cache: you counted bits, not bytes ({dtype} "
                                        "takes {n} byte(s) per number, {bits} bits)", got=8 * expected, dtype=dtype,
                                        n=S.DTYPE_BYTES[dtype], bits=8 * S.DTYPE_BYTES[dtype]),
                       tr("the 16 in float16 (and the 32 in float32) counts bits: divide by 8 for the bytes per number")))
    candidates.append((expected // 2, tr("{got:,} bytes is half the cache: K and V are two tensors", got=expected // 2),
                       tr("the factor 2 counts K and V: every layer stores both")))
    candidates.append((f(config, 1, batch_size, dtype), tr("{got:,} bytes is the cache of one token; each sequence "
                                                           "holds {T:,}", got=f(config, 1, batch_size, dtype), T=seq_len),
                       tr("the cache holds every position: multiply by seq_len")))
    if "num_key_value_heads" not in config and H != 1:  # a missing field read as MQA
        wrong = f({**config, "num_key_value_heads": 1}, seq_len, batch_size, dtype)
        # when L = H (Llama-2-7B: 32 and 32), one layer's cache is the same number: name both
        candidates.append((wrong, tr("{got:,} bytes is the cache with H_kv = 1 (MQA), or of a single layer (L = H = "
                                     "{H} here), 1/{H} of the right size", got=wrong, H=H) if L == H else
                           tr("{got:,} bytes is the cache with H_kv = 1 (MQA), 1/{H} of the right size", got=wrong, H=H),
                           tr("a config without num_key_value_heads is MHA: H_kv = H = {H}, not 1; if you left out "
                              "the layers instead, count all num_hidden_layers of them", H=H) if L == H else
                           tr("a config without num_key_value_heads is MHA: H_kv = H = {H}, not 1", H=H)))
    candidates.append((f({**config, "num_hidden_layers": 1}, seq_len, batch_size, dtype),
                       tr("{got:,} bytes is one layer's cache; the model has {L} layers",
                          got=f({**config, "num_hidden_layers": 1}, seq_len, batch_size, dtype), L=L),
                       tr("every layer keeps its own K and V: multiply by num_hidden_layers")))

    def judge(got) -> str | None:
        problem = _form(expected, got)
        if problem is not None:
            return problem
        n = _as_int(got)
        if n == expected:
            return None
        for wrong, message, hint in candidates:
            if n == wrong:
                return diagnosis(tr("expected {expected:,} bytes: {message}", expected=expected, message=message), hint)
        if abs(n - expected) == per_token:  # seq_len + 1 or - 1 positions: one token's bytes off, per sequence
            return diagnosis(tr("expected {expected:,} bytes, got {got:,}: one token too many per sequence ({T:,} "
                                "positions, not {seq_len:,})" if n > expected else "expected {expected:,} bytes, got "
                                "{got:,}: one token too few per sequence ({T:,} positions, not {seq_len:,})",
                                expected=expected, got=n, T=seq_len + (1 if n > expected else -1), seq_len=seq_len),
                             tr("the cache holds exactly seq_len positions per sequence: T = seq_len, no more, no less"))
        # not a mistake we know: a hint about every factor, not the case's (which names one part, maybe right);
        # a result close to the right one says by how much it is off, not "1 times as many"
        ratio = n / expected if expected else math.inf
        return diagnosis(tr("expected {expected:,} bytes, got {got:,} ({ratio:.4g} times as many)", expected=expected,
                            got=n, ratio=ratio) if f"{ratio:.4g}" != "1" else
                         tr("expected {expected:,} bytes, got {got:,} ({diff:+,} bytes)", expected=expected, got=n,
                            diff=n - expected),
                         tr("check each factor against the config: L = num_hidden_layers, H_kv = num_key_value_heads "
                            "(H when it is missing), d_h = head_dim (C / H when it is missing), and the bytes per "
                            "number of the dtype; then 2 x L x B x H_kv x T x d_h x bytes"))
    return judge


def _quotient_text(q: float) -> str:
    """A quotient of requests: three decimals (20.684), three significant digits below 1 (0.000488, not 0.000)."""
    return f"{q:.3f}" if q >= 1 else f"{q:.3g}"


def _weight_guesses(n_params: int, dtype: str) -> set[int]:
    """Bytes a learner may take for the weights: the checkpoint in 16 bits or in the cache's dtype, or the
    nominal size (8B x 2 bytes, as 16e9 bytes or as 16 GiB)."""
    nominal = round(n_params / 1e9)
    return {n_params * 2, n_params * S.DTYPE_BYTES[dtype], nominal * 2 * 10**9, nominal * 2 * 2**30}


def request_mistakes(config: dict, seq_len: int, free_bytes: int, dtype: str, n_params: int) -> list[tuple]:
    """``(name, counts, message, hint)`` for every mistake ``requests_judge`` names by its count, in the order it
    tries them: ``counts`` is the set of wrong counts that mistake gives (a test checks that no two mistakes
    share one), ``message(got)`` the case's line."""
    f = S.kv_bytes_from_config
    per_request = f(config, seq_len, 1, dtype)
    expected = free_bytes // per_request
    quotient = free_bytes / per_request
    H, C, L = config["num_attention_heads"], config["hidden_size"], config["num_hidden_layers"]
    H_kv = config.get("num_key_value_heads") or H
    d_h = config.get("head_dim") or C // H

    def said(key, **words):  # a message for the count that came back
        return lambda got: tr(key, expected=expected, got=got, **words)
    # (one request's bytes as the mistake computes them, its message, the hint), tried in this order
    sizes = [("half", per_request // 2, said("expected {expected:,}, got {got:,}: your requests are half their size "
                                             "(K and V are two tensors)"),
              tr("one request's cache is `kv_bytes_from_config(config, seq_len, 1, dtype)`, the factor 2 included")),
             ("tokens", f(config, 1, 1, dtype), said("expected {expected:,}, got {got:,}: that many tokens fit, not "
                                                     "requests of {T:,} tokens", T=seq_len),
              tr("one request holds seq_len tokens: divide by the cache of one sequence of seq_len tokens"))]
    mha_form = 2 * L * seq_len * C * S.DTYPE_BYTES[dtype]  # 2·L·B·T·C·bytes with B = 1
    sizes.append(("bits", 8 * per_request, said("expected {expected:,}, got {got:,}: your requests are 8 times their "
                                                 "size; you counted bits, not bytes, per number"),
                  tr("the 16 in float16 (and the 32 in float32) counts bits: divide by 8 for the bytes per number")))
    if H_kv != H:
        all_heads = f({**config, "num_key_value_heads": H}, seq_len, 1, dtype)
        # when H·d_h = C, storing all H heads and the MHA form give the same size: name both
        sizes.append(("all heads", all_heads, said(
            "expected {expected:,}, got {got:,}: your requests store all {H} query heads, {n} times the cache (or use "
            "the MHA form 2·L·B·T·C·bytes, which assumes H_kv = H)" if all_heads == mha_form else
            "expected {expected:,}, got {got:,}: your requests store all {H} query heads, {n} times the cache",
            H=H, n=H // H_kv),
            tr("only the K/V heads are cached: use num_key_value_heads (H_kv = {H_kv}), not num_attention_heads",
               H_kv=H_kv)))
    if S.DTYPE_BYTES[dtype] == 2:  # bfloat16 or float16 counted as 4 bytes: twice the size, half the requests
        as_4_bytes = f(config, seq_len, 1, "float32")
        same = [i for i, size in enumerate(sizes) if size[1] == as_4_bytes]  # all H = 2·H_kv heads (Gemma-2-9B)
        if same:  # one count, two mistakes: name both
            name, size, message, hint = sizes[same[0]]
            sizes[same[0]] = (name, size, lambda got, m=message: m(got) + tr(
                "; or you counted {dtype} as 4 bytes per number (it takes 2)", dtype=dtype),
                hint + tr("; and {dtype} takes 2 bytes per number, not 4", dtype=dtype))
        else:
            sizes.append(("16-bit as 4 bytes", as_4_bytes, said("expected {expected:,}, got {got:,}: your requests "
                                                                "are twice their size; {dtype} takes 2 bytes per "
                                                                "number, not 4", dtype=dtype),
                          tr("bytes per number: 4 for float32, 2 for float16 and bfloat16, 1 for int8")))
    if mha_form not in (per_request, *(size for _, size, _, _ in sizes)):  # Gemma-2-9B: H_kv·d_h != C
        sizes.append(("MHA form", mha_form, said("expected {expected:,}, got {got:,}: your requests use the MHA form "
                                                 "2·L·B·T·C·bytes; this model's H_kv·d_h = {width}, not C = {C}",
                                                 width=H_kv * d_h, C=C),
                      tr("use the general form 2·L·B·H_kv·T·d_h·bytes: the MHA form holds only when H_kv·d_h = C")))
    if "head_dim" in config and config["head_dim"] != C // H:
        sizes.append(("d_h = C / H", f({k: v for k, v in config.items() if k != "head_dim"}, seq_len, 1, dtype),
                      said("expected {expected:,}, got {got:,}: your requests use d_h = hidden_size / "
                           "num_attention_heads = {d}; this config says head_dim = {head_dim}",
                           d=C // H, head_dim=config["head_dim"]),
                      tr("when head_dim is in the config, use it: it is not always C / H")))
    if dtype == "int8":  # the int8 cache counted as 2 bytes per number: half the requests
        sizes.append(("int8 as 2 bytes", f(config, seq_len, 1, "float16"),
                      said("expected {expected:,}, got {got:,}: your requests are twice their size; an int8 cache "
                           "takes 1 byte per number"),
                      tr("bytes per number: 4 for float32, 2 for float16 and bfloat16, 1 for int8")))
    mistakes = [(name, {free_bytes // size}, message, hint) for name, size, message, hint in sizes if size > 0]
    # free_bytes already is what is free: the weights, or a 10 % reserve as the planner takes it, taken off again
    # (below zero when the weights exceed free_bytes: the judge's count below zero says so)
    mistakes.append(("weights", {(free_bytes - w) // per_request for w in _weight_guesses(n_params, dtype)
                                 if w <= free_bytes},
                     said("expected {expected:,}, got {got:,}: that is what fits once the weights are taken off "
                          "free_bytes"),
                     tr("free_bytes is already what is left after the weights and the reserve: do not subtract the "
                        "weights again")))
    mistakes.append(("reserve", {int(free_bytes * 0.9 // per_request)},
                     said("expected {expected:,}, got {got:,}: that is a 10 % reserve taken off free_bytes"),
                     tr("free_bytes is already what is left for the caches: do not subtract a reserve again")))
    mistakes.append(("rounded up", {round(quotient), math.ceil(quotient)},
                     said("expected {expected:,}, got {got:,}: {q} rounded up; only whole requests fit",
                          q=_quotient_text(quotient)),
                     tr("round down to whole requests with //: a part of a request cannot run")))
    return [(name, counts - {expected}, message, hint) for name, counts, message, hint in mistakes]


def requests_judge(config: dict, seq_len: int, free_bytes: int, dtype: str, n_params: int) -> Judge:
    """Whole requests that fit in ``free_bytes`` (what the weights and the reserve leave); names a per-request
    size off by a factor, the weights or a reserve taken off again, a quotient rounded up or left unrounded
    (``request_mistakes`` lists them). Any other wrong count points at the bytes of one request."""
    per_request = S.kv_bytes_from_config(config, seq_len, 1, dtype)
    expected = free_bytes // per_request
    quotient = free_bytes / per_request
    mistakes = request_mistakes(config, seq_len, free_bytes, dtype, n_params)
    weights = next(m for m in mistakes if m[0] == "weights")

    def judge(got) -> str | None:
        number = plain_number(got)[0]
        if isinstance(number, float) and not number.is_integer() and math.isclose(number, quotient, rel_tol=1e-9):
            return diagnosis(tr("you returned the quotient {q} itself; only whole requests fit: {expected:,}",
                                q=_quotient_text(quotient), expected=expected),
                             tr("round down to whole requests with //: a part of a request cannot run"))
        if isinstance(number, numbers.Real) and not isinstance(number, bool) and float(number).is_integer():
            for name, counts, message, hint in mistakes:  # a float count (0.9 * free_bytes // ...) names it too
                if name == "reserve" and int(number) in counts:
                    return diagnosis(message(int(number)), hint)
        problem = _form(expected, got)
        if problem is not None:
            return problem
        n = _as_int(got)
        if n == expected:
            return None
        for _, counts, message, hint in mistakes:  # a wrong size first: Gemma-2-9B without head_dim rounds to a ceiling
            if n in counts:
                return diagnosis(message(n), hint)
        if n < 0:  # more taken off free_bytes than it holds: the weights, most likely
            return diagnosis(tr("expected {expected:,}, got {got:,}: a count below zero; free_bytes is already what "
                                "the weights and the reserve leave", expected=expected, got=n), weights[3])
        return diagnosis(tr("expected {expected:,}, got {got:,}; one request's cache is {per:,} bytes here",
                            expected=expected, got=n, per=per_request),
                         tr("compute one request's bytes first, `kv_bytes_from_config(config, seq_len, 1, dtype)`, and "
                            "check it; then divide free_bytes by it with //"))
    return judge
