"""From logits to a token: temperature, top-k, top-p, greedy. Pure functions of the logits.

Caching decides how the logits are computed; these functions decide what is picked from them.
"""
from __future__ import annotations

import torch

from .i18n import tr
from .validate import check_sampling_args


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Set every logit below the k-th largest to -inf (``[B, V]``). Ties at the border are kept."""
    k = min(k, logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]  # (B, 1)
    return logits.masked_fill(logits < kth, float("-inf"))


def top_p_filter(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Keep the smallest set of most likely tokens whose probabilities reach ``p`` (nucleus).

    ``p >= 1`` keeps every token: a float32 running total can reach 1.0 before a long tail ends (notebook
    05's float32 deep dive builds one), and ``before >= p`` would then drop tokens that
    p = 1 promises to keep.
    """
    if p >= 1:
        return logits.clone()
    sorted_logits, order = torch.sort(logits, descending=True, dim=-1)  # (B, V)
    probs = torch.softmax(sorted_logits.float(), dim=-1)
    before = probs.cumsum(-1) - probs  # mass of the tokens ranked strictly higher
    drop_sorted = before >= p  # once p is reached, the rest is dropped; the top token always stays
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))


def filtered_probs(
    logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> torch.Tensor:
    """The distribution ``sample`` draws from, ``[B, V]`` (one-hot on the argmax when temperature is 0)."""
    check_sampling_args(logits, temperature, top_k, top_p)
    if temperature == 0:
        return torch.nn.functional.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)
    logits = logits.float() / temperature  # < 1 sharpens, > 1 flattens; float32, so a small T cannot overflow fp16
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None and top_p < 1:
        logits = top_p_filter(logits, top_p)
    return torch.softmax(logits.float(), dim=-1)


def sample(
    logits: torch.Tensor,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Pick one token per row from ``logits`` ``[B, V]``; returns ``[B]`` ids.

    ``temperature=0`` is greedy (argmax, no randomness). Pass a seeded ``torch.Generator``
    for reproducible draws.
    """
    check_sampling_args(logits, temperature, top_k, top_p)
    if temperature == 0:
        return logits.argmax(dim=-1)
    probs = filtered_probs(logits, temperature, top_k, top_p)
    try:
        return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)  # (B,)
    except RuntimeError as e:  # raised only for a row with NaN, inf or all -inf logits: nothing to draw from
        raise ValueError(tr("cannot sample: some rows of logits hold NaN or are all -inf (no token is possible): "
                            "{error}", error=e)) from None


def filter_stages(
    logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> dict[str, torch.Tensor]:
    """The distribution after each step of ``filtered_probs``, for plots: name -> probs ``[B, V]``.

    ``"original"``     softmax of the raw logits (temperature 1, nothing removed)
    ``"temperature"``  softmax(logits / temperature) (one-hot on the argmax at temperature 0)
    ``"top_k"``        ... then only the k most likely kept, renormalised
    ``"top_p"``        ... then only the nucleus kept: the distribution ``sample`` draws from

    A step that is switched off (``top_k=None``, ``top_p=None`` or 1) repeats the one before.
    The last entry always equals ``filtered_probs(logits, temperature, top_k, top_p)``.
    """
    check_sampling_args(logits, temperature, top_k, top_p)
    stages = {"original": torch.softmax(logits.float(), dim=-1)}
    if temperature == 0:  # greedy: one token left, the filters have nothing to remove
        greedy = filtered_probs(logits, 0)
        return {**stages, "temperature": greedy, "top_k": greedy, "top_p": greedy}
    scaled = logits.float() / temperature  # (B, V), float32 as in filtered_probs
    stages["temperature"] = torch.softmax(scaled.float(), dim=-1)
    if top_k is not None:
        scaled = top_k_filter(scaled, top_k)
    stages["top_k"] = torch.softmax(scaled.float(), dim=-1)
    if top_p is not None and top_p < 1:
        scaled = top_p_filter(scaled, top_p)
    stages["top_p"] = torch.softmax(scaled.float(), dim=-1)
    return stages
