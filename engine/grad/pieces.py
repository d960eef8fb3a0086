"""The backward of the layers every block is made of, on batched float32 arrays: the norms, the
MLP activations, RoPE, and softmax attention with grouped-query heads (and the newer families'
sliding window and soft-capped scores).

Each forward here keeps what its backward reads (a small tuple, the "saved" activations); the
backward takes the gradient of the output and returns the gradient of the input. Only gradients
of activations are made, never of weights: a linear layer's backward is one matmul with the
transposed weight, so a backward costs about what its forward does.

Shapes: B a batch of inputs (the steps of integrated gradients; 1 otherwise), n positions,
d the model width, H query heads and K key/value heads of d_k, G = H / K heads a group.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.errors import EngineError
from ..core import positional
from ..core.layers import erf, gelu, gelu_tanh, silu_mul
from ..models.block_features import soft_cap, window_mask

DTYPE = np.float32


def check_finite(array: np.ndarray, layer: int) -> None:
    """EngineError naming the layer whose output is NaN or infinite (a damaged weight there): a
    gradient through it would be NaN everywhere below, and nothing of it is shown."""
    if not np.isfinite(array).all():
        raise EngineError("the forward pass became NaN or infinite in layer {layer}: a weight there is damaged; "
                          "no gradient", field="model", layer=layer)


def linear(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """x (..., in) @ weight (in, out) as one 2-D matrix product over all rows: numpy's stacked
    matmul with a transposed weight (the backward's ``w.T``) runs one small product per leading index."""
    return (x.reshape(-1, x.shape[-1]) @ weight).reshape(*x.shape[:-1], weight.shape[1])


# ---------------------------------------------------------------- norms


def norm_forward(h: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, eps: float, kind: str):
    """RMSNorm ("rms") or LayerNorm ("layer") of h (..., d) over the last axis → (out, saved).

    saved = (normalized (…, d) before γ, 1/scale (…, 1), γ): what :func:`norm_backward` reads."""
    source = h - h.mean(axis=-1, keepdims=True) if kind == "layer" else h
    inverse = np.einsum("...i,...i->...", source, source)[..., None]  # (..., 1)
    inverse *= DTYPE(1.0 / h.shape[-1])
    inverse += DTYPE(eps)
    np.sqrt(inverse, out=inverse)
    np.reciprocal(inverse, out=inverse)
    normalized = source * inverse  # (..., d)
    out = normalized * weight
    if bias is not None and kind == "layer":
        out += bias
    return out, (normalized, inverse, weight, kind)


def norm_backward(grad_out: np.ndarray, saved) -> np.ndarray:
    """∂/∂h of a norm from ∂/∂out: r·(g − x̂·mean(g·x̂)) for RMSNorm, and also − mean(g) for
    LayerNorm (its centring), with g = ∂/∂out · γ and x̂ the normalized input."""
    normalized, inverse, weight, kind = saved
    g = grad_out * weight  # (..., d)
    d = g.shape[-1]
    projection = np.einsum("...i,...i->...", g, normalized)[..., None] * DTYPE(1.0 / d)  # (..., 1)
    grad = g - normalized * projection
    if kind == "layer":
        grad -= g.mean(axis=-1, keepdims=True)
    grad *= inverse
    return grad


# ---------------------------------------------------------------- MLP activations


def silu_mul_forward(gate: np.ndarray, up: np.ndarray) -> np.ndarray:
    """SiLU(gate) ⊙ up, the forward's own function on a copy: gate and up stay as they were (the
    backward reads them)."""
    return silu_mul(np.array(gate), up)


def silu_mul_backward(grad: np.ndarray, gate: np.ndarray, up: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(∂/∂gate, ∂/∂up) of SiLU(gate)·up: SiLU'(g) = σ(g)·(1 + g·(1 − σ(g)))."""
    with np.errstate(over="ignore"):
        sigmoid = 1.0 / (1.0 + np.exp(-gate))
    silu = gate * sigmoid
    derivative = sigmoid * (DTYPE(1.0) + gate * (DTYPE(1.0) - sigmoid))
    return grad * up * derivative, grad * silu


_SQRT_HALF = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_C = math.sqrt(2.0 / math.pi)


def gelu_forward(x: np.ndarray, tanh: bool) -> np.ndarray:
    """Exact GELU x·Φ(x) or its tanh form (GPT-2's gelu_new): the forward's own functions, a new array."""
    return gelu_tanh(x) if tanh else gelu(x)


def gelu_backward(grad: np.ndarray, x: np.ndarray, tanh: bool) -> np.ndarray:
    """∂/∂x of GELU: Φ(x) + x·φ(x) (exact); the tanh form's own derivative."""
    if tanh:
        inner = DTYPE(_TANH_C) * (x + DTYPE(0.044715) * x * x * x)
        t = np.tanh(inner)
        d_inner = DTYPE(_TANH_C) * (DTYPE(1.0) + DTYPE(3 * 0.044715) * x * x)
        return grad * (DTYPE(0.5) * (DTYPE(1.0) + t) + DTYPE(0.5) * x * (DTYPE(1.0) - t * t) * d_inner)
    cdf = DTYPE(0.5) + DTYPE(0.5) * erf(x * DTYPE(_SQRT_HALF))
    pdf = DTYPE(_INV_SQRT_2PI) * np.exp(DTYPE(-0.5) * x * x)
    return grad * (cdf + x * pdf)


# ---------------------------------------------------------------- RoPE


def rotate(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, style: str) -> np.ndarray:
    """x (…, n, d_k) rotated by the angles whose cos, sin (n, d_k/2) are given, as a new array (the
    forward's engine.core.positional.rotate on a copy). The backward of a rotation is the rotation by
    the opposite angle: ``rotate(grad, cos, -sin, style)``."""
    return positional.rotate(np.array(x), cos, sin, style)


# ---------------------------------------------------------------- attention


def _scores(q: np.ndarray, k: np.ndarray, divisor: float) -> np.ndarray:
    """(B, H, n, n) q·kᵀ / divisor, a new array; query head h reads key head h // G."""
    batch, heads, n, d_k = q.shape
    kv = k.shape[1]
    grouped = q.reshape(batch, kv, heads // kv * n, d_k)  # (B, K, G·n, d_k): a group's queries stacked
    scores = grouped @ k.transpose(0, 1, 3, 2)  # (B, K, G·n, n)
    scores *= scores.dtype.type(1.0 / divisor)
    return scores.reshape(batch, heads, n, n)


def attention_forward(q: np.ndarray, k: np.ndarray, v: np.ndarray, divisor: float, causal: bool, *,
                      window: int = 0, softcap: float = 0.0):
    """Softmax attention with grouped-query heads → (z, pattern).

    q (B, H, n, d_k), k and v (B, K, n, d_k); z (B, H, n, d_k), pattern (B, H, n, n). Query head h
    reads key/value head h // G (transformers' repeat_kv). ``softcap``: the scores become
    cap·tanh(s / cap) before the mask (Gemma 2); ``window``: a query sees only itself and the
    window − 1 keys before it (engine.models.block_features, as the forward's attend_features)."""
    batch, heads, n, d_k = q.shape
    kv = k.shape[1]
    scores = _scores(q, k, divisor)  # (B, H, n, n)
    if softcap:
        soft_cap(scores, softcap)
    if causal:
        scores[..., window_mask(n, n, window)] = -np.inf
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    pattern = scores
    z = (pattern.reshape(batch, kv, heads // kv * n, n) @ v).reshape(batch, heads, n, d_k)
    return z, pattern


def attention_backward(grad_z: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray, pattern: np.ndarray,
                       divisor: float, softcap: float = 0.0):
    """(∂/∂q, ∂/∂k, ∂/∂v, ∂/∂pattern) from ∂/∂z, shapes as :func:`attention_forward`'s.

    ∂/∂pattern = ∂z·vᵀ on every cell (above the diagonal too, as autograd gives it: the cell's
    weight is 0 there but a change of it would reach z); through the softmax only the cells
    with weight pass: ∂/∂scores = P ⊙ (∂P − Σ_j ∂P·P). With soft-capping, times the cap's
    derivative 1 − tanh²(s / cap), its scores s recomputed from q and k (one matmul; keeping them
    would double the saved pattern's memory)."""
    batch, heads, n, d_k = q.shape
    kv = k.shape[1]
    group = heads // kv
    grad_z_grouped = grad_z.reshape(batch, kv, group * n, d_k)  # (B, K, G·n, d_k)
    grad_pattern = (grad_z_grouped @ v.transpose(0, 1, 3, 2)).reshape(batch, heads, n, n)  # (B, H, n, n)
    pattern_grouped = pattern.reshape(batch, kv, group * n, n)
    grad_v = pattern_grouped.transpose(0, 1, 3, 2) @ grad_z_grouped  # (B, K, n, d_k), summed over the group
    grad_scores = grad_pattern - np.einsum("bhij,bhij->bhi", grad_pattern, pattern)[..., None]
    grad_scores *= pattern
    if softcap:
        capped = _scores(q, k, divisor)  # (B, H, n, n) the raw scores
        capped *= capped.dtype.type(1.0 / softcap)
        np.tanh(capped, out=capped)
        grad_scores *= 1 - capped * capped
    grad_scores *= grad_scores.dtype.type(1.0 / divisor)
    grad_scores = grad_scores.reshape(batch, kv, group * n, n)
    grad_q = (grad_scores @ k).reshape(batch, heads, n, d_k)
    grad_k = grad_scores.transpose(0, 1, 3, 2) @ q.reshape(batch, kv, group * n, d_k)  # (B, K, n, d_k)
    return grad_q, grad_k, grad_v, grad_pattern
