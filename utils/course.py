"""Where the course lives, and the cells every notebook shares.

The GitHub owner/name is written here once; the Colab badges, the Colab install command in
the setup cell and the README's links are generated from it (``python tools/nbsync.py``).
"""
from __future__ import annotations

REPO = "kv-cache-course/prefill-decode-kv-cache"
BRANCH = "main"
PACKAGE = "kv-cache-course"

SETUP_MARKER = "# Course setup"
BADGE_MARKER = "[![Open In Colab]"


def colab_url(notebook: str) -> str:
    """Colab link of ``notebooks/<notebook>`` (e.g. ``'04_cache_sizing.ipynb'``)."""
    return f"https://colab.research.google.com/github/{REPO}/blob/{BRANCH}/notebooks/{notebook}"


def github_url(path: str) -> str:
    """GitHub page of a file of the repository (e.g. ``'lessons/en/00-tour.md'``)."""
    return f"https://github.com/{REPO}/blob/{BRANCH}/{path}"


def colab_badge(notebook: str) -> str:
    return f"{BADGE_MARKER}(https://colab.research.google.com/assets/colab-badge.svg)]({colab_url(notebook)})"


def colab_install_args() -> list[str]:
    """What the setup cell pip-installs in Colab: the package only, with its loose ranges,
    so Colab's own torch (and matplotlib, ipywidgets) already satisfy it and stay."""
    return ["install", "--quiet", f"{PACKAGE} @ git+https://github.com/{REPO}.git@{BRANCH}"]


def setup_cell_source() -> str:
    """The first code cell of every notebook, character for character (a test checks it)."""
    args = " ".join(a if " " not in a else f'"{a}"' for a in colab_install_args())
    return "\n".join([
        f"{SETUP_MARKER} (the same cell in every notebook)",
        "# In Colab: install the course package from GitHub. Its loose version ranges are met by",
        "# Colab's own torch, matplotlib and ipywidgets, so those stay as they are.",
        "# Locally, `make lab` has already installed everything: this cell then does nothing.",
        "import sys",
        "",
        'if "google.colab" in sys.modules:',
        f"    %pip {args}",
        "%matplotlib inline",
    ])

# The series, in order: (file, title). README, lessons and the hygiene test read it from here.
SERIES = [
    ("00_tour.ipynb", "Tour: prefill, then decode"),
    ("01_attention_block.ipynb", "The attention block"),
    ("02_prefill.ipynb", "Prefill"),
    ("03_decode.ipynb", "Decode with a KV cache"),
    ("04_cache_sizing.ipynb", "Cache sizing"),
    ("05_sampling_and_stopping.ipynb", "Sampling and stopping"),
    ("06_performance_metrics.ipynb", "Performance metrics"),
    ("07_bug_lab.ipynb", "Bug lab"),
    ("08_beyond_the_basics.ipynb", "Beyond the basics"),
    ("09_self_test.ipynb", "Self-test"),
]


def next_notebook(name: str) -> str:
    """File name of the notebook after ``name`` (the last one points back to the first)."""
    files = [f for f, _ in SERIES]
    return files[(files.index(name) + 1) % len(files)]
