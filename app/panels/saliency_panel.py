"""Saliency: bars per token of how much its input pushed the answer (engine.grad, a backward pass in
NumPy), by the method chosen: the gradient norm, input × gradient or integrated gradients (32 midpoint
steps from zero, their completeness said under the bars).

The target is the request's answer (engine.analysis.saliency_request): a decoder's log p(answer) at
the last position, an encoder's sentence-embedding cosine to the answer text's; the toy engine, with
the window's settings, an encoder's (integrated gradients refused there: its zero baseline outputs
zero). Computed in a worker lane with the window's switched-off heads; a new text (the toy: new
settings) or other heads mid-job drop the result.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from engine.models import model_info

from ..controller import Controller
from ..i18n import error_text
from ..text import fill
from .base import Panel

POSITIVE, NEGATIVE = pg.mkBrush("#1a73e8"), pg.mkBrush("#d93025")


class SaliencyPanel(Panel):
    """Saliency bars per token of the answer's target."""

    NEEDS: dict[str, bool] = {}  # every model: the toy through engine.grad.toy

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("saliencyPanel")
        self.controller = controller
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        bar = QHBoxLayout()
        bar.addWidget(QLabel(self.tr("Answer")))
        self.answer = QLineEdit(" Paris")
        self.answer.setObjectName("saliencyAnswer")
        self.answer.setToolTip(self.tr("A decoder: the answer token. An encoder: a text whose meaning the sentence's "
                                       "is compared with."))
        bar.addWidget(self.answer, 1)
        self.method = QComboBox()
        self.method.setObjectName("saliencyMethod")
        for key, title in (("ixg", self.tr("Input × gradient")), ("grad", self.tr("Gradient norm")),
                           ("ig", self.tr("Integrated gradients"))):
            self.method.addItem(title, key)
        bar.addWidget(self.method)
        self.run_button = QPushButton(self.tr("Compute saliency"))
        self.run_button.setObjectName("saliencyRun")
        self.run_button.clicked.connect(self.start)
        bar.addWidget(self.run_button)
        layout.addLayout(bar)
        self.caption = QLabel()
        self.caption.setObjectName("saliencyCaption")
        self.caption.setWordWrap(True)
        layout.addWidget(self.caption)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("saliencyBars")
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setMinimumHeight(160)
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.8, brush=POSITIVE)
        self.plot.addItem(self.bars)
        layout.addWidget(self.plot, 1)
        self._lane = self.lane("saliency", long=True)
        self._lane.done.connect(self._on_done)
        self._lane.failed.connect(self._on_failed)
        self.result = None  # the engine.analysis.saliency_request.RequestSaliency drawn
        self.model = None
        self._text, self._ablate = "", frozenset()
        self._settings = None  # the toy's settings of the running or drawn result (None: a pretrained model)
        self.running = False
        controller.cancelled.connect(lambda: self.clear() if self.running else None)
        controller.modelChanged.connect(lambda m: self.clear() if self.model not in (None, m) else None)
        self.set_model_connected(selection=False)

    def show_snapshot(self, snapshot) -> None:
        if snapshot is None:
            return
        changed = (snapshot.result.config.text != self._text or snapshot.ablate != self._ablate
                   or (self._settings is not None and snapshot.result.config != self._settings))
        if self.running and changed:  # a new edit mid-job: its result would be of another input
            self.clear()
            self.caption.setText(self.tr("The text or the switched-off heads changed: press the button again."))
        elif self.result is not None and changed:
            self.caption.setText(self.tr("The text or the settings changed: press the button again for its "
                                         "saliency."))

    def show_selection(self) -> None:
        pass

    def clear(self) -> None:
        self._lane.cancel()
        self.running = False
        self.result, self.model, self._settings = None, None, None
        self.bars.setOpts(x=[], height=[])
        self.run_button.setEnabled(True)

    def start(self) -> None:
        from engine.analysis.request import RunRequest

        from ..jobs.saliency import saliency_task

        snapshot = self.controller.snapshot
        if snapshot is None:
            return
        self.clear()
        self.model, self._text, self._ablate = snapshot.model, snapshot.result.config.text, snapshot.ablate
        self._settings = snapshot.result.config if model_info(snapshot.model).configurable else None
        self.running = True
        self.run_button.setEnabled(False)
        self.caption.setText(self.tr("Computing…"))
        request = RunRequest(text=self._text, ablate=self._ablate, answer=self.answer.text() or None)
        self._lane.start(saliency_task, self.model, self._settings, request, self.method.currentData())

    def _on_failed(self, error) -> None:
        self.running = False
        self.run_button.setEnabled(True)
        self.caption.setText(error_text(error))

    def _on_done(self, found) -> None:
        self.running = False
        self.run_button.setEnabled(True)
        self.result = found
        scores = np.asarray(found.result.scores, dtype=np.float64)  # (n,)
        brushes = [POSITIVE if value >= 0 else NEGATIVE for value in scores]
        self.bars.setOpts(x=np.arange(len(scores)), height=scores, width=0.8, brushes=brushes)
        labels = list(found.tokens)
        width = max(self.plot.width() - 60, 100)
        step = max(1, -(-len(labels) * 56 // width))
        self.plot.getAxis("bottom").setTicks([[(i, labels[i][:8]) for i in range(0, len(labels), step)]])
        text = fill(self.tr("%1 = %2. Each bar: the token's %3 (red: it pulls the target down)."),
                    self._described(found), f"{found.result.value:.4g}", self.method.currentText())
        if found.result.method == "ig":
            text += " " + fill(self.tr("The attributions sum to %1; the target changed by %2 from the baseline "
                                       "(completeness %3)."), f"{scores.sum():.4g}",
                               f"{found.result.value - found.result.baseline_value:.4g}",
                               f"{found.result.completeness:+.3g}")
        if self._ablate:
            text += " " + fill(self.tr("With %1 heads switched off."), len(self._ablate))
        self.caption.setText(text)

    def _described(self, found) -> str:
        """What the target is, in the window's language (the engine's ``described`` is English)."""
        if found.result.target.kind == "log_prob":
            return fill(self.tr("log p(%1) at the last position"), repr(found.subject))
        return fill(self.tr("cosine of the sentence embedding to %1's"), repr(found.subject))

    def values(self) -> np.ndarray | None:
        return None if self.result is None else self.result.result.scores
