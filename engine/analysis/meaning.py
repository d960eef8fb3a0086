"""Find where a real model shows a relation: the layer and head whose attention from a query word
to a key word is largest (seed 001: "it" → "cake", "delicious" → "cake"; "it" → "animal").

Captions of the meaning presets are filled from :func:`strongest_head`, so the figure a reader
sees ("layer 5, head 11: 0.64") is what the app computed for that sentence, never typed in.
Works on any trace with ``token_texts`` and ``layers[l].weights`` (heads, n, n): a
:class:`~engine.models.bert.BertTrace` from MiniLM or another encoder.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import EngineError



@dataclass(frozen=True)
class HeadFinding:
    """The largest weight from ``query`` to ``key`` over every layer and head (0-based indices)."""

    query: str
    key: str
    query_index: int  # token position of the query word in the trace
    key_index: int  # token position of the key word
    layer: int  # 0-based
    head: int  # 0-based
    weight: float  # attention probability query → key in that layer and head
    runner_up: float  # the next largest weight of the pair in any other layer/head (0 when there is none)


def _normalise(text: str) -> str:
    return text.strip().lstrip("▁Ġ#").lower()  # SentencePiece / byte-level BPE / WordPiece markers


def find_token(token_texts, word: str, occurrence: int = 0, special_tokens: frozenset = frozenset()) -> int:
    """Position of the ``occurrence``-th token whose text is ``word`` (case-insensitive, subword
    markers ignored; the model's ``special_tokens`` (ModelFacts.special_tokens) never match)."""
    if not isinstance(word, str) or not word.strip():
        raise EngineError("the word to look for is empty", field="word")
    wanted = _normalise(word)
    hits = [i for i, text in enumerate(token_texts) if text not in special_tokens and _normalise(text) == wanted]
    if len(hits) <= occurrence:
        raise EngineError("the sentence has no token {word!r} (tokens: {tokens})", field="word", word=word,
                          tokens=" ".join(token_texts))
    return hits[occurrence]


def strongest_head(trace, query: str, key: str, *, query_occurrence: int = 0,
                   key_occurrence: int = 0, special_tokens: frozenset = frozenset()) -> HeadFinding:
    """The layer and head with the largest attention weight from ``query`` to ``key`` in ``trace``
    (``special_tokens``: the model's, ModelFacts.special_tokens, which never match a word)."""
    texts = list(trace.token_texts)
    qi = find_token(texts, query, query_occurrence, special_tokens)
    ki = find_token(texts, key, key_occurrence, special_tokens)
    pair = np.stack([np.asarray(layer.weights)[:, qi, ki] for layer in trace.layers]).astype(np.float64)  # (L, H)
    if pair.size == 0:
        raise EngineError("the trace has no attention layers", field=None)
    flat = int(np.argmax(pair))  # first maximum on ties: the lowest layer, then the lowest head
    layer, head = divmod(flat, pair.shape[1])
    ordered = np.sort(pair, axis=None)
    return HeadFinding(query=texts[qi], key=texts[ki], query_index=qi, key_index=ki, layer=int(layer),
                       head=int(head), weight=float(pair[layer, head]),
                       runner_up=float(ordered[-2]) if ordered.size > 1 else 0.0)
