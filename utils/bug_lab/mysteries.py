"""Mystery bugs: ten broken engines with no name on them, in rising difficulty, for the learner to diagnose.

    m = bug_lab.mystery(1)
    ids, mask = m.inputs(prompt)                 # the batch every mystery runs on: two left-padded rows
    engine = m.engine()                           # {"prefill_fn": ..., "step_fn": ...}, fresh each call
    compare_with_recompute(model, ids, 6, attention_mask=mask, **engine)   # where does it diverge?
    print(bug_lab.probe(model, prompt, 1))      # raw observations, pass by pass, next to a full recompute
    print(bug_lab.probe(model, prompt))         # the same through the correct engine, to compare
    exercises.diagnose(1, "mask")                 # name it, from VOCABULARY (mystery 10: two words)

Each mystery is one broken variant (``catalogue.py``, ``mystery_engines.py``), the last one two at once.
Nothing here prints the answer before ``diagnose`` does: ``repr`` of a mystery shows its number, the
engine's functions are named after the mystery, and ``probe`` (``probe.py``) records what an engine
does, never what it is called. A wrong guess is told which observation rules it out (``rules_out.py``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import torch

from ..generate import decode_step, prefill
from ..i18n import tr
from ..model import check_model
from ..validate import as_one_prompt, check_fits, check_ids, check_int
from . import catalogue as bugs
from . import mystery_engines as engines
from .harness import N_STEPS, run_check
from .probe import Probe, run_probe
from .rules_out import rule_out

# The words a diagnosis may use (what each names is the notebook's table), with the ways a learner may spell them.
VOCABULARY = ("position", "mask", "axis", "padding", "dropout", "layer0", "refeed", "beam", "reset", "value")
ALIASES = {"positions": "position", "positionids": "position", "masks": "mask", "attentionmask": "mask",
           "concat": "axis", "dim": "axis", "pad": "padding", "padded": "padding", "train": "dropout",
           "layers": "layer0", "feed": "refeed", "prompt": "refeed", "beams": "beam", "reorder": "beam",
           "values": "value", "v": "value",
           # Chinese words, each standing for one word of VOCABULARY (喂入 and 输入 are not the course's words
           # for feeding tokens, but a learner may still answer with them)
           "位置": "position", "位置编号": "position", "掩码": "mask", "注意力掩码": "mask", "轴": "axis",
           "拼接轴": "axis", "拼接维度": "axis", "维度": "axis", "填充": "padding", "左填充": "padding",
           "随机失活": "dropout", "第0层": "layer0", "重复送入": "refeed", "重新送入": "refeed",
           "重复喂入": "refeed",
           "重新喂入": "refeed", "重复输入": "refeed", "束搜索": "beam", "束": "beam", "重置": "reset",
           "缓存重置": "reset", "没有重置": "reset", "值": "value", "值向量": "value"}
_SPLIT = re.compile(r"[+,/&，、和]|\band\b")  # "layer0 + mask", "layer0, mask", "第0层和掩码"


@dataclass(frozen=True)
class Mystery:
    n: int
    _answers: tuple[tuple[str, ...], ...] = field(repr=False)  # per bug it holds: the words accepted, its own first
    _engine: Callable[[], dict] = field(repr=False)
    _reveal: tuple[tuple[str, str, str], ...] = field(default=(), repr=False)  # per bug: title, cause, fix
    _hint: str = field(default="", repr=False)

    @property
    def _answer(self) -> str:
        """The first accepted word of each bug, joined by " + " (what ``diagnose`` takes as the answer)."""
        return " + ".join(words[0] for words in self._answers)

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
        _last["input"] = (model, prompt)
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


def _with(variant_class) -> Callable[[], dict]:
    def make() -> dict:
        variant = variant_class()  # it remembers state between passes: a fresh one per run
        return {"prefill_fn": variant.prefill, "step_fn": variant.step}
    return make


def _catalogued(key: str) -> tuple[str, str, str]:
    bug = bugs.BUG_BY_KEY[key]
    return bug.title, bug.cause, bug.check


_PADDING_SEEN = ("Decode mask shows the padding", "a [1, S] mask of ones: right without padding, but a short row's "
                 "query sees its pad keys too", "the new query sees its row's real keys and itself, never padding")
_LAYER0 = _catalogued("layer0")
_PAD_WORDS = ("padding", "mask")
_MYSTERIES = {m.n: m for m in [
    Mystery(1, (("mask",),), _plain(step_fn=bugs.step_mask_ignores_cache), (_catalogued("mask"),),
            "compare the last query's mask row with the correct engine's"),
    Mystery(2, (("refeed",),), _with(bugs.FeedEverything), (_catalogued("refeed"),),
            "compare the input ids and the cache length after step 1 with the correct engine's"),
    Mystery(3, (("position",),), _plain(step_fn=bugs.step_position_restarts), (_catalogued("positions"),),
            "the prefill agrees; compare each row's position in step 1 with the batch's position line"),
    Mystery(4, (("position",),), _plain(step_fn=engines.step_position_off_by_one),
            (("Position off by one", "the new token gets the position of the last cached token",
              "position = real tokens already cached"),),
            "compare each row's position in step 1 with the position after its last one in the batch"),
    Mystery(5, (("reset",),), _with(engines.ReusedCache),
            (("Cache not reset between requests", "the engine keeps one cache: the last request's K/V stay in "
              "front of the new prompt", "a new (or cleared) cache per request; seq_len == T after the prefill"),),
            "look at the cache length and the positions right after the prefill"),
    Mystery(6, (_PAD_WORDS,), _plain(prefill_fn=bugs.prefill_lengths_mixed_up), (_catalogued("padding"),),
            "wrong from the prefill on: count the 1s of each row's mask row, and each row's real tokens"),
    Mystery(7, (_PAD_WORDS,), _plain(step_fn=engines.step_sees_every_key), (_PADDING_SEEN,),
            "row 1, without padding, stays right: read row 0's mask row key by key"),
    Mystery(8, (("layer0",),), _plain(prefill_fn=bugs.prefill_into(bugs.Layer0HistoryKVCache)), (_LAYER0,),
            "find the first layer whose output goes wrong; its input and its own new K are right: what else "
            "does a layer read?"),
    Mystery(9, (("value",),), _plain(prefill_fn=engines.rope_on_values_prefill),
            (("RoPE applied to V", "the cache rotates values by their positions, as it should only keys",
              "rotate q and k; V stays as v_proj made it"),),
            "wrong from the prefill on, with positions and masks right: compare new K and new V in layer 0"),
    Mystery(10, (("layer0",), _PAD_WORDS),
            _plain(prefill_fn=bugs.prefill_into(bugs.Layer0HistoryKVCache), step_fn=engines.step_sees_every_key),
            (_LAYER0, _PADDING_SEEN), "two bugs: read the rows one at a time. Where does each first go wrong, "
                                      "and in which layer?"),
]}


def mystery(n: int) -> Mystery:
    """Mystery ``n`` (1 to 10): a broken engine, nameless."""
    check_int("n", n, minimum=1, maximum=len(_MYSTERIES))
    return _MYSTERIES[n]


_tries: dict[int, set[str]] = {}
_last: dict[str, tuple] = {}  # the model and prompt of the last check or probe: a wrong guess is judged on them


def _words(guess) -> list[str] | None:
    """The words of a guess (a word, "a + b", or a list of words) as VOCABULARY spells them; None if one is unknown."""
    parts = guess if isinstance(guess, (list, tuple, set)) else _SPLIT.split(guess) if isinstance(guess, str) else None
    if not parts or not all(isinstance(p, str) for p in parts):
        return None
    words = [p.strip().lower().replace(" ", "").replace("_", "").replace("-", "") for p in parts]
    words = [ALIASES.get(w, w) for w in words if w]
    return words if words and all(w in VOCABULARY for w in words) else None


def diagnose(n: int, guess) -> bool:
    """Name mystery ``n`` with a word of ``VOCABULARY`` (or a spelling of ``ALIASES``); mystery 10 holds two
    bugs, named as ``"word + word"``. A wrong word is told which observation rules it out; after two
    different wrong guesses comes a hint, after three the answer. Returns True when the guess is right."""
    m = mystery(n)
    words = _words(guess)
    if words is None:  # not a word of the list: show the list, no traceback
        print(tr("✗ mystery {n}: {guess!r} is not a word of the list. Name the bug with one of: {words}",
                 n=n, guess=guess, words=", ".join(VOCABULARY)))
        return False
    named = [i for i, accepted in enumerate(m._answers) if set(accepted) & set(words)]
    wrong = [w for w in dict.fromkeys(words) if not any(w in accepted for accepted in m._answers)]
    if not wrong and len(named) == len(m._answers):
        _tries.pop(n, None)
        if len(m._reveal) == 1:
            (title, cause, fix), = m._reveal
            print(tr("✓ mystery {n} is '{word}': {title}. Cause: {cause}; check: {check}.", n=n,
                     word=" + ".join(words), title=tr(title), cause=tr(cause), check=tr(fix)))
            return True
        print(tr("✓ mystery {n} is '{word}', {k} bugs at once:", n=n, word=" + ".join(words), k=len(m._reveal)))
        for title, cause, fix in m._reveal:
            print(tr("  {title}: {cause}; check: {check}.", title=tr(title), cause=tr(cause), check=tr(fix)))
        return True
    for w in wrong:
        print(tr("✗ not '{word}': {why}", word=w, why=rule_out(w, *_observations(n))))
    if named and not wrong:
        print(tr("✓ '{word}' is one of the bugs of mystery {n}; it holds {k}: name them all, as 'word + word'.",
                 word=" + ".join(words), n=n, k=len(m._answers)))
        return False
    tried = _tries.setdefault(n, set())
    tried.update(wrong)  # the same wrong word again (a cell run twice) does not count twice
    if len(tried) >= 3:
        print(tr("Mystery {n} is '{answer}':", n=n, answer=m._answer))
        for title, cause, fix in m._reveal:
            print(tr("  {title}: {cause}; check: {check}.", title=tr(title), cause=tr(cause), check=tr(fix)))
        print(tr("The catalogue below shows its bugs broken and fixed."))
    elif len(tried) == 2:
        print(tr("Hint: {hint}", hint=tr(m._hint)))
    return False


_seen: dict[tuple, tuple[Probe, Probe]] = {}


def _observations(n: int) -> tuple[Probe, Probe]:
    """Mystery ``n``'s probe and the correct engine's, on the model and prompt of the last check or probe
    (the course model and its first prompt if there was none)."""
    if "input" not in _last:
        from ..course_model import load_course_model

        model, tok = load_course_model()
        _last["input"] = (model, torch.tensor([tok.encode("<BOS> she has two white cats . she also likes")]))
    model, prompt = _last["input"]
    key = (n, id(model), tuple(prompt[0].tolist()))
    if key not in _seen:
        ids, mask = bugs.padded_batch(prompt)
        _seen[key] = (run_probe(model, ids, mask, mystery(n).engine(), 2), run_probe(model, ids, mask, _plain()(), 2))
    return _seen[key]


def probe(model, prompt: torch.Tensor, n: int | None = None, *, correct: bool = False, n_steps: int = 2) -> Probe:
    """Run an engine by hand, the prefill and ``n_steps`` greedy decode steps, and record each pass (``probe.py``).

    ``n``: mystery ``n`` on the batch every mystery runs on (two left-padded rows made from the prompt
    ``[1, T]``). ``correct=True``, or ``n=None``: the correct ``prefill`` and ``decode_step`` on that same
    batch, to compare with.
    """
    prompt = _checked(model, prompt, n_steps)
    engine = _plain()() if n is None or correct else mystery(n).engine()
    _last["input"] = (model, prompt)
    ids, mask = bugs.padded_batch(prompt)
    return run_probe(model, ids, mask, engine, n_steps)
