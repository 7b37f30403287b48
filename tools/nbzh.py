"""Keep each Chinese notebook (notebooks/zh/NN_*.ipynb) the twin of its English notebook.

Usage: python tools/nbzh.py [--check] [NN_name.ipynb ...]

A twin has the same cells as its English notebook. Markdown is written in Chinese; code is the
same code, differing only in string literals and comments (``same_code`` compares the two on
the AST with string constants blanked; ``tests/test_notebook_twins.py`` runs it on every pair).
Every Chinese cell records, in ``metadata.kvcourse.en``, a hash of the English cell it was made
from, so this tool can tell what changed in English since:

* an English cell unchanged since it was translated: the Chinese cell is kept;
* an English code cell that changed: its new code is copied over; the translations of string
  literals and comments the old Chinese cell had (read off the English notebook as last
  committed) are put back where the same English text still stands; what is left in English is
  reported (a literal meant to stay English is listed in ``metadata.kvcourse.english_ok``);
* an English markdown cell that changed, or a new English cell: it is marked, reported, and
  (new cells) copied in English, waiting for a translator;
* a twin that does not exist yet is created from the English notebook, all of it to translate.

Without --check it writes the twins and prints what needs translating; with --check it writes
nothing and exits 1 if a twin is out of step (code drift, stale or untranslated cells).
"""
from __future__ import annotations

import ast
import copy
import difflib
import hashlib
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent
EN_DIR = REPO / "notebooks"
ZH_DIR = EN_DIR / "zh"
KEY = "kvcourse"  # cell metadata: {"en": hash of the English source, "todo": why it needs a translator}
CJK = re.compile(r"[\u3400-\u9fff]")


def en_hash(source: str) -> str:
    return hashlib.sha1(source.encode("utf-8")).hexdigest()[:12]


# --- code equality --------------------------------------------------------------------------------

def _python(source: str) -> str:
    """Cell source as plain Python: IPython magics (``%pip``, ``%matplotlib``) become calls."""
    from IPython.core.inputtransformer2 import TransformerManager
    return TransformerManager().transform_cell(source)


class _Blank(ast.NodeTransformer):
    """String constants become "", and an f-string keeps only its fields (in sorted order, so a
    translation may put them in the order its grammar wants). Magics (``%pip ...``) keep their text."""

    def visit_Constant(self, node):
        return ast.Constant(value="") if isinstance(node.value, str) else node

    def visit_Call(self, node):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        if name in ("run_line_magic", "run_cell_magic", "system", "getoutput"):
            return node  # a magic or shell line: its text is the code
        return self.generic_visit(node)

    def visit_JoinedStr(self, node):
        fields = [self.visit(v) for v in node.values if isinstance(v, ast.FormattedValue)]
        fields.sort(key=ast.dump)
        return ast.JoinedStr(values=fields)


def code_signature(source: str) -> str:
    """What must be equal between twins: the AST with strings blanked (comments never count)."""
    return ast.dump(_Blank().visit(ast.parse(_python(source))))


def same_code(en_source: str, zh_source: str) -> bool:
    return code_signature(en_source) == code_signature(zh_source)


def nbval_markers(source: str) -> list[str]:
    """The nbval comment markers (``# NBVAL_CHECK_OUTPUT`` ...): twins must carry the same ones."""
    return re.findall(r"#\s*(NBVAL_\w+)", source)


# --- carrying translations over a code change ---------------------------------------------------

def _strings(source: str) -> list[str]:
    """String constants of the cell in source order (f-string pieces included)."""
    try:
        tree = ast.parse(_python(source))
    except SyntaxError:
        return []
    found = [(n.lineno, n.col_offset, n.value) for n in ast.walk(tree)
             if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return [v for *_, v in sorted(found)]


def _comments(source: str) -> list[str]:
    try:
        return [t.string for t in tokenize.generate_tokens(io.StringIO(_python(source)).readline)
                if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []


def _paired_strings(a: ast.AST, b: ast.AST):
    """(English, Chinese) string constants at the same place in two trees of the same code. An
    f-string pairs its pieces only when both split the same way (same fields, same order): a
    translation that reorders the fields is left alone rather than paired wrongly."""
    if type(a) is not type(b):
        return
    if isinstance(a, ast.Constant):
        if isinstance(a.value, str) and isinstance(b.value, str):
            yield a.value, b.value
        return
    if isinstance(a, ast.JoinedStr):
        kinds = lambda n: [ast.dump(v) if isinstance(v, ast.FormattedValue) else "text" for v in n.values]  # noqa: E731
        if kinds(a) != kinds(b):
            return
    for field in a._fields:
        x, y = getattr(a, field, None), getattr(b, field, None)
        if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for u, v in zip(x, y):
                if isinstance(u, ast.AST):
                    yield from _paired_strings(u, v)
        elif isinstance(x, ast.AST) and isinstance(y, ast.AST):
            yield from _paired_strings(x, y)


def translations(en_source: str, zh_source: str) -> dict[str, str]:
    """English string or comment -> its Chinese, read off a pair of twin cells with the same code:
    strings where they stand in the code, comments in order when both cells have as many."""
    pairs: dict[str, str] = {}
    try:
        trees = ast.parse(_python(en_source)), ast.parse(_python(zh_source))
    except SyntaxError:
        return pairs
    if not same_code(en_source, zh_source):
        return pairs
    pairs.update({e: z for e, z in _paired_strings(*trees) if e != z})
    en_comments, zh_comments = _comments(en_source), _comments(zh_source)
    if len(en_comments) == len(zh_comments):
        pairs.update({e: z for e, z in zip(en_comments, zh_comments) if e != z})
    return pairs


def _string_tokens(source: str) -> list[tuple[int, int, str]]:
    """(start offset, end offset, value) of every plain string literal token (no f-strings), or [] if the
    cell does not tokenize (IPython magics)."""
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    found = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type != tokenize.STRING or "f" in tok.string.split(tok.string[-1])[0].lower():
                continue
            value = ast.literal_eval(tok.string)
            if isinstance(value, str):
                found.append((starts[tok.start[0] - 1] + tok.start[1], starts[tok.end[0] - 1] + tok.end[1], value))
    except (tokenize.TokenError, IndentationError, SyntaxError, ValueError):
        return []
    return found


def _apply(source: str, table: dict[str, str]) -> str:
    """Replace, in ``source``, each English comment or string literal found in ``table``: a string literal
    only where a whole literal token holds it (never across two literals: ``"a", "b"`` holds ``", "``),
    and only prose of two words or more (a one-word literal may be a dict key elsewhere in the cell)."""
    tokens = _string_tokens(source)
    for start, end, value in sorted(tokens, reverse=True):  # from the end: offsets stay valid
        # only prose (2+ words): a one-word literal or a separator may be code data (a dict key, a join)
        if value in table and len(re.findall(r"[A-Za-z]{2,}", value)) >= 2:
            literal = source[start:end]
            body = literal.lstrip("rbuRBU")
            prefix = literal[:len(literal) - len(body)]
            quote = body[:3] if body[:3] in ('"""', "'''") else body[0]
            zh = table[value]
            if quote[0] not in zh and "\\" not in zh and ("\n" not in zh or len(quote) == 3):
                source = source[:start] + f"{prefix}{quote}{zh}{quote}" + source[end:]
    for en in sorted(table, key=len, reverse=True):
        zh = table[en]
        if en.startswith("#"):
            source = source.replace(en, zh)
        elif not tokens and len(re.findall(r"[A-Za-z]{2,}", en)) >= 2:  # a cell that does not tokenize: as text
            for quote in ('"', "'"):
                source = re.sub(rf"(?<![\w\"'])({quote}){re.escape(en)}{quote}(?![\w\"'])",
                                lambda m: f"{quote}{zh}{quote}", source)
        if not en.startswith("#") and len(en.strip()) >= 6 and source.count(en) == 1:
            source = source.replace(en, zh)  # a piece of an f-string: no quotes of its own around it
    return source


def untranslated(source: str) -> list[str]:
    """Comments and prose-like string literals still in English (3+ words, no Chinese)."""
    texts = [*_comments(source), *_strings(source)]
    return [t for t in texts if not CJK.search(t) and len(re.findall(r"[A-Za-z]{2,}", t)) >= 3
            and not t.lstrip("# ").startswith("NBVAL_")]


# --- one twin -------------------------------------------------------------------------------------

def _committed_english(name: str) -> dict[str, str]:
    """English cell hash -> source, for the English notebook as last committed: the cells the twin
    was made from, so the translations of a changed code cell can be read off the old pair."""
    try:
        text = subprocess.run(["git", "-C", str(REPO), "show", f"HEAD:notebooks/{name}"], capture_output=True,
                              text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {en_hash(c.source): c.source for c in nbformat.reads(text, as_version=4).cells}


def code_todo(cell) -> str | None:
    """What a translator must still do in a Chinese code cell (None: nothing)."""
    if cell.source.startswith("# Course setup"):
        return None  # written by tools/nbsync.py from utils/series.py, in each language
    keep = set(cell.metadata.get(KEY, {}).get("english_ok", []))
    left = [t for t in untranslated(cell.source) if t not in keep]
    return f"translate {len(left)} comment(s)/string(s) (or list them in metadata.{KEY}.english_ok): {left[:3]}" \
        if left else None


def sync_twin(en: nbformat.NotebookNode, zh: nbformat.NotebookNode | None,
              old_english: dict[str, str] | None = None) -> tuple[nbformat.NotebookNode, list[str]]:
    """The Chinese twin brought in step with ``en``, and what needs a translator (cell numbers)."""
    old = list(zh.cells) if zh is not None else []
    new_nb = copy.deepcopy(en)
    en_keys = [en_hash(c.source) for c in en.cells]
    old_keys = [c.metadata.get(KEY, {}).get("en") for c in old]
    table: dict[str, str] = {}
    for c, k in zip(old, old_keys):  # the translations this twin already has, to put back into changed code
        if c.cell_type == "code" and k in (old_english or {}):
            table.update(translations(old_english[k], c.source))
    cells, notes = [], []
    match = difflib.SequenceMatcher(a=old_keys, b=en_keys, autojunk=False)
    for tag, i1, i2, j1, j2 in match.get_opcodes():
        for k, j in enumerate(range(j1, j2)):
            was = old[i1 + k] if tag in ("equal", "replace") and i1 + k < i2 else None
            if was is not None and was.cell_type != en.cells[j].cell_type:
                was = None
            known = was is not None and was.metadata.get(KEY, {}).get("en") in (old_english or {})
            cell = _twin_cell(en.cells[j], was, tag == "equal", table, known)
            if cell.metadata[KEY].get("todo"):
                notes.append(f"cell {j}: {cell.metadata[KEY]['todo']}")
            cells.append(cell)
    new_nb.cells = cells
    return new_nb, notes


def _twin_cell(en_cell, was, unchanged: bool, table: dict[str, str], known: bool = False):
    """The Chinese cell for ``en_cell``, from the twin's old cell ``was``: kept when the English is
    unchanged (with any pending todo); for changed English code, rebuilt from the new code with the old
    translations put back when the English it was made from is known (``known``: in the committed
    English), else kept and flagged; for changed markdown, kept and flagged."""
    meta = {"en": en_hash(en_cell.source)}
    old_meta = was.metadata.get(KEY, {}) if was is not None else {}
    if "english_ok" in old_meta:
        meta["english_ok"] = old_meta["english_ok"]
    changed = "the English changed: update this translation"
    pending = changed if unchanged and old_meta.get("todo") == changed else None  # a flag not acted on yet stays
    if was is not None and unchanged:
        cell = copy.deepcopy(was)
    elif was is not None and not (en_cell.cell_type == "code" and known):
        # changed English whose old version is unknown (code), or changed prose: keep the Chinese, flag it
        cell = copy.deepcopy(was)
        if en_cell.cell_type == "code" and not same_code(en_cell.source, was.source):
            cell.source = _apply(en_cell.source, table)  # the code itself changed: it must follow
            cell.outputs, cell.execution_count = [], None
        pending = changed
    else:
        cell = copy.deepcopy(en_cell)
        if en_cell.cell_type == "code":
            cell.source = _apply(en_cell.source, table)
            cell.outputs, cell.execution_count = [], None
    cell.metadata = {**copy.deepcopy(en_cell.metadata), KEY: meta}
    meta = cell.metadata[KEY]  # nbformat copies a dict it is given
    if cell.cell_type == "code":
        todo = code_todo(cell) or pending
    elif not CJK.search(cell.source):
        todo = "translate this markdown"
    else:
        todo = pending
    meta.pop("todo", None)
    if todo:
        meta["todo"] = todo
    return cell


def check_twin(en: nbformat.NotebookNode, zh: nbformat.NotebookNode) -> list[str]:
    """What is wrong with a twin as committed: cell count or kind, code drift, nbval markers,
    cells not made from the current English, cells still to translate."""
    problems = []
    if len(en.cells) != len(zh.cells):
        return [f"{len(zh.cells)} cells, the English notebook has {len(en.cells)}"]
    for j, (e, z) in enumerate(zip(en.cells, zh.cells)):
        meta = z.metadata.get(KEY, {})
        if e.cell_type != z.cell_type:
            problems.append(f"cell {j}: {z.cell_type}, the English cell is {e.cell_type}")
            continue
        if meta.get("en") != en_hash(e.source):
            problems.append(f"cell {j}: not made from the current English cell (run tools/nbzh.py)")
        if e.cell_type == "markdown" and meta.get("todo"):
            problems.append(f"cell {j}: {meta['todo']}")
        if e.cell_type == "code":
            if code_todo(z):
                problems.append(f"cell {j}: {code_todo(z)}")
            if not same_code(e.source, z.source):
                problems.append(f"cell {j}: the code differs from the English cell (beyond strings and comments)")
            if nbval_markers(e.source) != nbval_markers(z.source):
                problems.append(f"cell {j}: nbval markers {nbval_markers(z.source)} != {nbval_markers(e.source)}")
            if e.metadata.get("tags", []) != z.metadata.get("tags", []):
                problems.append(f"cell {j}: tags {z.metadata.get('tags', [])} != {e.metadata.get('tags', [])}")
        elif not CJK.search(z.source):
            problems.append(f"cell {j}: markdown not translated")
    return problems


def main(argv: list[str]) -> int:
    check = "--check" in argv
    names = [Path(a).name for a in argv if a != "--check"] or sorted(p.name for p in EN_DIR.glob("*.ipynb"))
    bad = 0
    for name in names:
        en = nbformat.read(EN_DIR / name, as_version=4)
        path = ZH_DIR / name
        zh = nbformat.read(path, as_version=4) if path.exists() else None
        if check:
            problems = check_twin(en, zh) if zh is not None else ["no Chinese twin (run tools/nbzh.py)"]
        else:
            twin, problems = sync_twin(en, zh, _committed_english(name))
            if zh is None or twin != zh:
                ZH_DIR.mkdir(exist_ok=True)
                nbformat.write(twin, path)
        if problems:
            bad += 1
            print(f"zh/{name}: {len(problems)} to do")
            for p in problems:
                print(f"  {p}")
    return 1 if (check and bad) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
