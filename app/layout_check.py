"""What the window cuts off: panels that scroll in their dock, and plots drawn past their widget.

Why: screenshots at 1366 × 768, 1024 × 600 and 1920 × 1080, "nothing cut".
Looking at PNGs finds a cut once; this finds it in every test run. A dock's panel sits in a scroll
area (app/window.py ``_scrolling``): a scroll bar on a shown dock means part of the panel is off
screen. A pyqtgraph view whose items need more room than the widget has draws its axes, tick
labels and colour bars past the widget's edge, where they are clipped: its items' rectangles are
compared with the view's.

Used by scripts/layout_screenshots.py (printed beside every screenshot) and tests/app/shell/test_layout_fit.py.
"""
from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QAbstractScrollArea, QDockWidget, QScrollArea, QWidget

SLACK = 1.5  # px: rounding of pyqtgraph's float geometry


def shown_docks(window) -> dict[str, QDockWidget]:
    """Docks on screen now: visible, docked or floating, and the tab on top of their tab group."""
    return {key: dock for key, dock in window.docks.items()
            if dock.isVisible() and not dock.visibleRegion().isEmpty()}


def dock_scrolls(dock: QDockWidget) -> list[str]:
    """"sideways" and/or "up and down" when the dock's panel is larger than the dock shows."""
    scroll = dock.widget()
    if not isinstance(scroll, QScrollArea):
        return []
    found = []
    if scroll.horizontalScrollBar().isVisible() and scroll.horizontalScrollBar().maximum() > 0:
        found.append("sideways")
    if scroll.verticalScrollBar().isVisible() and scroll.verticalScrollBar().maximum() > 0:
        found.append("up and down")
    return found


def _visible_in(widget: QWidget, root: QWidget) -> bool:
    """``widget`` and all its parents up to ``root`` are shown (a hidden tab's views are not)."""
    while widget is not None and widget is not root:
        if widget.isHidden():
            return False
        widget = widget.parentWidget()
    return True


def clipped_items(view) -> list[str]:
    """Names of a pyqtgraph view's axes, titles and colour bars that lie past the view's edges.

    ``view`` is a pg.GraphicsView (PlotWidget, GraphicsLayoutWidget): its scene's layout takes at
    least its items' minimum sizes, and what does not fit is drawn outside the viewport."""
    import pyqtgraph as pg

    from figures.token_axis import ColourBar

    viewport = view.viewport()
    if viewport is None or viewport.width() <= 0 or viewport.height() <= 0:
        return []
    visible = QRectF(view.mapToScene(viewport.rect()).boundingRect()).adjusted(-SLACK, -SLACK, SLACK, SLACK)
    found = []
    for item in view.scene().items():
        if not item.isVisible() or not isinstance(item, (pg.AxisItem, pg.LabelItem, pg.ColorBarItem, ColourBar)):
            continue
        if isinstance(item, pg.LabelItem) and not item.text:
            continue
        if isinstance(item, pg.AxisItem) and item.parentItem() is not None \
                and isinstance(item.parentItem(), (pg.ColorBarItem, ColourBar)):
            continue  # the colour bar's own axis is checked with the bar
        rect = item.mapRectToScene(item.rect())  # its layout cell (boundingRect adds the labels' overhang)
        if rect.width() <= 0 or rect.height() <= 0:
            continue
        if not visible.contains(rect):
            name = type(item).__name__
            if isinstance(item, pg.AxisItem):
                name = f"{item.orientation} axis"
            elif isinstance(item, pg.LabelItem):
                name = f"title “{item.text}”"
            found.append(f"{name} at {_rect_text(rect)} outside {_rect_text(visible)}")
    return found


def _size_text(size) -> str:
    return f"{size.width()}×{size.height()}"


def _rect_text(rect: QRectF) -> str:
    return f"({rect.left():.0f}, {rect.top():.0f})–({rect.right():.0f}, {rect.bottom():.0f})"


def clipped_children(panel: QWidget) -> list[str]:
    """Shown child widgets of ``panel`` that reach past its right or bottom edge (a layout given
    less than its minimum squeezes nothing: it lets the last widgets overflow)."""
    found = []
    bounds = panel.rect()
    for child in panel.findChildren(QWidget):
        if not _visible_in(child, panel) or child.width() <= 0 or child.height() <= 0:
            continue
        if isinstance(child.parentWidget(), QAbstractScrollArea) or _inside_scroll_area(child, panel):
            continue  # a table's or text box's own contents scroll by design
        top_left = child.mapTo(panel, child.rect().topLeft())
        right, bottom = top_left.x() + child.width(), top_left.y() + child.height()
        if right > bounds.right() + 2 or bottom > bounds.bottom() + 2:
            name = child.objectName() or type(child).__name__
            found.append(f"{name} ends at ({right}, {bottom}) past {bounds.width()}×{bounds.height()}")
    return found


def _inside_scroll_area(widget: QWidget, root: QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None and parent is not root:
        if isinstance(parent, QAbstractScrollArea) and not isinstance(parent.parentWidget(), QDockWidget):
            return True
        parent = parent.parentWidget()
    return False


def cut_report(window) -> dict[str, list[str]]:
    """dock key → what is cut in it, for every dock shown now (docks with nothing cut left out)."""
    import pyqtgraph as pg

    report: dict[str, list[str]] = {}
    for key, dock in shown_docks(window).items():
        scroll = dock.widget()
        problems = [f"the panel scrolls {way} (needs {_size_text(scroll.widget().minimumSize())}, "
                    f"has {_size_text(scroll.viewport().size())})" for way in dock_scrolls(dock)]
        panel = window.panels[key]
        built = getattr(panel, "panel", None) if hasattr(panel, "build") else panel
        if built is not None:
            for view in built.findChildren(pg.GraphicsView):
                if _visible_in(view, built) and view.width() > 0:
                    problems += [f"{view.objectName() or type(view).__name__}: {item}" for item in clipped_items(view)]
        if problems:
            report[key] = problems
    return report
