"""Vector diffs: how attention changed each token's vector.

Top: the focused token's vector before attention (x) and after (output) as paired bars per
dimension, the difference, both norms and the cosine similarity. Bottom: x, output and
output − x as token × dimension heatmaps sharing one symmetric colour scale.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from ..controller import Controller
from ..heatmap import DIVERGING_MAP, HeatmapView, LightPlot
from ..legend import legend_label
from ..text import escape, fill
from .base import Panel

BEFORE_BRUSH = pg.mkBrush("#4c78a8")
AFTER_BRUSH = pg.mkBrush("#f58518")
DIFF_PEN = pg.mkPen("#2ca02c", width=2)


class DiffsPanel(Panel):
    """Bars for the focused token, heatmaps for all tokens."""

    def show_snapshot(self, snapshot) -> None:
        self.refresh()

    def show_selection(self) -> None:
        self.refresh(full=False)

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("diffsPanel")
        self.controller = controller
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        outer.addWidget(splitter)
        focused = QWidget()
        layout = QVBoxLayout(focused)
        layout.setContentsMargins(0, 0, 0, 0)
        splitter.addWidget(focused)
        self.summary = QLabel()
        self.summary.setObjectName("diffSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)  # bold token name, escaped
        layout.addWidget(self.summary)
        self.bars = pg.GraphicsLayoutWidget()  # a LightPlot: a PlotWidget's PlotItem was ~65 ms of the start-up
        self.bars.setObjectName("diffBars")
        self.bars.setBackground("w")
        self.bars.ci.setContentsMargins(0, 0, 0, 0)  # as a PlotWidget's: the chart is short
        self.bar_plot = LightPlot()
        self.bars.addItem(self.bar_plot)
        self.bar_plot.setLabel("bottom", self.tr("dimension"))
        self.bars.setMinimumHeight(96)  # the bottom area at 1024 × 600 shows the bars whole
        self.before_bars = pg.BarGraphItem(x=[], height=[], width=0.4, brush=BEFORE_BRUSH, name=self.tr("x (before)"))
        self.after_bars = pg.BarGraphItem(x=[], height=[], width=0.4, brush=AFTER_BRUSH, name=self.tr("output (after)"))
        self.diff_curve = pg.PlotDataItem(pen=DIFF_PEN, name=self.tr("output − x"))
        for item in (self.before_bars, self.after_bars, self.diff_curve):
            self.bar_plot.addItem(item)
        layout.addWidget(legend_label(((BEFORE_BRUSH.color().name(), "■", self.tr("x (before)")),
                                       (AFTER_BRUSH.color().name(), "■", self.tr("output (after)")),
                                       (DIFF_PEN.color().name(), "━", self.tr("output − x"))), "diffLegend"))
        layout.addWidget(self.bars, 1)
        everything = QWidget()
        row = QHBoxLayout(everything)
        row.setContentsMargins(0, 0, 0, 0)
        splitter.addWidget(everything)
        splitter.setSizes([500, 700])
        self.maps = {}
        for name, title in (("x", self.tr("x (before)")), ("output", self.tr("output (after)")), ("diff", self.tr("output − x"))):
            view = HeatmapView(title=title, colorbar=name == "diff")
            view.setObjectName(f"{name}Heatmap")
            view.set_axis_titles(self.tr("token"), self.tr("dimension"))
            row.addWidget(view)
            self.maps[name] = view
        self.set_model_connected()

    def refresh(self, full: bool = True) -> None:
        snapshot = self.controller.snapshot
        if snapshot is None:
            return
        result, focus = snapshot.result, self.controller.focus
        before, after = result.x[focus], result.output[focus]  # (d,)
        dims = np.arange(before.shape[0])
        self.before_bars.setOpts(x=dims - 0.2, height=before, width=0.4)
        self.after_bars.setOpts(x=dims + 0.2, height=after, width=0.4)
        self.diff_curve.setData(dims, result.diff[focus])
        self.summary.setText(fill(
            self.tr("<b>%1</b> (#%2): ‖x‖ = %3 · ‖output‖ = %4 · ‖output − x‖ = %5 · cosine(x, output) = %6"),
            escape(result.tokens[focus].text), focus, f"{result.norm_before[focus]:.4f}", f"{result.norm_after[focus]:.4f}",
            f"{float(np.linalg.norm(result.diff[focus])):.4f}", f"{result.cosine[focus]:.4f}",
        ))
        if full:
            for name in self.maps:
                self._show_map(snapshot, name)
        for view in self.maps.values():
            view.set_highlight_row(focus)

    def on_snapshot_changed(self, snapshot) -> None:
        """Bars now; each token × dimension map in an event-loop turn of its own (long inputs)."""
        self.refresh(full=False)
        for name in self.maps:
            self.controller.deferred(self._show_map)(snapshot, name)

    def _show_map(self, snapshot, name: str) -> None:
        result = snapshot.result
        bound = snapshot.vector_bound
        view = self.maps[name]
        view.set_matrix(getattr(result, name), result.token_texts, None, levels=(-bound, bound),
                        colormap=DIVERGING_MAP, show_values=False, display=snapshot.display_of(name))
        view.set_highlight_row(self.controller.focus)
