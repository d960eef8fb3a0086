"""MiniLM layers: what a real, trained model's heads do, layer by layer.

- Overview: every layer × every head as a thumbnail (click one to open it), and, for the
  focused query token and a chosen key token, the weight of that pair in every layer and head —
  "which heads send 'it' to 'animal'?" answered at a glance.
- Across layers: the focused token's cosine to its own layer-0 vector, layer by layer (how far
  context has moved it).
- Compare: a second sentence; the per-layer cosine of the same word in both (the two senses of
  "apple" separate in the middle layers, not only at the last one).
Inactive (with a note) while the toy engine is selected.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, QSignalBlocker, Qt, QTimer
from PySide6.QtWidgets import (
    QComboBox, QFrame, QHBoxLayout, QLabel, QLineEdit, QScrollArea, QSizePolicy, QTabWidget, QVBoxLayout, QWidget,
)

from ..controller import Controller
from ..i18n import error_text
from ..heatmap import WEIGHTS_MAP, HeatmapView
from ..text import escape, fill, shown_piece
from .base import Panel

SELECTED_PEN = pg.mkPen("#ff2d55", width=3)
PLAIN_PEN = pg.mkPen("#c0c4c8", width=1)
UNK_WARNING_SHARE = 0.25  # warn when more than this share of the word pieces are [UNK]
COMPARE_LANE = "minilm-compare"
LAYER_ROW = 9  # pixels a layer's row of the weight map needs for its label (the map thins labels below ~7)
OVERVIEW_CHROME = 150  # the note, the tabs, the key row, the map's title, axes and margins
PLOT_LEAST = 60  # pixels: the across-layers and comparison curves' least height
TWO_KEYS_CHROME = 60  # a two-keys map's title, bottom axis and margins


class LayersPanel(Panel):
    """Overview, across-layers curve and two-sentence comparison for MiniLM."""

    def show_snapshot(self, snapshot) -> None:
        self.sync()

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("layersPanel")
        self.controller = controller
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.note = QLabel()
        self.note.setObjectName("layersNote")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)  # holds token text
        layout.addWidget(self.note)
        self.tabs = QTabWidget()
        layout.addWidget(self.tabs, 1)
        self.tabs.addTab(self._build_overview(), self.tr("Overview: layers × heads"))
        self.tabs.addTab(self._build_curve(), self.tr("Across layers"))
        self.tabs.addTab(self._build_compare(), self.tr("Compare two sentences"))
        self.tabs.addTab(self._build_two_keys(), self.tr("Two keys"))
        self._compact = False  # the weight map turned (layers along the width), the thumbnails hidden: fit_room
        self.comparison = None
        self.two_keys = None  # (model, text, app.jobs.words.key_grids) the Two keys tab shows
        self._compare_timer = QTimer(self, singleShot=True, interval=300)
        self._compare_timer.timeout.connect(self._submit_compare)
        self.set_model_connected()
        self._compare_lane = self.lane(COMPARE_LANE)
        self._compare_lane.done.connect(self._on_compared)
        self._compare_lane.failed.connect(lambda error: self.compare_caption.setText(error_text(error)))

    # ------------------------------------------------------------------ building
    def _build_overview(self) -> QWidget:
        page = QWidget()
        layout = QHBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        left = QVBoxLayout()
        row = QHBoxLayout()
        row.addWidget(QLabel(self.tr("Weight from the focused token to")))
        self.key_combo = QComboBox()
        self.key_combo.setObjectName("layersKeyCombo")
        self.key_combo.setToolTip(self.tr("The key token: each cell shows how much the focused token attends to it"))
        self.key_combo.currentIndexChanged.connect(lambda _: self._show_pair())
        row.addWidget(self.key_combo, 1)
        self.pair_best = QLabel()  # the strongest cell, here instead of the map's title when the dock is short
        self.pair_best.setObjectName("layersPairBest")
        self.pair_best.setTextFormat(Qt.TextFormat.PlainText)  # holds token text
        self.pair_best.setVisible(False)
        row.addWidget(self.pair_best)
        left.addLayout(row)
        self.pair_map = HeatmapView(title="")
        self.pair_map.setObjectName("layersPairHeatmap")
        self.pair_map.set_axis_titles(self.tr("layer"), self.tr("head"))
        self.pair_map.setToolTip(self.tr("Click a cell to open that layer and head"))
        self.pair_map.cellClicked.connect(self._open_pair_cell)
        left.addWidget(self.pair_map, 1)
        layout.addLayout(left, 1)
        self.grid = pg.GraphicsLayoutWidget()
        self.grid.setObjectName("layersOverview")
        self.grid.setBackground("w")
        self.grid.setToolTip(self.tr("Every layer (rows) and head (columns); click a thumbnail to open it, "
                                     "right-click (or Ctrl+click) to switch that head off or on"))
        self.grid.scene().sigMouseClicked.connect(self._on_grid_clicked)
        layout.addWidget(self.grid, 2)
        self.thumbs: list[list[tuple[pg.ViewBox, pg.ImageItem]]] = []
        return page

    def _build_curve(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        self.curve_caption = QLabel()
        self.curve_caption.setWordWrap(True)
        self.curve_caption.setTextFormat(Qt.TextFormat.PlainText)  # holds token text
        layout.addWidget(self.curve_caption)
        self.curve_plot = pg.PlotWidget(background="w")
        self.curve_plot.setObjectName("layersCurve")
        self.curve_plot.setLabel("bottom", self.tr("hidden state after layer (0 = embeddings)"))
        self.curve_plot.setLabel("left", self.tr("cosine to its layer-0 vector"))
        self.curve_plot.showGrid(x=True, y=True, alpha=0.3)
        _plain_axes(self.curve_plot)
        _hint_not_counted(self.curve_plot)
        self.curve = self.curve_plot.plot(pen=pg.mkPen("#4c78a8", width=3), symbol="o", symbolBrush="#4c78a8")
        layout.addWidget(self.curve_plot, 1)
        return page

    def _build_compare(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel(self.tr("Sentence B")))
        self.sentence_b = QLineEdit("Apple released a new phone.")
        self.sentence_b.setObjectName("layersSentenceB")
        self.sentence_b.setToolTip(self.tr("The same word in another sentence: its vectors are compared layer by layer"))
        self.sentence_b.textChanged.connect(lambda _: self._compare_timer.start())
        row.addWidget(self.sentence_b, 1)
        row.addWidget(QLabel(self.tr("word")))
        self.word_combo = QComboBox()
        self.word_combo.setObjectName("layersWordCombo")
        self.word_combo.currentIndexChanged.connect(lambda _: self._show_comparison())
        row.addWidget(self.word_combo)
        layout.addLayout(row)
        self.compare_caption = QLabel()
        self.compare_caption.setWordWrap(True)
        self.compare_caption.setTextFormat(Qt.TextFormat.PlainText)  # holds token text
        layout.addWidget(self.compare_caption)
        self.compare_plot = pg.PlotWidget(background="w")
        self.compare_plot.setObjectName("layersCompareCurve")
        self.compare_plot.setLabel("bottom", self.tr("hidden state after layer (0 = embeddings)"))
        self.compare_plot.setLabel("left", self.tr("cosine between the two sentences"))
        self.compare_plot.showGrid(x=True, y=True, alpha=0.3)
        _plain_axes(self.compare_plot)
        _hint_not_counted(self.compare_plot)
        self.compare_curve = self.compare_plot.plot(pen=pg.mkPen("#f58518", width=3), symbol="o", symbolBrush="#f58518")
        layout.addWidget(self.compare_plot, 1)
        return page

    def _build_two_keys(self) -> QWidget:
        """One query's weight to two candidate words (她 → 小红 and 她 → 小明) in every layer and head, side
        by side on one colour scale: which heads favour which word, cell by cell."""
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        self.two_keys_caption = QLabel()
        self.two_keys_caption.setObjectName("twoKeysCaption")
        self.two_keys_caption.setWordWrap(True)
        self.two_keys_caption.setTextFormat(Qt.TextFormat.PlainText)  # holds token text
        layout.addWidget(self.two_keys_caption)
        # the maps in a scroll area of their own: their rows' least height scrolls this tab only (a tab
        # widget takes its tallest page's minimum, which would make every tab scroll in a short dock)
        self.two_keys_scroll = QScrollArea()
        self.two_keys_scroll.setWidgetResizable(True)
        self.two_keys_scroll.setFrameShape(QFrame.Shape.NoFrame)
        # its size hint (the maps' whole height) must not count either: the page's height-for-width would
        # carry it and make the dock grow into the heatmap above
        self.two_keys_scroll.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
        holder = QWidget()
        row = QHBoxLayout(holder)
        row.setContentsMargins(0, 0, 0, 0)
        self.two_keys_scroll.setWidget(holder)
        self.two_key_maps = []
        for name in ("twoKeysKeyHeatmap", "twoKeysRivalHeatmap"):
            view = HeatmapView(title="")
            view.setObjectName(name)
            view.set_axis_titles(self.tr("layer"), self.tr("head"))
            view.setToolTip(self.tr("Click a cell to open that layer and head"))
            view.cellClicked.connect(self._open)
            row.addWidget(view, 1)
            self.two_key_maps.append(view)
        layout.addWidget(self.two_keys_scroll, 1)
        self._clear_two_keys()
        return page

    def show_two_keys(self, model: str, text: str, value: dict) -> None:
        """Show ``value`` (app.jobs.words.key_grids of ``model`` on ``text``) and bring its tab forward."""
        self.two_keys = (model, text, value)
        to_key, to_rival = value["to_key"], value["to_rival"]  # (layers, heads) each
        layers, heads = to_key.shape
        top = max(float(to_key.max()), float(to_rival.max()), 1e-6)  # one scale: the two maps compare by colour
        # a short dock scrolls this tab, the rows stay readable
        self.two_keys_scroll.widget().setMinimumHeight(layers * LAYER_ROW + TWO_KEYS_CHROME)
        largest = []
        for view, grid, word in zip(self.two_key_maps, (to_key, to_rival), (value["key"], value["rival"])):
            # the title short (a long one set the panel's least width past a 1024-pixel screen's dock)
            view.set_matrix(grid, [str(i) for i in range(layers)], [str(h) for h in range(heads)],
                            levels=(0.0, top), colormap=WEIGHTS_MAP, show_values=True)
            view.plot.setTitle(fill("“%1” → “%2”", escape(value["query"]), escape(word)))
            best = np.unravel_index(int(np.argmax(grid)), grid.shape)
            largest.append(fill(self.tr("largest “%1” → “%2”: %3 (layer %4, head %5)"), value["query"], word,
                                f"{grid[best]:.2f}", best[0], best[1]))
        wins = int((to_key > to_rival).sum())
        self.two_keys_caption.setText(fill(self.tr(
            "“%1” → “%2” is larger than “%1” → “%3” in %4 of %5 heads (rows: layers, columns: heads, one colour "
            "scale for both); %6."), value["query"], value["key"], value["rival"], wins, to_key.size,
            "; ".join(largest)))
        self.tabs.setCurrentIndex(self.tabs.count() - 1)

    def _clear_two_keys(self) -> None:
        self.two_keys = None
        for view in self.two_key_maps:
            view.clear_matrix()
            view.plot.setTitle("")
        self.two_keys_caption.setText(self.tr(
            "A preset that weighs one word against another (Presets → MiniLM or Multilingual: “it” → “animal”, "
            "她 → 小红) shows both words' layer × head grids here, side by side."))

    # ------------------------------------------------------------------ state
    def sync(self) -> None:
        if self.controller.snapshot is not None:
            self.on_snapshot_changed(self.controller.snapshot)

    def on_snapshot_changed(self, snapshot) -> None:
        bert = snapshot.bert
        self.setEnabled(bert is not None)
        if bert is None:
            self.clear()
            return
        tokens = bert.token_texts
        unknown = sum(t == "[UNK]" for t in tokens)
        from PySide6.QtCore import QCoreApplication

        from engine.models import model_info

        title = QCoreApplication.translate("Model", model_info(snapshot.model).title)
        if bert.next_token_logits is not None:  # a decoder (app.jobs.decoder_view.DecoderView)
            note = fill(self.tr("%1: %2 layers × %3 query heads, %4 tokens, causal mask. Showing layer %5."),
                        title, bert.num_layers, bert.num_heads, bert.n, snapshot.layer)
        else:
            note = fill(self.tr("%5: %1 layers × %2 heads, %3 word pieces. Showing layer %4."),
                        bert.num_layers, bert.num_heads, bert.n, snapshot.layer, title)
        if self.controller.by_words and snapshot.words is not None:
            note += " " + fill(self.tr("Overview by words (%1 words)."), snapshot.words.count)
        if unknown / max(bert.n, 1) > UNK_WARNING_SHARE:
            note += " " + fill(self.tr("Warning: %1 of %2 word pieces are [UNK] — the vocabulary is English, so "
                                       "Chinese text is mostly unknown to this model."), unknown, bert.n)
        if bert.truncated:
            note += " " + self.tr("The text was cut to 512 word pieces.")
        self.note.setText(note)
        self.note.setStyleSheet("color: #c62828;" if unknown / max(bert.n, 1) > UNK_WARNING_SHARE else "")
        with QSignalBlocker(self.key_combo):
            previous = self.key_combo.currentText()
            self.key_combo.clear()
            for index, text in enumerate(tokens):
                self.key_combo.addItem(f"#{index} {shown_piece(text)}", index)
            match = self.key_combo.findText(previous)
            wanted = getattr(self, "wanted_key", None)  # a preset's key ("it" → "animal"), once its tokens are here
            if wanted is not None and 0 <= wanted < len(tokens):
                match, self.wanted_key = wanted, None
            special = snapshot.facts.special_tokens if snapshot.facts is not None else frozenset()
            self.key_combo.setCurrentIndex(match if match >= 0 else _default_key(tokens, special))
        if self.two_keys is not None and self.two_keys[:2] != (snapshot.model, snapshot.result.config.text):
            self._clear_two_keys()  # the grids belong to their model and sentence
        self._show_overview(snapshot)
        self.fit_room()  # the layer count decides whether the map is turned
        self._show_pair()
        self._show_curve()
        self._compare_timer.start()

    def want_key(self, key: int) -> None:
        """Make token ``key`` the target of the weight map: now when it is listed, else with the next result."""
        self.wanted_key = key
        if 0 <= key < self.key_combo.count() and self.controller.snapshot is not None \
                and self.key_combo.count() == self.controller.snapshot.result.n:
            self.key_combo.setCurrentIndex(key)

    def clear(self) -> None:
        """No pretrained result on screen: no thumbnails, pair map, curves or comparison of an older one."""
        self._compare_timer.stop()
        self._compare_lane.cancel()
        self.comparison = None
        self.grid.clear()
        self.thumbs = []
        self.pair_map.clear_matrix()
        self.pair_map.plot.setTitle("")
        self.curve.setData([], [])
        self.curve_caption.setText("")
        self.compare_curve.setData([], [])
        self.compare_caption.setText("")
        with QSignalBlocker(self.key_combo), QSignalBlocker(self.word_combo):
            self.key_combo.clear()
            self.word_combo.clear()
        self._clear_two_keys()
        self.note.setStyleSheet("")
        self.note.setText(self.tr("Choose the MiniLM model (toolbar: Model) to see a trained model's layers and heads."))

    def show_selection(self) -> None:
        snapshot = self.controller.snapshot
        if snapshot is None or snapshot.bert is None:
            return
        self._highlight()
        self._show_pair()
        self._show_curve()

    def _show_overview(self, snapshot) -> None:
        overview = snapshot.overview  # (layers, heads, t, t)
        if self.controller.by_words and snapshot.words is not None and snapshot.words.overview is not None:
            overview = snapshot.words.overview  # (layers, heads, t, t) by words
        layers, heads = overview.shape[:2]
        if len(self.thumbs) != layers or (self.thumbs and len(self.thumbs[0]) != heads):
            self.grid.clear()
            self.thumbs = []
            for layer in range(layers):
                # a row as tall as its label's text made twelve layers 324 px tall: the last rows were cut
                # off the bottom at 1366 × 768; the rows share the height the grid has
                self.grid.addItem(_RowLabel(fill(self.tr("layer %1"), layer), layer, size="8pt", color="#333"),
                                  row=layer, col=0)
                row = []
                for head in range(heads):
                    # no context menu built at all: its ViewBoxMenu was ~70 % of a thumbnail's cost (e5: 144 of them)
                    view = self.grid.addViewBox(row=layer, col=head + 1, lockAspect=True, enableMouse=False, invertY=True,
                                                enableMenu=False)
                    image = pg.ImageItem(axisOrder="row-major")
                    image.setColorMap(pg.colormap.get(WEIGHTS_MAP))
                    view.addItem(image)
                    row.append((view, image))
                self.thumbs.append(row)
        top = max(float(overview.max()), 1e-6)
        off = snapshot.ablate
        for layer in range(layers):
            for head in range(heads):
                view, image = self.thumbs[layer][head]
                thumb = overview[layer, head]
                image.setImage(thumb, levels=(0.0, top), autoLevels=False)
                image.setOpacity(0.25 if (layer, head) in off else 1.0)  # switched off: dimmed
                image.setRect(QRectF(0, 0, thumb.shape[1], thumb.shape[0]))
                view.setRange(QRectF(0, 0, thumb.shape[1], thumb.shape[0]), padding=0.04)
        self._highlight()

    def _highlight(self) -> None:
        for layer, row in enumerate(self.thumbs):
            for head, (view, _) in enumerate(row):
                chosen = layer == self.controller.layer and head == self.controller.head
                view.setBorder(SELECTED_PEN if chosen else PLAIN_PEN)
        self.grid.viewport().update()  # the thick border's old pixels lie outside the thin one's area

    def pair_weights(self) -> np.ndarray | None:
        """(layers, heads) weight from the focused token to the chosen key token."""
        snapshot = self.controller.snapshot
        if snapshot is None or snapshot.bert is None or self.key_combo.currentIndex() < 0:
            return None
        query, key = self.controller.focus, self.key_combo.currentData()
        return np.stack([view.weights[:, query, key] for view in snapshot.bert.layers])  # (layers, heads)

    def fit_room(self) -> None:
        """Short room (1024 × 600: the rows of 12 or 30 layers came out a few pixels each, only layer 0
        labelled, SmolLM2's layers past 16 cut): the weight map turns to layers along the width, heads
        down, and takes the whole width; the thumbnails, dots at that size, wait for a taller dock."""
        room = self.room()
        snapshot = self.controller.snapshot
        if room is None or room.height() <= 0 or snapshot is None or snapshot.bert is None:
            return
        # the room the dock has, not what it could grow to (bottom_room): grown to thirty rows of thumbnails
        # it took the heatmap's height above, whose rows then lost their labels (1366 × 768, SmolLM2)
        compact = room.height() < snapshot.bert.num_layers * LAYER_ROW + OVERVIEW_CHROME
        if compact != self._compact:
            self._compact = compact
            self.grid.setVisible(not compact)
            self.pair_map.set_axis_titles(*((self.tr("head"), self.tr("layer")) if compact
                                            else (self.tr("layer"), self.tr("head"))))
            self._show_pair()

    def _show_pair(self) -> None:
        weights = self.pair_weights()
        if weights is None:
            return
        bert = self.controller.snapshot.bert
        query, key = self.controller.focus, self.key_combo.currentData()
        layers, heads = weights.shape
        if self._compact:  # (heads, layers): every layer a labelled column
            self.pair_map.set_matrix(weights.T, [str(h) for h in range(heads)], [str(i) for i in range(layers)],
                                     levels=(0.0, 1.0), colormap=WEIGHTS_MAP, show_values=False)
        else:
            self.pair_map.set_matrix(weights, [str(i) for i in range(layers)], [str(h) for h in range(heads)],
                                     levels=(0.0, 1.0), colormap=WEIGHTS_MAP, show_values=True)
        best = np.unravel_index(int(np.argmax(weights)), weights.shape)
        strongest = fill(self.tr("“%1” → “%2”: strongest at layer %3, head %4 (%5)"), bert.token_texts[query],
                         bert.token_texts[key], best[0], best[1], f"{weights[best]:.2f}")
        # a short dock: the title's line goes to the map's rows, the words beside the key's box
        self.pair_best.setText(strongest if self._compact else "")
        self.pair_best.setVisible(self._compact)
        self.pair_map.plot.setTitle(None if self._compact else escape(strongest))

    def _show_curve(self) -> None:
        snapshot = self.controller.snapshot
        bert = snapshot.bert
        focus = self.controller.focus
        cosines = bert.cosine_to_layer0[:, focus]  # (layers + 1,)
        self.curve.setData(np.arange(len(cosines)), cosines)
        _tick_whole_layers(self.curve_plot, len(cosines))
        self.curve_caption.setText(fill(
            self.tr("“%1”: cosine to its own layer-0 vector after each layer — %2. The lower, the more context has "
                    "rewritten it."), bert.token_texts[focus], ", ".join(f"{c:.3f}" for c in cosines)))

    # ------------------------------------------------------------------ comparison
    def _submit_compare(self) -> None:
        snapshot = self.controller.snapshot
        text_b = self.sentence_b.text()
        if snapshot is None or snapshot.bert is None or not text_b.strip():
            return
        from ..jobs.trained import compare_texts

        self._compare_lane.submit(compare_texts, snapshot.model, snapshot.result.config.text, text_b)

    def _on_compared(self, value) -> None:
        if self.controller.snapshot is None or self.controller.snapshot.bert is None:
            return
        self.comparison = value
        with QSignalBlocker(self.word_combo):
            previous = self.word_combo.currentText()
            self.word_combo.clear()
            for text, i, j in value["pairs"]:
                self.word_combo.addItem(text)
            match = self.word_combo.findText(previous)
            self.word_combo.setCurrentIndex(match if match >= 0 else 0)
        self._show_comparison()

    def _show_comparison(self) -> None:
        value = self.comparison
        if not value or not value["pairs"]:
            self.compare_curve.setData([], [])
            self.compare_caption.setText(self.tr("The two sentences share no word piece."))
            return
        index = max(self.word_combo.currentIndex(), 0)
        text = value["pairs"][index][0]
        cosines = value["cosines"][index]  # (layers + 1,)
        self.compare_curve.setData(np.arange(len(cosines)), cosines)
        _tick_whole_layers(self.compare_plot, len(cosines))
        lowest = int(np.argmin(cosines))
        self.compare_caption.setText(fill(
            self.tr("“%1” in A and in B, layer by layer: %2. Most different after layer %3 (cos %4)."),
            text, ", ".join(f"{c:.3f}" for c in cosines), lowest, f"{cosines[lowest]:.3f}"))

    # ------------------------------------------------------------------ opening a head
    def _open_pair_cell(self, row: int, column: int) -> None:
        """A cell of the weight map: (layer, head), or (head, layer) when it is turned (short room)."""
        self._open(*((column, row) if self._compact else (row, column)))

    def _open(self, layer: int, head: int) -> None:
        self.controller.select(head=head)
        self.controller.set_model(self.controller.snapshot.model, layer)

    def _on_grid_clicked(self, event) -> None:
        # right-click or Ctrl+click switches the head off (or on), as in the head grid
        toggle = event.button() == Qt.MouseButton.RightButton or (
            event.button() == Qt.MouseButton.LeftButton and event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        if event.button() != Qt.MouseButton.LeftButton and not toggle:
            return
        for layer, row in enumerate(self.thumbs):
            for head, (view, _) in enumerate(row):
                if view.sceneBoundingRect().contains(event.scenePos()):
                    if toggle:
                        self.controller.toggle_head(layer, head)
                    else:
                        self._open(layer, head)
                    return

    def switched_off(self) -> set[tuple[int, int]]:
        """The (layer, head) thumbnails drawn dimmed as switched off (tests)."""
        return {(layer, head) for layer, row in enumerate(self.thumbs) for head, (_, image) in enumerate(row)
                if image.opacity() < 1.0}


def _plain_axes(plot: pg.PlotWidget) -> None:
    """Cosines read as cosines: no SI prefix (pyqtgraph would show 0.29–0.84 as 290–840 "(x0.001)")."""
    for name in ("left", "bottom"):
        plot.getAxis(name).enableAutoSIPrefix(False)


def _hint_not_counted(plot: QWidget) -> None:
    """A plot under a word-wrapped caption: its size hint is left out of its page's height for a width
    (which a tab widget passes on and the dock grew to: 528 pixels for the Across layers tab, taken from
    the heatmap above), and it keeps a readable least height instead."""
    plot.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
    plot.setMinimumHeight(PLOT_LEAST)


def _tick_whole_layers(plot: pg.PlotWidget, count: int) -> None:
    """One tick per hidden state 0 … count − 1: a layer is a whole number, never 0.5."""
    plot.getAxis("bottom").setTicks([[(layer, str(layer)) for layer in range(count)], []])


def _default_key(tokens: list[str], special=frozenset()) -> int:
    """The first real word piece as the default key: not the model's special tokens ([CLS], <s>, …)."""
    for index, text in enumerate(tokens):
        if text not in ("[CLS]", "[SEP]") and text not in special:
            return index
    return 0


class _RowLabel(pg.LabelItem):
    """A row's name that lets its row be shorter than the text (pyqtgraph's label sets its minimum
    height to the text's on every resize). Rows shorter than the text show every k-th name only, so
    the names never overlap (row 0, k, 2k …)."""

    def __init__(self, text: str, index: int, **options) -> None:
        self.index = index
        super().__init__(text, **options)

    def updateMin(self) -> None:  # noqa: N802 - pyqtgraph's name
        super().updateMin()
        text_height = self._sizeHint[Qt.SizeHint.MinimumSize][1]
        self.setMinimumHeight(0)
        width = self._sizeHint[Qt.SizeHint.MinimumSize][0]
        self._sizeHint[Qt.SizeHint.MinimumSize] = (width, 0)
        # the row's height plus the grid's spacing is the distance between two names
        step = max(1, math.ceil(text_height / max(self.height() + 6, 1)))
        self.item.setVisible(self.index % step == 0)
