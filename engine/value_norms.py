"""Value-weighted attention: how much each attention weight actually moves.

Kobayashi, Kuribayashi, Yokoi & Inui (2020), "Attention is Not Only a Weight: Analyzing
Transformers with Vector Norms" (EMNLP). A head's output for query i is Σ_j α_ij · f_h(x_j),
where f_h(x_j) = v_hj · W_O,h is token j's value vector for head h (bias included where the
model has one: BERT's b_V is already in v) carried through that head's rows
h·d_k … (h+1)·d_k of W_O. What token j contributes is the vector α_ij · f_h(x_j); its length

    ‖α_ij · f_h(x_j)‖ = α_ij · ‖f_h(x_j)‖        (α ≥ 0)

is computed that way: one (heads, n) table of ‖f_h(x_j)‖, then a broadcast multiply. The
paper's finding, visible here: the weight BERT puts on [CLS] / [SEP] and punctuation comes with
small ‖f(x)‖, so it moves little. W_O's bias is added once per token, not per key: it is left out.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


def transformed_value_norms(v: np.ndarray, w_o: np.ndarray) -> np.ndarray:
    """‖f_h(x_j)‖ = ‖v_hj · W_O[h·d_k:(h+1)·d_k]‖ for every head and key: (heads, n) float32.

    v: (heads, n, d_k) value vectors (with their bias); w_o: (heads·d_k, d) row-vector W_O.
    """
    heads, n, d_k = v.shape
    w_o_heads = np.ascontiguousarray(w_o).reshape(heads, d_k, w_o.shape[1])  # (heads, d_k, d): head h's rows
    transformed = np.matmul(np.ascontiguousarray(v), w_o_heads)  # (heads, n, d): f_h(x_j)
    return np.sqrt(np.einsum("hnd,hnd->hn", transformed, transformed))  # (heads, n)


def value_weighted(weights: np.ndarray, v: np.ndarray, w_o: np.ndarray) -> np.ndarray:
    """‖α_ij · f_h(x_j)‖ for one layer: (heads, n_queries, n_keys), in the weights' dtype.

    weights: (heads, n, n) attention probabilities; v: (heads, n, d_k); w_o: (heads·d_k, d).
    """
    norms = transformed_value_norms(v, w_o)  # (heads, n_keys)
    return (weights * norms[:, None, :]).astype(weights.dtype, copy=False)  # (heads, n, n)


def value_weighted_layers(
    attentions: Sequence[np.ndarray], values: Sequence[np.ndarray], output_weights: Sequence[np.ndarray]
) -> np.ndarray:
    """(layers, heads, n, n): :func:`value_weighted` of each layer's (weights, v, W_O), stacked."""
    return np.stack([value_weighted(a, v, w) for a, v, w in zip(attentions, values, output_weights)])
