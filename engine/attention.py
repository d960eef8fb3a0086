"""Scaled dot-product attention for all heads at once, keeping every intermediate.

"Attention Is All You Need" (Vaswani et al., 2017) eq. 1:
    Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V
computed per head h on columns h·d_k … (h+1)·d_k, with an optional causal mask (−∞ above the
diagonal) and a temperature. This is the single attention kernel of the project: the toy
engine and the pretrained BERT forward pass both call :func:`attend`.

Performance note (measured here): numpy's stacked matmul on *transposed views* is ~10× slower
than on contiguous operands, so heads are split into contiguous (heads, n, d_k) copies and the
keys are stored already transposed as (heads, d_k, n).
"""
from __future__ import annotations

import numpy as np


def split_heads(matrix: np.ndarray, heads: int) -> np.ndarray:
    """(n, d_model) → contiguous (heads, n, d_k): head h holds columns h·d_k … (h+1)·d_k."""
    n, d_model = matrix.shape
    return np.ascontiguousarray(matrix.reshape(n, heads, d_model // heads).transpose(1, 0, 2))


def merge_heads(per_head: np.ndarray) -> np.ndarray:
    """(heads, n, d_k) → (n, heads·d_k): heads side by side (seed 004's 拼接 'concat')."""
    heads, n, d_k = per_head.shape
    return np.ascontiguousarray(per_head.transpose(1, 0, 2).reshape(n, heads * d_k))


def causal_mask(n: int) -> np.ndarray:
    """Boolean (n, n), True where query i may NOT see key j (j > i: the future)."""
    return np.triu(np.ones((n, n), dtype=bool), k=1)


def attend(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    divisor: float = 1.0,
    mask: np.ndarray | None = None,
    additive_bias: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Attention for every head at once.

    q, k, v: (heads, n, d_k). ``divisor``: the scores are divided by it (√d_k · temperature, or
    1). ``mask``: boolean (n, n) or (n_keys,), True = masked (−∞ before the softmax).
    ``additive_bias``: added to the scaled scores (BERT's attention-mask bias), shape
    broadcastable to (heads, n, n).

    Returns scores (heads, n, n) = q·kᵀ, scaled (heads, n, n) = scores / divisor (+ bias,
    −∞ where masked), weights (heads, n, n) = row softmax, head_outputs (heads, n, d_k) = weights·v.
    """
    keys_transposed = np.ascontiguousarray(k.transpose(0, 2, 1))  # (heads, d_k, n)
    scores = np.matmul(np.ascontiguousarray(q), keys_transposed)  # (heads, n, n)
    if divisor != 1.0 or mask is not None or additive_bias is not None:
        scaled = scores * scores.dtype.type(1.0 / divisor) if divisor != 1.0 else scores.copy()
        if additive_bias is not None:
            scaled += additive_bias
        if mask is not None:
            scaled[..., mask] = -np.inf
    else:
        scaled = scores  # the same numbers: share the memory (the arrays are read-only)
    weights = softmax(scaled)  # (heads, n, n)
    head_outputs = np.matmul(weights, np.ascontiguousarray(v))  # (heads, n, d_k)
    return {"scores": scores, "scaled": scaled, "weights": weights, "head_outputs": head_outputs}


def softmax(logits: np.ndarray) -> np.ndarray:
    """Numerically stable softmax over the last axis; −∞ entries become exactly 0.

    Subtracting each row's maximum changes no weight (it cancels in the ratio) but keeps
    exp() from overflowing. A row must have at least one finite entry.
    """
    row_max = logits.max(axis=-1, keepdims=True)  # (..., 1)
    weights = np.subtract(logits, row_max)
    np.exp(weights, out=weights)
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights
