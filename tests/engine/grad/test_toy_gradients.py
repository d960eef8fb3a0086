"""The toy engine's backward (engine.grad.toy) against PyTorch's autograd in float64
(tests/fixtures/toy_gradient_reference.npz, written by scripts/make_toy_gradient_reference.py with
the toy's forward written again in torch), and against float64 central differences written here.

Two settings: causal with sinusoidal positions and √d_k scaling (the target: the cosine of the
mean output); RoPE, no scaling, temperature 1.5 (one position's cosine). Every gradient — of the
input and at every hook point the settings have — agrees within 1e-4 relative to the reference's
norm, with no head switched off and with one off.
"""
from __future__ import annotations

import numpy as np
import pytest

from engine.analysis.request import RunRequest
from engine.analysis.saliency_request import request_saliency
from engine.core.errors import EngineError
from engine.grad import toy as toy_backward
from engine.grad.gradients import gradients, input_of
from engine.grad.targets import Target, evaluate
from engine.models.toy import ToyModel
from engine.toy.compute import compute
from engine.toy.config import AttentionConfig
from tests import FIXTURES

FIXTURE = FIXTURES / "toy_gradient_reference.npz"
TOL = 1e-4
POINT_KEYS = {"blocks.0.hook_resid_pre": "input", "blocks.0.attn.hook_q": "q", "blocks.0.attn.hook_k": "k",
              "blocks.0.attn.hook_v": "v", "blocks.0.attn.hook_rot_q": "rot_q", "blocks.0.attn.hook_rot_k": "rot_k",
              "blocks.0.attn.hook_attn_scores": "attn_scores", "blocks.0.attn.hook_pattern": "pattern",
              "blocks.0.attn.hook_z": "z", "blocks.0.hook_attn_out": "attn_out"}
RUNS = [("a", ""), ("a", "_ablated"), ("b", ""), ("b", "_ablated")]


@pytest.fixture(scope="module")
def reference():
    return dict(np.load(FIXTURE))


def settings(reference, name: str) -> AttentionConfig:
    def item(key):
        return reference[f"{name}_{key}"].item()

    return AttentionConfig(text=item("text"), d_model=item("d_model"), heads=item("heads"), seed=item("seed"),
                           positional=item("positional"), mask=item("mask"), scale=item("scale"),
                           temperature=item("temperature"))


def target_of(reference, name: str) -> Target:
    position = reference[f"{name}_position"].item()
    return Target("cosine", position=None if position == -1 else position, reference=reference[f"{name}_reference"])


def run(reference, name: str, suffix: str):
    model = ToyModel(settings(reference, name))
    ablate = frozenset({(0, reference[f"{name}_ablate"].item())}) if suffix else frozenset()
    x = input_of(model, model.tokenize(model.config.text))
    return model, gradients(model, x[None], target_of(reference, name), ablate=ablate)


def relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    return float(np.linalg.norm(got.astype(np.float64) - expected) / np.linalg.norm(expected))


@pytest.mark.parametrize("name", ["a", "b"])
def test_the_input_is_the_toys_resid_pre(reference, name):
    """The tokens' vectors plus the sinusoidal table (config a) or alone (b, RoPE): the reference's
    table written again, and the very x the toy's forward starts from."""
    model = ToyModel(settings(reference, name))
    x = input_of(model, model.tokenize(model.config.text))
    np.testing.assert_allclose(x, reference[f"{name}_input"], rtol=0, atol=1e-6)
    np.testing.assert_array_equal(x, compute(model.config).x)


@pytest.mark.parametrize("name, suffix", RUNS)
def test_every_gradient_equals_autograd(reference, name, suffix):
    _, result = run(reference, name, suffix)
    assert result.values[0] == pytest.approx(reference[f"{name}_value{suffix}"], abs=1e-6)
    errors = {"input": relative_error(result.grad_input[0], reference[f"{name}_grad_input{suffix}"])}
    for point, grad in result.points.items():
        errors[point] = relative_error(grad[0], reference[f"{name}_grad_{POINT_KEYS[point]}{suffix}"])
    assert max(errors.values()) < TOL, errors


@pytest.mark.parametrize("name", ["a", "b"])
def test_the_points_are_the_toys_own(reference, name):
    """hook_rot_q/k with RoPE only; no hook_mlp_out (the toy has no MLP): each point the fixture has."""
    _, result = run(reference, name, "")
    expected = {point for point, key in POINT_KEYS.items()
                if point != "blocks.0.hook_resid_pre" and f"{name}_grad_{key}" in reference}
    assert set(result.points) == expected | {"blocks.0.hook_resid_pre"}
    assert ("blocks.0.attn.hook_rot_q" in result.points) == (name == "b")


@pytest.mark.parametrize("name", ["a", "b"])
def test_a_switched_off_head_passes_no_gradient(reference, name):
    head = reference[f"{name}_ablate"].item()
    _, result = run(reference, name, "_ablated")
    for point in ("attn.hook_q", "attn.hook_k", "attn.hook_v", "attn.hook_z"):  # (1, n, heads, d_k)
        grad = result.points[f"blocks.0.{point}"][0]
        assert not grad[:, head].any() and grad[:, 1 - head].any(), point
    for point in ("attn.hook_pattern", "attn.hook_attn_scores"):  # (1, heads, n, n)
        grad = result.points[f"blocks.0.{point}"][0]
        assert not grad[head].any() and grad[1 - head].any(), point


@pytest.mark.parametrize("name, suffix", RUNS)
def test_the_input_gradient_equals_central_differences(reference, name, suffix):
    """float64 central differences of the target through the toy's forward, at a few coordinates."""
    model, result = run(reference, name, suffix)
    ablate = frozenset({(0, reference[f"{name}_ablate"].item())}) if suffix else frozenset()
    weights, target = toy_backward.weights_of(model.config), target_of(reference, name)
    x = result.inputs[0].astype(np.float64)  # (n, d)

    def value(point: np.ndarray) -> float:
        output, _ = toy_backward.forward(weights, model.config, point[None], ablate)
        assert output.dtype == np.float64
        return float(evaluate(target, output, None)[0][0])

    step = 1e-6
    grad = result.grad_input[0]
    for i, j in ((0, 0), (2, 5), (5, 7), (3, 1)):
        up, down = x.copy(), x.copy()
        up[i, j] += step
        down[i, j] -= step
        numeric = (value(up) - value(down)) / (2 * step)
        assert abs(grad[i, j] - numeric) <= 1e-4 * np.linalg.norm(grad), (i, j, grad[i, j], numeric)


def test_saliency_of_the_toy_aims_at_the_answers_mean_output():
    """The Saliency dock's request on the toy: input × gradient of the cosine of the mean output to
    the answer text's own (run with the same settings); integrated gradients refused with a reason."""
    model = ToyModel(AttentionConfig(d_model=8, heads=2, seed=5))
    found = request_saliency(model, RunRequest(text="the cat sat on the mat", answer="a dog ran"), "ixg")
    tokenized = model.tokenize("the cat sat on the mat")
    x = input_of(model, tokenized)
    reference = compute(model.config.replace(text="a dog ran")).output.astype(np.float64).mean(axis=0)  # (d,)
    expected = gradients(model, x[None], Target("cosine", position=None, reference=reference), points=False)
    np.testing.assert_allclose(found.result.scores, (x * expected.grad_input[0]).astype(np.float64).sum(axis=1),
                               rtol=1e-5, atol=1e-7)
    mean = compute(model.config.replace(text="the cat sat on the mat")).output.astype(np.float64).mean(axis=0)
    assert found.result.value == pytest.approx(mean @ reference / np.linalg.norm(mean) / np.linalg.norm(reference),
                                               abs=1e-6)
    assert found.tokens == ("the", "cat", "sat", "on", "the", "mat")
    with pytest.raises(EngineError, match="integrated gradients need a baseline"):
        request_saliency(model, RunRequest(text="the cat", answer="a dog"), "ig")


def test_the_toy_is_refused_over_the_memory_budget_and_on_a_nan_input(reference):
    """The saved activations are counted before the forward (B·(4·n·d + 5·H·n² + 6·n·d) floats here);
    a NaN in the input is named as the forward's, no gradient given."""
    model = ToyModel(settings(reference, "a"))
    x = input_of(model, model.tokenize(model.config.text))[None]  # (1, 6, 8)
    need = toy_backward.saved_bytes(model.config, 1, 6)
    assert need == 4 * (4 * 6 * 8 + 5 * 2 * 36 + 6 * 6 * 8)
    target = target_of(reference, "a")
    gradients(model, x, target, memory_budget=need)
    with pytest.raises(EngineError, match="memory budget"):
        gradients(model, np.repeat(x, 2, axis=0), target, memory_budget=need)
    broken = x.copy()
    broken[0, 2, 3] = np.nan
    with pytest.raises(EngineError, match="NaN or infinite in layer 0"):
        gradients(model, broken, target)
