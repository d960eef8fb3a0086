"""Model layers in a short dock: the weight map turns so that every layer is a labelled column (at
1024 × 600 the rows of SmolLM2's 30 layers came out a few pixels each, only layer 0 labelled), and
stands as layers × heads with the thumbnails again when the dock is tall."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

pytestmark = pytest.mark.slow  # a real model

SENTENCE = "The animal didn't cross the street because it was too tired."


def _labelled(view, axis: str) -> list[int]:
    levels = view.heat.plot.getAxis(axis)._tickLevels or []
    return sorted(int(position) for level in levels for position, _text in level)


def test_a_short_dock_turns_the_weight_map_so_every_layer_is_a_column(qtbot, smollm2_model):
    from app.controller import Controller
    from app.panels.layers_panel import LayersPanel
    from app.pretrained import take_pretrained_snapshot
    from app.shell.docks import scrolling

    controller = Controller()
    try:
        panel = LayersPanel(controller)
        box = scrolling(panel)
        qtbot.addWidget(box)
        snapshot = take_pretrained_snapshot("smollm2", SENTENCE, 0)
        controller.model, controller.snapshot, controller.focus = "smollm2", snapshot, 8
        box.resize(709, 200)  # Model layers' viewport at 1024 × 600
        box.show()
        panel.on_snapshot_changed(snapshot)
        for _ in range(10):
            QApplication.processEvents()
        weights = panel.pair_weights()  # (layers, heads)
        assert weights.shape == (30, 9)
        assert panel._compact and not panel.grid.isVisibleTo(panel)
        assert (panel.pair_map.matrix() == weights.T).all()  # heads down, layers across
        columns = _labelled(panel.pair_map, "bottom")
        assert columns[0] == 0 and columns[-1] >= 28 and len(columns) >= 15  # every layer's column, labelled at least every other
        best = np.unravel_index(int(np.argmax(weights)), weights.shape)
        assert panel.pair_best.isVisibleTo(panel)  # the map's title line goes to its rows
        assert f"strongest at layer {best[0]}, head {best[1]}" in panel.pair_best.text()
        box.resize(709, 600)  # tall: layers down again, and the thumbnails
        for _ in range(10):
            QApplication.processEvents()
        assert not panel._compact and panel.grid.isVisibleTo(panel) and not panel.pair_best.isVisibleTo(panel)
        assert (panel.pair_map.matrix() == weights).all()
    finally:
        controller.shutdown()
