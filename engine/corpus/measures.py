"""One text's contribution to a corpus job: its head table and its head-pair distances.

For attentions (layers, heads, n, n) of one text:

- the head table of engine/analysis/head_stats.py (entropy, weight on first / special / previous
  / self tokens) and ``punctuation``: the mean over query rows of the weight on punctuation tokens
  (a piece that is all Unicode punctuation once its word-start marks are removed; special tokens
  never count). Clark et al. (2019) found heads that park their weight on periods and commas.
- the head-pair distances behind the head clusters, :func:`pair_distance_sums`.

The distribution compared between two heads is the one Clark et al. (2019, §6) compare: for one
query token of one text, a head's attention row over the keys of that text (its softmax output,
a probability distribution over the same n keys for every head, so any two heads' rows for the
same token are comparable). Their distance between heads h and g is Σ over the corpus's tokens
of JS(α_h(token), α_g(token)); here the sum is of the Jensen–Shannon *distance* (the square root
of the divergence in bits, a metric in [0, 1]: Endres & Schindelin 2003) and the job divides it
by the number of tokens, so the matrix is a metric whatever the corpus's size (what MDS expects).
"""
from __future__ import annotations

import unicodedata
from typing import Sequence

import numpy as np

from ..analysis.head_stats import MEASURES, head_stats

CORPUS_MEASURES = MEASURES + ("punctuation",)
WORD_MARKS = "##ĠĊ▁ \t\n"  # WordPiece continuation, byte-level BPE's space and newline, SentencePiece's space
PAIR_BLOCK_ELEMENTS = 1 << 21  # float64 values of one block of the pair computation (16 MB)


def punctuation_mask(token_texts: Sequence[str], special: np.ndarray | None = None) -> np.ndarray:
    """(n,) bool: True for pieces made only of punctuation (Unicode category P*) once the
    tokenizers' word marks are stripped; special tokens ([CLS], <s> …) are never punctuation."""
    mask = np.zeros(len(token_texts), dtype=bool)
    for index, text in enumerate(token_texts):
        core = text.strip(WORD_MARKS)
        mask[index] = bool(core) and all(unicodedata.category(c).startswith("P") for c in core)
    if special is not None:
        mask &= ~np.asarray(special, dtype=bool)
    return mask


def corpus_stats(attentions: np.ndarray, special: np.ndarray, punctuation: np.ndarray) -> dict[str, np.ndarray]:
    """The measures of :data:`CORPUS_MEASURES` for one text, each (layers, heads) float64."""
    stats = head_stats(attentions, special)
    a = np.asarray(attentions, dtype=np.float64)  # (layers, heads, n, n)
    stats["punctuation"] = a[..., punctuation].sum(axis=-1).mean(axis=-1)  # (layers, heads)
    return stats


def _xlog2x(p: np.ndarray) -> np.ndarray:
    """p·log₂ p elementwise (0·log 0 = 0), float64."""
    terms = np.maximum(p, 5e-324)  # log2(5e-324) = −1074, times 0 is 0: no masked log (see head_stats)
    np.log2(terms, out=terms)
    terms *= p
    return terms


def pair_distance_sums(attentions: np.ndarray) -> np.ndarray:
    """(K, K) float64, K = layers · heads (layer-major): for every pair of heads, the sum over this
    text's n query rows of the Jensen–Shannon distance between their attention rows,
    √(H(½(p + q)) − ½H(p) − ½H(q)) with entropies in bits. Divided by the corpus's token count it
    is the head distance of the module docstring."""
    layers, heads, n, _ = attentions.shape
    k = layers * heads
    a = np.asarray(attentions, dtype=np.float64).reshape(k, n, n)  # (K, n, n): K heads' rows
    # only the (query, key) cells some head weighs enter a row's entropies (a key no head weighs adds
    # 0 · log 0 to every one): a decoder's future keys are half the cells, skipped
    rows, keys = np.nonzero(a.max(axis=0) > 0)  # (T,) each, sorted by row
    starts = np.searchsorted(rows, np.arange(n))  # (n,) where each row's cells begin
    p = a[:, rows, keys]  # (K, T)
    entropy = -np.add.reduceat(_xlog2x(p), starts, axis=-1)  # (K, n) bits
    sums = np.zeros((k, k))
    block = max(1, PAIR_BLOCK_ELEMENTS // max(1, k * p.shape[1]))
    for start in range(0, k, block):
        stop = min(k, start + block)
        # only heads g ≥ start are paired with this block (the matrix is symmetric); the rest mirrors
        mixed = (p[start:stop, None] + p[None, start:]) * 0.5  # (B, K − start, T)
        mixed_entropy = -np.add.reduceat(_xlog2x(mixed), starts, axis=-1)  # (B, K − start, n)
        divergence = mixed_entropy - 0.5 * (entropy[start:stop, None] + entropy[None, start:])
        np.maximum(divergence, 0.0, out=divergence)  # rounding can leave −1e−16 where p = q
        sums[start:stop, start:] = np.sqrt(divergence).sum(axis=-1)
    upper = np.triu(sums)
    return upper + np.triu(sums, 1).T
