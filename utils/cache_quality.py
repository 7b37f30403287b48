"""How much a lossy KV cache (quantized, evicting) changes the model: measured against the exact cache.

``compare_cache(model, ids, make_cache, n_prefill)`` runs the text ``ids`` twice, teacher-forced: the first
``n_prefill`` tokens as a prefill, then one true token per decode step, once with an exact ``KVCache`` and
once with ``make_cache()``. At every decode step it compares the two next-token distributions. It reports:

    max_logit_diff   the largest |logit difference| over all steps and tokens
    kl               the mean KL divergence of the cache's next-token distribution from the exact one's
                     (nats per step): never negative, so small changes add up instead of cancelling
    greedy_match     the share of steps where both pick the same greedy token
    loss_exact       the mean negative log-likelihood of the true next tokens (nats/token), exact cache
    loss_cache       the same with the cache under test: how much worse it predicts the held-out text
    loss_se          the standard error of ``loss_cache - loss_exact`` over the texts (each text's steps
                     move together, so the texts, not the steps, are the independent samples)
    nbytes           the cache's bytes after the last step, next to the exact cache's (``nbytes_exact``)

Teacher forcing keeps both runs on the same text, so a single early disagreement does not send the
two down different paths and every later step is still compared. Texts of the same length run
together, as one batch (each row is its own text: no padding, and every cache keeps its rows apart).
``held_out_docs`` gives documents of
the course language the model never trained on (``utils.corpus``'s held-out split). ``quality_table``
prints several caches' numbers side by side, in the current language.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Callable

import torch

from .cache import KVCache
from .i18n import display_width, pad, tr
from .model import check_model
from .validate import as_one_prompt, check_cache, check_int, check_tokenizer


@dataclass(frozen=True)
class CacheQuality:
    max_logit_diff: float
    greedy_match: float
    loss_exact: float
    loss_cache: float
    nbytes: int
    nbytes_exact: int
    kl: float = 0.0
    loss_se: float = 0.0

    @property
    def bytes_ratio(self) -> float:
        return self.nbytes / self.nbytes_exact


def held_out_docs(tokenizer, n_docs: int = 100, min_tokens: int = 12, seed: int = 1,
                  language: str | None = None) -> list[torch.Tensor]:
    """``n_docs`` held-out documents of the course language of at least ``min_tokens`` tokens, each
    ``[1, T]``. (The course model trained on documents of at most 15 tokens: beyond that length its
    predictions are not meaningful, so quality is measured document by document.) ``language``: "en" or
    "zh" keeps the documents of that half of the corpus only; None (the default) keeps both."""
    from .corpus import make_splits

    check_tokenizer(tokenizer, needs="encode", usage="held_out_docs(tok)", required=True)
    check_int("n_docs", n_docs)
    check_int("min_tokens", min_tokens, minimum=2)
    if language not in (None, "en", "zh"):
        raise ValueError(f"language must be None, 'en' or 'zh', got {language!r}")
    _, docs = make_splits(0, 40 * n_docs, seed)
    if language is not None:  # a document is English when its first word after <BOS> is ASCII
        docs = [d for d in docs if d.split()[1].isascii() == (language == "en")]
    out = [torch.tensor([tokenizer.encode(d)]) for d in docs]
    out = [ids for ids in out if ids.shape[1] >= min_tokens][:n_docs]
    if len(out) < n_docs:
        raise ValueError(f"only {len(out)} held-out documents have {min_tokens} tokens or more")
    return out


@dataclass(frozen=True)
class ExactRun:
    """What the exact cache gives on ``texts``: per text, the next-token logits of every decode step
    ``[steps, V]``; and the last text's cache bytes. Computed once, compared with any number of caches."""
    logits: tuple[torch.Tensor, ...]
    nbytes: int
    n_prefill: int


def _teacher_forced(model, ids: torch.Tensor, cache, n_prefill: int) -> torch.Tensor:
    """Logits ``[B, T - n_prefill, V]`` (float32) of each decode step of ``ids`` ``[B, T]``, fed into ``cache``."""
    T = ids.shape[1]
    out = [model(ids[:, :n_prefill], cache=cache)[:, -1:].float()]  # (B, 1, V)
    for t in range(n_prefill, T - 1):
        out.append(model(ids[:, t: t + 1], cache=cache)[:, -1:].float())  # the true tokens, fed
    return torch.cat(out, dim=1)  # (B, T - n_prefill, V)


def _by_length(texts: list[torch.Tensor]) -> list[list[int]]:
    """The indices of ``texts``, grouped by length (one batch each, no padding); the last text's group last."""
    groups: dict[int, list[int]] = {}
    for i, ids in enumerate(texts):
        groups.setdefault(ids.shape[1], []).append(i)
    last = groups.pop(texts[-1].shape[1])
    return [*groups.values(), last]


def _run(model, texts: list[torch.Tensor], make_cache, n_prefill: int) -> tuple[list[torch.Tensor], int]:
    """Per text its logits ``[steps, V]``, and the bytes one text of the last group leaves in its cache."""
    logits: list[torch.Tensor | None] = [None] * len(texts)
    nbytes = 0
    for group in _by_length(texts):
        cache = _new_cache(make_cache)
        batch = torch.cat([texts[i] for i in group])  # (B, T): texts of one length
        out = _teacher_forced(model, batch, cache, n_prefill)  # (B, steps, V)
        for row, i in enumerate(group):
            logits[i] = out[row]
        nbytes = cache.nbytes // len(group)  # every row holds the same number of positions
    return logits, nbytes


def _texts(texts, n_prefill: int) -> list[torch.Tensor]:
    """``texts`` as a list of ``[1, T]`` id tensors: one text (a tensor, numpy array or list of ids, e.g.
    ``tok.encode(doc)``) or a list of them; text itself is refused with the way to ids."""
    one = isinstance(texts, (str, torch.Tensor)) or type(texts).__module__ == "numpy" or (
        isinstance(texts, (list, tuple)) and bool(texts) and isinstance(texts[0], numbers.Integral))  # ids: one text
    texts = [texts] if one else list(texts)
    check_int("n_prefill", n_prefill)
    if not texts:
        raise ValueError(tr("texts is empty: pass at least one [1, T] text (e.g. held_out_docs(tok))"))
    out = [as_one_prompt(ids, f"text {i}") for i, ids in enumerate(texts)]
    for ids in out:
        if n_prefill >= ids.shape[1]:
            raise ValueError(f"n_prefill ({n_prefill}) must leave at least one token to decode in a text of {ids.shape[1]}")
    return out


def exact_run(model, texts, n_prefill: int) -> ExactRun:
    """The exact ``KVCache``'s side of ``compare_cache``, to compare several caches against one run."""
    check_model(model)
    texts = _texts(texts, n_prefill)
    with torch.inference_mode():
        model.eval()
        logits, nbytes = _run(model, texts, KVCache, n_prefill)
    return ExactRun(tuple(logits), nbytes, n_prefill)


def compare_cache(model, texts, make_cache: Callable[[], object], n_prefill: int,
                  exact: ExactRun | None = None) -> CacheQuality:
    """Teacher-forced comparison of ``make_cache()`` with an exact ``KVCache`` on ``texts`` (one ``[1, T]``
    text or a list of them; the numbers pool every decode step; ``nbytes``: one text's cache, the last
    text's). ``exact``: the exact cache's run of the same texts (``exact_run``), when several caches are
    compared. See the module docstring.

    ``make_cache`` is called once per batch of texts of one length and must return a new, empty cache each
    time (``KVCache``, or ``lambda: QuantizedKVCache(bits=4)``): one cache shared by every call would carry
    each batch's K/V into the next, and the numbers would compare a longer, wrong context."""
    check_model(model)
    if not callable(make_cache):
        raise ValueError(tr("make_cache must be a function that returns a new cache (e.g. KVCache, or lambda: "
                            "QuantizedKVCache(bits=4)), got a {type} object: one cache would be shared by every text",
                            type=type(make_cache).__name__))
    texts = _texts(texts, n_prefill)
    exact = exact if exact is not None else exact_run(model, texts, n_prefill)
    if exact.n_prefill != n_prefill or len(exact.logits) != len(texts):
        raise ValueError("exact= was run on other texts or another n_prefill: make it with exact_run(model, texts, n_prefill)")
    with torch.inference_mode():
        model.eval()
        logits, nbytes = _run(model, texts, make_cache, n_prefill)
    max_diff, same, kl, n = 0.0, 0, 0.0, 0
    nll_exact, nll_cache = [], []  # per text: summed over its steps
    for ids, a, b in zip(texts, exact.logits, logits):  # a, b: (steps, V)
        truth = ids[0, n_prefill:, None]  # (steps, 1): the true next tokens
        log_a, log_b = a.log_softmax(-1), b.log_softmax(-1)
        max_diff = max(max_diff, float((a - b).abs().max()))
        same += int((a.argmax(-1) == b.argmax(-1)).sum())
        kl += float((log_a.exp() * (log_a - log_b)).sum())
        nll_exact.append(-float(log_a.gather(1, truth).sum()))
        nll_cache.append(-float(log_b.gather(1, truth).sum()))
        n += truth.shape[0]
    diff = torch.tensor(nll_cache, dtype=torch.float64) - torch.tensor(nll_exact, dtype=torch.float64)  # per text
    se = float(diff.std() * len(texts) ** 0.5 / n) if len(texts) > 1 else float("nan")
    return CacheQuality(max_diff, same / n, sum(nll_exact) / n, sum(nll_cache) / n, nbytes, exact.nbytes,
                        kl=max(kl / n, 0.0), loss_se=se)


def _new_cache(make_cache) -> object:
    """``make_cache()``, checked to be a cache that holds nothing yet."""
    cache = make_cache()
    try:
        check_cache(cache)  # the interface the model asks of a cache
    except ValueError:
        raise ValueError(tr("make_cache() returned a {type}, not a cache: it must return a new cache object, e.g. "
                            "lambda: KVCache()", type=type(cache).__name__)) from None
    if cache.seq_len or cache.seen_tokens():
        raise ValueError(tr("make_cache() returned a cache that already holds {n} tokens: each call must make a new, "
                            "empty cache (lambda: KVCache(), not lambda: cache), or every text is read after the ones "
                            "before it", n=cache.seen_tokens()))
    return cache


def quality_table(rows, exact_loss: float, label_width: int = 48) -> str:
    """The lines of a table of caches against the exact one, headers in the current language.

    ``rows``: ``(label, bytes_ratio, quality)`` per cache: what to call it, its bytes as a share of the exact
    cache's, and its ``CacheQuality``. Columns: the label, that share, ``max_logit_diff``, ``kl``,
    ``greedy_match``, Δ loss (``loss_cache - exact_loss``, nats/token) and its standard error ``loss_se``.
    Cells are padded by display width (``utils.i18n.pad``), so Chinese labels line up; the label column
    widens for a longer label.
    """
    rows = list(rows)
    for row in rows:
        if not (isinstance(row, (tuple, list)) and len(row) == 3 and isinstance(row[2], CacheQuality)):
            raise ValueError(f"each row must be (label, bytes_ratio, CacheQuality), got {row!r}")
    head = [tr("setting"), tr("bytes"), tr("max |Δlogits|"), tr("KL"), tr("greedy match"), tr("Δ loss"), tr("± s.e.")]
    cells = [[str(label), f"{ratio:.0%}", f"{q.max_logit_diff:.3f}", f"{q.kl:.1e}", f"{q.greedy_match:.2%}",
              f"{q.loss_cache - exact_loss:+.5f}", f"{q.loss_se:.5f}"] for label, ratio, q in rows]
    widths = [max(label_width, *(display_width(c[0]) + 1 for c in cells), display_width(head[0]) + 1)]
    widths += [max(w, display_width(h) + 1, *(display_width(c[i]) + 1 for c in cells))
               for i, (w, h) in enumerate(zip((6, 15, 9, 14, 10, 9), head[1:]), start=1)]
    lines = [pad(head[0], widths[0]) + "".join(pad(h, w, ">") for h, w in zip(head[1:], widths[1:]))]
    lines += [pad(c[0], widths[0]) + "".join(pad(x, w, ">") for x, w in zip(c[1:], widths[1:])) for c in cells]
    return "\n".join(lines)
