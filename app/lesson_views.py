"""The Lessons menu's three views of issue 24's leftovers, hooked into a window without editing it.

app/window.py needs one line after its Lessons menu is built:
``lesson_views.add_lesson_views(self, lessons)`` (``from . import lesson_views``). Each action
builds its dialog once, non-modal, owned by the window:
- GPU against RNN (seed 000, 0.26): app/parallel_view.py;
- the paper's diagram (seed 001, 1.9): app/diagram_view.py, its boxes open the player's stages;
- the Netflix sum (seed 001, 1.40): app/movie_sum_view.py.
"""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QAction


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 - the marker lupdate looks for
    return text


TITLES = (  # the menu entries, marked for lupdate, translated when the menu is built
    QT_TRANSLATE_NOOP("LessonViews", "&GPU against RNN: one product or n steps…"),
    QT_TRANSLATE_NOOP("LessonViews", "The paper's &diagram, from the player's stages…"),
    QT_TRANSLATE_NOOP("LessonViews", "The &Netflix sum: weights · V…"),
)


def _raise(dialog):
    dialog.show()
    dialog.raise_()
    return dialog


def show_parallel(window):
    if getattr(window, "parallel_dialog", None) is None:
        from .parallel_view import ParallelDialog

        window.parallel_dialog = ParallelDialog(window.controller.worker, window)
    return _raise(window.parallel_dialog)


def show_movie_sum(window):
    if getattr(window, "movie_sum_dialog", None) is None:
        from .movie_sum_view import MovieSumDialog

        window.movie_sum_dialog = MovieSumDialog(window.controller.worker, window)
    return _raise(window.movie_sum_dialog)


def show_diagram(window):
    """The diagram beside the player: a click opens the player at the box's stage, and the outline
    follows the player."""
    player = window.show_player()
    if getattr(window, "diagram_dialog", None) is None:
        from .diagram_view import DiagramDialog

        dialog = DiagramDialog(player.stage_names, window)
        dialog.stageRequested.connect(lambda index: window.show_player().set_stage(index))
        player.stageChanged.connect(dialog.set_current)
        window.diagram_dialog = dialog
    window.diagram_dialog.set_current(player.stage_index)
    return _raise(window.diagram_dialog)


def add_lesson_views(window, menu) -> list[QAction]:
    """Append the three actions to ``menu`` (the window's Lessons menu); returns them."""
    actions = []
    for title, slot in zip(TITLES, (show_parallel, show_diagram, show_movie_sum)):
        action = QAction(QCoreApplication.translate("LessonViews", title), window)
        action.triggered.connect(lambda _checked=False, slot=slot: slot(window))
        menu.addAction(action)
        actions.append(action)
    return actions
