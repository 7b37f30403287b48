"""What the self-test's answers are computed from: small runs of the course package, on first read.

The bank (``bank_00_04.py``, ``bank_05_06.py``, ``bank_07_08.py``; ``appendix.py`` computes its own)
states the questions; the numbers and observations behind their answers come from here, computed
with the functions the notebooks use (a real prefill, ``StaticKVCache``, ``filtered_probs``, a
sliding-window cache, ``utils.roofline``, the bug lab's broken engines). Nothing runs at import: each
function builds what it needs when first called and keeps the result.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import torch

from ..attention import causal_mask
from ..bug_lab import catalogue as bugs
from ..bug_lab.harness import run_check
from ..cache import KVCache, StaticKVCache
from ..config import ModelConfig
from ..generate import GenerationResult, decode_step, prefill
from ..model import Decoder
from ..recompute import TOL
from ..roofline import GPU_ROOFS, decode_point, prefill_point, ridge_batch
from ..sampling import filtered_probs
from ..sizing import MODEL_PRESETS
from ..sliding import SlidingWindowKVCache, band_mask, feed

# The models the questions ask about, shared by the bank's modules.
LLAMA2 = MODEL_PRESETS["Llama-2-7B"]  # MHA
LLAMA3 = MODEL_PRESETS["Llama-3-8B"]  # GQA
ROOF_MODEL = "Llama-2-7B"  # the roofline questions' model, in float16
TINY = ModelConfig(vocab_size=64, n_layers=2, n_heads=4, n_kv_heads=2, d_model=64, d_ff=128, max_seq_len=64)


@cache
def tiny_model() -> Decoder:
    with torch.random.fork_rng():  # do not disturb the caller's seed
        torch.manual_seed(0)
        return Decoder(TINY).eval()


# --- shapes, positions, bytes ---------------------------------------------------------------------

@cache
def first_new_position(prompt_len: int) -> int:
    """Prefill a ``prompt_len``-token prompt: the next token's position is the cache length."""
    _, kv = prefill(tiny_model(), torch.zeros(1, prompt_len, dtype=torch.long))
    return kv.seq_len


@cache
def prefill_k_shape(B: int, T: int) -> str:
    """Shape of layer 0's cached K after prefilling ``B`` prompts of ``T`` tokens, as ``[B, H_kv, T, d_h]``."""
    _, kv = prefill(tiny_model(), torch.zeros(B, T, dtype=torch.long))
    return str(list(kv.layer_kv(0)[0].shape))  # (B, H_kv, T, d_h)


def decode_row_all_true() -> bool:
    return bool(causal_mask(1, 13).all())  # the one new query vs 12 cached keys + itself


@cache
def static_bytes(max_len: int) -> int:
    """Bytes of a float32 ``StaticKVCache`` of the tiny model for one row of ``max_len`` positions."""
    return StaticKVCache(TINY, batch_size=1, max_len=max_len, dtype=torch.float32).nbytes


# --- sampling and metrics -------------------------------------------------------------------------

def nucleus_size(logits: list[float], p: float) -> int:
    return int((filtered_probs(torch.tensor([logits]), 1.0, top_p=p) > 0).sum())


def tpot_ms(ttft_s: float, decode_s: float, n_after_first: int) -> float:
    """TPOT of a generation whose ``n_after_first`` tokens after the first took ``decode_s`` in all."""
    steps = [decode_s / n_after_first] * n_after_first
    tokens = torch.zeros(1, n_after_first + 1, dtype=torch.long)  # (B, n): only the timings matter here
    result = GenerationResult(tokens, [n_after_first + 1], ["max_new_tokens"], ttft_s, steps)
    return round(result.tpot_s * 1e3, 6)


# --- sliding windows ------------------------------------------------------------------------------

@cache
def sliding_window(window: int, n_tokens: int) -> tuple[int, int]:
    """Feed ``n_tokens`` into a sliding-window cache: (positions stored per layer, next position)."""
    kv = SlidingWindowKVCache(window)
    feed(tiny_model(), torch.zeros(1, n_tokens, dtype=torch.long), kv)
    return kv.seq_len, kv.seen_tokens()


def window_span(window: int, position: int) -> str:
    """The positions the query at ``position`` attends to under a window of ``window``, as "first..last"."""
    seen = band_mask(position + 1, window)[position].nonzero().flatten()  # (n_keys,) key positions
    return f"{int(seen[0])}..{int(seen[-1])}"


@cache
def next_token_span(window: int, n_fed: int) -> tuple[int, str]:
    """Decode one token after ``n_fed`` into a sliding-window cache: (its position, its keys "first..last")."""
    model, kv = tiny_model(), SlidingWindowKVCache(window)
    feed(model, torch.zeros(1, n_fed, dtype=torch.long), kv)
    position = kv.seen_tokens()
    with torch.inference_mode():
        decode_step(model, torch.zeros(1, dtype=torch.long), kv)
    span = f"{position - kv.seq_len + 1}..{position}"  # what the cache holds: the last seq_len positions
    assert span == window_span(window, position), "the cache and the band mask disagree"
    return position, span


# --- the roofline ---------------------------------------------------------------------------------

def decode_intensities(preset: str, batches: tuple[int, ...], context_len: int) -> list[float]:
    """FLOPs per byte of a float16 decode step of each batch size (``utils.roofline.decode_point``)."""
    cfg = MODEL_PRESETS[preset]
    return [decode_point(cfg, B, context_len, "float16")["intensity"] for B in batches]


def closest_law(laws: dict, preset: str, batches: tuple[int, ...]) -> str:
    """The name of the law ``B -> FLOPs per byte`` in ``laws`` closest (in log ratio) to the measured decode steps."""
    got = decode_intensities(preset, batches, 1)
    return min(laws, key=lambda name: sum(abs(math.log(laws[name](B) / x)) for B, x in zip(batches, got)))


def prefill_intensity(preset: str, prompt_len: int) -> float:
    return prefill_point(MODEL_PRESETS[preset], prompt_len, "float16")["intensity"]


def gpu_ridges() -> dict[str, float]:
    """Each published GPU's ridge point, FLOPs per byte (``utils.roofline.GPU_ROOFS``)."""
    return {r.name: r.ridge for r in GPU_ROOFS}


def ridge_batch_of(preset: str, context_len: int, gpu: str) -> int | None:
    """The smallest float16 decode batch that is compute-bound on ``gpu`` (None: never, up to 4096)."""
    roofs = next(r for r in GPU_ROOFS if r.name == gpu)
    return ridge_batch(MODEL_PRESETS[preset], context_len, roofs, "float16")


# --- the bug lab's step-1 bugs, told apart --------------------------------------------------------

PROMPT_LEN = 6  # T of the prompt the bugs are measured on


@dataclass(frozen=True)
class Evidence:
    """What a probe of one broken engine shows, after a ``PROMPT_LEN``-token prefill and one decode step.

    ``step``: "step s" (first step beyond ``TOL``) or "raises at step s"; ``seq_len``: cache.seq_len
    after the step, in terms of T (e.g. "T + 1"); ``new_key``: whether layer 0's newly cached key equals a full
    prefill's key at that position; ``first_layer``: the first layer whose output for the new token
    differs from the recompute's (both None when the step raises).
    """

    step: str
    seq_len: str
    new_key: str | None
    first_layer: int | None
    n_cached: int  # cache.seq_len itself, for T = PROMPT_LEN

    def words(self, lang: str = "en") -> str:
        """The evidence as one clause, in ``lang`` ("en" or "zh")."""
        if lang == "zh":
            said = f"第 {self.step.rsplit(' ', 1)[1]} 步" + ("抛出异常" if self.step.startswith("raises") else "起偏离")
            parts = [said, f"cache.seq_len 为 {self.n_cached}（{self.seq_len}）"]
            if self.new_key is not None:
                parts += [f"第 0 层新写入的键与完整预填充的{'一致' if self.new_key == 'matches' else '不同'}",
                          f"第一个出错的输出在第 {self.first_layer} 层"]
            return "，".join(parts)
        length = f"cache.seq_len {self.n_cached} ({self.seq_len})"
        if self.new_key is None:
            return f"{self.step}, {length}"
        return f"{self.step}, {length}, layer 0's new key {self.new_key}, first wrong output: layer {self.first_layer}"


def _engines() -> dict[str, tuple]:
    """The bug lab's broken (prefill_fn, step_fn) pairs that leave the prefill intact, by diagnosis word."""
    refeed = bugs.FeedEverything()  # it remembers the text: a fresh one per probe
    return {"position": (prefill, bugs.step_position_restarts),
            "mask": (prefill, bugs.step_mask_ignores_cache),
            "axis": (bugs.prefill_into(bugs.ConcatOnHeadsKVCache), decode_step),
            "layer0": (bugs.prefill_into(bugs.Layer0HistoryKVCache), decode_step),
            "refeed": (refeed.prefill, refeed.step)}


def _in_t(n: int, T: int) -> str:
    """A cache length ``n`` written in terms of the prompt length ``T``."""
    extra = n - T
    if extra == 0:
        return "T"
    return "2T + 1" if extra == T + 1 else f"T + {extra}"


@torch.inference_mode()
def _probe(model, prompt: torch.Tensor, prefill_fn, step_fn) -> Evidence:
    T = prompt.shape[1]
    outcome = run_check(model, prompt, 2, prefill_fn=prefill_fn, step_fn=step_fn)
    step = f"raises at step {outcome.error_step}" if outcome.error else f"step {outcome.first_step}"
    logits, kv = prefill_fn(model, prompt, None, KVCache())
    token = logits.argmax(-1)  # (B,)
    seen: dict[int, torch.Tensor] = {}  # layer -> its output for the newest token, in the run in progress
    hooks = [layer.register_forward_hook(lambda module, args, out, i=i: seen.__setitem__(i, out[:, -1]))
             for i, layer in enumerate(model.layers)]
    try:
        try:
            step_fn(model, token, kv)
        except RuntimeError:  # the broken cache raised: nothing more to probe
            return Evidence(step, _in_t(kv.seq_len, T), None, None, kv.seq_len)
        cached = dict(seen)  # layer -> (B, C)
        _, ref = prefill(model, torch.cat([prompt, token[:, None]], dim=1))  # the T + 1 tokens, no bug
        recomputed = dict(seen)
    finally:
        for h in hooks:
            h.remove()
    same_key = (kv.layer_kv(0)[0][:, :, -1] - ref.layer_kv(0)[0][:, :, -1]).abs().max() <= TOL  # (B, H_kv, d_h)
    first = next(i for i in range(len(model.layers)) if not (cached[i] - recomputed[i]).abs().max() <= TOL)
    return Evidence(step, _in_t(kv.seq_len, T), "matches" if same_key else "differs", first, kv.seq_len)


@cache
def bug_evidence() -> dict[str, Evidence]:
    """Each step-1 bug's evidence, measured on the tiny model: diagnosis word -> ``Evidence``."""
    model = tiny_model()
    prompt = torch.randint(1, TINY.vocab_size, (1, PROMPT_LEN), generator=torch.Generator().manual_seed(0))
    return {word: _probe(model, prompt, *engine) for word, engine in _engines().items()}


def suspect(**observed) -> str:
    """The one bug whose measured evidence shows every ``observed`` field (e.g. ``seq_len="2T + 1"``)."""
    fits = [w for w, ev in bug_evidence().items() if all(getattr(ev, k) == v for k, v in observed.items())]
    if len(fits) != 1:
        raise ValueError(f"evidence {observed} fits {fits}, not exactly one bug")
    return fits[0]


def evidence_lines(words=None) -> dict[str, str]:
    """The measured evidence of ``words`` (default: every step-1 bug), one "word: ..." clause each, in
    each language: {"en": ..., "zh": ...}."""
    evidence = bug_evidence()
    words = words or list(evidence)
    return {"en": "; ".join(f"{w}: {evidence[w].words()}" for w in words),
            "zh": "；".join(f"{w}：{evidence[w].words('zh')}" for w in words)}
