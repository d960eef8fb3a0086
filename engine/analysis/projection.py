"""Token vectors in the plane: one 2-D PCA of the static and the contextual vectors together.

Seed 000: "Embedding 后 … 这还只是：初始静态向量" and "得到新的 token 表示". Fitting a single PCA
on both sets (stacked, 2n × d) puts them in the same plane, so the arrow static → contextual
shows where attention moved each token. Computed in float64: centre the stacked matrix, SVD,
coordinates = centred rows · first two right singular vectors.

Signs are made deterministic: each component's entry of largest |loading| is positive (the first
such entry on ties). Degenerate cases are handled: with fewer than two non-zero singular values
(n = 1 with identical points, d = 1, or all points on a line) the missing component is all zeros,
its coordinates are 0 and its explained-variance ratio is 0.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.trace import freeze_arrays

COMPONENTS = 2
RANK_TOLERANCE = 1e-10  # singular values below this × the largest (or all, when it is ~0) count as 0


@dataclass(frozen=True, eq=False)
class Projection:
    """Both sets in the plane. All arrays are read-only."""

    static: np.ndarray  # (n, 2) coordinates of the static vectors
    contextual: np.ndarray  # (n, 2) coordinates of the contextual vectors
    explained: np.ndarray  # (2,) explained-variance ratio of PC1, PC2 (of the total variance)
    components: np.ndarray  # (2, d) unit principal axes (zero rows when rank < 2)
    mean: np.ndarray  # (d,) mean of the 2n stacked vectors
    rank: int  # non-zero components found, 0, 1 or 2

    def __post_init__(self) -> None:
        freeze_arrays(self)


def pca_2d(static: np.ndarray, contextual: np.ndarray) -> Projection:
    """2-D PCA fitted on ``static`` (n, d) and ``contextual`` (n, d) stacked; coordinates of each."""
    static = np.asarray(static, dtype=np.float64)
    contextual = np.asarray(contextual, dtype=np.float64)
    if static.ndim != 2 or static.shape != contextual.shape:
        raise ValueError(f"static and contextual must both be (n, d); got {static.shape} and {contextual.shape}")
    n, d = static.shape
    stacked = np.concatenate([static, contextual])  # (2n, d)
    mean = stacked.mean(axis=0) if n else np.zeros(d)  # (d,)
    centred = stacked - mean  # (2n, d)
    components = np.zeros((COMPONENTS, d))  # (2, d)
    explained = np.zeros(COMPONENTS)  # (2,)
    rank = 0
    if centred.size:
        _, singular, vt = np.linalg.svd(centred, full_matrices=False)  # singular (r,), vt (r, d)
        total = float(np.sum(singular**2))
        largest = float(singular[0]) if singular.size else 0.0
        scale = max(largest, float(np.abs(centred).max()))
        keep = singular > RANK_TOLERANCE * scale if scale > 0 else np.zeros_like(singular, dtype=bool)
        rank = int(min(COMPONENTS, keep.sum()))
        for c in range(rank):
            axis = vt[c]  # (d,)
            if axis[np.argmax(np.abs(axis))] < 0:
                axis = -axis
            components[c] = axis
            explained[c] = singular[c] ** 2 / total
    coordinates = centred @ components.T  # (2n, 2)
    return Projection(
        static=coordinates[:n],
        contextual=coordinates[n:],
        explained=explained,
        components=components,
        mean=mean,
        rank=rank,
    )
