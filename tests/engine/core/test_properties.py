"""Hypothesis properties of the engine: softmax rows, the causal mask, permutation equivariance,
RoPE's relative positions, and the vectorized engine against a plain Python loop."""
import cmath
import math
import string

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from engine import AttentionConfig, EngineError, compute
from engine.toy.config import MASKS, POSITIONALS, TOKENIZERS, WEIGHTS
from engine.core.positional import apply_rope

FAST = settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
ALPHABET = string.ascii_letters + string.digits + ",.!?'" + "小明喜欢吃苹果你好世界"
words = st.text(alphabet=ALPHABET, min_size=1, max_size=4)


@st.composite
def configs(draw, **fixed):
    """Small random configurations; ``fixed`` overrides any field."""
    heads = fixed.pop("heads", None) or draw(st.integers(1, 4))
    positional = fixed.pop("positional", None) or draw(st.sampled_from(POSITIONALS))
    d_k = 2 * draw(st.integers(1, 3)) if positional == "rope" else draw(st.integers(1, 5))
    settings_ = dict(
        text=" ".join(draw(st.lists(words, min_size=1, max_size=7))),
        tokenizer=draw(st.sampled_from(TOKENIZERS)),
        d_model=heads * d_k,
        heads=heads,
        seed=draw(st.integers(0, 2**32 - 1)),
        positional=positional,
        mask=draw(st.sampled_from(MASKS)),
        scale=draw(st.booleans()),
        temperature=draw(st.floats(0.25, 4.0)),
        weights=draw(st.sampled_from(WEIGHTS)),
    )
    settings_.update(fixed)
    return AttentionConfig(**settings_)


@FAST
@given(configs())
def test_every_weights_row_sums_to_one(config):
    result = compute(config)
    assert np.isfinite(result.weights).all() and (result.weights >= 0).all()
    np.testing.assert_allclose(result.weights.sum(axis=-1), 1.0, atol=1e-5)


@FAST
@given(configs(mask="causal"))
def test_causal_mask_zeroes_the_future_exactly(config):
    result = compute(config)
    above = np.triu_indices(result.n, k=1)
    assert (result.weights[:, above[0], above[1]] == 0).all()
    assert np.isneginf(result.scaled[:, above[0], above[1]]).all()
    np.testing.assert_allclose(result.weights[:, 0, 0], 1.0)  # the first token sees only itself


@FAST
@given(
    tokens=st.lists(st.text(alphabet=string.ascii_letters, min_size=1, max_size=5), min_size=2, max_size=7, unique=True),
    heads=st.integers(1, 3),
    d_k=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    data=st.data(),
)
def test_without_positions_permuting_tokens_permutes_outputs(tokens, heads, d_k, seed, data):
    perm = data.draw(st.permutations(range(len(tokens))))
    config = AttentionConfig(text=" ".join(tokens), tokenizer="whitespace", d_model=heads * d_k, heads=heads,
                             seed=seed, positional="none")
    original = compute(config)
    permuted = compute(config.replace(text=" ".join(tokens[p] for p in perm)))
    np.testing.assert_allclose(permuted.output, original.output[perm], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(permuted.weights, original.weights[:, perm][:, :, perm], rtol=1e-5, atol=1e-6)


@FAST
@given(token=words, n=st.integers(2, 8), heads=st.integers(1, 3), half=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_rope_scores_depend_only_on_the_offset(token, n, heads, half, seed):
    assume(" " not in token)
    config = AttentionConfig(text=" ".join([token] * n), tokenizer="whitespace", d_model=heads * 2 * half,
                             heads=heads, seed=seed, positional="rope")
    result = compute(config)
    # identical rows of x; BLAS may still differ in the last bit between rows
    np.testing.assert_allclose(result.q_unrotated, result.q_unrotated[:, :1].repeat(n, axis=1), rtol=1e-6, atol=1e-6)
    tolerance = 1e-5 * max(1.0, float(np.abs(result.scores).max()))
    for offset in range(-(n - 1), n):
        diagonal = np.diagonal(result.scores, offset, axis1=1, axis2=2)  # (heads, n − |offset|)
        np.testing.assert_allclose(diagonal, diagonal[:, :1].repeat(diagonal.shape[1], axis=1), atol=tolerance)


@FAST
@given(q=st.lists(st.floats(-3, 3), min_size=8, max_size=8), k=st.lists(st.floats(-3, 3), min_size=8, max_size=8))
def test_apply_rope_is_a_rotation_by_position(q, k):
    n, d_k = 6, 8
    rq = apply_rope(np.tile(np.array(q)[None, None], (1, n, 1)))[0]  # (n, d_k) float64: q at every position
    rk = apply_rope(np.tile(np.array(k)[None, None], (1, n, 1)))[0]
    for m in range(n):  # independently: pair p as a complex number times e^{i·m·θ_p}
        for p in range(d_k // 2):
            z = complex(q[2 * p], q[2 * p + 1]) * cmath.exp(1j * m * 10000 ** (-2 * p / d_k))
            assert rq[m, 2 * p] == pytest.approx(z.real, abs=1e-9)
            assert rq[m, 2 * p + 1] == pytest.approx(z.imag, abs=1e-9)
    dots = rq @ rk.T  # q_m · k_j depends only on m − j
    for m in range(1, n):
        for j in range(1, n):
            assert dots[m, j] == pytest.approx(dots[m - 1, j - 1], abs=1e-9)


def reference(result):
    """The whole forward pass as plain float64 Python loops over heads and tokens."""
    config = result.config
    x = result.x.astype(np.float64).tolist()
    w = {name: getattr(result, name).astype(np.float64).tolist() for name in ("w_q", "w_k", "w_v", "w_o")}
    n, d, heads = len(x), config.d_model, config.heads
    d_k = d // heads
    divisor = (math.sqrt(d_k) if config.scale else 1.0) * config.temperature
    out = {key: [] for key in ("q", "k", "v", "scores", "scaled", "weights", "head_outputs")}
    concat = [[0.0] * d for _ in range(n)]
    for h in range(heads):
        columns = range(h * d_k, (h + 1) * d_k)
        proj = {name: [[sum(x[i][c] * w[name][c][e] for c in range(d)) for e in columns] for i in range(n)]
                for name in ("w_q", "w_k", "w_v")}
        q, k, v = proj["w_q"], proj["w_k"], proj["w_v"]
        if config.positional == "rope":
            q, k = ([rotate(row, i, d_k) for i, row in enumerate(m)] for m in (q, k))
        scores = [[sum(a * b for a, b in zip(q[i], k[j])) for j in range(n)] for i in range(n)]
        scaled = [[-math.inf if config.mask == "causal" and j > i else s / divisor for j, s in enumerate(row)]
                  for i, row in enumerate(scores)]
        weights = []
        for row in scaled:
            top = max(row)
            exps = [0.0 if s == -math.inf else math.exp(s - top) for s in row]
            weights.append([e / sum(exps) for e in exps])
        head_out = [[sum(weights[i][j] * v[j][e] for j in range(n)) for e in range(d_k)] for i in range(n)]
        for i in range(n):
            concat[i][h * d_k:(h + 1) * d_k] = head_out[i]
        for key, value in zip(out, (q, k, v, scores, scaled, weights, head_out)):
            out[key].append(value)
    out["concat"] = concat
    out["output"] = [[sum(concat[i][c] * w["w_o"][c][e] for c in range(d)) for e in range(d)] for i in range(n)]
    return out


def rotate(row, position, d_k):
    rotated = list(row)
    for p in range(d_k // 2):
        angle = position * 10000 ** (-2 * p / d_k)
        a, b = row[2 * p], row[2 * p + 1]
        rotated[2 * p] = a * math.cos(angle) - b * math.sin(angle)
        rotated[2 * p + 1] = a * math.sin(angle) + b * math.cos(angle)
    return rotated


@settings(max_examples=40, deadline=None, database=None)
@given(configs())
def test_vectorized_engine_equals_a_python_loop(config):
    result = compute(config)
    expected = reference(result)
    for name, value in expected.items():
        value = np.array(value)
        scale = max(1.0, float(np.abs(value[np.isfinite(value)]).max()))
        np.testing.assert_allclose(getattr(result, name), value, rtol=1e-5, atol=1e-5 * scale, err_msg=name)


ANY_CHARACTER = st.one_of(st.characters(exclude_categories=()), st.characters(categories=["Cs"]))  # lone surrogates too


@settings(max_examples=150, deadline=None, database=None)
@given(text=st.text(alphabet=ANY_CHARACTER, max_size=24), tokenizer=st.sampled_from(TOKENIZERS))
def test_any_unicode_text_returns_or_raises_engine_error(text, tokenizer):
    try:
        result = compute(AttentionConfig(text=text, tokenizer=tokenizer, d_model=4, heads=2))
    except EngineError:
        return
    assert result.n >= 1
    assert all(text[t.start:t.end] == t.text for t in result.tokens)
    assert np.isfinite(result.output).all()
