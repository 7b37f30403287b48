"""Notebooks 01 and 02's exercises name these mistakes, in English and in Chinese: a wrapper around the
package's own function is refused (it would pass without a line of the learner's), ``repeat_kv`` along the
last axis, ``expand`` on the heads axis, ``view`` after ``expand``, positions numbered by column, and the last
valid logits left with their time axis ([B, 1, V])."""
import pytest
import torch

import utils
import utils.attention as attention_module
from utils import exercises as E
from utils.attention import causal_mask, repeat_kv
from utils.i18n import set_language


def _hint(exercise_id: str, wrong, language: str, capsys) -> tuple[str, str]:
    """(the case lines, the hint line) that ``check`` prints for ``wrong`` in ``language``."""
    set_language(language)
    report = E.check(exercise_id, wrong)
    out = capsys.readouterr().out
    assert not report.passed
    *cases, hint = out.strip().splitlines()
    return "\n".join(cases), hint


def _imported_in_body(x, n_rep):
    from utils.attention import repeat_kv as theirs
    return theirs(x, n_rep)


def _through_a_closure():
    borrowed = causal_mask
    return lambda T_q, T_k: borrowed(T_q, T_k)


WRAPPERS = [
    ("01.causal_mask", "causal_mask", lambda T_q, T_k: causal_mask(T_q, T_k)),
    ("01.causal_mask", "causal_mask", lambda T_q, T_k: utils.attention.causal_mask(T_q, T_k)),
    ("01.causal_mask", "causal_mask", _through_a_closure()),
    ("01.repeat_kv", "repeat_kv", lambda x, n_rep: repeat_kv(x, n_rep)),
    ("01.repeat_kv", "repeat_kv", lambda x, n_rep: attention_module.repeat_kv(x, n_rep).clone()),
    ("01.repeat_kv", "repeat_kv", _imported_in_body),
]


@pytest.mark.parametrize("exercise_id, name, wrapper", WRAPPERS,
                         ids=["global", "module attribute", "closure", "global", "module alias", "import in body"])
@pytest.mark.parametrize("language, says", [("en", "your function calls the course's own"),
                                            ("zh", "你的函数调用了课程包自带的")])
def test_a_wrapper_around_the_packages_function_is_refused(exercise_id, name, wrapper, language, says, capsys):
    cases, hint = _hint(exercise_id, wrapper, language, capsys)
    assert says in cases and f"utils.attention.{name}" in cases and "✓" not in cases
    assert f"`{name}`" in hint


@pytest.mark.parametrize("exercise_id", ["01.causal_mask", "01.repeat_kv"])
def test_the_reference_and_a_function_of_ones_own_still_pass(exercise_id, capsys):
    own = {"01.causal_mask": lambda T_q, T_k: torch.ones(T_q, T_k, dtype=torch.bool).tril(T_k - T_q),
           "01.repeat_kv": lambda x, n_rep: x.repeat_interleave(n_rep, dim=1)}[exercise_id]
    assert E.check(exercise_id, own).passed
    assert E.check(exercise_id, E.EXERCISES[exercise_id].solution).passed


def _expand_then_view(x, n_rep):
    B, H_kv, T, d_h = x.shape
    return x[:, :, None].expand(B, H_kv, n_rep, T, d_h).view(B, H_kv * n_rep, T, d_h)


REPEAT_KV = [
    ("along dim -1", lambda x, n_rep: x.repeat_interleave(n_rep, dim=-1), "the last axis (`dim=-1` is dim 3, d_h)",
     "dim=1", "沿最后一维"),
    ("tiled along dim -1", lambda x, n_rep: x.repeat(1, 1, 1, n_rep), "the last axis", "dim=1", "沿最后一维"),
    ("expand on the heads axis", lambda x, n_rep: x.expand(x.shape[0], x.shape[1] * n_rep, *x.shape[2:]),
     "RuntimeError", "`expand` only stretches axes of size 1", "只能拉伸长度为 1 的维"),
    ("view after expand", _expand_then_view, "RuntimeError", "use `reshape`", "改用 `reshape`"),
]


@pytest.mark.parametrize("mistake, wrong, message, en, zh", REPEAT_KV, ids=[m[0] for m in REPEAT_KV])
def test_repeat_kv_mistakes_with_expand_and_the_last_axis_are_named(mistake, wrong, message, en, zh, capsys):
    cases, hint = _hint("01.repeat_kv", wrong, "en", capsys)
    assert message in cases and en in hint
    cases, hint = _hint("01.repeat_kv", wrong, "zh", capsys)
    assert zh in cases + hint


@pytest.mark.parametrize("language, says", [("en", "you numbered the columns, pads included"),
                                            ("zh", "你按列编号了")])
def test_positions_numbered_by_column_are_named(language, says, capsys):
    _, hint = _hint("02.prefill_positions", lambda m: torch.arange(m.shape[1]).expand_as(m), language, capsys)
    assert says in hint


def _gathered(logits, mask):
    B, T, V = logits.shape
    last = T - 1 - mask.long().flip(1).argmax(1)  # (B,)
    return logits.gather(1, last[:, None, None].expand(B, 1, V))  # (B, 1, V): the time axis kept


@pytest.mark.parametrize("language, message, hint_says", [("en", "= [B, 1, V], the right rows", ".squeeze(1)"),
                                                          ("zh", "取的行是对的", ".squeeze(1)")])
def test_last_valid_logits_left_as_b_1_v_is_named(language, message, hint_says, capsys):
    cases, hint = _hint("02.last_valid_logits", _gathered, language, capsys)
    assert message in cases and hint_says in hint
