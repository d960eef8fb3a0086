"""AttentionResult: the frozen, read-only trace of one computation, and per-token vector diffs."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

import numpy as np

from .config import AttentionConfig
from .tokenize import Token

if TYPE_CHECKING:  # pragma: no cover
    from .explain import Explanation

# Every array of the trace, in pipeline order: the names of the .npz / .json export too.
ARRAY_NAMES = (
    "embeddings", "positional", "x",
    "w_q", "w_k", "w_v", "w_o",
    "q", "k", "v",
    "scores", "scaled", "weights", "head_outputs",
    "concat", "output",
    "diff", "norm_before", "norm_after", "cosine",
)


@dataclass(frozen=True, eq=False)
class AttentionResult:
    """Everything one self-attention computation produced. All arrays are read-only."""

    config: AttentionConfig
    tokens: tuple[Token, ...]
    embeddings: np.ndarray  # (n, d) static token vectors
    positional: np.ndarray  # (n, d) added positions; zeros for none / rope
    x: np.ndarray  # (n, d) = embeddings + positional: what enters the projections
    w_q: np.ndarray  # (d, d)
    w_k: np.ndarray  # (d, d)
    w_v: np.ndarray  # (d, d)
    w_o: np.ndarray  # (d, d)
    q: np.ndarray  # (heads, n, d_k), after RoPE when positional == rope
    k: np.ndarray  # (heads, n, d_k), after RoPE when positional == rope
    v: np.ndarray  # (heads, n, d_k)
    scores: np.ndarray  # (heads, n, n) q·kᵀ
    scaled: np.ndarray  # (heads, n, n) scores / √d_k / temperature, −∞ where masked
    weights: np.ndarray  # (heads, n, n) softmax over keys: every row sums to 1
    head_outputs: np.ndarray  # (heads, n, d_k) weights · v
    concat: np.ndarray  # (n, d) heads side by side
    output: np.ndarray  # (n, d) concat · W_O
    diff: np.ndarray  # (n, d) output − x
    norm_before: np.ndarray  # (n,) ‖x_i‖
    norm_after: np.ndarray  # (n,) ‖output_i‖
    cosine: np.ndarray  # (n,) cos(x_i, output_i)
    q_unrotated: np.ndarray | None = None  # (heads, n, d_k) before RoPE, when rope
    k_unrotated: np.ndarray | None = None
    mask: np.ndarray | None = None  # (n, n) bool, True = masked, when causal
    estimated_bytes: int = 0  # the memory estimate checked against the budget
    seconds: float = 0.0  # wall time of compute()

    def __post_init__(self) -> None:
        freeze_arrays(self)

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def token_texts(self) -> list[str]:
        return [token.text for token in self.tokens]

    @property
    def nbytes(self) -> int:
        """Bytes held by the trace's arrays (shared arrays counted once)."""
        seen: dict[int, int] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                base = value if value.base is None else value.base
                seen[id(base)] = base.nbytes if isinstance(base, np.ndarray) else value.nbytes
        return sum(seen.values())

    def arrays(self) -> dict[str, np.ndarray]:
        """The named arrays of :data:`ARRAY_NAMES`."""
        return {name: getattr(self, name) for name in ARRAY_NAMES}

    def explain(self, head: int, query: int, max_terms: int | None = None) -> "Explanation":
        """Worked arithmetic for one head and query token (see :mod:`engine.explain`)."""
        from .explain import explain

        return explain(self, head, query, max_terms)


def freeze_arrays(obj) -> None:
    """Make every ndarray field of a dataclass instance read-only (results are shared, never edited)."""
    for f in fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, np.ndarray):
            value.flags.writeable = False


def vector_diffs(before: np.ndarray, after: np.ndarray) -> dict[str, np.ndarray]:
    """Per-row difference, norms and cosine similarity of two (n, d) matrices."""
    before64 = before.astype(np.float64)
    after64 = after.astype(np.float64)
    norm_before = np.linalg.norm(before64, axis=1)  # (n,)
    norm_after = np.linalg.norm(after64, axis=1)  # (n,)
    dots = np.einsum("nd,nd->n", before64, after64)  # (n,)
    denominator = norm_before * norm_after
    cosine = np.divide(dots, denominator, out=np.zeros_like(dots), where=denominator > 0)
    return {
        "diff": (after - before).astype(np.float32),
        "norm_before": norm_before.astype(np.float32),
        "norm_after": norm_after.astype(np.float32),
        "cosine": cosine.astype(np.float32),
    }
