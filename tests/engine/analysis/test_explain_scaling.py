"""The worked arithmetic with scaling ON, where the raw score and the scaled score differ.

With scaling off (the other tests' case) score == scaled, so a line that shows the raw score
where the scaled one belongs passes unnoticed. Here d_k = 4 and temperature 0.7 make the divisor
√4 · 0.7 = 1.4, and every number is checked against the engine's trace.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from engine import AttentionConfig, compute
from engine.analysis.explain import explain

CONFIG = AttentionConfig(text="小明 喜欢 吃 苹果", tokenizer="whitespace", d_model=8, heads=2, seed=3,
                         temperature=0.7)
HEAD, QUERY = 1, 2


@pytest.fixture(scope="module")
def result():
    return compute(CONFIG)


@pytest.fixture(scope="module")
def explanation(result):
    return explain(result, HEAD, QUERY)


def test_the_divisor_is_sqrt_dk_times_temperature(result, explanation):
    assert CONFIG.scale and CONFIG.d_k == 4
    assert explanation.divisor == pytest.approx(math.sqrt(4) * 0.7)


def test_each_term_keeps_raw_and_scaled_apart(result, explanation):
    scores = result.scores[HEAD, QUERY].astype(np.float64)  # (n,)
    scaled = result.scaled[HEAD, QUERY].astype(np.float64)  # (n,)
    assert not np.allclose(scores, scaled), "the case must tell raw from scaled"
    for term in explanation.terms:
        j = term.key_index
        assert term.score == pytest.approx(scores[j], rel=1e-6)
        assert term.scaled == pytest.approx(scaled[j], rel=1e-6)
        assert term.scaled == pytest.approx(term.score / explanation.divisor, rel=1e-5, abs=1e-6)
        assert term.weight == pytest.approx(float(result.weights[HEAD, QUERY, j]), rel=1e-6)
        # the softmax step uses the scaled score: exp(scaled) / Σ exp(scaled) = the weight
        assert term.exp_value / explanation.normaliser == pytest.approx(term.weight, rel=1e-5)


def _scale_lines(text: str, explanation, digits: int = 3) -> list[str]:
    """The lines 'key: raw / divisor = scaled' the calculation must show, from the trace's numbers."""
    return [f"{t.key_text}: {t.score:.{digits}f} / {explanation.divisor:.{digits}f} = {t.scaled:.{digits}f}"
            for t in explanation.terms]


def test_engine_text_shows_raw_divided_into_scaled(explanation):
    text = explanation.to_text()
    assert "√4 = 2.000" in text and "temperature 0.700" in text
    for line in _scale_lines(text, explanation):
        assert line in text, line
    for term in explanation.terms:  # the softmax takes exp of the scaled score, not the raw one
        assert f"exp({term.scaled:.3f}) = {term.exp_value:.3f}" in text


def test_arithmetic_panel_shows_raw_divided_into_scaled(standalone_panel, explanation):
    from app.panels.arithmetic_panel import ArithmeticPanel

    _, panel = standalone_panel(ArithmeticPanel, 700, 500)
    panel.show_explanation(explanation)
    text = panel.view.toPlainText()
    assert "√4 = 2.000" in text and "0.700" in text
    for line in _scale_lines(text, explanation):
        assert line in text, line
    for term in explanation.terms:
        assert f"exp({term.scaled:.3f}) = {term.exp_value:.4f}" in text
        assert f"= {term.weight:.3f}" in text
