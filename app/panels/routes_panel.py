"""Information-flow routes (Ferrando & Voita 2024): the graph of the parts of the model that carried
the focused token's final vector, layers × tokens.

Rows are node levels (each layer's input, middle after attention, and output), columns tokens;
each kept edge is a line whose width grows with its importance: attention from another token
(heads summed, blue), the residual (grey) and the MLP (orange). A slider sets the threshold τ;
hovering an edge tells its importance (an attention edge also its strongest heads); clicking an
attention edge opens its strongest head, as the head grid and the model layers do.

The worker computes (app/jobs/routes.py): the importances once per text, model and switched-off
heads, the route again on each change of τ or focus; the GUI thread hands arrays to pyqtgraph.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QVBoxLayout, QWidget

from engine.models import model_info

from ..controller import Controller
from ..i18n import error_text
from ..text import fill
from .base import Panel

ROUTES_LANE = "routes"
COLOURS = {"attention": "#1a73e8", "residual": "#c4c7cc", "mlp": "#f58518", "mlp_residual": "#c4c7cc"}
# the residual carries most of nearly every sum: drawn light and half as wide, so that what the
# attention and the MLP add stands out against it
RESIDUAL_WIDTH = 0.5
TAU_STEPS = 100  # the slider's steps: τ = value / 100
DEFAULT_TAU = 4  # τ = 0.04, the paper's figures'


class RoutesPanel(Panel):
    """The route to the focused token above τ, drawn as a graph of layers × tokens."""

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("routesPanel")
        self.controller = controller
        self.value = None  # the RouteDrawing on screen
        self._asked = None  # the key last submitted
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        bar = QHBoxLayout()
        bar.addWidget(QLabel(self.tr("Threshold τ")))
        self.tau = QSlider(Qt.Orientation.Horizontal)
        self.tau.setObjectName("routesTau")
        self.tau.setRange(1, TAU_STEPS - 1)
        self.tau.setValue(DEFAULT_TAU)
        self.tau.setMaximumWidth(220)
        self.tau.setToolTip(self.tr("Keep the edges whose share of their sum exceeds τ: lower shows more of the graph"))
        bar.addWidget(self.tau)
        self.tau_label = QLabel()
        self.tau_label.setObjectName("routesTauValue")
        bar.addWidget(self.tau_label)
        bar.addStretch(1)
        layout.addLayout(bar)
        self.caption = QLabel()
        self.caption.setObjectName("routesCaption")
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.PlainText)  # holds token text
        layout.addWidget(self.caption)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("routesGraph")
        self.plot.setMenuEnabled(False)
        self.plot.setMinimumHeight(120)
        self.plot.getPlotItem().hideButtons()
        self.plot.setLabel("left", self.tr("layer (bottom: the embeddings)"))
        self.lines: dict = {}  # (kind, width index) → PlotDataItem
        self.nodes = pg.ScatterPlotItem(size=9, pen=None)  # the tokens reached (blue) and the target (red)
        self.nodes.setZValue(8)
        self.plot.addItem(self.nodes)
        self.hover = pg.ScatterPlotItem(size=11, brush=pg.mkBrush(0, 0, 0, 1), pen=None, hoverable=True,
                                        hoverBrush=pg.mkBrush("#ff2d55"), tip=self._tip)
        self.hover.setZValue(10)
        self.hover.sigClicked.connect(self._on_clicked)
        self.plot.addItem(self.hover)
        layout.addWidget(self.plot, 1)
        self._lane = self.lane(ROUTES_LANE, long=True)  # the first run of a decoder's hooks takes a second or more
        self._lane.done.connect(self._on_route)
        self._lane.failed.connect(self._on_failed)
        self.tau.valueChanged.connect(lambda _: self._submit())
        self._show_tau()
        self.set_model_connected()

    # ------------------------------------------------------------------ requests
    def tau_value(self) -> float:
        return self.tau.value() / TAU_STEPS

    def _show_tau(self) -> None:
        self.tau_label.setText(f"{self.tau_value():.2f}")

    def _key(self):
        snapshot = self.controller.snapshot
        if snapshot is None:
            return None
        focus = min(self.controller.focus, snapshot.result.n - 1)
        return snapshot.model, snapshot.result.config.text, frozenset(snapshot.ablate), focus, self.tau_value()

    def show_snapshot(self, snapshot) -> None:
        self._submit()

    def show_selection(self) -> None:
        self._submit()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().showEvent(event)
        self._submit()  # nothing is computed while the dock is hidden

    def _submit(self) -> None:
        from ..jobs.routes import route_of

        self._show_tau()
        key = self._key()
        if key is None or not self.isVisible() or key == self._asked:
            return
        if model_info(key[0]).configurable:
            self._show_nothing(self.tr("Information-flow routes need a pretrained model (an encoder or a decoder): "
                                       "the toy engine has no residual stream or MLP. Choose one in the Model bar."))
            self._asked = key
            return
        self._asked = key
        if self.value is None or self.value.key[:3] != key[:3]:
            self.caption.setText(self.tr("Computing the routes (one run of the model with every edge measured)…"))
        self._lane.submit(route_of, *key)

    # ------------------------------------------------------------------ drawing
    def _on_failed(self, error) -> None:
        self._show_nothing(error_text(error))

    def _show_nothing(self, text: str) -> None:
        self.value = None
        self.caption.setText(text)
        for item in self.lines.values():
            item.setData([], [])
        self.nodes.setData([], [])
        self.hover.setData([], [])

    def _line(self, kind: str, width: int) -> pg.PlotDataItem:
        from ..jobs.routes import WIDTHS

        if (kind, width) not in self.lines:
            scale = RESIDUAL_WIDTH if kind in ("residual", "mlp_residual") else 1.0
            pen = pg.mkPen(COLOURS[kind], width=max(1.0, WIDTHS[width] * scale))
            item = pg.PlotDataItem(connect="pairs", pen=pen)
            item.setZValue(1 + width)
            self.plot.addItem(item)
            self.lines[(kind, width)] = item
        return self.lines[(kind, width)]

    def _on_route(self, value) -> None:
        if value.key != self._key():
            return  # made for another text, position or τ
        self.value = value
        for item in self.lines.values():
            item.setData([], [])
        for (kind, width), (xs, ys) in value.segments.items():
            self._line(kind, width).setData(xs, ys)
        brushes = [pg.mkBrush(COLOURS["attention"])] * (len(value.nodes) - 1) + [pg.mkBrush("#ff2d55")]
        self.nodes.setData(pos=value.nodes, brush=brushes)
        self.hover.setData(pos=value.points, data=np.arange(len(value.points)))
        labels = self.controller.snapshot.result.token_texts
        n = min(value.n, len(labels))
        step = max(1, -(-n * 56 // max(self.plot.width() - 60, 100)))
        self.plot.getAxis("bottom").setTicks([[(i, labels[i][:8]) for i in range(0, n, step)]])
        every = max(1, value.layers // 8)
        self.plot.getAxis("left").setTicks([[(2 * l + 1, str(l)) for l in range(0, value.layers, every)]])
        self.plot.setXRange(-0.5, value.n - 0.5, padding=0.02)
        self.plot.setYRange(0, 2 * value.layers, padding=0.03)
        focus = value.key[3]
        self.caption.setText(fill(self.tr(
            "The route to “%1” above τ = %2 (Ferrando & Voita 2024): from its final vector down to the "
            "embeddings, the edges whose share of their sum exceeds τ. Blue: attention from a token (heads "
            "summed), light grey: the residual, orange: the MLP; wider carries more; dots: the target (red) and "
            "the tokens the route reaches at the bottom. %3 attention edges, %4 MLP edges. It shows what the "
            "vectors were built from, not what the answer causally needs. Hover an edge for its importance; click "
            "a blue one to open its strongest head."),
            labels[focus] if focus < len(labels) else str(focus), f"{value.key[4]:.2f}",
            *value.counts))

    def _edge(self, index: int):
        return self.value.edges[self.value.drawn[index]]

    def _heads_of(self, edge) -> list[tuple[int, float]]:
        """(head, importance) of an attention edge's heads, strongest first."""
        rows = self.value.edges
        mine = rows[(rows["kind"] == "head") & (rows["layer"] == edge["layer"]) & (rows["from"] == edge["from"])
                    & (rows["to"] == edge["to"])]
        order = np.argsort(-mine["importance"])
        return [(int(mine["head"][k]), float(mine["importance"][k])) for k in order]

    def _tip(self, x, y, data) -> str:
        if self.value is None:
            return ""
        edge = self._edge(int(data))
        labels = self.controller.snapshot.result.token_texts
        source, target = labels[int(edge["from"])], labels[int(edge["to"])]
        layer, importance = int(edge["layer"]), f"{float(edge['importance']):.3f}"
        kind = str(edge["kind"])
        if kind == "attention":
            heads = ", ".join(f"H{h} {v:.3f}" for h, v in self._heads_of(edge)[:3])
            return fill(self.tr("Layer %1, attention “%2” → “%3”: importance %4 (strongest heads: %5)"),
                        layer, source, target, importance, heads)
        names = {"residual": self.tr("the residual around attention"), "mlp": self.tr("the MLP"),
                 "mlp_residual": self.tr("the residual around the MLP")}
        return fill(self.tr("Layer %1, “%2”: %3, importance %4"), layer, target, names[kind], importance)

    def _on_clicked(self, _item, points, *_) -> None:
        if self.value is None or not len(points):
            return
        edge = self._edge(int(points[0].data()))
        if str(edge["kind"]) != "attention":
            return
        self.open_edge(edge)

    def open_edge(self, edge) -> None:
        """Open an attention edge's strongest head: the layer and head selected as the head grid does."""
        heads = self._heads_of(edge)
        if not heads:
            return
        self.controller.select(head=heads[0][0])
        self.controller.set_model(self.controller.snapshot.model, int(edge["layer"]))
