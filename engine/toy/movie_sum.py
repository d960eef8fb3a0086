"""Seed 001's Netflix example: the weighted sum of V, as far as the tutorial's text goes.

“注意力概率 … 25% 星球大战、20% 星际穿越、10% 落魄大厨，等等 … 星球大战 → [冒险 8，幽默 2，121 分钟]，
星际穿越 → [冒险 7，幽默 1，169 …” — the text is cut off there. Two vectors are complete (the
second's last number, 169, is taken as minutes, as the first's 121); 落魄大厨's weight is given but
not its vector, and the “等等” hides the rest. So only a partial sum can be computed: the two
complete terms, Σ w_j·v_j over j ∈ {星球大战, 星际穿越}, with the share of the weight it covers.
It is what one output row of attention is (weights · V) with the missing rows left out.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FEATURES = ("冒险", "幽默", "分钟")  # adventure, humour, minutes: the columns of V
# (title, attention weight, its V row or None when the text does not give it)
MOVIES: tuple[tuple[str, float, tuple[float, ...] | None], ...] = (
    ("星球大战", 0.25, (8.0, 2.0, 121.0)),
    ("星际穿越", 0.20, (7.0, 1.0, 169.0)),
    ("落魄大厨", 0.10, None),  # weight given, vector cut off
)


@dataclass(frozen=True)
class MovieSum:
    titles: tuple[str, ...]  # the movies whose vector is complete
    weights: np.ndarray  # (m,) their attention weights
    values: np.ndarray  # (m, 3) their V rows
    terms: np.ndarray  # (m, 3) weight × row
    partial: np.ndarray  # (3,) Σ of the terms: the output row without the missing movies
    covered: float  # Σ of the weights used (0.45): the share of the mix the partial sum stands for
    missing: tuple[str, ...]  # movies with a weight but no vector
    missing_weights: tuple[float, ...]  # their weights (落魄大厨 0.10)


def movie_sum(movies=MOVIES) -> MovieSum:
    """The partial output row Σ w_j·v_j over the movies whose vector the text gives in full."""
    complete = [(title, weight, values) for title, weight, values in movies if values is not None]
    weights = np.array([weight for _t, weight, _v in complete], dtype=np.float64)  # (m,)
    values = np.array([values for _t, _w, values in complete], dtype=np.float64)  # (m, 3)
    terms = weights[:, None] * values  # (m, 3)
    return MovieSum(tuple(title for title, _w, _v in complete), weights, values, terms, terms.sum(axis=0),
                    float(weights.sum()), tuple(title for title, _w, values in movies if values is None),
                    tuple(float(weight) for _t, weight, values in movies if values is None))
