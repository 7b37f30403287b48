"""Keep every notebook's shared cells, and the README's course map, in step with utils/series.py.

Usage: python tools/nbsync.py [--check] [NOTEBOOK.ipynb ...]

Rewrites, in place, the Colab badge line of each notebook's first (title) cell and the whole
setup cell (the first code cell, starting with "# Course setup"), in English and in the Chinese
twins of notebooks/zh/ (their badge opens the twin, their setup cell says set_language("zh")),
each lesson's line of links to its two notebooks, and the course-map table of
README.md (between its course-map markers), the engine's reading order with each file's
length (between its reading-order markers) and the map of every module (tools/package_map.py, between its
package-map markers). With --check, changes nothing and exits 1 if
anything is out of step. `make notebooks` runs it first.
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from package_map import package_map  # noqa: E402
from utils.series import (BADGE_MARKER, SERIES, SETUP_MARKER, TEACHES, colab_badge, course_size,  # noqa: E402
                          colab_url, github_url, notebook_language, notebook_path,
                          setup_cell_source)

README = REPO_ROOT / "README.md"
MAP_START, MAP_END = "<!-- course-map:start -->", "<!-- course-map:end -->"
ORDER_START, ORDER_END = "<!-- reading-order:start -->", "<!-- reading-order:end -->"
PACKAGE_START, PACKAGE_END = "<!-- package-map:start -->", "<!-- package-map:end -->"

# The engine, in the order to read it, and what each file holds.
READING_ORDER = [
    ("config.py", "`ModelConfig`: the model's sizes L, C, H, H_kv, d_h, V, d_ff, max_seq_len and what follows from them"),
    ("attention.py", "the causal mask, RoPE, `repeat_kv`, softmax attention written out"),
    ("cache.py", "the `Cache` base, `KVCache` (grows by concatenation), `StaticKVCache` (preallocated)"),
    ("model.py", "`Decoder`: embedding, L blocks (RMSNorm, attention, SwiGLU), logits; the module version"),
    ("sampling.py", "temperature, top-k, top-p, greedy"),
    ("generate.py", "`prefill`, `decode_step`, `decode_stepper` and the `generate` loop"),
    ("flat_decode.py", "the decode step `generate` runs by default (`step=\"flat\"`): the same arithmetic without modules"),
    ("split_matvec.py", "batch-1 products on every core: a weight's rows cut into one block per thread, the same bits"),
    ("weight_layout.py", "how the weights sit in memory: stored `[C_in, C_out]`, the order batch-1 decode streams fastest"),
    ("validate.py", "the argument guards the engine calls (read when an error message surprises you)"),
]


def lesson_file(lang: str, notebook: str) -> str:
    return f"lessons/{lang}/{notebook[:2]}-{notebook[3:-len('.ipynb')].replace('_', '-')}.md"


def course_map() -> str:
    """The README's course map: how many notebooks (counted, never typed), then the table: notebook,
    lessons in English and Chinese, what you learn, Colab."""
    rows = [f"{course_size()}. Each has a lesson to read in English and in Chinese.", "","| # | Notebook | Lesson | 课文 | What you learn | Colab | 中文笔记本 | Colab（中文） |",
            "|---|---|---|---|---|---|---|---|"]
    for notebook, title in SERIES:
        zh_path = REPO_ROOT / lesson_file("zh", notebook)
        zh_title = zh_path.read_text(encoding="utf-8").split("\n", 1)[0].lstrip("# ").split(" · ", 1)[-1] \
            if zh_path.exists() else "中文"
        rows.append(
            f"| {notebook[:2]} | [{title}](notebooks/{notebook}) | [English]({lesson_file('en', notebook)}) "
            f"| [{zh_title}]({lesson_file('zh', notebook)}) | {TEACHES[notebook]} "
            f"| [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({colab_url(notebook)}) "
            f"| [{zh_title}]({notebook_path(notebook, 'zh')}) "
            f"| [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({colab_url(notebook, 'zh')}) |"
        )
    return "\n".join(rows)


def lesson_links(notebook: str, lang: str) -> str:
    """A lesson's links line (its first line starting with the Colab badge): both notebooks, its own language first."""
    colab = "[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
    en, zh = notebook_path(notebook, "en"), notebook_path(notebook, "zh")
    if lang == "zh":
        return (f"{colab}({colab_url(notebook, 'zh')}) · 中文笔记本：[GitHub 上的 zh/{notebook}]({github_url(zh)}) · "
                f"英文笔记本：[{notebook}]({github_url(en)})（[在 Colab 中打开]({colab_url(notebook)})）")
    return (f"{colab}({colab_url(notebook)}) · notebook: [{notebook} on GitHub]({github_url(en)}) · "
            f"in Chinese: [zh/{notebook}]({github_url(zh)}) ([open in Colab]({colab_url(notebook, 'zh')}))")


def sync_lessons(check: bool) -> bool:
    """Rewrite each lesson's links line; return True if one was out of step."""
    stale = False
    for notebook, _ in SERIES:
        for lang in ("en", "zh"):
            path = REPO_ROOT / lesson_file(lang, notebook)
            if not path.exists():
                continue
            lines = path.read_text(encoding="utf-8").split("\n")
            at = next((i for i, line in enumerate(lines) if line.startswith(BADGE_MARKER)), None)
            want = lesson_links(notebook, lang)
            if at is None or lines[at] != want:
                stale = True
                print(f"{path.relative_to(REPO_ROOT)}: the notebook links line is out of date")
                if not check:
                    if at is None:
                        lines[1:1] = ["", want]
                    else:
                        lines[at] = want
                    path.write_text("\n".join(lines), encoding="utf-8")
    return stale


NAMES_INDEX = REPO_ROOT / "utils" / "data" / "notebook_names.json"


def bound_names(tree) -> list[str]:
    """Every name a cell binds in the kernel, in order: assignments (plain, augmented, annotated, the walrus),
    imports, functions, classes, loop, ``with`` and ``except`` targets, at the top level or inside ``if``,
    ``for``, ``while``, ``with`` and ``try`` blocks. Not a function's or a comprehension's own locals: they
    never reach the kernel (a walrus inside a comprehension does, and is counted)."""
    import ast

    names: list[str] = []

    def visit(node) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)  # its body is its own scope
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.extend((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            names.extend(n.target.id for n in ast.walk(node) if isinstance(n, ast.NamedExpr))
        elif not isinstance(node, ast.Lambda):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.append(node.id)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                names.append(node.name)
            for child in ast.iter_child_nodes(node):
                visit(child)

    visit(tree)
    return names


def cell_tree(source: str):
    """The syntax tree of a code cell, its IPython magics and shell lines read as ``pass``; None when the
    cell is not Python."""
    import ast

    try:
        return ast.parse("\n".join("pass" if line.lstrip().startswith(("%", "!")) else line
                                   for line in source.splitlines()))
    except SyntaxError:
        return None


def defined_names(nb: nbformat.NotebookNode) -> dict:
    """``{"sections": [heading, ...], "names": {name: index of the section of the cell that first defines it}}``
    over the notebook's code cells (every name a cell binds, ``bound_names``; the setup cell's aside)."""

    found: dict[str, int] = {}
    sections = [""]
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            heads = [line.lstrip("#").strip() for line in cell.source.splitlines() if line.startswith("#")]
            if heads:
                sections.append(heads[-1])
            continue
        if cell.source.startswith(SETUP_MARKER):
            continue
        tree = cell_tree(cell.source)
        if tree is None:
            continue
        for name in bound_names(tree):
            if not name.startswith("_") and name not in found:
                found[name] = len(sections) - 1
    return {"sections": sections, "names": found}


def names_index() -> str:
    """The JSON that utils.name_hints reads: for each language, notebook -> its sections and names."""
    import json

    index = {}
    for lang, folder in (("en", REPO_ROOT / "notebooks"), ("zh", REPO_ROOT / "notebooks" / "zh")):
        index[lang] = {p.name: defined_names(nbformat.read(p, as_version=4)) for p in sorted(folder.glob("*.ipynb"))}
    return json.dumps(index, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n"


def sync_names(check: bool) -> bool:
    """Rewrite utils/data/notebook_names.json; return True if it was out of step."""
    text = names_index()
    if NAMES_INDEX.exists() and NAMES_INDEX.read_text(encoding="utf-8") == text:
        return False
    print("utils/data/notebook_names.json: out of date (where each notebook defines its names)")
    if not check:
        NAMES_INDEX.write_text(text, encoding="utf-8")
    return True


def reading_order() -> str:
    """The README's engine table: file, lines, what it holds (lengths counted, never typed)."""
    rows = ["| step | file | lines | what it holds |", "|---|---|---|---|"]
    for i, (name, what) in enumerate(READING_ORDER, 1):
        n = len((REPO_ROOT / "utils" / name).read_text(encoding="utf-8").splitlines())
        rows.append(f"| {i} | [`utils/{name}`](utils/{name}) | {n} | {what} |")
    return "\n".join(rows)


def sync_readme(check: bool) -> bool:
    """Rewrite the generated blocks of README.md; return True if one was out of step."""
    text = README.read_text(encoding="utf-8")
    new = text
    for start, end, body in ((MAP_START, MAP_END, course_map()), (ORDER_START, ORDER_END, reading_order()),
                             (PACKAGE_START, PACKAGE_END, package_map())):
        if start not in new or end not in new:
            print(f"README.md: no {start} ... {end} markers")
            return True
        head, rest = new.split(start, 1)
        _, tail = rest.split(end, 1)
        new = f"{head}{start}\n{body}\n{end}{tail}"
    if new != text:
        print("README.md: a generated block (course map, reading order, package map) is out of date")
        if not check:
            README.write_text(new, encoding="utf-8")
        return True
    return False


def sync(nb: nbformat.NotebookNode, name: str, lang: str = "en") -> list[str]:
    """Fix ``nb`` in place; return what was wrong (empty when it was already in step)."""
    problems = []
    title = nb.cells[0] if nb.cells else None
    if title is None or title.cell_type != "markdown" or not title.source.startswith("# "):
        problems.append("first cell is not a markdown title ('# NN · ...')")
    else:
        lines = title.source.split("\n")
        badge = colab_badge(name, lang)
        idx = [i for i, line in enumerate(lines) if line.startswith(BADGE_MARKER)]
        if not idx:
            lines[1:1] = ["", badge]
            problems.append("no Colab badge")
        elif lines[idx[0]] != badge:
            lines[idx[0]] = badge
            problems.append("Colab badge out of date")
        title.source = "\n".join(lines)
    code = [c for c in nb.cells if c.cell_type == "code"]
    if not code or not code[0].source.startswith(SETUP_MARKER):
        problems.append("first code cell is not the setup cell")
    elif code[0].source != setup_cell_source(lang):
        code[0].source = setup_cell_source(lang)
        problems.append("setup cell differs from utils/series.py")
    return problems


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [Path(a) for a in argv if a != "--check"] or [
        *sorted((REPO_ROOT / "notebooks").glob("*.ipynb")), *sorted((REPO_ROOT / "notebooks" / "zh").glob("*.ipynb"))]
    bad = 0
    if not [a for a in argv if a != "--check"]:
        bad += sync_readme(check)
        bad += sync_lessons(check)
        bad += sync_names(check)
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        problems = sync(nb, path.name, notebook_language(path))
        if problems:
            bad += 1
            print(f"{path.relative_to(REPO_ROOT / 'notebooks') if path.is_absolute() else path}: {'; '.join(problems)}")
            if not check:
                nbformat.write(nb, path)
    return 1 if (check and bad) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
