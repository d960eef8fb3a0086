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
# attend_weights' tiles shared among threads keep at least this many query rows (smaller GEMMs run slower).
MIN_TILE_ROWS = 32


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
    if bias is None:
        return split_heads(qkv, out.shape[0], out=out)
    # The bias is added while the heads are copied out: one pass over qkv instead of two, the same sums.
    all_heads, d_k = out.shape[0], out.shape[2]
    per_head = qkv.reshape(len(qkv), all_heads, d_k).transpose(1, 0, 2)  # (all heads, rows, d_k), a view
    np.add(per_head, bias.reshape(all_heads, 1, d_k), out=out)
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


def attend_weights(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    divisor: float = 1.0,
    causal: bool = False,
    weights_out: np.ndarray | None = None,
    zeroed_above: bool = False,
    scores_out: np.ndarray | None = None,
    scaled_out: np.ndarray | None = None,
    head_outputs_out: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """:func:`attend` keeping only what a trace keeps: the weights and the head outputs.

    The scores and scaled scores live one tile at a time in a scratch block (in cache, never a
    fresh (heads, n, n) array: at 512 tokens those were 2 × 9.4 MB of page faults a layer); a
    trace that shows them recomputes one layer's on demand. ``causal``: query i sits at position
    n_k − n_q + i and sees keys ≤ it (:func:`causal_mask` (n_q, n_k)); each tile of query rows
    then computes only the keys up to its last row (about half the work of the full square).
    Above that the weights are 0: written, unless ``zeroed_above`` says ``weights_out`` holds
    zeros there already (a fresh np.zeros: writing would fault its pages in).

    Grouped-query heads share their key/value head inside one matmul: the group's query rows are
    stacked, (kv_heads, group·rows, d_k) · (kv_heads, d_k, keys), instead of repeating k.
    ``divisor`` scales q before q·kᵀ (one (rows, d_k) pass instead of one over (rows, keys); exact
    for a power of two such as √64 = 8, else within float32 rounding of scaling the scores).

    ``scores_out`` / ``scaled_out`` (heads, n_q, n_k): where a hook on the scores needs them, each
    tile's raw and scaled scores are copied there too (scaled: −∞ above the causal diagonal; raw:
    not written there), and returned as "scores" / "scaled". The weights are then the very same
    numbers as without (the raw scores come from a matmul of their own), so a run that listens
    to the scores computes what a run that does not computes.

    Returns {"weights": (heads, n_q, n_k), "head_outputs": (heads, n_q, d_v)}. The same numbers as
    :func:`attend` up to float32 rounding of the summation order (tested against it)."""
    q = np.ascontiguousarray(q)  # (heads, n_q, d_k)
    heads, n_queries, d_k = q.shape
    kv_heads, n_keys = k.shape[0], k.shape[1]
    group = heads // kv_heads
    if group * kv_heads != heads or v.shape[0] != kv_heads:
        raise ValueError(f"{heads} query heads cannot share {kv_heads} key/value heads")
    keys_transposed = np.ascontiguousarray(k.transpose(0, 2, 1))  # (kv, d_k, n_k): BLAS wants it so
    values = np.ascontiguousarray(v if group == 1 else np.repeat(v, group, axis=0))  # (heads, n_k, d_v)
    dtype = np.result_type(q, keys_transposed)
    weights = np.empty((heads, n_queries, n_keys), dtype) if weights_out is None else weights_out
    head_outputs = (np.empty((heads, n_queries, values.shape[2]), np.result_type(weights, values))
                    if head_outputs_out is None else head_outputs_out)
    # 1/divisor scales q, a (rows, d_k) pass, not the (rows, keys) scores. A hook on the scores gets
    # the raw q·kᵀ from a matmul of its own, so its weights are the very numbers of a run without.
    q_factor = dtype.type(1.0 / divisor) if divisor != 1.0 else None
    offset = n_keys - n_queries  # query i sits at position offset + i

    def tile(rows: slice, heads_: slice = slice(None)) -> None:
        """Eq. 1 for some query rows of some heads (``heads_``: all of them unless group == 1)."""
        count = rows.stop - rows.start
        keys = offset + rows.stop if causal else n_keys
        raw = q[heads_, rows]  # (heads in tile, count, d_k)
        block = raw * q_factor if q_factor is not None else np.ascontiguousarray(raw)
        tile_heads = block.shape[0]
        kv_count = tile_heads // group  # key/value heads of the tile
        keys_block = keys_transposed[heads_, :, :keys]  # (kv heads of the tile, d_k, keys)
        scores = np.empty((kv_count, group * count, keys), dtype)  # the tile's scores, scratch
        np.matmul(block.reshape(kv_count, group * count, d_k), keys_block, out=scores)
        scores = scores.reshape(tile_heads, count, keys)
        if scores_out is not None:
            unscaled = np.ascontiguousarray(raw).reshape(kv_count, group * count, d_k) @ keys_block
            scores_out[heads_, rows, :keys] = unscaled.reshape(tile_heads, count, keys)
        if causal and count > 1:  # within the tile's last `count` keys, each row sees up to itself
            np.copyto(scores[:, :, keys - count:], -np.inf, where=_upper(count))
        if scaled_out is not None:
            scaled_out[heads_, rows, :keys] = scores
            scaled_out[heads_, rows, keys:] = -np.inf
        target = weights[heads_, rows, :keys]
        _softmax_unshifted(scores, target)
        if keys < n_keys and not zeroed_above:
            weights[heads_, rows, keys:] = 0.0
        np.matmul(target, values[heads_, :keys], out=head_outputs[heads_, rows])

    threaded = parallel.threads_allowed(True) and parallel.THREADS > 1
    shared = threaded and heads * n_queries * n_keys >= FUSED_MIN_ELEMENTS  # the tiles go to the threads
    per_row = heads * n_keys
    per_head = n_queries * n_keys
    every_row = slice(0, n_queries)
    if causal:  # several tiles even when small: the triangle's saving grows with their number
        step = max(16, min(BLOCK_ELEMENTS // max(per_row, 1), -(-n_queries // 4)))
        tiles = [(slice(start, min(start + step, n_queries)),) for start in range(0, n_queries, step)]
        tiles.reverse()  # the longest first: threads that come late take the short ones
    elif group == 1 and per_head <= BLOCK_ELEMENTS:
        # Whole heads, about BLOCK_ELEMENTS scores a tile, a multiple of the threads' number when
        # shared: one q·kᵀ GEMM of all n_q rows per head instead of a row block's per head. MiniLM at
        # 512 tokens: one head a tile 73 ms for the 6 layers (CPU 135), 42-row blocks of all 12
        # heads 85 ms (CPU 161); at 128 tokens 6 heads a tile 6.9 against 64-row blocks 7.1 ms.
        count = -(-heads // max(1, BLOCK_ELEMENTS // max(per_head, 1)))
        if shared:
            count = min(heads, -(-count // parallel.THREADS) * parallel.THREADS)
        size = -(-heads // count)
        tiles = [(every_row, slice(h, min(h + size, heads))) for h in range(0, heads, size)]
    elif group == 1:  # a head is larger than a tile: one head, a block of rows
        step = max(1, BLOCK_ELEMENTS // max(n_keys, 1))
        tiles = [(slice(start, min(start + step, n_queries)), slice(h, h + 1))
                 for h in range(heads) for start in range(0, n_queries, step)]
    else:  # grouped-query heads, not causal: blocks of rows of every head, the groups stacked
        step = max(1, BLOCK_ELEMENTS // max(per_row, 1))
        if shared:  # at least one tile per thread
            step = min(step, max(MIN_TILE_ROWS, -(-n_queries // parallel.THREADS)))
        tiles = [(slice(start, min(start + step, n_queries)),) for start in range(0, n_queries, step)]
    if shared and len(tiles) > 1:
        run_parallel(lambda t: tile(*t), tiles)
    else:
        for t in tiles:
            tile(*t)
    stages = {"weights": weights, "head_outputs": head_outputs}
    if scores_out is not None:
        stages["scores"] = scores_out
    if scaled_out is not None:
        stages["scaled"] = scaled_out
    return stages


_UPPER: dict[int, np.ndarray] = {}


def _upper(count: int) -> np.ndarray:
    """Boolean (count, count), True strictly above the diagonal (memoised: one per tile height)."""
    mask = _UPPER.get(count)
    if mask is None:
        mask = _UPPER[count] = np.triu(np.ones((count, count), dtype=bool), k=1)
        mask.flags.writeable = False
    return mask


# Row sums outside these bounds mean exp() overflowed (a scaled score above ~88) or every score of a
# row underflowed: such a tile's softmax is redone with each row's maximum subtracted first.
_SUM_FLOOR, _SUM_CEILING = 1e-30, 1e30


def _softmax_unshifted(scores: np.ndarray, out: np.ndarray) -> None:
    """Row softmax of ``scores`` (…, keys) into ``out``: exp(s)/Σexp(s) without subtracting the row
    maximum (which cancels), three passes over the scores instead of five; if a row's sum overflowed
    or vanished, the tile takes the shifted form. −∞ (masked) gives 0. The same weights as
    :func:`softmax` to float32 rounding (tested against a float64 loop)."""
    with np.errstate(over="ignore"):  # an overflow is caught below, not warned of
        np.exp(scores, out=out)
    sums = out.sum(axis=-1, keepdims=True)  # (…, 1)
    if not (sums.min() > _SUM_FLOOR and sums.max() < _SUM_CEILING):  # NaN fails too
        np.subtract(scores, scores.max(axis=-1, keepdims=True), out=scores)
        np.exp(scores, out=out)
        sums = out.sum(axis=-1, keepdims=True)
    out /= sums


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
