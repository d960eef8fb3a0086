"""Heads as points: classical multidimensional scaling of the head-pair distances.

Clark et al. (2019, §6) place BERT's heads in 2-D by multidimensional scaling of their
Jensen–Shannon distances (engine/corpus/measures.py) so that heads with similar patterns sit
together. Classical (Torgerson) MDS: with D the (K, K) distances and J = I − 11ᵀ/K the centring
matrix, B = −½ J D∘D J; the coordinates are the eigenvectors of B's largest eigenvalues, each
scaled by the square root of its eigenvalue (an eigenvalue ≤ 0 gives a zero axis). Each axis's
sign is chosen so that its largest coordinate in absolute value is positive: the same distances
always draw the same picture.
"""
from __future__ import annotations

import numpy as np


def classical_mds(distance: np.ndarray, dimensions: int = 2) -> np.ndarray:
    """(K, dimensions) float64 coordinates whose Euclidean distances best match ``distance`` (K, K)."""
    d = np.asarray(distance, dtype=np.float64)
    k = d.shape[0]
    if k == 0:
        return np.zeros((0, dimensions))
    squared = d * d
    # J D² J without forming J: subtract row and column means, add back the grand mean
    b = -0.5 * (squared - squared.mean(axis=0, keepdims=True) - squared.mean(axis=1, keepdims=True)
                + squared.mean())
    b = 0.5 * (b + b.T)  # exactly symmetric for eigh
    eigenvalues, eigenvectors = np.linalg.eigh(b)  # ascending
    order = np.argsort(eigenvalues)[::-1][:dimensions]
    scale = np.sqrt(np.maximum(eigenvalues[order], 0.0))  # (dimensions,)
    coordinates = np.zeros((k, dimensions))
    coordinates[:, :len(order)] = eigenvectors[:, order] * scale
    largest = coordinates[np.abs(coordinates).argmax(axis=0), np.arange(dimensions)]  # (dimensions,)
    coordinates *= np.where(largest < 0, -1.0, 1.0)
    return coordinates
