"""The window's side of issue 13, kept out of app/window.py: View → Attention by words, the model
presets in the Presets menu (switch model, sentence, words; layer, head and focus found by the
worker) and the caption they show in the input panel."""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel

from engine.models import model_info

from .presets import MODEL_PRESETS


def install_multilingual(window) -> None:
    controller = window.controller
    action = QAction(QCoreApplication.translate("MultilingualWindow", "Attention by &words"), window)
    action.setObjectName("byWordsAction")
    action.setCheckable(True)
    action.setChecked(controller.by_words)
    action.setShortcut(QKeySequence("Ctrl+Shift+W"))
    tip = QCoreApplication.translate("MultilingualWindow", "Roll word pieces up into words in the heatmap, head grid "
                                     "and layers overview")
    action.setStatusTip(tip)
    action.toggled.connect(controller.set_by_words)
    controller.byWordsChanged.connect(lambda on: action.isChecked() != on and action.setChecked(on))
    window.view_menu.addSeparator()
    window.view_menu.addAction(action)
    window.by_words_action = action

    caption = QLabel()
    caption.setObjectName("presetCaption")
    caption.setWordWrap(True)
    caption.setStyleSheet("background: #fff8e1; border: 1px solid #ffe082; padding: 4px;")
    caption.setVisible(False)
    window.panels["attention"].layout().insertWidget(1, caption)  # under the head / stage bar, over the heatmap
    window.preset_caption = caption
    lane = controller.worker.lane("model-preset", window)
    state = {"text": None}

    def on_found(value: dict) -> None:
        controller.head, controller.focus = value["head"], value["focus"]  # kept in range when the snapshot arrives
        controller.set_model(value["model"], value["layer"])  # recomputes only when the layer changed
        controller.selectionChanged.emit()
        controller._request_explanation()  # the worked arithmetic for the found head and focus
        caption.setText(value["caption"])
        caption.setVisible(True)
        state["text"] = value["text"]
        if value["compare"] is not None:  # the preset is about two sentences: show them
            window.docks["words"].show()
            window.docks["words"].raise_()

    def on_failed(error) -> None:
        window._warn(QCoreApplication.translate("MultilingualWindow", "Could not open the preset"), error)

    def on_config(config) -> None:  # the caption belongs to the preset's sentence
        if state["text"] is not None and config.text != state["text"]:
            caption.setVisible(False)
            state["text"] = None

    lane.done.connect(on_found)
    lane.failed.connect(on_failed)
    controller.configChanged.connect(on_config)
    controller.modelChanged.connect(lambda name: model_info(name).configurable and caption.setVisible(False))

    window.presets_menu.addSeparator()
    for preset in MODEL_PRESETS:
        entry = model_info(preset.model)
        item = QAction(QCoreApplication.translate("Presets", preset.title), window)
        item.setStatusTip(preset.source)
        item.triggered.connect(lambda _=False, p=preset: open_model_preset(window, p, lane))
        window.presets_menu.addAction(item)
        if not entry.is_installed():
            item.setToolTip(entry.install_command)
    window.open_model_preset = lambda index: open_model_preset(window, MODEL_PRESETS[index], lane)


def open_model_preset(window, preset, lane) -> None:
    """Switch to the preset's model and sentence (by words when it says so); the worker finds the
    layer, head and focus (engine.meaning.strongest_head) and the caption's figures."""
    from .multilingual import preset_finding

    controller = window.controller
    translated = replace(preset, title=QCoreApplication.translate("Presets", preset.title),
                         caption=QCoreApplication.translate("PresetCaption", preset.caption))
    controller.set_by_words(preset.by_words)
    controller.update_config(text=preset.settings["text"])
    controller.set_model(preset.model)
    if preset.compare is not None:
        panel = window.panel("words")
        panel.set_words(*preset.compare)
    lane.submit(preset_finding, preset.model, translated, controller._report_progress)
