"""Widgets bound to values by one table (glue's ``autoconnect_callbacks_to_qt`` idea): a field
is named once, in its form's table, and read, written, watched and enabled through these three
functions, whatever its widget (combo box by item data, spin box, check box).
"""
from __future__ import annotations

from PySide6.QtWidgets import QAbstractButton, QComboBox, QWidget


def read(widget: QWidget):
    """The value the widget shows: a combo box's item data, a check box's state, a spin box's value."""
    if isinstance(widget, QComboBox):
        return widget.currentData()
    if isinstance(widget, QAbstractButton):
        return widget.isChecked()
    return widget.value()


def write(widget: QWidget, value) -> None:
    """Show ``value`` (a combo box selects the item whose data it is)."""
    if isinstance(widget, QComboBox):
        widget.setCurrentIndex(widget.findData(value))
    elif isinstance(widget, QAbstractButton):
        widget.setChecked(bool(value))
    else:
        widget.setValue(value)


def changed(widget: QWidget):
    """The signal the widget sends when the user changes its value."""
    if isinstance(widget, QComboBox):
        return widget.currentIndexChanged
    if isinstance(widget, QAbstractButton):
        return widget.toggled
    return widget.valueChanged
