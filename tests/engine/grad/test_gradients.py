"""The NumPy backward (engine.grad) against PyTorch's autograd on the same weights
(tests/fixtures/gradient_reference.npz, written by scripts/make_gradient_reference.py), and against
float64 central differences written here.

Every gradient the fixture holds — of the input (blocks.0.hook_resid_pre) and at hook_resid_pre,
hook_attn_out, hook_mlp_out, hook_z and hook_pattern of its layers — must agree within 1e-4 of the
reference's largest magnitude, with no head switched off and with two off.
"""
from __future__ import annotations

import math
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from engine.core.errors import EngineError
from engine.grad import decoder as decoder_backward
from engine.grad import encoder as encoder_backward
from engine.grad.gradients import gradients, input_of, logit_softcap, output_head
from engine.grad.saliency import by_words, check_steps, max_steps, saliency
from engine.grad.targets import Target, evaluate
from engine.models.contract import Tokenized
from engine.text.tokenize import Token
from tests import FIXTURES

FIXTURE = FIXTURES / "gradient_reference.npz"
FAMILIES = FIXTURES / "families"
TOL = 1e-4  # the reference is float64 autograd: what is left is the engine's float32 (SmolLM2: ~1e-5)
POINT_KEYS = {"hook_resid_pre": "resid_pre", "hook_attn_out": "attn_out", "hook_mlp_out": "mlp_out",
              "attn.hook_z": "z", "attn.hook_pattern": "pattern"}


@pytest.fixture(scope="module")
def reference():
    return dict(np.load(FIXTURE))


def tiny(family: str):
    pytest.importorskip("safetensors")
    pytest.importorskip("tokenizers")
    from engine.models.families.loading import load_folder

    return load_folder(FAMILIES / family)


def tokenized_ids(ids) -> Tokenized:
    ids = np.asarray(ids, np.int64)
    return Tokenized("", tuple(Token(str(i), 0, 0) for i in ids), ids)


def close(actual, expected, what: str, tol: float = TOL) -> None:
    """‖actual − expected‖₂ ≤ tol·‖expected‖₂."""
    expected = np.asarray(expected, np.float64)
    assert actual.shape == expected.shape, what
    scale = float(np.linalg.norm(expected))
    error = float(np.linalg.norm(np.asarray(actual, np.float64) - expected))
    assert error <= tol * scale, f"{what}: off by {error:.3g}, allowed {tol * scale:.3g}"


def target_of(reference, name: str) -> Target:
    if name in ("bert", "minilm"):
        position = int(reference.get(f"{name}_position", 1))
        return Target("cosine", position=position, reference=reference[f"{name}_reference"])
    return Target("log_prob", token=int(reference.get(f"{name}_answer", 7)))


def check_against_reference(model, reference, name: str, tokenized, tol: float = TOL) -> None:
    assert np.array_equal(tokenized.input_ids, reference[f"{name}_ids"])
    x = input_of(model, tokenized)
    close(x, reference[f"{name}_input"], f"{name} input", 1e-6)
    layers = [int(l) for l in reference[f"{name}_layers"]]
    for suffix, ablate in (("", frozenset()), ("_ablated", frozenset(map(tuple, reference[f"{name}_ablate"].tolist())))):
        result = gradients(model, x[None], target_of(reference, name), ablate=ablate)
        assert result.values[0] == pytest.approx(float(reference[f"{name}_value{suffix}"]), abs=1e-4)
        close(result.grad_input[0], reference[f"{name}_grad_input{suffix}"], f"{name}{suffix} input", tol)
        for point, key in POINT_KEYS.items():
            for index, layer in enumerate(layers):
                close(result.points[f"blocks.{layer}.{point}"][0], reference[f"{name}_grad_{key}{suffix}"][index],
                      f"{name}{suffix} blocks.{layer}.{point}", tol)
        for layer, head in ablate:  # a switched-off head passes nothing back
            assert not result.points[f"blocks.{layer}.attn.hook_z"][0][:, head].any()


@pytest.mark.parametrize("family", ["gpt2", "llama", "qwen2", "bert", "qwen3", "gemma2", "gemma3", "olmo2"])
def test_tiny_models_gradients_equal_autograd(family, reference):
    """qwen3: q/k norms per head; gemma2: soft-capped scores and logits, a window of 4 on layer 0 (7 tokens),
    norms after attention and MLP, √24 as the score divisor, GeGLU, √d embeddings; gemma3: q/k norms and
    RoPE base 10⁴ on its windowed layer, 10⁶ on the other; olmo2: norms only after attention and MLP, q/k
    normed over the whole projection."""
    model = tiny(family)
    check_against_reference(model, reference, family, tokenized_ids(reference[f"{family}_ids"]))


@pytest.mark.parametrize("family,name", [("qwen3", "qwen3"), ("olmo2", "olmo2"), ("gemma2", "gemma2_gguf"),
                                         ("gemma3", "gemma3_gguf")])
def test_tiny_gguf_forms_gradients_equal_autograd(family, name, reference):
    """The GGUF forms of the tiny folders: the same weights, q/k norms read from GGUF. Qwen3's and OLMo 2's
    run the folder's block (ε rounded to float32) against the folder's reference; Gemma's as llama.cpp reads
    them (scores / √head_dim, Gemma 3's window on both layers and so its local RoPE base on both), against
    the folder's model given those settings."""
    from engine.models.decoder import load_gguf

    model = load_gguf(FAMILIES / f"{family}.gguf")
    check_against_reference(model, reference, name, tokenized_ids(reference[f"{name}_ids"]))


@pytest.mark.slow  # a bundled model
def test_smollm2_gradients_equal_autograd(smollm2_model, reference):
    check_against_reference(smollm2_model, reference, "smollm2", smollm2_model.tokenize("The capital of France is"))


@pytest.mark.slow  # a bundled model
def test_minilm_gradients_equal_autograd(minilm_model, reference):
    check_against_reference(minilm_model, reference, "minilm", minilm_model.tokenize("The cat sat on the mat."))


@pytest.mark.slow  # a bundled model
def test_smollm2_logit_difference_gradient_equals_autograd(smollm2_model, reference):
    tokenized = smollm2_model.tokenize("The capital of France is")
    target = Target("logit_diff", token=int(reference["smollm2_answer"]), other=int(reference["smollm2_other"]))
    result = gradients(smollm2_model, input_of(smollm2_model, tokenized)[None], target, points=False)
    assert result.values[0] == pytest.approx(float(reference["smollm2_diff_value"]), abs=1e-3)
    close(result.grad_input[0], reference["smollm2_diff_grad_input"], "logit difference", TOL)


# ---------------------------------------------------------------- float64 central differences


@pytest.mark.parametrize("family,module", [("llama", decoder_backward), ("gpt2", decoder_backward),
                                           ("bert", encoder_backward), ("gemma2", decoder_backward),
                                           ("olmo2", decoder_backward)])
def test_gradient_equals_float64_central_differences(family, module):
    """∂t/∂x along three random directions u: the backward's Σ grad·u against (t(x + εu) − t(x − εu)) / 2ε,
    every number in float64 (the weights' float32 values taken as exact)."""
    model = tiny(family)
    x = input_of(model, tokenized_ids([5, 17, 42, 8, 99])).astype(np.float64)[None]  # (1, n, d)
    target = Target("cosine", position=1, reference=np.linspace(-1, 1, x.shape[2])) if family == "bert" \
        else Target("log_prob", token=11)
    ablate = frozenset({(1, 2)})

    cap = logit_softcap(model)  # Gemma 2's logits are capped at 3

    def t(inputs):
        output, _ = module.forward(model.weights, model.config, inputs, ablate)
        return evaluate(target, output, output_head(model), cap)[0][0]

    output, saved = module.forward(model.weights, model.config, x, ablate)
    assert output.dtype == np.float64
    _, grad_output = evaluate(target, output, output_head(model), cap)
    grad, _ = module.backward(model.weights, model.config, saved, grad_output, points=False)
    rng = np.random.default_rng(7)
    for _ in range(3):
        u = rng.standard_normal(x.shape)
        eps = 1e-5
        numeric = (t(x + eps * u) - t(x - eps * u)) / (2 * eps)
        assert float((grad * u).sum()) == pytest.approx(numeric, rel=1e-6, abs=1e-9)


# ---------------------------------------------------------------- saliency


def test_grad_norm_and_input_times_gradient_are_read_from_the_gradient(reference):
    model = tiny("llama")
    tokenized = tokenized_ids(reference["llama_ids"])
    x, g = reference["llama_input"].astype(np.float64), reference["llama_grad_input"].astype(np.float64)
    target = Target("log_prob", token=7)
    ixg = saliency(model, tokenized, target, "ixg")
    np.testing.assert_allclose(ixg.scores, (x * g).sum(axis=1), atol=TOL * np.abs(x * g).sum(axis=1).max())
    norm = saliency(model, tokenized, target, "grad")
    np.testing.assert_allclose(norm.scores, np.sqrt((g * g).sum(axis=1)), rtol=1e-4)
    assert ixg.value == pytest.approx(float(reference["llama_value"]), abs=1e-4)
    assert set(ixg.arrays()) == {"saliency", "saliency_target", "saliency_method"}


def check_ig(model, reference, name: str, tokenized, baseline, suffix: str = "", complete: bool = True) -> None:
    """IG at 32 midpoint steps equals the torch script's within 1e-3 (of the largest attribution, at
    least 1); completeness within 1e-2 of the target's change t(x) − t(b) (at least 1)."""
    key = f"{name}_ig{suffix}"
    result = saliency(model, tokenized, target_of(reference, name), "ig", steps=32, baseline=baseline)
    expected = reference[key]
    assert np.abs(result.scores - expected).max() <= 1e-3 * max(1.0, np.abs(expected).max())
    change = result.value - result.baseline_value
    assert change == pytest.approx(float(reference[f"{key}_value"] - reference[f"{key}_baseline_value"]), abs=1e-3)
    assert result.completeness == pytest.approx(result.scores.sum() - change)
    if complete:
        assert abs(result.completeness) <= 1e-2 * max(1.0, abs(change))
    assert set(result.arrays()) == {"saliency", "saliency_target", "saliency_method", "ig_completeness"}


@pytest.mark.slow  # a bundled model
def test_smollm2_integrated_gradients_equal_torch(smollm2_model, reference):
    """The same numbers as torch's from zero and from the padding token; neither is complete at 32 steps
    on SmolLM2 (the attributions sum to 28.1 where t(x) − t(0) = 10.5: along the path the target swings
    far from the straight line, as torch's own IG shows), so completeness is asserted on MiniLM only."""
    tokenized = smollm2_model.tokenize("The capital of France is")
    check_ig(smollm2_model, reference, "smollm2", tokenized, "zero", complete=False)
    check_ig(smollm2_model, reference, "smollm2", tokenized, int(reference["smollm2_baseline_token"]), "_token",
             complete=False)


@pytest.mark.slow  # a bundled model
def test_minilm_integrated_gradients_from_the_pad_token_equal_torch(minilm_model, reference):
    check_ig(minilm_model, reference, "minilm", minilm_model.tokenize("The cat sat on the mat."),
             int(reference["minilm_pad"]))


def test_integrated_gradients_steps_out_of_range_are_refused_with_the_limit():
    model = tiny("llama")
    tokenized = tokenized_ids([5, 17, 42])
    budget = 1 << 20
    top = max_steps(model, 3, budget)
    assert 1 <= top < 4096
    assert check_steps(model, 3, top, budget) == top
    for steps in (0, top + 1, 10 ** 6, 2.5, True):
        with pytest.raises(EngineError, match=r"1 … \d+ steps"):
            saliency(model, tokenized, Target("log_prob", token=7), "ig", steps=steps, memory_budget=budget)
    with pytest.raises(EngineError, match="method"):
        saliency(model, tokenized, Target("log_prob", token=7), "occlusion")
    with pytest.raises(EngineError, match="baseline"):
        saliency(model, tokenized, Target("log_prob", token=7), "ig", baseline=10 ** 9)


def test_saliency_by_words_sums_pieces_and_joins_gradient_norms():
    from engine.grad.saliency import Saliency

    tokens = (Token("un", 0, 2), Token("believ", 2, 8), Token("able", 8, 12), Token(" cat", 12, 16))
    scores = np.array([1.0, 2.0, -0.5, 4.0])
    words, summed = by_words(Saliency("ixg", scores, 0.0, Target("logit", token=0)), "unbelievable cat", tokens)
    assert words == ("unbelievable", "cat")
    np.testing.assert_allclose(summed, [2.5, 4.0])
    _, norms = by_words(Saliency("grad", np.abs(scores), 0.0, Target("logit", token=0)), "unbelievable cat", tokens)
    np.testing.assert_allclose(norms, [np.sqrt(1 + 4 + 0.25), 4.0])


# ---------------------------------------------------------------- refusals


def test_a_batch_over_the_memory_budget_is_refused_with_the_figure():
    model = tiny("gpt2")
    x = input_of(model, tokenized_ids([5, 17, 42]))[None]
    with pytest.raises(EngineError, match=r"keeps about [\d.]+ KiB of activations, over the 1.0 KiB memory budget"):
        gradients(model, x, Target("log_prob", token=7), memory_budget=1024)


def test_a_nan_weight_is_named_where_the_gradient_became_nan():
    model = tiny("llama")
    layers = list(model.weights.layers)
    down = np.array(layers[1].down_weight)
    down[3, 4] = np.nan
    layers[1] = replace(layers[1], down_weight=down)
    broken = SimpleNamespace(facts=model.facts, config=model.config, W_U=model.W_U,
                             weights=replace(model.weights, layers=tuple(layers)))
    x = input_of(model, tokenized_ids([5, 17, 42]))[None]
    with pytest.raises(EngineError, match="NaN or infinite in layer 1: a weight there is damaged"):
        gradients(broken, x, Target("log_prob", token=7))


def test_the_toy_is_followed_and_a_model_of_no_known_shape_refused():
    """The toy's input is its trace's x (tests/engine/grad/test_toy_gradients.py checks its gradients); a
    model that does not declare the gradients capability (a decoder of another block) is refused before
    anything runs."""
    from engine.models import load_model
    from engine.models.contract import Capabilities

    toy = load_model("toy")
    np.testing.assert_array_equal(input_of(toy, toy.tokenize("the cat sat")), toy.run("the cat sat").x)
    other = SimpleNamespace(facts=SimpleNamespace(capabilities=Capabilities(next_token_logits=True), family="mamba"))
    with pytest.raises(EngineError, match="gradients are taken for"):
        input_of(other, tokenized_ids([0, 1]))


# ---------------------------------------------------------------- attribution patching


@pytest.mark.slow  # a bundled model
def test_smollm2_attribution_patching_equals_torch(smollm2_model, reference):
    """Each cell's first-order change equals the torch script's Σ (clean − corrupted)·∂/∂ within 1e-4 of the
    grid's norm; the p(answer) grid is p(corrupted)·(1 + Σ …·∂log p)."""
    from engine.analysis.attribution_patching import attribution_patching

    result = attribution_patching(smollm2_model, "The Eiffel Tower is in the city of", "The Colosseum is in the city of",
                                  " Paris")
    assert result.other == int(reference["atp_other"])
    p = result.corrupt_value
    for grid in ("resid_pre", "attn_out", "mlp_out", "head_z"):
        close((result.grids[grid] - p) / p, reference[f"atp_{grid}"], grid, TOL)
        close(result.logit_diffs[grid] - result.corrupt_diff, reference[f"atp_{grid}_logit_diff"],
              f"{grid} logit difference", TOL)
    arrays = result.arrays()
    assert set(arrays) == {f"{g}{s}_atp" for g in ("resid_pre", "attn_out", "mlp_out", "head_z")
                           for s in ("", "_logit_diff")}


def test_disagreement_names_the_cells_furthest_apart():
    from engine.analysis.attribution_patching import disagreement

    exact = np.array([[0.0, 1.0], [2.0, 3.0]])
    estimate = np.array([[0.0, 1.5], [2.0, np.nan]])
    correlation, cells = disagreement(estimate, exact, top=2)
    assert correlation == pytest.approx(np.corrcoef([0.0, 1.5, 2.0], [0.0, 1.0, 2.0])[0, 1])
    assert cells == [(0, 1, 1.5, 1.0), (0, 0, 0.0, 0.0)]


@pytest.mark.parametrize("target", [
    Target("log_prob", position=-1, token=3), Target("logit", position=1, token=5),
    Target("logit_diff", position=2, token=5, other=0), Target("cosine", position=0, reference=np.arange(1.0, 9.0)),
    Target("cosine", position=None, reference=np.arange(1.0, 9.0) - 4.5)])
def test_each_target_s_gradient_equals_central_differences(target):
    """Each target alone, on a random float64 output (2, 4, 8) and head (11, 8): Σ grad·u against the
    central difference along u (the mean-pooled cosine divides its gradient among the rows)."""
    rng = np.random.default_rng(3)
    output, head, u = rng.standard_normal((2, 4, 8)), rng.standard_normal((11, 8)), rng.standard_normal((2, 4, 8))
    values, grad = evaluate(target, output, head)
    eps = 1e-6
    numeric = (evaluate(target, output + eps * u, head)[0] - evaluate(target, output - eps * u, head)[0]) / (2 * eps)
    np.testing.assert_allclose((grad * u).sum(axis=(1, 2)), numeric, rtol=1e-6, atol=1e-9)
    if target.kind == "log_prob":
        logits = output[:, -1] @ head.T
        np.testing.assert_allclose(values, logits[:, 3] - np.log(np.exp(logits).sum(axis=1)))


@pytest.mark.parametrize("kind", ["log_prob", "logit", "logit_diff"])
def test_soft_capped_logit_targets_equal_a_float64_loop_and_central_differences(kind):
    """Logits cap·tanh(raw / cap) (Gemma 2's final soft-capping): the value against a loop over the
    vocabulary in float64, the gradient against central differences along u."""
    rng = np.random.default_rng(5)
    output, head, u = rng.standard_normal((2, 3, 6)), 2 * rng.standard_normal((9, 6)), rng.standard_normal((2, 3, 6))
    cap = 1.5
    target = Target(kind, position=1, token=4, other=7)
    values, grad = evaluate(target, output, head, cap)
    for b in range(2):
        capped = [cap * math.tanh(sum(output[b, 1, j] * head[v, j] for j in range(6)) / cap) for v in range(9)]
        expected = {"logit": capped[4], "logit_diff": capped[4] - capped[7],
                    "log_prob": capped[4] - math.log(sum(math.exp(c) for c in capped))}[kind]
        assert values[b] == pytest.approx(expected, rel=1e-12)
    eps = 1e-6
    numeric = (evaluate(target, output + eps * u, head, cap)[0] - evaluate(target, output - eps * u, head, cap)[0]) / (2 * eps)
    np.testing.assert_allclose((grad * u).sum(axis=(1, 2)), numeric, rtol=1e-6, atol=1e-9)


def test_a_block_feature_the_backward_does_not_follow_is_refused_by_name():
    """A DecoderConfig with a field the backward does not know (a feature added to the forward later) is
    refused naming it; every tiny family's config passes."""
    import dataclasses

    from engine.models.llama import DecoderConfig

    base = tiny("gemma2").config
    extended = dataclasses.make_dataclass("Extended", [("logit_scale", float, 0.0)], bases=(DecoderConfig,),
                                          frozen=True)
    config = extended(**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)}, logit_scale=2.0)
    with pytest.raises(EngineError, match="do not follow logit_scale of gemma2's block"):
        decoder_backward.check_supported(config)
    for family in ("gpt2", "llama", "qwen2", "qwen3", "gemma2", "gemma3", "olmo2", "mistral", "phi3"):
        decoder_backward.check_supported(tiny(family).config)


def test_integrated_gradients_read_both_ends_through_the_logit_cap():
    """Gemma 2 caps its logits: IG's t(input) is the same capped log p that the gradient pass gives
    (the ends were once read from the uncapped logits, so the change and completeness were off)."""
    model = tiny("gemma2")
    assert logit_softcap(model) > 0
    tokenized = tokenized_ids([5, 17, 42, 9])
    target = Target("log_prob", token=7)
    plain = saliency(model, tokenized, target, "ixg")
    integrated = saliency(model, tokenized, target, "ig", steps=8)
    assert integrated.value == pytest.approx(plain.value, abs=1e-6)
    zero = gradients(model, np.zeros((1, 4, model.facts.d_model), np.float32), target, points=False)
    assert integrated.baseline_value == pytest.approx(float(zero.values[0]), abs=1e-6)
