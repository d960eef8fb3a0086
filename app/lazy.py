"""LazyPanel: a dock's content built the first time the dock is really on screen.

Hidden and tabbed-away panels cost nothing at start-up; a panel on screen at start is built
once the first result is on screen (the main heatmap first). When built after a result already
exists, the panel is brought up to date at once through the panel contract
(:class:`app.panels.base.Panel`: ``show_snapshot``).
"""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QVBoxLayout, QWidget


WAIT_AT_MOST_MS = 2000  # for the result on its way before building anyway


class LazyPanel(QWidget):
    """Placeholder that creates ``factory()`` on first show and holds it."""

    def __init__(self, panel_class, controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._panel_class = panel_class  # a Panel subclass, or a stand-in that imports it when called
        self._controller = controller
        self.panel: QWidget | None = None
        self._waiting = False  # for the first result, to be built after it
        self._when_built: list = []  # callbacks for then
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

    def build(self) -> QWidget:
        """The real panel, created now if it was not yet."""
        if self.panel is None:
            self.panel = self._panel_class(self._controller)
            self.layout().addWidget(self.panel)
            self._bring_up_to_date(self.panel)
            callbacks, self._when_built = self._when_built, []
            for callback in callbacks:
                callback(self.panel)
        return self.panel

    def build_soon(self, callback=None) -> None:
        """Build now, or once the result being computed is on screen: built in the turn of its arrival,
        the panel (the vector diffs: ~0.1–0.2 s) delayed the main heatmap's first paint, the start-up.
        ``callback(panel)`` runs when the panel exists."""
        if self.panel is not None:
            if callback is not None:
                callback(self.panel)
            return
        if callback is not None:
            self._when_built.append(callback)
        if self._controller.is_idle():
            self.build()
        elif not self._waiting:  # a result is on its way (or on screen but for the main heatmap)
            self._waiting = True
            for signal in (self._controller.snapshotChanged, self._controller.computeFailed):
                signal.connect(self._on_result, Qt.ConnectionType.SingleShotConnection)
            QTimer.singleShot(WAIT_AT_MOST_MS, self, self._on_result)  # a cancelled computation announces nothing

    def _on_result(self, _value=None) -> None:
        if self._waiting:  # (two signals and a timer: the later ones find nothing to do)
            self._waiting = False
            QTimer.singleShot(0, self, self.build)

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
            self.build_soon()
