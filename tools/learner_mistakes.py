"""Scripted learner mistakes on the appendix APIs (paged, evicting and quantized caches, cache quality,
speculative decoding, beams, the bug lab's mysteries, the exercises, the panels, the loaders, the
NameError hint), each judged: did it behave well?

Behaving well is one of two things: a ``ValueError`` whose message names the bad value (each case lists
the words it must contain), or the right answer (each case says what that is). Anything else is counted
against the course: another exception (a raw AttributeError, a torch shape error from deep inside), a
wrong answer given silently, a hang (each case gets CASE_TIMEOUT seconds), or an allocation past the
memory this process may take (the address space is capped, so a 30 GB preallocation fails fast here
instead of taking the machine down).

    python tools/learner_mistakes.py            # every case, one line each, then the totals
    python tools/learner_mistakes.py -v         # with each message
    python tools/learner_mistakes.py --strict   # exit 1 if any case did not behave (tests/test_learner_mistakes.py)
    python tools/learner_mistakes.py --language zh   # every case in Chinese (tests/test_i18n_errors.py)

In Chinese (``--language zh``) a message behaves well only if it speaks Chinese too: it holds Chinese
text beside the values it quotes (a Chinese word inside a quoted value does not count), and it names
the bad value as in English (a needle that is an English word may appear as its Chinese, ``NEEDLE_ZH``).
A missing translation, which ``tr`` raises as a ``KeyError``, is a raw error like any other. Each
English message is reported with the file and line that raised it.

The script is written against the course's public names only, so it runs on older and newer versions
of the package alike (the count before a change and after it).
"""
from __future__ import annotations

import contextlib
import io
import re
import resource
import signal
import sys
import time
import traceback
import types
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))

CASE_TIMEOUT = 90  # seconds: longer than any case that works takes
ADDRESS_SPACE = 12 * 2**30  # bytes this process may map: torch's own needs fit, a 33 GB pool does not

resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

import nbformat  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from utils import KVCache, StaticKVCache, decode_step, exercises, generate, load_course_model, prefill  # noqa: E402
from utils.beam import beam_search  # noqa: E402
from utils.block_pool import BlockPool, block_keys  # noqa: E402
from utils.bug_lab import mystery, probe  # noqa: E402
from utils.cache_quality import compare_cache, held_out_docs  # noqa: E402
from utils.course_model import load_draft_model  # noqa: E402
from utils.generate import decode_stepper, make_cache  # noqa: E402
from utils.kv_evict import EvictingKVCache  # noqa: E402
from utils.kv_quant import QuantizedKVCache, dequantize, quantize  # noqa: E402
from utils.paged import PagedKVCache  # noqa: E402
from utils.speculative import PromptLookup, speculative_generate  # noqa: E402
from utils.i18n import set_language  # noqa: E402
from utils.validate import as_id_batch  # noqa: E402

torch.set_num_threads(1)
LANGUAGE = sys.argv[sys.argv.index("--language") + 1] if "--language" in sys.argv[:-1] else "en"
set_language(LANGUAGE)  # before any case is built: a panel made at import speaks it too


class Hang(BaseException):
    """Raised by the alarm: a BaseException, so no ``except Exception`` in the code under test swallows it."""


def _alarm(signum, frame):
    raise Hang()


signal.signal(signal.SIGALRM, _alarm)

MODEL, TOK = load_course_model()
CFG = MODEL.cfg
_loaded = load_draft_model()
DRAFT = _loaded[0] if isinstance(_loaded, tuple) else _loaded
DOCS = held_out_docs(TOK, n_docs=4, min_tokens=12)
PROMPT = torch.tensor([TOK.encode("<BOS> 他 很 喜欢 猫 。 她 也 喜欢 狗 。")])  # (1, 11)
SYSTEM = TOK.encode("<BOS> 他 很 喜欢 猫 。 她 很 喜欢 狗 。 我 很 喜欢 鱼 。")  # 16 tokens
OTHER = TOK.encode("<BOS> 他们 有 两 只 白 猫 。 他们 也 喜欢 狗 。 我 有")  # 16 tokens, another prompt


# --- how a case is judged ------------------------------------------------------------------------

# A needle that is an English word, as a Chinese message writes it (values and code names stay as they are).
NEEDLE_ZH = {"tensor": "张量", "two": "两", "one": "一", "empty": "空", "iterations": "迭代", "request id": "请求",
             "docs": "文档", "draft": "草稿", "cache": "缓存", "prefill": "预填充", "publish": "发布", "row": "行"}
CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef]")
QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")  # a quoted value: a prompt or a word may be Chinese in any language


def speaks_chinese(message: str) -> bool:
    """Whether ``message`` holds Chinese text of its own, beside the values it quotes."""
    return CJK.search(QUOTED.sub("", message)) is not None


def names(message: str, needle: str) -> bool:
    """Whether ``message`` names ``needle`` (in Chinese: or the Chinese of an English word)."""
    return needle in message or (LANGUAGE == "zh" and NEEDLE_ZH.get(needle, needle) in message)


def raises(*needles, absent=()):
    """Well: a ValueError whose message holds every needle and none of ``absent``."""
    return ("raises", needles, absent)


def returns(check, what):
    """Well: the call returns, and ``check(result)`` is true. ``what``: the right answer, in words."""
    return ("returns", check, what)


def either(needles, check, what):
    """Well: a ValueError naming ``needles``, or a result that passes ``check``."""
    return ("either", needles, check, what)


CASES: list[tuple[str, object, tuple]] = []


def case(what: str, expect: tuple):
    def add(fn):
        CASES.append((what, fn, expect))
        return fn
    return add


def close(a, b, tol=1e-5) -> bool:
    return float((a.float() - b.float()).abs().max()) <= tol


def fresh_logits(ids) -> torch.Tensor:
    with torch.inference_mode():
        return prefill(MODEL, torch.as_tensor(ids).reshape(1, -1))[0]


def paged_with(ids, n_blocks=16, block_size=4) -> PagedKVCache:
    cache = PagedKVCache(CFG, n_blocks=n_blocks, block_size=block_size)
    with torch.inference_mode():
        prefill(MODEL, torch.tensor([ids]), cache=cache)
    return cache


def quiet(fn, *args, **kwargs):
    """fn's result and what it printed."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = fn(*args, **kwargs)
    return out, buf.getvalue()


# --- 1. the paged cache and its block pool --------------------------------------------------------

@case("paged: a prefill after release() gives a fresh prefill's logits", returns(lambda ok: ok, "the same logits"))
def _():
    cache = paged_with(SYSTEM)
    cache.release()
    with torch.inference_mode():
        logits, _ = prefill(MODEL, torch.tensor([OTHER[:6]]), cache=cache)
    return close(logits, fresh_logits(OTHER[:6]))


@case("paged: crop(2) after release()", either(("2",), lambda c: min(c.lengths, default=0) >= 0, "no negative length"))
def _():
    cache = paged_with(SYSTEM[:8])
    cache.release()
    cache.crop(2)
    return cache


@case("paged: decode_step after release()", raises("cache"))
def _():
    cache = paged_with(SYSTEM[:8])
    cache.release()
    decode_step(MODEL, torch.tensor([3]), cache)


@case("paged: release() gives every block back, twice is harmless", returns(lambda n: n == 16, "16 free blocks"))
def _():
    cache = paged_with(SYSTEM)
    cache.release()
    cache.release()
    return cache.pool.n_free()


@case("paged: after release() the cache reports seq_len 0", returns(lambda n: n == 0, "0"))
def _():
    cache = paged_with(SYSTEM)
    cache.release()
    return cache.seq_len


@case("paged: generate after release() equals a fresh generate",
      returns(lambda ok: ok, "the same tokens as a fresh cache"))
def _():
    cache = paged_with(SYSTEM)
    cache.release()
    with torch.inference_mode():
        logits, _ = prefill(MODEL, torch.tensor([OTHER[:5]]), cache=cache)
        first = logits.argmax(-1)
        second = decode_step(MODEL, first, cache).argmax(-1)
    ref = generate(MODEL, OTHER[:5], 2).tokens[0]
    return int(first) == int(ref[0]) and int(second) == int(ref[1])


for _shape, _make in (("[1, T] tensor", lambda ids: torch.tensor([ids])), ("1-D tensor", lambda ids: torch.tensor(ids)),
                      ("numpy array", lambda ids: np.array(ids)), ("[1, T] numpy array", lambda ids: np.array([ids])),
                      ("tuple", tuple)):
    case(f"block_keys of a {_shape}: the keys of the list", returns(lambda ok: ok, "block_keys(list) keys"))(
        lambda make=_make: block_keys(make(SYSTEM), 4) == block_keys(SYSTEM, 4))

for _bad in (-4, 0, 2.5, True, "4"):
    case(f"block_keys(ids, {_bad!r})", raises(repr(_bad) if isinstance(_bad, str) else str(_bad), "block_size"))(
        lambda bad=_bad: block_keys(SYSTEM, bad))

case("block_keys of text", raises("tok.encode"))(lambda: block_keys("<BOS> 他 很 喜欢", 4))
case("block_keys of a [2, T] batch", raises("2"))(lambda: block_keys(torch.tensor([SYSTEM, SYSTEM]), 4))
case("block_keys of float ids", raises("float"))(lambda: block_keys(torch.tensor(SYSTEM, dtype=torch.float32), 4))


@case("match_prefix of a [1, T] tensor finds the published blocks", returns(lambda n: n == 4, "4 blocks"))
def _():
    cache = paged_with(SYSTEM)
    cache.pool.publish(cache.tables[0], SYSTEM, len(SYSTEM))
    return len(cache.pool.match_prefix(torch.tensor([SYSTEM])))


case("match_prefix of text", raises("tok.encode"))(lambda: BlockPool(CFG, 4, 4).match_prefix("<BOS> 他 很 喜欢 猫"))


@case("publish_prefix of another prompt than the row holds", raises("publish"))
def _():
    cache = paged_with(SYSTEM)
    cache.publish_prefix(OTHER)


@case("publish_prefix of a prompt longer than the row holds, after reuse_prefix", raises("publish"))
def _():
    cache = PagedKVCache(CFG, n_blocks=16, block_size=4)
    n = cache.reuse_prefix(SYSTEM[:8])
    with torch.inference_mode():
        prefill(MODEL, torch.tensor([SYSTEM[n:8]]), cache=cache)
    cache.publish_prefix(OTHER)


@case("publish_prefix before any prefill", raises("prefill"))
def _():
    PagedKVCache(CFG, n_blocks=8, block_size=4).publish_prefix(SYSTEM)


@case("publish_prefix(row=3) on a one-row cache", raises("row", "3"))
def _():
    cache = PagedKVCache(CFG, n_blocks=16, block_size=4)
    n = cache.reuse_prefix(SYSTEM)
    with torch.inference_mode():
        prefill(MODEL, torch.tensor([SYSTEM[n:]]), cache=cache)
    cache.publish_prefix(SYSTEM, row=3)


@case("reuse_prefix, prefill the rest, publish the same prompt: a second request finds it",
      returns(lambda n: n == 15, "15 tokens found"))
def _():
    first = PagedKVCache(CFG, n_blocks=16, block_size=4)
    n = first.reuse_prefix(SYSTEM)
    with torch.inference_mode():
        prefill(MODEL, torch.tensor([SYSTEM[n:]]), cache=first)
    first.publish_prefix(SYSTEM)
    return PagedKVCache(pool=first.pool).reuse_prefix(SYSTEM)


case("reuse_prefix of text", raises("tok.encode"))(
    lambda: PagedKVCache(CFG, n_blocks=8, block_size=4).reuse_prefix("<BOS> 他 很 喜欢"))
case("reuse_prefix of a [1, T] tensor", returns(lambda n: n == 0, "0 (nothing cached yet)"))(
    lambda: PagedKVCache(CFG, n_blocks=8, block_size=4).reuse_prefix(torch.tensor([SYSTEM[:6]])))
case("reuse_prefix of a [2, T] batch", raises("2"))(
    lambda: PagedKVCache(CFG, n_blocks=8, block_size=4).reuse_prefix(torch.tensor([SYSTEM[:6], SYSTEM[:6]])))

for _what, _call, _needle in (
        ("BlockPool.release(-1)", lambda p: p.release(-1), "-1"),
        ("BlockPool.release(10) on 6 blocks", lambda p: p.release(10), "10"),
        ("BlockPool.share(10) on 6 blocks", lambda p: p.share(10), "10"),
        ("BlockPool.share(-1)", lambda p: p.share(-1), "-1"),
        ("BlockPool.copy_block(7) on 6 blocks", lambda p: p.copy_block(7), "7"),
        ("BlockPool.copy_block(-2)", lambda p: p.copy_block(-2), "-2"),
        ("BlockPool.release(1.0)", lambda p: p.release(1.0), "1.0"),
        ("BlockPool.release_table([0, 9])", lambda p: p.release_table([0, 9]), "9")):
    case(_what, raises(_needle))(lambda call=_call: call(_held_pool()))


def _held_pool() -> BlockPool:
    pool = BlockPool(CFG, 6, 4)
    for _ in range(6):
        pool.allocate()
    return pool


@case("BlockPool.release(-1) must not free the last block", either(("-1",), lambda ref: ref == 1, "ref 1 kept"))
def _():
    pool = _held_pool()
    try:
        pool.release(-1)
    except ValueError:
        raise
    return pool.ref[5]


case("PagedKVCache(cfg, n_blocks=10**6): 33 GB", raises("n_blocks", "GB"))(
    lambda: PagedKVCache(CFG, n_blocks=10**6, block_size=16))
case("BlockPool(cfg, 10**6, 16)", raises("n_blocks", "GB"))(lambda: BlockPool(CFG, 10**6, 16))
case("StaticKVCache(cfg, 10**5, 256): 52 GB", raises("batch_size", "GB"))(lambda: StaticKVCache(CFG, 10**5, 256))
case("make_cache('static', cfg, 10**5, 256)", raises("GB"))(lambda: make_cache("static", CFG, 10**5, 256))
case("make_cache('paged', cfg, 10**5, 256)", raises("GB"))(lambda: make_cache("paged", CFG, 10**5, 256))
case("PagedKVCache(cfg, n_blocks=8, block_size=0)", raises("block_size"))(lambda: PagedKVCache(CFG, 8, 0))
case("PagedKVCache(cfg, n_blocks=0)", raises("n_blocks"))(lambda: PagedKVCache(CFG, 0, 4))
case("PagedKVCache(cfg, n_blocks=2.5)", raises("n_blocks"))(lambda: PagedKVCache(CFG, 2.5, 4))
case("a small StaticKVCache is still allowed", returns(lambda c: c.max_len == 64, "a cache"))(
    lambda: StaticKVCache(CFG, 4, 64))

# --- 2. make_cache, decode_stepper, generate's ids -----------------------------------------------

case("make_cache('Dynamic', ...)", raises("'Dynamic'"))(lambda: make_cache("Dynamic", CFG, 1, 10))
case("make_cache('pages', ...)", raises("'pages'"))(lambda: make_cache("pages", CFG, 1, 10))
case("make_cache(None, ...)", raises("None"))(lambda: make_cache(None, CFG, 1, 10))
case("make_cache('paged', cfg, 0, 10)", raises("batch_size"))(lambda: make_cache("paged", CFG, 0, 10))
case("make_cache('static', cfg, 0, 10)", raises("batch_size"))(lambda: make_cache("static", CFG, 0, 10))
case("make_cache('paged', cfg, 1, 0)", raises("max_len"))(lambda: make_cache("paged", CFG, 1, 0))
case("make_cache('dynamic', ...) is a KVCache", returns(lambda c: type(c) is KVCache, "a KVCache"))(
    lambda: make_cache("dynamic", CFG, 1, 10))
case("decode_stepper(model, None)", raises("cache", absent=('step="modules"',)))(lambda: decode_stepper(MODEL, None))
case("decode_stepper(model, None, step='modules')", raises("cache"))(
    lambda: decode_stepper(MODEL, None, step="modules"))
case("decode_stepper(model, 'dynamic')", raises("cache"))(lambda: decode_stepper(MODEL, "dynamic"))
case("decode_stepper(tok, cache)", raises("Tokenizer"))(lambda: decode_stepper(TOK, KVCache()))
case("as_id_batch of text", raises("tok.encode"))(lambda: as_id_batch("<BOS> 他 有"))
case("as_id_batch of an int", raises("5"))(lambda: as_id_batch(5))
case("as_id_batch of a 0-d tensor", raises("tensor"))(lambda: as_id_batch(torch.tensor(5)))
case("as_id_batch of a list of texts", raises("tok.encode"))(lambda: as_id_batch(["<BOS> 他 有"]))
case("as_id_batch of numpy [T]", returns(lambda t: isinstance(t, torch.Tensor) and t.shape == (1, 3), "[1, 3]"))(
    lambda: as_id_batch(np.array([1, 3, 10])))
case("as_id_batch of numpy [1, T]", returns(lambda t: isinstance(t, torch.Tensor) and t.shape == (1, 3), "[1, 3]"))(
    lambda: as_id_batch(np.array([[1, 3, 10]])))
case("as_id_batch of a 3-D tensor", raises("(1, 1, 3)"))(lambda: as_id_batch(torch.ones(1, 1, 3, dtype=torch.long)))
case("generate of text", raises("tok.encode"))(lambda: generate(MODEL, "<BOS> 他 有", 3))
case("generate of numpy ids", returns(lambda r: r.tokens.shape == (1, 3), "3 tokens"))(
    lambda: generate(MODEL, np.array(TOK.encode("<BOS> 他 有")), 3))
case("generate of numpy int32 [1, T]", returns(lambda r: r.tokens.shape == (1, 3), "3 tokens"))(
    lambda: generate(MODEL, np.array([TOK.encode("<BOS> 他 有")], dtype=np.int32), 3))
case("generate with cache_kind='Paged'", raises("'Paged'"))(lambda: generate(MODEL, [1, 3, 10], 2, cache_kind="Paged"))

# --- 3. the evicting cache -----------------------------------------------------------------------


def _evicting(rule="attention", rows=None):
    rows = rows if rows is not None else [DOCS[0][0, :12].tolist(), DOCS[1][0, :12].tolist()]
    cache = EvictingKVCache(8, rule, sinks=1, window=4)
    with torch.inference_mode():
        prefill(MODEL, torch.tensor(rows), cache=cache)
    return cache


@case("EvictingKVCache.reorder([1, 0]): scores follow the rows", returns(lambda ok: ok, "scores swapped"))
def _():
    cache = _evicting()
    before = [s.clone() for s in cache.scores]
    cache.reorder(torch.tensor([1, 0]))
    return all(torch.equal(s, b[[1, 0]]) for s, b in zip(cache.scores, before))


@case("EvictingKVCache.reorder([1, 0]): positions follow the rows", returns(lambda ok: ok, "positions swapped"))
def _():
    cache = _evicting("key_norm")
    before = [p.clone() for p in cache.positions]
    cache.reorder(torch.tensor([1, 0]))
    return all(torch.equal(p, b[[1, 0]]) for p, b in zip(cache.positions, before))


@case("EvictingKVCache.reorder([0, 0, 0]) then a decode step", returns(lambda n: n == 3, "3 rows of logits"))
def _():
    cache = _evicting("recent", rows=[DOCS[0][0, :12].tolist()])
    cache.reorder([0, 0, 0])
    with torch.inference_mode():
        return decode_step(MODEL, torch.tensor([3, 4, 5]), cache).shape[0]


@case("EvictingKVCache, beam search after a reorder: evicts by each beam's own scores",
      returns(lambda ok: ok, "the same positions as a cache of the chosen row alone"))
def _():
    rows = [DOCS[0][0, :12].tolist(), DOCS[1][0, :12].tolist()]
    both = _evicting(rows=rows)
    alone = _evicting(rows=[rows[1]])
    both.reorder(torch.tensor([1]))
    with torch.inference_mode():
        decode_step(MODEL, torch.tensor([5]), both)
        decode_step(MODEL, torch.tensor([5]), alone)
    return all(torch.equal(a, b) for a, b in zip(both.positions, alone.positions))


case("EvictingKVCache.reorder([2]) on 2 rows", raises("[2]"))(lambda: _evicting().reorder(torch.tensor([2])))
case("EvictingKVCache(8, 'h2o')", raises("'h2o'"))(lambda: EvictingKVCache(8, "h2o"))
case("EvictingKVCache(4, sinks=4, window=16)", raises("budget"))(lambda: EvictingKVCache(4, "recent"))

# --- 4. quantization ------------------------------------------------------------------------------

X = torch.rand(4, 8) * 2 - 1  # values in [-1, 1]
for _bits in (16, 0, 3, 2, -8, 8.0):
    case(f"quantize(x, {_bits!r}, -1)", raises(str(_bits), "bits"))(lambda b=_bits: quantize(X, b, -1))
case("quantize(torch.randn(5), 4, 0): an odd count to pack two per byte", raises("two", "5"))(
    lambda: quantize(torch.randn(5), 4, 0))
case("quantize(x, 8, 5): no axis 5", raises("dim", "5"))(lambda: quantize(X, 8, 5))
case("quantize of a list", raises("tensor"))(lambda: quantize([0.1, 0.5], 8, 0))
case("dequantize 8-bit codes as 4-bit", raises("bits"))(lambda: dequantize(*quantize(X, 8, -1), 4, torch.float32))
case("dequantize 4-bit codes as 8-bit", raises("bits"))(lambda: dequantize(*quantize(X, 4, -1), 8, torch.float32))
case("dequantize with bits=16", raises("16"))(lambda: dequantize(*quantize(X, 8, -1), 16, torch.float32))
case("8-bit round trip within scale / 2", returns(lambda ok: ok, "error <= scale / 2"))(
    lambda: bool(((dequantize(*quantize(X, 8, -1), 8, torch.float32) - X).abs()
                  <= (X.amax(-1, keepdim=True) - X.amin(-1, keepdim=True)) / 255 / 2 + 1e-3).all()))
case("4-bit round trip, per column", returns(lambda t: t.shape == X.shape, "x's shape back"))(
    lambda: dequantize(*quantize(X, 4, 0), 4, torch.float32))


def _qcache_with(d_h=32, H_kv=2, bits=8):
    cache = QuantizedKVCache(bits=bits, residual=2, group_size=4)
    kv = torch.randn(1, H_kv, 6, d_h)
    cache.update(0, kv, kv)
    return cache


case("QuantizedKVCache.update with another d_h", raises("d_h"))(
    lambda: _qcache_with().update(0, torch.randn(1, 2, 1, 16), torch.randn(1, 2, 1, 16)))
case("QuantizedKVCache.update with another H_kv", raises("H_kv"))(
    lambda: _qcache_with().update(0, torch.randn(1, 4, 1, 32), torch.randn(1, 4, 1, 32)))
case("QuantizedKVCache.update with another batch size", raises("B"))(
    lambda: _qcache_with().update(0, torch.randn(3, 2, 1, 32), torch.randn(3, 2, 1, 32)))
case("QuantizedKVCache(bits=16)", raises("16"))(lambda: QuantizedKVCache(bits=16))
case("QuantizedKVCache(bits=4) with an odd d_h", raises("d_h"))(
    lambda: QuantizedKVCache(bits=4).update(0, torch.randn(1, 2, 3, 5), torch.randn(1, 2, 3, 5)))

# --- 5. compare_cache -----------------------------------------------------------------------------

case("compare_cache with one shared cache", raises("make_cache"))(
    lambda: compare_cache(MODEL, DOCS[:2], (lambda shared=KVCache(): shared), 4))
case("compare_cache with a cache instead of a function", raises("make_cache"))(
    lambda: compare_cache(MODEL, DOCS[:2], KVCache(), 4))
case("compare_cache with a function that returns text", raises("make_cache"))(
    lambda: compare_cache(MODEL, DOCS[:2], lambda: "dynamic", 4))
case("compare_cache(tok, ...)", raises("Tokenizer"))(lambda: compare_cache(TOK, DOCS[:2], KVCache, 4))
case("compare_cache(model, tok.encode(doc), ...)", returns(lambda q: q.max_logit_diff == 0, "max_logit_diff 0"))(
    lambda: compare_cache(MODEL, DOCS[0][0].tolist(), KVCache, 4))
case("compare_cache of text", raises("tok.encode"))(
    lambda: compare_cache(MODEL, "<BOS> 他 很 喜欢 猫 。 她 也 喜欢 狗 。", KVCache, 4))
case("compare_cache of a list of texts", raises("tok.encode"))(
    lambda: compare_cache(MODEL, ["<BOS> 他 很 喜欢 猫 。 她 也 喜欢 狗 。"], KVCache, 4))
case("compare_cache(model, [], ...)", raises("empty"))(lambda: compare_cache(MODEL, [], KVCache, 4))
case("compare_cache with the KVCache class: the exact cache against itself",
     returns(lambda q: q.max_logit_diff == 0 and q.greedy_match == 1, "0 and 100%"))(
    lambda: compare_cache(MODEL, DOCS[:2], KVCache, 4))
case("compare_cache of numpy documents", returns(lambda q: q.max_logit_diff == 0, "max_logit_diff 0"))(
    lambda: compare_cache(MODEL, [d.numpy() for d in DOCS[:2]], KVCache, 4))

# --- 6. beams -------------------------------------------------------------------------------------

case("beam_search(tok, ...)", raises("Tokenizer"))(lambda: beam_search(TOK, PROMPT, 2, 3))
case("beam_search(eos_id=[2, 3])", returns(lambda r: r.sequences.shape[0] == 2, "2 beams"))(
    lambda: beam_search(MODEL, PROMPT, 2, 3, eos_id=[TOK.eos_id, 3]))
case("beam_search(eos_id=99)", raises("99"))(lambda: beam_search(MODEL, PROMPT, 2, 3, eos_id=99))
case("beam_search(eos_id='<EOS>')", raises("<EOS>"))(lambda: beam_search(MODEL, PROMPT, 2, 3, eos_id="<EOS>"))
case("beam_search(eos_id=torch.tensor(2))", returns(lambda r: r.sequences.shape[0] == 2, "2 beams"))(
    lambda: beam_search(MODEL, PROMPT, 2, 3, eos_id=torch.tensor(TOK.eos_id)))
case("beam_search of text", raises("tok.encode"))(lambda: beam_search(MODEL, "<BOS> 他 有", 2, 3))
case("beam_search of numpy ids", returns(lambda r: r.sequences.shape == (2, 14), "[2, 14]"))(
    lambda: beam_search(MODEL, PROMPT[0].numpy(), 2, 3))
case("beam_search of a [2, T] batch", raises("2"))(lambda: beam_search(MODEL, PROMPT.repeat(2, 1), 2, 3))
case("beam_search of a list of ids", returns(lambda r: r.sequences.shape == (2, 14), "[2, 14]"))(
    lambda: beam_search(MODEL, PROMPT[0].tolist(), 2, 3))
case("beam_search(n_steps=300)", raises("n_steps"))(lambda: beam_search(MODEL, PROMPT, 2, 300))
case("beam_search(cache_kind='Dynamic')", raises("'Dynamic'"))(
    lambda: beam_search(MODEL, PROMPT, 2, 3, cache_kind="Dynamic"))

# --- 7. speculative decoding ----------------------------------------------------------------------

case("speculative_generate(model, 'lookup', ...)", raises("PromptLookup()"))(
    lambda: speculative_generate(MODEL, "lookup", PROMPT, 5))
case("speculative_generate(model, PromptLookup, ...): the class", raises("PromptLookup()"))(
    lambda: speculative_generate(MODEL, PromptLookup, PROMPT, 5))
case("speculative_generate of text", raises("tok.encode"))(
    lambda: speculative_generate(MODEL, DRAFT, "<BOS> 他 很 喜欢", 5))
case("speculative_generate(max_new_tokens=300)", raises("max_new_tokens", "max_seq_len"))(
    lambda: speculative_generate(MODEL, DRAFT, PROMPT, 300))
case("speculative_generate(max_new_tokens=250), a prompt of 11", raises("max_new_tokens", "256"))(
    lambda: speculative_generate(MODEL, PromptLookup(), PROMPT, 250))
case("speculative_generate(tok, draft, ...)", raises("Tokenizer"))(
    lambda: speculative_generate(TOK, DRAFT, PROMPT, 5))
case("speculative_generate(model, tok, ...): the tokenizer as the draft", raises("Tokenizer"))(
    lambda: speculative_generate(MODEL, TOK, PROMPT, 5))
case("speculative_generate of numpy ids", returns(lambda r: r.tokens.numel() == 5, "5 tokens"))(
    lambda: speculative_generate(MODEL, DRAFT, PROMPT[0].numpy(), 5))
case("speculative_generate(k=0)", raises("k"))(lambda: speculative_generate(MODEL, DRAFT, PROMPT, 5, k=0))
case("PromptLookup().propose of a [1, T] tensor", returns(lambda d: d == PromptLookup().propose(PROMPT[0].tolist(), 4),
                                                          "the proposal of the list"))(
    lambda: PromptLookup().propose(PROMPT, 4))
case("PromptLookup().propose of a 1-D tensor", returns(lambda d: d == PromptLookup().propose(PROMPT[0].tolist(), 4),
                                                       "the proposal of the list"))(
    lambda: PromptLookup().propose(PROMPT[0], 4))
case("PromptLookup().propose of text", raises("tok.encode"))(lambda: PromptLookup().propose("<BOS> 他 有", 4))
case("PromptLookup().propose(seq, -1)", raises("-1"))(lambda: PromptLookup().propose(PROMPT[0].tolist(), -1))

# --- 8. loaders -----------------------------------------------------------------------------------


@case("draft, tok = load_draft_model()", returns(lambda ok: ok, "the draft model and its tokenizer"))
def _():
    draft, tok = load_draft_model()
    return hasattr(draft, "cfg") and hasattr(tok, "encode")


case("load_draft_model(model)", raises("data_dir"))(lambda: load_draft_model(MODEL))
case("load_course_model(model)", raises("data_dir"))(lambda: load_course_model(MODEL))
case("load_draft_model(42)", raises("data_dir"))(lambda: load_draft_model(42))

# --- 9. the bug lab's mysteries --------------------------------------------------------------------

case("mystery(1).check(model, prompt, n_steps=300)", raises("n_steps"))(
    lambda: mystery(1).check(MODEL, PROMPT, n_steps=300))
case("mystery(1).check(model, prompt, n_steps=-1)", raises("n_steps"))(
    lambda: mystery(1).check(MODEL, PROMPT, n_steps=-1))
case("mystery(1).check(model, prompt[0])", returns(lambda o: o.caught, "the bug caught, as with [1, T]"))(
    lambda: mystery(1).check(MODEL, PROMPT[0]))
case("mystery(3).check(model, a list of ids)", returns(lambda o: o.caught, "the bug caught"))(
    lambda: mystery(3).check(MODEL, PROMPT[0].tolist()))
case("mystery(1).check(tok, prompt)", raises("Tokenizer"))(lambda: mystery(1).check(TOK, PROMPT))
case("mystery(1).check(model, text)", raises("tok.encode"))(lambda: mystery(1).check(MODEL, "<BOS> 他 很 喜欢"))
case("mystery(1).check(model, a [2, T] batch)", raises("2"))(lambda: mystery(1).check(MODEL, PROMPT.repeat(2, 1)))
case("probe(tok, prompt, 1)", raises("Tokenizer"))(lambda: probe(TOK, PROMPT, 1))
case("probe(model, text, 1)", raises("tok.encode"))(lambda: probe(MODEL, "<BOS> 他 很 喜欢", 1))
case("probe(model, prompt[0], 1)", returns(lambda p: len(p.rows) == 3, "3 passes"))(lambda: probe(MODEL, PROMPT[0], 1))
case("probe(model, prompt, 1, n_steps=300)", raises("n_steps"))(lambda: probe(MODEL, PROMPT, 1, n_steps=300))
case("probe(model, prompt, 11)", raises("11"))(lambda: probe(MODEL, PROMPT, 11))
case("diagnose(3, 'positions'): a plural", returns(lambda ok: ok is True, "taken as 'position'"))(
    lambda: quiet(exercises.diagnose, 3, "positions")[0])
case("diagnose(3, 'cosmic rays'): a word outside the list",
     returns(lambda r: r[0] is False and "layer0" in r[1], "the list printed, no traceback"))(
    lambda: quiet(exercises.diagnose, 3, "cosmic rays"))
case("mystery('1')", raises("'1'"))(lambda: mystery("1"))

# --- 10. the exercises' judges and runner ----------------------------------------------------------

from utils.exercises import chunk_exercise, paged_exercises, solutions, speculative_exercises  # noqa: E402


def passes(exercise_id, fn):
    report, printed = quiet(exercises.check, exercise_id, fn)
    return report.passed


case("10.grow_table answered with a tuple of numpy ints", returns(lambda ok: ok, "passes"))(
    lambda: passes("10.grow_table", lambda *a: tuple(np.int64(b) for b in paged_exercises.grow_table(*a))))
case("10.prefix_hit answered with a numpy int", returns(lambda ok: ok, "passes"))(
    lambda: passes("10.prefix_hit", lambda *a: np.int64(paged_exercises.prefix_hit(*a))))
case("06.itl_p95 answered with np.float32", returns(lambda ok: ok, "passes"))(
    lambda: passes("06.itl_p95", lambda times: np.float32(solutions.itl_p95(times))))
case("06.itl_p95 answered with a 0-d float tensor", returns(lambda ok: ok, "passes"))(
    lambda: passes("06.itl_p95", lambda times: torch.tensor(solutions.itl_p95(times))))
case("12.accept_prefix answered with a tuple of 0-d tensors", returns(lambda ok: ok, "passes"))(
    lambda: passes("12.accept_prefix", lambda d, t: tuple(torch.tensor(x) for x in
                                                           speculative_exercises.accept_prefix(d, t))))
case("12.accept_prefix answered with a list", returns(lambda ok: ok, "passes"))(
    lambda: passes("12.accept_prefix", lambda d, t: list(speculative_exercises.accept_prefix(d, t))))
case("06.ttft_tpot answered with numpy floats", returns(lambda ok: ok, "passes"))(
    lambda: passes("06.ttft_tpot", lambda *a: tuple(None if x is None else np.float64(x)
                                                     for x in solutions.ttft_tpot(*a))))


@case("a half-written solution (NotImplementedError in its second case)",
      returns(lambda r: r[0] and r[1], "the first case shown, then 'not finished'"))
def _():
    calls = {"n": 0}

    def half(*args):
        calls["n"] += 1
        if calls["n"] > 1:
            raise NotImplementedError
        return paged_exercises.grow_table(*args)
    report, printed = quiet(exercises.check, "10.grow_table", half)
    shown = "✓" in printed and "NotImplementedError" in printed  # the case that ran, and why the next stopped
    return (bool(report.cases) and report.cases[0].ok and not report.passed, shown)


@case("an infinite loop in the learner's function", returns(lambda r: "infinite loop" in r or "死循环" in r,
                                                             "'is there an infinite loop?'"))
def _():
    def forever(*args):
        while True:
            pass
    return quiet(exercises.check, "10.grow_table", forever)[1]


case("a wrong int is still judged wrong", returns(lambda ok: not ok, "fails"))(
    lambda: passes("10.prefix_hit", lambda *a: torch.tensor(paged_exercises.prefix_hit(*a) + 1)))
case("check(id, 5)", raises("5", "int"))(lambda: exercises.check("10.grow_table", 5))


def hint_of(exercise_id, fn) -> str:
    """The hint line a check prints for ``fn`` (the last line), in the current language."""
    return quiet(exercises.check, exercise_id, fn)[1].strip().splitlines()[-1]


def _decode_without_final_norm(model, token_ids, cache):
    from utils.exercises.decode_exercise import variant_step

    return variant_step(model, token_ids, cache, final_norm=False)


def _grow_without_copy(table, n, m, block_size, writable, allocate):
    table = list(table)
    while len(table) * block_size < n + m:
        table.append(allocate())
    return table


def _preempt_the_asking(running, free_blocks):
    free, decode, preempted = free_blocks, [], []
    for rid, held, needs in running:
        if needs > free:
            free += held
            preempted.append(rid)
        else:
            free -= needs
            decode.append(rid)
    return decode, preempted


def _stop_by_regex(text, stops):
    hits = [m.start() for m in (re.search(s, text) for s in stops) if m]
    return text[: min(hits)] if hits else None


# Each wrong solution gets a hint about its own mistake; the needle is code, the same in both languages.
for _id, _what, _fn, _needle in (
        ("01.causal_mask", "a mask that cannot see its own key", lambda T_q, T_k: torch.ones(T_q, T_k).tril(T_k - T_q - 1).bool(),
         "<="),
        ("01.repeat_kv", "x.repeat instead of repeat_interleave", lambda x, n: x.repeat(1, n, 1, 1), "repeat_interleave"),
        ("02.prefill_positions", "cumsum - 1 without the clamp", lambda m: m.long().cumsum(1) - 1, "clamp(min=0)"),
        ("02.prefill_positions", "the batch's largest pad count for every row",
         lambda m: (torch.arange(m.shape[1]) - (m == 0).sum(1).max()).clamp(min=0).expand_as(m), "cumsum(1)"),
        ("02.last_valid_logits", "the count of real tokens as the index (IndexError)",
         lambda logits, m: logits[torch.arange(logits.shape[0]), m.sum(1)], "5 - 1 = 4"),
        ("03.cache_update", "the new positions before the old", lambda ck, cv, k, v: (k, v) if ck is None else
         (torch.cat([k, ck], 2), torch.cat([v, cv], 2)), "torch.cat([cache_k, k_new], dim=2)"),
        ("03.decode_step", "no final norm", _decode_without_final_norm, "model.norm(x)"),
        ("05.top_p", "probabilities returned", lambda logits, p: torch.softmax(solutions.top_p(logits, p), -1),
         "masked_fill"),
        ("05.stop_text", "stop strings searched as regular expressions", _stop_by_regex, "re.escape(s)"),
        ("07.chunk_step", "positions from seq_len in a padded batch",
         lambda m, ids, c: chunk_exercise._variant(m, ids, c, "seq_len"), "cache.mask.sum(1)"),
        ("07.chunk_step", "a causal triangle without the cache offset",
         lambda m, ids, c: chunk_exercise._variant(m, ids, c, "no_offset"), "past + i"),
        ("10.grow_table", "a shared last block written in place", _grow_without_copy, "table[-1] = allocate()"),
        ("11.preempt", "the request asking for a block preempted", _preempt_the_asking, "`running`")):
    case(f"{_id}: {_what}: the hint names it", returns(lambda hint, needle=_needle: needle in hint,
                                                       f"a hint holding {_needle!r}"))(
        lambda exercise_id=_id, fn=_fn: hint_of(exercise_id, fn))

# --- 11. the panels ---------------------------------------------------------------------------------

from utils.widgets import CacheCompressionPanel, SamplingPanel, SpeculativePanel  # noqa: E402
from utils.widgets.compression import quality_grid  # noqa: E402

case("SpeculativePanel(temperature=0.7)", raises("temperature", "0.7"))(
    lambda: SpeculativePanel(MODEL, TOK, DRAFT, temperature=0.7))
case("SpeculativePanel(k=20)", raises("k", "20"))(lambda: SpeculativePanel(MODEL, TOK, DRAFT, k=20))
case("SpeculativePanel(draft='typo')", raises("'typo'"))(lambda: SpeculativePanel(MODEL, TOK, DRAFT, draft="typo"))
case("SpeculativePanel(model, tok, None)", raises("draft"))(lambda: SpeculativePanel(MODEL, TOK, None))
case("SpeculativePanel(tok, model, draft)", raises("Tokenizer"))(lambda: SpeculativePanel(TOK, MODEL, DRAFT))
case("SpeculativePanel(prompts=['<BOS> zebra'])", raises("'zebra'"))(
    lambda: SpeculativePanel(MODEL, TOK, DRAFT, prompts=["<BOS> zebra"]))


def _spec_panel():
    return SpeculativePanel(MODEL, TOK, DRAFT, max_new_tokens=4)


case("SpeculativePanel.compute(draft='typo')", raises("'typo'"))(
    lambda: _spec_panel().compute(k=4, temperature=0.0, draft="typo", prompt=0, rollback=True))
case("SpeculativePanel.compute(prompt=9)", raises("9"))(
    lambda: _spec_panel().compute(k=4, temperature=0.0, draft="model", prompt=9, rollback=True))
case("SpeculativePanel.compute(k=0)", raises("k"))(
    lambda: _spec_panel().compute(k=0, temperature=0.0, draft="model", prompt=0, rollback=True))
case("SpeculativePanel.compute(draft='lookup') works", returns(lambda s: s["lookup"], "a prompt-lookup run"))(
    lambda: _spec_panel().compute(k=4, temperature=0.0, draft="lookup", prompt=0, rollback=True))
case("SamplingPanel(prompts=['<BOS> unknown'])", either(("'unknown'",), lambda p: "error" in p.state, "the error shown"))(
    lambda: SamplingPanel(MODEL, TOK, prompts=["<BOS> unknown"]))
case("SamplingPanel(prompts=['<BOS> 我 喜欢', '<BOS> zzz'])", either(("'zzz'",), lambda p: False, "refused"))(
    lambda: SamplingPanel(MODEL, TOK, prompts=["<BOS> 我 喜欢", "<BOS> zzz"]))
case("SamplingPanel(tok, model)", raises("Tokenizer"))(lambda: SamplingPanel(TOK, MODEL))
case("SamplingPanel(prompts=[])", raises("prompts"))(lambda: SamplingPanel(MODEL, TOK, prompts=[]))

SMALL_SETTINGS = [("quant", 4, "channel", "token", 2), ("quant", 8, "channel", "token", 2), ("evict", "recent", 6)]
GRID = quality_grid(MODEL, DOCS[:2], SMALL_SETTINGS)


def _compression_panel():
    return CacheCompressionPanel(MODEL, docs=DOCS[:2], grid=GRID)


def _settings(**change):
    values = dict(bits=4, key_group="channel", value_group="token", residual=2, rule="none", budget=6,
                  measure="loss")
    return {**values, **change}


case("CacheCompressionPanel(tok, model)", raises("Tokenizer"))(lambda: CacheCompressionPanel(TOK, MODEL))
case("CacheCompressionPanel(model, docs=[])", raises("docs"))(lambda: CacheCompressionPanel(MODEL, docs=[]))
case("CacheCompressionPanel(model) with neither tok nor docs", raises("docs"))(lambda: CacheCompressionPanel(MODEL))
for _change, _needle in ((dict(bits=2), "2"), (dict(residual=3), "3"), (dict(budget=7), "7"), (dict(rule="h2o"), "'h2o'"),
                         (dict(key_group="row"), "'row'"), (dict(measure="ppl"), "'ppl'")):
    case(f"CacheCompressionPanel.compute({_change}).render()", raises(_needle))(
        lambda change=_change: (lambda p: p.render(p.compute(**_settings(**change))))(_compression_panel()))


@case("CacheCompressionPanel.render of a setting its grid did not measure",
      returns(lambda html: "not measured" in html or "没有测" in html, "says 'not measured'"))
def _():
    panel = _compression_panel()
    return panel.render(panel.compute(**_settings(bits=8, residual=4)))


# --- 12. the NameError hint and the notebooks' names ------------------------------------------------

from nbsync import bound_names, cell_tree, defined_names  # noqa: E402
from utils import name_hints  # noqa: E402


def _names_of(source: str) -> set:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    return set(defined_names(nb)["names"])


case("defined_names: a name assigned inside a with block", returns(lambda n: "inner" in n, "'inner' indexed"))(
    lambda: _names_of("with open('x') as f:\n    inner = 1\n"))
case("defined_names: a name assigned inside a for loop", returns(lambda n: "looped" in n, "'looped' indexed"))(
    lambda: _names_of("for i in range(3):\n    looped = i\n"))
case("defined_names: a name assigned inside an if", returns(lambda n: "branch" in n, "'branch' indexed"))(
    lambda: _names_of("if True:\n    branch = 1\nelse:\n    other = 2\n"))
case("defined_names: a name assigned inside try", returns(lambda n: {"tried", "err"} <= n, "'tried' and 'err'"))(
    lambda: _names_of("try:\n    tried = 1\nexcept ValueError as err:\n    pass\n"))
case("defined_names: a function's locals are not the kernel's", returns(lambda n: "local" not in n and "fn" in n,
                                                                        "'fn' only"))(
    lambda: _names_of("def fn():\n    local = 1\n"))
case("defined_names: a walrus and an augmented assignment", returns(lambda n: {"got", "total"} <= n, "both"))(
    lambda: _names_of("total = 0\nif (got := 3):\n    total += got\n"))
case("the names index knows `stacked` of notebook 13", returns(lambda ok: ok, "indexed"))(
    lambda: "stacked" in name_hints.definitions("en").get("13_smaller_kv_cache.ipynb", {}))


@case("the hint ranks notebooks by the names the kernel holds", returns(lambda h: "13_smaller" in h.split(";")[0],
                                                                        "notebook 13 first"))
def _():
    held = set(name_hints.definitions("en")["13_smaller_kv_cache.ipynb"])
    return name_hints.hint("cfg", None, held)


_SHORT = {"c", "p", "s", "res", "k", "t", "v", "x_all"}


def _top_level_reads(tree) -> set[str]:
    """The names a cell reads in the kernel's namespace: not inside a function, a lambda or a class body, and
    not a comprehension's own variables (only its first iterable is read outside it)."""
    import ast

    reads: set[str] = set()

    def visit(node) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            visit(node.generators[0].iter)
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            reads.add(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return reads


def travelling_short_names(nb) -> list[str]:
    """Short names (``_SHORT``) that one cell binds and a later cell reads without binding them itself: a
    learner who runs the later cell alone meets a NameError whose name says nothing of where it comes from."""
    bound, found = set(), set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tree = cell_tree(cell.source)
        if tree is None:
            continue
        mine = set(bound_names(tree))
        found |= (_top_level_reads(tree) & _SHORT & bound) - mine
        bound |= mine
    return sorted(found)


for _nb in ("10_paged_kv_and_prefix_caching", "12_speculative_decoding", "13_smaller_kv_cache"):
    case(f"notebook {_nb[:2]}: no short name ({', '.join(sorted(_SHORT))}) travels from one cell to another",
         returns(lambda bad: not bad, "names that travel across cells say what they hold"))(
        lambda nb=_nb: travelling_short_names(nbformat.read(REPO / "notebooks" / f"{nb}.ipynb", 4)))


@case("notebook 12: the stats cell run too early leaves no half-built table", returns(lambda left: not left,
                                                                                     "no table left behind"))
def _():
    nb = nbformat.read(REPO / "notebooks" / "12_speculative_decoding.ipynb", 4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    stats_cell = next(src for src in code if "def iid_tokens_per_round" in src)
    cell = _cell_module()
    with contextlib.redirect_stdout(io.StringIO()):
        _run_cell(code[1], cell)  # the imports and the models: a learner who jumped to section 2
        try:
            _run_cell(stats_cell, cell)
        except NameError:
            pass
    return [name for name, value in vars(cell).items() if isinstance(value, dict) and not value and not name.startswith("_")]


def _cell_module() -> types.ModuleType:
    """A namespace that keeps what a cell bound before it failed, as a kernel does."""
    return types.ModuleType("notebook_cells")


def _run_cell(source: str, cell: types.ModuleType) -> None:
    """Run a notebook cell's code with ``cell``'s namespace as its globals, as the kernel runs a cell."""
    types.FunctionType(compile(source, "<notebook cell>", "exec"), vars(cell))()


# --- the serving engines (notebooks 06 and 11) -------------------------------------------------------

from utils.serving import PaddedBatchEngine, PagedEngine, StepCostModel, Workload, serve  # noqa: E402


def _paged(**kw):
    return PagedEngine(MODEL, **{"n_blocks": 16, "block_size": 16, "max_batch_tokens": 32, **kw})


case("PagedEngine(prefix_caching='no')", raises("prefix_caching"))(lambda: _paged(prefix_caching="no"))
case("PagedEngine(n_blocks=10**6)", raises("n_blocks"))(lambda: _paged(n_blocks=10**6))
case("PagedEngine(tok, ...)", raises("model"))(lambda: PagedEngine(TOK, n_blocks=16))
case("PaddedBatchEngine(model, policy='FIFO')", raises("policy", "fifo"))(
    lambda: PaddedBatchEngine(MODEL, policy="FIFO"))
case("add_request of float ids", raises("prompt_ids"))(lambda: _paged().add_request(torch.tensor([1.0, 3.7]), 4))
case("add_request of text", raises("tok.encode"))(lambda: _paged().add_request("<BOS> 他 有", 4))
case("add_request of an empty prompt", raises("prompt_ids"))(lambda: _paged().add_request([], 4))
case("add_request of a [2, T] batch", raises("one"))(lambda: _paged().add_request(torch.ones(2, 3, dtype=torch.long), 4))
case("add_request(max_new_tokens=0)", raises("max_new_tokens"))(lambda: _paged().add_request([1, 2, 3], 0))
case("add_request(arrival_time=-1)", raises("arrival_time"))(lambda: _paged().add_request([1, 2, 3], 4, arrival_time=-1))
case("add_request of a numpy prompt", returns(lambda rid: rid == 0, "request id 0"))(
    lambda: _paged().add_request(np.array([1, 2, 3]), 4))
case("add_request past max_seq_len", raises("max_seq_len"))(lambda: _paged(n_blocks=64).add_request([1, 2, 3], 10_000))
case("run().summary() with no request", returns(lambda out: out["n"] == 0, "a summary of nothing (n = 0)"))(
    lambda: _paged().run().summary())
case("StepCostModel.fit(run), the run itself", returns(lambda c: isinstance(c, StepCostModel), "a fitted model"))(
    lambda: StepCostModel.fit(serve(_paged(), Workload([[1, 5, 6, 7]] * 3, [6] * 3), [0.0, 0.0, 0.0])))
case("StepCostModel.fit of an empty run", raises("iterations"))(lambda: StepCostModel.fit(_paged().run()))
case("serve with one arrival time too few", raises("arrival_s"))(
    lambda: serve(_paged(), Workload([[1, 5, 6]] * 2, [4, 4]), [0.0]))
case("engine.request(99)", raises("request id"))(lambda: _paged().request(99))
case("EngineTimelinePanel(max_batch_tokens=4)", raises("max_batch_tokens"))(
    lambda: __import__("utils.widgets", fromlist=["EngineTimelinePanel"]).EngineTimelinePanel(
        MODEL, __import__("utils.serving", fromlist=["random_workload"]).random_workload(
            4, CFG.vocab_size, (8, 16), (4, 8), seed=0), max_batch_tokens=4))
case("BlockMapPanel(block_size=5)", raises("block_size"))(
    lambda: __import__("utils.widgets", fromlist=["BlockMapPanel"]).BlockMapPanel(MODEL, TOK, block_size=5))
case("BlockMapPanel.compute(block_size=32)", raises("block_size"))(
    lambda: __import__("utils.widgets", fromlist=["BlockMapPanel"]).BlockMapPanel(MODEL, TOK).compute(
        step=0, block_size=32, n_blocks=24))


# --- running them ---------------------------------------------------------------------------------

def judge(fn, expect) -> tuple[bool, str]:
    kind = expect[0]
    try:
        signal.alarm(CASE_TIMEOUT)
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # a panel displays itself: not this script's output
                result = fn()
        finally:
            signal.alarm(0)
    except Hang:
        return False, f"hang: no answer within {CASE_TIMEOUT} s"
    except ValueError as err:
        message = str(err)
        if kind == "returns":
            return False, f"ValueError where {expect[2]} was right: {message[:200]}"
        needles, absent = (expect[1], expect[2]) if kind == "raises" else (expect[1], ())
        missing = [n for n in needles if not names(message, n)]
        wrong = [a for a in absent if a in message]
        if missing or wrong:
            return False, f"ValueError {message[:200]!r} does not name {missing}" + (f", says {wrong}" if wrong else "")
        if LANGUAGE == "zh" and not speaks_chinese(message):
            where = traceback.extract_tb(err.__traceback__)[-1]
            origin = Path(where.filename).resolve()
            origin = origin.relative_to(REPO) if origin.is_relative_to(REPO) else origin
            return False, f"English message in Chinese from {origin}:{where.lineno}: {message[:200]}"
        return True, f"ValueError: {message[:200]}"
    except MemoryError as err:
        return False, f"MemoryError (a huge allocation): {err}"
    except Exception as err:  # noqa: BLE001 - every other error is a raw one
        where = traceback.extract_tb(err.__traceback__)[-1]
        text = str(err).splitlines()[0][:160] if str(err) else ""
        if "allocate" in text:
            return False, f"huge allocation: {type(err).__name__}: {text}"
        return False, f"raw {type(err).__name__}: {text} ({Path(where.filename).name}:{where.lineno})"
    if kind == "raises":
        return False, f"no error (returned {type(result).__name__}) where a ValueError naming {list(expect[1])} was due"
    check, what = (expect[1], expect[2]) if kind == "returns" else (expect[2], expect[3])
    try:
        ok = bool(check(result))
    except Exception as err:  # noqa: BLE001
        ok, what = False, f"{what} (checking the result raised {type(err).__name__}: {err})"
    return ok, ("right answer" if ok else f"silently wrong: expected {what}")


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    n_ok = 0
    t0 = time.time()
    for i, (what, fn, expect) in enumerate(CASES, 1):
        ok, detail = judge(fn, expect)
        n_ok += ok
        line = f"{i:>3} {'well' if ok else 'NOT '}  {what}"
        if verbose or not ok:
            line += f"\n        {detail}"
        print(line, flush=True)
    print(f"\n{len(CASES)} learner mistakes tried: {n_ok} behaved well, {len(CASES) - n_ok} did not "
          f"({time.time() - t0:.0f} s)")
    return 1 if "--strict" in argv and n_ok < len(CASES) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
