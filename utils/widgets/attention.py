"""Panel of notebook 01 (the attention block): every tensor shape of one attention call."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..attention import attention, causal_mask, repeat_kv
from ..i18n import tr
from ..plots.attention import head_kind, plot_head_groups, plot_mask, plot_weights
from ..plots.base import new_figure
from .base import Panel, int_slider, selection_slider


def divisors(n: int) -> list[int]:
    """All d with n % d == 0, ascending: the valid H_kv for H = n."""
    return [d for d in range(1, n + 1) if n % d == 0]


def _shape(t) -> str:
    return "[" + ", ".join(str(s) for s in t) + "]"


class AttentionShapesPanel(Panel):
    """Sliders T, H, H_kv -> the shape of every tensor in one causal self-attention layer.

    The shapes in ``state["shapes"]`` are read from real tensors that go through the same steps
    as the notebook (projections, heads, ``repeat_kv``, scores, mask, softmax, weighted sum),
    not from a formula. ``H_kv`` only offers divisors of ``H`` (every K/V head serves the same
    number of query heads), and its options follow ``H``; ``B`` and ``d_h`` are fixed, so
    ``C = H * d_h``.
    """

    title = "Attention shapes: move T, H and H_kv"

    def __init__(self, T: int = 6, H: int = 4, H_kv: int = 2, B: int = 1, d_h: int = 8,
                 T_max: int = 32, H_max: int = 16) -> None:
        self.B, self.d_h = B, d_h
        self._syncing = False
        self._last_H = H
        controls = {
            "T": int_slider(tr("T (tokens)"), T, 1, T_max, continuous_update=False),
            "H": int_slider(tr("H (query heads)"), H, 1, H_max, continuous_update=False),
            "H_kv": selection_slider(tr("H_kv (K/V heads)"), divisors(H), H_kv),
        }
        super().__init__(controls)

    def _on_change(self, change) -> None:
        if self._syncing:
            return
        if change["owner"] is self.controls["H"]:
            self._sync_kv_options()
        self.update()

    def _sync_kv_options(self) -> None:
        """New H: offer its divisors as H_kv; MHA stays MHA, otherwise keep the largest divisor <= old H_kv."""
        H, w = self.controls["H"].value, self.controls["H_kv"]
        old = w.value
        new = H if old == self._last_H else max(d for d in divisors(H) if d <= old)
        self._syncing = True
        try:
            w.options = divisors(H)  # resets the value to the first option on 7.x and 8.x
            w.value = new
        finally:
            self._syncing = False
        self._last_H = H

    def compute(self, T: int, H: int, H_kv: int) -> dict:
        B, d_h = self.B, self.d_h
        if H % H_kv:
            raise ValueError(f"H={H} is not divisible by H_kv={H_kv}")
        n_rep, C = H // H_kv, H * d_h
        g = torch.Generator().manual_seed(0)
        x = torch.randn(B, T, C, generator=g)  # (B, T, C)
        W_q = torch.randn(C, H * d_h, generator=g) / C**0.5
        W_k = torch.randn(C, H_kv * d_h, generator=g) / C**0.5  # fewer columns: only H_kv heads
        W_v = torch.randn(C, H_kv * d_h, generator=g) / C**0.5
        q = (x @ W_q).view(B, T, H, d_h).transpose(1, 2)  # (B, H, T, d_h)
        k = (x @ W_k).view(B, T, H_kv, d_h).transpose(1, 2)  # (B, H_kv, T, d_h)
        v = (x @ W_v).view(B, T, H_kv, d_h).transpose(1, 2)  # (B, H_kv, T, d_h)
        k_rep, v_rep = repeat_kv(k, n_rep), repeat_kv(v, n_rep)  # (B, H, T, d_h)
        mask = causal_mask(T, T)  # (T, T)
        out, weights = attention(q, k, v, mask, return_weights=True)  # (B, H, T, d_h), (B, H, T, T)
        merged = out.transpose(1, 2).reshape(B, T, H * d_h)  # (B, T, C): heads side by side again
        ref = F.scaled_dot_product_attention(q, k_rep, v_rep, is_causal=True)
        kind = "MHA" if H_kv == H else ("MQA" if H_kv == 1 else "GQA")
        return {
            "T": T, "H": H, "H_kv": H_kv, "B": B, "d_h": d_h, "C": C, "n_rep": n_rep, "kind": kind,
            "shapes": {"x": tuple(x.shape), "q": tuple(q.shape), "k": tuple(k.shape), "v": tuple(v.shape),
                       "k_rep": tuple(k_rep.shape), "weights": tuple(weights.shape),
                       "out": tuple(out.shape), "merged": tuple(merged.shape)},
            "n_kv_heads": k.shape[1],
            "groups": [list(range(j * n_rep, (j + 1) * n_rep)) for j in range(H_kv)],
            "kv_numbers_per_token": 2 * k.shape[1] * d_h,  # per layer and sequence: one k and one v per K/V head
            "kv_numbers_per_token_mha": 2 * H * d_h,
            "matches_sdpa": bool(torch.allclose(out, ref, atol=1e-5)),
            "mask": mask, "weights": weights[0, 0],
        }

    def render(self, s: dict) -> str:
        rows = [
            ("x", tr("input"), "B, T, C"),
            ("q", tr("queries: x @ W_q, split into heads"), "B, H, T, d_h"),
            ("k", tr("keys: x @ W_k (what the cache stores)"), "B, H_kv, T, d_h"),
            ("v", tr("values: x @ W_v (what the cache stores)"), "B, H_kv, T, d_h"),
            ("k_rep", tr("keys after repeat_kv (same for values)"), "B, H, T, d_h"),
            ("weights", tr("softmax of the masked scores q @ kᵀ / √d_h"), "B, H, T, T"),
            ("out", tr("weights @ v"), "B, H, T, d_h"),
            ("merged", tr("heads concatenated (then W_o)"), "B, T, C"),
        ]
        cells = "".join(
            f"<tr><td><code>{n}</code></td><td>{what}</td><td>[{sym}]</td>"
            f"<td><code class=\"shape-{n}\">{_shape(s['shapes'][n])}</code></td></tr>"
            for n, what, sym in rows)
        groups = tr("; ").join(tr("query heads {heads} → K/V head {j}", j=j, heads=", ".join(map(str, g))) if len(g) > 1
                               else tr("query head {head} → K/V head {j}", j=j, head=g[0])  # MHA: groups of one
                               for j, g in enumerate(s["groups"]))
        groups = groups[:1].upper() + groups[1:]  # it starts a sentence
        head = "".join(f"<th>{h}</th>" for h in (tr("tensor"), tr("what"), tr("symbols"), tr("shape")))
        return (
            f"<div class=\"attention-shapes\">"
            f"<p>B={s['B']}, T={s['T']}, H={s['H']}, d_h={s['d_h']}, C=H·d_h={s['C']}</p>"
            f"<table><tr>{head}</tr>{cells}</table><p>"
            + tr("<b>{kind}</b>: <span class=\"kv-heads\">{n_kv}</span> K/V head(s) for {H} query head(s) "
                 "({n_rep} query head(s) per K/V head). {groups}.", kind=head_kind(s["H"], s["H_kv"]),
                 n_kv=s["n_kv_heads"], H=s["H"],
                 n_rep=s["n_rep"], groups=groups)
            + "</p><p>"
            + (tr("Per token and layer the cache keeps 2·H_kv·d_h = <b>{n}</b> numbers "
                  "(MHA with the same H would keep {n_mha}).", n=s["kv_numbers_per_token"],
                  n_mha=s["kv_numbers_per_token_mha"]) if s["H_kv"] != s["H"] else  # MHA: nothing to compare with
               tr("Per token and layer the cache keeps 2·H_kv·d_h = <b>{n}</b> numbers.",
                  n=s["kv_numbers_per_token"]))
            + "</p><p>" + tr("Equals torch's scaled_dot_product_attention: <b>{same}</b>", same=s["matches_sdpa"])
            + "</p></div>"
        )

    def plot(self, s: dict):
        fig, (ax1, ax2, ax3) = new_figure(ncols=3, width=4.2, height=3.6)
        plot_mask(ax1, s["mask"], title=tr("Causal mask, T={T}", T=s["T"]))
        plot_weights(ax2, s["weights"], title=tr("Weights of query head 0"))
        plot_head_groups(ax3, s["H"], s["H_kv"])
        fig.subplots_adjust(left=0.05, right=0.99, bottom=0.2, top=0.9, wspace=0.55)  # fixed: tight_layout is slow
        return fig
