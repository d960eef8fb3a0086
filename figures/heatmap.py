"""HeatmapPlot: a labelled matrix heatmap (pyqtgraph), the project's main picture, drawn in any
GraphicsLayout: the window's views (app/heatmap.py adds hover and click) and the exported figures.

Template: pyqtgraph/examples/MatrixDisplayExample.py — a row-major ImageItem translated by
(−0.5, −0.5) so cell (i, j) is centred on integer coordinates, an inverted y axis (row 0 on
top), token labels as ticks (thinned when they would overlap), a colour bar. Masked cells
(NaN / −∞) are transparent over a hatched backdrop, so they read as "masked", not as a colour.
Values are written into the cells of small matrices. The view never mutates a matrix it was
given (ImageItem keeps a view of it).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontInfo, QFontMetrics, QImage, QPen, QStaticText, QTransform
from PySide6.QtWidgets import QGraphicsRectItem

from .token_axis import TokenAxis, cache_drawing

WEIGHTS_MAP = "viridis"
DIVERGING_MAP = "CET-D1"
MAX_CELL_TEXT = 14  # write numbers into the cells up to this many rows and columns
LABEL_CHARS = 12  # longer token labels are shortened with an ellipsis
LABEL_EVERY_TOKEN = 24  # up to this many tokens every row and column has its label (thinned beyond)
MIN_LABEL_PIXELS = 7  # px: smaller rows than this are labelled every other (or fewer), never overlapping


def short_label(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class LightPlot(pg.GraphicsLayout):
    """The part of pyqtgraph's PlotItem a heatmap needs: a title, a ViewBox, left and bottom axes.

    A PlotItem builds context menus and four axes (measured here: 39 ms each, against 9 ms for
    this), and the window holds a dozen heatmaps: this keeps start-up fast.
    """

    def __init__(self, title: str | None = None):
        super().__init__()
        self.setContentsMargins(2, 2, 2, 2)
        self.setSpacing(0)
        self.title = pg.LabelItem(title or "", size="10pt", color="#222")
        self.vb = pg.ViewBox(enableMenu=False)
        self.axes = {"left": TokenAxis("left"), "bottom": TokenAxis("bottom")}
        for axis in self.axes.values():
            axis.linkToView(self.vb)
            # axes count tokens and dimensions: never "(x0.001)" (pyqtgraph's SI prefix showed
            # it on the one-token heatmap, whose view spans a fraction of a unit)
            axis.enableAutoSIPrefix(False)
        # the first and last token labels may pass the matrix's edges by 15 px (else dropped)
        self.axes["bottom"].setStyle(hideOverlappingLabels=15)
        self.addItem(self.title, row=0, col=1)
        self.addItem(self.axes["left"], row=1, col=0)
        self.addItem(self.vb, row=1, col=1)
        self.addItem(self.axes["bottom"], row=2, col=1)
        if not title:
            self.title.setMaximumHeight(0)

    def setTitle(self, title: str | None = None) -> None:  # noqa: N802 - PlotItem's name
        self.title.setText(title or "")
        self.title.setMaximumHeight(0 if not title else 16777215)

    def setLabel(self, axis: str, text: str) -> None:  # noqa: N802
        self.axes[axis].setLabel(text)

    def getAxis(self, name: str) -> pg.AxisItem:  # noqa: N802
        return self.axes[name]

    def hideAxis(self, name: str) -> None:  # noqa: N802
        self.axes[name].hide()

    def getViewBox(self) -> pg.ViewBox:  # noqa: N802
        return self.vb

    def addItem(self, item, *args, **kwargs):  # noqa: N802 - items of the plot go into the view
        if args or kwargs:
            return super().addItem(item, *args, **kwargs)
        return self.vb.addItem(item)

    def removeItem(self, item) -> None:  # noqa: N802
        self.vb.removeItem(item)

    def __getattr__(self, name):
        # invertY, setLimits, setRange, setMouseEnabled, setAspectLocked … are the ViewBox's
        return getattr(self.__dict__.get("vb") or super().__getattribute__("vb"), name)


class CellValues(pg.GraphicsObject):
    """Every cell's number, drawn in one paint call at a fixed pixel size (not stretched).

    One item instead of one TextItem per cell: measured 4 ms per TextItem here, so a 12 × 12
    matrix cost ~0.5 s to label. The cells' centres come from the painter's transform in NumPy
    and each colour's texts are drawn under one pen (the paint's only per-cell work is the draw).
    """

    def __init__(self) -> None:
        super().__init__()
        self._texts: list[list[str]] = []
        self._dark: np.ndarray = np.zeros((0, 0), dtype=bool)
        self._rows = self._columns = 0
        # text → (its layout at _static_size, half its width, half its height) (≤ 14 × 14 cells' texts)
        self._static: dict[str, tuple[QStaticText, float, float]] = {}
        self._static_size = 0

    def set_values(self, texts: list[list[str]], dark: np.ndarray) -> None:
        self.prepareGeometryChange()
        if len(self._static) > 4096:  # every value ever shown would pile up
            self._static.clear()
        self._texts, self._dark = texts, dark
        self._rows, self._columns = dark.shape
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt name
        return QRectF(-0.5, -0.5, self._columns, self._rows)

    def paint(self, painter, *args) -> None:
        if not self._rows:
            return
        transform = painter.transform()
        cell_width = abs(transform.m11()) or 1.0
        cell_height = abs(transform.m22()) or 1.0
        if cell_width < 22 or cell_height < 11:
            return  # too small to read: the colour says it
        painter.save()
        painter.resetTransform()
        font = QFont()
        font.setPixelSize(int(max(8, min(14, cell_height * 0.42, cell_width / 3.6))))
        painter.setFont(font)
        if font.pixelSize() != self._static_size:  # laid-out texts are kept while the size stays
            self._static.clear()
            self._static_size = font.pixelSize()
        rows, columns = np.mgrid[: self._rows, : self._columns]  # (rows, columns) each
        xs = (transform.m11() * columns + transform.m21() * rows + transform.dx()).tolist()
        ys = (transform.m12() * columns + transform.m22() * rows + transform.dy()).tolist()
        for colour, dark in ((QColor(255, 255, 255), True), (QColor(20, 20, 20), False)):
            painter.setPen(colour)
            for i, j in np.argwhere(self._dark == dark).tolist():
                text = self._texts[i][j]
                laid = self._static.get(text)
                if laid is None:
                    static = QStaticText(text)
                    static.prepare(QTransform(), font)
                    size = static.size()
                    laid = self._static[text] = (static, size.width() / 2, size.height() / 2)
                painter.drawStaticText(QPointF(xs[i][j] - laid[1], ys[i][j] - laid[2]), laid[0])
        painter.restore()


class MatrixImage(pg.ImageItem):
    """pyqtgraph's ImageItem, its picture kept as premultiplied ARGB32: ImageItem renders a colour
    map as an 8-bit indexed image, which Qt converts pixel by pixel in every scaled paint (~2 ms
    for a 742 × 525 view here); premultiplied ARGB is drawn as it is. Converted once per render."""

    def render(self) -> None:
        super().render()
        if self.qimage is not None and self.qimage.format() != QImage.Format.Format_ARGB32_Premultiplied:
            self.qimage = self.qimage.convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)


class CellRects(pg.GraphicsObject):
    """Every cell as a filled rectangle, coloured like the ImageItem would colour it.

    For SVG export: pyqtgraph's SVGExporter writes an ImageItem as an embedded bitmap (blurry
    when scaled); painted rectangles become vector shapes. Masked cells stay empty (hatching).
    """

    def __init__(self, display: np.ndarray, levels, colormap) -> None:
        super().__init__()
        rows, columns = display.shape
        self._rect = QRectF(-0.5, -0.5, columns, rows)
        self.colours = cell_colours(display, levels, colormap)  # (rows, columns, 3) uint8; masked: −1

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt name
        return self._rect

    def paint(self, painter, *args) -> None:
        painter.setPen(Qt.PenStyle.NoPen)
        rows, columns = self.colours.shape[:2]
        for i in range(rows):
            for j in range(columns):
                red, green, blue = (int(v) for v in self.colours[i, j])
                if red >= 0:
                    # 1 % overlap: no hairline seams between neighbours in SVG viewers
                    painter.fillRect(QRectF(j - 0.5, i - 0.5, 1.01, 1.01), QColor(red, green, blue))


_LIGHTNESS: dict[str, np.ndarray] = {}  # colour map name → (256,) lightness of its lookup table


def lightness_table(colormap) -> np.ndarray:
    """(256,) perceived lightness (0–255) of ``colormap``'s lookup table: light or dark cell text.
    Kept per map: its table is interpolated anew on every call (~0.2 ms)."""
    table = _LIGHTNESS.get(colormap.name) if colormap.name else None
    if table is None:
        lut = colormap.getLookupTable(0.0, 1.0, 256, alpha=False)  # (256, 3)
        table = lut.astype(float) @ np.array([0.299, 0.587, 0.114])
        if colormap.name:
            _LIGHTNESS[colormap.name] = table
    return table


def cell_colours(display: np.ndarray, levels, colormap) -> np.ndarray:
    """(rows, columns, 3) int colours of the cells at ``levels`` (−1 where masked / not finite)."""
    low, high = levels
    span = (high - low) or 1.0
    lut = colormap.getLookupTable(0.0, 1.0, 256, alpha=False)  # (256, 3)
    finite = np.isfinite(display)
    index = np.clip(((np.where(finite, display, low) - low) / span * 255).astype(int), 0, 255)
    colours = lut[index].astype(int)
    colours[~finite] = -1
    return colours


class HeatmapPlot:
    """A labelled matrix inside any pyqtgraph GraphicsLayout (one per head in a figure)."""

    def __init__(self, layout: pg.GraphicsLayout, *, title: str = "", compact: bool = False, row=None, col=None):
        self.compact = compact
        self.plot = LightPlot(title or None)
        layout.addItem(self.plot, row=row, col=col)
        self.plot.setMouseEnabled(x=not compact, y=not compact)
        self.plot.invertY(True)
        self.image = MatrixImage(axisOrder="row-major")
        self.image.setAutoDownsample(True)
        self.backdrop = QGraphicsRectItem()
        self.backdrop.setBrush(QBrush(QColor(150, 150, 150), Qt.BrushStyle.BDiagPattern))
        self.backdrop.setPen(QPen(Qt.PenStyle.NoPen))
        self.plot.addItem(self.backdrop)
        self.plot.addItem(self.image)
        self.highlight = QGraphicsRectItem()
        self.highlight.setPen(pg.mkPen("#ff2d55", width=3, cosmetic=True))
        self.highlight.setBrush(QBrush(Qt.BrushStyle.NoBrush))
        self.highlight.setVisible(False)
        self.values = CellValues()
        self.plot.addItem(self.values)
        self.plot.addItem(self.highlight)
        for axis_name in ("left", "bottom"):
            axis = self.plot.getAxis(axis_name)
            axis.setPen(pg.mkPen("#444"))
            axis.setTextPen(pg.mkPen("#111"))
        cache_drawing(self.plot.title, *(self.plot.getAxis(name) for name in ("left", "bottom")))
        # empty state: no meaningless −0.5 … 0 axes until a matrix arrives (and after clear())
        self.plot.hideAxis("left")
        self.plot.hideAxis("bottom")
        self.matrix: np.ndarray | None = None
        self.row_labels: list[str] = []
        self.column_labels: list[str] = []
        self.colormap = pg.colormap.get(WEIGHTS_MAP)
        self.levels = (0.0, 1.0)
        self._axes_show: dict[str, tuple] = {}  # axis name → (tick font, ticks, height) it was given last
        self._image_map = None  # the colour map's name (or the map) the image was given last

    def set_matrix(self, matrix, row_labels=None, column_labels=None, *, levels=None, colormap=WEIGHTS_MAP,
                   show_values=None, value_format="{:.2f}", upscale: int = 1, display=None) -> None:
        """Show ``matrix`` (rows × columns). −∞/NaN cells are drawn as masked.

        ``upscale`` repeats every cell k×k pixels in the image (for sharp SVG export).
        ``display``: a smaller block average of a huge matrix, drawn stretched over the matrix's
        extent (made in the worker, so painting never averages millions of cells here).
        """
        matrix = np.asarray(matrix)
        rows, columns = matrix.shape
        masked = False
        if display is not None:
            display = np.asarray(display)
            masked = not np.isfinite(display).all()  # (a block average: small)
        elif matrix.size > 65536 and matrix.dtype.kind == "f" and np.isfinite(matrix.min()) \
                and np.isfinite(matrix.max()):
            display = matrix  # finite: min() is one fast pass, where isfinite() would allocate n² booleans
        elif not np.isfinite(matrix).all():
            display = np.where(np.isfinite(matrix), matrix, np.nan).astype(np.float32)
            masked = True
        else:
            display = matrix
        if levels is None:
            levels = symmetric_levels(display)
        self.matrix = matrix
        self.levels = levels
        self.row_labels = [str(label) for label in (row_labels if row_labels is not None else range(rows))]
        self.column_labels = [str(label) for label in (column_labels if column_labels is not None else range(columns))]
        if colormap != self._image_map:  # the image's lookup table made again from the map: ~0.4 ms a result
            self.colormap = pg.colormap.get(colormap)
            self.image.setColorMap(self.colormap)
            self._image_map = colormap
        image = display if upscale <= 1 else np.repeat(np.repeat(display, upscale, axis=0), upscale, axis=1)
        self.image.setImage(image, levels=levels, autoLevels=False)
        self.image.setRect(QRectF(-0.5, -0.5, columns, rows))
        self.backdrop.setRect(QRectF(-0.5, -0.5, columns, rows))
        self.backdrop.setVisible(masked)  # the hatching shows only through masked cells (its fill: ~1.5 ms a paint)
        if not self.compact:
            for name in ("left", "bottom"):
                if not self.plot.getAxis(name).isVisible():  # show() lays a shown axis out again
                    self.plot.getAxis(name).show()
        self.plot.setLimits(xMin=-0.5, xMax=columns - 0.5, yMin=-0.5, yMax=rows - 0.5)
        self.plot.setRange(xRange=(-0.5, columns - 0.5), yRange=(-0.5, rows - 0.5), padding=0)
        self.update_ticks()
        if show_values is None:
            show_values = rows <= MAX_CELL_TEXT and columns <= MAX_CELL_TEXT and not self.compact
        self._write_values(display, value_format if show_values else None)

    def use_vector_cells(self) -> CellRects:
        """Draw the cells as rectangles instead of the bitmap (SVG export); returns the item."""
        display = self.image.image
        rects = CellRects(np.asarray(display, dtype=float), self.levels, self.colormap)
        self.plot.removeItem(self.image)
        self.plot.getViewBox().addItem(rects)
        rects.setZValue(self.image.zValue())
        self.values.setZValue(rects.zValue() + 1)
        self.highlight.setZValue(rects.zValue() + 2)
        return rects

    def clear(self) -> None:
        self.matrix = None
        self.image.clear()
        self.backdrop.setVisible(False)
        self.plot.hideAxis("left")
        self.plot.hideAxis("bottom")
        self._write_values(None, None)
        self.highlight.setVisible(False)

    def set_highlight(self, row: int | None = None, column: int | None = None) -> None:
        """Outline one row (the focused query) or one column; neither hides the outline."""
        if self.matrix is None:
            self.highlight.setVisible(False)
            return
        rows, columns = self.matrix.shape
        if row is not None and 0 <= row < rows:
            self.highlight.setRect(QRectF(-0.5, row - 0.5, columns, 1))
        elif column is not None and 0 <= column < columns:
            self.highlight.setRect(QRectF(column - 0.5, -0.5, 1, rows))
        else:
            self.highlight.setVisible(False)
            return
        self.highlight.setVisible(True)

    def update_ticks(self) -> None:
        """Token labels on both axes, thinned so they never overlap at the current size."""
        if self.compact or self.matrix is None:
            return
        view = self.plot.getViewBox().sceneBoundingRect()
        font = QFont()
        rows, columns = len(self.row_labels), len(self.column_labels)
        if max(rows, columns) <= LABEL_EVERY_TOKEN:
            # every token gets its label: a smaller font when the cells are small (not below 7 px)
            row_pixels = view.height() / max(rows, 1)
            font.setPixelSize(int(max(7, min(QFontInfo(QFont()).pixelSize(), row_pixels / 1.15))))
        metrics = QFontMetrics(font)
        every_row = rows <= LABEL_EVERY_TOKEN and view.height() / max(rows, 1) >= MIN_LABEL_PIXELS
        row_step = 1 if every_row else _label_step(rows, view.height(), metrics.height() * 1.05)
        # measure only the longest labels: thousands of tokens would cost ~10 ms a resize
        longest = sorted(self.column_labels, key=len, reverse=True)[:24]
        widest = max((metrics.horizontalAdvance(short_label(t)) for t in longest), default=10)
        column_step = _label_step(columns, view.width(), widest + 8)
        self._set_axis("left", font, [_ticks(self.row_labels, row_step)])
        if column_step > 1 and columns <= LABEL_EVERY_TOKEN and 2 * view.width() / columns >= 3 * MIN_LABEL_PIXELS:
            # every column labelled on two staggered lines, each label within two cells' width
            cell = view.width() / columns
            room = max(2 * cell - 6, metrics.horizontalAdvance("M…"))
            # the first and last labels may pass the plot's edge by only 15 px (pyqtgraph drops them)
            edge = max(cell + 26, metrics.horizontalAdvance("M…"))
            ticks = [(index, ("\n" if index % 2 else "") + metrics.elidedText(
                short_label(label), Qt.TextElideMode.ElideRight, int(edge if index in (0, columns - 1) else room)))
                for index, label in enumerate(self.column_labels)]
            bottom = self.plot.getAxis("bottom")
            label = bottom.label.boundingRect().height() * 0.8 if bottom.label.isVisible() else 0
            self._set_axis("bottom", font, [ticks], int(2 * metrics.lineSpacing() + 4 + bottom.style["tickTextOffset"][1]
                                                         + max(0, bottom.style["tickLength"]) + label))
        else:
            self._set_axis("bottom", font, [_ticks(self.column_labels, column_step)])

    def _set_axis(self, name: str, font: QFont, ticks: list, height: int | None = None) -> None:
        """Give axis ``name`` its tick font, ticks and height, only what changed: each setter makes the
        axis measure and draw all its labels again in the next paint, and a resize or a second result
        of the same text asks for the same ones."""
        axis = self.plot.getAxis(name)
        shown = self._axes_show.get(name)
        if shown is None or shown[0] != font:
            axis.setTickFont(font)
        if shown is None or shown[1] != ticks:
            axis.setTicks(ticks)
        if name == "bottom" and (shown is None or shown[2] != height):
            axis.setHeight(height)
        self._axes_show[name] = (QFont(font), ticks, height)

    def _write_values(self, display, value_format) -> None:
        if value_format is None or display is None:
            self.values.set_values([], np.zeros((0, 0), dtype=bool))
            return
        low, high = self.levels
        span = (high - low) or 1.0
        finite = np.isfinite(display)
        index = np.clip(((np.where(finite, display, low) - low) / span * 255).astype(int), 0, 255)
        lightness = lightness_table(self.colormap)[index]  # (rows, columns)
        dark = np.where(finite, lightness < 128, False)  # masked cells: dark text on the light hatching
        texts = [["−∞" if not ok else value_format.format(value) for value, ok in zip(row, ok_row)]
                 for row, ok_row in zip(display.tolist(), finite.tolist())]
        self.values.set_values(texts, dark)

    def cell_at(self, scene_pos) -> tuple[int, int]:
        """(row, column) under a scene position, or (−1, −1)."""
        view = self.plot.getViewBox()
        if self.matrix is None or not view.sceneBoundingRect().contains(scene_pos):
            return (-1, -1)
        point: QPointF = view.mapSceneToView(scene_pos)
        row, column = int(math.floor(point.y() + 0.5)), int(math.floor(point.x() + 0.5))
        rows, columns = self.matrix.shape
        if 0 <= row < rows and 0 <= column < columns:
            return (row, column)
        return (-1, -1)


def _label_step(count: int, pixels: float, per_label: float) -> int:
    if count <= 1 or pixels <= 0:
        return 1
    fit = max(1, int(pixels // max(per_label, 1.0)))
    return max(1, math.ceil(count / fit))


def _ticks(labels: Sequence[str], step: int) -> list[tuple[int, str]]:
    return [(index, short_label(labels[index])) for index in range(0, len(labels), step)]


def symmetric_levels(matrix: np.ndarray) -> tuple[float, float]:
    """Colour levels for signed data: (−m, m) with m the largest finite |value| (1 if none)."""
    finite = matrix[np.isfinite(matrix)]
    bound = float(np.abs(finite).max()) if finite.size else 1.0
    return (-bound, bound) if bound > 0 else (-1.0, 1.0)


def data_levels(matrix: np.ndarray) -> tuple[float, float]:
    """(min, max) of the finite values, widened when flat."""
    finite = matrix[np.isfinite(matrix)]
    if not finite.size:
        return (0.0, 1.0)
    low, high = float(finite.min()), float(finite.max())
    return (low, high) if high > low else (low - 0.5, high + 0.5)
