"""Optional: a real pretrained model from the Hugging Face hub, loaded only when that is possible.

The course runs offline (tests, CI, a laptop on a train); a notebook cell that needs the hub must
then say it was skipped, quickly, instead of failing or hanging. So:

* ``HF_HUB_OFFLINE=1`` (or ``TRANSFORMERS_OFFLINE=1``): never touch the network;
* a model already in the local Hugging Face cache (or a local folder) loads without the network;
* otherwise ``hub_available`` tries one TCP connection to the hub, in a background thread that
  is abandoned after ``timeout`` seconds (at most 3), so even a hanging DNS lookup cannot block.

``transformers`` is an optional dependency, imported only when a model is actually loaded.
"""
from __future__ import annotations

import importlib.util
import os
import socket
import threading
from urllib.parse import urlparse

import torch

from .i18n import tr

OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
MAX_TIMEOUT_S = 3.0


def offline_by_env() -> bool:
    """True when ``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` asks for no network at all."""
    return any(os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on") for v in OFFLINE_VARS)


def hub_available(timeout: float = 2.0) -> bool:
    """Whether the hub (``HF_ENDPOINT``, default huggingface.co) accepts a connection within ``timeout`` s.

    Returns False at once when the environment says offline. ``timeout`` is capped at 3 s and
    bounds the whole check, DNS lookup included.
    """
    if offline_by_env():
        return False
    timeout = max(0.0, min(float(timeout), MAX_TIMEOUT_S))
    url = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    host, port = url.hostname, url.port or (443 if url.scheme == "https" else 80)
    answered: list[bool] = []

    def probe() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                answered.append(True)
        except OSError:  # no route, refused, DNS failure, timeout
            answered.append(False)

    thread = threading.Thread(target=probe, daemon=True)  # daemon: a stuck lookup never blocks exit
    thread.start()
    thread.join(timeout)
    return bool(answered and answered[0])


def in_local_cache(name: str) -> bool:
    """True if ``name`` is a local folder or a hub repo whose config is in the local cache."""
    if os.path.isdir(name):
        return True
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    try:
        return isinstance(try_to_load_from_cache(name, "config.json"), str)
    except Exception:  # an invalid repo id raises a validation error: then it is not cached either
        return False


def _dtype_kwarg(dtype: torch.dtype) -> dict:
    import transformers

    major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    return {"dtype": dtype} if (major, minor) >= (4, 56) else {"torch_dtype": dtype}


def load_pretrained(name: str, *, timeout: float = 2.0, dtype: torch.dtype = torch.float32):
    """``(hf_model, tokenizer, None)``, or ``(None, None, reason)`` when it cannot be loaded.

    ``name`` is a hub repo id (e.g. ``"HuggingFaceTB/SmolLM2-135M"``) or a local folder. Tries the
    local cache first, then the hub if ``hub_available(timeout)``. Never raises for a missing
    network or package; ``tokenizer`` is None if the model has none.
    """
    if importlib.util.find_spec("transformers") is None:
        return None, None, tr("transformers is not installed (pip install transformers)")
    local = in_local_cache(name)
    if not local:
        if offline_by_env():
            return None, None, tr("HF_HUB_OFFLINE is set and {name} is not in the local cache", name=name)
        if not hub_available(timeout):
            return None, None, tr("no network: the Hugging Face hub is not reachable (checked for at most {s:g} s)",
                                  s=min(timeout, MAX_TIMEOUT_S))
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        model = AutoModelForCausalLM.from_pretrained(name, local_files_only=local, **_dtype_kwarg(dtype))
    except Exception as err:  # OSError for a missing file, network errors of several libraries, ...
        detail = str(err).splitlines()[0] if str(err) else ""
        return None, None, tr("could not load {name}: {error}", name=name, error=f"{type(err).__name__}: {detail}")
    try:
        tokenizer = AutoTokenizer.from_pretrained(name, local_files_only=local)
    except Exception:  # a bare checkpoint folder may have no tokenizer files
        tokenizer = None
    return model.eval(), tokenizer, None


@torch.inference_mode()
def max_logit_diff(hf_model, ours, ids: torch.Tensor) -> float:
    """max |logits_hf - logits_ours| over ``ids`` ``[B, T]`` (one forward pass each, no cache)."""
    hf_logits = hf_model(ids).logits.float()  # (B, T, V)
    return float((hf_logits - ours(ids).float()).abs().max())
