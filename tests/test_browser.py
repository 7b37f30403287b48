"""The widgets work in a real browser: JupyterLab + Debian's headless Chromium, driven by Playwright.

For 04_cache_sizing and 03_decode this test does what a learner does: open the notebook in
JupyterLab, Edit > Clear Outputs, Run > Run All Cells, wait for the widgets, then use them with
the keyboard and the mouse. It checks that

* 04's KV cache explorer: after the T slider moves one notch (ArrowRight on its handle) and the
  dtype menu changes, the bytes shown in ``<span class="kv-bytes">`` are exactly
  ``kv_cache_bytes`` of the values read back from the page (slider readouts and the menu);
* 03's decode viewer: after a new prompt is typed (Enter) and the step slider moves (Home,
  ArrowRight, End), the summary ``<span class="decode-summary">`` reports a cache of
  ``prompt tokens + step`` positions;
* after those changes, each panel's plot (if it has one) is really drawn, not blank.

The notebooks are copied to a temporary directory first (the committed files are never saved
over). Screenshots of both panels go to a temporary folder (the path is printed with ``-s``),
or with ``UPDATE_SCREENSHOTS=1`` to docs/screenshots/, which the README shows:

    UPDATE_SCREENSHOTS=1 .venv/bin/python -m pytest tests/test_browser.py

Needs Chromium at /usr/bin/chromium (``apt-get install chromium``; .ci/run installs it): without
it the module is skipped, with the reason in pytest's ``-rs`` summary.
"""
from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from utils import kv_cache_bytes

from browser_support import (REPO, WIDGET_TIMEOUT_MS, Lab, chromium, find_chromium, jupyterlab, parse_int,
                             served_name)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOKS = {"04": REPO / "notebooks" / "04_cache_sizing.ipynb", "03": REPO / "notebooks" / "03_decode.ipynb",
             "zh04": REPO / "notebooks" / "zh" / "04_cache_sizing.ipynb"}  # a Chinese twin too
CJK = re.compile(r"[\u3400-\u9fff]")
SCREENSHOTS = REPO / "docs" / "screenshots"
PROMPT_03 = "<BOS> 他 喜欢"  # course words; three tokens
MIN_PLOT_INK = 0.01  # a drawn figure has several percent non-white pixels; a blank one ~0

CHROMIUM = find_chromium()
if CHROMIUM is None:
    pytest.skip("browser test SKIPPED: no Chromium at /usr/bin/chromium (install it with "
                "`apt-get install chromium`; .ci/run does)", allow_module_level=True)
pytest.importorskip("playwright", reason="browser test SKIPPED: playwright is not installed (make venv)")


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    """A temporary folder for screenshots (and, on failure, the page as it was)."""
    return tmp_path_factory.mktemp("browser-screenshots")


@pytest.fixture(scope="module")
def screenshots(artifacts) -> Path:
    """Where the panels' screenshots go: docs/screenshots/ with UPDATE_SCREENSHOTS=1."""
    if os.environ.get("UPDATE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return SCREENSHOTS
    return artifacts


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """JupyterLab serving copies of the two notebooks (the committed files stay untouched)."""
    missing = [str(p.relative_to(REPO)) for p in NOTEBOOKS.values() if not p.exists()]
    if missing:
        pytest.fail(f"the browser test drives {missing}, which do not exist")
    with jupyterlab(list(NOTEBOOKS.values()), tmp_path_factory.mktemp("jupyterlab")) as lab_server:
        yield lab_server


@pytest.fixture(scope="module")
def lab(server):
    """One JupyterLab page for the whole module (loading JupyterLab is the slow part)."""
    with chromium(CHROMIUM) as context:
        page = context.new_page()
        page.set_default_timeout(WIDGET_TIMEOUT_MS)
        yield Lab(page, server)


@pytest.fixture(autouse=True)
def keep_evidence_on_failure(request, artifacts):
    """When a test fails: a screenshot of the page, its JavaScript errors, the server log."""
    failed_before = request.session.testsfailed
    yield
    if request.session.testsfailed > failed_before and "lab" in request.fixturenames:
        lab = request.getfixturevalue("lab")
        shot = artifacts / f"FAILED-{request.node.name}.png"
        try:
            lab.page.screenshot(path=str(shot))
        except Exception as e:  # the page may be gone
            shot = f"(none: {e})"
        print(f"\nbrowser test failed: screenshot {shot}\npage errors: {lab.page_errors}\n"
              f"JupyterLab log (tail):\n{lab.server.log_tail()}")


def run_notebook(lab: Lab, key: str, marker: str):
    """Open notebook ``key``, run every cell; return the output that holds ``marker`` and the ink
    of its plots as first drawn (see ``assert_plots_drawn``)."""
    name = served_name(NOTEBOOKS[key])
    lab.open(name)
    lab.run_all_cells()
    errors = lab.cell_errors()
    assert not errors, f"{name} raised while running all cells:\n" + "\n".join(errors)
    lab.notebook.locator(marker).first.wait_for(state="visible", timeout=WIDGET_TIMEOUT_MS)
    panel = lab.output_with(marker)
    lab.wait_settled(panel)
    first_plots = lab.plot_ink(panel)
    assert all(i > MIN_PLOT_INK for i in first_plots), f"{name}: a plot of the panel is blank: {first_plots}"
    return panel, first_plots


def wait_until(probe, ok, what: str, timeout_s: float = WIDGET_TIMEOUT_MS / 1000):
    """Poll ``probe()`` until ``ok(result)``; return that result, or fail naming ``what`` and the
    last result seen."""
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        try:
            last = probe()
            if ok(last):
                return last
        except Exception as e:  # a widget view being re-rendered
            last = e
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout_s:.0f} s waiting for {what}; last seen: {last!r}")


def assert_plots_drawn(lab: Lab, panel, what: str, reference: list[float]) -> None:
    """The panel's figures (if it shows any) are real plots, not empty or half-drawn images:
    each has at least half the ink (non-white pixels) of the panel's first render, made while
    the notebook ran, and more than MIN_PLOT_INK."""
    lab.wait_settled(panel)
    ink = lab.plot_ink(panel)
    floor = max(MIN_PLOT_INK, 0.5 * min(reference, default=0.0))
    assert len(ink) == len(reference) and all(i > floor for i in ink), (
        f"{what}: the panel's plot is blank or half drawn (ink {[round(i, 4) for i in ink]}, first render "
        f"{[round(i, 4) for i in reference]}). Known cause: a pyplot figure drawn in a widget callback is "
        "also flushed by matplotlib-inline's post_execute hook, which ipykernel 7 runs after every comm "
        "message, on a kernel subshell thread (JupyterLab 4.6 sends widget messages over subshells): "
        "two threads render one figure.")


@pytest.mark.parametrize("key", ["04", "zh04"])
def test_04_cache_explorer_shows_kv_cache_bytes_of_the_controls(lab, screenshots, key):
    """In English, and in the Chinese twin, whose panel speaks Chinese (symbols such as T stay)."""
    panel, first_plots = run_notebook(lab, key, ".kv-bytes")
    shown = panel.locator(".kv-bytes").first
    T, dtype = lab.control(panel, "T"), lab.control(panel, "dtype")
    sliders = {name: lab.control(panel, name) for name in ("T", "L", "H_kv", "B", "d_h")}

    def values() -> dict:
        """What the page shows: the slider readouts, the dtype menu and the byte count."""
        v = {name: lab.slider_value(s) for name, s in sliders.items()}
        v["dtype"] = lab.selected(dtype)
        v["shown"] = parse_int(shown.inner_text())
        return v

    def expected(v: dict) -> int:
        return kv_cache_bytes(v["L"], v["B"], v["H_kv"], v["T"], v["d_h"], v["dtype"])

    start = wait_until(values, lambda v: v["shown"] == expected(v), "the bytes to match the controls")

    # One notch of T with the keyboard on the slider's handle (down if it starts at the top).
    key = "ArrowLeft" if lab.slider_at_max(T) else "ArrowRight"
    lab.press_on_slider(T, key)
    moved = wait_until(values, lambda v: v["T"] != start["T"] and v["shown"] == expected(v),
                       f"T to move from {start['T']:,} ({key}) and the bytes to follow")

    # Another dtype from the menu: one with another element size.
    new_dtype = "float32" if start["dtype"] != "float32" else "int8"
    lab.select(dtype, new_dtype)
    final = wait_until(values, lambda v: v["dtype"] == new_dtype and v["shown"] == expected(v),
                       f"dtype {new_dtype} and the bytes to follow")

    assert len({start["shown"], moved["shown"], final["shown"]}) == 3, (start, moved, final)
    text = shown.inner_text()
    n = kv_cache_bytes(final["L"], final["B"], final["H_kv"], final["T"], final["d_h"], final["dtype"])
    assert f"{n:,}" in text, (text, final)  # the exact count, with thousands separators
    assert_plots_drawn(lab, panel, f"{key} explorer after T -> {final['T']:,} and dtype -> {new_dtype}",
                       first_plots)
    if key.startswith("zh"):
        assert CJK.search(text), f"the Chinese twin's explorer should speak Chinese: {text!r}"

    path = screenshots / ("04_cache_sizing_explorer.png" if key == "04" else "zh_04_cache_sizing_explorer.png")
    lab.screenshot(panel, path)
    print(f"\nbrowser test: 04 explorer shows {text!r} for {final}; screenshot {path}; "
          f"timings (s) {lab.timings}")


def test_03_decode_viewer_cache_grows_by_one_per_step(lab, screenshots):
    panel, first_plots = run_notebook(lab, "03", ".decode-summary")
    summary = panel.locator(".decode-summary").first
    html = panel.locator(".widget-html-content", has=lab.page.locator(".decode-summary")).first
    prompt, step = lab.control(panel, "prompt"), lab.control(panel, "step")
    n_prompt = len(PROMPT_03.split())

    def shown() -> dict:
        """The step slider's readout, the tokens shown, and what the summary reports."""
        return {"readout": lab.slider_value(step), "step": int(summary.get_attribute("data-step")),
                "cache_len": int(summary.get_attribute("data-cache-len")), "text": summary.inner_text(),
                "tokens": html.inner_text()}

    def consistent(s: dict) -> bool:
        """The viewer shows the new prompt, its summary is about the slider's step, and the
        cache holds prompt + step positions (the number is in the sentence too)."""
        return (all(w in s["tokens"] for w in PROMPT_03.split()) and s["step"] == s["readout"]
                and s["cache_len"] == n_prompt + s["step"]
                and re.search(rf"\b{s['cache_len']}\b", s["text"]) is not None)

    # A new prompt: type it and press Enter (the box sends its value on Enter or blur).
    box = prompt.locator("input")
    box.fill(PROMPT_03)
    box.press("Enter")
    # Home on the step slider: step 0 is the prefill, the cache holds the prompt.
    wait_until(shown, consistent, f"the summary to describe the prompt {PROMPT_03!r}")
    lab.press_on_slider(step, "Home")
    prefill = wait_until(shown, lambda s: s["readout"] == 0 and consistent(s), "step 0 (prefill)")
    assert prefill["cache_len"] == n_prompt

    # ArrowRight: the first decode step adds one position to every layer's cache.
    lab.press_on_slider(step, "ArrowRight")
    first = wait_until(shown, lambda s: s["readout"] == 1 and consistent(s), "decode step 1")
    assert first["cache_len"] == n_prompt + 1

    # End: the last step of this generation (the slider's range follows it).
    lab.press_on_slider(step, "End")
    n_steps = lab.slider_max(step)
    last = wait_until(shown, lambda s: s["readout"] == n_steps and consistent(s), f"the last step, {n_steps}")
    assert last["cache_len"] == n_prompt + n_steps
    assert_plots_drawn(lab, panel, f"03 viewer at step {n_steps} of {PROMPT_03!r}", first_plots)

    path = screenshots / "03_decode_viewer.png"
    lab.screenshot(panel, path)
    print(f"\nbrowser test: 03 viewer after {PROMPT_03!r}: steps 0, 1, {last['step']} show caches of "
          f"{prefill['cache_len']}, {first['cache_len']}, {last['cache_len']} positions; screenshot {path}; "
          f"timings (s) {lab.timings}")
