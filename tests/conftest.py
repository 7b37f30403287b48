"""Shared fixtures: tiny seeded models in the three attention layouts the course teaches."""
import ipaddress
import socket

import pytest
import torch

from utils import Decoder, ModelConfig
from utils.hf import hf_cache_layers  # noqa: F401 (tests import it from here too)

TINY = dict(vocab_size=101, n_layers=3, d_model=64, d_ff=128, max_seq_len=256)
LAYOUTS = {
    "MHA": dict(n_heads=4, n_kv_heads=4),
    "GQA": dict(n_heads=4, n_kv_heads=2),
    "MQA": dict(n_heads=4, n_kv_heads=1),
}


def tiny_model(kind: str = "GQA", seed: int = 0, **overrides) -> Decoder:
    torch.manual_seed(seed)
    cfg = ModelConfig(**{**TINY, **LAYOUTS[kind], **overrides})
    return Decoder(cfg).eval()


def prompt_ids(T: int, seed: int = 0) -> torch.Tensor:
    """A seeded random prompt ``[1, T]`` of the tiny models' vocabulary (no id 0)."""
    return torch.randint(1, TINY["vocab_size"], (1, T), generator=torch.Generator().manual_seed(seed))


@pytest.fixture(scope="module")
def model() -> Decoder:
    """A tiny GQA model shared by the tests of one module (a test file may define its own ``model``)."""
    return tiny_model("GQA")


@pytest.fixture(params=list(LAYOUTS))
def any_layout_model(request) -> Decoder:
    return tiny_model(request.param)


@pytest.fixture
def gqa_model() -> Decoder:
    return tiny_model("GQA")


@pytest.fixture(scope="module")
def model_tok():
    """A seeded random model of the course model's shape, with the course tokenizer: for panels
    whose logic does not depend on trained weights."""
    from utils.course_model import COURSE_CONFIG, course_tokenizer

    torch.manual_seed(0)
    return Decoder(COURSE_CONFIG).eval(), course_tokenizer()


def _is_local(address) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name other than localhost: would need DNS and the network


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """The course works offline: any outbound connection in a test fails loudly."""
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def guard(real):
        def connect(self, address):
            if not _is_local(address):
                raise OSError(f"network access blocked in tests: tried to connect to {address!r}")
            return real(self, address)
        return connect

    monkeypatch.setattr(socket.socket, "connect", guard(real_connect))
    monkeypatch.setattr(socket.socket, "connect_ex", guard(real_connect_ex))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(autouse=True)
def english_to_start():
    """Every test starts in English, whatever language a test before it on the same worker left set."""
    from utils.i18n import set_language

    set_language("en")
    yield
