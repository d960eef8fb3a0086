"""Open a preset of the Presets menu completely: its settings (or model and sentence), the token to
focus, the head, the stage, and its caption.

Toy presets apply at once; the focus token is found in the result when it arrives (the tokenizer
runs in the worker). Real-model presets first ask the worker for
:func:`engine.analysis.meaning.strongest_head` of the preset's query → key, then open the model at that
layer and head with the query focused, and fill the caption's %1 … %5 (query, key, layer, head,
weight) from that finding: the figure a reader sees is the app's own computation.
The caption stays while the settings (and model) are the preset's; any other change hides it.
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from engine.models import model_info

from .presets import Preset, menu_presets, translated
from .text import fill
from .view_state import ViewState


class PresetOpener(QObject):
    """Applies presets to a controller; ``captionChanged(text)`` says what to show ("" = nothing)."""

    captionChanged = Signal(str)
    compareRequested = Signal(object)  # (word A, sentence B, word B) of a preset about two sentences
    keyChosen = Signal(int)  # the key token of a real-model preset's relation ("animal"): Model layers' target
    twoKeysFound = Signal(object)  # (model, text, app.jobs.words.key_grids) of a preset that weighs the key against a rival
    opened = Signal(object)  # the (translated) Preset, once its focus, head and stage are on screen

    def __init__(self, controller, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.preset: Preset | None = None  # the preset on screen (or being opened)
        self.caption = ""
        self._pending = False  # waiting for the result to find the focus token in
        self._opening: Preset | None = None  # the real-model preset whose finding the worker is looking up
        self._recaption = False  # that finding only translates the caption (the language switch), opens nothing
        self.index: int | None = None  # the preset's entry in the Presets menu
        self._config = None  # the settings the caption belongs to
        self._cell = None  # (model, layer, query, key) to inspect once a real model's snapshot is on screen
        self._lane = controller.worker.lane("preset", self)
        self._lane.done.connect(self._on_found)
        self._lane.failed.connect(self._on_not_found)
        controller.snapshotArrived.connect(self._on_snapshot)
        controller.configChanged.connect(self._on_config_changed)
        controller.modelChanged.connect(self._on_model_changed)

    # ------------------------------------------------------------------ opening
    def open(self, index: int) -> Preset:
        """Open entry ``index`` of :func:`app.presets.menu_presets`."""
        item = translated(menu_presets()[index])
        self.index, self._recaption = index, False
        self._lane.cancel()  # a real-model preset still being looked up must not open over this one
        self.preset, self._pending, self._cell, self._opening = item, False, None, None
        self._show("")
        c = self.controller
        if model_info(item.model).configurable:
            config = item.config()
            self._config, self._pending = config, True
            c.apply_view_state(ViewState(config, head=item.head, focus=0, stage=item.stage, model=item.model,
                                         layer=0, sentence_b=c.sentence_b))
            self._on_snapshot(c.snapshot)
        else:
            from .jobs.words import preset_finding

            # set before by-words recomputes: that recompute emits the settings on screen, which may be the
            # previous preset's, and must not read as a redo that brings that preset back
            self._opening = item
            c.set_by_words(bool(item.by_words))
            self._config = c.config.replace(text=item.settings["text"])
            self._lane.submit(preset_finding, item.model, item, c.report_progress)
        return item

    def _on_found(self, finding) -> None:
        item, c = self._opening, self.controller  # the preset the finding was looked up for
        if item is None:
            return
        self._opening, self.preset = None, item
        if self._recaption:
            self._recaption = False
            self._show(finding["caption"])
            return
        self._show(finding["caption"])
        if finding["key"] is not None:  # by pieces: the relation's cell goes to the inspector
            self._cell = (item.model, finding["layer"], finding["focus"], finding["key"])
        c.apply_view_state(ViewState(self._config, head=finding["head"], focus=finding["focus"], stage=item.stage,
                                     model=item.model, layer=finding["layer"], sentence_b=c.sentence_b,
                                     by_words=bool(item.by_words)))
        if finding.get("key_piece") is not None:  # by words too: the key word's first piece
            self.keyChosen.emit(int(finding["key_piece"]))
        if finding["compare"] is not None:
            self.compareRequested.emit(finding["compare"])
        if finding.get("two_keys") is not None:
            self.twoKeysFound.emit((item.model, self._config.text, finding["two_keys"]))
        self.opened.emit(item)

    def _on_not_found(self, _error) -> None:
        """The model is missing (or the words are not in the sentence): open it anyway; the controller
        reports why (and how to install the model) as for any computation."""
        item, c = self._opening, self.controller
        self._opening = None
        if self._recaption:  # the caption's figures cannot be found again: the preset shows without them
            self._recaption = False
            return
        if item is not None:
            c.apply_view_state(ViewState(self._config, stage=item.stage, model=item.model, sentence_b=c.sentence_b,
                                         by_words=bool(item.by_words)))

    def _on_snapshot(self, snapshot) -> None:
        if self._cell is not None and snapshot is not None and (snapshot.model, snapshot.layer) == self._cell[:2]:
            query, key = self._cell[2:]
            self._cell = None
            self.controller.inspect(query, key)  # the relation's cell: the inspector takes it apart
        item = self.preset
        if not self._pending or item is None or snapshot is None or snapshot.result.config != self._config \
                or snapshot.model != item.model:
            return
        self._pending = False
        self.controller.select(head=item.head, focus=item.focus_index(snapshot.result.token_texts), stage=item.stage)
        self._show(item.caption)
        self.opened.emit(item)

    def adopt(self, other: "PresetOpener") -> None:
        """Show the caption of the preset ``other`` has open, translated again (the window was rebuilt
        in another language, with ``other``'s settings, model and selection already applied)."""
        if other.index is None or other.preset is None:
            return
        item = translated(menu_presets()[other.index])
        self.preset, self.index, self._config = item, other.index, other._config
        if model_info(item.model).configurable:
            self._show(item.caption)
            return
        from .jobs.words import preset_finding

        # the caption's figures are the worker's finding: found again (the model is loaded), in this language
        self._opening, self._recaption = item, True
        self._lane.submit(preset_finding, item.model, item, self.controller.report_progress)

    # ------------------------------------------------------------------ the caption
    def _show(self, text: str) -> None:
        self.caption = text
        if text and self.preset is not None:  # what redo brings back
            self._last_shown = (self._config, self.preset.model, self.preset, text)
        self.captionChanged.emit(text)

    def _on_config_changed(self, config) -> None:
        if self.caption and config != self._config:
            self.preset = None
            self._show("")
        last = getattr(self, "_last_shown", None)
        if not self.caption and last is not None and self._opening is None and config == last[0] and self.controller.model == last[1]:
            self.preset = last[2]  # undo, then redo: the preset's settings are back, so is its explanation
            self._show(last[3])

    def _on_model_changed(self, model: str) -> None:
        if self.caption and self.preset is not None and model != self.preset.model:
            self.preset = None
            self._show("")
