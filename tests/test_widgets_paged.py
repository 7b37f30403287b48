"""Panel of 10 (paged KV blocks and prefix caching): every control position computes without error, and
the block map's numbers are the pool's own (holders = ref counts, every block in one state, blocks reused)."""
import math

import matplotlib
import pytest

matplotlib.use("Agg")

from utils import load_course_model  # noqa: E402
from utils.block_pool import block_keys  # noqa: E402
from utils.widgets import BLOCK_SIZES, POOL_SIZES, BlockMapPanel  # noqa: E402
from utils.widgets.paged import SCRIPTS, SYSTEM_PROMPTS, block_counts, block_map_workload, replay_block_map  # noqa: E402

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)


@pytest.fixture(scope="module")
def course():
    return load_course_model()


@pytest.fixture(scope="module")
def panel(course):
    model, tok = course
    return BlockMapPanel(model, tok)


def _ok(panel):
    assert "error" not in panel.state, panel.state.get("error")
    assert panel.html.value


def test_every_control_position_computes(panel):
    top = panel.controls["step"].max
    for size in BLOCK_SIZES:
        for n in POOL_SIZES:
            panel.controls["block_size"].value = size
            panel.controls["n_blocks"].value = n
            for step in (0, 1, top // 2, top):
                panel.controls["step"].value = step
                _ok(panel)
                s = panel.state
                assert s["used"] + s["cached"] + s["free"] == n and s["shared"] <= s["used"]
                assert 0.0 <= s["hit_rate"] <= 1.0 and 0 <= s["step"] <= s["n_steps"]
                assert panel.fig is not None
                assert ("the run ended at step" in panel.html.value) is (step > s["n_steps"])
    panel.controls["block_size"].value, panel.controls["n_blocks"].value = 4, 24


def test_the_slider_reaches_the_longest_run_and_every_run_finishes(panel):
    lengths = [len(frames) - 1 for frames, _ in panel.runs.values()]
    assert panel.controls["step"].max == max(lengths)
    for frames, _ in panel.runs.values():
        assert all(not owners for owners in frames[-1]["owners"])  # every block given back
        assert sorted(rid for f in frames for rid in f["finished"]) == list(range(len(SCRIPTS["en"])))


@pytest.mark.parametrize("size", BLOCK_SIZES)
@pytest.mark.parametrize("n", POOL_SIZES)
def test_every_frame_agrees_with_the_pool(panel, size, n):
    frames, counts = panel.runs[size, n]
    assert counts == block_counts(frames, n)
    for f in frames:
        assert [len(o) for o in f["owners"]] == f["ref"]  # holders of each block == its ref count
        held = {b for o in f["tables"].values() for b in o}
        assert held == {b for b, o in enumerate(f["owners"]) if o}
        assert not held & f["cached"]  # a cached free block has no holder
        assert f["cached"] <= f["keyed"]  # and it is findable
        for rid, table in f["tables"].items():  # a request holds the blocks its tokens need, no more
            assert len(table) == math.ceil(f["held"][rid] / size)
        assert f["hit_tokens"] <= f["prompt_tokens"]


def test_the_default_run_reuses_freed_blocks_and_finds_the_cached_prefix(panel, course):
    frames, _ = panel.runs[4, 24]
    joined = {rid: (i, hit) for i, f in enumerate(frames) for rid, hit, _ in f["joined"]}
    assert [joined[rid][1] for rid in range(len(SCRIPTS["en"]))] == [0, 16, 0, 20, 20, 0, 20, 20, 20, 0]
    assert any(f["reused"] for f in frames)  # blocks given back by one request, written by another
    step7 = joined[7][0]  # the second wave: every earlier request has finished
    assert all(not o for o in frames[step7 - 1]["owners"])
    assert frames[step7]["found"] == [0, 1, 2, 3, 4]  # the system prompt, found again in the cached free list
    _, tok = course
    system = tok.encode("<BOS> 他 很 喜欢 猫 。 她 很 喜欢 狗 。 我 很 喜欢 鱼 。 你 喜欢 鸟 。")
    assert len(block_keys(system, 4)) * 4 == 20
    panel.controls["step"].value = step7
    assert "r7 (prefix hit: 20 of 23 prompt tokens)" in panel.html.value
    assert "Requests waiting: 0; still to arrive: 2" in panel.html.value


def test_small_pools_preempt_and_large_blocks_share_less(panel):
    assert sum(len(f["preempted"]) for f in panel.runs[4, 12][0]) > 0
    assert all(not f["preempted"] for f in panel.runs[4, 48][0])
    hits = {size: sum(h for f in panel.runs[size, 48][0] for _, h, _ in f["joined"]) for size in BLOCK_SIZES}
    assert hits[4] > hits[8] == hits[16]  # a 20-token system prompt: 5 blocks of 4, but one block of 16
    resumed = [rid for f in panel.runs[4, 12][0] for rid in f["resumed"]]
    assert resumed  # a preempted request comes back


def test_a_pool_too_small_for_the_script_is_said_not_raised(course):
    model, _ = course
    workload = {"prompts": [[1] * 30, [1, 5, 10]], "max_new_tokens": [30, 4], "arrival_s": [0.0, 0.001]}
    small = BlockMapPanel(model.cfg, workload=workload, block_size=4, n_blocks=12)
    assert "error" not in small.state and "problem" in small.state and small.fig is None
    assert "needs up to 15 blocks of 4 tokens" in small.html.value
    small.controls["n_blocks"].value = 16
    assert "problem" not in small.state and small.fig is not None
    with pytest.raises(ValueError, match="tokenizer"):
        BlockMapPanel(model)


def test_the_replay_is_deterministic_and_needs_no_model(course):
    model, tok = course
    w = block_map_workload(tok)
    a, b = replay_block_map(model.cfg, w, 8, 16), replay_block_map(model.cfg, w, 8, 16)
    assert [f["owners"] for f in a] == [f["owners"] for f in b]
    assert [f["time_ms"] for f in a] == [f["time_ms"] for f in b]


def test_the_block_map_script_speaks_the_notebook_language_with_the_same_token_counts(course):
    # The notebook's section 6 system prompt is English in English and Chinese in Chinese: the replay's
    # requests must start with that same prompt, or the notebook would count 0 requests after it.
    from utils.i18n import set_language
    _, tok = course
    en = block_map_workload(tok)
    set_language("zh")
    try:
        zh = block_map_workload(tok)
    finally:
        set_language("en")
    assert [len(p) for p in en["prompts"]] == [len(p) for p in zh["prompts"]]
    assert en["prompts"][0][:20] == tok.encode(SYSTEM_PROMPTS["en"]) and zh["prompts"][0][:20] == tok.encode(SYSTEM_PROMPTS["zh"])


def test_a_preempting_step_marks_the_blocks_the_victim_held_alone_and_says_so_in_the_title(panel):
    import matplotlib.pyplot as plt

    from utils.plots import plot_block_map

    frames = panel.runs[4, 16][0]
    i = next(i for i, f in enumerate(frames) if f["preempted"])
    before, f = frames[i - 1], frames[i]
    victim = f["preempted"][0]
    assert victim == list(before["tables"])[-1]  # the request admitted last
    alone = [b for b in before["tables"][victim] if before["owners"][b] == (victim,)]
    assert f["evicted"] and [b for b, _ in f["evicted"]] == alone and all(r == victim for _, r in f["evicted"])
    assert all(victim not in o for o in f["owners"])
    fig = plot_block_map(panel.compute(step=i, block_size=4, n_blocks=16))
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert sum(f"was r{victim}" in t for t in texts) == len(alone)
    assert f"preempted: r{victim}" in fig.axes[0].get_title(loc="left")
    plt.close(fig)
    assert all(not g["evicted"] for g in frames if not g["preempted"])
