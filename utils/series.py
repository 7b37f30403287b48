"""Where the course lives, and the cells every notebook shares.

The GitHub owner/name is written here once; the Colab badges, the Colab install command in
the setup cell and the README's links are generated from it (``python tools/nbsync.py``).
"""
from __future__ import annotations

from .i18n import LANGUAGES

REPO = "kv-cache-course/prefill-decode-kv-cache"
BRANCH = "main"
PACKAGE = "kv-cache-course"

SETUP_MARKER = "# Course setup"
BADGE_MARKER = "[![Open In Colab]"


def notebook_path(notebook: str, lang: str = "en") -> str:
    """Path of a notebook in the repository: ``notebooks/<notebook>``, the Chinese twin in ``notebooks/zh/``."""
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}, got {lang!r}")
    return f"notebooks/{notebook}" if lang == "en" else f"notebooks/{lang}/{notebook}"


def notebook_language(path) -> str:
    """The language of a notebook file: "zh" for a twin in ``notebooks/zh/``, else "en"."""
    from pathlib import Path

    parent = Path(path).parent.name
    return parent if parent in LANGUAGES else "en"


def colab_url(notebook: str, lang: str = "en") -> str:
    """Colab link of ``notebooks/<notebook>`` (e.g. ``'04_cache_sizing.ipynb'``), or of its Chinese twin."""
    return f"https://colab.research.google.com/github/{REPO}/blob/{BRANCH}/{notebook_path(notebook, lang)}"


def github_url(path: str) -> str:
    """GitHub page of a file of the repository (e.g. ``'lessons/en/00-tour.md'``)."""
    return f"https://github.com/{REPO}/blob/{BRANCH}/{path}"


def colab_badge(notebook: str, lang: str = "en") -> str:
    return f"{BADGE_MARKER}(https://colab.research.google.com/assets/colab-badge.svg)]({colab_url(notebook, lang)})"


def colab_install_args() -> list[str]:
    """What the setup cell pip-installs in Colab: the package only, with its loose ranges,
    so Colab's own torch (and matplotlib, ipywidgets) already satisfy it and stay."""
    return ["install", "--quiet", f"{PACKAGE} @ git+https://github.com/{REPO}.git@{BRANCH}"]


_SETUP_COMMENTS = {
    "en": ["(the same cell in every notebook)",
           "# In Colab: install the course package from GitHub. Its loose version ranges are met by",
           "# Colab's own torch, matplotlib and ipywidgets, so those stay as they are.",
           "# Locally, `make lab` has already installed everything: this cell then does nothing.",
           "# The language of widgets, figures and verdicts; a NameError says which cell above defines the name:"],
    "zh": ["· 课程设置（每个笔记本都是同一个单元格）",
           "# 在 Colab 中：从 GitHub 安装课程包。它的依赖版本范围较宽，Colab 自带的",
           "# torch、matplotlib 和 ipywidgets 都满足，所以保持原样。",
           "# 在本地，`make lab` 已经装好了一切，这个单元格什么也不做。",
           "# 控件、图表和验证结果使用的语言；遇到 NameError 时提示该名字在上面哪一节定义："],
}


def setup_cell_source(lang: str = "en") -> str:
    """The first code cell of every notebook in ``lang``, character for character (a test checks it)."""
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}, got {lang!r}")
    head, *comments, lang_comment = _SETUP_COMMENTS[lang]
    args = " ".join(a if " " not in a else f'"{a}"' for a in colab_install_args())
    return "\n".join([
        f"{SETUP_MARKER} {head}",
        *comments,
        "import sys",
        "",
        'if "google.colab" in sys.modules:',
        f"    %pip {args}",
        "%matplotlib inline",
        lang_comment,
        "from utils.i18n import set_language",
        "from utils.name_hints import explain_name_errors",
        "",
        f'set_language("{lang}")',
        "explain_name_errors()",
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
    ("10_paged_kv_and_prefix_caching.ipynb", "Appendix A1: paged KV blocks and prefix caching"),
    ("11_continuous_batching.ipynb", "Appendix A2: continuous batching and chunked prefill"),
    ("12_speculative_decoding.ipynb", "Appendix B1: speculative decoding with cache rollback"),
    ("13_smaller_kv_cache.ipynb", "Appendix B2: a smaller KV cache, by quantization and eviction"),
    ("14_numerics_of_cached_inference.ipynb", "Appendix C: the numerics of cached inference"),
]


_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                 "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty")


def course_size() -> str:
    """How many notebooks the course has, counted from SERIES so no text says "ten" once there are fourteen:
    e.g. "Fourteen notebooks: ten follow the lesson page (00-09), and four appendices (10-13) come after it"."""
    page = [name[:2] for name, title in SERIES if not title.startswith("Appendix")]
    appendices = [name[:2] for name, title in SERIES if title.startswith("Appendix")]
    text = f"{_NUMBER_WORDS[len(SERIES)].capitalize()} notebooks"
    if appendices:
        text += (f": {_NUMBER_WORDS[len(page)]} follow the lesson page ({page[0]}-{page[-1]}), and "
                 f"{_NUMBER_WORDS[len(appendices)]} appendices ({appendices[0]}-{appendices[-1]}) come after it")
    return text


def next_notebook(name: str) -> str:
    """File name of the notebook after ``name`` (the last one points back to the first)."""
    files = [f for f, _ in SERIES]
    return files[(files.index(name) + 1) % len(files)]

# What each notebook teaches, one line each: the course map of 00_tour (and the README) reads it.
TEACHES = {
    "00_tour.ipynb": "the two phases on the course model: prefill reads the prompt in one pass and fills "
                     "the cache, decode adds one token per step; a measured timeline",
    "01_attention_block.ipynb": "one attention block: q, k, v projections, RoPE, the causal mask, softmax; "
                                "MHA, GQA and MQA by the number of K/V heads H_kv",
    "02_prefill.ipynb": "the prompt through all L layers at once: each layer's K/V [B, H_kv, T, d_h], the "
                        "last valid position's logits, left-padded batches, TTFT vs prompt length",
    "03_decode.ipynb": "one new token per step: its query attends over the cached keys plus its own; cached "
                       "logits equal full recompute within a tolerance; what the cache saves and what it does "
                       "not; why decode is bandwidth-bound (arithmetic intensity vs the ridge) and slows as the "
                       "context grows",
    "04_cache_sizing.ipynb": "cache bytes = 2 × L × B × H_kv × T × d_h × bytes per value, for real models; "
                             "how GQA/MQA and the dtype shrink it",
    "05_sampling_and_stopping.ipynb": "from logits to a token: greedy, temperature, top-k, top-p; stopping on "
                                      "EOS, a stop string or the length limit",
    "06_performance_metrics.ipynb": "TTFT (in parts), TPOT, ITL, throughput and KV memory, measured; the "
                                    "batch roofline; arrivals served one at a time, in static batches and "
                                    "by continuous batching",
    "07_bug_lab.ipynb": "ten mystery bugs to diagnose and fix, then the catalogue of classic KV-cache bugs "
                        "(positions, masks, concatenation axis, padding, beams), found by comparing with "
                        "full recompute",
    "08_beyond_the_basics.ipynb": "what real engines add on top: preallocated caches, sliding windows and "
                                  "truncation, beam search, transformers' caches side by side, a real "
                                  "pretrained model",
    "09_self_test.ipynb": "questions and exercises across the whole course, to check yourself",
    "10_paged_kv_and_prefix_caching.ipynb": "one pool of fixed-size blocks shared by every "
                                            "request, block tables, copy-on-write, and prefix caching that "
                                            "prefills a shared system prompt once",
    "11_continuous_batching.ipynb": "a small serving engine on the paged cache: continuous "
                                    "batching, chunked prefill, preemption, every request equal to its solo run",
    "12_speculative_decoding.ipynb": "a draft proposes k tokens, the target checks them in one pass; "
                                     "greedy equals the target alone, sampling keeps its distribution, both caches "
                                     "roll back; the speed-up, measured and modelled",
    "13_smaller_kv_cache.ipynb": "K/V quantized to 8 or 4 bits (keys per channel, values per token, "
                                 "an exact recent window) and evicted under a budget (sinks + window, key norm, "
                                 "attention); memory against quality, measured",
    "14_numerics_of_cached_inference.ipynb": "why cached and recomputed logits differ in the last bits: "
                                             "summation order, the first op that differs, batch invariance, "
                                             "when a greedy token flips, and transformers' use_cache",
}


def course_map() -> str:
    """The course map as a Markdown table (notebook 00 shows it), in the current language; the links
    point at the notebooks next to the one showing it (the Chinese twins sit side by side too)."""
    from .i18n import tr

    rows = [tr("| # | notebook | what it teaches |"), "|---|---|---|"]
    rows += [f"| {name[:2]} | [{tr(title)}]({name}) | {tr(TEACHES[name])} |" for name, title in SERIES]
    return "\n".join(rows)

