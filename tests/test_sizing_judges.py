"""Notebook 04's judges (utils/exercises/sizing_mistakes.py): each catalogued mistake gets its own count, and the
messages a reviewer found unclear (a KeyError on an optional config field, "1 times as many") say what happened."""
import pytest

from utils import exercises as E
from utils.exercises import solutions as S
from utils.exercises.sizing_mistakes import LLAMA3_8B, REQUEST_CASES, request_mistakes
from utils.i18n import set_language
from utils.sizing import MODEL_PRESETS


@pytest.fixture(autouse=True)
def english_after():
    yield
    set_language("en")


@pytest.mark.parametrize("case", REQUEST_CASES, ids=[c[0] for c in REQUEST_CASES])
def test_no_two_request_mistakes_share_a_count(case):
    """Before: on 20.7 GiB, free_bytes minus the weights gave 5 requests, as all 32 query heads did, and was
    named as the heads."""
    _, config, T, free, dtype, model = case
    mistakes = request_mistakes(config, T, free, dtype, MODEL_PRESETS[model].n_params)
    for i, (name, counts, _, _) in enumerate(mistakes):
        for other, other_counts, _, _ in mistakes[i + 1:]:
            assert not counts & other_counts, (name, other, counts & other_counts)


def test_weights_taken_off_free_bytes_again_are_named(capsys):
    def minus_weights(c, T, free, dt):
        return (free - 2 * MODEL_PRESETS["Llama-3-8B"].n_params) // S.kv_bytes_from_config(c, T, 1, dt)

    E.check("04.max_requests", minus_weights)
    first, *_ = capsys.readouterr().out.splitlines()
    assert "expected 37, got 22: that is what fits once the weights are taken off free_bytes" in first
    assert "query heads" not in first


@pytest.mark.parametrize("language, says, hint", [
    ("en", "KeyError: 'head_dim'; this config.json has no head_dim", "d_h = hidden_size // num_attention_heads"),
    ("zh", "这个 config.json 里没有 head_dim", "d_h = hidden_size // num_attention_heads")])
def test_a_keyerror_on_an_optional_field_says_the_field_is_optional(language, says, hint, capsys):
    """Before: config["head_dim"] on Llama-3-8B's config printed a bare KeyError and the case's formula hint."""
    set_language(language)
    E.check("04.kv_bytes_from_config", lambda c, T, B, dt: 2 * c["num_hidden_layers"] * B * (
        c.get("num_key_value_heads") or c["num_attention_heads"]) * T * c["head_dim"] * S.DTYPE_BYTES[dt])
    out = capsys.readouterr().out
    assert says in out and hint in out.splitlines()[-1]


def test_one_token_off_is_said_in_tokens_and_a_near_miss_as_a_difference(capsys):
    """Before: seq_len + 1 positions printed "(1 times as many)"."""
    E.check("04.kv_bytes_from_config", lambda c, T, B, dt: S.kv_bytes_from_config(c, T + 1, B, dt))
    out = capsys.readouterr().out
    assert "one token too many per sequence (4,097 positions, not 4,096)" in out and "times as many" not in out
    E.check("04.kv_bytes_from_config", lambda c, T, B, dt: S.kv_bytes_from_config(c, T, B, dt) + 7)
    out = capsys.readouterr().out
    assert "got 1,610,612,743 (+7 bytes)" in out and "times as many" not in out


def test_request_counts_are_printed_with_thousands_separators(capsys):
    E.check("04.max_requests", lambda c, T, free, dt: free // S.kv_bytes_from_config(c, 1, 1, dt))
    assert "got 307,200: that many tokens fit" in capsys.readouterr().out


def test_the_configs_are_the_published_shapes():
    cfg = MODEL_PRESETS["Llama-3-8B"]
    assert (LLAMA3_8B["num_hidden_layers"], LLAMA3_8B["num_key_value_heads"]) == (cfg.n_layers, cfg.n_kv_heads)


@pytest.mark.parametrize("language, says", [("en", "8 times the cache: you counted bits, not bytes"),
                                            ("zh", "缓存的 8 倍：你算的是位数")])
def test_a_cache_counted_in_bits_is_named(language, says, capsys):
    """Before: 16 bits per float16 number (8 times the bytes) got only "8 times as many"."""
    set_language(language)
    E.check("04.kv_bytes_from_config", lambda c, T, B, dt: 8 * S.kv_bytes_from_config(c, T, B, dt))
    assert says in capsys.readouterr().out


def test_a_float_operand_of_floor_division_is_told_to_stay_int_not_to_use_floor_division(capsys):
    """Before: free_bytes // float(per_request) was told "use // to stay in integers", though it used //."""
    E.check("04.max_requests", lambda c, T, free, dt: free // float(S.kv_bytes_from_config(c, T, 1, dt)))
    out = capsys.readouterr().out
    assert "One float operand makes even // return a float" in out and "wrap the result in int()" in out
    assert "use // to stay in integers" not in out


@pytest.mark.parametrize("language, says", [("en", "all 16 query heads, 2 times the cache; or you counted bfloat16 as 4 "
                                                   "bytes per number"),
                                            ("zh", "也可能是把 bfloat16 按每个数 4 字节算了")])
def test_a_16_bit_cache_counted_as_4_bytes_is_named_beside_the_heads_it_equals(language, says, capsys):
    """Before: on Gemma-2-9B (H / H_kv = 2) bfloat16 counted as 4 bytes was named "all 16 query heads" only, and on
    Llama-3-8B it got no name at all."""
    set_language(language)
    E.check("04.max_requests", lambda c, T, free, dt: free // S.kv_bytes_from_config(
        c, T, 1, "float32" if dt in ("float16", "bfloat16") else dt))
    out = capsys.readouterr().out
    assert says in out
    assert "float16 takes 2 bytes per number, not 4" in out or "float16 每个数占 2 字节，不是 4 字节" in out


def test_a_true_division_that_divides_exactly_is_told_to_use_floor_division(capsys):
    """Before: C / H as d_h (a float of the right value) was told only about a float operand of //."""
    E.check("04.kv_bytes_from_config", lambda c, T, B, dt: S.kv_bytes_from_config(
        {**c, "head_dim": c.get("head_dim") or c["hidden_size"] / c["num_attention_heads"]}, T, B, dt))
    assert "`/` always returns a float, even when it divides exactly: use `//`" in capsys.readouterr().out


def test_an_unsolved_kv_bytes_from_config_called_by_max_requests_is_named(capsys):
    """Before: max_requests calling the kv_bytes_from_config stub was told "not written yet", blaming itself."""
    def kv_bytes_from_config(config, seq_len, batch_size, dtype):
        raise NotImplementedError

    def max_requests(config, seq_len, free_bytes, dtype):
        return free_bytes // kv_bytes_from_config(config, seq_len, 1, dtype)

    E.check("04.max_requests", max_requests)
    out = capsys.readouterr().out
    assert "your function calls kv_bytes_from_config, which still raises NotImplementedError" in out
    assert "not written yet" not in out

    def own_stub(config, seq_len, free_bytes, dtype):
        raise NotImplementedError
    E.check("04.max_requests", own_stub)
    assert "not written yet" in capsys.readouterr().out
