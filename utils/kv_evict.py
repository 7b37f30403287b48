"""A KV cache under a fixed budget of positions: when it is full, a rule picks what to forget.

``EvictingKVCache(budget, rule, sinks=4, window=16)`` keeps at most ``budget`` positions per layer. The
rules keep the first ``sinks`` positions and the ``window`` most recent ones, and differ in what else
they keep:

    "recent"     nothing else: the sinks and the most recent positions (StreamingLLM's attention sinks
                 plus a sliding window; the first tokens soak up attention that has nowhere else to go)
    "key_norm"   the positions whose keys have the smallest L2 norm (small-norm keys tend to draw the
                 most attention; no attention weights needed)
    "attention"  the positions that received the most attention so far, summed over every query that
                 looked at them (H2O's heavy hitters); the cache sees the queries through
                 ``observe_queries``, which the attention layer calls before ``update``

Eviction happens after a forward pass: a prompt longer than the budget is still prefilled with full
attention, and each later token sees only what was kept. **Positions:** a kept key was rotated by
RoPE at its own position when it was cached, and the next token's position is the number of tokens
*seen* (``seen_tokens``), not the number stored: a cache that restarts at its length would rotate the
new token as if it stood at position ``budget``, though the recent keys it attends to sit later.
"""
from __future__ import annotations

import math

import torch

from .cache import KVCache
from .i18n import tr
from .validate import check_choice, check_int, check_kv

RULES = ("recent", "key_norm", "attention")


class EvictingKVCache(KVCache):
    """At most ``budget`` positions per layer, chosen by ``rule`` (see the module docstring)."""

    def __init__(self, budget: int, rule: str = "recent", sinks: int = 4, window: int = 16) -> None:
        check_int("budget", budget)
        check_choice("rule", rule, RULES)
        check_int("sinks", sinks, minimum=0)
        check_int("window", window, minimum=1)
        if budget < sinks + window:
            raise ValueError(tr("budget ({budget}) must be at least sinks + window ({sinks} + {window}): those "
                                "positions are always kept", budget=budget, sinks=sinks, window=window))
        super().__init__()
        self.budget, self.rule, self.sinks, self.window = budget, rule, sinks, window
        self.n_seen = 0  # tokens seen: the next token's position
        self.positions: list[torch.Tensor] = []  # per layer (B, S): the original position of each kept entry
        self.scores: list[torch.Tensor] = []  # per layer (B, S): attention received (rule "attention")
        self._queries: dict[int, torch.Tensor] = {}
        self._start = 0

    def seen_tokens(self) -> int:
        return self.n_seen

    def observe_queries(self, layer: int, q: torch.Tensor) -> None:
        """The new queries ``[B, H, T_new, d_h]`` of ``layer`` (already rotated), for the attention rule."""
        if self.rule == "attention":
            self._queries[layer] = q

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append ``k``, ``v`` ``[B, H_kv, T_new, d_h]`` and return everything this forward pass attends
        to; then forget what the rule drops, down to ``budget`` positions."""
        check_kv(k, v)
        B, _, T_new, _ = k.shape
        if layer == 0:  # counted once per forward pass: the new tokens are at n_seen .. n_seen + T_new - 1
            self._start, self.n_seen = self.n_seen, self.n_seen + T_new
        start = self._start
        k_all, v_all = super().update(layer, k, v)  # (B, H_kv, S + T_new, d_h)
        new_pos = torch.arange(start, start + T_new).expand(B, T_new)  # (B, T_new)
        pos = torch.cat([self.positions[layer], new_pos], dim=1) if layer < len(self.positions) else new_pos
        score = self._attention_received(layer, k_all, T_new)  # (B, S + T_new)
        if layer < len(self.scores):
            score[:, : self.scores[layer].shape[1]] += self.scores[layer]
        if layer == len(self.positions):
            self.positions.append(pos)
            self.scores.append(score)
        else:
            self.positions[layer], self.scores[layer] = pos, score
        if k_all.shape[2] > self.budget:
            self._evict(layer)
        return k_all, v_all  # this pass attends to everything, the next one only to what was kept

    def append_mask(self, new_mask: torch.Tensor | None, T_new: int) -> None:
        if new_mask is not None:
            raise ValueError(tr("EvictingKVCache does not support padded batches (attention_mask with 0s)"))

    def crop(self, n: int) -> None:
        raise ValueError(tr("an evicting cache has already forgotten positions; it cannot be cropped"))

    def _keep_rows(self, index: torch.Tensor) -> None:
        """Keep rows ``index`` (beam search): each row's positions and attention scores go with its K/V, or
        a beam would later evict by another beam's scores."""
        super()._keep_rows(index)
        self.positions = [p.index_select(0, index.to(p.device)) for p in self.positions]  # (B', S) each
        self.scores = [s.index_select(0, index.to(s.device)) for s in self.scores]

    # -- inside -----------------------------------------------------------------------------------
    def _attention_received(self, layer: int, k_all: torch.Tensor, T_new: int) -> torch.Tensor:
        """Per key, the attention weight the new queries gave it (summed over queries and heads)."""
        B, H_kv, S, d_h = k_all.shape
        q = self._queries.pop(layer, None)
        if q is None:
            return torch.zeros(B, S)
        n_rep = q.shape[1] // H_kv
        qg = q.reshape(B, H_kv, n_rep * T_new, d_h).float()  # (B, H_kv, n_rep * T_new, d_h): heads of a group
        w = qg @ k_all.float().transpose(-1, -2) / math.sqrt(d_h)  # (B, H_kv, n_rep * T_new, S)
        q_pos = (S - T_new + torch.arange(T_new)).repeat(n_rep)  # each query's place among the keys
        w = w.masked_fill(torch.arange(S)[None, :] > q_pos[:, None], float("-inf"))  # causal
        return w.softmax(dim=-1).sum(dim=(1, 2))  # (B, S)

    def _evict(self, layer: int) -> None:
        k, v, pos = self.k[layer], self.v[layer], self.positions[layer]
        B, H_kv, S, d_h = k.shape
        middle = torch.arange(self.sinks, S - self.window)  # what a rule may drop
        n_keep = self.budget - self.sinks - self.window  # how many of the middle stay
        if self.rule == "recent" or n_keep == 0:
            chosen = middle[len(middle) - n_keep:].expand(B, n_keep) if n_keep else middle[:0].expand(B, 0)
        else:
            if self.rule == "key_norm":  # the smallest key norms stay
                value = -k[:, :, middle].float().norm(dim=-1).mean(dim=1)  # (B, len(middle))
            else:  # the most attention received stays
                value = self.scores[layer][:, middle]
            chosen = middle[value.topk(n_keep, dim=1).indices.sort(dim=1).values]  # (B, n_keep), in order
        keep = torch.cat([torch.arange(self.sinks).expand(B, -1), chosen,
                          torch.arange(S - self.window, S).expand(B, -1)], dim=1)  # (B, budget)
        idx = keep[:, None, :, None].expand(B, H_kv, keep.shape[1], d_h)  # (B, H_kv, budget, d_h)
        self.k[layer], self.v[layer] = k.gather(2, idx), v.gather(2, idx)
        self.positions[layer] = pos.gather(1, keep)
        self.scores[layer] = self.scores[layer].gather(1, keep)
