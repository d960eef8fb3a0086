"""One menu entry as a QAction: for the command table (app/shell/menus.py) and for the menus
other modules fill (Model, Presets, the recent files)."""
from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence


def add_action(window, menu, text: str, slot, shortcut=None, tip: str = "") -> QAction:
    """One menu entry (also for the menus other modules fill: Model, Presets, the recent files)."""
    action = QAction(text, window)
    if shortcut:
        action.setShortcut(QKeySequence(shortcut))
    if tip:
        action.setStatusTip(tip)
        action.setToolTip(tip)
    action.triggered.connect(slot)
    menu.addAction(action)
    return action
