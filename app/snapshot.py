"""What the worker hands the window: the engine's result plus display-ready summaries.

Everything here is computed in the worker thread (pure NumPy), so the GUI thread only sets
images: colour levels per head and stage, and downsampled thumbnails for the head grid.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine import AttentionConfig, AttentionResult, compute

THUMBNAIL_SIZE = 96  # the head grid shows each head at most this many cells across
OVERVIEW_SIZE = 32  # the all-layers × all-heads overview: at most this many cells across


@dataclass(frozen=True, eq=False)
class Snapshot:
    """One computed state of the window: the engine result and how to colour it."""

    result: AttentionResult
    score_bound: np.ndarray  # (heads,) max |q·k| per head: symmetric colour levels
    scaled_bound: np.ndarray  # (heads,) max |finite scaled score| per head
    weight_max: np.ndarray  # (heads,) max weight per head
    thumbnails: np.ndarray  # (heads, t, t) weights, block-averaged when n > THUMBNAIL_SIZE
    vector_bound: float  # max |value| over x, output and output − x: one shared scale
    bert: object = None  # the whole engine.bert.BertTrace in MiniLM mode (None for the toy engine)
    layer: int = 0  # which BERT layer ``result`` shows
    overview: np.ndarray | None = None  # (layers, heads, t, t) MiniLM weights thumbnails, block-averaged

    @property
    def model(self) -> str:
        return "toy" if self.bert is None else "minilm"

    def levels(self, stage: str, head: int) -> tuple[float, float]:
        if stage == "weights":
            return (0.0, max(float(self.weight_max[head]), 1e-6))
        bound = self.score_bound[head] if stage == "scores" else self.scaled_bound[head]
        bound = max(float(bound), 1e-6)
        return (-bound, bound)


def block_average(matrices: np.ndarray, size: int) -> np.ndarray:
    """Shrink (heads, n, n) to at most (heads, size, size) by averaging blocks of cells."""
    heads, rows, columns = matrices.shape
    if rows <= size and columns <= size:
        return matrices
    factor = int(np.ceil(max(rows, columns) / size))
    padded_rows, padded_columns = -(-rows // factor) * factor, -(-columns // factor) * factor
    padded = np.zeros((heads, padded_rows, padded_columns), dtype=np.float32)
    padded[:, :rows, :columns] = matrices
    blocks = padded.reshape(heads, padded_rows // factor, factor, padded_columns // factor, factor)
    return blocks.mean(axis=(2, 4))  # (heads, ≤size, ≤size)


def take_snapshot(config: AttentionConfig) -> Snapshot:
    """Compute ``config`` and the display summaries (runs in the worker)."""
    result = compute(config)
    return summarise(result)


def summarise(result: AttentionResult, bert=None, layer: int = 0, overview=None) -> Snapshot:
    heads = result.weights.shape[0]
    score_bound = np.abs(result.scores).reshape(heads, -1).max(axis=1)  # (heads,)
    if result.mask is None:
        scaled_bound = np.abs(result.scaled).reshape(heads, -1).max(axis=1)
    else:
        visible = ~result.mask  # (n, n)
        scaled_bound = np.array([np.abs(result.scaled[h][visible]).max() for h in range(heads)])
    weight_max = result.weights.reshape(heads, -1).max(axis=1)  # (heads,)
    vector_bound = float(max(np.abs(result.x).max(), np.abs(result.output).max(), np.abs(result.diff).max()))
    thumbnails = block_average(result.weights, THUMBNAIL_SIZE)
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
    )
