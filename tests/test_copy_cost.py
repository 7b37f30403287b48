"""utils/copy_cost.py: the allocations of one decode step's cache writes, counted by torch.profiler."""
import pytest

from utils import MODEL_PRESETS
from utils.copy_cost import cache_write_cost
from utils.sizing import cache_bytes_for


def test_dynamic_step_allocates_the_whole_cache_again_and_frees_the_old_one():
    cfg = MODEL_PRESETS["Llama-2-7B"]
    d = cache_write_cost(cfg, 8, "dynamic", repeats=1)
    assert d.allocations == 2 * cfg.n_layers
    assert d.allocated == cache_bytes_for(cfg, 1, 9, "float16") and d.freed == d.held


def test_static_step_allocates_nothing():
    s = cache_write_cost(MODEL_PRESETS["Llama-2-7B"], 8, "static", repeats=1)
    assert s.allocations == 0 == s.allocated


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        cache_write_cost("Llama-2-7B", 8, "dynamic")
    with pytest.raises(ValueError):
        cache_write_cost(MODEL_PRESETS["Llama-2-7B"], 8, "paged")
