"""Scaled dot-product attention for all heads at once, keeping every intermediate.

"Attention Is All You Need" (Vaswani et al., 2017) eq. 1:
    Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V
computed per head h on columns h·d_k … (h+1)·d_k, with an optional causal mask (−∞ above the
diagonal) and a temperature. This is the single attention kernel of the project: the toy
engine and the pretrained BERT forward pass both call :func:`attend`.

Large inputs go in cache-sized tiles shared among the engine's threads (numpy runs ufuncs on one
core); small ones take one whole-array pass. The measurements behind the thresholds are in
benchmarks/README.md ("Why the engine is shaped this way"). :func:`reference_attention` is the
same math in five plain lines, the oracle the fast path is read (and tested) against.
"""
from __future__ import annotations

import numpy as np

from . import parallel
from .parallel import run_parallel

# A tile holds about this many scores (1 MiB of float32; measured: benchmarks/README.md).
BLOCK_ELEMENTS = 1 << 18
# Below this many scores (heads·n_q·n_k) one whole-array pass beats tiles and a thread hand-off.
FUSED_MIN_ELEMENTS = 1 << 16


def split_heads(matrix: np.ndarray, heads: int, out: np.ndarray | None = None) -> np.ndarray:
    """(n, d_model) → contiguous (heads, n, d_k): head h holds columns h·d_k … (h+1)·d_k.
    ``out``: (heads, n, d_k) to write into (e.g. a slice of rows of a larger array)."""
    n, d_model = matrix.shape
    per_head = matrix.reshape(n, heads, d_model // heads).transpose(1, 0, 2)  # a view
    if out is None:
        return np.ascontiguousarray(per_head)
    out[...] = per_head
    return out


def project_heads(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, out: np.ndarray) -> np.ndarray:
    """The one fused projection: x (rows, d) · [W_Q | W_K | W_V] (+ [b_Q | b_K | b_V]) in one
    matmul, written head by head into ``out`` (q heads + k heads + v heads, rows, d_k): e.g. a
    share of rows of the forward's (heads + 2·kv_heads, n, d_k) array."""
    qkv = x @ weight  # (rows, (heads + 2·kv_heads)·d_k)
    if bias is not None:
        qkv += bias
    return split_heads(qkv, out.shape[0], out=out)


def merge_heads(per_head: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """(heads, n, d_k) → (n, heads·d_k): heads side by side (seed 004's 拼接 'concat').
    ``out``: (n, heads·d_k) to write into."""
    heads, n, d_k = per_head.shape
    side_by_side = per_head.transpose(1, 0, 2).reshape(n, heads * d_k)
    if out is None:
        return np.ascontiguousarray(side_by_side)
    out[...] = side_by_side
    return out


def causal_mask(n: int, n_keys: int | None = None) -> np.ndarray:
    """Boolean (n, n_keys), True where query i may NOT see key j (the future).

    With ``n_keys`` > n the queries are the LAST n positions of n_keys (a decoder extending a
    cached prefix): query i sits at position n_keys − n + i and sees keys j ≤ that position."""
    n_keys = n if n_keys is None else n_keys
    return np.triu(np.ones((n, n_keys), dtype=bool), k=1 + n_keys - n)


def reference_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """softmax(Q·Kᵀ/√d_k)·V, plainly: what :func:`attend` computes in tiles. q, k, v: (heads, n, d_k)."""
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])  # (heads, n, n)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)  # True = masked
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (weights / weights.sum(axis=-1, keepdims=True)) @ v  # (heads, n, d_k)


def attend(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    divisor: float = 1.0,
    mask: np.ndarray | None = None,
    weights_out: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Attention for every head at once.

    q: (heads, n_q, d_k); k, v: (kv_heads, n_k, d_k). n_k may exceed n_q (the queries are new
    positions over cached keys: pass ``causal_mask(n_q, n_k)``). kv_heads may divide heads:
    grouped-query attention (Ainslie et al. 2023), query head h reads key/value head
    h // (heads / kv_heads), as Llama's ``repeat_kv``. ``weights_out``: (heads, n_q, n_k) float
    array the weights are written into (e.g. one layer of a preallocated stack).
    ``divisor``: the scores are divided by it (√d_k · temperature, or 1). ``mask``: boolean
    (n, n) or (n_keys,), True = masked (−∞ before the softmax). (No additive bias: one unpadded
    sentence needs none, see engine/models/bert.py; a padded batch would add it.)

    Returns scores (heads, n, n) = q·kᵀ, scaled (heads, n, n) = scores / divisor (−∞ where
    masked), weights (heads, n, n) = row softmax, head_outputs (heads, n, d_k) = weights·v.
    """
    q = np.ascontiguousarray(q)  # (heads, n_q, d_k)
    if k.shape[0] != q.shape[0]:  # grouped-query: each key/value head serves a group of query heads
        group = q.shape[0] // k.shape[0]
        if group * k.shape[0] != q.shape[0] or v.shape[0] != k.shape[0]:
            raise ValueError(f"{q.shape[0]} query heads cannot share {k.shape[0]} key/value heads")
        k, v = np.repeat(k, group, axis=0), np.repeat(v, group, axis=0)  # (heads, n_k, d_k), small copies
    keys_transposed = np.ascontiguousarray(k.transpose(0, 2, 1))  # (heads, d_k, n_k)
    v = np.ascontiguousarray(v)  # (heads, n_k, d_k)
    heads, n_queries, d_k = q.shape
    n_keys = keys_transposed.shape[2]
    dtype = np.result_type(q, keys_transposed)
    scores = np.empty((heads, n_queries, n_keys), dtype)  # (heads, n, n)
    plain = divisor == 1.0 and mask is None
    # Without scaling or mask, scaled holds the same numbers as scores: share the memory
    # (the trace's arrays are read-only).
    scaled = scores if plain else np.empty_like(scores)  # (heads, n, n)
    weights = np.empty_like(scores) if weights_out is None else weights_out  # (heads, n, n)
    head_outputs = np.empty((heads, n_queries, v.shape[2]), np.result_type(weights, v))  # (heads, n, d_k)
    factor = scores.dtype.type(1.0 / divisor)
    masked = None if mask is None else np.broadcast_to(mask, (n_queries, n_keys))  # view

    def tile(heads_: slice, rows: slice) -> None:
        """Eq. 1 for some heads and query rows, every step into the trace's own arrays."""
        block = scores[heads_, rows]  # (heads in tile, rows, n_keys), a view
        np.matmul(q[heads_, rows], keys_transposed[heads_], out=block)
        if not plain:
            block_scaled = scaled[heads_, rows]
            if divisor != 1.0:
                np.multiply(block, factor, out=block_scaled)
            else:
                np.copyto(block_scaled, block)
            if masked is not None:
                np.copyto(block_scaled, -np.inf, where=masked[rows])
            block = block_scaled
        block_weights = weights[heads_, rows]
        softmax_into(block, block_weights)
        np.matmul(block_weights, v[heads_], out=head_outputs[heads_, rows])

    threaded = parallel.threads_allowed(True) and parallel.THREADS > 1
    if scores.size < FUSED_MIN_ELEMENTS or (not threaded and scores.size < parallel.THREADED_MIN_SCORES):
        tile(slice(None), slice(None))
    else:
        # Tiles of about BLOCK_ELEMENTS scores: whole heads when one head is smaller, else rows.
        per_head = n_queries * n_keys
        if per_head <= BLOCK_ELEMENTS:  # whole heads, and at least two tiles per thread
            step = max(1, min(BLOCK_ELEMENTS // max(per_head, 1), heads // (2 * parallel.THREADS)))
            tiles = [(slice(h, h + step), slice(None)) for h in range(0, heads, step)]
        else:
            step = max(1, BLOCK_ELEMENTS // n_keys)
            tiles = [
                (slice(h, h + 1), slice(start, start + step))
                for h in range(heads)
                for start in range(0, n_queries, step)
            ]
        if threaded:
            run_parallel(lambda t: tile(*t), tiles)
        else:  # one core, or the caller chose this thread only: tiles still keep the work in cache
            for heads_, rows in tiles:
                tile(heads_, rows)
    return {"scores": scores, "scaled": scaled, "weights": weights, "head_outputs": head_outputs}


def softmax_into(logits: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Row softmax of ``logits`` (…, n) written into ``out`` (same shape): the same operations,
    in the same order, as :func:`softmax`, so the numbers are identical."""
    row_max = logits.max(axis=-1, keepdims=True)  # (..., 1)
    np.subtract(logits, row_max, out=out)
    np.exp(out, out=out)
    out /= out.sum(axis=-1, keepdims=True)
    return out


def softmax64(logits: np.ndarray) -> np.ndarray:
    """Row softmax in float64 over the last axis: the engine's one vocabulary softmax (next-token
    bars, logit lens, ablation effects: the small probabilities matter in the tails)."""
    z = np.array(logits, dtype=np.float64)
    z -= z.max(axis=-1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=-1, keepdims=True)
    return z


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
