"""Attention by words: subword pieces rolled up into the words a reader sees, for every model.

A model attends between its pieces (▁小 明 喜欢 苹果 in e5; wordpieces in MiniLM; byte
fragments in a byte-level decoder). A reader thinks in words: 小明 / 喜欢 / 苹果. The words
come from the text itself, as engine.text.tokenize's ``auto`` mode splits it (jieba for runs of
Chinese, words and single punctuation marks otherwise), and each piece joins the word its
character span falls in:

- a piece that overlaps a word joins it; a piece that spans several words (a piece longer
  than jieba's word) merges them into one;
- pieces on the same characters (byte fragments of one character, a character split in two)
  therefore share a word;
- a piece with no characters of its own — a lone ▁ or Ġ, a space — joins the next piece's
  word (the last one joins the previous word);
- special tokens stay their own words: the model's own (its tokenizer's, ModelFacts.special_tokens,
  passed as ``special_tokens``), and any piece with a name but an empty span (the tokenizers give
  [CLS], [SEP], <s>, </s> no characters of the text).

The roll-up (``roll_up``) gives the attention from word A to word B as the attention from A's
pieces to B's pieces, summed over B's pieces (the probability mass that lands anywhere in
B) and averaged over A's pieces (each query piece is one distribution; their mean is one
too). So every row still sums to 1, and with one piece per word it is the piece view itself.
In matrix form, with the (n, w) membership matrix M and the piece counts c of the words:

    word_attentions = diag(1/c) · Mᵀ · A · M
"""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from ..core.errors import EngineError
from .tokenize import Token, tokenize

# Markers tokenizers use for a space: SentencePiece ▁, byte-level BPE Ġ (and Ċ for a newline).
_SPACE_MARKERS = re.compile(r"[\s\u2581\u0120\u010a]*")


def is_special(token: Token, special_tokens: frozenset = frozenset()) -> bool:
    """A model's own token, not text: one of ``special_tokens`` (the model's, from its tokenizer:
    ModelFacts.special_tokens), or an empty span with a name other than a space marker (a lone ▁
    or Ġ has an empty span too, but is text)."""
    if token.text in special_tokens:
        return True
    return token.start >= token.end and not _SPACE_MARKERS.fullmatch(token.text)


def special_of(tokens: Sequence[Token], special_tokens: frozenset = frozenset()) -> np.ndarray:
    """(n,) bool: :func:`is_special` for each piece."""
    return np.array([is_special(token, special_tokens) for token in tokens], dtype=bool)


def words_of(text: str, tokens: Sequence[Token],
             special_tokens: frozenset = frozenset()) -> tuple[tuple[str, ...], np.ndarray]:
    """The words of ``text`` that ``tokens`` (pieces with spans in ``text``) make up;
    ``special_tokens``: the model's (:func:`is_special`).

    Returns ``(words, word_index)``: the words in order (a special token's word is its own name)
    and, for each piece, the index of its word ((n,) int64, non-decreasing for pieces in text
    order). Every piece belongs to exactly one word; every word has at least one piece.
    """
    tokens = list(tokens)
    n = len(tokens)
    if n == 0:
        return (), np.zeros(0, dtype=np.int64)
    segments = tokenize(text, "auto")  # words with spans, in order
    starts = np.asarray([s.start for s in segments], dtype=np.int64)
    ends = np.asarray([s.end for s in segments], dtype=np.int64)

    # Group per piece: ("special", i), ("span", first segment, last segment), or None (no characters).
    groups: list[tuple | None] = []
    for i, token in enumerate(tokens):
        if is_special(token, special_tokens):
            groups.append(("special", i))
            continue
        first = int(np.searchsorted(ends, token.start, side="right"))  # first segment ending after start
        last = int(np.searchsorted(starts, token.end, side="left")) - 1  # last segment starting before end
        if token.end > token.start and first <= last:
            groups.append(("span", first, last))
        else:  # no characters, or only white space / control characters: like a lone ▁
            groups.append(None)

    # Pieces without characters join the next piece that has a word (else the previous one).
    following = None
    for i in range(n - 1, -1, -1):
        if groups[i] is None:
            groups[i] = following
        elif groups[i][0] == "span":
            following = groups[i]
    previous = None
    for i in range(n):
        if groups[i] is None:
            groups[i] = previous
        elif groups[i][0] == "span":
            previous = groups[i]
    if any(g is None for g in groups):  # no piece has characters: each piece its own word
        return tuple(t.text for t in tokens), np.arange(n, dtype=np.int64)

    # Merge segment ranges that pieces join (a piece over two segments makes them one word):
    # union of overlapping [first, last] ranges, as runs over the segment axis.
    ranges = sorted({(g[1], g[2]) for g in groups if g[0] == "span"})
    merged: list[list[int]] = []
    for first, last in ranges:
        if merged and first <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], last)
        else:
            merged.append([first, last])
    run_of_segment = {}
    for r, (first, last) in enumerate(merged):
        for s in range(first, last + 1):
            run_of_segment[s] = r

    words: list[str] = []
    word_index = np.empty(n, dtype=np.int64)
    key_to_word: dict[tuple, int] = {}
    for i, group in enumerate(groups):
        key = ("special", group[1]) if group[0] == "special" else ("run", run_of_segment[group[1]])
        if key not in key_to_word:
            key_to_word[key] = len(words)
            if key[0] == "special":
                words.append(tokens[group[1]].text)
            else:
                first, last = merged[key[1]]
                words.append(text[int(starts[first]) : int(ends[last])])
        word_index[i] = key_to_word[key]
    return tuple(words), word_index


def membership(word_index: np.ndarray, words: int | None = None) -> np.ndarray:
    """(n, w) float64 one-hot matrix: piece i belongs to word word_index[i]."""
    word_index = np.asarray(word_index, dtype=np.int64)
    if words is None:
        words = int(word_index.max()) + 1 if word_index.size else 0
    matrix = np.zeros((word_index.size, words), dtype=np.float64)
    matrix[np.arange(word_index.size), word_index] = 1.0
    return matrix


def roll_up(attentions: np.ndarray, word_index: np.ndarray) -> np.ndarray:
    """Piece attention (..., n, n) → word attention (..., w, w), rows still summing to 1:
    summed over each word's key pieces, averaged over its query pieces. Same float dtype out."""
    attentions = np.asarray(attentions)
    word_index = np.asarray(word_index, dtype=np.int64)
    n = attentions.shape[-1]
    if attentions.ndim < 2 or attentions.shape[-2] != n or word_index.shape != (n,):
        raise EngineError(
            "attention of shape {shape} does not match {count} word indices",
            shape=tuple(attentions.shape), count=int(word_index.size),
        )
    if n == 0:
        return attentions.copy()
    if word_index.min() < 0:
        raise EngineError("word indices must not be negative")
    words = int(word_index.max()) + 1
    counts = np.bincount(word_index, minlength=words)
    if np.any(counts == 0):
        raise EngineError("every word needs at least one piece (word indices 0 … {last} with gaps)", last=words - 1)
    dtype = attentions.dtype if attentions.dtype in (np.float32, np.float64) else np.float64
    keys = membership(word_index, words).astype(dtype)  # (n, w): sums key pieces
    queries = (keys / counts.astype(dtype)).T  # (w, n): averages query pieces
    return queries @ (attentions.astype(dtype, copy=False) @ keys)  # (..., w, w)


def roll_up_blocks(attentions: np.ndarray, word_index: np.ndarray):
    """:func:`roll_up` of (L, H, n, n) one leading index at a time: yields L arrays (H, w, w).

    For exports that write the word view while they compute it (engine.files.export): the whole
    roll-up holds (L, H, n, w) and (L, H, w, w) at once beside the trace (3.3 GB for SmolLM2 at
    1,245 tokens); this holds the (n, w) membership and (w, n) averages once, and one layer's
    (H, n, w) and (H, w, w) at a time (engine.core.memory.word_view_bytes). Same numbers as
    roll_up of the whole array."""
    attentions = np.asarray(attentions)
    if attentions.ndim < 3:
        yield roll_up(attentions, word_index)
        return
    word_index = np.asarray(word_index, dtype=np.int64)
    n = attentions.shape[-1]
    if attentions.shape[-2] != n or word_index.shape != (n,) or n == 0:
        for block in attentions:  # roll_up names the mismatch (or copies the empty block)
            yield roll_up(block, word_index)
        return
    words = int(word_index.max()) + 1
    counts = np.bincount(np.maximum(word_index, 0), minlength=words)
    if word_index.min() < 0 or np.any(counts == 0):
        yield roll_up(attentions[0], word_index)  # raises, naming the fault
        return
    dtype = attentions.dtype if attentions.dtype in (np.float32, np.float64) else np.float64
    keys = np.zeros((n, words), dtype)  # (n, w) sums key pieces, made in the output's float type
    keys[np.arange(n), word_index] = 1
    queries = (keys / counts.astype(dtype)).T  # (w, n) averages query pieces
    for block in attentions:  # (H, n, n) a view: no copy of the trace
        yield queries @ (block.astype(dtype, copy=False) @ keys)  # (H, w, w)


def word_arrays(text: str, tokens, attentions: np.ndarray, special_tokens: frozenset = frozenset()) -> dict[str, np.ndarray]:
    """The word view every export writes (command line, window, every model): ``words`` (w,) str,
    ``word_index`` (n,) int64 and ``word_attentions`` (…, w, w), ``attentions`` (…, n, n) rolled up."""
    words, word_index = words_of(text, tokens, special_tokens)
    word_index = np.asarray(word_index, dtype=np.int64)
    return {"words": np.array(words, dtype=str), "word_index": word_index,
            "word_attentions": roll_up(attentions, word_index)}
