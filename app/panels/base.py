"""The contract between the window and every panel: what the lazy loader and the window may call.

A panel shows the controller's snapshot and selection, says which kinds of model it can show
(``MODEL_KINDS``, engine.models kinds), and takes its worker lanes from :meth:`lane` (owned by
the panel, so they go with it). The controller's signals keep a built panel up to date; the
window calls ``show_snapshot`` once when a lazily built panel first appears.
"""
from __future__ import annotations

from PySide6.QtWidgets import QWidget

from engine.models import KINDS, model_info

from ..worker import Lane


class Panel(QWidget):
    """Base class of every dock's content; subclasses set ``self.controller`` first thing."""

    MODEL_KINDS: frozenset[str] = frozenset(KINDS)  # kinds of model whose results it can show

    def show_snapshot(self, snapshot) -> None:
        """Bring the panel up to date with ``snapshot`` (the controller's current one)."""
        raise NotImplementedError

    def show_selection(self) -> None:
        """Show the controller's head, focused token and stage."""
        raise NotImplementedError

    @classmethod
    def supports(cls, kind: str) -> bool:
        return kind in cls.MODEL_KINDS

    def accepts(self, snapshot) -> bool:
        """Whether the panel can show ``snapshot``: it exists and its model's kind is one of MODEL_KINDS.

        A panel given a snapshot it does not accept calls :meth:`clear` (issue 11: a panel shows the
        current result or an honest empty state, never pieces of two models)."""
        return snapshot is not None and self.supports(model_info(snapshot.model).kind)

    def clear(self) -> None:
        """Drop every array of an earlier result and show the empty state (override where arrays are kept)."""

    def lane(self, name: str, *, long: bool = False) -> Lane:
        """A worker lane owned by this panel (see app.worker.Lane); ``long``: on the second thread."""
        return self.controller.worker.lane(name, self, long=long)
