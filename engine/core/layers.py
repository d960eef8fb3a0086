"""The layers every block is made of, on arrays (no configs): LayerNorm, RMSNorm, the exact and the
tanh GELU, SwiGLU's SiLU·mul; and the norms step by step for the hook points inside them.

GELU needs erf, which NumPy lacks: :func:`erf` is a rational approximation
x·P(x²)/Q(x²) (degrees 6 and 5 in x²) clamped at |x| = 4.2, fitted here by weighted least
squares against ``math.erf``. Its approximation error is 1.7e-9 (measured on 400,001 points
of [0, 8] in float64); evaluated in float32 the rounding of the arithmetic dominates:
≤ 4e-7 on erf, ≤ 2.8e-7·max(1, |x|) on GELU — about the same as PyTorch's own float32 GELU (2.7e-7·|x|,
it uses Abramowitz–Stegun 7.1.26). It costs only multiplications, additions and one
division (NumPy's float32 ``exp`` is ~13× slower than a multiplication here).
"""
from __future__ import annotations

import math
import threading
from typing import Callable, Sequence

import numpy as np

# erf(x) ≈ x · P(x²) / Q(x²) for |x| ≤ ERF_CLAMP; erf(±ERF_CLAMP) = ±(1 − 2.9e-9).
ERF_CLAMP = 4.2
ERF_P = (
    1.1283791836041104,
    0.184676674055032,
    0.05438108277738256,
    0.0038449902605459736,
    0.0003849724286367053,
    4.842488377950999e-06,
    -1.3986355025641895e-08,
)
ERF_Q = (
    1.0,
    0.4969990060039535,
    0.1138592553543185,
    0.015472476553996027,
    0.0013137471523522273,
    6.459512607332526e-05,
)


def _horner(s: np.ndarray, coefficients: Sequence[float]) -> np.ndarray:
    """Σ c_i s^i by Horner's rule with one new array, in s's dtype."""
    dtype = s.dtype.type
    result = s * dtype(coefficients[-1])
    for c in coefficients[-2:0:-1]:
        result += dtype(c)
        result *= s
    result += dtype(coefficients[0])
    return result


def erf(x: np.ndarray) -> np.ndarray:
    """Error function, elementwise, in x's float dtype (float32 or float64).

    Approximation error 1.7e-9; float32 arithmetic adds up to ~4e-7 of rounding.
    """
    x = np.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(np.float64)
    u = np.clip(x, -ERF_CLAMP, ERF_CLAMP)
    s = u * u
    result = _horner(s, ERF_P)
    result /= _horner(s, ERF_Q)
    result *= u
    return result


# GELU(x) = x · Φ(x) = x · (1/2 + 1/2 · erf(x/√2)). With v = clip(x, ±4.2·√2) and s = v²:
# 1/2 · erf(v/√2) = v · P(s/2) / (2√2 · Q(s/2)); fold the 1/2^i and 1/(2√2) into the coefficients.
_GELU_CLAMP = ERF_CLAMP * math.sqrt(2.0)
_GELU_P = tuple(c / 2**i / (2.0 * math.sqrt(2.0)) for i, c in enumerate(ERF_P))
_GELU_Q = tuple(c / 2**i for i, c in enumerate(ERF_Q))


def _gelu_block(x: np.ndarray, out: np.ndarray, scratch: Sequence[np.ndarray] | None = None) -> None:
    """out = GELU(x) for one block (``out`` may be ``x``); ``scratch``: four buffers of x's
    dtype with ≥ x.size numbers each, reused from call to call."""
    if scratch is None:
        scratch = [np.empty(x.size, dtype=x.dtype) for _ in range(4)]
    v, s, p, q = (buffer[: x.size].reshape(x.shape) for buffer in scratch)
    dtype = x.dtype.type
    np.clip(x, -_GELU_CLAMP, _GELU_CLAMP, out=v)
    np.multiply(v, v, out=s)
    np.multiply(s, dtype(_GELU_P[-1]), out=p)
    for c in _GELU_P[-2:0:-1]:
        p += dtype(c)
        p *= s
    p += dtype(_GELU_P[0])
    np.multiply(s, dtype(_GELU_Q[-1]), out=q)
    for c in _GELU_Q[-2:0:-1]:
        q += dtype(c)
        q *= s
    q += dtype(_GELU_Q[0])
    p /= q
    p *= v  # ½ erf(x/√2)
    p += dtype(0.5)  # Φ(x)
    np.multiply(x, p, out=out)


# Numbers per block: 128 Ki float32 = 512 KiB. Each block runs ~25 ufunc passes through four
# scratch buffers kept per thread, so nothing is allocated (no fresh pages to fault in).
# Blocks of 64 Ki–256 Ki numbers are fastest (measured: benchmarks/README.md); row slices on the
# engine's threads come from forward() (engine/core/parallel.py), each slice with its own scratch.
GELU_BLOCK_ELEMENTS = 1 << 17

_local = threading.local()


def gelu(x: np.ndarray, out: np.ndarray | None = None, bias: np.ndarray | None = None) -> np.ndarray:
    """Exact (erf) GELU, x · Φ(x), elementwise in x's dtype; ``out`` may be ``x`` (in place).

    ``bias`` (x.shape[-1],): GELU(x + bias), the sum made block by block while the block is in
    cache (the same numbers as ``x += bias`` first, one pass over memory fewer)."""
    x = np.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(np.float64)
    if out is None:
        out = np.empty_like(x)
    if not (x.flags.c_contiguous and out.flags.c_contiguous) or out.dtype != x.dtype or x.ndim == 0:
        if bias is not None:
            x = np.add(x, bias, dtype=x.dtype)
        _gelu_block(x, out)
        return out
    if bias is None:  # flat blocks
        flat_x, flat_out, step = x.reshape(-1), out.reshape(-1), GELU_BLOCK_ELEMENTS
    else:  # blocks of whole rows, so that the bias lines up
        width = x.shape[-1]
        flat_x, flat_out = x.reshape(-1, width), out.reshape(-1, width)
        step = max(1, GELU_BLOCK_ELEMENTS // width)
    scratch = getattr(_local, "gelu_scratch", None)
    size = max(GELU_BLOCK_ELEMENTS, flat_x[:step].size)
    if scratch is None or scratch[0].dtype != x.dtype or scratch[0].size < size:
        scratch = _local.gelu_scratch = [np.empty(size, dtype=x.dtype) for _ in range(4)]
    for begin in range(0, len(flat_x), step):
        block = slice(begin, begin + step)
        if bias is None:
            _gelu_block(flat_x[block], flat_out[block], scratch)
        else:
            np.add(flat_x[block], bias, out=flat_out[block])
            _gelu_block(flat_out[block], flat_out[block], scratch)
    return out


def layer_norm(
    x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float, out: np.ndarray | None = None
) -> np.ndarray:
    """LayerNorm over the last axis (biased variance, as PyTorch): (x − μ)/√(σ² + eps)·γ + β."""
    centered = np.subtract(x, x.mean(axis=-1, keepdims=True), out=out)
    variance = np.einsum("...i,...i->...", centered, centered)[..., None]  # (n, 1)
    variance *= centered.dtype.type(1.0 / x.shape[-1])
    variance += centered.dtype.type(eps)
    np.sqrt(variance, out=variance)
    np.reciprocal(variance, out=variance)  # (n, 1): one division per row, not per number
    centered *= variance
    centered *= weight
    centered += bias
    return centered


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float, out: np.ndarray | None = None) -> np.ndarray:
    """x / √(mean(x²) + ε) · γ over the last axis (Zhang & Sennrich 2019), in x's dtype."""
    mean_square = np.einsum("...i,...i->...", x, x)[..., None]  # (..., 1)
    mean_square *= x.dtype.type(1.0 / x.shape[-1])
    mean_square += x.dtype.type(eps)
    np.sqrt(mean_square, out=mean_square)
    np.reciprocal(mean_square, out=mean_square)  # one division per row
    out = np.multiply(x, mean_square, out=out)
    out *= weight
    return out


def gelu_tanh(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """GELU's tanh approximation, ½x(1 + tanh(√(2/π)(x + 0.044715x³))): GPT-2's "gelu_new"."""
    t = x * x
    t *= x.dtype.type(0.044715)
    t += x.dtype.type(1.0)
    t *= x
    t *= x.dtype.type(math.sqrt(2.0 / math.pi))
    np.tanh(t, out=t)
    t += x.dtype.type(1.0)
    t *= x.dtype.type(0.5)
    return np.multiply(x, t, out=out)


def silu_mul(gate: np.ndarray, up: np.ndarray) -> np.ndarray:
    """SiLU(gate) ⊙ up = gate / (1 + e^(−gate)) ⊙ up, in place in ``gate``."""
    denominator = np.negative(gate)
    with np.errstate(over="ignore"):  # e^(88+) → inf → gate / inf = 0, SiLU's limit
        np.exp(denominator, out=denominator)
    denominator += gate.dtype.type(1.0)
    gate /= denominator
    gate *= up
    return gate


def norm_steps(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, eps: float, kind: str,
               edit: Callable[[str, np.ndarray], np.ndarray], point: str, out: np.ndarray | None = None) -> np.ndarray:
    """The norm of ``x`` (rows, d) step by step through the hook points inside it, as TransformerLens's
    LayerNorm / RMSNorm modules hold them: ``{point}.hook_scale`` (rows, 1) the divisor √(mean(x²) + ε)
    (LayerNorm: of the centred x), ``{point}.hook_normalized`` (rows, d) x / scale (LayerNorm:
    (x − μ) / scale) BEFORE the weight, ``{point}.hook_out`` (rows, d) normalized · γ (+ β).

    ``kind``: "rms" or "layer" (``bias``: LayerNorm's β; an RMSNorm has none, a bias given to it is
    not added, as the decoder's ``normalize``). ``edit(name, array)`` runs a point's hooks (a replacement is
    written into ``array``); what follows is computed from what the hooks left. The arithmetic is
    :func:`rms_norm`'s and :func:`layer_norm`'s (one reciprocal a row, then products), so with no
    replacement the numbers are theirs exactly."""
    dtype = x.dtype.type
    source = np.subtract(x, x.mean(axis=-1, keepdims=True)) if kind == "layer" else x  # (rows, d)
    scale = np.einsum("...i,...i->...", source, source)[..., None]  # (rows, 1)
    scale *= dtype(1.0 / x.shape[-1])
    scale += dtype(eps)
    np.sqrt(scale, out=scale)
    edit(f"{point}.hook_scale", scale)
    normalized = np.multiply(source, np.reciprocal(scale))  # (rows, d)
    edit(f"{point}.hook_normalized", normalized)
    out = np.multiply(normalized, weight, out=out)
    if bias is not None and kind == "layer":
        out += bias
    edit(f"{point}.hook_out", out)
    return out
