"""One layer of a decoder trace seen as a toy-engine AttentionResult (as engine.models.bert_view does for
the encoders), so the heatmap, head grid, arithmetic, inspector and player show the decoder:
x is the normed residual entering the projections, the key/value heads are repeated for the
query heads that share them (grouped-query attention), scores are recomputed from the kept q and
k with the causal mask (−∞ above the diagonal: the heatmap hatches those cells), narrowed by the
layer's sliding window where the family has one (hatched the same way beyond it). The layer's own
score scale (Gemma's query_pre_attn_scalar) and cap go with it, so the worked arithmetic writes them.
"""
from __future__ import annotations

import numpy as np

from ..core.attention import merge_heads
from .block_features import window_mask
from ..toy.config import AttentionConfig
from ..core.errors import EngineError
from .llama import DecoderTrace, normalize
from ..core.trace import vector_diffs
from ..toy.trace import AttentionResult

LARGE_BUDGET = 1 << 40  # the decoder checked its own budget; the view allocates little


def layer_result(model, trace: DecoderTrace, layer: int) -> AttentionResult:
    """Layer ``layer`` (0-based) of a decoder trace as an AttentionResult."""
    config = trace.config
    if not 0 <= layer < config.num_layers:
        raise EngineError("layer {layer} does not exist: the model has layers 0 … {last}",
                          layer=layer, last=config.num_layers - 1)
    heads, kv, d_k = config.num_heads, config.num_kv_heads, config.head_dim
    group = heads // kv
    share = np.arange(heads) // group  # (heads,) the key/value head each query head reads
    w = model.weights.layers[layer]
    x = normalize(trace.hidden_states[layer], w.attention_norm, w.attention_norm_bias, config)  # (n, d) entering the projections
    qd, kd = heads * d_k, kv * d_k
    w_k = w.qkv_weight[:, qd:qd + kd].reshape(-1, kv, d_k)[:, share].reshape(-1, qd)  # (d, heads·d_k)
    w_v = w.qkv_weight[:, qd + kd:].reshape(-1, kv, d_k)[:, share].reshape(-1, qd)
    scores, scaled = trace.layer_scores(layer)
    head_outputs = trace.head_outputs[layer]
    concat = merge_heads(head_outputs)
    output = concat @ w.output_weight  # (n, d) the attention block's output, before the residual
    if w.output_bias is not None:
        output += w.output_bias
    positional = "rope" if config.positions == "rotary" else "none"  # learned positions are in x already
    settings = AttentionConfig(text=trace.text, d_model=qd, heads=heads, positional=positional, mask="causal", scale=True,
                               temperature=1.0, weights="random", memory_budget=LARGE_BUDGET)
    return AttentionResult(
        config=settings,
        tokens=trace.tokens,
        embeddings=trace.hidden_states[0],
        positional=np.zeros_like(x),
        x=x,
        w_q=w.qkv_weight[:, :qd],
        w_k=w_k,
        w_v=w_v,
        w_o=w.output_weight,
        q=trace.q[layer],
        k=trace.k[layer][share],
        v=trace.v[layer][share],
        scores=scores,
        scaled=scaled,
        weights=trace.attentions[layer],
        head_outputs=head_outputs,
        concat=concat,
        output=output,
        **vector_diffs(x, output),
        mask=window_mask(trace.n, trace.n, config.window(layer)),
        ablate=frozenset((0, h) for (l, h) in trace.ablate if l == layer),
        estimated_bytes=trace.estimated_bytes,
        seconds=trace.seconds,
        query_scale=config.query_scale,
        attn_softcap=config.attn_softcap,
    )
