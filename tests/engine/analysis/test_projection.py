"""Vectors in the plane: the engine's 2-D PCA against an independent SVD, and the panel's picture."""
import math

import numpy as np
import pytest

from engine import AttentionConfig, compute
from engine.analysis.projection import pca_2d
from tests.shared_helpers import panel_built_after_a_result, settle_panel


def reference_pca(static, contextual):
    """The oracle: SVD of the centred stacked matrix in float64, no sign convention."""
    stacked = np.concatenate([static, contextual]).astype(np.float64)  # (2n, d)
    centred = stacked - stacked.mean(axis=0)
    _, singular, vt = np.linalg.svd(centred, full_matrices=False)
    coordinates = centred @ vt[:2].T  # (2n, 2)
    return coordinates, singular**2 / np.sum(singular**2)


def assert_equal_up_to_sign(actual, expected):
    for c in range(expected.shape[1]):
        sign = 1.0 if np.dot(actual[:, c], expected[:, c]) >= 0 else -1.0
        np.testing.assert_allclose(actual[:, c], sign * expected[:, c], atol=1e-9)


@pytest.mark.parametrize("text, positional", [("小明喜欢苹果", "sinusoidal"), ("苹果发布了新手机，苹果很好吃", "none")])
def test_coordinates_equal_an_independent_pca(text, positional):
    result = compute(AttentionConfig(text=text, positional=positional, d_model=16, heads=2, seed=5))
    projection = pca_2d(result.embeddings, result.output)
    n = result.n
    coordinates, ratios = reference_pca(result.embeddings, result.output)
    assert projection.static.shape == projection.contextual.shape == (n, 2)
    assert_equal_up_to_sign(np.concatenate([projection.static, projection.contextual]), coordinates)
    np.testing.assert_allclose(projection.explained, ratios[:2], atol=1e-12)
    assert projection.rank == 2
    # deterministic sign: each component's largest |loading| is positive
    for axis in projection.components:
        assert axis[np.argmax(np.abs(axis))] > 0
        assert np.linalg.norm(axis) == pytest.approx(1.0)
    # coordinates really are the projections on those axes
    np.testing.assert_allclose(projection.static, (result.embeddings - projection.mean) @ projection.components.T,
                               atol=1e-9)


def test_same_token_twice_starts_at_one_point():
    result = compute(AttentionConfig(text="苹果 很 好吃 ， 苹果", tokenizer="whitespace"))
    projection = pca_2d(result.embeddings, result.output)
    np.testing.assert_array_equal(projection.static[0], projection.static[4])  # one static vector
    assert not np.allclose(projection.contextual[0], projection.contextual[4])  # two contexts


def test_degenerate_inputs():
    single = pca_2d(np.ones((1, 4)), np.zeros((1, 4)))  # n = 1: two points, one direction
    assert single.rank == 1 and single.explained.tolist() == [1.0, 0.0]
    assert single.static[0, 1] == 0 and single.contextual[0, 1] == 0
    assert single.static[0, 0] == pytest.approx(1.0) and single.contextual[0, 0] == pytest.approx(-1.0)
    flat = pca_2d(np.ones((1, 4)), np.ones((1, 4)))  # identical points: nothing varies
    assert flat.rank == 0 and not flat.static.any() and not flat.explained.any()
    line = pca_2d(np.array([[1.0], [2.0]]), np.array([[3.0], [5.0]]))  # d = 1
    assert line.rank == 1 and line.static.shape == (2, 2)
    np.testing.assert_allclose(line.static[:, 0], [-1.75, -0.75])
    one_token = compute(AttentionConfig(text="苹果"))
    projection = pca_2d(one_token.embeddings, one_token.output)
    assert projection.rank == 1 and np.isfinite(projection.static).all()
    with pytest.raises(ValueError):
        pca_2d(np.ones((2, 3)), np.ones((3, 3)))


# ---------------------------------------------------------------------- the panel
@pytest.fixture
def panel(standalone_panel):
    from app.panels.plane_panel import PlanePanel

    return standalone_panel(PlanePanel, 800, 500)[1]


def test_panel_draws_the_engine_coordinates(qtbot, panel):
    controller = panel.controller
    controller.set_config(AttentionConfig(text="小明喜欢苹果"), immediate=True)
    settle_panel(qtbot, panel)
    result = controller.snapshot.result
    expected = pca_2d(result.embeddings, result.output)
    x, y = panel.static_scatter.getData()
    np.testing.assert_allclose(np.column_stack([x, y]), expected.static)
    x, y = panel.contextual_scatter.getData()
    np.testing.assert_allclose(np.column_stack([x, y]), expected.contextual)
    assert len(panel.arrows) == result.n
    for arrow, start, end in zip(panel.arrows, expected.static, expected.contextual):
        assert (arrow.pos().x(), arrow.pos().y()) == pytest.approx((end[0], end[1]))
        direction = math.degrees(math.atan2(end[1] - start[1], -(end[0] - start[0])))
        assert arrow.opts["angle"] == pytest.approx(direction)
    assert [label.toPlainText() for label in panel.labels] == result.token_texts * 2
    assert panel.plot.axes["bottom"].labelText == f"PC1 ({100 * expected.explained[0]:.1f}%)"
    # the focused token is ringed at both of its points
    controller.select(focus=2)
    x, y = panel.focus_scatter.getData()
    np.testing.assert_allclose(np.column_stack([x, y]), [expected.static[2], expected.contextual[2]])
    # start at x = embedding + position (sinusoidal): the blue points move
    panel.start_at_x.setChecked(True)
    settle_panel(qtbot, panel)
    shifted = pca_2d(result.x, result.output)
    x, y = panel.static_scatter.getData()
    np.testing.assert_allclose(np.column_stack([x, y]), shifted.static)
    assert "x = embedding + position" in panel.caption.text()
    # a longer sentence: one arrow per token, no leftovers
    controller.set_config(controller.config.replace(text="苹果发布了新手机，苹果很好吃", positional="none"), immediate=True)
    settle_panel(qtbot, panel)
    assert len(panel.arrows) == controller.snapshot.result.n
    assert not panel.start_at_x.isEnabled() and not panel.started_at_x


def test_panel_one_token(qtbot, panel):
    panel.controller.set_config(AttentionConfig(text="苹果"), immediate=True)
    settle_panel(qtbot, panel)
    assert len(panel.arrows) == 1 and panel.projection.rank == 1
    assert "1 direction" in panel.status.text()


def test_panel_built_after_a_result_exists(qtbot):
    from app.controller import Controller
    from app.panels.plane_panel import PlanePanel

    controller = Controller()
    try:
        widget = panel_built_after_a_result(qtbot, controller, PlanePanel, AttentionConfig(text="小明喜欢苹果"))
        qtbot.waitUntil(lambda: widget.projection is not None, timeout=10000)
        assert len(widget.arrows) == 3
    finally:
        controller.shutdown()
