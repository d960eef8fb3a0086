"""Scaling lab: why the scores are divided by √d_k (seed 000: "512维 … [0.999999, 0.000001]").

Top: for the current settings and the selected head, each query row's entropy (nats) and
largest weight with and without ÷√d_k (the other variant is recomputed in the worker).
Bottom: a sweep over d_model = 4 … 1024 with one head (d_k = d_model), random weights, the
user's sentence and seed: mean row entropy and mean max weight with and without ÷√d_k, and
log n, the entropy of a uniform row. Without the scaling q·k spreads like √d_k, so the softmax
saturates — max weight → 1, entropy → 0 — while with it both stay roughly flat.

The sweep runs one d_model per worker job (lane "scaling"), so the main computation is never
held up for long, and only while the panel is visible.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer, Qt
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from engine.toy.labs import SWEEP_D_MODELS, ScaleComparison, ScalingPoint, ScalingSweep, scale_comparison, scaling_point, sweep_config
from engine.toy.labs import self_gradient

from ..controller import Controller
from ..i18n import error_text
from ..text import fill
from .base import Panel

SWEEP_LANE = "scaling"
CURRENT_LANE = "scaling-current"
SCALED_COLOR = "#1f77b4"  # with ÷√d_k
UNSCALED_COLOR = "#d62728"  # without
REFERENCE_PEN = pg.mkPen("#7f7f7f", width=1.5, style=Qt.PenStyle.DashLine)
MAX_TOKEN_TICKS = 20
TICK_PIXELS = 48  # room one token label needs under the bars
SETTLE_MS = 300  # wait for typing to pause before the extra computations start


class ScalingPanel(Panel):
    """Per-row entropy and max weight with/without ÷√d_k, and their sweep over d_model."""

    NEEDS = {"configurable": True}  # runs the toy engine's settings

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("scalingPanel")
        self.controller = controller
        self.comparison: ScaleComparison | None = None
        self.sweep_points: list[ScalingPoint] = []
        self._sweep_key = None  # sweep_config of the sentence the points belong to
        self._sweep_running = False
        self._current_waiting = False
        self._current_config = None  # the config the comparison was asked for
        self._settle = QTimer(self, singleShot=True, interval=SETTLE_MS)
        self._settle.timeout.connect(self._request)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        caption = QLabel(self.tr(
            "Without ÷√d_k the scores q·k spread like √d_k, and as d_k grows the softmax saturates: one weight "
            "near 1, the rest near 0. The tutorial's “[0.999999, 0.000001]” is an illustration, not a measurement: "
            "the sweep below measures the largest weight at each d_k. A saturated softmax has gradients near 0: "
            "they vanish, they do not explode. Entropy: log n = spread evenly, 0 = all weight on one key."))
        caption.setWordWrap(True)
        layout.addWidget(caption)
        legend = QLabel(" &nbsp; ".join((
            f'<span style="color:{SCALED_COLOR}">■</span> ' + self.tr("with ÷√d_k"),
            f'<span style="color:{UNSCALED_COLOR}">■</span> ' + self.tr("without ÷√d_k"),
            '<span style="color:#7f7f7f">- - -</span> ' + self.tr("uniform row (entropy log n, largest weight 1/n)"),
            '<span style="color:#2ca02c">┊</span> ' + self.tr("current d_k"),
        )))
        legend.setObjectName("scalingLegend")
        layout.addWidget(legend)
        self.summary = QLabel()
        self.summary.setObjectName("scalingSummary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.gradient = QLabel()  # w(1 − w) of the largest weights: the gradient that vanishes
        self.gradient.setObjectName("scalingGradient")
        self.gradient.setWordWrap(True)
        layout.addWidget(self.gradient)

        self.rows_canvas = pg.GraphicsLayoutWidget()
        self.rows_canvas.setObjectName("scalingRows")
        self.rows_canvas.setBackground("w")
        self.rows_canvas.setMinimumHeight(150)
        self.entropy_plot = self._plot(self.rows_canvas, 0, self.tr("entropy per query token (nats)"))
        self.max_plot = self._plot(self.rows_canvas, 1, self.tr("largest weight per query token"))
        self.row_bars = {}
        for plot, quantity in ((self.entropy_plot, "entropy"), (self.max_plot, "max")):
            for variant, color, name in (("scaled", SCALED_COLOR, self.tr("÷√d_k")),
                                         ("unscaled", UNSCALED_COLOR, self.tr("no ÷√d_k"))):
                bars = pg.BarGraphItem(x=[], height=[], width=0.4, brush=pg.mkBrush(color), pen=None, name=name)
                plot.addItem(bars)
                self.row_bars[f"{quantity}_{variant}"] = bars
        self.row_reference = {
            "entropy": self.entropy_plot.plot([], [], pen=REFERENCE_PEN, name=self.tr("uniform: log n")),
            "max": self.max_plot.plot([], [], pen=REFERENCE_PEN, name=self.tr("uniform: 1/n")),
        }
        self.max_plot.setYRange(0, 1.02, padding=0)
        # the current sentence's charts and the sweep side by side: the lab fits a low bottom dock
        charts = QSplitter(Qt.Orientation.Horizontal)
        charts.addWidget(self.rows_canvas)
        layout.addWidget(charts, 1)
        sweep = QWidget()
        sweep_layout = QVBoxLayout(sweep)
        sweep_layout.setContentsMargins(0, 0, 0, 0)
        charts.addWidget(sweep)
        charts.setStretchFactor(0, 2)  # the sweep has three plots, the current sentence two
        charts.setStretchFactor(1, 3)

        self.sweep_status = QLabel()
        self.sweep_status.setObjectName("sweepStatus")
        self.sweep_status.setWordWrap(True)
        sweep_layout.addWidget(self.sweep_status)
        self.sweep_canvas = pg.GraphicsLayoutWidget()
        self.sweep_canvas.setObjectName("scalingSweep")
        self.sweep_canvas.setBackground("w")
        self.sweep_canvas.setMinimumHeight(150)
        self.sweep_entropy = self._plot(self.sweep_canvas, 0, self.tr("mean row entropy (nats) vs d_k"))
        self.sweep_max = self._plot(self.sweep_canvas, 1, self.tr("mean largest weight vs d_k"))
        # seed 001 “small input changes → large output changes” (item 1.28): the largest move of a row
        self.sweep_change = self._plot(self.sweep_canvas, 2, self.tr("row change, key +1 %"))
        ticks = [[(math.log2(d), str(d)) for d in SWEEP_D_MODELS]]
        self.sweep_curves = {}
        self.current_lines = []
        for plot, quantity in ((self.sweep_entropy, "entropy"), (self.sweep_max, "max"),
                               (self.sweep_change, "change_max")):
            plot.getAxis("bottom").setTicks(ticks)
            plot.setLabel("bottom", self.tr("d_k = d_model (one head, random weights)"))
            for variant, color, name in (("scaled", SCALED_COLOR, self.tr("÷√d_k")),
                                         ("unscaled", UNSCALED_COLOR, self.tr("no ÷√d_k"))):
                self.sweep_curves[f"{quantity}_{variant}"] = plot.plot(
                    [], [], pen=pg.mkPen(color, width=2), symbol="o", symbolSize=6,
                    symbolBrush=pg.mkBrush(color), symbolPen=None, name=name)
            line = pg.InfiniteLine(angle=90, pen=pg.mkPen("#2ca02c", width=1, style=Qt.PenStyle.DotLine))
            line.setVisible(False)
            plot.addItem(line)
            self.current_lines.append(line)
        self.sweep_reference = self.sweep_entropy.plot([], [], pen=REFERENCE_PEN, name=self.tr("uniform: log n"))
        self.sweep_max.setYRange(0, 1.02, padding=0)
        self.sensitivity = QLabel()  # the 1 % key change and the Jacobian's size at the last d_k
        self.sensitivity.setObjectName("scalingSensitivity")
        self.sensitivity.setWordWrap(True)
        self.sensitivity.setToolTip(self.tr(
            "Seed 001: “small input changes make large output changes.” Growing one key's vector by 1 % multiplies "
            "its column of scores by 1.01; each row's weights move by ½·Σ|w′ − w|. Without ÷√d_k the scores are "
            "large: most rows are saturated (their Jacobian diag(w) − wwᵀ is near 0) and hardly move, while a row "
            "whose two largest scores nearly tie can swing. The plot shows the largest move at each d_k."))
        sweep_layout.addWidget(self.sensitivity)
        sweep_layout.addWidget(self.sweep_canvas, 1)

        self.set_model_connected()
        self._current_lane = self.lane(CURRENT_LANE)
        self._current_lane.done.connect(self._on_compared)
        self._current_lane.failed.connect(self._on_compare_failed)
        self._sweep_lane = self.lane(SWEEP_LANE)
        self._sweep_lane.done.connect(self._on_sweep_point)
        self._sweep_lane.failed.connect(self._on_sweep_failed)

    @staticmethod
    def _plot(canvas: pg.GraphicsLayoutWidget, column: int, title: str) -> pg.PlotItem:
        plot = canvas.addPlot(row=0, col=column, title=title)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.showGrid(x=False, y=True, alpha=0.3)
        return plot

    # ------------------------------------------------------------------ public
    @property
    def sweep(self) -> ScalingSweep | None:
        """The finished sweep on screen, or None while it is still running."""
        if self._sweep_running or len(self.sweep_points) != len(SWEEP_D_MODELS):
            return None
        return ScalingSweep(tuple(self.sweep_points))

    def is_idle(self) -> bool:
        """True when neither the comparison nor the sweep is waiting for the worker (tests)."""
        return not self._settle.isActive() and not self._current_waiting and not self._sweep_running

    # ------------------------------------------------------------------ requests
    def showEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().showEvent(event)
        self._request()  # work skipped while hidden starts now

    def show_snapshot(self, snapshot) -> None:
        if not self.accepts(snapshot):
            self.clear()
            return
        self._show_current_line()
        self._settle.start()  # restarts while the user keeps typing

    def clear(self) -> None:
        """No toy result on screen (a pretrained model): no bars, no sweep, a sentence saying why."""
        self._settle.stop()
        self._current_lane.cancel()
        self._sweep_lane.cancel()
        self.comparison = None
        self._current_config = self._sweep_key = None
        self._current_waiting = self._sweep_running = False
        self.sweep_points = []
        for bars in self.row_bars.values():
            bars.setOpts(x=[], height=[], width=0.4)
        for curve in (*self.row_reference.values(), *self.sweep_curves.values(), self.sweep_reference):
            curve.setData([], [])
        for plot in (self.entropy_plot, self.max_plot):
            plot.getAxis("bottom").setTicks(None)
        for line in self.current_lines:
            line.setVisible(False)
        self.summary.setText(self.tr("The Scaling lab runs the toy engine: choose “Toy engine” in the Model toolbar."))
        self.sweep_status.setText("")
        self.sensitivity.setText("")

    def _request(self) -> None:
        snapshot = self.controller.snapshot
        if snapshot is None or not self.isVisible():
            return
        if not self.accepts(snapshot):
            self.clear()
            return
        config = snapshot.result.config
        if config != self._current_config:
            self._current_config = config
            self._current_waiting = True
            self._current_lane.submit(scale_comparison, snapshot.result)
        key = sweep_config(config)
        if key != self._sweep_key:
            self._sweep_key = key
            self.sweep_points = []
            self.sensitivity.setText("")
            self._sweep_running = True
            self._submit_sweep_point()
        self._show_current_line()

    def _submit_sweep_point(self) -> None:
        index = len(self.sweep_points)
        d_model = SWEEP_D_MODELS[index]
        self.sweep_status.setText(fill(self.tr("Sweeping d_k = %1 (%2 of %3)…"), d_model, index + 1, len(SWEEP_D_MODELS)))
        self._sweep_lane.submit(scaling_point, self._sweep_key, d_model)

    def _on_compared(self, value) -> None:
        self._current_waiting = False
        if not self.accepts(self.controller.snapshot):
            return
        self.comparison = value
        self.show_selection()

    def _on_sweep_point(self, value) -> None:
        if not self._sweep_running or not self.accepts(self.controller.snapshot):
            return
        self.sweep_points.append(value)
        self._show_sweep()
        if len(self.sweep_points) < len(SWEEP_D_MODELS):
            self._submit_sweep_point()  # one point per job: the main computation can cut in
        else:
            self._sweep_running = False
            last = self.sweep_points[-1]
            self.sweep_status.setText(fill(self.tr(
                "At d_k = %1 the raw scores reach |q·k| = %2; ÷√d_k = ÷%3 brings them to %4. "
                "The largest weight averages %5 without the scaling, %6 with it."),
                last.d_model, f"{last.largest_score:.1f}", f"{math.sqrt(last.d_model):.0f}",
                f"{last.largest_score / math.sqrt(last.d_model):.2f}",
                f"{last.max_unscaled:.3f}", f"{last.max_scaled:.3f}"))
            self.sensitivity.setText(fill(self.tr(
                "d_k = %1, one key's vector +1 %: a row moves by at most %2 without ÷√d_k, %3 with it; the row's "
                "Jacobian ‖∂w/∂(q·k)‖ averages %4 without, %5 with. Saturated rows hardly move; rows near a tie jump."),
                last.d_model, f"{last.change_max_unscaled:.3f}", f"{last.change_max_scaled:.3f}",
                f"{last.jacobian_unscaled:.3f}", f"{last.jacobian_scaled:.3f}"))

    def _on_compare_failed(self, error) -> None:
        self._current_waiting = False
        self.summary.setText(fill(self.tr("Could not compare with and without ÷√d_k: %1"), error_text(error)))

    def _on_sweep_failed(self, error) -> None:
        self._sweep_running = False
        self.sweep_status.setText(fill(self.tr("The sweep stopped: %1"), error_text(error)))

    # ------------------------------------------------------------------ pictures
    def show_selection(self) -> None:
        comparison = self.comparison
        if comparison is None or not self.accepts(self.controller.snapshot):
            return
        heads, n = comparison.entropy_scaled.shape
        head = min(self.controller.head, heads - 1)
        positions = np.arange(n, dtype=float)
        for key, values in (("entropy_scaled", comparison.entropy_scaled), ("entropy_unscaled", comparison.entropy_unscaled),
                            ("max_scaled", comparison.max_scaled), ("max_unscaled", comparison.max_unscaled)):
            offset = -0.2 if key.endswith("_scaled") else 0.2
            self.row_bars[key].setOpts(x=positions + offset, height=values[head], width=0.4)
        # a flat row's value, drawn as a step across each token's slot
        edges = np.repeat(np.arange(n + 1, dtype=float) - 0.5, 2)[1:-1]
        self.row_reference["entropy"].setData(edges, np.repeat(comparison.uniform, 2))
        self.row_reference["max"].setData(edges, np.repeat(np.exp(-comparison.uniform), 2))
        labels = [token.text for token in self.controller.snapshot.result.tokens] if self.controller.snapshot else []
        if len(labels) == n:
            fit = max(2, min(MAX_TOKEN_TICKS, self.rows_canvas.width() // 2 // TICK_PIXELS))
            step = max(1, math.ceil(n / fit))
            ticks = [[(i, labels[i]) for i in range(0, n, step)]]
            for plot in (self.entropy_plot, self.max_plot):
                plot.getAxis("bottom").setTicks(ticks)
        top = max(float(comparison.uniform.max()), float(comparison.entropy_scaled.max()), 0.1)
        self.entropy_plot.setYRange(0, top * 1.08, padding=0)
        self.summary.setText(fill(self.tr(
            "Head %1, d_k = %2: mean entropy %3 nats with ÷√d_k, %4 without (uniform: %5); "
            "mean largest weight %6 with, %7 without."),
            head, comparison.config.d_k, f"{comparison.entropy_scaled[head].mean():.3f}",
            f"{comparison.entropy_unscaled[head].mean():.3f}", f"{comparison.uniform.mean():.3f}",
            f"{comparison.max_scaled[head].mean():.3f}", f"{comparison.max_unscaled[head].mean():.3f}"))
        self.gradient.setText(fill(self.tr(
            "Gradient of the largest weight by its own score, ∂w/∂s = w(1 − w): mean %1 with ÷√d_k, %2 without "
            "(0.25 at w = 0.5; near 0 when the softmax saturates: the gradient vanishes)."),
            f"{self_gradient(comparison.max_scaled[head]).mean():.3g}",
            f"{self_gradient(comparison.max_unscaled[head]).mean():.3g}"))

    def _show_sweep(self) -> None:
        points = self.sweep_points
        x = np.log2([point.d_model for point in points])
        for key, curve in self.sweep_curves.items():
            curve.setData(x, [getattr(point, key) for point in points])
        if points:
            low, high = math.log2(SWEEP_D_MODELS[0]), math.log2(SWEEP_D_MODELS[-1])
            self.sweep_reference.setData([low, high], [points[0].uniform_entropy] * 2)
            top = max(points[0].uniform_entropy, max(p.entropy_scaled for p in points), 0.1)
            self.sweep_entropy.setYRange(0, top * 1.08, padding=0)
            top_change = max(max(p.change_max_scaled for p in points), max(p.change_max_unscaled for p in points))
            self.sweep_change.setYRange(0, max(top_change, 1e-3) * 1.08, padding=0)
            for plot in (self.sweep_entropy, self.sweep_max, self.sweep_change):
                plot.setXRange(low - 0.3, high + 0.3, padding=0)

    def _show_current_line(self) -> None:
        """Mark the current d_k on the sweep's axis."""
        snapshot = self.controller.snapshot
        if not self.accepts(snapshot):
            return
        position = math.log2(snapshot.result.config.d_k)
        for line in self.current_lines:
            line.setValue(position)
            line.setVisible(True)
