"""utils.check.check: a claim prints the line a learner reads and fails loudly when false."""
import pytest
import torch

from utils.check import check


def test_a_true_claim_prints_its_line_and_nothing_else(capsys):
    assert check("cached == recompute", torch.tensor(True)) is None  # a cell ending with check shows no stray value
    assert capsys.readouterr().out == "cached == recompute: True\n"


def test_a_false_claim_raises_with_its_label(capsys):
    with pytest.raises(AssertionError, match="by hand == the model's layer"):
        check("by hand == the model's layer", False)
    assert capsys.readouterr().out == "by hand == the model's layer: False\n"


def test_a_broken_variant_states_that_it_is_expected_to_fail(capsys):
    check("impostor cache gives the same token", False, expect=False)
    assert capsys.readouterr().out == "impostor cache gives the same token: False (a broken variant: expected False)\n"
    with pytest.raises(AssertionError, match="expected False"):
        check("impostor cache gives the same token", True, expect=False)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="one truth value"):
        check("all equal", torch.tensor([True, False]))
    with pytest.raises(ValueError, match="label"):
        check("", True)
    with pytest.raises(ValueError, match="expect"):
        check("x", True, expect="no")
