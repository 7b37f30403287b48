"""Notebook 02's widget (PrefillKVPanel) and the timing helpers of notebooks 00/02, no browser."""
import random

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

from utils import generate, prefill  # noqa: E402
from utils.perf import time_interleaved, torch_threads, ttft_vs_prompt_length  # noqa: E402
from utils.timeline import median_timeline, timeline  # noqa: E402
from utils.widgets import PREFILL_PROMPTS, PrefillKVPanel  # noqa: E402


@pytest.fixture(scope="module")
def panel(model_tok):
    return PrefillKVPanel(*model_tok)


def _check(state):
    assert "error" not in state, state.get("error")


def test_default_state_matches_a_direct_prefill(panel, model_tok):
    model, tok = model_tok
    s = panel.state
    _check(s)
    ids = torch.tensor([tok.encode(PREFILL_PROMPTS[0])])
    logits, kv = prefill(model, ids)
    cfg = model.cfg
    assert s["shape"] == (1, cfg.n_kv_heads, ids.shape[1], cfg.head_dim)  # [B, H_kv, T, d_h]
    assert s["T"] == ids.shape[1] == s["cache_len"] and s["n_layers"] == cfg.n_layers
    assert torch.allclose(torch.from_numpy(s["values"]), kv.k[0][0, 0], atol=1e-6)
    assert s["first_token"] == tok.decode([int(logits[0].argmax())])
    assert s["rel_diff_to_layer0"] == 0.0
    assert panel.html.value and panel.fig is not None


def test_each_control_changes_what_is_shown(panel, model_tok):
    model, tok = model_tok
    c = panel.controls
    c["prompt"].value = PREFILL_PROMPTS[1]
    c["layer"].value = 2
    c["head"].value = 1
    c["tensor"].value = "V"
    s = panel.state
    _check(s)
    ids = torch.tensor([tok.encode(PREFILL_PROMPTS[1])])
    _, kv = prefill(model, ids)
    assert s["words"] == tok.tokens(ids[0])
    assert torch.allclose(torch.from_numpy(s["values"]), kv.v[2][0, 1], atol=1e-6)
    ref = (kv.v[2][0, 1] - kv.v[0][0, 1]).norm() / kv.v[0][0, 1].norm()
    assert abs(s["rel_diff_to_layer0"] - float(ref)) < 1e-5
    assert s["rel_diff_to_layer0"] > 0.1  # every layer keeps its own, different V
    assert "layer 2" in panel.html.value


def test_ranges_come_from_the_model(panel, model_tok):
    cfg = model_tok[0].cfg
    c = panel.controls
    assert (c["layer"].min, c["layer"].max) == (0, cfg.n_layers - 1)
    assert (c["head"].min, c["head"].max) == (0, cfg.n_kv_heads - 1)
    assert list(c["prompt"].options) == list(PREFILL_PROMPTS)


def test_sweep_every_control_and_random_combinations(panel):
    c = panel.controls
    for name in ("layer", "head"):
        for v in range(c[name].min, c[name].max + 1):
            c[name].value = v
            _check(panel.state)
            assert panel.html.value
    for name in ("prompt", "tensor"):
        for v in c[name].options:
            c[name].value = v
            _check(panel.state)
            assert panel.html.value
    rng = random.Random(0)
    for _ in range(100):
        values = {
            "prompt": rng.choice(list(c["prompt"].options)),
            "layer": rng.randint(c["layer"].min, c["layer"].max),
            "head": rng.randint(c["head"].min, c["head"].max),
            "tensor": rng.choice(list(c["tensor"].options)),
        }
        # compute/render directly (the figure is drawn in the sweep above): same code path, faster
        state = panel.compute(**values)
        _check(state)
        assert panel.render(state)
        assert (state["rel_diff_to_layer0"] == 0.0) == (values["layer"] == 0)


# --- utils.perf, utils.timeline ----------------------------------------------------------------
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
    fastest = median_timeline(runs, stat="min")
    assert [s.duration_s for s in fastest] == [min(timeline(r)[i].duration_s for r in runs) for i in range(4)]
    with pytest.raises(ValueError):
        median_timeline([runs[0], generate(model, tok.encode("<BOS> 我 喜欢"), 2)])
    with pytest.raises(ValueError):
        median_timeline(runs, stat="mean")
