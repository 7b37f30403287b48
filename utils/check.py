"""What a notebook claims, checked: the one helper every proof goes through.

A notebook that proves something by computing it prints the line the learner reads *and* stops
when the claim is false, so a wrong result can never be committed as a stored output:

    check("cached == recompute within 1e-05", report.ok)
    check("the broken cache gives the same token", same, expect=False)   # a bug, shown on purpose

``expect=False`` states in the code that a broken variant is *meant* to fail its claim. A claim that is
false by nature, not by a bug (a test that rightly answers no), says ``broken=False``:

    check("'cats'.endswith('ca')", "cats".endswith("ca"), expect=False, broken=False)
"""
from __future__ import annotations

from .i18n import tr


def check(label: str, condition, expect: bool = True, broken: bool = True) -> None:
    """Print ``label: True`` (or ``False``) and raise ``AssertionError`` unless it equals ``expect``.

    ``condition`` is anything with a truth value of one element: a bool, a one-element tensor
    or array. Returns nothing, so a cell that ends with a check shows only the printed line.
    An expected ``False`` is marked as a broken variant's, or, with ``broken=False``, only as expected.
    """
    if not isinstance(label, str) or not label:
        raise ValueError(f"check needs a label saying what is claimed, got {label!r}")
    if not isinstance(expect, bool):
        raise ValueError(f"expect must be True or False, got {expect!r}")
    if not isinstance(broken, bool):
        raise ValueError(f"broken must be True or False, got {broken!r}")
    try:
        value = bool(condition)
    except (RuntimeError, ValueError) as e:  # a tensor or array of several elements
        raise ValueError(f"check({label!r}, ...) needs one truth value; reduce it first (.all(), .any()): {e}") from None
    note = ""
    if not expect and not value:
        note = tr(" (a broken variant: expected False)") if broken else tr(" (expected False)")
    print(tr("{label}: {value}{note}", label=label, value=value, note=note))
    if value != expect:
        raise AssertionError(f"claim failed: {label!r} is {value}, expected {expect}")
