"""Across languages: one word in each of two sentences, in any languages, in a real model.

苹果 in 苹果很好吃 against apple in "Apples are delicious" (or 苹果 in 苹果发布了新手机): the cosine
between the two words' vectors at the embeddings and after every layer (a word's vector is the
mean of its pieces), and the two words' attention rows by words side by side for the layer and
head the window shows. Sentence A is the window's sentence; computed in the worker (lane
"words-compare", only its latest answer arrives). For the toy engine the Comparison tab is the
one to use.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from ..controller import Controller
from ..heatmap import WEIGHTS_MAP, HeatmapView
from ..i18n import error_text
from ..text import fill
from .base import Panel

LANE = "words-compare"
# When A is one of the seeds' sentences and B is empty: the other sentence and the words to compare.
DEFAULT_PAIRS = {
    "苹果很好吃": ("苹果", "Apples are delicious.", "apple"),
    "苹果发布了新手机": ("苹果", "苹果很好吃", "苹果"),
    "Apples are delicious.": ("apple", "苹果很好吃", "苹果"),
}


class WordsComparePanel(Panel):
    """Sentence B and a word in each; cosine curve over layers; the two words' attention rows."""

    # every kind (the panel contract); the toy engine's sentences are compared in the Comparison tab

    def show_snapshot(self, snapshot) -> None:
        self.request()

    def show_selection(self) -> None:
        self._show_rows()

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("wordsComparePanel")
        self.controller = controller
        self.value: dict | None = None
        self._requested: tuple | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        form = QHBoxLayout()  # one line: word in A · sentence B · word in B
        form.addWidget(QLabel(self.tr("Word in A")))
        self.word_a = QLineEdit()
        self.word_a.setObjectName("wordsCompareWordA")
        self.word_a.setPlaceholderText(self.tr("e.g. 苹果"))
        self.word_a.setToolTip(self.tr("A word of the window's sentence (sentence A)"))
        form.addWidget(self.word_a, 1)
        form.addWidget(QLabel(self.tr("Sentence B")))
        self.text_b = QLineEdit()
        self.text_b.setObjectName("wordsCompareTextB")
        self.text_b.setPlaceholderText(self.tr("any sentence, any language, e.g. Apples are delicious."))
        form.addWidget(self.text_b, 4)
        form.addWidget(QLabel(self.tr("Word in B")))
        self.word_b = QLineEdit()
        self.word_b.setObjectName("wordsCompareWordB")
        self.word_b.setPlaceholderText(self.tr("e.g. apple"))
        form.addWidget(self.word_b, 1)
        layout.addLayout(form)
        self.status = QLabel()
        self.status.setObjectName("wordsCompareStatus")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)

        row = QHBoxLayout()
        self.curve = pg.PlotWidget()
        self.curve.setObjectName("wordsCompareCurve")
        self.curve.setBackground("w")
        self.curve.setLabel("bottom", self.tr("layer (0 = embeddings)"))
        self.curve.setLabel("left", self.tr("cosine"))
        self.curve.showGrid(x=True, y=True, alpha=0.3)
        self.curve.setMouseEnabled(x=False, y=False)
        self.curve.setMinimumHeight(150)
        row.addWidget(self.curve, 2)
        self.row_a = HeatmapView(title=self.tr("A"), colorbar=False)
        self.row_a.setObjectName("wordsCompareRowA")
        self.row_b = HeatmapView(title=self.tr("B"), colorbar=True)
        self.row_b.setObjectName("wordsCompareRowB")
        for view in (self.row_a, self.row_b):
            view.setMinimumHeight(120)
            row.addWidget(view, 2)
        layout.addLayout(row, 1)

        self._timer = QTimer(self, singleShot=True, interval=250)  # typing pause before asking the worker
        self._timer.timeout.connect(self.request)
        for edit in (self.word_a, self.text_b, self.word_b):
            edit.textEdited.connect(lambda _text: self._timer.start())
        self._lane = self.lane(LANE)
        self._lane.done.connect(self._on_compared)
        self._lane.failed.connect(self._on_failed)
        self.set_model_connected()
        if controller.snapshot is not None:
            self.request()

    def set_words(self, word_a: str, text_b: str, word_b: str) -> None:
        """Fill the three boxes (presets, tests) and compare."""
        self.word_a.setText(word_a)
        self.text_b.setText(text_b)
        self.word_b.setText(word_b)
        self.request()

    def _key(self) -> tuple:
        snapshot = self.controller.snapshot
        return (snapshot.model, snapshot.result.config.text, self.word_a.text(), self.text_b.text(), self.word_b.text())

    def request(self) -> None:
        snapshot = self.controller.snapshot
        if snapshot is None or snapshot.bert is None:
            self._lane.cancel()
            self.status.setText(self.tr("Choose a pretrained model (toolbar: Model), e.g. multilingual-e5-small, to "
                                        "compare a word across sentences and languages; the toy engine's sentences "
                                        "are compared in the Comparison tab."))
            return
        text_a = snapshot.result.config.text
        if not self.text_b.text().strip() and text_a.strip() in DEFAULT_PAIRS:
            word_a, text_b, word_b = DEFAULT_PAIRS[text_a.strip()]
            self.word_a.setText(self.word_a.text() or word_a)
            self.text_b.setText(text_b)
            self.word_b.setText(self.word_b.text() or word_b)
        if not (self.word_a.text().strip() and self.text_b.text().strip() and self.word_b.text().strip()):
            self._lane.cancel()
            self.status.setText(self.tr("Type a word of sentence A, a sentence B in any language and a word of it "
                                        "(苹果 · Apples are delicious. · apple)."))
            return
        key = self._key()
        if key == self._requested:
            return
        self._requested = key
        self._lane.submit(_compare, snapshot.model, text_a, self.word_a.text(), self.text_b.text(), self.word_b.text())

    def _on_failed(self, error) -> None:
        self._requested = None
        self.value = None
        self.status.setText(error_text(error))
        self.status.setStyleSheet("color: #c62828;")

    def _on_compared(self, value: dict) -> None:
        self.value = value
        self.status.setStyleSheet("")
        cosines = value["cosines"]
        word_a, word_b = value["words_a"][value["index_a"]], value["words_b"][value["index_b"]]
        self.status.setText(fill(self.tr("cos(“%1”, “%2”) layer by layer (a word's vector is the mean of its pieces): "
                                         "%3 at the embeddings, %4 after the last layer."), word_a, word_b,
                                 f"{cosines[0]:.3f}", f"{cosines[-1]:.3f}"))
        self.curve.clear()
        self.curve.plot(np.arange(len(cosines)), cosines, pen=pg.mkPen("#1565c0", width=2), symbol="o", symbolSize=6,
                        symbolBrush="#1565c0")
        self.curve.setYRange(min(0.0, float(cosines.min())), 1.0, padding=0.05)
        self.curve.setToolTip(" · ".join(f"{layer}: {c:.3f}" for layer, c in enumerate(cosines)))
        self._show_rows()

    def _show_rows(self) -> None:
        value = self.value
        if value is None:
            return
        layers, heads = value["rows_a"].shape[:2]
        layer, head = min(self.controller.layer, layers - 1), min(self.controller.head, heads - 1)
        row_a, row_b = value["rows_a"][layer, head][None, :], value["rows_b"][layer, head][None, :]
        top = max(float(row_a.max()), float(row_b.max()), 1e-6)
        for view, row, side in ((self.row_a, row_a, "a"), (self.row_b, row_b, "b")):
            words = list(value[f"words_{side}"])
            view.set_matrix(row, [words[value[f"index_{side}"]]], words, levels=(0.0, top), colormap=WEIGHTS_MAP)
        title = fill(self.tr("key word · layer %1, head %2"), layer, head)
        self.row_a.set_axis_titles("", title)
        self.row_b.set_axis_titles("", title)

    def rows_shown(self) -> tuple[np.ndarray, np.ndarray]:
        """The two attention rows on screen (tests)."""
        return self.row_a.matrix(), self.row_b.matrix()


def _compare(model_name, text_a, word_a, text_b, word_b):
    from ..jobs.words import compare_words

    return compare_words(model_name, text_a, word_a, text_b, word_b)
