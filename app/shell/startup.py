"""Start-up: ``./run`` (the window's options from cli/options.py), ``--session`` and ``--model``, the
first window size, the probes benchmarks and tests read, and a clean exit."""
from __future__ import annotations

import json
import os
import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from cli.options import parse_arguments
from engine import AttentionConfig, EngineError

from .. import decoder_window
from ..i18n import install_translator
from .identity import ORGANIZATION


def run(argv: list[str] | None = None) -> int:
    """Start the window; returns the exit code."""
    arguments = parse_arguments(list(sys.argv[1:] if argv is None else argv))
    from figures.fonts import install_cjk_font

    QApplication.setOrganizationName(ORGANIZATION)
    QApplication.setApplicationName("AttentionExplorer")
    app = QApplication.instance() or QApplication(sys.argv[:1])
    install_cjk_font(app)
    install_translator(app)
    config = None
    if arguments.text:
        try:
            config = AttentionConfig(text=arguments.text)
        except EngineError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    from ..window import MainWindow

    window = MainWindow(config)
    open_arguments(window, arguments)
    window.show()
    if os.environ.get("ATTENTION_EXPLORER_PROBE") != "startup":
        window.help.show_guide_once()
    if os.environ.get("ATTENTION_EXPLORER_PROBE") == "startup":
        _probe_first_paint(window, app)
    elif os.environ.get("ATTENTION_EXPLORER_PROBE") == "session":
        _probe_session(window, app)
    code = app.exec()
    _destroy_windows(window)
    return code


def _destroy_windows(window) -> None:
    """Delete the windows (and their pyqtgraph items) while the interpreter is whole: left to the
    interpreter's exit, Qt delivered events to half-finalized Python overrides and crashed (SIGSEGV in
    shiboken's error path, about one exit in eight when closed early, seen under gdb)."""
    import shiboken6

    while window is not None:
        successor = getattr(window, "successor", None)  # the language switch's new window
        if shiboken6.isValid(window):
            shiboken6.delete(window)
        window = successor


def open_arguments(window, arguments) -> None:
    """``--session`` and ``--model`` at start. The session opens in the worker like the menu's way; a
    model file it names is loaded without a question (the user typed the command: docs in the README)
    but named on stderr with its size; a refusal prints its reason after "could not open …:"."""
    if arguments.session:
        window.sessions.open_session_at_start(arguments.session, on_failed=lambda message: print(
            f"error: could not open {arguments.session}: {message}", file=sys.stderr, flush=True))
    decoder_window.model_arguments(window, arguments.model)


def _probe_session(window, app) -> None:
    """Tests: print the view state once the session is applied or refused and the result is on screen, then quit."""
    def check() -> None:
        if window.sessions.is_opening_session() or not window.controller.is_idle() or not window.controller.worker.is_idle():
            return  # (a job still running while the interpreter exits could crash it)
        timer.stop()
        print("session-probe", json.dumps(window.controller.view_state().session_view()), flush=True)
        window.close()
        app.quit()

    timer = QTimer(window, interval=50)
    timer.timeout.connect(check)
    timer.start()


def _probe_first_paint(window, app) -> None:
    """Benchmarks: print a line when the first heatmap has been painted, then quit."""
    from PySide6.QtCore import QObject, QEvent

    viewport = window.panels["attention"].heatmap.viewport()

    class Probe(QObject):
        def eventFilter(self, watched, event):  # noqa: N802 - Qt name
            if event.type() == QEvent.Type.Paint and window.controller.snapshot is not None:
                text = window.controller.snapshot.result.config.text
                print("first-heatmap-painted", json.dumps(text, ensure_ascii=True), flush=True)
                QTimer.singleShot(0, app.quit)
                viewport.removeEventFilter(self)
            return False

    window.probe = Probe(window)  # kept alive by the window
    viewport.installEventFilter(window.probe)
