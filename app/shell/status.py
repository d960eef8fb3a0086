"""The status bar: tokens, time and memory of the picture on screen, busy and Cancel, messages."""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication as Q
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox, QProgressBar, QPushButton

from engine.core.memory import format_bytes

from .. import decoder_window
from ..i18n import error_text
from ..text import fill


class StatusParts:
    """The status bar's widgets (``busy``, ``cancel_button``, the labels) and its messages."""

    def __init__(self, window) -> None:
        self.w = window
        self._build_status_bar()

    def _build_status_bar(self) -> None:
        bar = self.w.statusBar()
        self.tokens_label = QLabel()
        self.time_label = QLabel()
        self.memory_label = QLabel()
        for label, tip in ((self.tokens_label, Q.translate("MainWindow", "Tokens in the sentence")),
                           (self.time_label, Q.translate("MainWindow", "Time the engine took for the picture on screen")),
                           (self.memory_label, Q.translate("MainWindow", "Memory held by the trace (every intermediate array)"))):
            label.setToolTip(tip)
            bar.addPermanentWidget(label)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(120)
        self.busy.setVisible(False)
        self.cancel_button = QPushButton(Q.translate("MainWindow", "Cancel"))
        self.cancel_button.setToolTip(Q.translate("MainWindow", "Stop waiting for this computation and keep the pictures on screen (Esc)"))
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.w.cancel_computation)
        bar.addPermanentWidget(self.busy)
        bar.addPermanentWidget(self.cancel_button)

    def on_snapshot_changed(self, snapshot) -> None:
        self.w.model_bar.on_snapshot(snapshot)
        result = snapshot.result
        if snapshot.facts is not None and snapshot.facts.capabilities.next_token_logits:  # a decoder
            self.w.panels["input"].show_model_facts(decoder_window.facts(snapshot))
        elif snapshot.bert is not None:
            from ..model_facts import model_facts

            self.w.panels["input"].show_model_facts(model_facts(snapshot))
        self.tokens_label.setText(Q.translate("MainWindow", "1 token") if result.n == 1 else fill(Q.translate("MainWindow", "%1 tokens"), result.n))
        self.time_label.setText(fill(Q.translate("MainWindow", "computed in %1 ms"), f"{result.seconds * 1000:.1f}"))
        self.memory_label.setText(fill(Q.translate("MainWindow", "trace %1"), format_bytes(result.nbytes)))
        if self.w.startup_notice:  # the saved state was set aside: said once, after the first picture
            self.w.statusBar().showMessage(self.w.startup_notice, 20000)
            self.w.startup_notice = ""
        elif not self.w.controller.last_error:
            self.w.statusBar().clearMessage()

    def on_adjusted(self, message: str) -> None:
        """The layer or head asked for is not in the new model: said once, for a while."""
        self.w.statusBar().showMessage(message, 12000)

    def on_compute_failed(self, error) -> None:
        self.w.statusBar().showMessage(fill(Q.translate("MainWindow", "Not updated: %1"), error_text(error)))
        self.w.panels["input"].show_error(error)
        self.w.panels["attention"].mark_out_of_date()  # the picture is of the settings before

    def on_busy_changed(self, busy: bool) -> None:
        self.busy.setVisible(busy)
        self.cancel_button.setVisible(busy)
        if busy:
            self.w.statusBar().showMessage(Q.translate("MainWindow", "Computing… (Esc cancels)"))

    def on_hover_message(self, message: str) -> None:
        if message:
            self.w.statusBar().showMessage(message)
        elif not self.w.controller.last_error:
            self.w.statusBar().clearMessage()

    def warn(self, title: str, error: BaseException) -> None:
        message = error_text(error)
        self.w.statusBar().showMessage(message, 8000)
        if QApplication.platformName() not in ("offscreen", "minimal"):
            QMessageBox.warning(self.w, title, message)

