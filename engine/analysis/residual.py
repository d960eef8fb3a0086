"""Two per-layer summaries of a run with a residual stream: the attention sink (the mean weight
the queries after the first give the first token; Xiao et al., 2023) and each token's cosine
with its own embedding after every layer (how far the layers carry a token from where it began).

    sink = attention_sink(model, request, runs).sink            # (layers, heads) float32
    kept = cosine_to_layer0(model, request, runs).cosines       # (layers + 1, n) float32

The toy engine has one layer and no residual stream: neither applies to it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class AttentionSink:
    sink: np.ndarray  # (layers, heads) float32 mean α_i0 over queries i ≥ 1 (zeros for one token)

    def arrays(self) -> dict:
        return {"attention_sink": self.sink}


@dataclass(frozen=True, eq=False)
class CosineToLayer0:
    cosines: np.ndarray  # (layers + 1, n) float32 cos(hidden_states[l, i], hidden_states[0, i])

    def arrays(self) -> dict:
        return {"cosine_to_layer0": self.cosines}


def sink_by_head(attentions: np.ndarray) -> np.ndarray:
    """(layers, heads) mean weight the queries after the first give the first token."""
    if attentions.shape[-1] < 2:
        return np.zeros(attentions.shape[:2], dtype=np.float32)
    return attentions[..., 1:, 0].mean(axis=-1, dtype=np.float64).astype(np.float32)


def cosines_to_first(hidden_states: np.ndarray) -> np.ndarray:
    """(layers + 1, n) float32 cosine of each hidden state with the embedding of its token, one
    layer at a time in float64 (a float64 copy of every layer was 180 MB at 1,245 SmolLM2 tokens)."""
    first = hidden_states[0].astype(np.float64)  # (n, d)
    first_norms = np.linalg.norm(first, axis=-1)  # (n,)
    cosines = np.empty(hidden_states.shape[:2], np.float32)  # (layers + 1, n)
    for index, layer in enumerate(hidden_states):
        h = layer.astype(np.float64)  # (n, d)
        dots = np.einsum("nd,nd->n", h, first)
        cosines[index] = dots / np.maximum(np.linalg.norm(h, axis=-1) * first_norms, 1e-30)
    return cosines


def attention_sink(model, request, runs) -> AttentionSink:
    return AttentionSink(sink_by_head(runs.trace.attentions))


def cosine_to_layer0(model, request, runs) -> CosineToLayer0:
    return CosineToLayer0(cosines_to_first(runs.trace.hidden_states))
