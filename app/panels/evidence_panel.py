"""Evidence, not only attention: two docks over the pretrained models.

- :class:`PatchingPanel`: activation patching (engine.analysis.patching). Two prompts and the answer;
  the grids (a token grid — residual stream, attention output or MLP output — and the heads)
  as heatmaps filled layer by layer: one worker task runs the whole grid and each finished row
  arrives as a partial result (the GUI thread only draws), with progress and Esc. Beside each exact
  grid its attribution-patching (AtP) estimate, on the same colour scale: the same task computes it
  first (one backward: 0.28 s idle on SmolLM2's Eiffel pair) and it is drawn before the exact grid's
  first row; a line gives their correlation over the exact cells so far and the cells where they
  differ most (app/jobs/atp.py); a decoder's grids show p(answer) or the logit difference (the
  Measure box); a model the backward refuses gets the engine's reason in its place. A click opens
  that layer and token (or head) in the other views. Esc keeps the partial grid, marked
  partial; a model switch, or switching heads on or off, mid-grid drops it (never drawn over
  another model or other heads).
- :class:`OcclusionPanel`: leave-one-out (engine.analysis.occlusion): bars per token, how much the
  measure falls without that token, filled token by token the same way.

Both run with the window's switched-off heads (the request's ``ablate``), as the Next token view
and ``export --ablate`` do.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QProgressBar, QPushButton, QSpinBox, QVBoxLayout, QWidget,
)

from engine.analysis.request import RunRequest
from engine.models import model_info

from ..controller import Controller
from ..heatmap import HeatmapView
from ..i18n import error_text
# the tasks at the dock's build, not at the first click: importing the patching engine there took ~17 ms
# of the GUI thread's turn that answered Patch
from ..jobs.evidence import leave_one_out_task, patching_task
from ..text import fill
from . import atp_text
from .base import Panel

BAR_BRUSH = pg.mkBrush("#1a73e8")
PATCH_MAP = "inferno"
TOKEN_GRIDS = ("resid_pre", "attn_out", "mlp_out")
# px: each grid's least height whatever the model, set once. The grids take the dock's room and their rows
# share it (SmolLM2's 30 layers at 1366 × 768: ~5 px a row, every fourth layer labelled, the token axis
# shown); a height grown to every row's label scrolled the dock there, layers 23–29 and the tokens out of
# sight, and growing the dock at the click re-laid the window out while the grid ran (a 46–75 ms stall).
# No more than the evidence group's room at 1024 × 600 leaves under the form (185 px in all).
GRID_LEAST = 96


def _finite_range(*grids) -> tuple[float, float]:
    values = np.concatenate([np.asarray(g, dtype=np.float64).ravel() for g in grids])
    values = values[np.isfinite(values)]
    if not values.size:
        return 0.0, 1.0
    low, high = float(values.min()), float(values.max())
    return (low, high) if high > low else (low, low + 1e-6)


# ====================================================================== patching
class PatchingPanel(Panel):
    """Activation patching: clean and corrupted prompts, an answer, two grids as heatmaps."""

    NEEDS = {"configurable": False}  # trained weights

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("patchingPanel")
        self.controller = controller
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        # the empty state on the toy engine (random weights: nothing to restore) instead of a form that fails
        self.empty = QLabel(self.tr(
            "Activation patching needs a trained model. The toy engine's weights are random, so copying an "
            "activation from one prompt into another shows nothing worth reading.\n\nTo try it: choose SmolLM2 "
            "(a decoder: which layer and token bring back “ Paris”) or MiniLM (an encoder) in the Model bar at the "
            "top, or open a GGUF file or a Hugging Face folder with File → Open model…; then type a clean and a "
            "corrupted prompt of the same length here and press Patch."))
        self.empty.setObjectName("patchEmpty")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        outer.addWidget(self.empty)
        self.body = QWidget()
        self.body.setObjectName("patchBody")
        outer.addWidget(self.body, 1)
        layout = QVBoxLayout(self.body)
        layout.setContentsMargins(0, 0, 0, 0)
        form = QFormLayout()
        self.clean = QLineEdit("The Eiffel Tower is in the city of")
        self.clean.setObjectName("patchClean")
        self.corrupt = QLineEdit("The Colosseum is in the city of")
        self.corrupt.setObjectName("patchCorrupt")
        self.answer = QLineEdit(" Paris")
        self.answer.setObjectName("patchAnswer")
        self.answer.setToolTip(self.tr("Decoders: the token whose probability at the last position is measured "
                                       "(its first token when it has several)"))
        self.position = QSpinBox()
        self.position.setObjectName("patchPosition")
        self.position.setRange(0, 511)
        self.position.setToolTip(self.tr("Encoders: the token whose final vector is compared with the clean run's"))
        # the two prompts side by side (the bottom area is ≥ 700 px wide): a row more for the grids, which
        # had ~50 px under three rows of form at 1024 × 600
        prompts = QHBoxLayout()
        clean_label = QLabel(self.tr("Clean prompt"))
        clean_label.setBuddy(self.clean)
        prompts.addWidget(clean_label)
        prompts.addWidget(self.clean, 1)
        corrupt_label = QLabel(self.tr("Corrupted prompt"))
        corrupt_label.setBuddy(self.corrupt)
        prompts.addWidget(corrupt_label)
        prompts.addWidget(self.corrupt, 1)
        form.addRow(prompts)
        row = QHBoxLayout()
        row.addWidget(QLabel(self.tr("Answer")))
        row.addWidget(self.answer, 1)
        row.addWidget(QLabel(self.tr("or token (encoders)")))
        row.addWidget(self.position)
        row.addWidget(QLabel(self.tr("Grid")))
        self.grid = QComboBox()
        self.grid.setObjectName("patchGrid")
        self.grid.addItem(self.tr("residual stream"), "resid_pre")
        self.grid.addItem(self.tr("attention output"), "attn_out")
        self.grid.addItem(self.tr("MLP output"), "mlp_out")
        row.addWidget(self.grid)
        self.measure = QComboBox()  # decoders: both grids of p(answer) or of the logit difference
        self.measure.setObjectName("patchMeasure")
        self.measure.addItem(self.tr("p(answer)"), "p")
        self.measure.addItem(self.tr("logit difference"), "diff")
        self.measure.setToolTip(self.tr("Decoders: the grids of p(answer), or of logit(answer) − logit(the corrupted "
                                        "run's most likely other token), where AtP's first-order estimate is "
                                        "not flattened by a p(answer) near 0"))
        self.measure.currentIndexChanged.connect(self._redraw)
        row.addWidget(self.measure)
        self.run_button = QPushButton(self.tr("Patch"))
        self.run_button.setObjectName("patchRun")
        self.run_button.setToolTip(self.tr("Run the corrupted prompt again with one activation of the clean run "
                                           "copied in, for every layer and token, and every head (Esc stops)"))
        self.run_button.clicked.connect(self.start)
        row.addWidget(self.run_button)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setObjectName("patchCancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setVisible(False)
        row.addWidget(self.cancel_button)
        form.addRow(row)
        layout.addLayout(form)
        self.progress = QProgressBar()
        self.progress.setObjectName("patchProgress")
        self.progress.setVisible(False)
        layout.addWidget(self.progress)
        self.caption = QLabel()
        self.caption.setObjectName("patchCaption")
        self.caption.setWordWrap(True)
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # what a cell is, as a tooltip: the line it took was the grid rows' room once the AtP lines came
        self.caption.setToolTip(self.tr("Each cell: the corrupted run with that one activation copied from the clean "
                                        "run (dark: nothing restored)."))
        captions = QVBoxLayout()  # the exact grids' line and the AtP lines as one block of text
        captions.setSpacing(0)
        captions.addWidget(self.caption)
        self.atp_line = QLabel()  # what AtP is, its agreement with the exact grids, or why there is none
        self.atp_line.setObjectName("patchAtpCaption")
        self.atp_line.setWordWrap(True)
        self.atp_line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.atp_line.setToolTip(atp_text.explanation())
        captions.addWidget(self.atp_line)
        self.atp_line.setVisible(False)  # until there is something to say (see _set_atp_line)
        layout.addLayout(captions)
        maps = QHBoxLayout()
        # each exact grid, then its AtP estimate; the four share one colour scale, so one colour bar (the
        # first grid's), and the width of the others goes to their columns (every head named at 1366 × 768);
        # which is which in the axis title, not in a title row (the rows need the height: 30 layers there)
        self.token_map = self._grid_view("patchTokenGrid", self.tr("exact: token (patched position)"), colorbar=True)
        self.atp_token_map = self._grid_view("patchAtpTokenGrid", self.tr("AtP estimate: token"))
        self.head_map = self._grid_view("patchHeadGrid", self.tr("exact: head"))
        self.atp_head_map = self._grid_view("patchAtpHeadGrid", self.tr("AtP estimate: head"))
        for view, stretch in ((self.token_map, 5), (self.atp_token_map, 4), (self.head_map, 3), (self.atp_head_map, 3)):
            maps.addWidget(view, stretch)
        for view in (self.token_map, self.atp_token_map):
            view.cellClicked.connect(self._open_token)  # an AtP cell opens what its exact cell opens
            view.cellHovered.connect(lambda row, column, v=view: self._hover(v, "token", row, column))
        for view in (self.head_map, self.atp_head_map):
            view.cellClicked.connect(self._open_head)
            view.cellHovered.connect(lambda row, column, v=view: self._hover(v, "head_z", row, column))
        layout.addLayout(maps, 1)
        self._lane = self.lane("patching", long=True)  # a grid never holds the thread that computes edits
        self._lane.done.connect(self._on_done)
        self._lane.failed.connect(self._on_failed)
        self._lane.partial.connect(self._on_partial)
        self._lane.progressed.connect(self._on_progress)
        self.setup = None
        self.grids: dict[str, np.ndarray] = {}
        self.diffs: dict[str, np.ndarray] = {}  # decoders: the exact logit-difference grids
        self.view = None  # the latest app.jobs.atp.PatchingView drawn (the AtP side and its agreement)
        self.clean_text = ""  # the clean prompt the grids are of (a click opens it)
        self.tokens: tuple = ()  # the clean prompt's token texts (columns of the token grids)
        self.model = None  # the model the grids belong to
        self.running = False
        self.partial = False
        controller.cancelled.connect(lambda: self.cancel() if self.running else None)  # Esc
        controller.modelChanged.connect(self._on_model_changed)
        controller.ablateChanged.connect(self._on_ablate_changed)
        self.set_model_connected(selection=False)
        self._show_state(controller.model)

    def _grid_view(self, name: str, columns: str, colorbar: bool = False) -> HeatmapView:
        view = HeatmapView(colorbar=colorbar)
        view.setObjectName(name)
        view.set_axis_titles(self.tr("layer") if colorbar else "", columns)  # the first grid's layer axis is titled
        view.setMinimumHeight(GRID_LEAST)
        return view

    def _show_state(self, model) -> None:
        """The form and grids for a pretrained model; the empty state's explanation on the toy engine."""
        toy = model is None or model_info(model).configurable
        self.empty.setVisible(toy)
        self.body.setVisible(not toy)

    def is_empty_state(self) -> bool:
        return not self.empty.isHidden()

    # ------------------------------------------------------------------ panel contract
    def show_snapshot(self, snapshot) -> None:
        if snapshot is not None:
            self._show_state(snapshot.model)
        if snapshot is not None and not self.running:
            decoder = model_info(snapshot.model).predicts_next_token
            self.answer.setEnabled(decoder)
            self.measure.setEnabled(decoder)
            self.position.setEnabled(not decoder)

    def show_selection(self) -> None:
        pass

    def clear(self) -> None:
        self._lane.cancel()
        self.running = False
        self.setup, self.grids, self.diffs, self.model, self.view, self.tokens = None, {}, {}, None, None, ()
        for view in (self.token_map, self.head_map, self.atp_token_map, self.atp_head_map):
            view.clear_matrix()
        self._set_atp_line("")
        self._finish()

    # ------------------------------------------------------------------ running
    def start(self) -> None:
        """One worker task: check the prompts, run both, then the grids row by row (each row
        arrives as a partial result), with the window's switched-off heads."""
        model = self.controller.model
        if model_info(model).configurable:
            self.caption.setText(self.tr("Patching needs a pretrained model: choose one in the Model bar."))
            return
        self.clear()
        self.model = model
        self.partial = False
        self.running = True
        self.progress.setRange(0, 0)  # busy until the two runs are back
        self.progress.setVisible(True)
        self.cancel_button.setVisible(True)
        self.run_button.setEnabled(False)
        self.caption.setText(self.tr("Running both prompts…"))
        self.clean_text = self.clean.text()
        request = RunRequest(text=self.clean.text(), answer=self.answer.text() or None, position=self.position.value(),
                             ablate=self.controller.ablate)
        self._lane.start(patching_task, model, request, self.corrupt.text(), (self.grid.currentData(), "head_z"))

    def cancel(self) -> None:
        """Esc: stop; the rows done so far stay, marked partial."""
        if not self.running:
            return
        self._lane.cancel()
        self.running = False
        self.partial = bool(self.grids)
        self._finish()
        self._draw()

    def _finish(self) -> None:
        self.progress.setVisible(False)
        self.cancel_button.setVisible(False)
        self.run_button.setEnabled(True)

    def _drop(self, reason: str) -> None:
        dropped = self.running or bool(self.grids)
        self.clear()
        if dropped:
            self.caption.setText(reason)

    def _on_model_changed(self, model: str) -> None:
        self._show_state(model)
        if self.model is not None and model != self.model:  # never drawn over the new model
            self._drop(self.tr("The model changed: the patching grids were dropped."))

    def _on_ablate_changed(self, _ablate) -> None:
        if self.running:  # the rows to come would be of other heads than the rows shown
            self._drop(self.tr("Heads were switched on or off: the patching grids were dropped; press Patch again."))

    def _on_failed(self, error) -> None:
        self.running = False
        self._finish()
        self.view = None  # an estimate of prompts the exact grid refused is not shown
        for view in (self.atp_token_map, self.atp_head_map):
            view.clear_matrix()
        self._set_atp_line("")
        self.caption.setText(error_text(error))

    def _on_progress(self, done: int, total: int) -> None:
        if self.running:
            self.progress.setRange(0, total)
            self.progress.setValue(done)

    def _on_partial(self, result) -> None:
        if self.running:
            self._show(result)
            for view in (self.token_map, self.head_map, self.atp_token_map, self.atp_head_map):
                view.repaint()  # now, while the task waits for it (app.worker.TaskState.set_partial_result)

    def _on_done(self, view) -> None:
        if not self.running:
            return
        self.running = False
        self.partial = view.exact is None or not view.exact.complete
        self._finish()
        self._show(view)

    def _show(self, view) -> None:
        """Draw an app.jobs.atp.PatchingView: the AtP side, and the exact grid so far when it has one
        (engine.analysis.patching.PatchResult; NaN cells not run yet)."""
        self.view = view
        if view.tokens:
            self.tokens = view.tokens
        if view.exact is not None:
            self.setup, self.grids, self.diffs = view.exact.setup, dict(view.exact.grids), dict(view.exact.logit_diffs)
            self.tokens = tuple(t.text for t in self.setup.clean.tokens)
        self._draw()
        self._draw_atp()

    # ------------------------------------------------------------------ drawing
    def _redraw(self) -> None:
        self._draw()
        self._draw_atp()

    def _diff(self) -> bool:
        """True when the logit-difference grids are shown (a decoder's, chosen in the Measure box)."""
        decoder = self.setup.decoder if self.setup is not None else (
            self.view is not None and self.view.estimate is not None and self.view.estimate.measure == "p(answer)")
        return decoder and self.measure.currentData() == "diff"

    def _exact_grids(self) -> dict:
        return self.diffs if self._diff() else self.grids

    def _estimate_grids(self) -> dict:
        estimate = None if self.view is None else self.view.estimate
        return {} if estimate is None else estimate.logit_diffs if self._diff() else estimate.grids

    def _levels(self) -> tuple[float, float]:
        """The exact side's colour scale, which the AtP side shares (an estimate outside it is drawn
        at its ends; hover tells its value): the two unpatched measures and the exact cells so far."""
        s, diff = self.setup, self._diff()
        if s is not None:
            ends = (s.clean_diff, s.corrupt_diff) if diff else (s.clean_value, s.corrupt_value)
            return _finite_range(*ends, *self._exact_grids().values())
        estimate = self.view.estimate  # before the exact grid's setup: the unpatched runs the estimate knows
        return (_finite_range(estimate.corrupt_diff, *estimate.logit_diffs.values()) if diff
                else _finite_range(estimate.clean_value, estimate.corrupt_value))

    def _draw(self) -> None:
        s = self.setup
        if s is None or not self.grids:
            return
        grids, diff = self._exact_grids(), self._diff()
        token_grid = next(name for name in grids if name != "head_z")
        labels = [t.text for t in s.clean.tokens]
        layers = [str(l) for l in range(s.layers)]
        levels = self._levels()
        self.token_map.set_matrix(grids[token_grid], layers, labels, levels=levels, colormap=PATCH_MAP,
                                  value_format="{:.2f}")
        self.head_map.set_matrix(grids["head_z"], layers, [f"H{h}" for h in range(s.heads)], levels=levels,
                                 colormap=PATCH_MAP, value_format="{:.2f}")
        done = sum(int(np.isfinite(g).sum()) for g in self.grids.values())
        total = sum(g.size for g in self.grids.values())
        if diff:
            measure = fill(self.tr("logit(“%1”) − logit of the corrupted run's likeliest other token"),
                           s.answer.piece)
        else:
            measure = (fill(self.tr("p(“%1”) at the last position"), s.answer.piece) if s.decoder
                       else fill(self.tr("cosine of “%1”'s final vector to the clean run's"), labels[s.position]))
        clean_value, corrupt_value = (s.clean_diff, s.corrupt_diff) if diff else (s.clean_value, s.corrupt_value)
        text = fill(self.tr("%1: clean %2, corrupted %3."), measure, f"{clean_value:.4g}", f"{corrupt_value:.4g}")
        if s.answer is not None and s.answer.note:
            text += " " + fill(self.tr("The answer has %1 tokens; the first, “%2”, is measured."),
                               s.answer.pieces, s.answer.piece)
        if s.ablate:
            text += " " + fill(self.tr("Every run with %1 heads switched off."), len(s.ablate))
        if self.partial:
            text += " " + fill(self.tr("PARTIAL: cancelled after %1 of %2 cells (blank cells were not run)."),
                               done, total)
        elif done == total:
            best = np.unravel_index(np.nanargmax(grids[token_grid]), grids[token_grid].shape)
            text += " " + fill(self.tr("Largest: layer %1, “%2” → %3."), int(best[0]), labels[best[1]],
                               f"{grids[token_grid][best]:.3g}")
        self.caption.setText(text)

    def _draw_atp(self) -> None:
        """The AtP grids on the exact grids' scale and their line; the engine's refusal instead of them."""
        view = self.view
        if view is None:
            return
        refused = view.estimate is None
        self.atp_token_map.setVisible(not refused)
        self.atp_head_map.setVisible(not refused)
        if refused:
            self._set_atp_line(atp_text.refusal(view.error) if view.error is not None else "")
            return
        grids = self._estimate_grids()
        agreement = view.diff_agreement if self._diff() else view.agreement
        token_grid = next(name for name in grids if name != "head_z")
        layers = [str(l) for l in range(grids["head_z"].shape[0])]
        levels = self._levels()
        self.atp_token_map.set_matrix(grids[token_grid], layers, list(self.tokens), levels=levels, colormap=PATCH_MAP,
                                      value_format="{:.2f}")
        self.atp_head_map.set_matrix(grids["head_z"], layers, [f"H{h}" for h in range(grids["head_z"].shape[1])],
                                     levels=levels, colormap=PATCH_MAP, value_format="{:.2f}")
        titles = {"resid_pre": self.tr("residual stream"), "attn_out": self.tr("attention output"),
                  "mlp_out": self.tr("MLP output"), "head_z": self.tr("heads")}
        shown = [(titles[name], name, agreement[name]) for name in (token_grid, "head_z") if name in agreement]
        self._set_atp_line(atp_text.lines(shown, self.tokens))

    def _set_atp_line(self, text: str) -> None:
        """The AtP lines, hidden while empty: an empty label keeps a line's height, which the grids' rows
        need at 1024 × 600 (tests/app/shell/test_layout_fit.py)."""
        self.atp_line.setText(text)
        self.atp_line.setVisible(bool(text))

    def _hover(self, view: HeatmapView, grid: str, row: int, column: int) -> None:
        """The hovered cell's exact value and AtP estimate, as the grid's tooltip."""
        if row < 0 or self.view is None:
            view.setToolTip("")
            return
        exact_grids, estimate_grids = self._exact_grids(), self._estimate_grids()
        name = grid if grid == "head_z" else next((g for g in exact_grids or estimate_grids if g != "head_z"), None)
        if name is None:
            return
        exact, estimate = exact_grids.get(name), estimate_grids.get(name)
        cell = atp_text.cell_name(name, row, column, self.tokens)
        ran = exact is not None and np.isfinite(exact[row, column])
        if ran and estimate is not None:
            tip = fill(self.tr("%1 — exact %2, AtP estimate %3"), cell, f"{exact[row, column]:.4g}",
                       f"{estimate[row, column]:.4g}")
        elif estimate is not None:
            tip = fill(self.tr("%1 — AtP estimate %2 (exact not run yet)"), cell, f"{estimate[row, column]:.4g}")
        elif ran:
            tip = fill(self.tr("%1 — exact %2"), cell, f"{exact[row, column]:.4g}")
        else:
            tip = ""
        view.setToolTip(tip)

    def is_partial(self) -> bool:
        return self.partial

    # ------------------------------------------------------------------ opening a cell
    def _open(self, layer: int, focus: int | None = None, head: int | None = None) -> None:
        c = self.controller
        if self.view is None or self.model != c.model:  # an AtP cell opens before the exact grid's first row too
            return
        if c.config.text != self.clean_text:
            c.update_config(text=self.clean_text)
        c.set_model(c.model, layer)
        c.select(focus=focus, head=head)

    def _open_token(self, layer: int, position: int) -> None:
        self._open(layer, focus=position)

    def _open_head(self, layer: int, head: int) -> None:
        self._open(layer, head=head)


# ====================================================================== leave-one-out
class OcclusionPanel(Panel):
    """Leave-one-out: for each token, the measure of the input without it."""

    NEEDS = {"configurable": False}  # trained weights

    def __init__(self, controller: Controller, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("occlusionPanel")
        self.controller = controller
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        bar = QHBoxLayout()
        bar.addWidget(QLabel(self.tr("Answer (decoders)")))
        self.answer = QLineEdit(" Paris")
        self.answer.setObjectName("occlusionAnswer")
        bar.addWidget(self.answer, 1)
        self.run_button = QPushButton(self.tr("Leave each token out"))
        self.run_button.setObjectName("occlusionRun")
        self.run_button.setToolTip(self.tr("Run the model once without each token of the text (Esc stops)"))
        self.run_button.clicked.connect(self.start)
        bar.addWidget(self.run_button)
        self.progress = QProgressBar()
        self.progress.setObjectName("occlusionProgress")
        self.progress.setVisible(False)
        bar.addWidget(self.progress)
        layout.addLayout(bar)
        self.caption = QLabel()
        self.caption.setObjectName("occlusionCaption")
        self.caption.setWordWrap(True)
        layout.addWidget(self.caption)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setObjectName("occlusionBars")
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setMinimumHeight(160)
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.8, brush=BAR_BRUSH)
        self.plot.addItem(self.bars)
        layout.addWidget(self.plot, 1)
        self._lane = self.lane("occlusion", long=True)  # one run a token: never holds the thread that computes edits
        self._lane.done.connect(self._on_done)
        self._lane.failed.connect(self._on_failed)
        self._lane.partial.connect(self._on_partial)
        self._lane.progressed.connect(self._on_progress)
        self.result = None  # the finished (or cancelled) leave-one-out drawn
        self._so_far = None  # the task's latest partial result
        self.model = None
        self._text, self._ablate = "", frozenset()  # what the running or drawn result was asked for
        self.running = False
        controller.cancelled.connect(lambda: self.cancel() if self.running else None)
        controller.modelChanged.connect(lambda m: self.clear() if self.model not in (None, m) else None)
        self.set_model_connected(selection=False)

    def show_snapshot(self, snapshot) -> None:
        if snapshot is None:
            return
        self.answer.setEnabled(model_info(snapshot.model).predicts_next_token)
        changed = snapshot.result.config.text != self._text or snapshot.ablate != self._ablate
        if self.running and changed:  # a new edit mid-job: its result would be of another input
            self.clear()
            self.caption.setText(self.tr("The text or the switched-off heads changed: leave-one-out was stopped; "
                                         "press the button again."))
        elif self.result is not None and changed:
            self.caption.setText(self.tr("The text changed: press the button again for its leave-one-out."))

    def show_selection(self) -> None:
        pass

    def clear(self) -> None:
        self._lane.cancel()
        self.running = False
        self.result, self._so_far, self.model = None, None, None
        self.bars.setOpts(x=[], height=[])
        self.progress.setVisible(False)
        self.run_button.setEnabled(True)

    def start(self) -> None:
        snapshot = self.controller.snapshot
        if snapshot is None or model_info(snapshot.model).configurable:
            self.caption.setText(self.tr("Leave-one-out needs a pretrained model: choose one in the Model bar."))
            return
        self.clear()
        self.model, self._text, self._ablate = snapshot.model, snapshot.result.config.text, snapshot.ablate
        self.running = True
        self.progress.setRange(0, 100)
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.run_button.setEnabled(False)
        request = RunRequest(text=self._text, ablate=self._ablate, answer=self.answer.text() or None)
        self._lane.start(leave_one_out_task, self.model, request)

    def cancel(self) -> None:
        """Esc: stop; the tokens done so far stay, marked partial."""
        if not self.running:
            return
        self._lane.cancel()
        self._finish()
        if self._so_far is not None:
            self._show(self._so_far)

    def _finish(self) -> None:
        self.running = False
        self.progress.setVisible(False)
        self.run_button.setEnabled(True)

    def _on_progress(self, done: int, total: int) -> None:
        if self.running:
            self.progress.setValue(int(round(100 * done / max(total, 1))))

    def _on_failed(self, error) -> None:
        self._finish()
        self.caption.setText(error_text(error))

    def _on_partial(self, result) -> None:
        if self.running:
            self._so_far = result
            self._draw(result)

    def _on_done(self, result) -> None:
        self._finish()
        self._show(result)

    def _show(self, result) -> None:
        self.result = result
        self._draw(result)

    def _draw(self, result) -> None:
        drop = result.baseline - np.asarray(result.values, dtype=np.float64)  # (n,) how much the measure falls
        shown = np.where(np.isfinite(drop), drop, 0.0)
        self.bars.setOpts(x=np.arange(len(shown)), height=shown, width=0.8, brush=BAR_BRUSH)
        labels = list(result.tokens)
        width = max(self.plot.width() - 60, 100)
        step = max(1, -(-len(labels) * 56 // width))
        self.plot.getAxis("bottom").setTicks([[(i, labels[i][:8]) for i in range(0, len(labels), step)]])
        finite = np.isfinite(drop)
        if result.measure == "p(answer)":
            text = fill(self.tr("p(“%1”) at the last position: %2 with every token. Each bar: how much it falls "
                                "when that token is removed (below 0: it rises)."),
                        result.answer.piece, f"{result.baseline:.4g}")
        else:
            text = self.tr("Each bar: 1 − cosine of the sentence embedding without that token to the whole "
                           "sentence's (mean of the last layer): how much removing it changes the sentence.")
        if self._ablate:
            text += " " + fill(self.tr("Every run with %1 heads switched off."), len(self._ablate))
        if finite.any() and not self.running:
            top = int(np.nanargmax(np.where(finite, drop, -np.inf)))
            text += " " + fill(self.tr("Largest: “%1” (%2)."), labels[top], f"{drop[top]:.3g}")
        if not result.complete and not self.running:
            text += " " + self.tr("PARTIAL: cancelled; the tokens without a bar were not run.")
        self.caption.setText(text)

    def values(self) -> np.ndarray | None:
        return None if self.result is None else self.result.values
