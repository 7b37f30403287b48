"""Notebook 04's exercises (cache bytes from a config.json, requests that fit): their cases, on published models'
config.json shapes, and the guard that names an optional field read as if it were always there. The judges,
which name the factor behind a wrong count, are in ``sizing_judges.py`` (re-exported here).
"""
from __future__ import annotations

import inspect
import traceback

from ..i18n import tr
from ..sizing import MODEL_PRESETS
from .judges import Case, call_with, diagnosis
from .sizing_judges import Judge, bytes_judge, request_mistakes, requests_judge

__all__ = ["GEMMA2_9B", "LLAMA2_7B", "LLAMA3_8B", "OPTIONAL_FIELDS", "REQUEST_CASES", "bytes_judge", "kv_bytes_cases",
           "max_requests_cases", "request_mistakes", "requests_judge"]


# --- the cases ---------------------------------------------------------------------------------------

LLAMA3_8B = {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096}
# Llama-2-7B's shape in a config that omits num_key_value_heads, as older ones (LLaMA-1's) do: MHA. (The
# published Llama-2-7b-hf config.json states num_key_value_heads = 32, the same thing said outright.)
LLAMA2_7B = {"num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 4096}
GEMMA2_9B = {"num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8, "hidden_size": 3584,
             "head_dim": 256}  # d_h = 256, not 3584 / 16 = 224
OPTIONAL_FIELDS = ("head_dim", "num_key_value_heads")  # a config.json may leave these out


class _MissingField:
    """What a case returns when the learner's code read an optional field (``config["head_dim"]``) that its
    config leaves out: the judge turns it into a hint, where the KeyError alone would get the case's hint."""

    def __init__(self, name: str) -> None:
        self.name = name


class _Unsolved(_MissingField):
    """What a case returns when the learner's function called another (``kv_bytes_from_config``, the exercise
    before) that still raises NotImplementedError: "not written yet" would blame the function being checked."""


def _config_case(words: str, config: dict, args: tuple, judge: Judge, hint: str = "") -> Case:
    """A case on ``config`` whose KeyError on an optional field is named, with how to read that field."""
    run = call_with(config, *args)

    def guarded_run(fn):
        try:
            return run(fn)
        except KeyError as err:
            if err.args and err.args[0] in OPTIONAL_FIELDS and err.args[0] not in config:
                return _MissingField(err.args[0])
            raise
        except NotImplementedError as err:
            raiser = traceback.extract_tb(err.__traceback__)[-1].name  # the function whose `raise` it reached
            if raiser.startswith("<") or raiser == getattr(inspect.unwrap(fn), "__name__", raiser):
                raise  # the checked function's own stub (or a lambda's): "not written yet"
            return _Unsolved(raiser)

    def guarded_judge(got):
        if isinstance(got, _Unsolved):
            return diagnosis(tr("your function calls {name}, which still raises NotImplementedError", name=got.name),
                             tr("solve the exercise of {name} first (or compute the bytes inside your function), then "
                                "run this cell again", name=got.name))
        if not isinstance(got, _MissingField):
            return judge(got)
        return diagnosis(tr("your function raised KeyError: {name!r}; this config.json has no {name} (the field is "
                            "optional)", name=got.name),
                         tr("head_dim is optional in a config.json: read it with config.get(\"head_dim\"), and when it "
                            "is missing, d_h = hidden_size // num_attention_heads") if got.name == "head_dim" else
                         tr("num_key_value_heads is optional in a config.json: read it with "
                            "config.get(\"num_key_value_heads\"), and when it is missing, the model is MHA: H_kv = "
                            "num_attention_heads"))
    return Case(words, guarded_run, guarded_judge, hint)


def kv_bytes_cases() -> list[Case]:
    # Every case's batch is B != 1 or its dtype is not 2 bytes, and no two mistakes give the same number in the
    # first case (B = 3: one sequence is a third, a lost factor 2 a half), so the diagnosis names the right one.
    def case(words, config, T, B, dtype, hint=""):
        return _config_case(words, config, (T, B, dtype), bytes_judge(config, T, B, dtype), hint)
    return [case("Llama-3-8B (GQA), T=4096, B=3, float16", LLAMA3_8B, 4096, 3, "float16",
                 "2 x L x B x H_kv x T x d_h x bytes: K and V, only the K/V heads"),
            case("Llama-2-7B's shape without num_key_value_heads (MHA), T=2048, B=4, bfloat16", LLAMA2_7B, 2048, 4,
                 "bfloat16", "a config without num_key_value_heads is MHA: H_kv = H"),
            case("Gemma-2-9B: head_dim given, T=8192, B=1, float32", GEMMA2_9B, 8192, 1, "float32",
                 "when head_dim is in the config, use it: it is not always C / H"),
            case("Llama-3-8B, int8 cache, T=1000, B=4", LLAMA3_8B, 1000, 4, "int8")]


# (words, config, seq_len, free_bytes, dtype, the model whose weights a learner might subtract): the bytes are
# chosen so that no two mistakes give the same count (tests/test_sizing_judges.py)
REQUEST_CASES = [
    ("Llama-3-8B, T=8192, 37.5 GiB free, float16", LLAMA3_8B, 8192, 37 * 2**30 + 512 * 2**20, "float16", "Llama-3-8B"),
    ("Gemma-2-9B, T=4096, 24 GiB free, bfloat16", GEMMA2_9B, 4096, 24 * 2**30, "bfloat16", "Gemma-2-9B"),
    ("Llama-3-8B, T=4096, 6 GiB free, int8 cache", LLAMA3_8B, 4096, 6 * 2**30, "int8", "Llama-3-8B"),
    ("Llama-2-7B, T=4096, 1 MiB free: less than one request", LLAMA2_7B, 4096, 2**20, "float16", "Llama-2-7B"),
]


def max_requests_cases() -> list[Case]:
    return [_config_case(words, config, (T, free, dtype),
                         requests_judge(config, T, free, dtype, MODEL_PRESETS[model].n_params))
            for words, config, T, free, dtype, model in REQUEST_CASES]
