"""The exercises name the mistake: each wrong solution a learner plausibly writes gets a message and a hint
about that mistake, not a neighbouring one, in English and in Chinese (issue 28, section 4). Numbers in
the messages are rounded; the causal-mask exercise has the package's signature ``causal_mask(T_q, T_k)``."""
import pytest
import torch

from test_exercises import MISTAKES
from utils import exercises as E
from utils.attention import causal_mask
from utils.exercises import solutions as S
from utils.exercises.judges import fmt, shown
from utils.i18n import set_language

# (exercise, mistake in MISTAKES, what the English hint says, what the Chinese hint says); the hint is the
# line the check prints last. Each needle belongs to this mistake's hint alone.
HINTS = [
    ("01.causal_mask", "a lower triangle without the offset", "the diagonal moves right by T_k - T_q", "对角线要右移"),
    ("01.causal_mask", "a square mask, no column for the cache", "a column for every key", "每个键都要有一列"),
    ("01.causal_mask", "the query cannot see itself", "(<=, not <)", "（用 <=，不是 <）"),
    ("01.causal_mask", "True where attention is forbidden", "True means may attend", "True 表示可以关注"),
    ("01.repeat_kv", "x.repeat: head h reads h % H_kv", "repeat_interleave(n_rep, dim=1)", "挨在一起"),
    ("01.repeat_kv", "no expansion", "n_rep times on dim=1", "出现 n_rep 次"),
    ("01.repeat_kv", "repeated on the time axis", "the heads axis, dim=1", "头这一维"),
    ("02.prefill_positions", "the pads left at -1 (no clamp)", "still index the RoPE tables", "仍要拿去索引 RoPE 表"),
    ("02.prefill_positions", "counts from 1", "subtract 1", "要减 1"),
    ("02.prefill_positions", "0..T-1 for every row", "however many pads come before it", "不管它前面有多少个填充"),
    ("03.cache_update", "new entries first", "order matters", "顺序很重要"),
    ("03.cache_update", "the new entries replace the cache", "keeps everything it held", "保留原有的全部内容"),
    ("03.cache_update", "K and V swapped", "(K, V) in this order", "按 (K, V) 的顺序"),
    ("03.cache_update", "concatenated on the heads axis", "the time axis, dim=2", "时间维上"),
    ("03.decode_step", "position 0 for the new token", "read once before layer 0 appends", "在第 0 层追加之前读一次"),
    ("03.decode_step", "no RoPE at all", "rotate q and k at the new token's position", "在新 token 的位置上旋转 q 和 k"),
    ("03.decode_step", "position one too low", "(no - 1)", "（不要减 1）"),
    ("03.decode_step", "position one too high", "(no + 1)", "（不要加 1）"),
    ("03.decode_step", "position read inside the layer loop", "before the loop over the layers", "在遍历各层的循环之前"),
    ("03.decode_step", "no final norm", "model.lm_head(model.norm(x))", "最后一层之后还要再做一次归一化"),
    ("03.decode_step", "no residual around attention", "add the attention output", "把注意力的输出加到残差流上"),
    ("03.decode_step", "no residual around the MLP", "add the MLP output", "把 MLP 的输出加到残差流上"),
    ("03.decode_step", "the residual added to the normalised h", "the residual stream is x", "残差流是 x"),
    ("03.decode_step", "no input_layernorm", "h = layer.input_layernorm(x)", "先归一化 x"),
    ("03.decode_step", "no post_attention_layernorm", "The MLP reads", "MLP 的输入是"),
    ("03.decode_step", "no RoPE on k", "rotate k as well as q", "k 也要和 q 一样旋转"),
    ("03.decode_step", "no RoPE on q", "rotate q as well as k", "q 也要和 k 一样旋转"),
    ("03.decode_step", "every layer reads layer 0's cache", "its own entry in the cache", "在缓存里都有自己的一份"),
    ("03.decode_step", "the new K/V never appended", "exactly once in every layer", "只追加一次"),
    ("03.decode_step", "the new K/V appended twice", "exactly once in every layer", "只追加一次"),
    ("05.top_p", "returns probabilities", "return the logits themselves", "返回 logits 本身"),
    ("05.top_p", "0 instead of -inf outside the nucleus", "a logit of 0 still has weight", "核外要填 -inf"),
    ("05.top_p", "returns the logits sorted", "at its token id", "token id 上"),
    ("05.top_p", "drops the token that crosses p", "ranked before it is < p", "概率之和还小于 p"),
    # cumsum < p drops the crossing token, as cumsum <= p does: the same mistake, the first case shows it
    ("05.top_p", "can keep nothing", "ranked before it is < p", "概率之和还小于 p"),
    ("05.top_p", "keeps the least likely tokens", "sort by probability, descending", "从高到低排序"),
    ("05.stop_text", "stop strings searched as regular expressions", "re.escape(s)", "正则表达式"),
    ("05.stop_text", "keeps the stop string", "drop the stop string itself", "停止字符串本身要去掉"),
    ("05.stop_text", "the first listed string wins", "the order of the list does not matter", "先后顺序无关紧要"),
    ("05.stop_text", "endswith on the text", "anywhere in the text", "在整段文本里查找"),
    ("05.stop_text", "position 0 taken for no hit", "position 0 is a hit too", "位置 0 也算找到"),
]


@pytest.fixture(autouse=True)
def english_after():
    yield
    set_language("en")


def _hint(exercise_id: str, wrong, language: str, capsys) -> tuple[str, str]:
    """(the case lines, the hint line) that ``check`` prints for ``wrong`` in ``language``."""
    set_language(language)
    report = E.check(exercise_id, wrong)
    out = capsys.readouterr().out
    assert not report.passed
    *cases, hint = out.strip().splitlines()
    assert ("Hint:" if language == "en" else "提示：") in hint, out
    return "\n".join(cases), hint


@pytest.mark.parametrize("exercise_id, mistake, en, zh", HINTS, ids=[f"{h[0]}:{h[1]}" for h in HINTS])
def test_the_hint_names_the_mistake_in_both_languages(exercise_id, mistake, en, zh, capsys):
    wrong = dict(MISTAKES[exercise_id])[mistake]
    assert en.lower() in _hint(exercise_id, wrong, "en", capsys)[1].lower()
    assert zh in _hint(exercise_id, wrong, "zh", capsys)[1]


def test_every_needle_belongs_to_one_hint_of_its_exercise(capsys):
    """A needle that also sits in a neighbouring mistake's hint would not show that the hint is this one's."""
    hints = {(h[0], h[1]): _hint(h[0], dict(MISTAKES[h[0]])[h[1]], "en", capsys)[1].split("Hint:")[1] for h in HINTS}
    for exercise_id, mistake, en, _ in HINTS:
        others = [m for (e, m), text in hints.items() if e == exercise_id and m != mistake
                  and en.lower() in text.lower() and text != hints[(exercise_id, mistake)]]
        assert not others, (exercise_id, mistake, others)


def test_repeat_kv_reports_the_head_mapping_not_the_numbers(capsys):
    cases, _ = _hint("01.repeat_kv", lambda x, n: x.repeat(1, n, 1, 1), "en", capsys)
    assert "yours 0→0, 1→1, 2→2, 3→0, 4→1, 5→2; expected 0→0, 1→0, 2→1, 3→1, 4→2, 5→2" in cases
    assert "[[[[" not in cases  # no nested tensor


def test_cache_update_says_order_not_values_differ(capsys):
    cases, hint = _hint("03.cache_update", dict(MISTAKES["03.cache_update"])["new entries first"], "en", capsys)
    assert "the new positions come first" in cases and "values differ" not in cases and "dim=2" in hint


def test_stop_text_cases_hold_regex_characters_so_an_unescaped_search_fails(capsys):
    """Before, no stop string held a regex character, and re.search(stop, text) passed."""
    cases, _ = _hint("05.stop_text", dict(MISTAKES["05.stop_text"])["stop strings searched as regular expressions"],
                     "en", capsys)
    assert "where the regular expression '...' matches" in cases and "re.error: nothing to repeat" in cases
    words = [c.words for c in E.EXERCISES["05.stop_text"].cases()]
    assert "whichever is listed first" not in " ".join(c.hint for c in E.EXERCISES["05.stop_text"].cases())
    assert sum("regex" in w for w in words) == 2


def test_a_decode_step_that_matches_no_known_mistake_gets_the_difference_and_the_checklist(capsys):
    def scaled(model, token_ids, cache):
        return S.decode_step(model, token_ids, cache) * 1.5

    cases, hint = _hint("03.decode_step", scaled, "en", capsys)
    assert "max |your logits - decode_step|" in cases and "go through the contract line by line" in hint


def test_the_decode_variants_without_a_mistake_are_the_reference():
    from utils.cache import KVCache
    from utils.course_model import load_course_model
    from utils.exercises.decode_exercise import variant_step
    from utils.generate import prefill

    model, _ = load_course_model()
    ids = torch.randint(1, model.cfg.vocab_size, (2, 5), generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        logits, a = prefill(model, ids, cache=KVCache())
        _, b = prefill(model, ids, cache=KVCache())
        tok = logits.argmax(-1)
        assert torch.equal(variant_step(model, tok, a), S.decode_step(model, tok, b))


def test_the_causal_mask_exercise_has_the_package_signature():
    import inspect

    assert list(inspect.signature(S.causal_mask).parameters) == ["T_q", "T_k"]
    for T_q, T_k in [(4, 4), (1, 6), (3, 5), (1, 1), (2, 9)]:
        assert torch.equal(S.causal_mask(T_q, T_k), causal_mask(T_q, T_k))


# --- numbers in messages ---------------------------------------------------------------------------------

def test_floats_are_rounded_in_every_message(capsys):
    """Before: "expected (0.3000000000000007, 0.03666666666666651), got (0.3000000000000007, 0.027499999999999858)"."""
    E.check("06.ttft_tpot", lambda t0, ts: (ts[0] - t0, (ts[-1] - ts[0]) / len(ts)))
    out = capsys.readouterr().out
    assert "expected (0.3, 0.03667), got (0.3, 0.0275)" in out and "0000000" not in out
    E.check("06.itl_p95", lambda ts: sum(b - a for a, b in zip(ts, ts[1:])) / (len(ts) - 1))
    assert "expected 0.475, got 0.1833" in capsys.readouterr().out


def test_fmt_rounds_floats_and_shows_just_enough_digits_to_tell_two_apart():
    assert fmt(0.1 + 0.2) == "0.3" and fmt(2.0) == "2.0" and fmt(float("-inf")) == "-inf" and fmt(None) == "None"
    assert fmt((0.3000000000000007, None)) == "(0.3, None)" and fmt("猫 。") == "'猫 。'" and fmt(7) == "7"
    assert fmt(torch.tensor([0.0625, float("-inf")])) == "[0.0625, -inf]" and fmt(torch.tensor(3)) == "3"
    assert shown(0.123456, 0.123457) == ("0.123456", "0.123457")  # 4 digits would read the same
    assert shown((1.0, 2.0), (1.0, 2.00001)) == ("(1.0, 2.0)", "(1.0, 2.00001)")
