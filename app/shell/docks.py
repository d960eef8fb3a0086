"""The docks: every panel in a scrolling QDockWidget, the default layout, lazy panels, and a
workaround for tab bars Qt leaves on screen."""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication as Q, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QFrame, QScrollArea, QWidget

from ..dock_table import DOCKS
from ..lazy import LazyPanel


class LazyClass:
    """A panel class imported only when its dock is first shown (start-up imports less)."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def resolve(self):
        import importlib

        return getattr(importlib.import_module(f"app.panels.{self.module}"), self.name)

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)

    def supports(self, capabilities) -> bool:
        return self.resolve().supports(capabilities)


def scrolling(widget: QWidget) -> QScrollArea:
    """``widget`` in a frameless scroll area: a panel shrinks down to its own minimum, then
    scrolls, so no panel's minimum size pushes the window past the screen."""
    scroll = QScrollArea()
    scroll.setObjectName("panelScroll")
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setWidget(PanelHolder(widget))
    return scroll


class PanelHolder(QWidget):
    """A panel's parent inside its scroll area, sized by the panel's minimum only.

    No layout on purpose: a panel with word-wrapped labels makes its layout report
    height-for-width, and QScrollArea then gives it the *preferred* height for the width, so it
    scrolled long before the panel reached its minimum size.
    """

    def __init__(self, panel: QWidget) -> None:
        super().__init__()
        self.setObjectName("panelHolder")
        self._panel = panel
        panel.setParent(self)
        self._follow_height_for_width()

    def _follow_height_for_width(self) -> None:
        """Word-wrapped rows need more height at a narrow width than the panel's minimum says; the
        scroll area asks the holder for its height at the width it has only when the holder's size
        policy says so (at 1024 × 600 and 1920 × 1080 the input's rows were squashed)."""
        layout = self._panel.layout()
        policy = self.sizePolicy()
        policy.setHeightForWidth(layout is not None and layout.hasHeightForWidth())
        self.setSizePolicy(policy)

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt name
        """The panel's *minimum* height at ``width`` (not its preferred one: panels scroll late)."""
        layout = self._panel.layout()
        minimum = self.minimumSizeHint().height()
        return max(minimum, layout.minimumHeightForWidth(width)) if layout is not None else minimum

    def minimumSizeHint(self):  # noqa: N802 - Qt name
        return self._panel.minimumSizeHint().expandedTo(self._panel.minimumSize())

    def sizeHint(self):  # noqa: N802 - Qt name
        return self.minimumSizeHint()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().resizeEvent(event)
        self._panel.setGeometry(self.rect())

    def event(self, event) -> bool:
        from PySide6.QtCore import QEvent

        if event.type() == QEvent.Type.LayoutRequest:  # the panel's minimum may have changed
            self._follow_height_for_width()
            self.updateGeometry()
            self.setMinimumSize(self.minimumSizeHint())
        return super().event(event)


class Docks:
    """The window's docks (``window.docks``) and their panels (``window.panels``), by key."""

    def __init__(self, window) -> None:
        self.w = window
        self._build_panels()

    def _add_dock(self, key: str, title: str, widget: QWidget, area) -> QDockWidget:
        """A dock around ``widget``, or around a LazyPanel when given a panel class."""
        if isinstance(widget, (type, LazyClass)):
            panel_class = widget
            widget = LazyPanel(panel_class, self.w.controller)
        dock = QDockWidget(title, self.w)
        dock.setObjectName(f"{key}Dock")
        dock.setWidget(scrolling(widget))
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetClosable | QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        self.w.addDockWidget(area, dock)
        dock.dockLocationChanged.connect(lambda _: QTimer.singleShot(0, self.hide_stale_tab_bars))
        if isinstance(widget, LazyPanel):
            dock.visibilityChanged.connect(widget.on_visibility_changed)
        self.w.panels[key], self.w.docks[key] = widget, dock
        return dock

    def _build_panels(self) -> None:
        """Default layout: settings and tokens left, the heatmap in the middle, the head grid and
        the arithmetic right, the vector diffs and the teaching views tabbed along the bottom.
        The docks and their panels come from app/dock_table.py; only the splits are written here."""
        c = self.w.controller
        areas = {"left": Qt.DockWidgetArea.LeftDockWidgetArea, "right": Qt.DockWidgetArea.RightDockWidgetArea,
                 "bottom": Qt.DockWidgetArea.BottomDockWidgetArea}
        for row in DOCKS:
            if row.eager:
                self._add_dock(row.key, Q.translate("MainWindow", row.title), LazyClass(row.module, row.panel)(c),
                               areas[row.area])
        attention = self.w.docks["attention"]
        # the left column (the form over the chips) runs down beside the bottom groups: under the top
        # row it had the height left over by the tallest group, and the toy's form scrolled at 1366 × 768
        self.w.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.w.splitDockWidget(attention, self.w.docks["heads"], Qt.Orientation.Horizontal)
        self.w.splitDockWidget(self.w.docks["heads"], self.w.docks["arithmetic"], Qt.Orientation.Vertical)
        self.w.splitDockWidget(self.w.docks["input"], self.w.docks["tokens"], Qt.Orientation.Vertical)
        # lazily built views (LazyPanel): nothing is made until their tab is opened
        lazy = [row for row in DOCKS if not row.eager]
        for row in lazy:
            self._add_dock(row.key, Q.translate("MainWindow", row.title), LazyClass(row.module, row.panel),
                           areas[row.area])
            if row.tab_with and row.area != "bottom":
                self.w.tabifyDockWidget(self.w.docks[row.tab_with], self.w.docks[row.key])
        for row in lazy:
            if row.tab_with and row.area == "bottom":
                self.w.tabifyDockWidget(self.w.docks[row.tab_with], self.w.docks[row.key])
        self.w.resizeDocks([self.w.docks["input"], attention, self.w.docks["heads"]], [330, 700, 420], Qt.Orientation.Horizontal)
        self.w.resizeDocks([attention, self.w.docks["diffs"]], [560, 380], Qt.Orientation.Vertical)
        self.w.docks["diffs"].raise_()
        self.w.docks["arithmetic"].raise_()
        self.w.panels["attention"].cellClicked.connect(lambda *_: self.w.docks["inspector"].raise_())
        self.w.panels["attention"].hoverMessage.connect(self.w.status.on_hover_message)
        from ..layout_sizes import keep_head_grid_whole

        # a grid of more rows (8+ heads, another model) gets the height they need once it is laid out
        self.w.panels["heads"].rowsChanged.connect(lambda: QTimer.singleShot(0, self.w, lambda: keep_head_grid_whole(self.w)))

    def hide_stale_tab_bars(self) -> None:
        """Hide tab bars Qt left on screen after tabifying or restoring docks.

        Seen here with Qt 6.10: when two groups of docks are tabbed before the first show, or a
        state is restored, an old QTabBar stays visible on top of a panel. A bar is kept when its
        tabs are exactly one dock group and it sits right below that group's visible dock.
        """
        from PySide6.QtWidgets import QTabBar

        by_title = {dock.windowTitle(): dock for dock in self.w.docks.values()}
        for bar in self.w.findChildren(QTabBar):
            if bar.parent() is not self.w or not bar.isVisible():
                continue
            titles = {bar.tabText(i) for i in range(bar.count())}
            first = by_title.get(bar.tabText(0)) if bar.count() else None
            group = [first] + self.w.tabifiedDockWidgets(first) if first is not None else []
            shown = [d for d in group if d.isVisible() and not d.visibleRegion().isEmpty()]
            placed = bool(shown) and abs(bar.geometry().top() - shown[0].geometry().bottom()) <= 12 and \
                bar.geometry().left() < shown[0].geometry().right() and bar.geometry().right() > shown[0].geometry().left()
            if titles != {d.windowTitle() for d in group} or not placed:
                bar.hide()

