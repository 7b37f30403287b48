"""utils/perf.py: the timing loop, the TTFT and TPOT curves, the thread setting."""
import pytest
import torch

from utils import Decoder
from utils.course_model import COURSE_CONFIG
from utils.perf import time_interleaved, torch_threads, tpot_vs_context, ttft_vs_prompt_length


def test_time_helpers_return_one_positive_median_per_length(model_tok):
    model = model_tok[0]
    Ts = [4, 16]
    with torch_threads(1):
        ttft = ttft_vs_prompt_length(model, Ts, 2, no_cache=False)
    times = [s.median for s in ttft["cached"]]
    assert ttft["T"] == Ts and ttft["no_cache"] is None
    assert len(times) == len(Ts) and all(t > 0 for t in times)
    assert time_interleaved({"f": lambda: None}, repeats=3)["f"].median >= 0
    calls = []
    fns = {"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}
    assert len(time_interleaved(fns, repeats=2, warmup=0)) == 2
    assert calls == ["a", "b", "a", "b"]  # interleaved: one round of every function, then the next
    with pytest.raises(ValueError):
        ttft_vs_prompt_length(model, [model.cfg.max_seq_len + 1])
    with pytest.raises(ValueError):
        time_interleaved({"f": lambda: None}, repeats=0)


def test_torch_threads_restores_the_setting():
    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_tpot_vs_context_shape():
    torch.manual_seed(0)
    model = Decoder(COURSE_CONFIG).eval()
    t = tpot_vs_context(model, [4, 16, 64], repeats=2, cache_kind="dynamic", no_cache_max=16)
    assert t["T"] == [4, 16, 64] and len(t["cached"]) == 3
    assert t["no_cache"][2] is None and all(s.median > 0 for s in t["cached"] + t["no_cache"][:2])
    with pytest.raises(ValueError):
        tpot_vs_context(model, [COURSE_CONFIG.max_seq_len], repeats=1)


def test_the_bandwidth_figure_calls_the_read_only_measurement_a_sum():
    """The text measures the bandwidth with a copy and a sum: the bar says "sum" too (it said "reduce")."""
    from utils.perf import Stats
    from utils.plots import plot_bandwidth

    res = {"copy_Bps": Stats([7e9, 8e9]), "read_Bps": Stats([1e10, 1.1e10]), "achieved_Bps": Stats([3e9, 3.5e9]),
           "limit_Bps": 1.05e10, "fraction": 0.31}
    labels = [t.get_text() for t in plot_bandwidth(res).axes[0].get_xticklabels()]
    assert labels == ["copy\n(read + write)", "sum\n(read only)", "decode step\n(bytes / time)"]


def test_products_vs_rows_times_every_weight_matrix_at_each_batch_size():
    from utils import perf

    model = Decoder(COURSE_CONFIG).eval()
    out = perf.products_vs_rows(model, batch_sizes=(1, 2, 8), repeats=2, warmup=0)
    assert out["B"] == [1, 2, 8] and [len(s.samples) for s in out["s"]] == [2, 2, 2]
    linears = [m.weight for m in model.modules() if isinstance(m, torch.nn.Linear)]
    assert out["weight_bytes"] == sum(w.numel() * w.element_size() for w in linears)
    with pytest.raises(ValueError, match="batch size"):
        perf.products_vs_rows(model, batch_sizes=(1, 0))


def test_decode_vs_bandwidth_refuses_an_unknown_kernel():
    from utils import perf

    with pytest.raises(ValueError, match="kernel"):
        perf.decode_vs_bandwidth(Decoder(COURSE_CONFIG).eval(), context_len=4, repeats=1, kernels=("fast",),
                                 n_bytes=2**20)
