"""The pre-norm decoder's forward with its activations kept, and its backward (engine.models.llama's
block: RMSNorm or LayerNorm, RoPE or learned positions, grouped-query attention, SwiGLU / GeGLU /
GELU), batched over B inputs of the same n positions.

The input is ``blocks.0.hook_resid_pre``: the token embeddings (× √d for Gemma), plus the learned
position embeddings where the family has them (GPT-2), so a gradient "of the input" is of that sum.
The output is the final norm's (``hidden_states[-1]``, what the output head reads); a target
(engine.grad.targets) turns it into a scalar and gives the gradient back.

Per layer, the forward keeps (B·n·(2d + (H + 2K)·d_k + 2·d_ff) + B·H·n²) numbers (the norms'
normalized inputs, rotated q and k, v, the MLP's pre-activations, the pattern); :func:`saved_bytes`
says how many bytes a run keeps, checked against the memory budget before anything runs.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import EngineError
from ..core.positional import rope_tables
from .pieces import (DTYPE, attention_backward, attention_forward, check_finite, gelu_backward, gelu_forward,
                     linear, norm_backward, norm_forward, rotate, silu_mul_backward, silu_mul_forward)


def check_supported(config) -> None:
    """EngineError when the decoder's block has a feature this backward does not follow (windows,
    soft-capping, norms after attention and MLP, q/k norms, a second RoPE base)."""
    if not config.plain_block or config.qk_norm:
        raise EngineError("gradients follow the Llama, Qwen2 and GPT-2 blocks; {family} has features they do "
                          "not (sliding windows, soft-capping, q/k or output norms)", field="model",
                          family=config.architecture)


def embed(weights, config, ids: np.ndarray) -> np.ndarray:
    """(n, d) float32 ``blocks.0.hook_resid_pre`` of ``ids``: what the gradient of the input is taken of."""
    h = np.array(weights.token_embeddings[ids], dtype=DTYPE)
    if config.embed_scale:
        h *= DTYPE(np.sqrt(config.hidden_size))
    if config.positions == "learned":
        h += weights.position_embeddings[: len(ids)]
    return h


def saved_bytes(config, batch: int, n: int) -> int:
    """Bytes of the activations a forward of ``batch`` inputs of ``n`` tokens keeps for its backward,
    plus one layer's temporaries of the backward."""
    c = config
    per_layer = n * (2 * c.hidden_size + 2 + (c.num_heads + 2 * c.num_kv_heads) * c.head_dim
                     + 2 * c.intermediate_size) + c.num_heads * n * n
    temporary = 3 * c.num_heads * n * n + n * (6 * c.hidden_size + 3 * c.intermediate_size)
    return 4 * batch * (c.num_layers * per_layer + temporary + 2 * n * c.hidden_size)


def _ablation_mask(config, ablate) -> np.ndarray:
    """(layers, heads) float32: 0 for a switched-off head, 1 otherwise."""
    mask = np.ones((config.num_layers, config.num_heads), DTYPE)
    for layer, head in ablate:
        mask[layer, head] = 0.0
    return mask


def forward(weights, config, h: np.ndarray, ablate=frozenset(), record: list | None = None):
    """h (B, n, d) the input → (output (B, n, d) after the final norm, saved activations).

    ``record``: a list that gets, per layer, the values at its hook points {"hook_resid_pre",
    "hook_attn_out", "hook_mlp_out": (B, n, d), "attn.hook_z": (B, n, H, d_k) after switching off}."""
    c = config
    batch, n, d = h.shape
    heads, kv, d_k = c.num_heads, c.num_kv_heads, c.head_dim
    gated = c.mlp in ("swiglu", "geglu")
    cos, sin = rope_tables(weights.inverse_frequency, 0, n) if c.positions == "rotary" else (None, None)
    mask = _ablation_mask(c, ablate)
    h = np.array(h, dtype=np.promote_types(np.asarray(h).dtype, DTYPE))  # float64 for finite differences
    layers = []
    for index, w in enumerate(weights.layers):
        resid_pre = h  # not changed in place below: h is rebound to resid_pre + attn_out
        x, norm1 = norm_forward(h, w.attention_norm, w.attention_norm_bias, c.rms_norm_eps, c.norm)
        qkv = linear(x, w.qkv_weight)  # (B, n, (H + 2K)·d_k)
        if w.qkv_bias is not None:
            qkv += w.qkv_bias
        qkv = qkv.reshape(batch, n, heads + 2 * kv, d_k).transpose(0, 2, 1, 3)  # (B, H + 2K, n, d_k)
        q, k, v = qkv[:, :heads], qkv[:, heads: heads + kv], np.ascontiguousarray(qkv[:, heads + kv:])
        if cos is not None:
            q, k = rotate(q, cos, sin, c.rope_style), rotate(k, cos, sin, c.rope_style)
        else:
            q, k = np.ascontiguousarray(q), np.ascontiguousarray(k)
        z, pattern = attention_forward(q, k, v, c.score_divisor, causal=True)  # (B, H, n, d_k), (B, H, n, n)
        z *= mask[index][None, :, None, None]  # switched-off heads reach W_O as zeros
        attn_out = linear(z.transpose(0, 2, 1, 3).reshape(batch, n, heads * d_k), w.output_weight)  # (B, n, d)
        if w.output_bias is not None:
            attn_out += w.output_bias
        h = h + attn_out
        x2, norm2 = norm_forward(h, w.ffn_norm, w.ffn_norm_bias, c.rms_norm_eps, c.norm)
        up = linear(x2, w.gate_up_weight)  # (B, n, 2·d_ff) [gate | up] or (B, n, d_ff)
        if w.up_bias is not None:
            up += w.up_bias
        if gated:
            gate, value = up[..., : c.intermediate_size], up[..., c.intermediate_size:]
            activated = (silu_mul_forward(gate, value) if c.mlp == "swiglu"
                         else gelu_forward(gate, tanh=True) * value)
        else:
            activated = gelu_forward(up, tanh=c.mlp == "gelu_tanh")
        mlp_out = linear(activated, w.down_weight)
        if w.down_bias is not None:
            mlp_out += w.down_bias
        if record is not None:
            record.append({"hook_resid_pre": resid_pre, "hook_attn_out": attn_out, "hook_mlp_out": mlp_out,
                           "attn.hook_z": z.transpose(0, 2, 1, 3)})
        h += mlp_out
        check_finite(h, index)
        layers.append((norm1, q, k, v, pattern, norm2, up))
    out, final = norm_forward(h, weights.output_norm, weights.output_norm_bias, c.rms_norm_eps, c.norm)
    return out, (layers, final, cos, sin, mask)


def backward(weights, config, saved, grad_out: np.ndarray, points: bool = True):
    """∂/∂input (B, n, d) from ∂/∂output (B, n, d), and (``points``) per layer the gradients at
    its hook points: {"hook_resid_pre", "hook_attn_out", "hook_mlp_out": (B, n, d),
    "attn.hook_z": (B, n, H, d_k), "attn.hook_pattern": (B, H, n, n)}.

    A switched-off head's hook_z is zeroed before W_O: its gradient (of the value before the
    zeroing) is 0, and nothing flows back through its pattern, q, k or v."""
    c = config
    layers, final, cos, sin, mask = saved
    heads, kv, d_k = c.num_heads, c.num_kv_heads, c.head_dim
    gated = c.mlp in ("swiglu", "geglu")
    grad = norm_backward(np.asarray(grad_out), final)  # (B, n, d): ∂/∂ the last layer's output
    batch, n, d = grad.shape
    by_layer = [None] * len(layers)
    for index in range(len(layers) - 1, -1, -1):
        w = weights.layers[index]
        norm1, q, k, v, pattern, norm2, up = layers[index]
        grad_mlp_out = grad
        grad_activated = linear(grad_mlp_out, w.down_weight.T)  # (B, n, d_ff)
        if gated:
            gate, value = up[..., : c.intermediate_size], up[..., c.intermediate_size:]
            if c.mlp == "swiglu":
                grad_gate, grad_value = silu_mul_backward(grad_activated, gate, value)
            else:
                grad_gate = gelu_backward(grad_activated * value, gate, tanh=True)
                grad_value = grad_activated * gelu_forward(gate, tanh=True)
            grad_up = np.concatenate([grad_gate, grad_value], axis=-1)  # (B, n, 2·d_ff)
        else:
            grad_up = gelu_backward(grad_activated, up, tanh=c.mlp == "gelu_tanh")
        grad_mid = grad + norm_backward(linear(grad_up, w.gate_up_weight.T), norm2)  # ∂/∂ hook_resid_mid
        grad_attn_out = grad_mid
        grad_z = linear(grad_attn_out, w.output_weight.T).reshape(batch, n, heads, d_k).transpose(0, 2, 1, 3)
        grad_z = grad_z * mask[index][None, :, None, None]  # (B, H, n, d_k); 0 for switched-off heads
        grad_q, grad_k, grad_v, grad_pattern = attention_backward(grad_z, q, k, v, pattern, c.score_divisor)
        if cos is not None:
            grad_q, grad_k = rotate(grad_q, cos, -sin, c.rope_style), rotate(grad_k, cos, -sin, c.rope_style)
        grad_qkv = np.concatenate([grad_q, grad_k, grad_v], axis=1)  # (B, H + 2K, n, d_k)
        grad_x = linear(grad_qkv.transpose(0, 2, 1, 3).reshape(batch, n, (heads + 2 * kv) * d_k), w.qkv_weight.T)
        grad = grad_mid + norm_backward(grad_x, norm1)  # ∂/∂ hook_resid_pre
        if points:
            by_layer[index] = {"hook_resid_pre": grad, "hook_attn_out": grad_attn_out, "hook_mlp_out": grad_mlp_out,
                               "attn.hook_z": grad_z.transpose(0, 2, 1, 3), "attn.hook_pattern": grad_pattern}
    return grad, by_layer
