"""Evidence in the window: attention flow beside rollout, leave-one-out bars and the patching
dock (grids filled row by row by one worker task, Esc leaves a partial grid marked partial, a model
switch or new switched-off heads mid-grid drop it, a click opens the cell, closing mid-grid ends
at once). Every number shown is compared with the engine's own functions, with heads switched
off as the window's other views use them."""
from __future__ import annotations

import numpy as np
import pytest

from engine.analysis import patching
from engine.analysis.flow import attention_flow
from engine.analysis.occlusion import occlusion
from tests.shared_helpers import dock as _dock, settle as _settle  # noqa: E402

pytestmark = pytest.mark.slow  # whole windows and real models

ANIMAL = "The animal didn't cross the street because it was too tired."
WIDE = "The animal didn't cross the street because it was too wide."


def _minilm(window, qtbot, text=ANIMAL):
    c = window.controller
    c.set_config(c.config.replace(text=text), immediate=True)
    window.model_combo.setCurrentIndex(window.model_combo.findData("minilm"))
    _settle(window, qtbot)


def test_flow_beside_rollout(window, qtbot, minilm):
    _minilm(window, qtbot)
    panel = _dock(window, "rollout")
    panel.kind.setCurrentIndex(panel.kind.findData("flow"))
    window.controller.select(focus=10)  # "it"
    qtbot.waitUntil(lambda: panel.flow() is not None, timeout=120000)
    _settle(window, qtbot)
    expected = attention_flow(minilm.run(ANIMAL).attentions)
    np.testing.assert_allclose(panel.flow(), expected, atol=1e-9)
    np.testing.assert_allclose(panel.heatmap.matrix(), expected, atol=1e-9)
    np.testing.assert_allclose(panel.bars.opts["height"], expected[10], atol=1e-9)
    assert panel.rollout_bars.opts["height"].shape == (16,) and "flow" in panel.caption.text()
    # switched-off heads: flow and rollout of the ablated run, those heads as zero weights (both alike)
    off = frozenset({(1, 3), (1, 7), (4, 0)})
    window.controller.set_ablation(off)
    qtbot.waitUntil(lambda: panel.flow() is not None and window.controller.snapshot.ablate == off, timeout=120000)
    _settle(window, qtbot)
    trace = minilm.run(ANIMAL, ablate=off)
    kept = np.ones((6, 12), dtype=bool)
    kept[1, [3, 7]] = kept[4, 0] = False
    np.testing.assert_allclose(panel.flow(), attention_flow(trace.attentions, heads_kept=kept), atol=1e-9)
    from engine.analysis.rollout import attention_rollout

    np.testing.assert_allclose(panel.rollout_bars.opts["height"],
                               attention_rollout(trace.attentions, heads_kept=kept)[-1][10], atol=1e-6)
    assert "3 switched-off heads count as zero weights" in panel.caption.text()


def test_leave_one_out_bars(window, qtbot, minilm):
    _minilm(window, qtbot)
    panel = _dock(window, "occlusion")
    partial = []
    panel._lane.partial.connect(lambda r: partial.append(int(np.isfinite(r.values).sum())))
    panel.start()
    qtbot.waitUntil(lambda: panel.result is not None, timeout=120000)
    expected = occlusion(minilm, ANIMAL)
    np.testing.assert_allclose(panel.values(), expected.values, atol=1e-9)
    np.testing.assert_allclose(panel.bars.opts["height"], 1.0 - expected.values, atol=1e-9)
    assert "Largest" in panel.caption.text()
    assert partial == list(range(1, 16))  # the bars came token by token, from one task


def test_leave_one_out_with_heads_off_and_an_edit_mid_job(window, qtbot, minilm):
    """Switched-off heads are off in every run the bars read; a new text mid-job drops the job."""
    from engine.analysis.occlusion import leave_one_out
    from engine.analysis.request import RunRequest

    _minilm(window, qtbot)
    off = frozenset({(1, 3), (4, 0)})
    window.controller.set_ablation(off)
    _settle(window, qtbot)
    panel = _dock(window, "occlusion")
    panel.start()
    qtbot.waitUntil(lambda: panel.result is not None, timeout=120000)
    expected = leave_one_out(minilm, RunRequest(text=ANIMAL, ablate=off))
    np.testing.assert_allclose(panel.values(), expected.values, atol=1e-9)
    assert "2 heads switched off" in panel.caption.text()
    panel.start()
    assert panel.running
    c = window.controller
    c.set_config(c.config.replace(text=WIDE), immediate=True)
    _settle(window, qtbot)
    assert not panel.running and panel.result is None and "changed" in panel.caption.text()


def test_patching_dock_grids_cancel_and_model_switch(window, qtbot, minilm):
    from engine.analysis.request import RunRequest

    _minilm(window, qtbot)
    off = frozenset({(1, 3), (4, 0)})
    window.controller.set_ablation(off)  # the grid reads the same model as the other views
    _settle(window, qtbot)
    panel = _dock(window, "patching")
    panel.clean.setText(ANIMAL)
    panel.corrupt.setText(WIDE)
    panel.position.setValue(10)
    rows = []
    panel._lane.partial.connect(lambda v: v.exact is None or rows.append(  # the AtP estimate comes alone, first
        int(sum(np.isfinite(v.exact.grids[g]).all(axis=1).sum() for g in ("resid_pre", "head_z")))))
    panel.start()
    qtbot.waitUntil(lambda: not panel.running, timeout=300000)
    expected = patching.activation_patching(minilm, RunRequest(text=ANIMAL, position=10, ablate=off), WIDE,
                                            grids=("resid_pre", "head_z"))  # what `./run patch` runs
    np.testing.assert_allclose(panel.token_map.matrix(), expected.grids["resid_pre"], atol=1e-6)
    np.testing.assert_allclose(panel.head_map.matrix(), expected.grids["head_z"], atol=1e-6)
    plain = patching.patch_row(patching.prepare(minilm, ANIMAL, WIDE, position=10), "resid_pre", 5)
    assert np.abs(plain.values - expected.grids["resid_pre"][5]).max() > 1e-4  # the heads matter here
    assert not panel.is_partial() and "PARTIAL" not in panel.caption.text()
    assert "2 heads switched off" in panel.caption.text()
    assert rows == list(range(0, 13))  # before the first row, then one partial grid a row
    # a click on a cell opens that layer and token
    panel._open_token(3, 13)
    _settle(window, qtbot)
    assert window.controller.layer == 3 and window.controller.focus == 13
    # Esc mid-grid: the cells done stay, marked partial
    panel.start()
    qtbot.waitUntil(lambda: panel.setup is not None and np.isfinite(panel.grids["resid_pre"]).any(), timeout=120000)
    from PySide6.QtCore import Qt

    qtbot.keyClick(window, Qt.Key.Key_Escape)
    assert not panel.running and panel.is_partial() and "PARTIAL" in panel.caption.text()
    shown = panel.token_map.matrix().copy()
    done = np.isfinite(panel.grids["resid_pre"]).sum() + np.isfinite(panel.grids["head_z"]).sum()
    assert 0 < done < 6 * 16 + 6 * 12
    _settle(window, qtbot)  # nothing of the stopped task arrives afterwards
    np.testing.assert_array_equal(panel.token_map.matrix(), shown)
    # switching heads on or off mid-grid drops it
    panel.start()
    window.controller.set_ablation(frozenset())
    assert not panel.running and panel.setup is None and "dropped" in panel.caption.text()
    # a model switch mid-grid drops it
    panel.start()
    window.model_combo.setCurrentIndex(window.model_combo.findData("toy"))
    _settle(window, qtbot)
    assert panel.setup is None and panel.token_map.matrix() is None and not panel.running


def test_closing_the_window_mid_grid_ends_within_a_second(window, qtbot, minilm):
    import time

    _minilm(window, qtbot)
    panel = _dock(window, "patching")
    panel.clean.setText(ANIMAL)
    panel.corrupt.setText(WIDE)
    panel.start()
    qtbot.waitUntil(lambda: panel.setup is not None and np.isfinite(panel.grids["resid_pre"]).any(), timeout=120000)
    assert panel.running
    worker = window.controller.worker
    started = time.monotonic()
    window.close()
    while worker.is_alive() and time.monotonic() - started < 1.0:
        time.sleep(0.01)
    assert not worker.is_alive(), "the worker thread outlived the closed window by a second"


def test_layers_overview_switches_heads_off(window, qtbot, minilm):
    _minilm(window, qtbot)
    panel = _dock(window, "layers")
    _settle(window, qtbot)
    from PySide6.QtCore import QPointF, Qt

    class _Click:  # what the scene's sigMouseClicked hands over
        def __init__(self, pos, button, modifiers=Qt.KeyboardModifier.NoModifier):
            self._pos, self._button, self._modifiers = pos, button, modifiers

        def button(self):
            return self._button

        def modifiers(self):
            return self._modifiers

        def scenePos(self):  # noqa: N802
            return self._pos

    view = panel.thumbs[2][5][0]
    centre = view.sceneBoundingRect().center()
    panel._on_grid_clicked(_Click(QPointF(centre), Qt.MouseButton.RightButton))
    _settle(window, qtbot)
    assert window.controller.ablate == frozenset({(2, 5)})
    assert panel.switched_off() == {(2, 5)}
    panel._on_grid_clicked(_Click(QPointF(centre), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier))
    _settle(window, qtbot)
    assert window.controller.ablate == frozenset() and panel.switched_off() == set()


def test_patching_dock_empty_state_on_the_toy_engine(window, qtbot, minilm):
    """On the toy engine the dock explains that patching needs a trained model and
    how to open one, instead of a form whose button only fails; a pretrained model brings the form."""
    panel = _dock(window, "patching")
    assert window.controller.model == "toy"
    assert panel.is_empty_state() and panel.body.isHidden() and not panel.empty.isHidden()
    text = panel.empty.text()
    assert "trained model" in text and "Model bar" in text and "Open model" in text
    _minilm(window, qtbot)
    assert not panel.is_empty_state() and not panel.body.isHidden() and panel.empty.isHidden()
    window.model_combo.setCurrentIndex(window.model_combo.findData("toy"))
    _settle(window, qtbot)
    assert panel.is_empty_state() and panel.body.isHidden()
