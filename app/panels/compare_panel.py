"""Comparison panel: the same token in two sentences, or the current settings against a snapshot.

The first tutorial: "苹果很好吃 和 苹果发布了新手机，“苹果”的向量应该不同". Sentence A is the window's
sentence; sentence B is computed with exactly A's settings (only the text differs). The table
lists every token found in both (the k-th occurrence in A with the k-th in B) with
cos(static A, static B) — 1 for the same token, like word2vec — and cos(contextual A, contextual B)
after attention. Beside it: A's and B's weights for the selected head on one colour scale, and
A − B (diverging, symmetric levels) when both have the same tokens, or the reason why not.

Snapshot mode: "Take snapshot" keeps the current result as B; after changing heads, scaling,
temperature or the mask the panel shows current − snapshot (head-averaged when the head count
changed). Everything is computed in the worker, lane "compare" (only its latest answer arrives).
"""
from __future__ import annotations

import html
import math

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSplitter,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine import AttentionResult
from engine.analysis.compare import REASON_HEADS, REASON_TOKENS, SETTINGS, Comparison, compare_configs, compare_with_text

from ..controller import Controller
from ..heatmap import DIVERGING_MAP, WEIGHTS_MAP, HeatmapView
from ..i18n import error_text, setting_label
from ..text import fill
from .base import Panel

LANE = "compare"
SENTENCE, SNAPSHOT = "sentence", "snapshot"
# The seed's pair: when A is one of them and the user has not typed B, B is the other.
DEFAULT_PAIRS = {"苹果很好吃": "苹果发布了新手机", "苹果发布了新手机": "苹果很好吃"}
MESSAGE_STYLE = "color: #555; font-style: italic;"
ERROR_STYLE = "color: #c62828;"
ELIDE_CHARACTERS = 90  # of a sentence in the status line (the table and heatmaps show every token)
SAME_BRUSH, CHANGED_BRUSH = QColor("#e3f2fd"), QColor("#fff3e0")


def _format_cosine(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.4f}"


def _elide(text: str, limit: int = ELIDE_CHARACTERS) -> str:
    """A sentence shortened for the one status line: its start and end, "…" between."""
    if len(text) <= limit:
        return text
    return text[: limit * 2 // 3].rstrip() + " … " + text[-(limit // 3):].lstrip()


def _format_setting(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


class ComparePanel(Panel):
    """Sentence B (or a snapshot), the shared-token cosines, A | B | A − B heatmaps."""

    NEEDS = {"configurable": True}  # runs the toy engine's settings

    def show_snapshot(self, snapshot) -> None:
        self.sync()

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("comparePanel")
        self.controller = controller
        self.comparison: Comparison | None = None  # the one on screen
        self.snapshot_result: AttentionResult | None = None  # B in snapshot mode
        self.mode = SENTENCE
        self._awaiting = False
        self._auto_text = ""  # what the panel itself filled into sentence B ("" = the user's text)
        self._requested: tuple | None = None  # state of the latest request (see sync)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        bar = QHBoxLayout()
        self.sentence_mode = QRadioButton(self.tr("Sentence B"))
        self.sentence_mode.setObjectName("compareSentenceMode")
        self.sentence_mode.setToolTip(self.tr("Compare with another sentence computed with the same settings"))
        self.sentence_mode.setChecked(True)
        bar.addWidget(self.sentence_mode)
        self.text_b = QLineEdit()
        self.text_b.setObjectName("compareTextB")
        self.text_b.setPlaceholderText(self.tr("another sentence with a shared word, e.g. 苹果发布了新手机"))
        self.text_b.setToolTip(self.tr("Sentence B uses sentence A's settings; only the text differs"))
        bar.addWidget(self.text_b, 1)
        self.snapshot_mode = QRadioButton(self.tr("Snapshot"))
        self.snapshot_mode.setObjectName("compareSnapshotMode")
        self.snapshot_mode.setToolTip(self.tr("Compare the current settings with the snapshot: A − B = current − snapshot"))
        self.snapshot_mode.setEnabled(False)
        bar.addWidget(self.snapshot_mode)
        self.snapshot_button = QPushButton(self.tr("Take snapshot"))
        self.snapshot_button.setObjectName("compareTakeSnapshot")
        self.snapshot_button.setToolTip(self.tr("Keep the current result as B, then change heads, scaling, temperature or the mask"))
        bar.addWidget(self.snapshot_button)
        self.modes = QButtonGroup(self)
        self.modes.addButton(self.sentence_mode)
        self.modes.addButton(self.snapshot_mode)
        layout.addLayout(bar)

        self.caption = QLabel()
        self.caption.setObjectName("compareCaption")
        self.caption.setWordWrap(True)
        layout.addWidget(self.caption)
        self.status = QLabel()
        self.status.setObjectName("compareStatus")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        layout.addWidget(splitter, 1)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        self.table = QTableWidget(0, 6)
        self.table.setObjectName("compareTable")
        self.table.setHorizontalHeaderLabels([
            self.tr("token"), self.tr("#A"), self.tr("#B"), self.tr("cos static"), self.tr("cos x"), self.tr("cos after")])
        self.table.horizontalHeaderItem(1).setToolTip(self.tr("Position of the token in sentence A"))
        self.table.horizontalHeaderItem(2).setToolTip(self.tr("Position of the token in sentence B"))
        self.table.horizontalHeaderItem(3).setToolTip(self.tr("cos(embedding in A, embedding in B): before attention"))
        self.table.horizontalHeaderItem(4).setToolTip(self.tr("cos(x in A, x in B), x = embedding + positional encoding"))
        self.table.horizontalHeaderItem(5).setToolTip(self.tr("cos(output in A, output in B): the contextual vectors"))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        left_layout.addWidget(self.table, 1)
        self.summary = QLabel()
        self.summary.setObjectName("compareSummary")
        self.summary.setWordWrap(True)
        left_layout.addWidget(self.summary)
        splitter.addWidget(left)

        self.heatmap_a = HeatmapView(title=self.tr("A"), colorbar=False)
        self.heatmap_a.setObjectName("compareHeatmapA")
        self.heatmap_b = HeatmapView(title=self.tr("B"), colorbar=True)
        self.heatmap_b.setObjectName("compareHeatmapB")
        for view in (self.heatmap_a, self.heatmap_b):
            view.set_axis_titles(self.tr("query token"), self.tr("key token"))
            splitter.addWidget(view)
        difference = QWidget()
        difference_layout = QVBoxLayout(difference)
        difference_layout.setContentsMargins(0, 0, 0, 0)
        self.difference_stack = QStackedWidget()
        self.heatmap_difference = HeatmapView(title=self.tr("A − B"), colorbar=True)
        self.heatmap_difference.setObjectName("compareHeatmapDifference")
        self.heatmap_difference.set_axis_titles(self.tr("query token"), self.tr("key token"))
        self.difference_stack.addWidget(self.heatmap_difference)
        self.no_difference = QLabel()  # shown instead of the heatmap when there is no A − B
        self.no_difference.setObjectName("compareNoDifference")
        self.no_difference.setWordWrap(True)
        self.no_difference.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.no_difference.setMargin(12)
        self.no_difference.setStyleSheet(MESSAGE_STYLE)
        self.difference_stack.addWidget(self.no_difference)
        difference_layout.addWidget(self.difference_stack, 1)
        self.difference_message = QLabel()
        self.difference_message.setObjectName("compareDifferenceMessage")
        self.difference_message.setWordWrap(True)
        self.difference_message.setStyleSheet(MESSAGE_STYLE)
        difference_layout.addWidget(self.difference_message)
        splitter.addWidget(difference)
        splitter.setSizes([370, 260, 290, 290])

        self._set_caption()
        if controller.sentence_b:
            self.text_b.setText(controller.sentence_b)
        self.text_b.textChanged.connect(self._on_text_b_changed)
        controller.sentenceBChanged.connect(
            lambda text: text != self.text_b.text() and self.text_b.setText(text))
        self.snapshot_button.clicked.connect(self.take_snapshot)
        self.sentence_mode.toggled.connect(self._on_mode_changed)
        self.table.currentCellChanged.connect(self._on_table_row_changed)
        self._lane = self.lane(LANE)
        self._lane.done.connect(self._on_compared)
        self._lane.failed.connect(self._on_failed)
        self.set_model_connected()
        self.sync()

    # ----------------------------------------------------------------- actions
    def set_mode(self, mode: str) -> None:
        """SENTENCE ("sentence") or SNAPSHOT ("snapshot", needs a snapshot taken)."""
        if mode == SNAPSHOT and self.snapshot_result is None:
            return
        (self.snapshot_mode if mode == SNAPSHOT else self.sentence_mode).setChecked(True)

    def take_snapshot(self) -> None:
        """Keep the current result as B and switch to snapshot mode."""
        snapshot = self.controller.snapshot
        if snapshot is None:
            return
        self.snapshot_result = snapshot.result
        self.snapshot_mode.setEnabled(True)
        config = snapshot.result.config
        self.snapshot_mode.setToolTip(fill(
            self.tr("Snapshot: %1 heads · scaling %2 · temperature %3 · mask %4 · positions %5"),
            config.heads, self.tr("on") if config.scale else self.tr("off"), f"{config.temperature:g}",
            setting_label("mask", config.mask), setting_label("positional", config.positional)))
        if self.mode == SNAPSHOT:
            self.request()
        else:
            self.set_mode(SNAPSHOT)

    def sync(self) -> None:
        """Bring the panel up to date with the controller; no new job when one was asked for this state."""
        snapshot = self.controller.snapshot
        if snapshot is not None and self._requested != self._state_key(snapshot.result):
            self.on_snapshot_changed(snapshot)

    def _state_key(self, result: AttentionResult) -> tuple:
        return (result, self.mode, self.text_b.text(), self.snapshot_result)

    def request(self) -> None:
        """Ask the worker for the comparison of the current state (lane "compare")."""
        snapshot = self.controller.snapshot
        if snapshot is None:
            self._lane.cancel()
            return
        if not self.accepts(snapshot):  # a pretrained model's result: no comparison of the toy one kept
            self._lane.cancel()
            self._awaiting = False
            self._requested = None
            self._show(None)
            self._set_status(self.tr("The comparison runs the toy engine: choose “Toy engine” in the Model toolbar."))
            return
        result = snapshot.result
        self._requested = self._state_key(result)
        if self.mode == SNAPSHOT and self.snapshot_result is not None:
            self._awaiting = True
            self._lane.submit(compare_configs, result, self.snapshot_result)
            return
        text_b = self.text_b.text()
        if not text_b.strip():
            self._awaiting = False
            self._lane.cancel()
            self._show(None)
            self._set_status(self.tr("Type sentence B: a sentence that shares a word with A, e.g. 苹果发布了新手机."))
            return
        self._awaiting = True
        self._lane.submit(compare_with_text, result, text_b)

    def is_idle(self) -> bool:
        """True when the latest request has been answered (or there is none)."""
        return not self._awaiting

    # ----------------------------------------------------------------- state → widgets
    def on_snapshot_changed(self, snapshot) -> None:
        default = DEFAULT_PAIRS.get(snapshot.result.config.text.strip())
        current = self.text_b.text()
        if default and default != current and (not current or current == self._auto_text):
            with QSignalBlocker(self.text_b):
                self.text_b.setText(default)
            self._auto_text = default  # still the panel's choice until the user edits it
        self.request()

    def _on_text_b_changed(self, text: str) -> None:
        self._auto_text = ""
        self.controller.sentence_b = text
        if self.mode == SENTENCE:
            self.request()

    def _on_mode_changed(self, _checked: bool) -> None:
        mode = SENTENCE if self.sentence_mode.isChecked() else SNAPSHOT
        if mode != self.mode:
            self.mode = mode
            self.text_b.setEnabled(mode == SENTENCE)
            self._set_caption()
            self.request()

    def show_selection(self) -> None:
        self._show_heatmaps()
        self._select_focus_row()

    def _on_table_row_changed(self, row: int, _column: int, _previous_row: int, _previous_column: int) -> None:
        if self.comparison is not None and 0 <= row < len(self.comparison.index_a):
            self.controller.select(focus=int(self.comparison.index_a[row]))

    def _on_compared(self, value) -> None:
        self._awaiting = False
        self._show(value)

    def _on_failed(self, error) -> None:
        self._awaiting = False
        self._show(None)
        self._set_status(fill(self.tr("Sentence B cannot be computed: %1"), error_text(error)),
                         error=True)

    def _set_caption(self) -> None:
        if self.mode == SNAPSHOT:
            self.caption.setText(self.tr(
                "B is the snapshot, A the current settings: A − B shows how heads, scaling, temperature or the mask\n"
                "move the weights. The static vectors do not depend on them (cos = 1); the vectors after attention do."))
        else:
            self.caption.setText(self.tr(
                "Static vectors (embeddings) are the same for the same token in every sentence: cos = 1, like word2vec.\n"
                "Attention mixes each token with its context, so after attention 苹果 differs between sentences: cos < 1."))

    def _set_status(self, text: str, *, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet(ERROR_STYLE if error else "")

    def _show(self, comparison: Comparison | None) -> None:
        self.comparison = comparison
        self._fill_table()
        self._show_heatmaps()
        if comparison is None:
            self.summary.clear()
            return
        self._set_status(self._describe(comparison))
        self._select_focus_row()

    def _describe(self, comparison: Comparison) -> str:
        a, b = " ".join(comparison.tokens_a), " ".join(comparison.tokens_b)
        if comparison.mode == SETTINGS:
            now, then = comparison.result_a.config, comparison.result_b.config
            changes = ", ".join(
                name if name == "embeddings" else
                f"{name} {_format_setting(getattr(then, name))} → {_format_setting(getattr(now, name))}"
                for name in comparison.config_changes)
            if not comparison.config_changes:
                return fill(self.tr("A = current settings, B = snapshot of %1: nothing changed yet. Change heads, "
                                    "scaling, temperature or the mask."), _elide(b))
            return fill(self.tr("A = current settings, B = snapshot of %1 · changed: %2"), _elide(b), changes)
        return fill(self.tr("A = %1   ·   B = %2   (same settings, only the text differs)"), _elide(a), _elide(b))

    def _fill_table(self) -> None:
        comparison = self.comparison
        with QSignalBlocker(self.table):
            self.table.setRowCount(0)
            if comparison is None:
                return
            rows = comparison.shared
            self.table.setRowCount(len(rows))
            for r, row in enumerate(rows):
                values = (row.text, str(row.index_a), str(row.index_b), _format_cosine(row.cos_static),
                          _format_cosine(row.cos_x), _format_cosine(row.cos_contextual))
                for c, value in enumerate(values):
                    item = QTableWidgetItem(value)
                    if c:
                        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    if c == 3:
                        item.setBackground(SAME_BRUSH)
                    elif c == 5:
                        item.setBackground(CHANGED_BRUSH)
                    self.table.setItem(r, c, item)
        self._show_summary(0)

    def _show_summary(self, row: int) -> None:
        """The summary line under the table: the cosines of table row ``row`` (the selected token)."""
        rows = self.comparison.shared
        if not rows:
            self.summary.setText(self.tr("No token occurs in both sentences: add a shared word, e.g. 苹果."))
        elif self.comparison.vectors_reason:
            self.summary.setText(self.tr("d_model differs from the snapshot: the vectors cannot be compared."))
        else:
            shown = rows[min(max(row, 0), len(rows) - 1)]
            self.summary.setText(fill(
                self.tr("<b>%1</b>: cos before attention (static) = %2 → after attention = %3"),
                html.escape(shown.text), _format_cosine(shown.cos_static), _format_cosine(shown.cos_contextual)))

    def _select_focus_row(self) -> None:
        comparison = self.comparison
        if comparison is None:
            return
        matches = [r for r, i in enumerate(comparison.index_a) if i == self.controller.focus]
        with QSignalBlocker(self.table):
            if matches:
                self.table.selectRow(matches[0])
            else:
                self.table.clearSelection()
        self._show_summary(matches[0] if matches else 0)

    def _show_heatmaps(self) -> None:
        comparison = self.comparison
        if comparison is None:
            for view in (self.heatmap_a, self.heatmap_b, self.heatmap_difference):
                view.clear_matrix()
            self.difference_message.clear()
            self.no_difference.clear()
            self.difference_stack.setCurrentWidget(self.no_difference)
            return
        heads_a, heads_b = comparison.weights_a.shape[0], comparison.weights_b.shape[0]
        head_a, head_b = min(self.controller.head, heads_a - 1), min(self.controller.head, heads_b - 1)
        top = max(float(comparison.weight_max_a[head_a]), float(comparison.weight_max_b[head_b]), 1e-6)
        name_a = self.tr("A: current") if comparison.mode == SETTINGS else self.tr("A")
        name_b = self.tr("B: snapshot") if comparison.mode == SETTINGS else self.tr("B")
        for view, name, weights, head, labels in (
            (self.heatmap_a, name_a, comparison.weights_a, head_a, comparison.tokens_a),
            (self.heatmap_b, name_b, comparison.weights_b, head_b, comparison.tokens_b),
        ):
            view.plot.setTitle(fill(self.tr("%1 · head %2"), name, head))
            view.set_matrix(weights[head], labels, labels, levels=(0.0, top), colormap=WEIGHTS_MAP)
        self.heatmap_a.set_highlight_row(self.controller.focus)
        if comparison.difference is None:
            self.heatmap_difference.clear_matrix()
            self.difference_message.clear()
            self.difference_stack.setCurrentWidget(self.no_difference)
            if comparison.reason == REASON_TOKENS and comparison.mode == SETTINGS:
                self.no_difference.setText(self.tr(
                    "No A − B: the sentence changed since the snapshot. A − B needs the same tokens in the same order."))
            elif len(comparison.tokens_a) == len(comparison.tokens_b):
                position = next(i for i, (a, b) in enumerate(zip(comparison.tokens_a, comparison.tokens_b)) if a != b)
                self.no_difference.setText(fill(self.tr(
                    "No A − B: token #%1 differs (“%2” in A, “%3” in B). It needs the same tokens in the "
                    "same order; compare A and B side by side and the cosines in the table."),
                    position, comparison.tokens_a[position], comparison.tokens_b[position]))
            else:
                self.no_difference.setText(fill(self.tr(
                    "No A − B: the sentences have different tokens (%1 vs %2). It needs the same tokens in the "
                    "same order; compare A and B side by side and the cosines in the table."),
                    len(comparison.tokens_a), len(comparison.tokens_b)))
            return
        if comparison.heads_averaged:
            matrix, bound = comparison.difference[0], float(comparison.difference_bound[0])
            title = self.tr("A − B · mean over heads")
        else:
            matrix, bound = comparison.difference[head_a], float(comparison.difference_bound[head_a])
            title = fill(self.tr("A − B · head %1"), head_a)
        bound = bound if bound > 0 else 1.0
        self.difference_stack.setCurrentWidget(self.heatmap_difference)
        self.heatmap_difference.plot.setTitle(title)
        labels = comparison.tokens_a
        self.heatmap_difference.set_matrix(matrix, labels, labels, levels=(-bound, bound), colormap=DIVERGING_MAP,
                                           value_format="{:+.2f}")
        self.heatmap_difference.set_highlight_row(self.controller.focus)
        if comparison.reason == REASON_HEADS:
            self.difference_message.setText(fill(self.tr(
                "%1 heads now vs %2 in the snapshot: A − B compares the weights averaged over heads."), heads_a, heads_b))
        elif not float(comparison.difference_bound.max()):
            self.difference_message.setText(self.tr("A − B is zero everywhere: the weights are the same."))
        else:
            self.difference_message.setText(fill(self.tr("largest |A − B| = %1 (red: A larger, blue: B larger)"),
                                                 f"{float(comparison.difference_bound.max()):.4f}"))
