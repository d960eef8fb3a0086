"""A closed window stops working at once, and the windows that replace it keep computing.

The cause of test teardowns that waited 60 s: an answer already queued when a window closed was still
delivered, and its panel chained a follow-up job onto the stopped worker, pending for ever (and
holding the closed window's arrays). The user never sees the closed window; the windows a user does
see after a language switch or an opened session have a live worker of their own (checked here too).
"""
import time

import pytest
from PySide6.QtWidgets import QApplication

pytestmark = pytest.mark.slow  # a whole window a test


def test_an_answer_in_flight_at_close_starts_no_job(window, qtbot):
    c = window.controller
    window.panel("arithmetic")
    c.select(focus=max(0, c.focus - 1) if c.focus else 1)  # a new explanation, then its value cell
    assert c.worker.wait_until_idle(30)  # the explanation's answer is emitted, still in the event queue
    window.close()
    QApplication.processEvents()  # delivered now, after the close
    assert c.worker.is_idle(), f"the closed window queued {[job[0].name for job in c.worker._pending.values()]}"
    started = time.monotonic()
    assert c.worker.wait_until_idle(5) and time.monotonic() - started < 1


def _edit_computes(window, qtbot, text: str) -> None:
    window.panels["input"].text.setPlainText(text)  # as typed: debounced, then computed in the worker
    assert window.wait_until_idle(30), "the window stopped computing"
    shown = "".join(token.text for token in window.controller.snapshot.result.tokens)
    assert shown == text.replace(" ", ""), (shown, text)


def test_the_window_after_a_language_switch_computes(window, qtbot):
    import app.i18n as i18n

    chinese = window.switch_language(i18n.CHINESE)
    try:
        assert chinese is not window and chinese.controller.worker.is_alive()
        assert chinese.wait_until_idle(30)
        _edit_computes(chinese, qtbot, "the cat sat on the warm mat")
    finally:
        chinese.close()
        i18n.install_translator(QApplication.instance(), i18n.ENGLISH)


def test_the_window_after_opening_a_session_computes(window, qtbot, tmp_path):
    path = tmp_path / "s.json"
    assert window.save_session(str(path))
    window.open_session_in_background(str(path))  # the menu's way: through the session lane
    assert window.wait_until_idle(30)
    qtbot.waitUntil(lambda: window.windowTitle().startswith("s.json"), timeout=30000)
    _edit_computes(window, qtbot, "a session was opened and the text edited")
