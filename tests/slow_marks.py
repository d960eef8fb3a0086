"""The ``slow`` mark kept honest (a pytest plugin; tests/conftest.py loads it).

`./run-tests -m "not slow"` is the edit-test loop: it must leave out every test that builds a whole
window (~0.4 s of CPU each, more with a model) or uses a bundled model (seconds to load, and a
model-sized forward per call). Tests say so themselves — ``pytestmark = pytest.mark.slow`` in a
module, ``@pytest.mark.slow`` on a function, ``pytest.param(…, marks=pytest.mark.slow)`` — and this
plugin fails a test that does either without the mark:

- at collection, a test that asks for a fixture of SLOW_FIXTURES (conftest's window and models);
- while it runs, a test that asks for one of those fixtures by name (``request.getfixturevalue``),
  builds an ``app.window.MainWindow`` or gets a bundled model from the registry's door
  (``engine.models.cache.model``, ``engine.models.load_model``), even one another test loaded
  before: which test ran first must not decide.

Tests that start processes or render large figures are marked slow by hand where they take seconds;
nothing here reads a test's source.
"""
from __future__ import annotations

import functools
import importlib.abc
import importlib.util
import sys

import pytest

SLOW_FIXTURES = frozenset({"window", "minilm_model", "e5_model", "smollm2_model", "minilm"})
BUNDLED = frozenset({"minilm", "e5", "smollm2"})  # the registry's models shipped as packages
_WINDOW_MODULE = "app.window"

_seen: list[str] = []  # what the running test did that makes it slow


def _noting(function, what):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        result = function(*args, **kwargs)
        note = what(*args, **kwargs)
        if note:
            _seen.append(note)
        return result
    wrapper.__slow_marks_wrapped__ = True
    return wrapper


def _model_note(name, *args, **kwargs):
    return f"the bundled model {name!r}" if name in BUNDLED else None


def _watch_models() -> None:
    import engine.models
    from engine.models import cache

    for owner, name in ((cache, "model"), (engine.models, "load_model")):
        function = getattr(owner, name)
        if not getattr(function, "__slow_marks_wrapped__", False):
            setattr(owner, name, _noting(function, _model_note))


def _watch_window(module) -> None:
    window_class = module.MainWindow
    if not getattr(window_class.__init__, "__slow_marks_wrapped__", False):
        window_class.__init__ = _noting(window_class.__init__, lambda *a, **k: "a MainWindow")


class _WindowModuleFinder(importlib.abc.MetaPathFinder):
    """Wraps MainWindow.__init__ when app.window is first imported: importing Qt and the window
    here, for every run, would cost the engine-only runs a second each."""

    def find_spec(self, name, path, target=None):
        if name != _WINDOW_MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            _watch_window(module)

        spec.loader.exec_module = exec_module
        return spec


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: builds a whole window, loads a real model or takes seconds "
                                       "(`./run-tests -m \"not slow\"` leaves them out)")
    _watch_models()
    if _WINDOW_MODULE in sys.modules:
        _watch_window(sys.modules[_WINDOW_MODULE])
    elif not any(isinstance(finder, _WindowModuleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _WindowModuleFinder())


def _is_slow(item) -> bool:
    return item.get_closest_marker("slow") is not None


def pytest_collection_modifyitems(config, items):
    unmarked = [f"{item.nodeid} (uses {', '.join(sorted(SLOW_FIXTURES.intersection(item.fixturenames)))})"
                for item in items if not _is_slow(item) and SLOW_FIXTURES.intersection(item.fixturenames)]
    if unmarked:
        raise pytest.UsageError("tests that use a window or a bundled model must be marked "
                                "@pytest.mark.slow:\n  " + "\n  ".join(unmarked))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _seen.clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Fixtures asked for by name while the test runs (``request.getfixturevalue("minilm_model")``)
    are in its request's fixture names once asked; collection cannot see them."""
    yield
    request = getattr(item, "_request", None)
    asked = SLOW_FIXTURES.intersection(getattr(request, "fixturenames", ()))
    _seen.extend(f"the fixture {name!r}" for name in sorted(asked))


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    done = sorted(set(_seen))
    _seen.clear()
    if done and not _is_slow(item):
        pytest.fail(f"{item.nodeid} used {' and '.join(done)} but is not marked @pytest.mark.slow "
                    "(`-m \"not slow\"` must leave it out)", pytrace=False)
