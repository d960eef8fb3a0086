"""Projection matrices W_Q, W_K, W_V, W_O (d_model × d_model), row-vector convention Q = X·W_Q.

``random``: seeded Gaussian with standard deviation 1/√d_model, so a unit-variance x gives
unit-variance q and k; with the √d_k scaling the scores then have unit spread: a softmax
that is neither flat nor saturated. ``identity``: the seeds' W_Q = W_K = W_V = W_O = I.
"""
from __future__ import annotations

import numpy as np

DTYPE = np.float32
NAMES = ("w_q", "w_k", "w_v", "w_o")


def projection_weights(d_model: int, seed: int, kind: str) -> dict[str, np.ndarray]:
    """The four projection matrices by name, each (d_model, d_model)."""
    if kind == "identity":
        eye = np.eye(d_model, dtype=DTYPE)
        return {name: eye.copy() for name in NAMES}
    rng = np.random.default_rng([seed, 0x5EED])  # independent of the embeddings' stream
    std = 1.0 / np.sqrt(d_model)
    return {
        name: (rng.standard_normal((d_model, d_model)) * std).astype(DTYPE) for name in NAMES
    }
