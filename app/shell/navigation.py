"""Moving around: heads and tokens, the player, presets, lessons, exercises, the similarity view."""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication as Q
from PySide6.QtWidgets import QWidget


class Navigation:
    """The player, presets, lessons, exercises and the similarity view (each built on first use)."""

    def __init__(self, window) -> None:
        self.w = window
        self.preset_opener = None  # built by the first apply_preset (app/preset_opener.py)
        self.exercise_dialog = self.lesson_dialog = self.similarity_dialog = None
        self.lesson_views: dict = {}  # app/lesson_views.py's dialogs by key, each built on first use

    def step_head(self, delta: int) -> None:
        self.w.controller.select(head=self.w.controller.head + delta)

    def step_focus(self, delta: int) -> None:
        self.w.controller.select(focus=self.w.controller.focus + delta)

    def show_player(self):
        """Bring the step-through player to the front (building it if needed)."""
        self.w.docks["player"].show()
        self.w.docks["player"].raise_()
        return self.w.panel("player")

    def show_exercises(self):
        """The exercises dialog (app/lesson_dialog.py), non-modal, built once."""
        if getattr(self, "exercise_dialog", None) is None:
            from ..lesson_dialog import ExerciseDialog

            self.exercise_dialog = ExerciseDialog(self.w.controller.worker, self.w)
            self.exercise_dialog.openRequested.connect(self._open_exercise)
        self.exercise_dialog.show()
        self.exercise_dialog.raise_()
        return self.exercise_dialog

    def show_lesson_path(self):
        """The lesson path dialog; it opens each step's preset here and the session keeps where it is."""
        if getattr(self, "lesson_dialog", None) is None:
            from ..lesson_dialog import LessonPathDialog

            self.lesson_dialog = LessonPathDialog(self.w)
            self.lesson_dialog.stepRequested.connect(self._open_lesson_step)
            if self.w.lesson is not None:
                self.lesson_dialog.set_position(self.w.lesson["tutorial"], self.w.lesson["step"])
        self.lesson_dialog.show()
        self.lesson_dialog.raise_()
        return self.lesson_dialog

    def _open_lesson_step(self, index: int) -> None:
        self.w.lesson = self.lesson_dialog.position()
        self.apply_preset(index)

    def _open_exercise(self, exercise) -> None:
        """An exercise's example in the window, with the Worked arithmetic dock in front."""
        from ..exercises import preset_index

        self.apply_preset(preset_index(exercise))
        self.w.docks["arithmetic"].show()
        self.w.docks["arithmetic"].raise_()

    def show_similarity(self):
        """The word-similarity view (app/panels/similarity_panel.py) in a window of its own."""
        if getattr(self, "similarity_dialog", None) is None:
            from PySide6.QtWidgets import QDialog, QVBoxLayout

            from ..panels.similarity_panel import SimilarityPanel

            self.similarity_dialog = QDialog(self.w)
            self.similarity_dialog.setWindowTitle(Q.translate("MainWindow", "Word similarity"))
            QVBoxLayout(self.similarity_dialog).addWidget(SimilarityPanel(self.w.controller, self.similarity_dialog))
            screen = self.w.screen().availableGeometry()
            self.similarity_dialog.resize(min(680, screen.width()), min(700, screen.height() - 40))
        self.similarity_dialog.show()
        self.similarity_dialog.raise_()
        return self.similarity_dialog.findChild(QWidget, "similarityPanel")

    def apply_preset(self, index: int):
        """Open entry ``index`` of the Presets menu: settings or model, focus, head, stage and caption."""
        return self.opener().open(index)

    def opener(self):
        """The preset opener (app/preset_opener.py), built on first use."""
        if self.preset_opener is None:
            from ..preset_opener import PresetOpener

            self.preset_opener = PresetOpener(self.w.controller, self.w)
            self.preset_opener.captionChanged.connect(self.w.panels["attention"].show_preset_caption)
            self.preset_opener.compareRequested.connect(self._open_comparison)
            self.preset_opener.keyChosen.connect(lambda key: self.w.panel("layers").want_key(key))
            self.preset_opener.twoKeysFound.connect(self._show_two_keys)
        return self.preset_opener

    def adopt_preset(self, other: "Navigation") -> None:
        """The language switch: the preset open in ``other``'s window keeps its caption here, in the new language."""
        if other.preset_opener is not None and other.preset_opener.caption:
            self.opener().adopt(other.preset_opener)

    def _show_two_keys(self, value) -> None:
        """A preset that weighs its key against a rival: both layer × head grids, side by side, in Model layers."""
        self.w.docks["layers"].show()
        self.w.docks["layers"].raise_()
        self.w.panel("layers").show_two_keys(*value)

    def _open_comparison(self, words) -> None:
        """A preset about two sentences: the Across languages panel with its words."""
        self.w.docks["words"].show()
        self.w.docks["words"].raise_()
        self.w.panel("words").set_words(*words)

