"""Panel of notebook 05 (sampling and stopping): temperature, top-k and top-p live."""
from __future__ import annotations

import html

import torch

from ..i18n import in_language, language, tr
from ..plots.base import grammar_probs, text_label, token_label
from ..validate import check_tokenizer
from .base import KEPT_FIGURES, Panel, dropdown, float_slider, int_slider, prompt_options


# The prompts the panel offers by default, in the notebook's language: where the model is sure, where a number
# word comes next, the start of a document (any subject, either language), and a dislike.
SAMPLING_PROMPTS = {"en": ("<BOS> I like", "<BOS> she has", "<BOS>", "<BOS> they don't like"),
                    "zh": ("<BOS> 我 喜欢", "<BOS> 她 有", "<BOS>", "<BOS> 他们 不 喜欢")}


class SamplingPanel(Panel):
    """Temperature, top-k and top-p applied to the course model's next-token distribution.

    Controls: ``prompt`` (a Dropdown), ``temperature`` (0 = greedy), ``top_k`` (V = off) and
    ``top_p`` (1 = off, never 0). The logits of each prompt come from one ``prefill`` and are
    kept; the sliders only change what is picked from them. ``prompts`` defaults to
    ``SAMPLING_PROMPTS`` of the current language (English prompts in English, Chinese in Chinese).

    ``state``: ``kept_size`` (tokens left with probability > 0), ``kept`` (word, probability)
    pairs, ``probs_sum`` (the final distribution's total, 1), ``measured_mass`` (the kept set's
    probability after temperature and top-k, where top-p measures it: >= top_p), ``kept_mass`` (the
    model's own probability of the kept set), ``greedy`` (the argmax), ``stages`` for the plot, and
    ``grammar`` (word -> the grammar's exact probability after the prompt; None for a prompt the
    grammar cannot produce), with ``shown_grammar`` the same for the plotted tokens.
    """

    title = "From logits to a token: temperature, top-k, top-p"

    def __init__(self, model, tokenizer, prompts=None, n_show: int = 12) -> None:
        from ..model import check_model

        check_model(model)
        check_tokenizer(tokenizer, needs="encode", usage="SamplingPanel(model, tok)", required=True)
        if prompts is None:
            prompts = in_language(SAMPLING_PROMPTS)
        prompts = [prompts] if isinstance(prompts, str) else list(prompts)
        if not prompts:
            raise ValueError(tr("prompts is empty: give the panel at least one prompt, e.g. ['<BOS> I like']"))
        for p in prompts:  # a prompt the tokenizer cannot read is refused by name, never swapped for another
            tokenizer.encode(p)
        self.model, self.tok, self.n_show = model, tokenizer, n_show
        self.V = model.cfg.vocab_size
        self._logits: dict[str, object] = {}
        self._grammar: dict[str, dict | None] = {}  # prompt -> the grammar's next-word distribution
        super().__init__({
            "prompt": dropdown(tr("prompt"), prompt_options(prompts), prompts[0]),
            "temperature": float_slider(tr("temperature (0 = greedy)"), 1.0, 0.0, 2.0, 0.05, continuous_update=False),
            "top_k": int_slider(tr("top_k ({V} = off)", V=self.V), self.V, 1, self.V, continuous_update=False),
            "top_p": float_slider(tr("top_p (1 = off)"), 1.0, 0.05, 1.0, 0.05, continuous_update=False),
        })

    def next_logits(self, prompt: str):
        """Logits ``[1, V]`` of the token after ``prompt`` (one prefill per prompt, then reused)."""
        if prompt not in self._logits:
            from ..generate import prefill
            ids = torch.tensor([self.tok.encode(prompt)])  # (1, T)
            self._logits[prompt], _ = prefill(self.model.eval(), ids)  # (1, V)
        return self._logits[prompt]

    def grammar(self, prompt: str) -> dict | None:
        """The grammar's exact distribution of the word after ``prompt`` (kept per prompt), None outside it."""
        if prompt not in self._grammar:
            words = list(self.tok.vocab)
            self._grammar[prompt] = (None if (probs := grammar_probs(prompt, words)) is None
                                     else dict(zip(words, probs)))
        return self._grammar[prompt]

    def compute(self, prompt, temperature, top_k, top_p) -> dict:
        from ..sampling import filter_stages
        temperature = round(float(temperature), 6)  # slider steps like 0.30000000000000004
        top_k = None if top_k >= self.V else int(top_k)
        top_p = None if top_p >= 1 - 1e-9 else round(float(top_p), 6)
        logits = self.next_logits(prompt)
        stages = {name: probs[0] for name, probs in filter_stages(logits, temperature, top_k, top_p).items()}  # (V,)
        final, original = stages["top_p"], stages["original"]
        kept = [i for i in final.argsort(descending=True).tolist() if final[i] > 0]
        shown = original.argsort(descending=True)[: self.n_show].tolist()  # sorted by the model's probability
        words = [self.tok.vocab[i] for i in shown]
        exact = self.grammar(prompt)
        return {
            "prompt": prompt, "temperature": temperature, "top_k": top_k, "top_p": top_p,
            "kept_size": len(kept), "kept": [(self.tok.vocab[i], float(final[i])) for i in kept],
            "probs_sum": float(final.sum()), "kept_mass": float(original[kept].sum()),
            "measured_mass": float(stages["top_k"][kept].sum()),  # where top-p measures: after temperature, top-k
            "greedy": self.tok.vocab[int(logits[0].argmax())],
            "shown_ids": shown, "shown_words": words,
            "stages": {name: probs[shown].tolist() for name, probs in stages.items()},
            "model": {self.tok.vocab[i]: float(original[i]) for i in kept},
            "grammar": exact, "shown_grammar": None if exact is None else [exact[w] for w in words],
        }

    def render(self, s: dict) -> str:
        exact = s["grammar"]
        rows = "".join(
            f"<tr><td>{html.escape(token_label(w))}</td><td>{_kept_value(p)}</td><td>{s['model'][w]:.3f}</td>"
            + (f"<td>{exact.get(w, 0.0):.3f}</td>" if exact is not None else "") + "</tr>"
            for w, p in s["kept"][:8])
        n_cols = 4 if exact is not None else 3
        more = (f"<tr><td colspan={n_cols}>{tr('… and {n} more', n=s['kept_size'] - 8)}</td></tr>"
                if s["kept_size"] > 8 else "")
        heads = [tr("kept token"), tr("probability after the filters"), tr("the model's probability")]
        heads += [tr("the grammar's exact probability")] if exact is not None else []
        head = "".join(f"<th>{h}</th>" for h in heads)
        note = ("" if exact is not None else
                "<br><small>" + tr("The course grammar never produces this prompt: no exact probabilities to compare.")
                + "</small>")
        return (
            tr("<b>{prompt}</b> → kept set: <b>{kept}</b> of {V} tokens, holding {measured:.3f} of the probability "
               "after temperature and top-k (where top-p measures it) and {mass:.3f} of the model's own "
               "(renormalised to {total:.3f}); greedy would pick <b>{greedy}</b>",
               prompt=html.escape(text_label(s["prompt"])), kept=s["kept_size"], V=self.V,
               measured=s["measured_mass"], mass=s["kept_mass"], total=s["probs_sum"],
               greedy=html.escape(token_label(s["greedy"])))
            + f"{note}<table class='sampling-kept'><tr>{head}</tr>{rows}{more}</table>"
        )

    def plot(self, s: dict):
        from ..plots.sampling import SamplingFigure

        key = (language(), self.n_show)
        if getattr(self, "_figure_key", None) != key:  # made once (per language): a step redraws it in place
            self._figure, self._figure_key = SamplingFigure(min(self.n_show, self.V)), key
        self._setting = (language(), s["prompt"], s["temperature"], s["top_k"], s["top_p"])
        return self._figure.update(s["stages"], s["shown_ids"], s["shown_words"], s,
                                   title=tr("Next token after “{prompt}”", prompt=text_label(s["prompt"])),
                                   grammar=s["shown_grammar"])

    def _png(self, fig, draw) -> bytes:
        """The picture of a setting seen before comes back without drawing (at most ``KEPT_FIGURES`` are kept)."""
        pngs = self.__dict__.setdefault("_pngs_by_setting", {})
        if self._setting not in pngs:
            while len(pngs) >= KEPT_FIGURES:
                del pngs[next(iter(pngs))]
            pngs[self._setting] = draw(fig)
        return pngs[self._setting]


def _kept_value(p: float) -> str:
    """A kept token's probability with three decimals; one that would print as 0.000 says it is kept, but ≈ 0."""
    return f"{p:.3f}" if p >= 0.0005 else tr("{p:.0e}: kept, but ≈ 0", p=p)
