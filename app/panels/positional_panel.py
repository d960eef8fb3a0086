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
from PySide6.QtCore import QSignalBlocker, Qt, QTimer
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QComboBox, QHBoxLayout, QLabel, QPushButton, QSplitter, QStackedWidget, QTabWidget, QVBoxLayout, QWidget,
)

from engine import EngineError
from engine.toy.labs import ShuffleResult, shuffle_test
from engine.core.positional import dot_by_distance, rope_angles, sinusoidal

from ..controller import Controller
from ..heatmap import DIVERGING_MAP, HeatmapView
from ..i18n import error_text
from ..text import fill
from .base import Panel

SHUFFLE_LANE = "shuffle"
PE_LANE = "positional-pe"
SHUFFLE_SHORTCUT = "Ctrl+Shift+P"  # P for permute
MAX_ROPE_PAIRS = 4
SETTLE_MS = 300  # rerun the shuffle test once typing pauses
MAX_CELL_VALUES = 8  # write Δ into the cells of the difference map up to this many tokens
MAX_ORDER_TOKENS = 40  # tokens spelled out in the original / shuffled lines
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

        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        outer.addWidget(splitter)
        splitter.addWidget(self._build_shuffle())
        self.tabs = QTabWidget()
        self.tabs.setObjectName("positionalTabs")
        self.tabs.addTab(self._build_sinusoidal(), self.tr("Sinusoidal PE"))
        self.tabs.addTab(self._build_rope(), self.tr("RoPE rotation"))
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
        intro = QLabel(self.tr(
            "Self-attention has no sense of order: shuffle the tokens, undo the shuffle on the result, and "
            "without positions nothing has changed (the tutorial “自注意力机制 self-attention”: 猫追老鼠 and 老鼠追猫 look the same)."))
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
        for label in (self.weight_label, self.output_label, self.verdict):
            layout.addWidget(label)
        self.difference_map = HeatmapView(title=self.tr("un-permuted shuffled weights − original weights"))
        self.difference_map.setObjectName("shuffleDifferenceHeatmap")
        self.difference_map.set_axis_titles(self.tr("query token"), self.tr("key token"))
        self.difference_map.setMinimumHeight(160)
        self.difference_map.setVisible(False)  # empty axes until the first shuffle says something
        layout.addWidget(self.difference_map, 1)
        layout.addStretch(0)
        return box

    def _build_sinusoidal(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(2, 2, 2, 2)
        self.pe_caption = QLabel()
        self.pe_caption.setObjectName("peCaption")
        self.pe_caption.setWordWrap(True)
        layout.addWidget(self.pe_caption)
        self.pe_map = HeatmapView(title=self.tr("PE (token × dimension)"))
        self.pe_map.setObjectName("peHeatmap")
        self.pe_map.set_axis_titles(self.tr("token (position)"), self.tr("dimension"))
        self.pe_map.setMinimumHeight(120)  # rows readable under three lines of formulas (a sliver at 1024 × 600)
        layout.addWidget(self.pe_map, 1)
        from ..layout_sizes import KeepHeightForWidth

        self._page_height = KeepHeightForWidth(page)  # the wrapped formulas and the whole map (issue 25.9)
        return page

    def _build_rope(self) -> QWidget:
        self.rope_stack = QStackedWidget()
        self.rope_hint = QLabel(self.tr(
            "RoPE is off. Choose positional encoding “RoPE” to see each pair (q[2i], q[2i+1])\n"
            "of the focused token rotated by θ = pos · 10000^(−2i/d_k)."))
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
        layout.addWidget(self.rope_caption)
        self.rope_canvas = pg.GraphicsLayoutWidget()
        self.rope_canvas.setObjectName("ropeCanvas")
        self.rope_canvas.setBackground("w")
        layout.addWidget(self.rope_canvas, 1)
        self.rope_stack.addWidget(page)
        return self.rope_stack

    # ------------------------------------------------------------------ actions
    def shuffle(self) -> None:
        """Run the shuffle test: the first time reversed, then a new random order each press."""
        self._shuffle_seed = 0 if self._shuffle_seed is None else self._shuffle_seed + 1
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
        self.verdict.setText(self.tr("computing the shuffled sentence…"))
        self._shuffle_lane.submit(shuffle_test, snapshot.result.config, None, self._shuffle_seed, snapshot.result)

    def _on_positional_chosen(self, _index: int) -> None:
        key = self.positional.currentData()
        if key == self.controller.config.positional:
            return
        try:
            self.controller.update_config(positional=key)
        except EngineError as error:
            self.verdict.setText(error_text(error))
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
        self.verdict.setText(fill(self.tr("The shuffle test failed: %1"), error_text(error)))

    def _on_pe_failed(self, error) -> None:
        self._waiting_pe = False
        self.pe_caption.setText(fill(self.tr("Could not compute PE: %1"), error_text(error)))

    # ------------------------------------------------------------------ pictures
    def _show_pe(self, matrix: np.ndarray, labels: list[str], *, added: bool) -> None:
        formula = self.tr("PE[pos, 2i] = sin(pos / 10000^(2i/d_model)),  PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))")
        if added:
            note = self.tr("Added to each token's embedding: x = embedding + PE (the tutorial “自注意力机制 self-attention”: a1 + pe1).")
        else:
            note = self.tr("Not added now (positional encoding is not sinusoidal): what x would get.")
        dots, gap = dot_by_distance(matrix)  # a few dot products of rows on screen
        distance = fill(self.tr("PE[m] · PE[m + Δ] depends only on the distance Δ (largest gap over m: %1): %2"),
                        f"{gap:.1g}", ", ".join(fill(self.tr("Δ %1 → %2"), delta, f"{value:.2f}")
                                                for delta, value in enumerate(dots)))
        self.pe_caption.setText(formula + "\n" + note + "\n" + distance)
        rows = [f"{position} {text}" for position, text in enumerate(labels)]  # PE depends on the position
        self.pe_map.set_matrix(matrix, rows, None, levels=(-1.0, 1.0), colormap=DIVERGING_MAP, show_values=False)

    def _show_shuffle(self) -> None:
        shuffled = self.shuffle_result
        if shuffled is None:
            return
        self.order_label.setText(fill(self.tr("original: %1\nshuffled: %2"),
                                      joined(shuffled.tokens), joined(shuffled.shuffled_tokens)))
        self.weight_label.setText(fill(self.tr("max |Δ weights| = %1"), format_difference(shuffled.max_weight_difference)))
        self.output_label.setText(fill(self.tr("max |Δ outputs| = %1"), format_difference(shuffled.max_output_difference)))
        self.verdict.setText(self._verdict(shuffled))
        self._show_difference_map()

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
        self.difference_map.setVisible(True)
        self.difference_map.set_matrix(difference, shuffled.tokens, shuffled.tokens, levels=(-bound, bound),
                                       colormap=DIVERGING_MAP, show_values=difference.shape[0] <= MAX_CELL_VALUES)
        self.difference_map.plot.setTitle(fill(self.tr("head %1: un-permuted shuffled weights − original"), head))

    def _draw_rope(self) -> None:
        snapshot = self.controller.snapshot
        self.rope_data = []
        if snapshot is None or snapshot.result.q_unrotated is None:
            self.rope_stack.setCurrentIndex(0)
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
        self.rope_canvas.clear()
        for column, pair in enumerate(rope_pairs(d_k)):  # a 2 × 2 grid
            start = (float(before[2 * pair]), float(before[2 * pair + 1]))
            end = (float(after[2 * pair]), float(after[2 * pair + 1]))
            angle = float(angles[pair])
            self.rope_data.append({"pair": pair, "angle": angle, "before": start, "after": end})
            title = fill(self.tr("dims %1, %2: θ = %3 rad"), 2 * pair, 2 * pair + 1, f"{angle:.3f}")
            plot = self.rope_canvas.addPlot(row=column // 2, col=column % 2, title=title)
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

