"""Why a wrong diagnosis is wrong: the observation in a mystery's probe that rules a word out.

``rule_out(word, broken, correct)`` reads two probes of the same batch (``probe.py``), the mystery's
and the correct engine's, and returns one sentence in the learner's language: an observation that
is true of this run and that the bug ``word`` names would have changed. Each word has a few such
observations, tried in turn; the first that holds is said. Nothing is written per mystery, so
every sentence is checked against the run it talks about.
"""
from __future__ import annotations

from typing import Callable

from ..i18n import tr
from .probe import Probe


def _name(row: dict) -> str:
    step = row["pass"].removeprefix("step ")
    return tr("the prefill") if step == "prefill" else tr("step {n}", n=step)


def _first_bad(probe: Probe) -> list[int | None]:
    """Per batch row: the first pass whose logits differ from the recompute (None: never)."""
    B = len(probe.rows[0]["logits"])
    return [next((p for p, r in enumerate(probe.rows) if not r["logits"][b]), None) for b in range(B)]


def _axis(broken: Probe, correct: Probe) -> str | None:
    rows = broken.rows
    if all(rows[p]["seq_len"] - rows[p - 1]["seq_len"] == rows[p]["input"][1] for p in range(1, len(rows))):
        return tr("every decode step adds to seq_len exactly the tokens it fed, and nothing raised: "
                  "new keys and values go onto the time axis")
    return None


def _dropout(broken: Probe, correct: Probe) -> str | None:
    return tr("the model runs in eval mode: probing the same mystery again prints the same table, where "
              "dropout would draw new random masks every run")


def _beam(broken: Probe, correct: Probe) -> str | None:
    return tr("no beam search runs here: each row only ever continues its own text, so no cache row "
              "needs to be reordered")


def _refeed(broken: Probe, correct: Probe) -> str | None:
    if all(r["input"][1] == 1 for r in broken.rows[1:]):
        return tr("every decode step feeds one token per row (input ids {shape}), as the correct engine does",
                  shape=broken.rows[1]["input"] if len(broken.rows) > 1 else "[B, 1]")
    return None


def _reset(broken: Probe, correct: Probe) -> str | None:
    if broken.rows[0]["seq_len"] == correct.rows[0]["seq_len"]:
        return tr("right after the prefill the cache holds {n} positions, exactly the prompt's: nothing is left "
                  "over from an earlier request", n=broken.rows[0]["seq_len"])
    return None


def _longer(broken: Probe, correct: Probe) -> tuple[dict, dict] | None:
    """The first pass after which the cache holds more positions than the correct engine's."""
    return next(((r, c) for r, c in zip(broken.rows, correct.rows) if r["seq_len"] > c["seq_len"]), None)


def _position(broken: Probe, correct: Probe) -> str | None:
    longer = _longer(broken, correct)
    if longer is not None:
        r, c = longer
        return tr("in {pass_} the positions number on from the keys the cache already held: its cache holds {S} "
                  "positions after the pass, the correct engine's {S_ok}. The positions follow the cache: "
                  "compare what goes into it", pass_=_name(r), S=r["seq_len"], S_ok=c["seq_len"])
    if all(r["positions"] == c["positions"] for r, c in zip(broken.rows, correct.rows)):
        return tr("every pass gives each row the same positions as the correct engine")
    if all(r["mask"][b] not in ("none", "causal") and r["positions"][b][-1] == r["mask"][b].count("1") - 1
           for r in broken.rows for b in range(len(r["positions"]))):
        return tr("in every pass each row's last position is the number of keys its mask row lets it see, "
                  "minus one: the positions follow the mask")
    return None


def _mask(broken: Probe, correct: Probe) -> str | None:
    if all(r["mask"] == c["mask"] for r, c in zip(broken.rows, correct.rows)):
        return tr("every pass gives each row's last query the same mask row as the correct engine")
    longer = _longer(broken, correct)
    if longer is not None:
        r, c = longer
        return tr("in {pass_} the last query's mask row has one entry per key the cache then holds, {S}; the "
                  "correct engine's cache holds {S_ok}. The mask fits the cache: compare the cache lengths",
                  pass_=_name(r), S=r["seq_len"], S_ok=c["seq_len"])
    return None


def _padding(broken: Probe, correct: Probe) -> str | None:
    first = _first_bad(broken)
    if first[-1] is not None and first[-1] == first[0]:
        return tr("row {b}, which has no padding, goes wrong in the same pass as row 0 ({pass_})",
                  b=len(first) - 1, pass_=_name(broken.rows[first[0]]))
    return None


def _layer0(broken: Probe, correct: Probe) -> str | None:
    first = [p for p in _first_bad(broken) if p is not None]
    if not first:
        return None
    r = broken.rows[min(first)]
    bad = [b for b in range(len(r["logits"])) if not r["logits"][b]]
    if all(not r["out"][b][0] for b in bad):
        return tr("in {pass_}, the first pass that goes wrong, layer 0's output is already wrong (row {b}): a layer "
                  "that reads another layer's keys goes wrong from layer 1 on", pass_=_name(r), b=bad[0])
    return None


def _value(broken: Probe, correct: Probe) -> str | None:
    if all(flags[0] for r in broken.rows for flags in r["v"]):
        return tr("layer 0's new V equals the recompute's in every pass and row")
    return None


_RULES: dict[str, Callable[[Probe, Probe], str | None]] = {
    "position": _position, "mask": _mask, "axis": _axis, "padding": _padding, "dropout": _dropout,
    "layer0": _layer0, "refeed": _refeed, "beam": _beam, "reset": _reset, "value": _value}


def rule_out(word: str, broken: Probe, correct: Probe) -> str:
    """The observation of ``broken`` (a mystery's probe) next to ``correct`` (the correct engine's, same batch)
    that rules ``word`` out, in the learner's language; a pointer back to the probes when none does."""
    found = _RULES[word](broken, correct)
    return found if found is not None else tr("compare the mystery's probe with the correct engine's, pass by pass: "
                                              "which observation differs first?")
