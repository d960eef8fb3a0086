"""Small helpers several test files share (imported as ``shared_helpers``: the tests folder is on sys.path)."""
from __future__ import annotations

import time

import pytest

from engine.models import MODELS


@pytest.fixture(autouse=True)
def _registry_as_it_was():
    """Folders and files registered by a test (--model, open_model) leave the registry after it.
    Autouse in every test module that imports it."""
    before = set(MODELS)
    yield
    for name in set(MODELS) - before:
        MODELS.pop(name, None)


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
