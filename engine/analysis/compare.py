"""Compare two attention traces: the same token in two sentences, or one sentence under two settings.

Seed 000: "苹果很好吃" and "苹果发布了新手机" — the static vector of 苹果 is the same in both
(like word2vec: one vector per word), the vector after attention is not (it mixed in its context).

- :func:`compare_sentences` (A, B computed with the same settings, only the text differs):
  for every token text found in both sentences, cos(static A, static B) on ``embeddings`` rows
  (1 for the same token: same seed, same vector), cos of x = embedding + position, and
  cos(contextual A, contextual B) on ``output`` rows. Repeated tokens are paired by occurrence:
  the k-th 苹果 of A with the k-th 苹果 of B (the first occurrences always pair; a surplus
  occurrence on one side has no partner and is left out). So identical sentences pair every
  position with itself, and no cross pairs (A's first 我 with B's second 我) clutter the table.
- :func:`compare_configs` (the current result against a snapshot taken before changing heads,
  scaling, temperature or masking): the same cosines between now and then, and current − snapshot.

The difference heatmap A − B (heads, n, n) exists only when both token lists are equal (same
texts in the same order); otherwise it is None and ``reason`` says why. When the head counts
differ, the head-averaged weights are compared instead: a (1, n, n) difference of the means
over heads, with ``heads_averaged`` set. Cosines are computed in float64 and clipped to [−1, 1];
a zero vector has cosine 0 with anything. When d_model differs the cosines are NaN.

:func:`compare_with_text` runs in the worker: it computes B with A's settings and only the text
changed, then compares.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from ..toy.compute import compute
from ..core.trace import freeze_arrays
from ..toy.trace import AttentionResult

SENTENCES, SETTINGS = "sentences", "settings"
# Why there is no difference heatmap (codes for translated messages), or why it is averaged.
REASON_TOKENS = "tokens"  # the token lists differ
REASON_HEADS = "heads"  # head counts differ: the difference is of the head-averaged weights
REASON_DIMENSIONS = "dimensions"  # d_model differs: the vectors cannot be compared (cosines NaN)
IGNORED_FIELDS = ("text", "memory_budget")  # not "settings" of the computation


@dataclass(frozen=True)
class SharedToken:
    """One row of the comparison table: a token text paired across A and B."""

    text: str
    index_a: int
    index_b: int
    cos_static: float  # cos(embeddings_A[i], embeddings_B[j])
    cos_x: float  # cos(x_A[i], x_B[j]), x = embedding + position
    cos_contextual: float  # cos(output_A[i], output_B[j])


@dataclass(frozen=True, eq=False)
class Comparison:
    """Everything two traces share, side by side. All arrays are read-only."""

    mode: str  # "sentences" (B = another text) | "settings" (B = a snapshot of earlier settings)
    tokens_a: tuple[str, ...]
    tokens_b: tuple[str, ...]
    shared_texts: tuple[str, ...]  # (m,) token text of each pair, in A's order
    index_a: np.ndarray  # (m,) int position in A
    index_b: np.ndarray  # (m,) int position in B
    static_a: np.ndarray  # (m, d_a) embeddings rows
    static_b: np.ndarray  # (m, d_b)
    x_a: np.ndarray  # (m, d_a) embedding + position rows
    x_b: np.ndarray  # (m, d_b)
    contextual_a: np.ndarray  # (m, d_a) output rows
    contextual_b: np.ndarray  # (m, d_b)
    cos_static: np.ndarray  # (m,) float64
    cos_x: np.ndarray  # (m,) float64
    cos_contextual: np.ndarray  # (m,) float64
    weights_a: np.ndarray  # (heads_a, n_a, n_a)
    weights_b: np.ndarray  # (heads_b, n_b, n_b)
    weight_max_a: np.ndarray  # (heads_a,) for shared colour levels
    weight_max_b: np.ndarray  # (heads_b,)
    difference: np.ndarray | None  # (heads, n, n) A − B, or (1, n, n) of head means; None: see reason
    difference_bound: np.ndarray | None  # (heads,) max |A − B| per head: symmetric levels
    heads_averaged: bool  # difference is mean_h(A) − mean_h(B) because head counts differ
    reason: str  # about the difference: "" | REASON_TOKENS (None) | REASON_HEADS (averaged)
    reason_text: str  # the same in English, for logs and the command line
    vectors_reason: str  # "" | REASON_DIMENSIONS (d_model differs: the cosines are NaN)
    config_changes: tuple[str, ...]  # settings that differ between A and B (text excluded)
    result_a: AttentionResult
    result_b: AttentionResult

    def __post_init__(self) -> None:
        freeze_arrays(self)

    @property
    def shared(self) -> tuple[SharedToken, ...]:
        """The table rows, one per pair."""
        return tuple(
            SharedToken(text, int(i), int(j), float(s), float(x), float(c))
            for text, i, j, s, x, c in zip(self.shared_texts, self.index_a, self.index_b,
                                           self.cos_static, self.cos_x, self.cos_contextual)
        )

    @property
    def same_tokens(self) -> bool:
        return self.tokens_a == self.tokens_b


def pair_tokens(tokens_a, tokens_b) -> list[tuple[int, int]]:
    """(i, j) pairs of equal token texts: the k-th occurrence in A with the k-th in B, in A's order."""
    positions_b: dict[str, list[int]] = {}
    for j, text in enumerate(tokens_b):
        positions_b.setdefault(text, []).append(j)
    seen: dict[str, int] = {}
    pairs = []
    for i, text in enumerate(tokens_a):
        k = seen.get(text, 0)
        seen[text] = k + 1
        partners = positions_b.get(text, ())
        if k < len(partners):
            pairs.append((i, partners[k]))
    return pairs


def row_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """cos of each row pair of two (m, d) matrices, float64, clipped to [−1, 1]; 0 for a zero row."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    dots = np.einsum("md,md->m", a64, b64)  # (m,)
    denominator = np.linalg.norm(a64, axis=1) * np.linalg.norm(b64, axis=1)  # (m,)
    cosine = np.divide(dots, denominator, out=np.zeros_like(dots), where=denominator > 0)
    return np.clip(cosine, -1.0, 1.0)


def config_changes(result_a: AttentionResult, result_b: AttentionResult) -> tuple[str, ...]:
    """Names of the settings (not the text) in which A and B differ."""
    return tuple(
        f.name for f in fields(result_a.config)
        if f.name not in IGNORED_FIELDS and getattr(result_a.config, f.name) != getattr(result_b.config, f.name)
    )


def weight_difference(weights_a: np.ndarray, weights_b: np.ndarray) -> tuple[np.ndarray | None, bool, str]:
    """(A − B, heads_averaged, reason) for (heads, n, n) weights; None when n differs."""
    if weights_a.shape[1:] != weights_b.shape[1:]:
        return None, False, REASON_TOKENS
    if weights_a.shape[0] == weights_b.shape[0]:
        difference = weights_a.astype(np.float64) - weights_b.astype(np.float64)  # (heads, n, n)
        return difference.astype(np.float32), False, ""
    mean_a = weights_a.astype(np.float64).mean(axis=0, keepdims=True)  # (1, n, n)
    mean_b = weights_b.astype(np.float64).mean(axis=0, keepdims=True)  # (1, n, n)
    return (mean_a - mean_b).astype(np.float32), True, REASON_HEADS


def _compare(result_a: AttentionResult, result_b: AttentionResult, mode: str) -> Comparison:
    tokens_a, tokens_b = tuple(result_a.token_texts), tuple(result_b.token_texts)
    pairs = pair_tokens(tokens_a, tokens_b)
    index_a = np.array([i for i, _ in pairs], dtype=np.int64)  # (m,)
    index_b = np.array([j for _, j in pairs], dtype=np.int64)  # (m,)
    rows = {}
    for name in ("embeddings", "x", "output"):
        rows[name] = (getattr(result_a, name)[index_a], getattr(result_b, name)[index_b])  # (m, d) each
    same_width = result_a.embeddings.shape[1] == result_b.embeddings.shape[1]
    cosines = {}
    for name, (a, b) in rows.items():
        cosines[name] = row_cosines(a, b) if same_width else np.full(len(pairs), np.nan)

    difference, heads_averaged, reason = None, False, REASON_TOKENS
    if tokens_a == tokens_b:
        difference, heads_averaged, reason = weight_difference(result_a.weights, result_b.weights)
    bound = None
    if difference is not None:
        bound = np.abs(difference).reshape(difference.shape[0], -1).max(axis=1)  # (heads,)
    heads_a, heads_b = result_a.weights.shape[0], result_b.weights.shape[0]
    return Comparison(
        mode=mode,
        tokens_a=tokens_a,
        tokens_b=tokens_b,
        shared_texts=tuple(tokens_a[i] for i, _ in pairs),
        index_a=index_a,
        index_b=index_b,
        static_a=rows["embeddings"][0],
        static_b=rows["embeddings"][1],
        x_a=rows["x"][0],
        x_b=rows["x"][1],
        contextual_a=rows["output"][0],
        contextual_b=rows["output"][1],
        cos_static=cosines["embeddings"],
        cos_x=cosines["x"],
        cos_contextual=cosines["output"],
        weights_a=result_a.weights,
        weights_b=result_b.weights,
        weight_max_a=result_a.weights.reshape(heads_a, -1).max(axis=1),
        weight_max_b=result_b.weights.reshape(heads_b, -1).max(axis=1),
        difference=difference,
        difference_bound=bound,
        heads_averaged=heads_averaged,
        reason=reason,
        reason_text=_reason_text(reason, mode, tokens_a, tokens_b, heads_a, heads_b),
        vectors_reason="" if same_width else REASON_DIMENSIONS,
        config_changes=config_changes(result_a, result_b),
        result_a=result_a,
        result_b=result_b,
    )


def _reason_text(reason, mode, tokens_a, tokens_b, heads_a, heads_b) -> str:
    if reason == REASON_TOKENS:
        if mode == SETTINGS:
            return "the sentence changed since the snapshot: A − B needs the same tokens in the same order"
        return (f"the sentences have different tokens ({len(tokens_a)} vs {len(tokens_b)}): "
                "A − B needs the same tokens in the same order")
    if reason == REASON_HEADS:
        return f"{heads_a} heads vs {heads_b}: A − B compares the weights averaged over heads"
    return ""


def compare_sentences(result_a: AttentionResult, result_b: AttentionResult) -> Comparison:
    """Sentence A against sentence B; compute B with A's settings (see :func:`compare_with_text`)."""
    return _compare(result_a, result_b, SENTENCES)


def compare_configs(result_now: AttentionResult, result_snapshot: AttentionResult) -> Comparison:
    """The current settings (A) against a snapshot taken earlier (B): A − B = current − snapshot.

    Per-head difference when the heads agree; head-averaged weights when the head count changed;
    None when the tokens changed (the sentence was edited since the snapshot).
    """
    return _compare(result_now, result_snapshot, SETTINGS)


def compare_with_text(result_a: AttentionResult, text_b: str) -> Comparison:
    """Compute sentence B with exactly A's settings (only the text changed) and compare (worker)."""
    result_b = compute(result_a.config.replace(text=text_b))
    return compare_sentences(result_a, result_b)
