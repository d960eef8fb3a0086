"""Worked arithmetic for one (head, query token), in numbers, as seed 000 does by hand:

    喜欢Q · 小明K = [0,1]·[1,0] = 0 …  → scores [0, 1, 1] → softmax [0.155, 0.422, 0.422]
    → 新喜欢 = 0.155×[1,0] + 0.422×[0,1] + 0.422×[1,1] = [0.578, 0.845]

Every number comes from the engine's trace (scores, weights, head outputs) or from the
element-wise products that make up a dot product.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.errors import EngineError

EXP_LIMIT = 80.0  # exp(s) beyond ±80 over/underflows float32: show exp(s − max) instead


@dataclass(frozen=True)
class KeyTerm:
    """Query i against key j: the dot product's terms and what the softmax made of it."""

    key_index: int
    key_text: str
    k: tuple[float, ...]  # k_j (d_k,)
    products: tuple[float, ...]  # q_i[c] · k_j[c] for every c: they sum to the score
    score: float  # q_i · k_j
    scaled: float  # score / divisor (then capped when softcap), −inf when masked
    masked: bool
    exp_value: float  # exp(scaled) or exp(scaled − row_max) when shifted
    weight: float  # exp_value / normaliser
    v: tuple[float, ...]  # v_j (d_k,)
    weighted_v: tuple[float, ...]  # weight · v_j: this key's share of the output


@dataclass(frozen=True)
class Explanation:
    """The whole hand calculation for one head and one query token."""

    head: int
    query_index: int
    query_text: str
    d_k: int
    scale: bool
    temperature: float
    divisor: float  # what the engine divided q·k by: √d_k · temperature (or temperature alone), √query_scale
    q: tuple[float, ...]
    terms: tuple[KeyTerm, ...]
    row_max: float  # largest scaled score of the row
    shifted: bool  # exp taken of (scaled − row_max) to avoid overflow
    normaliser: float  # Σ_j exp_value_j
    output: tuple[float, ...]  # Σ_j weight_j · v_j = the head's output row for this token
    total_keys: int = 0  # keys in the row; ``terms`` lists them all unless explain() was given max_terms
    query_scale: float = 0.0  # the divisor is √query_scale (Gemma's query_pre_attn_scalar), not √d_k; 0: √d_k
    softcap: float = 0.0  # the scaled scores were capped: softcap · tanh(s / softcap) (Gemma 2); 0: no cap

    def to_text(self, digits: int = 3) -> str:
        """The calculation as plain lines of text."""

        def num(value: float) -> str:
            if math.isinf(value):
                return "−∞" if value < 0 else "∞"
            return f"{value:.{digits}f}"

        def num_plain(value: float) -> str:  # a setting such as 24 or 50.0: as few digits as it has
            return f"{value:g}"

        def vec(values) -> str:
            return "[" + ", ".join(num(v) for v in values) + "]"

        q_name = f"q({self.query_text})"
        lines = [
            f"Head {self.head}, query token #{self.query_index} “{self.query_text}” (d_k = {self.d_k})",
            f"{q_name} = {vec(self.q)}",
            "",
            "1. Scores: the query's dot product with every key",
        ]
        for term in self.terms:
            products = " + ".join(num(p) for p in term.products)
            lines.append(
                f"   {q_name} · k({term.key_text}) = {vec(self.q)} · {vec(term.k)} = {products} = {num(term.score)}"
            )
        if self.query_scale:
            lines.append(f"2. Scale: divide by √query_pre_attn_scalar = √{num_plain(self.query_scale)} = "
                         f"{num(self.divisor)} (this model's query scale, not √d_k)")
        elif self.scale:
            lines.append(
                f"2. Scale: divide by √d_k = √{self.d_k} = {num(math.sqrt(self.d_k))}"
                + (f" and by temperature {num(self.temperature)}" if self.temperature != 1 else "")
            )
        elif self.temperature != 1:
            lines.append(f"2. Scale: not by √d_k (off); divide by temperature {num(self.temperature)}")
        else:
            lines.append("2. Scale: off (scores used as they are)")
        if self.softcap:
            lines.append(f"   then capped: {num_plain(self.softcap)} · tanh(s / {num_plain(self.softcap)})")
        for term in self.terms:
            suffix = "  (masked: a future token → −∞)" if term.masked else ""
            quotient = f"{num(term.score)} / {num(self.divisor)}"
            if self.softcap:
                quotient = f"{num_plain(self.softcap)} · tanh({quotient} / {num_plain(self.softcap)})"
            lines.append(f"   {term.key_text}: {quotient} = {num(term.scaled)}{suffix}")
        lines.append("3. Softmax: exp of each scaled score, divided by their sum")
        if self.shifted:
            lines.append(f"   (exp of s − max = s − {num(self.row_max)}: the same weights, without overflow or underflow)")
        for term in self.terms:
            argument = f"{num(term.scaled)} − {num(self.row_max)}" if self.shifted else num(term.scaled)
            lines.append(f"   exp({argument}) = {num(term.exp_value)}")
        lines.append(f"   sum = {num(self.normaliser)}")
        for term in self.terms:
            lines.append(
                f"   weight({term.key_text}) = {num(term.exp_value)} / {num(self.normaliser)} = {num(term.weight)}"
            )
        lines.append("4. Weighted sum of the values")
        for term in self.terms:
            lines.append(f"   {num(term.weight)} × v({term.key_text}) {vec(term.v)} = {vec(term.weighted_v)}")
        lines.append(f"   new {self.query_text} (this head) = {vec(self.output)}")
        return "\n".join(lines)


def explain(result, head: int, query: int, max_terms: int | None = None) -> Explanation:
    """The worked calculation of ``result`` for ``head`` and query token index ``query``.

    ``max_terms``: list only the keys with the largest weights (in sentence order), for long
    sentences; the normaliser and the output always sum over every key.
    """
    heads, n = result.weights.shape[0], result.n
    if not 0 <= head < heads:
        raise EngineError("head {head} does not exist: there are {heads} heads (0 … {last})",
                          head=head, heads=heads, last=heads - 1)
    if not 0 <= query < n:
        raise EngineError("token {query} does not exist: there are {n} tokens (0 … {last})",
                          query=query, n=n, last=n - 1)
    config = result.config
    q = result.q[head, query].astype(np.float64)  # (d_k,)
    keys = result.k[head].astype(np.float64)  # (n, d_k)
    values = result.v[head].astype(np.float64)  # (n, d_k)
    products = q[None, :] * keys  # (n, d_k)
    scaled = result.scaled[head, query].astype(np.float64)  # (n,)
    weights = result.weights[head, query].astype(np.float64)  # (n,)
    masked = np.isneginf(scaled)
    row_max = float(scaled[~masked].max())
    shifted = abs(row_max) > EXP_LIMIT  # all-very-negative rows would underflow to a 0 sum
    exp_values = np.where(masked, 0.0, np.exp(np.where(masked, 0.0, scaled - (row_max if shifted else 0.0))))
    terms = tuple(
        KeyTerm(
            key_index=j,
            key_text=result.tokens[j].text,
            k=tuple(keys[j].tolist()),
            products=tuple(products[j].tolist()),
            score=float(result.scores[head, query, j]),
            scaled=float(scaled[j]),
            masked=bool(masked[j]),
            exp_value=float(exp_values[j]),
            weight=float(weights[j]),
            v=tuple(values[j].tolist()),
            weighted_v=tuple((weights[j] * values[j]).tolist()),
        )
        for j in _listed_keys(weights, max_terms)
    )
    return Explanation(
        head=head,
        query_index=query,
        query_text=result.tokens[query].text,
        d_k=config.d_k,
        scale=config.scale,
        temperature=config.temperature,
        divisor=result.score_divisor,
        q=tuple(q.tolist()),
        terms=terms,
        row_max=row_max,
        shifted=shifted,
        normaliser=float(exp_values.sum()),
        output=tuple(result.head_outputs[head, query].astype(np.float64).tolist()),
        total_keys=n,
        query_scale=float(result.query_scale),
        softcap=float(result.attn_softcap),
    )


def _listed_keys(weights: np.ndarray, max_terms: int | None) -> list[int]:
    n = len(weights)
    if max_terms is None or max_terms >= n:
        return list(range(n))
    largest = np.argpartition(-weights, max_terms - 1)[:max_terms]  # the max_terms largest weights
    return sorted(int(j) for j in largest)
