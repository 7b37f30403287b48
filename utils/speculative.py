"""Speculative decoding: a cheap draft proposes k tokens, the target checks them in one forward pass.

One **round**, with S the tokens so far (prompt + accepted) and both caches holding ``S[:-1]`` or less:

1. the draft proposes ``d_1 .. d_k``: it runs what it has not seen of S, then k - 1 more single steps
   (a prompt-lookup draft copies the k tokens that followed the last n-gram of S where it occurred before);
2. the target runs ``[S[-1], d_1, .., d_k]`` as one chunk: k + 1 logits, one per position, in one pass;
3. accept ``d_i`` while it agrees with the target (greedy: it is the target's argmax; sampling: with
   probability ``min(1, p(d_i) / q(d_i))``); at the first refusal take the target's own pick instead
   (greedy: its argmax; sampling: a draw from the residual ``max(0, p - q)``, renormalised); if all k
   pass, take a bonus token from the last logits. A round adds between 1 and k + 1 tokens. The last
   round drafts one token fewer than are left to write, so its own token fills the last place and a run
   never writes past ``max_new_tokens``;
4. **roll the caches back**: the target cached K/V for every draft token, accepted or not, and the draft
   for its own proposals: both are cropped (``cache.crop``) to the accepted length. Without the crop the
   next round would attend to rejected tokens, at positions that now hold other tokens.

Greedy, this gives exactly the target's own greedy tokens (up to float rounding of a chunk against
single steps); sampling, the accept/reject rule keeps the target's distribution exactly, whatever the
draft. Every single-token pass (each draft step, a target pass with nothing to check) runs the flat
decode step of ``generate`` (``utils/flat_decode.py``), so the loop is compared with plain decoding on
the same fast path; a pass over several tokens (the target's check, a prefill) runs the modules.

The speed-up needs draft passes much cheaper than target passes, and a target pass over k + 1 tokens
that costs about one over a single token. On a CPU the tiny course model has neither: its passes are
mostly fixed per-operation overhead, which a draft 14 times smaller pays too. ``weight_bound_target``
builds a stand-in for a large target: the course model with every MLP widened by hidden units whose
output weights are zero, the same logits (up to float rounding) for far more weights read per pass.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch

from .i18n import tr
from .cache import KVCache
from .flat_decode import check_flat, flat_decode_step, flat_weights
from .model import Decoder, check_model
from .sampling import filtered_probs
from .validate import (STEPS, as_id_list, as_one_prompt, check_choice, check_fits, check_ids, check_int,
                       check_sampling_args)


@dataclass
class SpeculativeResult:
    """What ``speculative_generate`` returns. ``rounds``: per round, proposed / accepted / added tokens and
    the two caches' lengths after the rollback."""

    tokens: torch.Tensor  # (n,) new tokens
    acceptance_rate: float  # accepted draft tokens / proposed draft tokens
    target_calls: int  # forward passes of the target (the prefill included)
    draft_calls: int  # forward passes of the draft (0 for prompt lookup)
    rounds: list[dict] = field(default_factory=list)


class PromptLookup:
    """A weight-free draft: propose the ``k`` tokens that followed the last occurrence of the sequence's
    final n-gram (n = ``max_ngram`` down to 1) earlier in the sequence; nothing if it never occurred."""

    def __init__(self, max_ngram: int = 3) -> None:
        self.max_ngram = check_int("max_ngram", max_ngram)

    def propose(self, seq, k: int) -> list[int]:
        """Up to ``k`` tokens after ``seq`` (the ids so far: a list, or a ``[T]`` / ``[1, T]`` tensor)."""
        seq = seq if isinstance(seq, list) and all(type(t) is int for t in seq) else as_id_list(seq, "seq")
        check_int("k", k, minimum=0)
        for n in range(min(self.max_ngram, len(seq) - 1), 0, -1):
            tail = seq[-n:]
            for start in range(len(seq) - n - 1, -1, -1):  # the latest earlier occurrence first
                if seq[start:start + n] == tail:
                    return seq[start + n:start + n + k]
        return []


def _check_draft(draft) -> None:
    """``draft`` is a draft model; the usual slips get the way out in their message."""
    if isinstance(draft, str) or draft is PromptLookup:
        raise ValueError(tr("draft={draft!r}: for prompt lookup pass a PromptLookup() object (from utils.speculative); "
                            "for a draft model, the model (draft, tok = load_draft_model())", draft=draft))
    if isinstance(draft, tuple):
        raise ValueError("draft is a tuple: load_draft_model() returns (model, tokenizer); unpack it, "
                         "draft, tok = load_draft_model()")
    check_model(draft, "draft")


def _pick(probs: torch.Tensor, generator) -> int:
    return int(torch.multinomial(probs, 1, generator=generator))


def _forward(model, weights, tokens: list[int], cache) -> torch.Tensor:
    """Logits ``(n, V)`` of ``n`` new tokens after ``cache``. One token runs the flat decode step when
    ``weights`` are given (``generate``'s fast path: the same logits, bit for bit); several tokens are a
    chunk, which only the modules run."""
    if weights is not None and len(tokens) == 1:
        return flat_decode_step(model, weights, torch.tensor(tokens), cache)  # (1, V)
    return model(torch.tensor([tokens]), cache=cache)[0]  # (n, V)


def weight_bound_target(model, d_ff: int, seed: int = 0) -> Decoder:
    """A copy of ``model`` with every block's MLP widened to ``d_ff`` hidden units, the added ones with
    random gate and up weights and **zero** down weights: they add exactly 0 to the output, so the copy
    computes the model's logits up to float rounding (the matrix products sum in another order), while
    each pass reads ``d_ff / model.cfg.d_ff`` times the MLP weights. A stand-in for a large target: once
    its weights are far larger than the CPU's caches, a pass is bound by reading them, and a pass over
    k + 1 tokens reads them once, as a large model's decode pass does on a GPU."""
    check_model(model)
    check_int("d_ff", d_ff, minimum=model.cfg.d_ff)
    big = Decoder(replace(model.cfg, d_ff=d_ff)).eval()
    g = torch.Generator().manual_seed(seed)
    own = dict(model.named_parameters())
    with torch.no_grad():
        for name, w in big.named_parameters():
            src = own[name]
            w.zero_()
            w[tuple(slice(0, n) for n in src.shape)] = src  # the model's weights in the first rows/columns
            if name.endswith(("gate_proj.weight", "up_proj.weight")):  # (d_ff, C): the new rows, never used
                w[src.shape[0]:] = torch.randn(d_ff - src.shape[0], src.shape[1], generator=g) * src.std()
    return big


def speculative_generate(target, draft, input_ids, max_new_tokens: int, *, k: int = 4, temperature: float = 0.0,
                         top_k: int | None = None, top_p: float | None = None, seed: int | None = None,
                         rollback: bool = True, step: str = "flat") -> SpeculativeResult:
    """``max_new_tokens`` tokens of ``target`` after ``input_ids`` (one prompt), drafted ``k`` at a time by
    ``draft`` (a smaller model with the same vocabulary, or a ``PromptLookup``). See the module docstring.
    ``rollback=False`` skips the crop of step 4 (the bug: the caches keep the rejected drafts' K/V).
    ``step="flat"`` runs every single-token pass with the flat decode step, as ``generate`` does;
    ``step="modules"`` runs every pass through the modules (hooks fire)."""
    check_model(target, "target")
    lookup = isinstance(draft, PromptLookup)
    if not lookup:
        _check_draft(draft)
        if draft.cfg.vocab_size != target.cfg.vocab_size:
            raise ValueError(f"the draft's vocabulary ({draft.cfg.vocab_size} tokens) differs from the target's "
                             f"({target.cfg.vocab_size}): its token ids would mean other words")
    ids = as_one_prompt(input_ids, "input_ids")
    check_ids(ids, target.cfg.vocab_size)
    check_int("max_new_tokens", max_new_tokens, minimum=0)
    # Checked up front, as generate does: the caches would otherwise overflow a max_seq_len rounds later.
    check_fits(target.cfg, ids.shape[1], max_new_tokens, whose="the target's")
    if not lookup:
        check_fits(draft.cfg, ids.shape[1], max_new_tokens, whose="the draft's")
    check_int("k", k)
    check_sampling_args(torch.zeros(1, 1), temperature, top_k, top_p)
    if seed is not None:
        check_int("seed", seed, minimum=0)
    check_choice("step", step, STEPS)
    t_cache, d_cache = KVCache(), KVCache()
    t_weights = d_weights = None  # None: every pass through the modules
    if step == "flat":  # raises up front, as generate does, where the flat step would not compute the same
        check_flat(target, t_cache)
        t_weights = flat_weights(target)
        if not lookup:
            check_flat(draft, d_cache)
            d_weights = flat_weights(draft)
    gen = torch.Generator().manual_seed(seed) if seed is not None else None

    def dist(logits: torch.Tensor) -> torch.Tensor:  # (n, V) -> (n, V): what sampling would draw from
        return filtered_probs(logits, temperature, top_k, top_p)

    seq = ids[0].tolist()
    T0, rounds, proposed, accepted = len(seq), [], 0, 0
    target_calls = draft_calls = 0
    with torch.inference_mode():
        target.eval()
        if len(seq) > 1:  # the target holds S[:-1]: its last token goes in with the first draft
            target(ids[:, :-1], cache=t_cache)
            target_calls += 1
            if not lookup:  # so does the draft: from then on it only sees a token or two per round
                draft(ids[:, :-1], cache=d_cache)
                draft_calls += 1
        while len(seq) - T0 < max_new_tokens:
            # The target adds a token of its own after the drafts: with r tokens left, r - 1 drafts fill the run
            n = min(k, max_new_tokens - (len(seq) - T0) - 1)
            # 1. the draft proposes up to n tokens, with its distributions q (one-hot for prompt lookup)
            if n == 0:  # one token left: the target's own, nothing to draft
                drafts, q = [], []
            elif lookup:
                drafts = draft.propose(seq, n)
                q = [None] * len(drafts)
            else:
                drafts, q = [], []
                # what the draft has not run yet. Without the rollback its cache keeps every draft it ran
                # (all but its last proposal): it is fed the added tokens after those, refused ones included
                if rollback or not rounds:
                    fresh = seq[d_cache.seq_len:]
                else:
                    last = rounds[-1]
                    fresh = last["added"][min(last["accepted"], max(len(last["proposed"]) - 1, 0)):]
                for t in fresh:  # one flat step each (a chunk would run the modules): usually 1 or 2 tokens
                    logits = _forward(draft, d_weights, [t], d_cache)  # (1, V)
                    draft_calls += 1
                for i in range(n):
                    qi = dist(logits)[0]  # (V,)
                    drafts.append(_pick(qi, gen) if temperature > 0 else int(qi.argmax()))
                    q.append(qi)
                    if i < n - 1:
                        logits = _forward(draft, d_weights, drafts[-1:], d_cache)  # (1, V): a flat step
                        draft_calls += 1
            # 2. the target scores S[-1] and every draft in one pass: logits for k + 1 positions
            fed = seq[t_cache.seq_len:] if rollback else seq[-1:]  # without the rollback: its cache is assumed right
            p = dist(_forward(target, t_weights, fed + drafts, t_cache)[-(len(drafts) + 1):])  # (n + 1, V)
            target_calls += 1
            # 3. accept, then the target's own token (a correction, or the bonus after k accepted)
            n_ok = 0
            for i, d in enumerate(drafts):
                if temperature == 0:
                    ok = int(p[i].argmax()) == d
                else:
                    q_d = 1.0 if q[i] is None else float(q[i][d])
                    ok = float(torch.rand(1, generator=gen)) < min(1.0, float(p[i][d]) / q_d)
                if not ok:
                    break
                n_ok += 1
            if n_ok < len(drafts) and temperature > 0:  # refused: draw from what p has beyond q
                q_i = torch.zeros_like(p[n_ok]) if q[n_ok] is None else q[n_ok]
                if q[n_ok] is None:
                    q_i[drafts[n_ok]] = 1.0
                residual = (p[n_ok] - q_i).clamp(min=0)  # (V,)
                extra = _pick(residual / residual.sum(), gen) if residual.sum() > 0 else _pick(p[n_ok], gen)
            else:
                extra = int(p[n_ok].argmax()) if temperature == 0 else _pick(p[n_ok], gen)
            seq += drafts[:n_ok] + [extra]
            proposed, accepted = proposed + len(drafts), accepted + n_ok
            # 4. roll back: both caches keep only the accepted history, S[:-1]
            if rollback:
                t_cache.crop(len(seq) - 1)
                d_cache.crop(min(d_cache.seq_len, len(seq) - 1))
            rounds.append({"proposed": drafts, "accepted": n_ok, "added": drafts[:n_ok] + [extra],
                           "target_len": t_cache.seq_len, "draft_len": d_cache.seq_len})
    assert len(seq) - T0 == max_new_tokens, "the last round drafts one fewer than the tokens left"
    tokens = torch.tensor(seq[T0:], dtype=torch.long)
    return SpeculativeResult(tokens, accepted / proposed if proposed else 0.0, target_calls, draft_calls, rounds)
