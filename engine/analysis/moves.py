"""What attention moves, as analyses of one run request: value-weighted attention, attention
rollout, value-weighted rollout and the head table (the math: :mod:`engine.analysis.value_norms`,
:mod:`engine.analysis.rollout`, :mod:`engine.analysis.head_stats`).

Each function takes (model, request, runs) and returns a typed result whose ``arrays()`` are the
export keys of docs/FORMAT.md. Switched-off heads move nothing: their value norms are 0 and the
rollouts count them as zero weights; their patterns still give their head statistics.

Rollout and the head table work in float64 one layer at a time, so they hold one layer's float64
copy beside the trace, never the whole (layers, heads, n, n) twice (SmolLM2 at 512 tokens: 566 MB).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import EngineError
from ..core.memory import format_bytes
from .arrays import heads_kept
from .head_stats import MEASURES, head_stats, head_table
from .request import NotApplicable
from .rollout import mean_attention, rollout, rows_normalised
from .value_norms import value_weighted

ANALYSIS_TOKENS = 1024  # rollouts and the head table up to this many tokens (n × n float64 products per layer)


@dataclass(frozen=True, eq=False)
class ValueNorms:
    value_norms: np.ndarray  # (layers, heads, n, n) float32 ‖α_ij · f_h(x_j)‖, switched-off heads 0

    def arrays(self) -> dict:
        return {"value_norms": self.value_norms}


@dataclass(frozen=True, eq=False)
class Rollout:
    rollout: np.ndarray  # (layers, n, n) float64: row i after layer l, the share of each input token

    def arrays(self) -> dict:
        return {"rollout": self.rollout}


@dataclass(frozen=True, eq=False)
class ValueRollout:
    value_rollout: np.ndarray  # (layers, n, n) float64, from the value norms

    def arrays(self) -> dict:
        return {"value_rollout": self.value_rollout}


@dataclass(frozen=True, eq=False)
class HeadTable:
    head_stats: np.ndarray  # (layers·heads,) structured: layer, head, entropy, first, special, previous, self

    def stats(self, measure: str) -> np.ndarray:
        """(layers, heads) of one measure."""
        layers = int(self.head_stats["layer"].max()) + 1
        return np.asarray(self.head_stats[measure]).reshape(layers, -1)

    def arrays(self) -> dict:
        return {"head_stats": self.head_stats}


def _kept(runs) -> np.ndarray:
    """(layers, heads) bool, False for the request's switched-off heads."""
    return heads_kept(runs.request.ablate, *runs.trace.attentions.shape[:2])


def _norms(runs) -> np.ndarray:
    trace = runs.trace
    values, output_weights = trace.layer_values(), runs.output_weights()
    norms = np.empty(trace.attentions.shape, np.float32)  # (layers, heads, n, n) filled layer by layer: no stack copy
    for layer, (a, v, w) in enumerate(zip(trace.attentions, values, output_weights)):
        norms[layer] = value_weighted(a, v, w)
    norms[~_kept(runs)] = 0.0
    norms.flags.writeable = False
    return norms  # (layers, heads, n, n)


def value_norms(model, request, runs) -> ValueNorms | NotApplicable:
    """Value-weighted attention of every layer (Kobayashi et al., 2020)."""
    attentions = runs.trace.attentions
    need = attentions.size * 4  # float32, as large as the attentions
    if need > request.memory_budget:
        return NotApplicable("value_norms", EngineError(
            "value-weighted attention would hold {size} beside the trace, more than the memory budget {budget}: "
            "shorten the text", field="text", size=format_bytes(need), budget=format_bytes(request.memory_budget)))
    return runs.memo("value_norms", lambda: ValueNorms(_norms(runs)))


def attention_rollout(model, request, runs) -> Rollout:
    """Attention rollout (Abnar & Zuidema, 2020), switched-off heads as zero weights."""
    attentions, kept = runs.trace.attentions, _kept(runs)
    mixing = np.stack([mean_attention(attentions[l:l + 1], kept[l:l + 1])[0] for l in range(len(attentions))])
    return Rollout(rollout(mixing))


def value_rollout(model, request, runs) -> ValueRollout | NotApplicable:
    """Rollout of value-weighted attention: per layer the heads' norms summed, rows normalised."""
    norms = value_norms(model, request, runs)
    if isinstance(norms, NotApplicable):
        return NotApplicable("value_rollout", norms.reason)
    mixing = np.stack([rows_normalised(layer.sum(axis=0, dtype=np.float64)) for layer in norms.value_norms])
    return ValueRollout(rollout(mixing))


def head_table_of(model, request, runs) -> HeadTable:
    """The head table (engine.analysis.head_stats) with the model's own special tokens."""
    trace = runs.trace
    special = model.facts.special_mask(trace.token_texts)
    per_layer = [head_stats(layer[None], special) for layer in trace.attentions]  # one layer in float64 at a time
    stats = {measure: np.concatenate([s[measure] for s in per_layer]) for measure in MEASURES}
    return HeadTable(head_table(stats))
