"""The Attention Explorer main window: dockable panels around one controller, composed of parts.

Each job is a module of app/shell/: the docks and panels (docks.py), the Model toolbar
(model_bar.py), the status bar (status.py), menus and shortcuts as data (menus.py), sessions and
recent files (sessions.py), exports (exports.py), moving around (navigation.py), help (help.py), the
state saved at exit (saved_state.py) and start-up (startup.py). The window builds them, wires them
to the controller, and keeps only what is the window's own: its Qt events, the language switch,
Reset layout, Cancel, and the calls tests and scripts use.
"""
from __future__ import annotations

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow, QWidget

from engine import AttentionConfig

from .controller import Controller
from .dock_groups import DEFAULT_GROUP
from .i18n import store_and_install
from .lazy import LazyPanel
from .shell.docks import Docks
from .shell.exports import Exports
from .shell.help import Help
from .shell.identity import APPLICATION, ORGANIZATION
from .shell.menus import build_menus
from .shell.model_bar import ModelBar
from .shell.navigation import Navigation
from .shell.saved_state import SavedState
from .shell.sessions import Sessions
from .shell.status import StatusParts


class MainWindow(QMainWindow):
    """Docks around a controller; the GUI thread only displays what the worker computed."""

    def __init__(self, config: AttentionConfig | None = None, *, restore: bool = True) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.setWindowTitle(APPLICATION)
        self.settings = QSettings(ORGANIZATION, "AttentionExplorer")
        self.startup_notice = ""  # a problem of the start-up (a saved state set aside), shown with the first picture
        self.saved_state = SavedState(self)
        if config is None and restore:
            config = self.saved_state.restored_config()
        self.controller = Controller(config or AttentionConfig(), self)
        self.exports = Exports(self)
        self.lesson = None  # {"tutorial", "step"} of the lesson path (app/lessons.py), saved in sessions
        self.setDockNestingEnabled(True)
        self.setDockOptions(QMainWindow.DockOption.AllowNestedDocks | QMainWindow.DockOption.AllowTabbedDocks)
        self.panels: dict[str, QWidget] = {}  # key → panel (a LazyPanel until first shown)
        self.docks: dict = {}  # key → QDockWidget
        self.navigation = Navigation(self)
        self.status = StatusParts(self)
        self.dock_host = Docks(self)
        self.busy, self.cancel_button = self.status.busy, self.status.cancel_button
        self.tokens_label = self.status.tokens_label
        self.model_bar = ModelBar(self)
        bar = self.model_bar
        self.model_combo, self.layer_spin, self.model_note = bar.model_combo, bar.layer_spin, bar.model_note
        self.dock_groups, self.notice_bar = bar.dock_groups, bar.notice_bar
        self.sessions = Sessions(self)
        self.recent_menu = self.sessions.recent_menu
        self.help = Help(self)
        self.command_actions, self.menus = build_menus(self)
        self.view_menu, self.presets_menu = self.menus["view"], self.menus["presets"]
        self.undo_action, self.redo_action = self.command_actions["edit.undo"], self.command_actions["edit.redo"]
        from .multilingual_window import install_multilingual

        self.by_words_action = install_multilingual(self)  # View → Attention by words (Ctrl+Shift+W)
        self.sessions.update_recent_menu()
        self.dock_groups.select(DEFAULT_GROUP)
        self._default_state = self.saveState()
        # the bottom docks stood side by side before they were tabbed: recompute the minimum now,
        # or the stale one (14 docks wide) keeps the first size from fitting a small screen
        self.layout().activate()
        self.resize(first_size(self))
        self.default_sizes()
        if restore:
            self.saved_state.restore_layout()
        c = self.controller
        c.snapshotArrived.connect(self.status.on_snapshot_changed)
        c.computeFailed.connect(self.status.on_compute_failed)
        c.busyChanged.connect(self.status.on_busy_changed)
        c.adjusted.connect(self.status.on_adjusted)
        # a decoder's snapshot comes without the Analysis arrays: made in the worker while a dock reading them is shown
        readers = [self.docks[key] for key in ("rollout", "ablation", "dashboard")]
        c.analysis_wanted = lambda: any(dock.isVisible() for dock in readers)
        for dock in readers:
            dock.visibilityChanged.connect(lambda shown: c.request_analysis() if shown else None)
        self._saved_view = None  # what the open session file holds (mark_saved), for the title's modified mark
        for signal in (c.configChanged, c.modelChanged, c.ablateChanged, c.byWordsChanged, c.sentenceBChanged):
            signal.connect(self._update_modified)
        c.recompute()
        if restore:
            self.saved_state.restore_view()

    # ------------------------------------------------------------------ the window's own
    def default_sizes(self) -> None:
        """The first start's proportions for the window's size (also after Reset layout: the
        saved default state holds the sizes of a window not yet resized)."""
        from .layout_sizes import apply_default_sizes

        apply_default_sizes(self)

    def reset_layout(self) -> None:
        for dock in self.docks.values():
            dock.setFloating(False)
            dock.show()
        self.restoreState(self._default_state)
        self.notice_bar.setVisible(bool(self.model_note.text()))
        self.dock_groups.forget_heights()
        self.dock_groups.select(DEFAULT_GROUP)
        self.default_sizes()
        QTimer.singleShot(0, self.dock_host.hide_stale_tab_bars)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().resizeEvent(event)
        self.notice_bar.fit_width()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().showEvent(event)
        QTimer.singleShot(0, self.dock_host.hide_stale_tab_bars)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt name
        self.saved_state.save()
        super().closeEvent(event)

    def _session_view(self) -> tuple:
        """What a session saves that a change of settings, model or lesson moves (not the selection,
        which is only known once a result arrives)."""
        c = self.controller
        return (c.config, c.model, c.layer, c.by_words, c.ablate, c.sentence_b, self.lesson and dict(self.lesson))

    def mark_saved(self) -> None:
        """The open session file holds what is on screen now (opened or saved): no modified mark."""
        self._saved_view = self._session_view()
        self.setWindowModified(False)

    def _update_modified(self, *_args) -> None:
        """The title marks the session modified ("name.json* — …") once the settings, the model (a
        lesson's step switches it) or the heads differ from the file's."""
        if self._saved_view is not None:
            self.setWindowModified(self._session_view() != self._saved_view)

    def undo(self) -> None:
        """Go back to the settings before the last change."""
        self.controller.undo()

    def cancel_computation(self) -> None:
        """Esc: stop computing; the text and settings stay as typed, the pictures as they were."""
        if self.controller.is_idle():
            self.controller.cancelled.emit()  # no computation: long panel jobs (the head ranking) still stop
            return
        self.controller.cancel()
        self.statusBar().showMessage(self.tr("Cancelled: the pictures show the last result; F5 computes what you typed"))

    def switch_language(self, code: str) -> "MainWindow":
        """Store ``code`` (system, en, zh_CN), install its translators and rebuild this window in it.

        Returns the window now on screen: a new MainWindow with the same view state (settings,
        head, focus, stage, model, layer, sentence B), undo history, geometry and dock layout (this
        one is closed and keeps the new one as ``successor``), or this window when the language
        does not change.
        """
        if not store_and_install(code):
            return self
        new = MainWindow(restore=False)
        new.restoreGeometry(self.saveGeometry())
        new.restoreState(self.saveState())
        new.controller.adopt_history(self.controller)
        new.controller.apply_view_state(self.controller.view_state())
        if self.sessions.session_path:  # the title keeps the open session's name
            new.sessions.set_session_title(self.sessions.session_path)
        new.dock_groups.select(self.dock_groups.current)
        new.navigation.adopt_preset(self.navigation)
        new.show()
        self.close()
        self.successor = new  # Qt keeps no reference to a parentless window: this one does
        return new

    def panel(self, key: str) -> QWidget:
        """The panel behind dock ``key``, built now if it is lazy and was never shown."""
        widget = self.panels[key]
        return widget.build() if isinstance(widget, LazyPanel) else widget

    def built_panel(self, key: str) -> QWidget | None:
        """The panel behind dock ``key`` if it exists: None for a lazy dock never shown (nothing built)."""
        widget = self.panels.get(key)
        return widget.panel if isinstance(widget, LazyPanel) else widget

    def warn(self, title: str, error: BaseException) -> None:
        """An error in the status bar and, on a real screen, a message box."""
        self.status.warn(title, error)

    # ------------------------------------------------------------------ tests and scripts
    def open_session(self, path: str, **options) -> bool:
        return self.sessions.open_session(path, **options)

    def open_session_in_background(self, path: str, **options) -> None:
        self.sessions.open_session_in_background(path, **options)

    def save_session(self, path: str) -> bool:
        return self.sessions.save_session(path)

    def export_heatmap(self, path: str, head, width: int = 1600) -> bool:
        return self.exports.export_heatmap(path, head, width)

    def export_data(self, path: str) -> None:
        self.exports.export_data(path)

    def apply_preset(self, index: int):
        return self.navigation.apply_preset(index)

    def show_player(self):
        return self.navigation.show_player()

    def wait_until_idle(self, timeout: float = 10.0) -> bool:
        """Process events until the latest request is on screen (tests and scripts)."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            QApplication.processEvents()
            if self.controller.is_idle() and not self.sessions.is_opening_session():
                QApplication.processEvents()
                return True
            time.sleep(0.002)
        return False


def first_size(window: QWidget):
    """1560 × 1000, or less: never larger than the screen's available area (minus room for
    the window manager's title bar and frame)."""
    from PySide6.QtCore import QSize

    screen = window.screen() or QApplication.primaryScreen()
    if screen is None:
        return QSize(1560, 1000)
    available = screen.availableGeometry()
    return QSize(min(1560, available.width() - 16), min(1000, available.height() - 48))
