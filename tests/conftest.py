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
# numpy's OpenBLAS on one thread (before numpy loads): with two test processes on two cores, each
# process's idle BLAS thread spins after every small matmul on the core the other process needs
# (docs/TESTING.md, "Speed, third pass"). Tests of the thread count set their own.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pytest  # noqa: E402

# the slow mark, checked: a window or a bundled model in a test not marked slow fails it
pytest_plugins = ["tests.slow_marks"]


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path_factory, request):
    """QSettings of every test live in a temp dir: never the real user's settings."""
    if "qapp" not in request.fixturenames and "qtbot" not in request.fixturenames:
        yield
        return
    from app.shell.identity import use_settings_folder

    folder = str(tmp_path_factory.mktemp("settings"))
    use_settings_folder(folder)
    yield folder


@pytest.fixture
def window(qtbot):
    """A MainWindow with no restored state, shown offscreen; closed and its worker joined after."""
    from PySide6.QtWidgets import QApplication

    from figures.fonts import install_cjk_font
    from app.window import MainWindow

    install_cjk_font(QApplication.instance())
    win = MainWindow(restore=False)
    qtbot.addWidget(win)
    win.show()
    assert win.wait_until_idle(30), "the first computation did not arrive"
    yield win
    # pytest-qt has closed the window by now (qtbot's widgets close before fixture teardown); a job
    # still running is let finish (closing mid-job is tested on its own). Nothing may stay pending:
    # a closed window that queued work no thread runs made seven teardowns wait 60 s.
    assert win.controller.worker.wait_until_idle(60), "a job stayed pending after the window closed"
    win.close()
    # Closing asks the thread to stop and waits 0.1 s; the thread ends once it is woken and holds the
    # GIL, which on a busy machine takes longer: a thread that was never told to stop still fails here.
    assert_thread_ends(win.controller.worker.is_alive, "the worker thread outlived its window")


def assert_thread_ends(alive, message: str, timeout: float = 10.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not alive(), message


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
    from figures.fonts import install_cjk_font

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


# ---------------------------------------------------------------------- the real models, once
def _model_once(name: str):
    """Registry model ``name`` loaded once per test process, through the window's own cache
    (app.jobs.trained): the engine tests and every window test share one copy. Skips where the
    model's package is not installed."""
    from app.jobs import trained as minilm_mode
    from engine.core.errors import EngineError

    try:
        return minilm_mode.model(name)
    except EngineError as error:
        pytest.skip(f"{name} not installed: {error}")


@pytest.fixture(scope="session", autouse=True)
def app_models_kept():
    """The app keeps two models (MODELS_KEPT: the one in use and the previous); window tests that go
    through MiniLM, e5 and SmolLM2 then loaded the evicted one again from disk, although this
    process holds it (five loads of SmolLM2 in four window files, 8 s of CPU). Four here: the three
    real models and a GGUF file. Yields the app's own value: test_concurrency's eviction test sets
    it back for itself (so a changed MODELS_KEPT in the app still fails that test)."""
    from engine.models import cache as minilm_mode

    kept = minilm_mode.MODELS_KEPT
    minilm_mode.MODELS_KEPT = 4
    yield kept
    minilm_mode.MODELS_KEPT = kept


@pytest.fixture(scope="session")
def minilm_model():
    return _model_once("minilm")


@pytest.fixture(scope="session")
def e5_model():
    return _model_once("e5")


@pytest.fixture(scope="session")
def smollm2_model():
    return _model_once("smollm2")


@pytest.fixture(scope="session")
def minilm(minilm_model):
    """The real MiniLM (the older name of ``minilm_model``)."""
    return minilm_model
