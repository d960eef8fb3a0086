"""Controller: the window's single source of state, and the bridge to the worker thread.

It owns the current :class:`AttentionConfig` (the only copy of the settings: panels read and
write it here), the snapshot on screen, the selected head, the focused query token and the
stage. It sends work to the :class:`Worker` through its lanes, which deliver only the latest
answer, so a stale picture is never shown over a newer one.
"""
from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer, Signal

from engine import AttentionConfig, EngineError, Explanation, explain, warm_up
from engine.core.errors import ModelNotInstalled
from engine.models import DEFAULT_MODEL, model_info

from .i18n import error_text
from .view_state import ViewState
from .jobs.snapshot import VIEW_STAGES, Snapshot, take_snapshot
from .worker import Worker

EXPLAIN_TERMS = 24  # keys listed in the worked arithmetic (every sum still covers all keys)
BUSY_AFTER_MS = 300  # show the busy indicator (and Cancel) for work longer than this
DEBOUNCE_MS = 40  # typing pause before recomputing, when the last computation was slow
FAST_COMPUTE_S = 0.008  # computations faster than this run at once (no debounce)
LEADING_EDGE_S = 0.1  # after a typing pause, an edit computes at once when the last computation took less
HISTORY_LIMIT = 100  # settings changes that can be undone


class Controller(QObject):
    """Holds the state; emits when it changes; talks to the worker."""

    snapshotArrived = Signal(object)  # a new Snapshot: the main heatmap paints it first
    snapshotChanged = Signal(object)  # the same Snapshot, one event-loop turn later: every other panel
    selectionChanged = Signal()  # head, focus or stage changed
    cellChanged = Signal(int, int)  # (query row, key column) the user clicked, for the inspector
    explanationChanged = Signal(object)  # Explanation for (head, focus), or None
    busyChanged = Signal(bool)
    computeFailed = Signal(object)  # the exception of a failed computation (last good state kept)
    configChanged = Signal(object)  # the requested AttentionConfig (e.g. after open/preset)
    timingMeasured = Signal(float)  # seconds the last displayed computation took
    modelChanged = Signal(str)  # the registry name of the model requested
    modelProgress = Signal(float, str)  # loading the pretrained model: fraction, message
    sentenceBChanged = Signal(str)  # the comparison's sentence B, set from outside the compare panel
    historyChanged = Signal(bool, bool)  # (can undo, can redo) a settings change
    byWordsChanged = Signal(bool)  # the pieces / words switch
    ablateChanged = Signal(object)  # the frozenset of switched-off (layer, head) pairs
    cancelled = Signal()  # the user asked to stop (Esc / Cancel): long panel jobs stop too
    adjusted = Signal(str)  # a model switch moved the layer or head into the new model: said once (translated)
    analysisArrived = Signal(object)  # the snapshot on screen again, with the Analysis arrays it came without

    def __init__(self, config: AttentionConfig | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.config = config or AttentionConfig()
        self.snapshot: Snapshot | None = None
        self.explanation: Explanation | None = None
        self.head = 0
        self.focus = 0
        self.stage = "weights"
        self.cell = (0, 0)  # (query, key) of the last clicked heatmap cell
        self.model = DEFAULT_MODEL  # registry name (engine.models): the toy engine or a pretrained model
        self.layer = 0  # layer shown by a pretrained model
        self.sentence_b = ""  # the comparison's sentence B (the compare panel keeps it here)
        self.by_words = False  # show attention rolled up by words (snapshot.words), not by pieces
        self.ablate: frozenset = frozenset()  # (layer, head) pairs switched off in the current model
        self._ablate_by_model: dict[str, frozenset] = {}  # the other models' switched-off heads
        self._follow_end = False  # the next result moves the focus to its last token (set_config)
        self._typed_from_empty = False  # the text box was emptied: what is typed next starts a new text
        self._pending_selection = None  # (head, focus) of apply_view_state, taken when its result arrives
        self._undo: list = []  # settings before each change, oldest first: AttentionConfig or (config, ablate, model)
        self._redo: list = []
        # the focus when each entry was left, aligned with _undo / _redo: undo and redo put it back
        # (undoing a preset moved the focus to another token)
        self._undo_focus: list[int] = []
        self._redo_focus: list[int] = []
        self.last_failure: BaseException | None = None  # why the latest computation failed (None: it did not)
        self._last_seconds = 0.0
        self._requested_at = 0.0
        self._edited_at = 0.0  # when set_config was last called (a typing pause is DEBOUNCE_MS without one)
        self._awaiting = False  # a compute request has not been answered yet
        self._deferred_pending = 0  # panel updates scheduled for later event-loop turns
        self._deferred_queue: list = []
        self._deferred_timer = QTimer(self, singleShot=True, interval=0)
        self._deferred_timer.timeout.connect(self._run_next_deferred)
        self.worker = Worker(self)
        self._compute = self.worker.lane("compute", self, first=True)
        self._compute.done.connect(self._on_compute_done)
        self._compute.failed.connect(self._on_compute_failed)
        self._explain = self.worker.lane("explain", self)
        self._explain.done.connect(self._on_explained)
        self._explain.failed.connect(lambda _error: self.explanationChanged.emit(None))
        self._warmup = self.worker.lane("warmup", self)
        # the Analysis arrays of a snapshot that came without them (a decoder's), asked for while a view reads them
        self._analysis = self.worker.lane("analysis", self)
        self._analysis.done.connect(self._on_analysis_done)
        self._analysis.failed.connect(lambda _error: setattr(self, "_analysing", None))
        self._analysing: Snapshot | None = None  # the snapshot whose arrays the worker computes
        self._earlier = None  # app.jobs.analysis_job.Analysed: the arrays of the snapshot just replaced, for one turn
        self.analysis_wanted = lambda: False  # the window's: a view reading the Analysis arrays is shown
        self._debounce = QTimer(self, singleShot=True)
        self._debounce.timeout.connect(self._submit)
        self._busy_timer = QTimer(self, singleShot=True, interval=BUSY_AFTER_MS)
        self._busy_timer.timeout.connect(lambda: self.busyChanged.emit(True))
        self._warmup.submit(warm_up)

    # ----------------------------------------------------------------- requests
    def set_config(self, config: AttentionConfig, *, immediate: bool = False, _history: bool = True) -> None:
        """Ask for ``config`` to be computed; later requests supersede it. A change can be undone."""
        if isinstance(config, tuple):  # an undo entry that also switched heads
            config, ablate, model = config
            if model == self.model:
                self.ablate = ablate
                self.ablateChanged.emit(self.ablate)
            else:  # the heads of another model: back in that model's set, never applied to this one
                self._ablate_by_model[model] = ablate
        if _history and config != self.config:
            self._undo.append(self.config)
            self._remember_focus()
            self.historyChanged.emit(True, False)
        shown = self.snapshot.result if self.snapshot is not None else None
        # typing at the end with the last token focused: the focus follows the end of the text (a
        # decoder's next-token bars predict what comes after it); any other change keeps the focus.
        # It is judged against the text last asked for, not the one on screen — typing from an
        # empty box (which has no result) or faster than the results arrive still follows the end
        previous = self.config.text
        at_end = self._follow_end or self._typed_from_empty or shown is None or (
            self.focus >= shown.n - 1 and shown.config.text == previous)
        grows = config.text.startswith(previous) or self._typed_from_empty
        self._follow_end = at_end and grows and config.text != previous
        self._typed_from_empty = False
        self.config = config
        self.configChanged.emit(config)
        self._compute.cancel()  # an answer for older settings must not arrive during the debounce
        now = time.perf_counter()
        # leading edge: the first edit after a typing pause computes at once when the last computation
        # was short (text change → heatmap in two frames at 128 tokens); the edits of a burst
        # that follow it wait for the pause (trailing edge), as before
        paused = now - self._edited_at > DEBOUNCE_MS / 1000 and self._last_seconds < LEADING_EDGE_S \
            and not self._debounce.isActive()
        self._edited_at = now
        if immediate or self._last_seconds < FAST_COMPUTE_S or paused:
            self._debounce.stop()
            self._submit()
        else:
            self._debounce.start(DEBOUNCE_MS)

    def refuse(self, error: BaseException, text: str | None = None) -> None:
        """What is typed cannot be computed (``error``: an empty text, heads that do not divide):
        the result on screen no longer matches the settings, so it is marked out of date
        (a stale picture must not pass for the current one), and an emptied text box makes the next
        text follow its end."""
        if text is not None and not text.strip():
            self._typed_from_empty = True
        self.last_failure = error
        self.computeFailed.emit(error)

    def update_config(self, **changes) -> AttentionConfig:
        """Validate ``changes`` against the current config; raises EngineError, changing nothing."""
        config = self.config.replace(**changes)
        self.set_config(config)
        return config

    def undo(self) -> None:
        """Go back to the settings before the last change."""
        self._step_history(self._undo, self._redo)

    def redo(self) -> None:
        """Apply again the settings change the last undo took back."""
        self._step_history(self._redo, self._undo)

    def set_ablation(self, ablate) -> None:
        """Switch off exactly the (layer, head) pairs of ``ablate`` (recomputes; can be undone)."""
        ablate = frozenset((int(l), int(h)) for l, h in ablate)
        if ablate == self.ablate:
            return
        self._undo.append((self.config, self.ablate, self.model))
        self._remember_focus()
        self.historyChanged.emit(True, False)
        self.ablate = ablate
        self.ablateChanged.emit(ablate)
        self.set_config(self.config, immediate=True, _history=False)

    def toggle_head(self, layer: int, head: int) -> None:
        """Switch head (layer, head) off, or back on."""
        self.set_ablation(self.ablate ^ {(layer, head)})

    def _remember_focus(self) -> None:
        """A new change was recorded in _undo: its focus too; the oldest beyond the limit go, redo is cleared."""
        self._undo_focus[len(self._undo) - 1:] = [self.focus]
        del self._undo[:-HISTORY_LIMIT]
        del self._undo_focus[:-HISTORY_LIMIT]
        self._redo.clear()
        self._redo_focus.clear()

    def _step_history(self, source: list, target: list) -> None:
        if source:
            entry = source[-1]
            source_focus, target_focus = (self._undo_focus, self._redo_focus) if source is self._undo else \
                (self._redo_focus, self._undo_focus)
            if isinstance(entry, tuple):
                model = entry[2]
                target.append((self.config, self.ablate if model == self.model
                               else self._ablate_by_model.get(model, frozenset()), model))
            else:
                target.append(self.config)
            target_focus[len(target) - 1:] = [self.focus]
            focus = source_focus.pop() if len(source_focus) == len(source) else None
            self.set_config(source.pop(), immediate=True, _history=False)
            if focus is not None:  # the focus of that state, once its result arrives
                self._follow_end = False
                self._pending_selection = (self.head, focus)
            self.historyChanged.emit(bool(self._undo), bool(self._redo))

    def adopt_history(self, other: "Controller") -> None:
        """Take ``other``'s undo and redo stacks (the language switch rebuilds the window)."""
        self._undo[:], self._redo[:] = other._undo, other._redo
        self._ablate_by_model.update(other._ablate_by_model)  # the other models' switched-off heads too
        self._undo_focus[:], self._redo_focus[:] = other._undo_focus, other._redo_focus
        self.historyChanged.emit(bool(self._undo), bool(self._redo))

    # ----------------------------------------------------------------- the view state
    def view_state(self) -> ViewState:
        """What the user is looking at now (for sessions, the language switch, start-up restore)."""
        return ViewState(self.config, self.head, self.focus, self.stage, self.model, self.layer, self.sentence_b,
                         self.by_words, tuple(sorted(self.ablate)))

    def apply_view_state(self, state: ViewState) -> None:
        """Show ``state``: settings, selection (kept within the result when it arrives), model, sentence B."""
        model_info(state.model)  # EngineError for a model the registry does not know
        if state.stage not in VIEW_STAGES or not all(isinstance(v, int) and v >= 0 for v in (state.head, state.focus,
                                                                                        state.layer)):
            raise EngineError("the view is invalid: head, focus and layer must be whole numbers ≥ 0 and the stage "
                              "one of {stages}", stages=", ".join(VIEW_STAGES))
        focus_before, recorded = self.focus, state.config != self.config  # set_config records a change
        # the state's head and focus belong to its own result: until that arrives they are kept aside
        # and the selection stays valid for the result on screen (whose panels may still update)
        self._pending_selection = (state.head, state.focus)
        self.head, self.focus = self._within_shown(state.head, state.focus)
        self.stage = state.stage
        self._switch_ablation(state.model)
        self.model, self.layer = state.model, state.layer
        if bool(state.by_words) != self.by_words:
            self.by_words = bool(state.by_words)
            self.byWordsChanged.emit(self.by_words)
        if frozenset(state.ablate) != self.ablate:
            self.ablate = frozenset(state.ablate)
            self.ablateChanged.emit(self.ablate)
        if state.sentence_b != self.sentence_b:
            self.sentence_b = state.sentence_b
            self.sentenceBChanged.emit(state.sentence_b)
        self.modelChanged.emit(state.model)
        self.set_config(state.config, immediate=True)
        if recorded and self._undo and len(self._undo_focus) == len(self._undo):
            self._undo_focus[-1] = focus_before  # undo goes back to the focus before this state, not its own
        self._follow_end = False  # the state's own focus

    def _within_shown(self, head: int, focus: int) -> tuple[int, int]:
        """(head, focus) limited to the result on screen."""
        if self.snapshot is None:
            return head, focus
        result = self.snapshot.result
        return min(head, result.weights.shape[0] - 1), min(focus, result.n - 1)

    def recompute(self) -> None:
        self.set_config(self.config, immediate=True)

    def cancel(self) -> None:
        """Stop the running/pending computation. It never edits the user's text or settings:
        the pictures stay on the last result, the settings stay as typed (F5 computes them)."""
        self._debounce.stop()
        self._compute.cancel()  # the running job's result will be dropped on arrival
        self._busy_timer.stop()
        self._awaiting = False
        self.busyChanged.emit(False)
        self.cancelled.emit()

    def set_model(self, model: str, layer: int | None = None) -> None:
        """Switch to a model of the registry (a pretrained one loads in the worker on first use)."""
        model_info(model)  # EngineError for a name the registry does not know
        changed = model != self.model or (layer is not None and layer != self.layer)
        self._switch_ablation(model)
        self.model = model
        if layer is not None:
            self.layer = layer
        self.modelChanged.emit(model)
        if changed:
            self.recompute()
            if self.switching_model():  # loading or running another model takes seconds: busy at once
                self._busy_timer.stop()
                self.busyChanged.emit(True)

    def switching_model(self) -> bool:
        """True while the picture on screen is of another model than the one asked for."""
        return self.snapshot is not None and self.snapshot.model != self.model

    def _switch_ablation(self, model: str) -> None:
        """Switched-off heads belong to a model: leaving a model keeps its set aside,
        coming back restores it, and a model never computes with another's."""
        if model == self.model:
            return
        self._ablate_by_model[self.model] = self.ablate
        ablate = self._ablate_by_model.pop(model, frozenset())
        if ablate != self.ablate:
            self.ablate = ablate
            self.ablateChanged.emit(ablate)

    def set_by_words(self, on: bool) -> None:
        """Show attention by words (True) or by pieces; the worker rolls it up (a recompute)."""
        on = bool(on)
        if on != self.by_words:
            self.by_words = on
            self.byWordsChanged.emit(on)
            self.recompute()

    def report_progress(self, fraction: float, message: str) -> None:
        """Called in the worker thread while the model loads: a queued signal to the GUI."""
        self.modelProgress.emit(fraction, message)

    def _submit(self) -> None:
        self._requested_at = time.perf_counter()
        self._awaiting = True
        if model_info(self.model).configurable:
            if self.by_words or self.ablate:
                self._compute.submit(take_snapshot, self.config, self.by_words, self.ablate)
            else:  # the plain call (tests stub it with one argument)
                self._compute.submit(take_snapshot, self.config)
        else:  # a pretrained model: its declared capabilities choose the view (app/pretrained.py)
            from .pretrained import take_pretrained_snapshot

            self._compute.submit(take_pretrained_snapshot, self.model, self.config.text, self.layer,
                                 self.report_progress, self.by_words, self.ablate)
        if not self._busy_timer.isActive():
            self._busy_timer.start()

    def is_idle(self) -> bool:
        """True when nothing is pending and the latest request is on screen (or failed)."""
        return (not self._debounce.isActive() and not self._awaiting and not self._deferred_pending
                and self._analysing is None)

    def deferred(self, handler):
        """Wrap a panel's slot so it runs in an event-loop turn of its own.

        Every panel updating in the same turn would make one long stall (and one long paint); one
        turn each lets Qt paint and handle input in between. A call for a snapshot that is no
        longer on screen is skipped.
        """
        def schedule(*args):
            self._deferred_pending += 1
            self._deferred_queue.append((handler, args))
            if not self._deferred_timer.isActive():
                self._deferred_timer.start()

        return schedule

    def _run_next_deferred(self) -> None:
        """One queued panel update per event-loop turn (zero-timers due together would otherwise
        all run in one turn, with no paint or input in between)."""
        if self._deferred_queue:
            handler, args = self._deferred_queue.pop(0)
            self._deferred_pending -= 1
            if not args or args[0] is self.snapshot or not hasattr(args[0], "result"):
                handler(*args)
        if self._deferred_queue:
            self._deferred_timer.start()

    def shutdown(self) -> None:
        self._debounce.stop()
        self._busy_timer.stop()
        self.worker.shutdown(0.1)  # a running job is not waited for: the thread is a daemon, its answer dropped

    # ----------------------------------------------------------------- results
    def _on_compute_done(self, value) -> None:
        self._busy_timer.stop()
        self.busyChanged.emit(False)
        self._last_seconds = seconds = self._compute.seconds
        self.last_failure = None
        previous, self.snapshot = self.snapshot, value
        if previous is not None and previous.analysis is not None:  # another layer of the same run: its arrays
            from .jobs.analysis_job import Analysed

            self._earlier = Analysed.of(previous)
        n, heads = value.result.n, value.result.weights.shape[0]
        if self._pending_selection is not None:
            self.head, self.focus = self._pending_selection
            self._pending_selection = None
        elif not self._follow_end and previous is not None and previous.model != value.model:
            self.focus = same_token(previous.result.token_texts, self.focus, value.result.token_texts, self.focus)
        asked = (self.layer, self.head)  # what was asked for, to say so when it is not in this model
        if value.model == self.model and not model_info(value.model).configurable:
            self.layer = value.layer  # the worker keeps the layer within the model (a switch from a deeper one)
        if model_info(value.model).configurable and (previous is None or previous.model == value.model):
            asked = (self.layer, min(self.head, heads - 1))  # the toy's own head count typed lower: nothing to say
        self.head = min(self.head, heads - 1)
        self.focus = n - 1 if self._follow_end else min(self.focus, n - 1)
        self.cell = (min(self.cell[0], n - 1), min(self.cell[1], n - 1))
        self.snapshotArrived.emit(value)
        self.timingMeasured.emit(seconds)
        if (self.layer, self.head) != asked:
            self.adjusted.emit(self._adjusted_text(value, asked))
        # the main heatmap repaints before the other panels update (latency of the picture
        # the user watches), and no single event-loop turn does all the work
        generation = self._compute.generation
        QTimer.singleShot(0, self, lambda: self._announce(generation, value))

    def _announce(self, generation: int, snapshot) -> None:
        if generation == self._compute.generation and snapshot is self.snapshot:
            # asked for only now: its answer would otherwise reach the worked arithmetic (a page
            # layout) before the main heatmap's paint, which Qt posts at low priority
            self._request_explanation()
            self.snapshotChanged.emit(snapshot)
            self._awaiting = False
            self.request_analysis()
            self._earlier = None  # not kept beside the snapshot on screen (a long text's arrays are large)

    # ----------------------------------------------------------------- the Analysis arrays
    def request_analysis(self) -> None:
        """Ask the worker for the Analysis arrays (value norms, rollouts, head table, the switched-off
        heads' cosines) of the snapshot on screen, when it came without them and a view that reads
        them is shown: the heatmap's value-weighted stage or a dock of the Analysis place. One job
        (app.jobs.analysis_job.with_analysis); a newer snapshot drops its answer."""
        snapshot = self.snapshot
        if snapshot is None or snapshot.analysis is not None or self._analysing is snapshot or self._awaiting:
            return
        if self.stage != "value_norms" and not self.analysis_wanted():
            return
        from .jobs.analysis_job import with_analysis

        self._analysing = snapshot
        self._analysis.submit(with_analysis, snapshot, self._earlier)

    def analysis_pending(self) -> bool:
        """True while the worker computes the Analysis arrays of the snapshot on screen."""
        return self._analysing is not None and self._analysing is self.snapshot

    def _on_analysis_done(self, value) -> None:
        asked, self._analysing = self._analysing, None
        if asked is None or asked is not self.snapshot or value.result is not asked.result:
            self.request_analysis()  # made for a snapshot no longer on screen: the one on screen's, if wanted
            return
        self.snapshot = value
        self.analysisArrived.emit(value)
        self.snapshotChanged.emit(value)

    def _on_explained(self, value) -> None:
        self.explanation = value
        self.explanationChanged.emit(value)

    def _on_compute_failed(self, error) -> None:
        self.last_failure = error
        if isinstance(error, ModelNotInstalled) and not model_info(self.model).configurable \
                and (self.snapshot is None or model_info(self.snapshot.model).configurable):
            # the model is not installed: say how to install it and keep working with the toy engine
            self.model = DEFAULT_MODEL
            self.modelChanged.emit(DEFAULT_MODEL)
            self.computeFailed.emit(error)
            self.recompute()
            return
        self._busy_timer.stop()
        self._awaiting = False
        self.busyChanged.emit(False)
        self.computeFailed.emit(error)

    def _adjusted_text(self, snapshot, asked: tuple[int, int]) -> str:
        """One line: the layer or head asked for is not in this model, so the last one is shown."""
        from PySide6.QtCore import QCoreApplication

        from .text import fill

        title = QCoreApplication.translate("Model", model_info(snapshot.model).title)
        parts = []
        if self.layer != asked[0]:
            parts.append(fill(self.tr("layer %1 → %2 (it has %3 layers)"), asked[0], self.layer, self.layer + 1))
        if self.head != asked[1]:
            parts.append(fill(self.tr("head %1 → %2 (it has %3 heads)"), asked[1], self.head,
                              snapshot.result.weights.shape[0]))
        return fill(self.tr("%1: %2"), title, "; ".join(parts))

    @property
    def last_error(self) -> str:
        """Why the latest computation failed, in the interface language ("" when it did not)."""
        return "" if self.last_failure is None else error_text(self.last_failure)

    # ----------------------------------------------------------------- selection
    def select(self, *, head: int | None = None, focus: int | None = None, stage: str | None = None) -> None:
        changed = False
        if self.snapshot is not None:
            result = self.snapshot.result
            if head is not None and 0 <= head < result.weights.shape[0] and head != self.head:
                self.head, changed = head, True
            if focus is not None and 0 <= focus < result.n and focus != self.focus:
                self.focus, changed = focus, True
                self._follow_end = False  # chosen while a computation runs: kept when it arrives
            if head is not None or focus is not None:
                self._pending_selection = None  # the user's choice wins over a state still arriving
        if stage is not None and stage in VIEW_STAGES and stage != self.stage:
            self.stage, changed = stage, True
        if changed:
            self.selectionChanged.emit()
            if head is not None or focus is not None:
                self._request_explanation()
            if stage == "value_norms":
                self.request_analysis()

    def inspect(self, query: int, key: int) -> None:
        """Select heatmap cell (query, key): focuses the query and tells the inspector."""
        if self.snapshot is None or not (0 <= query < self.snapshot.result.n and 0 <= key < self.snapshot.result.n):
            return
        self.cell = (query, key)
        self.select(focus=query)
        self.cellChanged.emit(query, key)

    def _request_explanation(self) -> None:
        if self.snapshot is None:
            return
        # the panel lists at most 24 keys: build only those terms (a 2,048-key row is ~80 ms of Python)
        self._explain.submit(explain, self.snapshot.result, self.head, self.focus, EXPLAIN_TERMS)


def _plain(piece: str) -> str:
    """A token's text without its tokenizer's marks (▁ and Ġ word starts, ## continuations, spaces, case)."""
    return piece.replace("▁", " ").replace("Ġ", " ").removeprefix("##").strip().lower()


def same_token(before: list[str], focus: int, after: list[str], fallback: int) -> int:
    """The position in ``after`` (another model's tokens of the same text) of the token focused in
    ``before``: the same occurrence of the same word (the second "the" stays the second), or
    ``fallback`` when the new tokenizer has no such token."""
    if not 0 <= focus < len(before) or not _plain(before[focus]):
        return fallback
    word = _plain(before[focus])
    occurrence = sum(_plain(t) == word for t in before[:focus])
    matches = [i for i, t in enumerate(after) if _plain(t) == word]
    return matches[occurrence] if occurrence < len(matches) else fallback
