"""How a typed fill-in answer is compared with the right one: numbers as numbers, with or without a unit.

    same("2 GiB", 2.0, "GiB")      True    the unit of the question
    same("2048 MiB", 2.0, "GiB")   True    another unit of the same kind, converted
    same("2 MiB", 2.0, "GiB")      False   the right number in the wrong unit is wrong
    same("7/4", 1.75)              True    a fraction
    same("20 ms", 20.0, "ms")      True
    same("[2, 2, 0, 1]", "[2.0, 2.0, 0.0, 1.0]")   True   a list (or a shape) compares number by number

A question's ``unit`` is a key of ``UNITS`` (any case: "GiB"); a typed unit must be one of the same kind (bytes, time,
bits, ...), in English or Chinese. A question without a unit takes a bare number only. Text that is
not a number compares as text: case, whitespace, brackets around a shape and a final full stop do not
matter.
"""
from __future__ import annotations

import math
import re

# unit word (casefolded) -> (kind, how many of the kind's base unit it is)
UNITS: dict[str, tuple[str, float]] = {
    **{w: ("bytes", 1) for w in ("b", "byte", "bytes", "字节")},
    **{w: ("bytes", 2**10) for w in ("kib",)},
    **{w: ("bytes", 2**20) for w in ("mib",)},
    **{w: ("bytes", 2**30) for w in ("gib",)},
    **{w: ("bytes", 10**3) for w in ("kb",)},
    **{w: ("bytes", 10**6) for w in ("mb",)},
    **{w: ("bytes", 10**9) for w in ("gb",)},
    **{w: ("time", 1) for w in ("s", "sec", "second", "seconds", "秒")},
    **{w: ("time", 1e-3) for w in ("ms", "millisecond", "milliseconds", "毫秒")},
    **{w: ("time", 1e-6) for w in ("us", "µs", "μs", "微秒")},
    **{w: ("bits", 1) for w in ("bit", "bits", "位", "比特")},
    **{w: ("tokens", 1) for w in ("token", "tokens", "个token")},
    **{w: ("positions", 1) for w in ("position", "positions", "个位置", "位置")},
    **{w: ("times", 1) for w in ("x", "×", "times", "倍")},
    **{w: ("intensity", 1) for w in ("flops/byte", "flop/byte", "flops/b", "flopsperbyte", "flops/字节")},
}

# how the answer key writes a question's unit after the number, by language (a unit not listed: as it is)
UNIT_NAMES = {"bits": {"en": "bits", "zh": "位"}, "bytes": {"en": "bytes", "zh": "字节"},
              "tokens": {"en": "tokens", "zh": "个 token"}, "positions": {"en": "positions", "zh": "个位置"},
              "times": {"en": "times", "zh": "倍"}}

_NUMBER = r"[-+−]?(?:\d[\d,_]*(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?"
_QUANTITY = re.compile(rf"^({_NUMBER})(?:/({_NUMBER}))?(.*)$")


def parse_number(text: str) -> float | None:
    """``text`` as a number: 131072, 131,072, 1_2, 4.25, 7/4 (a fraction); None if it is not one."""
    q = parse_quantity(text)
    return q[0] if q and not q[1] else None


def parse_quantity(text) -> tuple[float, str] | None:
    """``text`` as (number, unit written after it, casefolded and without spaces; "" if none), or None."""
    s = re.sub(r"\s+", "", str(text)).casefold().rstrip(".。")
    m = _QUANTITY.match(s)
    if not m:
        return None
    num, den, unit = m.groups()
    try:
        value = _float(num) / (_float(den) if den else 1.0)
    except (ValueError, ZeroDivisionError):
        return None
    return value, unit


def same(value, expected, unit: str | None = None) -> bool:
    """Whether the typed ``value`` is the answer ``expected`` (a number, or a text such as a shape) of a
    question whose answer is counted in ``unit`` (a key of ``UNITS``, or None)."""
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        got = parse_quantity(value)
        if got is None:
            return False
        number, typed = got
        if typed:
            counted = UNITS.get(unit.casefold()) if unit else None
            if counted is None or typed not in UNITS or UNITS[typed][0] != counted[0]:
                return False  # a unit where the question has none, or a unit of another kind
            number *= UNITS[typed][1] / counted[1]
        return math.isclose(number, expected, rel_tol=1e-9, abs_tol=1e-12)
    listed = _numbers(expected)
    if listed is not None:
        got = _numbers(value)
        return got is not None and len(got) == len(listed) and all(
            math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) for a, b in zip(got, listed))
    return _normalise(value) == _normalise(expected)


def _float(s: str) -> float:
    return float(re.sub(r"[,_]", "", s).replace("−", "-"))


def _normalise(text) -> str:
    """Case and whitespace do not matter, nor brackets around a shape or a final full stop."""
    s = re.sub(r"\s+", "", str(text)).casefold().rstrip(".")
    s = s.removeprefix("torch.size")
    return s.strip("[]()")


def _numbers(text) -> list[float] | None:
    """A list of two or more numbers, "[1, 2, 3]" or "(1,2,3)" or "1, 2, 3", as floats; None otherwise."""
    parts = _normalise(text).split(",")
    if len(parts) < 2:
        return None
    try:
        return [_float(p) for p in parts]
    except ValueError:
        return None
