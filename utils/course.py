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
