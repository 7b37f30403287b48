"""Panel of notebook 07 (the bug lab): one broken variant, its diff and its divergence."""
from __future__ import annotations

import html
import re

import ipywidgets as widgets

from ..bug_lab import catalogue as bugs
from ..i18n import tr
from ..plots.bug_lab import plot_bug_divergence
from .base import Panel, dropdown


def diff_html(diff: str) -> str:
    """A unified diff as HTML: removed lines red, added lines green."""
    rows = []
    for line in diff.splitlines():
        color = {"-": "#fdd", "+": "#dfd", "@": "#eef"}.get(line[:1], "transparent")
        if line.startswith(("---", "+++")):
            color = "#eee"
        rows.append(f"<div style='background:{color};white-space:pre'>{html.escape(line) or ' '}</div>")
    return f"<div style='font-family:monospace;font-size:85%'>{''.join(rows)}</div>"


def _prose(text: str) -> str:
    """Escaped text with its `code` spans (the Chinese catalogue marks code names so) as <code>."""
    return re.sub(r"`([^`]*)`", r"<code>\1</code>", html.escape(text))


class BugLabPanel(Panel):
    """07 · Bug lab: pick a bug, switch its fix on and off, watch the recompute check.

    Controls: the bug (``utils.bug_lab.BUGS``) and "apply the fix". Shows the diff from the broken to
    the fixed code, the check's verdict (first diverging step and position, or the error torch
    raised) and the per-step logit differences. Every (bug, fix) result is computed once, then reused.
    """

    title = "Bug lab: break the cache, then fix it"
    keeps_figures = True  # one figure per (bug, fix), drawn once

    def __init__(self, model, prompt) -> None:
        self.model, self.prompt = model, prompt
        self._runs: dict[tuple[str, bool], object] = {}  # (bug, fixed) -> Outcome
        self._figs: dict[tuple[str, bool], object] = {}  # (bug, fixed) -> figure
        super().__init__({
            "bug": dropdown(tr("bug"), [(tr(b.title), b.key) for b in bugs.BUGS], bugs.BUGS[0].key),
            "fixed": widgets.Checkbox(value=False, description=tr("apply the fix")),
        })

    def compute(self, bug: str, fixed: bool) -> dict:
        if (bug, fixed) not in self._runs:
            self._runs[(bug, fixed)] = bugs.BUG_BY_KEY[bug].run(self.model, self.prompt, fixed)
        out = self._runs[(bug, fixed)]
        b = bugs.BUG_BY_KEY[bug]
        return {
            "bug": bug, "title": b.title, "fixed": fixed, "caught": out.caught, "summary": out.summary(),
            "first_step": out.first_step, "raised": out.error,
            "diffs": None if out.report is None else list(out.report.max_diffs),
            "symptom": b.symptom, "cause": b.cause, "check": b.check, "diff": bugs.show_fix(b),
        }

    def render(self, s: dict) -> str:
        color = "#b00" if s["caught"] else "#070"
        verdict = f"<b style='color:{color}'>{html.escape(s['summary'])}</b>"
        if s["raised"]:
            verdict += f"<br><code>{html.escape(s['raised'][:300])}</code>"
        code = tr("fixed code") if s["fixed"] else tr("broken code")
        fields = (("symptom", "symptom"), ("cause", "cause"), ("check", "check / fix"))  # state key, heading
        notes = " &middot; ".join(f"<b>{tr(name)}</b> {_prose(tr(s[key]))}" for key, name in fields)
        return (f"<p>{tr('{code}, checked against a full recompute: {verdict}', code=code, verdict=verdict)}</p>"
                f"<p>{notes}</p>{diff_html(s['diff'])}")

    def plot(self, s: dict):
        if s["diffs"] is None:
            return None
        key = (s["bug"], s["fixed"])
        if key not in self._figs:  # one figure per (bug, fix): flipping back and forth is instant
            title = tr(s["title"])
            label = tr("{title} (fixed)", title=title) if s["fixed"] else tr("{title} (broken)", title=title)
            self._figs[key] = plot_bug_divergence({label: s["diffs"]}, bugs.TOL, title=s["summary"])
        return self._figs[key]
