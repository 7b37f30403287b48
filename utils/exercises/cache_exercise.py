"""The judge of notebook 03's first exercise, 03.cache_update, which names the mistake.

The (K, V) that came back is compared with what each plausible mistake returns: the new positions first, only
the new ones, another axis, K and V swapped, K grown by v_new, or a time axis of the wrong length (some new
positions left out).
"""
from __future__ import annotations

import torch

from ..i18n import tr
from . import solutions as S
from .judges import FormProblem, diagnosis, relabel, same_tensor
from .mistakes import Judge, _equal

# --- 03.cache_update --------------------------------------------------------------------------------

_AXES = {0: "B", 1: "H_kv", 3: "d_h"}


def _cat(tensors: list[torch.Tensor], dim: int) -> torch.Tensor | None:
    try:
        return torch.cat(tensors, dim=dim)
    except RuntimeError:  # the other axes differ: this mistake would have raised in the learner's code
        return None


def _cache_mistake(name: str, got: torch.Tensor, old: torch.Tensor, new: torch.Tensor) -> str | None:
    T = old.shape[2]
    if _equal(got, _cat([new, old], 2)):
        return diagnosis(tr("{name}: the new positions come first; the cached positions (T = {T}) must come first, "
                            "then the new ones", name=name, T=T),
                         tr("order matters on the time axis: the old keys first, then the new: "
                            "`torch.cat([cache_k, k_new], dim=2)`"))
    if _equal(got, new):
        return diagnosis(tr("{name}: only the new positions came back; the cached ones (T = {T}) are gone", name=name, T=T),
                         tr("the cache keeps everything it held: append the new positions after it "
                            "(`torch.cat` on dim=2)"))
    for dim, axis in _AXES.items():
        if _equal(got, _cat([old, new], dim)):
            return diagnosis(tr("{name}: shape {shape}: you concatenated on dim={dim}, the {axis} axis",
                                name=name, shape=list(got.shape), dim=dim, axis=axis),
                             tr("the cache layout is [B, H_kv, T, d_h]: new positions go on the time axis, dim=2"))
    want = T + new.shape[2]
    if got.dim() == 4 and got.shape[:2] == old.shape[:2] and got.shape[2] != want:  # some new positions left out
        return diagnosis(tr("{name}: {got} positions on the time axis, expected T + T_new = {T} + {T_new} = {want}",
                            name=name, got=got.shape[2], T=T, T_new=new.shape[2], want=want),
                         tr("append every new position, not only the last: `torch.cat([cache_k, k_new], dim=2)`"))
    return None


def cache_pair_judge(cache_k, cache_v, k_new: torch.Tensor, v_new: torch.Tensor) -> Judge:
    """(K, V) after appending; names the order, the axis, a lost cache, or K and V swapped."""
    expected = S.cache_update(cache_k, cache_v, k_new, v_new)

    def about(name: str, got, old, new, want, other: str, other_new: torch.Tensor) -> str | None:
        problem = same_tensor(want)(got)
        if problem is None:
            return None
        if isinstance(got, torch.Tensor) and _equal(got, other_new if old is None else _cat([old, other_new], 2)):
            return diagnosis(tr("{name}: its new positions hold {other}, not {own}", name=name, other=other,
                                own=name.lower() + "_new"),
                             tr("K grows by k_new and V by v_new: `torch.cat([cache_k, k_new], dim=2)`, "
                                "`torch.cat([cache_v, v_new], dim=2)`"))
        found = None if old is None or not isinstance(got, torch.Tensor) else _cache_mistake(name, got, old, new)
        return found or relabel(problem, tr("{tensor}: {problem}", tensor=name, problem=problem))

    def judge(got) -> str | None:
        if not isinstance(got, (tuple, list)):
            return FormProblem(tr("expected a pair (K, V), got {type}", type=type(got).__name__))
        if len(got) != 2:  # a tuple or list of another length: say how many it holds
            return FormProblem(tr("expected a pair (K, V), got a {type} of {n}", type=type(got).__name__, n=len(got)))
        if cache_k is None and (got[0] is None or got[1] is None):  # the empty cache's None passed on
            return diagnosis(tr("the cache was empty (None) and None came back"),
                             tr("from an empty cache return k_new, v_new: they are all the layer holds"))
        if not all(isinstance(x, torch.Tensor) for x in got):
            return FormProblem(tr("expected a pair of tensors (K, V), got ({a}, {b})",
                                  a=type(got[0]).__name__, b=type(got[1]).__name__))
        if _equal(got[0], expected[1]) and _equal(got[1], expected[0]):
            return diagnosis(tr("K and V are swapped"), tr("return (K, V) in this order, as the cache stores them"))
        return (about("K", got[0], cache_k, k_new, expected[0], "v_new", v_new)
                or about("V", got[1], cache_v, v_new, expected[1], "k_new", k_new))
    return judge
