"""The contract between the window and every panel: what the lazy loader and the window may call.

A panel shows the controller's snapshot and selection, says which models it can show by the
capabilities it needs (``NEEDS``, field names of engine/models/contract.py's Capabilities; never a
model's kind), and takes its worker lanes from :meth:`lane` (owned by
the panel, so they go with it). The base connects the controller's ``snapshotChanged`` and
``selectionChanged`` to :meth:`on_snapshot_changed` / :meth:`on_selection_changed` and disconnects
them when the panel goes (ndv's ``_set_model_connected``): a panel calls
``self.set_model_connected()`` once and overrides the two slots only where it does more than
``show_snapshot`` / ``show_selection``. The window calls ``show_snapshot`` once when a lazily built
panel first appears.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QScrollArea, QWidget

from engine.models import model_info
from engine.models.contract import Capabilities

from ..worker import Lane


class Panel(QWidget):
    """Base class of every dock's content; subclasses set ``self.controller`` first thing."""

    # capability → the value a model must have for this panel to show it; {} = every model
    NEEDS: dict[str, bool] = {}

    _room_watched: QWidget | None = None  # the room fit_room() follows, once the panel has been shown

    def room(self) -> QWidget | None:
        """The widget whose size is the room the panel has: its dock's scroll area's viewport (the
        parent while it sits in no scroll area)."""
        parent = self.parentWidget()
        while parent is not None and not isinstance(parent, QScrollArea):
            parent = parent.parentWidget()
        return parent.viewport() if parent is not None else self.parentWidget()

    def fit_room(self) -> None:
        """Lay the panel out for its room: run when it is shown and whenever the room is resized, for a
        panel that overrides it (the player, the positional lab, the input's settings)."""

    def showEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().showEvent(event)
        if type(self).fit_room is Panel.fit_room:
            return
        room = self.room()
        if room is not None and room is not self._room_watched:
            self._room_watched = room
            room.installEventFilter(self)
        self.fit_room()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt name
        if watched is self._room_watched and event.type() == QEvent.Type.Resize:
            self.fit_room()
        return False

    def show_snapshot(self, snapshot) -> None:
        """Bring the panel up to date with ``snapshot`` (the controller's current one)."""
        raise NotImplementedError

    def show_selection(self) -> None:
        """Show the controller's head, focused token and stage."""
        raise NotImplementedError

    @classmethod
    def supports(cls, capabilities: Capabilities) -> bool:
        return all(getattr(capabilities, name) == value for name, value in cls.NEEDS.items())

    def accepts(self, snapshot) -> bool:
        """Whether the panel can show ``snapshot``: it exists and its model has the capabilities NEEDS names.

        A panel given a snapshot it does not accept calls :meth:`clear` (a panel shows the
        current result or an honest empty state, never pieces of two models)."""
        return snapshot is not None and self.supports(model_info(snapshot.model).capabilities)

    def clear(self) -> None:
        """Drop every array of an earlier result and show the empty state (override where arrays are kept)."""

    def on_snapshot_changed(self, snapshot) -> None:
        """The controller's snapshotChanged, one event-loop turn a panel (Controller.deferred)."""
        self.show_snapshot(snapshot)

    def on_selection_changed(self) -> None:
        self.show_selection()

    def set_model_connected(self, connected: bool = True, *, snapshots: bool = True, selection: bool = True) -> None:
        """Connect (or disconnect) the controller's signals to this panel's two slots; they are
        disconnected by themselves when the panel is deleted (the deferred wrapper is a plain
        function Qt would otherwise keep calling). ``snapshots`` / ``selection``: which of the two."""
        controller = self.controller
        slots = getattr(self, "_model_slots", [])
        for signal, slot in slots:
            signal.disconnect(slot)
        slots.clear()
        if connected:
            if snapshots:
                slots.append((controller.snapshotChanged, controller.deferred(self.on_snapshot_changed)))
            if selection:
                slots.append((controller.selectionChanged, self.on_selection_changed))
            for signal, slot in slots:
                signal.connect(slot)
            if not hasattr(self, "_model_slots"):
                self.destroyed.connect(lambda _=None, held=slots: _disconnect(held))
        self._model_slots = slots

    def lane(self, name: str, *, long: bool = False) -> Lane:
        """A worker lane owned by this panel (see app.worker.Lane); ``long``: on the second thread."""
        return self.controller.worker.lane(name, self, long=long)


def _disconnect(slots: list) -> None:
    """The panel is gone: the plain-function slots (the deferred wrappers) leave the controller's
    signals; Qt already dropped the connections of the panel's own bound methods."""
    for signal, slot in slots:
        if not hasattr(slot, "__self__"):
            try:
                signal.disconnect(slot)
            except (RuntimeError, TypeError, SystemError):  # the controller went first
                pass
    slots.clear()
