"""The patching grid's room: SmolLM2's 30-layer × 16-token residual grid and its head grid show
whole at 1366 × 768 (a maximised window there is 1350 × 720): no scroll bar, every layer's row on
screen with its layer labels thinned, the token axis under it. Each grid's height was once grown to
every row's label, which scrolled the dock there (layers 23–29 and the tokens out of sight) and
re-laid the window out at the click, while the grid ran."""
from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QApplication

from app.jobs.atp import view_of
from app.layout_check import cut_report
from engine.analysis import patching
from engine.analysis.attribution_patching import AttributionPatching

pytestmark = pytest.mark.slow  # a window, and a bundled model

CLEAN = "The famous Eiffel Tower, built long ago, is found in the city of"  # 16 SmolLM2 tokens
CORRUPT = "The famous Colosseum, built long ago, is found in the city of"
ROW_LEAST = 4  # px a grid row keeps: its colour readable as a cell


def _settle(window, seconds: float = 0.4) -> None:
    window.wait_until_idle(120)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:  # the groups' fit runs on timers (one event-loop turn, 50 ms)
        QApplication.processEvents()
        time.sleep(0.01)
    QApplication.processEvents()


def test_smollm2s_patching_grid_fits_at_1366_by_768(window, smollm2_model):
    window.resize(1350, 720)
    _settle(window)
    window.reset_layout()
    window.model_combo.setCurrentIndex(window.model_combo.findData("smollm2"))
    _settle(window, 1.0)
    window.dock_groups.select("evidence")
    dock = window.docks["patching"]
    dock.raise_()
    _settle(window)
    panel = window.panel("patching")
    before = dock.height()
    # a finished grid as the task hands it over (its two runs real; its cells made up: the layout is tested)
    setup = patching.prepare(smollm2_model, CLEAN, CORRUPT, answer=" Paris")
    assert (setup.layers, setup.n, setup.heads) == (30, 16, 9)
    rng = np.random.default_rng(0)
    grids = {"resid_pre": rng.random((30, 16)), "head_z": rng.random((30, 9))}
    # and its attribution-patching estimate beside it, with the agreement lines (made up too)
    estimate = AttributionPatching({name: grid + rng.normal(0, 0.1, grid.shape) for name, grid in grids.items()},
                                   {}, "p(answer)", setup.corrupt_value, setup.clean_value)
    panel.model, panel.running = "smollm2", True
    panel._on_done(view_of(estimate, None, tuple(t.text for t in setup.clean.tokens),
                           patching.PatchResult(setup, grids, {})))
    _settle(window)
    assert dock.height() == before  # nothing grew: no relayout of the window at the click or the result
    assert "patching" not in cut_report(window), cut_report(window)
    for view, columns in ((panel.token_map, 16), (panel.head_map, 9), (panel.atp_token_map, 16),
                          (panel.atp_head_map, 9)):
        box = view.plot.getViewBox().sceneBoundingRect()
        assert box.height() >= 30 * ROW_LEAST, (view.objectName(), box.height())
        bottom = view.plot.getAxis("bottom")
        assert bottom.isVisible() and bottom.sceneBoundingRect().bottom() <= view.height()
        assert len(bottom._tickLevels[0]) == columns  # every token (head) named under the grid
        rows = [tick for tick, _label in view.plot.getAxis("left")._tickLevels[0]]
        assert 5 <= len(rows) < 30 and rows[0] == 0  # layers thinned, never overlapping
        spacing = box.height() / 30 * (rows[1] - rows[0])  # px between two labelled layers
        assert spacing >= QFontMetrics(QFont()).height(), spacing
