"""Attribution patching beside the exact grid in the patching dock: the AtP grids drawn are the
engine's estimate for the same pair, drawn before the exact grid's first row; the correlation and
the disagreeing cells shown are checked against a float64 loop written here; an AtP cell opens what
its exact cell opens; a newer pair's or a cancelled task's estimate is never drawn; a model the
backward refuses gets the engine's reason on one line and the exact grid as before."""
from __future__ import annotations

import math

import numpy as np
import pytest

from engine.analysis.attribution_patching import attribution_patching
from engine.analysis.patching import activation_patching
from engine.analysis.request import RunRequest
from engine.core.errors import EngineError

pytestmark = pytest.mark.slow  # a dock on the real MiniLM

CLEAN = "The cat sat on the mat."  # 8 MiniLM tokens with [CLS] and [SEP]
CORRUPT = "The dog sat on the mat."
POSITION = 2  # the token whose final vector is compared: "cat" / "dog"


def _panel(standalone_panel, qtbot, minilm):
    from app.panels.evidence_panel import PatchingPanel

    controller, panel = standalone_panel(PatchingPanel, 1300, 420)
    controller.set_model("minilm")
    qtbot.waitUntil(lambda: bool(controller.is_idle()) and controller.snapshot is not None, timeout=120000)
    panel.clean.setText(CLEAN)
    panel.corrupt.setText(CORRUPT)
    panel.position.setValue(POSITION)
    return controller, panel


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson's r over the cells where both are finite, as a float64 loop."""
    pairs = [(float(x), float(y)) for x, y in zip(a.ravel(), b.ravel()) if math.isfinite(x) and math.isfinite(y)]
    mx = sum(x for x, _ in pairs) / len(pairs)
    my = sum(y for _, y in pairs) / len(pairs)
    sxy = sum((x - mx) * (y - my) for x, y in pairs)
    sxx = sum((x - mx) ** 2 for x, _ in pairs)
    syy = sum((y - my) ** 2 for _, y in pairs)
    return sxy / math.sqrt(sxx * syy)


def _apart(a: np.ndarray, b: np.ndarray, top: int) -> list[tuple[int, int]]:
    """The ``top`` cells of largest |a − b|, largest first (a loop, not the engine's argsort)."""
    gaps = [(abs(float(a[r, c]) - float(b[r, c])), r, c) for r in range(a.shape[0]) for c in range(a.shape[1])]
    gaps.sort(key=lambda g: -g[0])
    return [(r, c) for _, r, c in gaps[:top]]


def test_atp_grids_first_then_exact_with_agreement(standalone_panel, qtbot, minilm):
    from app.jobs.atp import TOP_CELLS

    controller, panel = _panel(standalone_panel, qtbot, minilm)
    events = []  # after the panel's own slot has drawn each partial result

    def seen(view) -> None:
        exact = 0 if panel.setup is None else int(sum(np.isfinite(g).sum() for g in panel.grids.values()))
        events.append((panel.atp_token_map.matrix() is not None, panel.token_map.matrix() is not None, exact))

    panel._lane.partial.connect(seen)
    panel.start()
    qtbot.waitUntil(lambda: not panel.running, timeout=300000)
    # the estimate is drawn before the exact grid has a cell (event order, not timing)
    assert events[0] == (True, False, 0)
    assert all(atp for atp, _, _ in events) and events[-1][2] > 0
    estimate = attribution_patching(minilm, CLEAN, CORRUPT, position=POSITION, grids=("resid_pre", "head_z"))
    np.testing.assert_array_equal(panel.atp_token_map.matrix(), estimate.grids["resid_pre"])
    np.testing.assert_array_equal(panel.atp_head_map.matrix(), estimate.grids["head_z"])
    exact = activation_patching(minilm, RunRequest(text=CLEAN, position=POSITION), CORRUPT, ("resid_pre", "head_z"))
    np.testing.assert_allclose(panel.token_map.matrix(), exact.grids["resid_pre"], atol=1e-6)
    # one colour scale: the AtP grids are drawn at the exact grids' levels
    assert tuple(panel.atp_token_map.heat.levels) == tuple(panel.token_map.heat.levels)
    assert tuple(panel.atp_head_map.heat.levels) == tuple(panel.token_map.heat.levels)
    text = panel.atp_line.text()
    tokens = [t.text for t in minilm.tokenize(CLEAN).tokens]
    for name, title in (("resid_pre", "residual stream"), ("head_z", "heads")):
        r = _pearson(estimate.grids[name], exact.grids[name])
        agreement = panel.view.agreement[name]
        assert abs(agreement.correlation - r) < 1e-9
        assert agreement.compared == exact.grids[name].size
        assert f"{title} r = {r:.3f} ({exact.grids[name].size} cells)" in text
        cells = _apart(estimate.grids[name], exact.grids[name], TOP_CELLS)
        assert [(row, column) for row, column, _, _ in agreement.cells] == cells
        for row, column in cells:  # each named by layer and token (or head), with both values
            where = f"L{row} H{column}" if name == "head_z" else f"L{row} “{tokens[column]}”"
            assert f"{where} {estimate.grids[name][row, column]:.2g} / {exact.grids[name][row, column]:.2g}" in text
    assert "first-order" in text and "attention saturates" in text and "p(answer) is near 0" in text
    # hover tells both values; a click on an AtP cell opens what the exact cell opens
    panel.atp_token_map.cellHovered.emit(3, 2)
    tip = panel.atp_token_map.toolTip()
    assert tip == (f"L3 “{tokens[2]}” — exact {exact.grids['resid_pre'][3, 2]:.4g}, "
                   f"AtP estimate {estimate.grids['resid_pre'][3, 2]:.4g}")
    panel.atp_token_map.cellClicked.emit(4, 2)
    qtbot.waitUntil(lambda: bool(controller.is_idle()), timeout=60000)
    assert controller.layer == 4 and controller.focus == 2
    panel.atp_head_map.cellClicked.emit(1, 7)
    qtbot.waitUntil(lambda: bool(controller.is_idle()), timeout=60000)
    assert controller.layer == 1 and controller.head == 7


def test_a_newer_pair_or_cancel_drops_the_estimate(standalone_panel, qtbot, minilm):
    controller, panel = _panel(standalone_panel, qtbot, minilm)
    drawn = []
    panel._lane.partial.connect(lambda view: drawn.append(view))
    # Esc before anything arrived: nothing of the task is drawn afterwards
    panel.start()
    panel.cancel()
    controller.worker.wait_until_idle(120)
    qtbot.wait(100)
    assert drawn == [] and panel.atp_token_map.matrix() is None and not panel.running
    # a new pair while the first is computing: only the newer pair's estimate is drawn
    panel.start()
    other = "A dog sat on the mat."
    panel.clean.setText(other)
    panel.start()
    qtbot.waitUntil(lambda: panel.view is not None, timeout=120000)
    panel.cancel()
    estimate = attribution_patching(minilm, other, CORRUPT, position=POSITION, grids=("resid_pre", "head_z"))
    np.testing.assert_array_equal(panel.atp_token_map.matrix(), estimate.grids["resid_pre"])
    first = attribution_patching(minilm, CLEAN, CORRUPT, position=POSITION, grids=("resid_pre", "head_z"))
    assert not any(np.array_equal(v.estimate.grids["resid_pre"], first.grids["resid_pre"]) for v in drawn)


def test_a_refused_model_gets_one_line_and_the_exact_grid(standalone_panel, qtbot, minilm, monkeypatch):
    import engine.analysis.attribution_patching as atp

    # the backward's own refusal (gradients.check_supported's), as a family it does not follow raises it
    def refuse(model) -> None:
        raise EngineError("gradients need a pretrained encoder or decoder of the Llama, Qwen2, GPT-2 or BERT "
                          "shape; {family} is not one", field="model", family="gemma2")

    monkeypatch.setattr(atp, "check_supported", refuse)
    controller, panel = _panel(standalone_panel, qtbot, minilm)
    panel.start()
    qtbot.waitUntil(lambda: not panel.running, timeout=300000)
    assert panel.atp_line.text() == ("No AtP estimate: gradients need a pretrained encoder or decoder of the Llama, "
                                     "Qwen2, GPT-2 or BERT shape; gemma2 is not one")
    assert panel.atp_token_map.isHidden() and panel.atp_head_map.isHidden()
    exact = activation_patching(minilm, RunRequest(text=CLEAN, position=POSITION), CORRUPT, ("resid_pre", "head_z"))
    np.testing.assert_allclose(panel.token_map.matrix(), exact.grids["resid_pre"], atol=1e-6)
    assert not panel.is_partial()


def test_logit_difference_on_smollm2_over_the_cells_so_far(standalone_panel, qtbot, smollm2_model):
    """The Eiffel pair on SmolLM2, stopped after the first exact rows: the Measure box shows both
    sides' logit-difference grids, and the correlation is over the exact cells run so far."""
    from engine.analysis import patching

    from app.panels.evidence_panel import PatchingPanel

    clean, corrupt = "The Eiffel Tower is in the city of", "The Colosseum is in the city of"
    controller, panel = standalone_panel(PatchingPanel, 1300, 420)
    controller.set_model("smollm2")
    qtbot.waitUntil(lambda: bool(controller.is_idle()) and controller.snapshot is not None, timeout=120000)
    panel.clean.setText(clean)
    panel.corrupt.setText(corrupt)
    panel.answer.setText(" Paris")
    panel.start()
    qtbot.waitUntil(lambda: bool(panel.diffs) and np.isfinite(panel.diffs["resid_pre"]).any(), timeout=300000)
    panel.cancel()
    assert panel.is_partial()
    panel.measure.setCurrentIndex(panel.measure.findData("diff"))
    estimate = attribution_patching(smollm2_model, clean, corrupt, " Paris", grids=("resid_pre", "head_z"))
    np.testing.assert_array_equal(panel.atp_token_map.matrix(), estimate.logit_diffs["resid_pre"])
    np.testing.assert_array_equal(panel.atp_head_map.matrix(), estimate.logit_diffs["head_z"])
    shown = panel.token_map.matrix()
    done = np.isfinite(shown).all(axis=1)
    assert 0 < done.sum() < shown.shape[0]  # a partial grid: rows run, rows not
    row = patching.patch_row(patching.prepare(smollm2_model, clean, corrupt, " Paris"), "resid_pre", 0)
    np.testing.assert_allclose(shown[0], row.diffs, rtol=1e-5, atol=1e-5)  # the logit differences, not p
    r = _pearson(estimate.logit_diffs["resid_pre"], shown)  # over the cells run so far
    assert f"residual stream r = {r:.3f} ({int(np.isfinite(shown).sum())} cells)" in panel.atp_line.text()
    assert abs(panel.view.diff_agreement["resid_pre"].correlation - r) < 1e-9
    cells = [(i, j) for i, j in _apart(np.where(np.isfinite(shown), estimate.logit_diffs["resid_pre"], 0.0),
                                       np.where(np.isfinite(shown), shown, 0.0), 3)]
    assert [(i, j) for i, j, _, _ in panel.view.diff_agreement["resid_pre"].cells] == cells
    # back to p(answer): the p grids again, on both sides
    panel.measure.setCurrentIndex(panel.measure.findData("p"))
    np.testing.assert_array_equal(panel.atp_token_map.matrix(), estimate.grids["resid_pre"])
    np.testing.assert_array_equal(panel.token_map.matrix(), panel.grids["resid_pre"])
