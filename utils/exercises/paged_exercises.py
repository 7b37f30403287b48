"""Exercises of notebook 10 (paged): reference solutions, cases and hints, merged into catalogue.EXERCISES.

10.grow_table   a block table grows: copy-on-write of a last block the row may not write, then new blocks
10.prefix_hit   how many prompt tokens a prefix cache saves (chained keys, the full-hit rule)
"""
from __future__ import annotations

import numbers

from ..block_pool import block_keys
from ..i18n import tr
from .judges import Case, Exercise, FormProblem, diagnosis, make_case


# --- reference solutions (``exercises.show_solution`` prints them) ---------------------------------

def grow_table(table: list[int], n: int, m: int, block_size: int, writable, allocate) -> list[int]:
    new = list(table)  # the caller's table stays as it was
    if m and n % block_size and not writable(new[-1]):  # the next token lands in a block this row may not write
        new[-1] = allocate()  # copy-on-write: a private copy replaces it (the pool copies the K/V)
    while len(new) * block_size < n + m:  # then whole new blocks until n + m tokens fit
        new.append(allocate())
    return new


def prefix_hit(prompt_keys: list[str], cached_keys: set[str], prompt_len: int, block_size: int) -> int:
    n_blocks = 0
    for key in prompt_keys:  # keys are chained: stop at the first block that is not cached
        if key not in cached_keys:
            break
        n_blocks += 1
    return min(n_blocks * block_size, prompt_len - 1)  # the last prompt token always runs: its logits


# --- cases ------------------------------------------------------------------------------------------

class _Pool:
    """A case's pool: ``allocate()`` hands out 100, 101, ... in order; ``writable(b)``: b is in ``mine``."""

    def __init__(self, mine) -> None:
        self.mine, self.taken = set(mine), []

    def allocate(self) -> int:
        self.taken.append(100 + len(self.taken))
        return self.taken[-1]

    def writable(self, b) -> bool:
        return b in self.mine


def _grow_variants(table, n, m, size, mine) -> dict:
    """What the plausible mistakes return on a case: name -> the table, with the pool's 100, 101, ... ids."""
    def run(copy_when, where="replace", first="copy", room=lambda new: len(new) * size < n + m):
        new, ids = list(table), iter(range(100, 200))
        copy = copy_when(table)

        def fill():
            while room(new):
                new.append(next(ids))
        if copy and first != "copy":  # the new blocks first, then the copy into the old last place
            fill()
            new[len(table) - 1] = next(ids)
            return new
        if copy:
            if where == "replace":
                new[-1] = next(ids)
            else:
                new.append(next(ids))
        fill()
        return new
    shared_tail = lambda t: bool(m and n % size and t and t[-1] not in mine)  # noqa: E731
    return {"no copy": run(lambda t: False),
            "a full block copied": run(lambda t: bool(m and t and t[-1] not in mine)),
            "a writable block copied": run(lambda t: bool(m and n % size and t)),
            "the copy appended": run(shared_tail, where="append"),
            "new blocks before the copy": run(shared_tail, first="new"),
            "blocks for m alone": run(shared_tail, room=lambda new: len(new) * size < len(table) * size + m),
            "one block too many": run(shared_tail, room=lambda new: len(new) * size <= n + m)}


_GROW_HINTS = {
    "no copy": "the last block is shared or published, and the row is about to write into it: copy it first "
               "(copy-on-write, `table[-1] = allocate()`), or another holder's K/V change under it",
    "a full block copied": "the last block is full, so the next token starts a new block: nothing is written into the "
                           "full one, and it needs no copy",
    "a writable block copied": "copy only a block the row may not write: when `writable(table[-1])` is True the row "
                               "holds it alone and writes in place",
    "the copy appended": "the copy replaces the last block in the table (the row lets go of the original), it is not "
                         "added after it",
    "new blocks before the copy": "take the copy first, then the new blocks: the pool hands out blocks in that order, "
                                  "so the copy gets the first id",
    "blocks for m alone": "count the room left in the last block: the row needs `ceil((n + m) / block_size)` blocks "
                          "in all, not `ceil(m / block_size)` more",
    "one block too many": "a block that is exactly full needs no successor: grow while `len(table) * block_size < n + m`",
}


def _grow_judge(table, n, m, size, mine, expected):
    variants = _grow_variants(table, n, m, size, mine)

    def judge(got) -> str | None:
        if not isinstance(got, (list, tuple)) or not all(isinstance(b, numbers.Integral) and not isinstance(b, bool)
                                                         for b in got):  # numpy ints are ints too
            return FormProblem(tr("expected the new block table, a list of block ids, got {got!r}", got=got))
        got = [int(b) for b in got]
        if got == expected:
            return None
        text = tr("expected the table {expected}, got {got}", expected=expected, got=got)
        for name, wrong in variants.items():
            if got == wrong and wrong != expected:
                return diagnosis(text, tr(_GROW_HINTS[name]))
        return text
    return judge


def _grow_case(words, table, n, m, size, mine, hint="") -> Case:
    expected = grow_table(table, n, m, size, _Pool(mine).writable, _Pool(mine).allocate)

    def run(fn):
        pool = _Pool(mine)
        return fn(list(table), n, m, size, pool.writable, pool.allocate)
    return Case(words, run, _grow_judge(table, n, m, size, mine, expected), hint)


def _grow_cases() -> list[Case]:
    return [
        _grow_case("table [3, 7], 6 tokens, 3 more, blocks of 4, both blocks private", [3, 7], 6, 3, 4, {3, 7}),
        _grow_case("table [3, 7], 6 tokens, 1 more, block 7 shared", [3, 7], 6, 1, 4, {3}),
        _grow_case("table [3, 7], 8 tokens (block 7 full and shared), 1 more", [3, 7], 8, 1, 4, set()),
        _grow_case("table [5], 2 tokens in a published block, 9 more", [5], 2, 9, 4, set()),
        _grow_case("table [1, 2], 5 tokens, 0 more, block 2 shared", [1, 2], 5, 0, 4, set(),
                   "no token to add: nothing is written, so nothing is copied or taken"),
        _grow_case("an empty row, 5 tokens to add, blocks of 4", [], 0, 5, 4, set()),
        _grow_case("blocks of 1 token: table [4, 2], 2 more", [4, 2], 2, 2, 1, set()),
    ]


def _prefix_cases() -> list[Case]:
    hint = "count the prompt's leading blocks found in the cache, in tokens; a full hit still runs the last token"
    tokens = [1, 5, 10, 25, 14, 6, 10, 26, 14, 3, 10, 27, 14, 4, 10]  # 15 tokens: 3 full blocks of 4, then 3
    keys = block_keys(tokens, 4)  # (3 keys)

    def case(words, cached, prompt_len, case_hint=hint):
        prompt_keys = keys[: prompt_len // 4]
        return make_case(words, (prompt_keys, set(cached), prompt_len, 4),
                         prefix_hit(prompt_keys, set(cached), prompt_len, 4), hint=case_hint)
    return [case("nothing cached yet", [], 15),
            case("the first 2 of 3 blocks cached (15-token prompt, block_size 4)", keys[:2], 15),
            case("blocks 0 and 2 cached, block 1 evicted", [keys[0], keys[2]], 15,
                 "keys are chained: a block counts only if every block before it is cached too; stop at the first miss"),
            case("all 3 blocks cached, 3 more prompt tokens after them", keys, 15),
            case("all 3 blocks cached and the prompt is exactly 12 tokens", keys, 12,
                 "a full hit: every prompt token is cached, but the model must still run the last one, or it has "
                 "no logits to pick the first new token: reuse one token less"),
            case("a 3-token prompt: no full block, nothing to look up", [], 3)]


EXERCISES_10: list[Exercise] = [
    Exercise("10.grow_table", "copy-on-write growth of a block table", grow_table, _grow_cases,
             "a copy of the last block when the next token lands in a block the row may not write, then new blocks "
             "until `ceil((n + m) / block_size)` fit"),
    Exercise("10.prefix_hit", "prompt tokens a prefix cache saves", prefix_hit, _prefix_cases,
             "the leading run of cached blocks, in tokens, at most prompt_len - 1"),
]
