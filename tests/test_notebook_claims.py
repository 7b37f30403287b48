"""Every claim a notebook proves goes through utils.check.check, which raises when it is false.

nbval only compares a cell's output with what was committed, so a claim printed as a plain bool
can be committed as ``False`` and then be *required*. This test walks every notebook's code and
fails on claim-shaped prints that bypass the helper: a ``print`` whose arguments compare values
(``==``, ``!=``), call ``allclose``/``equal``/``isclose``/``array_equal``, or print a bool next to
words like "same", "equal", "match".
"""
import ast
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("**/*.ipynb"))
CLAIM_CALLS = {"allclose", "equal", "isclose", "array_equal", "assert_close"}
CLAIM_WORDS = ("same", "equal", "match", "identical", "==")


def _code(cell) -> str:
    # IPython magics and shell lines are not Python: blank them so ast can parse the rest
    lines = [line[: len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith(("%", "!")) else line
             for line in "".join(cell["source"]).splitlines()]
    return "\n".join(lines)


def _claims_in_print(call: ast.Call) -> list[str]:
    found = []
    texts = [n.value for a in call.args for n in ast.walk(a) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    for arg in call.args:
        for node in ast.walk(arg):
            if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
                found.append("compares with == or !=")
            elif isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name in CLAIM_CALLS:
                    found.append(f"calls {name}")
                elif name == "bool" and any(w in t.lower() for t in texts for w in CLAIM_WORDS):
                    found.append("prints a bool as a claim")
    return found


def claim_prints(source: str) -> list[str]:
    """The claim-shaped ``print`` calls of one cell's source, as 'line N: why'."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
            out += [f"line {node.lineno}: {why}" for why in sorted(set(_claims_in_print(node)))]
    return out


def test_the_scanner_finds_claims_and_spares_checks():
    assert claim_prints('print("by hand == layer:", torch.allclose(a, b))')
    assert claim_prints('print(f"same tokens: {a == b}")')
    assert claim_prints('print("same:", bool(x.eq(y).all()))')
    assert not claim_prints('check("by hand == layer", torch.allclose(a, b))')
    assert not claim_prints('print(f"{n} tokens, {ms:.1f} ms")')


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT / "notebooks")))
def test_no_claim_bypasses_the_check_helper(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    bad = [f"cell {i} {hit}" for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"
           for hit in claim_prints(_code(c))]
    assert not bad, "print the claim through utils.check.check(label, condition[, expect=False]):\n" + "\n".join(bad)
