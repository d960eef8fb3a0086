"""The Attribution dock (app/panels/attribution_panel.py) on a tiny GGUF decoder: what it draws is
the engine's own attribution and lens grid of the window's text with its switched-off heads, a
click selects the head or opens the layer and token, and the toy engine gets one line of why."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gguf")
pytest.importorskip("tokenizers")

from engine.analysis.dla import logit_attribution  # noqa: E402
from engine.analysis.lens_grid import lens_grid  # noqa: E402
from engine.analysis.request import RunRequest  # noqa: E402
from engine.analysis.runs import Runs  # noqa: E402
from tests.shared_helpers import dock, open_tiny_gguf, wait_for  # noqa: E402

pytestmark = pytest.mark.slow  # a window

TEXT = " the cat sat on the mat"


def test_attribution_dock_draws_the_engine_results_and_opens_clicks(window, tmp_path):
    from engine.models.smollm2 import load_gguf

    c = window.controller
    name, path = open_tiny_gguf(window, tmp_path, "llama", TEXT)
    off = frozenset({(0, 1)})
    c.set_ablation(off)
    wait_for(lambda: c.snapshot.ablate == off and c.is_idle())
    panel = dock(window, "attribution")
    panel.answer.setText(" cat")
    panel.contrast.setText(" mat")
    panel.start()
    wait_for(lambda: panel.result is not None, timeout=120)
    model = load_gguf(path)
    request = RunRequest(text=TEXT, ablate=off, answer=" cat", contrast=" mat", lens_grid=True)
    expected = logit_attribution(model, request, Runs(model, request))
    np.testing.assert_allclose(panel.heads.matrix(), expected.heads, rtol=0, atol=1e-9)
    assert panel.heads.matrix()[0, 1] == 0.0  # the switched-off head adds nothing
    grid = lens_grid(model, request, Runs(model, request))
    np.testing.assert_allclose(panel.grid.matrix(), grid.p_answer, rtol=0, atol=1e-9)
    panel.colour.setCurrentIndex(panel.colour.findData("top_probabilities"))
    np.testing.assert_allclose(panel.grid.matrix(), grid.top_probabilities, rtol=0, atol=1e-9)
    curves = [item.getData()[1] for item in panel.layers.getPlotItem().listDataItems()]
    np.testing.assert_allclose(curves[0], expected.accumulated[:, -1], rtol=0, atol=1e-9)
    # File → Export data writes the attribution on screen, as `export --dla --contrast --lens-grid` does
    out = tmp_path / "shown.npz"
    window.exports.export_data(str(out))
    wait_for(lambda: out.exists(), timeout=120)
    with np.load(out) as saved:
        np.testing.assert_allclose(saved["dla_heads"], expected.heads, rtol=0, atol=1e-9)
        assert saved["dla_heads"][0, 1] == 0.0
        np.testing.assert_allclose(saved["logit_diff"], expected.logit, rtol=0, atol=1e-9)
        np.testing.assert_allclose(saved["lens_p_answer"], grid.p_answer, rtol=0, atol=1e-9)
        assert "route_edges" not in saved  # the Routes dock was never opened
    assert f"{expected.logit:.3f}" in panel.caption.text() and "1 heads switched off" in panel.caption.text()
    panel.heads.cellClicked.emit(1, 2)  # a head cell selects that head of that layer
    wait_for(lambda: c.is_idle() and c.snapshot.layer == 1)
    assert c.head == 2
    panel.grid.cellClicked.emit(2, 3)  # lens row 2 is layer 1's output: opens layer 1, token 3
    wait_for(lambda: c.is_idle())
    assert c.snapshot.layer == 1 and c.focus == 3
    panel.start()  # Esc while it runs: nothing is drawn, the caption says so
    c.cancelled.emit()
    assert panel.result is None and not panel.running and "Cancelled" in panel.caption.text()
    assert window.wait_until_idle(60)
    c.set_model("toy")
    wait_for(lambda: c.is_idle() and c.snapshot is not None and c.snapshot.model == "toy")
    wait_for(lambda: panel.result is None and "no unembedding" in panel.caption.text())
    c.set_model(name)  # back to a decoder: the toy's refusal is withdrawn, the dock asks for an answer
    wait_for(lambda: c.is_idle() and c.snapshot is not None and c.snapshot.model == name)
    wait_for(lambda: "no unembedding" not in panel.caption.text())
    assert panel.caption.text().startswith("Type the answer") and panel.result is None
