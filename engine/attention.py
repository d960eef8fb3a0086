"""Scaled dot-product attention for all heads at once, keeping every intermediate.

"Attention Is All You Need" (Vaswani et al., 2017) eq. 1:
    Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V
computed per head h on columns h·d_k … (h+1)·d_k, with an optional causal mask (−∞ above the
diagonal) and a temperature. This is the single attention kernel of the project: the toy
engine and the pretrained BERT forward pass both call :func:`attend`.

Performance notes (measured here, 2-core AMD EPYC, numpy 2.4 + OpenBLAS; see benchmarks/):
- q·kᵀ and weights·v are one stacked matmul each over contiguous operands (keys stored already
  transposed as (heads, d_k, n)); OpenBLAS runs them on every core.
- Everything between them (scale, bias, mask, softmax) is element-wise, and numpy runs an
  element-wise ufunc on ONE core, at ~1.5–2.2 ns per np.exp of a float32 here (torch's
  vectorized exp is ~10× faster). So those steps go in blocks of about BLOCK_ELEMENTS scores
  (scaled → shifted → exp → normalised while the block is still in cache, instead of six
  passes over arrays of heads·n² floats), and the blocks are shared among a few threads (numpy
  releases the GIL inside ufunc loops). At n=2048, 8 heads (33.5 M scores), measured in
  isolation: whole-array scale + softmax 152 ms, blocks on 1 thread 125 ms, blocks on 2 threads
  83 ms (median). Right after the q·kᵀ matmul the gain is smaller (~25 ms lost), as OpenBLAS's
  idle threads keep spinning for a while. Running BLAS inside the blocks too (scores and
  weights·v per block, "fused") measured slower: 270–380 ms against 207 ms for the whole attend.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

# A block holds about this many scores (1 MiB of float32: measured faster here than 64 Ki or
# 16 Ki scores per block, which fit the 512 KiB L2 but pay more Python overhead per block).
BLOCK_ELEMENTS = 1 << 18
# Below this many scores (heads·n_q·n_k, 2^20 ≈ 8 heads × 362²) threads gain nothing measurable.
THREADED_MIN_ELEMENTS = 1 << 20
THREADS = max(1, min(os.cpu_count() or 1, 8))

_pool: ThreadPoolExecutor | None = None
_pool_pid = 0
_pool_lock = threading.Lock()


def _thread_pool() -> ThreadPoolExecutor:
    """The block workers, made on first use (and again in a forked child, which has none)."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="attention-blocks")
            _pool_pid = os.getpid()
        return _pool


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
    heads, n_queries, n_keys = scores.shape
    plain = divisor == 1.0 and mask is None and additive_bias is None
    # Without scaling, bias or mask, scaled holds the same numbers as scores: share the memory
    # (the trace's arrays are read-only).
    scaled = scores if plain else np.empty_like(scores)  # (heads, n, n)
    weights = np.empty_like(scores)  # (heads, n, n)
    factor = scores.dtype.type(1.0 / divisor)
    bias = None if additive_bias is None else np.broadcast_to(additive_bias, scores.shape)  # view
    masked = None if mask is None else np.broadcast_to(mask, (n_queries, n_keys))  # view

    def fill(heads_: slice, rows: slice) -> None:
        """scaled and weights of a block: the steps of eq. 1 between the two matmuls."""
        block = scaled[heads_, rows]  # (heads in block, rows, n_keys), a view
        if not plain:
            if divisor != 1.0:
                np.multiply(scores[heads_, rows], factor, out=block)
            else:
                np.copyto(block, scores[heads_, rows])
            if bias is not None:
                block += bias[heads_, rows]
            if masked is not None:
                np.copyto(block, -np.inf, where=masked[rows])
        _softmax_into(block, weights[heads_, rows])

    # Blocks of about BLOCK_ELEMENTS scores: whole heads when one head is smaller, else rows.
    per_head = n_queries * n_keys
    if per_head <= BLOCK_ELEMENTS:
        step = max(1, BLOCK_ELEMENTS // max(per_head, 1))
        blocks = [(slice(h, h + step), slice(None)) for h in range(0, heads, step)]
    else:
        step = max(1, BLOCK_ELEMENTS // n_keys)
        blocks = [
            (slice(h, h + 1), slice(start, start + step))
            for h in range(heads)
            for start in range(0, n_queries, step)
        ]
    if scores.size >= THREADED_MIN_ELEMENTS and THREADS > 1 and len(blocks) > 1:
        # Each thread takes an equal, contiguous share of the blocks.
        shares = [
            blocks[len(blocks) * i // THREADS : len(blocks) * (i + 1) // THREADS] for i in range(THREADS)
        ]
        for future in [_thread_pool().submit(_run_blocks, fill, share) for share in shares]:
            future.result()  # re-raises a worker's exception here
    else:
        _run_blocks(fill, blocks)

    head_outputs = np.matmul(weights, np.ascontiguousarray(v))  # (heads, n, d_k)
    return {"scores": scores, "scaled": scaled, "weights": weights, "head_outputs": head_outputs}


def _run_blocks(fill, blocks) -> None:
    for heads, rows in blocks:
        fill(heads, rows)


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
