"""Shared test setup: make the repository root importable (engine, app, main)."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# ---------------------------------------------------------------------- Qt (window tests)
import os  # noqa: E402
import threading  # noqa: E402

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # before any QApplication exists

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path_factory, request):
    """QSettings of every test live in a temp dir: never the real user's settings."""
    if "qapp" not in request.fixturenames and "qtbot" not in request.fixturenames:
        yield
        return
    from app.window import use_settings_folder

    folder = str(tmp_path_factory.mktemp("settings"))
    use_settings_folder(folder)
    yield folder


@pytest.fixture
def window(qtbot):
    """A MainWindow with no restored state, shown offscreen; closed and its worker joined after."""
    from PySide6.QtWidgets import QApplication

    from app.fonts import install_cjk_font
    from app.window import MainWindow

    install_cjk_font(QApplication.instance())
    win = MainWindow(restore=False)
    qtbot.addWidget(win)
    win.show()
    assert win.wait_until_idle(30), "the first computation did not arrive"
    yield win
    win.controller.worker.wait_until_idle(60)  # let a slow job finish: closing mid-job is tested on its own
    win.close()
    assert not win.controller.worker.is_alive(), "the worker thread outlived its window"


@pytest.fixture(autouse=True)
def _no_leftover_threads():
    """Fail a test that leaves a worker thread running."""
    before = {t.ident for t in threading.enumerate()}
    yield
    import time

    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        extra = [t for t in threading.enumerate() if t.ident not in before and t.name == "attention-worker"]
        if not extra:
            return
        time.sleep(0.02)
    raise AssertionError(f"threads left behind: {[t.name for t in extra]}")


@pytest.fixture
def standalone_panel(qtbot):
    """make(PanelClass, width, height) → (controller, panel): one panel on its own Controller,
    shown offscreen with the CJK font; every controller made is shut down after the test."""
    from PySide6.QtWidgets import QApplication

    from app.controller import Controller
    from app.fonts import install_cjk_font

    controllers = []

    def make(panel_class, width: int, height: int):
        install_cjk_font(QApplication.instance())
        controller = Controller()
        controllers.append(controller)
        panel = panel_class(controller)
        qtbot.addWidget(panel)
        panel.resize(width, height)
        panel.show()
        return controller, panel

    yield make
    for controller in controllers:
        controller.shutdown()


@pytest.fixture(scope="module")
def minilm():
    """The real MiniLM (skips the test where the model package is not installed)."""
    from engine.core.errors import EngineError
    from engine.models.minilm import load_minilm

    try:
        return load_minilm()
    except EngineError as error:
        pytest.skip(f"MiniLM not installed: {error}")
