"""Vectors in the plane: every token's static vector and its vector after attention, one PCA.

Seed 000: "Embedding 后 … 这还只是：初始静态向量" → "得到新的 token 表示 … 结合上下文后的喜欢".
Blue points are the static vectors, orange points the contextual ones (``result.output``), and
an arrow goes from each token's static point to its contextual point. One 2-D PCA is fitted on
both sets together (:func:`engine.analysis.projection.pca_2d`), so both live in the same plane; the axes
say how much of the variance each component explains.

Which "static" vector: by default the token's embedding (``result.embeddings``), as in the seeds —
the same vector in every sentence and at every position, so a repeated token starts from one
point and its arrows show what the context did. With sinusoidal positions a check box starts the
arrows at x = embedding + position instead, what actually enters attention (with no positions
or RoPE, x is the embedding, so the box is disabled). The projection runs in the worker (lane
"plane"); the focused token is ringed in red and its arrow drawn thicker; clicking a point focuses it.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from engine import AttentionResult
from engine.analysis.projection import Projection, pca_2d

from ..controller import Controller
from ..heatmap import LightPlot
from ..i18n import error_text
from ..text import fill
from .base import Panel

LANE = "plane"
STATIC_COLOR, CONTEXTUAL_COLOR, FOCUS_COLOR = "#4c78a8", "#f58518", "#ff2d55"
ARROW_COLOR = "#8a8a8a"
CONTEXTUAL_ANCHORS = ((0, 0), (1, 1), (1, 0), (0, 1))  # below right, above left, below left, above right
LABEL_LIMIT = 40  # label every point up to this many tokens; beyond it only the focused token


def project(result: AttentionResult, start_at_x: bool) -> tuple[Projection, bool]:
    """The worker's job: PCA of (static or x, output); returns it with the start actually used."""
    start_at_x = start_at_x and result.config.positional == "sinusoidal"
    static = result.x if start_at_x else result.embeddings  # (n, d)
    return pca_2d(static, result.output), start_at_x


def arrow_angle(dx: float, dy: float) -> float:
    """pg.ArrowItem angle (degrees) pointing along (dx, dy) in a y-up view with locked aspect.

    ArrowItem's angle 0 points left (−x) and positive angles turn clockwise on screen.
    """
    return math.degrees(math.atan2(dy, -dx))


class PlanePanel(Panel):
    """Scatter of static and contextual points with arrows between them, labelled with the tokens."""

    def show_snapshot(self, snapshot) -> None:
        self.sync()

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("planePanel")
        self.controller = controller
        self.projection: Projection | None = None  # the one on screen
        self.result: AttentionResult | None = None  # the result it projects
        self.started_at_x = False
        self._awaiting = False
        self._requested: tuple | None = None  # (result, start_at_x) of the latest request
        self._focus_arrow = -1  # index of the arrow drawn in the focus colour

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        bar = QHBoxLayout()
        self.caption = QLabel()
        self.caption.setObjectName("planeCaption")
        self.caption.setWordWrap(True)
        bar.addWidget(self.caption, 1)
        self.start_at_x = QCheckBox(self.tr("Start at x = embedding + position"))
        self.start_at_x.setObjectName("planeStartAtX")
        self.start_at_x.setToolTip(self.tr(
            "Arrows start at x (what enters attention) instead of the static embedding; only with sinusoidal positions"))
        bar.addWidget(self.start_at_x)
        layout.addLayout(bar)

        self.view = pg.GraphicsLayoutWidget()
        self.view.setObjectName("planePlot")
        self.view.setBackground("w")
        self.plot = LightPlot()
        self.view.addItem(self.plot)
        self.plot.setAspectLocked(True)  # distances and arrow directions are true in the plane
        for axis in self.plot.axes.values():
            axis.setPen(pg.mkPen("#444"))
            axis.setTextPen(pg.mkPen("#111"))
        self.arrow_lines = pg.PlotCurveItem(pen=pg.mkPen(ARROW_COLOR, width=1.2), connect="pairs")
        self.focus_line = pg.PlotCurveItem(pen=pg.mkPen(FOCUS_COLOR, width=2.5))
        self.static_scatter = pg.ScatterPlotItem(size=10, pen=pg.mkPen("w", width=1), brush=pg.mkBrush(STATIC_COLOR),
                                                 name=self.tr("static"))
        self.contextual_scatter = pg.ScatterPlotItem(size=10, pen=pg.mkPen("w", width=1),
                                                     brush=pg.mkBrush(CONTEXTUAL_COLOR), name=self.tr("after attention"))
        self.focus_scatter = pg.ScatterPlotItem(size=18, pen=pg.mkPen(FOCUS_COLOR, width=2.5), brush=None)
        for item in (self.arrow_lines, self.focus_line, self.static_scatter, self.contextual_scatter,
                     self.focus_scatter):
            self.plot.addItem(item)
        self.legend = pg.LegendItem(offset=(8, 8), labelTextColor="#111", brush=pg.mkBrush(255, 255, 255, 200))
        self.legend.setParentItem(self.plot.vb)
        self.legend.addItem(self.static_scatter, self.tr("static (embedding)"))
        self.legend.addItem(self.contextual_scatter, self.tr("after attention (output)"))
        self.arrows: list[pg.ArrowItem] = []
        self.labels: list[pg.TextItem] = []
        layout.addWidget(self.view, 1)
        self.status = QLabel()
        self.status.setObjectName("planeStatus")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)

        self.start_at_x.toggled.connect(lambda _: self.request())
        self.static_scatter.sigClicked.connect(self._on_points_clicked)
        self.contextual_scatter.sigClicked.connect(self._on_points_clicked)
        self._lane = self.lane(LANE)
        self._lane.done.connect(self._on_projected)
        self._lane.failed.connect(self._on_failed)
        self.set_model_connected()
        self._set_caption(False)
        self.sync()

    # ----------------------------------------------------------------- requests
    def sync(self) -> None:
        """Bring the picture up to date with the controller (no new job when one is already asked for)."""
        snapshot = self.controller.snapshot
        if snapshot is not None and self._requested != (snapshot.result, self.start_at_x.isChecked()):
            self.on_snapshot_changed(snapshot)

    def request(self) -> None:
        """Project the current result in the worker (lane "plane")."""
        snapshot = self.controller.snapshot
        if snapshot is None:
            self._lane.cancel()
            return
        self._requested = (snapshot.result, self.start_at_x.isChecked())
        self._awaiting = True
        self._lane.submit(project, *self._requested)

    def is_idle(self) -> bool:
        return not self._awaiting

    # ----------------------------------------------------------------- handlers
    def on_snapshot_changed(self, snapshot) -> None:
        sinusoidal = snapshot.result.config.positional == "sinusoidal"
        self.start_at_x.setEnabled(sinusoidal)
        self.request()

    def show_selection(self) -> None:
        self._show_focus()

    def _on_points_clicked(self, _item, points, _event=None) -> None:
        if len(points):
            self.controller.select(focus=int(points[0].index()))

    def _on_projected(self, value) -> None:
        self._awaiting = False
        projection, started_at_x = value
        self.result = self._requested[0]
        self._show(projection, started_at_x)

    def _on_failed(self, error) -> None:
        self._awaiting = False
        self.status.setText(fill(self.tr("The projection failed: %1"), error_text(error)))

    # ----------------------------------------------------------------- drawing
    def _set_caption(self, started_at_x: bool) -> None:
        if started_at_x:
            self.caption.setText(self.tr(
                "Blue: x = embedding + position, what enters attention. Orange: the same token after attention.\n"
                "Each arrow shows how attention moved a token: one PCA of both sets keeps them in one plane."))
        else:
            self.caption.setText(self.tr(
                "Blue: each token's static embedding, the same in every sentence. Orange: the token after attention.\n"
                "Each arrow shows how attention moved a token: one PCA of both sets keeps them in one plane."))

    def _show(self, projection: Projection, started_at_x: bool) -> None:
        self.projection, self.started_at_x = projection, started_at_x
        self._set_caption(started_at_x)
        self.legend.removeItem(self.static_scatter)
        self.legend.removeItem(self.contextual_scatter)
        self.legend.addItem(self.static_scatter, self.tr("x = embedding + position") if started_at_x
                            else self.tr("static (embedding)"))
        self.legend.addItem(self.contextual_scatter, self.tr("after attention (output)"))
        static, contextual = projection.static, projection.contextual  # (n, 2) each
        n = static.shape[0]
        self.static_scatter.setData(static[:, 0], static[:, 1], data=np.arange(n))
        self.contextual_scatter.setData(contextual[:, 0], contextual[:, 1], data=np.arange(n))
        pairs = np.empty((2 * n, 2))  # static, contextual, static, contextual …
        pairs[0::2], pairs[1::2] = static, contextual
        self.arrow_lines.setData(pairs[:, 0], pairs[:, 1], connect="pairs")
        self._draw_arrow_heads(static, contextual)
        self._draw_labels()
        ratio_1, ratio_2 = (100 * float(r) for r in projection.explained)
        self.plot.setLabel("bottom", fill(self.tr("PC1 (%1%)"), f"{ratio_1:.1f}"))
        self.plot.setLabel("left", fill(self.tr("PC2 (%1%)"), f"{ratio_2:.1f}"))
        if projection.rank < 2:
            self.status.setText(fill(self.tr(
                "The points vary along %1 direction(s) only: the missing component is drawn as 0."), projection.rank))
        else:
            self.status.setText(fill(self.tr("%1 tokens · the plane shows %2% of the variance of the %3 points"),
                                     n, f"{ratio_1 + ratio_2:.1f}", 2 * n))
        self.plot.vb.autoRange(padding=0.12)
        self._show_focus()

    def _draw_arrow_heads(self, static: np.ndarray, contextual: np.ndarray) -> None:
        n = static.shape[0]
        while len(self.arrows) > n:
            self.plot.removeItem(self.arrows.pop())
        while len(self.arrows) < n:
            arrow = pg.ArrowItem(headLen=11, tipAngle=32, tailLen=None, pen=pg.mkPen(ARROW_COLOR),
                                 brush=pg.mkBrush(ARROW_COLOR), pxMode=True)
            arrow.setZValue(-1)  # under the points: the tip meets the orange point's edge
            self.plot.addItem(arrow)
            self.arrows.append(arrow)
        self._colour_arrow(self._focus_arrow, ARROW_COLOR)
        self._focus_arrow = -1
        for arrow, start, end in zip(self.arrows, static, contextual):
            dx, dy = float(end[0] - start[0]), float(end[1] - start[1])
            arrow.setPos(float(end[0]), float(end[1]))
            arrow.setStyle(angle=arrow_angle(dx, dy))
            arrow.setVisible(bool(dx or dy))

    def _colour_arrow(self, index: int, color: str) -> None:
        if 0 <= index < len(self.arrows):
            self.arrows[index].setStyle(pen=pg.mkPen(color), brush=pg.mkBrush(color))
            self.arrows[index].setZValue(1 if color == FOCUS_COLOR else -1)

    def _draw_labels(self) -> None:
        for label in self.labels:
            self.plot.removeItem(label)
        self.labels = []
        if self.result is None or self.projection is None:
            return
        texts = self.result.token_texts
        if len(texts) > LABEL_LIMIT:
            return  # only the focused token is labelled (see _show_focus)
        for kind, points, color in (("static", self.projection.static, STATIC_COLOR),
                                    ("contextual", self.projection.contextual, CONTEXTUAL_COLOR)):
            for index, (text, point) in enumerate(zip(texts, points)):
                # contextual points often crowd together: turn their labels round the point in turn
                anchor = (0, 1) if kind == "static" else CONTEXTUAL_ANCHORS[index % len(CONTEXTUAL_ANCHORS)]
                label = pg.TextItem(text, color=color, anchor=anchor)
                label.setPos(float(point[0]), float(point[1]))
                self.plot.addItem(label)
                self.labels.append(label)

    def _show_focus(self) -> None:
        projection, result = self.projection, self.result
        if projection is None or result is None:
            return
        focus = self.controller.focus
        if not 0 <= focus < projection.static.shape[0]:
            self.focus_scatter.clear()
            self.focus_line.setData([], [])
            return
        start, end = projection.static[focus], projection.contextual[focus]
        self.focus_scatter.setData([start[0], end[0]], [start[1], end[1]])
        self.focus_line.setData([start[0], end[0]], [start[1], end[1]])
        self._colour_arrow(self._focus_arrow, ARROW_COLOR)
        self._colour_arrow(focus, FOCUS_COLOR)
        self._focus_arrow = focus
        if len(result.token_texts) > LABEL_LIMIT:
            for label in self.labels:
                self.plot.removeItem(label)
            self.labels = []
            for point, color, anchor in ((start, STATIC_COLOR, (0, 1)), (end, CONTEXTUAL_COLOR, (0, 0))):
                label = pg.TextItem(result.token_texts[focus], color=color, anchor=anchor)
                label.setPos(float(point[0]), float(point[1]))
                self.plot.addItem(label)
                self.labels.append(label)
