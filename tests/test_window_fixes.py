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


def _minilm_installed() -> bool:
    try:
        from engine.minilm import load_minilm

        load_minilm()
        return True
    except Exception:  # noqa: BLE001 - not installed: the test is skipped
        return False


def _idle(window, panel=None, timeout: float = 60.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        QApplication.processEvents()
        if window.controller.is_idle() and window.controller.worker.is_idle() and (panel is None or panel.is_idle()):
            QApplication.processEvents()
            if window.controller.is_idle() and window.controller.worker.is_idle():
                return
        time.sleep(0.005)
    raise AssertionError("not idle")


def test_no_panel_keeps_an_old_models_arrays(window, qtbot):
    """Scaling lab open, 10 tokens, switch to MiniLM and back: no exception, and each panel shows the
    current result or an empty state (issue 11 #3)."""
    import pytest

    if not _minilm_installed():
        pytest.skip("MiniLM not installed")
    import sys

    errors = []
    hook, sys.excepthook = sys.excepthook, lambda *info: errors.append(info)
    try:
        window.controller.set_config(window.controller.config.replace(
            text="one two three four five six seven eight nine ten", tokenizer="whitespace"), immediate=True)
        window.docks["scaling"].show()
        window.docks["scaling"].raise_()
        lab = window.panel("scaling")
        _idle(window, lab)
        assert lab.comparison is not None and lab.comparison.entropy_scaled.shape[1] == 10
        window.model_combo.setCurrentIndex(window.model_combo.findData("minilm"))
        _idle(window, lab)
        assert window.controller.snapshot.model == "minilm" and window.controller.snapshot.result.n == 12
        window.docks["scaling"].raise_()
        _idle(window, lab)
        window.controller.select(head=1)
        _idle(window, lab)
        assert lab.comparison is None, "the lab kept the toy sentence's comparison under MiniLM"
        for bars in lab.row_bars.values():
            assert len(bars.opts.get("height") if bars.opts.get("height") is not None else []) == 0
        layers = window.panel("layers")
        assert len(layers.thumbs) == 6
        compare = window.panel("compare")
        _idle(window, compare)
        assert compare.comparison is None, "the comparison kept a toy result under MiniLM"
        window.model_combo.setCurrentIndex(window.model_combo.findData("toy"))
        _idle(window, lab)
        window.docks["layers"].raise_()
        _idle(window, lab)
        assert window.controller.snapshot.model == "toy"
        assert layers.thumbs == [], "the MiniLM panel still shows the previous sentence's heatmaps"
        assert layers.pair_weights() is None and len(layers.curve.getData()[0] or []) == 0
        window.docks["scaling"].raise_()
        _idle(window, lab)
        assert lab.comparison is not None and lab.comparison.config == window.controller.snapshot.result.config
    finally:
        sys.excepthook = hook
    assert not errors, errors


def _red_chips(tokens) -> list[int]:
    """Chips drawn in the focus colour (#ff2d55), read from the pixels of the view."""
    from PySide6.QtGui import QColor

    QApplication.processEvents()
    # what is on screen: the window's backing store (offscreen platform), which keeps pixels nobody
    # repainted, not a fresh render of the view (grab() would repaint every chip from the model)
    viewport = tokens.chips.viewport()
    window = viewport.window()
    image = window.screen().grabWindow(window.winId()).toImage()
    scale = image.width() / max(window.width(), 1)
    origin = viewport.mapTo(window, viewport.rect().topLeft())
    red = []
    for row in range(tokens.count()):
        rect = tokens.visual_rect(row).translated(origin)
        rect = type(rect)(int(rect.left() * scale), int(rect.top() * scale), int(rect.width() * scale),
                          int(rect.height() * scale))
        hits = 0
        for x in range(rect.left() + 2, rect.right() - 1, 2):
            for y in range(rect.top() + 2, rect.bottom() - 1, 2):
                color = QColor(image.pixel(x, y))
                if abs(color.red() - 0xff) < 20 and abs(color.green() - 0x2d) < 30 and abs(color.blue() - 0x55) < 30:
                    hits += 1
        if hits >= 4:
            red.append(row)
    return red


def test_one_focused_chip_whatever_moved_the_focus(window, qtbot):
    """Two heatmap cells, Ctrl+Down twice, a comparison-table row: exactly one chip is drawn focused."""
    from PySide6.QtGui import QKeySequence

    tokens = window.panels["tokens"]
    window.controller.set_config(window.controller.config.replace(
        text="The animal didn't cross the street because it was too tired", tokenizer="whitespace"), immediate=True)
    assert window.wait_until_idle()
    window.resize(1366, 768)
    QApplication.processEvents()
    assert _red_chips(tokens) == [window.controller.focus]
    heatmap = window.panels["attention"].heatmap
    for query, key in ((2, 1), (5, 3)):
        heatmap.cellClicked.emit(query, key)
        QApplication.processEvents()
    assert window.controller.focus == 5
    assert _red_chips(tokens) == [5], "a chip focused earlier is still drawn focused"
    down = next(a for a in window.findChildren(type(window.undo_action)) if a.shortcut() == QKeySequence("Ctrl+Down"))
    down.trigger()
    down.trigger()
    assert window.controller.focus == 7
    assert _red_chips(tokens) == [7]
    window.controller.select(focus=1)  # what a comparison-table row does
    QApplication.processEvents()
    assert _red_chips(tokens) == [1]


import pytest  # noqa: E402

DAMAGED_STATES = {
    "seed 2**40": ('{"text": "hi", "seed": %d}' % 2**40, '{"head": 0}'),
    "nested junk": ("[" * 100_000 + "]" * 100_000, "{}"),
    "nested view": ('{"text": "hi"}', '{"head": ' + "[" * 50_000 + "]" * 50_000 + "}"),
    "huge string": ('{"text": "hi", "tokenizer": "' + "x" * 3_000_000 + '"}', "{}"),
    "over the size cap": ('{"text": "' + "x" * 17_000_000 + '"}', "{}"),
    "a 5000-digit number": ('{"text": "hi", "d_model": ' + "9" * 5000 + "}", "{}"),
    "memory budget": ('{"text": "hi", "memory_budget": 1, "heads": 1.5}', "{}"),
    "unknown model": ('{"text": "hi"}', '{"model": "gpt-9"}'),
    "not an object": ('"just text"', "{}"),
}


@pytest.mark.parametrize("name", list(DAMAGED_STATES))
def test_a_saved_state_that_fails_is_set_aside(qtbot, name):
    """Issue 10 #2: the app starts with the defaults, the bad state leaves QSettings' live keys, a
    message says so after the first picture, and the next start is clean."""
    from PySide6.QtCore import QSettings

    from app.window import MainWindow

    config_text, view_text = DAMAGED_STATES[name]
    settings = QSettings("AttentionExplorer", "AttentionExplorer")
    settings.setValue("lastConfig", config_text)
    settings.setValue("lastView", view_text)
    settings.sync()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    try:
        assert win.wait_until_idle(30)
        assert win.controller.config == AttentionConfig()
        assert "set aside" in win.statusBar().currentMessage()
        settings.sync()
        assert settings.value("lastConfig") is None and settings.value("lastView") is None
    finally:
        win.controller.worker.wait_until_idle(30)
        win.close()
    settings.sync()
    again = MainWindow()  # the state saved at that exit is the defaults: a clean start
    qtbot.addWidget(again)
    try:
        assert again.startup_notice == ""
    finally:
        again.controller.worker.wait_until_idle(30)
        again.close()


def test_a_good_saved_state_is_restored(qtbot):
    from PySide6.QtCore import QSettings

    from app.window import MainWindow

    settings = QSettings("AttentionExplorer", "AttentionExplorer")
    settings.setValue("lastConfig", '{"text": "a b c d", "seed": %d, "heads": 2}' % (2**32 - 1))
    settings.setValue("lastView", '{"head": 1, "focus": 2, "stage": "scores"}')
    settings.sync()
    win = MainWindow()
    qtbot.addWidget(win)
    try:
        assert win.wait_until_idle(30)
        assert win.controller.config.seed == 2**32 - 1 and win.controller.config.text == "a b c d"
        assert (win.controller.head, win.controller.focus, win.controller.stage) == (1, 2, "scores")
        assert win.startup_notice == ""
    finally:
        win.controller.worker.wait_until_idle(30)
        win.close()
