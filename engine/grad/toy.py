"""The toy engine's forward with its activations kept, and its backward (engine.toy.compute's one
attention layer), batched over B inputs of the same n positions.

The input is ``blocks.0.hook_resid_pre``: the token vectors plus the sinusoidal positions when the
settings add them (so ∂/∂hook_embed and ∂/∂hook_pos_embed equal ∂/∂input). The output is
``blocks.0.hook_attn_out`` = concat(z) · W_O: the toy has neither residual, MLP nor norm, and no
vocabulary, so its target is an encoder's (engine.grad.targets "cosine").

    x (B, n, d) → q, k, v = x·W_Q, x·W_K, x·W_V (hook_q/k/v) → RoPE on q, k when chosen
    (hook_rot_q/k) → scores / (√d_k or 1)·temperature, causal mask when chosen (hook_attn_scores)
    → softmax (hook_pattern) → pattern·v (hook_z; switched-off heads zero) → concat · W_O.

The backward hands back the gradient at every one of those points; a switched-off head's are 0
(its z never reaches W_O). The forward keeps B·(4·n·d + 2·H·n²) numbers (:func:`saved_bytes`).
"""
from __future__ import annotations

import math

import numpy as np

from ..core.positional import rope_angles, sinusoidal
from ..toy.compute import projection_matrices
from ..toy.embeddings import static_embeddings
from .pieces import DTYPE, attention_backward, attention_forward, check_finite, linear, rotate

STYLE = "adjacent"  # engine.core.positional.apply_rope's pairs (2i, 2i + 1)


def weights_of(config) -> dict[str, np.ndarray]:
    """W_Q, W_K, W_V, W_O (d, d) float32 that engine.toy.compute uses for ``config``."""
    return projection_matrices(config)[0]


def embed(weights, config, tokenized) -> np.ndarray:
    """(n, d) float32 ``blocks.0.hook_resid_pre`` of a tokenized text: the toy embeds a token by its
    text (its ids are positions), then adds the sinusoidal table when the settings say so."""
    x = static_embeddings([t.text for t in tokenized.tokens], config.d_model, config.seed, config.embeddings)
    if config.positional == "sinusoidal":
        x += sinusoidal(len(x), config.d_model)
    return x


def saved_bytes(config, batch: int, n: int) -> int:
    """Bytes a forward of ``batch`` inputs of ``n`` tokens keeps, plus the backward's temporaries."""
    d, heads = config.d_model, config.heads
    saved = n * 4 * d + 2 * heads * n * n  # q, k, v, x; the pattern and the scores' gradient
    temporary = 3 * heads * n * n + 6 * n * d
    return 4 * batch * (saved + temporary)


def _divisor(config) -> float:
    return (math.sqrt(config.d_k) if config.scale else 1.0) * config.temperature


def _rope_tables(n: int, d_k: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    angles = rope_angles(n, d_k)  # (n, d_k/2) float64, as apply_rope's
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)


def _heads(a: np.ndarray, heads: int) -> np.ndarray:
    """(B, n, d) → (B, heads, n, d_k)."""
    batch, n, d = a.shape
    return np.ascontiguousarray(a.reshape(batch, n, heads, d // heads).transpose(0, 2, 1, 3))


def _tokens_first(a: np.ndarray) -> np.ndarray:
    """(B, heads, n, d_k) → (B, n, heads, d_k): the hook points' layout."""
    return a.transpose(0, 2, 1, 3)


def forward(weights, config, h: np.ndarray, ablate=frozenset(), record: list | None = None):
    """h (B, n, d) the input → (output (B, n, d), saved activations); ``record``: a list that gets
    one dict of the values at the hook points (the keys engine.grad.encoder.forward records)."""
    heads = config.heads
    batch, n, d = h.shape
    mask = np.ones(heads, DTYPE)
    for _, head in ablate:
        mask[head] = 0.0
    h = np.array(h, dtype=np.promote_types(np.asarray(h).dtype, DTYPE))  # float64 for finite differences
    q, k, v = (_heads(linear(h, weights[name]), heads) for name in ("w_q", "w_k", "w_v"))  # (B, H, n, d_k)
    tables = None
    if config.positional == "rope":
        tables = _rope_tables(n, config.d_k, h.dtype)
        q, k = rotate(q, *tables, STYLE), rotate(k, *tables, STYLE)
    z, pattern = attention_forward(q, k, v, _divisor(config), causal=config.mask == "causal")
    z *= mask[None, :, None, None]
    output = linear(_tokens_first(z).reshape(batch, n, d), weights["w_o"])  # (B, n, d)
    if record is not None:
        record.append({"hook_resid_pre": h, "hook_attn_out": output, "attn.hook_z": _tokens_first(z)})
    check_finite(output, 0)
    return output, (q, k, v, pattern, tables, mask)


def backward(weights, config, saved, grad_out: np.ndarray, points: bool = True):
    """∂/∂input (B, n, d) from ∂/∂output, and (``points``) a one-layer list of {point: gradient} at
    hook_attn_out, attn.hook_z, hook_pattern, hook_attn_scores, hook_rot_q/k (RoPE only),
    hook_q/k/v and hook_resid_pre, in the hook points' layouts with a batch axis in front."""
    q, k, v, pattern, tables, mask = saved
    heads = config.heads
    grad_out = np.asarray(grad_out)
    batch, n, d = grad_out.shape
    divisor = _divisor(config)
    grad_z = _heads(linear(grad_out, weights["w_o"].T), heads)  # (B, H, n, d_k)
    grad_z *= mask[None, :, None, None]  # a switched-off head's z is a constant 0
    grad_q, grad_k, grad_v, grad_pattern = attention_backward(grad_z, q, k, v, pattern, divisor)
    grad_rot_q, grad_rot_k = grad_q, grad_k
    if tables is not None:  # the backward of a rotation is the rotation by the opposite angle
        cos, sin = tables
        grad_q, grad_k = rotate(grad_q, cos, -sin, STYLE), rotate(grad_k, cos, -sin, STYLE)
    grad = sum(linear(_tokens_first(g).reshape(batch, n, d), weights[name].T)
               for g, name in ((grad_q, "w_q"), (grad_k, "w_k"), (grad_v, "w_v")))  # (B, n, d)
    if not points:
        return grad, [None]
    # the scaled scores' gradient, through the softmax: P ⊙ (∂P − Σ_j ∂P·P) (0 where masked)
    grad_scores = grad_pattern - np.einsum("bhij,bhij->bhi", grad_pattern, pattern)[..., None]
    grad_scores *= pattern
    found = {"hook_attn_out": grad_out, "attn.hook_z": _tokens_first(grad_z), "attn.hook_pattern": grad_pattern,
             "attn.hook_attn_scores": grad_scores}
    if tables is not None:
        found |= {"attn.hook_rot_q": _tokens_first(grad_rot_q), "attn.hook_rot_k": _tokens_first(grad_rot_k)}
    found |= {"attn.hook_q": _tokens_first(grad_q), "attn.hook_k": _tokens_first(grad_k),
              "attn.hook_v": _tokens_first(grad_v), "hook_resid_pre": grad}
    return grad, [found]
