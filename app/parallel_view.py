"""Lessons → GPU against RNN (seed 000 item 0.26): one matrix product against n dependent steps.

Shows engine.toy.sequential's counts (dependent steps, multiply-adds) and the times it measured on
this machine for n tokens of width d. The measurement runs in the worker (lane "sequential"); the
dialog only writes the numbers. Times depend on the machine and its load: the caption says so.
"""
from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog, QFormLayout, QHBoxLayout, QLabel, QPushButton, QSpinBox, QTableWidget, QTableWidgetItem, QVBoxLayout,
    QWidget,
)

from engine.toy.sequential import MAX_TOKENS, MAX_WIDTH, compare_sequential

from .i18n import error_text
from .text import fill

LANE = "sequential"
DEFAULT_N, DEFAULT_D = 256, 128  # n = 2d: both do the same number of multiply-adds


class ParallelDialog(QDialog):
    """n and d, Measure, and a table: attention's Q·Kᵀ against an RNN over the same tokens."""

    def __init__(self, worker, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("parallelDialog")
        self.setWindowTitle(self.tr("GPU against RNN: one matrix product or n steps"))
        self.comparison = None
        self._lane = worker.lane(LANE, self)
        self._lane.done.connect(self._on_measured)
        self._lane.failed.connect(lambda error: self.status.setText(error_text(error)))
        layout = QVBoxLayout(self)
        caption = QLabel(self.tr(
            "Seed 000: “GPU likes matrix products; an RNN must go step by step.” Attention scores every pair of "
            "tokens in one product Q·Kᵀ: its n² dot products do not wait for each other, so hardware with many "
            "units does them together. An RNN's state h_t = tanh(h_{t−1}·W_h + x_t·W_x) needs the previous state: "
            "n steps, one after another, however many units there are. The counts below are exact; the times are "
            "measured with NumPy on this computer's CPU (no GPU here), the best of 3 runs, and change with the "
            "machine and its load — on a busy CPU they can even come out the other way. At n = 2d both do the "
            "same number of multiply-adds."))
        caption.setWordWrap(True)
        layout.addWidget(caption)
        form = QFormLayout()
        self.n_box, self.d_box = QSpinBox(), QSpinBox()
        self.n_box.setObjectName("parallelTokens")
        self.d_box.setObjectName("parallelWidth")
        self.n_box.setRange(1, MAX_TOKENS)
        self.d_box.setRange(1, MAX_WIDTH)
        self.n_box.setValue(DEFAULT_N)
        self.d_box.setValue(DEFAULT_D)
        form.addRow(self.tr("Tokens n"), self.n_box)
        form.addRow(self.tr("Width d (of q, k and the RNN's state)"), self.d_box)
        row = QHBoxLayout()
        row.addLayout(form)
        self.measure_button = QPushButton(self.tr("Measure"))
        self.measure_button.setObjectName("parallelMeasure")
        self.measure_button.clicked.connect(self.measure)
        row.addWidget(self.measure_button)
        layout.addLayout(row)
        self.table = QTableWidget(5, 2)
        self.table.setObjectName("parallelTable")
        self.table.setHorizontalHeaderLabels([self.tr("Attention: Q·Kᵀ"), self.tr("RNN: n steps")])
        self.table.setVerticalHeaderLabels([self.tr("Steps that wait for the previous one"),
                                            self.tr("Multiply-adds"), self.tr("Independent dot products"),
                                            self.tr("Measured time"), self.tr("Time per multiply-add")])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setMinimumHeight(150)
        layout.addWidget(self.table)
        self.status = QLabel()
        self.status.setObjectName("parallelStatus")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        self.resize(720, 420)
        self.measure()

    def measure(self) -> None:
        self.status.setText(self.tr("Measuring…"))
        self._lane.submit(compare_sequential, self.n_box.value(), self.d_box.value())

    def is_idle(self) -> bool:
        return self.comparison is not None and self.comparison.n == self.n_box.value() \
            and self.comparison.d == self.d_box.value()

    @staticmethod
    def _time(seconds: float) -> str:
        return f"{seconds * 1000:.3g} ms" if seconds >= 1e-4 else f"{seconds * 1e6:.3g} µs"

    def _on_measured(self, comparison) -> None:
        self.comparison = c = comparison
        cells = ((str(c.attention_steps), str(c.rnn_steps)),
                 (f"{c.attention_multiply_adds:,}", f"{c.rnn_multiply_adds:,}"),
                 (f"{c.attention_dot_products:,}", self.tr("— (each step waits)")),
                 (self._time(c.attention_seconds), self._time(c.rnn_seconds)),
                 (f"{c.attention_seconds / c.attention_multiply_adds * 1e9:.3g} ns",
                  f"{c.rnn_seconds / c.rnn_multiply_adds * 1e9:.3g} ns"))
        for row, values in enumerate(cells):
            for column, text in enumerate(values):
                self.table.setItem(row, column, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        self.status.setText(fill(self.tr(
            "n = %1, d = %2: attention is 1 product of %3 multiply-adds; the RNN is %4 steps in a row of %5 "
            "multiply-adds each. Measured here: %6 against %7 (%8× the time for %9× the multiply-adds)."),
            c.n, c.d, f"{c.attention_multiply_adds:,}", c.rnn_steps, f"{2 * c.d * c.d:,}",
            self._time(c.attention_seconds), self._time(c.rnn_seconds),
            f"{c.rnn_seconds / max(c.attention_seconds, 1e-12):.3g}",
            f"{c.rnn_multiply_adds / max(c.attention_multiply_adds, 1):.3g}"))
