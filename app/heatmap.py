"""HeatmapView: the window's heatmap widget, a :class:`figures.heatmap.HeatmapPlot` (drawn the same
way in exported figures) with its colour bar, hover and click."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal

from figures.heatmap import (  # noqa: F401 - the panels' names for the shared drawing
    DIVERGING_MAP, LABEL_EVERY_TOKEN, MIN_LABEL_PIXELS, WEIGHTS_MAP, CellValues, HeatmapPlot, LightPlot, MatrixImage,
    cell_colours, symmetric_levels)
from figures.token_axis import ColourBar


class HeatmapView(pg.GraphicsLayoutWidget):
    """A widget holding one :class:`HeatmapPlot` and its colour bar, with hover and click."""

    cellHovered = Signal(int, int)  # row, column (−1, −1 when the pointer leaves the matrix)
    cellClicked = Signal(int, int)  # row, column

    def __init__(self, parent=None, *, title: str = "", colorbar: bool = True, compact: bool = False):
        super().__init__(parent)
        self.setBackground("w")
        self.heat = HeatmapPlot(self.ci, title=title, compact=compact)
        self.plot, self.image = self.heat.plot, self.heat.image
        self.colorbar = None
        if colorbar:
            self.colorbar = ColourBar(pg.colormap.get(WEIGHTS_MAP), width=14)
            self.addItem(self.colorbar)
        self._hover = (-1, -1)
        self._colorbar_shows = None  # (colour map, levels) on the colour bar
        self._titles = None  # (left, bottom) axis titles shown
        self.ci.installEventFilter(self)  # its items' sizes change as labels are drawn: see minimumSizeHint
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.scene().sigMouseClicked.connect(self._on_mouse_clicked)

    def set_matrix(self, matrix, row_labels=None, column_labels=None, **options) -> None:
        self.heat.set_matrix(matrix, row_labels, column_labels, **options)
        shows = (self.heat.colormap.name or id(self.heat.colormap), tuple(float(v) for v in self.heat.levels))
        if self.colorbar is not None and self._colorbar_shows != shows:
            # only what changed: each call draws the colour bar again (its map) or lays its numbers out
            # again (its levels) in the next paint, which is the latency of the picture being typed at
            if self._colorbar_shows is None or self._colorbar_shows[0] != shows[0]:
                self.colorbar.setColorMap(self.heat.colormap)
            if self._colorbar_shows is None or self._colorbar_shows[1] != shows[1]:
                self.colorbar.setLevels(self.heat.levels)
            self._colorbar_shows = shows
        self.updateGeometry()  # the token labels' width is part of the minimum width

    def minimumSizeHint(self):  # noqa: N802 - Qt name
        """At least the size the scene's items need (token labels, the title, the colour bar and
        its numbers, the axes): a smaller widget drew the colour bar and the bottom axis past its
        edge, clipped (the vector diffs' "output − x" and the positional lab's PE map at
        1024 × 600). A short view still thins its row labels out (update_ticks)."""
        from PySide6.QtCore import QSize

        hint = super().minimumSizeHint()
        need = self.ci.effectiveSizeHint(Qt.SizeHint.MinimumSize)
        return QSize(max(hint.width(), math.ceil(need.width())), max(hint.height(), math.ceil(need.height())))

    def matrix(self) -> np.ndarray | None:
        """The matrix last given to :meth:`set_matrix` (as given, −∞ kept)."""
        return self.heat.matrix

    def clear_matrix(self) -> None:
        self.heat.clear()

    def set_highlight_row(self, row: int | None) -> None:
        self.heat.set_highlight(row=row)

    def set_axis_titles(self, left: str, bottom: str) -> None:
        if not self.heat.compact and self._titles != (left, bottom):  # a title set again lays its axis out again
            self._titles = (left, bottom)
            self.plot.setLabel("left", left)
            self.plot.setLabel("bottom", bottom)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt name
        from PySide6.QtCore import QEvent

        if event.type() == QEvent.Type.LayoutRequest and watched is self.__dict__.get("ci"):
            self.updateGeometry()
        return False

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().resizeEvent(event)
        if hasattr(self, "heat"):  # pyqtgraph resizes during its own __init__
            self.heat.update_ticks()

    def _on_mouse_moved(self, scene_pos) -> None:
        cell = self.heat.cell_at(scene_pos)
        if cell != self._hover:
            self._hover = cell
            self.cellHovered.emit(*cell)

    def _on_mouse_clicked(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            cell = self.heat.cell_at(event.scenePos())
            if cell != (-1, -1):
                self.cellClicked.emit(*cell)
