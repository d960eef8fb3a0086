"""What attention actually moves: three docks over the snapshot's analysis, on every model.

- :class:`RolloutPanel`: attention rollout (Abnar & Zuidema, 2020) — which input tokens each
  position's vector comes from after a chosen layer; bars for the focused token and the whole
  matrix; raw or value-weighted (Kobayashi et al., 2020).
- :class:`AblationPanel`: heads switched off (Michel et al., 2019): each token's final-vector
  cosine with and without, and "Most important heads", ranked in a worker lane with progress
  and Cancel (Esc), shown as a layers × heads grid of effects (click a cell: switch that head
  off or on) and a top-10 list.
- :class:`DashboardPanel`: per head mean entropy, sink, previous-token and self shares
  (engine.analysis.head_stats) as a sortable table and a scatter of two measures, linked to the head
  selection both ways; the patterns that really appear named in a caption.

Everything drawn comes from the controller's snapshot (computed in the worker); the GUI thread
only sets data.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import (
    QT_TRANSLATE_NOOP, QAbstractTableModel, QCoreApplication, QModelIndex, QSignalBlocker, Qt,
)
from PySide6.QtWidgets import (
    QComboBox, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QProgressBar,
    QPushButton, QSpinBox, QVBoxLayout, QWidget,
)

from engine.analysis.head_stats import MEASURES, name_heads
from engine.models import model_info

from ..controller import Controller
from ..heatmap import WEIGHTS_MAP, HeatmapView
from ..i18n import error_text
from ..text import escape, fill
from .base import Panel
from .sorted_table import sorted_table

BAR_BRUSH = pg.mkBrush("#1a73e8")
LOW_BRUSH = pg.mkBrush("#d93025")
SELECTED_BRUSH = pg.mkBrush("#ff2d55")
POINT_BRUSH = pg.mkBrush(26, 115, 232, 160)
TOP_HEADS = 10
RANK_LANE = "rank-heads"


def _computing() -> str:
    """What a view of the Analysis arrays says while the worker computes them (a decoder's come after its snapshot)."""
    return QCoreApplication.translate("AnalysisPanel", "Computing the analysis of this result…")


def _bar_plot(title: str) -> tuple[pg.PlotWidget, pg.BarGraphItem]:
    plot = pg.PlotWidget(background="w")
    plot.setMenuEnabled(False)
    plot.setMouseEnabled(x=False, y=False)
    plot.setTitle(title, color="#333", size="9pt")
    # a title line, the token names and a plot of ~50 px: the Analysis group whole in the bottom area at
    # 1024 × 600 (at 120 the rollout needed 193 px of the 185 there)
    plot.setMinimumHeight(100)
    bars = pg.BarGraphItem(x=[], height=[], width=0.8, brush=BAR_BRUSH)
    plot.addItem(bars)
    return plot, bars


def _token_ticks(plot: pg.PlotWidget, labels: list[str]) -> None:
    """Token names under the bars, every step-th one so that none overlap (≈ 56 px a label)."""
    width = max(plot.width() - 60, 100)
    step = max(1, -(-len(labels) * 56 // width))
    plot.getAxis("bottom").setTicks([[(i, labels[i][:8]) for i in range(0, len(labels), step)]])


def _head_name(layer: int, head: int) -> str:
    return f"L{layer}H{head}"


# ====================================================================== rollout
class RolloutPanel(Panel):
    """Attention rollout after a chosen layer: bars for the focused token, and the matrix."""

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rolloutPanel")
        self.controller = controller
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        bar = QHBoxLayout()
        bar.addWidget(QLabel(self.tr("Rollout of")))
        self.kind = QComboBox()
        self.kind.setObjectName("rolloutKind")
        self.kind.addItem(self.tr("attention weights"), "rollout")
        self.kind.addItem(self.tr("value-weighted attention"), "value_rollout")
        self.kind.addItem(self.tr("attention flow (maximum flow), beside rollout"), "flow")
        self.kind.addItem(self.tr("value zeroing (what zeroing a token's values changes), beside rollout"),
                          "value_zeroing")
        self.kind.setToolTip(self.tr("Raw: each layer's heads' mean weights. Value-weighted: each head counted by "
                                     "how much it moves (‖α·f(x)‖), not by how it spreads its weights"))
        bar.addWidget(self.kind)
        bar.addWidget(QLabel(self.tr("after layer")))
        self.layer = QSpinBox()
        self.layer.setObjectName("rolloutLayer")
        self.layer.setToolTip(self.tr("Rollout through layers 0 … this one (the last: the final vectors)"))
        bar.addWidget(self.layer)
        bar.addStretch(1)
        layout.addLayout(bar)
        self.caption = QLabel()
        self.caption.setObjectName("rolloutCaption")
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.PlainText)  # holds token text
        layout.addWidget(self.caption)
        row = QHBoxLayout()
        self.plot, self.bars = _bar_plot("")
        self.plot.setObjectName("rolloutBars")
        row.addWidget(self.plot, 1)
        self.heatmap = HeatmapView()
        self.heatmap.setObjectName("rolloutHeatmap")
        self.heatmap.set_axis_titles(self.tr("position (after the layer)"), self.tr("input token"))
        self.heatmap.cellClicked.connect(lambda row_, _column: controller.select(focus=row_))
        row.addWidget(self.heatmap, 1)
        layout.addLayout(row, 1)
        self._last_layers = -1
        self._flow_key, self._flow = None, None  # the snapshot the flow was computed for, and the flow (n, n)
        # the whole matrix (n² maximum flows: seconds) on the second thread, with progress; the focused
        # token's row (n of them) on the first, on each change of focus, so it never waits for the matrix
        self._flow_lane = self.lane("flow", long=True)
        self._flow_lane.done.connect(self._on_flow)
        self._flow_lane.failed.connect(lambda error: self.caption.setText(error_text(error)))
        self._flow_lane.progressed.connect(self._on_flow_progress)
        self._focused_key, self._focused = None, None  # (snapshot id, focus) and its row (n,)
        self._focused_lane = self.lane("focused-flow")
        self._focused_lane.done.connect(self._on_focused_flow)
        self._focused_lane.failed.connect(lambda error: self.caption.setText(error_text(error)))
        self._zeroing_key, self._zeroing = None, None  # (model, text, ablate) and its ValueZeroing
        self._zeroing_lane = self.lane("value-zeroing", long=True)  # layers · n runs of a layer: seconds
        self._zeroing_lane.done.connect(self._on_value_zeroing)
        self._zeroing_lane.failed.connect(lambda error: self.caption.setText(error_text(error)))
        self._zeroing_lane.progressed.connect(self._on_flow_progress)
        self.flow_progress = QProgressBar()
        self.flow_progress.setObjectName("flowProgress")
        self.flow_progress.setFormat(self.tr("whole matrix %p%"))
        self.flow_progress.setMaximumWidth(160)
        self.flow_progress.hide()
        bar.insertWidget(bar.count() - 1, self.flow_progress)
        self.kind.currentIndexChanged.connect(lambda _: self.refresh())
        self.layer.valueChanged.connect(lambda _: self.refresh())
        self.set_model_connected()

    def show_snapshot(self, snapshot) -> None:
        self.refresh()

    def show_selection(self) -> None:
        self.refresh()

    def flow(self) -> np.ndarray | None:
        """(n, n) attention flow of the current snapshot (tests), or None while not computed."""
        snapshot = self.controller.snapshot
        return self._flow if snapshot is not None and self._flow_key == id(snapshot) else None

    def _on_flow(self, value) -> None:
        key, flow = value
        self._flow_key, self._flow = key, flow
        self.flow_progress.hide()
        self.refresh()

    def _on_flow_progress(self, done: int, total: int) -> None:
        self.flow_progress.setRange(0, max(total, 1))
        self.flow_progress.setValue(done)

    def focused_flow(self) -> np.ndarray | None:
        """(n,) flow to the focused token of the current snapshot (tests): the matrix's row once the
        matrix is there, else the row computed alone, else None."""
        snapshot = self.controller.snapshot
        if snapshot is None:
            return None
        focus = min(self.controller.focus, len(snapshot.result.token_texts) - 1)
        flow = self.flow()
        if flow is not None:
            return flow[focus]
        return self._focused if self._focused_key == (id(snapshot), focus) else None

    def _on_focused_flow(self, value) -> None:
        key, row = value
        self._focused_key, self._focused = key, row
        self.refresh()

    @staticmethod
    def _zeroing_key_of(snapshot) -> tuple:
        return snapshot.model, snapshot.result.config.text, snapshot.ablate

    def value_zeroing(self):
        """The ValueZeroing of the current snapshot's text and heads (tests), or None while not computed."""
        snapshot = self.controller.snapshot
        if snapshot is None or self._zeroing_key != self._zeroing_key_of(snapshot):
            return None
        return self._zeroing

    def _on_value_zeroing(self, value) -> None:
        key, zeroing = value
        if zeroing is not None:  # None: stopped by a newer request
            self._zeroing_key, self._zeroing = key, zeroing
        self.flow_progress.hide()
        self.refresh()

    def _refresh_value_zeroing(self, snapshot) -> None:
        """Value zeroing's rollout after the chosen layer (Mohebbi et al. 2023), bars beside the rollout's."""
        from engine.analysis.request import RunRequest
        from engine.analysis.value_zeroing import VALUE_ZEROING_TOKENS

        from ..jobs.evidence import value_zeroing_task

        labels = snapshot.result.token_texts
        n = len(labels)
        if n > VALUE_ZEROING_TOKENS:
            return self._show_nothing(fill(self.tr("Too many tokens for value zeroing (at most %1; this text has %2): "
                                                   "each token's values are zeroed in each layer in turn."),
                                           VALUE_ZEROING_TOKENS, n))
        zeroing = self.value_zeroing()
        if zeroing is None:
            key = self._zeroing_key_of(snapshot)
            if self._zeroing_key != ("pending", key):
                self._zeroing_key = ("pending", key)
                self.flow_progress.setRange(0, 0)
                self.flow_progress.setFormat(self.tr("value zeroing %p%"))
                request = RunRequest(text=key[1], ablate=snapshot.ablate, value_zeroing=True)
                self._zeroing_lane.start(lambda state: (key, value_zeroing_task(state, key[0], snapshot.result.config,
                                                                               request)))
            self.flow_progress.show()
            return self._show_nothing(self.tr("Computing value zeroing (each token's values zeroed in each layer, the "
                                              "layer run again)…"))
        self.flow_progress.hide()
        self.layer.setEnabled(True)
        layers = zeroing.rollout.shape[0]
        if layers != self._last_layers:
            with QSignalBlocker(self.layer):
                self.layer.setRange(0, layers - 1)
                self.layer.setValue(layers - 1)
            self._last_layers = layers
        layer = min(self.layer.value(), layers - 1)
        matrix = zeroing.rollout[layer]  # (n, n)
        focus = min(self.controller.focus, n - 1)
        analysis = snapshot.analysis
        rollout = None if analysis is None or analysis.rollout is None else analysis.rollout[layer]
        x = np.arange(n)
        self.bars.setOpts(x=x - 0.2, height=matrix[focus], width=0.4, brush=BAR_BRUSH)
        if not hasattr(self, "rollout_bars"):
            self.rollout_bars = pg.BarGraphItem(x=[], height=[], width=0.4, brush=pg.mkBrush("#9aa0a6"))
            self.plot.addItem(self.rollout_bars)
        if rollout is not None:
            self.rollout_bars.setOpts(x=x + 0.2, height=rollout[focus], width=0.4, brush=pg.mkBrush("#9aa0a6"))
        _token_ticks(self.plot, labels)
        self.plot.setYRange(0, max(float(matrix[focus].max()), 1e-6) * 1.05, padding=0)
        self.plot.setTitle(fill(self.tr("“%1”: value zeroing (blue) beside rollout (grey)"), labels[focus]),
                           color="#333", size="9pt")
        self.heatmap.set_matrix(matrix, labels, labels, levels=(0.0, max(float(matrix.max()), 1e-6)),
                                colormap=WEIGHTS_MAP)
        self.heatmap.set_highlight_row(focus)
        top = int(np.argmax(matrix[focus]))
        self.caption.setText(fill(self.tr("Value zeroing rolled up through layers 0 … %1 (Mohebbi et al. 2023): in "
                                          "each layer, how much “%2”'s output turns (1 − cos) when one token's value "
                                          "vectors are zeroed, rows made to sum to 1, then multiplied through the "
                                          "layers. Largest: “%3” %4 (rollout %5). It measures what reached the "
                                          "output, not where attention looked; it says nothing about the answer."),
                                  layer, labels[focus], labels[top], f"{matrix[focus, top]:.2f}",
                                  "–" if rollout is None else f"{rollout[focus, top]:.2f}"))

    def _refresh_flow(self, snapshot) -> None:
        """Flow after the last layer beside the rollout: bars of both for the focused token."""
        from engine.analysis.flow import FLOW_TOKENS

        from ..jobs.evidence import flow_task

        trace = snapshot.bert
        attentions = trace.attentions if trace is not None else snapshot.result.weights[None]
        n = attentions.shape[-1]
        self.layer.setEnabled(False)
        if n > FLOW_TOKENS:
            return self._show_nothing(fill(self.tr("Too many tokens for the attention flow (at most %1): one maximum "
                                                   "flow per pair of tokens."), FLOW_TOKENS))
        flow = self.flow()
        labels = snapshot.result.token_texts
        focus = min(self.controller.focus, len(labels) - 1)
        if flow is None:
            from ..jobs.evidence import focused_flow_of

            if self._flow_key != ("pending", id(snapshot)):
                self._flow_key = ("pending", id(snapshot))
                self.flow_progress.setRange(0, 0)  # busy until the first batch reports
                self.flow_progress.setFormat(self.tr("whole matrix %p%"))
                self._flow_lane.start(flow_task, attentions, id(snapshot), snapshot.ablate)  # a newer one stops it
            self.flow_progress.show()
            if self.focused_flow() is None:
                if self._focused_key != ("pending", id(snapshot), focus):
                    self._focused_key = ("pending", id(snapshot), focus)
                    self._focused_lane.submit(focused_flow_of, attentions, (id(snapshot), focus), focus,
                                              snapshot.ablate)
                # the rollout's picture is not left under the flow's caption while the flow is computed
                return self._show_nothing(fill(self.tr("Computing the attention flow to “%1” (one maximum flow from "
                                                       "each input token)…"), labels[focus]))
        analysis = snapshot.analysis
        if analysis is None or analysis.rollout is None:
            reason = None if analysis is None else analysis.reason("rollout")
            return self._show_nothing(self._no_rollout() if reason is None else error_text(reason))
        rollout = analysis.rollout[-1]
        row = self.focused_flow()  # (n,) the matrix's row, or the focused token's own
        x = np.arange(n)
        self.bars.setOpts(x=x - 0.2, height=row, width=0.4, brush=BAR_BRUSH)
        if not hasattr(self, "rollout_bars"):
            self.rollout_bars = pg.BarGraphItem(x=[], height=[], width=0.4, brush=pg.mkBrush("#9aa0a6"))
            self.plot.addItem(self.rollout_bars)
        self.rollout_bars.setOpts(x=x + 0.2, height=rollout[focus], width=0.4, brush=pg.mkBrush("#9aa0a6"))
        _token_ticks(self.plot, labels)
        self.plot.setYRange(0, max(float(row.max()), 1e-6) * 1.05, padding=0)
        self.plot.setTitle(fill(self.tr("“%1”: flow (blue) beside rollout (grey)"), labels[focus]), color="#333",
                           size="9pt")
        if flow is not None:
            self.heatmap.set_matrix(flow, labels, labels, levels=(0.0, max(float(flow.max()), 1e-6)),
                                    colormap=WEIGHTS_MAP)
            self.heatmap.set_highlight_row(focus)
        else:  # the focused row is drawn; the matrix arrives from the background with its progress
            self.heatmap.clear_matrix()
        top = int(np.argmax(row))
        self.caption.setText(fill(self.tr("Attention flow after the last layer: how much can get from each input token "
                                          "to “%1” when every edge of the rollout graph is a pipe of that capacity "
                                          "(Abnar & Zuidema 2020). Largest: “%2” %3 (rollout %4). Flow counts a path "
                                          "by its narrowest edge; rollout multiplies every path."),
                                  labels[focus], labels[top], f"{row[top]:.2f}", f"{rollout[focus, top]:.2f}")
                             + (" " + fill(self.tr("%1 switched-off heads count as zero weights in their layer's mean "
                                                   "(their patterns are still computed, but they move nothing): their "
                                                   "share stays with the residual, in flow and rollout alike."),
                                           len(snapshot.ablate)) if snapshot.ablate else ""))

    def matrix(self) -> np.ndarray | None:
        """(n, n) rollout shown (tests), or None."""
        snapshot = self.controller.snapshot
        if snapshot is not None and self.kind.currentData() == "flow":
            return self.flow()
        if snapshot is not None and self.kind.currentData() == "value_zeroing":
            zeroing = self.value_zeroing()
            return None if zeroing is None else zeroing.rollout[min(self.layer.value(), zeroing.rollout.shape[0] - 1)]
        if snapshot is None or snapshot.analysis is None:
            return None
        rollouts = getattr(snapshot.analysis, self.kind.currentData())
        if rollouts is None:
            return None
        return rollouts[min(self.layer.value(), rollouts.shape[0] - 1)]

    def _no_rollout(self) -> str:
        return _computing() if self.controller.analysis_pending() else self.tr("No rollout for this result.")

    def _show_nothing(self, text: str) -> None:
        """No picture for this snapshot: ``text`` says why (never the previous model's picture)."""
        self.caption.setText(text)
        self.heatmap.clear_matrix()
        self.bars.setOpts(x=[], height=[])
        self.plot.getAxis("bottom").setTicks([[]])
        self.plot.setTitle("", color="#333", size="9pt")

    def refresh(self) -> None:
        snapshot = self.controller.snapshot
        if hasattr(self, "rollout_bars"):
            self.rollout_bars.setOpts(x=[], height=[])
        if snapshot is None:
            return self._show_nothing("")
        if self.kind.currentData() == "flow":
            return self._refresh_flow(snapshot)
        if self.kind.currentData() == "value_zeroing":
            return self._refresh_value_zeroing(snapshot)
        self.flow_progress.hide()
        self.layer.setEnabled(True)
        name = self.kind.currentData()
        analysis = snapshot.analysis
        rollouts = None if analysis is None else getattr(analysis, name)
        if rollouts is None:
            reason = None if analysis is None else analysis.reason(name)
            return self._show_nothing(self._no_rollout() if reason is None else error_text(reason))
        layers = rollouts.shape[0]
        if layers != self._last_layers:  # a new model: start at the last layer (the final vectors)
            with QSignalBlocker(self.layer):
                self.layer.setRange(0, layers - 1)
                self.layer.setValue(layers - 1)
            self._last_layers = layers
        matrix = self.matrix()
        labels = snapshot.result.token_texts
        focus = min(self.controller.focus, len(labels) - 1)
        row = matrix[focus]  # (n,)
        self.bars.setOpts(x=np.arange(len(row)), height=row, width=0.8, brush=BAR_BRUSH)
        _token_ticks(self.plot, labels)
        self.plot.setYRange(0, max(float(row.max()), 1e-6) * 1.05, padding=0)
        self.plot.setTitle(fill(self.tr("where “%1”'s vector comes from"), escape(labels[focus])), color="#333", size="9pt")
        self.heatmap.set_matrix(matrix, labels, labels, levels=(0.0, max(float(matrix.max()), 1e-6)),
                                colormap=WEIGHTS_MAP)
        self.heatmap.set_highlight_row(focus)
        top = int(np.argmax(row))
        if top == focus:  # its own token is the largest share: said once, not "0.67 … and 0.67 from itself"
            text = fill(self.tr("After layer %1, “%2” holds %3 of its own input token, the largest share. "
                                "Each layer: 0.5·attention + 0.5·identity (the residual), multiplied through the layers."),
                        self.layer.value(), labels[focus], f"{row[focus]:.2f}")
        else:
            text = fill(self.tr("After layer %1, “%2” holds %3 of its own input token and %4 from “%5” "
                                "(the largest share). Each layer: 0.5·attention + 0.5·identity (the residual), "
                                "multiplied through the layers."),
                        self.layer.value(), labels[focus], f"{row[focus]:.2f}", f"{row[top]:.2f}", labels[top])
        self.caption.setText(text)


# ====================================================================== ablation
class AblationPanel(Panel):
    """Switched-off heads: their effect on every token, and ranking every head by its effect."""

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ablationPanel")
        self.controller = controller
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        top = QHBoxLayout()
        self.status = QLabel()
        self.status.setObjectName("ablationStatus")
        self.status.setWordWrap(True)
        top.addWidget(self.status, 1)
        self.restore = QPushButton(self.tr("Switch all heads on"))
        self.restore.setObjectName("ablationRestore")
        self.restore.clicked.connect(lambda: controller.set_ablation(frozenset()))
        top.addWidget(self.restore)
        self.rank_button = QPushButton(self.tr("Most important heads"))
        self.rank_button.setObjectName("rankHeadsButton")
        self.rank_button.setToolTip(self.tr("Switch every head off alone and measure how much the final vectors "
                                            "change (mean 1 − cosine over tokens); runs in the background"))
        self.rank_button.clicked.connect(self.rank)
        top.addWidget(self.rank_button)
        self.progress = QProgressBar()
        self.progress.setObjectName("rankProgress")
        self.progress.setRange(0, 100)
        self.progress.setMaximumWidth(140)
        self.progress.setVisible(False)
        top.addWidget(self.progress)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setObjectName("rankCancel")
        self.cancel_button.setToolTip(self.tr("Stop ranking the heads (Esc)"))
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel)
        top.addWidget(self.cancel_button)
        layout.addLayout(top)
        row = QHBoxLayout()
        self.plot, self.bars = _bar_plot(self.tr("each token's final vector: cosine with and without"))
        self.plot.setObjectName("ablationBars")
        row.addWidget(self.plot, 3)
        self.grid = HeatmapView()
        self.grid.setObjectName("effectGrid")
        self.grid.set_axis_titles(self.tr("layer"), self.tr("head"))
        self.grid.setToolTip(self.tr("Effect of switching each head off alone; click a cell to switch that head "
                                     "off (or back on)"))
        self.grid.cellClicked.connect(lambda layer, head: controller.toggle_head(layer, head))
        row.addWidget(self.grid, 3)
        self.top_list = QListWidget()
        self.top_list.setObjectName("topHeadsList")
        self.top_list.setToolTip(self.tr("The heads whose removal changes the final vectors most; click to show one"))
        self.top_list.itemClicked.connect(self._on_top_clicked)
        self.top_list.setMaximumWidth(220)
        row.addWidget(self.top_list, 1)
        layout.addLayout(row, 1)
        self._ranking = False  # a ranking is running
        self.ranking = None  # engine.analysis.ablation.HeadRanking of ``_ranked_for``
        self._ranked_for = None
        self._lane = self.lane(RANK_LANE, long=True)  # never holds the thread that computes edits
        self._lane.progressed.connect(self._on_progress)
        self._lane.done.connect(self._on_ranked)
        self._lane.failed.connect(self._on_rank_failed)
        controller.cancelled.connect(lambda: self.cancel() if self._ranking else None)  # Esc (the window's action)
        self.set_model_connected()

    def _key(self, snapshot=None):
        """What a ranking belongs to: the model and its input (settings for the toy engine)."""
        snapshot = snapshot or self.controller.snapshot
        if snapshot is None:
            return None
        if model_info(snapshot.model).configurable:
            return (snapshot.model, snapshot.result.config)
        return (snapshot.model, snapshot.result.config.text)

    def show_snapshot(self, snapshot) -> None:
        analysis = snapshot.analysis
        labels = snapshot.result.token_texts
        off = sorted(snapshot.ablate)
        self.restore.setEnabled(bool(off))
        if not off or analysis is None or analysis.cosines is None:
            if not off:
                self.status.setText(self.tr("No head is switched off. Ctrl+click (or right-click) a head in the head "
                                            "grid, or click a cell of the effects grid, to switch it off."))
            else:  # heads are off but their effect is not known: say which, and why
                reason = None if analysis is None else analysis.reason("ablation_cosines")
                why = _computing() if analysis is None and self.controller.analysis_pending() else \
                    "" if reason is None else error_text(reason)
                self.status.setText(fill(self.tr("Switched off: %1. %2"), ", ".join(_head_name(l, h) for l, h in off),
                                         why))
            self.bars.setOpts(x=[], height=[])
            self.plot.getAxis("bottom").setTicks([[]])  # no bars, no labels of an older sentence
        else:
            cosines = analysis.cosines
            low = int(np.argmin(cosines))
            self.status.setText(fill(self.tr("Switched off: %1. Final vectors' cosine with and without: mean %2, "
                                             "lowest %3 (“%4”)."),
                                     ", ".join(_head_name(l, h) for l, h in off), f"{cosines.mean():.4f}",
                                     f"{cosines[low]:.4f}", labels[low]))
            brushes = [LOW_BRUSH if c < 0.99 else BAR_BRUSH for c in cosines]
            self.bars.setOpts(x=np.arange(len(cosines)), height=cosines, width=0.8, brushes=brushes)
            floor = float(cosines.min())
            self.plot.setYRange(max(-1.0, floor - 0.25 * (1.0 - floor) - 1e-3), 1.0, padding=0.02)  # the differences, not 0 … 1
            _token_ticks(self.plot, labels)
        if self.ranking is not None and self._ranked_for != self._key(snapshot):
            self._show_ranking(None)  # ranked on another sentence or model: no pieces of two results
        elif self.ranking is not None:
            self._show_ranking(self.ranking)

    def show_selection(self) -> None:
        pass

    # ------------------------------------------------------------------ ranking
    def rank(self) -> None:
        """Rank every head of the current model and input, in the worker."""
        snapshot = self.controller.snapshot
        if snapshot is None:
            return
        from ..jobs.analysis import rank_toy
        from ..jobs.trained import rank_pretrained

        from ..worker import engine_task

        self._pending_key = self._key(snapshot)
        if model_info(snapshot.model).configurable:  # a task: progress, and Esc stops it between heads
            self._lane.start(engine_task, rank_toy, snapshot.result.config)
        else:
            self._lane.start(engine_task, rank_pretrained, snapshot.model, snapshot.result.config.text)
        self._ranking = True
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.cancel_button.setVisible(True)
        self.rank_button.setEnabled(False)

    def cancel(self) -> None:
        """Stop the ranking (the heads done so far are not shown)."""
        self._lane.cancel()
        self._finish()

    def is_ranking(self) -> bool:
        return self._ranking

    def _finish(self) -> None:
        self._ranking = False
        self.progress.setVisible(False)
        self.cancel_button.setVisible(False)
        self.rank_button.setEnabled(True)

    def _on_progress(self, done: int, total: int) -> None:
        if self._ranking:
            self.progress.setValue(int(round(100 * done / max(total, 1))))

    def _on_ranked(self, ranking) -> None:
        self._finish()
        if not ranking.complete:
            return
        self.ranking, self._ranked_for = ranking, self._pending_key
        if self._ranked_for == self._key():
            self._show_ranking(ranking)

    def _on_rank_failed(self, error) -> None:
        self._finish()
        self.status.setText(error_text(error))

    def _show_ranking(self, ranking) -> None:
        self.top_list.clear()
        snapshot = self.controller.snapshot
        if ranking is None or snapshot is None:
            self.grid.clear_matrix()
            return
        layers = 1 + max(layer for layer, _ in ranking.heads)
        heads = snapshot.result.weights.shape[0]
        grid = ranking.effect_grid(layers, heads)  # (layers, heads)
        self.grid.set_matrix(grid, [str(l) for l in range(layers)], [str(h) for h in range(heads)],
                             levels=(0.0, max(float(np.nanmax(grid)), 1e-9)), colormap=WEIGHTS_MAP,
                             value_format="{:.3f}", show_values=heads * layers <= 96)
        for (layer, head), value in list(zip(ranking.heads, ranking.effects))[:TOP_HEADS]:
            item = QListWidgetItem(fill(self.tr("layer %1 head %2: %3"), layer, head, f"{value:.4f}"))
            item.setData(Qt.ItemDataRole.UserRole, (layer, head))
            self.top_list.addItem(item)

    def _on_top_clicked(self, item: QListWidgetItem) -> None:
        layer, head = item.data(Qt.ItemDataRole.UserRole)
        _select_head(self.controller, layer, head)


def _select_head(controller: Controller, layer: int, head: int) -> None:
    """Show (layer, head): the layer of a pretrained model, then the head."""
    snapshot = controller.snapshot
    if snapshot is not None and not model_info(snapshot.model).configurable and layer != controller.layer:
        controller.set_model(controller.model, layer)
    controller.select(head=head)


# ====================================================================== dashboard
class HeadTableModel(QAbstractTableModel):
    """One row per head: layer, head and the measures of engine.analysis.head_stats (sorted by UserRole)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.table = None  # structured array (layers·heads,)
        self.columns = ("layer", "head") + MEASURES

    def set_table(self, table) -> None:
        self.beginResetModel()
        self.table = table
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt name
        return 0 if self.table is None or parent.isValid() else len(self.table)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt name
        return len(self.columns)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or self.table is None:
            return None
        value = self.table[index.row()][self.columns[index.column()]]
        if role == Qt.ItemDataRole.DisplayRole:
            return str(int(value)) if index.column() < 2 else f"{float(value):.3f}"
        if role == Qt.ItemDataRole.UserRole:
            return float(value)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802 - Qt name
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return measure_title(self.columns[section])
        return None


def measure_title(name: str) -> str:
    return QCoreApplication.translate("DashboardPanel", MEASURE_TITLES[name])


MEASURE_TITLES = {
    "layer": QT_TRANSLATE_NOOP("DashboardPanel", "layer"),
    "head": QT_TRANSLATE_NOOP("DashboardPanel", "head"),
    "entropy": QT_TRANSLATE_NOOP("DashboardPanel", "entropy (bits)"),
    "first": QT_TRANSLATE_NOOP("DashboardPanel", "on first token"),
    "special": QT_TRANSLATE_NOOP("DashboardPanel", "on special tokens"),
    "previous": QT_TRANSLATE_NOOP("DashboardPanel", "on previous token"),
    "self": QT_TRANSLATE_NOOP("DashboardPanel", "on itself"),
}
PATTERN_TITLES = {
    "previous-token head": QT_TRANSLATE_NOOP("DashboardPanel", "previous-token heads"),
    "sink head": QT_TRANSLATE_NOOP("DashboardPanel", "sink heads (weight parked on the first / special tokens)"),
    "self head": QT_TRANSLATE_NOOP("DashboardPanel", "self heads"),
    "induction head": QT_TRANSLATE_NOOP("DashboardPanel", "induction heads"),
}


class DashboardPanel(Panel):
    """Head dashboard: a sortable table and a scatter of two measures, linked to the selection."""

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("dashboardPanel")
        self.controller = controller
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.caption = QLabel()
        self.caption.setObjectName("dashboardCaption")
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.PlainText)  # holds token text
        layout.addWidget(self.caption)
        row = QHBoxLayout()
        self.table_model = HeadTableModel(self)
        self.proxy, self.view = sorted_table(self.table_model, "headTable", self)
        self.view.selectionModel().currentRowChanged.connect(self._on_row_changed)
        row.addWidget(self.view, 3)
        right = QVBoxLayout()
        axes = QHBoxLayout()
        self.x_measure, self.y_measure = QComboBox(), QComboBox()
        for combo, name, default in ((self.x_measure, "dashboardX", "entropy"), (self.y_measure, "dashboardY", "special")):
            combo.setObjectName(name)
            for measure in MEASURES:
                combo.addItem(measure_title(measure), measure)
            combo.setCurrentIndex(combo.findData(default))
            combo.currentIndexChanged.connect(lambda _: self._plot())
        axes.addWidget(QLabel(self.tr("x")))
        axes.addWidget(self.x_measure, 1)
        axes.addWidget(QLabel(self.tr("y")))
        axes.addWidget(self.y_measure, 1)
        right.addLayout(axes)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("dashboardScatter")
        self.plot.setMenuEnabled(False)
        self.plot.setMinimumHeight(160)
        for axis in ("left", "bottom"):
            self.plot.getAxis(axis).enableAutoSIPrefix(False)  # shares stay 0 … 1, not "×0.001"
        self.scatter = pg.ScatterPlotItem(size=9, pen=pg.mkPen("#ffffff", width=0.5), brush=POINT_BRUSH)
        self.scatter.sigClicked.connect(self._on_point_clicked)
        self.plot.addItem(self.scatter)
        self.selected_point = pg.ScatterPlotItem(size=14, pen=pg.mkPen("#ff2d55", width=2), brush=pg.mkBrush(None))
        self.plot.addItem(self.selected_point)
        right.addWidget(self.plot, 1)
        row.addLayout(right, 2)
        layout.addLayout(row, 1)
        self._syncing = False
        self.set_model_connected()

    def table(self):
        snapshot = self.controller.snapshot
        return None if snapshot is None or snapshot.analysis is None else snapshot.analysis.head_stats

    def show_snapshot(self, snapshot) -> None:
        table = self.table()
        if table is None:
            self.table_model.set_table(None)
            self.scatter.setData([])
            self.selected_point.setData([])
            reason = None if snapshot.analysis is None else snapshot.analysis.reason("head_stats")
            self.caption.setText(_computing() if snapshot.analysis is None and self.controller.analysis_pending()
                                 else self.tr("No head statistics for this result.") if reason is None
                                 else error_text(reason))
            return
        if self.table_model.table is None or len(self.table_model.table) != len(table) or \
                not np.array_equal(self.table_model.table.view(np.uint8), table.view(np.uint8)):
            self.table_model.set_table(table)
        self.caption.setText(self.caption_text(snapshot))
        self._plot()
        self.show_selection()

    def caption_text(self, snapshot) -> str:
        analysis = snapshot.analysis
        stats = {measure: analysis.stats(measure) for measure in MEASURES}
        named = name_heads(stats)
        if not named:
            return self.tr("No head here has a clear pattern (previous-token, sink or self above its threshold).")
        lines = []
        for pattern in dict.fromkeys(head.pattern for head in named):
            heads = [head for head in named if head.pattern == pattern]
            shown = ", ".join(f"{_head_name(h.layer, h.head)} ({h.value:.2f})" for h in heads[:6])
            more = fill(self.tr(" and %1 more"), len(heads) - 6) if len(heads) > 6 else ""
            title = QCoreApplication.translate("DashboardPanel", PATTERN_TITLES[pattern])
            lines.append(f"{title}: {shown}{more}")
        return "\n".join(lines)

    def _plot(self) -> None:
        table = self.table()
        if table is None:
            return
        x, y = self.x_measure.currentData(), self.y_measure.currentData()
        spots = [{"pos": (float(r[x]), float(r[y])), "data": (int(r["layer"]), int(r["head"]))} for r in table]
        self.scatter.setData(spots)
        self.plot.setLabel("bottom", measure_title(x))
        self.plot.setLabel("left", measure_title(y))
        self._mark()

    def points(self) -> np.ndarray:
        """(heads, 2) positions of the scatter's points (tests)."""
        x, y = self.scatter.getData()
        return np.column_stack([x, y])

    def _selected(self) -> tuple[int, int]:
        snapshot = self.controller.snapshot
        return (0 if snapshot is None else snapshot.layer, self.controller.head)

    def _mark(self) -> None:
        table = self.table()
        if table is None:
            return
        layer, head = self._selected()
        rows = np.nonzero((table["layer"] == layer) & (table["head"] == head))[0]
        if not len(rows):
            self.selected_point.setData([])
            return
        r = table[rows[0]]
        self.selected_point.setData([float(r[self.x_measure.currentData()])], [float(r[self.y_measure.currentData()])])

    def show_selection(self) -> None:
        table = self.table()
        if table is None:
            return
        self._mark()
        layer, head = self._selected()
        heads = int(table["head"].max()) + 1
        source = self.table_model.index(layer * heads + head, 0)
        index = self.proxy.mapFromSource(source)
        if index.isValid() and self.view.currentIndex().row() != index.row():
            self._syncing = True
            self.view.setCurrentIndex(index)
            self.view.scrollTo(index)
            self._syncing = False

    def _on_row_changed(self, current, _previous) -> None:
        if self._syncing or not current.isValid() or self.table_model.table is None:
            return
        r = self.table_model.table[self.proxy.mapToSource(current).row()]
        _select_head(self.controller, int(r["layer"]), int(r["head"]))

    def _on_point_clicked(self, _item, points, *_args) -> None:
        if len(points):
            layer, head = points[0].data()
            _select_head(self.controller, layer, head)
