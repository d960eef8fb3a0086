"""The window's decoder commands: File → Open model…, ``--model``, generate, the model facts.

Kept out of app/window.py (shared by every line of work): the window calls these functions.
A GGUF file or a Hugging Face folder is added to the registry (engine.models.register_path) and loaded in the worker
before the window switches to it; a file the engine refuses (another architecture, a
SentencePiece tokenizer, …) is taken out of the registry again and its message shown, and the
window keeps the model it had.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication as Q
from PySide6.QtWidgets import QFileDialog

from engine.core.errors import EngineError
from engine.models import MODELS, model_info, register_path

from .text import fill
from .worker import Lane

OPEN_LANE = "open-model"


def _load(name: str, progress) -> str:
    """Worker job: load the model (cached by app.jobs.trained); its registry name."""
    from .jobs import trained as minilm_mode

    minilm_mode.model(name, progress)
    return name


def open_model(window, path_or_name: str) -> str:
    """Load a registry model or a local GGUF file in the worker, then show it; the registry name."""
    if path_or_name in MODELS:
        name = path_or_name
    else:
        try:  # a folder: its config.json is read (a few kB) to know encoder or decoder
            name = register_path(path_or_name)
        except EngineError as error:
            window.warn(Q.translate("DecoderWindow", "Could not open the model"), error)
            return ""
    lane = window.findChild(Lane, OPEN_LANE)  # made once, owned by the window
    if lane is None:
        lane = window.controller.worker.lane(OPEN_LANE, window)
        lane.setObjectName(OPEN_LANE)
        lane.done.connect(lambda value: _opened(window, value))
        lane.failed.connect(lambda error: _refused(window, lane, error))
        window.controller.cancelled.connect(lambda: _cancel_opening(window, lane))  # Esc while it loads
    lane.pending = name
    window.busy.setVisible(True)
    window.statusBar().showMessage(fill(Q.translate("DecoderWindow", "Opening %1…"), model_info(name).title))

    def progress(fraction: float, message: str) -> None:  # in the worker: an open cancelled by Esc says no more
        if lane.pending == name:
            window.controller.report_progress(fraction, message)

    lane.submit(_load, name, progress)
    return name


def opening(window) -> bool:
    """True while a model file or folder is being opened (its progress is the window's to show)."""
    lane = window.findChild(Lane, OPEN_LANE)
    return lane is not None and bool(getattr(lane, "pending", ""))


def add_model_choice(window, name: str) -> None:
    """Put a loaded model file in the Model chooser (once), its path as the tooltip."""
    combo = window.model_combo
    if combo.findData(name) < 0:
        combo.addItem(model_info(name).title, name)
        combo.setItemData(combo.findData(name), model_info(name).path, 3)  # tooltip: the file's path


def _cancel_opening(window, lane) -> None:
    """Esc: the loading answer is dropped and the window keeps its model (the job itself ends in the
    worker: NumPy cannot be interrupted)."""
    if not getattr(lane, "pending", ""):
        return
    lane.cancel()
    name, lane.pending = lane.pending, ""
    window.busy.setVisible(False)
    if name in MODELS and MODELS[name].path and window.model_combo.findData(name) < 0:
        del MODELS[name]
    window.statusBar().showMessage(Q.translate("DecoderWindow", "Opening the model was cancelled"), 4000)


def _opened(window, name: str) -> None:
    lane = window.findChild(Lane, OPEN_LANE)
    if lane is not None:
        lane.pending = ""
    window.busy.setVisible(False)
    add_model_choice(window, name)
    window.controller.set_model(name, 0)
    window.statusBar().showMessage(fill(Q.translate("DecoderWindow", "Opened %1"), model_info(name).title), 4000)


def _refused(window, lane, error) -> None:
    from .i18n import error_text

    window.busy.setVisible(False)
    name, lane.pending = getattr(lane, "pending", ""), ""
    if name in MODELS and MODELS[name].path and window.model_combo.findData(name) < 0:
        del MODELS[name]  # refused: not a choice of the window
    window.model_note.setText(error_text(error))
    window.warn(Q.translate("DecoderWindow", "Could not open the model"), error)


def open_model_dialog(window) -> None:
    path, _ = QFileDialog.getOpenFileName(window, Q.translate("DecoderWindow", "Open model"),
                                          window.sessions.last_folder("", "model"),
                                          Q.translate(
                                              "DecoderWindow",
                                              "Models (*.gguf config.json *.safetensors);;GGUF model (*.gguf);;All files (*)"))
    if path:
        window.sessions.remember_folder("model", path)
        chosen = Path(path)
        if chosen.name == "config.json" or chosen.suffix == ".safetensors":  # a file of a Hugging Face folder
            path = str(chosen.parent)
        open_model(window, path)


def open_folder_dialog(window) -> None:
    """File → Open model folder…: a Hugging Face folder (config.json, *.safetensors, tokenizer.json)."""
    path = QFileDialog.getExistingDirectory(window, Q.translate("DecoderWindow", "Open model folder"),
                                            window.sessions.last_folder("", "model"))
    if path:
        window.sessions.remember_folder("model", path)
        open_model(window, path)


def generate(window, greedy: bool) -> None:
    """Edit → Generate: append one token through the next-token panel (a decoder only)."""
    if not model_info(window.controller.model).predicts_next_token:
        window.statusBar().showMessage(
            Q.translate("DecoderWindow", "Generating needs a decoder: choose SmolLM2 in the Model toolbar"), 4000)
        return
    window.docks["next"].show()
    window.docks["next"].raise_()
    window.panel("next").generate(greedy)


def facts(snapshot) -> str:
    """The input panel's model facts for a decoder trace."""
    trace = snapshot.bert.trace
    c = trace.config
    text = fill(Q.translate("DecoderWindow", "%1 (%2, trained weights): %3 layers × %4 query heads sharing %5 "
                            "key/value heads, d_model %6 (d_k %7), %9, causal mask, vocabulary of %8 "
                            "pieces. The toy settings do not apply; choose “Toy engine” in the Model toolbar to use "
                            "them."),
                Q.translate("Model", model_info(snapshot.model).title), c.architecture, c.num_layers, c.num_heads,
                c.num_kv_heads, c.hidden_size, c.head_dim, c.vocab_size,
                Q.translate("DecoderWindow", "learned positions") if getattr(c, "positions", "rope") == "learned"
                else "RoPE")
    if trace.reused_positions:
        text += " " + fill(Q.translate("DecoderWindow", "KV cache: %1 of %2 positions reused, %3 computed."),
                           trace.reused_positions, trace.n, trace.n - trace.reused_positions)
    return text


def sink_text(snapshot, layer: int, head: int) -> str:
    """The heatmap caption's note on the attention sink ("" when the first token gets < half)."""
    from .jobs.decoder_view import SINK_SHARE

    view = snapshot.bert
    sink = getattr(view, "sink", None)
    if sink is None or view.n < 2:
        return ""
    share = float(sink[layer, head])
    if share < SINK_SHARE:
        return ""
    return fill(Q.translate("DecoderWindow", "attention sink: %1 → “%2”"), f"{share:.0%}",
                view.tokens[0].text)


def sink_tip(snapshot, layer: int, head: int) -> str:
    """The caption's tooltip: the attention sink in a sentence ("" when there is none)."""
    view = snapshot.bert
    if not sink_text(snapshot, layer, head):
        return ""
    return fill(Q.translate("DecoderWindow", "Attention sink: this head gives %1 of each later token's "
                                           "attention to the first token “%2” (%3 over all layers and heads). Many "
                                           "decoders park attention there when no other token is useful."),
                f"{float(view.sink[layer, head]):.0%}", view.tokens[0].text, f"{float(view.sink.mean()):.0%}")


def model_arguments(window, value: str | None) -> None:
    """``--model NAME|FILE.gguf|FOLDER`` at start."""
    if value:
        open_model(window, value if value in MODELS else str(Path(value).expanduser()))
