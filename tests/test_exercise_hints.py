"""The exercises name the mistake: each wrong solution a learner plausibly writes gets a message and a hint
about that mistake, not a neighbouring one, in English and in Chinese (issue 28, section 4). Numbers in
the messages are rounded; the causal-mask exercise has the package's signature ``causal_mask(T_q, T_k)``."""
import pytest
import torch

from test_exercises import MISTAKES
from utils import exercises as E
from utils.exercises.solutions import causal_mask  # not utils.attention's: a function calling that is refused
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
    ("01.repeat_kv", "time and d_h swapped", "so no transpose", "不要转置"),
    ("01.repeat_kv", "5-D expand without reshape", "merge the H_kv and n_rep axes with reshape", "合成一维"),
    ("01.repeat_kv", "left in the [B, T, H, d_h] layout", "the result keeps it", "结果也保持这个布局"),
    ("01.causal_mask", "the comparison reversed: key >= query", "(the key on the small side)", "键的位置在小的那一边"),
    ("01.causal_mask", "the whole [T_k, T_k] square", "the last T_q rows of the square", "方阵的最后 T_q 行"),
    ("05.stop_text", "min over every find, -1 included", "leave those out before taking the smallest", "先把这些排除掉"),
    ("02.last_valid_logits", "number of real tokens as the index", "only with right padding", "只在右填充时"),
    ("02.last_valid_logits", "the first real token", "finds each row's first 1", "找到的是每行的第一个 1"),
    ("02.last_valid_logits", "one index for every row: [B, B, V]", "logits[torch.arange(B), idx]", "要让第 b 行只配"),
    ("02.last_valid_logits", "the right rows' probabilities", "sampling applies the softmax later", "softmax 留给之后"),
    ("02.last_valid_logits", "flip and argmax without T - 1 -", "T - 1 minus it", "T - 1 减去它"),
    ("02.prefill_positions", "first real column from mask.argmax, no clamp", "still index the RoPE tables",
     "仍要拿去索引 RoPE 表"),
    ("02.prefill_positions", "the pads left at -1 (no clamp)", "still index the RoPE tables", "仍要拿去索引 RoPE 表"),
    ("02.last_valid_logits", "number of real tokens, without the - 1", "one past the last index", "比最后一个下标大 1"),
    ("02.prefill_positions", "the batch's largest pad count for every row", "count each row's own pads",
     "要数每一行自己的填充"),
    ("02.prefill_positions", "counts from 1", "subtract 1", "要减 1"),
    ("02.prefill_positions", "counted from the row's end", "counted from the row's end", "从行尾倒着数"),
    ("02.prefill_positions", "0..T-1 for every row", "you numbered the columns, pads included", "你按列编号了"),
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
    ("03.decode_step", "K/V heads expanded with repeat, not repeat_interleave", "repeat_interleave(H // H_kv, dim=1)",
     "GQA 的一组是相邻的几个查询头"),
    ("03.decode_step", "no residual around attention", "add the attention output", "把注意力的输出加到残差流上"),
    ("03.decode_step", "no residual around the MLP", "add the MLP output", "把 MLP 的输出加到残差流上"),
    ("03.decode_step", "the residual added to the normalised h", "the residual stream is x", "残差流是 x"),
    ("03.decode_step", "the attention residual added to the normalised h", "not `h + ...`", "不是 `h + ...`"),
    ("03.decode_step", "apply_rope with apply_rope_rolled's sin table", "`apply_rope` takes the plain tables",
     "要用普通的表"),
    ("03.decode_step", "no input_layernorm", "h = layer.input_layernorm(x)", "先归一化 x"),
    ("03.decode_step", "no post_attention_layernorm", "The MLP reads", "MLP 的输入是"),
    ("03.decode_step", "no RoPE on k", "rotate k as well as q", "k 也要和 q 一样旋转"),
    ("03.decode_step", "no RoPE on q", "rotate q as well as k", "q 也要和 k 一样旋转"),
    ("03.decode_step", "q rotated twice", "apply RoPE once to q and once to k", "各在 `pos = cache.seq_len` 处做一次"),
    ("03.decode_step", "q and k rotated twice", "apply RoPE once to q and once to k", "各在 `pos = cache.seq_len` 处做一次"),
    ("03.decode_step", "scores not divided by sqrt(d_h)", "divides q · Kᵀ by √d_h", "除以 √d_h"),
    ("03.decode_step", "batch 1 hard-coded in .view", "`.view(B, 1, H, d_h)`", "不要写死成"),
    ("03.decode_step", "K/V heads not expanded (size mismatch at dim 1)", "enable_gqa=True", "从 H_kv 展开到 H"),
    ("03.cache_update", "only the last new position appended", "append every new position", "每个新位置都要追加"),
    ("03.decode_step", "every layer reads layer 0's cache", "its own entry in the cache", "在缓存里都有自己的一份"),
    ("03.decode_step", "the new K/V never appended", "exactly once in every layer", "只追加一次"),
    ("03.decode_step", "the new K/V appended twice", "exactly once in every layer", "只追加一次"),
    ("03.decode_step", "attention over the cached positions only", "append first, then attend", "先追加，再对"),
    ("04.kv_bytes_from_config", "ignores batch_size", "multiply by batch_size", "要乘以 batch_size"),
    ("04.kv_bytes_from_config", "H instead of H_kv", "only the k/v heads are cached", "缓存里只存 K/V 头"),
    ("04.kv_bytes_from_config", "forgets V (no factor 2)", "every layer stores both", "每一层两者都要存"),
    ("04.kv_bytes_from_config", "int8 counted as 2 bytes", "1 for int8", "int8 为 1"),
    ("04.kv_bytes_from_config", "one layer only", "multiply by num_hidden_layers", "要乘以 num_hidden_layers"),
    ("04.kv_bytes_from_config", "d_h = C / H always", "when head_dim is in the config", "配置里有 head_dim 就用它"),
    ("04.max_requests", "rounds up", "a part of a request cannot run", "半个请求跑不起来"),
    ("04.max_requests", "returns the quotient unrounded", "a part of a request cannot run", "半个请求跑不起来"),
    ("04.max_requests", "forgets V", "the factor 2 included", "因子 2 也在内"),
    ("04.max_requests", "ignores the sequence length", "one request holds seq_len tokens", "一个请求有 seq_len 个 token"),
    ("04.max_requests", "counts float16 whatever the dtype", "1 for int8", "int8 为 1"),
    ("04.kv_bytes_from_config", "bfloat16 counted as 4 bytes", "2 for float16 and bfloat16", "float16 和 bfloat16 为 2"),
    ("04.max_requests", "H instead of H_kv", "only the k/v heads are cached", "缓存里只存 K/V 头"),
    # the first case (Llama-3-8B, H·d_h = C) cannot tell the MHA form from H instead of H_kv: the same hint
    ("04.max_requests", "the MHA form 2·L·B·T·C·bytes", "only the k/v heads are cached", "缓存里只存 K/V 头"),
    ("04.max_requests", "d_h = C / H always", "when head_dim is in the config", "配置里有 head_dim 就用它"),
    ("04.kv_bytes_from_config", "the MHA form 2·L·B·T·C·bytes", "only the k/v heads are cached", "缓存里只存 K/V 头"),
    ("04.kv_bytes_from_config", "a missing num_key_value_heads read as 1 (MQA)", "is MHA: H_kv = H = 32, not 1",
     "就是 MHA：H_kv = H = 32"),
    ("04.max_requests", "subtracts a 10 % reserve again", "do not subtract a reserve again", "不要再扣一次预留"),
    ("04.max_requests", "subtracts the weights again", "do not subtract the weights again", "不要再扣一次权重"),
    ("04.kv_bytes_from_config", "counts bits, not bytes", "counts bits: divide by 8", "除以 8 才是每个数的字节数"),
    ("04.max_requests", "counts bits, not bytes", "counts bits: divide by 8", "除以 8 才是每个数的字节数"),
    ("05.top_p", "returns probabilities", "return the logits themselves", "返回 logits 本身"),
    ("05.top_p", "keeps the token at exactly p (before <= p)", "not <= p", "不是 <= p"),
    ("05.top_p", "sorted mask on unsorted logits", "put it back at the token ids", "scatter` 回各个 token id"),
    ("05.top_p", "renormalised with log_softmax", "no renormalising", "不要重新归一化"),
    ("05.top_p", "drops the long tail at p = 1", "return the logits unchanged when p >= 1", "原样返回 logits"),
    ("05.stop_text", "cuts at the last occurrence", "`text.rfind(s)` the last one", "找的是最后一次"),
    ("05.stop_text", "strips the space before the stop string", "spaces included", "空格也不例外"),
    ("05.top_p", "0 instead of -inf outside the nucleus", "a logit of 0 still has weight", "核外要填 -inf"),
    ("05.top_p", "returns the logits sorted", "at its token id", "token id 上"),
    ("05.top_p", "drops the token that crosses p", "ranked before it is < p", "概率之和还小于 p"),
    # cumsum < p drops the crossing token, as cumsum <= p does: the same mistake, the first case shows it
    ("05.top_p", "can keep nothing", "ranked before it is < p", "概率之和还小于 p"),
    ("05.top_p", "keeps the least likely tokens", "sort by probability, descending", "从高到低排序"),
    ("05.stop_text", "stop strings searched as regular expressions", "re.escape(s)", "正则表达式"),
    ("05.stop_text", "keeps the stop string", "drop the stop string itself", "停止字符串本身要去掉"),
    ("05.stop_text", "the first listed string wins", "the order of the list does not matter", "先后顺序无关紧要"),
    ("05.stop_text", "endswith on the text", "it may cover several tokens", "可能横跨好几个 token"),
    ("05.stop_text", "position 0 taken for no hit", "position 0 is a hit too", "位置 0 也算找到"),
    ("05.top_p", "running total over the logits", "over softmax(logits), not the logits", "不是 logits 本身"),
    ("05.top_p", "changes the logits in place", "leave the inputs as they are", "不要改动传进来的输入"),
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


@pytest.mark.parametrize("language, says", [("en", "RoPE applied after `cache.update`"),
                                             ("zh", "在 `cache.update` 之后才做 RoPE")])
def test_rope_after_cache_update_is_named_not_only_called_position_0(language, says, capsys):
    """RoPE after cache.update rotates q and every key by one angle: the same logits as position 0, and the
    message used to speak of position 0 alone."""
    cases, _ = _hint("03.decode_step", dict(MISTAKES["03.decode_step"])["RoPE applied after cache.update"], language,
                     capsys)
    assert says in cases


@pytest.mark.parametrize("language, says", [("en", "did not see its own k, v"), ("zh", "没有看到它自己的 k、v")])
def test_attention_over_the_cached_positions_only_is_named(language, says, capsys):
    cases, _ = _hint("03.decode_step", dict(MISTAKES["03.decode_step"])["attention over the cached positions only"],
                     language, capsys)
    assert says in cases


def test_repeat_kv_reports_the_head_mapping_not_the_numbers(capsys):
    cases, _ = _hint("01.repeat_kv", lambda x, n: x.repeat(1, n, 1, 1), "en", capsys)
    assert "yours 0→0, 1→1, 2→2, 3→0, 4→1, 5→2; expected 0→0, 1→0, 2→1, 3→1, 4→2, 5→2" in cases
    assert "[[[[" not in cases  # no nested tensor


@pytest.mark.parametrize("language, case_says, hint_says", [
    ("en", "your diagonal moved left by T_k - T_q = 2 instead of right", "tril(T_k - T_q)`), not left"),
    ("zh", "你的对角线往左移了 T_k - T_q = 2 列", "不是往左移")])
def test_a_causal_mask_with_its_offset_flipped_is_named_not_called_swapped(language, case_says, hint_says, capsys):
    """Before, tril(T_q - T_k) (the diagonal moved left, not right) passed prefill, then got "True and False are
    swapped" on the decode case and a bare True/False list on the chunk case."""
    def flipped(T_q, T_k):
        return torch.ones(T_q, T_k, dtype=torch.bool).tril(T_q - T_k)

    cases, hint = _hint("01.causal_mask", flipped, language, capsys)
    assert case_says in cases and hint_says in hint
    # not diagnosed as swapped (a mask hiding every key may add "or ... swapped"), no bare True/False list
    assert "are swapped: expected" not in cases and "弄反了：应为" not in cases and "[True" not in cases


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_causal_mask_message_writes_the_masks_as_0_and_1(language, capsys):
    """A wrong mask no judge recognises (rows upside down) still reads as 0/1, like the named mistakes."""
    def upside_down(T_q, T_k):
        return causal_mask(T_q, T_k).flip(0)

    cases, _ = _hint("01.causal_mask", upside_down, language, capsys)
    assert "[[1, 0, 0, 0], [1, 1, 0, 0]" in cases and "True" not in cases and "False" not in cases


@pytest.mark.parametrize("language, says", [("en", "you copied along the time axis"), ("zh", "你在时间维上复制")])
def test_repeat_kv_copied_along_time_then_reshaped_is_named(language, says, capsys):
    """Before, repeat_interleave on the time axis and a reshape to H heads printed "yours 0→?, 1→?" alone."""
    def along_time(x, n_rep):
        B, H_kv, T, d_h = x.shape
        return x.repeat_interleave(n_rep, dim=2).reshape(B, H_kv * n_rep, T, d_h)

    cases, hint = _hint("01.repeat_kv", along_time, language, capsys)
    assert says in cases and "dim=1" in hint and "→?" not in cases


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


def _v_holds_k_new(cache_k, cache_v, k_new, v_new):
    return (k_new, k_new) if cache_k is None else (torch.cat([cache_k, k_new], 2), torch.cat([cache_v, k_new], 2))


def _cat_on_heads(cache_k, cache_v, k_new, v_new):
    return (k_new, v_new) if cache_k is None else (torch.cat([cache_k, k_new], 1), torch.cat([cache_v, v_new], 1))


def _decode_through(step_kind: str):
    """The reference step whose attention goes wrong: over the new k, v alone, or SDPA with is_causal=True."""
    import torch.nn.functional as F

    from utils.attention import apply_rope, attention, repeat_kv

    def step(model, token_ids, cache):
        cfg, B, pos = model.cfg, token_ids.shape[0], cache.seq_len
        cos, sin = model.rope_cos[pos : pos + 1], model.rope_sin[pos : pos + 1]
        x = model.embed_tokens(token_ids[:, None])
        for i, layer in enumerate(model.layers):
            attn, h = layer.self_attn, layer.input_layernorm(x)
            q = attn.q_proj(h).view(B, 1, cfg.n_heads, cfg.head_dim).transpose(1, 2)
            k = attn.k_proj(h).view(B, 1, cfg.n_kv_heads, cfg.head_dim).transpose(1, 2)
            v = attn.v_proj(h).view(B, 1, cfg.n_kv_heads, cfg.head_dim).transpose(1, 2)
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
            K, V = cache.update(i, k, v)
            n_rep = cfg.n_heads // cfg.n_kv_heads
            out = attention(q, k, v) if step_kind == "new only" else F.scaled_dot_product_attention(
                q, repeat_kv(K, n_rep), repeat_kv(V, n_rep), is_causal=True)
            x = x + attn.o_proj(out.transpose(1, 2).reshape(B, 1, -1))
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        return model.lm_head(model.norm(x))[:, -1]
    return step


# Mistakes found in review: each gets its own message and hint, in both languages.
REVIEWED = [
    ("03.cache_update", _v_holds_k_new, "V: its new positions hold k_new", "K grows by k_new and V by v_new",
     "V 接上 v_new"),
    ("03.cache_update", _cat_on_heads, "you concatenated on dim=1, the H_kv axis", "the time axis, dim=2", "时间维上"),
    ("03.cache_update", lambda ck, cv, k, v: (None, None) if ck is None else S.cache_update(ck, cv, k, v),
     "the cache was empty (None) and None came back", "from an empty cache return k_new, v_new", "直接返回 k_new、v_new"),
    ("03.decode_step", lambda model, token_ids, cache: model(token_ids[:, None], cache=cache)[:, -1],
     "your step called the model itself", "from the model's pieces", "用模型的各个部件"),
    ("03.decode_step", lambda model, token_ids, cache: S.decode_step(model.forward.__self__, token_ids, cache),
     "your step called the model itself", "from the model's pieces", "用模型的各个部件"),
    ("03.decode_step", _decode_through("new only"), "the new token's own k and v alone",
     "the K, V that `cache.update(i, k, v)` returns", "返回的 K、V"),
    ("03.decode_step", _decode_through("is_causal"), "your query saw key 0 alone", "a decode step needs no mask",
     "解码步不需要掩码"),
]


@pytest.mark.parametrize("exercise_id, wrong, message, en, zh", REVIEWED,
                         ids=["V holds k_new", "dim=1 with 1 cached + 1 new", "None from an empty cache", "model(...) called", "forward called",
                              "attention over the new k, v only", "SDPA is_causal=True"])
def test_mistakes_found_in_review_are_named_in_both_languages(exercise_id, wrong, message, en, zh, capsys):
    cases, hint = _hint(exercise_id, wrong, "en", capsys)
    assert message in cases and en in hint
    assert zh in _hint(exercise_id, wrong, "zh", capsys)[1]


def test_a_decode_step_that_matches_no_known_mistake_gets_the_difference_and_the_checklist(capsys):
    def scaled(model, token_ids, cache):
        return S.decode_step(model, token_ids, cache) * 1.5

    cases, hint = _hint("03.decode_step", scaled, "en", capsys)
    assert "max |your logits - decode_step|" in cases and "go through the contract line by line" in hint
    assert "softmax over the keys (last dim), scores ÷ √d_h" in hint  # regression: attention was missing from the list
    assert "softmax 沿键的维度" in _hint("03.decode_step", scaled, "zh", capsys)[1]


def test_a_cache_update_returning_three_values_is_told_how_many_it_returned(capsys):
    # regression: a 3-tuple was reported as "expected a pair (K, V), got tuple"
    set_language("en")
    report = E.check("03.cache_update", lambda ck, cv, k, v: (k, v, k))
    out = capsys.readouterr().out
    assert not report.passed and "expected a pair (K, V), got a tuple of 3" in out
    set_language("zh")
    E.check("03.cache_update", lambda ck, cv, k, v: (k, v, k))
    assert "含 3 个元素的 `tuple`" in capsys.readouterr().out
    set_language("en")


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
    assert "expected 0.485, got 0.2" in capsys.readouterr().out


def test_fmt_rounds_floats_and_shows_just_enough_digits_to_tell_two_apart():
    assert fmt(0.1 + 0.2) == "0.3" and fmt(2.0) == "2.0" and fmt(float("-inf")) == "-inf" and fmt(None) == "None"
    assert fmt((0.3000000000000007, None)) == "(0.3, None)" and fmt("猫 。") == "'猫 。'" and fmt(7) == "7"
    assert fmt(torch.tensor([0.0625, float("-inf")])) == "[0.0625, -inf]" and fmt(torch.tensor(3)) == "3"
    assert shown(0.123456, 0.123457) == ("0.123456", "0.123457")  # 4 digits would read the same
    assert shown((1.0, 2.0), (1.0, 2.00001)) == ("(1.0, 2.0)", "(1.0, 2.00001)")


@pytest.mark.parametrize("language, says", [("en", "additive float mask"), ("zh", "加性浮点掩码")])
def test_causal_mask_additive_float_mask_is_named(language, says, capsys):
    """Before, a 0/-inf float mask (SDPA's other mask form) only got "expected a bool tensor"."""
    def additive(T_q, T_k):
        return torch.zeros(T_q, T_k).masked_fill(~causal_mask(T_q, T_k), float("-inf"))

    cases, hint = _hint("01.causal_mask", additive, language, capsys)
    assert says in cases and "True" in hint


def test_repeat_kv_copied_along_d_h_is_not_called_a_copy_along_time(capsys):
    """Before, the test tensor had d_h = 1, so a copy along d_h looked exactly like a copy along T."""
    def along_d_h(x, n_rep):
        B, H_kv, T, d_h = x.shape
        return x.repeat_interleave(n_rep, dim=3).reshape(B, H_kv * n_rep, T, d_h)

    cases, _ = _hint("01.repeat_kv", along_d_h, "en", capsys)
    assert "✗" in cases and "time axis" not in cases


@pytest.mark.parametrize("language, says", [("en", "swapped"), ("zh", "弄反")])
def test_ttft_tpot_swapped_tuple_is_named(language, says, capsys):
    """Before, (tpot, ttft) only got "expected (0.3, 0.03667), got (0.03667, 0.3)"."""
    cases, _ = _hint("06.ttft_tpot", lambda t0, ts: tuple(reversed(S.ttft_tpot(t0, ts))), language, capsys)
    assert says in cases


@pytest.mark.parametrize("language, says", [("en", "0.95th percentile"), ("zh", "0.95 百分位")])
def test_itl_p95_percentile_as_a_fraction_is_named(language, says, capsys):
    """np.percentile(gaps, 0.95) (a fraction where numpy takes percent) is named, not just "expected ..."."""
    import numpy as np

    cases, hint = _hint("06.itl_p95", lambda ts: float(np.percentile(np.diff(ts), 0.95)), language, capsys)
    assert says in cases and "95)" in hint


def test_itl_p95_lower_method_is_not_called_the_fraction_mistake(capsys):
    """Before, the seven-token case had five equal gaps, so method="lower" matched the 0.95th percentile there."""
    import numpy as np

    cases, _ = _hint("06.itl_p95", lambda ts: float(np.percentile(np.diff(ts), 95, method="lower")), "en", capsys)
    assert "✗" in cases and "0.95th" not in cases


@pytest.mark.parametrize("language, says", [("en", "milliseconds"), ("zh", "毫秒")])
def test_itl_p95_in_milliseconds_is_named(language, says, capsys):
    """Before, a p95 in ms (1000 times the seconds) got only the generic hint."""
    import numpy as np

    cases, hint = _hint("06.itl_p95", lambda ts: 1e3 * float(np.percentile(np.diff(ts), 95)), language, capsys)
    assert says in cases


def test_itl_p95_max_is_not_called_nearest_rank_where_the_two_coincide(capsys):
    """Before, with six gaps (nearest rank = max) returning the max was called "the nearest-rank percentile"."""
    import numpy as np

    cases, _ = _hint("06.itl_p95", lambda ts: float(np.max(np.diff(ts))), "en", capsys)
    assert "nearest-rank" not in cases and "largest gap" in cases


@pytest.mark.parametrize("language, says", [("en", "milliseconds"), ("zh", "毫秒")])
def test_ttft_tpot_in_milliseconds_is_named(language, says, capsys):
    """Before, an answer in ms (1000 times the seconds) got only the generic hint."""
    def in_ms(t0, ts):
        return tuple(None if x is None else 1e3 * x for x in S.ttft_tpot(t0, ts))

    cases, hint = _hint("06.ttft_tpot", in_ms, language, capsys)
    assert says in cases + hint


@pytest.mark.parametrize("exercise_id, mistake, says", [
    ("04.max_requests", "d_h = C / H always", "this config says head_dim = 256"),
    ("04.max_requests", "the MHA form 2·L·B·T·C·bytes", "MHA form 2·L·B·T·C·bytes; this model's H_kv·d_h = 2048"),
    ("04.kv_bytes_from_config", "the MHA form 2·L·B·T·C·bytes", "MHA form 2·L·B·T·C·bytes; this model keeps H_kv = 8"),
])
def test_sizing_judges_name_the_factor_on_gemma_not_the_rounding(exercise_id, mistake, says, capsys):
    """Gemma-2-9B (head_dim 256, H·d_h != C): a request sized without head_dim or by the MHA form was once
    called a count rounded up, and the MHA form was not named at all."""
    cases, _ = _hint(exercise_id, dict(MISTAKES[exercise_id])[mistake], "en", capsys)
    gemma = next(line for line in cases.splitlines() if "Gemma-2-9B" in line)
    assert says in gemma and "rounded up" not in gemma, gemma


def test_sizing_judges_name_what_a_reviewer_found_unnamed(capsys):
    """Before: bfloat16 counted as 4 bytes got only "2 times as many" and the case hint about MHA configs (a part
    done right); the MHA form on Llama-3-8B was called "all 32 query heads" alone; an int8 cache counted as 2
    bytes got the generic requests hint; a quotient below 1 was shown as 0.000."""
    from utils.exercises.sizing_mistakes import LLAMA2_7B

    cases, hint = _hint("04.kv_bytes_from_config", dict(MISTAKES["04.kv_bytes_from_config"])["bfloat16 counted as 4 bytes"],
                        "en", capsys)
    assert "bfloat16 and float16 take 2 bytes per number" in cases and "num_key_value_heads" not in hint
    unknown = lambda c, T, B, dt: 3 * S.kv_bytes_from_config(c, T, B, dt) if c is LLAMA2_7B else S.kv_bytes_from_config(c, T, B, dt)
    cases, hint = _hint("04.kv_bytes_from_config", unknown, "en", capsys)
    assert "3 times as many" in cases and "check each factor" in hint and "is MHA" not in hint
    cases, _ = _hint("04.kv_bytes_from_config", dict(MISTAKES["04.kv_bytes_from_config"])["the MHA form 2·L·B·T·C·bytes"],
                     "en", capsys)
    assert "all 32 query heads (or used the MHA form" in cases.splitlines()[0]
    cases, _ = _hint("04.max_requests", dict(MISTAKES["04.max_requests"])["the MHA form 2·L·B·T·C·bytes"], "en", capsys)
    assert "(or use the MHA form" in cases.splitlines()[0]
    cases, hint = _hint("04.max_requests", dict(MISTAKES["04.max_requests"])["counts float16 whatever the dtype"], "en", capsys)
    assert "an int8 cache takes 1 byte per number" in cases and "1 for int8" in hint
    tiny_quotient = lambda c, T, free, dt: free / S.kv_bytes_from_config(c, T, 1, dt) if free < 2**30 else S.max_requests(c, T, free, dt)
    cases, _ = _hint("04.max_requests", tiny_quotient, "en", capsys)
    assert "the quotient 0.000488 itself" in cases and "0.000 " not in cases


def test_sizing_judges_name_a_missing_field_read_as_mqa_and_a_reserve_taken_twice(capsys):
    """Before: num_key_value_heads missing, read as 1 (MQA), was called "one layer's cache" (Llama-2-7B has L = H = 32,
    so the two give the same number), and later only "H_kv = 1 (MQA)", which misled a learner who forgot L there:
    now both are named, in the message and the hint. A 10 % reserve taken off free_bytes again got only the generic
    hint."""
    from utils.exercises.sizing_mistakes import LLAMA2_7B

    for wrong in (dict(MISTAKES["04.kv_bytes_from_config"])["a missing num_key_value_heads read as 1 (MQA)"],
                  # L forgotten only where L = H (the Llama-2-7B-shaped case): the same number
                  lambda c, T, B, dt: S.kv_bytes_from_config(
                      {**c, "num_hidden_layers": 1} if c is LLAMA2_7B else c, T, B, dt)):
        cases, hint = _hint("04.kv_bytes_from_config", wrong, "en", capsys)
        assert "H_kv = 1 (MQA), or of a single layer (L = H = 32 here)" in cases
        assert "H_kv = H = 32, not 1" in hint and "count all num_hidden_layers" in hint
        cases, hint = _hint("04.kv_bytes_from_config", wrong, "zh", capsys)
        assert "只算了一层" in cases and "num_hidden_layers 层全部算上" in hint
    cases, hint = _hint("04.max_requests", dict(MISTAKES["04.max_requests"])["subtracts a 10 % reserve again"], "en",
                        capsys)
    assert "a 10 % reserve taken off free_bytes" in cases and "one request's cache is" not in cases
    assert "do not subtract a reserve again" in hint


@pytest.mark.parametrize("language, says", [("en", "is the course's own function, not yours"), ("zh", "是课程包自带的函数")])
@pytest.mark.parametrize("exercise_id, name", [("01.causal_mask", "causal_mask"), ("01.repeat_kv", "repeat_kv")])
def test_the_packages_own_function_is_refused_never_passed(exercise_id, name, language, says, capsys):
    """The notebook imports the package's causal_mask and repeat_kv for its other cells: checked in place of the
    learner's function they once passed every case. Now nothing runs, the check says why and never passes."""
    import utils.attention

    set_language(language)
    report = E.check(exercise_id, getattr(utils.attention, name))
    out = capsys.readouterr().out
    assert not report.passed and not report.cases
    assert says in out and f"utils.attention.{name}" in out and "✓" not in out
    assert E.check(exercise_id, E.EXERCISES[exercise_id].solution).passed  # the reference (solved notebooks) passes


@pytest.mark.parametrize("language, says", [("en", "rows are queries, columns keys: you returned the transpose"),
                                            ("zh", "行是查询、列是键：你返回的是按 [T_k, T_q] 排的转置")])
def test_a_transposed_causal_mask_is_named_on_every_case(language, says, capsys):
    """A mask built [T_k, T_q] (keys as rows) once got a bare expected/got on prefill and a shape error after."""
    def transposed(T_q, T_k):
        return causal_mask(T_q, T_k).T

    cases, hint = _hint("01.causal_mask", transposed, language, capsys)
    lines = cases.splitlines()
    square = "or rows and columns swapped" if language == "en" else "或者行和列对调了"
    assert square in lines[0]  # prefill: the square transpose is the upper triangle, named as such
    assert all(says in line for line in lines[1:3]) and "✓" in lines[3]  # T_q = T_k = 1: the transpose is the mask
    assert ("row i of the mask is query i" if language == "en" else "第 i 行是查询 i") in hint


@pytest.mark.parametrize("language, square, rect", [
    ("en", "upper triangle: True where the key is at or after the query", "the comparison is reversed (key >= query)"),
    ("zh", "上三角：键在查询所在位置或之后时为 True", "比较方向反了（键 >= 查询）")])
def test_a_causal_mask_with_the_comparison_reversed_is_named_on_every_case(language, square, rect, capsys):
    """key_pos >= query_pos was told "you returned the transpose" on prefill and a bare expected/got after."""
    def reversed_comparison(T_q, T_k):
        return torch.arange(T_k)[None, :] >= torch.arange(T_k - T_q, T_k)[:, None]  # (T_q, T_k)

    cases, hint = _hint("01.causal_mask", reversed_comparison, language, capsys)
    lines = cases.splitlines()
    assert square in lines[0] and all(rect in line for line in lines[1:3]) and "✓" in lines[3]


@pytest.mark.parametrize("language, says", [("en", "or True and False are swapped"), ("zh", "也可能是 True 和 False 弄反了")])
def test_a_swapped_mask_is_called_swapped_where_it_hides_every_key(language, says, capsys):
    """triu(T_k - T_q + 1) (True where attention is forbidden): on the decode and first-token cases the mask hides
    every key, and the message named only "no query may see any key" or "misses its own key"."""
    def triu(T_q, T_k):
        return torch.ones(T_q, T_k, dtype=torch.bool).triu(T_k - T_q + 1)

    cases, _ = _hint("01.causal_mask", triu, language, capsys)
    decode, first = cases.splitlines()[1], cases.splitlines()[3]
    assert says in decode and says in first


@pytest.mark.parametrize("language, says", [("en", "? = that head holds numbers from no single K/V head"),
                                            ("zh", "? 表示这个头里的数并非来自同一个 K/V 头")])
def test_repeat_kv_says_what_a_question_mark_means(language, says, capsys):
    """repeat_interleave on d_h and a view to H heads mixes heads: "yours 0→?, 1→?" once said no more."""
    def along_d_h(x, n_rep):
        B, H_kv, T, d_h = x.shape
        return x.repeat_interleave(n_rep, dim=3).view(B, H_kv * n_rep, T, d_h)

    cases, _ = _hint("01.repeat_kv", along_d_h, language, capsys)
    assert "→?" in cases and says in cases


def test_positions_without_padding_are_reported_without_a_padding_legend(capsys):
    set_language("en")
    E.check("02.prefill_positions", lambda m: m.long().cumsum(1))  # counts from 1; the first case has no padding
    first_case = capsys.readouterr().out.splitlines()[0]
    assert "no padding" in first_case and "(-1: padding)" not in first_case


@pytest.mark.parametrize("language, says, hint_says", [("en", "SDPA treats a float mask as additive", ".bool()"),
                                                       ("zh", "SDPA 把浮点掩码当作加性掩码", ".bool()")])
def test_causal_mask_float_zero_one_mask_is_named(language, says, hint_says, capsys):
    """Before, a float 0/1 mask only got "expected a bool tensor", though SDPA would add it to the scores and mask
    nothing."""
    cases, hint = _hint("01.causal_mask", lambda T_q, T_k: causal_mask(T_q, T_k).float(), language, capsys)
    assert says in cases and hint_says in hint


@pytest.mark.parametrize("language, says", [("en", "changed its input in place"), ("zh", "原地修改了输入")])
def test_repeat_kv_that_writes_into_its_input_fails(language, says, capsys):
    """Before, a solution that returned the right heads and then zeroed its input (in an engine, the cache) passed."""
    def scribble(x, n_rep):
        out = S.repeat_kv(x, n_rep).clone()
        x.zero_()
        return out

    cases, hint = _hint("01.repeat_kv", scribble, language, capsys)
    assert says in cases and "x.zero_()" in hint


@pytest.mark.parametrize("language, says", [("en", "x[:, None].expand(B, n_rep, H_kv, T, d_h)"),
                                            ("zh", "x[:, None].expand(B, n_rep, H_kv, T, d_h)")])
def test_repeat_kv_tiled_by_expand_is_named_with_its_axis_order(language, says, capsys):
    """Before, an expand with the new axis before the heads got a hint about `x.repeat`, which it never called."""
    def tiled(x, n_rep):
        B, H_kv, T, d_h = x.shape
        return x[:, None].expand(B, n_rep, H_kv, T, d_h).reshape(B, H_kv * n_rep, T, d_h)

    cases, hint = _hint("01.repeat_kv", tiled, language, capsys)
    assert "i % H_kv" in hint and says in hint and "x[:, :, None].expand(B, H_kv, n_rep, T, d_h)" in hint


@pytest.mark.parametrize("language, says, hint_says", [("en", "integer 0/1 mask (dtype torch.int64)", "dtype torch.bool"),
                                                       ("zh", "0/1 整数掩码（dtype 为 torch.int64）", "torch.bool")])
def test_causal_mask_integer_zero_one_mask_is_named_with_dtype_bool(language, says, hint_says, capsys):
    """Before, an int64 0/1 mask only got "expected a bool tensor", with no hint naming dtype torch.bool."""
    cases, hint = _hint("01.causal_mask", lambda T_q, T_k: causal_mask(T_q, T_k).long(), language, capsys)
    assert says in cases and hint_says in hint


@pytest.mark.parametrize("language, says", [("en", "you repeated along dim 0, the batch axis"), ("zh", "第 0 维")])
def test_repeat_kv_repeated_on_the_batch_axis_is_named(language, says, capsys):
    """Before, repeat_interleave on dim 0 got only "expected shape ..., got ...", never naming the dim."""
    cases, hint = _hint("01.repeat_kv", lambda x, n_rep: x.repeat_interleave(n_rep, dim=0), language, capsys)
    assert says in cases and "dim=1" in hint


@pytest.mark.parametrize("language", ["en", "zh"])
def test_top_p_ascending_sort_and_running_total_over_logits_get_hints_of_their_own(language, capsys):
    """Before, the cases' logits were all negative, so both mistakes kept every token and got one hint naming
    both causes. The cases' logits are now shifted by + 4 (softmax unchanged): each gets its own hint."""
    mistakes = dict(MISTAKES["05.top_p"])
    ascending = _hint("05.top_p", mistakes["keeps the least likely tokens"], language, capsys)[1]
    over_logits = _hint("05.top_p", mistakes["running total over the logits"], language, capsys)[1]
    descending, not_logits = ("sort by probability, descending", "not the logits") if language == "en" else \
        ("从高到低排序", "不是 logits 本身")
    assert descending in ascending and not_logits not in ascending
    assert not_logits in over_logits and descending not in over_logits


@pytest.mark.parametrize("language, says", [("en", "PyTorch's version of this mask, not yours"),
                                            ("zh", "那是 PyTorch 自带的掩码，不是你写的")])
def test_pytorchs_causal_lower_right_is_refused_even_materialised(language, says, capsys):
    """causal_lower_right(T_q, T_k) returned as is got "expected shape [4, 4], got [2, 4, 4]" (a CausalBias is
    a tensor subclass), and `._materialize()` of it passed every case without a line of the learner's."""
    from torch.nn.attention.bias import causal_lower_right

    def materialised(T_q, T_k):
        return causal_lower_right(T_q, T_k)._materialize()

    for fn in (lambda T_q, T_k: causal_lower_right(T_q, T_k), materialised, causal_lower_right):
        cases, _ = _hint("01.causal_mask", fn, language, capsys)
        assert says in cases and "✓" not in cases and "[2, 4, 4]" not in cases


@pytest.mark.parametrize("language, says", [("en", "SDPA's own mask object"), ("zh", "SDPA 自己的掩码对象")])
def test_a_causal_bias_returned_is_named_not_a_shape_error(language, says, capsys):
    from torch.nn.attention.bias import causal_upper_left

    cases, hint = _hint("01.causal_mask", lambda T_q, T_k: causal_upper_left(T_q, T_k), language, capsys)
    assert says in cases and "[2, 4, 4]" not in cases and "[T_q, T_k]" in hint


@pytest.mark.parametrize("language, says, hint_says", [
    ("en", "Without `dim=`, `repeat_interleave` flattens its input", "repeat_interleave(n_rep, dim=1)"),
    ("zh", "不传 `dim=` 时，`repeat_interleave` 会先把输入展平", "repeat_interleave(n_rep, dim=1)")])
def test_repeat_interleave_without_dim_is_named_not_a_bare_shape_error(language, says, hint_says, capsys):
    """Before, x.repeat_interleave(n_rep) (no dim=) got "expected shape [2, 6, 2, 2], got [48]" alone."""
    cases, hint = _hint("01.repeat_kv", lambda x, n_rep: x.repeat_interleave(n_rep), language, capsys)
    assert says in cases.splitlines()[0] and hint_says in hint
