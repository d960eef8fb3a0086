"""The check of the slow mark (tests/slow_marks.py) on example test files run by pytest here: a
test that uses a window or a bundled model without the mark fails, the same test marked passes."""
from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

MODEL_EXAMPLE = """
import pytest
from engine.models import cache

def _held(name):
    cache._models[name] = object()  # as if loaded by an earlier test: no file is read here

def test_unmarked_model():
    _held("minilm")
    cache.model("minilm")

@pytest.mark.slow
def test_marked_model():
    _held("e5")
    cache.model("e5")

def test_toy_model_is_fast():
    _held("toy-example")
    cache.model("toy-example")
"""


def _run(pytester, source: str, *args: str):
    """The example run in this process: it imports nothing this process has not imported (pytester
    forgets the modules an in-process run imports, and a second copy of an engine module breaks the
    tests after it)."""
    pytester.makepyfile(test_example=source)
    return pytester.runpytest_inprocess("-p", "tests.slow_marks", "-p", "no:cacheprovider", *args)


@pytest.fixture
def empty_model_cache():
    """The examples put stand-ins into the engine's model cache: they leave with the test."""
    from engine.models import cache

    before = dict(cache._models)
    yield
    for name in set(cache._models) - set(before):
        cache._models.pop(name)


def test_a_bundled_model_in_an_unmarked_test_fails_it(pytester, empty_model_cache):
    result = _run(pytester, MODEL_EXAMPLE)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == 3 and outcomes.get("errors") == 1, result.stdout.str()
    result.stdout.fnmatch_lines(["*test_unmarked_model used the bundled model 'minilm' but is not marked "
                                 "@pytest.mark.slow*"])
    assert "test_marked_model used" not in result.stdout.str()
    assert "test_toy_model_is_fast used" not in result.stdout.str()


def test_a_slow_fixture_asked_for_by_name_in_an_unmarked_test_fails_it(pytester):
    pytester.makeconftest("import pytest\n\n@pytest.fixture(scope='session')\ndef minilm_model():\n    return None\n")
    source = """
import pytest

@pytest.mark.parametrize("name", ["minilm_model"])
def test_unmarked(name, request):
    request.getfixturevalue(name)

@pytest.mark.slow
@pytest.mark.parametrize("name", ["minilm_model"])
def test_marked(name, request):
    request.getfixturevalue(name)
"""
    result = _run(pytester, source)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == 2 and outcomes.get("errors") == 1, result.stdout.str()
    result.stdout.fnmatch_lines(["*test_unmarked?minilm_model? used the fixture 'minilm_model' but is not marked*"])


def test_a_slow_fixture_in_an_unmarked_test_stops_the_collection(pytester):
    pytester.makeconftest("import pytest\n\n@pytest.fixture\ndef window():\n    return None\n")
    source = "import pytest\n\ndef test_unmarked(window):\n    pass\n\n@pytest.mark.slow\ndef test_marked(window):\n    pass\n"
    result = _run(pytester, source)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*must be marked @pytest.mark.slow*", "*test_example.py::test_unmarked (uses window)*"])
    assert "test_marked" not in result.stderr.str()


@pytest.mark.slow
def test_a_main_window_in_an_unmarked_test_fails_it(pytester, monkeypatch, tmp_path):
    source = """
import pytest
from app.window import MainWindow

def _build_and_close(qtbot):
    window = MainWindow(restore=False)
    qtbot.addWidget(window)
    assert window.wait_until_idle(30)
    window.close()
    assert window.controller.worker.wait_until_idle(30)

def test_unmarked_window(qtbot):
    _build_and_close(qtbot)

@pytest.mark.slow
def test_marked_window(qtbot):
    _build_and_close(qtbot)
"""
    # in a process of its own: building a window imports half the app, which an in-process run would
    # import a second time; its settings go to a folder of the test's, never the user's
    from tests import ROOT

    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    pytester.makepyfile(test_example=source)
    result = pytester.runpytest_subprocess("-p", "tests.slow_marks", "-p", "no:cacheprovider", timeout=300)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == 2 and outcomes.get("errors") == 1, result.stdout.str()
    result.stdout.fnmatch_lines(["*test_unmarked_window used a MainWindow but is not marked @pytest.mark.slow*"])
