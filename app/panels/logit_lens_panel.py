"""Logit lens: what a decoder would predict if it stopped after each layer.

For the focused position, every layer's residual stream is read out through the final RMSNorm
and the output head (engine.models.llama.logit_lens): a table of the top predictions layer by layer
(row 0: the embeddings; the last row: the model's output) and a curve of the probability of the
model's final answer at each layer. Computed in the worker; an answer made for another trace or
position is never shown.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHeaderView, QLabel, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget
from PySide6.QtCore import Qt

from ..controller import Controller
from ..i18n import error_text
from ..text import fill
from .base import Panel
from .next_token_panel import visible_text

LENS_LANE = "decoder-lens"
TOP = 3  # predictions per layer in the table


class LogitLensPanel(Panel):
    """Top predictions of every layer for the focused position, and P(final answer) per layer."""

    # every kind (the default): for the toy engine and MiniLM it shows an empty state saying a decoder is needed

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("logitLensPanel")
        self.controller = controller
        self.value: dict | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.note = QLabel()
        self.note.setObjectName("logitLensNote")
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        self.table = QTableWidget(0, TOP + 2)
        self.table.setObjectName("logitLensTable")
        self.table.setHorizontalHeaderLabels([self.tr("layer")] + [fill(self.tr("top %1"), i + 1) for i in range(TOP)]
                                             + [self.tr("P(final answer)")])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        splitter.addWidget(self.table)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("logitLensCurve")
        self.plot.setLabel("bottom", self.tr("read out after layer (0 = embeddings)"))
        self.plot.setLabel("left", self.tr("probability of the final answer"))
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.plot.setYRange(0, 1, padding=0.02)
        for name in ("left", "bottom"):
            self.plot.getAxis(name).enableAutoSIPrefix(False)
        self.curve = self.plot.plot(pen=pg.mkPen("#f58518", width=3), symbol="o", symbolSize=5, symbolBrush="#f58518")
        splitter.addWidget(self.plot)
        splitter.setSizes([3, 2])
        layout.addWidget(splitter, 1)
        self._lane = self.lane(LENS_LANE)
        self._lane.done.connect(self._on_lens)
        self._lane.failed.connect(lambda error: self.note.setText(error_text(error)))
        self.set_model_connected()
        self._show_empty()

    def trace(self):
        snapshot = self.controller.snapshot
        if snapshot is None or snapshot.bert is None or snapshot.bert.next_token_logits is None:
            return None
        return snapshot.bert.trace

    def show_snapshot(self, snapshot) -> None:
        if self.trace() is None:
            self._show_empty()
            return
        self._submit()

    def show_selection(self) -> None:
        trace = self.trace()
        if trace is not None and (self.value is None or self.value["trace"] is not trace
                                  or self.value["position"] != self.controller.focus):
            self._submit()

    def _submit(self) -> None:
        from ..jobs.decoder_view import logit_lens

        trace = self.trace()
        self._lane.submit(logit_lens, self.controller.snapshot.model, trace, min(self.controller.focus, trace.n - 1), TOP)

    def _show_empty(self) -> None:
        self.value = None
        self.table.setRowCount(0)
        self.curve.setData([], [])
        self.note.setText(self.tr("The logit lens needs a decoder: choose SmolLM2 in the Model toolbar, or File → "
                                  "Open model… for a GGUF file."))

    def _on_lens(self, value: dict) -> None:
        trace = self.trace()
        if trace is None or value["trace"] is not trace or value["position"] != self.controller.focus:
            return  # made for another text or position
        self.value = value
        lens = value["lens"]
        rows = lens.top_ids.shape[0]
        self.table.setRowCount(rows)
        final = lens.final_id
        for row in range(rows):
            name = self.tr("embeddings") if row == 0 else (self.tr("output") if row == rows - 1 else str(row))
            self.table.setItem(row, 0, QTableWidgetItem(name))
            for j in range(TOP):
                item = QTableWidgetItem(f"{visible_text(value['texts'][row][j])}  {lens.top_probabilities[row, j]:.1%}")
                if int(lens.top_ids[row, j]) == final:
                    item.setBackground(QColor("#fde2c4"))
                self.table.setItem(row, j + 1, item)
            self.table.setItem(row, TOP + 1, QTableWidgetItem(f"{lens.final_probability[row]:.3f}"))
        self.table.resizeRowsToContents()
        self.table.scrollToBottom()  # the last layers, where the answer forms, in view
        probability = np.asarray(lens.final_probability, dtype=float)
        self.curve.setData(np.arange(rows), probability)
        first = int(np.argmax(lens.top_ids[:, 0] == final)) if np.any(lens.top_ids[:, 0] == final) else rows - 1
        self.note.setText(fill(self.tr(
            "Position #%1 “%2”: each layer's residual read out through the final norm and output head. The final "
            "answer “%3” (%4) is first the top prediction after layer %5."),
            lens.position, visible_text(trace.tokens[lens.position].text), visible_text(value["final_text"]),
            f"{probability[-1]:.1%}", first))
