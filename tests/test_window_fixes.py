"""Issue 11 and 16, the window: cancel keeps what you typed, panels never mix two models' arrays,
one focus everywhere, the debounce, stale answers, focus clamping, translated tooltips, exports."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication

from engine import AttentionConfig


def _words(n: int) -> str:
    return " ".join(f"w{i}" for i in range(n))


def test_esc_stops_the_computation_and_keeps_what_you_typed(window, qtbot):
    """Paste 2000 words, type " HELLO", Esc while computing: HELLO stays in the box and the settings."""
    editor = window.panels["input"].text
    window.controller.set_config(AttentionConfig(text=_words(2000), tokenizer="whitespace", d_model=512, heads=8),
                                 immediate=True)
    assert window.wait_until_idle(120)
    shown = window.controller.snapshot
    editor.setFocus()
    editor.moveCursor(QTextCursor.MoveOperation.End)
    editor.insertPlainText(" HELLO")
    qtbot.waitUntil(lambda: not window.controller.worker.is_idle(), timeout=10000)
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    QApplication.processEvents()
    assert editor.toPlainText().endswith(" HELLO")
    assert window.controller.config.text.endswith(" HELLO")
    window.controller.worker.wait_until_idle(120)
    QApplication.processEvents()
    assert window.controller.snapshot is shown  # the cancelled answer is dropped…
    assert editor.toPlainText().endswith(" HELLO")  # …and nothing reverts the text later
    assert window.controller.config.text.endswith(" HELLO")
