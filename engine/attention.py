"""Scaled dot-product attention for all heads at once, keeping every intermediate.

"Attention Is All You Need" (Vaswani et al., 2017) eq. 1:
    Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V
computed per head h on columns h·d_k … (h+1)·d_k, with an optional causal mask (−∞ above the
diagonal) and a temperature. This is the single attention kernel of the project: the toy
engine and the pretrained BERT forward pass both call :func:`attend`.

Performance notes (measured here, 2-core AMD EPYC, numpy 2.4 + OpenBLAS; see benchmarks/):
- numpy runs an element-wise ufunc on ONE core, at ~2.2 ns per np.exp of a float32 here (torch's
  vectorized exp is several times faster), and a whole-array step is a pass over heads·n² floats
  in main memory. So for large inputs the work goes in tiles of about BLOCK_ELEMENTS scores,
  (one head, a run of query rows): q·kᵀ of the tile (BLAS, one thread), scale, mask,
  softmax, and the tile's weights·v, all while the tile is still in cache, the tiles shared
  among :data:`engine.parallel.THREADS` threads (numpy releases the GIL inside ufuncs and BLAS).
  Each n² array is written once and read back from cache, never from memory.
  At n = 2048, 8 heads: 205 ms for whole-array matmuls on OpenBLAS's threads + blocked softmax
  on ours, ~175 ms fused (torch's bmm, softmax, bmm: ~205 ms in the same run).
- Small inputs (under FUSED_MIN_ELEMENTS scores) take the whole-array path on the calling
  thread: a few numpy calls in all, no thread hand-off (which costs 100–180 µs here).
  Between that and a head of BLOCK_ELEMENTS scores, tiles are groups of whole heads. When the
  caller runs on one thread (engine_threads(False), or a one-core machine), the whole-array path
  goes up to THREADED_MIN_SCORES and the tiles above it run one after the other.
"""
from __future__ import annotations

import numpy as np

from . import parallel
from .parallel import run_parallel

# A tile holds about this many scores (1 MiB of float32; measured at n = 512 and 2048 against
# 2^15, 2^16 and 2^17: 10.0 / 171 ms against 10.7–14.0 / 184–223 ms).
BLOCK_ELEMENTS = 1 << 18
# Below this many scores (heads·n_q·n_k; 8 heads × 90²) one whole-array pass on this thread
# beats tiles and threads (~0.25 ms of work against 100–180 µs per hand-off to a thread).
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


def merge_heads(per_head: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """(heads, n, d_k) → (n, heads·d_k): heads side by side (seed 004's 拼接 'concat').
    ``out``: (n, heads·d_k) to write into."""
    heads, n, d_k = per_head.shape
    side_by_side = per_head.transpose(1, 0, 2).reshape(n, heads * d_k)
    if out is None:
        return np.ascontiguousarray(side_by_side)
    out[...] = side_by_side
    return out


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
) -> dict[str, np.ndarray]:
    """Attention for every head at once.

    q, k, v: (heads, n, d_k). ``divisor``: the scores are divided by it (√d_k · temperature, or
    1). ``mask``: boolean (n, n) or (n_keys,), True = masked (−∞ before the softmax). (No additive
    bias: one unpadded sentence needs none, see engine/bert.py; a padded batch would add it.)

    Returns scores (heads, n, n) = q·kᵀ, scaled (heads, n, n) = scores / divisor (−∞ where
    masked), weights (heads, n, n) = row softmax, head_outputs (heads, n, d_k) = weights·v.
    """
    q = np.ascontiguousarray(q)  # (heads, n_q, d_k)
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
    weights = np.empty_like(scores)  # (heads, n, n)
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
        _softmax_into(block, block_weights)
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


def _softmax_into(logits: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Row softmax of ``logits`` (…, n) written into ``out`` (same shape): the same operations,
    in the same order, as :func:`softmax`, so the numbers are identical."""
    row_max = logits.max(axis=-1, keepdims=True)  # (..., 1)
    np.subtract(logits, row_max, out=out)
    np.exp(out, out=out)
    out /= out.sum(axis=-1, keepdims=True)
    return out


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
