"""A quantized KV cache: K and V stored as 8- or 4-bit integers with scales, the newest positions kept exact.

Each value x of a group becomes an integer code ``c = round((x - lo) / scale)`` in ``[0, 2^bits - 1]``,
with ``scale = (hi - lo) / (2^bits - 1)`` and ``lo``, ``hi`` the group's min and max (asymmetric
min-max quantization); reading it back gives ``lo + c * scale``, off by at most ``scale / 2``. The
scale and minimum are stored in float16, rounded outward, and the codes are computed against those stored
numbers, so the bound holds with the stored ``scale``. What a group is matters, because one outlier
stretches its whole group's scale:

* ``"token"``: one scale per position and head, over its d_h channels (the group is a row);
* ``"channel"``: one scale per channel and head, over ``group_size`` consecutive positions (a column).

Keys have a few channels of much larger magnitude than the rest (the same in every position), so
the KIVI recipe quantizes **keys per channel** and **values per token**, and keeps the last
``residual`` positions in full precision: new tokens are attended most, and a per-channel group needs
``group_size`` positions before it can be quantized anyway. Codes of 4 bits are packed two per byte.
``nbytes`` counts what is stored: codes, scales and minimums (float16, as KIVI keeps them), the
full-precision tail, for every layer.
"""
from __future__ import annotations

import torch

from .cache import Cache
from .i18n import tr
from .validate import check_choice, check_crop, check_int, check_kv, check_reorder_index, is_int

GROUPINGS = ("channel", "token")


BITS = (4, 8)  # codes are stored in bytes: one code per byte, or two


def check_bits(bits) -> int:
    if not is_int(bits) or bits not in BITS:
        raise ValueError(tr("bits must be 4 or 8, got {bits!r} (codes are stored one or two per byte)", bits=bits))
    return bits


def quantize(x: torch.Tensor, bits: int, dim: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Codes (uint8, 4-bit ones packed two per byte on the last axis), scale and minimum of ``x`` with
    one group per slice along ``dim`` (the statistics are taken over ``dim``). The codes remember their
    ``bits`` (``codes.quant_bits``), so ``dequantize`` can refuse to read them with other bits."""
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise ValueError(tr("x must be a float tensor, got {type} of dtype {dtype}", type=type(x).__name__,
                            dtype=x.dtype) if isinstance(x, torch.Tensor) else
                         tr("x must be a float tensor, got {type}", type=type(x).__name__))
    check_bits(bits)
    if not is_int(dim) or not -x.dim() <= dim < max(x.dim(), 1):
        raise ValueError(tr("dim={dim!r} is not an axis of x (shape {shape}): use one of {axes}", dim=dim,
                            shape=tuple(x.shape), axes=list(range(-x.dim(), x.dim()))))
    if bits == 4 and (x.dim() == 0 or x.shape[-1] % 2):
        raise ValueError(tr("4-bit codes are packed two per byte along the last axis: it needs an even size, x has "
                            "shape {shape}; pad it by one value, or use bits=8", shape=tuple(x.shape)))
    x = x.float()
    lo, hi = x.amin(dim=dim, keepdim=True), x.amax(dim=dim, keepdim=True)
    levels = 2**bits - 1
    # The scale and minimum are stored in float16, so the codes are computed against the stored numbers,
    # each rounded outward (the minimum down, the scale up): the levels still span [lo, hi], and every value
    # comes back within half a stored step. (float16 smallest step, 2^-24, for a group of equal values.)
    lo16 = _float16(lo, down=True)
    scale16 = _float16(((hi - lo16.float()) / levels).clamp(min=2.0**-24), down=False)
    codes = ((x - lo16.float()) / scale16.float()).round().clamp(0, levels).to(torch.uint8)
    if bits == 4:  # two codes per byte: the even channel in the low nibble
        codes = codes[..., 0::2] | (codes[..., 1::2] << 4)
    codes.quant_bits = bits  # read back only with the same bits (a tensor keeps Python attributes)
    return codes, scale16, lo16


def _float16(x: torch.Tensor, down: bool) -> torch.Tensor:
    """``x`` (float32) in float16, rounded down (``down``) or up instead of to the nearest."""
    near = x.to(torch.float16)
    off = near.float() > x if down else near.float() < x  # rounded the wrong way: one float16 step back
    return torch.where(off, torch.nextafter(near, torch.full_like(near, -torch.inf if down else torch.inf)), near)


def dequantize(codes: torch.Tensor, scale: torch.Tensor, lo: torch.Tensor, bits: int, dtype) -> torch.Tensor:
    """``lo + code * scale``, unpacking 4-bit codes first; in ``dtype``. Codes made by ``quantize`` with other
    ``bits`` are refused: 8-bit codes read as pairs of 4-bit ones (or the reverse) give numbers, all wrong."""
    check_bits(bits)
    if not isinstance(codes, torch.Tensor) or codes.dtype != torch.uint8:
        raise ValueError(tr("codes must be the uint8 tensor quantize returned, got {got}",
                            got=codes.dtype if isinstance(codes, torch.Tensor) else type(codes).__name__))
    made = getattr(codes, "quant_bits", None)
    if made is not None and made != bits:
        raise ValueError(tr("these codes were made with bits={made}, and dequantize was given bits={bits}: read "
                            "them back with the bits that made them", made=made, bits=bits))
    if bits == 4:
        codes = torch.stack([codes & 0x0F, codes >> 4], dim=-1).flatten(-2)  # (..., d_h)
    try:
        return lo.to(dtype) + codes.to(dtype) * scale.to(dtype)
    except RuntimeError:  # untagged codes whose shape does not fit the scales: other bits, most likely
        raise ValueError(tr("codes {codes} (unpacked for bits={bits}) do not fit scale {scale}: were they made with "
                            "other bits?", codes=tuple(codes.shape), bits=bits, scale=tuple(scale.shape))) from None


class QuantizedKVCache(Cache):
    """``QuantizedKVCache(bits=8, key_group="channel", value_group="token", residual=32, group_size=32)``.

    Per layer: quantized chunks ``(codes, scale, lo)`` for K and for V, plus a full-precision tail of at
    most ``residual + group_size - 1`` positions. When the tail is longer than ``residual``, its oldest
    positions are quantized: a whole ``group_size`` of them at a time for a per-channel grouping, all
    but the newest ``residual`` for per-token ones. ``update`` returns the whole history, dequantized.
    """

    def __init__(self, bits: int = 8, key_group: str = "channel", value_group: str = "token", residual: int = 32,
                 group_size: int = 32) -> None:
        check_bits(bits)
        check_choice("key_group", key_group, GROUPINGS)
        check_choice("value_group", value_group, GROUPINGS)
        check_int("residual", residual, minimum=0)
        check_int("group_size", group_size)
        self.bits, self.key_group, self.value_group = bits, key_group, value_group
        self.residual, self.group_size = residual, group_size
        self.chunks: list[dict] = []  # per layer: {"k": [(codes, scale, lo, n)], "v": [...]}
        self.tail_k: list[torch.Tensor] = []  # per layer: (B, H_kv, T_tail, d_h), full precision
        self.tail_v: list[torch.Tensor] = []
        self.mask = None

    # -- the cache interface --------------------------------------------------------------------
    @property
    def n_layers(self) -> int:
        return len(self.tail_k)

    @property
    def batch_size(self) -> int | None:
        return self.tail_k[0].shape[0] if self.tail_k else None

    @property
    def seq_len(self) -> int:
        if not self.tail_k:
            return 0
        return sum(n for *_, n in self.chunks[0]["k"]) + self.tail_k[0].shape[2]

    @property
    def nbytes(self) -> int:
        """Bytes stored: codes, float16 scales and minimums, and the full-precision tails, all layers."""
        total = sum(t.numel() * t.element_size() for t in self.tail_k + self.tail_v)
        for layer in self.chunks:
            for codes, scale, lo, _ in layer["k"] + layer["v"]:
                total += sum(t.numel() * t.element_size() for t in (codes, scale, lo))
        return total

    @property
    def k(self) -> list[torch.Tensor]:
        return [self.layer_kv(i)[0] for i in range(self.n_layers)]

    @property
    def v(self) -> list[torch.Tensor]:
        return [self.layer_kv(i)[1] for i in range(self.n_layers)]

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append ``k``, ``v`` ``[B, H_kv, T_new, d_h]`` (exact, in the tail), quantize what leaves the
        tail, and return the whole history ``[B, H_kv, seq_len, d_h]``."""
        check_kv(k, v)
        if not is_int(layer) or not 0 <= layer <= len(self.tail_k):
            raise ValueError(tr("layer must be an int in [0, {last}] (filled in order), got {layer!r}",
                                last=len(self.tail_k), layer=layer))
        if k.shape[-1] % 2 and self.bits == 4:
            raise ValueError(tr("4-bit codes are packed two per byte: d_h must be even, got {d_h}", d_h=k.shape[-1]))
        if layer == len(self.tail_k):
            self.chunks.append({"k": [], "v": []})
            self.tail_k.append(k)
            self.tail_v.append(v)
        else:
            held = self.tail_k[layer].shape
            if k.shape[:2] != held[:2] or k.shape[3] != held[3]:
                raise ValueError(tr("layer {layer}: new k {shape} does not fit the cache's [B={B}, H_kv={H_kv}, T, "
                                    "d_h={d_h}] (only T grows): decode with the model that filled the cache",
                                    layer=layer, shape=tuple(k.shape), B=held[0], H_kv=held[1], d_h=held[3]))
            if k.dtype != self.tail_k[layer].dtype:
                raise ValueError(tr("layer {layer}: new k has dtype {dtype} but the cache holds {held}: decode with "
                                    "the model that filled the cache", layer=layer, dtype=k.dtype,
                                    held=self.tail_k[layer].dtype))
            self.tail_k[layer] = torch.cat([self.tail_k[layer], k], dim=2)  # (B, H_kv, T_tail + T_new, d_h)
            self.tail_v[layer] = torch.cat([self.tail_v[layer], v], dim=2)
        self._spill(layer)
        return self.layer_kv(layer)

    def layer_kv(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        out = []
        for name, tail in (("k", self.tail_k[layer]), ("v", self.tail_v[layer])):
            parts = [dequantize(c, s, lo, self.bits, tail.dtype) for c, s, lo, _ in self.chunks[layer][name]]
            out.append(torch.cat(parts + [tail], dim=2) if parts else tail)  # (B, H_kv, T, d_h)
        return out[0], out[1]

    def crop(self, n: int) -> None:
        """Keep the first ``n`` positions (what is cut from the quantized part is re-read and stays exact
        as it was read back: quantized once, never twice)."""
        check_crop(n, self.seq_len)
        for layer in range(self.n_layers):
            k, v = self.layer_kv(layer)
            q = sum(m for *_, m in self.chunks[layer]["k"])
            if n < q:  # the cut falls inside the quantized part: keep whole chunks, the rest as a tail
                keep, kept = [], 0
                for chunk in self.chunks[layer]["k"]:
                    if kept + chunk[3] > n:
                        break
                    keep.append(chunk)
                    kept += chunk[3]
                self.chunks[layer] = {"k": keep, "v": self.chunks[layer]["v"][:len(keep)]}
                self.tail_k[layer], self.tail_v[layer] = k[:, :, kept:n], v[:, :, kept:n]
            else:
                self.tail_k[layer], self.tail_v[layer] = self.tail_k[layer][:, :, :n - q], self.tail_v[layer][:, :, :n - q]
        if self.mask is not None:
            self.mask = self.mask[:, :n]

    def reorder(self, index: torch.Tensor) -> None:
        index = check_reorder_index(index, self.batch_size)
        pick = lambda t: t.index_select(0, index.to(t.device))  # noqa: E731
        for layer in range(self.n_layers):
            for name in ("k", "v"):
                self.chunks[layer][name] = [(pick(c), pick(s), pick(lo), n) for c, s, lo, n in self.chunks[layer][name]]
            self.tail_k[layer], self.tail_v[layer] = pick(self.tail_k[layer]), pick(self.tail_v[layer])
        if self.mask is not None:
            self.mask = pick(self.mask)

    # -- inside -----------------------------------------------------------------------------------
    def _spill(self, layer: int) -> None:
        """Quantize the tail's oldest positions while it is longer than ``residual``."""
        while True:
            T_tail = self.tail_k[layer].shape[2]
            excess = T_tail - self.residual
            per_channel = "channel" in (self.key_group, self.value_group)
            n = self.group_size if per_channel else excess  # a per-channel group needs group_size positions
            if excess < max(n, 1):
                return
            for name, group in (("k", self.key_group), ("v", self.value_group)):
                tail = self.tail_k if name == "k" else self.tail_v
                x = tail[layer][:, :, :n]  # (B, H_kv, n, d_h): the oldest n positions
                dim = 2 if group == "channel" else 3  # statistics over positions, or over channels
                self.chunks[layer][name].append((*quantize(x.float(), self.bits, dim), n))
                tail[layer] = tail[layer][:, :, n:]
