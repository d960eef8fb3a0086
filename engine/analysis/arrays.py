"""The analysis arrays of one run, for views and exports: value-weighted attention, rollouts and
the head table, from a toy :class:`~engine.toy.trace.AttentionResult` or a BERT
:class:`~engine.models.bert.BertTrace` (MiniLM, e5).

    arrays = analysis_arrays(trace, model.weights)
    arrays["value_norms"]      # (layers, heads, n, n) float32 ‖α_ij · f_h(x_j)‖ (engine.analysis.value_norms)
    arrays["rollout"]          # (layers, n, n) float64 attention rollout (engine.analysis.rollout)
    arrays["value_rollout"]    # (layers, n, n) float64 the same from value-weighted attention
    arrays["head_stats"]       # (layers·heads,) structured: layer, head, entropy, first, special,
                               # previous, self (engine.analysis.head_stats)

Heads switched off in the run (``trace.ablate``) move nothing: their value norms are 0 and the
rollouts leave them out of their layer; their attention weights (what they would have attended)
still give their head statistics.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .head_stats import head_stats, head_table
from ..text.words import special_of
from .rollout import attention_rollout, value_weighted_rollout
from .value_norms import value_weighted_layers



def _parts(trace, weights) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """(attentions (layers, heads, n, n), per-layer v (heads or kv_heads, n, d_k), per-layer W_O
    (heads·d_k, d)), from the contract's trace (engine/models/contract.py) and the model's weights
    (``weights.layers[l].output_weight``; the toy's trace holds its own W_O)."""
    output_weights = trace.own_output_weights() if weights is None else [w.output_weight for w in weights.layers]
    if output_weights is None:
        raise TypeError("a pretrained model's trace needs the model's weights (for W_O)")
    return trace.attentions, trace.layer_values(), output_weights


def heads_kept(ablate: frozenset, num_layers: int, num_heads: int) -> np.ndarray:
    """(layers, heads) bool, False for the switched-off heads."""
    kept = np.ones((num_layers, num_heads), dtype=bool)
    for layer, head in ablate:
        kept[layer, head] = False
    return kept


def value_norms_of(trace, weights=None) -> np.ndarray:
    """(layers, heads, n, n) float32 value-weighted attention of a run, switched-off heads 0."""
    attentions, values, output_weights = _parts(trace, weights)
    norms = value_weighted_layers(attentions, values, output_weights)
    kept = heads_kept(trace.ablate, *attentions.shape[:2])
    norms[~kept] = 0.0
    return norms


def analysis_arrays(trace, weights=None, *, special: Sequence[bool] | np.ndarray | None = None) -> dict[str, np.ndarray]:
    """value_norms, rollout, value_rollout and head_stats of one run (see the module docstring).

    ``weights``: the model's weights for a BERT trace (``model.weights``); unused for the toy.
    ``special``: (n,) bool mask of special tokens (the model's facts.special_mask; default: the pieces
    its tokenizer gave a name but no characters, :func:`engine.text.words.special_of`).
    """
    attentions, values, output_weights = _parts(trace, weights)
    if special is None:
        special = special_of(trace.tokens)
    return analysis_from_parts(attentions, values, output_weights, special, trace.ablate)


def analysis_from_parts(
    attentions: np.ndarray,
    values: Sequence[np.ndarray],
    output_weights: Sequence[np.ndarray],
    special: Sequence[bool] | np.ndarray | None = None,
    ablate: frozenset = frozenset(),
) -> dict[str, np.ndarray]:
    """:func:`analysis_arrays` for any model: attentions (layers, heads, n, n), each layer's v
    (heads or kv_heads, n, d_k, bias included) and row-vector W_O (heads·d_k, d), the (n,) special
    mask and the switched-off (layer, head) pairs."""
    layers, heads = attentions.shape[:2]
    kept = heads_kept(ablate, layers, heads)
    norms = value_weighted_layers(attentions, values, output_weights)  # (layers, heads, n, n)
    norms[~kept] = 0.0
    return {
        "value_norms": norms,
        "rollout": attention_rollout(attentions, heads_kept=None if kept.all() else kept),
        "value_rollout": value_weighted_rollout(norms),
        "head_stats": head_table(head_stats(attentions, special)),
    }
