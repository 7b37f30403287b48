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


def test_a_claim_false_by_nature_is_marked_expected_not_broken(capsys):
    check("'cats'.endswith('ca')", "cats".endswith("ca"), expect=False, broken=False)
    assert capsys.readouterr().out == "'cats'.endswith('ca'): False (expected False)\n"
    with pytest.raises(AssertionError, match="expected False"):
        check("'ca'.endswith('ca')", True, expect=False, broken=False)
    check("a true claim", True, broken=False)  # broken only words an expected False
    assert capsys.readouterr().out.endswith("a true claim: True\n")


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="one truth value"):
        check("all equal", torch.tensor([True, False]))
    with pytest.raises(ValueError, match="label"):
        check("", True)
    with pytest.raises(ValueError, match="expect"):
        check("x", True, expect="no")
    with pytest.raises(ValueError, match="broken"):
        check("x", False, expect=False, broken="no")
