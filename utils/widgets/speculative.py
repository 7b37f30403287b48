"""Panel of notebook 12 (speculative decoding): the rounds of one run, for the draft length k, the
temperature, the draft (the shipped draft model or prompt lookup), the prompt and the rollback you choose.

``speculative_rounds`` runs ``utils.speculative.speculative_generate`` once and turns its rounds into what
``plot_speculative_rounds`` draws: per round, the draft tokens proposed (accepted, refused, or thrown
away after a refusal), the target's own token (a correction at a refusal, a bonus after every draft
was accepted) and both caches' lengths after the round. A run of a dozen tokens takes milliseconds on
the course model, so the panel runs it at each slider step; the target's greedy reference of each
prompt is computed once, and every result is kept, so moving back costs nothing.
"""
from __future__ import annotations

import html as _html

import torch

from ..generate import generate
from ..i18n import in_language, tr
from ..model import check_model
from ..plots.base import text_label
from ..plots.speculative import plot_speculative_rounds
from ..speculative import PromptLookup, speculative_generate
from ..validate import as_one_prompt, check_choice, check_int, check_tokenizer
from .base import Panel, check_option, check_range, dropdown, int_slider, selection_slider

# The prompts the panel offers, in the notebook's language (``in_language(SPEC_PROMPTS)``): a short one, one
# stopping before the animal, one repeating itself (prompt lookup finds it), and one with a second sentence begun.
SPEC_PROMPTS = {"en": ["<BOS> I have", "<BOS> she has a", "<BOS> they also like horses . they also",
                       "<BOS> I have two cats . I"],
                "zh": ["<BOS> 我 有", "<BOS> 她 有 一", "<BOS> 他们 也 喜欢 马 。 他们 也", "<BOS> 我 有 两 只 猫 。 我"]}
TEMPERATURES = [0.0, 0.5, 0.8, 1.0, 1.5]
MAX_K = 8
NEW_TOKENS = 12  # the course model's documents have at most 15 tokens: a prompt and 12 new tokens stay near that


def round_kind(proposed: list, accepted: int) -> str:
    """What the target's own token of a round is: "correction" (it replaces the first refused draft),
    "bonus" (every draft was accepted: one more token from the last logits) or "none" (nothing proposed)."""
    if not proposed:
        return "none"
    return "bonus" if accepted == len(proposed) else "correction"


def kind_label(kind: str) -> str:
    """``round_kind``'s word for display, in the course's language (the kind itself stays English for code)."""
    return {"correction": tr("correction"), "bonus": tr("bonus"), "none": tr("no drafts")}[kind]


def speculative_rounds(target, draft, tok, ids: torch.Tensor, max_new_tokens: int, *, k: int,
                       temperature: float = 0.0, seed: int = 0, rollback: bool = True,
                       reference: torch.Tensor | None = None) -> dict:
    """One ``speculative_generate`` run of ``max_new_tokens`` after ``ids`` (``[1, T]``), as a dict:
    ``rounds`` (per round: ``start``, the position of its first draft token; ``proposed`` and ``words``;
    ``accepted``; ``extra`` and ``extra_word``, the target's own token; ``kind`` (``round_kind``) and
    ``kind_label``, the same for display, in the course's language;
    ``length``, the sequence's length after it; ``target_len``/``draft_len``, the caches' lengths after
    it), ``tokens`` and ``text`` (the new tokens), the counts (``acceptance_rate``, ``target_calls``,
    ``draft_calls``, ``n_rounds``, ``tokens_per_round``), and, greedy, ``reference`` (the target's own
    greedy tokens, computed unless given) and ``first_diff`` (the first new token that differs, or None)."""
    ids = as_one_prompt(ids, "ids")
    res = speculative_generate(target, draft, ids, max_new_tokens, k=k, temperature=temperature,
                               seed=seed if temperature > 0 else None, rollback=rollback)
    T0 = ids.shape[-1]
    rounds, n = [], T0
    for r in res.rounds:
        start, n = n, n + len(r["added"])
        rounds.append({"start": start, "proposed": r["proposed"], "words": tok.tokens(r["proposed"]),
                       "accepted": r["accepted"], "extra": r["added"][-1], "extra_word": tok.tokens(r["added"][-1:])[0],
                       "kind": (kind := round_kind(r["proposed"], r["accepted"])), "kind_label": kind_label(kind),
                       "length": n,
                       "target_len": r["target_len"], "draft_len": r["draft_len"]})
    state = {"k": k, "temperature": temperature, "rollback": rollback, "lookup": isinstance(draft, PromptLookup),
             "prompt_len": T0, "prompt_words": tok.tokens(ids[0].tolist()), "max_new_tokens": max_new_tokens,
             "tokens": res.tokens.tolist(), "text": tok.decode(res.tokens), "rounds": rounds,
             "acceptance_rate": res.acceptance_rate, "target_calls": res.target_calls,
             "draft_calls": res.draft_calls, "n_rounds": len(rounds),
             "tokens_per_round": max_new_tokens / len(rounds) if rounds else 0.0,
             "reference": None, "first_diff": None}
    if temperature == 0:
        if reference is None:
            reference = generate(target, ids, max_new_tokens).tokens[0]
        state["reference"] = reference.tolist()
        state["first_diff"] = next((i for i, (a, b) in enumerate(zip(state["tokens"], state["reference"]))
                                    if a != b), None)
    return state


class SpeculativePanel(Panel):
    """Speculative decoding on the course model (``target``), one run per setting: ``k`` drafts per
    round, the ``temperature`` (0: greedy), the ``draft`` ("model": ``draft_model``; "lookup":
    ``PromptLookup()``), the ``prompt`` (an index into ``prompts``) and the ``rollback`` (False: the
    missing crop); ``prompts`` defaults to ``SPEC_PROMPTS`` of the current language. ``state``:
    ``speculative_rounds``' dict (sampling uses seed 0)."""

    title = "Speculative decoding: what each round proposed, accepted and kept in the caches"

    def __init__(self, target, tok, draft_model, *, prompts=None, max_new_tokens: int = NEW_TOKENS,
                 k: int = 4, temperature: float = 0.0, draft: str = "model") -> None:
        check_model(target, "target")
        check_tokenizer(tok, "tok", needs="encode", usage="SpeculativePanel(target, tok, draft_model)", required=True)
        if draft_model is None or isinstance(draft_model, tuple):
            raise ValueError(tr("draft_model must be the draft model (draft, tok = load_draft_model()), got {type}",
                                type=type(draft_model).__name__)
                             + (tr(": unpack load_draft_model()'s pair") if isinstance(draft_model, tuple) else ""))
        check_model(draft_model, "draft_model")
        prompts = in_language(SPEC_PROMPTS) if prompts is None else prompts
        if not prompts:
            raise ValueError("prompts must hold at least one prompt")
        check_int("max_new_tokens", max_new_tokens)
        self.target, self.tok, self.draft_model = target, tok, draft_model
        self.prompts = [torch.tensor([tok.encode(p)]) for p in prompts]  # each (1, T)
        self.max_new_tokens = max_new_tokens
        self._references: dict[int, torch.Tensor] = {}
        self._runs: dict[tuple, dict] = {}
        cfg = draft_model.cfg
        drafts = [(tr("draft model ({L} block, C={C})", L=cfg.n_layers, C=cfg.d_model), "model"),
                  (tr("prompt lookup (no weights)"), "lookup")]
        temps = [(tr("0 (greedy)"), 0.0)] + [(f"{t:g}", t) for t in TEMPERATURES[1:]]
        crops = [(tr("crop both caches (correct)"), True), (tr("no crop (the bug)"), False)]
        # The controls' values are checked first: ipywidgets would raise a bare TraitError, or clamp a slider.
        check_range("k", k, 1, MAX_K)
        temperature, draft = check_option("temperature", temperature, temps), check_option("draft", draft, drafts)
        controls = {
            "k": int_slider(tr("k (drafts per round)"), k, 1, MAX_K),
            "temperature": selection_slider(tr("temperature (0 = greedy)"), temps, temperature),
            "draft": dropdown(tr("draft"), drafts, draft),
            "prompt": dropdown(tr("prompt"), [(text_label(p), i) for i, p in enumerate(prompts)], 0),
            "rollback": dropdown(tr("after each round"), crops, True),
        }
        super().__init__(controls)

    def compute(self, k: int, temperature: float, draft: str, prompt: int, rollback: bool) -> dict:
        check_choice("draft", draft, ("model", "lookup"))  # anything else must not silently mean the model
        check_int("prompt", prompt, minimum=0, maximum=len(self.prompts) - 1)
        key = (k, temperature, draft, prompt, rollback)
        if key not in self._runs:
            ids = self.prompts[prompt]
            if prompt not in self._references:
                self._references[prompt] = generate(self.target, ids, self.max_new_tokens).tokens[0]
            drafter = PromptLookup() if draft == "lookup" else self.draft_model
            self._runs[key] = speculative_rounds(self.target, drafter, self.tok, ids, self.max_new_tokens, k=k,
                                                 temperature=temperature, rollback=rollback,
                                                 reference=self._references[prompt])
        return self._runs[key]

    def render(self, s: dict) -> str:
        plain = s["max_new_tokens"]
        cells = [(tr("acceptance rate"), tr("{rate:.0%} of the drafts", rate=s["acceptance_rate"])),
                 (tr("rounds"), f"{s['n_rounds']}"),
                 (tr("target passes"), tr("{n} (plain decoding: {plain})", n=s["target_calls"], plain=plain)),
                 (tr("draft passes"), f"{s['draft_calls']}"),
                 (tr("tokens per target pass"), f"{s['tokens_per_round']:.2f}")]
        head = "".join(f"<th>{name}</th>" for name, _ in cells)
        row = "".join(f"<td>{value}</td>" for _, value in cells)
        if s["temperature"] > 0:
            verdict = (tr("sampled (seed 0): the target's distribution is kept (section 3), not a fixed sequence")
                       if s["rollback"] else
                       tr("sampled (seed 0) without the crop: the target's cache holds refused drafts, so the "
                          "target's distribution is NOT kept"))
        elif s["first_diff"] is None:
            verdict = tr("the same {n} tokens as the target's own greedy run", n=plain)
        else:
            verdict = tr("differs from the target's own greedy run first at new token {i}", i=s["first_diff"] + 1)
        note = tr("target passes: the prefill of the prompt's first T - 1 tokens, then one per round; "
                  "tokens per target pass: new tokens / rounds")
        return (f"<div class='speculative'><table><tr>{head}</tr><tr>{row}</tr></table>"
                f"<b>{_html.escape(verdict)}</b><br><code>{_html.escape(text_label(s['text']))}</code><br>"
                f"<small>{_html.escape(note)}</small></div>")

    keeps_figures = True  # a setting seen before shows its figure again without drawing it

    def plot(self, s: dict):
        key = (tuple(s["prompt_words"]), s["k"], s["temperature"], s["lookup"], s["rollback"])
        return self.kept_figure(key, lambda: plot_speculative_rounds(s))
