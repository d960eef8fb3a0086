"""One cell of the attention matrix, taken apart: how weight[h, i, j] came to be.

For head h, query token i and key token j it recomputes, in float64 from the trace's own q and k,
every number between the two vectors and the weight (Vaswani et al., 2017, eq. 1):

    products = q_i ⊙ k_j            (d_k,)   they sum to the dot product q_i · k_j = scores[h, i, j]
    scaled   = dot / divisor                  divisor = √d_k · temperature (or temperature alone), or the
                                              model's own √query_scale (Gemma's query_pre_attn_scalar)
    capped   = cap · tanh(scaled / cap)       only where the model caps its scores (Gemma 2)
    masked   → scaled = −∞                    (a future key under the causal mask)
    exp      = exp(scaled − row_max)          row_max = the largest visible scaled score of row i
    weight   = exp / Σ_j' exp(scaled_ij' − row_max)   = weights[h, i, j]
    weight · v_j                              this key's contribution to the head's output row o_i

The whole row is needed for the normaliser, so the cost is O(n · d_k): cheap, but the window
still runs it on the worker for long inputs. Nothing here imports Qt.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.errors import EngineError
from ..core.trace import read_only


def _frozen(array: np.ndarray) -> np.ndarray:
    return read_only(np.array(array, dtype=np.float64))  # a private float64 copy


@dataclass(frozen=True, eq=False)
class CellInspection:
    """Every step from q_i and k_j to weight[h, i, j] and to v_j's part of the output.

    Vectors are read-only float64 arrays of shape (d_k,); scalars are Python floats.
    """

    head: int
    query: int  # i: the row (the token that asks)
    key: int  # j: the column (the token that is looked at)
    query_text: str
    key_text: str
    d_k: int
    scale: bool  # whether the scores were divided by √d_k
    temperature: float
    q_i: np.ndarray  # (d_k,) query of token i (after RoPE when positional is rope)
    k_j: np.ndarray  # (d_k,) key of token j (after RoPE when positional is rope)
    products: np.ndarray  # (d_k,) q_i[c] · k_j[c]
    dot: float  # Σ products = q_i · k_j (float64)
    engine_score: float  # scores[h, i, j] as the engine stored it (float32)
    divisor: float  # √d_k · temperature, or temperature when scaling is off; √query_scale when the model sets it
    scaled: float  # dot / divisor (then capped when softcap), −∞ when masked
    engine_scaled: float  # scaled[h, i, j] as the engine stored it
    masked: bool  # True: key j is hidden from query i (−∞ → weight 0)
    row_max: float  # max over visible keys j' of scaled[i, j']
    exp_term: float  # exp(scaled − row_max); exactly 0 when masked
    normaliser: float  # Σ over the whole row of exp(scaled_ij' − row_max)
    weight: float  # exp_term / normaliser: recomputed in float64
    engine_weight: float  # weights[h, i, j] as the engine stored it (float32)
    v_j: np.ndarray  # (d_k,) value of token j
    weighted_v: np.ndarray  # (d_k,) weight · v_j: what key j adds to o_i
    output: np.ndarray  # (d_k,) head_outputs[h, i] = Σ_j weight_ij · v_j
    share: float  # v_j's share of o_i: see below; NaN when o_i = 0
    query_scale: float = 0.0  # the divisor is √query_scale (Gemma's query_pre_attn_scalar), not √d_k; 0: √d_k
    softcap: float = 0.0  # scaled = softcap · tanh(dot / divisor / softcap) (Gemma 2); 0: no cap

    # ``share`` is the projection of weight·v_j on the output row, as a fraction of it:
    #     share_j = (weight_ij · v_j) · o_i / ‖o_i‖²
    # Chosen because it is an exact decomposition of o_i: the shares of all keys of row i sum
    # to 1 (since Σ_j weight_ij · v_j = o_i), and a key whose value points against the others
    # gets a negative share — it really does pull the output back — where a norm-based ratio
    # (weight·‖v_j‖ / Σ weight·‖v_j‖) would credit it for length that cancels out. The share in
    # the convex combination itself is ``weight`` (all weights ≥ 0, summing to 1).

    @property
    def share_in_mixture(self) -> float:
        """The weight: v_j's share of the convex combination Σ_j weight_ij · v_j."""
        return self.weight


def inspect_cell(result, head: int, query: int, key: int) -> CellInspection:
    """Take apart weights[head, query, key] of ``result`` (an :class:`AttentionResult`)."""
    heads, n = result.weights.shape[0], result.n
    if not 0 <= head < heads:
        raise EngineError("head {head} does not exist: there are {heads} heads (0 … {last})",
                          head=head, heads=heads, last=heads - 1)
    if not 0 <= query < n:
        raise EngineError("query token {index} does not exist: there are {n} tokens (0 … {last})", index=query, n=n,
                          last=n - 1)
    if not 0 <= key < n:
        raise EngineError("key token {index} does not exist: there are {n} tokens (0 … {last})", index=key, n=n,
                          last=n - 1)
    config = result.config
    q_i = result.q[head, query].astype(np.float64)  # (d_k,)
    keys = result.k[head].astype(np.float64)  # (n, d_k)
    products_row = keys * q_i[None, :]  # (n, d_k): every key's element-wise products
    scores_row = products_row.sum(axis=1)  # (n,) q_i · k_j' for every j'
    divisor = result.score_divisor  # the one the engine divided by (the model's own where it has one)
    cap = float(result.attn_softcap)
    quotient_row = scores_row / divisor  # (n,)
    if cap:
        quotient_row = cap * np.tanh(quotient_row / cap)
    # The engine marks hidden keys with −∞ in its scaled scores (causal mask or otherwise).
    masked_row = np.isneginf(result.scaled[head, query])  # (n,)
    scaled_row = np.where(masked_row, -np.inf, quotient_row)  # (n,)
    row_max = float(scaled_row[~masked_row].max())
    exp_row = np.where(masked_row, 0.0, np.exp(np.where(masked_row, row_max, scaled_row) - row_max))  # (n,)
    normaliser = float(exp_row.sum())
    weights_row = exp_row / normaliser  # (n,)
    values = result.v[head].astype(np.float64)  # (n, d_k)
    output = weights_row @ values  # (d_k,) recomputed o_i, for the share
    weight = float(weights_row[key])
    weighted_v = weight * values[key]  # (d_k,)
    output_norm2 = float(output @ output)
    share = float(weighted_v @ output) / output_norm2 if output_norm2 > 0 else math.nan
    return CellInspection(
        head=head,
        query=query,
        key=key,
        query_text=result.tokens[query].text,
        key_text=result.tokens[key].text,
        d_k=config.d_k,
        scale=bool(config.scale),
        temperature=float(config.temperature),
        q_i=_frozen(q_i),
        k_j=_frozen(keys[key]),
        products=_frozen(products_row[key]),
        dot=float(scores_row[key]),
        engine_score=float(result.scores[head, query, key]),
        divisor=divisor,
        scaled=float(scaled_row[key]),
        engine_scaled=float(result.scaled[head, query, key]),
        masked=bool(masked_row[key]),
        row_max=row_max,
        exp_term=float(exp_row[key]),
        normaliser=normaliser,
        weight=weight,
        engine_weight=float(result.weights[head, query, key]),
        v_j=_frozen(values[key]),
        weighted_v=_frozen(weighted_v),
        output=_frozen(result.head_outputs[head, query]),
        share=share,
        query_scale=float(result.query_scale),
        softcap=cap,
    )
