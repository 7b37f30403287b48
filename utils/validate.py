"""Argument guards for the engine, in one place, so the engine files read as the math.

Every function here raises ``ValueError`` naming the bad value and what is allowed (or returns
the argument in the one form the engine uses). None of them computes anything the model needs.
The messages speak the learner's language: each is an English text passed through ``tr`` with its
values named, and its Chinese is in ``utils/i18n/zh_errors.py``.
"""
from __future__ import annotations

import numbers
import os
import warnings
from typing import Sequence

import torch

from .i18n import tr

ID_DTYPES = (torch.int64, torch.int32, torch.int16, torch.uint8)
CACHE_KINDS = ("dynamic", "static", "paged")
STEPS = ("flat", "modules")


def is_int(value: object) -> bool:
    """An int that is not a bool (``True`` is an int to Python, and almost always a mistake here)."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_int(name: str, value: object, minimum: int | None = 1, maximum: int | None = None) -> int:
    """``value`` as an int in ``[minimum, maximum]`` (either bound may be None)."""
    if not is_int(value):
        raise ValueError(tr("{name} must be an int, got {value!r} ({type})", name=name, value=value,
                            type=type(value).__name__))
    if minimum is not None and value < minimum:
        raise ValueError(tr("{name} must be >= {minimum}, got {value}", name=name, minimum=minimum, value=value))
    if maximum is not None and value > maximum:
        raise ValueError(tr("{name} must be <= {maximum}, got {value}", name=name, maximum=maximum, value=value))
    return value


def check_choice(name: str, value: object, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(tr("{name}={value!r}; choose one of {choices}", name=name, value=value,
                            choices=tuple(choices)))
    return value


def _shape(x) -> object:
    return tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__


# --- what the model is fed ------------------------------------------------------------------------

def check_ids(input_ids, vocab_size: int) -> None:
    """``input_ids`` is a non-empty ``[B, T]`` integer tensor with every id in ``[0, V)``."""
    if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2:
        raise ValueError(tr("input_ids must be a [B, T] tensor of token ids, got {shape}", shape=_shape(input_ids)))
    if input_ids.numel() == 0:  # before the dtype: torch.tensor([[]]) is float32, and the real problem is emptiness
        raise ValueError(tr("empty input: input_ids has shape {shape}; is the prompt empty? "
                            "A prompt needs at least one token (e.g. <BOS>)", shape=tuple(input_ids.shape)))
    if input_ids.dtype not in ID_DTYPES:
        raise ValueError(tr("input_ids must hold integer token ids, got dtype {dtype}", dtype=input_ids.dtype))
    B, T = input_ids.shape
    if B == 0 or T == 0:
        raise ValueError(tr("empty input: input_ids has shape {shape}; a prompt needs at least one token",
                            shape=(B, T)))
    lo, hi = (int(t) for t in input_ids.aminmax())  # smallest and largest id, one pass
    if lo < 0 or hi >= vocab_size:
        raise ValueError(tr("token id {id} is outside the vocabulary [0, {last}] (vocab_size={vocab_size})",
                            id=lo if lo < 0 else hi, last=vocab_size - 1, vocab_size=vocab_size))


def check_forward(cfg, input_ids, cache=None, attention_mask=None, position_ids=None) -> None:
    """Everything ``Decoder.forward`` needs of its arguments, checked before any work."""
    check_ids(input_ids, cfg.vocab_size)
    B, T = input_ids.shape
    if cache is not None:
        check_cache(cache)
    past = cache.seen_tokens() if cache is not None else 0
    if past + T > cfg.max_seq_len:
        raise ValueError(tr("sequence of {n} positions ({past} cached + {new} new) exceeds max_seq_len={max_seq_len}",
                            n=past + T, past=past, new=T, max_seq_len=cfg.max_seq_len))
    if cache is not None:
        if cache.batch_size is not None and cache.batch_size != B:
            raise ValueError(tr("input_ids has batch size {B} but the cache holds {rows} rows", B=B,
                                rows=cache.batch_size))
        if cache.n_layers not in (0, cfg.n_layers):
            raise ValueError(tr("cache has {cache} layers, the model {model}", cache=cache.n_layers,
                                model=cfg.n_layers))
    if attention_mask is not None:
        if not isinstance(attention_mask, torch.Tensor) or tuple(attention_mask.shape) != (B, T):
            shape = tuple(attention_mask.shape) if isinstance(attention_mask, torch.Tensor) else attention_mask
            raise ValueError(tr("attention_mask must have the shape of input_ids {expected}, got {shape}",
                                expected=(B, T), shape=shape))
        if ((attention_mask != 0) & (attention_mask != 1)).any():
            raise ValueError(tr("attention_mask must hold only 0 (padding) and 1 (real token)"))
    if position_ids is not None:
        if not isinstance(position_ids, torch.Tensor) or tuple(position_ids.shape) not in ((T,), (B, T)):
            raise ValueError(tr("position_ids must be [T] or [B, T] = {shape}", shape=(B, T)))
        if position_ids.min() < 0 or position_ids.max() >= cfg.max_seq_len:
            raise ValueError(tr("position_ids must lie in [0, {last}]", last=cfg.max_seq_len - 1))


def check_left_padded(attention_mask) -> None:
    """Prefill reads each row's logits in the last column: that column must be a real token."""
    if isinstance(attention_mask, torch.Tensor) and attention_mask.dim() == 2 and attention_mask.shape[1]:
        if not bool((attention_mask[:, -1] == 1).all()):
            rows = (attention_mask[:, -1] != 1).nonzero().flatten().tolist()
            raise ValueError(tr("attention_mask must be left-padded (last column all 1); rows {rows} end with padding",
                                rows=rows))


# What the model asks of a cache (``utils.cache.Cache`` has all of it): checked by name, so this module,
# which every engine file imports, imports none of them.
CACHE_INTERFACE = ("update", "seq_len", "seen_tokens", "batch_size", "n_layers", "mask", "valid_counts",
                   "begin_step", "append_mask", "observe_queries")


def check_cache(cache) -> None:
    """``cache`` is a cache object (``KVCache``, ``StaticKVCache``, or another ``utils.cache.Cache``)."""
    if all(hasattr(type(cache), name) or hasattr(cache, name) for name in CACHE_INTERFACE):
        return
    hint = ""
    if isinstance(cache, tuple):
        hint = tr(": prefill returns (logits, cache); unpack it, e.g. `logits, cache = prefill(model, ids)`")
    elif isinstance(cache, str):
        hint = tr(": cache is a cache object; the string option is cache_kind= (in generate, beam_search, ...)")
    raise ValueError(tr("cache must be a KVCache or StaticKVCache (a utils.cache.Cache), got {type}{hint}",
                        type=type(cache).__name__, hint=hint))


def check_decode_input(token_ids, cache) -> None:
    """A decode step takes one new token per row, ``[B]``, and a cache that prefill has filled."""
    if not isinstance(token_ids, torch.Tensor) or token_ids.dim() != 1:
        raise ValueError(tr("token_ids must be a [B] tensor (one new token per row), got {shape}",
                            shape=_shape(token_ids)))
    if cache is not None:
        check_cache(cache)
    if cache is None or cache.seq_len == 0:
        raise ValueError(tr("decode_step needs a cache filled by prefill; got an empty cache"))


def check_fits(cfg, prompt_len: int, n_new: int, what: str = "max_new_tokens", whose: str = "") -> None:
    """The prompt and ``n_new`` more tokens fit the model's ``max_seq_len`` (``whose``: "the target's", ...,
    an English catalogue key: see ``WHOSE``)."""
    if prompt_len + n_new > cfg.max_seq_len:
        values = dict(n=prompt_len, what=what, n_new=n_new, max_seq_len=cfg.max_seq_len)
        if whose:
            raise ValueError(tr("prompt of {n} tokens + {what}={n_new} exceeds {whose} max_seq_len={max_seq_len}",
                                whose=tr(whose), **values))
        raise ValueError(tr("prompt of {n} tokens + {what}={n_new} exceeds max_seq_len={max_seq_len}", **values))


WHOSE = ("the target's", "the draft's")  # the ``whose`` of check_fits's callers (utils/speculative.py)


# --- what may be allocated ------------------------------------------------------------------------

ALLOCATION_ENV = "KV_COURSE_MAX_ALLOC_GB"  # overrides the limit below, in GB (10^9 bytes)
ALLOCATION_LIMIT = 4 * 10**9  # bytes: far above any cache of the course, far below what a typo asks for


def allocation_limit() -> int:
    """Bytes one preallocation may take: ``ALLOCATION_LIMIT`` (4 GB), or the environment variable
    ``KV_COURSE_MAX_ALLOC_GB`` (a number of GB, e.g. ``export KV_COURSE_MAX_ALLOC_GB=40``) when it is set."""
    text = os.environ.get(ALLOCATION_ENV, "").strip()
    if not text:
        return ALLOCATION_LIMIT
    try:
        gb = float(text)
    except ValueError:
        raise ValueError(tr("{env}={text!r} must be a number of GB, e.g. 40", env=ALLOCATION_ENV, text=text)) from None
    if not gb > 0:
        raise ValueError(tr("{env}={text!r} must be a number of GB > 0", env=ALLOCATION_ENV, text=text))
    return int(gb * 10**9)


def check_allocation(what: str, nbytes: int) -> None:
    """Refuse to preallocate ``nbytes`` for ``what`` (the call and its sizes, e.g. "PagedKVCache(n_blocks=
    1000000, block_size=16)") past ``allocation_limit()``. A size off by a few zeros would otherwise take
    every byte of the machine (torch writes the zeros, so the memory is really taken) before any error."""
    limit = allocation_limit()
    if nbytes > limit:
        raise ValueError(tr("{what} would reserve {gb:,.1f} GB ({nbytes:,} bytes), over the course's limit of "
                            "{limit:g} GB: is a size off by a few zeros? (To allow it, set the environment variable "
                            "{env} to a number of GB.)", what=what, gb=nbytes / 1e9, nbytes=nbytes, limit=limit / 1e9,
                            env=ALLOCATION_ENV))


# --- what a cache is given ------------------------------------------------------------------------

def check_kv(k, v) -> None:
    if not isinstance(k, torch.Tensor) or not isinstance(v, torch.Tensor) or k.dim() != 4 or k.shape != v.shape:
        raise ValueError(tr("k and v must both be [B, H_kv, T, d_h]; got k {k} and v {v}", k=_shape(k), v=_shape(v)))


def check_reorder_index(index, batch_size: int | None) -> torch.Tensor:
    """The rows to keep, as a 1-D long tensor within the batch."""
    if not isinstance(index, torch.Tensor):
        index = torch.as_tensor(index)
    if index.dim() != 1 or index.dtype not in (torch.int64, torch.int32):
        raise ValueError(tr("reorder index must be a 1-D integer tensor, got shape {shape} {dtype}",
                            shape=tuple(index.shape), dtype=index.dtype))
    if batch_size is not None and index.numel() and (index.min() < 0 or index.max() >= batch_size):
        raise ValueError(tr("reorder index {index} out of range for a batch of {B} rows", index=index.tolist(),
                            B=batch_size))
    return index.long()


def check_crop(n, seq_len: int) -> None:
    if not is_int(n) or not 0 <= n <= seq_len:
        raise ValueError(tr("crop length {n!r} must be an int in [0, seq_len={seq_len}]", n=n, seq_len=seq_len))


# --- sampling and the generation loop -------------------------------------------------------------

def check_sampling_args(logits, temperature, top_k, top_p) -> None:
    if not isinstance(logits, torch.Tensor) or logits.dim() != 2 or not logits.is_floating_point():
        raise ValueError(tr("logits must be a float tensor [B, V], got {shape}", shape=_shape(logits)))
    if not isinstance(temperature, (int, float)) or isinstance(temperature, bool) or not temperature >= 0:
        raise ValueError(tr("temperature must be a number >= 0 (0 = greedy), got {value!r}", value=temperature))
    if top_k is not None and (not is_int(top_k) or top_k < 1):
        raise ValueError(tr("top_k must be None or an int >= 1, got {value!r}", value=top_k))
    if top_p is not None and (isinstance(top_p, bool) or not isinstance(top_p, (int, float)) or not 0 < top_p <= 1):
        raise ValueError(tr("top_p must be None or in (0, 1], got {value!r}", value=top_p))
    # softmax(probabilities) is nearly uniform: sampling "works" and is silently wrong. Greedy is not
    # affected (the argmax is the same), and skipping it keeps the check off greedy decode's every step.
    if temperature > 0 and logits.shape[-1] > 1 and logits.min() >= 0 and logits.max() <= 1 and \
            torch.allclose(logits.float().sum(-1), torch.ones(()), atol=1e-3):
        warnings.warn(tr("these logits look like probabilities (every row is in [0, 1] and sums to 1); sampling "
                         "expects logits: pass the model's logits, or torch.log(probs)"), stacklevel=3)


def eos_set(eos_id) -> set[int]:
    """``eos_id`` (None, an int, an integer tensor, or several ints) as a set."""
    if eos_id is None:
        return set()
    if isinstance(eos_id, torch.Tensor) and not eos_id.is_floating_point() and eos_id.dim() <= 1:
        eos_id = eos_id.tolist()  # torch.tensor(2) -> 2, torch.tensor([2, 3]) -> [2, 3]
    if is_int(eos_id):
        return {eos_id}
    ids = list(eos_id) if isinstance(eos_id, (list, tuple, set, frozenset)) else [eos_id]
    if not ids or not all(is_int(i) for i in ids):
        raise ValueError(tr("eos_id must be an int or a list of ints (token ids), got {value!r}", value=eos_id))
    return set(ids)


def check_tokenizer(tokenizer, name: str = "tokenizer", needs: str = "decode", usage: str | None = None,
                    required: bool = False) -> None:
    """``tokenizer`` has the method ``needs``, as the course Tokenizer does, and is not a model passed in its place
    (None passes unless ``required``); the message names the argument (``name``) and how the call is written
    (``usage``, code such as "SamplingPanel(model, tok)"; by default: pass the model first, the tokenizer as
    tokenizer=...)."""
    if (tokenizer is not None or required) and (isinstance(tokenizer, torch.nn.Module) or not callable(getattr(tokenizer, needs, None))):
        usage = tr("pass the model first, the tokenizer as tokenizer=...") if usage is None else usage
        raise ValueError(tr("{name} must be a tokenizer with {needs}(), such as the course Tokenizer (model, tok = "
                            "load_course_model()), got {type}: {usage}", name=name, needs=needs,
                            type=type(tokenizer).__name__, usage=usage))


def _is_id(value) -> bool:
    """An int, or a numpy integer (``np.int64`` from an array), never a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and type(value).__name__ != "bool_"


def _text_hint(value) -> str | None:
    """The message for text where token ids belong (one string, or a list of them), else None."""
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        value = value[0]
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return tr("got the text {text!r} where token ids belong: turn it into ids first, ids = tok.encode(text) "
                  "(tok: the tokenizer from load_course_model())", text=shown)
    return None


def as_id_batch(input_ids, name: str = "input_ids") -> torch.Tensor:
    """A prompt as ``[B, T]`` ids: a tensor or numpy array (``[T]`` or ``[B, T]``), one list of ids, or
    equal-length lists of ids. Text is refused with the way to ids (``tok.encode``); so is a single number,
    or a tensor of another rank. The dtype and the id range are checked by the model (``check_ids``).
    ``name``: the argument, as the messages call it."""
    hint = _text_hint(input_ids)
    if hint:
        raise ValueError(f"{name}: {hint}")  # the argument's name, then the hint (in the learner's language)
    if type(input_ids).__module__ == "numpy":  # an array (or a numpy scalar, refused below as one number)
        try:
            input_ids = torch.as_tensor(input_ids)
        except (TypeError, RuntimeError) as err:  # an array of strings or objects
            raise ValueError(tr("{name} must be token ids (ints), got a numpy array: {error}", name=name,
                                error=err)) from None
    if isinstance(input_ids, (list, tuple)):
        rows = input_ids if input_ids and isinstance(input_ids[0], (list, tuple)) else [input_ids]
        if len({len(r) for r in rows}) > 1:
            raise ValueError(tr("the prompts have different lengths {lengths}: left-pad them into one batch with "
                                "utils.generate.left_pad(rows, pad_id) and pass its attention_mask",
                                lengths=[len(r) for r in rows]))
        if any(not _is_id(i) for r in rows for i in r):
            bad = [i for r in rows for i in r if not _is_id(i)]
            hint = _text_hint(bad)
            raise ValueError(f"{name}: {hint}" if hint else
                             tr("{name}: token ids must be ints; got {bad!r}", name=name, bad=bad[:5]))
        input_ids = torch.tensor([[int(i) for i in r] for r in rows], dtype=torch.long)
    if not isinstance(input_ids, torch.Tensor):
        raise ValueError(tr("{name} must be token ids: a [T] or [B, T] tensor, or a list of ints; got {type} "
                            "{value!r:.40}", name=name, type=type(input_ids).__name__, value=input_ids))
    if input_ids.dim() == 1:
        input_ids = input_ids[None]  # (1, T): a single prompt
    if input_ids.dim() != 2:
        raise ValueError(tr("{name} must be [T] or [B, T] token ids, got a tensor of shape {shape}", name=name,
                            shape=tuple(input_ids.shape)))
    return input_ids


def as_one_prompt(ids, name: str = "prompt") -> torch.Tensor:
    """One sequence of token ids as ``[1, T]`` (from a list, a ``[T]`` or ``[1, T]`` tensor or numpy array);
    text, and a batch of several rows, are refused naming ``name``."""
    ids = as_id_batch(ids, name)
    if ids.shape[0] != 1:
        raise ValueError(tr("{name} must be one prompt, one sequence of ids ([T] or [1, T]), got {rows} rows "
                            "(shape {shape}): pass one row, e.g. ids[0]", name=name, rows=ids.shape[0],
                            shape=tuple(ids.shape)))
    if ids.is_floating_point() or ids.dtype == torch.bool:
        raise ValueError(tr("{name} must hold integer token ids, got dtype {dtype}", name=name, dtype=ids.dtype))
    return ids


def as_id_list(ids, name: str = "tokens") -> list[int]:
    """One sequence of token ids as a list of ints (see ``as_one_prompt`` for what is accepted)."""
    return as_one_prompt(ids, name)[0].tolist()


def as_torch_dtype(dtype) -> torch.dtype | None:
    """A torch dtype, or its name (``"float16"``, ``"bfloat16"``, ``"float32"``), for a cache's tensors."""
    names = {"float16": torch.float16, "half": torch.float16, "fp16": torch.float16, "bfloat16": torch.bfloat16,
             "bf16": torch.bfloat16, "float32": torch.float32, "float": torch.float32, "fp32": torch.float32,
             "float64": torch.float64}
    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    if isinstance(dtype, str) and dtype in names:
        return names[dtype]
    raise ValueError(tr("dtype={dtype!r}; use a torch dtype or one of {names}", dtype=dtype, names=sorted(names)))


def stop_string_list(stop_strings, tokenizer) -> list[str]:
    stop_strings = [stop_strings] if isinstance(stop_strings, str) else list(stop_strings or [])
    if stop_strings and tokenizer is None:
        raise ValueError(tr("stop_strings need a tokenizer to turn tokens into text; pass tokenizer=..."))
    if any(not isinstance(s, str) or not s for s in stop_strings):
        raise ValueError(tr("stop_strings must be non-empty strings, got {value!r}", value=stop_strings))
    return stop_strings


def check_pad_id(pad_id: int, vocab_size: int) -> None:
    if not is_int(pad_id) or not 0 <= pad_id < vocab_size:
        raise ValueError(tr("pad_id={pad_id} is outside the vocabulary [0, {last}]", pad_id=pad_id,
                            last=vocab_size - 1))


def check_tol(tol) -> None:
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not tol > 0:
        raise ValueError(tr("tol must be > 0, got {tol!r}", tol=tol))
