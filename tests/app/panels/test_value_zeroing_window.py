"""Value zeroing in the window (the Rollout panel's "value zeroing" mode): computed by a worker task,
its rollout after the chosen layer drawn beside attention rollout, equal to the engine's
engine.analysis.value_zeroing of the same text and switched-off heads."""
from __future__ import annotations

import numpy as np
import pytest

from engine.analysis.request import RunRequest
from engine.analysis.rollout import attention_rollout
from engine.analysis.value_zeroing import value_zeroing
from tests.shared_helpers import dock, settle

TEXT = "The cat sat because it was tired."


@pytest.mark.slow
def test_value_zeroing_beside_rollout(window, qtbot, minilm):
    c = window.controller
    c.set_config(c.config.replace(text=TEXT), immediate=True)
    window.model_combo.setCurrentIndex(window.model_combo.findData("minilm"))
    settle(window, qtbot)
    panel = dock(window, "rollout")
    off = frozenset({(2, 5)})
    c.set_ablation(off)
    settle(window, qtbot)
    panel.kind.setCurrentIndex(panel.kind.findData("value_zeroing"))
    c.select(focus=5)
    qtbot.waitUntil(lambda: panel.value_zeroing() is not None, timeout=120000)
    panel.layer.setValue(3)
    settle(window, qtbot)
    expected = value_zeroing(minilm, RunRequest(text=TEXT, ablate=off))
    np.testing.assert_allclose(panel.matrix(), expected.rollout[3], atol=1e-9)
    np.testing.assert_allclose(panel.bars.opts["height"], expected.rollout[3][5], atol=1e-9)
    kept = np.ones((6, 12), dtype=bool)
    kept[2, 5] = False
    rollout = attention_rollout(minilm.run(TEXT, ablate=off).attentions, heads_kept=kept)
    np.testing.assert_allclose(panel.rollout_bars.opts["height"], rollout[3][5], atol=1e-6)
    assert "Value zeroing" in panel.caption.text() and not panel.flow_progress.isVisible()
