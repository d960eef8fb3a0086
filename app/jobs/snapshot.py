"""What the worker hands the window: the engine's result plus display-ready summaries.

Everything here is computed in the worker thread (pure NumPy), so the GUI thread only sets
images: colour levels per head and stage, and downsampled thumbnails for the head grid.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from engine import STAGES, AttentionConfig, AttentionResult, compute
from engine.models import DEFAULT_MODEL
from engine.models.contract import ModelFacts

if TYPE_CHECKING:
    from .analysis import Analysis
    from .decoder_trace import ModelTrace  # an encoder's trace, or a decoder's view of its trace
    from .word_view import WordView

THUMBNAIL_SIZE = 96  # the head grid shows each head at most this many cells across
DISPLAY_SIZE = 1024  # matrices larger than this are drawn from a block average (no screen shows more)
VECTOR_DISPLAY_ROWS = 256  # token × dimension heatmaps: rows drawn at most
OVERVIEW_SIZE = 32  # the all-layers × all-heads overview: at most this many cells across
# the heatmap's stages: the engine's three plus value-weighted attention (app/jobs/analysis.py)
VIEW_STAGES = STAGES + ("value_norms",)


@dataclass(frozen=True, eq=False)
class Snapshot:
    """One computed state of the window: the engine result and how to colour it."""

    result: AttentionResult
    score_bound: np.ndarray  # (heads,) max |q·k| per head: symmetric colour levels
    scaled_bound: np.ndarray  # (heads,) max |finite scaled score| per head
    weight_max: np.ndarray  # (heads,) max weight per head
    thumbnails: np.ndarray  # (heads, t, t) weights, block-averaged when n > THUMBNAIL_SIZE
    vector_bound: float  # max |value| over x, output and output − x: one shared scale
    bert: "ModelTrace | None" = None  # an encoder's whole trace, or a decoder's DecoderView (None for the toy engine)
    layer: int = 0  # which BERT layer ``result`` shows
    overview: np.ndarray | None = None  # (layers, heads, t, t) MiniLM weights thumbnails, block-averaged
    display: dict | None = None  # name → block-averaged copy of a large matrix, for drawing only
    model: str = DEFAULT_MODEL  # registry name of the model that made it
    words: "WordView | None" = None  # the attention by words when the window shows it, else None
    analysis: "Analysis | None" = None  # the Analysis place's arrays of the run (value norms, rollouts, head table)
    value_thumbnails: np.ndarray | None = None  # (heads, t, t) value-weighted attention of the layer shown, block-averaged
    switched_off: frozenset = frozenset()  # the (layer, head) pairs off in a run without analysis
    facts: ModelFacts | None = None  # what the pretrained model that made it declares (None: the toy)

    @property
    def ablate(self) -> frozenset:
        """The (layer, head) pairs switched off in this run."""
        return self.switched_off if self.analysis is None else self.analysis.ablate

    def stage_matrix(self, stage: str) -> np.ndarray:
        """(heads, n, n) of a heatmap stage (VIEW_STAGES) for the layer shown."""
        if stage == "value_norms":
            return self.analysis.value_norms[self.layer]
        return getattr(self.result, stage)

    def display_of(self, name: str, head: int | None = None):
        """What to draw for array ``name`` (and head): a smaller block average when the matrix is
        larger than the screen can show, else None (draw the matrix itself)."""
        if not self.display or name not in self.display:
            return None
        value = self.display[name]
        return value if head is None else value[head]

    def levels(self, stage: str, head: int) -> tuple[float, float]:
        if stage == "weights":
            return (0.0, max(float(self.weight_max[head]), 1e-6))
        if stage == "value_norms":
            return (0.0, max(float(self.analysis.value_norms[self.layer, head].max()), 1e-6))
        bound = self.score_bound[head] if stage == "scores" else self.scaled_bound[head]
        bound = max(float(bound), 1e-6)
        return (-bound, bound)


def block_mean(array: np.ndarray, max_rows: int, max_columns: int) -> np.ndarray:
    """Shrink the last two axes to at most (max_rows, max_columns) by averaging blocks of cells.

    Exact at the edges (a last, smaller block is averaged over its own cells); the input itself
    is returned when it is small enough.
    """
    rows, columns = array.shape[-2:]
    row_factor, column_factor = -(-rows // max_rows), -(-columns // max_columns)
    out = array
    if column_factor > 1:
        out = _shrink(out, column_factor, -1)  # (..., rows, ≤max_columns)
    if row_factor > 1:
        out = _shrink(out, row_factor, -2)  # (..., ≤max_rows, …)
    return out.astype(np.float32, copy=False)


def _shrink(array: np.ndarray, factor: int, axis: int) -> np.ndarray:
    """Means of consecutive blocks of ``factor`` cells along ``axis`` (-1 or -2), the last block
    over its own cells. Summed by ``factor`` strided adds, left to right (the order of
    np.add.reduceat, which took 8× longer on (8, 128, 128) along the last axis)."""
    length = array.shape[axis]
    full = length // factor * factor

    def along(part: slice):
        return array[..., part] if axis == -1 else array[..., part, :]

    sums = np.array(along(slice(0, full, factor)), dtype=np.result_type(array, np.float32))
    for offset in range(1, factor):
        sums += along(slice(offset, full, factor))
    sums /= np.float32(factor)
    if full == length:
        return sums
    tail = along(slice(full, length)).sum(axis=axis, keepdims=True, dtype=sums.dtype)
    tail /= np.float32(length - full)
    return np.concatenate([sums, tail], axis=axis)


def block_average(matrices: np.ndarray, size: int) -> np.ndarray:
    """Shrink (heads, n, n) to at most (heads, size, size) by averaging blocks of cells."""
    return block_mean(matrices, size, size)


def take_snapshot(config: AttentionConfig, by_words: bool = False, ablate: frozenset = frozenset()) -> Snapshot:
    """Compute ``config`` (heads of ``ablate`` switched off), the display summaries and the analysis
    (runs in the worker); ``by_words``: the attention rolled up by words too."""
    from engine.core.parallel import blas_single_threaded

    from engine.analysis.request import RunRequest
    from engine.analysis.runs import Runs
    from engine.models.toy import ToyModel

    from .analysis import analyse

    model = ToyModel(config)
    request = RunRequest(text=config.text, ablate=frozenset(ablate), by_words=by_words).checked(model.facts)
    # BLAS on this thread alone: its second thread spins after every one of the toy's small matmuls, on
    # the core the window paints with (and with another busy program, 128 tokens took 0.4 s, not 0.03)
    with blas_single_threaded():
        result = compute(config, ablate=request.ablate) if request.ablate else compute(config)
        baseline = compute(config) if request.ablate else result
        words = None
        if by_words:
            from .word_view import word_view

            words = word_view(config.text, result.tokens, result.weights, shrink=block_average,
                              thumbnail_size=THUMBNAIL_SIZE, overview_size=OVERVIEW_SIZE)
        analysis = analyse(model, Runs(model, request, trace=result, plain=baseline))
        return summarise(result, words=words, analysis=analysis)


def summarise(result: AttentionResult, bert=None, layer: int = 0, overview=None, model: str = DEFAULT_MODEL,
              words=None, analysis=None, ablate: frozenset = frozenset(), facts=None) -> Snapshot:
    heads = result.weights.shape[0]
    flat_scores = result.scores.reshape(heads, -1)
    score_bound = np.maximum(flat_scores.max(axis=1), -flat_scores.min(axis=1))  # (heads,) max |q·k|
    if result.mask is None:
        flat_scaled = result.scaled.reshape(heads, -1)
        scaled_bound = np.maximum(flat_scaled.max(axis=1), -flat_scaled.min(axis=1))
    else:
        visible = ~result.mask  # (n, n)
        scaled_bound = np.array([np.abs(result.scaled[h][visible]).max() for h in range(heads)])
    weight_max = result.weights.reshape(heads, -1).max(axis=1)  # (heads,)
    vector_bound = float(max(np.abs(result.x).max(), np.abs(result.output).max(), np.abs(result.diff).max()))
    display = {}
    if result.n > DISPLAY_SIZE:  # the GUI thread would otherwise average 4M cells on every paint
        display["weights"] = block_mean(result.weights, DISPLAY_SIZE, DISPLAY_SIZE)  # (heads, ≤1024, ≤1024)
        thumbnails = block_average(display["weights"], THUMBNAIL_SIZE)
    else:
        thumbnails = block_average(result.weights, THUMBNAIL_SIZE)
    if result.n > VECTOR_DISPLAY_ROWS:
        for name in ("x", "output", "diff"):
            display[name] = block_mean(getattr(result, name), VECTOR_DISPLAY_ROWS, DISPLAY_SIZE)
    return Snapshot(
        result=result,
        score_bound=score_bound.astype(np.float32),
        scaled_bound=scaled_bound.astype(np.float32),
        weight_max=weight_max.astype(np.float32),
        thumbnails=thumbnails,
        vector_bound=vector_bound or 1.0,
        bert=bert,
        layer=layer,
        overview=overview,
        display=display,
        model=model,
        words=words,
        analysis=analysis,
        value_thumbnails=None if analysis is None or analysis.value_norms is None
        else block_average(analysis.value_norms[layer], THUMBNAIL_SIZE),
        switched_off=frozenset(ablate),
        facts=facts,
    )
