"""Positional-encoding lab: why attention needs positions, and the two ways the engine adds them.

- Shuffle test (seed 004: 模型无法区分"猫追老鼠"和"老鼠追猫"): the same tokens in another
  order are computed for real (engine.toy.labs.shuffle_test, in the worker), un-permuted, and
  compared. Without positions the difference is 0 up to float32 rounding; with sinusoidal PE
  or RoPE it is not. The first press reverses the sentence, later presses shuffle at random.
- Sinusoidal PE: the (n × d_model) matrix added to the embeddings, as a diverging heatmap.
- RoPE: for the selected head and focused token, a few pairs (q[2i], q[2i+1]) before and after
  their rotation by θ = pos · 10000^(−2i/d_k), as arrows from the origin.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QSignalBlocker, Qt, QTimer
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QBoxLayout, QComboBox, QHBoxLayout, QLabel, QPushButton, QSplitter, QStackedWidget, QTabWidget,
    QToolButton, QVBoxLayout, QWidget,
)

from engine import EngineError
from engine.toy.labs import ShuffleResult, shuffle_test
from engine.core.positional import dot_by_distance, rope_angles, sinusoidal
from engine.models import model_info

from ..controller import Controller
from ..heatmap import DIVERGING_MAP, HeatmapView
from ..i18n import error_text
from ..layout_sizes import KeepHeightForWidth, bottom_room
from ..text import fill
from .base import Panel

SHUFFLE_LANE = "shuffle"
PE_LANE = "positional-pe"
SHUFFLE_SHORTCUT = "Ctrl+Shift+P"  # P for permute
MAX_ROPE_PAIRS = 4
COMPACT_ROPE_PAIRS = 2  # the tabs short: the fastest and the slowest pair, in one row
ROPE_ROW_HEIGHT = 90  # px a row of pair plots needs: title 30, axis 20, the arrows 40 (squashed, they were cut)
SETTLE_MS = 300  # rerun the shuffle test once typing pauses
MAX_CELL_VALUES = 8  # write Δ into the cells of the difference map up to this many tokens
MAX_ORDER_TOKENS = 40  # tokens spelled out in the original / shuffled lines
PE_MAP_HEIGHT, DIFFERENCE_HEIGHT = 120, 160  # px: the maps' least heights under their text
# Short (the labs group at 1024 × 600: 185 px for a lab that needs 262, 377 once shuffled; 1366 × 768: 308 for
# 362 once shuffled, where the difference map's axis was cut under the panel): each column its compact form.
# The shuffle's: the difference map a tab beside the PE map's, the two numbers on one line, the results in the
# intro's place if both do not fit. The tabs': the PE caption its formula alone (the rest behind "Details"),
# the maps without their titles (the tabs name them) and margins (9 → 2 px), COMPACT_MAP_HEIGHT tall
COMPACT_MAP_HEIGHT, COMPACT_MARGINS, COMPACT_BAR_INSET = 90, (2, 2, 2, 2), 7  # inset: the bar's end numbers
BEFORE_PEN = pg.mkPen("#8c8c8c", width=2, style=Qt.PenStyle.DashLine)
AFTER_COLOR = "#d62728"
ARC_PEN = pg.mkPen("#1f77b4", width=1.5)


def format_difference(value: float) -> str:
    """0 exactly as "0", tiny values in scientific notation, others with 4 decimals."""
    if value == 0:
        return "0"
    return f"{value:.2e}" if abs(value) < 1e-3 else f"{value:.4f}"


def rope_pairs(d_k: int, count: int = MAX_ROPE_PAIRS) -> list[int]:
    """A few pair indices i spread over 0 … d_k/2 − 1: fast (i = 0) to slow rotations."""
    half = d_k // 2
    return sorted({int(round(value)) for value in np.linspace(0, half - 1, min(count, half))})


def joined(tokens: list[str], limit: int = MAX_ORDER_TOKENS) -> str:
    """Tokens separated by spaces, cut after ``limit`` with an ellipsis."""
    return " ".join(tokens[:limit]) + (" …" if len(tokens) > limit else "")


class PositionalPanel(Panel):
    """Shuffle test on the left; sinusoidal PE and RoPE pictures in tabs on the right."""

    NEEDS = {"configurable": True}  # runs the toy engine's settings

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("positionalPanel")
        self.controller = controller
        self.shuffle_result: ShuffleResult | None = None
        self.rope_data: list[dict] = []  # per drawn pair: index, angle, before (x, y), after (x, y)
        self._shuffle_seed: int | None = None  # None until the user first shuffles
        self._waiting_shuffle = False  # a shuffle job has not answered yet
        self._waiting_pe = False
        self._shown_positional = None
        self._shuffle_stale = False  # the sentence changed since the shown shuffle result
        self._settle = QTimer(self, singleShot=True, interval=SETTLE_MS)
        self._settle.timeout.connect(self._rerun_shuffle)
        self._compact = (False, False)  # (shuffle column, tabs) in their compact form (a short dock)
        self._raise_difference = False  # the user pressed Shuffle: the difference tab comes forward (compact)

        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        outer.addWidget(splitter)
        splitter.addWidget(self._build_shuffle())
        self.tabs = QTabWidget()
        self.tabs.setObjectName("positionalTabs")
        self.tabs.addTab(self._build_sinusoidal(), self.tr("Sinusoidal PE"))
        self.tabs.addTab(self._build_rope(), self.tr("RoPE rotation"))
        # compact only, beside each caption's first line (in the tab bar's corner "Sinusoidal PE" was cut,
        # scrolled): the rest of the caption, one choice for both tabs
        self.details_buttons = []
        tips = (self.tr("What PE adds to x, and its dot products by distance"),
                self.tr("Which arrow is which, and why q·k sees only the distance"))
        for name, row, tip in zip(("pe", "rope"), (self._pe_text, self._rope_text), tips):
            button = QToolButton()
            button.setObjectName(f"{name}DetailsButton")
            button.setText(self.tr("Details"))
            button.setCheckable(True)
            button.setAutoRaise(True)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            button.setArrowType(Qt.ArrowType.RightArrow)
            button.setToolTip(tip)
            button.toggled.connect(self._on_details_toggled)
            button.setVisible(False)
            row.addWidget(button, 0, Qt.AlignmentFlag.AlignTop)
            self.details_buttons.append(button)
        self.details_button = self.details_buttons[0]
        splitter.addWidget(self.tabs)
        splitter.setSizes([450, 550])

        self.set_model_connected()
        controller.configChanged.connect(self._on_config_changed)
        self._shuffle_lane = self.lane(SHUFFLE_LANE)
        self._shuffle_lane.done.connect(self._on_shuffled)
        self._shuffle_lane.failed.connect(self._on_shuffle_failed)
        self._pe_lane = self.lane(PE_LANE)
        self._pe_lane.done.connect(self._on_pe_computed)
        self._pe_lane.failed.connect(self._on_pe_failed)
        self._on_config_changed(controller.config)
        if controller.snapshot is not None:
            self.show_snapshot(controller.snapshot)

    # ------------------------------------------------------------------ building
    def _build_shuffle(self) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        self._shuffle_layout = layout
        self.intro = intro = QLabel(self.tr(
            "Self-attention has no sense of order: shuffle the tokens, undo the shuffle on the result, and "
            "without positions nothing has changed (the tutorial “自注意力机制 self-attention”: 猫追老鼠 and 老鼠追猫 look the same)."))
        intro.setObjectName("shuffleIntro")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        row = QHBoxLayout()
        self.shuffle_button = QPushButton(self.tr("Shuffle tokens"))
        self.shuffle_button.setObjectName("shuffleButton")
        self.shuffle_button.setShortcut(QKeySequence(SHUFFLE_SHORTCUT))
        self.shuffle_button.setToolTip(fill(self.tr(
            "Compute the same tokens in another order and compare (%1). "
            "The first press reverses the sentence, the next ones shuffle at random"), SHUFFLE_SHORTCUT))
        self.shuffle_button.clicked.connect(self.shuffle)
        row.addWidget(self.shuffle_button)
        row.addWidget(QLabel(self.tr("Positional encoding")))
        self.positional = QComboBox()
        self.positional.setObjectName("labPositionalCombo")
        for key, label in (("none", self.tr("none")), ("sinusoidal", self.tr("sinusoidal (added)")),
                           ("rope", self.tr("RoPE (rotates q, k)"))):
            self.positional.addItem(label, key)
        self.positional.setToolTip(self.tr("The same setting as in the input panel: switch it and the shuffle test reruns"))
        self.positional.currentIndexChanged.connect(self._on_positional_chosen)
        row.addWidget(self.positional)
        row.addStretch(1)
        self._shuffle_row = row
        layout.addLayout(row)
        self.order_label = QLabel(self.tr("Press “Shuffle tokens” to compare the sentence with its tokens reordered."))
        self.order_label.setObjectName("shuffleOrder")
        self.order_label.setWordWrap(True)
        self.order_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.order_label)
        self.weight_label = QLabel()
        self.weight_label.setObjectName("shuffleWeightDifference")
        self.output_label = QLabel()
        self.output_label.setObjectName("shuffleOutputDifference")
        self.verdict = QLabel()
        self.verdict.setObjectName("shuffleVerdict")
        self.verdict.setWordWrap(True)
        self.differences = QBoxLayout(QBoxLayout.Direction.TopToBottom)  # compact: the two numbers on one line
        for label in (self.weight_label, self.output_label):
            label.setVisible(False)  # no empty lines before the first result
            self.differences.addWidget(label)
        layout.addLayout(self.differences)
        self.verdict.setVisible(False)
        layout.addWidget(self.verdict)
        self.difference_map = HeatmapView(title=self.tr("un-permuted shuffled weights − original weights"))
        self.difference_map.setObjectName("shuffleDifferenceHeatmap")
        self.difference_map.set_axis_titles(self.tr("query token"), self.tr("key token"))
        self.difference_map.setMinimumHeight(DIFFERENCE_HEIGHT)
        self.difference_map.setVisible(False)  # empty axes until the first shuffle says something
        self._map_margins = self.difference_map.ci.layout.getContentsMargins()  # pyqtgraph's 9 px
        layout.addWidget(self.difference_map, 1)
        layout.addStretch(0)
        self._shuffle_box = box
        # the wrapped results over the map (the splitter passes no height-for-width on: the map's axis
        # was cut at 1366 × 768, the dock not raised for it)
        self._box_height = KeepHeightForWidth(box)
        return box

    def _build_sinusoidal(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(2, 2, 2, 2)
        self.pe_caption = QLabel()
        self.pe_caption.setObjectName("peCaption")
        self.pe_caption.setWordWrap(True)
        self.pe_formula = QLabel()  # compact: the caption's formula alone
        self.pe_formula.setObjectName("peFormula")
        self.pe_formula.setWordWrap(True)
        self.pe_formula.setVisible(False)
        self._pe_text = QHBoxLayout()  # [the caption or the formula][Details (compact)]
        text = QVBoxLayout()
        text.addWidget(self.pe_caption)
        text.addWidget(self.pe_formula)
        self._pe_text.addLayout(text, 1)
        layout.addLayout(self._pe_text)
        self.pe_map = HeatmapView(title=self.tr("PE (token × dimension)"))
        self.pe_map.setObjectName("peHeatmap")
        self.pe_map.set_axis_titles(self.tr("token (position)"), self.tr("dimension"))
        self.pe_map.setMinimumHeight(PE_MAP_HEIGHT)  # rows readable under three lines of formulas
        layout.addWidget(self.pe_map, 1)
        self._pe_page = page
        self._page_height = KeepHeightForWidth(page)  # the wrapped formulas and the whole map
        return page

    def _build_rope(self) -> QWidget:
        self.rope_stack = QStackedWidget()
        self._rope_off = self.tr(
            "RoPE is off. Choose positional encoding “RoPE” to see each pair (q[2i], q[2i+1])\n"
            "of the focused token rotated by θ = pos · 10000^(−2i/d_k).")
        self.rope_hint = QLabel(self._rope_off)
        self.rope_hint.setObjectName("ropeHint")
        self.rope_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.rope_hint.setWordWrap(True)
        self.rope_stack.addWidget(self.rope_hint)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(2, 2, 2, 2)
        self.rope_caption = QLabel()
        self.rope_caption.setObjectName("ropeCaption")
        self.rope_caption.setWordWrap(True)
        self.rope_line = QLabel()  # compact: the caption's first line alone
        self.rope_line.setObjectName("ropeLine")
        self.rope_line.setWordWrap(True)
        self.rope_line.setVisible(False)
        self._rope_text = QHBoxLayout()  # [the caption or its first line][Details (compact)]
        text = QVBoxLayout()
        text.addWidget(self.rope_caption)
        text.addWidget(self.rope_line)
        self._rope_text.addLayout(text, 1)
        layout.addLayout(self._rope_text)
        self.rope_canvas = pg.GraphicsLayoutWidget()
        self.rope_canvas.setObjectName("ropeCanvas")
        self.rope_canvas.setBackground("w")
        layout.addWidget(self.rope_canvas, 1)
        self._rope_page = page
        self._rope_height = KeepHeightForWidth(page)  # the wrapped caption over the pairs, as the PE page's
        self.rope_stack.addWidget(page)
        return self.rope_stack

    # ------------------------------------------------------------------ actions
    def shuffle(self) -> None:
        """Run the shuffle test: the first time reversed, then a new random order each press."""
        self._shuffle_seed = 0 if self._shuffle_seed is None else self._shuffle_seed + 1
        self._raise_difference = True
        self._shuffle_stale = False
        self._settle.stop()
        self._submit_shuffle()

    def is_idle(self) -> bool:
        """True when no shuffle or PE job of this panel is waiting for its answer (tests)."""
        return not (self._waiting_shuffle or self._waiting_pe or self._settle.isActive())

    def _submit_shuffle(self) -> None:
        snapshot = self.controller.snapshot
        if snapshot is None or self._shuffle_seed is None:
            return
        self._waiting_shuffle = True
        self._say(self.verdict, self.tr("computing the shuffled sentence…"))
        self._shuffle_lane.submit(shuffle_test, snapshot.result.config, None, self._shuffle_seed, snapshot.result)

    def _on_positional_chosen(self, _index: int) -> None:
        key = self.positional.currentData()
        if key == self.controller.config.positional:
            return
        try:
            self.controller.update_config(positional=key)
        except EngineError as error:
            self._say(self.verdict, error_text(error))
            with QSignalBlocker(self.positional):
                self.positional.setCurrentIndex(self.positional.findData(self.controller.config.positional))

    # ------------------------------------------------------------------ state
    def _on_config_changed(self, config) -> None:
        with QSignalBlocker(self.positional):
            self.positional.setCurrentIndex(self.positional.findData(config.positional))

    def show_snapshot(self, snapshot) -> None:
        result = snapshot.result
        positional = result.config.positional
        if positional != self._shown_positional and positional in ("sinusoidal", "rope"):
            self.tabs.setCurrentIndex(0 if positional == "sinusoidal" else 1)
        self._shown_positional = positional
        n, d_model = result.n, result.config.d_model
        if positional == "sinusoidal":
            self._waiting_pe = False
            self._pe_lane.cancel()
            self._show_pe(result.positional, result.token_texts, added=True)
        else:
            self._waiting_pe = True
            self._pe_lane.submit(sinusoidal, n, d_model)
        self._draw_rope()
        if self._shuffle_seed is not None:
            # keep the comparison live (switch positions, see the verdict change) once typing pauses
            self._shuffle_stale = True
            self._settle.start()

    def _rerun_shuffle(self) -> None:
        if self._shuffle_stale and self.isVisible():
            self._shuffle_stale = False
            self._submit_shuffle()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().showEvent(event)
        self._rerun_shuffle()  # a rerun skipped while hidden happens now

    def show_selection(self) -> None:
        self._draw_rope()
        if self.shuffle_result is not None:
            self._show_difference_map()

    def _on_shuffled(self, value) -> None:
        self._waiting_shuffle = False
        self.shuffle_result = value
        self._show_shuffle()

    def _on_pe_computed(self, value) -> None:
        self._waiting_pe = False
        snapshot = self.controller.snapshot
        if snapshot is not None and snapshot.result.n == value.shape[0]:
            self._show_pe(value, snapshot.result.token_texts, added=False)

    def _on_shuffle_failed(self, error) -> None:
        self._waiting_shuffle = False
        self._say(self.verdict, fill(self.tr("The shuffle test failed: %1"), error_text(error)))

    def _on_pe_failed(self, error) -> None:
        self._waiting_pe = False
        self.pe_caption.setText(fill(self.tr("Could not compute PE: %1"), error_text(error)))

    # ------------------------------------------------------------------ pictures
    def _show_pe(self, matrix: np.ndarray, labels: list[str], *, added: bool) -> None:
        formula = self.tr("PE[pos, 2i] = sin(pos / 10000^(2i/d_model)),  PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))")
        other = self._other_model_note(self.controller.snapshot)
        if other:
            note = other
        elif added:
            note = self.tr("Added to each token's embedding: x = embedding + PE (the tutorial “自注意力机制 self-attention”: a1 + pe1).")
        else:
            note = self.tr("Not added now (positional encoding is not sinusoidal): what x would get.")
        dots, gap = dot_by_distance(matrix)  # a few dot products of rows on screen
        distance = fill(self.tr("PE[m] · PE[m + Δ] depends only on the distance Δ (largest gap over m: %1): %2"),
                        f"{gap:.1g}", ", ".join(fill(self.tr("Δ %1 → %2"), delta, f"{value:.2f}")
                                                for delta, value in enumerate(dots)))
        self.pe_caption.setText(formula + "\n" + note + "\n" + distance)
        self.pe_formula.setText(formula)
        rows = [f"{position} {text}" for position, text in enumerate(labels)]  # PE depends on the position
        self.pe_map.set_matrix(matrix, rows, None, levels=(-1.0, 1.0), colormap=DIVERGING_MAP, show_values=False)
        self.fit_room()  # a longer caption (more tokens, more distances) may not fit any more

    def _show_shuffle(self) -> None:
        shuffled = self.shuffle_result
        if shuffled is None:
            return
        self.order_label.setText(fill(self.tr("original: %1\nshuffled: %2"),
                                      joined(shuffled.tokens), joined(shuffled.shuffled_tokens)))
        self._say(self.weight_label, fill(self.tr("max |Δ weights| = %1"),
                                          format_difference(shuffled.max_weight_difference)))
        self._say(self.output_label, fill(self.tr("max |Δ outputs| = %1"),
                                          format_difference(shuffled.max_output_difference)))
        self._say(self.verdict, self._verdict(shuffled))
        self._show_difference_map()
        self.fit_room()
        if self._raise_difference and self.tabs.indexOf(self.difference_map) >= 0:
            self.tabs.setCurrentWidget(self.difference_map)  # the user's shuffle: its map in front
        self._raise_difference = False

    @staticmethod
    def _say(label: QLabel, text: str) -> None:
        """``text`` in ``label``, shown only with something to say (no empty lines before a result)."""
        label.setText(text)
        label.setVisible(bool(text))

    def _verdict(self, shuffled: ShuffleResult) -> str:
        config = shuffled.original.config
        size = format_difference(shuffled.max_weight_difference)
        names = {"sinusoidal": self.tr("sinusoidal PE"), "rope": self.tr("RoPE")}
        if shuffled.same_sentence:
            return self.tr("Every order of these tokens reads the same: type a sentence with different tokens.")
        if shuffled.only_permuted:
            if config.positional == "none":
                return fill(self.tr("No positional encoding: attention only permutes — difference 0 "
                                    "(up to float32 rounding, %1)."), size)
            return fill(self.tr("With %1 the difference is only rounding here (%2): these weights do not "
                                "depend on the order (e.g. a saturated softmax)."), names[config.positional], size)
        if config.positional == "none":
            if config.mask == "causal":
                return fill(self.tr("No positional encoding, but the causal mask itself tells positions apart: "
                                    "the weights change (max |Δ| = %1)."), size)
            return fill(self.tr("The weights change (max |Δ| = %1)."), size)
        return fill(self.tr("With %1: the weights change (max |Δ| = %2) — attention now sees the order."),
                    names[config.positional], size)

    def _show_difference_map(self) -> None:
        shuffled = self.shuffle_result
        head = min(self.controller.head, shuffled.weight_difference.shape[0] - 1)
        difference = shuffled.weight_difference[head]  # (n, n)
        # a floor on the colour scale keeps rounding noise (~1e-8) white instead of full colour
        bound = max(float(np.abs(difference).max()), 0.01)
        if self.tabs.indexOf(self.difference_map) < 0:  # a tab's page is shown by its tab widget
            self.difference_map.setVisible(True)
        self.difference_map.set_matrix(difference, shuffled.tokens, shuffled.tokens, levels=(-bound, bound),
                                       colormap=DIVERGING_MAP, show_values=difference.shape[0] <= MAX_CELL_VALUES)
        self._title_difference_map()

    def _title_difference_map(self) -> None:
        """Its title over it, or (compact, a tab) the tab's text: the long title needed 378 px of width."""
        head = min(self.controller.head, self.shuffle_result.weight_difference.shape[0] - 1)
        index = self.tabs.indexOf(self.difference_map)
        self.difference_map.plot.setTitle(None if self._compact[1] else
                                          fill(self.tr("head %1: un-permuted shuffled weights − original"), head))
        if index >= 0:
            self.tabs.setTabVisible(index, True)
            self.tabs.setTabText(index, fill(self.tr("Δ weights · head %1"), head))
            self.tabs.setTabToolTip(index, fill(self.tr("head %1: un-permuted shuffled weights − original"), head))

    # ------------------------------------------------------------------ the compact form
    def is_compact(self) -> bool:
        """True when either column is in its compact form (a dock too short for all of it)."""
        return self._compact != (False, False)

    def full_height(self) -> int:
        """The least height of the lab with everything in its place (the intro, the two numbers on two
        lines, the difference map under them, the PE caption whole)."""
        outer = self.layout().contentsMargins()
        return outer.top() + outer.bottom() + max(self._shuffle_height(intro=True, difference=True),
                                                  self._tabs_height(whole=True))

    def _shuffle_height(self, *, intro: bool, difference: bool) -> int:
        """The shuffle column's least height at its width now, with or without the intro and the
        difference map under the results (then the two numbers on two lines): counted the same whichever
        form is shown, so the form does not go back and forth."""
        spacing = max(self._shuffle_layout.spacing(), 0)
        width = max(self._shuffle_box.width(), 1)
        row = max(item.widget().sizeHint().height() for item in (self._shuffle_row.itemAt(i)
                  for i in range(self._shuffle_row.count())) if item.widget() is not None)
        parts = ([self.intro.heightForWidth(width)] if intro else []) + [row, self.order_label.heightForWidth(width)]
        if self.shuffle_result is not None:
            numbers = self.weight_label.sizeHint().height()
            parts += [numbers, numbers, DIFFERENCE_HEIGHT] if difference else [numbers]
        if self.verdict.text():
            parts.append(self.verdict.heightForWidth(width))
        return sum(parts) + spacing * (len(parts) - 1)

    def _tabs_height(self, *, whole: bool) -> int:
        """The tabs' least height with the PE caption whole (its map PE_MAP_HEIGHT) or its formula alone."""
        page = self._pe_page.layout()
        margins = page.contentsMargins()
        inner = max(self.tabs.width() - 8, 1) - margins.left() - margins.right()  # the tab's frame: 4 a side
        if whole:
            pe = self.pe_caption.heightForWidth(inner) + PE_MAP_HEIGHT
        else:
            pe = self.pe_formula.heightForWidth(inner - self.details_button.sizeHint().width() - 6) + COMPACT_MAP_HEIGHT
        pe += margins.top() + margins.bottom() + page.spacing()
        rope = self.rope_hint.heightForWidth(inner)
        if self.rope_stack.currentIndex() == 1:
            rope_margins = self._rope_page.layout().contentsMargins()
            text = (self.rope_caption.heightForWidth(inner) if whole else
                    self.rope_line.heightForWidth(inner - self.details_button.sizeHint().width() - 6))
            rope = (text + self._rope_page.layout().spacing() + self._rope_canvas_height(not whole)
                    + rope_margins.top() + rope_margins.bottom())
        return self.tabs.tabBar().sizeHint().height() + 8 + max(pe, rope)

    def fit_room(self) -> None:
        """Each column compact when the room (the dock's viewport, or what it may grow to) is shorter than
        it needs whole: the shuffle's difference map then a tab beside the PE map's, the PE caption its
        formula alone."""
        room = self.room()
        if room is None or room.height() <= 0 or self._shuffle_box.width() <= 0:
            return
        outer = self.layout().contentsMargins()
        height = max(room.height(), bottom_room(self) or 0) - outer.top() - outer.bottom()
        compact = (height < self._shuffle_height(intro=True, difference=True), height < self._tabs_height(whole=True))
        # with the map in a tab, the intro stays over the results while they fit under it
        intro = (not compact[0] or self.shuffle_result is None
                 or height >= self._shuffle_height(intro=True, difference=False))
        if compact != self._compact:
            self._set_compact(*compact)
        if intro != self.intro.isVisibleTo(self):
            self.intro.setVisible(intro)
            self.order_label.setToolTip("" if intro else self.intro.text())

    def _set_compact(self, left: bool, right: bool) -> None:
        self._compact = (left, right)
        self.differences.setDirection(QBoxLayout.Direction.LeftToRight if left else QBoxLayout.Direction.TopToBottom)
        index = self.tabs.indexOf(self.difference_map)
        if left and index < 0:  # a tab of its own, beside the PE map (shown once there is a result)
            self._shuffle_layout.removeWidget(self.difference_map)
            self.tabs.addTab(self.difference_map, "")
            self.tabs.setTabVisible(self.tabs.indexOf(self.difference_map), self.shuffle_result is not None)
        elif not left and index >= 0:
            front = self.tabs.currentWidget() is self.difference_map
            self.tabs.removeTab(index)
            self._shuffle_layout.insertWidget(self._shuffle_layout.indexOf(self.verdict) + 1, self.difference_map, 1)
            self.difference_map.setVisible(self.shuffle_result is not None)
            if front:
                self.tabs.setCurrentIndex(0)
        # the right column short: the maps without their titles (the tabs name them), margins and the PE
        # map's rotated "token (position)", longer than the map is tall; the colour bars' end numbers inside
        for view, height in ((self.difference_map, DIFFERENCE_HEIGHT), (self.pe_map, PE_MAP_HEIGHT)):
            view.setMinimumHeight(COMPACT_MAP_HEIGHT if right else height)
            view.ci.layout.setContentsMargins(*(COMPACT_MARGINS if right else self._map_margins))
            view.colorbar.setContentsMargins(0, COMPACT_BAR_INSET if right else 0, 0, COMPACT_BAR_INSET if right else 0)
        self.pe_map.plot.setTitle(None if right else self.tr("PE (token × dimension)"))
        self.pe_map.plot.getAxis("left").showLabel(not right)
        if self.shuffle_result is not None:
            self._title_difference_map()
        for button in self.details_buttons:
            button.setVisible(right)
        self._show_details()
        self._draw_rope()  # two pairs in a row, or four in the grid

    def _on_details_toggled(self, shown: bool) -> None:
        for button in self.details_buttons:
            with QSignalBlocker(button):
                button.setChecked(shown)
            button.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self._show_details()

    def _show_details(self) -> None:
        """The captions whole, or (the tabs compact, details closed) the PE formula and RoPE's first line."""
        whole = not self._compact[1] or self.details_button.isChecked()
        for caption, line in ((self.pe_caption, self.pe_formula), (self.rope_caption, self.rope_line)):
            caption.setVisible(whole)
            line.setVisible(not whole)

    def _rope_canvas_height(self, compact: bool) -> int:
        """The pair plots' least height: one row of them compact, two in the 2 × 2 grid (0: RoPE off)."""
        if self.rope_stack.currentIndex() != 1:
            return 0
        margins = COMPACT_MARGINS if compact else self._map_margins
        return (1 if compact else 2) * ROPE_ROW_HEIGHT + int(margins[1] + margins[3])

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt name
        super().resizeEvent(event)
        self.fit_room()  # the columns' widths: the text's lines

    def _other_model_note(self, snapshot) -> str:
        """"" for the toy engine; for a trained model, that this lab runs the toy engine's settings (its
        positions are the model's own: "RoPE is off" would be false for SmolLM2, which rotates)."""
        if snapshot is None or self.accepts(snapshot):
            return ""
        title = QCoreApplication.translate("Model", model_info(snapshot.model).title)
        return fill(self.tr("This lab runs the toy engine's settings. %1 places tokens its own way, fixed by its "
                            "weights: choose “Toy engine” in the Model toolbar to try the encodings here."), title)

    def _draw_rope(self) -> None:
        snapshot = self.controller.snapshot
        self.rope_data = []
        if snapshot is None or snapshot.result.q_unrotated is None:
            self.rope_hint.setText(self._other_model_note(snapshot) or self._rope_off)
            self.rope_stack.setCurrentIndex(0)
            self.rope_canvas.setMinimumHeight(0)  # the stack takes its largest page's minimum: none for the hint
            return
        self.rope_stack.setCurrentIndex(1)
        result = snapshot.result
        head = min(self.controller.head, result.q.shape[0] - 1)
        focus = min(self.controller.focus, result.n - 1)
        d_k = result.config.d_k
        angles = rope_angles(focus + 1, d_k)[focus]  # (d_k/2,) θ_i at this position
        before, after = result.q_unrotated[head, focus], result.q[head, focus]  # (d_k,) each
        self.rope_caption.setText(fill(self.tr(
            "q of “%1” (position %2, head %3): each pair (q[2i], q[2i+1]) turns by θ = pos · 10000^(−2i/d_k).\n"
            "Grey dashed: before RoPE; red: after. Then q·k depends on q, k and, of the positions, only on their "
            "distance m − n: shifting both tokens by the same amount leaves it unchanged."),
            result.tokens[focus].text, focus, head))
        self.rope_line.setText(self.rope_caption.text().partition("\n")[0])
        self.rope_canvas.clear()
        compact = self._compact[1]
        self.rope_canvas.ci.layout.setContentsMargins(*(COMPACT_MARGINS if compact else self._map_margins))
        self.rope_canvas.setMinimumHeight(self._rope_canvas_height(compact))
        pairs = rope_pairs(d_k, COMPACT_ROPE_PAIRS if compact else MAX_ROPE_PAIRS)
        for column, pair in enumerate(pairs):  # a 2 × 2 grid, or (compact) one row
            start = (float(before[2 * pair]), float(before[2 * pair + 1]))
            end = (float(after[2 * pair]), float(after[2 * pair + 1]))
            angle = float(angles[pair])
            self.rope_data.append({"pair": pair, "angle": angle, "before": start, "after": end})
            title = fill(self.tr("dims %1, %2: θ = %3 rad"), 2 * pair, 2 * pair + 1, f"{angle:.3f}")
            plot = self.rope_canvas.addPlot(row=0 if compact else column // 2, col=column if compact else column % 2)
            plot.setTitle(title, **({"size": "9pt"} if compact else {}))
            if compact:  # half the width each: the title in the app's font over the arrows, no axes' numbers
                plot.hideAxis("left")
                plot.hideAxis("bottom")
            self._draw_pair(plot, start, end, angle)

    @staticmethod
    def _draw_pair(plot: pg.PlotItem, start: tuple[float, float], end: tuple[float, float], angle: float) -> None:
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setAspectLocked(True)
        plot.showGrid(x=True, y=True, alpha=0.25)
        radius = max(math.hypot(*start), math.hypot(*end), 1e-6)
        for point, pen, color in ((start, BEFORE_PEN, "#8c8c8c"), (end, pg.mkPen(AFTER_COLOR, width=2.5), AFTER_COLOR)):
            plot.plot([0.0, point[0]], [0.0, point[1]], pen=pen)
            direction = math.degrees(math.atan2(point[1], point[0]))
            # ArrowItem's angle 0 points left and turns clockwise on screen
            arrow = pg.ArrowItem(pos=point, angle=180.0 - direction, headLen=12, tipAngle=35,
                                 pen=None, brush=pg.mkBrush(color))
            plot.addItem(arrow)
        if angle > 0:
            sweep = np.linspace(0.0, angle % (2 * math.pi) or 2 * math.pi, 48)
            start_angle = math.atan2(start[1], start[0])
            arc = 0.35 * radius
            plot.plot(arc * np.cos(start_angle + sweep), arc * np.sin(start_angle + sweep), pen=ARC_PEN)
        limit = 1.15 * radius
        plot.setRange(xRange=(-limit, limit), yRange=(-limit, limit), padding=0)

