"""Padding for printed tables that hold Chinese: a wide character takes two columns.

``str.ljust`` and f-string widths count characters, so a column holding 猫 or 兔子 ends up one
column short per Chinese character and the table drifts. Every table the course prints pads its
cells here instead::

    pad("兔子", 6) + "|"     # '兔子  |': 兔子 takes 4 columns, 2 spaces make 6
"""
from __future__ import annotations

import unicodedata


def display_width(text: str) -> int:
    """Columns ``text`` takes in a monospace font: East Asian wide and full-width characters count two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in str(text))


def pad(text, width: int, align: str = "<") -> str:
    """``text`` padded with spaces to ``width`` columns: ``align`` "<" (left), ">" (right) or "^" (centre).

    A text wider than ``width`` is returned whole, as f-string widths do.
    """
    if align not in ("<", ">", "^"):
        raise ValueError(f"align must be '<', '>' or '^', got {align!r}")
    text = str(text)
    gap = max(0, width - display_width(text))
    if align == "<":
        return text + " " * gap
    if align == ">":
        return " " * gap + text
    return " " * (gap // 2) + text + " " * (gap - gap // 2)
