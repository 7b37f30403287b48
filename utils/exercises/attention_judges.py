"""Judges of notebook 01's exercises, the causal mask with a cache and ``repeat_kv``: each recognises the
mistakes learners make (the mask without its offset, a float 0/1 mask, the heads tiled by ``x.repeat``, an
input written in place, a wrapper around the package's own function...) and names them, as ``mistakes.py``
does for notebooks 02-05.

Everything said goes through ``tr``; values through ``fmt``.
"""
from __future__ import annotations

import inspect
import sys

import torch
from torch.nn.attention.bias import CausalBias

from .. import attention as _package
from ..i18n import tr
from . import solutions as S
from .judges import Case, Raised, call_with, catching, diagnosis, expected_got, fmt, is_form_problem, same_tensor
from .mistakes import Judge, _equal


# --- 01.causal_mask ---------------------------------------------------------------------------------

_PYTORCH_MASK = {"causal_lower_right", "CausalBias", "_materialize"}  # PyTorch's own bottom-right causal mask


class _Borrowed:
    """What a case hands the judge when the learner's function builds its mask with PyTorch's
    ``causal_lower_right``: that mask would pass, ``._materialize()``-d, without a line of the learner's."""


def _names(code) -> set[str]:
    """Every global, closure and attribute name a code object uses, nested functions and lambdas included."""
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _names(const)
    return names


class _Wrapped:
    """What a case hands the judge when the learner's function calls the package's own function (a wrapper
    such as ``lambda T_q, T_k: causal_mask(T_q, T_k)``): it would pass without a line of the learner's."""

    def __init__(self, name: str) -> None:
        self.name = name


def _calls_package(fn, target) -> bool:
    """True when ``fn``'s code reaches ``target`` (the package's own function): by a global or closure name
    (``causal_mask(...)``), as an attribute of a module it names (``utils.attention.causal_mask(...)``), or
    imported in its body (``from utils.attention import causal_mask``)."""
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    names = _names(code)
    scope = dict(getattr(fn, "__globals__", {}))
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        try:
            scope[name] = cell.cell_contents
        except ValueError:  # a closure cell not filled yet
            pass
    # what the names hold; an import in the body names its module's dotted path ("utils.attention")
    seen = [scope.get(n) for n in names] + [sys.modules.get(n) for n in names]
    for _ in range(3):  # utils -> utils.attention -> causal_mask: follow the package's modules a few levels deep
        if any(obj is target for obj in seen):
            return True
        seen = [getattr(m, n, None) for m in seen if inspect.ismodule(m) and _in_package(m) for n in names]
    return False


def _in_package(module) -> bool:
    """A module of the course package (``utils``, ``utils.attention``...): only these are searched for the
    package's function, so no other library's lazy attributes are touched."""
    return module.__name__ == "utils" or module.__name__.startswith("utils.")


def _refusing_wrappers(run, target):
    """``run``, except that a function calling ``target`` (the package's own version) is not run."""
    def run_unless_wrapped(fn):
        return _Wrapped(target.__name__) if _calls_package(fn, target) else run(fn)
    return run_unless_wrapped


def _wrapped_diagnosis(got: _Wrapped):
    return diagnosis(tr("your function calls the course's own `utils.attention.{name}`: it would pass without a "
                        "line of yours, so it was not run", name=got.name),
                     tr("write the body yourself, with torch operations only: the package's `{name}` is what your "
                        "function is checked against", name=got.name))


def mask_case(words: str, T_q: int, T_k: int, hint: str) -> Case:
    """A ``01.causal_mask`` case; a function that calls PyTorch's ``causal_lower_right``, or wraps the
    package's own ``causal_mask``, is not run but refused, as the package's function passed itself is."""
    run = _refusing_wrappers(call_with(T_q, T_k), _package.causal_mask)

    def run_unless_borrowed(fn):
        code = getattr(inspect.unwrap(fn), "__code__", None)
        if code is not None and _names(code) & _PYTORCH_MASK:
            return _Borrowed()
        return run(fn)
    return Case(words, run_unless_borrowed, mask_judge(T_q, T_k), hint)


def mask_judge(T_q: int, T_k: int) -> Judge:
    """The mask [T_q, T_k] for T_q queries after T_k - T_q cached keys."""
    expected = S.causal_mask(T_q, T_k)
    form, offset = same_tensor(expected), T_k - T_q
    band = torch.ones(T_q, T_k, dtype=torch.bool)

    def judge(got) -> str | None:
        if isinstance(got, _Wrapped):
            return _wrapped_diagnosis(got)
        if isinstance(got, _Borrowed):
            return diagnosis(
                tr("your function uses PyTorch's `causal_lower_right` (its `CausalBias`): that is PyTorch's version "
                   "of this mask, not yours, so it was not run"),
                tr("write the mask yourself from T_q and T_k, as a bool tensor [T_q, T_k]: True where key j's "
                   "position <= query i's position T_k - T_q + i"))
        if isinstance(got, CausalBias):  # e.g. causal_upper_left(T_q, T_k): an object SDPA takes as attn_mask
            return diagnosis(
                tr("you returned a CausalBias, SDPA's own mask object (torch.nn.attention.bias), not a boolean "
                   "tensor: expected a torch.bool tensor of shape {expected}", expected=[T_q, T_k]),
                tr("build the mask yourself as a bool tensor [T_q, T_k], True = may attend: compare the keys' "
                   "positions with the queries' positions T_k - T_q + i"))
        if (isinstance(got, torch.Tensor) and got.is_floating_point() and tuple(got.shape) == (T_q, T_k)
                and bool(((got == 0) | (got == -torch.inf)).all())):  # SDPA's other mask form: added to the scores
            return diagnosis(
                tr("you returned an additive float mask (0 / -inf, dtype {dtype}): the check wants booleans",
                   dtype=got.dtype),
                tr("return booleans, True = may attend (an additive mask is 0 where True and -inf where False)"))
        if (isinstance(got, torch.Tensor) and got.is_floating_point() and tuple(got.shape) == (T_q, T_k)
                and bool(((got == 0) | (got == 1)).all())):  # a 0/1 mask in float: SDPA would add it to the scores
            return diagnosis(
                tr("you returned a float 0/1 mask (dtype {dtype}): the check wants booleans, and SDPA treats a float "
                   "mask as additive, so a 0/1 mask masks nothing", dtype=got.dtype),
                tr("return booleans, True = may attend: build the mask with a comparison, or end with `.bool()`"))
        if (isinstance(got, torch.Tensor) and not got.is_floating_point() and not got.is_complex()
                and got.dtype != torch.bool and tuple(got.shape) == (T_q, T_k)
                and bool(((got == 0) | (got == 1)).all())):  # e.g. torch.ones(..., dtype=torch.long).tril()
            return diagnosis(
                tr("you returned an integer 0/1 mask (dtype {dtype}): the check wants dtype torch.bool, and SDPA "
                   "and masked_fill refuse an integer mask", dtype=got.dtype),
                tr("return dtype torch.bool, True = may attend: build the mask with a comparison (`<=` gives "
                   "torch.bool), or end with `.bool()`"))
        if isinstance(got, torch.Tensor) and tuple(got.shape) == (T_q, T_q) and T_q != T_k:
            return diagnosis(
                tr("your mask is [T_q, T_q] = {shape}: it has no column for the {n} cached keys",
                   shape=[T_q, T_q], n=offset),
                tr("the mask needs a column for every key, the cached ones first: [T_q, T_k]"))
        if isinstance(got, torch.Tensor) and tuple(got.shape) == (T_k, T_k) and T_q != T_k:
            return diagnosis(
                tr("your mask is the whole square [T_k, T_k] = {shape}: only the new queries make rows "
                   "(T_q = {n}), expected [T_q, T_k] = {expected}", shape=[T_k, T_k], n=T_q, expected=[T_q, T_k]),
                tr("the cached keys' queries were computed earlier and are not made again: keep one row per new "
                   "query, the last T_q rows of the square (or build [T_q, T_k] with the diagonal shifted right)"))
        if (isinstance(got, torch.Tensor) and T_k != T_q and tuple(got.shape) == (T_k, T_q)
                and torch.equal(got.bool(), expected.T)):  # keys as rows, queries as columns
            return diagnosis(tr("rows are queries, columns keys: you returned the transpose, [T_k, T_q]: expected "
                                "{expected}, got {got}", expected=fmt(expected.int()), got=fmt(got.int())),
                             tr("row i of the mask is query i, column j is key j: build it as [T_q, T_k], True "
                                "where key j's position <= query i's position T_k - T_q + i"))
        problem = form(got)
        if problem is None or is_form_problem(problem):
            return problem
        got = got.bool()
        swapped = tr(" (or True and False are swapped: True = may attend)") if torch.equal(got, ~expected) else ""
        if offset and torch.equal(got, band.tril(0)):
            return diagnosis(
                tr("your diagonal starts at key 0, as if nothing were cached: query 0 sees key 0 only, "
                   "expected {expected}, got {got}", expected=fmt(expected.int()), got=fmt(got.int())),
                tr("the T_k - T_q cached keys come before the queries: query i sits at position T_k - T_q + i, so "
                   "the diagonal moves right by T_k - T_q"))
        if torch.equal(got, band.tril(offset - 1)):
            return diagnosis(tr("each query misses its own key: expected {expected}, got {got}",
                                expected=fmt(expected.int()), got=fmt(got.int())) + swapped,
                             tr("a query attends to itself too: query i sees keys 0 ... T_k - T_q + i, that key "
                                "included (<=, not <)"))
        if offset and torch.equal(got, band.tril(-offset)):
            if not bool(got.any()):  # one query: the flipped diagonal hides every key, as swapped True/False would
                return diagnosis(
                    tr("no query may see any key, not even its own: expected {expected}, got {got}",
                       expected=fmt(expected.int()), got=fmt(got.int())) + swapped,
                    tr("True = may attend, and the T_k - T_q cached keys come before the queries: query i sees keys "
                       "0 ... T_k - T_q + i, a diagonal shifted right (`tril(T_k - T_q)`), not left"))
            return diagnosis(
                tr("your diagonal moved left by T_k - T_q = {n} instead of right: expected {expected}, got {got}",
                   n=offset, expected=fmt(expected.int()), got=fmt(got.int())),
                tr("the cached keys come before the queries, so the diagonal shifts right: `tril(T_k - T_q)`, "
                   "not `tril(T_q - T_k)`"))
        if torch.equal(got, band.triu(offset)):  # key_pos >= query_pos: True at and after each query's position
            text = (tr("upper triangle: True where the key is at or after the query (comparison reversed, or rows "
                       "and columns swapped): expected {expected}, got {got}", expected=fmt(expected.int()),
                       got=fmt(got.int())) if T_q == T_k else
                    tr("True where the key is at or after the query's position: the comparison is reversed "
                       "(key >= query): expected {expected}, got {got}", expected=fmt(expected.int()),
                       got=fmt(got.int())))
            return diagnosis(text, tr("row i of the mask is query i, column j is key j: True where key j's "
                                      "position <= query i's position T_k - T_q + i (the key on the small side)"))
        if torch.equal(got, ~expected):
            return diagnosis(tr("True and False are swapped: expected {expected}, got {got}",
                                expected=fmt(expected.int()), got=fmt(got.int())),
                             tr("True means may attend (as in `causal_mask` and SDPA's bool mask): True at the keys at "
                                "or before each query's position"))
        if torch.equal(got, band.tril(offset + 1)):
            return diagnosis(tr("each query sees one key of its future: expected {expected}, got {got}",
                                expected=fmt(expected.int()), got=fmt(got.int())),
                             tr("query i sees keys 0 ... T_k - T_q + i and no further: the next key is its future"))
        return expected_got(expected.int(), got.int())  # a mask reads as 0/1, like every message above
    return judge


# --- 01.repeat_kv -----------------------------------------------------------------------------------

def _arrows(heads: list) -> str:
    return ", ".join(f"{i}→{'?' if j is None else j}" for i, j in enumerate(heads))


def head_map_judge(x: torch.Tensor, n_rep: int) -> Judge:
    """Names which K/V head each query head reads (x holds distinct numbers in every head)."""
    expected = S.repeat_kv(x, n_rep)
    form = same_tensor(expected)
    B, H_kv, T, d_h = x.shape

    def judge(got) -> str | None:
        if isinstance(got, _Wrapped):
            return _wrapped_diagnosis(got)
        if isinstance(got, Raised):  # a RuntimeError (see repeat_kv_case): expand and view have rules of their own
            error = f"{type(got.err).__name__}: {str(got.err).strip().splitlines()[0][:160]}"
            if "expanded size" in str(got.err) and "non-singleton" in str(got.err):
                return diagnosis(tr("your function raised {error}", error=error),
                                 tr("`expand` only stretches axes of size 1, and the heads axis has size H_kv: add a "
                                    "new axis of size 1 after the heads, `x[:, :, None]`, expand that one to n_rep, "
                                    "then `reshape` to [B, H_kv * n_rep, T, d_h]"))
            if "view size is not compatible" in str(got.err):
                return diagnosis(tr("your function raised {error}", error=error),
                                 tr("`expand` makes no copy (the n_rep copies share memory), so `view` cannot merge "
                                    "the H_kv and n_rep axes: use `reshape`, which copies when it must"))
            return tr("your function raised {error}", error=error)
        if n_rep > 1 and isinstance(got, torch.Tensor) and tuple(got.shape) == (B, H_kv, T, d_h * n_rep):
            return diagnosis(tr("you repeated along the last axis (`dim=-1` is dim 3, d_h): shape {got}, expected "
                                "{expected}", got=list(got.shape), expected=list(expected.shape)),
                             tr("here heads are on dim 1: [B, H_kv, T, d_h] -> [B, H_kv * n_rep, T, d_h], the "
                                "copies go on the heads axis, dim=1"))
        if isinstance(got, torch.Tensor) and got.dim() == 1 and got.numel() == expected.numel():
            return diagnosis(tr("you returned a flat tensor, shape {got}: expected {expected}. Without `dim=`, "
                                "`repeat_interleave` flattens its input first and repeats single numbers",
                                got=list(got.shape), expected=list(expected.shape)),
                             tr("give the axis: `x.repeat_interleave(n_rep, dim=1)` copies whole heads on the heads "
                                "axis and keeps the 4 axes"))
        if isinstance(got, torch.Tensor) and tuple(got.shape) in ((B, H_kv, n_rep, T, d_h), (B, n_rep, H_kv, T, d_h)):
            return diagnosis(tr("you returned 5 axes, shape {got}: expected 4, {expected}",
                                got=list(got.shape), expected=list(expected.shape)),
                             tr("merge the H_kv and n_rep axes with reshape: `x[:, :, None].expand(B, H_kv, n_rep, "
                                "T, d_h).reshape(B, H_kv * n_rep, T, d_h)`"))
        if n_rep > 1 and isinstance(got, torch.Tensor) and tuple(got.shape) == (B * n_rep, H_kv, T, d_h):
            return diagnosis(tr("you repeated along dim 0, the batch axis: shape {got}, expected {expected}; that "
                                "copies whole sequences, not heads", got=list(got.shape), expected=list(expected.shape)),
                             tr("here heads are on dim 1: [B, H_kv, T, d_h] -> [B, H_kv * n_rep, T, d_h], the "
                                "copies go on the heads axis, dim=1"))
        if n_rep > 1 and isinstance(got, torch.Tensor) and tuple(got.shape) == (B, H_kv, T * n_rep, d_h):
            return diagnosis(tr("you repeated along dim 2, the time axis: shape {got}, expected {expected} (a "
                                "repeat_kv written for the [B, T, H, d_h] layout repeats dim 2)",
                                got=list(got.shape), expected=list(expected.shape)),
                             tr("here heads are on dim 1: [B, H_kv, T, d_h] -> [B, H_kv * n_rep, T, d_h], the "
                                "copies go on the heads axis, dim=1"))
        if (T != H_kv * n_rep and isinstance(got, torch.Tensor)
                and tuple(got.shape) == (B, T, H_kv * n_rep, d_h)):  # heads moved to dim 2 and left there
            return diagnosis(tr("you returned the [B, T, H, d_h] layout, shape {got}: expected {expected} = "
                                "[B, H, T, d_h]", got=list(got.shape), expected=list(expected.shape)),
                             tr("heads are on dim 1: the cache layout is [B, H_kv, T, d_h], and the result keeps "
                                "it, [B, H_kv * n_rep, T, d_h]"))
        if n_rep > 1 and isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(x.shape):
            return diagnosis(tr("nothing was repeated: shape {got}, expected {expected}; each of the {H} query heads "
                                "needs a K/V head", got=list(got.shape), expected=list(expected.shape), H=H_kv * n_rep),
                             tr("each K/V head appears n_rep times on dim=1, once for each query head of its group"))
        if T != d_h and isinstance(got, torch.Tensor) and tuple(got.shape) == (B, H_kv * n_rep, d_h, T):
            return diagnosis(tr("time and d_h changed places: shape {got}, expected {expected} = [B, H, T, d_h]",
                                got=list(got.shape), expected=list(expected.shape)),
                             tr("only the heads axis (dim=1) grows: time stays on dim=2 and d_h on dim=3, so no "
                                "transpose, and a reshape or view lists the axes in that order"))
        problem = form(got)
        if problem is None or is_form_problem(problem):
            return problem
        if T == d_h and _equal(got, expected.transpose(2, 3)):  # square [T, d_h]: the swap keeps the shape
            return diagnosis(tr("time and d_h changed places: your [T, d_h] matrices are transposed"),
                             tr("only the heads axis (dim=1) grows: time stays on dim=2 and d_h on dim=3, so no "
                                "transpose, and a reshape or view lists the axes in that order"))
        if n_rep > 1 and _equal(got, x.repeat_interleave(n_rep, dim=2).reshape(expected.shape)):
            return diagnosis(tr("you copied along the time axis, then reshaped to {H} heads: each query head now holds "
                                "repeated time steps of one K/V head, not the whole head", H=H_kv * n_rep),
                             tr("copy whole heads, on the heads axis (dim=1): `repeat_interleave(n_rep, dim=1)`, or "
                                "`x[:, :, None].expand(B, H_kv, n_rep, T, d_h).reshape(B, H_kv * n_rep, T, d_h)`"))
        mine = [next((j for j in range(H_kv) if _equal(got[:, i], x[:, j])), None) for i in range(H_kv * n_rep)]
        want = [i // n_rep for i in range(H_kv * n_rep)]
        text = tr("query head i reads K/V head j: yours {mine}; expected {want}",
                  mine=_arrows(mine), want=_arrows(want))
        text += tr(" (? = that head holds numbers from no single K/V head)") if None in mine else ""
        if mine == [i % H_kv for i in range(H_kv * n_rep)]:
            return diagnosis(text, tr("your copies are tiled: all the heads, then all of them again, so query head i "
                                      "reads K/V head i % H_kv (what `x.repeat`, `torch.tile` or an `expand` with the "
                                      "new axis before the heads, `x[:, None].expand(B, n_rep, H_kv, T, d_h)`, lay "
                                      "out); the n_rep copies of one head must sit side by side: "
                                      "`repeat_interleave(n_rep, dim=1)`, or the new axis after the heads, "
                                      "`x[:, :, None].expand(B, H_kv, n_rep, T, d_h)`, then `reshape`"))
        return text
    return judge


def repeat_kv_case(words: str, x: torch.Tensor, n_rep: int, hint: str = "") -> Case:
    """A ``repeat_kv`` case; like every ``call_with`` case it fails a function that writes into its input
    (in an engine ``x`` is the cache, and a function that writes into it corrupts every later step)."""
    run = catching(RuntimeError, call_with(x, n_rep))  # expand's and view's errors go to the judge, which names them

    def run_unless_unfinished(fn):
        got = run(fn)
        if isinstance(got, Raised) and isinstance(got.err, NotImplementedError):  # a RuntimeError too: the stub
            raise got.err
        return got
    return Case(words, _refusing_wrappers(run_unless_unfinished, _package.repeat_kv), head_map_judge(x, n_rep), hint)

