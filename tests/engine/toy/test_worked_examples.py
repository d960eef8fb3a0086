"""Engine examples with numbers worked out independently: seed 000 by hand, sinusoidal encodings,
identity weights, static embeddings, the memory budget and the tokenizer on many scripts."""
import dataclasses
import math

import numpy as np
import pytest

from engine import AttentionConfig, EngineError, compute, explain, tokenize
from engine.core.memory import DEFAULT_MEMORY_BUDGET
from engine.core.memory import check_budget, estimate_trace_bytes, format_bytes
from engine.core.positional import sinusoidal

TABLE = {"小明": [1, 0], "喜欢": [0, 1], "苹果": [1, 1]}
SEED000 = dict(text="小明 喜欢 苹果", tokenizer="whitespace", d_model=2, heads=1, weights="identity",
               positional="none", scale=False, embeddings=TABLE)


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def hand_attention(vectors):
    """Seed 000 by hand: Q = K = V = X, weights = softmax(q·k), output = Σ weight · v."""
    weights, outputs = [], []
    for q in vectors:
        exps = [math.exp(dot(q, k)) for k in vectors]
        row = [e / sum(exps) for e in exps]
        weights.append(row)
        outputs.append([sum(w * v[c] for w, v in zip(row, vectors)) for c in range(len(q))])
    return weights, outputs


def test_seed000_hand_calculation():
    result = compute(AttentionConfig(**SEED000))
    assert result.token_texts == ["小明", "喜欢", "苹果"]
    assert [round(w, 3) for w in result.weights[0, 1].tolist()] == [0.155, 0.422, 0.422]
    assert [round(o, 3) for o in result.output[1].tolist()] == [0.578, 0.845]
    weights, outputs = hand_attention([TABLE[t] for t in result.token_texts])
    # 喜欢 by the formula: exp(0), exp(1), exp(1) over 1 + 2e
    assert weights[1] == pytest.approx([1 / (1 + 2 * math.e), math.e / (1 + 2 * math.e), math.e / (1 + 2 * math.e)])
    np.testing.assert_allclose(result.weights[0], weights, atol=1e-6)
    np.testing.assert_allclose(result.output, outputs, atol=1e-6)
    np.testing.assert_allclose(result.head_outputs[0], outputs, atol=1e-6)  # W_O = I: one head
    np.testing.assert_allclose(result.diff, np.array(outputs) - np.array([TABLE[t] for t in result.token_texts]), atol=1e-6)


def test_seed000_explanation_numbers():
    result = compute(AttentionConfig(**SEED000))
    e = explain(result, 0, 1)
    q = TABLE["喜欢"]
    assert (e.head, e.query_index, e.query_text, e.d_k) == (0, 1, "喜欢", 2)
    assert e.q == pytest.approx(q) and e.divisor == 1.0 and not e.shifted
    expected_exps = [math.exp(dot(q, TABLE[t])) for t in ("小明", "喜欢", "苹果")]
    assert e.normaliser == pytest.approx(sum(expected_exps), abs=1e-6)
    assert e.normaliser == pytest.approx(1 + 2 * math.e, abs=1e-6)
    for term, key, exp_value in zip(e.terms, ("小明", "喜欢", "苹果"), expected_exps):
        assert term.key_text == key and not term.masked
        assert term.products == pytest.approx([a * b for a, b in zip(q, TABLE[key])])
        assert term.score == pytest.approx(dot(q, TABLE[key])) == sum(term.products)
        assert term.exp_value == pytest.approx(exp_value, abs=1e-6)
        assert term.weight == pytest.approx(exp_value / sum(expected_exps), abs=1e-6)
        assert term.weighted_v == pytest.approx([term.weight * c for c in TABLE[key]], abs=1e-6)
    assert e.output == pytest.approx([0.5776, 0.8447], abs=1e-4)
    text = e.to_text()
    for number in ("0.155", "0.422", "2.718", "6.437", "[0.578, 0.845]"):
        assert number in text


def test_explanation_with_scaling_mask_and_temperature():
    config = AttentionConfig(text="the cat sat on it", d_model=8, heads=2, mask="causal", temperature=2.0, seed=3)
    result = compute(config)
    e = explain(result, 1, 2)
    assert e.divisor == pytest.approx(math.sqrt(4) * 2.0)
    for j, term in enumerate(e.terms):
        assert term.masked == (j > 2)
        if term.masked:
            assert term.scaled == -math.inf and term.exp_value == 0 and term.weight == 0
        else:
            assert term.scaled == pytest.approx(term.score / e.divisor, rel=1e-5, abs=1e-6)
            assert term.exp_value == pytest.approx(math.exp(term.scaled), rel=1e-6)
            assert term.weight == pytest.approx(term.exp_value / e.normaliser, abs=1e-6)
    assert "−∞" in e.to_text()
    with pytest.raises(EngineError):
        explain(result, 2, 0)
    with pytest.raises(EngineError):
        explain(result, 0, 5)


def test_explanation_of_very_negative_scores_does_not_underflow():
    result = compute(AttentionConfig(text="a b c", d_model=4, heads=1, seed=1))
    shifted = dataclasses.replace(result, scaled=result.scaled - np.float32(2000))  # ~ same softmax
    e = explain(shifted, 0, 0)
    assert e.shifted and e.normaliser > 0  # exp(−2000) would underflow to a 0 sum
    for term in e.terms:  # float32 keeps ~1e-4 of a number near 2000
        assert term.exp_value / e.normaliser == pytest.approx(term.weight, abs=1e-3)


@pytest.mark.parametrize("d_model", [8, 7, 1])
def test_sinusoidal_matches_the_formula(d_model):
    n = 9
    expected = np.empty((n, d_model))
    for pos in range(n):
        for i in range(d_model):
            angle = pos / 10000 ** (2 * (i // 2) / d_model)
            expected[pos, i] = math.sin(angle) if i % 2 == 0 else math.cos(angle)
    np.testing.assert_allclose(sinusoidal(n, d_model), expected, atol=1e-6)
    result = compute(AttentionConfig(text=" ".join("abcdefghi"), d_model=d_model, heads=1))
    np.testing.assert_allclose(result.positional, expected, atol=1e-6)
    np.testing.assert_allclose(result.x, result.embeddings + expected, atol=1e-6)


@pytest.mark.parametrize("positional", ["none", "sinusoidal", "rope"])
def test_identity_weights_give_q_k_v_equal_x(positional):
    result = compute(AttentionConfig(text="小明 喜欢 吃 苹果", d_model=8, heads=2, weights="identity", positional=positional))
    for name in ("w_q", "w_k", "w_v", "w_o"):
        np.testing.assert_array_equal(getattr(result, name), np.eye(8))
    split = result.x.reshape(result.n, 2, 4).transpose(1, 0, 2)  # (heads, n, d_k)
    q, k = (result.q_unrotated, result.k_unrotated) if positional == "rope" else (result.q, result.k)
    for array in (q, k, result.v):
        np.testing.assert_allclose(array, split, atol=1e-7)


def test_same_token_same_static_embedding_across_sentences_and_positions():
    config = AttentionConfig(text="苹果 很 甜 , 我 喜欢 苹果", tokenizer="whitespace", d_model=16, heads=2, seed=7)
    first = compute(config)
    second = compute(config.replace(text="他 买 了 苹果"))
    apple = first.embeddings[0]
    np.testing.assert_array_equal(first.embeddings[6], apple)
    np.testing.assert_array_equal(second.embeddings[3], apple)
    assert not np.allclose(first.x[0], first.x[6])  # sinusoidal positions make x differ
    other_seed = compute(config.replace(seed=8))
    assert not np.allclose(other_seed.embeddings[0], apple)


def test_user_table_overrides_only_its_tokens():
    config = AttentionConfig(text="小明 喜欢 苹果", tokenizer="whitespace", d_model=4, heads=1)
    plain = compute(config)
    table = {"苹果": [0.5, -1, 2, 0]}
    with_table = compute(config.replace(embeddings=table))
    np.testing.assert_array_equal(with_table.embeddings[2], table["苹果"])
    np.testing.assert_array_equal(with_table.embeddings[:2], plain.embeddings[:2])
    assert with_table.config.embeddings["苹果"] == (0.5, -1.0, 2.0, 0.0)


@pytest.mark.parametrize("bad", [{"a": [1, float("nan")]}, {"a": [1, float("inf")]}, {"a": [1]}, {"a": [1, "x"]},
                                 {"a": [1, 10**400]}, {"a": [1, 1e7]}, {"a": []}, ["a"], {"": [1, 2]}])
def test_bad_tables_are_engine_errors(bad):
    with pytest.raises(EngineError):
        AttentionConfig(text="a", d_model=2, heads=1, embeddings=bad)


def test_memory_2048_tokens_512_wide_8_heads_fits_in_2_gib():
    for rope in (False, True):
        estimate = check_budget(2048, 512, 8, rope, DEFAULT_MEMORY_BUDGET)
        assert estimate == estimate_trace_bytes(2048, 512, 8, rope) < 2 * 1024**3
    AttentionConfig(text=" ".join(["w"] * 2048), d_model=512, heads=8)  # accepted


def test_over_budget_error_names_the_estimate():
    config = AttentionConfig(text="a b c", d_model=64, heads=4, memory_budget=1000)
    with pytest.raises(EngineError) as caught:
        compute(config)
    estimate = estimate_trace_bytes(3, 64, 4, False)
    assert format_bytes(estimate) in str(caught.value)
    assert "1000 B" in str(caught.value)


def test_estimate_covers_the_trace():
    result = compute(AttentionConfig(text="one two three four five", d_model=32, heads=4, positional="rope"))
    assert result.nbytes <= result.estimated_bytes


def spans_ok(text, tokens):
    return all(text[t.start:t.end] == t.text for t in tokens)


def test_chinese_segmentation():
    tokens = tokenize("小明喜欢苹果")
    assert [(t.text, t.start, t.end) for t in tokens] == [("小明", 0, 2), ("喜欢", 2, 4), ("苹果", 4, 6)]


def test_english_words_and_punctuation():
    text = "Hello, world! It's fine."
    tokens = tokenize(text)
    assert [t.text for t in tokens] == ["Hello", ",", "world", "!", "It's", "fine", "."]
    assert spans_ok(text, tokens)
    assert [t.text for t in tokenize(text, "whitespace")] == ["Hello,", "world!", "It's", "fine."]


def test_control_characters_are_skipped():
    assert [t.text for t in tokenize("a\x00b \u200b c")] == ["a", "b", "c"]


STRANGE = ["I ❤️ 🍎!", "a\x00b", "\u200b", "\x00\x01\x02", "\u200b\u200c\n\t", "مرحبا بالعالم", "नमस्ते दुनिया",
           "Hello 世界 مرحبا नमस्ते 🍎 ok", "👨‍👩‍👧 family", "e\u0301te\u0301", "\ufeff", "   ", "𠀀𠀁 text"]


@pytest.mark.parametrize("mode", ["auto", "whitespace", "chars", "jieba"])
@pytest.mark.parametrize("text", STRANGE)
def test_strange_text_never_crashes(text, mode):
    tokens = tokenize(text, mode)
    assert spans_ok(text, tokens)
    try:
        result = compute(AttentionConfig(text=text, tokenizer=mode, d_model=4, heads=2))
    except EngineError as error:
        assert not tokens and ("no tokens" in str(error) or "empty" in str(error))
    else:
        assert result.n == len(tokens) > 0
        np.testing.assert_allclose(result.weights.sum(-1), 1, atol=1e-5)


def test_combining_marks_stay_with_their_letters():
    assert [t.text for t in tokenize("नमस्ते दुनिया")] == ["नमस्ते", "दुनिया"]
    assert [t.text for t in tokenize("e\u0301te\u0301 café")] == ["e\u0301te\u0301", "café"]
    assert [t.text for t in tokenize("مَرْحَبًا")] == ["مَرْحَبًا"]
    assert [t.text for t in tokenize("❤\ufe0f ok 👩\u200d💻!")] == ["❤\ufe0f", "ok", "👩\u200d💻", "!"]


def test_numpy_scalars_in_config_become_plain_python_values():
    import json

    config = AttentionConfig(text="a b", d_model=np.int64(4), heads=np.int32(2), seed=np.uint32(3), scale=np.bool_(False))
    assert json.loads(json.dumps(config.to_dict()))["d_model"] == 4
    assert AttentionConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    with pytest.raises(EngineError):
        AttentionConfig(text="a", memory_budget=True)


@pytest.mark.parametrize("bad", [dict(text="a\ud800"), dict(temperature=1e-9), dict(temperature=float("inf"))])
def test_config_refuses_what_would_crash_or_give_nan(bad):
    with pytest.raises(EngineError):
        AttentionConfig(**bad)


def test_extreme_allowed_values_stay_finite():
    from engine.toy.config import MAX_EMBEDDING_ABS, MIN_TEMPERATURE

    big = MAX_EMBEDDING_ABS
    table = {"a": [big, -big, big, big], "b": [-big, big, -big, big]}
    for scale in (True, False):
        result = compute(AttentionConfig(text="a b a", d_model=4, heads=2, temperature=MIN_TEMPERATURE,
                                          scale=scale, embeddings=table))
        assert np.isfinite(result.output).all()
        np.testing.assert_allclose(result.weights.sum(-1), 1, atol=1e-6)


@pytest.mark.parametrize("n, masked", [(5, False), (7, True), (64, False), (90, True)])
def test_attend_matches_the_plain_reference(n, masked):
    """attend (whole-array path at these sizes; tiles are tested in test_parallel) against the five-line math."""
    import math

    from engine.core.attention import attend, causal_mask, reference_attention

    rng = np.random.default_rng(n)
    q, k, v = (rng.standard_normal((8, n, 16)).astype(np.float32) for _ in range(3))
    mask = causal_mask(n) if masked else None
    fast = attend(q, k, v, divisor=math.sqrt(16), mask=mask)["head_outputs"]
    reference = reference_attention(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), mask)
    np.testing.assert_allclose(fast, reference, atol=2e-5)
