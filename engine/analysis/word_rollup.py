"""Attention by words, as an analysis of one run request: every layer's attention rolled up from
pieces into the words of the text (engine.text.words: summed over a word's key pieces, averaged
over its query pieces; the model's special tokens are words of their own).

Pretrained models always give it (their exports have always held the word view); the toy engine
when the request asks for words (its pieces are the user's own tokenizer's).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import EngineError
from ..text.words import roll_up, words_of
from .request import NotApplicable


@dataclass(frozen=True, eq=False)
class WordRollup:
    words: tuple[str, ...]  # (w,) in order
    word_index: np.ndarray  # (n,) int64 the word of each piece
    attentions: np.ndarray  # (layers, heads, n, n) the pieces' attention; the toy's (heads, n, n)

    @property
    def word_attentions(self) -> np.ndarray:
        """(layers, heads, w, w) rolled-up attention, rows summing to 1 (the toy's: (heads, w, w))."""
        return roll_up(self.attentions, self.word_index)

    def arrays(self) -> dict:
        return {"words": np.array(self.words, dtype=str), "word_index": self.word_index,
                "word_attentions": self.word_attentions}


def word_rollup(model, request, runs) -> WordRollup | NotApplicable:
    if model.facts.capabilities.configurable and not request.by_words:
        return NotApplicable("words", EngineError("attention by pieces: switch By words on to roll it up into words"))
    trace = runs.trace
    words, word_index = words_of(request.text, trace.tokens, model.facts.special_tokens)
    # the toy's files have always held its one layer's word attention, (heads, w, w)
    attentions = trace.attentions[0] if model.facts.capabilities.configurable else trace.attentions
    return WordRollup(tuple(words), np.asarray(word_index, dtype=np.int64), attentions)
