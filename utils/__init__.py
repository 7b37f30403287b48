"""The course package: a small Llama-style decoder, its KV caches, and the tools around them."""
from .cache import KVCache, StaticKVCache
from .config import ModelConfig
from .course_model import load_course_model
from .generate import GenerationResult, decode_step, decode_stepper, generate, prefill
from .hf import from_hf
from .model import Decoder
from .recompute import RecomputeReport, compare_with_recompute
from .sampling import sample
from .sizing import MODEL_PRESETS, kv_cache_bytes
from .tokenizer import Tokenizer

__all__ = [
    "ModelConfig", "Decoder", "KVCache", "StaticKVCache", "prefill", "decode_step", "decode_stepper", "generate",
    "GenerationResult", "sample", "kv_cache_bytes", "MODEL_PRESETS", "compare_with_recompute",
    "RecomputeReport", "from_hf", "load_course_model", "Tokenizer",
]
