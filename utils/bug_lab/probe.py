"""Probing an engine: what a debugger writes down, pass by pass, next to a full recompute.

``run_probe`` runs an engine's prefill and a few greedy decode steps by hand. For every pass, and for
every row of the batch, it records raw observations, none named after a bug:

* the input ids' shape, and the RoPE positions the pass gave each row's tokens;
* the mask row of the pass's last query (1 = may attend), or ``None`` / ``is_causal`` when no mask was given;
* the cache's length after the pass, and how many of its positions are real tokens in each row;
* per layer: the last token's key and value as that layer reads them, and the layer's output for that
  token, each compared with a full recompute (the correct model, no cache, on the same text);
* whether the pass's logits equal the recompute's.

Which bug explains them is for the learner to work out (``mysteries.diagnose``).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..cache import KVCache
from ..i18n import tr
from .harness import TOL, text_table

PROBE_HEAD = ("pass", "row", "input ids", "positions", "last query's mask row", "cache: len (real)",
              "new K", "new V", "layer outputs", "logits")


def _runs(xs: list[int]) -> str:
    """``[0, 0, 5, 6, 7, 8]`` as ``0 0 5..8``: a run of three or more consecutive numbers shortened."""
    out, i = [], 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        out += [f"{xs[i]}..{xs[j]}"] if j - i >= 2 else [str(x) for x in xs[i:j + 1]]
        i = j + 1
    return " ".join(out)


@dataclass
class Probe:
    """One dict per forward pass (the prefill, then each decode step); prints as a table, one line per row.

    Keys: ``pass``; ``input`` ``[B, T]``; per batch row: ``positions`` (list), ``mask`` (the last query's
    row as 0/1 text, or "none"/"causal"), ``real`` (real tokens the cache holds), ``k``, ``v``, ``out``
    (one bool per layer: equal to the recompute within ``TOL``), ``logits`` (bool); and ``seq_len``.
    """

    rows: list[dict]

    def __str__(self) -> str:  # the values stay as recorded; only what is printed is translated
        marks = lambda flags: " ".join("=" if f else "≠" for f in flags)  # noqa: E731
        lines = []
        for r in self.rows:
            step = r["pass"].removeprefix("step ")
            name = tr("prefill") if step == "prefill" else tr("step {n}", n=step)
            for b in range(len(r["positions"])):
                mask = {"none": "None", "causal": "is_causal"}.get(r["mask"][b], r["mask"][b])  # code: no translation
                lines.append((name if b == 0 else "", str(b), str(r["input"]) if b == 0 else "",
                              _runs(r["positions"][b]), mask, f"{r['seq_len']} ({r['real'][b]})",
                              marks(r["k"][b]), marks(r["v"][b]), marks(r["out"][b]), marks([r["logits"][b]])))
        n_layers = len(self.rows[0]["k"][0])
        legend = tr("new K, new V: the last token's key and value as each layer reads them; layer outputs: each "
                    "layer's output at that token. One mark per layer, 0 to {last}: = equal to a full recompute "
                    "within {tol:g}, ≠ not.", last=n_layers - 1, tol=TOL)
        return legend + "\n" + text_table(tuple(map(tr, PROBE_HEAD)), lines)

    __repr__ = __str__


class _Recorder:
    """Hooks on every block: what the last forward pass fed, and what each layer read and returned."""

    def __init__(self, model) -> None:
        self.model, self.seen = model, {}
        self.handles = [h for i, layer in enumerate(model.layers)
                        for h in (layer.register_forward_pre_hook(self._before(i)),
                                  layer.register_forward_hook(self._after(i)))]

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def _before(self, i: int):
        def hook(block, args):
            x, rope, mask, cache = args[:4]  # Block.forward(x, rope, mask, cache, layer_idx, is_causal)
            if i == 0:  # a new forward pass begins
                B, T = x.shape[:2]
                S = (cache.seq_len if cache is not None else 0) + T if mask is None else mask.shape[-1]
                causal = len(args) > 5 and bool(args[5])
                self.seen = {"input": [B, T], "positions": self._positions(rope, B, T),
                             "mask": self._mask_rows(mask, causal, B, S), "k": {}, "v": {}, "out": {}}
            if cache is not None and getattr(cache, "_probed_by", None) is not self:
                self._watch(cache)
        return hook

    def _after(self, i: int):
        def hook(block, args, output):
            self.seen["out"][i] = output[:, -1].float()  # (B, C): the layer's output at the last token
        return hook

    def _watch(self, cache) -> None:
        update = type(cache).update.__get__(cache)  # the class's own update, never an older probe's wrapper

        def watched(layer, k, v):
            K, V = update(layer, k, v)  # (B, H_kv, T_total, d_h): what the layer attends over
            self.seen["k"][layer], self.seen["v"][layer] = K[:, :, -1].float(), V[:, :, -1].float()  # (B, H_kv, d_h)
            return K, V
        cache.update, cache._probed_by = watched, self

    def _positions(self, rope, B: int, T: int) -> list[list[int]]:
        """The positions each row's tokens were rotated by, found in the model's RoPE table."""
        cos = rope.cos.reshape(-1, T, rope.cos.shape[-1]).float()  # (1 or B, T, d_h)
        table = self.model.rope_cos.float()  # (max_seq_len, d_h)
        found = (cos[:, :, None, :] - table[None, None]).abs().sum(-1).argmin(-1)  # (1 or B, T)
        return found.expand(B, T).tolist()

    @staticmethod
    def _mask_rows(mask, causal: bool, B: int, S: int) -> list[str]:
        if mask is None:
            return ["causal" if causal else "none"] * B
        last = mask[..., -1, :].reshape(-1, S)  # (1 or B, S): the last query's row
        return ["".join("1" if bool(x) else "0" for x in last[b if last.shape[0] > 1 else 0]) for b in range(B)]


def _same(a: torch.Tensor, b: torch.Tensor) -> list[bool]:
    """Per batch row: ``a`` equals ``b`` within ``TOL`` (both ``[B, ...]``)."""
    return [bool((x - y).abs().max() <= TOL) for x, y in zip(a, b)]


@torch.inference_mode()
def run_probe(model, ids: torch.Tensor, mask: torch.Tensor, engine: dict, n_steps: int) -> Probe:
    """Run ``engine`` (``{"prefill_fn", "step_fn"}``) on ``ids``/``mask`` ``[B, T]``: the prefill, then
    ``n_steps`` greedy decode steps (the engine's own choices), each compared with a full recompute."""
    recorder, rows = _Recorder(model), []
    text, text_mask = ids, mask
    try:
        for step in range(n_steps + 1):
            if step == 0:
                logits, cache = engine["prefill_fn"](model, ids, mask, KVCache())  # (B, V)
            else:
                token = logits.argmax(-1)  # (B,)
                text = torch.cat([text, token[:, None]], dim=1)  # (B, T + step): the text so far
                text_mask = torch.cat([text_mask, torch.ones_like(token)[:, None]], dim=1)
                logits = engine["step_fn"](model, token, cache)
            seen = recorder.seen
            reference = model(text, cache=KVCache(), attention_mask=text_mask)[:, -1]  # (B, V): the recompute
            ref = recorder.seen
            L, B = model.cfg.n_layers, text.shape[0]
            per_layer = {key: list(zip(*(_same(seen[key][i], ref[key][i]) for i in range(L))))
                         for key in ("k", "v", "out")}  # per row: one bool per layer
            real = cache.valid_counts()
            rows.append({"pass": "prefill" if step == 0 else f"step {step}", "input": seen["input"],
                         "positions": seen["positions"], "mask": seen["mask"], "seq_len": cache.seq_len,
                         "real": [cache.seq_len] * B if real is None else real.tolist(),
                         **{key: [list(flags) for flags in per_layer[key]] for key in per_layer},
                         "logits": _same(logits.float(), reference.float())})
    finally:
        recorder.remove()
    return Probe(rows)
