"""Mystery bugs: five broken engines with no name on them, for the learner to diagnose.

    m = mysteries.mystery(1)
    ids, mask = m.inputs(prompt)                 # the prompt (a padded batch for some mysteries)
    engine = m.engine()                           # {"prefill_fn": ..., "step_fn": ...}, fresh each call
    compare_with_recompute(model, ids, 6, attention_mask=mask, **engine)   # where does it diverge?
    logits, cache = engine["prefill_fn"](model, ids, mask, KVCache())      # probe: what does the cache hold?
    exercises.diagnose(1, "mask")                 # name it, from VOCABULARY

Each mystery is one of the bug lab's broken variants (``utils/bugs.py``); which one is only
revealed by ``diagnose``. Nothing here prints the answer: ``repr`` of a mystery shows its number.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch

from . import bugs
from .generate import decode_step, prefill
from .validate import check_int

# The words a diagnosis may use, and the catalogue bug each one names.
VOCABULARY = {"position": "positions", "mask": "mask", "axis": "concat_axis", "padding": "padding",
              "dropout": "dropout", "layer0": "layer0", "refeed": "refeed", "beam": "beam"}


@dataclass(frozen=True)
class Mystery:
    n: int
    _answer: str = field(repr=False)
    _engine: Callable[[], dict] = field(repr=False)
    _padded: bool = field(default=False, repr=False)
    _hint: str = field(default="", repr=False)

    def engine(self) -> dict:
        """A fresh ``{"prefill_fn", "step_fn"}`` pair, ready for ``compare_with_recompute(**engine)``."""
        return self._engine()

    def inputs(self, prompt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The ids (and attention mask, or None) this mystery is run on, from a prompt ``[1, T]``."""
        return bugs.padded_batch(prompt) if self._padded else (prompt, None)

    def check(self, model, prompt: torch.Tensor, n_steps: int = bugs.N_STEPS):
        """The recompute check with this engine (errors become an ``Outcome``, as in the bug lab)."""
        ids, mask = self.inputs(prompt)
        return bugs.run_check(model, ids, n_steps, attention_mask=mask, **self.engine())


def _plain(prefill_fn=prefill, step_fn=decode_step) -> Callable[[], dict]:
    return lambda: {"prefill_fn": prefill_fn, "step_fn": step_fn}


def _refeed() -> dict:
    variant = bugs.FeedEverything()  # it remembers the text: a fresh one per run
    return {"prefill_fn": variant.prefill, "step_fn": variant.step}


_MYSTERIES = {
    1: Mystery(1, "mask", _plain(step_fn=bugs.step_mask_ignores_cache),
               _hint="prefill agrees; look at which keys the new query may see"),
    2: Mystery(2, "layer0", _plain(prefill_fn=bugs.prefill_into(bugs.Layer0HistoryKVCache)),
               _hint="prefill agrees; compare what layer 1's cache holds with layer 0's"),
    3: Mystery(3, "position", _plain(step_fn=bugs.step_position_restarts),
               _hint="prefill agrees and the cache grows right; what position does the new token get?"),
    4: Mystery(4, "refeed", _refeed, _hint="watch cache.seq_len after each step: how much does it grow?"),
    5: Mystery(5, "padding", _plain(prefill_fn=bugs.prefill_lengths_mixed_up), _padded=True,
               _hint="it is wrong from step 0, only in a batch: run each row alone and compare"),
}


def mystery(n: int) -> Mystery:
    """Mystery ``n`` (1 to 5): a broken engine, nameless."""
    check_int("n", n, minimum=1, maximum=len(_MYSTERIES))
    return _MYSTERIES[n]


_tries: dict[int, int] = {}


def diagnose(n: int, guess: str) -> bool:
    """Name mystery ``n`` with one word of ``VOCABULARY``. A wrong guess says so; after two wrong
    guesses you get a hint, after three the answer. Returns True when the guess is right."""
    m = mystery(n)
    if guess not in VOCABULARY:
        raise ValueError(f"diagnose({n}, {guess!r}): name the bug with one of {sorted(VOCABULARY)}")
    bug = bugs.BUG_BY_KEY[VOCABULARY[m._answer]]
    if guess == m._answer:
        _tries.pop(n, None)
        print(f"✓ mystery {n} is '{guess}': {bug.title}. Cause: {bug.cause}; check: {bug.check}.")
        return True
    _tries[n] = _tries.get(n, 0) + 1
    if _tries[n] >= 3:
        print(f"✗ not '{guess}'. Mystery {n} is '{m._answer}': {bug.title} ({bug.cause}). "
              "Its broken and fixed code are in the catalogue below.")
    elif _tries[n] == 2:
        print(f"✗ not '{guess}'. Hint: {m._hint}.")
    else:
        print(f"✗ not '{guess}'. At which step did it first diverge, and what does the cache hold then?")
    return False
