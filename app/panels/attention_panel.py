"""Attention heatmap panel: the selected head's matrix at the chosen stage.

Queries down, keys across. Stages: raw scores q·kᵀ, scaled scores (÷ √d_k, masked cells shown
as masked), softmax weights. The focused query row is outlined; hovering a cell reports
query, key and value; clicking a cell focuses its query row.
"""
from __future__ import annotations

import math

from PySide6.QtCore import QCoreApplication, QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QBoxLayout, QCheckBox, QComboBox, QFrame, QHBoxLayout, QLabel, QScrollArea, QSpinBox, QVBoxLayout, QWidget,
)

from ..controller import Controller
from ..text import fill, shown_piece
from ..heatmap import DIVERGING_MAP, WEIGHTS_MAP, HeatmapView
from .base import Panel


HEATMAP_ROW = 13  # pixels a heatmap row needs for its label to be drawn (the view thins labels below it)
HEATMAP_AXES = 70  # the heatmap's axis titles, column labels and margins
HEATMAP_SHARE = 0.62  # at most this share of the panel is kept for the heatmap before the caption shrinks
BESIDE_WIDTH = 400  # a panel at least this wide puts a caption that would squash the heatmap beside it
BESIDE_SHARE = 0.34  # of the panel's width, for the caption beside the heatmap
QWIDGETSIZE_MAX = (1 << 24) - 1


class AttentionPanel(Panel):
    """Head and stage selectors over one labelled heatmap."""

    def show_snapshot(self, snapshot) -> None:
        self.refresh()

    def show_selection(self) -> None:
        self.refresh()

    hoverMessage = Signal(str)
    cellClicked = Signal(int, int)

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attentionPanel")
        self.controller = controller
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        bar = QHBoxLayout()
        bar.addWidget(QLabel(self.tr("Head")))
        self.head = QSpinBox()
        self.head.setObjectName("headSpin")
        self.head.setToolTip(self.tr("Which head to show (0-based). Also: click a thumbnail in the head grid"))
        bar.addWidget(self.head)
        bar.addWidget(QLabel(self.tr("Stage")))
        self.stage = QComboBox()
        self.stage.setObjectName("stageCombo")
        for key, label in (("scores", self.tr("raw scores q·kᵀ")), ("scaled", self.tr("scaled scores (÷√d_k, mask)")),
                           ("weights", self.tr("softmax weights")),
                           ("value_norms", self.tr("value-weighted ‖α·f(x)‖"))):
            self.stage.addItem(label, key)
        self.stage.setToolTip(self.tr("Which step of the computation the heatmap shows"))
        # the longest stage name made the row 483 px wide: the heatmap dock scrolled sideways at
        # 1024 × 600 and hid the colour bar's labels; the closed box shows ~14 characters
        self.stage.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.stage.setMinimumContentsLength(14)
        bar.addWidget(self.stage)
        self.by_words = QCheckBox(self.tr("By words"))
        self.by_words.setObjectName("byWordsCheck")
        self.by_words.setToolTip(self.tr("Pieces or words: roll the word pieces up into the words a reader sees "
                                         "(小明 / 喜欢 / 苹果): attention summed over a word's key pieces and "
                                         "averaged over its query pieces, so each row still sums to 1 (Ctrl+Shift+W)"))
        self.by_words.setChecked(controller.by_words)
        bar.addWidget(self.by_words)
        bar.addStretch(1)
        layout.addLayout(bar)
        # "3 tokens · d_k = 16", the sink note, "out of date…": a line of its own that wraps, not the
        # end of the selectors' row, where it was cut at 1024 × 600
        self.caption = QLabel()
        self.caption.setObjectName("attentionCaption")
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.PlainText)  # token text in it stays text
        layout.addWidget(self.caption)
        self.preset_caption = QLabel()  # the open preset's caption: which paragraph, what to look at
        self.preset_caption.setObjectName("presetCaption")
        self.preset_caption.setWordWrap(True)
        self.preset_caption.setTextFormat(Qt.TextFormat.PlainText)
        self.preset_caption.setStyleSheet("background: #fff8e1; border: 1px solid #ffe082; padding: 3px;")
        # a long caption (a real-model preset's evidence runs to ten lines) scrolls in a box that leaves the
        # heatmap its rows: at 1366 × 768 it took all but a strip and hid 11 of SmolLM2's 16 row labels
        self.preset_scroll = QScrollArea()
        self.preset_scroll.setObjectName("presetCaptionScroll")
        self.preset_scroll.setWidgetResizable(True)
        self.preset_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.preset_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.preset_scroll.setWidget(self.preset_caption)
        self.preset_scroll.setVisible(False)
        # the caption over the heatmap, or (short panel) beside it on the right: see fit_room
        self._body = QBoxLayout(QBoxLayout.Direction.TopToBottom)
        self._body.addWidget(self.preset_scroll)
        layout.addLayout(self._body, 1)
        self.heatmap = HeatmapView()
        self.heatmap.setObjectName("attentionHeatmap")
        self.heatmap.set_axis_titles(self.tr("query token"), self.tr("key token"))
        self._body.addWidget(self.heatmap, 1)
        self.head.valueChanged.connect(lambda value: controller.select(head=value))
        self.stage.currentIndexChanged.connect(lambda _: controller.select(stage=self.stage.currentData()))
        self.heatmap.cellHovered.connect(self._on_cell_hovered)
        self.heatmap.cellClicked.connect(self._on_cell_clicked)
        controller.snapshotArrived.connect(lambda _: self.refresh())
        # a decoder's value-weighted stage: its arrays arrive after the snapshot (app.jobs.analysis_job)
        controller.analysisArrived.connect(lambda _: self.refresh() if controller.stage == "value_norms" else None)
        self.set_model_connected(snapshots=False)  # snapshots: the controller's snapshotArrived, first
        self.by_words.toggled.connect(controller.set_by_words)
        controller.byWordsChanged.connect(self._on_by_words_changed)
        controller.modelChanged.connect(self._on_model_changed)
        self.stage.setCurrentIndex(self.stage.findData(controller.stage))

    def _block_notes(self, snapshot, stage: str) -> str:
        """What the decoder's layer does beyond softmax(q·k/√d): its sliding window (the hatched cells
        beyond it), its own score scale and soft-capped scores, said beside the heatmap that shows them."""
        config = getattr(snapshot.bert, "config", None)
        notes = []
        window = config.window(snapshot.layer) if hasattr(config, "window") else 0
        if window and window < snapshot.result.n:
            notes.append(fill(self.tr("sliding window: each query sees itself and the %1 tokens before it "
                                      "(hatched beyond)"), window - 1))
        query_scale = snapshot.result.query_scale  # the engine's own divisor, where the model sets one (Gemma)
        if query_scale and stage == "scaled":
            notes.append(fill(self.tr("scores ÷ √query_pre_attn_scalar = ÷ √%1 (this model’s scale, not √d_k)"),
                              f"{query_scale:g}"))
        cap = getattr(config, "attn_softcap", 0.0)
        if cap and stage == "scaled":
            notes.append(fill(self.tr("scores soft-capped: %1 · tanh(s / %1)"), f"{cap:g}"))
        return " · ".join(notes)

    def refresh(self) -> None:
        snapshot = self.controller.snapshot
        if snapshot is None:
            return
        result, head, stage = snapshot.result, self.controller.head, self.controller.stage
        with QSignalBlocker(self.head), QSignalBlocker(self.stage):
            self.head.setRange(0, result.weights.shape[0] - 1)
            self.head.setValue(head)
            self.stage.setCurrentIndex(self.stage.findData(stage))
        words = snapshot.words if self.controller.by_words else None
        self.stage.setEnabled(words is None)  # by words: the softmax weights (scores do not add up)
        if words is not None:
            self.heatmap.set_axis_titles(self.tr("query word"), self.tr("key word"))
            shown = [shown_piece(word) for word in words.words]
            self.heatmap.set_matrix(words.weights[head], shown, shown,
                                    levels=(0.0, words.weight_max), colormap=WEIGHTS_MAP)
            self.heatmap.set_highlight_row(int(words.word_index[min(self.controller.focus, result.n - 1)]))
            if words.count == result.n:  # say why nothing changed
                self.caption.setText(fill(self.tr("By words: each of the %1 pieces is already a word (or a special "
                                                  "token), nothing to roll up"), result.n))
            else:
                self.caption.setText(fill(self.tr("%1 words from %2 pieces · rows sum to 1"), words.count, result.n))
            return
        self.heatmap.set_axis_titles(self.tr("query token"), self.tr("key token"))
        waiting = stage == "value_norms" and snapshot.analysis is None  # a decoder's: its arrays follow in a job
        if waiting:
            stage = "weights"
        matrix = snapshot.stage_matrix(stage)[head]  # (n, n)
        labels = [shown_piece(text) for text in result.token_texts]
        # a switched-off head moves nothing: all zeros, drawn on 0 … 1 rather than a blank 0 … 1e-06 scale
        switched_off = stage == "value_norms" and (snapshot.layer, head) in getattr(snapshot, "ablate", ())
        self.heatmap.set_matrix(
            matrix, labels, labels,
            levels=(0.0, 1.0) if switched_off else snapshot.levels(stage, head),
            colormap=WEIGHTS_MAP if stage in ("weights", "value_norms") else DIVERGING_MAP,
            display=snapshot.display_of(stage, head),
        )
        self.heatmap.set_highlight_row(self.controller.focus)
        if self.preset_caption.text():
            self.fit_room()  # the heatmap's row count may have changed
        self.caption.setToolTip(self.VALUE_NOTE() if stage == "value_norms" else "")
        if switched_off:
            self.caption.setText(fill(self.tr("head %1 of layer %2 is switched off: it moves nothing (every "
                                              "value-weighted cell is 0)"), head, snapshot.layer))
        elif stage == "value_norms":
            self.caption.setText(self.tr("what each key moves (hover)"))
        elif result.n == 1:
            self.caption.setText(fill(self.tr("1 token · d_k = %1"), result.config.d_k))
        else:
            self.caption.setText(fill(self.tr("%1 tokens · d_k = %2"), result.n, result.config.d_k))
        notes = self._block_notes(snapshot, stage)
        if notes and not switched_off:
            self.caption.setText(self.caption.text() + " · " + notes)
        self.caption.setToolTip("")
        if snapshot.bert is not None and snapshot.bert.next_token_logits is not None:  # a decoder: name the attention sink
            from ..decoder_window import sink_text, sink_tip

            note = sink_text(snapshot, snapshot.layer, head)
            self.caption.setText(self.caption.text() + (" · " + note if note else ""))
            self.caption.setToolTip(sink_tip(snapshot, snapshot.layer, head))
        if waiting:  # the softmax weights meanwhile, said so (the arrays' job is asked for after this paint)
            self.caption.setText(self.tr("softmax weights until value-weighted attention is computed…") + " · "
                                 + self.caption.text())
        if self.controller.by_words:  # asked for words, but this result has none: said, not pieces silently
            self.caption.setText(self.caption.text() + " · " + self.tr("by words does not apply to this result"))

    def mark_out_of_date(self) -> None:
        """The settings on screen could not be computed: the picture is the previous settings'."""
        marker = self.tr("out of date: the picture shows the last settings that worked")
        if marker not in self.caption.text():
            self.caption.setText(marker + " · " + self.caption.text() if self.caption.text() else marker)

    def _on_model_changed(self, _model: str) -> None:
        """Another model was asked for: until its picture arrives (seconds for a model that loads) the
        heatmap says whose it still is."""
        snapshot = self.controller.snapshot
        if self.controller.switching_model():
            from engine.models import model_info

            self.caption.setText(fill(self.tr("still %1's picture: computing %2…"),
                                      QCoreApplication.translate("Model", model_info(snapshot.model).title),
                                      QCoreApplication.translate("Model", model_info(self.controller.model).title)))
        elif snapshot is not None:
            self.refresh()

    def show_preset_caption(self, text: str) -> None:
        """The open preset's caption over the heatmap ("" hides it)."""
        self.preset_caption.setText(text)
        self.preset_caption.setVisible(bool(text))
        self.preset_scroll.setVisible(bool(text))
        self.fit_room()

    def fit_room(self) -> None:
        """Where the preset's caption goes. Over the heatmap, whole when the heatmap keeps HEATMAP_ROW
        pixels a row (every row labelled) and at most HEATMAP_SHARE of the panel, else as much as that
        leaves and the rest scrolls; when even two lines would take the rows' room (a short dock: 1366 ×
        768 with a bottom place open), beside the heatmap on the right, the heatmap the whole height."""
        if not self.preset_caption.text():
            return
        line = self.preset_caption.fontMetrics().lineSpacing()
        matrix = self.heatmap.matrix()
        rows = matrix.shape[0] if matrix is not None else 8
        spacing = self.layout().spacing()
        above = sum(w.sizeHint().height() + spacing for w in (self.caption, self.head) if w.isVisible()) + 12
        heatmap = min(rows * HEATMAP_ROW + HEATMAP_AXES, int(self.height() * HEATMAP_SHARE))
        room = self.height() - above - heatmap - spacing
        beside = room < 2 * line + 8 and self.width() >= BESIDE_WIDTH
        if beside:
            self._body.setDirection(QBoxLayout.Direction.RightToLeft)  # the caption (first) on the right
            self.preset_scroll.setMinimumHeight(0)
            self.preset_scroll.setMaximumHeight(QWIDGETSIZE_MAX)
            self.preset_scroll.setFixedWidth(int(self.width() * BESIDE_SHARE))
            return
        self._body.setDirection(QBoxLayout.Direction.TopToBottom)
        self.preset_scroll.setMinimumWidth(0)
        self.preset_scroll.setMaximumWidth(QWIDGETSIZE_MAX)
        width = self.width() - 2 * self.layout().contentsMargins().left()
        whole = self.preset_caption.heightForWidth(max(width - 2, 50))
        self.preset_scroll.setFixedHeight(max(min(whole, room), min(whole, 2 * line + 8)))

    def caption_beside(self) -> bool:
        """True when the preset's caption stands beside the heatmap (a short panel)."""
        return self._body.direction() == QBoxLayout.Direction.RightToLeft

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().resizeEvent(event)
        self.fit_room()

    def _on_by_words_changed(self, on: bool) -> None:
        with QSignalBlocker(self.by_words):
            self.by_words.setChecked(on)
        self.refresh()

    def shown_words(self):
        """The WordView on screen, or None when the heatmap shows pieces."""
        snapshot = self.controller.snapshot
        return snapshot.words if snapshot is not None and self.controller.by_words else None

    def VALUE_NOTE(self) -> str:  # noqa: N802 - a translated constant
        return self.tr("Value-weighted attention ‖α_ij · f(x_j)‖ (Kobayashi et al., 2020): the length of what key j "
                       "actually adds to query i's output, its weight times its value vector carried through W_O. "
                       "A bright weight on [CLS] or [SEP] may move almost nothing.")

    def _on_cell_hovered(self, row: int, column: int) -> None:
        snapshot = self.controller.snapshot
        if snapshot is None or row < 0:
            self.hoverMessage.emit("")
            return
        words = self.shown_words()
        if words is not None:
            if row < words.count and column < words.count:
                self.hoverMessage.emit(fill(self.tr("head %1 · query word “%2” → key word “%3” · weight %4"),
                                            self.controller.head, words.words[row], words.words[column],
                                            f"{float(words.weights[self.controller.head, row, column]):.4f}"))
            return
        result, head = snapshot.result, self.controller.head
        scaled = float(result.scaled[head, row, column])
        scaled_text = self.tr("−∞ (masked)") if math.isinf(scaled) else f"{scaled:.4f}"
        self.hoverMessage.emit(
            fill(self.tr("head %1 · query #%2 “%3” → key #%4 “%5” · score %6 · scaled %7 · weight %8"),
                 head, row, result.tokens[row].text, column, result.tokens[column].text,
                 f"{float(result.scores[head, row, column]):.4f}", scaled_text,
                 f"{float(result.weights[head, row, column]):.4f}")
        )

    def _on_cell_clicked(self, row: int, column: int) -> None:
        words = self.shown_words()
        if words is not None:  # a word: its first piece
            row, column = words.first_piece(row), words.first_piece(column)
        self.controller.inspect(row, column)
        self.cellClicked.emit(row, column)
