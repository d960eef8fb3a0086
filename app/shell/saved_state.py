"""The state saved at exit and restored at start: settings and view (read like a session file, set
aside when unusable), geometry and dock layout (only on a screen of the same size)."""
from __future__ import annotations

import json

from PySide6.QtCore import QByteArray, QCoreApplication as Q, Qt

from engine import AttentionConfig, EngineError
from engine.models import DEFAULT_MODEL as MODELS_DEFAULT

from ..dock_groups import DEFAULT_GROUP
from ..layout_sizes import same_screen, screen_key
from ..i18n import error_text
from ..text import fill
from ..view_state import ViewState
from .sessions import MAX_WINDOW_TEXT

SET_ASIDE_LIMIT = 64 * 1024  # a set-aside saved state longer than this is removed, not kept


class SavedState:
    """What the last exit saved: read before the controller exists, applied once the window is built."""

    def __init__(self, window) -> None:
        self.w = window
        self._restored_view: dict = {}

    def restored_config(self) -> AttentionConfig | None:
        """The saved last state, read like a session file (engine/core/safe_io.py's guards, then
        engine.files.documents.parse_settings and the session's view checks). A state that fails is set
        aside: renamed in QSettings, said in the status bar, and the app starts with defaults."""
        from engine.core.safe_io import parse_json

        from ..session import FORMAT, VERSION, parse_session
        from ..session_models import check_model_name

        self._restored_view = {}
        config_text, view_text = self.w.settings.value("lastConfig"), self.w.settings.value("lastView")
        if not config_text:
            return None
        try:
            document = {"format": FORMAT, "version": VERSION,
                        "config": parse_json(config_text, "the saved settings"),
                        "view": parse_json(view_text, "the saved view") if view_text else {}}
            config, self._restored_view = parse_session(json.dumps(document, ensure_ascii=False))
            # the model's name and file checked here (an unknown name, a gguf: path that is empty, relative,
            # a loop or gone is set aside, never registered); its layers and heads once it is loaded
            name, _file = check_model_name(self._restored_view.get("model", MODELS_DEFAULT))
            self._restored_view["model"] = name
            if len(config.text) > MAX_WINDOW_TEXT:
                raise EngineError("the saved text has {count} characters; the window shows at most {limit}",
                                  count=len(config.text), limit=MAX_WINDOW_TEXT)
        except EngineError as error:  # SessionError included
            self.set_aside(error)
            return None
        return config

    def set_aside(self, error: BaseException) -> None:
        """Move the unusable saved state out of the way (kept under "setAside/…" when small enough to
        look at, removed otherwise) so the next start is clean, and say so once the window shows."""
        for key in ("lastConfig", "lastView"):
            value = self.w.settings.value(key)
            self.w.settings.remove(key)
            if isinstance(value, str) and len(value) <= SET_ASIDE_LIMIT:
                self.w.settings.setValue(f"setAside/{key}", value)
        self.w.settings.sync()
        self._restored_view = {}
        self.w.startup_notice = fill(Q.translate("MainWindow", "The settings saved at the last exit could not be used and were set aside; "
                                           "starting with the defaults. (%1)"), error_text(error))

    def restore_view(self) -> None:
        """Start where the user left off: selection, model, layer and sentence B (the settings are restored first)."""
        from ..session_models import SessionRead, checked_view

        view = self._restored_view
        if not view:
            return
        read = SessionRead("", self.w.controller.config, view)
        if view.get("model", MODELS_DEFAULT) != MODELS_DEFAULT:
            # a pretrained model: loaded and the view checked in the worker; the toy engine
            # shows the restored text meanwhile, and a view the model cannot take is set aside
            self.w.sessions.begin_request(ask=False, on_failed=None, restore=True)
            self.w.sessions.check_session(read)
            return
        try:
            checked_view(read)
            self.w.controller.apply_view_state(ViewState.from_session(self.w.controller.config, view))
        except EngineError as error:
            self.set_aside(error)
            self.w.controller.apply_view_state(ViewState(AttentionConfig()))

    def restore_layout(self) -> None:
        """The last run's geometry and docks, when saved on a screen of this size: a layout saved
        on a small screen restored on a large one left the heatmap a thin strip."""
        geometry = self.w.settings.value("geometry")
        state = self.w.settings.value("windowState")
        if same_screen(self.w.settings.value("layoutScreen"), screen_key(self.w)):
            if isinstance(geometry, QByteArray):
                self.w.restoreGeometry(geometry)
            if isinstance(state, QByteArray) and self.w.restoreState(state) and self._saved_before_the_moves():
                self.w.reset_layout()
        self.w.notice_bar.setVisible(bool(self.w.model_note.text()))
        group = self.w.settings.value("dockGroup")
        self.w.dock_groups.select(group if isinstance(group, str) else DEFAULT_GROUP)

    def _saved_before_the_moves(self) -> bool:
        """A layout saved before the left column ran down beside the bottom groups (its top row would
        squeeze them out), or before the cell inspector moved to the Basics group (tabbed behind the
        worked arithmetic, as then, it scrolls at every size)."""
        docks = self.w.docks
        return self.w.dockWidgetArea(docks["attention"]) != Qt.DockWidgetArea.RightDockWidgetArea \
            or docks["arithmetic"] in self.w.tabifiedDockWidgets(docks["inspector"])

    def save(self) -> None:
        """At close: layout, dock group, settings and view for the next start; then the worker stops."""
        self.w.settings.setValue("geometry", self.w.saveGeometry())
        self.w.settings.setValue("windowState", self.w.saveState())
        self.w.settings.setValue("layoutScreen", screen_key(self.w))
        self.w.settings.setValue("dockGroup", self.w.dock_groups.current)
        state = self.w.controller.view_state()
        data = state.config.to_dict()
        data.pop("memory_budget", None)
        self.w.settings.setValue("lastConfig", json.dumps(data, ensure_ascii=False))
        self.w.settings.setValue("lastView", json.dumps(state.session_view(), ensure_ascii=False))
        self.w.settings.sync()
        self.w.controller.shutdown()

