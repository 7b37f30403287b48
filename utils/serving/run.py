"""What a serving run returns, whichever engine served it: each request's record, and the metrics.

Per request, from its arrival (seconds on the engine's clock): TTFT = waiting + prefill (with setup)
+ first sampling; TPOT = (last - first token) / (n - 1); ITL = each gap between two tokens;
end-to-end latency = last token - arrival. Percentiles are numpy's default everywhere (linear
interpolation between the sorted values). ``summary_table`` prints several runs' summaries side by side;
``trace`` prints a run's first iterations (what each ran, who arrived, joined and left).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..i18n import display_width, pad, tr
from ..validate import check_int


def _per_s(count: int, seconds: float) -> float:
    """``count`` per second (infinite for zero seconds: replayed costs of zero; 0 when nothing was counted)."""
    if count == 0:
        return 0.0
    return count / seconds if seconds > 0 else math.inf


@dataclass(eq=False)  # two requests are the same only if they are one object
class Request:
    """One request as an engine serves it (times in seconds on the engine's clock)."""

    rid: int
    prompt: list[int]
    max_new_tokens: int
    arrival_s: float
    eos: set[int] = field(default_factory=set)
    out: list[int] = field(default_factory=list)  # its new tokens so far (-1 each in a replay: no model ran)
    start_s: float | None = None  # its first prefill began: the waiting ends
    prefill_s: float = 0.0  # from start_s to the end of the forward pass that gave its first token
    sample_s: float = 0.0  # picking its first token, when an engine times it apart (else part of prefill_s)
    token_times: list[float] = field(default_factory=list)  # when each new token existed
    n_preempted: int = 0  # times it lost its K/V to make room (the paged engine), and was recomputed
    done: str = ""  # "", "length", "eos" or "aborted"

    @property
    def wait_s(self) -> float:
        return self.start_s - self.arrival_s

    @property
    def ttft_s(self) -> float:
        return self.token_times[0] - self.arrival_s

    @property
    def tpot_s(self) -> float | None:
        n = len(self.token_times)
        return (self.token_times[-1] - self.token_times[0]) / (n - 1) if n > 1 else None

    @property
    def itl_s(self) -> list[float]:
        return np.diff(self.token_times).tolist()

    @property
    def e2e_s(self) -> float:
        return self.token_times[-1] - self.arrival_s


@dataclass
class Run:
    """What ``run()`` of either engine returns: its requests (by id), its iterations and the metrics.

    ``steps``: one record per iteration, as ``step()`` returned it: ``start_s``, ``end_s``, ``decode``
    (the ids of the rows it decoded), ``prefill`` (``(id, tokens)`` pairs), ``prefill_tokens`` (what its
    prefill forward ran, as the engine counts it), ``running``, ``preempted``, and what the engine adds.
    """

    name: str  # the policy or the engine that served it
    requests: list[Request]
    steps: list[dict]

    @property
    def tokens(self) -> list[list[int]]:
        """Per request id, its new tokens."""
        return [list(r.out) for r in self.requests]

    @property
    def served(self) -> list[Request]:
        """The requests that got at least one token (an aborted one may have none)."""
        return [r for r in self.requests if r.token_times]

    @property
    def busy_s(self) -> float:
        """Seconds the engine computed (the clock also idles between arrivals)."""
        return sum(s["end_s"] - s["start_s"] for s in self.steps)

    @property
    def makespan_s(self) -> float:
        """From the first arrival to the last token."""
        rs = self.served
        if not rs:  # nothing was served: a run of no time
            return 0.0
        return max(r.token_times[-1] for r in rs) - min(r.arrival_s for r in rs)

    def summary(self) -> dict:
        """p50 and p95 (numpy's default percentiles) of TTFT, TPOT, ITL and end-to-end latency, in
        seconds, and throughput: tokens/s and requests/s over the run, tokens/s while computing."""
        rs = self.served
        n_tokens = sum(len(r.token_times) for r in rs)
        out = {"name": self.name, "n": len(rs), "tokens": n_tokens}
        series = {"ttft": [r.ttft_s for r in rs], "e2e": [r.e2e_s for r in rs], "wait": [r.wait_s for r in rs],
                  "tpot": [r.tpot_s for r in rs if r.tpot_s is not None],
                  "itl": [g for r in rs for g in r.itl_s]}  # ITL pools every gap of every request
        for key, xs in series.items():
            for q in (50, 95):
                out[f"{key}_p{q}_s"] = float(np.percentile(xs, q)) if xs else math.nan
        out.update(makespan_s=self.makespan_s, busy_s=self.busy_s, tokens_per_s=_per_s(n_tokens, self.makespan_s),
                   requests_per_s=_per_s(len(rs), self.makespan_s), busy_tokens_per_s=_per_s(n_tokens, self.busy_s))
        return out

    def trace(self, max_lines: int = 20, until_leaves: int | None = None) -> str:
        """The first iterations as lines to read: see ``trace``."""
        return trace(self, max_lines, until_leaves)

    def schedule(self) -> dict:
        """Per-request lists for ``utils.plots.plot_schedules`` (seconds), and the run's ``summary()``."""
        rs = self.served
        return {"arrival_s": [r.arrival_s for r in rs], "wait_s": [r.wait_s for r in rs],
                "prefill_s": [r.prefill_s for r in rs], "sample_s": [r.sample_s for r in rs],
                "ttft_s": [r.ttft_s for r in rs], "token_times": [r.token_times for r in rs], **self.summary()}


def summary_table(summaries: dict, labels: tuple[str, ...] = ("",), *, e2e: bool = False) -> str:
    """The lines of a table of run summaries (``Run.summary()``), one line per run, headers in the current
    language: TTFT, TPOT and ITL p50 and p95 (ms), with ``e2e`` the end-to-end latency too, then the
    throughput over the run (tokens/s, requests/s) and while computing (tokens/s).

    ``summaries``: label -> summary, where a label is a string or a tuple of strings (one per label column,
    e.g. ``(load, policy)``); ``labels``: the headers of those columns. Cells are padded by display width
    (``utils.i18n.pad``), so Chinese labels line up.
    """
    rows = [((key,) if isinstance(key, str) else tuple(key), s) for key, s in summaries.items()]
    labels = tuple(labels)
    if any(len(key) != len(labels) for key, _ in rows):
        raise ValueError(f"every label needs {len(labels)} part(s), one per header in labels={labels!r}")
    # (title, [(column header, summary key, scale, decimals), ...]) per group of columns
    ms = {key: [(f"p{q}", f"{key}_p{q}_s", 1e3, d) for q in (50, 95)] for key, d in
          (("ttft", 1), ("tpot", 2), ("itl", 2), ("e2e", 1))}
    groups = [("TTFT (ms)", ms["ttft"]), ("TPOT (ms)", ms["tpot"]), ("ITL (ms)", ms["itl"])]
    groups += [(tr("end to end (ms)"), ms["e2e"])] if e2e else []
    groups += [(tr("throughput"), [("tokens/s", "tokens_per_s", 1, 0), ("requests/s", "requests_per_s", 1, 1)]),
               (tr("while computing"), [("tokens/s", "busy_tokens_per_s", 1, 0)])]
    label_w = [max(display_width(h), *(display_width(key[i]) for key, _ in rows)) for i, h in enumerate(labels)]
    titles, heads = [" ".join(pad(h, w) for h, w in zip(labels, label_w))], [" " * (sum(label_w) + len(label_w) - 1)]
    lines = [[" ".join(pad(k, w) for k, w in zip(key, label_w))] for key, _ in rows]
    for title, cols in groups:
        values = [[f"{s[key] * scale:,.{d}f}" for _, key, scale, d in cols] for _, s in rows]
        widths = [max(len(head), *(len(v[i]) for v in values)) + 1 for i, (head, *_) in enumerate(cols)]
        widths[0] += max(0, display_width(title) + 1 - sum(widths))  # a wide title widens its first column
        titles.append(pad(title, sum(widths), "^"))
        heads.append("".join(pad(head, w, ">") for (head, *_), w in zip(cols, widths)))
        for line, v in zip(lines, values):
            line.append("".join(pad(x, w, ">") for x, w in zip(v, widths)))
    return "\n".join(" | ".join(parts).rstrip() for parts in [titles, heads, *lines])



def _ids(rids) -> str:
    return " ".join(f"r{rid}" for rid in rids)


def _events(run: Run, i: int, since: float) -> tuple[list[str], int]:
    """What happened in iteration ``i`` (and in the idle time before it, from ``since``): requests that
    arrived, joined the batch, were preempted, got their last token; and how many finished."""
    steps, s = run.steps, run.steps[i]
    before = set(steps[i - 1]["running"]) if i else set()
    arrived = [tr("r{rid} ({ms:.1f} ms)", rid=r.rid, ms=r.arrival_s * 1e3)
               for r in run.requests if since < r.arrival_s <= s["end_s"]]
    joined = [rid for rid in s["running"] if rid not in before]
    events = [tr("arrived: {who}", who=tr(", ").join(arrived))] if arrived else []
    events += [tr("joined: {ids}", ids=_ids(joined))] if joined else []
    events += [tr("preempted: {ids}", ids=_ids(s["preempted"]))] if s.get("preempted") else []
    later = steps[i + 1]["decode"] if i + 1 < len(steps) else []
    finished = [r for r in run.requests if r.done in ("length", "eos") and r.token_times
                and s["start_s"] < r.token_times[-1] <= s["end_s"]]  # its last token came in this iteration
    events += [tr("r{rid} done, its row rides along", rid=r.rid) if r.rid in later
               else tr("r{rid} done, leaves", rid=r.rid) for r in finished]
    return events, len(finished)


def trace(run: Run, max_lines: int = 20, until_leaves: int | None = None) -> str:
    """A run's first iterations, one line each, in the current language: when it ran on the engine's
    clock (ms), what it ran (a prefill of which requests, a decode step of which rows), the batch after
    it, and what happened: requests that arrived, joined the batch, got their last token and left (in a
    static batch a finished row rides along until the longest ends). Decode steps of the same rows in
    which nothing happens are folded into one line. Stops after ``max_lines`` lines or, with
    ``until_leaves``, after the line where that many requests have finished."""
    check_int("max_lines", max_lines)
    if until_leaves is not None:
        check_int("until_leaves", until_leaves)
    rows, i, since, finished = [], 0, -math.inf, 0
    while i < len(run.steps) and len(rows) < max_lines:
        s = run.steps[i]
        events, n_done = _events(run, i, since)
        j = i  # fold the next decode-only iterations of the same rows in which nothing happens
        while (not events and not s["prefill"] and j + 1 < len(run.steps) and not run.steps[j + 1]["prefill"]
               and run.steps[j + 1]["decode"] == s["decode"] and not _events(run, j + 1, run.steps[j]["end_s"])[0]):
            j += 1
        ran = []
        if s["prefill"]:
            ran.append(tr("prefill {ids} ({n} tokens)", ids=_ids(rid for rid, _ in s["prefill"]),
                          n=sum(n for _, n in s["prefill"])))
        if s["decode"]:
            ran.append(tr("decode {ids}", ids=_ids(s["decode"])) if j == i
                       else tr("{n} decode steps of {ids}", n=j - i + 1, ids=_ids(s["decode"])))
        rows.append((f"{i}" if j == i else f"{i}-{j}", f"{s['start_s'] * 1e3:.1f} - {run.steps[j]['end_s'] * 1e3:.1f}",
                     " + ".join(ran), _ids(run.steps[j]["running"]), tr("; ").join(events)))
        finished += n_done
        since, i = run.steps[j]["end_s"], j + 1
        if until_leaves is not None and finished >= until_leaves:
            break
    heads = (tr("iteration"), tr("clock (ms)"), tr("ran"), tr("batch after"), tr("what happened"))
    widths = [max([display_width(h)] + [display_width(row[k]) for row in rows]) for k, h in enumerate(heads)]
    return "\n".join("  ".join(pad(x, w) for x, w in zip(row, widths)).rstrip() for row in [heads, *rows])
