"""The reading half: a lesson in English and in Chinese per notebook, whose links, figures and
quoted numbers all hold against the package and the notebooks."""
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import export_figures  # noqa: E402
import lesson_facts  # noqa: E402

from utils.series import SERIES, colab_url, github_url, notebook_path  # noqa: E402

LESSONS = ROOT / "lessons"
LANGS = ("en", "zh")
SELF_TEST_HEADING = {"en": r"^## Self-test", "zh": r"^## 自测"}
# Standard Chinese terms: at first use in a Chinese lesson, the English term follows in parentheses.
ZH_FIRST_USE = {"预填充": "Prefill", "KV 缓存": "KV cache", "首 token 延迟": "TTFT"}
CORE_TERMS = ["prefill", "decode", "KV cache", "token", "logits", "causal mask", "MHA", "GQA", "MQA",
              "RoPE", "position id", "left padding", "TTFT", "TPOT", "throughput", "temperature", "top-k",
              "top-p", "EOS", "stop string", "beam search", "sliding window", "static cache",
              "full recompute", "tolerance", "memory bandwidth", "concurrency", "query", "key", "value"]


# A quoted number: <span data-fact="NAME">VALUE</span>. Lessons are wrapped at ~100 columns, so a span may
# break between "<span" and "data-fact" (or inside VALUE): every test reads spans through this one pattern.
FACT_SPAN = re.compile(r'<span\s+data-fact="([^"]+)">([^<]*)</span>')


def lesson_path(lang: str, notebook: str) -> Path:
    return LESSONS / lang / f"{notebook[:2]}-{notebook[3:-len('.ipynb')].replace('_', '-')}.md"


ALL = [(lang, nb) for nb, _ in SERIES for lang in LANGS]
ids = [f"{lang}/{nb[:-6]}" for lang, nb in ALL]


def _read(lang, nb):
    path = lesson_path(lang, nb)
    if not path.exists():
        pytest.fail(f"missing lesson {path.relative_to(ROOT)}")
    return path.read_text(encoding="utf-8")


def _prose(text: str) -> str:
    """Text with code, HTML comments, fact spans and link targets removed."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", " ", text)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = FACT_SPAN.sub(" ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    return text


@pytest.mark.parametrize("lang,nb", ALL, ids=ids)
def test_lesson_exists_and_links_to_its_notebook(lang, nb):
    text = _read(lang, nb)
    for notebook_lang in ("en", "zh"):  # both notebooks, the English one and its Chinese twin
        assert github_url(notebook_path(nb, notebook_lang)) in text, f"link the {notebook_lang} notebook on GitHub"
        assert colab_url(nb, notebook_lang) in text, f"link the {notebook_lang} notebook on Colab"


@pytest.mark.parametrize("lang,nb", ALL, ids=ids)
def test_relative_links_and_images_resolve(lang, nb):
    path = lesson_path(lang, nb)
    text = _read(lang, nb)
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r'src="([^"]+)"', text):
        if re.match(r"^(https?:|mailto:|#)", target):
            continue
        assert (path.parent / target.split("#")[0]).exists(), f"broken link {target}"


@pytest.mark.parametrize("lang,nb", ALL, ids=ids)
def test_self_test_has_three_to_five_questions_with_answers(lang, nb):
    text = _read(lang, nb)
    m = re.search(SELF_TEST_HEADING[lang] + r".*?$(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert m, f"a '{SELF_TEST_HEADING[lang][3:]}' section"
    section = m.group(1)
    questions = re.findall(r"^\d+\.\s", section, flags=re.M)
    assert 3 <= len(questions) <= 5, f"{len(questions)} questions"
    assert len(re.findall(r"<details>", section)) >= len(questions), "each question has an answer"


def _stale_facts(text: str, lang: str, facts=None) -> list[str]:
    """The spans of a lesson text whose value is not the fact's current value in that language."""
    facts = lesson_facts.FACTS if facts is None else facts
    stale = []
    for name, value in FACT_SPAN.findall(text):
        assert name in facts, f"unknown fact {name}"
        fact = facts[name]
        if isinstance(fact, lesson_facts.NotebookFact):
            assert lang in fact.patterns, f"{name}: read from a notebook, so it needs a {lang}= pattern for the {lang} twin"
        if fact(lang) != value:
            stale.append(f"{name}: lesson says {value}, now {fact(lang)}")
    return stale


def test_a_fact_span_wrapped_across_lines_is_still_checked_and_refreshed():
    """Regression: the check once matched '<span data-fact=' with one literal space, so a span the
    wrapping broke after '<span' was never compared (a lesson quoted 0.709 where the notebook printed 0.708)."""
    facts = {"x": lambda lang: "0.708"}
    for span in ('<span data-fact="x">0.709</span>', '<span\ndata-fact="x">0.709</span>',
                 '<span\n  data-fact="x">0.709</span>'):
        text = f"a pass took {span} ms"
        assert _stale_facts(text, "en", facts) == ["x: lesson says 0.709, now 0.708"], span
        assert len(lesson_facts.SPAN.findall(text)) == 1, f"tools/lesson_facts.py --update must refresh {span!r}"
        assert text.count("data-fact=") == len(FACT_SPAN.findall(text))


@pytest.mark.parametrize("lang,nb", ALL, ids=ids)
def test_quoted_numbers_are_computed_facts(lang, nb):
    """Every span holds its fact in the lesson's own language: a Chinese lesson quotes the Chinese twin's run."""
    text = _read(lang, nb)
    stale = _stale_facts(text, lang)
    assert not stale, f"{stale} (run tools/lesson_facts.py --update)"
    typed = re.findall(r"(?<![\w.-])\d[\d,]{3,}(?:\.\d+)?", _prose(text))
    assert not typed, f"numbers typed by hand (make them facts in tools/lesson_facts.py): {typed}"


@pytest.mark.parametrize("lang,nb", ALL, ids=ids)
def test_every_fact_span_is_well_formed(lang, nb):
    """A span the fact tool cannot read is never checked nor refreshed, and a regex edit can leave its
    back-references (``\\1``) where a number belongs: both once reached a lesson unseen."""
    text = _read(lang, nb)
    spans = text.count("data-fact=")
    readable = len(FACT_SPAN.findall(text))
    assert spans == readable, f"{spans - readable} fact span(s) written in a form tools/lesson_facts.py cannot read"
    leftovers = re.findall(r".{0,30}\\\d.{0,10}", _prose(text))
    assert not leftovers, f"regex back-references left in the text: {leftovers}"


@pytest.mark.parametrize("lang", LANGS)
def test_every_notebook_fact_matches_its_notebook_in_each_language(lang):
    """Each from_notebook fact the lessons of a language quote has a pattern for that language, and every
    pattern matches that language's committed notebook: a Chinese pattern that no longer matches its twin
    (after a re-run or a reworded output) fails here by name."""
    facts = {n: f for n, f in lesson_facts.FACTS.items() if isinstance(f, lesson_facts.NotebookFact)}
    quoted = {name for nb, _ in SERIES if lesson_path(lang, nb).exists()
              for name in re.findall(r'data-fact="([^"]+)"', _read(lang, nb))}
    missing = sorted(n for n in quoted if n in facts and lang not in facts[n].patterns)
    assert not missing, f"facts the {lang} lessons quote without a {lang} pattern: {missing}"
    failing = {}
    for name, fact in facts.items():
        if lang not in fact.patterns:
            continue
        try:
            fact(lang)
        except LookupError as e:
            failing[name] = str(e)
    assert not failing, f"{len(failing)} {lang} patterns match nothing: {failing}"


def test_facts_have_a_language():
    """A fact read from a notebook answers in the language asked; one computed from the package is the same in both."""
    categorical = lesson_facts.FACTS["nb07_first_positions"]
    assert re.fullmatch(r"step \d+ \(pos \d+\)|raises at step \d+", categorical("en"))
    assert re.fullmatch(r"第 \d+ 步（位置 \d+）|第 \d+ 步报错", categorical("zh"))
    assert lesson_facts.FACTS["nb06_roof_b1_bound_by"]("zh").endswith("受限")
    package = lesson_facts.FACTS["llama3_8b_per_token_bytes"]
    assert package("en") == package("zh")


@pytest.mark.parametrize("lang,nb", ALL, ids=ids)
def test_figures_are_the_notebooks_own(lang, nb):
    text = _read(lang, nb)
    exported = export_figures.all_figures()
    for target in re.findall(r"\]\(([^)\s]*figures/[^)\s]+\.png)\)", text):
        name = target.split("figures/", 1)[1]
        if lang == "zh":
            assert name.startswith("zh/"), f"a Chinese lesson shows the Chinese twin's figure: figures/zh/{name}"
        assert name in exported, f"{name} is not a figure exported from a notebook ('# figure:' marker)"
        assert (lesson_path(lang, nb).parent / target).read_bytes() == exported[name], \
            f"{name} differs from the notebook's output: run tools/export_figures.py"


@pytest.mark.parametrize("nb", [nb for nb, _ in SERIES])
def test_chinese_titles_carry_no_english_gloss(nb):
    """The English term is glossed in the first paragraph, not in the H1 title ("# 预填充", not "# 预填充（Prefill）")."""
    title = next(line for line in _read("zh", nb).splitlines() if line.startswith("# "))
    assert not re.search(r"[（(][^）)]*[A-Za-z]{2,}[^）)]*[）)]", title), f"English gloss in the title: {title}"


@pytest.mark.parametrize("nb", [nb for nb, _ in SERIES])
def test_chinese_lessons_give_the_english_term_at_first_use(nb):
    text = _prose(re.sub(r"(?m)^#.*$", " ", _read("zh", nb)))  # first use in the prose, the titles aside
    for zh, en in ZH_FIRST_USE.items():
        i = text.find(zh)
        if i >= 0:
            assert en.lower() in text[i: i + len(zh) + 16].lower(), f"first '{zh}' should be followed by ({en})"


def test_glossary_covers_the_core_terms_and_every_term_is_used():
    glossary = (LESSONS / "glossary.md").read_text(encoding="utf-8")
    rows = [line.split("|")[1].strip() for line in glossary.splitlines()
            if line.startswith("| ") and not line.startswith("| English") and "---" not in line]
    english = " ; ".join(rows).lower()
    missing = [t for t in CORE_TERMS if t.lower() not in english]
    assert not missing, f"glossary lacks {missing}"
    lessons = " ".join(lesson_path("en", nb).read_text(encoding="utf-8").lower()
                       for nb, _ in SERIES if lesson_path("en", nb).exists())
    if lessons:
        unused = [r for r in rows if re.sub(r"\s*\(.*\)", "", r).lower() not in lessons]
        assert not unused, f"glossary terms no lesson uses: {unused}"


def test_exported_figures_are_up_to_date():
    stale = [n for n, data in export_figures.all_figures().items()
             if not (LESSONS / "figures" / n).exists() or (LESSONS / "figures" / n).read_bytes() != data]
    assert not stale, f"run tools/export_figures.py: {stale}"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lesson_00_maps_every_notebook_of_the_series(lang):
    """The tour's map lists the whole series, so it cannot stop at 09 when appendices are added."""
    text = (LESSONS / lang / "00-tour.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d\d) \|", text, re.M)
    assert rows == [name[:2] for name, _ in SERIES]


def test_readme_counts_the_notebooks_it_maps():
    from utils.series import course_size

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert course_size() in readme
    assert course_size().startswith("Fourteen notebooks") == (len(SERIES) == 14)
