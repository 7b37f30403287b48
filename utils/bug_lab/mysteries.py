"""Mystery bugs: five broken engines with no name on them, for the learner to diagnose.

    m = bug_lab.mystery(1)
    ids, mask = m.inputs(prompt)                 # the prompt (a padded batch for some mysteries)
    engine = m.engine()                           # {"prefill_fn": ..., "step_fn": ...}, fresh each call
    compare_with_recompute(model, ids, 6, attention_mask=mask, **engine)   # where does it diverge?
    print(bug_lab.probe(model, prompt, 1))      # probe: what goes in, what the cache holds, pass by pass
    print(bug_lab.probe(model, prompt, 1, correct=True))   # the same input through the correct engine
    exercises.diagnose(1, "mask")                 # name it, from VOCABULARY

Each mystery is one of the bug lab's broken variants (``catalogue.py``); which one is only
revealed by ``diagnose``. Nothing here prints the answer: ``repr`` of a mystery shows its number,
and ``probe`` shows what an engine does, never what it is called.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch

from ..cache import KVCache
from ..generate import decode_step, prefill
from ..i18n import tr
from ..model import check_model
from ..validate import as_one_prompt, check_fits, check_ids, check_int
from . import catalogue as bugs
from .harness import N_STEPS, run_check, text_table

# The words a diagnosis may use, and the catalogue bug each one names.
VOCABULARY = {"position": "positions", "mask": "mask", "axis": "concat_axis", "padding": "padding",
              "dropout": "dropout", "layer0": "layer0", "refeed": "refeed", "beam": "beam"}
# Chinese words a learner may answer with, in either language: each stands for one word of VOCABULARY.
# (喂入 and 输入 are not the course's words for feeding tokens, but a learner may still answer with them.)
ALIASES = {"位置": "position", "位置编号": "position", "掩码": "mask", "注意力掩码": "mask", "轴": "axis",
           "拼接轴": "axis", "拼接维度": "axis", "维度": "axis", "填充": "padding", "左填充": "padding",
           "随机失活": "dropout", "第0层": "layer0", "重复送入": "refeed", "重新送入": "refeed", "重复喂入": "refeed",
           "重新喂入": "refeed", "重复输入": "refeed", "束搜索": "beam", "束": "beam"}


@dataclass(frozen=True)
class Mystery:
    n: int
    _answer: str = field(repr=False)
    _engine: Callable[[], dict] = field(repr=False)
    _hint: str = field(default="", repr=False)

    def engine(self) -> dict:
        """A fresh ``{"prefill_fn", "step_fn"}`` pair, ready for ``compare_with_recompute(**engine)``.
        The functions are named after the mystery, not after the bug they hold."""
        return {kind: _anonymous(fn, f"mystery_{self.n}_{kind.removesuffix('_fn')}")
                for kind, fn in self._engine().items()}

    def inputs(self, prompt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The batch every mystery runs on, made from a prompt ``[1, T]``: two left-padded rows (its
        first half and all of it), ids and attention mask ``[2, T]``."""
        return bugs.padded_batch(prompt)

    def check(self, model, prompt: torch.Tensor, n_steps: int = N_STEPS):
        """The recompute check with this engine (errors become an ``Outcome``, as in the bug lab). Your
        arguments are checked first: a mistake in them is a ``ValueError``, never blamed on the engine."""
        prompt = _checked(model, prompt, n_steps)
        ids, mask = self.inputs(prompt)
        return run_check(model, ids, n_steps, attention_mask=mask, **self.engine())


def _checked(model, prompt, n_steps: int) -> torch.Tensor:
    """The prompt as ``[1, T]`` ids, once the model, the prompt and ``n_steps`` are known to be fine."""
    check_model(model)
    prompt = as_one_prompt(prompt)
    check_ids(prompt, model.cfg.vocab_size)
    check_int("n_steps", n_steps, minimum=0)
    check_fits(model.cfg, prompt.shape[1], n_steps, "n_steps")
    return prompt


def _anonymous(fn: Callable, name: str) -> Callable:
    """``fn`` under a neutral name, so printing an engine does not name its bug."""
    def call(*args, **kwargs):
        return fn(*args, **kwargs)
    call.__name__ = call.__qualname__ = name
    return call


def _plain(prefill_fn=prefill, step_fn=decode_step) -> Callable[[], dict]:
    return lambda: {"prefill_fn": prefill_fn, "step_fn": step_fn}


def _refeed() -> dict:
    variant = bugs.FeedEverything()  # it remembers the text: a fresh one per run
    return {"prefill_fn": variant.prefill, "step_fn": variant.step}


_MYSTERIES = {
    1: Mystery(1, "mask", _plain(step_fn=bugs.step_mask_ignores_cache),
               _hint="prefill agrees; look at which keys the new query may see"),
    2: Mystery(2, "layer0", _plain(prefill_fn=bugs.prefill_into(bugs.Layer0HistoryKVCache)),
               _hint="prefill agrees; which layer's keys does layer 1 attend over? (the probe's last column)"),
    3: Mystery(3, "position", _plain(step_fn=bugs.step_position_restarts),
               _hint="prefill agrees and the cache grows right; what position does the new token get?"),
    4: Mystery(4, "refeed", _refeed, _hint="watch cache.seq_len after each step: how much does it grow?"),
    5: Mystery(5, "padding", _plain(prefill_fn=bugs.prefill_lengths_mixed_up),
               _hint="it is wrong from step 0: run each row alone (attention_mask=torch.ones_like(row)) and compare "
                     "the positions each row gets with the probe's"),
}


def mystery(n: int) -> Mystery:
    """Mystery ``n`` (1 to 5): a broken engine, nameless."""
    check_int("n", n, minimum=1, maximum=len(_MYSTERIES))
    return _MYSTERIES[n]


_tries: dict[int, set[str]] = {}


def diagnose(n: int, guess: str) -> bool:
    """Name mystery ``n`` with one word of ``VOCABULARY`` (or a Chinese word of ``ALIASES``). A wrong guess
    says so; after two different wrong guesses you get a hint, after three the answer. Returns True when the
    guess is right."""
    m = mystery(n)
    word = guess.strip().lower().replace(" ", "").replace("_", "") if isinstance(guess, str) else None  # not a word
    word = ALIASES.get(word, word)
    if word not in VOCABULARY:
        raise ValueError(tr("diagnose({n}, {guess!r}): name the bug with one of {words}", n=n, guess=guess,
                            words=sorted(VOCABULARY)))
    bug = bugs.BUG_BY_KEY[VOCABULARY[m._answer]]
    title, cause = tr(bug.title), tr(bug.cause)
    if word == m._answer:
        _tries.pop(n, None)
        print(tr("✓ mystery {n} is '{word}': {title}. Cause: {cause}; check: {check}.",
                 n=n, word=word, title=title, cause=cause, check=tr(bug.check)))
        return True
    tried = _tries.setdefault(n, set())
    tried.add(word)  # the same wrong word again (a cell run twice) does not count twice
    if len(tried) >= 3:
        print(tr("✗ not '{word}'. Mystery {n} is '{answer}': {title} ({cause}). "
                 "Its broken and fixed code are in the catalogue below.",
                 word=word, n=n, answer=m._answer, title=title, cause=cause))
    elif len(tried) == 2:
        print(tr("✗ not '{word}'. Hint: {hint}", word=word, hint=tr(m._hint)))
    else:
        print(tr("✗ not '{word}'. At which step did it first diverge, and what does the cache hold then?", word=word))
    return False


# --- probing: what an engine feeds and caches, pass by pass --------------------------------------

PROBE_HEAD = ("pass", "tokens fed", "last position", "keys it sees", "seq_len",
              "K layer 0 [B, H_kv, T, d_h]", "K layer 1", "layer 1 reads its own K")


@dataclass
class Probe:
    """One row per forward pass (the prefill, then each decode step), as a dict; prints as a table.

    Per batch row (joined by " / "): ``last_position``, the RoPE position of the last token fed;
    ``keys_seen``, how many keys that token's query may attend to, of ``keys`` in its layer.
    ``layer1_reads_own``: whether layer 1 attended over exactly the K stored for layer 1.
    """

    rows: list[dict]

    def __str__(self) -> str:  # the rows' values stay as they are; only what is printed is translated
        def cells(r: dict) -> tuple[str, ...]:
            join = lambda xs: " / ".join(str(x) for x in xs)  # noqa: E731
            step = r["pass"].removeprefix("step ")
            return (tr("prefill") if step == "prefill" else tr("step {n}", n=step), str(r["tokens_fed"]),
                    join(r["last_position"]), tr("{seen} of {keys}", seen=join(r["keys_seen"]), keys=r["keys"]),
                    str(r["seq_len"]), str(r["k_layer0"]), str(r["k_layer1"]),
                    {True: tr("yes"), False: tr("no"), None: "-"}[r["layer1_reads_own"]])
        return text_table(tuple(map(tr, PROBE_HEAD)), [cells(r) for r in self.rows])

    __repr__ = __str__


def _watch(model, seen: dict):
    """A forward pre-hook for layer 0: records what the pass feeds, and makes the cache report
    whether layer 1 attends over the keys stored for layer 1."""
    def hook(block, args):
        x, rope, mask, cache = args[:4]  # Block.forward(x, rope, mask, cache, layer_idx, is_causal)
        B, T = x.shape[:2]
        S = cache.seq_len + T if mask is None else mask.shape[-1]  # keys after this pass's update
        # the positions arrive as rows of the RoPE tables: find each row's last one in the model's table
        last = rope.cos[..., -1, :].reshape(-1, rope.cos.shape[-1]).float()  # (1 or B, d_h)
        positions = [int((model.rope_cos - row).abs().sum(-1).argmin()) for row in last]
        if mask is None:  # no mask: the last query sees every key (a causal prefill too)
            visible = [S]
        else:  # [T, S] or [B, 1, T, S]: the last query's row, per batch row
            visible = [int(n) for n in mask[..., -1, :].reshape(-1, S).sum(-1)]
        seen.update(tokens_fed=T, last_position=positions * (B // len(positions)),
                    keys_seen=visible * (B // len(visible)), keys=S, layer1_reads_own=None)
        if not getattr(cache, "_probed", False):  # wrap this cache's update once
            update = cache.update

            def watched(layer, k, v):
                K, V = update(layer, k, v)  # (B, H_kv, T_total, d_h): what the layer attends over
                if layer == 1:
                    seen["layer1_reads_own"] = torch.equal(K, cache.layer_kv(1)[0])
                return K, V
            cache.update, cache._probed = watched, True
    return hook


@torch.inference_mode()
def probe(model, prompt: torch.Tensor, n: int | None = None, *, correct: bool = False,
          n_steps: int = 2) -> Probe:
    """Run an engine by hand, the prefill and ``n_steps`` greedy decode steps, and record each pass.

    ``n``: mystery ``n`` on the batch every mystery runs on (two left-padded rows made from the
    prompt ``[1, T]``). ``correct=True``, or ``n=None``: the correct ``prefill`` and ``decode_step``
    on that same batch, to compare with. Returns a ``Probe``: tokens fed, positions, visible keys, ``seq_len``, the K
    shapes of layers 0 and 1 and whether layer 1 attends over its own keys, after every pass.
    """
    prompt = _checked(model, prompt, n_steps)
    if model.cfg.n_layers < 2:
        raise ValueError(tr("probe compares layers 0 and 1: the model has n_layers={n_layers}",
                            n_layers=model.cfg.n_layers))
    ids, mask = bugs.padded_batch(prompt)  # every mystery's input, and the correct engine's to compare
    engine = _plain()() if n is None or correct else mystery(n).engine()
    seen, rows = {}, []
    handle = model.layers[0].register_forward_pre_hook(_watch(model, seen))
    try:
        for step in range(n_steps + 1):
            if step == 0:
                logits, cache = engine["prefill_fn"](model, ids, mask, KVCache())  # (B, V)
            else:
                logits = engine["step_fn"](model, logits.argmax(-1), cache)  # greedy: the engine's own choice
            rows.append({"pass": "prefill" if step == 0 else f"step {step}", **seen, "seq_len": cache.seq_len,
                         "k_layer0": list(cache.layer_kv(0)[0].shape), "k_layer1": list(cache.layer_kv(1)[0].shape)})
    finally:
        handle.remove()
    return Probe(rows)
