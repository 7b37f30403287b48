"""The bug lab's broken variants are each caught by the recompute check, and their fixes pass."""
import inspect
import json
import re
from pathlib import Path

import pytest
import torch

from conftest import tiny_model
from utils import compare_with_recompute
from utils import bug_lab as bugs
from utils.generate import left_pad

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def model():
    return tiny_model("GQA")


@pytest.fixture(scope="module")
def prompt():
    return torch.randint(3, 101, (1, 8), generator=torch.Generator().manual_seed(3))


@pytest.mark.parametrize("bug", bugs.BUGS, ids=lambda b: b.key)
def test_each_bug_is_caught_and_its_fix_passes(model, prompt, bug):
    broken = bug.run(model, prompt, False)
    fixed = bug.run(model, prompt, True)
    assert broken.caught, f"{bug.key}: the check missed the bug ({broken.summary()})"
    assert fixed.error is None and fixed.report.ok, f"{bug.key}: the fix fails ({fixed.summary()})"
    assert not fixed.caught
    assert fixed.ok and not broken.ok
    assert broken.first_step is not None and fixed.first_step is None


EXPECTED_FIRST_STEP = {  # prefill-only bugs show at step 0, decode bugs at step 1, beams once parents reshuffle
    "positions": 1, "refeed": 1, "concat_axis": 1, "mask": 1, "padding": 0, "dropout": 0, "layer0": 1,
}


@pytest.mark.parametrize("key", list(EXPECTED_FIRST_STEP))
def test_first_diverging_step(model, prompt, key):
    assert bugs.BUG_BY_KEY[key].run(model, prompt, False).first_step == EXPECTED_FIRST_STEP[key]


def test_beam_bug_shows_after_the_first_step(model, prompt):
    assert bugs.BUG_BY_KEY["beam"].run(model, prompt, False).first_step >= 1


@pytest.mark.parametrize("kind", ["MHA", "GQA", "MQA"])
def test_decode_bugs_caught_in_every_attention_layout(kind, prompt):
    m = tiny_model(kind)
    for key in ("positions", "refeed", "mask", "layer0"):
        assert bugs.BUG_BY_KEY[key].run(m, prompt, False).caught, (kind, key)
        assert not bugs.BUG_BY_KEY[key].run(m, prompt, True).caught, (kind, key)


def test_wrong_axis_raises_for_a_long_prompt(model, prompt):
    out = bugs.run_check(model, prompt, prefill_fn=bugs.prefill_into(bugs.ConcatOnHeadsKVCache))
    assert out.error.startswith("RuntimeError") and out.error_step == 1
    assert out.report.ok and len(out.report.max_diffs) == 1  # the prefill, before the error, was fine
    assert out.summary() == "raises RuntimeError at step 1"


def test_wrong_axis_with_a_one_token_prompt(prompt):
    """With T = 1 torch.cat succeeds; the readable attention then gives wrong numbers without an error."""
    m = tiny_model("GQA")
    wrong_axis = bugs.prefill_into(bugs.ConcatOnHeadsKVCache)
    assert bugs.run_check(m, prompt[:, :1], 1, prefill_fn=wrong_axis).caught  # fast path: raises or diverges
    m.set_attn_impl("explicit")
    out = bugs.run_check(m, prompt[:, :1], 1, prefill_fn=wrong_axis)
    assert out.error is None and out.report.first_bad_step == 1 and out.report.first_bad_position == 1


def test_short_mask_in_chunked_prefill_raises_and_its_fix_passes(model, prompt):
    broken = bugs.run_check(model, prompt, prefill_fn=bugs.prefill_chunks_short_mask)
    assert broken.error is not None and broken.error_step == 0
    fixed = bugs.run_check(model, prompt, prefill_fn=bugs.prefill_chunks_full_mask)
    assert fixed.report.ok


def test_masked_forward_with_the_causal_mask_equals_the_model(model, prompt):
    from utils.attention import causal_mask
    from utils.model import masked_forward

    with torch.inference_mode():
        torch.testing.assert_close(masked_forward(model, prompt, causal_mask(8, 8)), model(prompt),
                                   atol=1e-5, rtol=0)


def test_masked_forward_counts_each_rows_real_tokens_and_uses_the_mask_as_given(model, prompt):
    """Notebook 07 once said masked_forward gives every row the position cache.seq_len. It does not: without
    positions it counts each row's real tokens, as the model does; a mask of ones is what lets the padded
    row see its pad keys (mystery 7)."""
    from utils.generate import prefill
    from utils.model import masked_forward, plan_step

    ids, mask = bugs.padded_batch(prompt)  # (2, T): row 0 padded on the left
    with torch.inference_mode():
        logits, cache = prefill(model, ids, mask)
        token = logits.argmax(-1)  # (2,)
        positions = plan_step(cache, 2, 1).positions  # what masked_forward uses when given none
        assert positions[:, 0].tolist() == cache.valid_counts().tolist() != [cache.seq_len] * 2
        got = masked_forward(model, token[:, None], torch.ones(1, cache.seq_len + 1, dtype=torch.bool), cache=cache)
        full_mask = torch.cat([mask, torch.ones(2, 1, dtype=mask.dtype)], 1)  # (2, T + 1)
        full = model(torch.cat([ids, token[:, None]], 1), attention_mask=full_mask)
    diff = (got[:, -1] - full[:, -1]).abs().amax(-1)  # (2,)
    assert diff[1] < 1e-4 < diff[0]  # the full row is right; the padded row saw its padding


def test_dropout_bug_needs_train_mode_and_dropout(model, prompt):
    twin = bugs.with_dropout(model, 0.1)
    assert twin.cfg.dropout == 0.1 and not twin.training
    assert bugs.state_hash(twin) == bugs.state_hash(model)  # same weights
    assert compare_with_recompute(twin, prompt, 3, tol=bugs.TOL, step="modules").ok  # eval: dropout is the identity
    twin.train()
    assert not compare_with_recompute(twin, prompt, 3, tol=bugs.TOL, step="modules").ok


def test_use_cache_changes_no_parameter(model, prompt):
    hashes = bugs.use_cache_hashes(model, prompt, 4)
    assert len(hashes) == 3 and len(set(hashes.values())) == 1


def test_state_hash_sees_a_changed_weight():
    m = tiny_model("GQA")
    before = bugs.state_hash(m)
    with torch.no_grad():
        m.layers[1].mlp.up_proj.weight[0, 0] += 1e-3
    assert bugs.state_hash(m) != before


def test_outcome_summaries_are_deterministic_text(model, prompt):
    results = bugs.run_all(model, prompt)
    text = bugs.table(results, bugs.use_cache_hashes(model, prompt, 2))
    assert len(text.splitlines()) == 2 + len(bugs.BUGS) + 1 and text.endswith("hashes equal: True")
    for bug, broken, fixed in results:
        assert bug.title in text
        assert "e-" not in broken.summary() and fixed.summary().startswith("OK")


def test_show_fix_is_a_small_diff():
    for bug in bugs.BUGS:
        diff = bugs.show_fix(bug)
        changed = [l for l in diff.splitlines() if l[:1] in "+-" and not l.startswith(("+++", "---"))]
        assert 2 <= len(changed) <= 6, (bug.key, diff)
        assert any("BUG" in l or l.startswith("-") for l in changed)


def test_every_bug_shows_a_broken_and_a_fixed_function_or_class():
    for bug in bugs.BUGS:
        for variant in (bug.broken, bug.fixed):
            assert inspect.isfunction(variant) or inspect.isclass(variant), (bug.key, variant)
        diff = bugs.show_fix(bug.key)
        assert "# BUG" in diff and "# FIX" in diff, bug.key


def test_sections_are_numbered_as_notebook_07_and_its_lessons_number_the_bugs():
    sections = [int(n) for n in re.findall(r"^# --- (\d+)\. ", Path(bugs.catalogue.__file__).read_text(), re.M)]
    cells = json.loads((ROOT / "notebooks" / "07_bug_lab.ipynb").read_text())["cells"]
    headings = [int(n) for c in cells if c["cell_type"] == "markdown"
                for n in re.findall(r"^## (\d+) · ", "".join(c["source"]), re.M)]
    assert sections == headings == list(range(1, len(sections) + 1)), (sections, headings)
    for lang in ("en", "zh"):
        lesson = (ROOT / "lessons" / lang / "07-bug-lab.md").read_text()
        assert [int(n) for n in re.findall(r"^\*\*(\d+) · ", lesson, re.M)] == sections, lang


def test_left_pad():
    ids, mask = left_pad([[5, 6], [7, 8, 9]], pad_id=0)
    assert ids.tolist() == [[0, 5, 6], [7, 8, 9]] and mask.tolist() == [[0, 1, 1], [1, 1, 1]]


def test_run_check_turns_torch_errors_into_outcomes_but_lets_an_unwritten_stub_through(model, prompt):
    def stub(model, token_ids, cache):
        raise NotImplementedError

    def broken(model, token_ids, cache):
        raise RuntimeError("shapes do not match")

    with pytest.raises(NotImplementedError):  # the exercises say "not written yet" on it, never "raises"
        bugs.run_check(model, prompt, step_fn=stub)
    outcome = bugs.run_check(model, prompt, step_fn=broken)
    assert outcome.caught and outcome.error_step == 1 and outcome.summary() == "raises RuntimeError at step 1"
