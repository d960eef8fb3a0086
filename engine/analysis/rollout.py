"""Attention rollout: which input tokens each position's vector comes from, through the layers.

Abnar & Zuidema (2020), "Quantifying Attention Flow in Transformers" (ACL). Each layer adds
its attention's result to the residual stream, so a layer mixes tokens by

    Â_l = 0.5 · A_l + 0.5 · I,   rows renormalised to sum 1

where A_l is the heads' mean attention (n, n), and the mixing of the first l + 1 layers is the
product R_l = Â_l · Â_(l−1) · … · Â_0 (row i of R_l: how much of each input token position i
holds after layer l, rows summing to 1).

:func:`value_weighted_rollout` does the same with value-weighted attention (Kobayashi et al.,
2020; :mod:`engine.analysis.value_norms`): per layer the heads' ‖α_ij · f_h(x_j)‖ summed and each row
divided by its sum, so a head counts by how much it moves, not by how it spreads its weights.
Everything here is float64 (products of up to dozens of n × n matrices).
"""
from __future__ import annotations

import numpy as np

RESIDUAL = 0.5  # the share of the identity: the residual connection's half in Abnar & Zuidema


def rows_normalised(matrix: np.ndarray) -> np.ndarray:
    """Each row divided by its sum; a row summing to 0 (nothing moved) left at 0."""
    sums = matrix.sum(axis=-1, keepdims=True)  # (..., n, 1)
    return np.divide(matrix, sums, out=np.zeros_like(matrix), where=sums > 0)


def rollout(mixing: np.ndarray, residual: float = RESIDUAL) -> np.ndarray:
    """(layers, n, n) cumulative rollout of per-layer mixing matrices (layers, n, n) whose rows
    sum to 1: entry l = Â_l · … · Â_0 with Â = rows_normalised((1 − residual)·A + residual·I)."""
    mixing = np.asarray(mixing, dtype=np.float64)
    layers, n, _ = mixing.shape
    mixed = (1.0 - residual) * mixing + residual * np.eye(n)  # (layers, n, n)
    mixed = rows_normalised(mixed)
    result = np.empty_like(mixed)  # (layers, n, n)
    result[0] = mixed[0]
    for layer in range(1, layers):
        np.matmul(mixed[layer], result[layer - 1], out=result[layer])
    return result


def mean_attention(attentions: np.ndarray, heads_kept: np.ndarray | None = None) -> np.ndarray:
    """(layers, n, n) float64 the heads' mean attention per layer, from attentions (layers, heads, n, n).

    ``heads_kept``: optional (layers, heads) bool, False for switched-off heads. A switched-off head's
    pattern is still computed in the ablated run, but its output is zeroed before W_O: it moves
    nothing. So it counts as zero weights and the mean stays over all heads (its rows sum to
    kept / heads); after the identity is mixed in and the rows renormalised, the share it would have
    moved stays with the residual. (Leaving it out of the mean instead would let the remaining heads
    claim its share: one head left of twelve would mix as much as twelve.) Every head off: A = 0, Â = I."""
    attentions = np.asarray(attentions, dtype=np.float64)
    if heads_kept is None:
        return attentions.mean(axis=1)
    kept = np.asarray(heads_kept, dtype=np.float64)[:, :, None, None]  # (layers, heads, 1, 1)
    return (attentions * kept).sum(axis=1) / attentions.shape[1]


def attention_rollout(
    attentions: np.ndarray, residual: float = RESIDUAL, heads_kept: np.ndarray | None = None
) -> np.ndarray:
    """(layers, n, n) rollout of attention weights (layers, heads, n, n), each layer's heads
    averaged by :func:`mean_attention` (``heads_kept``: (layers, heads) bool, False for switched-off
    heads, which count as zero weights)."""
    return rollout(mean_attention(attentions, heads_kept), residual)


def value_weighted_rollout(value_norms: np.ndarray, residual: float = RESIDUAL) -> np.ndarray:
    """(layers, n, n) rollout of value-weighted attention (layers, heads, n, n): per layer the
    heads summed and rows normalised to 1, then mixed with the identity as :func:`rollout`."""
    value_norms = np.asarray(value_norms, dtype=np.float64)
    return rollout(rows_normalised(value_norms.sum(axis=1)), residual)
