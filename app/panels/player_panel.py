"""Step-through player: the pipeline one stage at a time, as seed 000's 第一帧 … 第八帧.

tokens → embeddings (+ positions) → Q, K, V → scores → scaled (+ mask) → softmax → weighted
sum of V → concat · W_O → new vectors. Each stage shows the real matrices of the snapshot on
screen (the selected head's where the stage is per head), outlines the focused token's row, and
says in two lines what happened and why. Previous / next / play (with seconds per stage), and
keyboard shortcuts that act only while the panel has focus (Left/Right or PageUp/PageDown, Space).

The colour scales of the per-head matrices are computed in the worker (lane "player") when a
snapshot arrives; the GUI thread only slices the trace and hands arrays to the heatmaps.
"""
from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QBoxLayout, QComboBox, QDoubleSpinBox, QHBoxLayout, QLabel, QScrollArea, QSizePolicy, QStackedWidget, QStyle,
    QToolButton, QVBoxLayout, QWidget,
)

from engine import STAGES
from engine.models import model_info
from figures.stages import (
    MAX_TOKEN_CHIPS, STAGE_KEYS, VALUE_COLUMNS, StageLevels, caption_lines, display_levels, stage_names, stage_specs,
)

from ..controller import Controller
from ..heatmap import HeatmapView
from ..layout_sizes import bottom_room
from ..text import fill
from .base import Panel
from .formula_view import FormulaView

LANE = "player"
MAX_VIEWS = 3  # heatmaps side by side
DEFAULT_SECONDS = 2.0  # per stage while playing


MIN_VIEW_WIDTH, MIN_VIEW_HEIGHT = 220, 240  # px of one stage heatmap: rows labelled, numbers readable (whole at 1366 × 768)
# … or less with few rows: its title and key axis, then ROW_PX a row (a label's height), at least
# LEAST_VIEW_HEIGHT. Three tokens need 100 px, not 240: the player fits at 1024 × 600;
# sixteen need the whole 240 (a lower one squashed them to 4-px rows, looked at)
VIEW_CHROME, ROW_PX, LEAST_VIEW_HEIGHT = 64, 12, 100
# Short and wide (the steps group at 1024 × 600: 701 × 211 px, and sixteen rows that need 240 under 79 px
# of controls and captions): the controls and captions go into a column beside the heatmap, which takes
# the whole height. Its title goes into that column too and its margins shrink from 9 to 2 px: SIDE_SAVING
# px less for the same 9.5-px rows (measured: title 24, margins 14). Only a stage of SIDE_VIEWS heatmap
# goes beside: three need 3 × MIN_VIEW_WIDTH of the width already
SIDE_VIEWS, SIDE_SAVING, SIDE_MARGINS = 1, 38, (2, 2, 2, 2)
SIDE_BAR_INSET = 7  # px above and below the colour bar then: its end numbers overhang it by half a line


def view_height(rows: int, side: bool = False) -> int:
    """The least height of a stage heatmap with ``rows`` rows (px); ``side``: beside the controls,
    its title out of the view."""
    return max(LEAST_VIEW_HEIGHT, min(MIN_VIEW_HEIGHT, VIEW_CHROME + ROW_PX * rows)) - (SIDE_SAVING if side else 0)


class PlayerPanel(Panel):
    """Previous / play / next over a caption and up to three heatmaps."""

    stageChanged = Signal(int)
    playingChanged = Signal(bool)

    stage_keys = STAGE_KEYS

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("playerPanel")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.controller = controller
        self._stage_index = 0
        self._snapshot = None  # the snapshot on display (its levels have arrived)
        self._pending = None  # the snapshot whose levels the worker is computing
        self._levels: dict[str, object] | None = None
        self._shown: tuple | None = None  # (result, stage, head) whose matrices are set
        self._active: list[str] = []  # names of the views in use, left to right
        self._highlights: dict[str, int | None] = {}
        self._caption = ("", "")
        self._titles: list[str] = []  # the titles of the views in use
        self._rows = 0  # rows of the tallest matrix shown (0: the token strip)
        self._side = False  # controls and captions beside the heatmap (short and wide), else above it
        self.stage_names = stage_names()
        self._build_actions()
        self._build_widgets()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._on_timer)
        self.speed.valueChanged.connect(self._on_speed_changed)
        self._on_speed_changed(self.speed.value())
        self.set_model_connected()
        self._lane = self.lane(LANE)
        self._lane.done.connect(self._on_levels)
        self._lane.failed.connect(lambda _error: self._on_levels(None))  # colour each view by itself
        if controller.snapshot is not None:
            self.show_snapshot(controller.snapshot)
        self._update_controls()

    # ----------------------------------------------------------------- construction
    def _build_actions(self) -> None:
        style = self.style()
        context = Qt.ShortcutContext.WidgetWithChildrenShortcut
        self.previous_action = QAction(style.standardIcon(QStyle.StandardPixmap.SP_MediaSeekBackward),
                                       self.tr("Previous stage"), self)
        self.previous_action.setShortcuts([QKeySequence(Qt.Key.Key_Left), QKeySequence(Qt.Key.Key_PageUp)])
        self.previous_action.triggered.connect(self.previous_stage)
        self.next_action = QAction(style.standardIcon(QStyle.StandardPixmap.SP_MediaSeekForward),
                                   self.tr("Next stage"), self)
        self.next_action.setShortcuts([QKeySequence(Qt.Key.Key_Right), QKeySequence(Qt.Key.Key_PageDown)])
        self.next_action.triggered.connect(self.next_stage)
        self.play_action = QAction(style.standardIcon(QStyle.StandardPixmap.SP_MediaPlay), self.tr("Play"), self)
        self.play_action.setShortcut(QKeySequence(Qt.Key.Key_Space))
        self.play_action.triggered.connect(self.toggle_play)
        for action in (self.previous_action, self.play_action, self.next_action):
            action.setShortcutContext(context)
            action.setToolTip(fill(self.tr("%1 (%2)"), action.text(),
                                   " · ".join(s.toString(QKeySequence.SequenceFormat.NativeText) for s in action.shortcuts())))
            self.addAction(action)

    def _build_widgets(self) -> None:
        # stacked: [head: bar, formula, captions] over the pages; beside (short and wide): the head a column
        # left of the pages, its bar in two rows (the stage's buttons over the speed and the formula)
        layout = QBoxLayout(QBoxLayout.Direction.TopToBottom, self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.head = QWidget()
        self.head.setObjectName("playerHead")
        head = QVBoxLayout(self.head)
        head.setContentsMargins(0, 0, 0, 0)
        self.bar = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        bar, rest = QHBoxLayout(), QHBoxLayout()
        self.buttons = {}
        for name, action in (("previous", self.previous_action), ("play", self.play_action), ("next", self.next_action)):
            button = QToolButton()
            button.setObjectName(f"player{name.capitalize()}Button")
            button.setDefaultAction(action)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
            bar.addWidget(button)
            self.buttons[name] = button
        self.stage_combo = QComboBox()
        self.stage_combo.setObjectName("playerStageCombo")
        self.stage_combo.addItems(list(self.stage_names))
        self.stage_combo.setToolTip(self.tr("Jump to a stage of the computation"))
        self.stage_combo.currentIndexChanged.connect(self.set_stage)
        bar.addWidget(self.stage_combo)
        self.indicator = QLabel()
        self.indicator.setObjectName("playerIndicator")
        bar.addWidget(self.indicator)
        bar.addStretch(1)
        speed_label = QLabel(self.tr("Seconds per stage"))
        rest.addWidget(speed_label)
        self.speed = QDoubleSpinBox()
        self.speed.setObjectName("playerSpeed")
        self.speed.setRange(0.01, 30.0)
        self.speed.setDecimals(2)
        self.speed.setSingleStep(0.5)
        self.speed.setValue(DEFAULT_SECONDS)
        self.speed.setToolTip(self.tr("How long each stage stays on screen while playing"))
        speed_label.setBuddy(self.speed)
        rest.addWidget(self.speed)
        self.formula_button = QToolButton()
        self.formula_button.setObjectName("playerFormulaButton")
        self.formula_button.setText(self.tr("Formula"))
        self.formula_button.setCheckable(True)
        self.formula_button.setToolTip(self.tr(
            "softmax(Q·Kᵀ/√d_k)·V with each symbol linked to its stage, one projection written out, self- "
            "versus cross-attention, RoPE's relative positions"))
        rest.addWidget(self.formula_button)
        self.bar.addLayout(bar, 1)
        self.bar.addLayout(rest)
        self._rows_of_bar = (bar, rest)
        head.addLayout(self.bar)
        self.formula = FormulaView()
        self.formula.setVisible(False)
        self.formula.stageRequested.connect(self._on_formula_link)
        self.formula_button.toggled.connect(self._on_formula_toggled)
        head.addWidget(self.formula)
        self.view_title = QLabel()  # beside only: the heatmap's title, out of the view
        self.view_title.setObjectName("playerViewTitle")
        self.view_title.setWordWrap(True)
        self.view_title.setTextFormat(Qt.TextFormat.PlainText)
        self.view_title.setVisible(False)
        head.addWidget(self.view_title)
        self.caption_what = QLabel()
        self.caption_what.setObjectName("playerCaptionWhat")
        self.caption_what.setWordWrap(True)
        self.caption_what.setTextFormat(Qt.TextFormat.PlainText)
        font = self.caption_what.font()
        font.setBold(True)
        self.caption_what.setFont(font)
        self.caption_why = QLabel()
        self.caption_why.setObjectName("playerCaptionWhy")
        self.caption_why.setWordWrap(True)
        self.caption_why.setTextFormat(Qt.TextFormat.PlainText)
        head.addWidget(self.caption_what)
        head.addWidget(self.caption_why)
        head.addStretch(1)  # beside: the column's text from the top
        layout.addWidget(self.head)
        self.pages = QStackedWidget()
        layout.addWidget(self.pages, 1)
        self.token_strip = QLabel()
        self.token_strip.setObjectName("playerTokens")
        self.token_strip.setWordWrap(True)
        self.token_strip.setTextFormat(Qt.TextFormat.RichText)
        self.token_strip.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.token_strip.setToolTip(self.tr("Click a token to focus it"))
        self.token_strip.linkActivated.connect(self._on_token_link)
        font = self.token_strip.font()
        font.setPointSizeF(font.pointSizeF() * 1.6)
        self.token_strip.setFont(font)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.token_strip)
        self.pages.addWidget(scroll)
        maps = QWidget()
        row = QHBoxLayout(maps)
        row.setContentsMargins(0, 0, 0, 0)
        self.views: list[HeatmapView] = []
        for index in range(MAX_VIEWS):
            view = HeatmapView(title=" ", colorbar=True)
            view.setObjectName(f"playerHeatmap{index}")
            view.cellClicked.connect(lambda r, c, i=index: self._on_cell_clicked(i, r, c))
            view.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)  # equal widths
            view.setMinimumSize(MIN_VIEW_WIDTH, MIN_VIEW_HEIGHT)  # never squashed: the dock scrolls instead
            row.addWidget(view, 1)
            self.views.append(view)
        self._view_margins = self.views[0].ci.layout.getContentsMargins()  # pyqtgraph's 9 px
        self.pages.addWidget(maps)

    def _show_page(self, index: int) -> None:
        """Page ``index`` of the stack; only the page on screen counts for the panel's minimum height
        (a stack takes its largest page's: the token strip scrolled in its dock at 1366 × 768 for
        heatmaps it did not show)."""
        for page in range(self.pages.count()):
            widget = self.pages.widget(page)
            policy = widget.sizePolicy()
            policy.setVerticalPolicy(QSizePolicy.Policy.Preferred if page == index else QSizePolicy.Policy.Ignored)
            widget.setSizePolicy(policy)
        self.pages.setCurrentIndex(index)
        self.pages.updateGeometry()

    # ----------------------------------------------------------------- public API
    @property
    def stage_index(self) -> int:
        return self._stage_index

    @property
    def stage_key(self) -> str:
        return STAGE_KEYS[self._stage_index]

    def set_stage(self, index: int) -> None:
        index = max(0, min(int(index), len(STAGE_KEYS) - 1))
        if index == self._stage_index:
            return
        self._stage_index = index
        self._update_controls()
        self._render()
        self.stageChanged.emit(index)

    def next_stage(self) -> None:
        self.set_stage(self._stage_index + 1)

    def previous_stage(self) -> None:
        self.set_stage(self._stage_index - 1)

    def is_playing(self) -> bool:
        return self._timer.isActive()

    def toggle_play(self) -> None:
        if self._timer.isActive():
            self._timer.stop()
        else:
            if self._stage_index == len(STAGE_KEYS) - 1:
                self.set_stage(0)  # play again from the start
            self._timer.start()
        self._update_controls()
        self.playingChanged.emit(self._timer.isActive())

    def stage_actions(self) -> list[QAction]:
        """Previous, play/pause, next: for the window's menu."""
        return [self.previous_action, self.play_action, self.next_action]

    def caption(self) -> str:
        """The two caption lines, joined by a newline."""
        return "\n".join(line for line in self._caption if line)

    def current_matrices(self) -> dict[str, np.ndarray]:
        """name → the matrix each visible heatmap holds (read back from the view)."""
        if self.stage_key == "tokens" or self._snapshot is None:
            return {}
        return {name: self.views[index].matrix() for index, name in enumerate(self._active)}

    def highlighted_rows(self) -> dict[str, int | None]:
        """name → the row outlined in that heatmap (None: no outline, e.g. W_O)."""
        if self.stage_key == "tokens" or self._snapshot is None:
            return {}
        return {name: self._highlights.get(name) for name in self._active}

    def stage_levels(self) -> StageLevels | None:
        """The colour levels of the result on display (its worker's bounds and the snapshot's), or None."""
        snapshot = self._snapshot
        if snapshot is None:
            return None
        return StageLevels(self._levels, {"scores": snapshot.score_bound, "scaled": snapshot.scaled_bound,
                                          "weights": snapshot.weight_max}, snapshot.vector_bound)

    def shown_result(self):
        """The AttentionResult on display (None before the first one arrives)."""
        return None if self._snapshot is None else self._snapshot.result

    # ----------------------------------------------------------------- state in
    def show_snapshot(self, snapshot) -> None:
        self._pending = snapshot
        self._lane.submit(display_levels, snapshot.result)

    def _on_levels(self, levels) -> None:
        if self._pending is None:
            return
        self._snapshot, self._levels, self._pending = self._pending, levels, None
        self._render()

    def show_selection(self) -> None:
        self._render()

    def _on_speed_changed(self, seconds: float) -> None:
        self._timer.setInterval(max(10, int(round(seconds * 1000))))

    def _on_timer(self) -> None:
        if self._stage_index >= len(STAGE_KEYS) - 1:
            self.toggle_play()  # stop at the last stage
        else:
            self.next_stage()

    def _on_token_link(self, link: str) -> None:
        if link.isdigit():
            self.controller.select(focus=int(link))

    def _on_cell_clicked(self, view_index: int, row: int, column: int) -> None:
        name = self._active[view_index] if view_index < len(self._active) else ""
        if name in STAGES:
            self.controller.inspect(row, column)
        elif name not in ("w_o", "") and self._highlights.get(name) is not None:
            self.controller.select(focus=row)

    def _update_controls(self) -> None:
        with QSignalBlocker(self.stage_combo):
            self.stage_combo.setCurrentIndex(self._stage_index)
        self.indicator.setText(fill(self.tr("%1 / %2"), self._stage_index + 1, len(STAGE_KEYS)))
        last = len(STAGE_KEYS) - 1
        self.previous_action.setEnabled(self._stage_index > 0)
        self.next_action.setEnabled(self._stage_index < last)
        playing = self._timer.isActive()
        self.play_action.setText(self.tr("Pause") if playing else self.tr("Play"))
        self.play_action.setIcon(self.style().standardIcon(
            QStyle.StandardPixmap.SP_MediaPause if playing else QStyle.StandardPixmap.SP_MediaPlay))

    # ----------------------------------------------------------------- drawing
    def _on_formula_toggled(self, shown: bool) -> None:
        self.formula.setVisible(shown)
        if shown:
            self._render()
        self.fit_room()

    def _on_formula_link(self, stage: str) -> None:
        """A symbol of the formula: show its stage here, and in the heatmap when it is one of its stages."""
        if stage in STAGE_KEYS:
            self.set_stage(STAGE_KEYS.index(stage))
        if stage in STAGES:
            self.controller.select(stage=stage)

    def _formula_key(self, result, focus: int) -> int:
        """The key of the RoPE line: the clicked heatmap cell's key when it is in this row, else the next token."""
        query, key = self.controller.cell
        if query == focus and key != focus and key < result.n:
            return key
        return (focus + 1) % result.n if result.n > 1 else focus

    def _render(self) -> None:
        snapshot = self._snapshot
        if snapshot is None:
            self._set_caption(self.tr("Waiting for the first computation…"), "")
            return
        result = snapshot.result
        heads = result.weights.shape[0]
        head = min(max(self.controller.head, 0), heads - 1)
        focus = min(max(self.controller.focus, 0), result.n - 1)
        key = self.stage_key
        self._set_caption(*caption_lines(key, result, head, focus, trained=not model_info(self.controller.model).configurable))
        if self.formula.isVisibleTo(self):
            self.formula.show_result(result, focus, head, self._formula_key(result, focus))
        if key == "tokens":
            self._show_page(0)
            self._show_tokens(result, focus)
            self.fit_room()  # the token strip stacked
            return
        self._show_page(1)
        specs = stage_specs(key, result, head, self.stage_levels())
        state = (result, key, head)  # AttentionResult compares by identity
        if state != self._shown:
            self._shown = state
            self._active = [spec["name"] for spec in specs]
            self._titles = [spec["title"] for spec in specs]
            self._rows = max(spec["matrix"].shape[0] for spec in specs)  # side by side: one height
            for index, view in enumerate(self.views):
                if index >= len(specs):
                    view.hide()
                    view.clear_matrix()
                    continue
                spec = specs[index]
                view.show()
                view.set_axis_titles(*spec["axes"])
                rows, columns = spec["matrix"].shape
                show_values = rows <= 14 and columns <= VALUE_COLUMNS[len(specs)]  # legible cells only
                view.set_matrix(spec["matrix"], spec["rows"], spec["columns"], levels=spec["levels"],
                                colormap=spec["colormap"], show_values=show_values)
            self._dress_views()
        self._highlights = {}
        for index, spec in enumerate(specs):
            row = focus if spec["highlight"] else None
            self._highlights[spec["name"]] = row
            self.views[index].set_highlight_row(row)
        self.fit_room()

    # ----------------------------------------------------------------- beside or stacked
    def is_beside(self) -> bool:
        """True when the controls and captions are a column beside the heatmap (a short, wide dock)."""
        return self._side

    def stacked_height(self, width: int) -> int:
        """The least height of the panel at ``width`` with its controls and captions over the heatmaps
        (what its layout needs stacked, counted whichever way it is laid out now: no back and forth)."""
        margins, spacing = self.layout().contentsMargins(), max(self.layout().spacing(), 0)
        inner = width - margins.left() - margins.right()
        bar = max(item.widget().sizeHint().height() for row in self._rows_of_bar
                  for item in (row.itemAt(i) for i in range(row.count())) if item.widget() is not None)
        parts = [bar] + ([self.formula.minimumSizeHint().height()] if self.formula.isVisibleTo(self) else [])
        parts += [label.heightForWidth(inner) for label in (self.caption_what, self.caption_why)]
        parts.append(view_height(self._rows) if self._rows else self.pages.currentWidget().minimumSizeHint().height())
        return margins.top() + margins.bottom() + sum(parts) + spacing * (len(parts) - 1)

    def _side_width(self) -> int:
        """The column's width beside: its widest row of controls (the stage's buttons and names)."""
        return max(row.sizeHint().width() for row in self._rows_of_bar)

    def fit_room(self) -> None:
        """Beside when the room (the dock's viewport, or what it may grow to) is shorter than the stacked
        layout needs and the stage's heatmap fits beside the column; else stacked. The formula, once
        opened, stacks (it is wide)."""
        room = self.room()
        if room is None or room.width() <= 0:
            return
        margins = self.layout().contentsMargins()
        beside = (0 < len(self._active) <= SIDE_VIEWS and self._rows > 0 and self.stage_key != "tokens"
                  and not self.formula.isVisibleTo(self)
                  and room.width() - margins.left() - margins.right() - self._side_width()
                  - self.layout().spacing() >= MIN_VIEW_WIDTH * len(self._active)
                  and max(room.height(), bottom_room(self) or 0) < self.stacked_height(room.width()))
        if beside != self._side:
            self._side = beside
            self.layout().setDirection(QBoxLayout.Direction.LeftToRight if beside else QBoxLayout.Direction.TopToBottom)
            self.bar.setDirection(QBoxLayout.Direction.TopToBottom if beside else QBoxLayout.Direction.LeftToRight)
            if beside:
                self.head.setFixedWidth(self._side_width())
            else:
                self.head.setMinimumWidth(0)
                self.head.setMaximumWidth(16777215)  # QWIDGETSIZE_MAX
            self._dress_views()

    def _dress_views(self) -> None:
        """Titles, margins and least height of the views in use, for the way the panel is laid out."""
        side = self._side and self.stage_key != "tokens"
        self.view_title.setVisible(side)
        self.view_title.setText(self._titles[0] if side and self._titles else "")
        least = view_height(self._rows, side) if self._rows else MIN_VIEW_HEIGHT
        for view, title in zip(self.views, self._titles):
            view.plot.setTitle(None if side else title)
            view.ci.layout.setContentsMargins(*(SIDE_MARGINS if side else self._view_margins))
            inset = SIDE_BAR_INSET if side else 0
            view.colorbar.setContentsMargins(0, inset, 0, inset)
            view.setMinimumHeight(least)  # Qt does nothing when it is unchanged

    def _set_caption(self, what: str, why: str) -> None:
        self._caption = (what, why)
        self.caption_what.setText(what)
        self.caption_why.setText(why)

    def _show_tokens(self, result, focus: int) -> None:
        chips = []
        for index, token in enumerate(result.tokens[:MAX_TOKEN_CHIPS]):
            colour = "#ff2d55" if index == focus else "#1f4e79"
            weight = "bold" if index == focus else "normal"
            chips.append(f"<a href='{index}' style='color:{colour}; font-weight:{weight}; text-decoration:none'>"
                         f"[{html.escape(token.text)}]</a>")
        if result.n > MAX_TOKEN_CHIPS:
            chips.append(html.escape(fill(self.tr("… and %1 more"), result.n - MAX_TOKEN_CHIPS)))
        self.token_strip.setText(" ".join(chips))
