"""Batch-1 decode against the two limits it can be held to, measured in one run.

* the physical limit: how fast this machine reads memory (a sum over a buffer far larger than the
  CPU caches; a copy as a second opinion);
* the practical limit: torch's own matrix-vector product over exactly the model's weight matrices,
  in both layouts (``utils.weight_layout``) and two ways (one ``F.linear`` per matrix; the matrix cut
  into row blocks, one per core, ``utils.split_matvec``), the best the library offers for the work
  the step has to do.

The decode step itself runs once per layout too (the model as built, and a copy stored the other
way), so a layout's effect is measured on the real step, not only on the bare kernel. And once per
dtype (``decode_dtypes``): half the bytes should take about half the time where the kernel streams
bfloat16 / float16 as fast as float32, and the logits move by the dtype's rounding.
"""
from __future__ import annotations

import copy

import torch
import torch.nn.functional as F

from ..cache import StaticKVCache
from ..generate import decode_stepper
from ..roofline import decode_bytes_per_token
from ..split_matvec import matvec, rows_split
from ..validate import check_choice, check_int
from ..weight_layout import LAYOUTS, set_weight_layout, weight_layout
from .stats import time_interleaved
from .timers import check_lengths, random_ids, repeated_step


def _linear_weights(model) -> list[torch.Tensor]:
    """Every weight matrix a decode step multiplies by (the embedding lookup aside): (C_out, C_in) each."""
    return [m.weight for m in model.modules() if isinstance(m, torch.nn.Linear)]


def _matvec(model, split: bool):
    """One vector times every weight matrix the decode step reads: torch's matvec kernel (one core)
    or the same product as row blocks in one bmm (every core, ``utils/split_matvec.py``)."""
    weights = _linear_weights(model)
    x = {w.shape[1]: torch.randn(1, w.shape[1], dtype=w.dtype) for w in weights}  # (1, C_in) per width
    blocks = [rows_split(w) if split else None for w in weights]

    def run() -> None:
        for w, b in zip(weights, blocks):
            matvec(x[w.shape[1]], w, b)  # (1, C_out)

    return torch.inference_mode()(run)


MATVEC_KERNELS = ("one call", "row blocks")  # F.linear as is; the rows cut into one block per thread


def decode_vs_bandwidth(
    model, context_len: int = 256, repeats: int = 10, *, n_bytes: int = 512 * 2**20, step: str = "flat",
    layouts=None, kernels=MATVEC_KERNELS, warmup: int = 1, seed: int = 0, progress=None,
) -> dict:
    """The batch-1 decode step against the memory's read rate and against torch's matvec, interleaved.

    Batch-1 decode multiplies one vector by every weight matrix: each weight is read once and used
    for two flops only, so the step cannot be faster than (bytes to read) / (memory bandwidth).
    Returns, as ``Stats``: ``step_s`` (the model as built) and ``steps_s`` per layout; the bytes a
    step moves; the achieved rate; ``copy_Bps`` / ``read_Bps`` (the machine); ``matvec_Bps`` per
    layout and kernel (torch's over the same weights: ``"in_out, one call"``, ``"in_out, row blocks"``...);
    ``fraction`` = achieved / the machine's limit and ``matvec_fraction`` = achieved / the fastest
    matvec (medians). ``layouts``: which layouts
    to time besides the model's own (``utils.weight_layout.LAYOUTS`` for all; a copy of the model each);
    ``kernels``: which of ``MATVEC_KERNELS`` to time (with one thread, ``"row blocks"`` is ``"one call"``).
    """
    (T,) = check_lengths(model, [context_len], extra=1)
    cfg, dtype = model.cfg, model.lm_head.weight.dtype
    ids = random_ids(cfg.vocab_size, T + 1, seed=seed)  # (1, T + 1)
    built = weight_layout(model)
    models = {built: model}
    for layout in layouts or ():
        check_choice("layout", layout, LAYOUTS)
        if layout not in models:
            models[layout] = set_weight_layout(copy.deepcopy(model), layout)
    fns = {}
    for layout, m in models.items():
        fns[("step", layout)] = repeated_step(m, ids, T, StaticKVCache(cfg, 1, T + 1, dtype=dtype), step)
        for kernel in kernels:
            check_choice("kernel", kernel, MATVEC_KERNELS)
            fns[("matvec", f"{layout}, {kernel}")] = _matvec(m, kernel == "row blocks")
    n = n_bytes // 4
    src, dst = torch.ones(n), torch.zeros(n)  # first touch: the pages exist before we time anything
    fns["copy"], fns["read"] = (lambda: dst.copy_(src)), src.sum
    stats = time_interleaved(fns, repeats, warmup, progress)
    nbytes = decode_bytes_per_token(cfg, T, dtype)
    weight_bytes = sum(w.numel() * w.element_size() for w in _linear_weights(model))
    steps = {layout: stats[("step", layout)] for layout in models}
    achieved = steps[built].map(lambda s: nbytes["total"] / s)
    matvec = {key[1]: stats[key].map(lambda s: weight_bytes / s) for key in fns if key[0:1] == ("matvec",)}
    copy_bps = stats["copy"].map(lambda s: 2 * 4 * n / s)
    read_bps = stats["read"].map(lambda s: 4 * n / s)
    limit = max(copy_bps.median, read_bps.median)
    best = max(matvec, key=lambda k: matvec[k].median)
    return {"context_len": T, "n_params": cfg.n_params, "bytes": nbytes, "layout": built, "step_s": steps[built],
            "steps_s": steps, "achieved_Bps": achieved, "copy_Bps": copy_bps, "read_Bps": read_bps,
            "limit_Bps": limit, "fraction": achieved.median / limit, "bound_s": nbytes["total"] / limit,
            "matvec_Bps": matvec, "matvec_bytes": weight_bytes, "best_matvec": best,
            "matvec_fraction": achieved.median / matvec[best].median}


def decode_dtypes(model, dtypes=(torch.bfloat16, torch.float16), context_len: int = 256, repeats: int = 5, *,
                  warmup: int = 1, seed: int = 0, progress=None) -> dict:
    """The same decode step with the weights (and cache) in other dtypes, beside the model's own.

    Per dtype: seconds per step (``Stats``), the bytes it moves, and the largest logit difference from
    the model's own dtype on the same step (same prefill, same token). Interleaved, one run.
    """
    (T,) = check_lengths(model, [context_len], extra=1)
    cfg, base = model.cfg, model.lm_head.weight.dtype
    ids = random_ids(cfg.vocab_size, T + 1, seed=seed)  # (1, T + 1)
    models = {base: model, **{dt: copy.deepcopy(model).to(dt) for dt in dtypes if dt != base}}
    out = {"context_len": T, "base": str(base).removeprefix("torch."), "dtypes": {}}
    fns, logits = {}, {}
    for dt, m in models.items():
        cache = StaticKVCache(cfg, 1, T + 1, dtype=dt)
        fns[dt] = repeated_step(m, ids, T, cache)
        logits[dt] = decode_stepper(m, cache)(ids[:, T]).float()  # (1, V): the step generate runs
        cache.crop(T)
    stats = time_interleaved(fns, repeats, warmup, progress)
    for dt in models:
        out["dtypes"][str(dt).removeprefix("torch.")] = {
            "step_s": stats[dt], "bytes": decode_bytes_per_token(cfg, T, dt)["total"],
            "max_logit_diff": float((logits[dt] - logits[base]).abs().max()),
            "speedup": stats[base].median / stats[dt].median}
    return out


def products_vs_rows(model, batch_sizes=(1, 2, 3, 4, 8, 16, 32, 64), repeats: int = 5, *, warmup: int = 1,
                     seed: int = 0, progress=None) -> dict:
    """B rows times every weight matrix of ``model``, one ``F.linear`` each: the matrix products of a
    decode step at batch B and nothing else (no attention, no Python around them). Interleaved, one run.

    Returns ``{"B": [...], "s": [Stats per B], "weight_bytes": ...}``. The bytes read are the same at
    every B (the weights), so at small B the time should barely move; where it jumps, the library has
    changed how it multiplies (``python -m utils.bench`` and notebook 06 print it).
    """
    Bs = [check_int("batch size", B) for B in batch_sizes]
    weights = _linear_weights(model)
    g = torch.Generator().manual_seed(seed)
    xs = {B: {w.shape[1]: torch.randn(B, w.shape[1], generator=g, dtype=w.dtype) for w in weights} for B in Bs}

    def products(B: int):
        def run() -> None:
            for w in weights:
                F.linear(xs[B][w.shape[1]], w)  # (B, C_out)
        return torch.inference_mode()(run)

    stats = time_interleaved({B: products(B) for B in Bs}, repeats, warmup, progress)
    return {"B": Bs, "s": [stats[B] for B in Bs],
            "weight_bytes": sum(w.numel() * w.element_size() for w in weights)}


def bandwidth_lines(c: dict, q) -> list[str]:
    """Case 4 of ``python -m utils.bench`` as table lines (``q(stats, scale)`` formats a median [quartiles])."""
    b = c["bytes"]
    lines = ["", f"4. Batch-1 decode step vs memory bandwidth: {c['shape']}; context {c['context_len']}",
              f"   bytes per token: weights {b['weights'] / 1e6:.1f} MB + KV read {b['kv_read'] / 1e6:.2f} MB "
              f"+ KV write {b['kv_write'] / 1e3:.1f} kB = {b['total'] / 1e6:.1f} MB",
              f"   the machine: copy {q(c['copy_Bps'], 1e-9)} GB/s, read {q(c['read_Bps'], 1e-9)} GB/s",
              f"   torch's matvec over the same {c['matvec_bytes'] / 1e6:.1f} MB of weights, by layout "
              "(utils/weight_layout.py) and kernel (one call; row blocks, utils/split_matvec.py):"]
    for name, bps in c["matvec_Bps"].items():
        lines.append(f"      {name:19s} {q(bps, 1e-9)} GB/s" + ("  (the fastest)" if name == c["best_matvec"] else ""))
    lines.append("   the decode step, by layout:")
    for layout, st in c["steps_s"].items():
        rate = st.map(lambda x: b["total"] / x)
        lines.append(f"      {layout:7s} {q(st, 1e3)} ms -> {q(rate, 1e-9)} GB/s"
                     + ("  (the model as built)" if layout == c["layout"] else ""))
    lines += [f"   the step reaches {c['fraction']:.0%} of the machine's limit ({c['limit_Bps'] / 1e9:.2f} GB/s; the "
              f"fastest possible step {c['bound_s'] * 1e3:.2f} ms) and {c['matvec_fraction']:.0%} of torch's best "
              "matvec"]
    if "dtypes" in c:
        d = c["dtypes"]
        lines.append(f"   the same step with the weights and cache in other dtypes (logits against {d['base']}):")
        for name, v in d["dtypes"].items():
            lines.append(f"      {name:9s} {q(v['step_s'], 1e3)} ms, {v['bytes'] / 1e6:6.1f} MB, "
                         f"{v['speedup']:.2f}x, max |logit diff| {v['max_logit_diff']:.2g}")
    return lines
