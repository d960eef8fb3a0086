"""Pictures a newcomer can read (issue 11, items 6 and 8): labels, masked cells, exported figures."""
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


@pytest.mark.parametrize("words", [12, 24])
def test_every_key_token_is_labelled_at_the_default_size(qtbot, words):
    from app.heatmap import HeatmapView

    text = " ".join((ANIMAL.split() * 3)[:words])
    result = compute(AttentionConfig(text=text, tokenizer="whitespace"))
    view = HeatmapView()
    qtbot.addWidget(view)
    view.resize(560, 420)  # about the attention dock at 1366 × 768
    view.show()
    view.set_matrix(result.weights[0], result.token_texts, result.token_texts, levels=(0.0, 1.0))
    QApplication.processEvents()
    view.heat.update_ticks()
    QApplication.processEvents()
    bottom, left = view.plot.getAxis("bottom"), view.plot.getAxis("left")
    assert [value for value, _ in bottom._tickLevels[0]] == list(range(words))
    assert [value for value, _ in left._tickLevels[0]] == list(range(words))
    assert len(_drawn_labels(bottom)) == words and len(_drawn_labels(left)) == words
    if words == 12:
        assert "animal" in _drawn_labels(bottom)


def test_labels_are_thinned_beyond_24_tokens(qtbot):
    from app.heatmap import HeatmapView

    result = compute(AttentionConfig(text=" ".join(f"w{i}" for i in range(80)), tokenizer="whitespace"))
    view = HeatmapView()
    qtbot.addWidget(view)
    view.resize(560, 420)
    view.show()
    view.set_matrix(result.weights[0], result.token_texts, result.token_texts, levels=(0.0, 1.0))
    QApplication.processEvents()
    view.heat.update_ticks()
    assert len(view.plot.getAxis("bottom")._tickLevels[0]) < 80


def test_masked_cells_write_minus_infinity_in_dark_text(qtbot):
    from app.heatmap import HeatmapView
    from app.render import image_pixels

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
    from app.render import _show_offscreen, build_figure

    result = compute(AttentionConfig(text=ANIMAL))
    widget, plots = build_figure(result, head="all", width=1200)
    widget._plots = plots
    _show_offscreen(widget)
    try:
        lefts = [p.plot.getAxis("left").labelText for p in plots]
        bottoms = [p.plot.getAxis("bottom").labelText for p in plots]
        assert lefts == ["query token", "", "query token", ""]
        assert bottoms == ["", "", "key token", "key token"]
        for heat in plots:
            assert len(_drawn_labels(heat.plot.getAxis("bottom"))) == result.n
    finally:
        widget.close()
