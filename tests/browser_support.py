"""Plumbing for tests/test_browser.py: a private JupyterLab server and a headless Chromium.

* ``find_chromium()``  Debian's Chromium (``/usr/bin/chromium``), or None; Playwright's own
  browser download is never used (``executable_path``).
* ``JupyterLab``        a JupyterLab server on 127.0.0.1 with a random free port and a random
  token, in throwaway HOME / Jupyter config / data / runtime directories, with every feature that
  would reach the internet turned off (news, update check, PyPI extension manager). It serves a
  temporary copy of the repository's notebooks, so a run never rewrites a committed file.
* ``Lab``               the few JupyterLab and ipywidgets 8 page interactions the test needs:
  open a notebook (the URL first, then the file browser), Edit > Clear Outputs and Run > Run All
  Cells, wait for the kernel, find a control by its label, read a slider's readout, press keys
  on a slider handle, pick a dropdown option, take a settled screenshot of an output.

Every wait is bounded; the defaults are generous because the test machines are slow and shared.
"""
from __future__ import annotations

import base64
import io
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# Headless Chromium as root in a container: no sandbox, no GPU, and none of the background
# services that try to reach Google (they fail noisily without internet).
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]

SERVER_START_TIMEOUT = 60  # s, until /api/status answers
PAGE_TIMEOUT_MS = 60_000   # JupyterLab's first load in a cold browser on a slow machine
RUN_TIMEOUT_MS = 120_000   # Run All Cells until the kernel is idle again
WIDGET_TIMEOUT_MS = 30_000  # a widget change until the panel's HTML shows the new numbers


def find_chromium() -> str | None:
    """Path of Debian's Chromium (``$CHROMIUM`` overrides), or None when there is none."""
    for candidate in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class JupyterLab:
    """A private JupyterLab server serving ``notebooks`` (copied into a temporary root)."""

    def __init__(self, notebooks: list[Path], workdir: Path) -> None:
        self.workdir = Path(workdir)
        self.root = self.workdir / "root"
        self.port = _free_port()
        self.token = secrets.token_hex(24)
        self.proc: subprocess.Popen | None = None
        self.log_path = self.workdir / "jupyterlab.log"
        self._notebooks = [Path(p) for p in notebooks]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, notebook: str) -> str:
        # `reset` starts from an empty workspace: only this notebook is opened.
        return f"{self.base_url}/lab/tree/{notebook}?reset&token={self.token}"

    def _write_config(self, config_dir: Path) -> None:
        lab = {
            "news_url": None,  # the announcements feed (github.com)
            "check_for_updates_class": "jupyterlab.handlers.announcements.NeverCheckForUpdate",
            "extension_manager": "readonly",  # the default one queries pypi.org
        }
        server = {
            "ServerApp": {
                "ip": "127.0.0.1", "port": self.port, "port_retries": 0, "open_browser": False,
                "root_dir": str(self.root), "terminals_enabled": False,
                "allow_root": os.geteuid() == 0,  # CI containers run as root
            },
            "IdentityProvider": {"token": self.token},
            "LabApp": lab,
        }
        config_dir.mkdir(parents=True, exist_ok=True)
        (config_dir / "jupyter_server_config.json").write_text(json.dumps(server, indent=1))
        (config_dir / "jupyter_lab_config.json").write_text(json.dumps({"LabApp": lab}, indent=1))
        # Also switch the announcements plugin off in the page: no "news?" toast over the notebook.
        (config_dir / "labconfig").mkdir(exist_ok=True)
        (config_dir / "labconfig" / "page_config.json").write_text(json.dumps(
            {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True},
             "buildCheck": False, "buildAvailable": False},  # no "is the build stale?" check per page
            indent=1))

    @staticmethod
    def _write_settings(settings_dir: Path) -> None:
        """User settings: start the notebook's kernel without asking, keep every cell in the DOM."""
        tracker = settings_dir / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
        tracker.parent.mkdir(parents=True, exist_ok=True)
        tracker.write_text(json.dumps({"autoStartDefaultKernel": True, "windowingMode": "none"}, indent=1))

    def start(self) -> "JupyterLab":
        self.root.mkdir(parents=True)
        for nb in self._notebooks:
            shutil.copy2(nb, self.root / served_name(nb))
        home = self.workdir / "home"
        env = {
            **os.environ,
            "HOME": str(home),
            "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
            "JUPYTER_DATA_DIR": str(home / ".local/share/jupyter"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "JUPYTERLAB_SETTINGS_DIR": str(home / ".jupyter/lab/user-settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(home / ".jupyter/lab/workspaces"),
            "IPYTHONDIR": str(home / ".ipython"),
            "MPLCONFIGDIR": str(home / ".matplotlib"),
            "JUPYTER_PLATFORM_DIRS": "1",
            "PYTHONUNBUFFERED": "1",
        }
        env.pop("JUPYTER_PATH", None)
        env.pop("JUPYTER_CONFIG_PATH", None)
        self._write_config(home / ".jupyter")
        self._write_settings(Path(env["JUPYTERLAB_SETTINGS_DIR"]))
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser"],
            cwd=self.root, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,  # a process group of its own, for stop()'s last resort
        )
        log.close()
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/api/status?token={self.token}", timeout=5) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"JupyterLab did not answer within {SERVER_START_TIMEOUT} s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        # Polite first: end the kernels (they run in sessions of their own), then the server.
        try:
            with urllib.request.urlopen(f"{self.base_url}/api/kernels?token={self.token}", timeout=10) as r:
                kernels = json.load(r)
            for kernel in kernels:
                urllib.request.urlopen(urllib.request.Request(
                    f"{self.base_url}/api/kernels/{kernel['id']}?token={self.token}", method="DELETE"),
                    timeout=20).close()
            urllib.request.urlopen(urllib.request.Request(
                f"{self.base_url}/api/shutdown?token={self.token}", method="POST"), timeout=10).close()
            self.proc.wait(timeout=20)
        except Exception:
            pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"


@contextmanager
def jupyterlab(notebooks: list[Path], workdir: Path | None = None):
    """``with jupyterlab([...]) as server:`` -- started, and always stopped afterwards."""
    with tempfile.TemporaryDirectory(prefix="kv-browser-") as tmp:
        server = JupyterLab(notebooks, Path(workdir or tmp))
        try:
            yield server.start()
        finally:
            server.stop()


def served_name(notebook: Path) -> str:
    """The name a notebook is served under: a Chinese twin (notebooks/zh/) gets a "zh_" prefix,
    so it can sit next to its English notebook."""
    return f"zh_{notebook.name}" if notebook.parent.name == "zh" else notebook.name


@contextmanager
def chromium(executable: str):
    """A headless Debian Chromium driven by Playwright; pages may only reach 127.0.0.1."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 1400}, device_scale_factor=1)
            # Anything that is not our server is refused at the browser (no network in tests).
            context.route(re.compile(r"^(?!https?://(127\.0\.0\.1|localhost)[:/])"), lambda route: route.abort())
            yield context
        finally:
            browser.close()


_INT = re.compile(r"-?\d[\d,]*")


def parse_int(text: str) -> int:
    """The first integer in ``text``, thousands separators allowed: ``'4,096'`` -> 4096."""
    m = _INT.search(text.replace("\u202f", ",").replace("\xa0", ","))
    if not m:
        raise ValueError(f"no integer in {text!r}")
    return int(m.group().replace(",", ""))


# The notebook on screen (other notebooks stay in the DOM, hidden in their tabs).
NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"

_KERNEL_STATUS_JS = """() => {
    const items = [...document.querySelectorAll('.jp-StatusBar-Widget .jp-StatusBar-TextItem')];
    const item = items.find(e => e.textContent.includes(' | '));
    return item ? item.textContent.trim() : '';
}"""


class Lab:
    """One JupyterLab page, used the way a learner uses it. ``timings`` records how long each
    step took (seconds), to show where the test spends its time."""

    def __init__(self, page, server: JupyterLab) -> None:
        self.page = page
        self.server = server
        self.page_errors: list[str] = []  # uncaught JavaScript errors, shown when a test fails
        page.on("pageerror", lambda e: self.page_errors.append(str(e)))
        self.timings: dict[str, float] = {}
        self._t0 = time.monotonic()

    def _lap(self, what: str) -> None:
        now = time.monotonic()
        self.timings[what] = round(now - self._t0, 1)
        self._t0 = now

    @property
    def notebook(self):
        return self.page.locator(NOTEBOOK)

    def open(self, name: str) -> None:
        """Open notebook ``name``: load JupyterLab on it the first time, afterwards double-click
        it in the file browser. Returns when its kernel is connected and idle."""
        self._t0 = time.monotonic()
        if not self.page.url.startswith(self.server.base_url):
            self.page.goto(self.server.url(name), timeout=PAGE_TIMEOUT_MS)
        else:
            item = self.page.locator(".jp-DirListing-item", has=self.page.locator(
                ".jp-DirListing-itemText", has_text=re.compile(rf"^{re.escape(name)}$")))
            item.dblclick(timeout=PAGE_TIMEOUT_MS)
        self.page.locator(".lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel",
                          has_text=re.compile(rf"^{re.escape(name)}$")).first.wait_for(timeout=PAGE_TIMEOUT_MS)
        self.notebook.locator(".jp-Cell").first.wait_for(timeout=PAGE_TIMEOUT_MS)
        self.wait_kernel_idle(PAGE_TIMEOUT_MS)
        self._lap(f"open {name}")

    def kernel_status(self) -> str:
        """The status bar's kernel item for the notebook on screen: "Python 3 (ipykernel) | Idle"."""
        return self.page.evaluate(_KERNEL_STATUS_JS)

    def wait_kernel_idle(self, timeout_ms: int = PAGE_TIMEOUT_MS) -> None:
        self.page.wait_for_function(
            f"() => /^(?!No Kernel).+\\| Idle$/.test(({_KERNEL_STATUS_JS})())", timeout=timeout_ms, polling=250)

    def menu(self, menu: str, item: str) -> None:
        """Click ``menu`` in the menu bar, then ``item`` in it (exact labels)."""
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(rf"^{re.escape(menu)}$")).click()
        self.page.locator(".lm-Menu-itemLabel", has_text=re.compile(rf"^{re.escape(item)}$")).click()

    def run_all_cells(self) -> None:
        """Edit > Clear Outputs of All Cells (the committed outputs and their "[n]" prompts go),
        Run > Run All Cells, then wait until every code cell has run and the kernel is idle."""
        self._t0 = time.monotonic()
        prompts = f"[...document.querySelectorAll('{NOTEBOOK} .jp-CodeCell .jp-InputPrompt')]"
        self.menu("Edit", "Clear Outputs of All Cells")
        self.page.wait_for_function(
            f"() => {prompts}.every(p => !/\\[\\d+\\]/.test(p.textContent))", timeout=PAGE_TIMEOUT_MS)
        self.menu("Run", "Run All Cells")
        # Every code cell shows its execution count "[n]:" (not "[ ]:" or "[*]:"), or a cell
        # failed (Run All stops there); then the kernel is idle again.
        self.page.wait_for_function(
            f"""() => {{
                const prompts = {prompts};
                const error = document.querySelector('{NOTEBOOK} [data-mime-type="application/vnd.jupyter.error"]');
                return prompts.length > 0 && (error || prompts.every(p => /\\[\\d+\\]/.test(p.textContent)));
            }}""", timeout=RUN_TIMEOUT_MS, polling=500)
        self.wait_kernel_idle(RUN_TIMEOUT_MS)
        self._lap("run all cells")

    def cell_errors(self) -> list[str]:
        """The tracebacks shown in the notebook (empty when every cell ran)."""
        return self.notebook.locator("[data-mime-type='application/vnd.jupyter.error']").all_inner_texts()

    def output_with(self, selector: str):
        """The output area of the first cell whose output holds ``selector`` (e.g. a panel)."""
        index = self.page.evaluate(
            f"sel => [...document.querySelectorAll('{NOTEBOOK} .jp-Cell')].findIndex("
            "c => c.querySelector('.jp-Cell-outputArea ' + sel))", selector)
        assert index >= 0, f"no cell output contains {selector!r}"
        return self.notebook.locator(".jp-Cell").nth(index).locator(".jp-Cell-outputArea")

    def wait_settled(self, scope) -> None:
        """Kernel idle (every callback ran) and the images in ``scope`` (the plots) loaded, decoded
        and unchanged for a second: an Output's ``clear_output(wait=True)`` swaps them late."""
        self.wait_kernel_idle(WIDGET_TIMEOUT_MS)
        signature = """async el => {
            const imgs = [...el.querySelectorAll('img')];
            await Promise.all(imgs.map(img => img.decode().catch(() => null)));
            if (!imgs.every(img => img.complete && img.naturalWidth > 0)) return null;
            return imgs.map(img => img.src.length + ':' + img.src.slice(-64)).join('|');
        }"""
        deadline = time.monotonic() + WIDGET_TIMEOUT_MS / 1000
        last, stable_since = None, time.monotonic()
        while time.monotonic() < deadline:
            now = scope.evaluate(signature)
            if now is None or now != last:
                last, stable_since = now, time.monotonic()
            elif time.monotonic() - stable_since >= 1.0:
                return
            time.sleep(0.25)
        raise TimeoutError(f"the images of the output did not settle within {WIDGET_TIMEOUT_MS / 1000:.0f} s")

    def screenshot(self, scope, path: Path, margin: int = 8) -> None:
        """A PNG of ``scope``'s first output (the panel, without JupyterLab around it), with a
        small margin left and right (above and below are the neighbouring cells' borders) and no
        focus ring on the control used last.

        Like Playwright's ``toHaveScreenshot``: shoot until two consecutive pictures are the same,
        so a plot that the software rasterizer is still painting is not caught half drawn."""
        self.wait_settled(scope)
        self.page.evaluate("() => document.activeElement && document.activeElement.blur()")
        output = scope.locator(".jp-OutputArea-output").first
        output.scroll_into_view_if_needed()
        box = output.bounding_box()
        view = self.page.viewport_size
        clip = {"x": max(box["x"] - margin, 0), "y": max(box["y"], 0)}
        clip["width"] = min(box["x"] + box["width"] + margin, view["width"]) - clip["x"]
        clip["height"] = min(box["y"] + box["height"], view["height"]) - clip["y"]
        previous = png = None
        for _ in range(10):
            png = self.page.screenshot(clip=clip, animations="disabled", caret="hide")
            if png == previous:
                break
            previous = png
            time.sleep(0.5)
        Path(path).write_bytes(png)

    def plot_ink(self, scope) -> list[float]:
        """For each PNG plot in ``scope``: the fraction of its pixels that are not (near) white.

        A matplotlib figure with axes, lines and labels has several percent; an empty or
        half-drawn one (only a title) has almost none."""
        from PIL import Image

        srcs = scope.evaluate("el => [...el.querySelectorAll('img')].map(i => i.src)")
        ink = []
        for src in srcs:
            if not src.startswith("data:image/png;base64,"):
                continue
            picture = Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1]))).convert("L")
            histogram = picture.histogram()
            ink.append(1 - sum(histogram[245:]) / (picture.width * picture.height))
        return ink

    # --- ipywidgets 8 controls, found by their description label --------------------------------

    def control(self, scope, label: str):
        """The widget row (slider, dropdown, text box) in ``scope`` whose description is ``label``.

        ``label`` must be the whole description or its first word: "T" finds "T (tokens)" and
        the Chinese "T（token 数）" but neither "top_k" nor "T_max".
        """
        pattern = re.compile(rf"^\s*{re.escape(label)}(\s|\(|（|$)")
        row = scope.locator(".widget-inline-hbox").filter(
            has=self.page.locator(":scope > .widget-label", has_text=pattern))
        return row.first

    def slider_value(self, slider) -> int:
        """The integer in a slider's readout ("4,096" -> 4096; a SelectionSlider shows its label)."""
        return parse_int(slider.locator(".widget-readout").first.inner_text())

    def slider_max(self, slider) -> int:
        """An IntSlider's current maximum (from its handle's ARIA attributes)."""
        return round(float(slider.locator(".noUi-handle").first.get_attribute("aria-valuemax")))

    def slider_at_max(self, slider) -> bool:
        """Whether the handle is at the right end (any slider: ARIA holds the position)."""
        handle = slider.locator(".noUi-handle").first
        return float(handle.get_attribute("aria-valuenow")) >= float(handle.get_attribute("aria-valuemax"))

    def press_on_slider(self, slider, *keys: str) -> None:
        """Focus the slider's handle (a noUiSlider in ipywidgets 8) and press ``keys`` on it."""
        handle = slider.locator(".noUi-handle").first
        handle.focus()
        for key in keys:
            handle.press(key)

    def select(self, dropdown, option: str) -> None:
        dropdown.locator("select").select_option(label=option)

    def selected(self, dropdown) -> str:
        return dropdown.locator("select").evaluate("s => s.options[s.selectedIndex].text")
