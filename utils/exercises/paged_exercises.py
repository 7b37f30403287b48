"""Exercises of notebook 10 (paged): reference solutions, cases and hints, merged into catalogue.EXERCISES."""
from __future__ import annotations

from ..block_pool import block_keys
from .judges import Case, Exercise, make_case


# --- reference solutions (``exercises.show_solution`` prints them) ---------------------------------

def slot_of(table: list[int], block_size: int, j: int) -> int:
    block = table[j // block_size]  # the pool block holding token j
    return block * block_size + j % block_size  # its first slot, plus j's offset inside the block


def prefix_hit(prompt_keys: list[str], cached_keys: set[str], prompt_len: int, block_size: int) -> int:
    n_blocks = 0
    for key in prompt_keys:  # keys are chained: stop at the first block that is not cached
        if key not in cached_keys:
            break
        n_blocks += 1
    return min(n_blocks * block_size, prompt_len - 1)  # the last prompt token always runs: its logits


# --- cases ------------------------------------------------------------------------------------------

def _slot_cases() -> list[Case]:
    hint = ("token j sits in block `table[j // block_size]`, at offset `j % block_size` inside it; "
            "block b's first slot is `b * block_size`")
    table = [3, 0, 7]
    return [make_case("table [3, 0, 7], block_size 4, token 0: the first slot of block 3", (table, 4, 0),
                      slot_of(table, 4, 0), hint=hint),
            make_case("table [3, 0, 7], block_size 4, token 6", (table, 4, 6), slot_of(table, 4, 6), hint=hint),
            make_case("table [3, 0, 7], block_size 4, token 11: the last slot of block 7", (table, 4, 11),
                      slot_of(table, 4, 11), hint=hint),
            make_case("table [5, 2], block_size 16, token 17", ([5, 2], 16, 17), slot_of([5, 2], 16, 17), hint=hint),
            make_case("table [4, 1, 3, 2], block_size 1: one token per block", ([4, 1, 3, 2], 1, 2),
                      slot_of([4, 1, 3, 2], 1, 2), hint=hint)]


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
    Exercise("10.slot_of", "token j's slot in the pool", slot_of, _slot_cases,
             "`table[j // block_size] * block_size + j % block_size`"),
    Exercise("10.prefix_hit", "prompt tokens a prefix cache saves", prefix_hit, _prefix_cases,
             "the leading run of cached blocks, in tokens, at most prompt_len - 1"),
]
