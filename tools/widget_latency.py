"""How long one slider step takes in every panel, measured in a real kernel with the inline backend.

Usage: python tools/widget_latency.py [--steps N] [--lang en|zh] [PANEL ...]

Starts a Jupyter kernel (as the notebooks run), `%matplotlib inline`, builds each panel the way its
notebook does (in the language of --lang, with that language's prompts), then moves each control through its values, back and forth, N steps (default 60),
timing each ``control.value = v``: the panel's compute, its figure and the PNG the inline backend
renders as it is displayed. Prints, per panel and control, the median and the 95th percentile in
ms. Nothing here is a test: timings depend on the machine; the course's goal is a median of at most
150 ms and a p95 of at most 300 ms on a 2-core machine.
"""
from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

from jupyter_client.manager import start_new_kernel

REPO = Path(__file__).resolve().parent.parent

SETUP = """
%matplotlib inline
import torch
torch.set_num_threads(1)
from utils.i18n import set_language
set_language({lang!r})
from utils.course_model import load_course_model
from utils.i18n import in_language
model, tok = load_course_model()
# the notebooks' prompts speak their language (the panels' own defaults do the same)
prompt = torch.tensor([tok.encode(in_language({{"en": "<BOS> he likes", "zh": "<BOS> 他 喜欢"}}))])
text = in_language({{"en": " he likes cats .", "zh": " 他 喜欢 猫 。"}})
"""

# How each notebook builds its panels (the arguments that matter for the cost).
PANELS = {
    "AttentionShapesPanel": "from utils.widgets import AttentionShapesPanel as P; panel = P()",
    "PrefillKVPanel": "from utils.widgets import PrefillKVPanel as P; panel = P(model, tok)",
    "DecodePanel": "from utils.widgets import DecodePanel as P; panel = P(model, tok)",
    "KVCacheExplorer": "from utils.widgets import KVCacheExplorer as P; panel = P()",
    "BudgetPlanner": "from utils.widgets import BudgetPlanner as P; panel = P()",
    "SamplingPanel": "from utils.widgets import SamplingPanel as P; panel = P(model, tok)",
    "DecodeBoundPanel": "from utils.widgets import DecodeBoundPanel as P; panel = P(measured_GBps=40.0, measured_GFLOPS=100.0)",
    "ArrivalsPanel": textwrap.dedent("""
        from utils.serving import StepCostModel
        from utils.widgets.metrics import ArrivalsPanel as P
        # a line like the one notebook 06 fits (seconds): fixed, per forward, per decode row, per prefill token
        costs = StepCostModel(fixed=1e-4, per_forward=3e-3, per_row=2e-4, per_token=2e-5)
        # notebook 06's workload: 24 requests, prompts of 8-32 tokens, 8-32 new tokens
        panel = P(costs, [8 + (i * 7) % 25 for i in range(24)], [8 + (i * 11) % 25 for i in range(24)], seed=0)"""),
    "BugLabPanel": "from utils.widgets import BugLabPanel as P; panel = P(model, prompt)",
    "SlidingWindowPanel": ("from utils.widgets import SlidingWindowPanel as P\n"
                           "panel = P(model, torch.tensor([tok.encode('<BOS>' + text * 12)]))"),
    "BlockMapPanel": "from utils.widgets import BlockMapPanel as P; panel = P(model, tok)",
    "EngineTimelinePanel": ("from utils.serving import random_workload\nfrom utils.widgets import EngineTimelinePanel as P\n"
                            "panel = P(model, random_workload(24, model.cfg.vocab_size, (8, 32), (16, 48), seed=0))"),
    "SpeculativePanel": ("from utils.course_model import load_draft_model\nfrom utils.widgets import SpeculativePanel as P\n"
                         "panel = P(model, tok, load_draft_model()[0])"),
    # notebook 13 measures the grid (quality_grid on N_DOCS held-out documents) and passes it; P(model, tok) does the same
    "CacheCompressionPanel": "from utils.widgets import CacheCompressionPanel as P; panel = P(model, tok)",
}

MEASURE = """
import gc, json, statistics, time
import ipywidgets as W

def _values(w):
    if hasattr(w, "options") and w.options:
        opts = [o[1] if isinstance(o, tuple) else o for o in w.options]
    elif isinstance(w, (W.IntSlider, W.FloatSlider)):
        n = 12
        opts = [w.min + (w.max - w.min) * i / n for i in range(n + 1)]
        opts = [int(round(v)) for v in opts] if isinstance(w, W.IntSlider) else opts
    elif isinstance(w, W.Checkbox) or isinstance(w.value, bool):
        opts = [True, False]
    else:
        return []
    opts = list(dict.fromkeys(opts))
    return opts + opts[-2:0:-1] if len(opts) > 1 else []

def _measure(panel, steps):
    out = {{}}
    for name, w in panel.controls.items():
        values = _values(w)
        if not values:
            continue
        start = w.value
        times = []
        for i in range(steps):
            v = values[i % len(values)]
            if v == w.value:
                continue
            t0 = time.perf_counter()
            w.value = v
            times.append(time.perf_counter() - t0)
        w.value = start
        if times:
            times.sort()
            out[name] = {{"median_ms": 1e3 * statistics.median(times),
                         "p95_ms": 1e3 * times[min(len(times) - 1, int(0.95 * len(times)))], "n": len(times),
                         "error": panel.state.get("error")}}
    return out

print("RESULT" + json.dumps(_measure(panel, {steps})))
"""


def run(kernel_client, code: str, timeout: float = 600) -> str:
    """Execute ``code``; return its stdout; raise with the traceback if it fails."""
    out = []

    def hook(msg):
        if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            out.append("\n".join(msg["content"]["traceback"]))

    reply = kernel_client.execute_interactive(code, timeout=timeout, output_hook=hook)
    if reply["content"]["status"] != "ok":
        raise RuntimeError("".join(out)[-3000:])
    return "".join(out)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("panels", nargs="*", choices=[*PANELS, []], default=[], metavar="PANEL")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--lang", choices=("en", "zh"), default="en")
    args = parser.parse_args(argv)
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(REPO))
    rows = []
    try:
        run(kc, SETUP.format(lang=args.lang))
        for name in args.panels or PANELS:
            run(kc, PANELS[name])
            text = run(kc, MEASURE.format(steps=args.steps))
            result = json.loads(text.split("RESULT", 1)[1])
            for control, r in result.items():
                rows.append((f"{name}.{control}", r))
                flag = "" if r["median_ms"] <= 150 and r["p95_ms"] <= 300 else "   (over the goal)"
                err = f"   error: {r['error']}" if r["error"] else ""
                print(f"{name + '.' + control:42s} median {r['median_ms']:6.0f} ms   p95 {r['p95_ms']:6.0f} ms"
                      f"   ({r['n']} steps){flag}{err}", flush=True)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    worst = max(rows, key=lambda r: r[1]["median_ms"])
    print(f"\n{len(rows)} controls; slowest median: {worst[0]} {worst[1]['median_ms']:.0f} ms; "
          f"over the goal (median > 150 ms or p95 > 300 ms): "
          f"{sum(r['median_ms'] > 150 or r['p95_ms'] > 300 for _, r in rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
