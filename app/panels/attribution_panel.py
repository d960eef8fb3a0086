"""Attribution: how a decoder's prediction is built, in three pictures of one worker task
(app/jobs/attribution.py, engine/analysis/dla.py and lens_grid.py).

- **Heads** (layers × heads): each head's direct share of the answer's logit at the last position
  (or of the logit difference answer − contrast), through the final norm with its scale frozen.
  A click selects that head in the window, as the head grid does. Red pushes the answer up, blue
  down.
- **Layer by layer**: the logit read from the residual stream after the embedding and after each
  attention and MLP, one line for the last position and one for the focused token.
- **Logit lens grid** (layers + 1 × tokens): each cell coloured by p(answer) as if that layer were
  the last; the hover names its top token; a click opens that layer and token.

The caption says what the pictures leave out (indirect effects through later layers, the biases
and the norm's scale) and shows the sum. With By words, the selected head's sources are words.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from engine.models import model_info

from ..controller import Controller
from ..heatmap import DIVERGING_MAP, HeatmapView, symmetric_levels
from ..i18n import error_text
from ..text import fill
from .base import Panel

LENS_MAP = "viridis"
CRAMPED_HEIGHT = 260  # px: a dock this short (a 600-pixel screen) shows the caption's first sentence
LAST_PEN = pg.mkPen("#1a73e8", width=2)
FOCUS_PEN = pg.mkPen("#e8710a", width=2, style=Qt.PenStyle.DashLine)


class AttributionPanel(Panel):
    """Direct logit attribution by head, the logit layer by layer, the logit lens grid."""

    # every model: on an encoder or the toy engine it says why there is nothing (they have no unembedding)

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attributionPanel")
        self.controller = controller
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)  # three pictures side by side on a 1024-pixel screen
        layout.setContentsMargins(4, 4, 4, 4)
        bar = QHBoxLayout()
        bar.addWidget(QLabel(self.tr("Answer")))
        self.answer = QLineEdit(" Paris")
        self.answer.setObjectName("attributionAnswer")
        self.answer.setToolTip(self.tr("The token whose logit is split (its first token when it has several)"))
        bar.addWidget(self.answer, 1)
        bar.addWidget(QLabel(self.tr("Contrast")))
        self.contrast = QLineEdit()
        self.contrast.setObjectName("attributionContrast")
        self.contrast.setPlaceholderText(self.tr("optional, e.g. ' London'"))
        self.contrast.setToolTip(self.tr("A second token: the logit difference answer − contrast is split"))
        bar.addWidget(self.contrast, 1)
        self.lens = QCheckBox(self.tr("Lens grid"))
        self.lens.setObjectName("attributionLensGrid")
        self.lens.setChecked(True)
        self.lens.setToolTip(self.tr("Also read every layer at every position through the unembedding (about one "
                                     "more forward pass)"))
        bar.addWidget(self.lens)
        self.colour = QComboBox()
        self.colour.setObjectName("attributionLensColour")
        self.colour.addItem(self.tr("colour: p(answer)"), "p_answer")
        self.colour.addItem(self.tr("colour: top token's p"), "top_probabilities")
        self.colour.setToolTip(self.tr("What colours the lens grid's cells: the answer's probability, or how sure "
                                       "each cell is of its own top token (the hover names it)"))
        self.colour.currentIndexChanged.connect(lambda _index: self._draw() if self.result is not None else None)
        bar.addWidget(self.colour)
        self.run_button = QPushButton(self.tr("Attribute"))
        self.run_button.setObjectName("attributionRun")
        self.run_button.setToolTip(self.tr("Split the answer's logit by the parts of the model that wrote it "
                                           "(one forward pass, in the background)"))
        self.run_button.clicked.connect(self.start)
        self.answer.returnPressed.connect(self.start)
        self.contrast.returnPressed.connect(self.start)
        bar.addWidget(self.run_button)
        layout.addLayout(bar)
        self._captions = None  # (short, whole) of the result's caption, or None while a message shows
        self.caption = QLabel(self._ready_text())
        self._refused = False  # the caption says this model has no unembedding (withdrawn on a decoder)
        self.caption.setObjectName("attributionCaption")
        self.caption.setWordWrap(True)
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.caption)
        pictures = self.pictures = QHBoxLayout()
        pictures.setSpacing(2)
        self.heads = HeatmapView(title=self.tr("Each head's share of the logit"))
        self.heads.setObjectName("attributionHeads")
        self.heads.set_axis_titles(self.tr("layer"), self.tr("head"))
        self.heads.cellClicked.connect(self._open_head)
        self.heads.cellHovered.connect(self._on_head_hovered)
        pictures.addWidget(self.heads, 2)
        self.layers = pg.PlotWidget(background="w")
        self.layers.setObjectName("attributionLayers")
        self.layers.setMenuEnabled(False)
        self.layers.setMouseEnabled(x=False, y=False)
        self.layers.setTitle(self.tr("The logit after each part"), size="9pt")
        self.layers.setLabel("bottom", self.tr("layer (+0.5: after its attention, +1: after its MLP)"))
        self.layers.addLegend(offset=(4, 4))
        pictures.addWidget(self.layers, 3)
        self.grid = HeatmapView(title=self.tr("Logit lens: every layer at every token"))
        self.grid.setObjectName("attributionLensView")
        self.grid.set_axis_titles(self.tr("layer"), self.tr("token"))
        self.grid.cellClicked.connect(self._open_cell)
        self.grid.cellHovered.connect(self._on_cell_hovered)
        pictures.addWidget(self.grid, 3)
        self.layers.setMinimumWidth(160)  # its title whole on a 1024-pixel screen
        layout.addLayout(pictures, 1)
        self.hover = QLabel()
        self.hover.setObjectName("attributionHover")
        layout.addWidget(self.hover)
        self._lane = self.lane("attribution", long=True)  # a forward pass: never holds the thread of edits
        self._lane.done.connect(self._on_done)
        self._lane.failed.connect(self._on_failed)
        self.result = None  # app.jobs.attribution.Attribution drawn
        self.running = False
        controller.cancelled.connect(lambda: self._cancel() if self.running else None)  # Esc
        controller.modelChanged.connect(self._on_model_changed)
        controller.ablateChanged.connect(lambda _ablate: self._stale())
        controller.byWordsChanged.connect(lambda _on: self._stale())
        self.set_model_connected()

    # ------------------------------------------------------------------ panel contract
    def show_snapshot(self, snapshot) -> None:
        if snapshot is None:
            return
        if not self._decoder(snapshot):
            self.clear()
            self._say(self.tr("Attribution reads a decoder's unembedding: choose SmolLM2, a GGUF file or a "
                                         "decoder's folder (an encoder has no unembedding; the toy engine has none)."))
            self._refused = True
            return
        if self._refused and not self.running:  # a decoder now: the encoder's or the toy's refusal goes
            self._say(self._ready_text())
        if self.result is not None and snapshot.result.config.text != self.result.request.text:
            self._stale()

    def show_selection(self) -> None:
        if self.result is not None:
            self._draw_layers()
            self._describe()

    def clear(self) -> None:
        self._lane.cancel()
        self.running = False
        self.result = None
        self.heads.clear_matrix()
        self.grid.clear_matrix()
        self.layers.clear()
        self.hover.clear()
        self.run_button.setEnabled(True)

    # ------------------------------------------------------------------ running
    def start(self) -> None:
        from engine.analysis.request import RunRequest

        from ..jobs.attribution import attribution_task

        snapshot = self.controller.snapshot
        if not self._decoder(snapshot):
            self.show_snapshot(snapshot)
            return
        self.clear()
        self.running = True
        self.run_button.setEnabled(False)
        self._say(self.tr("Running the model with its hook points…"))
        c = self.controller
        request = RunRequest(text=snapshot.result.config.text, ablate=c.ablate, by_words=c.by_words,
                             answer=self.answer.text() or None, contrast=self.contrast.text() or None,
                             lens_grid=self.lens.isChecked())
        self._lane.start(attribution_task, snapshot.model, request)

    def _cancel(self) -> None:
        self.clear()
        self._say(self.tr("Cancelled: press Attribute to run it again."))

    def _stale(self) -> None:
        if self.running:  # the result to come is of another input: drop it
            self.clear()
        if self.result is not None or not self.run_button.isEnabled():
            return
        if self._refused or self.caption.text() == self._ready_text():  # nothing was computed: nothing is stale
            return
        if self.caption.text():
            self._say(self.tr("The text, the switched-off heads or By words changed: press Attribute "
                                         "again."))

    def _on_model_changed(self, model: str) -> None:
        if self.result is not None and self.result.model != model:  # never drawn over another model
            self.clear()
            self._say(self.tr("The model changed: press Attribute for its attribution."))

    def _on_failed(self, error) -> None:
        self.running = False
        self.run_button.setEnabled(True)
        self._say(error_text(error))

    def _on_done(self, result) -> None:
        if not self.running or result.model != self.controller.model:
            return
        self.running = False
        self.run_button.setEnabled(True)
        self.result = result
        self._draw()

    # ------------------------------------------------------------------ drawing
    def _draw(self) -> None:
        dla = self.result.dla
        layers, heads = dla.heads.shape
        self.heads.set_matrix(dla.heads, [str(l) for l in range(layers)], [f"H{h}" for h in range(heads)],
                              levels=symmetric_levels(dla.heads), colormap=DIVERGING_MAP, value_format="{:.1f}")
        grid = self.result.grid
        if grid is not None:
            rows = [self.tr("emb")] + [str(l) for l in range(layers)]
            self.grid.set_matrix(getattr(grid, self.colour.currentData()), rows, list(self.result.tokens),
                                 levels=(0.0, 1.0), colormap=LENS_MAP, show_values=False)
        else:
            self.grid.clear_matrix()
        self._draw_layers()
        self._describe()

    def _draw_layers(self) -> None:
        """The accumulated logit after each component: the last position, and the focused token's."""
        dla = self.result.dla
        self.layers.clear()
        # x: 0 the embedding; l + 0.5 after layer l's attention, l + 1 after its MLP
        steps = np.arange(dla.accumulated.shape[0]) / 2.0
        tokens = self.result.tokens
        shown = [dla.position]
        focus = self.controller.focus
        if 0 <= focus < len(tokens) and focus != dla.position:
            shown.append(focus)
        for position, pen in zip(shown, (LAST_PEN, FOCUS_PEN)):
            self.layers.plot(steps, dla.accumulated[:, position], pen=pen, name=fill("“%1”", tokens[position]))

    def _measure(self) -> str:
        dla = self.result.dla
        if dla.contrast is None:
            return fill(self.tr("the logit of “%1”"), dla.answer.piece)
        return fill(self.tr("the logit difference “%1” − “%2”"), dla.answer.piece, dla.contrast.piece)

    def _describe(self) -> None:
        """The caption: what the pictures show, the sum, what they leave out, and the selected head."""
        dla = self.result.dla
        tokens = self.result.tokens
        text = fill(self.tr("After “%1”, %2 is %3 = embedding %4 + heads %5 + MLPs %6 + biases %7 (the parts "
                            "sum to %8)."),
                    tokens[dla.position], self._measure(), f"{dla.logit:.3f}", f"{dla.embed:.2f}",
                    f"{dla.heads.sum():.2f}", f"{dla.mlp.sum():.2f}", f"{dla.bias:.2f}", f"{dla.total:.3f}")
        short = text
        text += " " + self.tr("Each part's direct share, read through the final norm with its scale frozen: what it "
                              "writes straight to the output, not what it does through later layers.")
        if dla.note:
            text += " " + fill(self.tr("The answer has %1 tokens; the first, “%2”, is measured."),
                               dla.answer.pieces, dla.answer.piece)
        if self.result.request.ablate:
            text += " " + fill(self.tr("%1 heads switched off: they add 0."), len(self.result.request.ablate))
        layer, head = self._selected_head()
        if layer is not None:
            text += " " + self._head_sources(layer, head)
            short += " " + self._head_sources(layer, head)
        text += " " + self.tr("Heads: red pushes the answer up, blue down.")
        if self.result.grid is None:
            text += " " + self.tr("The lens grid was not asked for.")
        else:
            text += " " + self.tr("Lens: each cell reads that layer's residual stream as if it were the last; it "
                                  "shows what the stream already points to, not what the layer computes.")
        self._captions = (short, text)
        self._fit_caption()

    def _ready_text(self) -> str:
        return self.tr("Type the answer a decoder should give after the text and press Attribute.")

    def _say(self, text: str) -> None:
        """A message in the caption's place (no result's caption behind it)."""
        self._refused = False
        self._captions = None
        self.caption.setToolTip("")
        self.caption.setText(text)

    def _fit_caption(self) -> None:
        """A short dock (a 600-pixel screen) shows the sum and the selected head; the whole caption, with
        what the pictures leave out, is then the caption's tooltip: the pictures keep their room."""
        if self._captions is None:
            return
        short, whole = self._captions
        room = self.room()
        cramped = room is not None and room.height() < CRAMPED_HEIGHT
        self.caption.setText(short if cramped else whole)
        self.caption.setToolTip(whole if cramped else "")

    def fit_room(self) -> None:
        """A room narrower than the three pictures' least widths (a 1024-pixel screen): the middle one, the
        logit after each part, steps aside for the head grid and the lens; a short room shows the caption's
        first sentence."""
        room = self.room()
        if room is None:
            return
        margins = self.layout().contentsMargins()
        need = (self.heads.minimumSizeHint().width() + self.layers.minimumWidth() + self.grid.minimumSizeHint().width()
                + margins.left() + margins.right() + 2 * self.pictures.spacing())
        self.layers.setVisible(room.width() >= need)
        self._fit_caption()

    def _selected_head(self) -> tuple[int | None, int]:
        snapshot = self.controller.snapshot
        layers, heads = self.result.dla.heads.shape
        if snapshot is None or snapshot.layer >= layers or self.controller.head >= heads:
            return None, 0
        return snapshot.layer, self.controller.head

    def _head_sources(self, layer: int, head: int) -> str:
        """Head layer.head's share and the sources (words with By words) it took most of it from."""
        dla = self.result.dla
        if dla.head_words is not None:
            names, shares = dla.words, dla.head_words[layer, head]
        else:
            names, shares = self.result.tokens, dla.head_positions[layer, head]
        top = np.argsort(-np.abs(shares), kind="stable")[:3]
        sources = ", ".join(f"“{names[i]}” {shares[i]:+.2f}" for i in top)
        return fill(self.tr("Head %1.%2: %3, most from %4."), layer, head, f"{dla.heads[layer, head]:+.2f}", sources)

    # ------------------------------------------------------------------ hover and clicks
    def _on_head_hovered(self, layer: int, head: int) -> None:
        if self.result is None or layer < 0:
            self.hover.clear()
            return
        self.hover.setText(self._head_sources(layer, head))

    def _on_cell_hovered(self, row: int, column: int) -> None:
        grid = None if self.result is None else self.result.grid
        if grid is None or row < 0:
            self.hover.clear()
            return
        where = self.tr("the embedding") if row == 0 else fill(self.tr("layer %1"), row - 1)
        self.hover.setText(fill(self.tr("After “%1”, read at %2: top “%3” (%4), p(answer) %5."),
                                self.result.tokens[column], where, grid.top_texts[row][column],
                                f"{grid.top_probabilities[row, column]:.3f}", f"{grid.p_answer[row, column]:.3f}"))

    def _open(self, layer: int, head: int | None = None, focus: int | None = None) -> None:
        c = self.controller
        if self.result is None or self.result.model != c.model:
            return
        if c.config.text != self.result.request.text:
            c.update_config(text=self.result.request.text)
        c.set_model(c.model, layer)
        c.select(head=head, focus=focus)

    def _open_head(self, layer: int, head: int) -> None:
        self._open(layer, head=head)

    def _open_cell(self, row: int, column: int) -> None:
        """Row 0 is the embedding (opened as layer 0); row l + 1 is layer l's output."""
        self._open(max(row - 1, 0), focus=column)

    @staticmethod
    def _decoder(snapshot) -> bool:
        """Whether ``snapshot``'s model has an unembedding to attribute to (declared: next_token_logits)."""
        return snapshot is not None and model_info(snapshot.model).capabilities.next_token_logits

    def is_empty(self) -> bool:
        return self.result is None
