"""Lessons → The Netflix sum (seed 001 item 1.40): weights · V as far as the tutorial's text goes.

engine.toy.movie_sum computes the two complete terms and their sum in the worker (lane
"movie-sum"); the dialog writes each term out and says what is missing (the text is cut off).
"""
from __future__ import annotations

from PySide6.QtWidgets import QDialog, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from engine.toy.movie_sum import movie_sum

from .i18n import error_text
from .text import fill

LANE = "movie-sum"


def _number(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


class MovieSumDialog(QDialog):
    """A table of weight × V row per movie, the partial sum, and what the cut-off text leaves out."""

    def __init__(self, worker, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("movieSumDialog")
        self.setWindowTitle(self.tr("The Netflix sum: weights · V (seed 001)"))
        self.result = None
        layout = QVBoxLayout(self)
        caption = QLabel(self.tr(
            "Seed 001: “attention weights are like your interest in each movie: maybe 25 % Star Wars (星球大战), "
            "20 % Interstellar (星际穿越), 10 % Chef (落魄大厨), and so on; the movies themselves (the V vectors) "
            "have their features.” The text is cut off after Interstellar's vector, so only these two terms can "
            "be added: the output row below is partial. V's columns: adventure (冒险), humour (幽默), minutes (分钟)."))
        caption.setWordWrap(True)
        layout.addWidget(caption)
        self.table = QTableWidget(0, 4)
        self.table.setObjectName("movieSumTable")
        self.table.setHorizontalHeaderLabels([self.tr("Movie"), self.tr("Weight"), self.tr("V row (冒险, 幽默, 分钟)"),
                                              self.tr("Weight × V row")])
        self.table.horizontalHeader().setStretchLastSection(True)
        layout.addWidget(self.table)
        self.sum_label = QLabel()
        self.sum_label.setObjectName("movieSumResult")
        self.sum_label.setWordWrap(True)
        layout.addWidget(self.sum_label)
        self._lane = worker.lane(LANE, self)
        self._lane.done.connect(self._on_computed)
        self._lane.failed.connect(lambda error: self.sum_label.setText(error_text(error)))
        self._lane.submit(movie_sum)
        self.resize(720, 360)

    def _on_computed(self, result) -> None:
        self.result = result
        vector = lambda values: "[" + ", ".join(_number(v) for v in values) + "]"  # noqa: E731
        self.table.setRowCount(len(result.titles) + len(result.missing))
        for row, title in enumerate(result.titles):
            texts = (title, _number(result.weights[row]), vector(result.values[row]), vector(result.terms[row]))
            for column, text in enumerate(texts):
                self.table.setItem(row, column, QTableWidgetItem(text))
        for offset, title in enumerate(result.missing):
            row = len(result.titles) + offset
            self.table.setItem(row, 0, QTableWidgetItem(title))
            self.table.setItem(row, 1, QTableWidgetItem(_number(result.missing_weights[offset])))
            self.table.setItem(row, 2, QTableWidgetItem(self.tr("cut off in the text")))
        self.table.resizeColumnsToContents()
        terms = " + ".join(f"{_number(w)}·{vector(v)}" for w, v in zip(result.weights, result.values))
        self.sum_label.setText(fill(self.tr(
            "Partial output row = %1 = %2: %3 adventure, %4 humour, %5 minutes, from %6 of the weight. Not an "
            "average and not a probability: the missing movies (%7 and the “and so on”) would add their terms; "
            "attention's output row is this sum over every movie, Σ weight × V row."),
            terms, vector(result.partial), _number(result.partial[0]), _number(result.partial[1]),
            _number(result.partial[2]), _number(result.covered), "、".join(result.missing)))
