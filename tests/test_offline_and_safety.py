"""Offline by default, and no unsafe loading or evaluation anywhere in the package."""
import re
import socket
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "utils").rglob("*.py")) + sorted((ROOT / "tools").rglob("*.py"))


def test_outbound_connections_are_blocked_in_tests():
    with pytest.raises(OSError, match="network access blocked"):
        socket.create_connection(("93.184.216.34", 80), timeout=1)


def test_loopback_stays_allowed():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = socket.create_connection(server.getsockname(), timeout=1)
    client.close()
    server.close()


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_pickle_eval_or_unsafe_torch_load(path):
    code = path.read_text(encoding="utf-8")
    assert not re.search(r"^\s*(import pickle|from pickle)", code, re.M), "use safetensors, not pickle"
    for call in re.finditer(r"torch\.load\(([^)]*)\)", code):
        assert "weights_only=True" in call.group(1), f"torch.load without weights_only=True: {call.group(0)}"
    assert not re.search(r"(?<![\w.])(eval|exec)\(", code), "no eval/exec of text"
