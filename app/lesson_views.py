"""Three lesson views, opened from the Lessons menu (rows of app/shell/menus.py's COMMANDS). Each
builds its dialog once, non-modal, owned by the window, kept in ``window.navigation.lesson_views``:
- GPU against RNN (seed 000, 0.26): app/parallel_view.py;
- the paper's diagram (seed 001, 1.9): app/diagram_view.py, its boxes open the player's stages;
- the Netflix sum (seed 001, 1.40): app/movie_sum_view.py.
"""
from __future__ import annotations


def _raise(dialog):
    dialog.show()
    dialog.raise_()
    return dialog


def show_parallel(window):
    views = window.navigation.lesson_views
    if views.get("parallel") is None:
        from .parallel_view import ParallelDialog

        views["parallel"] = ParallelDialog(window.controller.worker, window)
    return _raise(views["parallel"])


def show_movie_sum(window):
    views = window.navigation.lesson_views
    if views.get("movie_sum") is None:
        from .movie_sum_view import MovieSumDialog

        views["movie_sum"] = MovieSumDialog(window.controller.worker, window)
    return _raise(views["movie_sum"])


def show_diagram(window):
    """The diagram beside the player: a click opens the player at the box's stage, and the outline
    follows the player."""
    player = window.show_player()
    views = window.navigation.lesson_views
    if views.get("diagram") is None:
        from .diagram_view import DiagramDialog

        dialog = DiagramDialog(player.stage_names, window)
        dialog.stageRequested.connect(lambda index: window.show_player().set_stage(index))
        player.stageChanged.connect(dialog.set_current)
        views["diagram"] = dialog
    views["diagram"].set_current(player.stage_index)
    return _raise(views["diagram"])

