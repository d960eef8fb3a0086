"""Small helpers several test files share (``from tests.shared_helpers import …``)."""
from __future__ import annotations

import subprocess
import sys
import time

import numpy as np

from tests import ROOT

MAIN = str(ROOT / "main.py")


def main_in_a_process(*args: str, timeout: float) -> subprocess.CompletedProcess:
    """``python main.py args…`` in a new process, as a user types it; its output captured as text."""
    return subprocess.run([sys.executable, MAIN, *args], capture_output=True, text=True, timeout=timeout)


def wait_for(condition, timeout: float = 60.0) -> None:
    """Process Qt events until ``condition()`` holds; AssertionError after ``timeout`` seconds."""
    from PySide6.QtWidgets import QApplication

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        QApplication.processEvents()
        if condition():
            return
        time.sleep(0.005)
    raise AssertionError("timed out")


def open_tiny_gguf(window, folder, family: str, text: str, seed: int = 3):
    """Write a tiny random GGUF decoder of ``family`` (tests.tiny_gguf) into ``folder``, type ``text``, open
    the file in ``window`` as File → Open model does and wait for its first result: (its registered
    name, the file's path)."""
    from app.decoder_window import open_model
    from tests.tiny_gguf import write_tiny_gguf

    path = folder / f"tiny-{family}-{seed}.gguf"
    write_tiny_gguf(path, family, seed=seed)
    controller = window.controller
    controller.set_config(controller.config.replace(text=text), immediate=True)
    name = open_model(window, str(path))
    wait_for(lambda: controller.snapshot is not None and controller.snapshot.model == name and controller.is_idle())
    return name, path


def close_window(win) -> None:
    """The window fixture's end. pytest-qt has closed the window by now (qtbot's widgets close before
    fixture teardown); a job still running is let finish (closing mid-job is tested on its own).
    Nothing may stay pending: a closed window that queued work no thread runs made seven teardowns
    wait 60 s."""
    assert win.controller.worker.wait_until_idle(60), "a job stayed pending after the window closed"
    win.close()
    # Closing asks the thread to stop and waits 0.1 s; the thread ends once it is woken and holds the
    # GIL, which on a busy machine takes longer: a thread that was never told to stop still fails here.
    assert_thread_ends(win.controller.worker.is_alive, "the worker thread outlived its window")


def assert_thread_ends(alive, message: str, timeout: float = 10.0) -> None:
    """Wait up to ``timeout`` s for ``alive()`` to turn false; AssertionError(``message``) if it does not."""
    deadline = time.monotonic() + timeout
    while alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not alive(), message


def dock(window, key):
    """Show and raise the dock ``key``; its panel."""
    window.docks[key].show()
    window.docks[key].raise_()
    return window.panel(key)


def settle(window, qtbot) -> None:
    """Wait until the window, its controller and its worker are idle, then one short event turn."""
    assert window.wait_until_idle(60)
    qtbot.waitUntil(lambda: window.controller.is_idle(), timeout=30000)
    window.controller.worker.wait_until_idle(120)
    qtbot.wait(50)


def typed_at_the_end(qtbot, box, keys: str) -> str:
    """Focus the text box, put its cursor at the end and type ``keys``: the text it held before."""
    box.setFocus()
    cursor = box.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    box.setTextCursor(cursor)
    before = box.toPlainText()
    qtbot.keyClicks(box, keys)
    return before


def settle_panel(qtbot, panel, timeout: int = 10000) -> None:
    """Wait until a standalone panel (conftest's standalone_panel) and its controller are idle."""
    controller = panel.controller
    qtbot.waitUntil(lambda: bool(controller.is_idle() and panel.is_idle()), timeout=timeout)


def panel_built_after_a_result(qtbot, controller, panel_class, config):
    """The panel built once ``config``'s result exists, as the window's lazy docks build it; asserts
    that its sync() then asks its lane nothing more (the panel caught up when built)."""
    controller.set_config(config, immediate=True)
    qtbot.waitUntil(lambda: bool(controller.is_idle()), timeout=10000)
    widget = panel_class(controller)
    qtbot.addWidget(widget)
    generation = widget._lane.generation
    widget.sync()
    assert widget._lane.generation == generation
    return widget


def loop_roll_up(attentions: np.ndarray, word_index: np.ndarray) -> np.ndarray:
    """(…, n, n) → (…, w, w) in float64, the definition one number at a time: each word's query
    pieces averaged, its key pieces summed (the oracle the vectorised roll-ups are checked against)."""
    words = int(word_index.max()) + 1
    lead = attentions.shape[:-2]
    flat = attentions.reshape(-1, *attentions.shape[-2:]).astype(np.float64)
    out = np.zeros((flat.shape[0], words, words))
    for m in range(flat.shape[0]):
        for a in range(words):
            queries = [i for i in range(len(word_index)) if word_index[i] == a]
            for b in range(words):
                keys = [j for j in range(len(word_index)) if word_index[j] == b]
                out[m, a, b] = sum(flat[m, i, j] for i in queries for j in keys) / len(queries)
    return out.reshape(*lead, words, words)
