"""The post-LN BERT encoder's forward with its activations kept, and its backward (engine.models.bert's
block; MiniLM, e5 and the BERT folders), batched over B inputs of the same n positions.

The input is ``blocks.0.hook_resid_pre``: the embeddings (word + token type + position) after
the embedding LayerNorm, so a gradient "of the input" is of that normed sum. The output is
``hidden_states[-1]`` (the last block's own LayerNorm).

Per layer, after TransformerLens's BertBlock: attn_out = z·W_O + b_O, resid_mid = resid_pre +
attn_out, a = LN1(resid_mid), mlp_out = GELU(a·W_1 + b_1)·W_2 + b_2, out = LN2(a + mlp_out). The
forward keeps B·n·(2d + 3d + d_ff) + B·H·n² numbers a layer (:func:`saved_bytes`).
"""
from __future__ import annotations

import numpy as np

from .pieces import (DTYPE, attention_backward, attention_forward, check_finite, gelu_backward, gelu_forward,
                     linear, norm_backward, norm_forward)


def embed(weights, config, ids: np.ndarray, token_type_ids: np.ndarray | None = None) -> np.ndarray:
    """(n, d) float32 ``blocks.0.hook_resid_pre`` of ``ids``, in transformers' order of the sums."""
    types = np.zeros(len(ids), np.int64) if token_type_ids is None else np.asarray(token_type_ids)
    h = np.array(weights.word_embeddings[ids], dtype=DTYPE)
    h += weights.token_type_embeddings[types]
    h += weights.position_embeddings[: len(ids)]
    out, _ = norm_forward(h, weights.embedding_norm_weight, weights.embedding_norm_bias, config.layer_norm_eps, "layer")
    return out


def saved_bytes(config, batch: int, n: int) -> int:
    """Bytes a forward of ``batch`` inputs of ``n`` tokens keeps, plus one layer's temporaries."""
    c = config
    per_layer = n * (5 * c.hidden_size + 2 + c.intermediate_size) + c.num_heads * n * n
    temporary = 3 * c.num_heads * n * n + n * (6 * c.hidden_size + 3 * c.intermediate_size)
    return 4 * batch * (c.num_layers * per_layer + temporary + n * c.hidden_size)


def forward(weights, config, h: np.ndarray, ablate=frozenset(), record: list | None = None):
    """h (B, n, d) the input → (output (B, n, d), saved activations); ``record``: as
    engine.grad.decoder.forward's, the values at the hook points per layer."""
    c = config
    batch, n, d = h.shape
    heads, d_k, eps = c.num_heads, c.d_k, c.layer_norm_eps
    mask = np.ones((c.num_layers, heads), DTYPE)
    for layer, head in ablate:
        mask[layer, head] = 0.0
    h = np.array(h, dtype=np.promote_types(np.asarray(h).dtype, DTYPE))  # float64 for finite differences
    layers = []
    for index, w in enumerate(weights.layers):
        qkv = linear(h, w.qkv_weight) + w.qkv_bias  # (B, n, 3d)
        qkv = qkv.reshape(batch, n, 3 * heads, d_k).transpose(0, 2, 1, 3)  # (B, 3H, n, d_k)
        q, k, v = (np.ascontiguousarray(qkv[:, i * heads: (i + 1) * heads]) for i in range(3))
        z, pattern = attention_forward(q, k, v, np.sqrt(d_k).item(), causal=False)
        z *= mask[index][None, :, None, None]
        attn_out = linear(z.transpose(0, 2, 1, 3).reshape(batch, n, d), w.output_weight) + w.output_bias
        a, norm1 = norm_forward(h + attn_out, w.attention_norm_weight, w.attention_norm_bias, eps, "layer")
        up = linear(a, w.intermediate_weight) + w.intermediate_bias  # (B, n, d_ff)
        mlp_out = linear(gelu_forward(up, tanh=False), w.ffn_output_weight) + w.ffn_output_bias
        if record is not None:
            record.append({"hook_resid_pre": h, "hook_attn_out": attn_out, "hook_mlp_out": mlp_out,
                           "attn.hook_z": z.transpose(0, 2, 1, 3)})
        h, norm2 = norm_forward(a + mlp_out, w.output_norm_weight, w.output_norm_bias, eps, "layer")
        check_finite(h, index)
        layers.append((q, k, v, pattern, norm1, up, norm2))
    return h, (layers, mask)


def backward(weights, config, saved, grad_out: np.ndarray, points: bool = True):
    """∂/∂input (B, n, d) from ∂/∂output, and (``points``) per layer the gradients at its hook points
    (the keys and shapes of engine.grad.decoder.backward's). A switched-off head's gradients are 0."""
    c = config
    layers, mask = saved
    heads, d_k = c.num_heads, c.d_k
    grad = np.asarray(grad_out)  # ∂/∂ the last layer's output
    batch, n, d = grad.shape
    by_layer = [None] * len(layers)
    for index in range(len(layers) - 1, -1, -1):
        w = weights.layers[index]
        q, k, v, pattern, norm1, up, norm2 = layers[index]
        grad_post = norm_backward(grad, norm2)  # ∂/∂ hook_resid_post = a + mlp_out
        grad_mlp_out = grad_post
        grad_up = gelu_backward(linear(grad_mlp_out, w.ffn_output_weight.T), up, tanh=False)
        grad_a = grad_post + linear(grad_up, w.intermediate_weight.T)  # ∂/∂ ln1.hook_out
        grad_mid = norm_backward(grad_a, norm1)  # ∂/∂ hook_resid_mid
        grad_attn_out = grad_mid
        grad_z = linear(grad_attn_out, w.output_weight.T).reshape(batch, n, heads, d_k).transpose(0, 2, 1, 3)
        grad_z = grad_z * mask[index][None, :, None, None]
        grad_q, grad_k, grad_v, grad_pattern = attention_backward(grad_z, q, k, v, pattern, np.sqrt(d_k).item())
        grad_qkv = np.concatenate([grad_q, grad_k, grad_v], axis=1).transpose(0, 2, 1, 3).reshape(batch, n, 3 * d)
        grad = grad_mid + linear(grad_qkv, w.qkv_weight.T)  # ∂/∂ hook_resid_pre
        if points:
            by_layer[index] = {"hook_resid_pre": grad, "hook_attn_out": grad_attn_out, "hook_mlp_out": grad_mlp_out,
                               "attn.hook_z": grad_z.transpose(0, 2, 1, 3), "attn.hook_pattern": grad_pattern}
    return grad, by_layer
