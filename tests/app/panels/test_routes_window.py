"""The Routes panel (app/panels/routes_panel.py): the route the worker computes is the engine's
(engine.analysis.routes) for the focused token, τ from the slider and the window's switched-off
heads; the lines drawn are the route's edges; a click on an attention edge opens its strongest
head; the toy engine gets one line saying why there is no graph."""
from __future__ import annotations

import numpy as np
import pytest

from engine.analysis.request import RunRequest
from engine.analysis.routes import flow_routes
from tests.shared_helpers import dock, settle

TEXT = "The cat sat because it was tired."


@pytest.mark.slow
def test_the_routes_graph_is_the_engines_route(window, qtbot, minilm, tmp_path):
    c = window.controller
    panel = dock(window, "routes")
    settle(window, qtbot)
    assert "toy engine" in panel.caption.text() and panel.value is None
    c.set_config(c.config.replace(text=TEXT), immediate=True)
    window.model_combo.setCurrentIndex(window.model_combo.findData("minilm"))
    settle(window, qtbot)
    off = frozenset({(1, 4)})
    c.set_ablation(off)
    c.select(focus=5)
    panel.tau.setValue(8)
    qtbot.waitUntil(lambda: panel.value is not None and panel.value.key[2:] == (off, 5, 0.08), timeout=60000)
    expected = flow_routes(minilm, RunRequest(text=TEXT, tau=0.08, position=5, ablate=off))
    np.testing.assert_array_equal(panel.value.edges[["layer", "kind", "head", "from", "to"]],
                                  expected.edges[["layer", "kind", "head", "from", "to"]])
    np.testing.assert_allclose(panel.value.edges["importance"], expected.edges["importance"], atol=1e-9)
    # File → Export data writes the route on screen, as `export --routes --tau 0.08 --position 5` does
    out = tmp_path / "shown.npz"
    window.exports.export_data(str(out))
    qtbot.waitUntil(lambda: out.exists(), timeout=60000)
    with np.load(out) as saved:
        np.testing.assert_array_equal(saved["route_edges"][["layer", "head", "from", "to"]],
                                      expected.edges[["layer", "head", "from", "to"]])
        np.testing.assert_allclose(saved["route_edges"]["importance"], expected.edges["importance"], atol=1e-9)
        assert "dla_heads" not in saved  # an encoder, and no attribution asked
    drawn = sum(len(item.getData()[0]) for item in panel.lines.values() if item.getData()[0] is not None) // 2
    assert drawn == int(np.isin(expected.edges["kind"], ("attention", "residual", "mlp", "mlp_residual")).sum())
    # a click on an attention edge of layer 3 (if any) opens that layer's strongest head
    attention = [k for k, e in enumerate(panel.value.edges[panel.value.drawn]) if e["kind"] == "attention"]
    edge = panel.value.edges[panel.value.drawn[attention[0]]]
    shares = expected.heads[edge["layer"], :, edge["to"], edge["from"]]
    assert "importance" in panel._tip(0, 0, attention[0])
    panel.open_edge(edge)
    settle(window, qtbot)
    assert c.head == int(np.argmax(shares)) and c.layer == int(edge["layer"])
