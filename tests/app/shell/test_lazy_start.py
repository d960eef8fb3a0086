"""A lazy panel on screen at start waits for the result being computed (a faster start-up): built in
the turn of its arrival, the vector diffs (~0.1–0.2 s) came before the main heatmap's first paint."""
from __future__ import annotations

import threading

import pytest
from PySide6.QtWidgets import QApplication, QWidget


class Recorded(QWidget):
    """A panel that notes when it was made and what it was shown."""

    made: list = []

    def __init__(self, controller) -> None:
        super().__init__()
        self.shown = None
        Recorded.made.append(self)

    def show_snapshot(self, snapshot) -> None:
        self.shown = snapshot

    @classmethod
    def supports(cls, capabilities) -> bool:
        return True


@pytest.fixture
def controller():
    from app.controller import Controller

    made = Controller()
    yield made
    made.shutdown()


def _lazy(controller):
    from app.lazy import LazyPanel

    Recorded.made = []
    return LazyPanel(Recorded, controller)


def test_built_at_once_when_nothing_is_computing(qtbot, controller):
    assert controller.worker.wait_until_idle(30)
    qtbot.waitUntil(controller.is_idle, timeout=30_000)
    lazy = _lazy(controller)
    built = []
    lazy.build_soon(built.append)
    assert lazy.panel is not None and built == [lazy.panel] and len(Recorded.made) == 1
    assert lazy.panel.shown is controller.snapshot  # brought up to date at once


def test_built_after_the_result_on_its_way_is_announced(qtbot, controller):
    """Built only after snapshotChanged (the other panels' turn, after the main heatmap's paint), and
    shown that result; a second request while waiting builds one panel, not two."""
    qtbot.waitUntil(controller.is_idle, timeout=30_000)
    release = threading.Event()
    from app import controller as controller_module

    real = controller_module.take_snapshot

    def held(*args):
        release.wait(30)
        return real(*args)

    controller_module.take_snapshot = held
    try:
        controller.set_config(controller.config.replace(text="a b c d"), immediate=True)
        lazy = _lazy(controller)
        built = []
        lazy.build_soon(built.append)
        lazy.build_soon()
        for _ in range(20):
            QApplication.processEvents()
        assert lazy.panel is None and not Recorded.made  # the computation still runs
        announced = []
        controller.snapshotChanged.connect(lambda snapshot: announced.append(lazy.panel))
        release.set()
        qtbot.waitUntil(lambda: lazy.panel is not None, timeout=30_000)
    finally:
        controller_module.take_snapshot = real
    assert announced == [None]  # not yet built when the result was announced
    assert len(Recorded.made) == 1 and built == [lazy.panel]
    assert lazy.panel.shown is controller.snapshot and controller.snapshot.result.config.text == "a b c d"


def test_built_anyway_when_the_result_never_comes(qtbot, controller, monkeypatch):
    """A computation that announces nothing (cancelled): built after WAIT_AT_MOST_MS."""
    from app import lazy as lazy_module

    monkeypatch.setattr(lazy_module, "WAIT_AT_MOST_MS", 50)
    monkeypatch.setattr(controller, "is_idle", lambda: False)
    lazy = _lazy(controller)
    lazy.build_soon()
    assert lazy.panel is None
    qtbot.waitUntil(lambda: lazy.panel is not None, timeout=5_000)
    assert len(Recorded.made) == 1
