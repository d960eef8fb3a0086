"""Value zeroing (engine/analysis/value_zeroing.py) against references that share nothing with it:
a float64 loop over the toy engine's own arrays (zeroing v_j removes α_ij · v_j from every head's
output), and transformers with torch hooks on the value projections for MiniLM and SmolLM2
(tests/fixtures/value_zeroing_reference.npz, scripts/make_value_zeroing_reference.py), SmolLM2
also with two heads switched off."""
from __future__ import annotations


import numpy as np
import pytest

from tests import FIXTURES
from engine import AttentionConfig
from engine.analysis.request import RunRequest
from engine.analysis.value_zeroing import VALUE_ZEROING_TOKENS, value_zeroing
from engine.core.errors import EngineError
from engine.models.toy import ToyModel

FIXTURE = FIXTURES / "value_zeroing_reference.npz"
TEXT = "the cat sat on the mat because it was warm"


def loop_distances(trace) -> np.ndarray:
    """(n, n) float64 1 − cos(output_i with v_j zeroed, output_i), one number at a time."""
    weights = trace.weights.astype(np.float64)  # (heads, n, n)
    v = trace.v.astype(np.float64)  # (heads, n, d_k)
    w_o = trace.w_o.astype(np.float64)  # (heads·d_k, d)
    heads, n, d_k = v.shape
    original = trace.output.astype(np.float64)
    out = np.zeros((n, n))
    for j in range(n):
        for i in range(n):
            concat = np.zeros(heads * d_k)
            for h in range(heads):
                for k in range(n):
                    if k != j:
                        concat[h * d_k:(h + 1) * d_k] += weights[h, i, k] * v[h, k]
            changed = concat @ w_o
            a, b = changed, original[i]
            norms = np.linalg.norm(a) * np.linalg.norm(b)
            out[i, j] = 1.0 - (a @ b / norms if norms > 0 else 0.0)  # nothing left: all of it changed
    return out


@pytest.mark.parametrize("mask", ["none", "causal"])
def test_toy_value_zeroing_is_the_loop(mask):
    config = AttentionConfig(text=TEXT, d_model=16, heads=4, seed=7, mask=mask)
    model = ToyModel(config)
    zeroing = value_zeroing(model, RunRequest(text=TEXT))
    distances = loop_distances(model.run(TEXT))
    np.testing.assert_allclose(zeroing.distances[0], np.maximum(distances, 0), rtol=0, atol=1e-6)
    expected = np.maximum(distances, 0) / np.maximum(distances, 0).sum(-1, keepdims=True)
    np.testing.assert_allclose(zeroing.scores[0], expected, rtol=0, atol=1e-6)
    np.testing.assert_allclose(zeroing.rollout[0], zeroing.scores[0], rtol=0, atol=1e-12)
    if mask == "causal":  # a later token's values never reach an earlier token
        assert np.all(np.triu(zeroing.distances[0], 1) < 1e-6)
        assert zeroing.scores[0][0].tolist() == [1.0] + [0.0] * (len(zeroing.tokens) - 1)
    assert zeroing.scores[0].max() > 2 * zeroing.scores[0].min()  # not uniform: the fixture tells tokens apart


def test_the_rollout_is_the_product_of_the_layers_scores():
    rng = np.random.default_rng(3)
    from engine.analysis.value_zeroing import rollout

    scores = rng.random((3, 4, 4))
    scores /= scores.sum(-1, keepdims=True)
    rolled = rollout(scores, residual=0.0)
    np.testing.assert_allclose(rolled[2], scores[2] @ scores[1] @ scores[0], rtol=1e-12)


def test_over_the_token_limit_says_the_limit_and_the_count():
    text = " ".join(["x"] * (VALUE_ZEROING_TOKENS + 1))
    model = ToyModel(AttentionConfig(text="x", d_model=8, heads=2))
    with pytest.raises(EngineError) as caught:
        value_zeroing(model, RunRequest(text=text))
    assert str(VALUE_ZEROING_TOKENS) in str(caught.value) and str(VALUE_ZEROING_TOKENS + 1) in str(caught.value)


@pytest.fixture(scope="module")
def reference():
    with np.load(FIXTURE) as data:
        return {name: data[name] for name in data.files}


def assert_equal_to(zeroing, reference, prefix: str) -> None:
    np.testing.assert_allclose(zeroing.distances, reference[f"{prefix}_distances"].clip(0), rtol=0,
                               atol=1e-4 * reference[f"{prefix}_distances"].max())
    np.testing.assert_allclose(zeroing.scores, reference[f"{prefix}_scores"], rtol=0, atol=1e-4)


@pytest.mark.slow
def test_minilm_equals_transformers_with_value_hooks(minilm_model, reference):
    import json

    text = json.loads(str(reference["meta"]))["minilm_text"]
    assert minilm_model.tokenize(text).input_ids.tolist() == reference["minilm_ids"].tolist()
    assert_equal_to(value_zeroing(minilm_model, RunRequest(text=text)), reference, "minilm")


@pytest.mark.slow
def test_smollm2_equals_transformers_with_and_without_switched_off_heads(smollm2_model, reference):
    import json

    text = json.loads(str(reference["meta"]))["smollm2_text"]
    assert smollm2_model.tokenize(text).input_ids.tolist() == reference["smollm2_ids"].tolist()
    assert_equal_to(value_zeroing(smollm2_model, RunRequest(text=text)), reference, "smollm2")
    ablate = frozenset(map(tuple, reference["smollm2_ablate"].tolist()))
    ablated = value_zeroing(smollm2_model, RunRequest(text=text, ablate=ablate))
    assert_equal_to(ablated, reference, "smollm2_ablated")
    assert np.abs(ablated.scores - reference["smollm2_scores"]).max() > 1e-3  # the heads made a difference


def test_export_writes_the_engines_value_zeroing(tmp_path):
    from cli.commands import main

    out = tmp_path / "vz.npz"
    assert main(["main.py", "export", "--text", TEXT, "--value-zeroing", "--out", str(out)]) == 0
    from engine.models import model_info

    config = AttentionConfig(text=TEXT)
    expected = value_zeroing(ToyModel(config), RunRequest(text=TEXT))
    with np.load(out) as data:
        np.testing.assert_array_equal(data["value_zeroing"], expected.scores)
        np.testing.assert_array_equal(data["value_zeroing_rollout"], expected.rollout)
    assert model_info("toy").configurable


def test_export_refuses_value_zeroing_in_a_picture(tmp_path, capsys):
    from cli.commands import main

    out = tmp_path / "vz.png"
    assert main(["main.py", "export", "--text", TEXT, "--value-zeroing", "--out", str(out)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and "--value-zeroing" in lines[0] and not out.exists()


def test_export_refuses_value_zeroing_over_its_limit_in_one_line(tmp_path, capsys):
    """The analysis table leaves a text over a method's limit out with its reason; asked for on the
    command line, it is one line saying the limit and the count, and no file."""
    from cli.commands import main

    out = tmp_path / "vz.npz"
    text = " ".join(["a"] * (VALUE_ZEROING_TOKENS + 1))
    assert main(["main.py", "export", "--text", text, "--tokenizer", "whitespace", "--d-model", "4", "--heads", "1",
                 "--value-zeroing", "--out", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and f"at most {VALUE_ZEROING_TOKENS} tokens; this text has {VALUE_ZEROING_TOKENS + 1}" \
        in lines[0] and not out.exists()
