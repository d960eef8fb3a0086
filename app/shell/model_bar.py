"""The Model toolbar (model, layer), the dock groups' toolbar and the notice row under them."""
from __future__ import annotations

import re

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication as Q, QSignalBlocker, Qt
from PySide6.QtWidgets import QLabel

from engine.core.errors import ModelNotInstalled
from engine.models import MODELS, model_info

from .. import bindings
from ..text import fill


# the engine's loading messages (English, with values) → the interface language's
PROGRESS_MESSAGES = (
    (re.compile(r"layer (\d+) of (\d+)"), QT_TRANSLATE_NOOP("MainWindow", "layer %1 of %2")),
    (re.compile(r"checking (.+)"), QT_TRANSLATE_NOOP("MainWindow", "checking %1")),
    (re.compile(r"reading (.+)"), QT_TRANSLATE_NOOP("MainWindow", "reading %1")),
    (re.compile(r"ready"), QT_TRANSLATE_NOOP("MainWindow", "ready")),
)


def progress_text(message: str) -> str:
    """A model's loading message in the interface language (the status bar mixed languages:
    "正在加载 SmolLM2-135M（解码器）：ready（100%）"); one the table does not know is shown as it came."""
    for pattern, template in PROGRESS_MESSAGES:
        match = pattern.fullmatch(message)
        if match:
            return fill(Q.translate("MainWindow", template), *match.groups())
    return message


class ModelBar:
    """``model_combo``, ``layer_spin``, ``dock_groups``, ``notice_bar`` and ``model_note``: the rows above the docks."""

    def __init__(self, window) -> None:
        self.w = window
        self._build_model_bar()

    def _build_model_bar(self) -> None:
        """Toolbar: which model computes (toy engine with your settings, or pretrained MiniLM)."""
        from PySide6.QtWidgets import QComboBox, QSpinBox, QToolBar

        bar = QToolBar(Q.translate("MainWindow", "Model"), self.w)
        bar.setObjectName("modelToolBar")
        bar.addWidget(QLabel(" " + Q.translate("MainWindow", "Model") + " "))
        self.model_combo = QComboBox()
        self.model_combo.setObjectName("modelCombo")
        for entry in MODELS.values():
            self.model_combo.addItem(Q.translate("Model", entry.title), entry.name)
        self.model_combo.setToolTip(Q.translate("MainWindow", "The toy engine uses your d_model, heads and weights; MiniLM is a real "
                                            "trained model (all-MiniLM-L6-v2) run by the same NumPy attention"))
        bar.addWidget(self.model_combo)
        bar.addWidget(QLabel("  " + Q.translate("MainWindow", "Layer") + " "))
        self.layer_spin = QSpinBox()
        self.layer_spin.setObjectName("layerSpin")
        self.layer_spin.setRange(0, 63)  # narrowed to the model's layers once it is loaded
        self.layer_spin.setToolTip(Q.translate("MainWindow", "Layer of the pretrained model shown in every panel (0-based)"))
        self.layer_spin.setEnabled(False)
        bar.addWidget(self.layer_spin)
        self.w.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
        from ..dock_groups import DockGroups
        from ..notice_bar import NoticeBar

        self.dock_groups = DockGroups(self.w, self.w.docks)  # Basics / Steps / Labs / Model / Analysis
        self.w.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.dock_groups.toolbar)
        self.w.addToolBarBreak(Qt.ToolBarArea.TopToolBarArea)
        self.notice_bar = NoticeBar(self.w)  # the model's messages on a row of their own
        self.w.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.notice_bar)
        self.model_note = self.notice_bar.label
        self.fields = {"model": self.model_combo, "layer": self.layer_spin}  # the binding table: view state → widget
        for widget in self.fields.values():
            bindings.changed(widget).connect(lambda _=None: self.w.controller.set_model(
                *(bindings.read(self.fields[name]) for name in ("model", "layer"))))
        self.w.controller.modelChanged.connect(self._on_model_changed)
        self.w.controller.modelProgress.connect(self._on_model_progress)

    def _on_model_changed(self, model: str) -> None:
        with QSignalBlocker(self.model_combo), QSignalBlocker(self.layer_spin):
            if self.model_combo.findData(model) < 0 and model in MODELS:  # a local file or folder (session, --model)
                self.model_combo.addItem(model_info(model).title, model)
            for name, widget in self.fields.items():
                bindings.write(widget, getattr(self.w.controller, name))
        capabilities = model_info(model).capabilities
        pretrained = not capabilities.configurable
        self.layer_spin.setEnabled(pretrained)
        self.w.panels["input"].set_settings_enabled(not pretrained)
        for panel in self.w.panels.values():
            supported = panel.supports(capabilities)
            panel.setEnabled(supported)
            panel.setToolTip("" if supported else Q.translate("MainWindow", "Uses the toy engine: choose “Toy engine” in the Model toolbar"))
        if not pretrained:
            self.w.panels["input"].show_model_facts("")
        switched, self._model = model != getattr(self, "_model", None), model
        if pretrained:
            self.model_note.clear()
            if switched and self._bring_forward(capabilities):
                dock = "next" if capabilities.next_token_logits else "layers"
                self.w.docks[dock].show()
                self.w.docks[dock].raise_()
        elif isinstance(self.w.controller.last_failure, ModelNotInstalled):
            self.model_note.setText(self.w.controller.last_error)
        else:  # back on the toy engine by choice: an old model's message is no longer true
            self.model_note.clear()

    def _bring_forward(self, capabilities) -> bool:
        """Whether switching to a trained model brings its dock (Next token, Model layers) forward: only
        inside the Model place, or when nothing in the place shown can show the model. The place the
        user chose (Analysis, Evidence) stays; a typed layer never moves it."""
        groups = self.w.dock_groups
        if groups.current == "model":
            return True
        return not any(self.w.panels[key].supports(capabilities) for key in groups.keys(groups.current))

    def _on_model_progress(self, fraction: float, message: str) -> None:
        from ..decoder_window import opening

        if self.w.controller.is_idle() and not opening(self.w):
            return  # a load's report that arrived after Esc cancelled it: nothing is loading any more
        title = Q.translate("Model", model_info(self.w.controller.model).title)
        if fraction >= 1.0:  # loaded; its first picture is still being computed, so the busy sign stays
            self.w.statusBar().showMessage(fill(Q.translate("MainWindow", "%1 loaded: computing its picture…"), title))
            return
        self.w.busy.setVisible(True)
        self.w.statusBar().showMessage(fill(Q.translate("MainWindow", "Loading %1: %2 (%3%)"), title,
                                            progress_text(message), int(fraction * 100)))


    def on_snapshot(self, snapshot) -> None:
        """The layer box's range follows the model on screen, and its value the layer shown (kept within
        the model by the worker when the model before was deeper)."""
        if snapshot.bert is not None:
            with QSignalBlocker(self.layer_spin):
                self.layer_spin.setMaximum(snapshot.bert.num_layers - 1)
                if snapshot.model == self.w.controller.model:
                    self.layer_spin.setValue(self.w.controller.layer)
