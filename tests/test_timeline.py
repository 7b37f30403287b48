"""utils/timeline.py: a generation's steps laid end to end, and their median over runs."""
import pytest
import torch

from utils import generate, prefill
from utils.timeline import count_tensor_ops, fastest_timeline, median_timeline, tensor_ops, timeline


def test_timeline_lays_the_steps_end_to_end(model_tok):
    model, tok = model_tok
    r = generate(model, tok.encode("<BOS> 我 喜欢"), 5)
    segs = timeline(r)
    assert [s.phase for s in segs] == ["prefill"] + ["decode"] * (len(segs) - 1)
    assert len(segs) == r.lengths[0] == 5
    assert segs[0].start_s == 0.0
    assert all(abs(a.end_s - b.start_s) < 1e-12 for a, b in zip(segs, segs[1:]))
    assert abs(segs[-1].end_s - r.total_s) < 1e-9
    assert [s.token for s in segs] == r.tokens[0].tolist()


def test_median_timeline_takes_each_step_median(model_tok):
    model, tok = model_tok
    runs = [generate(model, tok.encode("<BOS> 我 喜欢"), 4) for _ in range(3)]
    segs = median_timeline(runs)
    assert len(segs) == 4 and segs[0].phase == "prefill"
    for i, s in enumerate(segs):
        assert s.duration_s == sorted(timeline(r)[i].duration_s for r in runs)[1]
    assert all(abs(a.end_s - b.start_s) < 1e-12 for a, b in zip(segs, segs[1:]))
    with pytest.raises(ValueError):
        median_timeline([runs[0], generate(model, tok.encode("<BOS> 我 喜欢"), 2)])
    with pytest.raises(ValueError):
        median_timeline([])


def test_fastest_timeline_takes_each_step_minimum_as_its_name_says(model_tok):
    # it once was median_timeline(runs, stat="min"): a "median" that returned minimums
    model, tok = model_tok
    runs = [generate(model, tok.encode("<BOS> 我 喜欢"), 4) for _ in range(3)]
    fastest = fastest_timeline(runs)
    assert [s.duration_s for s in fastest] == [min(timeline(r)[i].duration_s for r in runs) for i in range(4)]
    assert [s.token for s in fastest] == runs[0].tokens[0].tolist()
    assert all(abs(a.end_s - b.start_s) < 1e-12 for a, b in zip(fastest, fastest[1:]))
    assert sum(s.duration_s for s in fastest) <= sum(s.duration_s for s in median_timeline(runs))
    with pytest.raises(TypeError):
        median_timeline(runs, stat="min")  # the old spelling is gone, not silently a median
    with pytest.raises(ValueError):
        fastest_timeline([runs[0], generate(model, tok.encode("<BOS> 我 喜欢"), 2)])


def test_count_tensor_ops_counts_what_a_pass_dispatches_whatever_its_length(model_tok):
    # a pass makes the same top-level calls for 3 tokens as for 30
    model, tok = model_tok
    ids = torch.randint(3, model.cfg.vocab_size, (1, 30), generator=torch.Generator().manual_seed(0))  # (B, T)
    ids_3 = ids[:, :3].clone()  # sliced here: a slice inside the counted call would be one more operation
    n3, n30 = count_tensor_ops(lambda: prefill(model, ids_3)), count_tensor_ops(lambda: prefill(model, ids))
    assert n3 == n30 > 20 * model.cfg.n_layers  # dozens of operations per block, the same for any T
    a, b = torch.ones(3), torch.ones(3)
    assert count_tensor_ops(lambda: a + b) == 1
    assert count_tensor_ops(lambda: None) == 0
    x, w = torch.ones(2, 4), torch.ones(3, 4)
    with torch.inference_mode():  # the dispatch mode sees the top-level op, not the kernels inside it
        assert tensor_ops(lambda: torch.nn.functional.linear(x, w)) == ["linear"]


def test_tensor_ops_names_each_dispatched_operation_in_order():
    import torch

    a, b = torch.ones(2), torch.ones(2)
    assert tensor_ops(lambda: (a + b) * a) == ["add", "mul"]
