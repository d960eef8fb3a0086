"""Value-weighted attention, rollout, head ablation and head statistics, each against an
independent calculation: float64 loops written here, and for ablating MiniLM heads
tests/fixtures/ablation_reference.npz, written by scripts/make_ablation_reference.py with
Hugging Face transformers (PyTorch) zeroing the heads' columns before W_O.
"""
from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest

from tests import FIXTURES
from engine import AttentionConfig, EngineError, compute
from engine.analysis.ablation import (
    all_heads, mean_cosine_distance, rank_heads, token_cosines, top_token_probability_drop,
)
from engine.analysis.arrays import analysis_arrays
from engine.core.hooks import check_ablation
from engine.analysis.head_stats import (
    caption, head_stats, head_table, induction_scores, name_heads, repeated_random_tokens, special_mask,
    table_csv,
)
from engine.analysis.rollout import attention_rollout, rollout, value_weighted_rollout
from engine.analysis.value_norms import explain_cell, value_weighted

FIXTURE = FIXTURES / "ablation_reference.npz"
SENTENCE = "The animal didn't cross the street because it was too tired."
TOY = dict(text="the cat sat on the mat because it was tired", tokenizer="whitespace", d_model=16, heads=4)


@pytest.fixture(scope="module")
def model(minilm_model):
    return minilm_model  # loaded once per session (tests/conftest.py)


@pytest.fixture(scope="module")
def trace(model):
    return model.run(SENTENCE)


@pytest.fixture(scope="module")
def reference():
    with np.load(FIXTURE, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def random_attentions(layers, heads, n, seed=0, causal=False):
    rng = np.random.default_rng(seed)
    logits = rng.normal(scale=2.0, size=(layers, heads, n, n))
    if causal:
        logits[..., np.triu(np.ones((n, n), bool), 1)] = -np.inf
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# --- value-weighted attention ------------------------------------------------------------------

def loop_value_norms(attentions, values, output_weights):
    """‖α_ij · (v_hj · W_O[h·d_k:(h+1)·d_k])‖ for every (layer, head, i, j), one at a time, float64."""
    layers, heads, n, _ = attentions.shape
    out = np.zeros((layers, heads, n, n))
    for l in range(layers):
        w_o = np.asarray(output_weights[l], np.float64)
        for h in range(heads):
            d_k = values[l].shape[-1]
            rows = w_o[h * d_k:(h + 1) * d_k]
            for i in range(n):
                for j in range(n):
                    vector = float(attentions[l, h, i, j]) * (np.asarray(values[l][h, j], np.float64) @ rows)
                    out[l, h, i, j] = math.sqrt(sum(x * x for x in vector))
    return out


def test_value_norms_toy_equal_a_loop():
    result = compute(AttentionConfig(**TOY))
    arrays = analysis_arrays(result)
    expected = loop_value_norms(np.asarray(result.weights, np.float64)[None], [result.v], [result.w_o])
    assert arrays["value_norms"].shape == (1, 4, result.n, result.n)
    np.testing.assert_allclose(arrays["value_norms"], expected, rtol=1e-5, atol=1e-7 * expected.max())


@pytest.mark.slow
def test_value_norms_minilm_equal_a_loop_with_value_bias(model, trace):
    # v recomputed here from the layer's input, W_V and b_V in float64: a forgotten bias or a
    # W_O sliced by columns instead of rows would show.
    d, heads, d_k = 384, 12, 32
    values = []
    for l, w in enumerate(model.weights.layers):
        h = np.asarray(trace.hidden_states[l], np.float64)
        v = h @ np.asarray(w.qkv_weight[:, 2 * d:], np.float64) + np.asarray(w.qkv_bias[2 * d:], np.float64)
        values.append(v.reshape(trace.n, heads, d_k).transpose(1, 0, 2))
    expected = loop_value_norms(trace.attentions, values, [w.output_weight for w in model.weights.layers])
    got = analysis_arrays(trace, model.weights)["value_norms"]
    assert got.shape == (6, 12, trace.n, trace.n)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6 * expected.max())


def test_value_norms_of_switched_off_heads_are_zero():
    result = compute(AttentionConfig(**TOY), ablate=frozenset({(0, 2)}))
    norms = analysis_arrays(result)["value_norms"]
    assert not norms[0, 2].any() and norms[0, 1].all()


def test_grouped_query_values_and_one_cell():
    rng = np.random.default_rng(7)
    heads, kv_heads, n, d_k, d = 6, 2, 5, 4, 24
    weights = random_attentions(1, heads, n, seed=8)[0]
    v = rng.normal(size=(kv_heads, n, d_k))
    w_o = rng.normal(size=(heads * d_k, d))
    expanded = np.stack([v[h // 3] for h in range(heads)])  # query head h reads value head h // 3
    expected = loop_value_norms(weights[None], [expanded], [w_o])[0]
    np.testing.assert_allclose(value_weighted(weights, v, w_o), expected, rtol=1e-10)
    cell = explain_cell(weights, v, w_o, head=4, query=2, key=3)
    assert cell["value_norm"] == pytest.approx(expected[4, 2, 3], rel=1e-12)
    assert cell["alpha"] == weights[4, 2, 3]
    np.testing.assert_allclose(cell["f"], v[1, 3] @ w_o[16:20])


@pytest.mark.slow
def test_analysis_arrays_of_an_ablated_minilm_run(model):
    from engine.models.bert import forward

    tokenized = model.tokenize(SENTENCE)
    ablated = forward(model.weights, model.config, tokenized.input_ids, tokenized.tokens,
                      ablate=frozenset({(2, h) for h in range(12)} | {(4, 3)}))
    arrays = analysis_arrays(ablated, model.weights)
    assert not arrays["value_norms"][2].any() and not arrays["value_norms"][4, 3].any()
    assert arrays["value_norms"][4, 2].any()
    np.testing.assert_allclose(arrays["rollout"][2], arrays["rollout"][1])  # layer 2 moved nothing
    kept = [h for h in range(12) if h != 3]
    layer4 = ablated.attentions[4, kept].astype(np.float64).sum(axis=0) / 12  # head 3: zero weights, rows 11/12
    mixed = (0.5 * layer4 + 0.5 * np.eye(ablated.n)) / (0.5 * 11 / 12 + 0.5)
    np.testing.assert_allclose(arrays["rollout"][4], mixed @ arrays["rollout"][3], rtol=1e-6, atol=1e-9)


# --- rollout ------------------------------------------------------------------------------------

def loop_rollout(mixing):
    """R_0 = Â_0, R_l = Â_l · R_(l−1), Â = rows_normalised(0.5·A + 0.5·I), by loops."""
    layers, n, _ = mixing.shape
    result, previous = [], None
    for l in range(layers):
        mixed = [[0.5 * mixing[l, i, j] + (0.5 if i == j else 0.0) for j in range(n)] for i in range(n)]
        mixed = [[x / sum(row) for x in row] for row in mixed]
        if previous is None:
            current = mixed
        else:
            current = [[sum(mixed[i][k] * previous[k][j] for k in range(n)) for j in range(n)] for i in range(n)]
        result.append(current)
        previous = current
    return np.array(result)


def test_attention_rollout_equals_the_formula():
    a = random_attentions(4, 3, 6, seed=1, causal=True)  # asymmetric: the order of the product matters
    mean = np.array([[[sum(a[l, h, i, j] for h in range(3)) / 3 for j in range(6)] for i in range(6)]
                     for l in range(4)])
    got = attention_rollout(a)
    np.testing.assert_allclose(got, loop_rollout(mean), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got.sum(axis=-1), 1.0)
    # layer 0's entry is its own mixing alone: 0.5·A + 0.5·I
    np.testing.assert_allclose(got[0], 0.5 * mean[0] + 0.5 * np.eye(6))


@pytest.mark.slow
def test_value_weighted_rollout_equals_the_formula(model, trace):
    norms = analysis_arrays(trace, model.weights)["value_norms"].astype(np.float64)
    layers, heads, n, _ = norms.shape
    summed = norms.sum(axis=1)
    normalised = np.array([[[summed[l, i, j] / sum(summed[l, i]) for j in range(n)] for i in range(n)]
                           for l in range(layers)])
    np.testing.assert_allclose(value_weighted_rollout(norms), loop_rollout(normalised), rtol=1e-10, atol=1e-14)


def test_rollout_counts_switched_off_heads_as_zero_weights():
    # a switched-off head moves nothing: zero weights in the mean over all three heads, so its share
    # stays with the residual once the rows are renormalised (engine.analysis.rollout.mean_attention)
    a = random_attentions(2, 3, 5, seed=2)
    kept = np.array([[True, False, True], [False, False, False]])
    got = attention_rollout(a, heads_kept=kept)
    layer0 = (a[0, 0] + a[0, 2]) / 3  # rows sum to 2/3
    mixed = 0.5 * layer0 + 0.5 * np.eye(5)
    np.testing.assert_allclose(got[0], mixed / (0.5 * 2 / 3 + 0.5))
    assert np.diag(got[0]).min() > np.diag(attention_rollout(a)[0]).min() - 1e-12  # more stays with itself
    np.testing.assert_allclose(got[1], got[0])  # a layer with no head left mixes nothing


# --- switching heads off ------------------------------------------------------------------------

def test_toy_ablation_zeroes_the_head_before_w_o():
    plain = compute(AttentionConfig(**TOY))
    ablated = compute(AttentionConfig(**TOY), ablate=frozenset({(0, 1), (0, 3)}))
    d_k = 4
    w_o = np.asarray(plain.w_o, np.float64)
    expected = sum(np.asarray(plain.head_outputs[h], np.float64) @ w_o[h * d_k:(h + 1) * d_k] for h in (0, 2))
    np.testing.assert_allclose(ablated.output, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(ablated.weights, plain.weights)  # what the head would attend
    assert not ablated.head_outputs[1].any() and ablated.ablate == frozenset({(0, 1), (0, 3)})


@pytest.mark.parametrize("pair, words", [
    ((1, 0), "layer 1 head 0"), ((0, 4), "layer 0 head 4"), ((0, -1), "layer 0 head -1"), ((-1, 0), "layer -1 head 0"),
    (("0", 1), "'0'"), ((0,), "(0,)"), ((0, True), "True"),
])
def test_toy_ablation_refuses_a_bad_pair(pair, words):
    with pytest.raises(EngineError) as error:
        compute(AttentionConfig(**TOY), ablate=frozenset({pair}))
    assert words in str(error.value) and error.value.field == "ablate"


@pytest.mark.slow
def test_minilm_ablation_refuses_a_head_out_of_range(model):
    from engine.models.bert import forward

    with pytest.raises(EngineError, match="layer 6 head 0") as error:
        forward(model.weights, model.config, [101, 102], ablate=frozenset({(6, 0)}))
    assert error.value.values == {"layer": 6, "head": 0, "last_layer": 5, "last_head": 11}
    assert check_ablation([(5, 11), (np.int64(0), 0)], 6, 12) == frozenset({(5, 11), (0, 0)})


@pytest.mark.slow
def test_minilm_ablation_equals_transformers(model, reference):
    from engine.models.bert import forward

    tokenized = model.tokenize(str(reference["text"]))
    assert tokenized.input_ids.tolist() == reference["ids"].tolist()
    cases = [frozenset(map(tuple, case)) for case in json.loads(str(reference["cases"]))]
    baseline = reference["last_0"]
    for c, ablate in enumerate(cases):
        run = forward(model.weights, model.config, tokenized.input_ids, tokenized.tokens, ablate=ablate)
        expected = reference[f"last_{c}"]
        scale = np.abs(expected).max()
        assert np.abs(run.hidden_states[-1] - expected).max() < 2e-5 * scale, ablate
        if ablate:  # the reference changed 50× more than the tolerance: ignoring ablate fails
            assert np.abs(expected - baseline).max() > 1e-3 * scale
    both = forward(model.weights, model.config, tokenized.input_ids, tokenized.tokens, ablate=cases[3])
    np.testing.assert_allclose(both.hidden_states, reference["hidden_3"], atol=2e-5 * np.abs(reference["hidden_3"]).max())


@pytest.mark.slow
def test_prefix_reusing_runner_equals_the_full_forward(model, trace, reference):
    from engine.models.bert import forward
    from engine.analysis.encoder_ablation import ablated_hidden_states, encoder_runner

    run = encoder_runner(model.weights, model.config, trace)
    tokenized = model.tokenize(SENTENCE)
    for ablate in [frozenset({(0, 0)}), frozenset({(2, 5)}), frozenset({(5, 11)}), frozenset({(3, 1), (5, 11)}),
                   frozenset({(1, 3), (1, 7), (4, 2)})]:
        full = forward(model.weights, model.config, tokenized.input_ids, tokenized.tokens, ablate=ablate)
        np.testing.assert_allclose(run(ablate), full.hidden_states[-1], atol=1e-5)
        hidden = ablated_hidden_states(model.weights, model.config, trace, ablate)
        np.testing.assert_allclose(hidden, full.hidden_states, atol=1e-5)
    np.testing.assert_array_equal(run(frozenset()), trace.hidden_states[-1])
    np.testing.assert_allclose(run(frozenset({(3, 1), (5, 11)})), reference["last_3"], atol=1e-4)


@pytest.mark.slow
def test_rank_heads_effects_progress_and_cancel(model, trace):
    from engine.models.bert import forward
    from engine.analysis.encoder_ablation import rank_encoder_heads

    seen = []
    ranking = rank_encoder_heads(model.weights, model.config, trace, progress=lambda f, m: seen.append(f))
    assert ranking.complete and len(ranking.heads) == 72 and sorted(ranking.heads) == all_heads(6, 12)
    assert seen == [pytest.approx((i + 1) / 72) for i in range(72)]
    assert list(ranking.effects) == sorted(ranking.effects, reverse=True)
    # the top head's effect, recomputed from a full forward and a cosine written here
    top = ranking.heads[0]
    tokenized = model.tokenize(SENTENCE)
    full = forward(model.weights, model.config, tokenized.input_ids, tokenized.tokens, ablate=frozenset({top}))
    a, b = np.asarray(trace.hidden_states[-1], np.float64), np.asarray(full.hidden_states[-1], np.float64)
    cosines = [a[i] @ b[i] / np.linalg.norm(a[i]) / np.linalg.norm(b[i]) for i in range(trace.n)]
    assert ranking.effects[0] == pytest.approx(float(np.mean([1 - c for c in cosines])), rel=1e-3)
    assert ranking.effect_grid(6, 12)[top] == ranking.effects[0]

    calls = []
    partial = rank_heads(lambda ablate: calls.append(ablate) or len(calls), float, all_heads(2, 3),
                         cancelled=lambda: len(calls) >= 4)
    assert not partial.complete and len(partial.heads) == 4
    assert partial.heads == ((1, 0), (0, 2), (0, 1), (0, 0)) and calls[0] == frozenset({(0, 0)})
    assert np.isnan(partial.effect_grid(2, 3)[1, 2])


def test_effects():
    before = np.array([[1.0, 0.0], [0.0, 2.0]])
    after = np.array([[1.0, 1.0], [0.0, -3.0]])
    np.testing.assert_allclose(token_cosines(before, after), [1 / math.sqrt(2), -1.0])
    assert mean_cosine_distance(before)(after) == pytest.approx((1 - 1 / math.sqrt(2) + 2) / 2)
    logits = np.log(np.array([0.1, 0.7, 0.2]))
    drop = top_token_probability_drop(logits)
    assert drop(np.log(np.array([0.5, 0.25, 0.25]))) == pytest.approx(0.7 - 0.25)
    assert drop(logits) == 0.0


# --- head statistics ----------------------------------------------------------------------------

def test_head_stats_equal_loops():
    a = random_attentions(2, 3, 7, seed=3)
    special = np.array([True, False, False, True, False, False, True])
    stats = head_stats(a, special)
    for l in range(2):
        for h in range(3):
            rows = a[l, h]
            entropy = np.mean([-sum(p * math.log2(p) for p in row if p > 0) for row in rows])
            assert stats["entropy"][l, h] == pytest.approx(entropy, rel=1e-12)
            assert stats["first"][l, h] == pytest.approx(np.mean([row[0] for row in rows]))
            assert stats["special"][l, h] == pytest.approx(np.mean([row[0] + row[3] + row[6] for row in rows]))
            assert stats["previous"][l, h] == pytest.approx(np.mean([rows[i, i - 1] for i in range(1, 7)]))
            assert stats["self"][l, h] == pytest.approx(np.mean([rows[i, i] for i in range(7)]))


@pytest.mark.slow
def test_head_stats_on_minilm_find_known_patterns(model, trace):
    special = special_mask(trace.token_texts, model.facts.special_tokens)  # the tokenizer's own special tokens
    stats = head_stats(trace.attentions, special)
    assert special.tolist() == [True] + [False] * (trace.n - 2) + [True]
    named = name_heads(stats)
    assert any(h.pattern == "previous-token head" and (h.layer, h.head) == (0, 2) for h in named)
    assert any(h.pattern == "sink head" for h in named)
    assert "previous-token heads: 0.2" in caption(named)


def test_induction_scores():
    period, start = 5, 1
    ids = repeated_random_tokens(1000, period, seed=4, prefix=[0], exclude=[0, 1])
    assert len(ids) == 11 and ids[1:6].tolist() == ids[6:].tolist() and len(set(ids[1:6])) == 5
    a = random_attentions(1, 2, 11, seed=5, causal=True)
    perfect = np.zeros((11, 11))
    for i in range(11):  # head 1: every token looks at the token after its previous occurrence
        perfect[i, i - period + 1 if i >= start + period else i] = 1.0
    a[0, 1] = perfect
    scores = induction_scores(a, period, start)
    assert scores[0, 1] == 1.0
    assert scores[0, 0] == pytest.approx(np.mean([a[0, 0, i, i - 4] for i in range(6, 11)]))
    stats = dict(head_stats(a), induction=scores)
    assert [(h.layer, h.head) for h in name_heads(stats) if h.pattern == "induction head"] == [(0, 1)]
    with pytest.raises(ValueError):
        induction_scores(a, 6, 1)


def test_head_table_and_csv():
    a = random_attentions(2, 3, 4, seed=6)
    stats = dict(head_stats(a, np.array([True, False, False, True])), induction=np.arange(6.0).reshape(2, 3))
    table = head_table(stats)
    assert table.dtype.names == ("layer", "head", "entropy", "first", "special", "previous", "self", "induction")
    assert table["layer"].tolist() == [0, 0, 0, 1, 1, 1] and table["head"].tolist() == [0, 1, 2, 0, 1, 2]
    assert table["self"][4] == stats["self"][1, 1] and table["induction"][5] == 5.0
    rows = list(csv.reader(io.StringIO(table_csv(table))))
    assert rows[0] == list(table.dtype.names) and len(rows) == 7
    assert float(rows[5][6]) == pytest.approx(stats["self"][1, 1], abs=1e-6)


@pytest.mark.slow
def test_analysis_arrays_of_minilm(model, trace):
    arrays = analysis_arrays(trace, model.weights)
    n = trace.n
    assert arrays["value_norms"].shape == (6, 12, n, n)
    assert arrays["rollout"].shape == arrays["value_rollout"].shape == (6, n, n)
    np.testing.assert_allclose(arrays["rollout"].sum(axis=-1), 1.0)
    np.testing.assert_allclose(arrays["value_rollout"].sum(axis=-1), 1.0)
    assert len(arrays["head_stats"]) == 72
    # Kobayashi et al.: the weight on [CLS]/[SEP] carries less than its share
    special = special_mask(trace.token_texts, model.facts.special_tokens)
    raw = trace.attentions[..., special].sum(axis=-1).mean()
    moved = (arrays["value_norms"][..., special].sum(axis=-1) / arrays["value_norms"].sum(axis=-1)).mean()
    assert moved < raw


def test_rank_heads_on_the_toy_through_compute():
    config = AttentionConfig(**TOY)
    plain = compute(config)
    ranking = rank_heads(lambda ablate: compute(config, ablate=ablate).output,
                         mean_cosine_distance(plain.output), all_heads(1, 4))
    assert ranking.complete and sorted(ranking.heads) == all_heads(1, 4)
    w_o = np.asarray(plain.w_o, np.float64)
    for (layer, head), value in zip(ranking.heads, ranking.effects):
        without = np.asarray(plain.output, np.float64) - np.asarray(plain.head_outputs[head], np.float64) @ w_o[4 * head:4 * head + 4]
        base = np.asarray(plain.output, np.float64)
        cosines = [base[i] @ without[i] / np.linalg.norm(base[i]) / np.linalg.norm(without[i]) for i in range(plain.n)]
        assert value == pytest.approx(float(np.mean([1 - c for c in cosines])), rel=1e-4, abs=1e-7)
