"""The offline-safe hub loader (utils/hub.py): detects no network, loads a local folder."""
import time

import pytest
import torch

from conftest import prompt_ids
from utils import hub


def test_hub_detection_respects_hf_hub_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    t = time.perf_counter()
    assert hub.hub_available(timeout=3) is False
    model, tok, why = hub.load_pretrained("HuggingFaceTB/SmolLM2-135M-not-cached-anywhere")
    assert time.perf_counter() - t < 0.5
    assert model is None and "HF_HUB_OFFLINE" in why


def test_hub_detection_returns_quickly_without_network(monkeypatch):
    """Point the check at an address that never answers: it must give up within its timeout."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "https://10.255.255.1")  # unroutable: connect hangs
    t = time.perf_counter()
    assert hub.hub_available(timeout=1) is False
    assert time.perf_counter() - t < 2.5
    t = time.perf_counter()
    model, _, why = hub.load_pretrained("someone/not-cached-model", timeout=1)
    assert model is None and "network" in why and time.perf_counter() - t < 3.5
    t = time.perf_counter()
    hub.hub_available(timeout=60)  # capped at 3 s
    assert time.perf_counter() - t < 4.5


def test_load_pretrained_from_a_local_folder_gives_the_same_logits(tmp_path):
    transformers = pytest.importorskip("transformers")
    from utils import from_hf

    cfg = transformers.LlamaConfig(vocab_size=97, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(cfg).save_pretrained(tmp_path)
    hf_model, tok, why = hub.load_pretrained(str(tmp_path))
    assert why is None and tok is None and not hf_model.training
    assert next(hf_model.parameters()).dtype == torch.float32
    ours = from_hf(hf_model)
    assert hub.max_logit_diff(hf_model, ours, prompt_ids(10) % 97) < 1e-4
