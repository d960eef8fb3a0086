"""Pictures a newcomer can read: labels, masked cells, exported figures."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from engine import AttentionConfig, compute

ANIMAL = "The animal didn't cross the street because it was too tired."


def _drawn_labels(axis) -> list[str]:
    """The tick texts the axis really paints (after pyqtgraph's own overlap culling)."""
    from PySide6.QtGui import QImage, QPainter

    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [text.strip() for _, _, text in specs[2]] if specs else []


def shown_weights(qtbot, result, width: int, height: int):
    """Head 0's weights of ``result`` in a HeatmapView of ``width`` × ``height`` pixels, shown, ticks laid out."""
    from app.heatmap import HeatmapView

    view = HeatmapView()
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    view.set_matrix(result.weights[0], result.token_texts, result.token_texts, levels=(0.0, 1.0))
    QApplication.processEvents()
    view.heat.update_ticks()
    return view


@pytest.mark.parametrize("words", [12, 24])
def test_every_key_token_is_labelled_at_the_default_size(qtbot, words):
    text = " ".join((ANIMAL.split() * 3)[:words])
    result = compute(AttentionConfig(text=text, tokenizer="whitespace"))
    view = shown_weights(qtbot, result, 560, 420)  # about the attention dock at 1366 × 768
    QApplication.processEvents()
    bottom, left = view.plot.getAxis("bottom"), view.plot.getAxis("left")
    assert [value for value, _ in bottom._tickLevels[0]] == list(range(words))
    assert [value for value, _ in left._tickLevels[0]] == list(range(words))
    assert len(_drawn_labels(bottom)) == words and len(_drawn_labels(left)) == words
    if words == 12:
        assert "animal" in _drawn_labels(bottom)


def test_labels_are_thinned_beyond_24_tokens(qtbot):
    result = compute(AttentionConfig(text=" ".join(f"w{i}" for i in range(80)), tokenizer="whitespace"))
    view = shown_weights(qtbot, result, 560, 420)
    assert len(view.plot.getAxis("bottom")._tickLevels[0]) < 80


def test_masked_cells_write_minus_infinity_in_dark_text(qtbot):
    from app.heatmap import HeatmapView
    from figures.render import image_pixels

    result = compute(AttentionConfig(text="a b c d", tokenizer="whitespace", mask="causal"))
    view = HeatmapView()
    qtbot.addWidget(view)
    view.resize(400, 400)
    view.show()
    view.set_matrix(result.scaled[0], result.token_texts, result.token_texts)
    QApplication.processEvents()
    pixels = image_pixels(view.grab().toImage())[..., :3].astype(int)
    box = view.plot.getViewBox()
    from PySide6.QtCore import QPointF

    centre = view.mapFromScene(box.mapViewToScene(QPointF(3, 0)))  # row 0, column 3: masked
    x, y = centre.x(), centre.y()
    cell = pixels[y - 8:y + 8, x - 14:x + 14].sum(axis=2)
    assert np.isneginf(result.scaled[0, 0, 3])
    assert (cell < 300).sum() > 10, "no dark '−∞' text on the masked cell"


def test_png_export_keeps_axis_titles_and_every_label(qtbot):
    from figures.render import _show_offscreen, build_figure

    result = compute(AttentionConfig(text=ANIMAL))
    widget, plots = build_figure(result, head="all", width=1200)
    _show_offscreen(widget, plots)
    try:
        lefts = [p.plot.getAxis("left").labelText for p in plots]
        bottoms = [p.plot.getAxis("bottom").labelText for p in plots]
        assert lefts == ["query token", "", "query token", ""]
        assert bottoms == ["", "", "key token", "key token"]
        for heat in plots:
            assert len(_drawn_labels(heat.plot.getAxis("bottom"))) == result.n
    finally:
        widget.close()


def test_svg_export_draws_cells_as_vector_rectangles(tmp_path):
    """Every cell is a filled shape of its colour (not one embedded bitmap); labels are text."""
    import collections
    import re

    import pyqtgraph as pg

    from app.heatmap import WEIGHTS_MAP, cell_colours
    from figures.render import export_figure
    from app.jobs.snapshot import summarise

    result = compute(AttentionConfig(text="I ate the cake and it was delicious."))
    path = export_figure(result, tmp_path / "head1.svg", head=1, stage="weights", width=800)
    svg = path.read_text(encoding="utf-8")
    assert svg.count("<image") == 1  # the colour bar's gradient only
    top = max(float(summarise(result).weight_max[[1]].max()), 1e-6)
    expected = cell_colours(result.weights[1].astype(float), (0.0, top), pg.colormap.get(WEIGHTS_MAP))
    wanted = collections.Counter("#%02x%02x%02x" % tuple(c) for c in expected.reshape(-1, 3))
    drawn = collections.Counter(re.findall(r'<g fill="(#[0-9a-f]{6})"', svg))
    assert all(drawn[colour] >= count for colour, count in wanted.items()), (wanted, drawn)
    for token in ("ate", "cake", "delicious", "key token", "query token"):
        assert f">{token}<" in svg.replace("\n", "") or token in svg


def test_an_empty_heatmap_shows_no_axes(qtbot):
    """No meaningless −0.5 … 0 axes before a matrix arrives or after it is cleared."""
    from app.heatmap import HeatmapView

    view = HeatmapView(title="A")
    qtbot.addWidget(view)
    view.set_axis_titles("query token", "key token")
    axes = [view.plot.getAxis("left"), view.plot.getAxis("bottom")]
    assert not any(axis.isVisible() for axis in axes)
    view.set_matrix(np.eye(3), ["a", "b", "c"], ["a", "b", "c"])
    assert all(axis.isVisible() for axis in axes)
    view.clear_matrix()
    assert not any(axis.isVisible() for axis in axes)


def test_row_labels_never_overlap_in_a_tiny_heatmap(qtbot):
    from app.heatmap import MIN_LABEL_PIXELS

    result = compute(AttentionConfig(text=ANIMAL))
    view = shown_weights(qtbot, result, 300, 120)
    rows = len(view.plot.getAxis("left")._tickLevels[0])
    height = view.plot.getViewBox().sceneBoundingRect().height()
    assert height / result.n < MIN_LABEL_PIXELS and rows < result.n
