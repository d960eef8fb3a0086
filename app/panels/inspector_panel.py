"""Cell inspector: one attention weight taken apart, from q_i and k_j to the share of v_j.

Click a cell (query i, key j) of a heatmap: this panel shows, for the selected head, q_i and
k_j dimension by dimension with their products and the products' sum (the score), the division
by √d_k, the mask, exp, the row's normaliser, the weight and what weight · v_j adds to the head's
output — a table of numbers and a bar chart of q_i, k_j and q_i ⊙ k_j. The numbers come from
:func:`engine.analysis.inspect.inspect_cell`, run on the worker (lane "inspect"): it needs the whole row.
"""
from __future__ import annotations

import html
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView, QHeaderView, QLabel, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from engine.analysis.inspect import CellInspection, inspect_cell

from ..controller import Controller
from ..i18n import error_text
from ..legend import legend_label
from ..text import fill
from .base import Panel

LANE = "inspect"
MAX_VECTOR_ITEMS = 6  # vectors longer than this are abridged in a table cell (tooltip: all of it)
Q_BRUSH = pg.mkBrush("#4c78a8")
K_BRUSH = pg.mkBrush("#f58518")
PRODUCT_BRUSH = pg.mkBrush("#54a24b")
MASKED_COLOUR = QColor("#c62828")
ROW_PADDING = 8  # px above and below a step's text (the style gives 30 px rows to 14-pixel text)
READABLE_STEPS = 6  # steps shown before the panel scrolls
CHART_HEIGHT = 140  # px: the bars under their title and over their axis, six steps' height at 1024 × 600
HOW_WIDTH, HOW_LEAST = 200, 80  # px of the steps' How column: wished for, and the least before the chart gives up width
VECTOR_STEPS = ("v_j", "weighted_v", "output")  # steps whose value is a vector (abridged)
NARROW_WIDTH = 560  # pixels: below this (a dock moved to a column) the steps, the chart and the table are stacked


def _compact_rows(table: QTableWidget) -> None:
    """Rows as tall as their text and ROW_PADDING."""
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + ROW_PADDING)
    table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)


def number(value: float) -> str:
    """Six significant digits; −∞ / NaN spelled out."""
    if math.isnan(value):
        return "—"
    if math.isinf(value):
        return "−∞" if value < 0 else "∞"
    return f"{value + 0.0:.6g}"  # + 0.0 turns −0 into 0


def vector_text(values, limit: int = MAX_VECTOR_ITEMS) -> str:
    items = [f"{v + 0.0:.4g}" for v in values]  # + 0.0 turns −0 into 0
    if len(items) > limit:
        items = items[: limit - 2] + ["…"] + items[-1:]
    return "[" + ", ".join(items) + "]"


class InspectorPanel(Panel):
    """A header over three parts side by side: the steps, the bars of q_i / k_j / products per dimension
    and their table (along the bottom the height is scarce, the width is not)."""

    def show_snapshot(self, snapshot) -> None:
        self._request_inspection()

    STEP_KEYS = ("dot", "divisor", "scaled", "mask", "row_max", "exp", "normaliser", "weight",
                 "v_j", "weighted_v", "output", "share")

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("inspectorPanel")
        self.controller = controller
        self.inspection: CellInspection | None = None
        self.inspected_result = None  # the AttentionResult the inspection was computed from
        self._request: tuple | None = None  # (result, head, query, key) last asked for
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.setSpacing(2)
        self.header = QLabel(self.tr("Click a cell of the attention heatmap to take its weight apart."))
        self.header.setObjectName("inspectorHeader")
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.PlainText)  # token text ("<s>") is never markup
        font = self.header.font()
        font.setBold(True)
        self.header.setFont(font)
        layout.addWidget(self.header)
        splitter = self.splitter = QSplitter(Qt.Orientation.Horizontal)
        layout.addWidget(splitter, 1)

        self.steps = QTableWidget(len(self.STEP_KEYS), 3)
        self.steps.setObjectName("inspectorSteps")
        self.steps.setHorizontalHeaderLabels([self.tr("Step"), self.tr("How"), self.tr("Value")])
        self.steps.verticalHeader().hide()
        self.steps.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.steps.setWordWrap(False)
        header = self.steps.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        # the numbers (Value) whole first; the explanation (How) takes what is left (at 1366 × 768
        # a 240-pixel How column pushed the values out of sight)
        # (_share_width gives Value its numbers' width, How takes the rest)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
        header.setMinimumSectionSize(40)
        labels = {
            "dot": (self.tr("score q_i · k_j"), self.tr("Σ_c q_i[c] × k_j[c]")),
            "divisor": (self.tr("divide by"), ""),
            "scaled": (self.tr("scaled score"), self.tr("score ÷ divisor")),
            "mask": (self.tr("mask"), self.tr("hidden keys → −∞")),
            "row_max": (self.tr("row maximum"), self.tr("max over visible keys of row i")),
            "exp": (self.tr("exp"), self.tr("exp(scaled − row maximum)")),
            "normaliser": (self.tr("normaliser"), self.tr("Σ over row i of exp(scaled − row maximum)")),
            "weight": (self.tr("weight"), self.tr("exp ÷ normaliser")),
            "v_j": (self.tr("v_j"), self.tr("value of key j")),
            "weighted_v": (self.tr("weight × v_j"), self.tr("what key j adds to o_i")),
            "output": (self.tr("head output o_i"), self.tr("Σ_j weight_ij × v_j")),
            "share": (self.tr("share of v_j in o_i"), self.tr("(weight × v_j) · o_i ÷ ‖o_i‖²")),
        }
        for row, key in enumerate(self.STEP_KEYS):
            label, how = labels[key]
            self.steps.setItem(row, 0, QTableWidgetItem(label))
            self.steps.setItem(row, 1, QTableWidgetItem(how))
            self.steps.item(row, 1).setToolTip(how)  # elided in a narrow column: whole here
            self.steps.setItem(row, 2, QTableWidgetItem(""))
        self.steps.item(self.STEP_KEYS.index("share"), 0).setToolTip(self.tr(
            "How much of the output row o_i comes from v_j: the projection of weight × v_j on o_i.\n"
            "The shares of all keys sum to 100 %; a value pointing against the others has a negative share.\n"
            "The weight itself is v_j's share of the mixture (weights sum to 1)."))
        # rows as tall as their text and a padding (the style's 30 px a row left four steps in a 1024 × 600
        # bottom area of 185 px), and at least six steps readable before the panel scrolls (the rest by the
        # table's own scroll bar)
        _compact_rows(self.steps)
        self.steps.setMinimumHeight(self.steps.horizontalHeader().sizeHint().height()
                                    + READABLE_STEPS * self.steps.verticalHeader().defaultSectionSize()
                                    + 2 * self.steps.frameWidth())
        splitter.addWidget(self.steps)

        self.bars = pg.PlotWidget(background="w")
        self.bars.setObjectName("inspectorBars")
        self.bars.setMenuEnabled(False)
        self.bars.setLabel("bottom", self.tr("dimension c"))
        self.bars.setMinimumHeight(CHART_HEIGHT)
        self.bars.addItem(pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen("#888")))
        self.q_bars = pg.BarGraphItem(x=[], height=[], width=0.27, brush=Q_BRUSH, name="q_i")
        self.k_bars = pg.BarGraphItem(x=[], height=[], width=0.27, brush=K_BRUSH, name="k_j")
        self.product_bars = pg.BarGraphItem(x=[], height=[], width=0.27, brush=PRODUCT_BRUSH, name="q_i × k_j")
        for item in (self.q_bars, self.k_bars, self.product_bars):
            self.bars.addItem(item)
        chart = QWidget()
        chart_layout = QVBoxLayout(chart)
        chart_layout.setContentsMargins(0, 0, 0, 0)
        chart_layout.addWidget(legend_label(((Q_BRUSH.color().name(), "■", "q_i"), (K_BRUSH.color().name(), "■", "k_j"),
                                             (PRODUCT_BRUSH.color().name(), "■", "q_i × k_j")), "inspectorLegend"))
        chart_layout.addWidget(self.bars, 1)
        splitter.addWidget(chart)
        self.dimensions = QTableWidget(0, 4)
        self.dimensions.setObjectName("inspectorDimensions")
        self.dimensions.setHorizontalHeaderLabels([self.tr("c"), "q_i[c]", "k_j[c]", "q_i[c] × k_j[c]"])
        self.dimensions.verticalHeader().hide()
        self.dimensions.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        # each column its contents' width (equal widths cut "q_i[c] × k_j[c]" and the numbers at 1024 × 600)
        self.dimensions.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.dimensions.horizontalHeader().setMinimumSectionSize(30)
        _compact_rows(self.dimensions)
        self.dimensions.setMinimumHeight(110)
        splitter.addWidget(self.dimensions)
        splitter.setSizes([430, 290, 320])  # the per-dimension table's four columns whole, headers included
        self._chart_title, self._two_line_title = "", False
        self._user_sized = False  # a splitter dragged by the user keeps its widths (_share_width leaves it)
        splitter.splitterMoved.connect(lambda *_: setattr(self, "_user_sized", True))

        controller.cellChanged.connect(self._on_cell_changed)
        controller.modelChanged.connect(self._on_model_changed)  # another model: nothing of this one stays
        self.set_model_connected()
        self._lane = self.lane(LANE)
        self._lane.done.connect(self._on_inspected)
        self._lane.failed.connect(self._on_failed)
        self._request_inspection()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().resizeEvent(event)
        # a narrow dock stacks the three instead of squeezing them
        wide = event.size().width() >= NARROW_WIDTH
        orientation = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.splitter.orientation() != orientation:
            self.splitter.setOrientation(orientation)
        if wide and event.size().width() != event.oldSize().width():
            self._share_width()

    def _title_chart(self, two_lines: bool) -> int:
        """The chart's title on one line, or on two (its value under it) where the width is short; returns the
        chart's minimum width, which the title sets (side by side the splitter would squeeze the chart below
        its title, drawn past the edge)."""
        self._two_line_title = two_lines
        title = self._chart_title
        if two_lines and " = " in title:
            head, _, value = title.rpartition(" = ")
            title = f"{html.escape(head)}<br>= {html.escape(value)}"
        else:
            title = html.escape(title)
        # 8 pt: at the default size the title was wider than the right column at 1024 × 600 and was drawn
        # past the chart's edge (a title sets its plot's minimum width)
        self.bars.setTitle(title, color="#111", size="8pt")
        need = math.ceil(self.bars.plotItem.effectiveSizeHint(Qt.SizeHint.MinimumSize).width())
        self.bars.setMinimumWidth(need)
        return need

    def _table_need(self, table: QTableWidget, columns) -> int:
        """Width ``table`` needs to show ``columns`` (their contents' widths given) whole, with its frame
        and vertical scroll bar."""
        bar = table.style().pixelMetric(table.style().PixelMetric.PM_ScrollBarExtent)
        return sum(columns) + 2 * table.frameWidth() + bar + 2

    def _share_width(self) -> None:
        """The splitter's widths from what each part needs: the steps' names and values whole (at 1024 × 600
        the values were cut under the chart), the per-dimension table's headers whole, the chart the rest
        (at least its title); what is missing is taken from the steps' How column (elided, whole in its
        tooltip) down to HOW_LEAST."""
        if self._user_sized:
            return
        width = self.splitter.width() - 2 * self.splitter.handleWidth()
        metrics = self.steps.fontMetrics()
        step = max(self.steps.sizeHintForColumn(0), self.steps.columnWidth(0))  # its header's width too
        # the numbers' width; the vectors (v_j, weight × v_j, o_i) are elided, whole in their tooltips
        value = max([metrics.horizontalAdvance(self.steps.item(row, 2).text()) + 14 for row, key in
                     enumerate(self.STEP_KEYS) if key not in VECTOR_STEPS]
                    + [metrics.horizontalAdvance("−0.000000") + 14])
        header = self.dimensions.horizontalHeader()
        dims = self._table_need(self.dimensions, [header.sectionSize(i) for i in range(self.dimensions.columnCount())])
        least_steps = self._table_need(self.steps, (step, HOW_LEAST, value))
        legend = self.bars.parentWidget().layout().itemAt(0).widget().minimumSizeHint().width()
        chart = max(self._title_chart(False) if self._chart_title else 160, legend)
        if self._chart_title and least_steps + chart + dims > width:
            chart = max(self._title_chart(True), legend)  # the title on two lines: the chart narrower, the tables whole
        vectors = self.steps.sizeHintForColumn(2)  # the vectors whole too, where the width allows
        if self._table_need(self.steps, (step, HOW_WIDTH, vectors)) + chart + dims <= width:
            value = max(value, vectors)
        how = max(HOW_LEAST, min(HOW_WIDTH, width - chart - dims - self._table_need(self.steps, (step, value))))
        steps = self._table_need(self.steps, (step, how, value))
        self.steps.setColumnWidth(2, value)  # How stretches over what the splitter gives the table
        self.splitter.setSizes([steps, max(chart, width - steps - dims), dims])

    # ----------------------------------------------------------------- public
    def value_text(self, step: str) -> str:
        """The text of the Value column of a step (see STEP_KEYS)."""
        return self.steps.item(self.STEP_KEYS.index(step), 2).text()

    # ----------------------------------------------------------------- requests
    def _on_cell_changed(self, query: int, key: int) -> None:
        self._request_inspection()

    def on_snapshot_changed(self, snapshot) -> None:
        self._request_inspection()

    def show_selection(self) -> None:
        self._request_inspection()  # only asks again when the head (or the snapshot) changed

    def _request_inspection(self) -> None:
        snapshot = self.controller.snapshot
        if snapshot is None:
            return
        result = snapshot.result
        query, key = self.controller.cell
        request = (result, min(self.controller.head, result.weights.shape[0] - 1),
                   min(query, result.n - 1), min(key, result.n - 1))
        if self._request is not None and all(a is b or a == b for a, b in zip(request, self._request)):
            return
        self._request = request
        self._lane.submit(inspect_cell, *request)

    def _on_model_changed(self, model: str) -> None:
        shown = self._request[0] if self._request is not None else None
        if shown is not None and self.controller.snapshot is not None and self.controller.snapshot.model == model \
                and self.controller.snapshot.result is shown:
            return  # the same model (a layer change also lands here and recomputes)
        self.clear()

    def clear(self) -> None:
        """The empty state: no number, vector or label of an earlier result stays (its next request repaints)."""
        self._lane.cancel()
        self.inspection, self.inspected_result, self._request = None, None, None
        self.header.setText(self.tr("Click a cell of the attention heatmap to take its weight apart."))
        for row in range(self.steps.rowCount()):
            self.steps.item(row, 2).setText("")
            self.steps.item(row, 2).setToolTip("")
        for item in (self.q_bars, self.k_bars, self.product_bars):
            item.setOpts(x=[], height=[], width=0.27)
        self.bars.setTitle("")
        self._chart_title = ""
        self.dimensions.setRowCount(0)

    def _on_inspected(self, value) -> None:
        self.inspected_result = self._request[0]
        self.show_inspection(value)

    def _on_failed(self, error) -> None:
        self.clear()
        self.header.setText(fill(self.tr("Cannot inspect this cell: %1"), error_text(error)))

    # ----------------------------------------------------------------- display
    def show_inspection(self, inspection: CellInspection) -> None:
        self.inspection = inspection
        c = inspection
        self.header.setText(fill(self.tr("Head %1 · query #%2 “%3” → key #%4 “%5” · d_k = %6"),
                                 c.head, c.query, c.query_text, c.key, c.key_text, c.d_k))
        if c.query_scale:  # the model's own scale (Gemma): the number the engine divided by
            divisor_how = fill(self.tr("√query_pre_attn_scalar = √%1 (this model’s query scale, not √d_k = √%2)"),
                               f"{c.query_scale:g}", c.d_k)
        elif c.scale and c.temperature != 1:
            divisor_how = fill(self.tr("√d_k × temperature = √%1 × %2"), c.d_k, number(c.temperature))
        elif c.scale:
            divisor_how = fill(self.tr("√d_k = √%1"), c.d_k)
        elif c.temperature != 1:
            divisor_how = fill(self.tr("temperature %1 (÷ √d_k is off)"), number(c.temperature))
        else:
            divisor_how = self.tr("1 (scaling is off)")
        mask_text = (self.tr("masked (future key) → −∞") if c.masked
                     else self.tr("visible"))
        share = "—" if math.isnan(c.share) else f"{100 * c.share:.4g} %"
        values = {
            "dot": (number(c.dot), fill(self.tr("the engine's score: %1"), number(c.engine_score))),
            "divisor": (number(c.divisor), ""),
            "scaled": (number(c.scaled), fill(self.tr("the engine's scaled score: %1"), number(c.engine_scaled))),
            "mask": (mask_text, ""),
            "row_max": (number(c.row_max), ""),
            "exp": (number(c.exp_term), ""),
            "normaliser": (number(c.normaliser), ""),
            "weight": (number(c.weight), fill(self.tr("the engine's weight: %1"), number(c.engine_weight))),
            "v_j": (vector_text(c.v_j), vector_text(c.v_j, len(c.v_j))),
            "weighted_v": (vector_text(c.weighted_v), vector_text(c.weighted_v, len(c.weighted_v))),
            "output": (vector_text(c.output), vector_text(c.output, len(c.output))),
            "share": (share, fill(self.tr("and the weight, %1, is its share of the mixture"), number(c.weight))),
        }
        for row, key in enumerate(self.STEP_KEYS):
            text, tip = values[key]
            item = self.steps.item(row, 2)
            item.setText(text)
            item.setToolTip(tip)
            masked_row = key in ("mask", "scaled", "exp", "weight") and c.masked
            item.setForeground(MASKED_COLOUR if masked_row else self.palette().text().color())
        self.steps.item(self.STEP_KEYS.index("divisor"), 1).setText(divisor_how)
        self.steps.item(self.STEP_KEYS.index("divisor"), 1).setToolTip(divisor_how)
        scaled_how = (fill(self.tr("%1 · tanh(score ÷ divisor ÷ %1): this model caps its scores"), f"{c.softcap:g}")
                      if c.softcap else self.tr("score ÷ divisor"))
        self.steps.item(self.STEP_KEYS.index("scaled"), 1).setText(scaled_how)
        self.steps.item(self.STEP_KEYS.index("scaled"), 1).setToolTip(scaled_how)
        self._show_dimensions(c)
        if self.splitter.orientation() == Qt.Orientation.Horizontal:
            self._share_width()  # the values' width changed

    def _show_dimensions(self, c: CellInspection) -> None:
        dims = np.arange(c.d_k)
        self.q_bars.setOpts(x=dims - 0.28, height=c.q_i, width=0.27)
        self.k_bars.setOpts(x=dims, height=c.k_j, width=0.27)
        self.product_bars.setOpts(x=dims + 0.28, height=c.products, width=0.27)
        # 8 pt: at the default size the title was wider than the right column at 1024 × 600 and was drawn
        # past the chart's edge (a title sets its plot's minimum width)
        self._chart_title = fill(self.tr("q_i · k_j = Σ of the green bars = %1"), number(c.dot))
        self._title_chart(self._two_line_title)
        ticks = [(int(i), str(i)) for i in dims[:: max(1, c.d_k // 16)]]
        self.bars.getAxis("bottom").setTicks([ticks])
        table = self.dimensions
        table.setRowCount(c.d_k + 1)
        for index in range(c.d_k):
            for column, value in enumerate((str(index), f"{c.q_i[index]:.4g}", f"{c.k_j[index]:.4g}",
                                            f"{c.products[index]:.4g}")):
                table.setItem(index, column, QTableWidgetItem(value))
        total = (self.tr("Σ"), "", "", number(c.dot))
        for column, value in enumerate(total):
            item = QTableWidgetItem(value)
            font = item.font()
            font.setBold(True)
            item.setFont(font)
            table.setItem(c.d_k, column, item)
