"""Word similarity in a real model: the cosine between words' input embeddings and between their
contextual vectors (seed 000/004: similar directions give large dot products — 狗 / 猫 close, 狗 / 汽车
far; 蛋糕 closer to 派 than to 键盘; in English MiniLM: cake / pie / keyboard).

Computed in the worker (app.jobs.trained.word_similarities); the toy engine's random embeddings have
no meaning to measure, so only the registry's pretrained models are offered.
"""
from __future__ import annotations

import re

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout,
    QWidget,
)

from engine.models import ENGLISH_MODEL, MODELS

from ..i18n import error_text
from ..text import fill
from .base import Panel

ENGLISH_WORDS = "cake pie keyboard dog cat car"
CHINESE_WORDS = "蛋糕 派 键盘 狗 猫 汽车"
MAX_WORDS = 12


def pretrained_models() -> list[str]:
    """Registry names of the models with trained weights (not the toy engine)."""
    return [name for name, entry in MODELS.items() if not entry.configurable]


class SimilarityPanel(Panel):
    """Words in, two cosine tables out (input embeddings; contextual vectors)."""

    NEEDS = {"configurable": False, "next_token_logits": False}  # an encoder's trained vectors

    def __init__(self, controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("similarityPanel")
        self.controller = controller
        self.result = None
        layout = QVBoxLayout(self)
        intro = QLabel(self.tr(
            "Cosine similarity of words in a trained model: 1 = same direction, 0 = unrelated. Input "
            "embeddings are the model's table (before any attention); contextual vectors are the last layer's "
            "output, for each word alone or as it stands in the sentence below."))
        intro.setWordWrap(True)
        layout.addWidget(intro)
        form = QFormLayout()
        self.model = QComboBox()
        self.model.setObjectName("similarityModel")
        for name in pretrained_models():  # the registry's title, translated (context "Model")
            self.model.addItem(QCoreApplication.translate("Model", MODELS[name].title), name)
        self.words = QLineEdit(ENGLISH_WORDS)
        self.words.setObjectName("similarityWords")
        self.words.setToolTip(self.tr("Words separated by spaces or commas (at most 12)"))
        self.sentence = QLineEdit()
        self.sentence.setObjectName("similaritySentence")
        self.sentence.setPlaceholderText(self.tr("empty: each word on its own"))
        form.addRow(self.tr("Model"), self.model)
        form.addRow(self.tr("Words"), self.words)
        form.addRow(self.tr("In the sentence"), self.sentence)
        layout.addLayout(form)
        row = QHBoxLayout()
        self.compute_button = QPushButton(self.tr("Compare"))
        self.compute_button.setObjectName("similarityCompute")
        row.addWidget(self.compute_button)
        self.status = QLabel()
        self.status.setWordWrap(True)
        row.addWidget(self.status, 1)
        layout.addLayout(row)
        self.tables = {}
        for key, title in (("static", self.tr("Input embeddings")), ("contextual", self.tr("Contextual vectors"))):
            layout.addWidget(QLabel(f"<b>{title}</b>"))
            table = QTableWidget()
            table.setObjectName(f"similarity_{key}")
            table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
            layout.addWidget(table, 1)
            self.tables[key] = table
        self._lane = self.lane("similarity")
        self._lane.done.connect(self._on_done)
        self._lane.failed.connect(self._on_failed)
        self.compute_button.clicked.connect(self.compute)
        self.words.returnPressed.connect(self.compute)
        self.sentence.returnPressed.connect(self.compute)
        self.model.currentIndexChanged.connect(self._on_model_changed)

    def show_snapshot(self, snapshot) -> None:  # the panel computes on request, not per snapshot
        pass

    def show_selection(self) -> None:
        pass

    def word_list(self) -> list[str]:
        return [w for w in re.split(r"[\s,，、]+", self.words.text()) if w][:MAX_WORDS]

    def _on_model_changed(self) -> None:
        english = self.model.currentData() == ENGLISH_MODEL
        if self.words.text() in (ENGLISH_WORDS, CHINESE_WORDS):
            self.words.setText(ENGLISH_WORDS if english else CHINESE_WORDS)

    def compute(self) -> None:
        from ..jobs.trained import word_similarities

        words = self.word_list()
        if len(words) < 2 or self.model.currentData() is None:
            self.status.setText(self.tr("Type at least two words."))
            return
        self.status.setText(self.tr("Computing…"))
        self._lane.submit(word_similarities, self.model.currentData(), words, self.sentence.text())

    def _on_done(self, result: dict) -> None:
        self.result = result
        words = result["words"]
        for key, table in self.tables.items():
            matrix = result[key]
            table.setRowCount(len(words))
            table.setColumnCount(len(words))
            table.setHorizontalHeaderLabels(words)
            table.setVerticalHeaderLabels(words)
            for i in range(len(words)):
                for j in range(len(words)):
                    value = float(matrix[i, j])
                    item = QTableWidgetItem(f"{value:.3f}")
                    item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                    shade = int(255 - 150 * max(0.0, min(1.0, value)))
                    item.setBackground(QColor(shade, shade, 255))
                    table.setItem(i, j, item)
            table.resizeColumnsToContents()
            table.resizeRowsToContents()  # every row visible: the dialog grows rather than scrolls
            height = table.horizontalHeader().height() + sum(table.rowHeight(i) for i in range(len(words)))
            table.setMinimumHeight(min(height + 2 * table.frameWidth(), 12 * 26))
        first = words[0]
        others = sorted(((float(result["static"][0, j]), words[j]) for j in range(1, len(words))), reverse=True)
        self.status.setText(fill(self.tr("Closest to “%1” by input embedding: “%2” (%3); farthest: “%4” (%5)."),
                                 first, others[0][1], f"{others[0][0]:.3f}", others[-1][1], f"{others[-1][0]:.3f}"))

    def _on_failed(self, error) -> None:
        self.status.setText(fill(self.tr("Could not compare: %1"), error_text(error)))
