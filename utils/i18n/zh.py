"""The Chinese catalogue: one dict, English text -> Chinese, gathered from the parts by screen area.

A key may appear in two parts only with the same translation (checked on import).
"""
from __future__ import annotations

from . import (zh_compression, zh_core, zh_errors, zh_exercises, zh_grammar, zh_paged, zh_quiz, zh_inference,
               zh_practice, zh_serving, zh_speculative, zh_numerics)


def _merge(*parts) -> dict[str, str]:
    merged: dict[str, str] = {}
    for part in parts:
        for key, text in part.MESSAGES.items():
            if merged.get(key, text) != text:
                raise ValueError(f"{part.__name__}: {key!r} is translated two ways: {merged[key]!r} and {text!r}")
            merged[key] = text
    return merged


MESSAGES = _merge(zh_core, zh_inference, zh_practice, zh_quiz, zh_exercises, zh_paged, zh_serving, zh_speculative,
                  zh_compression, zh_grammar, zh_errors, zh_numerics)
