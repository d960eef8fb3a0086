"""The decoder's forward with its activations kept, and its backward: engine.models.llama's block in
every family it runs — RMSNorm or LayerNorm, RoPE (a second base on the windowed layers: Gemma 3) or
learned positions, grouped-query attention, SwiGLU / GeGLU / GELU, and the newer families' features:
q/k RMSNorms per head (Qwen3, Gemma 3) or over the whole projection (OLMo 2), norms after attention and
MLP (Gemma 2/3 beside the norms before them, OLMo 2 instead of them), Gemma's √query_pre_attn_scalar,
soft-capped attention scores and sliding windows (Mistral, Gemma) — batched over B inputs of the same
n positions. Gemma's RMSNorm (1 + γ) needs nothing here: its family stores the 1 + γ.

The input is ``blocks.0.hook_resid_pre``: the token embeddings (× √d for Gemma), plus the learned
position embeddings where the family has them (GPT-2), so a gradient "of the input" is of that sum.
The output is the final norm's (``hidden_states[-1]``, what the output head reads); a target
(engine.grad.targets) turns it into a scalar and gives the gradient back (soft-capped logits where
the family caps them: :func:`final_softcap`).

Hook points read as the forward writes them: ``hook_attn_out`` and ``hook_mlp_out`` after a post-norm.

Per layer, the forward keeps (B·n·(2d + (H + 2K)·d_k + 2·d_ff) + B·H·n²) numbers (the norms'
normalized inputs, rotated q and k, v, the MLP's pre-activations, the pattern), and the post-norms'
and q/k norms' normalized values where the family has them; :func:`saved_bytes` says how many bytes
a run keeps, checked against the memory budget before anything runs.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..core.errors import EngineError
from ..core.positional import rope_tables
from .pieces import (DTYPE, attention_backward, attention_forward, check_finite, gelu_backward, gelu_forward,
                     linear, norm_backward, norm_forward, rotate, silu_mul_backward, silu_mul_forward)

# Every field of engine.models.llama.DecoderConfig this backward follows; a field added there later
# (a new block feature) is refused by check_supported until the backward follows it too.
FOLLOWED = frozenset({
    "architecture", "num_layers", "hidden_size", "intermediate_size", "num_heads", "num_kv_heads", "head_dim",
    "vocab_size", "rope_theta", "rms_norm_eps", "context_length", "rope_style", "name", "norm", "mlp", "positions",
    "qk_norm", "qk_norm_whole", "layer_windows", "attn_softcap", "final_softcap", "query_scale", "embed_scale",
    "pre_norms", "post_norms", "local_rope_theta", "rope_scaling"})


def check_supported(config) -> None:
    """EngineError when the decoder's config has a block feature this backward does not follow: a
    field of the config it does not know (every feature of today's families is followed)."""
    unknown = sorted({field.name for field in dataclasses.fields(config)} - FOLLOWED)
    if unknown:
        raise EngineError("gradients do not follow {features} of {family}'s block yet", field="model",
                          features=", ".join(unknown), family=config.architecture)


def final_softcap(config) -> float:
    """The cap of the output head's logits (cap·tanh(logit / cap), Gemma 2); 0 where there is none."""
    return float(config.final_softcap)


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
    if c.qk_norm:  # the normalized q and k
        per_layer += n * (c.num_heads + c.num_kv_heads) * (c.head_dim + 1)
    if c.post_norms:  # the normalized attention and MLP outputs
        per_layer += 2 * n * (c.hidden_size + 1)
    temporary = (4 if c.attn_softcap else 3) * c.num_heads * n * n + n * (6 * c.hidden_size + 3 * c.intermediate_size)
    return 4 * batch * (c.num_layers * per_layer + temporary + 2 * n * c.hidden_size)


def _ablation_mask(config, ablate) -> np.ndarray:
    """(layers, heads) float32: 0 for a switched-off head, 1 otherwise."""
    mask = np.ones((config.num_layers, config.num_heads), DTYPE)
    for layer, head in ablate:
        mask[layer, head] = 0.0
    return mask


def _norm(h: np.ndarray, weight, bias, config):
    """The block's norm before attention or MLP → (out, saved); (h, None) where the family has none
    there (OLMo 2): h itself, read but not changed."""
    if weight is None:
        return h, None
    return norm_forward(h, weight, bias, config.rms_norm_eps, config.norm)


def _post_norm(x: np.ndarray, weight, config):
    """The RMSNorm after attention or MLP (the forward's rms_norm whatever the block's norm) → (out, saved)."""
    if weight is None:
        return x, None
    return norm_forward(x, weight, None, config.rms_norm_eps, "rms")


def _unnorm(grad: np.ndarray, saved) -> np.ndarray:
    """∂/∂ a norm's input from ∂/∂ its output; the gradient itself where there was no norm."""
    return grad if saved is None else norm_backward(grad, saved)


def _qk_norm(x: np.ndarray, weight, config):
    """x (B, heads, n, d_k) RMS-normed over each head's d_k (Qwen3, Gemma 3) or over all heads of a
    position at once (OLMo 2) → (out (B, heads, n, d_k), saved); (x, None) without q/k norms."""
    if weight is None:
        return x, None
    if not config.qk_norm_whole:
        return norm_forward(x, weight, None, config.rms_norm_eps, "rms")
    batch, heads, n, d_k = x.shape
    flat = x.transpose(0, 2, 1, 3).reshape(batch, n, heads * d_k)  # (B, n, heads·d_k)
    out, saved = norm_forward(flat, weight, None, config.rms_norm_eps, "rms")
    return np.ascontiguousarray(out.reshape(batch, n, heads, d_k).transpose(0, 2, 1, 3)), saved


def _qk_unnorm(grad: np.ndarray, saved, config) -> np.ndarray:
    """∂/∂ the q (or k) projection from ∂/∂ its normed value, both (B, heads, n, d_k)."""
    if saved is None:
        return grad
    if not config.qk_norm_whole:
        return norm_backward(grad, saved)
    batch, heads, n, d_k = grad.shape
    flat = norm_backward(grad.transpose(0, 2, 1, 3).reshape(batch, n, heads * d_k), saved)
    return flat.reshape(batch, n, heads, d_k).transpose(0, 2, 1, 3)


def _rope_tables(weights, config, n: int) -> list:
    """Per layer (cos, sin) (n, d_k/2) of its frequencies (Gemma 3's windowed layers have their own
    base), or (None, None) with learned positions; layers of the same frequencies share one table."""
    if config.positions != "rotary":
        return [(None, None)] * config.num_layers
    made = {}
    tables = []
    for layer in range(config.num_layers):
        frequencies = weights.frequencies(config, layer)
        if id(frequencies) not in made:
            made[id(frequencies)] = rope_tables(frequencies, 0, n)
        tables.append(made[id(frequencies)])
    return tables


def forward(weights, config, h: np.ndarray, ablate=frozenset(), record: list | None = None):
    """h (B, n, d) the input → (output (B, n, d) after the final norm, saved activations).

    ``record``: a list that gets, per layer, the values at its hook points {"hook_resid_pre",
    "hook_attn_out", "hook_mlp_out": (B, n, d), "attn.hook_z": (B, n, H, d_k) after switching off}."""
    c = config
    batch, n, d = h.shape
    heads, kv, d_k = c.num_heads, c.num_kv_heads, c.head_dim
    gated = c.mlp in ("swiglu", "geglu")
    tables = _rope_tables(weights, c, n)
    mask = _ablation_mask(c, ablate)
    h = np.array(h, dtype=np.promote_types(np.asarray(h).dtype, DTYPE))  # float64 for finite differences
    layers = []
    for index, w in enumerate(weights.layers):
        resid_pre = h  # not changed in place below: h is rebound to resid_pre + attn_out
        x, norm1 = _norm(h, w.attention_norm, w.attention_norm_bias, c)
        qkv = linear(x, w.qkv_weight)  # (B, n, (H + 2K)·d_k)
        if w.qkv_bias is not None:
            qkv += w.qkv_bias
        qkv = qkv.reshape(batch, n, heads + 2 * kv, d_k).transpose(0, 2, 1, 3)  # (B, H + 2K, n, d_k)
        q, k, v = qkv[:, :heads], qkv[:, heads: heads + kv], np.ascontiguousarray(qkv[:, heads + kv:])
        q, q_norm = _qk_norm(q, w.q_norm, c)  # before RoPE, as the forward
        k, k_norm = _qk_norm(k, w.k_norm, c)
        cos, sin = tables[index]
        if cos is not None:
            q, k = rotate(q, cos, sin, c.rope_style), rotate(k, cos, sin, c.rope_style)
        else:
            q, k = np.ascontiguousarray(q), np.ascontiguousarray(k)
        z, pattern = attention_forward(q, k, v, c.score_divisor, causal=True, window=c.window(index),
                                       softcap=c.attn_softcap)  # (B, H, n, d_k), (B, H, n, n)
        z *= mask[index][None, :, None, None]  # switched-off heads reach W_O as zeros
        attn_out = linear(z.transpose(0, 2, 1, 3).reshape(batch, n, heads * d_k), w.output_weight)  # (B, n, d)
        if w.output_bias is not None:
            attn_out += w.output_bias
        attn_out, post1 = _post_norm(attn_out, w.post_attention_norm, c)
        h = h + attn_out
        x2, norm2 = _norm(h, w.ffn_norm, w.ffn_norm_bias, c)
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
        mlp_out, post2 = _post_norm(mlp_out, w.post_ffn_norm, c)
        if record is not None:
            record.append({"hook_resid_pre": resid_pre, "hook_attn_out": attn_out, "hook_mlp_out": mlp_out,
                           "attn.hook_z": z.transpose(0, 2, 1, 3)})
        h += mlp_out
        check_finite(h, index)
        layers.append((norm1, q_norm, k_norm, q, k, v, pattern, post1, norm2, up, post2))
    out, final = norm_forward(h, weights.output_norm, weights.output_norm_bias, c.rms_norm_eps, c.norm)
    return out, (layers, final, tables, mask)


def backward(weights, config, saved, grad_out: np.ndarray, points: bool = True):
    """∂/∂input (B, n, d) from ∂/∂output (B, n, d), and (``points``) per layer the gradients at
    its hook points: {"hook_resid_pre", "hook_attn_out", "hook_mlp_out": (B, n, d),
    "attn.hook_z": (B, n, H, d_k), "attn.hook_pattern": (B, H, n, n)}.

    A switched-off head's hook_z is zeroed before W_O: its gradient (of the value before the
    zeroing) is 0, and nothing flows back through its pattern, q, k or v."""
    c = config
    layers, final, tables, mask = saved
    heads, kv, d_k = c.num_heads, c.num_kv_heads, c.head_dim
    gated = c.mlp in ("swiglu", "geglu")
    grad = norm_backward(np.asarray(grad_out), final)  # (B, n, d): ∂/∂ the last layer's output
    batch, n, d = grad.shape
    by_layer = [None] * len(layers)
    for index in range(len(layers) - 1, -1, -1):
        w = weights.layers[index]
        norm1, q_norm, k_norm, q, k, v, pattern, post1, norm2, up, post2 = layers[index]
        grad_mlp_out = grad
        grad_activated = linear(_unnorm(grad_mlp_out, post2), w.down_weight.T)  # (B, n, d_ff)
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
        grad_mid = grad + _unnorm(linear(grad_up, w.gate_up_weight.T), norm2)  # ∂/∂ hook_resid_mid
        grad_attn_out = grad_mid
        grad_z = linear(_unnorm(grad_attn_out, post1), w.output_weight.T)
        grad_z = grad_z.reshape(batch, n, heads, d_k).transpose(0, 2, 1, 3)
        grad_z = grad_z * mask[index][None, :, None, None]  # (B, H, n, d_k); 0 for switched-off heads
        grad_q, grad_k, grad_v, grad_pattern = attention_backward(grad_z, q, k, v, pattern, c.score_divisor,
                                                                  softcap=c.attn_softcap)
        cos, sin = tables[index]
        if cos is not None:
            grad_q, grad_k = rotate(grad_q, cos, -sin, c.rope_style), rotate(grad_k, cos, -sin, c.rope_style)
        grad_q, grad_k = _qk_unnorm(grad_q, q_norm, c), _qk_unnorm(grad_k, k_norm, c)
        grad_qkv = np.concatenate([grad_q, grad_k, grad_v], axis=1)  # (B, H + 2K, n, d_k)
        grad_x = linear(grad_qkv.transpose(0, 2, 1, 3).reshape(batch, n, (heads + 2 * kv) * d_k), w.qkv_weight.T)
        grad = grad_mid + _unnorm(grad_x, norm1)  # ∂/∂ hook_resid_pre
        if points:
            by_layer[index] = {"hook_resid_pre": grad, "hook_attn_out": grad_attn_out, "hook_mlp_out": grad_mlp_out,
                               "attn.hook_z": grad_z.transpose(0, 2, 1, 3), "attn.hook_pattern": grad_pattern}
    return grad, by_layer
