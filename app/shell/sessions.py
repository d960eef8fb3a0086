"""Sessions and the recent-files menu: open (in the worker, with every check before anything is
applied), save, the title naming the open file, and the folder last used for each kind of file."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication as Q, QObject, Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu, QMessageBox

from engine import AttentionConfig, EngineError
from engine.core.memory import format_bytes
from engine.models import DEFAULT_MODEL as MODELS_DEFAULT, MODELS, model_info

from .. import decoder_window
from ..i18n import error_text
from ..session import SessionError, save_session
from ..text import fill
from ..view_state import ViewState
from .identity import APPLICATION
from .actions import add_action

MAX_RECENT = 8
MAX_WINDOW_TEXT = 200_000  # characters: a session's text beyond this is refused (setPlainText: ~0.6 s a MB)


class Sessions(QObject):
    """The window's sessions; ``recent_menu`` goes into File."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.w = window
        self.session_path = ""
        self.recent_menu = QMenu(Q.translate("MainWindow", "Open &recent"), window)
        self._session_lane = self._session_check_lane = self._model_question = None
        self._session_request: dict = {}
        self._session_applied = False

    def open_session_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.w, Q.translate("MainWindow", "Open session"), self.last_folder(),
                                              Q.translate("MainWindow", "Attention Explorer sessions (*.json);;All files (*)"))
        if path:
            self.open_session_in_background(path)

    def open_session_in_background(self, path: str, *, ask: bool = True, on_failed=None, restore: bool = False) -> None:
        """Open a session without work on the GUI thread (the menu, the recent list, ``--session``,
        the state restored at start-up): the worker reads and parses the file (up to safe_io's 16 MiB
        cap) and resolves its model; a model file is loaded only after the user said yes
        (``ask``); the worker then loads the model and checks the view against it
        (app/session_models.py). Nothing is applied until every check passed.
        ``on_failed(message)``: also called with the reason when it fails (the command line prints it)."""
        from ..session_models import read_session

        self.begin_request(ask=ask, on_failed=on_failed, restore=restore)
        self.w.statusBar().showMessage(fill(Q.translate("MainWindow", "Opening %1…"), path))
        self._session_lane.submit(read_session, path)

    def begin_request(self, **request) -> None:
        """The session lanes (made once) and a new request; an older one still on its way is dropped."""
        from ..session_models import checked_view

        if self._session_lane is None:
            self._session_lane = self.w.controller.worker.lane("session", self)
            self._session_lane.done.connect(self._on_session_read)
            self._session_lane.failed.connect(self._on_session_failed)
            self._session_check_lane = self.w.controller.worker.lane("session-check", self)
            self._session_check_lane.done.connect(self._on_session_checked)
            self._session_check_lane.failed.connect(self._on_session_failed)
        self._session_lane.cancel()
        self._session_check_lane.cancel()  # an older session still loading its model is not applied
        self._close_model_question()
        self._session_request = dict(request, busy=True)
        self._session_check = checked_view
        self._session_applied = False

    def _on_session_read(self, read) -> None:
        request = self._session_request
        if read.model_file and request["ask"] and self.w.model_combo.findData(read.view["model"]) < 0:
            self._ask_model_file(read)  # (a file the user opened in this run is not asked about again)
            return
        if read.model_file and request.get("cli"):  # the command line: say what it loads
            print(f"note: the session {read.path} opens the model file {read.model_file} "
                  f"({format_bytes(read.model_bytes)})", file=sys.stderr)
        self.check_session(read)

    def open_session_at_start(self, path: str, on_failed) -> None:
        """``--session``: the file read before the window shows (so the first picture is the session's, as
        before); a pretrained model is then loaded and checked in the worker; no question for a model file."""
        from ..session_models import read_session

        self.begin_request(ask=False, on_failed=on_failed, restore=False, cli=True)
        try:
            read = read_session(path)
        except (EngineError, OSError) as error:
            self._on_session_failed(error)
            return
        self._on_session_read(read)

    def check_session(self, read) -> None:
        if read.view.get("model", MODELS_DEFAULT) == MODELS_DEFAULT:  # nothing to load: checked at once
            try:
                self._session_check(read)
            except EngineError as error:
                self._on_session_failed(error)
                return
            self._on_session_checked(read)
            return
        self._session_request["model"] = read.view["model"]
        try:  # a folder's config.json is read again here: it may have changed since the worker checked it
            title = model_info(read.view["model"]).title
        except EngineError as error:
            self._on_session_failed(error)
            return
        if not self._session_request["restore"]:
            self.w.statusBar().showMessage(fill(Q.translate("MainWindow", "Opening %1: loading %2…"), read.path, Q.translate(
                "Model", title)))
            self.w.busy.setVisible(True)
        self._session_check_lane.submit(self._session_check, read, self.w.controller.report_progress)

    def _ask_model_file(self, read) -> None:
        """A window-modal question (tests answer it: objectName "confirmModelFile"), naming the file and its size."""
        box = QMessageBox(QMessageBox.Icon.Question, Q.translate("MainWindow", "Load the session's model?"), fill(Q.translate("MainWindow", 
            "The session %1 opens the model file\n%2\n(%3). Loading reads the whole file into memory. Load it?"),
            Path(read.path).name, read.model_file, format_bytes(read.model_bytes)),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self.w)
        box.setObjectName("confirmModelFile")
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def answered(_result: int) -> None:
            if self._model_question is not box:
                return  # another session was opened meanwhile
            self._model_question = None
            if box.standardButton(box.clickedButton()) == QMessageBox.StandardButton.Yes:
                self.check_session(read)
            else:
                self._session_request["busy"] = False
                self.w.statusBar().showMessage(fill(Q.translate("MainWindow", "Not opened: %1 (its model file was not loaded)"),
                                                  read.path), 8000)

        box.finished.connect(answered)
        self._model_question = box
        box.open()

    def _close_model_question(self) -> None:
        box, self._model_question = self._model_question, None
        if box is not None:
            box.close()

    def _on_session_checked(self, read) -> None:
        self.w.busy.setVisible(False)
        request = self._session_request
        request["busy"] = False
        if read.model_file:
            decoder_window.add_model_choice(self.w, read.view["model"])
        if request["restore"]:
            if self.w.controller.model != MODELS_DEFAULT:
                return  # the user chose a model while the saved one loaded: their choice stands
            try:
                self.w.controller.apply_view_state(ViewState.from_session(self.w.controller.config, read.view))
            except EngineError as error:
                self._on_session_failed(error)
            return
        self._apply_session(read.path, read.config, read.view)

    def _on_session_failed(self, error) -> None:
        self.w.busy.setVisible(False)
        request = self._session_request
        request["busy"] = False
        name = request.get("model", "")
        if name in MODELS and MODELS[name].path and self.w.model_combo.findData(name) < 0:
            del MODELS[name]  # a model file that failed to load is not a choice of the window
        if request.get("restore"):  # the state saved at the last exit: set aside, said in the status bar
            self.w.saved_state.set_aside(error)
            self.w.statusBar().showMessage(self.w.startup_notice, 20000)
            self.w.startup_notice = ""
            return
        self.w.warn(Q.translate("MainWindow", "Could not open the session"), error)
        if request.get("on_failed") is not None:
            request["on_failed"](error_text(error))

    def is_opening_session(self) -> bool:
        """True while a session is being read, checked or waits for the user's answer."""
        return bool(self._session_request.get("busy"))

    def open_session(self, path: str, *, ask: bool = False, timeout: float = 120.0) -> bool:
        """Open a session and wait until it is applied or refused (scripts and tests; the window's
        own ways do not wait): the same checks as the menu; on any problem show why and change nothing."""
        import time

        failures = []
        self.open_session_in_background(path, ask=ask, on_failed=failures.append)
        deadline = time.monotonic() + timeout
        while self.is_opening_session() and time.monotonic() < deadline:
            QApplication.processEvents()
            time.sleep(0.002)
        return not failures and not self.is_opening_session() and self._session_applied

    def _apply_session(self, path: str, config: AttentionConfig, view: dict) -> bool:
        self._session_applied = False
        if len(config.text) > MAX_WINDOW_TEXT:  # the text box would lay it out on the GUI thread for seconds
            self.w.warn(Q.translate("MainWindow", "Could not open the session"), SessionError(
                "the session's text has {count} characters; the window shows at most {limit} (no computation that "
                "long fits the memory budget)", count=len(config.text), limit=MAX_WINDOW_TEXT))
            return False
        try:
            self.w.controller.apply_view_state(ViewState.from_session(config, view))
        except EngineError as error:
            self.w.warn(Q.translate("MainWindow", "Could not open the session"), error)
            return False
        self._session_applied = True
        self.w.lesson = view.get("lesson")  # None in sessions without a lesson
        if self.w.lesson is not None and self.w.navigation.lesson_dialog is not None:
            self.w.navigation.lesson_dialog.set_position(self.w.lesson["tutorial"], self.w.lesson["step"])
        self._remember_recent(path)
        self.set_session_title(path)
        self.w.statusBar().showMessage(fill(Q.translate("MainWindow", "Opened %1"), path), 4000)
        return True

    def save_session_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.w, Q.translate("MainWindow", "Save session"), self.last_folder("session.json"),
                                              Q.translate("MainWindow", "Attention Explorer sessions (*.json)"))
        if path:
            if not path.lower().endswith(".json"):
                path += ".json"
            self.save_session(path)

    def save_session(self, path: str) -> bool:
        c = self.w.controller
        try:
            state = c.view_state()
            save_session(path, state.config, state.session_view(), lesson=self.w.lesson)
        except SessionError as error:
            self.w.warn(Q.translate("MainWindow", "Could not save the session"), error)
            return False
        self._remember_recent(path)
        self.set_session_title(path)
        self.w.statusBar().showMessage(fill(Q.translate("MainWindow", "Saved %1"), path), 4000)
        return True

    def set_session_title(self, path: str) -> None:
        """The title names the open session file: "name.json — Attention Explorer"."""
        self.session_path = str(Path(path).resolve())
        self.w.setWindowTitle(f"{Path(path).name}[*] — {APPLICATION}")  # [*]: Qt's modified mark
        self.w.setWindowFilePath(self.session_path)
        self.w.mark_saved()

    def _remember_recent(self, path: str) -> None:
        path = str(Path(path).resolve())
        recent = [p for p in self._recent() if p != path]
        self.w.settings.setValue("recentFiles", json.dumps([path] + recent[: MAX_RECENT - 1]))
        self.remember_folder("session", path)
        self.update_recent_menu()

    def _recent(self) -> list[str]:
        try:
            value = json.loads(self.w.settings.value("recentFiles", "[]"))
            return [p for p in value if isinstance(p, str)]
        except (TypeError, ValueError):
            return []

    def update_recent_menu(self) -> None:
        self.recent_menu.clear()
        recent = self._recent()
        for path in recent:
            add_action(self.w, self.recent_menu, path, lambda _=False, p=path: self.open_session_in_background(p))
        self.recent_menu.setEnabled(bool(recent))

    def last_folder(self, name: str = "", kind: str = "session") -> str:
        """The folder last used for this kind of file (session, image, data), else the home folder."""
        folder = self.w.settings.value(f"lastFolder/{kind}", "") or self.w.settings.value("lastFolder", "") \
            or str(Path.home())
        return str(Path(folder) / name) if name else folder

    def remember_folder(self, kind: str, path: str) -> None:
        self.w.settings.setValue(f"lastFolder/{kind}", str(Path(path).resolve().parent))

