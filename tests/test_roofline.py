"""utils/roofline.py: arithmetic intensity of decode and prefill, and the ridge point; and the timers that
measure a machine's roofs and decode at long contexts (utils/perf/timers.py), held against that arithmetic."""
import pytest

from utils.config import ModelConfig
from utils.perf import Stats, decode_time_vs_context, fit_step_time, measure_machine
from utils.roofline import GPU_ROOFS, Roofs, decode_point, kv_weights_crossover, prefill_point, ridge_batch, step_time
from utils.sizing import MODEL_PRESETS, kv_bytes_per_token

LLAMA3 = MODEL_PRESETS["Llama-3-8B"]


def test_decode_intensity_is_about_the_batch_size_for_short_contexts():
    """Each weight (2 bytes in fp16) serves 2 FLOPs per row: about B FLOPs per byte."""
    for B in (1, 8, 64):
        p = decode_point(LLAMA3, B, 1)
        assert 0.9 * B <= p["intensity"] <= 1.05 * B


def test_the_kv_read_caps_the_intensity_of_long_contexts():
    short, long_ = decode_point(LLAMA3, 64, 16), decode_point(LLAMA3, 64, 8192)
    assert long_["intensity"] < short["intensity"] / 3
    assert long_["kv_bytes"] > long_["weight_bytes"]


def test_prefill_is_compute_bound_where_decode_is_not():
    h100 = next(r for r in GPU_ROOFS if "H100" in r.name)
    assert prefill_point(LLAMA3, 2048)["intensity"] > h100.ridge > decode_point(LLAMA3, 1, 1024)["intensity"]


def test_ridge_batch_and_step_time():
    roofs = Roofs("toy", peak_flops=100.0, bandwidth=10.0)  # ridge 10 FLOPs per byte
    assert roofs.ridge == 10.0
    assert step_time(50, 10, roofs) == 1.0 and step_time(200, 10, roofs) == 2.0
    cfg = ModelConfig(vocab_size=64, n_layers=2, n_heads=4, n_kv_heads=2, d_model=64, d_ff=128, max_seq_len=64)
    B = ridge_batch(cfg, 1, roofs, dtype="float16")
    assert decode_point(cfg, B, 1, "float16")["intensity"] >= 10 > decode_point(cfg, B - 1, 1, "float16")["intensity"]
    assert ridge_batch(LLAMA3, 8192, GPU_ROOFS[0], max_batch=256) is None  # the K/V read never lets it reach the ridge


def test_measure_machine_gives_positive_roofs():
    m = measure_machine(matmul_n=128, n_bytes=2**21, repeats=1)
    assert m.peak_flops > 0 and m.bandwidth > 0 and m.ridge > 0
    with pytest.raises(ValueError, match="n_bytes"):
        measure_machine(n_bytes=10)


def test_kv_weights_crossover_is_where_the_kv_read_reaches_the_weights():
    for B in (1, 32):
        T = kv_weights_crossover(LLAMA3, B, "bfloat16")
        at, before = decode_point(LLAMA3, B, T, "bfloat16"), decode_point(LLAMA3, B, T - 1, "bfloat16")
        assert at["kv_bytes"] >= at["weight_bytes"] > before["kv_bytes"]
    assert kv_weights_crossover(LLAMA3, 1, "bfloat16") > LLAMA3.max_seq_len >= kv_weights_crossover(LLAMA3, 32, "bfloat16")
    # in float32 both sides double: the crossover does not move
    small = ModelConfig(vocab_size=64, n_layers=2, n_heads=8, n_kv_heads=8, d_model=64, d_ff=128, max_seq_len=64)
    assert kv_weights_crossover(small, 1, "float32") == kv_weights_crossover(small, 1, "float16")
    assert kv_bytes_per_token(small, "float32") * kv_weights_crossover(small, 1, "float32") >= \
        decode_point(small, 1, 0, "float32")["weight_bytes"]


def test_decode_time_vs_context_fills_long_caches_without_a_prefill():
    import torch

    from utils.model import Decoder

    cfg = ModelConfig(vocab_size=64, n_layers=2, n_heads=4, n_kv_heads=4, d_model=32, d_ff=64, max_seq_len=600)
    torch.manual_seed(0)
    model = Decoder(cfg).eval()
    out = decode_time_vs_context(model, [64, 512], repeats=2, steps_per_sample=2, warmup=0, chunk=100)
    assert out["T"] == [64, 512]
    assert [len(s.samples) for s in out["step"]] == [2, 2] and all(s.median > 0 for s in out["step"])
    with pytest.raises(ValueError, match="max_seq_len"):
        decode_time_vs_context(model, [600])  # T + 1 positions do not fit
    with pytest.raises(ValueError, match="repeats"):
        decode_time_vs_context(model, [64], repeats=0)


def test_fit_step_time_recovers_a_straight_line():
    measured = {"T": [0, 1000, 2000, 4000], "step": [Stats([0.004 + 5e-7 * T] * 3) for T in (0, 1000, 2000, 4000)]}
    fixed, per_token = fit_step_time(measured)
    assert fixed == pytest.approx(0.004) and per_token == pytest.approx(5e-7)


def test_fit_step_time_through_the_fastest_samples_ignores_slow_ones():
    """Notebook 03 fits through each T's fastest sample, as its rates do: a fit through the medians put
    the fixed part above the whole fastest step at the shortest T."""
    Ts = (0, 1000, 2000, 4000)
    measured = {"T": list(Ts), "step": [Stats([0.004 + 5e-7 * T, 0.02, 0.03]) for T in Ts]}  # two slowed samples
    fixed, per_token = fit_step_time(measured, through="fastest")
    assert fixed == pytest.approx(0.004) and per_token == pytest.approx(5e-7)
    assert fit_step_time(measured)[0] == pytest.approx(0.02)  # the medians are the slowed samples
    with pytest.raises(ValueError, match="through"):
        fit_step_time(measured, through="mean")


def test_the_roofline_figure_has_one_legend_and_labels_each_ridge_where_it_stands():
    """Each panel's ridge batch is written beside its own line (panels differ in T, so in B); the curves,
    alike in every panel, are named once, under the panels: the figure's legend was too dense."""
    from utils.plots import plot_batch_roofline

    Bs = [1, 2, 4, 8, 16]
    panel = dict(B=Bs, memory_tps=[70.0 * B for B in Bs], compute_tps=[400.0] * len(Bs), measured_B=[1, 4],
                 measured_tps=[20.0, 60.0])
    fig = plot_batch_roofline({"T = 6": dict(panel, ridge=5), "T = 256": dict(panel, ridge=7, kernel_ridge=18)})
    assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in fig.axes)
    assert [t.get_text() for t in fig.legends[0].get_texts()][-1] == "measured: B / TPOT"
    texts = [[t.get_text() for t in ax.texts] for ax in fig.axes]
    assert texts == [["ridge B = 5"], ["ridge B = 7", "decode step's own bandwidth: B = 18"]]
    low = fig.axes[0].get_ylim()[0]
    assert low in (1, 2, 5, 10) and low <= 20.0  # the axis starts at a labelled value under the lowest point


def test_fit_batch_line_leaves_the_smallest_batches_out():
    """Regression (notebook 06): the line through B >= 4 must not be pulled by off-line B = 1 and 2 points."""
    from utils.roofline import fit_batch_line

    B = [1, 2, 4, 8, 16, 32]
    tpot = [50.0, 90.0] + [10.0 + 0.5 * b for b in B[2:]]  # B = 1 and 2 far off the line
    fixed, per_row = fit_batch_line(B, tpot)
    assert fixed == pytest.approx(10.0) and per_row == pytest.approx(0.5)
    with pytest.raises(ValueError):
        fit_batch_line([1, 2, 4], [1.0, 2.0, 3.0])


def test_last_level_cache_bytes_reads_the_largest_sysfs_cache(tmp_path):
    """The largest index*/size wins, with its K/M suffix; no sysfs -> None (the notebook then says unknown)."""
    from utils.roofline import last_level_cache_bytes

    for i, size in enumerate(("48K", "2048K", "32M")):
        (tmp_path / f"index{i}").mkdir()
        (tmp_path / f"index{i}" / "size").write_text(size + "\n")
    assert last_level_cache_bytes(str(tmp_path)) == 32 * 2**20
    assert last_level_cache_bytes(str(tmp_path / "missing")) is None
