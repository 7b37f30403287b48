"""The weights' memory layout (utils/weight_layout.py) changes how fast batch-1 decode streams them,
never what the model computes beyond float rounding (the bit-for-bit agreement between the modules and
the flat decode step, in either layout, is tests/test_flat_decode.py's)."""
import copy

import pytest
import torch

from conftest import prompt_ids, tiny_model
from utils.recompute import TOL
from utils.weight_layout import LAYOUTS, MATVEC_LAYOUT, layout_of, set_weight_layout, weight_layout


def test_decoder_stores_its_linear_weights_in_the_matvec_layout():
    model = tiny_model("GQA")
    assert weight_layout(model) == MATVEC_LAYOUT == "in_out"
    w = model.layers[0].self_attn.q_proj.weight
    assert w.shape == (model.cfg.n_heads * model.cfg.head_dim, model.cfg.d_model)  # nn.Linear's shape, as ever
    assert w.t().is_contiguous()


def test_a_tied_embedding_keeps_the_rows_its_lookup_reads():
    model = tiny_model("GQA", tie_embeddings=True)
    assert model.lm_head.weight is model.embed_tokens.weight
    assert model.embed_tokens.weight.is_contiguous()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_set_weight_layout_keeps_values_and_parameter_objects(layout):
    model = tiny_model("MHA")
    params = {name: p for name, p in model.named_parameters()}
    before = {name: p.detach().clone() for name, p in params.items()}
    set_weight_layout(model, layout)
    assert weight_layout(model) == layout
    for name, p in model.named_parameters():
        assert p is params[name]  # hooks, optimizers and flat_weights keep pointing at the same objects
        assert torch.equal(p, before[name])


def test_unknown_layout_is_a_clear_error():
    with pytest.raises(ValueError, match="layout.*'row_major'"):
        set_weight_layout(tiny_model(), "row_major")


def test_layout_of_names_a_view_with_other_strides():
    w = torch.randn(4, 6)
    assert (layout_of(w), layout_of(w.t().contiguous().t()), layout_of(w[:, ::2])) == ("out_in", "in_out", "other")


def test_the_two_layouts_agree_within_TOL():
    a = tiny_model("GQA")
    b = set_weight_layout(copy.deepcopy(a), "out_in")
    ids = prompt_ids(9)
    assert (a(ids) - b(ids)).abs().max() < TOL  # the kernels sum in other orders: rounding, nothing more


def test_layout_survives_loading_weights_copying_and_dtype_changes():
    src, dst = tiny_model("MQA", seed=1), tiny_model("MQA", seed=2)
    dst.load_state_dict(src.state_dict())  # copies into dst's own storage
    assert weight_layout(dst) == MATVEC_LAYOUT and torch.equal(dst(prompt_ids(5)), src(prompt_ids(5)))
    assert weight_layout(copy.deepcopy(dst)) == MATVEC_LAYOUT
    assert weight_layout(copy.deepcopy(dst).to(torch.bfloat16)) == MATVEC_LAYOUT
