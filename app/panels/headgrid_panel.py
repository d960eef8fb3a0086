"""Head grid: every head's softmax weights as small heatmaps side by side; click to select.

Thumbnails come block-averaged from the worker (≤ 96 cells across), so hundreds of heads
or thousands of tokens cost the GUI thread only small images.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from ..controller import Controller
from ..heatmap import WEIGHTS_MAP
from ..text import fill
from .base import Panel

SELECTED_PEN = pg.mkPen("#ff2d55", width=4)
PLAIN_PEN = pg.mkPen("#c0c4c8", width=1)
OFF_PEN = pg.mkPen("#5f6368", width=2)  # the cross over a switched-off head
MIN_SIDE = 40  # px: a thumbnail never shrinks below this (the panel scrolls instead); two rows fit at 1366 × 768
LABEL_HEIGHT = 16  # px of the "head h" line above each thumbnail


class HeadGridPanel(Panel):
    """A grid of one thumbnail per head."""

    rowsChanged = Signal()  # the grid was rebuilt (its minimum height may differ): the window resizes its dock

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("headGridPanel")
        self.controller = controller
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setObjectName("headGridCanvas")
        self.canvas.setBackground("w")
        # pyqtgraph's 9 px around the grid: 18 px of width kept twelve heads' labels to four columns
        # (three rows, the grid scrolled at 1024 × 600); the thumbnails' border and labels need 2
        self.canvas.ci.setContentsMargins(2, 2, 2, 2)
        self.canvas.setToolTip(self.tr("Every head's attention weights; click one to select it; "
                                       "Ctrl+click or right-click switches it off (or back on)"))
        layout.addWidget(self.canvas)
        self.views: list[pg.ViewBox] = []
        self._shown_columns: tuple[int, bool] | None = None  # (columns, numbers alone) laid out
        self._label_widths: dict[tuple[int, bool], float] = {}  # (head count, numbers alone) → px of its widest label
        self.images: list[pg.ImageItem] = []
        self.crosses: list[pg.PlotDataItem] = []  # one per head, shown when the head is switched off
        self._colormap = pg.colormap.get(WEIGHTS_MAP)
        self.canvas.scene().sigMouseClicked.connect(self._on_clicked)
        self.set_model_connected()
        self._stage = controller.stage

    def _columns(self, heads: int) -> int:
        """As many columns as make the thumbnails largest in the panel's current shape, and no more
        than fit across: a column is never narrower than its label (nine heads in one row of a
        372-pixel grid laid SmolLM2's last labels past the right edge). Columns too narrow for "head h"
        are labelled with the head's number alone (twelve heads at 1024 × 600: four columns of "head 11",
        three rows, and the grid scrolled; six columns of "11" make two rows)."""
        width, height = self._inside()
        spacing, between = self.canvas.ci.layout.horizontalSpacing(), self.canvas.ci.layout.verticalSpacing()
        across = max(1, min(heads, int((width + spacing) // (self._label_width(heads, short=True) + spacing))))
        best, best_side = 1, 0.0
        for columns in range(1, across + 1):
            rows = math.ceil(heads / columns)
            # the rows' own spacing counted: a side of MIN_SIDE or more fits the minimum height _rebuild sets
            side = min((width - spacing * (columns - 1)) / columns, (height - between * (rows - 1)) / rows - LABEL_HEIGHT)
            if side > best_side:
                best, best_side = columns, side
        if best_side < MIN_SIDE:
            # too many heads for the panel: keep thumbnails readable across and let the panel scroll
            best = max(1, min(across, int((width + spacing) // (MIN_SIDE + spacing))))
        return best

    def _short_labels(self, heads: int, columns: int) -> bool:
        """True when ``columns`` columns are too narrow for "head h" labels (numbers alone then)."""
        spacing = self.canvas.ci.layout.horizontalSpacing()
        return columns * self._label_width(heads) + (columns - 1) * spacing > self._inside()[0]

    def _inside(self) -> tuple[float, float]:
        """(width, height) of the canvas inside its layout's margins."""
        left, top, right, bottom = self.canvas.ci.layout.getContentsMargins()
        return max(self.canvas.width(), 1) - left - right, max(self.canvas.height(), 1) - top - bottom

    def _label(self, head: int, short: bool) -> str:
        return str(head) if short else fill(self.tr("head %1"), head)

    def _label_width(self, heads: int, short: bool = False) -> float:
        """Minimum width of the widest label (most digits), measured once per head count: resizeEvent
        asks on every resize."""
        if (heads, short) not in self._label_widths:
            label = pg.LabelItem(self._label(heads - 1, short), size="8pt")
            self._label_widths[heads, short] = label.effectiveSizeHint(Qt.SizeHint.MinimumSize).width()
        return self._label_widths[heads, short]

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().resizeEvent(event)
        heads = len(self.images)
        if heads and ((columns := self._columns(heads)), self._short_labels(heads, columns)) != self._shown_columns:
            self._rebuild(heads)
            if self.controller.snapshot is not None:
                self.show_snapshot(self.controller.snapshot)

    def _rebuild(self, heads: int) -> None:
        self.canvas.clear()
        self.views, self.images, self.crosses = [], [], []
        columns = self._columns(heads)
        short = self._short_labels(heads, columns)
        self._shown_columns = (columns, short)
        rows = math.ceil(heads / columns)
        _left, top, _right, bottom = self.canvas.ci.layout.getContentsMargins()
        self.canvas.setMinimumHeight(int(rows * (MIN_SIDE + LABEL_HEIGHT) + (rows - 1) * self.canvas.ci.layout.verticalSpacing()
                                         + top + bottom))  # the layout's own margins and spacing, not a guess
        self.rowsChanged.emit()
        for head in range(heads):
            if head and head % columns == 0:
                self.canvas.nextRow()
            cell = self.canvas.addLayout()
            cell.setContentsMargins(0, 0, 0, 0)
            cell.setSpacing(0)
            label = cell.addLabel(self._label(head, short), size="8pt", color="#333")
            label.setMaximumHeight(LABEL_HEIGHT)
            cell.nextRow()
            view = cell.addViewBox(lockAspect=True, enableMouse=False, invertY=True, enableMenu=False)  # no menu built
            view.setBorder(PLAIN_PEN)
            image = pg.ImageItem(axisOrder="row-major")
            image.setColorMap(self._colormap)
            view.addItem(image)
            cross = pg.PlotDataItem(pen=OFF_PEN, connect="pairs")
            cross.setZValue(10)
            cross.setVisible(False)
            view.addItem(cross)
            self.crosses.append(cross)
            self.views.append(view)
            self.images.append(image)

    def show_snapshot(self, snapshot) -> None:
        self._stage = self.controller.stage
        words = snapshot.words if self.controller.by_words else None
        value = words is None and self._stage == "value_norms" and snapshot.value_thumbnails is not None
        if words is not None:
            thumbnails = words.thumbnails  # (heads, t, t)
        else:
            thumbnails = snapshot.value_thumbnails if value else snapshot.thumbnails  # (heads, t, t)
        heads = thumbnails.shape[0]
        if heads != len(self.images):
            self._rebuild(heads)
        if words is not None:
            top = max(words.weight_max, 1e-6)
        else:
            top = max(float(thumbnails.max() if value else snapshot.weight_max.max()), 1e-6)
        off = {head for layer, head in snapshot.ablate if layer == snapshot.layer}
        for head, (image, view, thumbnail) in enumerate(zip(self.images, self.views, thumbnails)):
            image.setImage(thumbnail, levels=(0.0, top), autoLevels=False)
            image.setOpacity(0.35 if head in off else 1.0)
            size = thumbnail.shape[0]
            image.setRect(QRectF(0, 0, size, size))
            view.setRange(QRectF(0, 0, size, size), padding=0.02)
            self.crosses[head].setData([0, size, 0, size], [0, size, size, 0])
            self.crosses[head].setVisible(head in off)
        self.show_selection()

    def _restage(self) -> None:
        """Show the value-weighted thumbnails when that stage is chosen (and back)."""
        if self.controller.stage != self._stage and self.controller.snapshot is not None:
            self.show_snapshot(self.controller.snapshot)

    def switched_off(self) -> list[int]:
        """The heads drawn crossed out (tests)."""
        return [head for head, cross in enumerate(self.crosses) if cross.isVisible()]

    def on_selection_changed(self) -> None:
        self.show_selection()
        self._restage()

    def show_selection(self) -> None:
        for head, view in enumerate(self.views):
            view.setBorder(SELECTED_PEN if head == self.controller.head else PLAIN_PEN)
        # the thick selected border reaches outside the thin one's repaint area: repaint it all
        self.canvas.viewport().update()

    def _on_clicked(self, event) -> None:
        toggle = event.button() == Qt.MouseButton.RightButton or (
            event.button() == Qt.MouseButton.LeftButton and event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        if event.button() != Qt.MouseButton.LeftButton and not toggle:
            return
        for head, view in enumerate(self.views):
            if view.sceneBoundingRect().contains(event.scenePos()):
                if toggle:
                    self.toggle(head)
                else:
                    self.controller.select(head=head)
                return

    def toggle(self, head: int) -> None:
        """Switch ``head`` of the layer shown off, or back on (recomputed in the worker)."""
        snapshot = self.controller.snapshot
        self.controller.toggle_head(0 if snapshot is None else snapshot.layer, head)

    def image_data(self, head: int) -> np.ndarray:
        """The thumbnail shown for ``head`` (tests)."""
        return self.images[head].image
