"""The heatmap's axes: token labels and a colour bar's scale, laid out faster than pyqtgraph's own.

TokenAxis draws pyqtgraph's AxisItem picture for one level of ticks; ColourBar is the part of
pyqtgraph's ColorBarItem a heatmap uses (the map's gradient and its scale), without the PlotItem
ColorBarItem is built on (its control form and four axes: ~45 ms each to build here, two at start-up).
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QImage, QPainter, QPen, QPixmap, QStaticText, QTransform
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPixmapItem

_TEXT_FLAGS = {  # the tick labels' alignment, as pyqtgraph's AxisItem aligns them
    "left": Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter | Qt.TextFlag.TextDontClip,
    "bottom": Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextDontClip,
    "right": Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter | Qt.TextFlag.TextDontClip,
}


def scale_ticks(low: float, high: float, pixels: float) -> list[tuple[float, str]]:
    """Round values from ``low`` to ``high`` for a scale ``pixels`` long: a step of 1, 2 or 5 × 10ᵏ
    near (high − low) / ln(pixels) (pyqtgraph's tick count), each written with the decimals of the step."""
    span = high - low
    if not (span > 0 and math.isfinite(span)) or pixels <= 1:
        return [(low, f"{low:g}")] if math.isfinite(low) else []
    wanted = span / max(2.0, math.log(pixels))
    power = 10.0 ** math.floor(math.log10(wanted))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= wanted * (1 - 1e-9))
    places = max(0, -math.floor(math.log10(step) + 1e-9))
    slack = 1e-9 * max(1.0, abs(low / step), abs(high / step))  # rounding of the quotients, not a step
    first = math.ceil(low / step - slack)
    count = math.floor(high / step + slack) - first + 1
    values = [(first + index) * step for index in range(count)]
    largest = max(abs(low), abs(high))
    if step < 1e-3 or largest >= 1e4:  # as pyqtgraph: powers of ten, with the digits the step needs
        digits = max(1, math.floor(math.log10(largest)) - math.floor(math.log10(step) + 1e-9) + 1)
        return [(value, f"{round(value / step) * step:.{digits}g}") for value in values]
    return [(value, f"{round(value, places) + 0.0:.{places}f}") for value in values]


class TokenAxis(pg.AxisItem):
    """pyqtgraph's AxisItem, with one level of ticks (token labels, a colour bar's scale) laid out faster.

    The picture is pyqtgraph's (the same line, ticks, label rectangles and culling), but each
    label's size is measured once per font (AxisItem measures every label in every layout: ~1.7 ms
    an axis of 12 labels here, the largest part of a new sentence's paint), and a range set
    again unchanged keeps the drawn picture (the heatmap sets its range with every result).
    AxisItem's automatic ticks measure two or three levels of labels and drop most (~3.6 ms a colour
    bar's axis here); ``scale=True`` draws one level of round values instead (scale_ticks). Other
    ticks (several levels, a grid, the top side) go to AxisItem's own code. When Qt keeps the
    item's drawing (cache_drawing), the axis draws straight into that cache, a bottom label a
    QStaticText laid out once per font (AxisItem records a QPicture of drawText calls and replays
    it: the two passes, the text layouts and Python's enum flags were ~0.3 ms of an axis here).
    """

    def __init__(self, orientation: str, *, scale: bool = False, **options):
        super().__init__(orientation, **options)
        self._label_sizes: dict[tuple[str, str], tuple[float, float]] = {}  # (font key, text) → (width, height)
        self._static: dict[tuple[str, str], QStaticText] = {}  # (font key, one-line text) → its layout
        self._scale = scale  # without explicit ticks: one level of round values (scale_ticks), as a colour bar's

    def setRange(self, mn: float, mx: float) -> None:  # noqa: N802 - pyqtgraph's name
        if [mn, mx] != getattr(self, "range", None) or self.autoSIPrefix:  # (AxisItem.__init__ sets the first)
            super().setRange(mn, mx)

    def paint(self, p, opt, widget) -> None:
        if self.cacheMode() == QGraphicsItem.CacheMode.NoCache:
            super().paint(p, opt, widget)  # its QPicture, replayed in every paint
            return
        p.save()
        try:
            if self.style["tickFont"]:  # as AxisItem.paint: AxisItem's own generateDrawSpecs measures with it
                p.setFont(self.style["tickFont"])
            specs = self.generateDrawSpecs(p)
            if specs is not None:
                self._draw(p, *specs)
        finally:
            p.restore()

    def _draw(self, p, axis_spec, tick_specs, text_specs) -> None:
        """AxisItem.drawPicture, the bottom axis's labels drawn as cached QStaticText where drawText
        would align them in their rectangles (within a pixel of pyqtgraph's: tests/app/test_heatmap_paint.py)."""
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        pen, start, end = axis_spec
        p.setPen(pen)
        p.drawLine(start, end)
        for pen, start, end in tick_specs:
            p.setPen(pen)
            p.drawLine(start, end)
        if self.style["tickFont"] is not None:
            p.setFont(self.style["tickFont"])
        p.setPen(self.textPen())
        p.setClipRect(self.boundingRect().toAlignedRect())
        font = p.font()
        key = font.key()
        if len(self._static) > 4096:  # every sentence ever shown would pile up
            self._static.clear()
        line = math.ceil(QFontMetricsF(font).height())  # drawText lays its lines a whole pixel apart
        across = self.orientation != "bottom"  # (Python's enum flags cost ~5 µs a test: not per label)
        for rect, flags, text in text_specs:
            shown = text.lstrip("\n")
            if across or "\n" in shown:  # centred on its row: drawText rounds that with the font (no match found)
                p.drawText(rect, int(flags), text)
                continue
            static = self._static.get((key, shown))
            if static is None:
                static = self._static[(key, shown)] = QStaticText(shown)
                static.setTextFormat(Qt.TextFormat.PlainText)
                static.prepare(QTransform(), font)
            # centred under its tick, from the top; a staggered label's leading newlines put it lines lower
            p.drawStaticText(QPointF(rect.center().x() - static.size().width() / 2,
                                     rect.top() + (len(text) - len(shown)) * line), static)

    def generateDrawSpecs(self, p):  # noqa: N802 - pyqtgraph's name
        levels = self._tickLevels
        if ((levels is None and not self._scale) or (levels is not None and len(levels) != 1) or self.grid is not False
                or self.orientation not in _TEXT_FLAGS or any(self.style["stopAxisAtTick"])
                or not self.style["showValues"]):
            return super().generateDrawSpecs(p)
        if self.style["tickFont"] is not None:
            p.setFont(self.style["tickFont"])
        bounds = self.mapRectFromParent(self.geometry())
        orientation = self.orientation
        vertical = orientation != "bottom"  # left, right: values run up the axis
        if orientation == "left":
            span = (bounds.topRight() + QPointF(-1, -1), bounds.bottomRight() + QPointF(-1, 1))
            tick_at, direction = bounds.right(), -1
        elif orientation == "right":
            span = (bounds.topLeft() + QPointF(1, -1), bounds.bottomLeft() + QPointF(1, 1))
            tick_at, direction = bounds.left(), 1
        else:
            span = (bounds.topLeft() + QPointF(-1, 1), bounds.topRight() + QPointF(1, 1))
            tick_at, direction = bounds.top(), 1
        points = [self.mapToDevice(point) for point in span]
        if None in points:
            return None
        pixels = math.hypot(points[1].x() - points[0].x(), points[1].y() - points[0].y())
        if pixels == 0:
            return None
        low, high = self.range
        if levels is None:
            levels = [scale_ticks(min(low, high), max(low, high), pixels)]
        if high == low:
            scale, offset = 1.0, 0.0
        elif vertical:
            scale = -bounds.height() / (high - low)
            offset = low * scale - bounds.height()
        else:
            scale = bounds.width() / (high - low)
            offset = low * scale
        ends = (low * scale - offset, high * scale - offset)
        first, last = min(ends), max(ends)
        length = self.style["tickLength"]
        pen = self.tickPen()
        alpha = self.style["tickAlpha"]
        if pen.brush().style() == Qt.BrushStyle.SolidPattern:  # AxisItem's alpha of the first tick level
            pen = QPen(pen)
            colour = QColor(pen.color())
            colour.setAlpha(255 if alpha is None else max(0, min(255, int(round(alpha * 255))))
                            if isinstance(alpha, float) else int(alpha))
            pen.setColor(colour)
        ticks, labels = [], []
        for value, text in levels[0]:
            x = value * scale - offset
            if x < first or x > last:
                continue
            if vertical:
                ticks.append((pen, QPointF(tick_at, x), QPointF(tick_at + length * direction, x)))
            else:
                ticks.append((pen, QPointF(x, tick_at), QPointF(x, tick_at + length * direction)))
            labels.append((x, text))
        font = p.font().key()
        sizes = []
        for _, text in labels:
            size = self._label_sizes.get((font, text))
            if size is None:
                if len(self._label_sizes) > 4096:  # every sentence ever shown would pile up
                    self._label_sizes.clear()
                box = p.boundingRect(QRectF(0, 0, 100, 100), Qt.AlignmentFlag.AlignCenter, text)
                size = self._label_sizes[(font, text)] = (box.width(), box.height() * 0.8)  # AxisItem's 0.8
            sizes.append(size)
        across = max((size[0 if vertical else 1] for size in sizes), default=0)
        offset_text = max(0, length) + self.style["tickTextOffset"][0 if vertical else 1]
        flags, room = _TEXT_FLAGS[orientation], self.boundingRect()
        texts = []
        for (x, text), (width, height) in zip(labels, sizes):
            if orientation == "left":
                rect = QRectF(tick_at - offset_text - width, x - height / 2, width, height)
            elif orientation == "right":
                rect = QRectF(tick_at + offset_text, x - height / 2, width, height)
            else:
                rect = QRectF(x - width / 2, tick_at + offset_text, width, height)
            if room & rect == rect:  # AxisItem's culling: the label lies inside the axis (and its overhang)
                texts.append((rect, flags, text))
        self._updateMaxTextSize(across)
        return (self.pen(), span[0], span[1]), ticks, texts


def cache_drawing(*items) -> None:
    """Keep the drawing of ``items`` (axes, titles) and of their text children as pixmaps: a
    repaint of the view blits them instead of laying their texts out again (the axes replay a
    QPicture of drawText calls: ~1 ms an axis a paint here). Qt draws an item again when it
    calls update() or changes size, which every change of a label or a tick does."""
    for item in items:
        for part in (item, *item.childItems()):
            part.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)


class ColourBar(pg.GraphicsLayout):
    """A vertical colour bar: ``colormap``'s gradient, ``width`` px wide, its levels' scale on the right.

    ColorBarItem's API as the heatmaps use it (setColorMap, setLevels, levels, axis, bar); the
    gradient is a 1 × 256 pixmap stretched over the bar, low values at the bottom, as ColorBarItem's.
    Built in ~7 ms (ColorBarItem: ~46 ms, measured here).
    """

    def __init__(self, colormap, *, width: int = 14) -> None:
        super().__init__()
        self.setContentsMargins(0, 0, 0, 0)
        self.setSpacing(0)
        self.vb = pg.ViewBox(enableMenu=False, border=pg.mkPen("#969696"))  # (pyqtgraph's foreground grey)
        self.vb.setMouseEnabled(x=False, y=False)
        self.vb.setFixedWidth(width)
        self.vb.setRange(xRange=(0, 1), yRange=(0, 256), padding=0)
        self.vb.disableAutoRange()
        self.bar = QGraphicsPixmapItem()
        self.bar.setShapeMode(QGraphicsPixmapItem.ShapeMode.BoundingRectShape)
        self.vb.addItem(self.bar)
        self.axis = TokenAxis("right", scale=True)
        self.axis.setWidth(45)
        self.axis.enableAutoSIPrefix(False)  # its numbers say their powers of ten (scale_ticks)
        self.addItem(self.vb, row=0, col=0)
        self.addItem(self.axis, row=0, col=1)
        cache_drawing(self.axis)
        self.values = (0.0, 1.0)
        self._colour_map = None
        self.setColorMap(colormap)
        self.setLevels(self.values)

    def setColorMap(self, colormap) -> None:  # noqa: N802 - ColorBarItem's name
        self._colour_map = colormap
        lut = np.ascontiguousarray(colormap.getLookupTable(nPts=256, alpha=True)[:, None, :])  # (256, 1, 4)
        # row 0 (the lowest value) at y 0, the bar's bottom: the view's y axis points up
        self.bar.setPixmap(QPixmap.fromImage(QImage(lut.data, 1, 256, 4, QImage.Format.Format_RGBA8888)))

    def colorMap(self):  # noqa: N802 - ColorBarItem's name
        return self._colour_map

    def setLevels(self, values) -> None:  # noqa: N802 - ColorBarItem's name
        self.values = (float(values[0]), float(values[1]))
        self.axis.setRange(*self.values)

    def levels(self) -> tuple[float, float]:
        return self.values
