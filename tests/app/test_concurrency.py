"""The window under concurrent work (the races a hostile user provokes): Generate
racing an edit or a model switch, model switches while a computation, a generation or the head
ranking runs, fifty switches in a row, closing during a generation, models released, the trace
cache bounded in bytes. Every test watches sys.excepthook, Qt's message handler and stderr.
"""
from __future__ import annotations

import contextlib
import gc
import sys
import threading
import time
import weakref

import numpy as np
import pytest
from PySide6.QtCore import QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

from engine.models import MODELS
from tests.app.test_sessions_across_models import settle

TEXT = " the cat sat on the mat"


@pytest.fixture(scope="module")
def ggufs(tmp_path_factory) -> list[str]:
    """Three tiny llama GGUF files (different seeds: different numbers)."""
    from tests.tiny_gguf import write_tiny_gguf

    folder = tmp_path_factory.mktemp("ggufs")
    paths = []
    for seed in range(3):
        path = folder / f"tiny-{seed}.gguf"
        write_tiny_gguf(path, "llama", seed=seed)
        paths.append(str(path))
    return paths


@contextlib.contextmanager
def watched():
    """Collects uncaught exceptions (sys.excepthook) and Qt warnings; the test asserts the list is empty."""
    problems: list = []
    hook = sys.excepthook
    sys.excepthook = lambda kind, value, tb: problems.append(f"{kind.__name__}: {value}")

    def handler(kind, _context, message):
        if kind != QtMsgType.QtDebugMsg and "propagateSizeHints" not in message:
            problems.append(message)

    previous = qInstallMessageHandler(handler)
    try:
        yield problems
    finally:
        qInstallMessageHandler(previous)
        sys.excepthook = hook


def open_gguf(window, path: str) -> str:
    from app import decoder_window

    name = decoder_window.open_model(window, path)
    settle(window)
    assert window.controller.snapshot.model == name, window.controller.last_error
    return name


def assert_panels_current(window) -> None:
    """No panel shows a result other than the controller's (nothing of the previous model)."""
    c = window.controller
    snapshot = c.snapshot
    assert snapshot.model == c.model
    result = snapshot.result
    heads = result.weights.shape[0]
    assert len(window.panels["heads"].images) == heads
    image = window.panels["attention"].heatmap.image.image
    assert image is not None and image.shape == (result.n, result.n)
    inspector = window.panels["inspector"]
    if getattr(inspector, "panel", None) is not None:
        shown = inspector.panel.inspected_result
        assert shown is None or shown is result
    next_panel = window.panels["next"]
    if getattr(next_panel, "panel", None) is not None and next_panel.panel.bars is not None:
        assert next_panel.panel.bars["trace"] is snapshot.bert.trace


def attention_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "attention-worker"]


# ---------------------------------------------------------------------- Generate races

def generate_then(window, gguf: str, act) -> list:
    """The decoder ``gguf`` on TEXT, Generate, then ``act()`` before the generated token arrives:
    the problems watched meanwhile."""
    from app import decoder_window

    window.controller.update_config(text=TEXT)
    open_gguf(window, gguf)
    with watched() as problems:
        decoder_window.generate(window, True)
        act()
        settle(window)
    return problems


@pytest.mark.slow
def test_text_typed_right_after_generate_is_never_overwritten(window, ggufs, capfd):
    """Failed before: the generated text replaced what was typed after Generate."""
    c = window.controller
    problems = generate_then(window, ggufs[0], lambda: c.update_config(text=TEXT + " and the dog"))  # typed meanwhile
    assert c.config.text == TEXT + " and the dog"
    assert c.snapshot.result.config.text == TEXT + " and the dog"
    assert not problems and "Traceback" not in capfd.readouterr().err


@pytest.mark.slow
def test_switching_model_right_after_generate_never_appends_its_token(window, ggufs, capfd):
    """Failed before: switching to another model right after Generate still appended the decoder's token."""
    from app import decoder_window

    c = window.controller
    problems = generate_then(window, ggufs[0], lambda: c.set_model("toy", 0))
    assert c.config.text == TEXT and c.model == "toy"
    assert_panels_current(window)
    # and a generation asked for while the trace on screen is not the text's: refused, nothing appended
    open_gguf(window, ggufs[0])
    c.update_config(text=TEXT + " x")
    decoder_window.generate(window, True)
    settle(window)
    assert c.config.text == TEXT + " x"
    assert not problems and "Traceback" not in capfd.readouterr().err


# ---------------------------------------------------------------------- the head ranking's own lane

def test_a_long_lane_never_holds_the_thread_that_computes(qtbot):
    """Failed before (one thread): a computation waited behind the running ranking."""
    from app.worker import Worker

    worker = Worker()
    release = threading.Event()
    try:
        long = worker.lane("rank", long=True)
        compute = worker.lane("compute", first=True)
        answers = []
        compute.done.connect(answers.append)
        long.submit(release.wait, 30)
        time.sleep(0.05)
        compute.submit(lambda: "edit computed")
        qtbot.waitUntil(lambda: answers == ["edit computed"], timeout=20_000)  # within the long job's 30 s
        assert not release.is_set()  # the long job still runs
        assert len([t for t in (worker._thread, worker._long_thread) if t is not None]) == 2
    finally:
        release.set()
        assert worker.shutdown(2.0)


@pytest.mark.slow
def test_the_head_ranking_never_blocks_an_edit(window, monkeypatch, capfd):
    """Failed before: "Most important heads" held the only worker (60 s on SmolLM2); here a ranking
    that blocks until released: edits still compute meanwhile, and cancelling frees it."""
    from app.jobs import analysis as analysis_jobs

    started, release = threading.Event(), threading.Event()
    real = analysis_jobs.rank_toy

    def slow_rank(config, progress=None, cancelled=None):
        started.set()
        release.wait(30)
        return real(config, progress, cancelled)

    monkeypatch.setattr(analysis_jobs, "rank_toy", slow_rank)
    c = window.controller
    window.docks["ablation"].show()
    window.docks["ablation"].raise_()
    panel = window.panel("ablation")
    with watched() as problems:
        panel.rank()
        assert started.wait(10)
        for text in ("a cat", "a cat sat", "a cat sat down"):
            c.update_config(text=text)
            deadline = time.monotonic() + 10
            while c.snapshot.result.config.text != text and time.monotonic() < deadline:
                QApplication.processEvents()
                time.sleep(0.005)
            assert c.snapshot.result.config.text == text  # computed while the ranking runs
        assert panel.is_ranking()
        release.set()
        settle(window)
    assert not problems and "Traceback" not in capfd.readouterr().err


# ---------------------------------------------------------------------- model switches

@pytest.mark.slow
def test_model_switches_while_computing_generating_and_ranking(window, ggufs, capfd):
    from app import decoder_window

    c = window.controller
    c.update_config(text=TEXT)
    settle(window)
    names = ["toy", open_gguf(window, ggufs[0])] + (["minilm"] if MODELS["minilm"].is_installed() else [])
    window.docks["inspector"].show()
    window.panel("inspector")
    with watched() as problems:
        for index, name in enumerate(names * 2):
            other = names[(index + 1) % len(names)]
            c.set_model(name, 0)
            settle(window)
            c.inspect(1, 0)
            c.update_config(text=TEXT + " " * (index % 2) + "!")  # a computation in flight …
            c.set_model(other, 1)  # … and the model switched under it
            settle(window)
            assert_panels_current(window)
            if c.snapshot.bert is not None and hasattr(c.snapshot.bert, "next_token_logits"):
                before = c.config.text
                decoder_window.generate(window, False)  # a generation in flight
                c.set_model("toy", 0)
                settle(window)
                assert c.config.text == before
                assert_panels_current(window)
            window.docks["ablation"].show()
            window.panel("ablation").rank()  # the ranking in flight
            c.set_model(name, 0)
            settle(window)
            assert_panels_current(window)
    assert not problems and "Traceback" not in capfd.readouterr().err
    assert len(attention_threads()) <= 2


@pytest.mark.slow
def test_fifty_switches_in_a_row(window, ggufs, capfd):
    c = window.controller
    c.update_config(text=TEXT)
    names = ["toy", open_gguf(window, ggufs[0]), open_gguf(window, ggufs[1])]
    before = threading.active_count()
    with watched() as problems:
        for index in range(50):
            c.set_model(names[index % 3], index % 2)
            if index % 7 == 0:
                QApplication.processEvents()
        settle(window)
    assert c.model == names[49 % 3] and c.snapshot.model == c.model
    assert_panels_current(window)
    assert threading.active_count() <= before + 1  # at most the ranking's thread on top
    assert not problems and "Traceback" not in capfd.readouterr().err


@pytest.mark.slow
def test_closing_during_a_generation(qtbot, ggufs, monkeypatch, capfd):
    from app import decoder_window
    from app.jobs import decoder_view as decoder_mode
    from app.window import MainWindow

    real = decoder_mode.generated_text
    running = threading.Event()

    def slow(*args):
        running.set()
        time.sleep(1.0)
        return real(*args)

    monkeypatch.setattr(decoder_mode, "generated_text", slow)
    window = MainWindow(restore=False)
    qtbot.addWidget(window)
    window.show()
    settle(window)
    window.controller.update_config(text=TEXT)
    open_gguf(window, ggufs[0])
    with watched() as problems:
        decoder_window.generate(window, True)
        assert running.wait(10)
        started = time.monotonic()
        window.close()
        assert time.monotonic() - started < 2.0
        deadline = time.monotonic() + 5
        while window.controller.worker.is_alive() and time.monotonic() < deadline:
            QApplication.processEvents()
            time.sleep(0.01)
        QApplication.processEvents()
    assert not window.controller.worker.is_alive()
    assert not problems and "Traceback" not in capfd.readouterr().err


# ---------------------------------------------------------------------- memory: models and traces released

@pytest.mark.slow
def test_only_the_current_and_the_previous_model_stay_loaded(window, ggufs, monkeypatch, app_models_kept):
    """Failed before: every model opened stayed loaded (three SmolLM2 copies: 182 MB → 2,483 MB)."""
    from engine.models import cache as minilm_mode

    monkeypatch.setattr(minilm_mode, "MODELS_KEPT", app_models_kept)  # the app's own (conftest keeps 4)

    c = window.controller
    c.update_config(text=TEXT)
    first = open_gguf(window, ggufs[0])
    gone = weakref.ref(minilm_mode._models[first])
    second = open_gguf(window, ggufs[1])
    third = open_gguf(window, ggufs[2])
    assert minilm_mode.loaded_models()[-2:] == [second, third]
    assert first not in minilm_mode.loaded_models()
    c.set_model("toy", 0)
    settle(window)
    gc.collect()
    assert gone() is None, "the released model is still referenced"
    assert all(key[0] != first for key in minilm_mode._traces)
    c.set_model(first, 0)  # coming back loads it again
    settle(window)
    assert c.snapshot.model == first
    assert second not in minilm_mode.loaded_models()


def test_held_bytes_counts_each_buffer_once():
    from app.jobs.trained import held_bytes

    class Holder:
        def __init__(self):
            self.a = np.zeros((100, 10), dtype=np.float32)  # 4,000 bytes
            self.view = self.a[10:]  # a view: no new memory
            self.layers = (np.ones(50, dtype=np.float64), np.ones(50, dtype=np.float64)[::2])  # 400 + 400
            self.text = "not an array"

    expected = 0
    for array in (np.zeros((100, 10), dtype=np.float32), np.ones(50), np.ones(50)):
        expected += array.nbytes  # an independent sum of the distinct buffers
    assert held_bytes(Holder()) == expected == 4800


def test_the_trace_cache_is_bounded_in_bytes(ggufs, monkeypatch):
    """Failed before: the cache kept four sentences whatever their size (four whole decoder traces)."""
    from engine.models import cache as minilm_mode
    from engine.models import register_gguf

    name = register_gguf(ggufs[2])
    texts = [TEXT + " " + "and the cat " * k for k in range(1, 7)]
    sizes = [minilm_mode.held_bytes(minilm_mode.model(name).run(t)) for t in texts]
    budget = sizes[-1] + sizes[-2] - 1  # room for less than the last two
    monkeypatch.setattr(minilm_mode, "TRACE_CACHE_BYTES", budget)
    for text in texts:
        minilm_mode.trace(name, text)
    kept = [key for key in minilm_mode._traces if key[0] == name]
    assert kept == [(name, texts[-1])]
    assert sum(minilm_mode.held_bytes(minilm_mode._traces[k]) for k in kept) <= max(budget, sizes[-1])
    monkeypatch.setattr(minilm_mode, "TRACE_CACHE_BYTES", 1)  # even a tiny budget keeps the latest trace
    minilm_mode.trace(name, texts[0])
    assert [key for key in minilm_mode._traces if key[0] == name] == [(name, texts[0])]
