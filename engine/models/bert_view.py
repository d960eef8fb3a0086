"""One layer of a BERT trace seen as a toy-engine AttentionResult, so every view of the toy
engine (heatmaps, head grid, worked arithmetic, inspector, player) shows the real model.

Layer l's attention: x = hidden_states[l] (what enters the projections), q, k, v (with their
biases), scores, scaled (÷ √d_k), weights, head outputs, concat, and output = concat·W_O + b_O
(the attention block's output before the residual and LayerNorm). ``embeddings`` are the static
word-piece vectors (the same for a word piece in every sentence); BERT adds its learned position
and token-type embeddings and a LayerNorm before layer 0, so ``positional`` is left at zero and
x is not embeddings + positional here.
"""
from __future__ import annotations

import numpy as np

from .bert import BertTrace, BertWeights
from ..toy.config import AttentionConfig
from ..core.trace import vector_diffs
from ..toy.trace import AttentionResult

LARGE_BUDGET = 1 << 40  # the BERT forward checked its own budget; the view allocates little


def layer_config(trace: BertTrace, text: str) -> AttentionConfig:
    """The attention settings a BERT layer uses, as an AttentionConfig (for labels, d_k, √d_k)."""
    c = trace.config
    return AttentionConfig(text=text, d_model=c.hidden_size, heads=c.num_heads, positional="none",
                           mask="none", scale=True, temperature=1.0, weights="random", memory_budget=LARGE_BUDGET)


def layer_result(trace: BertTrace, weights: BertWeights, layer: int, text: str) -> AttentionResult:
    """Layer ``layer`` (0-based) of ``trace`` as an AttentionResult."""
    if not 0 <= layer < trace.num_layers:
        from ..core.errors import EngineError

        raise EngineError("layer {layer} does not exist: the model has layers 0 … {last}",
                          layer=layer, last=trace.num_layers - 1)
    d = trace.config.hidden_size
    view = trace.layers[layer]
    w = weights.layers[layer]
    x = trace.hidden_states[layer]  # (n, d)
    static = weights.word_embeddings[np.asarray(trace.input_ids)]  # (n, d) static word-piece vectors
    return AttentionResult(
        config=layer_config(trace, text),
        tokens=trace.tokens,
        embeddings=static,
        positional=np.zeros_like(x),
        x=x,
        w_q=w.qkv_weight[:, :d],
        w_k=w.qkv_weight[:, d : 2 * d],
        w_v=w.qkv_weight[:, 2 * d :],
        w_o=w.output_weight,
        q=view.q,
        k=view.k,
        v=view.v,
        scores=view.scores,
        scaled=view.scaled,
        weights=view.weights,
        head_outputs=view.head_outputs,
        concat=view.concat,
        output=view.attention_output,
        **vector_diffs(x, view.attention_output),
        estimated_bytes=trace.estimated_bytes,
        seconds=trace.seconds,
    )
