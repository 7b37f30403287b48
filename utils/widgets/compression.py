"""Panel of notebook 13 (a smaller KV cache): memory against quality for quantized and evicting caches.

Every setting the panel offers is measured once, when it is built (``quality_grid``): the course model
reads held-out documents teacher-forced (``utils.cache_quality.compare_cache``) with the cache under test
and with the exact ``KVCache``. A slider step then only looks the setting up and draws it among all the
others, next to the sizing formula with bits for a real model. The documents are short (the course model
trained on documents of at most 15 tokens), so the groups, residual windows and budgets here are a few
positions, where real systems use tens to thousands.
"""
from __future__ import annotations

import html

from ..cache import KVCache
from ..cache_quality import CacheQuality, compare_cache, exact_run, held_out_docs
from ..i18n import in_language, tr
from ..kv_evict import EvictingKVCache
from ..kv_quant import QuantizedKVCache
from ..model import check_model
from ..plots.base import format_bytes
from ..plots.compression import RULE_NAMES, plot_compression_tradeoff
from ..sizing import MODEL_PRESETS, bytes_per_element
from ..validate import check_choice
from .base import Panel, dropdown, selection_slider

BITS = (16, 8, 4)  # 16: no quantization (the exact cache)
GROUPINGS = ("channel", "token")
GROUP_NAMES = {"channel": "per channel", "token": "per token"}  # in words (the keys of tr)
RESIDUALS = (0, 2, 4)  # positions kept exact
RULES = ("none", "recent", "key_norm", "attention")
BUDGETS = (6, 8, 10)  # positions per layer an evicting cache keeps
MEASURES = ("loss", "match", "max_diff")  # what the chart's y axis shows
GROUP_SIZE, SINKS, WINDOW = 4, 1, 4  # positions per per-channel group; the sink (<BOS>) and the recent window
N_PREFILL, N_DOCS, MIN_TOKENS = 4, 400, 12  # each document: 4 tokens prefilled, the rest decoded one by one
# The sizing part: a real model, a long context, groups and a residual of the size real systems use.
SIZING_MODEL, SIZING_T, SIZING_GROUP, SIZING_RESIDUAL = "Llama-3-8B", 32768, 32, 128


def setting_key(bits: int, key_group: str = "channel", value_group: str = "token", residual: int = 0,
                rule: str = "none", budget: int = BUDGETS[0]) -> tuple | None:
    """The measured setting the controls name: ``("exact",)``, ``("quant", bits, key_group, value_group,
    residual)`` or ``("evict", rule, budget)``; None when both quantizing and evicting (not measured)."""
    if rule == "none":
        return ("exact",) if bits == 16 else ("quant", bits, key_group, value_group, residual)
    return ("evict", rule, budget) if bits == 16 else None


def all_settings() -> list[tuple]:
    """Every setting of the grid (the exact cache first)."""
    quant = [("quant", b, k, v, r) for b in BITS[1:] for k in GROUPINGS for v in GROUPINGS for r in RESIDUALS]
    return [("exact",)] + quant + [("evict", rule, n) for rule in RULES[1:] for n in BUDGETS]


def make_cache(key: tuple):
    """A fresh cache of the setting ``key`` (see ``setting_key``)."""
    if key[0] == "quant":
        _, bits, k, v, r = key
        return QuantizedKVCache(bits=bits, key_group=k, value_group=v, residual=r, group_size=GROUP_SIZE)
    if key[0] == "evict":
        return EvictingKVCache(key[2], key[1], sinks=SINKS, window=WINDOW)
    return KVCache()


def quantized_kv_bytes(n_layers: int, batch_size: int, n_kv_heads: int, seq_len: int, head_dim: int, bits: int,
                       key_group: str = "channel", value_group: str = "token", group_size: int = 32,
                       residual: int = 128, dtype="float16") -> dict:
    """Notebook 04's ``2 x L x B x H_kv x T x d_h x bytes``, with bits per value: what a ``QuantizedKVCache``
    stores after ``seq_len`` tokens. ``codes``: ``bits / 8`` bytes per quantized value; ``scales``: a float16
    scale and minimum per group (a per-channel group spans ``group_size`` positions of one channel, a
    per-token group the ``d_h`` channels of one position); ``tail``: the positions not yet quantized, in
    ``dtype``. ``bits=16`` means no quantization: every position in ``dtype``. Returns those and ``total``."""
    rows = n_layers * batch_size * n_kv_heads  # one (layer, row, head): K and V are counted below
    if bits == 16:
        return {"codes": 0, "scales": 0, "tail": 2 * rows * seq_len * head_dim * bytes_per_element(dtype),
                "total": 2 * rows * seq_len * head_dim * bytes_per_element(dtype), "quantized": 0}
    excess = max(seq_len - residual, 0)
    per_channel = "channel" in (key_group, value_group)  # then positions leave the tail a group at a time
    n_q = group_size * (excess // group_size) if per_channel else excess
    codes = 2 * rows * n_q * head_dim * bits // 8
    stats = sum(rows * (n_q // group_size * head_dim if g == "channel" else n_q) * 2 * 2  # scale and min, float16
                for g in (key_group, value_group))
    tail = 2 * rows * (seq_len - n_q) * head_dim * bytes_per_element(dtype)
    return {"codes": codes, "scales": stats, "tail": tail, "total": codes + stats + tail, "quantized": n_q}


def cache_bytes(cfg, key: tuple, seq_len: int, dtype="float32") -> int:
    """Bytes the cache of setting ``key`` holds after ``seq_len`` tokens (batch of one), by the formula."""
    shape = (cfg.n_layers, 1, cfg.n_kv_heads)
    if key[0] == "quant":
        _, bits, k, v, r = key
        return quantized_kv_bytes(*shape, seq_len, cfg.head_dim, bits, k, v, GROUP_SIZE, r, dtype)["total"]
    kept = min(seq_len, key[2]) if key[0] == "evict" else seq_len
    return quantized_kv_bytes(*shape, kept, cfg.head_dim, 16, dtype=dtype)["total"]


def quality_grid(model, docs, settings=None) -> dict:
    """``setting -> CacheQuality`` for every setting (default ``all_settings()``) on ``docs``, each run against
    the exact cache with ``compare_cache(model, docs, ..., N_PREFILL)`` (the exact run made once). The exact cache's own entry is built
    from the others' ``loss_exact`` (a run against itself changes nothing); ``bytes_ratio`` holds the last
    document's bytes (``cache_ratio`` pools every document's)."""
    settings = all_settings() if settings is None else settings
    exact = exact_run(model, docs, N_PREFILL)  # the exact side once, shared by every setting
    measured = {key: compare_cache(model, docs, lambda key=key: make_cache(key), N_PREFILL, exact=exact)
                for key in settings if key[0] != "exact"}
    some = next(iter(measured.values()))
    exact = CacheQuality(0.0, 1.0, some.loss_exact, some.loss_exact, some.nbytes_exact, some.nbytes_exact)
    return {("exact",): exact, **measured}  # the exact cache first, as in all_settings()


def cache_ratio(cfg, key: tuple, lengths) -> float:
    """Bytes of the setting's caches over the exact caches' bytes, pooled over documents of ``lengths``
    tokens (each ends holding ``length - 1``: the last token is predicted, never fed)."""
    return sum(cache_bytes(cfg, key, n - 1) for n in lengths) / sum(cache_bytes(cfg, ("exact",), n - 1) for n in lengths)


def describe(key: tuple | None) -> str:
    """The setting in words (for the panel and the notebook's tables)."""
    if key is None:
        return tr("quantized and evicting at once")
    if key[0] == "exact":
        return tr("exact cache (no quantization, no eviction)")
    if key[0] == "quant":
        _, bits, k, v, r = key
        return tr("{bits}-bit, K {k}, V {v}, residual {r}", bits=bits, k=tr(GROUP_NAMES[k]), v=tr(GROUP_NAMES[v]), r=r)
    return tr("evict by {rule}, budget {n}", rule=tr(RULE_NAMES[key[1]]), n=key[2])


def tradeoff_points(cfg, grid: dict, docs) -> list[tuple]:
    """``(key, bytes ratio pooled over docs, CacheQuality)`` for every setting of ``grid``."""
    lengths = [int(d.shape[-1]) for d in docs]
    return [(key, cache_ratio(cfg, key, lengths), q) for key, q in grid.items()]


def sizing(bits: int, key_group: str, value_group: str) -> dict:
    """The formula for ``SIZING_MODEL`` at ``SIZING_T`` tokens: bits -> the parts of ``quantized_kv_bytes``."""
    real = MODEL_PRESETS[SIZING_MODEL]
    shape = (real.n_layers, 1, real.n_kv_heads, SIZING_T, real.head_dim)
    return {b: quantized_kv_bytes(*shape, b, key_group, value_group, SIZING_GROUP, SIZING_RESIDUAL) for b in BITS}


def tradeoff_state(points: list[tuple], n_docs: int, bits: int, key_group: str, value_group: str, residual: int,
                   rule: str, budget: int, measure: str) -> dict:
    """What ``plot_compression_tradeoff`` draws for one setting (the panel's ``state``): ``points`` from
    ``tradeoff_points``; the setting's ``key``, ``ratio`` and ``quality`` (None when not measured). Each value
    must be one the panel offers: another (bits=2, rule="h2o") is a ValueError naming it."""
    for name, value, allowed in (("bits", bits, BITS), ("key_group", key_group, GROUPINGS),
                                 ("value_group", value_group, GROUPINGS), ("residual", residual, RESIDUALS),
                                 ("rule", rule, RULES), ("budget", budget, BUDGETS), ("measure", measure, MEASURES)):
        check_choice(name, value, allowed)
    key = setting_key(bits, key_group, value_group, residual, rule, budget)
    found = next(((r, q) for k, r, q in points if k == key), None)
    exact = next(q for k, _, q in points if k == ("exact",))
    return {"key": key, "bits": bits, "rule": rule, "measure": measure, "points": points,
            "ratio": found[0] if found else None, "quality": found[1] if found else None,
            "loss_exact": exact.loss_exact, "n_docs": n_docs, "sizing": sizing(bits, key_group, value_group),
            "sizing_bits": bits, "sizing_model": SIZING_MODEL, "sizing_T": SIZING_T, "sizing_group": SIZING_GROUP,
            "sizing_residual": SIZING_RESIDUAL}


class CacheCompressionPanel(Panel):
    """13 · A smaller KV cache: memory against quality, every setting measured on held-out documents.

    ``CacheCompressionPanel(model, tok)`` measures every setting of ``all_settings()`` on ``n_docs`` held-out
    documents when it is built (or takes ``grid=``, ``docs=`` already measured). ``state``: ``key`` (None when
    quantizing and evicting at once: not measured), ``quality`` (a ``CacheQuality``), ``ratio`` (bytes over
    the exact cache's, pooled over the documents), ``points`` (every setting: key, ratio, quality), ``sizing``
    (the formula for ``SIZING_MODEL`` at ``SIZING_T`` tokens, per bits)."""

    title = "A smaller KV cache: memory against quality"

    def __init__(self, model, tok=None, *, docs=None, grid: dict | None = None, n_docs: int = N_DOCS) -> None:
        check_model(model)
        if docs is None and tok is None:
            raise ValueError(tr("CacheCompressionPanel needs the tokenizer (to pick held-out documents) or docs="))
        if docs is not None and not len(docs):
            raise ValueError(tr("docs is empty: pass at least one [1, T] document (e.g. held_out_docs(tok)), or leave "
                                "docs out and pass the tokenizer"))
        if grid is not None and ("exact",) not in grid:
            raise ValueError("grid must hold the exact cache's entry ('exact',): make it with quality_grid(model, docs)")
        self.cfg = model.cfg
        self.docs = docs if docs is not None else held_out_docs(tok, n_docs, MIN_TOKENS)
        self.grid = grid if grid is not None else quality_grid(model, self.docs)
        self.points = tradeoff_points(self.cfg, self.grid, self.docs)
        super().__init__({
            "bits": dropdown(tr("bits per value"), [(tr("16 (off)"), 16), ("8", 8), ("4", 4)], 4),
            "key_group": dropdown(tr("K grouping"), [(tr(GROUP_NAMES[g]), g) for g in GROUPINGS], "channel"),
            "value_group": dropdown(tr("V grouping"), [(tr(GROUP_NAMES[g]), g) for g in GROUPINGS], "token"),
            "residual": selection_slider(tr("residual (exact positions)"), list(RESIDUALS), 2),
            "rule": dropdown(tr("eviction rule"), [(tr(RULE_NAMES[r]), r) for r in RULES], "none"),
            "budget": selection_slider(tr("budget (positions)"), list(BUDGETS), BUDGETS[0]),
            "measure": dropdown(tr("quality measure"), [(tr("held-out loss"), "loss"), (tr("greedy match"), "match"),
                                                        (tr("max |Δlogits|"), "max_diff")], "loss"),
        })

    def compute(self, bits: int, key_group: str, value_group: str, residual: int, rule: str, budget: int,
                measure: str) -> dict:
        return tradeoff_state(self.points, len(self.docs), bits, key_group, value_group, residual, rule, budget, measure)

    def render(self, s: dict) -> str:
        if s["key"] is None:
            head = ("<p style='color:#b00'>" + tr("Quantizing and evicting at once is not measured here: this course's "
                                                   "caches do one or the other. Set bits to 16 (off) to see eviction, "
                                                   "or the rule to none to see quantization.") + "</p>")
        elif s["quality"] is None:  # a grid measured on fewer settings than the controls offer
            head = "<p style='color:#b00'>" + html.escape(in_language({
                "en": f"{describe(s['key'])}: not measured in this panel's grid (it was built with fewer settings).",
                "zh": f"{describe(s['key'])}：这个面板的网格里没有测这个设置（建网格时只测了一部分设置）。"})) + "</p>"
        else:
            q = s["quality"]
            head = "<p>" + tr("<b>{setting}</b>: the cache holds <b>{ratio:.0%}</b> of the exact cache's bytes. On {n} "
                              "held-out documents: loss {exact:.4f} → <b>{loss:.4f}</b> nats/token, greedy match "
                              "<b>{match:.1%}</b>, max |Δlogits| <b>{diff:.3f}</b>.", setting=html.escape(describe(s["key"])),
                              ratio=s["ratio"], n=s["n_docs"], exact=q.loss_exact, loss=q.loss_cache,
                              match=q.greedy_match, diff=q.max_logit_diff) + "</p>"
        size = s["sizing"]
        now = size[s["sizing_bits"]]
        if s["sizing_bits"] == 16:
            foot = tr("Sizing formula, {model} at {T} tokens (B = 1): float16, no quantization: <b>{full}</b>.",
                      model=s["sizing_model"], T=s["sizing_T"], full=format_bytes(now["total"]))
        else:
            foot = tr("Sizing formula, {model} at {T} tokens (B = 1, groups of {g}, residual {r}): float16 {full}; "
                      "{bits}-bit: <b>{total}</b> = codes {codes} + scales and minimums {scales} + exact tail {tail}.",
                      model=s["sizing_model"], T=s["sizing_T"], g=SIZING_GROUP, r=SIZING_RESIDUAL,
                      full=format_bytes(size[16]["total"]), bits=s["sizing_bits"], total=format_bytes(now["total"]),
                      codes=format_bytes(now["codes"]), scales=format_bytes(now["scales"]),
                      tail=format_bytes(now["tail"]))
        return f"{head}<p>{foot}</p>"

    def plot(self, s: dict):
        return plot_compression_tradeoff(s)
