"""Comparison: the same token in two sentences (seed 000: 苹果很好吃 / 苹果发布了新手机), and the current
settings against a snapshot. Cosines are checked against a plain float64 NumPy calculation."""
import numpy as np
import pytest

from engine import AttentionConfig, compute
from engine.analysis.compare import (
    REASON_HEADS,
    REASON_TOKENS,
    compare_configs,
    compare_sentences,
    compare_with_text,
    pair_tokens,
)
from tests.shared_helpers import panel_built_after_a_result, settle_panel

A_TEXT, B_TEXT = "苹果很好吃", "苹果发布了新手机"


def cosine64(a, b) -> float:
    """The independent oracle: one dot product and two norms in float64."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_cosines_equal_an_independent_numpy_calculation():
    config = AttentionConfig(text="小明 喜欢 苹果", tokenizer="whitespace", d_model=16, heads=2, seed=3)
    result_a = compute(config)
    result_b = compute(config.replace(text="苹果 很 好吃 ， 小明 说"))
    comparison = compare_sentences(result_a, result_b)
    assert comparison.shared_texts == ("小明", "苹果")
    for row in comparison.shared:
        i, j = row.index_a, row.index_b
        assert result_a.token_texts[i] == result_b.token_texts[j] == row.text
        assert row.cos_static == pytest.approx(cosine64(result_a.embeddings[i], result_b.embeddings[j]), abs=1e-12)
        assert row.cos_x == pytest.approx(cosine64(result_a.x[i], result_b.x[j]), abs=1e-12)
        assert row.cos_contextual == pytest.approx(cosine64(result_a.output[i], result_b.output[j]), abs=1e-12)
        np.testing.assert_array_equal(comparison.static_a[list(comparison.index_a).index(i)], result_a.embeddings[i])
    # 苹果 sits at position 2 in A and 0 in B: the positional encoding makes x differ, not the embedding
    assert [(r.index_a, r.index_b) for r in comparison.shared] == [(0, 4), (2, 0)]
    apple = comparison.shared[1]
    assert (apple.index_a, apple.index_b) == (2, 0)
    assert apple.cos_static == pytest.approx(1.0, abs=1e-12)
    assert apple.cos_x < 0.999


def test_apple_static_cosine_is_one_and_contextual_is_not():
    result_a = compute(AttentionConfig(text=A_TEXT))
    comparison = compare_with_text(result_a, B_TEXT)
    result_b = comparison.result_b
    assert result_b.config == result_a.config.replace(text=B_TEXT)  # B uses A's settings
    assert comparison.config_changes == ()
    assert comparison.shared_texts == ("苹果",)
    apple = comparison.shared[0]
    np.testing.assert_array_equal(result_a.embeddings[apple.index_a], result_b.embeddings[apple.index_b])
    assert apple.cos_static == pytest.approx(1.0, abs=1e-12)  # same token, same (word2vec-like) vector
    assert apple.cos_contextual < 1 - 1e-3  # attention mixed in different contexts
    assert apple.cos_contextual == pytest.approx(
        cosine64(result_a.output[apple.index_a], result_b.output[apple.index_b]), abs=1e-12)
    # different token lists: no A − B, with the reason
    assert comparison.difference is None and comparison.reason == REASON_TOKENS
    assert "different tokens" in comparison.reason_text
    assert comparison.weights_a is result_a.weights and comparison.weights_b is result_b.weights


def test_identical_sentences_give_a_zero_difference():
    result = compute(AttentionConfig(text="我 爱 北 京 我", tokenizer="whitespace", mask="causal"))
    comparison = compare_with_text(result, result.config.text)
    assert comparison.difference.shape == result.weights.shape
    assert not comparison.difference.any()
    assert comparison.reason == "" and not comparison.heads_averaged
    # repeated tokens pair by occurrence: the k-th 我 with the k-th 我
    assert [(r.index_a, r.index_b) for r in comparison.shared] == [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)]
    np.testing.assert_allclose(comparison.cos_contextual, 1.0, atol=1e-12)


def test_pairing_of_repeated_tokens():
    assert pair_tokens(["我", "爱", "我"], ["我", "我", "我"]) == [(0, 0), (2, 1)]
    assert pair_tokens(["a", "b", "a"], ["b", "a"]) == [(0, 1), (1, 0)]
    assert pair_tokens(["x"], ["y"]) == []


def test_snapshot_after_changing_temperature_gives_the_weights_difference():
    snapshot = compute(AttentionConfig(text=A_TEXT, heads=2))
    now = compute(snapshot.config.replace(temperature=0.5))
    comparison = compare_configs(now, snapshot)
    assert comparison.config_changes == ("temperature",)
    expected = now.weights.astype(np.float64) - snapshot.weights.astype(np.float64)  # current − snapshot
    assert np.abs(expected).max() > 1e-3
    np.testing.assert_allclose(comparison.difference, expected, atol=1e-7)
    np.testing.assert_allclose(comparison.difference_bound, np.abs(expected).reshape(2, -1).max(axis=1), atol=1e-7)
    # the static vectors do not depend on the temperature; the contextual ones do
    np.testing.assert_allclose(comparison.cos_static, 1.0, atol=1e-12)
    assert (comparison.cos_contextual < 1 - 1e-6).all()


def test_snapshot_with_another_head_count_compares_head_averages():
    snapshot = compute(AttentionConfig(text=A_TEXT, heads=4))
    now = compute(snapshot.config.replace(heads=2))
    comparison = compare_configs(now, snapshot)
    assert comparison.heads_averaged and comparison.reason == REASON_HEADS
    expected = now.weights.astype(np.float64).mean(axis=0) - snapshot.weights.astype(np.float64).mean(axis=0)
    np.testing.assert_allclose(comparison.difference[0], expected, atol=1e-7)
    assert comparison.difference.shape == (1, 3, 3)


def test_snapshot_after_editing_the_sentence_has_no_difference():
    snapshot = compute(AttentionConfig(text=A_TEXT))
    comparison = compare_configs(compute(snapshot.config.replace(text="苹果很甜")), snapshot)
    assert comparison.difference is None and comparison.reason == REASON_TOKENS
    assert "changed since the snapshot" in comparison.reason_text


def test_other_d_model_gives_nan_cosines():
    snapshot = compute(AttentionConfig(text=A_TEXT, d_model=8, heads=2))
    comparison = compare_configs(compute(snapshot.config.replace(d_model=16)), snapshot)
    assert comparison.vectors_reason and np.isnan(comparison.cos_contextual).all()
    assert comparison.difference is not None  # the weights are still n × n


# ---------------------------------------------------------------------- the panel
@pytest.fixture
def panel(standalone_panel):
    from app.panels.compare_panel import ComparePanel

    return standalone_panel(ComparePanel, 1100, 500)[1]


def test_panel_fills_sentence_b_and_shows_the_table(qtbot, panel):
    controller = panel.controller
    controller.set_config(AttentionConfig(text=A_TEXT), immediate=True)
    settle_panel(qtbot, panel)
    assert panel.text_b.text() == B_TEXT
    comparison = panel.comparison
    assert comparison is not None and comparison.tokens_b == ("苹果", "发布", "了", "新手机")
    assert panel.table.rowCount() == 1
    assert panel.table.item(0, 0).text() == "苹果"
    assert panel.table.item(0, 3).text() == "1.0000"
    assert panel.table.item(0, 5).text() == f"{comparison.shared[0].cos_contextual:.4f}"
    np.testing.assert_array_equal(panel.heatmap_a.matrix(), comparison.weights_a[0])
    np.testing.assert_array_equal(panel.heatmap_b.matrix(), comparison.weights_b[0])
    assert panel.difference_stack.currentWidget() is panel.no_difference
    assert "different tokens" in panel.no_difference.text()
    # identical sentence B: the A − B heatmap is all zeros
    panel.text_b.setText(A_TEXT)
    settle_panel(qtbot, panel)
    assert panel.difference_stack.currentWidget() is panel.heatmap_difference
    assert not panel.heatmap_difference.matrix().any()
    # a stale answer is dropped: the worker's older generation does not replace the newer one
    shown = panel.comparison
    panel._lane._on_arrived(panel._lane.generation - 1, None, 0.0, True)
    assert panel.comparison is shown


def test_panel_snapshot_mode_shows_current_minus_snapshot(qtbot, panel):
    controller = panel.controller
    controller.set_config(AttentionConfig(text=A_TEXT, heads=2), immediate=True)
    settle_panel(qtbot, panel)
    before = controller.snapshot.result
    panel.take_snapshot()
    assert panel.snapshot_mode.isChecked()
    settle_panel(qtbot, panel)
    assert not panel.heatmap_difference.matrix().any()
    controller.update_config(temperature=0.5)
    settle_panel(qtbot, panel)
    now = controller.snapshot.result
    expected = now.weights.astype(np.float64) - before.weights.astype(np.float64)
    assert panel.comparison.mode == "settings"
    np.testing.assert_allclose(panel.heatmap_difference.matrix(), expected[controller.head], atol=1e-7)
    assert np.abs(panel.heatmap_difference.matrix()).max() > 1e-3
    assert "temperature 1 → 0.5" in panel.status.text()
    controller.select(head=1)
    np.testing.assert_allclose(panel.heatmap_difference.matrix(), expected[1], atol=1e-7)
    panel.set_mode("sentence")
    settle_panel(qtbot, panel)
    assert panel.comparison.mode == "sentences"


def test_panel_built_after_a_result_exists(qtbot):
    """As the window's lazy docks build it: the panel catches up at once, and sync() asks only once."""
    from app.controller import Controller
    from app.panels.compare_panel import ComparePanel

    controller = Controller()
    try:
        widget = panel_built_after_a_result(qtbot, controller, ComparePanel, AttentionConfig(text=B_TEXT))
        qtbot.waitUntil(lambda: widget.comparison is not None, timeout=10000)
        assert widget.text_b.text() == A_TEXT  # the seed's other sentence
        assert widget.comparison.shared_texts == ("苹果",)
    finally:
        controller.shutdown()
