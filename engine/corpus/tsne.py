"""Exact t-SNE (van der Maaten & Hinton 2008, "Visualizing Data using t-SNE") in NumPy.

For the joint query–key map's second view. A map holds a few hundred points, so the exact O(n²)
method is cheap and needs no dependency (scikit-learn and openTSNE are not dependencies here).

- **P**: for each point i, a Gaussian over the others, p_{j|i} ∝ exp(−β_i‖x_i − x_j‖²), with β_i
  found by bisection so that the distribution's perplexity 2^H (H in bits) is the chosen one;
  then symmetrised, p_ij = (p_{j|i} + p_{i|j}) / 2n.
- **Q**: Student-t with one degree of freedom in the plane, q_ij ∝ (1 + ‖y_i − y_j‖²)⁻¹.
- **Descent** on KL(P‖Q): gradient 4 Σ_j (p_ij − q_ij)(y_i − y_j)(1 + ‖y_i − y_j‖²)⁻¹, with the paper's
  early exaggeration (P × 12 for the first 250 steps), momentum 0.5 then 0.8, and per-coordinate
  gains (Jacobs 1988) as in the authors' reference implementation; the start is N(0, 10⁻⁴) from the seed.

Deterministic: the same input and seed give the same coordinates.
"""
from __future__ import annotations

import numpy as np

PERPLEXITY = 30.0
ITERATIONS = 500
EXAGGERATION, EXAGGERATED_STEPS = 12.0, 250


def affinities(x: np.ndarray, perplexity: float = PERPLEXITY, tol: float = 1e-5, steps: int = 100) -> np.ndarray:
    """(n, n) float64 symmetric joint probabilities P of the (n, d) points (zero diagonal, sum 1)."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    squared = (x * x).sum(axis=1)
    distance = np.maximum(squared[:, None] + squared[None, :] - 2.0 * x @ x.T, 0.0)  # (n, n)
    np.fill_diagonal(distance, np.inf)
    distance -= distance.min(axis=1, keepdims=True)  # shifts each row: p_{j|i} unchanged, exp never underflows to 0/0
    target = np.log(perplexity)  # entropy in nats
    beta = np.ones(n)
    low, high = np.zeros(n), np.full(n, np.inf)
    for _ in range(steps):  # bisection on every row at once
        weights = np.exp(-distance * beta[:, None])  # (n, n), zero on the diagonal
        total = weights.sum(axis=1)
        entropy = np.log(total) + beta * (np.where(weights > 0, distance, 0.0) * weights).sum(axis=1) / total
        error = entropy - target
        if np.all(np.abs(error) < tol):
            break
        too_flat = error > 0  # entropy too high: sharpen (larger β)
        low = np.where(too_flat, beta, low)
        high = np.where(too_flat, high, beta)
        beta = np.where(np.isinf(high), beta * 2.0, (low + high) / 2.0)
    conditional = weights / total[:, None]  # (n, n): row i is p_{·|i}
    joint = (conditional + conditional.T) / (2.0 * n)
    return joint


def kl_divergence(p: np.ndarray, y: np.ndarray) -> float:
    """KL(P‖Q) in nats of the (n, 2) embedding ``y`` for the joint probabilities ``p``."""
    y = np.asarray(y, dtype=np.float64)
    squared = (y * y).sum(axis=1)
    kernel = 1.0 / (1.0 + np.maximum(squared[:, None] + squared[None, :] - 2.0 * y @ y.T, 0.0))
    np.fill_diagonal(kernel, 0.0)
    q = np.maximum(kernel / kernel.sum(), 1e-12)
    mask = p > 0
    return float((p[mask] * np.log(p[mask] / q[mask])).sum())


def tsne(x: np.ndarray, perplexity: float = PERPLEXITY, iterations: int = ITERATIONS, seed: int = 0,
         learning_rate: float | None = None) -> np.ndarray:
    """(n, 2) float64 t-SNE embedding of the (n, d) points. The perplexity is held below (n − 1) / 3
    (each point needs about 3 × perplexity neighbours); fewer than four points lie at the origin."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    if n < 4:
        return np.zeros((n, 2))
    p = np.maximum(affinities(x, min(perplexity, (n - 1) / 3.0)), 1e-12)
    np.fill_diagonal(p, 0.0)
    rate = learning_rate if learning_rate is not None else max(n / EXAGGERATION / 4.0, 50.0)  # scikit-learn's "auto"
    rng = np.random.default_rng(seed)
    y = rng.normal(scale=1e-4, size=(n, 2))
    update = np.zeros_like(y)
    gains = np.ones_like(y)
    exaggerated_p = p * EXAGGERATION
    kernel = np.empty((n, n))  # buffers reused every step: the loop is bound by passes over n² numbers
    weighted = np.empty((n, n))
    diagonal = np.arange(n)
    for step in range(iterations):
        exaggerated = step < EXAGGERATED_STEPS
        np.subtract.outer(y[:, 0], y[:, 0], out=kernel)  # (n, n) → 1 + ‖y_i − y_j‖², then its inverse
        kernel *= kernel
        np.subtract.outer(y[:, 1], y[:, 1], out=weighted)
        weighted *= weighted
        kernel += weighted
        kernel += 1.0
        np.reciprocal(kernel, out=kernel)
        kernel[diagonal, diagonal] = 0.0
        # (p − q) · kernel with q = kernel / Σ kernel
        np.multiply(kernel, -1.0 / kernel.sum(), out=weighted)
        weighted += exaggerated_p if exaggerated else p
        weighted *= kernel
        gradient = 4.0 * (weighted.sum(axis=1)[:, None] * y - weighted @ y)  # (n, 2)
        momentum = 0.5 if exaggerated else 0.8
        same_sign = (gradient > 0) == (update > 0)
        gains = np.maximum(np.where(same_sign, gains * 0.8, gains + 0.2), 0.01)
        update = momentum * update - rate * gains * gradient
        y = y + update
        y -= y.mean(axis=0)
    return y
