"""Heads and layers of the real models in the window (bugs that once survived the suite): a Ctrl+click
switches off the head of the layer on screen, the cross is drawn only in that layer, and a session
reopens on its own layer. Numbers are checked against the engine's plain run: switching off a head
of layer L leaves the attention of layers 0 … L exactly as before and changes the later ones.
"""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

pytestmark = pytest.mark.slow  # real models in a window

TEXT = "the cat sat on the mat because it was tired"


def _show(window, model: str, layer: int, text: str = TEXT) -> None:
    c = window.controller
    c.set_config(c.config.replace(text=text), immediate=True)
    c.set_model(model, layer)
    assert window.wait_until_idle(120)
    assert (c.snapshot.model, c.snapshot.layer) == (model, layer)


def _grid(window, qtbot):
    window.resize(1400, 900)
    window.docks["heads"].show()
    window.docks["heads"].raise_()
    grid = window.panel("heads")
    qtbot.waitUntil(lambda: grid.isVisible() and len(grid.views) == window.controller.snapshot.result.weights.shape[0],
                    timeout=30_000)
    return grid


def _ctrl_click(grid, head: int) -> None:
    """A real Ctrl+click in the middle of head ``head``'s thumbnail."""
    center = grid.views[head].sceneBoundingRect().center()
    point = grid.canvas.mapFromScene(center)
    QTest.mouseClick(grid.canvas.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier, point)


@pytest.mark.parametrize("name", ["minilm", "e5"])
def test_ctrl_click_switches_off_that_head_of_the_layer_shown(window, qtbot, request, name):
    model = request.getfixturevalue(f"{name}_model")
    plain = model.run(TEXT).attentions  # (layers, heads, n, n)
    _show(window, name, 3)
    grid = _grid(window, qtbot)
    _ctrl_click(grid, 2)
    qtbot.waitUntil(lambda: window.controller.ablate != frozenset(), timeout=10000)
    assert window.wait_until_idle(120)
    c = window.controller
    assert c.ablate == frozenset({(3, 2)}), c.ablate
    assert c.snapshot.ablate == frozenset({(3, 2)}) and c.snapshot.layer == 3
    assert grid.switched_off() == [2]
    shown = c.snapshot.bert.attentions
    np.testing.assert_allclose(shown[:4], plain[:4], atol=1e-6)  # layers 0 … 3 attend as before
    assert not np.allclose(shown[4], plain[4], atol=1e-4), "layer 4 must see layer 3's head 2 gone"


def test_a_head_off_in_layer_2_is_crossed_out_only_in_layer_2(window, qtbot, minilm_model):
    _show(window, "minilm", 2)
    grid = _grid(window, qtbot)
    window.controller.set_ablation({(2, 1)})
    assert window.wait_until_idle(120)
    assert grid.switched_off() == [1]
    layers = minilm_model.config.num_layers
    for layer in [0, 1, 3, layers - 1]:
        window.controller.set_model("minilm", layer)
        assert window.wait_until_idle(120)
        assert window.controller.snapshot.layer == layer
        assert grid.switched_off() == [], f"layer {layer} shows layer 2's head crossed out"
    window.controller.set_model("minilm", 2)
    assert window.wait_until_idle(120)
    assert grid.switched_off() == [1]


def test_a_session_of_layer_7_reopens_on_layer_7(window, qtbot, tmp_path, e5_model):
    from app.window import MainWindow

    _show(window, "e5", 7, "小明喜欢苹果")
    window.controller.select(head=5)
    assert window.wait_until_idle(60)
    path = tmp_path / "layer7.json"
    assert window.save_session(str(path))
    fresh = MainWindow(restore=False)
    qtbot.addWidget(fresh)
    fresh.show()
    try:
        assert fresh.wait_until_idle(60)
        assert fresh.controller.model == "toy"
        fresh.open_session_in_background(str(path))  # as the menu opens it
        qtbot.waitUntil(lambda: fresh.controller.model == "e5", timeout=60000)
        assert fresh.wait_until_idle(120)
        c = fresh.controller
        assert (c.layer, c.snapshot.layer, fresh.layer_spin.value(), c.head) == (7, 7, 7, 5)
        trace = e5_model.run("小明喜欢苹果")
        np.testing.assert_allclose(fresh.panels["attention"].heatmap.matrix(), trace.attentions[7, 5], atol=1e-6)
    finally:
        fresh.close()
        assert fresh.controller.worker.wait_until_idle(60)
