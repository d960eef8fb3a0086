"""The exercises dialog: predict, then reveal (app/exercises.py holds the exercises and the checking).

The student types a row of numbers or clicks the word a head will look at; Reveal (Enter) shows
the engine's answer, the gap and the worked arithmetic, and can open the preset in the window
(its Worked arithmetic dock). Answers are computed in the worker (lane "lessons"), never here.
Keyboard: Enter reveals, PageUp / PageDown (or Alt+Left / Alt+Right) change the exercise.
"""
from __future__ import annotations

import html

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtGui import QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QButtonGroup, QComboBox, QDialog, QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QPushButton, QVBoxLayout,
    QWidget,
)

from .exercises import EXERCISES, InputError, check, parse_numbers, solve
from .text import fill

LANE = "lessons"


def _format(values) -> str:
    from .exercises import vector_label

    return vector_label(values)


class ExerciseDialog(QDialog):
    """One exercise at a time; ``openRequested(exercise)`` asks the window to open its preset."""

    openRequested = Signal(object)
    revealed = Signal(bool)  # right or not

    def __init__(self, worker, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("exerciseDialog")
        self.setWindowTitle(self.tr("Exercises: predict, then reveal"))
        self.solution = None
        self.verdict = None
        self._index = 0
        self._lane = worker.lane(LANE, self)
        self._lane.done.connect(self._on_solved)
        self._lane.failed.connect(lambda error: self.feedback.setText(str(error)))
        self.titles = (self.tr("小明 喜欢 苹果: the scores"), self.tr("softmax(8, 5, 7)"),
                       self.tr("What ÷√d_k does to a row"), self.tr("The masked row"),
                       self.tr("One head's output"), self.tr("K's last element (seed 001)"),
                       self.tr("Which word will the head look at?"))
        self._build()
        self.set_exercise(0)

    # ----------------------------------------------------------------- construction
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        self.previous_button = QPushButton(self.tr("◀ Previous"))
        self.previous_button.setAutoDefault(False)
        self.previous_button.clicked.connect(lambda: self.set_exercise(self._index - 1))
        self.combo = QComboBox()
        self.combo.setObjectName("exerciseCombo")
        self.combo.addItems([fill(self.tr("%1. %2"), i + 1, title) for i, title in enumerate(self.titles)])
        self.combo.currentIndexChanged.connect(self.set_exercise)
        self.next_button = QPushButton(self.tr("Next ▶"))
        self.next_button.setAutoDefault(False)
        self.next_button.clicked.connect(lambda: self.set_exercise(self._index + 1))
        for widget in (self.previous_button, self.combo, self.next_button):
            top.addWidget(widget)
        top.setStretch(1, 1)
        layout.addLayout(top)
        for keys, step in (((Qt.Key.Key_PageUp, "Alt+Left"), -1), ((Qt.Key.Key_PageDown, "Alt+Right"), 1)):
            for key in keys:
                shortcut = QShortcut(QKeySequence(key), self)
                shortcut.activated.connect(lambda s=step: self.set_exercise(self._index + s))
        self.question = QLabel()
        self.question.setObjectName("exerciseQuestion")
        self.question.setWordWrap(True)
        self.question.setTextFormat(Qt.TextFormat.PlainText)
        font = self.question.font()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        self.question.setFont(font)
        layout.addWidget(self.question)
        self.answer = QLineEdit()
        self.answer.setObjectName("exerciseAnswer")
        self.answer.setPlaceholderText(self.tr("numbers separated by commas or spaces, e.g. 0.5, 0.25, 0.25"))
        self.answer.returnPressed.connect(self.reveal)
        layout.addWidget(self.answer)
        self.cells = QWidget()
        self.cells.setObjectName("exerciseCells")
        self.cell_layout = QHBoxLayout(self.cells)
        self.cell_layout.setContentsMargins(0, 0, 0, 0)
        self.cell_group = QButtonGroup(self)
        self.cell_group.setExclusive(True)
        layout.addWidget(self.cells)
        row = QHBoxLayout()
        self.reveal_button = QPushButton(self.tr("Reveal"))
        self.reveal_button.setObjectName("exerciseReveal")
        self.reveal_button.setDefault(True)
        self.reveal_button.setToolTip(self.tr("Show the app's answer, your gap and the worked arithmetic (Enter)"))
        self.reveal_button.clicked.connect(self.reveal)
        self.open_button = QPushButton(self.tr("Open in the window"))
        self.open_button.setAutoDefault(False)
        self.open_button.setToolTip(self.tr("Load this example into the window, with its worked arithmetic"))
        self.open_button.clicked.connect(lambda: self.openRequested.emit(EXERCISES[self._index]))
        row.addWidget(self.reveal_button)
        row.addWidget(self.open_button)
        row.addStretch(1)
        layout.addLayout(row)
        self.feedback = QLabel()
        self.feedback.setObjectName("exerciseFeedback")
        self.feedback.setWordWrap(True)
        self.feedback.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.feedback)
        self.worked = QPlainTextEdit()
        self.worked.setObjectName("exerciseWorked")
        self.worked.setReadOnly(True)
        mono = QFont("DejaVu Sans Mono")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.worked.setFont(mono)
        self.worked.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        layout.addWidget(self.worked, 100)
        layout.addStretch(1)  # while the arithmetic is hidden, the question stays at the top
        for label in (self.question, self.feedback):
            label.setSizePolicy(label.sizePolicy().horizontalPolicy(), label.sizePolicy().Policy.Maximum)
        self.resize(720, 480)

    # ----------------------------------------------------------------- state
    @property
    def exercise(self):
        return EXERCISES[self._index]

    @property
    def index(self) -> int:
        return self._index

    def set_exercise(self, index: int) -> None:
        index = max(0, min(int(index), len(EXERCISES) - 1))
        self._index = index
        self.combo.blockSignals(True)
        self.combo.setCurrentIndex(index)
        self.combo.blockSignals(False)
        self.previous_button.setEnabled(index > 0)
        self.next_button.setEnabled(index < len(EXERCISES) - 1)
        self.solution = self.verdict = None
        self.question.setText(self.tr("Computing…"))
        self.answer.clear()
        self.feedback.clear()
        self.worked.clear()
        self.worked.setVisible(False)
        self.reveal_button.setEnabled(False)
        self._lane.submit(solve, self.exercise)

    def _on_solved(self, solution) -> None:
        if solution.exercise is not self.exercise:
            return
        self.solution = solution
        exercise = solution.exercise
        keys = ", ".join(solution.tokens)
        what = keys if exercise.array != "head_outputs" else str(len(solution.labels))
        self.question.setText(fill(QCoreApplication.translate("Exercises", exercise.question), exercise.focus, what))
        cell = exercise.kind == "cell"
        self.answer.setVisible(not cell)
        self.cells.setVisible(cell)
        for button in self.cell_group.buttons():
            self.cell_group.removeButton(button)
            button.deleteLater()
        if cell:
            for j, token in enumerate(solution.tokens):
                button = QPushButton(token)
                button.setCheckable(True)
                button.setAutoDefault(False)
                button.setObjectName(f"exerciseCell{j}")
                self.cell_group.addButton(button, j)
                self.cell_layout.addWidget(button)
            self.cell_group.buttons()[0].setFocus()
        else:
            self.answer.setFocus()
        self.reveal_button.setEnabled(True)

    def choose(self, key: int) -> None:
        """Click the word ``key`` (a "cell" exercise)."""
        self.cell_group.button(key).setChecked(True)

    def reveal(self) -> None:
        solution = self.solution
        if solution is None:
            return
        exercise = solution.exercise
        if exercise.kind == "cell":
            choice = self.cell_group.checkedId()
            if choice < 0:
                self.feedback.setText(html.escape(self.tr("Click the word you predict first.")))
                return
            verdict = check(solution, choice)
            yours = solution.tokens[choice]
            app = " / ".join(solution.tokens[j] for j in solution.best)
            detail = fill(self.tr("You: %1 · the app: %2 (weights %3) · gap %4"), yours, app,
                          _format(solution.answer), f"{verdict.largest_gap:.3f}")
        else:
            try:
                typed = parse_numbers(self.answer.text())
                verdict = check(solution, typed)
            except InputError:
                self.feedback.setText(html.escape(fill(self.tr("Type %1 numbers, e.g. 0.5, 0.25, 0.25 (−∞ and 70% "
                                                               "are understood)."), len(solution.answer))))
                return
            detail = fill(self.tr("You: %1 · the app: %2 · gap per number %3 (largest %4; within %5 counts as right)"),
                          _format(typed), _format(solution.answer), _format(verdict.gaps),
                          f"{verdict.largest_gap:.3f}", f"{exercise.tolerance:g}")
        self.verdict = verdict
        head = self.tr("Right!") if verdict.right else self.tr("Not quite.")
        colour = "#1a7f37" if verdict.right else "#b3261e"
        self.feedback.setText(f"<b style='color:{colour}'>{html.escape(head)}</b> {html.escape(detail)}")
        self.worked.setPlainText(self.tr("Worked arithmetic (the engine's numbers):") + "\n" + "\n".join(solution.worked))
        self.worked.setVisible(True)
        self.revealed.emit(verdict.right)


class LessonPathDialog(QDialog):
    """A tutorial's presets in order: title, short text, previous / next. ``stepRequested(preset index)``
    asks the window to open the step; ``position()`` is what the session keeps."""

    stepRequested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        from .lessons import LESSONS

        super().__init__(parent)
        self.setObjectName("lessonPathDialog")
        self.setWindowTitle(self.tr("Lesson path"))
        self._tutorial, self._step = LESSONS[0][0], 0
        layout = QVBoxLayout(self)
        self.tutorial_combo = QComboBox()
        self.tutorial_combo.setObjectName("lessonTutorial")
        for name, title, _fragments in LESSONS:
            self.tutorial_combo.addItem(QCoreApplication.translate("Lessons", title), name)
        self.tutorial_combo.currentIndexChanged.connect(
            lambda i: self.set_position(self.tutorial_combo.itemData(i), 0, open_step=True))
        layout.addWidget(self.tutorial_combo)
        self.counter = QLabel()
        self.counter.setObjectName("lessonCounter")
        layout.addWidget(self.counter)
        self.title = QLabel()
        self.title.setObjectName("lessonTitle")
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        layout.addWidget(self.title)
        self.text = QLabel()
        self.text.setObjectName("lessonText")
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.text, 1)
        row = QHBoxLayout()
        self.previous_button = QPushButton(self.tr("◀ Previous step"))
        self.previous_button.clicked.connect(lambda: self.set_position(self._tutorial, self._step - 1, open_step=True))
        self.next_button = QPushButton(self.tr("Next step ▶"))
        self.next_button.setDefault(True)
        self.next_button.clicked.connect(lambda: self.set_position(self._tutorial, self._step + 1, open_step=True))
        row.addWidget(self.previous_button)
        row.addStretch(1)
        row.addWidget(self.next_button)
        layout.addLayout(row)
        for keys, step in (((Qt.Key.Key_PageUp, "Alt+Left"), -1), ((Qt.Key.Key_PageDown, "Alt+Right"), 1)):
            for key in keys:
                shortcut = QShortcut(QKeySequence(key), self)
                shortcut.activated.connect(lambda s=step: self.set_position(self._tutorial, self._step + s, open_step=True))
        self.resize(560, 300)
        self.set_position(self._tutorial, 0)

    def position(self) -> dict:
        return {"tutorial": self._tutorial, "step": self._step}

    def set_position(self, tutorial: str, step: int, open_step: bool = False) -> None:
        """Show ``step`` of ``tutorial`` (clamped); ``open_step``: also ask the window to open its preset."""
        from .lessons import lesson_steps
        from .presets import TOY, translated

        steps = lesson_steps(tutorial)
        step = max(0, min(int(step), len(steps) - 1))
        self._tutorial, self._step = tutorial, step
        index = self.tutorial_combo.findData(tutorial)
        self.tutorial_combo.blockSignals(True)
        self.tutorial_combo.setCurrentIndex(index)
        self.tutorial_combo.blockSignals(False)
        preset = translated(TOY[steps[step]])
        self.counter.setText(fill(self.tr("Step %1 of %2"), step + 1, len(steps)))
        self.title.setText(preset.title)
        self.text.setText(preset.caption)
        self.previous_button.setEnabled(step > 0)
        self.next_button.setEnabled(step < len(steps) - 1)
        if open_step:
            self.stepRequested.emit(steps[step])
