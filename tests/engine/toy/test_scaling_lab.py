"""Scaling lab: row entropy / max weight, and the saturation of the unscaled softmax over d_k.

Seed 000: "512维 … 点积可能 100 200 300 … Softmax 后 [0.999999, 0.000001] … 所以除 √dk".
With the random projections (std 1/√d_model) q and k have unit variance, so q·k spreads like
√d_k: without ÷√d_k the softmax saturates as d_k grows, with it the rows stay spread.
"""
import math

import numpy as np
import pytest

from engine import AttentionConfig, compute
from engine.toy.labs import SWEEP_D_MODELS, scale_comparison, scaling_point, scaling_sweep, softmax_stats

# 12 tokens: enough rows that the means are not dominated by one or two of them
SENTENCE = AttentionConfig(text="The animal didn't cross the street because it was too tired .", d_model=64, heads=4)


def entropy_by_loop(row) -> float:
    """Independent oracle: −Σ p log p over the nonzero weights, in plain Python."""
    return -sum(float(p) * math.log(float(p)) for p in row if p > 0)


@pytest.mark.parametrize("mask", ["none", "causal"])
@pytest.mark.parametrize("scale", [True, False])
def test_softmax_stats_match_an_independent_computation(mask, scale):
    weights = compute(SENTENCE.replace(mask=mask, scale=scale, d_model=256)).weights  # (4, 12, 12)
    entropy, largest = softmax_stats(weights)
    assert entropy.shape == largest.shape == (4, 12)
    for h in range(4):
        for i in range(12):
            assert entropy[h, i] == pytest.approx(entropy_by_loop(weights[h, i]), abs=1e-9)
            assert largest[h, i] == max(float(w) for w in weights[h, i])
    assert np.isfinite(entropy).all()  # masked zeros count as 0·log 0 = 0, never NaN


def test_softmax_stats_extremes():
    uniform = np.full((1, 2, 5), 0.2, dtype=np.float32)
    one_hot = np.zeros((1, 1, 5), dtype=np.float32)
    one_hot[0, 0, 3] = 1.0
    entropy, largest = softmax_stats(uniform)
    np.testing.assert_allclose(entropy, math.log(5), rtol=1e-6)
    np.testing.assert_allclose(largest, 0.2, rtol=1e-6)
    entropy, largest = softmax_stats(one_hot)
    assert entropy[0, 0] == 0.0 and largest[0, 0] == 1.0


def test_scaling_point_is_two_real_computations():
    point = scaling_point(SENTENCE.replace(heads=4, temperature=2.0), 128)
    base = AttentionConfig(text=SENTENCE.text, d_model=128, heads=1)  # one head, temperature 1
    for scale, entropy, largest in ((True, point.entropy_scaled, point.max_scaled),
                                    (False, point.entropy_unscaled, point.max_unscaled)):
        weights = compute(base.replace(scale=scale)).weights
        expected_entropy, expected_max = softmax_stats(weights)
        assert entropy == pytest.approx(expected_entropy.mean())
        assert largest == pytest.approx(expected_max.mean())
    scores = compute(base).scores
    assert point.largest_score == pytest.approx(float(np.abs(scores).max()))
    assert point.n == 12 and point.uniform_entropy == pytest.approx(math.log(12))


@pytest.fixture(scope="module")
def sentence_sweep():
    return scaling_sweep(SENTENCE)  # 18 computations, up to d_model 1024: shared by two tests


def test_sweep_shows_the_unscaled_softmax_saturating(sentence_sweep):
    sweep = sentence_sweep
    assert list(sweep.d_models) == list(SWEEP_D_MODELS)
    log_n = math.log(12)
    assert sweep.uniform_entropy == pytest.approx(log_n)
    max_unscaled, max_scaled = sweep.series("max_unscaled"), sweep.series("max_scaled")
    entropy_unscaled, entropy_scaled = sweep.series("entropy_unscaled"), sweep.series("entropy_scaled")
    # measured (seeds 0–2, none/sinusoidal/rope): unscaled max 0.92–0.99 at 1024, scaled ≤ 0.41 everywhere
    assert max_unscaled[-1] > 0.9
    assert max_unscaled[-1] > 2 * max_unscaled[0]
    assert entropy_unscaled[-1] < 0.1 * log_n
    assert (max_scaled < 0.6).all()
    assert (entropy_scaled > 0.6 * log_n).all()
    # the raw scores grow with d_k: the seed's "点积可能 100 200 300"
    largest = sweep.series("largest_score")
    assert largest[-1] > 50 and largest[-1] > 10 * largest[0]


def test_sweep_reports_progress():
    calls = []
    scaling_sweep(SENTENCE, d_models=(4, 8, 16), progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1, 3), (2, 3), (3, 3)]


def test_scale_comparison_toggles_only_the_scaling():
    result = compute(SENTENCE.replace(mask="causal"))
    comparison = scale_comparison(result)
    other = compute(SENTENCE.replace(mask="causal", scale=False))
    np.testing.assert_array_equal(comparison.entropy_scaled, softmax_stats(result.weights)[0])
    np.testing.assert_array_equal(comparison.max_unscaled, softmax_stats(other.weights)[1])
    np.testing.assert_allclose(comparison.uniform, np.log(np.arange(1, 13)))  # causal: row i sees i + 1 keys


# ----------------------------------------------------------------------------- panel
@pytest.fixture
def lab(standalone_panel):
    from app.panels.scaling_panel import ScalingPanel

    return standalone_panel(ScalingPanel, 900, 600)


def test_panel_plots_the_sweep_and_the_rows(lab, qtbot, sentence_sweep):
    controller, panel = lab
    assert panel.objectName() == "scalingPanel"
    controller.set_config(SENTENCE, immediate=True)
    qtbot.waitUntil(lambda: bool(controller.is_idle() and panel.is_idle()), timeout=20000)
    sweep = sentence_sweep
    assert panel.sweep is not None
    for key, curve in panel.sweep_curves.items():
        x, y = curve.getData()
        np.testing.assert_allclose(2 ** x, SWEEP_D_MODELS)
        np.testing.assert_allclose(y, sweep.series(key))
    _, reference = panel.sweep_reference.getData()
    np.testing.assert_allclose(reference, math.log(12))
    assert "1024" in panel.sweep_status.text()

    controller.select(head=3)
    result = controller.snapshot.result
    other = compute(SENTENCE.replace(scale=False))
    entropy, largest = softmax_stats(result.weights)
    entropy_off, largest_off = softmax_stats(other.weights)
    for key, expected in (("entropy_scaled", entropy[3]), ("max_scaled", largest[3]),
                          ("entropy_unscaled", entropy_off[3]), ("max_unscaled", largest_off[3])):
        np.testing.assert_allclose(panel.row_bars[key].opts["height"], expected)
    assert "Head 3" in panel.summary.text()


def test_panel_waits_while_hidden_and_keeps_the_sweep_when_only_d_model_changes(lab, qtbot):
    controller, panel = lab
    panel.hide()
    controller.set_config(SENTENCE.replace(text="猫 追 老鼠"), immediate=True)
    qtbot.waitUntil(lambda: bool(controller.is_idle()), timeout=15000)
    qtbot.wait(400)
    assert panel.sweep_points == [] and panel.comparison is None  # nothing computed for a hidden panel
    panel.show()
    qtbot.waitUntil(lambda: bool(controller.is_idle() and panel.is_idle() and panel.sweep is not None), timeout=20000)
    first = panel.sweep
    controller.set_config(SENTENCE.replace(text="猫 追 老鼠", d_model=32), immediate=True)  # the sweep varies d_model anyway
    qtbot.waitUntil(lambda: bool(controller.is_idle() and panel.is_idle()), timeout=15000)
    assert panel.sweep == first
    assert panel.comparison.config.d_model == 32
