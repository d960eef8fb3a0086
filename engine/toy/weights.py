"""Projection matrices W_Q, W_K, W_V, W_O (d_model × d_model), row-vector convention Q = X·W_Q.

``random``: seeded Gaussian with standard deviation 1/√d_model, so a unit-variance x gives
unit-variance q and k; with the √d_k scaling the scores then have unit spread: a softmax
that is neither flat nor saturated. ``identity``: the seeds' W_Q = W_K = W_V = W_O = I.
"""
from __future__ import annotations

import numpy as np

DTYPE = np.float32
NAMES = ("w_q", "w_k", "w_v", "w_o")


BLOCK_NUMBERS = 1 << 20  # float64 numbers drawn at a time: an 8 MiB temporary, not 2 × 8·d² bytes


def packed_projection_weights(d_model: int, seed: int, kind: str) -> np.ndarray:
    """[W_Q | W_K | W_V | W_O] side by side: (d_model, 4·d_model) float32.

    Drawn a block of rows at a time (same numbers, in the same order, as drawing each whole
    matrix): at d_model 8192 a whole float64 draw and its scaled copy were 1 GiB of temporaries.
    """
    packed = np.empty((d_model, len(NAMES) * d_model), DTYPE)  # (d, 4d)
    if kind == "identity":
        packed[:] = 0
        for index in range(len(NAMES)):
            np.fill_diagonal(packed[:, index * d_model : (index + 1) * d_model], 1)
        return packed
    rng = np.random.default_rng([seed, 0x5EED])  # independent of the embeddings' stream
    std = 1.0 / np.sqrt(d_model)
    rows = max(1, BLOCK_NUMBERS // d_model)
    for index in range(len(NAMES)):
        columns = slice(index * d_model, (index + 1) * d_model)
        for start in range(0, d_model, rows):
            block = rng.standard_normal((min(rows, d_model - start), d_model))  # (rows, d) float64
            block *= std
            packed[start : start + len(block), columns] = block  # cast to float32 on assignment
    return packed


def projection_weights(d_model: int, seed: int, kind: str) -> dict[str, np.ndarray]:
    """The four projection matrices by name, each (d_model, d_model) (views of the packed array)."""
    packed = packed_projection_weights(d_model, seed, kind)
    return {name: packed[:, i * d_model : (i + 1) * d_model] for i, name in enumerate(NAMES)}
