"""Next token: what a decoder predicts after the focused position, and generating one more token.

Every position of a decoder predicts the token after it. For the focused position the panel
shows the k likeliest next tokens as bars, reshaped live by temperature, top-k and top-p (the
sampling settings of transformers' logits processors). Generate appends the most likely or a
sampled token (Ctrl+Return / Ctrl+Shift+Return); the controller's undo (Ctrl+Z in the panel,
Ctrl+Alt+Z anywhere) removes it.

Worker jobs (never on the GUI thread): the logits of the focused position (a 576 × 49,152
product) once per trace and position; each control change reshapes that stored vector in the
worker too (temperature, top-k partition and top-p's sort over 49,152 entries cost a few ms:
more than a keystroke's budget on a shared 2-core machine, and the lane drops stale answers).
A bars answer names the trace and position it was made for; one for another trace or focus is
never painted, so the bars and the caption always come from the same result.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import (
    QDoubleSpinBox, QHBoxLayout, QLabel, QPushButton, QSpinBox, QVBoxLayout, QWidget,
)

from engine.models import model_info

from ..controller import Controller
from ..i18n import error_text
from ..text import fill
from .base import Panel

BARS = 10  # next tokens computed (the worker's top-k); a short panel shows the first of them that fit
MIN_BARS = 3  # … never fewer: a shorter panel scrolls
BAR_GAP = 6  # px between two bars' token labels beyond the labels' own height
LOGITS_LANE, BARS_LANE, GENERATE_LANE = "decoder-logits", "decoder-bars", "decoder-generate"
BAR_BRUSH = pg.mkBrush("#4c78a8")
TOP_BRUSH = pg.mkBrush("#f58518")


class NextTokenPanel(Panel):
    """Top-k next-token bars for the focused position; sampling controls; generate one token."""

    # every kind (the default): for the toy engine and MiniLM it shows an empty state saying a decoder is needed

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("nextTokenPanel")
        self.controller = controller
        self.logits: dict | None = None  # {"trace", "position", "logits"} of the focused position
        self.bars: dict | None = None  # the bars on screen (with the trace and position they belong to)
        self._focus_last = False  # after generating: focus the new token when its trace arrives
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.note = QLabel()
        self.note.setObjectName("nextTokenNote")
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        controls = QHBoxLayout()
        controls.addWidget(QLabel(self.tr("Temperature")))
        self.temperature = QDoubleSpinBox(objectName="nextTemperature", decimals=2, minimum=0.0, maximum=5.0,
                                          singleStep=0.1, value=1.0)
        self.temperature.setToolTip(self.tr("Divides the logits before the softmax: below 1 sharpens, above 1 "
                                            "flattens; 0 always picks the most likely token"))
        controls.addWidget(self.temperature)
        controls.addWidget(QLabel(self.tr("Top-k")))
        self.top_k = QSpinBox(objectName="nextTopK", minimum=0, maximum=1000, value=0)
        self.top_k.setSpecialValueText(self.tr("all"))
        self.top_k.setToolTip(self.tr("Keep only the k most likely tokens (0: all of them)"))
        controls.addWidget(self.top_k)
        controls.addWidget(QLabel(self.tr("Top-p")))
        self.top_p = QDoubleSpinBox(objectName="nextTopP", decimals=2, minimum=0.01, maximum=1.0, singleStep=0.05,
                                    value=1.0)
        self.top_p.setToolTip(self.tr("Keep the smallest set of most likely tokens whose probabilities reach p"))
        controls.addWidget(self.top_p)
        self.shown_label = QLabel()  # "top 6 of 10" when the panel is too short for all the bars
        self.shown_label.setObjectName("nextTokenShown")
        self.shown_label.setToolTip(self.tr("The panel is too short for all the computed bars: make it taller to see them all"))
        controls.addWidget(self.shown_label)
        controls.addStretch(1)
        layout.addLayout(controls)
        row = controls  # the generate buttons share the controls' row: the bars get the height
        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("nextTokenBars")
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(False, False)
        self.plot.hideButtons()
        self.plot.setLabel("bottom", self.tr("probability of the next token"))
        self.plot.getAxis("left").setStyle(tickLength=0)
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.plot.invertY(True)
        self.bar_item = pg.BarGraphItem(x0=[], y=[], height=[], width=[], brush=BAR_BRUSH)
        self.plot.addItem(self.bar_item)
        self.labels: list[pg.TextItem] = []
        # as many bars as fit, each as tall as its label (1024 × 600: a 120-pixel chart drew ten labels over
        # each other); the bottom axis only when all fit (each bar is labelled with its probability anyway)
        self.plot.setMinimumHeight(MIN_BARS * self.bar_pixels() + 12)
        self.plot.installEventFilter(self)
        self._fits = BARS
        layout.addWidget(self.plot, 1)
        self.greedy_button = QPushButton(self.tr("Generate: most likely"))
        self.greedy_button.setObjectName("generateGreedy")
        self.greedy_button.setToolTip(self.tr("Append the most likely next token (Ctrl+Return); undo removes it (Ctrl+Z in this "
                                              "panel, Ctrl+Alt+Z anywhere)"))
        self.greedy_button.clicked.connect(lambda: self.generate(greedy=True))
        row.addWidget(self.greedy_button)
        self.sample_button = QPushButton(self.tr("Generate: sample"))
        self.sample_button.setObjectName("generateSample")
        self.sample_button.setToolTip(self.tr("Append a token drawn from the bars' distribution (Ctrl+Shift+Return); "
                                              "undo removes it (Ctrl+Z in this panel, Ctrl+Alt+Z anywhere)"))
        self.sample_button.clicked.connect(lambda: self.generate(greedy=False))
        row.addWidget(self.sample_button)
        # Ctrl+Z (the window's Edit → Undo, everywhere outside a text box) removes a generated token
        for box in (self.temperature, self.top_k, self.top_p):
            box.valueChanged.connect(lambda _: self._submit_bars())
        self._logits_lane = self.lane(LOGITS_LANE)
        self._logits_lane.done.connect(self._on_logits)
        self._logits_lane.failed.connect(self._on_failed)
        self._bars_lane = self.lane(BARS_LANE)
        self._bars_lane.done.connect(self._on_bars)
        self._bars_lane.failed.connect(self._on_failed)
        self._generate_lane = self.lane(GENERATE_LANE)
        self._generate_lane.done.connect(self._on_generated)
        self._generate_lane.failed.connect(self._on_failed)
        # the bars' job is submitted as soon as the trace arrives (submitting costs the GUI nothing)
        controller.snapshotArrived.connect(self.show_snapshot)
        controller.modelChanged.connect(self._on_model_changed)
        self.set_model_connected(snapshots=False)
        self._show_empty()

    # ------------------------------------------------------------------ contract
    def trace(self):
        """The decoder trace on screen, or None (toy engine, MiniLM)."""
        snapshot = self.controller.snapshot
        if snapshot is None or snapshot.bert is None or snapshot.bert.next_token_logits is None:
            return None
        return snapshot.bert.trace

    def settings(self) -> dict:
        return {"temperature": self.temperature.value(), "top_k": self.top_k.value(), "top_p": self.top_p.value()}

    def show_snapshot(self, snapshot) -> None:
        trace = self.trace()
        if trace is None:
            self._show_empty()
            return
        if self._focus_last:
            self._focus_last = False
            self.controller.select(focus=trace.n - 1)  # the generated token: its row and its prediction
        ready = snapshot.bert.next_bars  # made with the trace: after the last token, plain sampling
        s = self.settings()
        if ready is not None and self.controller.focus == trace.n - 1 and len(ready["ids"]) == BARS \
                and ready["settings"] == (s["temperature"], s["top_k"], s["top_p"]):
            self._logits_lane.cancel()
            self._bars_lane.cancel()
            self.logits = {"trace": trace, "position": trace.n - 1, "logits": trace.next_token_logits}
            self._on_bars(ready)
            return
        self._submit_logits()

    def show_selection(self) -> None:
        trace = self.trace()
        if trace is not None and (self.logits is None or self.logits["trace"] is not trace
                                  or self.logits["position"] != self.controller.focus):
            self._submit_logits()

    # ------------------------------------------------------------------ jobs
    def _submit_logits(self) -> None:
        """One job: the focused position's logits and the bars of the current settings."""
        from ..jobs.decoder_view import next_token_logits, top_bars

        trace = self.trace()
        focus = min(self.controller.focus, trace.n - 1)
        s = self.settings()
        self._bars_lane.cancel()  # bars of the previous logits must not arrive after these
        self._logits_lane.submit(_logits_and_bars, next_token_logits, top_bars, self.controller.snapshot.model, trace,
                                 focus, BARS, s["temperature"], s["top_k"], s["top_p"])

    def _on_logits(self, value: dict) -> None:
        self.logits, bars = value
        self._on_bars(bars)

    def _submit_bars(self) -> None:
        from ..jobs.decoder_view import top_bars

        if self.logits is None or self.logits["trace"] is not self.trace():
            return
        s = self.settings()
        self._bars_lane.submit(_bars_for, top_bars, self.controller.snapshot.model, self.logits, BARS,
                               s["temperature"], s["top_k"], s["top_p"])

    def _on_bars(self, value: dict) -> None:
        trace = self.trace()
        if trace is None or value["trace"] is not trace or value["position"] != self.controller.focus:
            return  # made for another text or position: never shown
        self.bars = value
        self._paint()

    def _on_failed(self, error) -> None:
        self.note.setText(error_text(error))

    # ------------------------------------------------------------------ drawing
    def bar_pixels(self) -> int:
        """Height one bar needs: its token label's line and a gap."""
        return self.fontMetrics().height() + BAR_GAP  # the axis draws its ticks in the application's font

    def bars_that_fit(self) -> int:
        """How many bars the chart's height holds with their labels apart: BARS with the bottom axis,
        else as many as fit without it (at least MIN_BARS)."""
        row = self.bar_pixels()
        height = self.plot.height() - 8  # the plot's margins
        axis = self.plot.getAxis("bottom")
        with_axis = height - max(axis.height(), 40)
        if with_axis >= BARS * row:
            return BARS
        return max(MIN_BARS, min(BARS, height // row))

    def shown_count(self) -> int:
        """Bars on the chart now (0 when empty)."""
        return sum(label.isVisible() for label in self.labels)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt name
        from PySide6.QtCore import QEvent

        if watched is self.plot and event.type() == QEvent.Type.Resize and self.bars_that_fit() != self._fits:
            self._fits = self.bars_that_fit()
            if self.bars is not None:
                self._paint()
        return False

    def _on_model_changed(self, _model: str) -> None:
        if self.trace() is None:  # the note says whether a decoder is on its way
            self._show_empty()

    def _show_empty(self) -> None:
        self.bars = None
        self.logits = None
        self.bar_item.setOpts(x0=[], y=[], height=[], width=[])
        for label in self.labels:
            label.setVisible(False)
        self.plot.getAxis("left").setTicks([[], []])
        self.shown_label.setText("")
        self.greedy_button.setEnabled(False)
        self.sample_button.setEnabled(False)
        wanted = model_info(self.controller.model)
        if wanted.predicts_next_token:  # a decoder was chosen, its first picture is still being computed
            self.note.setText(fill(self.tr("Computing %1's predictions…"), QCoreApplication.translate("Model", wanted.title)))
            return
        self.note.setText(self.tr("Next-token predictions need a decoder: choose SmolLM2 in the Model toolbar, or "
                                  "File → Open model… for a GGUF file. MiniLM and the toy engine do not predict "
                                  "the next token."))

    def _paint(self) -> None:
        value = self.bars
        trace = value["trace"]
        computed = np.asarray(value["probabilities"], dtype=float)
        self._fits = self.bars_that_fit()
        probabilities = computed[: self._fits]  # the likeliest first: the first that fit, as computed
        count = len(probabilities)
        self.plot.showAxis("bottom", count == len(computed))
        self.shown_label.setText("" if count == len(computed)
                                 else fill(self.tr("top %1 of %2"), count, len(computed)))
        widths = probabilities
        brushes = [TOP_BRUSH] + [BAR_BRUSH] * (count - 1)
        self.bar_item.setOpts(x0=np.zeros(count), y=np.arange(count), height=np.full(count, 0.75), width=widths,
                              brushes=brushes)
        end = bar_axis_end(float(probabilities.max())) if count else 1.0
        while len(self.labels) < count:  # the labels are made once and reused (a TextItem costs ~1 ms to make)
            label = pg.TextItem("", color="#222", anchor=(0, 0.5))
            self.plot.addItem(label)
            self.labels.append(label)
        for i, label in enumerate(self.labels):
            label.setVisible(i < count)
            if i < count:
                p = probabilities[i]
                inside = label_inside(float(p), end)
                label.setText(f"{p:.1%}" if p >= 0.001 else f"{p:.2e}")
                label.setAnchor((1, 0.5) if inside else (0, 0.5))  # a long bar holds its label at its end
                label.setColor("#fff" if inside else "#222")
                label.setPos(float(p), i)
        self.plot.getAxis("left").setTicks([[(i, visible_text(text)) for i, text in enumerate(value["texts"][:count])], []])
        self.plot.setXRange(0, end, padding=0)
        self.plot.setYRange(-0.6, max(count, 1) - 0.4, padding=0)
        position = value["position"]
        context = trace.tokens[position].text
        note = fill(self.tr("After #%1 “%2” the model predicts (%3 of %4 tokens kept by top-k / top-p):"),
                    position, visible_text(context), value["kept"], trace.config.vocab_size)
        if position + 1 < trace.n:
            actual = trace.tokens[position + 1].text
            note += " " + fill(self.tr("the text goes on with “%1”."), visible_text(actual))
        self.note.setText(note)
        self.greedy_button.setEnabled(True)  # generating always appends at the end of the text
        self.sample_button.setEnabled(True)

    # ------------------------------------------------------------------ generating
    def generate(self, greedy: bool = True) -> None:
        """Append one token to the text (the most likely, or sampled); undo removes it."""
        from ..jobs.decoder_view import generated_text

        trace = self.trace()
        if trace is None:
            return
        c = self.controller
        if (c.model, c.config.text) != (c.snapshot.model, trace.text):
            # the text or the model changed since this trace was computed: its token would land on another text
            self.note.setText(self.tr("Not generated: the text or the model changed; generate again once the "
                                      "new result is on screen."))
            return
        s = self.settings()
        self._generating_for = (c.snapshot.model, trace.text)
        self._generate_lane.submit(generated_text, c.snapshot.model, trace, greedy,
                                   s["temperature"], s["top_k"], s["top_p"], None)

    def _on_generated(self, text: str) -> None:
        # the token applies only to the text and model it was computed for: text typed
        # after Generate is never overwritten, and another model never gets SmolLM2's token
        target, self._generating_for = getattr(self, "_generating_for", None), None
        if target != (self.controller.model, self.controller.config.text):
            self.note.setText(self.tr("The generated token was dropped: the text or the model changed while it "
                                      "was computed."))
            return
        self._focus_last = True
        self.controller.update_config(text=text)


def _logits_and_bars(next_token_logits, top_bars, model: str, trace, position: int, k: int, temperature: float,
                     top_k: int, top_p: float) -> tuple[dict, dict]:
    """Worker job: the logits of ``position`` and their bars."""
    logits = next_token_logits(model, trace, position)
    return logits, _bars_for(top_bars, model, logits, k, temperature, top_k, top_p)


def _bars_for(top_bars, model: str, logits: dict, k: int, temperature: float, top_k: int, top_p: float) -> dict:
    """Worker job: the bars of ``logits`` with the trace and position they were made for."""
    value = top_bars(model, logits["logits"], k, temperature, top_k, top_p)
    value.update(trace=logits["trace"], position=logits["position"])
    return value


def bar_axis_end(largest: float) -> float:
    """The probability axis' end: room after the longest bar for its label, never past 1 (a probability
    axis running to 1.2 reads as a mistake); at least 0.05 so tiny bars stay visible."""
    return min(max(largest * 1.25, 0.05), 1.0)


def label_inside(probability: float, end: float) -> bool:
    """Whether a bar's label goes inside its end: the room after it (a fifth of the axis) is too short."""
    return probability > 0.8 * end


def visible_text(text: str) -> str:
    """A piece as the bars show it: a leading space as '␣', a newline as '↵'."""
    return text.replace("\n", "↵").replace(" ", "␣")
