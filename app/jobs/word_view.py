"""Attention by words, worker side: a snapshot's attention rolled up from pieces into words.

Computed in the worker thread (engine.text.words.roll_up: summed over a word's key pieces,
averaged over its query pieces, rows still sum to 1) only when the window shows words, so the
GUI thread draws a ready (heads, w, w) matrix with the words as axis labels.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.text.words import roll_up, words_of




@dataclass(frozen=True, eq=False)
class WordView:
    """One snapshot's attention by words."""

    words: tuple[str, ...]  # the words in order (a special token is its own word)
    word_index: np.ndarray  # (n,) the word of each piece
    weights: np.ndarray  # (heads, w, w) rolled-up softmax weights of the snapshot's layer
    thumbnails: np.ndarray  # (heads, t, t) for the head grid (block-averaged when w > THUMBNAIL_SIZE)
    weight_max: float  # max over every head: the colour scale
    overview: np.ndarray | None = None  # (layers, heads, t, t) every layer by words (pretrained models)

    @property
    def count(self) -> int:
        return len(self.words)

    def first_piece(self, word: int) -> int:
        """The first piece of ``word`` (where a click on a word row puts the focus)."""
        hits = np.flatnonzero(self.word_index == word)
        return int(hits[0]) if hits.size else 0


def word_view(text: str, tokens, weights: np.ndarray, all_layers: np.ndarray | None = None, *, shrink,
              thumbnail_size: int, overview_size: int, special_tokens: frozenset = frozenset()) -> WordView:
    """``weights`` (heads, n, n) of ``tokens`` (spans in ``text``) by words; ``all_layers``
    (layers, heads, n, n) adds the rolled-up overview. ``shrink(matrices, size)`` block-averages
    (app.jobs.snapshot.block_average: passed in, as app.jobs.snapshot imports this module)."""
    block_average = shrink
    THUMBNAIL_SIZE, OVERVIEW_SIZE = thumbnail_size, overview_size  # noqa: N806
    words, word_index = words_of(text, tokens, special_tokens)  # the model's special tokens: words of their own
    rolled = roll_up(np.asarray(weights), word_index).astype(np.float32)  # (heads, w, w)
    overview = None
    if all_layers is not None:  # layer by layer: a decoder's 30 layers at once would double the trace's memory
        overview = np.stack([block_average(roll_up(np.asarray(layer), word_index).astype(np.float32), OVERVIEW_SIZE)
                             for layer in all_layers])  # (layers, heads, t, t)
    for array in (rolled, word_index):
        array.flags.writeable = False
    return WordView(words, word_index, rolled, block_average(rolled, THUMBNAIL_SIZE),
                    max(float(rolled.max()), 1e-6) if rolled.size else 1.0, overview)
