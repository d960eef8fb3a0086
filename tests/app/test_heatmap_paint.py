"""The heatmap's faster paint draws what pyqtgraph's own code drew (the faster paint cut the latency of typing).

Each faster path is checked against the slower one it replaced, on the same object: the token
axes' layout against AxisItem.generateDrawSpecs, the premultiplied image against ImageItem's
indexed one, the cell numbers' positions against the cells' centres in pixels, the colour bar's
round values against every candidate step.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QImage, QPainter, QTransform
from PySide6.QtWidgets import QApplication

WORDS = ["the", "animal", "didn't", "cross", "the", "street", "because", "it", "was", "too", "tired", "苹果"]


def _shown(qtbot, matrix, labels, size=(742, 525), **options):
    from app.heatmap import HeatmapView

    view = HeatmapView()
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    view.set_matrix(matrix, labels, labels, **options)
    for _ in range(3):  # the axes' widths settle after their first layout
        QApplication.processEvents()
        view.grab()
    return view


def _specs(generate, axis):
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        if axis.style["tickFont"] is not None:
            painter.setFont(axis.style["tickFont"])
        specs = generate(axis, painter)
    finally:
        painter.end()
    (pen, start, end), ticks, texts = specs
    line = (start.x(), start.y(), end.x(), end.y())
    tick_lines = [(p1.x(), p1.y(), p2.x(), p2.y(), tick_pen.color().name(), tick_pen.color().alpha())
                  for tick_pen, p1, p2 in ticks]
    labels = [(rect.x(), rect.y(), rect.width(), rect.height(), int(flags), text) for rect, flags, text in texts]
    return line, pen.color().name(), tick_lines, labels


@pytest.mark.parametrize("rows", [5, 12, 40])
def test_token_axes_lay_out_as_pyqtgraphs_own_code(qtbot, rows):
    from figures.token_axis import TokenAxis

    labels = [WORDS[i % len(WORDS)] + ("" if i < len(WORDS) else str(i)) for i in range(rows)]
    view = _shown(qtbot, np.full((rows, rows), 1 / rows, np.float32), labels, levels=(0.0, 1.0))
    for name in ("left", "bottom"):
        axis = view.plot.getAxis(name)
        assert isinstance(axis, TokenAxis)
        ours = _specs(TokenAxis.generateDrawSpecs, axis)
        theirs = _specs(pg.AxisItem.generateDrawSpecs, axis)
        assert ours[:3] == theirs[:3], name
        assert len(ours[3]) == len(theirs[3]) > 0, name
        for mine, pyqtgraphs in zip(ours[3], theirs[3]):
            assert mine[4:] == pyqtgraphs[4:] and np.allclose(mine[:4], pyqtgraphs[:4], atol=1e-6), name


def _axis_pixels(paint, axis) -> np.ndarray:
    """The axis drawn by ``paint`` into an image of its bounding rectangle, on white."""
    box = axis.boundingRect()
    image = QImage(math.ceil(box.width()) + 2, math.ceil(box.height()) + 2, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor("white"))
    painter = QPainter(image)
    try:
        painter.translate(-box.left() + 1, -box.top() + 1)
        paint(axis, painter)
    finally:
        painter.end()
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.width(), 4).copy()


def _grown(mask: np.ndarray) -> np.ndarray:
    """``mask`` grown by one pixel in every direction."""
    padded = np.pad(mask, 1)
    return np.logical_or.reduce([padded[1 + dy: padded.shape[0] - 1 + dy, 1 + dx: padded.shape[1] - 1 + dx]
                                 for dy in (-1, 0, 1) for dx in (-1, 0, 1)])


@pytest.mark.parametrize("rows", [5, 12, 24, 40])
def test_token_axes_draw_the_pixels_pyqtgraph_draws(qtbot, rows):
    """Drawn straight into the item's cache, the bottom labels as cached QStaticText (placed from
    drawText's alignment; a staggered label's second line a whole pixel lower), against AxisItem's own
    QPicture of drawText calls: each label's ink within a pixel of pyqtgraph's. 24 columns stagger the
    bottom labels on two lines."""
    from figures.token_axis import TokenAxis

    labels = [WORDS[i % len(WORDS)] + ("" if i < len(WORDS) else str(i)) for i in range(rows)]
    view = _shown(qtbot, np.full((rows, rows), 1 / rows, np.float32), labels, levels=(0.0, 1.0))
    staggered = False
    for name in ("left", "bottom"):
        axis = view.plot.getAxis(name)
        staggered |= any(text.startswith("\n") for _, text in axis._tickLevels[0])

        def theirs(item, painter):
            item.picture = None  # AxisItem's picture drawn again, with its drawText calls
            pg.AxisItem.paint(item, painter, None, None)

        ours = _axis_pixels(lambda item, painter: TokenAxis.paint(item, painter, None, None), axis)
        reference = _axis_pixels(theirs, axis)
        inked, theirs_inked = (ours != 255).any(-1), (reference != 255).any(-1)
        assert theirs_inked.sum() > 0, name  # something was drawn
        # every label where pyqtgraph draws it, to a pixel (the text's rounding differs between a replayed
        # QPicture and a direct draw with some fonts: up to ~8 % of the inked pixels, measured)
        assert not (inked & ~_grown(theirs_inked)).any() and not (theirs_inked & ~_grown(inked)).any(), name
        assert abs(int(inked.sum()) - int(theirs_inked.sum())) <= 0.1 * theirs_inked.sum(), name
    assert staggered or rows != 24  # the two-line case is among those checked


def test_the_colour_bars_round_values_lay_out_as_pyqtgraph_lays_out_the_same_ticks(qtbot):
    from figures.token_axis import TokenAxis, scale_ticks

    view = _shown(qtbot, np.linspace(0, 0.37, 16, dtype=np.float32).reshape(4, 4), list("abcd"), levels=(0.0, 0.37))
    axis = view.colorbar.axis
    assert isinstance(axis, TokenAxis) and axis.range == [0.0, 0.37]
    ours = _specs(TokenAxis.generateDrawSpecs, axis)
    length = axis.mapRectFromParent(axis.geometry()).height()
    axis.setTicks([scale_ticks(0.0, 0.37, length + 2)])  # the span AxisItem measures: the height and 1 px each end
    theirs = _specs(pg.AxisItem.generateDrawSpecs, axis)
    assert ours[:3] == theirs[:3]
    assert [label[4:] for label in ours[3]] == [label[4:] for label in theirs[3]]
    assert [label[5] for label in ours[3]] == [text for _, text in scale_ticks(0.0, 0.37, length + 2)]
    assert len(ours[3]) >= 3


@pytest.mark.parametrize("low, high, pixels", [
    (0.0, 1.0, 450), (0.0, 0.18, 450), (-3.2, 3.2, 300), (0.0, 1e-6, 400), (0.0, 734.2, 200),
    (-0.5, 0.5, 60), (0.03, 0.9999, 1000), (2.0, 2.0000001, 300), (0.0, 50_000.0, 300), (-17.0, -3.0, 500),
])
def test_scale_ticks_are_the_smallest_round_step_over_the_span(low, high, pixels):
    from figures.token_axis import scale_ticks

    wanted = (high - low) / max(2.0, math.log(pixels))
    candidates = sorted(m * 10.0 ** k for k in range(-12, 13) for m in (1, 2, 5))
    step = next(c for c in candidates if c >= wanted * (1 - 1e-9))
    ticks = scale_ticks(low, high, pixels)
    values = [value for value, _ in ticks]
    assert len(values) >= 2
    assert all(low - step * 1e-6 <= v <= high + step * 1e-6 for v in values)
    assert np.allclose(np.diff(values), step, rtol=1e-9)
    assert values[0] - step < low - step * 1e-6 and values[-1] + step > high + step * 1e-6  # none missing at the ends
    for value, text in ticks:
        assert abs(float(text) - value) <= step * 1e-3, (value, text)
    assert len({text for _, text in ticks}) == len(ticks)  # every label says its own value


def test_scale_ticks_of_an_empty_or_broken_span():
    from figures.token_axis import scale_ticks

    assert scale_ticks(0.0, 0.0, 300) == [(0.0, "0")]
    assert scale_ticks(float("nan"), 1.0, 300) == []
    assert scale_ticks(0.0, float("inf"), 300) == [(0.0, "0")]
    assert scale_ticks(0.0, 1.0, 0) == [(0.0, "0")]


def test_the_image_is_pyqtgraphs_image_premultiplied(qtbot):
    from app.heatmap import MatrixImage

    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((9, 13)).astype(np.float32)
    matrix[2, 5] = np.nan
    images = []
    for kind in (MatrixImage, pg.ImageItem):
        item = kind(axisOrder="row-major")
        item.setColorMap(pg.colormap.get("CET-D1"))
        item.setImage(matrix, levels=(-2.0, 2.0), autoLevels=False)
        item.render()
        images.append(item.qimage.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied))
    ours, theirs = images
    assert (ours.width(), ours.height()) == (13, 9)
    assert all(ours.pixel(x, y) == theirs.pixel(x, y) for x in range(13) for y in range(9))
    assert QColor.fromRgba(ours.pixel(5, 2)).alpha() == 0  # the masked cell stays see-through


def test_hatching_only_where_cells_are_masked(qtbot):
    finite = _shown(qtbot, np.eye(4, dtype=np.float32), list("abcd"), levels=(0.0, 1.0))
    assert not finite.heat.backdrop.isVisible()
    masked = np.where(np.tril(np.ones((4, 4))) > 0, 0.25, -np.inf).astype(np.float32)
    finite.set_matrix(masked, list("abcd"), list("abcd"), levels=(0.0, 1.0))
    assert finite.heat.backdrop.isVisible()
    finite.clear_matrix()
    assert not finite.heat.backdrop.isVisible()


@pytest.mark.parametrize("transform", [QTransform(60, 0, 0, 40, 30, 20), QTransform(80, 0, 0, -36, 40, 200)])
def test_cell_numbers_are_centred_on_their_cells(qapp, transform):
    from app.heatmap import CellValues

    rows, columns = 4, 3
    texts = [["8.88" if (i, j) != (1, 2) else "" for j in range(columns)] for i in range(rows)]
    dark = np.zeros((rows, columns), dtype=bool)  # dark text on the white image
    values = CellValues()
    values.set_values(texts, dark)
    image = QImage(400, 260, QImage.Format.Format_ARGB32)
    image.fill(QColor(255, 255, 255))
    painter = QPainter(image)
    painter.setTransform(transform)
    values.paint(painter)
    painter.end()
    pixels = np.array([[QColor(image.pixel(x, y)).red() < 128 for x in range(400)] for y in range(260)])
    for i in range(rows):
        for j in range(columns):
            centre = transform.map(QPointF(j, i))
            cell = QRectF(centre.x() - abs(transform.m11()) / 2, centre.y() - abs(transform.m22()) / 2,
                          abs(transform.m11()), abs(transform.m22()))
            inside = pixels[int(cell.top()):int(cell.bottom()), int(cell.left()):int(cell.right())]
            ys, xs = np.nonzero(inside)
            if not texts[i][j]:
                assert not len(xs), (i, j)
                continue
            assert len(xs) > 10, (i, j)
            assert abs(cell.left() + (xs.min() + xs.max()) / 2 - centre.x()) <= 2.5, (i, j)
            assert abs(cell.top() + (ys.min() + ys.max()) / 2 - centre.y()) <= 3.5, (i, j)
    assert pixels.sum() == sum(
        np.nonzero(pixels[int(transform.map(QPointF(j, i)).y() - abs(transform.m22()) / 2):
                          int(transform.map(QPointF(j, i)).y() + abs(transform.m22()) / 2),
                          int(transform.map(QPointF(j, i)).x() - abs(transform.m11()) / 2):
                          int(transform.map(QPointF(j, i)).x() + abs(transform.m11()) / 2)])[0].size
        for i in range(rows) for j in range(columns))  # no text outside the cells


@pytest.mark.parametrize("name", ["viridis", "CET-D1"])
def test_the_colour_bar_runs_from_the_lowest_colour_at_the_bottom_to_the_highest_on_top(qtbot, name):
    view = _shown(qtbot, np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4), list("abcd"), levels=(-1.0, 1.0),
                  colormap=name)
    bar = view.colorbar
    assert bar.levels() == (-1.0, 1.0) and bar.colorMap().name == name
    image = view.grab().toImage()
    box = view.mapFromScene(bar.vb.mapRectToScene(bar.vb.boundingRect())).boundingRect()
    x = box.center().x()
    lut = pg.colormap.get(name).getLookupTable(nPts=256, alpha=False)  # (256, 3)
    for y, index in ((box.bottom() - 4, 0), (box.top() + 4, 255), (box.center().y(), 128)):
        colour = np.array(QColor(image.pixel(int(x), int(y))).getRgb()[:3])
        near = lut[max(0, index - 5): index + 6].astype(int)  # 4 px from an end: a few of the 256 rows in
        assert np.abs(near - colour).max(axis=1).min() <= 3, (name, y, colour, lut[index])
