"""Menus and shortcuts as data (napari's idea): one table of commands from which the menus, the
keyboard-shortcuts dialog and the translation sources (QT_TRANSLATE_NOOP, context "MainWindow")
all come. A new command is one row; ``enabled`` names the window's signal that turns it on and off.

Menus other modules fill (Model, the presets, the dock list, the language, the recent files) are
built by those modules into the menus this table creates.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QCoreApplication as Q
from PySide6.QtGui import QAction, QKeySequence

from engine import STAGES

from .. import decoder_window, lesson_views
from ..i18n import install_language_menu, setting_label
from ..presets import PRESETS, menu_presets, translated
from ..text import fill
from .actions import add_action


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 - the marker lupdate looks for
    return text


def supported_families(text: str) -> str:
    """A tip with the registry's lists of families put in (engine/models/families/: one module a family)."""
    from engine.models.families import folder_families, gguf_architectures

    return text.replace("{families}", folder_families()).replace("{architectures}", gguf_architectures())


def window_text(text: str) -> str:
    """``text`` translated in the window's context (the table's strings are marked with QT_TRANSLATE_NOOP)."""
    return Q.translate("MainWindow", text)


@dataclass(frozen=True)
class Command:
    id: str
    menu: str  # key of MENUS
    title: str  # untranslated (QT_TRANSLATE_NOOP); shown through window_text()
    run: Callable  # run(window)
    keys: tuple = ()  # QKeySequence strings or StandardKeys; the first is the one menus show
    tip: str = ""
    enabled: str = ""  # "undo" / "redo": enabled by the controller's historyChanged; "" always on
    separator: bool = False  # a separator before this row


MENUS = {  # key → title, in menu-bar order; "model" is filled by app/local_models_dialog.py
    "file": QT_TRANSLATE_NOOP("MainWindow", "&File"), "model": "", "edit": QT_TRANSLATE_NOOP("MainWindow", "&Edit"), "view": QT_TRANSLATE_NOOP("MainWindow", "&View"),
    "player": QT_TRANSLATE_NOOP("MainWindow", "P&layer"), "lessons": QT_TRANSLATE_NOOP("MainWindow", "Le&ssons"),
    "presets": QT_TRANSLATE_NOOP("MainWindow", "&Presets"), "help": QT_TRANSLATE_NOOP("MainWindow", "&Help"),
}
SK = QKeySequence.StandardKey
COMMANDS: tuple[Command, ...] = (
    Command("file.open", "file", QT_TRANSLATE_NOOP("MainWindow", "&Open session…"), lambda w: w.sessions.open_session_dialog(),
            (SK.Open,), QT_TRANSLATE_NOOP("MainWindow", "Open a saved sentence with all its settings")),
    Command("file.open_model", "file", QT_TRANSLATE_NOOP("MainWindow", "Open &model…"), lambda w: decoder_window.open_model_dialog(w),
            (), QT_TRANSLATE_NOOP("MainWindow", "Open a local GGUF model file ({architectures})")),
    Command("file.open_folder", "file", QT_TRANSLATE_NOOP("MainWindow", "Open model &folder…"),
            lambda w: decoder_window.open_folder_dialog(w), (),
            QT_TRANSLATE_NOOP("MainWindow", "Open a Hugging Face model folder (config.json, safetensors, tokenizer.json) of "
                            "one of these families: {families}")),
    Command("file.save", "file", QT_TRANSLATE_NOOP("MainWindow", "&Save session…"), lambda w: w.sessions.save_session_dialog(),
            (SK.Save,), QT_TRANSLATE_NOOP("MainWindow", "Save the sentence and every setting to a file")),
    Command("file.export_heatmap", "file", QT_TRANSLATE_NOOP("MainWindow", "Export &heatmap…"),
            lambda w: w.exports.export_heatmap_dialog(), ("Ctrl+E",),
            QT_TRANSLATE_NOOP("MainWindow", "Save the selected head's heatmap as PNG or SVG"), separator=True),
    Command("file.export_all", "file", QT_TRANSLATE_NOOP("MainWindow", "Export &all heads as one image…"),
            lambda w: w.exports.export_heatmap_dialog(all_heads=True), ("Ctrl+Shift+E",),
            QT_TRANSLATE_NOOP("MainWindow", "Save every head's heatmap in one grid image")),
    Command("file.export_data", "file", QT_TRANSLATE_NOOP("MainWindow", "Export &data…"), lambda w: w.exports.export_data_dialog(),
            ("Ctrl+D",), QT_TRANSLATE_NOOP("MainWindow", "Save every array of the computation (.npz, .json or .csv)")),
    Command("file.export_steps", "file", QT_TRANSLATE_NOOP("MainWindow", "Export &step-through…"),
            lambda w: w.exports.export_steps_dialog(), ("Ctrl+Alt+E",),
            QT_TRANSLATE_NOOP("MainWindow", "Save the player's stages as an animated GIF, an MP4 video or a PDF handout")),
    Command("file.copy_image", "file", QT_TRANSLATE_NOOP("MainWindow", "&Copy image to clipboard"), lambda w: w.exports.copy_image(),
            ("Ctrl+Shift+C",), QT_TRANSLATE_NOOP("MainWindow", "Copy the selected head's heatmap as an image")),
    Command("file.quit", "file", QT_TRANSLATE_NOOP("MainWindow", "&Quit"), lambda w: w.close(), (SK.Quit,), separator=True),
    # Ctrl+Z everywhere outside a text box (a text or spin box takes Ctrl+Z for its own typing first,
    # Qt's ShortcutOverride); Ctrl+Alt+Z undoes the settings from inside one too
    Command("edit.undo", "edit", QT_TRANSLATE_NOOP("MainWindow", "&Undo settings change"), lambda w: w.controller.undo(),
            ("Ctrl+Z", "Ctrl+Alt+Z"), QT_TRANSLATE_NOOP("MainWindow", "Go back to the settings before the last change"), "undo"),
    Command("edit.redo", "edit", QT_TRANSLATE_NOOP("MainWindow", "&Redo settings change"), lambda w: w.controller.redo(),
            ("Ctrl+Shift+Z", "Ctrl+Y", "Ctrl+Alt+Shift+Z"),
            QT_TRANSLATE_NOOP("MainWindow", "Apply again the settings change you undid"), "redo"),
    Command("edit.recompute", "edit", QT_TRANSLATE_NOOP("MainWindow", "&Recompute"), lambda w: w.controller.recompute(), ("F5",)),
    Command("edit.generate", "edit", QT_TRANSLATE_NOOP("MainWindow", "&Generate the next token"),
            lambda w: decoder_window.generate(w, True), ("Ctrl+Return",)),
    Command("edit.sample", "edit", QT_TRANSLATE_NOOP("MainWindow", "Generate a &sampled token"),
            lambda w: decoder_window.generate(w, False), ("Ctrl+Shift+Return",)),
    Command("edit.cancel", "edit", QT_TRANSLATE_NOOP("MainWindow", "&Cancel computation"), lambda w: w.cancel_computation(), ("Esc",)),
    Command("edit.next_head", "edit", QT_TRANSLATE_NOOP("MainWindow", "Next head"), lambda w: w.navigation.step_head(1), ("Ctrl+]",),
            separator=True),
    Command("edit.previous_head", "edit", QT_TRANSLATE_NOOP("MainWindow", "Previous head"), lambda w: w.navigation.step_head(-1),
            ("Ctrl+[",)),
    Command("edit.next_token", "edit", QT_TRANSLATE_NOOP("MainWindow", "Next token"), lambda w: w.navigation.step_focus(1),
            ("Ctrl+Down",)),
    Command("edit.previous_token", "edit", QT_TRANSLATE_NOOP("MainWindow", "Previous token"), lambda w: w.navigation.step_focus(-1),
            ("Ctrl+Up",)),
    *(Command(f"edit.stage.{stage}", "edit", QT_TRANSLATE_NOOP("MainWindow", "Show stage: %1"),
              lambda w, s=stage: w.controller.select(stage=s), (f"Ctrl+{number}",))
      for number, stage in enumerate(STAGES, start=1)),
    Command("view.reset_layout", "view", QT_TRANSLATE_NOOP("MainWindow", "Reset &layout"), lambda w: w.reset_layout(), (),
            QT_TRANSLATE_NOOP("MainWindow", "Put every panel back where it started"), separator=True),
    Command("view.similarity", "view", QT_TRANSLATE_NOOP("MainWindow", "Word &similarity (trained models)…"),
            lambda w: w.navigation.show_similarity(), (),
            QT_TRANSLATE_NOOP("MainWindow", "Cosine between words' input embeddings and contextual vectors: cake / pie / keyboard")),
    Command("player.show", "player", QT_TRANSLATE_NOOP("MainWindow", "Show the step-through player"),
            lambda w: w.navigation.show_player(), ("F6",)),
    # F7 / F8 / F9 first: a text or spin box with the focus (the usual state after typing) takes
    # Ctrl+Left / Ctrl+Right for its cursor, never a function key
    Command("player.next", "player", QT_TRANSLATE_NOOP("MainWindow", "Next step"), lambda w: w.navigation.show_player().next_stage(),
            ("F8", "Ctrl+Right")),
    Command("player.previous", "player", QT_TRANSLATE_NOOP("MainWindow", "Previous step"),
            lambda w: w.navigation.show_player().previous_stage(), ("F7", "Ctrl+Left")),
    Command("player.play", "player", QT_TRANSLATE_NOOP("MainWindow", "Play / pause"), lambda w: w.navigation.show_player().toggle_play(),
            ("F9", "Ctrl+Space")),
    Command("lessons.exercises", "lessons", QT_TRANSLATE_NOOP("MainWindow", "&Exercises: predict, then reveal…"),
            lambda w: w.navigation.show_exercises(), ("Ctrl+Alt+X",),
            QT_TRANSLATE_NOOP("MainWindow", "Predict a score, a weight or a word, then see the app's answer and the worked arithmetic")),
    Command("lessons.path", "lessons", QT_TRANSLATE_NOOP("MainWindow", "&Lesson path…"), lambda w: w.navigation.show_lesson_path(),
            ("Ctrl+Alt+L",), QT_TRANSLATE_NOOP("MainWindow", "Walk a tutorial's presets in its order, with a short text, next and previous")),
    Command("lessons.parallel", "lessons", QT_TRANSLATE_NOOP("MainWindow", "&GPU against RNN: one product or n steps…"),
            lambda w: lesson_views.show_parallel(w), separator=True),
    Command("lessons.diagram", "lessons", QT_TRANSLATE_NOOP("MainWindow", "The paper's &diagram, from the player's stages…"),
            lambda w: lesson_views.show_diagram(w)),
    Command("lessons.movie_sum", "lessons", QT_TRANSLATE_NOOP("MainWindow", "The &Netflix sum: weights · V…"),
            lambda w: lesson_views.show_movie_sum(w)),
    Command("help.guide", "help", QT_TRANSLATE_NOOP("MainWindow", "&Getting started"), lambda w: w.help.guide(), (SK.HelpContents,),
            QT_TRANSLATE_NOOP("MainWindow", "What each panel shows and how to use it")),
    Command("help.shortcuts", "help", QT_TRANSLATE_NOOP("MainWindow", "&Keyboard shortcuts"), lambda w: w.help.shortcuts(), (),
            QT_TRANSLATE_NOOP("MainWindow", "Every menu command that has a shortcut")),
    Command("help.about", "help", QT_TRANSLATE_NOOP("MainWindow", "&About"), lambda w: w.help.about(), (), separator=True),
)


def title_of(command: Command) -> str:
    """The translated menu text (a stage's row names its stage)."""
    if command.id.startswith("edit.stage."):
        return fill(window_text(command.title), setting_label("stage", command.id.rpartition(".")[2]))
    return window_text(command.title)


def build_menus(window) -> tuple[dict[str, QAction], dict]:
    """The menu bar from COMMANDS (plus the menus other modules fill): the actions by command id, the menus by key."""
    bar = window.menuBar()
    menus = {}
    for key, title in MENUS.items():
        if key == "model":  # the Model menu: local models, the bundled models' installer
            from .. import local_models_dialog

            local_models_dialog.add_menu(window, bar)
        else:
            menus[key] = bar.addMenu(window_text(title))
    actions: dict[str, QAction] = {}
    for command in COMMANDS:
        menu = menus[command.menu]
        if command.id == "view.reset_layout":  # the dock groups and every dock's toggle come first
            menu.addMenu(Q.translate("MainWindow", "&Panels")).addActions(window.dock_groups.menu_actions())
            for dock in window.docks.values():
                menu.addAction(dock.toggleViewAction())
        if command.separator:
            menu.addSeparator()
        action = add_action(window, menu, title_of(command), lambda _=False, c=command: c.run(window),
                            None, supported_families(window_text(command.tip)) if command.tip else "")
        action.setObjectName(command.id)
        if command.keys:
            action.setShortcuts([QKeySequence(key) for key in command.keys])
        if command.enabled:
            action.setEnabled(False)
        actions[command.id] = action
        if command.id == "file.open":  # File → Open recent right below Open session
            menus["file"].addMenu(window.sessions.recent_menu)
    install_language_menu(window, menus["view"])
    for index, item in enumerate(menu_presets()):
        if index == len(PRESETS):
            menus["presets"].addSeparator()  # then the real models' presets
        add_action(window, menus["presets"], translated(item).title,
                   lambda _=False, i=index: window.navigation.apply_preset(i))
    window.controller.historyChanged.connect(lambda can_undo, can_redo: (actions["edit.undo"].setEnabled(can_undo),
                                                                        actions["edit.redo"].setEnabled(can_redo)))
    return actions, menus


def shortcut_rows(window) -> list[tuple[str, str]]:
    """(title, keys) of every command with a shortcut: the table's first, then those other modules
    added to the menus (Attention by words, Local models …)."""
    def keys(action) -> str:
        return Q.translate("MainWindow", ", ").join(key.toString(QKeySequence.SequenceFormat.NativeText) for key in action.shortcuts())

    rows, seen = [], set()
    for command in COMMANDS:
        action = window.command_actions[command.id]
        seen.add(action)
        if command.keys:
            rows.append((title_of(command).replace("&", ""), keys(action)))
    from PySide6.QtWidgets import QMenu

    for menu in window.menuBar().findChildren(QMenu):
        for action in menu.actions():
            if action not in seen and not action.shortcut().isEmpty():
                seen.add(action)
                rows.append((action.text().replace("&", ""), keys(action)))
    return rows
