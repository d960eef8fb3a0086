"""Positional information: sinusoidal encodings (added) and rotary embeddings (RoPE, rotated).

- Sinusoidal, "Attention Is All You Need" §3.5: PE[pos, 2i] = sin(pos / 10000^(2i/d_model)),
  PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model)); added to the token embeddings.
- RoPE, Su et al. "RoFormer" (2021) eq. 34: inside each head the interleaved pairs
  (2i, 2i+1) of q and k are rotated by the angle pos · 10000^(−2i/d_k), pos = token index.
  Then q_m · k_n depends only on m − n.

The one RoPE of the engine: the toy (:func:`apply_rope`) and every rotary decoder
(engine.models.llama: :func:`rope_tables`, :func:`rotate`, with the model's base and either pair layout).
"""
from __future__ import annotations

import threading

import numpy as np

DTYPE = np.float32


def sinusoidal(n: int, d_model: int) -> np.ndarray:
    """Sinusoidal positional encodings (n, d_model); an odd last column gets its sin."""
    positions = np.arange(n, dtype=np.float64)[:, None]  # (n, 1)
    pair_index = np.arange(0, d_model, 2, dtype=np.float64)  # 2i: (ceil(d/2),)
    angles = positions / np.power(10000.0, pair_index / d_model)  # (n, ceil(d/2))
    encoding = np.empty((n, d_model), dtype=np.float64)
    encoding[:, 0::2] = np.sin(angles)
    encoding[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return encoding.astype(DTYPE)


def inverse_frequencies(d_k: int, base: float = 10000.0) -> np.ndarray:
    """θ_i = base^(−2i/d_k), (d_k/2,) float64."""
    return base ** (-np.arange(0, d_k, 2, dtype=np.float64) / d_k)


def rope_angles(n: int, d_k: int, start: int = 0, inverse_frequency: np.ndarray | None = None) -> np.ndarray:
    """Rotation angle of pair i at position pos: pos · θ_i for pos = start … start+n−1, (n, d_k/2) float64."""
    if inverse_frequency is None:
        inverse_frequency = inverse_frequencies(d_k)
    return np.arange(start, start + n, dtype=np.float64)[:, None] * inverse_frequency[None, :]


def rope_tables(inverse_frequency: np.ndarray, start: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """cos, sin (n, d_k/2) float32 of the angles pos · θ_i for positions start … start+n−1
    (angles in float64, as transformers computes them in float32 from float32 positions;
    the difference is below float32 rounding for the positions a trace can hold). Read-only
    views of a table kept per frequency vector and grown by doubling: a decoder asks for the
    same positions every run (SmolLM2 at 128 tokens: 2 ms of 30 layers' np.cos / np.sin)."""
    end = start + n
    key = inverse_frequency.tobytes()
    with _rope_lock:
        tables = _rope_tables.get(key)
        if tables is None or len(tables[0]) < end:
            size = max(64, 1 << (end - 1).bit_length())  # the next power of two
            angles = rope_angles(size, 2 * len(inverse_frequency), 0, inverse_frequency)
            tables = (np.cos(angles).astype(DTYPE), np.sin(angles).astype(DTYPE))
            for table in tables:
                table.flags.writeable = False
            if len(_rope_tables) >= 8:  # a few models' worth
                _rope_tables.pop(next(iter(_rope_tables)))
            _rope_tables[key] = tables
    return tables[0][start:end], tables[1][start:end]


_rope_tables: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}  # frequency vector → (cos, sin) from position 0
_rope_lock = threading.Lock()


def rotate(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, style: str = "adjacent") -> np.ndarray:
    """Rotate x (heads, n, d_k) in place by cos, sin (n, d_k/2): pairs (2i, 2i+1) for
    "adjacent" (RoFormer's, llama.cpp's layout), (i, i + d_k/2) for "half" (Hugging Face's)."""
    half = x.shape[-1] // 2
    if style == "adjacent":
        first, second = x[..., 0::2], x[..., 1::2]  # (heads, n, d_k/2) views
    else:
        first, second = x[..., :half], x[..., half:]
    rotated_first = first * cos - second * sin
    second *= cos
    second += first * sin
    first[...] = rotated_first
    return x


def apply_rope(x: np.ndarray, angles: np.ndarray | None = None) -> np.ndarray:
    """Rotate interleaved pairs of ``x`` (heads, n, d_k) by their positions' angles; new array."""
    heads, n, d_k = x.shape
    if angles is None:
        angles = rope_angles(n, d_k)
    return rotate(np.array(x), np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype))


def dot_by_distance(pe: np.ndarray, max_distance: int = 8) -> tuple[np.ndarray, float]:
    """Sinusoidal PE's dot products against distance (seed 004: the model can learn distance).

    Returns (PE[0] · PE[Δ] for Δ = 0 … min(max_distance, n − 1), float64) and the largest gap between
    PE[m] · PE[m + Δ] at any other start m and the value at m = 0: with an even d_model, PE[m]·PE[n] =
    Σ_i cos((m − n)·ω_i) depends on the distance only, so the gap is rounding.
    """
    pe = np.asarray(pe, dtype=np.float64)  # (n, d_model)
    n = pe.shape[0]
    last = max(0, min(int(max_distance), n - 1))
    dots = np.array([pe[0] @ pe[delta] for delta in range(last + 1)])  # (last + 1,)
    gap = 0.0
    for delta in range(last + 1):
        shifted = np.einsum("md,md->m", pe[: n - delta], pe[delta:])  # (n − Δ,) PE[m]·PE[m+Δ]
        gap = max(gap, float(np.abs(shifted - dots[delta]).max()))
    return dots, gap
