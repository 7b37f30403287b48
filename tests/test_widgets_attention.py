"""Widget of 01_attention_block: the shapes it shows for every T, H, H_kv are the right ones."""
import random

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from utils.plots import plot_head_groups  # noqa: E402
from utils.widgets import AttentionShapesPanel, divisors  # noqa: E402

pytestmark = pytest.mark.colab  # runs in the Colab-like environment too (make test-colab)


def no_plot(panel):
    """The figure only depends on ``state``; skip drawing it in the long sweeps (tested separately)."""
    panel.plot = lambda state: None
    return panel


def check(p: AttentionShapesPanel) -> None:
    T, H, H_kv = p.controls["T"].value, p.controls["H"].value, p.controls["H_kv"].value
    s = p.state
    assert "error" not in s, s.get("error")
    assert H % H_kv == 0 and list(p.controls["H_kv"].options) == divisors(H)
    B, d_h = p.B, p.d_h
    expected = {
        "x": (B, T, H * d_h), "q": (B, H, T, d_h), "k": (B, H_kv, T, d_h), "v": (B, H_kv, T, d_h),
        "k_rep": (B, H, T, d_h), "weights": (B, H, T, T), "out": (B, H, T, d_h), "merged": (B, T, H * d_h),
    }
    assert s["shapes"] == expected
    assert (s["T"], s["H"], s["H_kv"], s["n_kv_heads"], s["n_rep"]) == (T, H, H_kv, H_kv, H // H_kv)
    assert s["kind"] == ("MHA" if H_kv == H else "MQA" if H_kv == 1 else "GQA")
    assert sorted(h for g in s["groups"] for h in g) == list(range(H)) and len(s["groups"]) == H_kv
    assert s["kv_numbers_per_token"] == 2 * H_kv * d_h
    assert s["matches_sdpa"] is True
    html = p.html.value
    for name, shape in expected.items():
        assert f'<code class="shape-{name}">[{", ".join(map(str, shape))}]</code>' in html
    assert f'<span class="kv-heads">{H_kv}</span>' in html


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """The panel's tensors are tiny: on a busy shared CPU, a second intra-op thread only adds waiting."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture
def panel():
    return no_plot(AttentionShapesPanel())


def test_default_state():
    p = AttentionShapesPanel()
    check(p)
    assert p.state["shapes"]["q"] == (1, 4, 6, 8) and p.state["shapes"]["k"] == (1, 2, 6, 8)
    assert p.fig is not None and len(p.fig.axes) >= 3


def test_T_full_range(panel):
    for T in range(panel.controls["T"].min, panel.controls["T"].max + 1):
        panel.controls["T"].value = T
        check(panel)


def test_H_full_range_keeps_H_kv_a_divisor(panel):
    H = panel.controls["H"]
    for value in list(range(H.min, H.max + 1)) + list(range(H.max, H.min - 1, -1)):
        H.value = value
        check(panel)


def test_every_H_kv_of_every_H(panel):
    for H in range(panel.controls["H"].min, panel.controls["H"].max + 1):
        panel.controls["H"].value = H
        for H_kv in divisors(H):
            panel.controls["H_kv"].value = H_kv
            check(panel)


def test_mha_stays_mha_and_mqa_stays_mqa(panel):
    c = panel.controls
    c["H"].value, c["H_kv"].value = 8, 8
    c["H"].value = 12
    assert c["H_kv"].value == 12
    c["H_kv"].value = 1
    c["H"].value = 5
    assert c["H_kv"].value == 1
    c["H"].value, c["H_kv"].value = 12, 6
    c["H"].value = 8  # 6 does not divide 8: the largest divisor below it
    assert c["H_kv"].value == 4
    check(panel)


def test_random_combinations(panel):
    rng = random.Random(0)
    c = panel.controls
    for _ in range(120):
        for name in rng.sample(["T", "H", "H_kv"], 3):
            if name == "H_kv":
                c["H_kv"].value = rng.choice(divisors(c["H"].value))
            else:
                c[name].value = rng.randint(c[name].min, c[name].max)
        check(panel)


def test_plots_at_the_extremes():
    p = AttentionShapesPanel()
    for T, H, H_kv in [(1, 1, 1), (32, 16, 16), (32, 16, 1), (7, 12, 4)]:
        p.controls["T"].value, p.controls["H"].value, p.controls["H_kv"].value = T, H, H_kv
        check(p)
        for ax in p.fig.axes[:3]:
            assert ax.get_title() and ax.get_xlabel()


def test_sixteen_heads_label_every_other_head_so_indices_do_not_run_together():
    """Before, H = 16 printed every index and neighbours ran together ("10111213")."""
    fig, ax = plt.subplots()
    plot_head_groups(ax, H=16, H_kv=16)
    labels = [t.get_text() for t in ax.texts]
    assert labels[:8] == ["0", "2", "4", "6", "8", "10", "12", "14"] and "1" not in labels and "15" not in labels
    plt.close(fig)
    fig, ax = plt.subplots()
    plot_head_groups(ax, H=8, H_kv=2)
    assert [t.get_text() for t in ax.texts] == [str(h) for h in range(8)] + ["0", "1"]
    plt.close(fig)


def test_one_query_head_reads_singular():
    """Before, H = 1 read "1 query heads"."""
    p = no_plot(AttentionShapesPanel())
    p.controls["H"].value = 1
    assert "1 query head(s)" in p.html.value and "1 query heads" not in p.html.value


def test_a_group_of_one_query_head_reads_singular():
    """Before, MHA read "Query heads 0 → K/V head 0": a group of one head gets "Query head 0 → K/V head 0"."""
    from utils.i18n import set_language

    p = no_plot(AttentionShapesPanel())
    p.controls["H"].value, p.controls["H_kv"].value = 4, 4  # MHA: one query head per group
    assert "Query head 0 → K/V head 0" in p.html.value and "query heads 0 →" not in p.html.value.lower()
    p.controls["H_kv"].value = 2  # GQA: two per group
    assert "Query heads 0, 1 → K/V head 0" in p.html.value
    set_language("zh")
    try:
        p.controls["H_kv"].value = 4
        assert "查询头 0 → K/V 头 0" in p.html.value
    finally:
        set_language("en")


def test_mha_does_not_compare_its_cache_with_itself():
    """Before, H_kv = H read "(MHA with the same H would keep 112)", the same number it had just printed."""
    from utils.i18n import set_language

    p = no_plot(AttentionShapesPanel())
    p.controls["H"].value, p.controls["H_kv"].value = 4, 4
    assert "would keep" not in p.html.value and "numbers." in p.html.value
    p.controls["H_kv"].value = 2
    assert "(MHA with the same H would keep" in p.html.value
    set_language("zh")
    try:
        p.controls["H_kv"].value = 4
        assert "H 相同的 MHA" not in p.html.value and "个数。" in p.html.value
    finally:
        set_language("en")
