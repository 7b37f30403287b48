"""utils/split_matvec.py: a batch-1 product cut into row blocks (one per core) must give F.linear's
bits, or not be used at all; the blocks are views of the weight, so in-place edits are seen."""
import pytest
import torch
import torch.nn.functional as F

from utils import split_matvec
from utils.split_matvec import matvec, rows_split


def _weight(C_out, C_in, layout, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(C_out, C_in, generator=g).to(dtype)  # (C_out, C_in), row-major: "out_in"
    return w if layout == "out_in" else w.t().contiguous().t()  # "in_out": the transpose is row-major


@pytest.mark.parametrize("layout", ["out_in", "in_out"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("shape,k", [((96, 64), 2), ((96, 64), 3), ((256, 48), 4), ((64, 200), 2)])
def test_row_blocks_give_f_linear_bits_or_are_not_used(shape, k, dtype, layout):
    w = _weight(*shape, layout, dtype)
    x = torch.randn(1, shape[1]).to(dtype)  # (1, C_in)
    blocks = rows_split(w, k, min_bytes=0)
    if blocks is not None:
        assert blocks.shape == (k, shape[1], shape[0] // k) and blocks.data_ptr() == w.data_ptr()
    assert torch.equal(matvec(x, w, blocks), F.linear(x, w))


def test_the_course_build_splits_the_benchmark_shapes():
    # On the build the course pins, the kernels agree, so the split is really used (else the bench
    # would measure nothing new); another build may fall back, which the test above allows.
    for shape in [(768, 768), (256, 768), (2048, 768), (768, 2048), (16000, 768)]:
        for layout in ("out_in", "in_out"):
            assert rows_split(_weight(*shape, layout), 2, min_bytes=0) is not None, (shape, layout)


def test_blocks_are_views_so_in_place_edits_are_seen():
    w = _weight(64, 32, "in_out")
    blocks = rows_split(w, 2, min_bytes=0)
    x = torch.randn(1, 32)
    with torch.no_grad():
        w.mul_(2)
    assert torch.equal(matvec(x, w, blocks), F.linear(x, w))


def test_no_split_with_one_thread_an_uneven_cut_or_several_rows():
    w = _weight(66, 32, "out_in")
    assert rows_split(w, 1, min_bytes=0) is None and rows_split(w, 4, min_bytes=0) is None  # 66 rows: not 4 blocks
    blocks = rows_split(w, 2, min_bytes=0)
    x = torch.randn(3, 32)  # (B, C_in): a matrix-matrix product, left to F.linear
    assert torch.equal(matvec(x, w, blocks), F.linear(x, w))


def test_a_kernel_that_changes_the_bits_is_refused(monkeypatch):
    monkeypatch.setattr(split_matvec, "_agrees", {})
    real = split_matvec._split_matvec
    monkeypatch.setattr(split_matvec, "_split_matvec", lambda x, b: real(x, b) * (1 + 2**-20))
    assert rows_split(_weight(64, 32, "in_out"), 2, min_bytes=0) is None


def test_a_matrix_the_caches_hold_stays_whole():
    small = _weight(256, 256, "in_out")  # 256 KiB
    assert rows_split(small, 2) is None and rows_split(small, 2, min_bytes=0) is not None
    assert rows_split(_weight(1024, 512, "in_out"), 2) is not None  # 2 MiB: streamed from memory
