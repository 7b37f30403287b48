"""Panel of notebook 02 (prefill): the K and V one prefill writes, as heatmaps."""
from __future__ import annotations

import html

import torch

from ..generate import prefill
from ..i18n import in_language, tr
from ..plots.base import grammar_probs, text_label, token_label
from ..plots.prefill import plot_kv_heatmap
from .base import Panel, dropdown, int_slider, option_values, prompt_options


# Prompts of the course language (every word is in the course tokenizer's vocabulary), in the notebook's
# language: the panel offers ``in_language(PREFILL_PROMPTS)``. The same four in both: after a number, most
# likely the subject's favourite animal (an adjective first 30% of the time), and in the second prompt that
# subject sits a sentence back; a dislike; after a number and an adjective, an animal.
PREFILL_PROMPTS = {
    "en": ("<BOS> he has two", "<BOS> I really like cats . he has two", "<BOS> she doesn't like",
           "<BOS> we have three small"),
    "zh": ("<BOS> 他 有 两 只", "<BOS> 我 很 喜欢 猫 。 他 有 两 只", "<BOS> 她 不 喜欢", "<BOS> 我们 有 三 只 小"),
}

CLIP_PERCENTILE = 99  # the heatmap's colour scale ends at this percentile of |value| (as in the notebook's figure)


class PrefillKVPanel(Panel):
    """02 · Prefill: what one prefill leaves in the cache, layer by layer.

    Controls: the prompt, a layer (0 .. L-1), a K/V head (0 .. H_kv-1), and K or V. The figure is
    that head's cached tensor ``[T, d_h]`` (one row per prompt token); the numbers compare it with
    the same head's tensor in layer 0, by direction (cosine similarity: 1 for layer 0 itself, small for
    the other layers, whose numbers differ) and by size (the ratio of the norms), and say
    which token the prefill logits pick first. ``prompts`` defaults to
    ``PREFILL_PROMPTS`` of the current language.
    """

    title = "Prefill: the K/V every layer keeps"

    def __init__(self, model, tokenizer, prompts=None) -> None:
        self.model, self.tok = model.eval(), tokenizer
        prompts = in_language(PREFILL_PROMPTS) if prompts is None else prompts
        self._runs: dict[str, tuple] = {}  # prompt -> (words, first-token logits [1, V], cache)
        self._grammar: dict[tuple, float | None] = {}  # (prompt, word) -> the grammar's probability of word
        cfg = model.cfg
        super().__init__({
            "prompt": dropdown(tr("prompt"), prompt_options(prompts), list(prompts)[0]),
            # layer 1 first: its cosine to layer 0 (near 0) shows at once that layers keep different K/V
            "layer": int_slider(tr("layer"), min(1, cfg.n_layers - 1), 0, cfg.n_layers - 1),
            "head": int_slider(tr("K/V head"), 0, 0, cfg.n_kv_heads - 1),
            "tensor": dropdown(tr("tensor"), ["K", "V"], "K"),
        })

    def _run(self, prompt: str):
        if prompt not in self._runs:  # one prefill per prompt, then cached: moving sliders is instant
            ids = torch.tensor([self.tok.encode(prompt)])  # (1, T)
            logits, kv = prefill(self.model, ids)  # (1, V), every layer's K/V
            self._runs[prompt] = (self.tok.tokens(ids[0]), logits, kv)
        return self._runs[prompt]

    def _exact(self, prompt: str, word: str) -> float | None:
        """The grammar's exact probability of ``word`` after ``prompt`` (None outside the grammar), kept per prompt."""
        key = (prompt, word)
        if key not in self._grammar:
            self._grammar[key] = (grammar_probs(prompt, [word]) or [None])[0]
        return self._grammar[key]

    def compute(self, prompt: str, layer: int, head: int, tensor: str) -> dict:
        words, logits, kv = self._run(prompt)
        which = 0 if tensor == "K" else 1
        full = kv.layer_kv(layer)[which]  # (B, H_kv, T, d_h)
        x = full[0, head]  # (T, d_h)
        x0 = kv.layer_kv(0)[which][0, head]  # (T, d_h): the same head in layer 0
        # one colour scale per (prompt, tensor), the same for every layer and head, so moving a slider compares
        # like with like; the 99th percentile of |value|, so the <BOS> row's rare large values don't wash out the rest
        every_layer = torch.stack([kv.layer_kv(i)[which][0] for i in range(kv.n_layers)])  # (L, H_kv, T, d_h)
        vmax = float(every_layer.abs().float().quantile(CLIP_PERCENTILE / 100))
        probs = torch.softmax(logits[0].float(), dim=-1)  # (V,)
        first = int(probs.argmax())
        return {
            "words": words, "T": len(words), "layer": layer, "head": head, "tensor": tensor,
            "shape": tuple(full.shape), "n_layers": kv.n_layers, "cache_len": kv.seq_len,
            "values": x.float().numpy().copy(), "vmax": vmax,
            # direction and size against layer 0: cosine 1 and ratio 1 would mean the same tensor up to a scale
            "cos_to_layer0": float(torch.nn.functional.cosine_similarity(x.flatten(), x0.flatten(), dim=0)),
            "norm_ratio_to_layer0": float(x.norm() / x0.norm()),
            "first_token": self.tok.decode([first]), "first_prob": float(probs[first]),
            "first_grammar": self._exact(prompt, self.tok.vocab[first]),
        }

    def ranges_beyond_layer0(self) -> dict:
        """The cosine and norm ratio to layer 0 over every setting the panel offers beyond layer 0 (every
        prompt, layer >= 1, head, K and V): ``{"n": settings, "cos": (min, max), "norm_ratio": (min, max)}``.
        What a reader without a live kernel sees in place of moving the sliders."""
        n_layers, n_heads = self.model.cfg.n_layers, self.model.cfg.n_kv_heads
        spread = [self.compute(p, layer, head, x) for p in option_values(self.controls["prompt"].options)
                  for layer in range(1, n_layers) for head in range(n_heads) for x in ("K", "V")]
        cos, ratio = [s["cos_to_layer0"] for s in spread], [s["norm_ratio_to_layer0"] for s in spread]
        return {"n": len(spread), "cos": (min(cos), max(cos)), "norm_ratio": (min(ratio), max(ratio))}

    def render(self, s: dict) -> str:
        words = html.escape(text_label(" ".join(s["words"])))
        cos, ratio = s["cos_to_layer0"], s["norm_ratio_to_layer0"]
        same = (tr("this is layer 0 itself") if s["layer"] == 0
                else tr("other numbers, not a rescaled copy of layer 0's"))
        x, layer = s["tensor"], s["layer"]
        exact = ("" if s["first_grammar"] is None else
                 " " + tr("(the grammar's exact probability: {p:.2f})", p=s["first_grammar"]))
        return (
            "<p>" + tr("prompt ({T} tokens): <code>{words}</code>", T=s["T"], words=words) + "<br>"
            + tr("cache after prefill: {L} layers &times; (K, V), each <code>[B, H_kv, T, d_h] = {shape}</code>, "
                 "cache length {n}", L=s["n_layers"], shape=list(s["shape"]), n=s["cache_len"]) + "<br>"
            + tr("{x} of layer {layer}, head {head}: ", x=x, layer=layer, head=s["head"])
            + f"cos({x}<sub>{layer}</sub>, {x}<sub>0</sub>) = <b>{cos:.2f}</b>, "
            f"&Vert;{x}<sub>{layer}</sub>&Vert; / &Vert;{x}<sub>0</sub>&Vert; = <b>{ratio:.2f}</b> "
            + tr("({same})", same=same) + "<br>"
            + tr("first token picked from the last position's logits: <b>{token}</b> (p = {p:.2f})",
                 token=html.escape(token_label(s["first_token"])), p=s["first_prob"]) + exact + "<br>"
            + tr("<small>colours: one scale for all layers and heads of this prompt's {x} (the {p}th percentile of "
                 "|value|), so in some layers more cells reach the end colours</small>", x=x, p=CLIP_PERCENTILE) + "</p>"
        )

    def plot(self, s: dict):
        return plot_kv_heatmap(
            s["values"], s["words"],
            tr("cached {x}, layer {layer}, K/V head {head}: [T={T}, d_h={d_h}]", x=s["tensor"], layer=s["layer"],
               head=s["head"], T=s["T"], d_h=s["shape"][3]),
            vmax=s["vmax"], clip_percentile=CLIP_PERCENTILE,
        )
