"""View → Attention by words (word pieces rolled up into words), kept out of app/window.py; and
the model presets' index into the Presets menu (app/preset_opener.py opens every preset)."""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QAction, QKeySequence

from .presets import MODEL_PRESETS, menu_presets


def install_multilingual(window) -> QAction:
    """The View menu's checkable action, bound both ways to the controller's by-words switch."""
    controller = window.controller
    action = QAction(QCoreApplication.translate("MultilingualWindow", "Attention by &words"), window)
    action.setObjectName("byWordsAction")
    action.setCheckable(True)
    action.setChecked(controller.by_words)
    action.setShortcut(QKeySequence("Ctrl+Shift+W"))
    tip = QCoreApplication.translate("MultilingualWindow", "Roll word pieces up into words in the heatmap, head grid "
                                     "and layers overview")
    action.setStatusTip(tip)
    action.toggled.connect(controller.set_by_words)
    controller.byWordsChanged.connect(lambda on: action.isChecked() != on and action.setChecked(on))
    window.view_menu.addSeparator()
    window.view_menu.addAction(action)
    return action


def model_preset_index(index: int) -> int:
    """Entry ``index`` of MODEL_PRESETS as an index of the Presets menu."""
    return menu_presets().index(MODEL_PRESETS[index])
