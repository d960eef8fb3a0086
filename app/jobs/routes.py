"""Information-flow routes, worker side: the importances of one run (engine.analysis.routes), kept
for the last (model, text, switched-off heads), and the route to a position above τ shaped for
the Routes panel as line segments grouped by kind and width, so the GUI thread only hands arrays
to pyqtgraph.

A change of τ or of the focused token walks the route again from the kept importances (no forward
run); a new text, model or set of switched-off heads runs the model once with hooks.

The graph's rows: node level 2l is layer l's input, 2l + 1 its middle (after attention), 2l + 2 its
output (= layer l + 1's input). An attention edge j → i of layer l goes from (j, 2l) to (i, 2l + 1);
the residual around attention from (i, 2l) to (i, 2l + 1); the MLP and its residual from
(i, 2l + 1) to (i, 2l + 2), the MLP drawn a little to the right so that both show.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.analysis.request import RunRequest
from engine.analysis.routes import importances, route_edges
from engine.models import model_info

from . import trained

WIDTHS = (1.0, 2.5, 4.5, 7.0)  # px of the drawn lines, by importance quartile of (τ, 1]
MLP_SHIFT = 0.18  # the MLP's edge drawn this far right of the token (its residual on the token)
DRAWN_KINDS = ("attention", "residual", "mlp", "mlp_residual")  # "head" rows are read on hover, not drawn

_kept: dict = {}  # the last run's importances: {"key": (model, text, ablate), "arrays": (...), "tokens": n}


@dataclass(frozen=True, eq=False)
class RouteDrawing:
    """What the Routes panel draws for one (run, position, τ)."""

    key: tuple  # (model, text, ablate, position, τ)
    layers: int
    n: int
    edges: np.ndarray  # structured (k,) engine.analysis.routes.EDGE_DTYPE: the route, head rows included
    segments: dict  # (kind, width index) → (x (2m,), y (2m,)) pairs of end points, connect="pairs"
    points: np.ndarray  # (e, 2) float midpoints of the drawn edges (hover and click)
    drawn: np.ndarray  # (e,) int: each midpoint's row in ``edges``
    nodes: np.ndarray  # (v, 2) float (x, level): the tokens reached at the embeddings, then the target
    heads: int
    counts: tuple[int, int]  # (attention edges, MLP edges) of the route, for the caption


def width_index(importance: np.ndarray, tau: float) -> np.ndarray:
    """(k,) 0 … len(WIDTHS) − 1: where each importance lies in (τ, 1], in equal steps."""
    step = (1.0 - tau) / len(WIDTHS)
    return np.clip(((importance - tau) / step).astype(int), 0, len(WIDTHS) - 1)


def drawing(edges: np.ndarray, layers: int, n: int, heads: int, key: tuple) -> RouteDrawing:
    """The segments of ``edges`` (see the module docstring for the geometry)."""
    tau = key[-1]
    shown = np.flatnonzero(np.isin(edges["kind"], DRAWN_KINDS))
    rows = edges[shown]
    layer, source, target = rows["layer"].astype(float), rows["from"].astype(float), rows["to"].astype(float)
    attention_block = np.isin(rows["kind"], ("attention", "residual"))
    y0 = np.where(attention_block, 2 * layer, 2 * layer + 1)
    x0 = np.where(rows["kind"] == "mlp", source + MLP_SHIFT, source)
    x1 = np.where(rows["kind"] == "mlp", target + MLP_SHIFT, target)
    y1 = y0 + 1
    widths = width_index(rows["importance"], tau)
    segments = {}
    for kind in DRAWN_KINDS:
        for w in range(len(WIDTHS)):
            pick = (rows["kind"] == kind) & (widths == w)
            if pick.any():
                xs = np.stack([x0[pick], x1[pick]], axis=1).ravel()
                ys = np.stack([y0[pick], y1[pick]], axis=1).ravel()
                segments[(kind, w)] = (xs, ys)
    points = np.stack([(x0 + x1) / 2, (y0 + y1) / 2], axis=1) if len(rows) else np.zeros((0, 2))
    # the nodes drawn: the tokens the route reaches at the embeddings, and its target on top (a dot at
    # every level of every token would stack into bars over the residual's lines)
    reached = np.unique(source[y0 == 0])
    nodes = np.concatenate([np.stack([reached, np.zeros(len(reached))], 1), [[key[3], 2.0 * layers]]])
    counts = (int((edges["kind"] == "attention").sum()), int((edges["kind"] == "mlp").sum()))
    return RouteDrawing(key, layers, n, edges, segments, points, shown, nodes, heads, counts)


def route_of(model_name: str, text: str, ablate: frozenset, position: int, tau: float) -> RouteDrawing:
    """The :class:`RouteDrawing` of ``text`` on ``model_name`` to ``position`` above ``tau``; the
    importances are computed once per (model, text, ablate) and kept for the next τ or position.
    EngineError where routes do not apply (the toy, too many tokens, τ outside (0, 1))."""
    from engine.analysis.routes import ROUTES_TOKENS, check_tau
    from engine.analysis.request import check_tokens
    from engine.core.errors import EngineError

    tau = check_tau(tau)
    if model_info(model_name).configurable:
        raise EngineError("information-flow routes need a pretrained model (an encoder or a decoder): the toy "
                          "engine has no residual stream or MLP")
    model = trained.model(model_name)
    key = (model_name, text, frozenset(ablate))
    if _kept.get("key") != key:
        tokenized = model.tokenize(text)
        check_tokens(len(tokenized.tokens), ROUTES_TOKENS, "The routes analysis")
        arrays = importances(model, RunRequest(text=text, ablate=frozenset(ablate)).checked(model.facts), tokenized)
        _kept.clear()
        _kept.update(key=key, arrays=arrays)
    heads, residual, mlp, mlp_residual = _kept["arrays"]
    layers, num_heads, n, _ = heads.shape
    position = min(max(int(position), 0), n - 1)
    edges = route_edges(heads, residual, mlp, mlp_residual, position, tau)
    return drawing(edges, layers, n, num_heads, (*key, position, tau))
