"""The attention of a decoder layer with a sliding window or soft-capped scores (Mistral, Gemma 2/3).

A layer whose attention is plain softmax(q·kᵀ / divisor + causal mask) runs in
engine.core.attention.attend_weights' fused tiles; a layer with either feature runs here, all its
query rows at once (the (heads, new, n) scores of one layer: the size of the weights the trace keeps):

    scores  = (q / divisor) · kᵀ                       divisor = √query_pre_attn_scalar (Gemma) or √d_head
    scores  = cap · tanh(scores / cap)                 attention-logit soft-capping (Gemma 2), before the mask
    scores[i, j] = −∞  unless  i − window < j ≤ i       the causal mask, narrowed to the last ``window`` keys
    weights = softmax(scores),  head outputs = weights · v

as transformers computes them (``sliding_window_overlay``: key j is seen by query i when
j > i − window). :func:`window_mask` is the mask the window's views draw; :func:`soft_cap` the capping
the final logits share. Both are small enough to be their own float64 references in the tests.

:func:`scaled_frequencies` is RoPE's frequency scaling of the long-context models: "linear" (every
θ_i / factor: Gemma 3's global layers) and "llama3" (Llama 3.1/3.2: long wavelengths / factor, short
ones kept, a smooth blend between), as transformers' ``_compute_llama3_parameters`` computes it.
"""
from __future__ import annotations

import math

import numpy as np


def window_mask(n_queries: int, n_keys: int, window: int = 0) -> np.ndarray:
    """(n_queries, n_keys) bool, True where a key is hidden: after the query (causal) or, with a
    window, ``window`` or more positions before it. Query i sits at position n_keys − n_queries + i."""
    position = np.arange(n_keys - n_queries, n_keys)[:, None]  # (n_q, 1)
    keys = np.arange(n_keys)[None, :]  # (1, n_k)
    hidden = keys > position
    if window:
        hidden |= keys <= position - window
    return hidden


def soft_cap(values: np.ndarray, cap: float) -> np.ndarray:
    """cap · tanh(values / cap), in place: values stay in (−cap, cap), nearly unchanged when small."""
    values *= values.dtype.type(1.0 / cap)
    np.tanh(values, out=values)
    values *= values.dtype.type(cap)
    return values


def attend_features(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, divisor: float, window: int = 0,
                    softcap: float = 0.0, weights_out: np.ndarray | None = None,
                    scaled_out: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """q (heads, n_q, d_k), k and v (kv_heads, n_k, d_k) → {"weights": (heads, n_q, n_k),
    "head_outputs": (heads, n_q, d_k), "scaled": the masked, capped scores} (see the module doc).
    ``scaled_out``: where the scores go when a hook listens to them."""
    heads, n_queries, d_k = q.shape
    kv_heads, n_keys = k.shape[0], k.shape[1]
    group = heads // kv_heads
    scaled = q.reshape(kv_heads, group * n_queries, d_k) * q.dtype.type(1.0 / divisor) @ k.transpose(0, 2, 1)
    scaled = scaled.reshape(heads, n_queries, n_keys)  # (heads, n_q, n_k)
    if softcap:
        soft_cap(scaled, softcap)
    scaled[:, window_mask(n_queries, n_keys, window)] = -np.inf
    if scaled_out is not None:
        scaled_out[...] = scaled
        scaled = scaled_out
    weights = np.empty_like(scaled) if weights_out is None else weights_out
    # straight into the weights (no third (heads, n_q, n_k) array); every row sees at least itself: finite maxima
    np.subtract(scaled, scaled.max(axis=-1, keepdims=True), out=weights)
    np.exp(weights, out=weights)
    weights /= weights.sum(axis=-1, keepdims=True)
    values = v if group == 1 else np.repeat(v, group, axis=0)  # (heads, n_k, d_k)
    head_outputs = weights @ values  # (heads, n_q, d_k)
    return {"weights": weights, "head_outputs": head_outputs, "scaled": scaled}


def scaled_frequencies(inverse_frequency: np.ndarray, scaling: tuple) -> np.ndarray:
    """(d_k/2,) float64 RoPE frequencies after the model's scaling: () none, ("linear", factor), or
    ("llama3", factor, low_freq_factor, high_freq_factor, original_max_position_embeddings)."""
    if not scaling:
        return inverse_frequency
    if scaling[0] == "linear":
        return inverse_frequency / scaling[1]
    _, factor, low, high, context = scaling
    wavelength = 2 * math.pi / inverse_frequency
    long_waves = wavelength > context / low  # divided by the factor
    short_waves = wavelength < context / high  # kept
    smooth = (context / wavelength - low) / (high - low)
    blended = (1 - smooth) * inverse_frequency / factor + smooth * inverse_frequency
    return np.where(long_waves, inverse_frequency / factor, np.where(short_waves, inverse_frequency, blended))
