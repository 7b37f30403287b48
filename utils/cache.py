"""Per-layer key/value caches.

Layout, written once here and used everywhere: every layer keeps one K and one V tensor of shape

    [B, H_kv, T, d_h]      batch, key/value heads, time (dim=2), head width

Only the H_kv key/value heads are stored; in GQA/MQA they are expanded to H query heads after
they are read (``attention.repeat_kv``), so grouping saves cache memory.

Two caches with the same interface:

* ``KVCache`` grows by ``torch.cat`` along time: simplest to read, but every step allocates and
  copies the whole history.
* ``StaticKVCache`` allocates ``max_len`` positions up front and writes new entries in place,
  as serving engines do; writing past ``max_len`` raises ``ValueError``.

Both also remember which cached positions are real tokens and which are left padding
(``mask``, ``[B, T]``, None while every position is real): a new token's position is the number
of real tokens its row already holds, and padded keys must stay invisible.
"""
from __future__ import annotations

import torch

from .config import ModelConfig


def _check_index(index: torch.Tensor, batch_size: int | None) -> torch.Tensor:
    if not isinstance(index, torch.Tensor):
        index = torch.as_tensor(index)
    if index.dim() != 1 or index.dtype not in (torch.int64, torch.int32):
        raise ValueError(f"reorder index must be a 1-D integer tensor, got shape {tuple(index.shape)} {index.dtype}")
    if batch_size is not None and index.numel() and (index.min() < 0 or index.max() >= batch_size):
        raise ValueError(f"reorder index {index.tolist()} out of range for a batch of {batch_size} rows")
    return index.long()


def _check_kv(k: torch.Tensor, v: torch.Tensor) -> None:
    if k.dim() != 4 or k.shape != v.shape:
        raise ValueError(
            f"k and v must both be [B, H_kv, T, d_h]; got k {tuple(k.shape)} and v {tuple(v.shape)}"
        )


class _MaskMixin:
    """Bookkeeping of which cached positions are real tokens (shared by both caches)."""

    mask: torch.Tensor | None

    def valid_counts(self) -> torch.Tensor | None:
        """Real tokens per row ``[B]``, or None when no row has padding (then it is ``seq_len``)."""
        return None if self.mask is None else self.mask.sum(dim=1)

    def _mask_after(self, new_mask: torch.Tensor | None, B: int, T_old: int, T_new: int) -> torch.Tensor | None:
        if self.mask is None and new_mask is None:
            return None  # the common case: no padding anywhere, nothing to store
        old = self.mask if self.mask is not None else torch.ones(B, T_old, dtype=torch.bool, device=self._device())
        new = new_mask if new_mask is not None else torch.ones(B, T_new, dtype=torch.bool, device=old.device)
        return torch.cat([old[:, :T_old], new.to(old.device, torch.bool)], dim=1)  # (B, T_old + T_new)


class KVCache(_MaskMixin):
    """Cache that grows by concatenation along the time axis (dim=2). The teaching version."""

    def __init__(self) -> None:
        self.k: list[torch.Tensor] = []  # one [B, H_kv, T, d_h] per layer
        self.v: list[torch.Tensor] = []
        self.mask = None

    def _device(self):
        return self.k[0].device if self.k else None

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append the new ``k``, ``v`` ``[B, H_kv, T_new, d_h]`` of ``layer``; return all of it so far."""
        _check_kv(k, v)
        if layer == len(self.k):  # first time this layer is seen
            self.k.append(k)
            self.v.append(v)
        elif 0 <= layer < len(self.k):
            if k.shape[:2] != self.k[layer].shape[:2] or k.shape[3] != self.k[layer].shape[3]:
                raise ValueError(
                    f"layer {layer}: new k {tuple(k.shape)} does not fit cached {tuple(self.k[layer].shape)} "
                    "(B, H_kv and d_h must match; only T grows)"
                )
            self.k[layer] = torch.cat([self.k[layer], k], dim=2)  # (B, H_kv, T_old + T_new, d_h)
            self.v[layer] = torch.cat([self.v[layer], v], dim=2)
        else:
            raise ValueError(f"layer {layer} updated before layers 0..{layer - 1}: fill layers in order")
        return self.k[layer], self.v[layer]

    def layer_kv(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        """What ``layer`` holds: K, V ``[B, H_kv, T, d_h]``."""
        return self.k[layer], self.v[layer]

    @property
    def n_layers(self) -> int:
        return len(self.k)

    @property
    def batch_size(self) -> int | None:
        return self.k[0].shape[0] if self.k else None

    @property
    def seq_len(self) -> int:
        """Positions cached (in layer 0; after a full forward every layer holds the same)."""
        return self.k[0].shape[2] if self.k else 0

    @property
    def nbytes(self) -> int:
        """Bytes held by all K and V tensors."""
        return sum(t.numel() * t.element_size() for t in self.k + self.v)

    def append_mask(self, new_mask: torch.Tensor | None, T_new: int) -> None:
        """Record which of the ``T_new`` positions just written are real (None: all of them)."""
        B = self.batch_size
        self.mask = self._mask_after(new_mask, B, self.seq_len - T_new, T_new)

    def reorder(self, index: torch.Tensor) -> None:
        """Keep rows ``index`` (beam search: each surviving beam takes its parent's history)."""
        index = _check_index(index, self.batch_size)
        self.k = [t.index_select(0, index.to(t.device)) for t in self.k]
        self.v = [t.index_select(0, index.to(t.device)) for t in self.v]
        if self.mask is not None:
            self.mask = self.mask.index_select(0, index.to(self.mask.device))

    def crop(self, n: int) -> None:
        """Keep only the first ``n`` positions (e.g. to undo rejected speculative tokens)."""
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= self.seq_len:
            raise ValueError(f"crop length {n!r} must be an int in [0, seq_len={self.seq_len}]")
        self.k = [t[:, :, :n] for t in self.k]
        self.v = [t[:, :, :n] for t in self.v]
        if self.mask is not None:
            self.mask = self.mask[:, :n]


class StaticKVCache(_MaskMixin):
    """Cache preallocated for ``max_len`` positions and written in place (no per-step allocation)."""

    def __init__(
        self,
        cfg: ModelConfig,
        batch_size: int,
        max_len: int,
        dtype: torch.dtype | None = None,
        device: torch.device | str | None = None,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
        if isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < 1:
            raise ValueError(f"max_len must be an int >= 1, got {max_len!r}")
        if max_len > cfg.max_seq_len:
            raise ValueError(f"max_len={max_len} exceeds the model's max_seq_len={cfg.max_seq_len}")
        self.cfg = cfg
        self.max_len = max_len
        self.dtype = dtype or torch.get_default_dtype()
        shape = (batch_size, cfg.n_kv_heads, max_len, cfg.head_dim)  # (B, H_kv, max_len, d_h)
        self.k = [torch.zeros(shape, dtype=self.dtype, device=device) for _ in range(cfg.n_layers)]
        self.v = [torch.zeros(shape, dtype=self.dtype, device=device) for _ in range(cfg.n_layers)]
        self._lens = [0] * cfg.n_layers  # positions written, per layer
        self.mask = None

    def _device(self):
        return self.k[0].device

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Write ``k``, ``v`` ``[B, H_kv, T_new, d_h]`` after what ``layer`` holds; return views of all of it."""
        _check_kv(k, v)
        if not 0 <= layer < len(self.k):
            raise ValueError(f"layer {layer} out of range: this cache has {len(self.k)} layers")
        buf_k, buf_v = self.k[layer], self.v[layer]
        if k.shape[:2] != buf_k.shape[:2] or k.shape[3] != buf_k.shape[3]:
            raise ValueError(
                f"layer {layer}: new k {tuple(k.shape)} does not fit the cache's "
                f"[B={buf_k.shape[0]}, H_kv={buf_k.shape[1]}, T, d_h={buf_k.shape[3]}]"
            )
        if k.dtype != buf_k.dtype:
            raise ValueError(f"k has dtype {k.dtype} but this StaticKVCache was allocated as {buf_k.dtype}")
        start, T_new = self._lens[layer], k.shape[2]
        end = start + T_new
        if end > self.max_len:
            raise ValueError(
                f"cannot write {T_new} position(s) at position {start}: StaticKVCache max_len={self.max_len}"
            )
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
    def n_layers(self) -> int:
        return len(self.k)

    @property
    def batch_size(self) -> int:
        return self.k[0].shape[0]

    @property
    def seq_len(self) -> int:
        return self._lens[0]

    @property
    def nbytes(self) -> int:
        """Bytes allocated (all ``max_len`` positions, used or not: that is what it occupies)."""
        return sum(t.numel() * t.element_size() for t in self.k + self.v)

    def append_mask(self, new_mask: torch.Tensor | None, T_new: int) -> None:
        self.mask = self._mask_after(new_mask, self.batch_size, self.seq_len - T_new, T_new)

    def reorder(self, index: torch.Tensor) -> None:
        index = _check_index(index, self.batch_size)
        if index.numel() != self.batch_size:
            raise ValueError(
                f"a StaticKVCache keeps its batch size: reorder index has {index.numel()} rows, "
                f"the cache {self.batch_size}"
            )
        with torch.inference_mode(torch.is_inference(self.k[0]) or torch.is_inference_mode_enabled()):
            for t in self.k + self.v:
                t.copy_(t.index_select(0, index.to(t.device)))
        if self.mask is not None:
            self.mask = self.mask.index_select(0, index.to(self.mask.device))

    def crop(self, n: int) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= self.seq_len:
            raise ValueError(f"crop length {n!r} must be an int in [0, seq_len={self.seq_len}]")
        self._lens = [n] * len(self._lens)  # later writes overwrite what lies beyond n
        if self.mask is not None:
            self.mask = self.mask[:, :n]

    def reset(self) -> None:
        """Forget everything (keeps the allocation)."""
        self.crop(0)
        self.mask = None
