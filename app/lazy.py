"""LazyPanel: a dock's content built the first time the dock is really on screen.

Hidden and tabbed-away panels cost nothing at start-up; when built after a result already
exists, the panel is brought up to date at once (its ``sync()``, ``refresh()`` or
``_on_snapshot_changed(snapshot)``, whichever it has).
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QVBoxLayout, QWidget


class LazyPanel(QWidget):
    """Placeholder that creates ``factory()`` on first show and holds it."""

    def __init__(self, factory: Callable[[], QWidget], controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._factory = factory
        self._controller = controller
        self.panel: QWidget | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

    def build(self) -> QWidget:
        """The real panel, created now if it was not yet."""
        if self.panel is None:
            self.panel = self._factory()
            self.layout().addWidget(self.panel)
            self._bring_up_to_date(self.panel)
        return self.panel

    def _bring_up_to_date(self, panel: QWidget) -> None:
        snapshot = self._controller.snapshot
        if snapshot is None:
            return
        for name in ("sync", "refresh"):
            method = getattr(panel, name, None)
            if callable(method):
                method()
                return
        method = getattr(panel, "_on_snapshot_changed", None)
        if callable(method):
            method(snapshot)

    def on_visibility_changed(self, visible: bool) -> None:
        """Connected to the dock's visibilityChanged: fires for tab switches too (a tabbed-away
        dock is moved off-screen, not hidden, so showEvent is not enough)."""
        if visible:
            QTimer.singleShot(0, self._build_if_visible)

    def _build_if_visible(self) -> None:
        if self.panel is None and self.isVisible() and not self.visibleRegion().isEmpty():
            self.build()
