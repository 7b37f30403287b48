"""Per-layer key/value caches.

Layout, written once here and used everywhere: every layer keeps one K and one V tensor of shape

    [B, H_kv, T, d_h]      batch, key/value heads, time (dim=2), head width

Only the H_kv key/value heads are stored; in GQA/MQA they are expanded to H query heads after
they are read (``attention.repeat_kv``), so grouping saves cache memory.

``Cache`` holds what every cache shares (its per-layer ``k``/``v`` lists, the padding mask, the
bytes held, ``crop``, ``reorder``, and ``seen_tokens``: the position of the next token). Two
caches build on it:

* ``KVCache`` grows by ``torch.cat`` along time: simplest to read, but every step allocates and
  copies the whole history.
* ``StaticKVCache`` allocates ``max_len`` positions up front and writes new entries in place,
  as HF's ``StaticCache`` and gpt-fast do for compiled decode; writing past ``max_len`` raises
  ``ValueError``. (Serving engines share one pool of fixed-size blocks between requests instead.)

Both also remember which cached positions are real tokens and which are left padding
(``mask``, ``[B, T]``, None while every position is real): a new token's position is the number
of real tokens its row already holds, and padded keys must stay invisible.
"""
from __future__ import annotations

import torch

from .config import ModelConfig
from .i18n import tr
from .validate import as_torch_dtype, check_allocation, check_crop, check_int, check_kv, check_reorder_index, is_int


class Cache:
    """What both caches share. A subclass fills ``self.k``/``self.v`` (one tensor per layer) and
    implements ``update``, ``seq_len`` and ``batch_size``; ``_keep_positions`` if it can crop.

    ``mask`` ``[B, seq_len]`` says which cached positions are real tokens and which are left
    padding (None while every position is real).
    """

    k: list[torch.Tensor]
    v: list[torch.Tensor]
    mask: torch.Tensor | None

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def observe_queries(self, layer: int, q: torch.Tensor) -> None:
        """The new queries ``[B, H, T_new, d_h]`` of ``layer``, before ``update``. A cache that evicts by
        the attention its keys receive (``utils.kv_evict``) keeps them; the others need nothing."""

    def begin_step(self, B: int, T_new: int, new_mask: torch.Tensor | None, ids: torch.Tensor | None = None) -> None:
        """Called by the model before its layers write ``T_new`` positions (``new_mask``: which are real;
        ``ids``: their token ids ``[B, T_new]``). Contiguous caches need nothing; a paged cache finds the new
        tokens their slots here, and records their ids (to name its blocks by the tokens they hold)."""

    @property
    def seq_len(self) -> int:
        raise NotImplementedError

    @property
    def batch_size(self) -> int | None:
        raise NotImplementedError

    @property
    def n_layers(self) -> int:
        return len(self.k)

    @property
    def nbytes(self) -> int:
        """Bytes held by all K and V tensors (a preallocated cache counts what it allocated)."""
        return sum(t.numel() * t.element_size() for t in self.k + self.v)

    def seen_tokens(self) -> int:
        """Tokens this cache has seen: the position of the next token (rows without padding).

        Equal to ``seq_len`` for a full cache; a cache that drops old entries counts on.
        """
        return self.seq_len

    def valid_counts(self) -> torch.Tensor | None:
        """Real tokens per row ``[B]``, or None when no row has padding (then it is ``seq_len``)."""
        return None if self.mask is None else self.mask.sum(dim=1)

    def append_mask(self, new_mask: torch.Tensor | None, T_new: int) -> None:
        """Record which of the ``T_new`` positions just written are real (None: all of them)."""
        if self.mask is None and new_mask is None:
            return  # the common case: no padding anywhere, nothing to store
        B, T_old = self.batch_size, self.seq_len - T_new
        device = self.k[0].device
        old = self.mask if self.mask is not None else torch.ones(B, T_old, dtype=torch.bool, device=device)
        new = new_mask if new_mask is not None else torch.ones(B, T_new, dtype=torch.bool, device=device)
        self.mask = torch.cat([old[:, :T_old], new.to(old.device, torch.bool)], dim=1)  # (B, T_old + T_new)

    def layer_kv(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        """What ``layer`` holds: K, V ``[B, H_kv, T, d_h]``."""
        return self.k[layer], self.v[layer]

    def crop(self, n: int) -> None:
        """Keep only the first ``n`` positions (e.g. to undo rejected speculative tokens)."""
        check_crop(n, self.seq_len)
        self._keep_positions(n)
        if self.mask is not None:
            self.mask = self.mask[:, :n]

    def reorder(self, index: torch.Tensor) -> None:
        """Keep rows ``index`` (beam search: each surviving beam takes its parent's history)."""
        index = check_reorder_index(index, self.batch_size)
        self._keep_rows(index)
        if self.mask is not None:
            self.mask = self.mask.index_select(0, index.to(self.mask.device))

    def _keep_positions(self, n: int) -> None:
        raise NotImplementedError

    def _keep_rows(self, index: torch.Tensor) -> None:
        raise NotImplementedError


class KVCache(Cache):
    """Cache that grows by concatenation along the time axis (dim=2). The teaching version."""

    # The flat decode step (utils/flat_decode.py) computes exactly what the modules compute with this
    # class; a subclass (the bug lab's) must run the modules, so each class declares it for itself.
    flat_step_ok = True

    def __init__(self) -> None:
        self.k: list[torch.Tensor] = []  # one [B, H_kv, T, d_h] per layer
        self.v: list[torch.Tensor] = []
        self.mask = None

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append the new ``k``, ``v`` ``[B, H_kv, T_new, d_h]`` of ``layer``; return all of it so far."""
        check_kv(k, v)
        if not is_int(layer) or layer < 0 or layer > len(self.k):
            raise ValueError(tr("layer must be an int in [0, {last}] (layers are filled in order 0, 1, ...), got "
                                "{layer!r}", last=len(self.k), layer=layer))
        if layer == len(self.k):  # first time this layer is seen
            self.k.append(k)
            self.v.append(v)
        else:
            if k.shape[:2] != self.k[layer].shape[:2] or k.shape[3] != self.k[layer].shape[3]:
                raise ValueError(tr("layer {layer}: new k {shape} does not fit cached {cached} (B, H_kv and d_h must "
                                    "match; only T grows)", layer=layer, shape=tuple(k.shape),
                                    cached=tuple(self.k[layer].shape)))
            if k.dtype != self.k[layer].dtype:  # torch.cat would silently promote to the wider dtype
                raise ValueError(tr("layer {layer}: new k has dtype {dtype} but the cache holds {held}: decode with "
                                    "the model (and dtype) that filled the cache", layer=layer, dtype=k.dtype,
                                    held=self.k[layer].dtype))
            self.k[layer] = torch.cat([self.k[layer], k], dim=2)  # (B, H_kv, T_old + T_new, d_h)
            self.v[layer] = torch.cat([self.v[layer], v], dim=2)
        return self.k[layer], self.v[layer]

    @property
    def batch_size(self) -> int | None:
        return self.k[0].shape[0] if self.k else None

    @property
    def seq_len(self) -> int:
        """Positions cached (in layer 0; after a full forward every layer holds the same)."""
        return self.k[0].shape[2] if self.k else 0

    def _keep_positions(self, n: int) -> None:
        self.k = [t[:, :, :n] for t in self.k]
        self.v = [t[:, :, :n] for t in self.v]

    def _keep_rows(self, index: torch.Tensor) -> None:
        self.k = [t.index_select(0, index.to(t.device)) for t in self.k]
        self.v = [t.index_select(0, index.to(t.device)) for t in self.v]


class StaticKVCache(Cache):
    """Cache preallocated for ``max_len`` positions and written in place (no per-step allocation)."""

    flat_step_ok = True  # see KVCache

    def __init__(
        self,
        cfg: ModelConfig,
        batch_size: int,
        max_len: int,
        dtype: torch.dtype | None = None,
        device: torch.device | str | None = None,
    ) -> None:
        if not isinstance(cfg, ModelConfig) and isinstance(getattr(cfg, "cfg", None), ModelConfig):
            cfg = cfg.cfg  # a Decoder: its config is what sizes the cache
        if not isinstance(cfg, ModelConfig):
            raise ValueError(tr("StaticKVCache needs a ModelConfig (model.cfg), got {type}", type=type(cfg).__name__))
        check_int("batch_size", batch_size)
        check_int("max_len", max_len)
        if max_len > cfg.max_seq_len:
            raise ValueError(tr("max_len={max_len} exceeds the model's max_seq_len={max_seq_len}", max_len=max_len,
                                max_seq_len=cfg.max_seq_len))
        self.cfg = cfg
        self.max_len = max_len
        self.dtype = as_torch_dtype(dtype) or torch.get_default_dtype()
        shape = (batch_size, cfg.n_kv_heads, max_len, cfg.head_dim)  # (B, H_kv, max_len, d_h)
        itemsize = torch.empty(0, dtype=self.dtype).element_size()
        check_allocation(f"StaticKVCache(batch_size={batch_size}, max_len={max_len})",
                         2 * cfg.n_layers * batch_size * cfg.n_kv_heads * max_len * cfg.head_dim * itemsize)
        self.k = [torch.zeros(shape, dtype=self.dtype, device=device) for _ in range(cfg.n_layers)]
        self.v = [torch.zeros(shape, dtype=self.dtype, device=device) for _ in range(cfg.n_layers)]
        self._lens = [0] * cfg.n_layers  # positions written, per layer
        self.mask = None

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Write ``k``, ``v`` ``[B, H_kv, T_new, d_h]`` after what ``layer`` holds; return views of all of it."""
        check_kv(k, v)
        if not is_int(layer) or not 0 <= layer < len(self.k):
            raise ValueError(tr("layer {layer!r} out of range: this cache has {n} layers", layer=layer, n=len(self.k)))
        buf_k, buf_v = self.k[layer], self.v[layer]
        if k.shape[:2] != buf_k.shape[:2] or k.shape[3] != buf_k.shape[3]:
            raise ValueError(tr("layer {layer}: new k {shape} does not fit the cache's [B={B}, H_kv={H_kv}, T, "
                                "d_h={d_h}]", layer=layer, shape=tuple(k.shape), B=buf_k.shape[0], H_kv=buf_k.shape[1],
                                d_h=buf_k.shape[3]))
        if k.dtype != buf_k.dtype:
            raise ValueError(tr("k has dtype {dtype} but this StaticKVCache was allocated as {held}: allocate it with "
                                "the model's dtype (dtype=model.lm_head.weight.dtype)", dtype=k.dtype,
                                held=buf_k.dtype))
        start, T_new = self._lens[layer], k.shape[2]
        end = start + T_new
        if end > self.max_len:
            raise ValueError(tr("cannot write {n} position(s) at position {start}: StaticKVCache max_len={max_len}",
                                n=T_new, start=start, max_len=self.max_len))
        if torch.is_inference(buf_k) and not torch.is_inference_mode_enabled():
            # Buffers created under inference_mode can only be written under it (rare: a caller
            # outside inference_mode). The usual path, inside generate, skips this context switch.
            with torch.inference_mode():
                return self.update(layer, k, v)
        buf_k[:, :, start:end] = k  # in place: no allocation, the history is not copied
        buf_v[:, :, start:end] = v
        self._lens[layer] = end
        return buf_k[:, :, :end], buf_v[:, :, :end]  # views, no copy

    def layer_kv(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        n = self._lens[layer]
        return self.k[layer][:, :, :n], self.v[layer][:, :, :n]

    @property
    def batch_size(self) -> int:
        return self.k[0].shape[0]

    @property
    def seq_len(self) -> int:
        return self._lens[0]

    def _keep_positions(self, n: int) -> None:
        self._lens = [n] * len(self._lens)  # later writes overwrite what lies beyond n

    def _keep_rows(self, index: torch.Tensor) -> None:
        if index.numel() != self.batch_size:
            raise ValueError(tr("a StaticKVCache keeps its batch size: reorder index has {rows} rows, the cache {B}",
                                rows=index.numel(), B=self.batch_size))
        with torch.inference_mode(torch.is_inference(self.k[0]) or torch.is_inference_mode_enabled()):
            for t in self.k + self.v:
                t.copy_(t.index_select(0, index.to(t.device)))
