"""The Routes panel's geometry, worker side (app/jobs/routes.py): every drawn edge of the route is one
segment between the right node levels (attention and its residual from layer l's input 2l to its
middle 2l + 1, the MLP and its residual from 2l + 1 to the output 2l + 2, the MLP shifted right), its
width bucket by importance, the dots on the target and on the tokens reached at the embeddings; the
importances are kept for a new τ or position and recomputed for new switched-off heads."""
from __future__ import annotations


import numpy as np
import pytest

from engine.analysis.request import RunRequest
from engine.analysis.routes import flow_routes
from engine.core.errors import EngineError
from tests import FIXTURES

pytest.importorskip("tokenizers")

FAMILIES = FIXTURES / "families"
TEXT = " the cat sat on the mat"


def test_each_drawn_edge_is_one_segment_between_its_levels():
    from app.jobs import routes
    from engine.models import load_model, register_folder

    name = register_folder(FAMILIES / "qwen3")
    drawing = routes.route_of(name, TEXT, frozenset(), 4, 0.06)
    expected = flow_routes(load_model(name), RunRequest(text=TEXT, tau=0.06, position=4)).edges
    np.testing.assert_array_equal(drawing.edges, expected)
    ends = set()
    for (kind, width), (xs, ys) in drawing.segments.items():
        for x0, x1, y0, y1 in zip(xs[0::2], xs[1::2], ys[0::2], ys[1::2]):
            ends.add((kind, width, x0, x1, y0, y1))
    want = set()
    for edge in expected[np.isin(expected["kind"], routes.DRAWN_KINDS)]:
        kind, layer = str(edge["kind"]), int(edge["layer"])
        low = 2 * layer if kind in ("attention", "residual") else 2 * layer + 1
        shift = routes.MLP_SHIFT if kind == "mlp" else 0.0
        width = min(int((edge["importance"] - 0.06) / ((1 - 0.06) / len(routes.WIDTHS))), len(routes.WIDTHS) - 1)
        want.add((kind, width, edge["from"] + shift, edge["to"] + shift, float(low), float(low + 1)))
    assert ends == want
    assert len(drawing.points) == len(want)
    assert tuple(drawing.nodes[-1]) == (4.0, 2.0 * drawing.layers)  # the target on top
    bottom = expected[(expected["layer"] == 0) & np.isin(expected["kind"], ("attention", "residual"))]
    assert set(drawing.nodes[:-1, 0]) == set(bottom["from"].astype(float)) and not drawing.nodes[:-1, 1].any()


def test_importances_are_kept_for_tau_and_position_and_remade_for_heads_off(monkeypatch):
    from app.jobs import routes
    from engine.models import register_folder

    name = register_folder(FAMILIES / "qwen3")
    calls = []
    real = routes.importances
    monkeypatch.setattr(routes, "importances", lambda *a: calls.append(1) or real(*a))
    routes._kept.clear()
    routes.route_of(name, TEXT, frozenset(), 4, 0.06)
    routes.route_of(name, TEXT, frozenset(), 2, 0.2)
    assert len(calls) == 1
    off = routes.route_of(name, TEXT, frozenset({(0, 1)}), 2, 0.2)
    assert len(calls) == 2 and not (off.edges[off.edges["kind"] == "head"]["head"][
        off.edges[off.edges["kind"] == "head"]["layer"] == 0] == 1).any()


def test_the_toy_engine_and_a_bad_tau_are_one_line():
    from app.jobs import routes

    with pytest.raises(EngineError, match="toy engine has no residual stream"):
        routes.route_of("toy", "the cat", frozenset(), 0, 0.1)
    with pytest.raises(EngineError, match="strictly between 0 and 1"):
        routes.route_of("toy", "the cat", frozenset(), 0, 1.0)
