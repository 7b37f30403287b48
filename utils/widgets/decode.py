"""Panel of notebook 03 (decode): step by step, what is cached and what is computed."""
from __future__ import annotations

import html

import ipywidgets as widgets
import torch

from ..cache import KVCache
from ..generate import decode_step, prefill
from ..i18n import in_language, language, tr
from ..perf.stats import torch_threads
from ..plots.base import COLORS, text_label, token_label
from .base import _STYLE, Panel, int_slider


# The panel's prompt, in the notebook's language (``in_language(DECODE_PROMPT)``): a second sentence
# just begun, so the continuation has a few words to go.
DECODE_PROMPT = {"en": "<BOS> he has three small dogs . they", "zh": "<BOS> 他 有 三 只 小 狗 。 他们"}

# The viewer's two grids are HTML tables: cheap to redraw on every slider move. Same colours as the figures.
_DECODE_CSS = (
    "<style>"
    ".decode-grid{border-collapse:collapse;font-size:11px;line-height:1.1}"
    ".decode-grid td{width:15px;height:15px;padding:0;border:1px solid #fff}"
    ".decode-grid td.lab{width:auto;border:none;padding:0 6px 0 0;text-align:right;white-space:nowrap;color:#444}"
    ".decode-grid th{font-weight:normal;font-size:10px;padding:0 0 3px 0;vertical-align:bottom;color:#444}"
    ".decode-grid th span{writing-mode:vertical-rl;white-space:nowrap}"
    ".decode-grid td.empty{background:#f2f2f2}"
    f".decode-grid td.prompt{{background:{COLORS['prefill']}}}"
    f".decode-grid td.recomputed{{background:{COLORS['recompute']}}}"
    f".decode-grid td.new{{background:{COLORS['cached']}}}"
    f".decode-grid td.appended{{background:{COLORS['decode']}}}"
    ".decode-grid td.last{box-shadow:inset 0 0 0 2px #000}"
    ".decode-grid tr.future td{opacity:.25}"
    ".decode-grid tr.now td.lab{font-weight:bold;color:#000}"
    ".decode-grid tr.now td:not(.lab):not(.empty){box-shadow:inset 0 2px 0 #000,inset 0 -2px 0 #000}"  # this step's run positions, framed
    ".decode-key span{display:inline-block;width:11px;height:11px;margin:0 4px 0 12px;vertical-align:middle}"
    "</style>"
)


def _grid_table(kind: str, header: list[str], rows: list[tuple[str, str, list[str]]]) -> str:
    """``rows``: (row class, label, one CSS class per cell); ``header``: one label per column."""
    head = "".join(f"<th><span>{html.escape(h)}</span></th>" for h in header)
    body = "".join(
        f"<tr class='{cls}'><td class='lab'>{label}</td>" + "".join(f"<td class='{c}'></td>" for c in cells) + "</tr>"
        for cls, label, cells in rows
    )
    return f"<table class='decode-grid {kind}'><tr><th></th>{head}</tr>{body}</table>"


def decode_grids_html(s: dict) -> str:
    """The two grids of a ``DecodePanel`` state, side by side (the same as ``plots.plot_decode_grids``).

    Left (``decode-nocache``): steps x positions; ``recomputed`` cells are history positions a loop
    without cache runs again, ``new`` the token fed at that step. Right (``decode-cache``): layers x
    positions, what each layer's cache holds after the current step (``prompt`` = from prefill,
    ``appended`` = from decode steps, ``last`` = the column this step appended).
    """
    T0, n_steps, step = s["prompt_len"], s["n_steps"], s["step"]
    n_pos = T0 + n_steps
    header = [f"{token_label(w)} {i}" for i, w in enumerate(s["tokens"][:n_pos])]
    left = []
    for r in range(n_steps + 1):
        if r == 0:
            cells = ["prompt"] * T0 + ["empty"] * n_steps
        else:
            cells = ["recomputed"] * (T0 + r - 1) + ["new"] + ["empty"] * (n_pos - T0 - r)
        cls = "now" if r == step else ("future" if r > step else "past")
        label = tr("prefill") if r == 0 else tr("step {r}", r=r)
        left.append((cls, ("&#9654; " if r == step else "") + label, cells))
    right = []
    for layer, n in enumerate(s["cache_len_per_layer"]):
        cells = ["prompt"] * min(n, T0) + ["appended"] * max(0, n - T0) + ["empty"] * (n_pos - n)
        if n > T0 and step:
            cells[n - 1] += " last"
        right.append(("layer", tr("layer {layer}", layer=layer), cells))
    # one entry per mark, as in plot_decode_grids: each colour, the black frames, the pale rows, the grey slots
    key = "".join(f"<span style='{css}'></span>{t}" for css, t in [
        (f"background:{COLORS['prefill']}", tr("prompt (prefill)")),
        (f"background:{COLORS['recompute']}", tr("history recomputed (no cache)")),
        (f"background:{COLORS['cached']}", tr("new token (both loops compute it)")),
        (f"background:{COLORS['decode']}", tr("K/V appended by decode")),
        ("box-shadow:inset 0 0 0 2px #000", tr("black frame: this step; its new K/V")),
        (f"background:{COLORS['recompute']};opacity:.25", tr("pale: later steps, not run yet")),
        ("background:#f2f2f2", tr("grey: no token there yet"))])
    box = "<div style='overflow-x:auto;max-width:100%'>"
    return (
        f"{_DECODE_CSS}<div class='decode-key' style='font-size:90%;margin:4px 0'>{key}</div>"
        "<div style='display:flex;flex-wrap:wrap;gap:28px;align-items:flex-start'>"
        "<div>" + (tr("<b>Loop without cache</b>: step 0 is the prefill, nothing recomputed yet") if step == 0 else
                   tr("<b>Loop without cache</b>: step {step} recomputes {n} history positions", step=step,
                      n=s["n_recomputed"]))
        + f"{box}{_grid_table('decode-nocache', header, left)}</div></div>"
        "<div>" + tr("<b>KV cache</b> after step {step}: every layer holds {n} positions", step=step, n=s["cache_len"])
        + f"{box}{_grid_table('decode-cache', header, right)}</div></div></div>"
    )


def trace_decode(model, ids: list[int], max_new_tokens: int, eos_id: int | None = None) -> dict:
    """Greedy-decode after ``ids`` with a ``KVCache`` and record what every step did.

    Step 0 is the prefill (all prompt tokens, first new token); decode step s (1, 2, ...) feeds
    the s-th new token at position ``T0 + s - 1`` (= the cache length before the step). Stops
    after ``max_new_tokens`` new tokens or at ``eos_id``; the last new token is not fed back.
    Returns ``new_ids`` and, per step, ``cache_before`` / ``cache_after``: the length of every
    layer's cache read from the cache itself (lists of L ints).
    """
    L = model.cfg.n_layers
    # One CPU thread: for matrices this small, waking more threads costs more than it saves.
    with torch_threads(1), torch.inference_mode():
        logits, kv = prefill(model, torch.tensor([ids]), cache=KVCache())  # (1, V)
        new_ids = [int(logits.argmax(-1))]
        before, after = [[0] * L], [[kv.layer_kv(i)[0].shape[2] for i in range(L)]]
        while len(new_ids) < max_new_tokens and new_ids[-1] != eos_id:
            before.append([kv.layer_kv(i)[0].shape[2] for i in range(L)])
            logits = decode_step(model, torch.tensor([new_ids[-1]]), kv)  # (1, V)
            after.append([kv.layer_kv(i)[0].shape[2] for i in range(L)])  # (B, H_kv, T, d_h): T grew by 1
            new_ids.append(int(logits.argmax(-1)))
    return {"prompt_ids": list(ids), "new_ids": new_ids, "cache_before": before, "cache_after": after,
            "stop": "eos" if new_ids[-1] == eos_id else "max_new_tokens"}


class DecodePanel(Panel):
    """03 · Decode: the side-by-side viewer of a loop without cache and a loop with one.

    Controls: ``prompt`` (a Text box of course-language words separated by spaces; ``<BOS>`` is
    added in front when missing; by default ``DECODE_PROMPT`` of the current language) and ``step`` (0 = prefill, s = the s-th decode step; its range
    follows the generation). Each new prompt is greedy-decoded once (up to ``max_new_tokens``
    new tokens, stopping at ``<EOS>``) and kept, so moving the step slider only redraws.

    ``state`` (when the prompt is valid, ``ok`` is True): ``tokens`` (prompt + generated words),
    ``prompt_len`` (T0), ``n_steps``, ``step``, ``fed`` (words fed at this step), ``position`` (of
    the new token: the cache length before the step), ``n_recomputed`` (history positions a loop
    without cache pushes through the model again at this step), ``total_recomputed`` (summed over
    steps 1..step), ``cache_len_per_layer`` and ``cache_len`` (after the step), ``produced`` (the
    word this step's logits pick). A bad prompt gives ``ok`` False and a friendly ``message``.

    The HTML shows the summary (``<span class='decode-summary'>``, with the cache length) and both
    grids (``decode_grids_html``); ``plots.plot_decode_grids(state)`` draws the same as a figure.
    """

    title = "Decode, step by step: what a loop without cache recomputes, and how the cache grows"

    def __init__(self, model, tokenizer, prompt: str | None = None, max_new_tokens: int = 12) -> None:
        self.model, self.tok = model.eval(), tokenizer
        prompt = in_language(DECODE_PROMPT) if prompt is None else prompt
        self.max_new_tokens = max_new_tokens
        self._traces: dict[tuple, dict] = {}  # prompt ids -> trace_decode result
        self._syncing = False
        prompt_box = widgets.Text(value=prompt, description=tr("prompt"), continuous_update=False,
                                  placeholder=tr("<BOS> she has"), style=_STYLE,
                                  layout=widgets.Layout(width="560px"))
        step = int_slider(tr("step"), 0, 0, max(0, max_new_tokens - 1))  # HTML only: cheap to redraw
        super().__init__({"prompt": prompt_box, "step": step})

    def _on_change(self, change) -> None:
        if not self._syncing:  # the step slider's range is being adjusted from compute()
            self.update()

    def set(self, prompt: str | None = None, step: int | None = None) -> dict:
        """Move both controls, then recompute once (``panel.set(prompt="<BOS> she has", step=2)``).

        The prompt goes first, so the step slider already has the new prompt's range when the
        step is set (a step beyond it is clamped to the last step). Returns the new ``state``.
        """
        self._syncing = True
        try:
            if prompt is not None:
                self.controls["prompt"].value = prompt
                ids, _ = self._parse(prompt)
                if ids is not None:
                    self._set_step_max(len(self._trace(ids)["new_ids"]) - 1)
            if step is not None:
                slider = self.controls["step"]
                slider.value = min(max(int(step), slider.min), slider.max)
        finally:
            self._syncing = False
        self.update()
        return self.state

    def _parse(self, prompt: str) -> tuple[list[int] | None, str]:
        """Token ids of ``prompt`` and a note ("" or what was assumed), or None and a friendly message
        saying what is wrong."""
        words = str(prompt).split()
        vocab = set(self.tok.vocab)
        unknown = list(dict.fromkeys(w for w in words if w not in vocab))
        if unknown:
            english = language() == "en"  # the example and the known words in the notebook's language only
            examples = " ".join(w for w in self.tok.vocab[3:] if w.isascii() == english)
            listed = ", ".join(repr(w) for w in unknown[:10])
            if len(unknown) > 10:
                listed += tr(" ... and {n:,} more", n=len(unknown) - 10)
            return None, tr("Unknown word(s): {words}. Use words of the course vocabulary separated by spaces, "
                            "e.g. '{example}'. Known words: {examples}",
                            words=listed, example=tr("<BOS> she has"), examples=examples)
        banned = sorted({w for w in words if w in ("<PAD>", "<EOS>")})
        if banned:  # <PAD> is never read and <EOS> ends a document: neither belongs in a prompt (as in utils.grammar)
            return None, tr("{tokens} cannot be in a prompt: <PAD> only fills a batch's empty slots, and <EOS> ends "
                            "the text. Remove it, e.g. '<BOS> she has'.", tokens=", ".join(banned))
        note = tr("The prompt is empty: decoding starts from <BOS> alone.") if not words else ""
        special = sorted({w for w in words[1:] if w == "<BOS>"})
        if special:
            note = tr("{tokens} inside a prompt is read as an ordinary token (the model saw <BOS> only at the start, "
                      "<PAD> never, <EOS> only at the end): expect odd continuations.", tokens=", ".join(special))
        if words[:1] != ["<BOS>"]:
            words = ["<BOS>"] + words  # documents start with <BOS>, as in training
        limit = self.model.cfg.max_seq_len - self.max_new_tokens
        if len(words) > limit:
            return None, tr("The prompt has {n} tokens; at most {limit} fit (max_seq_len={max_seq_len} minus "
                            "{new} new tokens).", n=len(words), limit=limit, max_seq_len=self.model.cfg.max_seq_len,
                            new=self.max_new_tokens)
        return self.tok.encode(" ".join(words)), note

    def _trace(self, ids: list[int]) -> dict:
        key = tuple(ids)
        if key not in self._traces:
            if len(self._traces) > 64:
                self._traces.clear()
            self._traces[key] = trace_decode(self.model, ids, self.max_new_tokens, self.tok.eos_id)
        return self._traces[key]

    def _set_step_max(self, n_steps: int) -> None:
        slider = self.controls["step"]
        if slider.max != n_steps:
            self._syncing = True
            try:
                slider.max = n_steps  # clamps .value when it is larger
            finally:
                self._syncing = False

    def compute(self, prompt: str, step: int) -> dict:
        ids, message = self._parse(prompt)
        if ids is None:
            return {"ok": False, "message": message, "prompt": prompt}
        note = message
        trace = self._trace(ids)
        T0, n_steps = len(ids), len(trace["new_ids"]) - 1
        self._set_step_max(n_steps)
        step = min(max(int(step), 0), n_steps)
        tokens = self.tok.tokens(ids + trace["new_ids"])
        fed = tokens[:T0] if step == 0 else [tokens[T0 + step - 1]]
        cache_after = trace["cache_after"][step]
        return {
            "ok": True, "prompt": prompt, "tokens": tokens, "prompt_len": T0,
            "generated": tokens[T0:], "stop": trace["stop"], "n_steps": n_steps, "step": step, "fed": fed,
            "position": trace["cache_before"][step][0] if step else None,
            "positions": list(range(T0)) if step == 0 else [T0 + step - 1],
            "n_recomputed": trace["cache_before"][step][0],  # history a no-cache loop runs again
            "total_recomputed": sum(b[0] for b in trace["cache_before"][1 : step + 1]),
            "cache_len_per_layer": list(cache_after), "cache_len": cache_after[0],
            "produced": tokens[T0 + step], "note": note,
        }

    def render(self, s: dict) -> str:
        if not s["ok"]:
            return f"<div class='decode-message' style='color:#a60'>&#9432; {html.escape(s['message'])}</div>"
        note = f"<div class='decode-note' style='color:#a60'>&#9432; {html.escape(s['note'])}</div>" if s["note"] else ""
        T0, step = s["prompt_len"], s["step"]
        if step == 0:
            what = tr("prefill: {T0} prompt tokens at positions 0..{last} go through all {L} layers at once",
                      T0=T0, last=T0 - 1, L=len(s["cache_len_per_layer"]))
        else:
            what = tr("decode step {step} of {n}: feeds <b>{token}</b> at position {position} (= the cache length "
                      "before the step); a loop without cache would recompute {n_recomputed} history positions "
                      "({total} so far)", step=step, n=s["n_steps"], token=html.escape(token_label(s["fed"][0])),
                      position=s["position"], n_recomputed=s["n_recomputed"], total=s["total_recomputed"])
        summary = (f"<span class='decode-summary' data-step='{step}' data-cache-len='{s['cache_len']}' "
                   f"data-recomputed='{s['n_recomputed']}'>"
                   + tr("{what}; every layer's cache now holds <b>{n}</b> positions; this step's logits pick "
                        "<b>{token}</b>", what=what, n=s["cache_len"], token=html.escape(token_label(s["produced"])))
                   + "</span>")
        stop = (tr("stopped at &lt;EOS&gt;") if s["stop"] == "eos"
                else tr("stopped after {n} new tokens", n=len(s["generated"])))
        return (note + "<div style='font-size:90%;color:#555'>"
                + tr("prompt: {prompt} &rarr; greedy continuation: <b>{generated}</b> ({stop})",
                     prompt=html.escape(text_label(" ".join(s["tokens"][:T0]))),
                     generated=html.escape(text_label(" ".join(s["generated"]))),
                     stop=stop)
                + f"</div><p>{summary}</p>{decode_grids_html(s)}")
