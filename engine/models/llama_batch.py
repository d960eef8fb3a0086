"""A decoder's upper layers run for a batch of variants of one run, each variant changed from some
position on: the engine of activation patching's grids (engine.analysis.patching).

Why a batch: a patching grid is hundreds of runs of the same layers over a few rows each. Run one
by one, every run reads every weight of every layer it passes (14 MB a layer on SmolLM2-135M) and
the output head (113 MB) for a handful of rows, so the grid is bound by memory traffic and
Python overhead. Here the variants of one grid row (the 16 positions of one layer, or the 9 heads)
go through each layer together: the rows of all variants are packed into one (R, d) matrix, so each
layer is a few (R, d) · (d, ·) GEMMs and the output head one (B, d) · (d, vocab) GEMM.

What is not computed (a causal decoder: position i never reads a position after it):
- the layers below ``first``: each variant starts from its residual at blocks.{first}.hook_resid_pre;
- a variant's positions before its ``start``: their keys and values, at every layer, are the base
  run's (``base.k``, ``base.v``: the corrupted run, computed at every position), so a variant
  carries only its rows start … n − 1; the packed matrix has R = Σ_b (n − start_b) rows;
- in the last layer, every position but the last after its keys and values: only position n − 1's
  final vector is asked for.

Attention is batched as (B, kv_heads, group, n, n) over a (B, heads, n, d_k) query array in which a
variant's rows before its start are zeros (their outputs are never read; a zero query gives
finite uniform weights, no NaN). Everything is float32 in the same order of operations as
:func:`engine.models.llama.forward`, so a variant's numbers equal a forward run's up to the
GEMMs' summation order (tests/engine/analysis/test_patching.py checks the grids against transformers within 1e-3).

Switched-off heads (``ablate``): their outputs are zeroed before W_O in every layer a variant
runs, as the hook on hook_z does in :func:`engine.models.llama.forward`; ``base`` must be the run
with the same heads off (its keys and values are what the variants' prefixes read).

Memory: chunks of variants of at most ``ROWS_PER_CHUNK`` packed rows; the largest temporaries are
the MLP's (R, 2·d_ff) and the scores (B, heads, n, n) of a chunk.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.attention import causal_mask, softmax_into
from ..core.positional import rope_tables
from ..core.layers import rms_norm
from .llama import DTYPE, DecoderConfig, DecoderTrace, DecoderWeights, apply_rope, mlp, normalize

ROWS_PER_CHUNK = 2048  # packed rows of one chunk: (2048, 2·d_ff) float32 is 25 MB on SmolLM2


def packed_positions(n: int, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(variant, position) of every packed row, (R,) each: variant b's rows starts[b] … n − 1 in order."""
    starts = np.asarray(starts, dtype=np.int64)
    counts = n - starts  # (B,)
    variant = np.repeat(np.arange(len(starts)), counts)  # (R,)
    offsets = np.cumsum(counts) - counts  # (B,) first packed row of each variant
    position = np.arange(int(counts.sum())) - np.repeat(offsets, counts) + np.repeat(starts, counts)
    return variant, position


def chunk_variants(n: int, starts: np.ndarray, rows: int | None = None) -> list[slice]:
    """Contiguous slices of the variants with at most ``rows`` (default ROWS_PER_CHUNK) packed rows
    each (at least one variant)."""
    rows = ROWS_PER_CHUNK if rows is None else rows
    counts = n - np.asarray(starts, dtype=np.int64)
    out, begin, total = [], 0, 0
    for b, count in enumerate(counts):
        if total and total + count > rows:
            out.append(slice(begin, b))
            begin, total = b, 0
        total += int(count)
    out.append(slice(begin, len(counts)))
    return out


def final_vectors(weights: DecoderWeights, config: DecoderConfig, base: DecoderTrace, first: int,
                  starts: np.ndarray, rows: np.ndarray, ablate: frozenset = frozenset()) -> np.ndarray:
    """(B, d) float32: position n − 1 of each variant after the final norm.

    ``base``: the run the variants differ from, with keys and values at every layer and position.
    ``first``: the layer the variants enter (0 … layers; ``layers``: no layer runs, only the final
    norm). ``starts`` (B,): variant b equals ``base`` at positions before starts[b] in every layer
    from ``first`` on. ``rows`` (R, d): the packed residuals entering layer ``first``, variant b's
    positions starts[b] … n − 1 in order (:func:`packed_positions`). ``ablate``: (layer, head)
    pairs switched off (zeroed before W_O), the same as ``base``'s."""
    starts = np.asarray(starts, dtype=np.int64)
    n = base.n
    out = np.empty((len(starts), config.hidden_size), DTYPE)
    off: dict[int, list[int]] = {}
    for layer, head in sorted(ablate):
        off.setdefault(layer, []).append(head)
    offset = 0
    for part in chunk_variants(n, starts):
        count = int((n - starts[part]).sum())
        out[part] = _chunk(weights, config, base, first, starts[part], rows[offset: offset + count], off)
        offset += count
    return out


def _chunk(weights, config, base, first, starts, rows, off) -> np.ndarray:
    c = config
    n, layers = base.n, c.num_layers
    heads, kv, d_k = c.num_heads, c.num_kv_heads, c.head_dim
    group, batch = heads // kv, len(starts)
    variant, position = packed_positions(n, starts)
    last_rows = np.flatnonzero(position == n - 1)  # (B,) each variant's row n − 1, in variant order
    h = np.array(rows, dtype=DTYPE)  # (R, d) the packed residual stream
    rotary = c.positions == "rotary"
    if rotary:
        cos, sin = rope_tables(weights.inverse_frequency, 0, n)  # (n, d_k/2)
        cos, sin = cos[position], sin[position]  # (R, d_k/2) each row at its own position
    mask = causal_mask(n)  # (n, n) True above the diagonal
    divisor = DTYPE(math.sqrt(d_k))
    for index in range(first, layers):
        w = weights.layers[index]
        x = normalize(h, w.attention_norm, w.attention_norm_bias, c)  # (R, d)
        qkv = x @ w.qkv_weight  # (R, (heads + 2·kv)·d_k)
        if w.qkv_bias is not None:
            qkv += w.qkv_bias
        qkv = qkv.reshape(len(h), heads + 2 * kv, d_k).transpose(1, 0, 2)  # (heads + 2·kv, R, d_k) view
        if w.q_norm is not None:  # Qwen3
            rms_norm(qkv[:heads], w.q_norm, c.rms_norm_eps, out=qkv[:heads])
            rms_norm(qkv[heads: heads + kv], w.k_norm, c.rms_norm_eps, out=qkv[heads: heads + kv])
        if rotary:
            apply_rope(qkv[: heads + kv], cos, sin, c.rope_style)
        # a copy per variant, kept: SmolLM2's 16-token residual grid copies K and V 465 times (each row's
        # layers) for ~4 ms of a grid of seconds; sharing base's prefix would split every score GEMM in two
        keys = np.repeat(base.k[index][None], batch, axis=0)  # (B, kv, n, d_k): the base run's …
        values = np.repeat(base.v[index][None], batch, axis=0)
        keys[variant, :, position] = qkv[heads: heads + kv].transpose(1, 0, 2)  # … with the variants' rows
        values[variant, :, position] = qkv[heads + kv:].transpose(1, 0, 2)
        q = qkv[:heads].transpose(1, 0, 2)  # (R, heads, d_k)
        if index == layers - 1:  # only position n − 1 is read after the last layer
            h, q, variant_rows = h[last_rows], q[last_rows], None
            queries = q.reshape(batch, kv, group, 1, d_k)  # (B, kv, group, 1, d_k)
            scores = queries @ keys[:, :, None].transpose(0, 1, 2, 4, 3)  # (B, kv, group, 1, n)
        else:
            variant_rows = (variant, position)
            queries = np.zeros((batch, heads, n, d_k), DTYPE)  # rows before a variant's start stay 0
            queries[variant, :, position] = q
            queries = queries.reshape(batch, kv, group, n, d_k)
            scores = queries @ keys[:, :, None].transpose(0, 1, 2, 4, 3)  # (B, kv, group, n, n)
            scores[..., mask] = -np.inf
        scores /= divisor
        softmax_into(scores, scores)  # the attention kernel's softmax (engine.core.attention), in place
        z = scores @ values[:, :, None]  # (B, kv, group, n or 1, d_k)
        z = z.reshape(batch, heads, -1, d_k)  # (B, heads, n or 1, d_k)
        z = z[variant_rows[0], :, variant_rows[1]] if variant_rows else z[:, :, 0]  # (rows, heads, d_k)
        if index in off:  # switched-off heads: zeroed before W_O (the hook on hook_z of a forward run)
            z[:, off[index]] = 0.0
        attn_out = z.reshape(len(h), heads * d_k) @ w.output_weight  # (rows, d)
        if w.output_bias is not None:
            attn_out += w.output_bias
        h += attn_out
        h += mlp(normalize(h, w.ffn_norm, w.ffn_norm_bias, c), w, c)
    if first >= layers:
        h = h[last_rows]
    return normalize(h, weights.output_norm, weights.output_norm_bias, c)  # (B, d)
