"""Attention flow to the focused token (engine/analysis/flow.py focused_flow): one row of the
all-pairs flow, n maximum flows, equal to the whole matrix's row with and without switched-off
heads; the matrix's progress reports; and the window drawing the focused row from its own lane."""
from __future__ import annotations

import numpy as np
import pytest

from engine.analysis.flow import FLOW_TOKENS, attention_flow, flow_of_run, focused_flow
from engine.core.errors import EngineError


def _attentions(layers=4, heads=3, n=9, seed=3):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(layers, heads, n, n)) * 2.0
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return weights / weights.sum(-1, keepdims=True)


@pytest.mark.parametrize("position", [0, 4, -1])
def test_the_focused_row_is_the_matrixs_row(position):
    attentions = _attentions()
    whole = attention_flow(attentions)
    np.testing.assert_allclose(focused_flow(attentions, position), whole[position], atol=1e-10)


def test_switched_off_heads_count_as_zero_weights_in_the_row_too():
    attentions = _attentions()
    off = frozenset({(1, 0), (2, 2)})
    np.testing.assert_allclose(focused_flow(attentions, 5, off), flow_of_run(attentions, off)[5], atol=1e-10)
    assert not np.allclose(focused_flow(attentions, 5, off), focused_flow(attentions, 5))


def test_the_matrix_reports_its_progress_up_to_every_pair():
    attentions = _attentions(n=12)
    seen = []
    flow_of_run(attentions, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (144, 144) and all(t == 144 for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_over_the_limit_says_the_limit_before_any_work():
    with pytest.raises(EngineError, match=f"at most {FLOW_TOKENS} tokens; this text has {FLOW_TOKENS + 1}"):
        focused_flow(np.full((2, 1, FLOW_TOKENS + 1, FLOW_TOKENS + 1), 1.0 / (FLOW_TOKENS + 1)), 0)


@pytest.mark.slow
def test_the_window_draws_the_focused_row_from_its_own_lane(window, qtbot, minilm):
    from tests.shared_helpers import dock, settle

    c = window.controller
    text = "The animal didn't cross the street because it was too tired."
    c.set_config(c.config.replace(text=text), immediate=True)
    window.model_combo.setCurrentIndex(window.model_combo.findData("minilm"))
    settle(window, qtbot)
    panel = dock(window, "rollout")
    panel.kind.setCurrentIndex(panel.kind.findData("flow"))
    c.select(focus=10)  # "it"
    qtbot.waitUntil(lambda: panel.focused_flow() is not None, timeout=60000)
    expected = focused_flow(minilm.run(text).attentions, 10)
    np.testing.assert_allclose(panel.focused_flow(), expected, atol=1e-9)
    qtbot.waitUntil(lambda: panel.flow() is not None, timeout=120000)
    settle(window, qtbot)
    np.testing.assert_allclose(panel.bars.opts["height"], expected, atol=1e-9)
    assert not panel.flow_progress.isVisible()


def test_a_causal_row_is_cut_to_the_tokens_before_and_still_the_matrixs_row():
    attentions = np.tril(_attentions(n=10, seed=5))
    attentions /= attentions.sum(-1, keepdims=True)
    whole = attention_flow(attentions)
    for position in (0, 3, 9):
        row = focused_flow(attentions, position)
        np.testing.assert_allclose(row, whole[position], atol=1e-10)
        assert not row[position + 1:].any()
