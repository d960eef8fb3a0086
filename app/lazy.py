"""LazyPanel: a dock's content built the first time the dock is really on screen.

Hidden and tabbed-away panels cost nothing at start-up; when built after a result already
exists, the panel is brought up to date at once through the panel contract
(:class:`app.panels.base.Panel`: ``show_snapshot``).
"""
from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QVBoxLayout, QWidget


class LazyPanel(QWidget):
    """Placeholder that creates ``factory()`` on first show and holds it."""

    def __init__(self, panel_class, controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._panel_class = panel_class  # a Panel subclass, or a stand-in that imports it when called
        self._controller = controller
        self.panel: QWidget | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

    def build(self) -> QWidget:
        """The real panel, created now if it was not yet."""
        if self.panel is None:
            self.panel = self._panel_class(self._controller)
            self.layout().addWidget(self.panel)
            self._bring_up_to_date(self.panel)
        return self.panel

    def _bring_up_to_date(self, panel) -> None:
        if self._controller.snapshot is not None:
            panel.show_snapshot(self._controller.snapshot)

    def supports(self, capabilities) -> bool:
        """Whether the panel (built or not) can show a model with these capabilities."""
        return self._panel_class.supports(capabilities)

    def on_visibility_changed(self, visible: bool) -> None:
        """Connected to the dock's visibilityChanged: fires for tab switches too (a tabbed-away
        dock is moved off-screen, not hidden, so showEvent is not enough)."""
        if visible:
            QTimer.singleShot(0, self._build_if_visible)

    def _build_if_visible(self) -> None:
        if self.panel is None and self.isVisible() and not self.visibleRegion().isEmpty():
            self.build()
