"""What each head habitually does: a few numbers per (layer, head), and the patterns they name.

Measures averaged over the query rows of one input, for attentions (layers, heads, n, n):

- ``entropy``: mean over rows of −Σ_j α_ij log₂ α_ij, in bits (0: one key takes everything;
  log₂ n: uniform). Rows of a causal model see fewer keys, so their entropy is lower anyway.
- ``first``: mean weight on position 0 (a decoder's BOS or first word; BERT's [CLS]).
- ``special``: mean weight on the special tokens (``special_mask``): the "sink" of
  Clark et al. (2019), "What Does BERT Look At?", and Xiao et al. (2023), "attention sinks".
- ``previous``: mean over rows i ≥ 1 of α_i,i−1 (Clark et al.'s previous-token heads).
- ``self``: mean of α_ii.
- ``induction`` (decoders, :func:`induction_scores`): on a random token sequence repeated,
  [r, r], the weight from each token's second occurrence to the token that followed its first
  (Olsson et al., 2022, "In-context Learning and Induction Heads").

:func:`name_heads` names heads whose measure crosses a threshold ("previous-token head",
"sink head", "self head", "induction head") for a caption; :func:`head_table` gives one row per
head for a table or a CSV file.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

MEASURES = ("entropy", "first", "special", "previous", "self")
TABLE_COLUMNS = ("layer", "head") + MEASURES  # + ("induction",) when given

def special_mask(token_texts: Sequence[str], special_tokens: frozenset) -> np.ndarray:
    """(n,) bool: True for the tokens among ``special_tokens``, the model's own (its tokenizer's:
    ModelFacts.special_tokens; its unknown piece is text, not special)."""
    return np.array([text in special_tokens for text in token_texts], dtype=bool)


def head_stats(attentions: np.ndarray, special: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The measures of :data:`MEASURES` for attentions (layers, heads, n, n): each (layers, heads)
    float64. ``special``: (n,) bool mask of special tokens (default: none, special = 0)."""
    a = np.asarray(attentions, dtype=np.float64)  # (layers, heads, n, n)
    n = a.shape[-1]
    # 0 · log 0 = 0: zeros are raised to the smallest double (log2 = −1074, times 0 is 0) rather than
    # skipped with where= (a masked log2 ran 3× slower: 107 against 33 ms for SmolLM2 at 128 tokens);
    # every weight of a float32 attention is far above it, so every other term is the same number
    terms = np.maximum(a, 5e-324)
    np.log2(terms, out=terms)
    terms *= a  # a · log2 a
    entropy = -terms.sum(axis=-1).mean(axis=-1)  # (layers, heads)
    diagonal = np.diagonal(a, axis1=-2, axis2=-1)  # (layers, heads, n): α_ii
    if n > 1:
        previous = np.diagonal(a, offset=-1, axis1=-2, axis2=-1).mean(axis=-1)  # α_i,i−1, i ≥ 1
    else:
        previous = np.zeros(a.shape[:2])
    if special is None:
        special_share = np.zeros(a.shape[:2])
    else:
        special = np.asarray(special, dtype=bool)
        special_share = a[..., special].sum(axis=-1).mean(axis=-1)  # (layers, heads)
    return {
        "entropy": entropy,
        "first": a[..., 0].mean(axis=-1),
        "special": special_share,
        "previous": previous,
        "self": diagonal.mean(axis=-1),
    }


def induction_scores(attentions: np.ndarray, period: int, start: int = 0) -> np.ndarray:
    """(layers, heads) induction score of a run over [prefix, r, r] with ``len(r) == period`` and
    ``len(prefix) == start`` (e.g. 1 for a BOS token): the mean over positions i of the second
    copy, start + period ≤ i < start + 2·period, of α_i,j with j = i − period + 1, the position
    after token i's first occurrence."""
    a = np.asarray(attentions)
    n = a.shape[-1]
    if period < 1 or start < 0 or start + 2 * period > n:
        raise ValueError(f"a repeated sequence of period {period} after {start} tokens needs "
                         f"{start + 2 * period} positions, not {n}")
    queries = np.arange(start + period, start + 2 * period)  # (period,)
    keys = queries - period + 1  # (period,)
    return a[..., queries, keys].astype(np.float64).mean(axis=-1)  # (layers, heads)


def repeated_random_tokens(
    vocab_size: int, period: int, seed: int = 0, prefix: Sequence[int] = (), exclude: Sequence[int] = ()
) -> np.ndarray:
    """(len(prefix) + 2·period,) int64 ids [prefix, r, r] with r ``period`` distinct random ids
    (none in ``exclude``, e.g. special tokens), for :func:`induction_scores` with start=len(prefix)."""
    rng = np.random.default_rng(seed)
    allowed = np.setdiff1d(np.arange(vocab_size), np.asarray(exclude, dtype=np.int64))
    r = rng.choice(allowed, size=period, replace=False)
    return np.concatenate([np.asarray(prefix, dtype=np.int64), r, r]).astype(np.int64)


# Threshold on a measure above which a head gets a name (its mean weight; Clark et al. call a
# head previous-token / [SEP]-attending at about half the weight on average).
THRESHOLDS = {"previous-token head": 0.5, "sink head": 0.6, "self head": 0.5, "induction head": 0.4}
_PATTERN_MEASURE = {"previous-token head": "previous", "sink head": "sink", "self head": "self",
                    "induction head": "induction"}


@dataclass(frozen=True)
class NamedHead:
    layer: int
    head: int
    pattern: str  # "previous-token head", "sink head", "self head" or "induction head"
    measure: str  # the measure behind it: previous, sink (= max of first, special), self, induction
    value: float


def name_heads(stats: Mapping[str, np.ndarray], thresholds: Mapping[str, float] | None = None) -> list[NamedHead]:
    """Heads whose measure reaches the pattern's threshold (:data:`THRESHOLDS`), by pattern then
    by value, largest first. "sink" is the larger of the weight on the first and on special tokens."""
    thresholds = dict(THRESHOLDS if thresholds is None else thresholds)
    measures = dict(stats)
    measures["sink"] = np.maximum(stats["first"], stats["special"])
    named = []
    for pattern, threshold in thresholds.items():
        values = measures.get(_PATTERN_MEASURE[pattern])
        if values is None:  # e.g. no induction scores for an encoder
            continue
        found = [NamedHead(int(l), int(h), pattern, _PATTERN_MEASURE[pattern], float(values[l, h]))
                 for l, h in zip(*np.nonzero(values >= threshold))]
        named += sorted(found, key=lambda head: -head.value)
    return named


def caption(named: Sequence[NamedHead], limit: int = 6) -> str:
    """One line per pattern found, e.g. "previous-token heads: 1.2 (0.91), 0.4 (0.62)" (layer.head
    and the measure); at most ``limit`` heads a line. Empty when nothing is named."""
    lines = []
    for pattern in dict.fromkeys(head.pattern for head in named):
        heads = [head for head in named if head.pattern == pattern]
        shown = ", ".join(f"{h.layer}.{h.head} ({h.value:.2f})" for h in heads[:limit])
        more = f" and {len(heads) - limit} more" if len(heads) > limit else ""
        lines.append(f"{pattern}s: {shown}{more}")
    return "\n".join(lines)


def head_table(stats: Mapping[str, np.ndarray]) -> np.ndarray:
    """One row per head, layer by layer: a structured array with fields layer, head (int32) and
    the measures (float64), "induction" included when ``stats`` has it."""
    columns = TABLE_COLUMNS + (("induction",) if "induction" in stats else ())
    layers, heads = stats["entropy"].shape
    table = np.empty(layers * heads, dtype=[(c, np.int32 if c in ("layer", "head") else np.float64) for c in columns])
    table["layer"] = np.repeat(np.arange(layers), heads)
    table["head"] = np.tile(np.arange(heads), layers)
    for column in columns[2:]:
        table[column] = np.asarray(stats[column]).reshape(-1)
    return table


def table_csv(table: np.ndarray) -> str:
    """The table as CSV text with a header line (measures to 6 decimals)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    names = table.dtype.names
    writer.writerow(names)
    for row in table:
        writer.writerow([int(row[c]) if c in ("layer", "head") else f"{float(row[c]):.6f}" for c in names])
    return out.getvalue()
