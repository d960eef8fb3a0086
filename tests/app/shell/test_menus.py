"""Menus and shortcuts as data (app/shell/menus.py): the menus, the shortcuts dialog and the
translation sources come from one table; undo and redo everywhere outside a text box."""
from __future__ import annotations

import ast
import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QTextBrowser

from tests import ROOT
from app.shell.menus import COMMANDS, MENUS, title_of
from tests.shared_helpers import typed_at_the_end



def _activate(window, qtbot) -> None:
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=30_000)


@pytest.mark.slow
def test_every_row_is_one_action_in_its_menu_with_its_keys(window):
    ids = [command.id for command in COMMANDS]
    assert len(ids) == len(set(ids)), "a command id twice"
    for command in COMMANDS:
        action = window.command_actions[command.id]
        assert action.objectName() == command.id
        assert action in window.menus[command.menu].actions(), command.id
        assert action.text() == title_of(command)
        assert [key.toString() for key in action.shortcuts()] == [QKeySequence(key).toString() for key in command.keys]
    menu_titles = [action.text() for action in window.menuBar().actions()]
    assert menu_titles == [window.menus[key].title() if key in window.menus else "&Model" for key in MENUS]


@pytest.mark.slow
def test_the_shortcuts_dialog_lists_every_command_with_keys(window):
    window.help.shortcuts()
    text = window.help.dialog.findChild(QTextBrowser, "helpText").toPlainText()
    window.help.dialog.close()
    for command in COMMANDS:
        if command.keys:
            title = title_of(command).replace("&", "")
            keys = window.command_actions[command.id].shortcuts()[0].toString(QKeySequence.SequenceFormat.NativeText)
            assert re.search(re.escape(title) + r"\s+" + re.escape(keys), text), (title, keys)
    assert "Attention by words" in text  # and the commands other modules add (View → Attention by words)


def test_every_title_and_tip_is_a_translation_source_of_the_window():
    """lupdate reads QT_TRANSLATE_NOOP("MainWindow", …): every title and tip of the table is marked
    so in the source (a row whose text is a plain string would never be translated)."""
    tree = ast.parse((ROOT / "app" / "shell" / "menus.py").read_text(encoding="utf-8"))
    marked = {node.args[1].value for node in ast.walk(tree)
              if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "QT_TRANSLATE_NOOP"
              and isinstance(node.args[0], ast.Constant) and node.args[0].value == "MainWindow"}
    for command in COMMANDS:
        assert command.title in marked and (not command.tip or command.tip in marked), command.id
    assert {title for title in MENUS.values() if title} <= marked


@pytest.mark.slow
def test_undo_and_both_redos_outside_a_text_box_and_the_box_keeps_its_own(window, qtbot):
    _activate(window, qtbot)
    c = window.controller
    c.update_config(heads=2)
    assert window.wait_until_idle(30) and c.config.heads == 2
    assert window.command_actions["edit.undo"].isEnabled() and not window.command_actions["edit.redo"].isEnabled()
    window.model_combo.setFocus()  # a combo box: not a text box
    QApplication.processEvents()
    control, shift = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier
    for key, modifiers, heads in ((Qt.Key.Key_Z, control, 4), (Qt.Key.Key_Z, control | shift, 2),
                                  (Qt.Key.Key_Z, control, 4), (Qt.Key.Key_Y, control, 2)):
        qtbot.keyClick(window.model_combo, key, modifiers)
        assert window.wait_until_idle(30)
        assert c.config.heads == heads, (key, modifiers)
    assert window.command_actions["edit.undo"].isEnabled() and not window.command_actions["edit.redo"].isEnabled()
    # the text box: Ctrl+Z and Ctrl+Shift+Z undo and redo its typing, the settings stay
    box = window.panels["input"].text
    typed = typed_at_the_end(qtbot, box, "x")
    qtbot.keyClick(box, Qt.Key.Key_Z, control)
    assert box.toPlainText() == typed
    qtbot.keyClick(box, Qt.Key.Key_Z, control | shift)
    assert box.toPlainText() == typed + "x"
    assert window.wait_until_idle(30) and c.config.heads == 2
