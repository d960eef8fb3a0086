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


def _per_query_head(v: np.ndarray, heads: int) -> np.ndarray:
    """v for every query head: grouped-query attention (Ainslie et al., 2023) shares each of
    kv_heads value heads among heads / kv_heads consecutive query heads (h → h // group)."""
    kv_heads = v.shape[0]
    if kv_heads == heads:
        return v
    if heads % kv_heads:
        raise ValueError(f"{heads} query heads cannot share {kv_heads} value heads")
    return np.repeat(v, heads // kv_heads, axis=0)  # (heads, n, d_k)


def transformed_value_norms(v: np.ndarray, w_o: np.ndarray) -> np.ndarray:
    """‖f_h(x_j)‖ = ‖v_hj · W_O[h·d_k:(h+1)·d_k]‖ for every head and key: (heads, n), float32 for
    float32 inputs (computed in float64).

    v: (heads, n, d_k) value vectors (with their bias), or (kv_heads, n, d_k) for grouped-query
    attention; w_o: (heads·d_k, d) row-vector W_O.
    """
    d_k = v.shape[2]
    heads = w_o.shape[0] // d_k
    dtype = np.result_type(v, w_o, np.float32)  # float32 for a model's arrays; float64 in, float64 out
    w_o_heads = np.asarray(w_o, np.float64).reshape(heads, d_k, w_o.shape[1])  # (heads, d_k, d): head h's rows
    # ‖v W‖² = v (W Wᵀ) vᵀ: a (d_k, d_k) Gram matrix per head instead of every f_h(x_j) in d dimensions
    # (SmolLM2: 64 × 64 against 64 × 576 numbers a key and head, 9× fewer multiplications)
    gram = np.matmul(w_o_heads, w_o_heads.transpose(0, 2, 1))  # (heads, d_k, d_k)
    v = np.asarray(_per_query_head(v, heads), np.float64)  # (heads, n, d_k)
    squared = np.einsum("hnd,hnd->hn", np.matmul(v, gram), v)  # (heads, n)
    return np.sqrt(np.maximum(squared, 0.0)).astype(dtype, copy=False)  # (heads, n)


def value_weighted(weights: np.ndarray, v: np.ndarray, w_o: np.ndarray) -> np.ndarray:
    """‖α_ij · f_h(x_j)‖ for one layer: (heads, n_queries, n_keys), in the weights' dtype.

    weights: (heads, n, n) attention probabilities; v: (heads or kv_heads, n, d_k);
    w_o: (heads·d_k, d).
    """
    norms = transformed_value_norms(v, w_o)  # (heads, n_keys)
    return (weights * norms[:, None, :]).astype(weights.dtype, copy=False)  # (heads, n, n)


def value_weighted_layers(
    attentions: Sequence[np.ndarray], values: Sequence[np.ndarray], output_weights: Sequence[np.ndarray]
) -> np.ndarray:
    """(layers, heads, n, n): :func:`value_weighted` of each layer's (weights, v, W_O), stacked."""
    return np.stack([value_weighted(a, v, w) for a, v, w in zip(attentions, values, output_weights)])


def explain_cell(weights: np.ndarray, v: np.ndarray, w_o: np.ndarray, head: int, query: int, key: int) -> dict:
    """The worked arithmetic of one cell, for one layer's weights (heads, n, n), v and W_O:
    alpha = α_ij, f = f_h(x_j) (d,) float64, f_norm = ‖f‖, value_norm = α_ij · ‖f‖ (Python floats)."""
    d_k = v.shape[2]
    heads = w_o.shape[0] // d_k
    dtype = np.result_type(v, w_o, np.float32)  # float32 for a model's arrays; float64 in, float64 out
    if not (0 <= head < heads and 0 <= query < weights.shape[1] and 0 <= key < weights.shape[2]):
        raise IndexError(f"no cell head {head}, query {query}, key {key}")
    value = np.asarray(_per_query_head(v, heads)[head, key], np.float64)  # (d_k,)
    f = value @ np.asarray(w_o[head * d_k:(head + 1) * d_k], np.float64)  # (d,)
    alpha = float(weights[head, query, key])
    f_norm = float(np.linalg.norm(f))
    return {"alpha": alpha, "value": value, "f": f, "f_norm": f_norm, "value_norm": alpha * f_norm}
