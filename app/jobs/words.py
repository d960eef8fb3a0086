"""Attention by words for the window: the comparison of one word across two sentences (any
languages), and the model presets that open a real model (the by-words exports are the engine's:
engine.analysis.word_rollup, written by engine.files.export.export_run).

Everything that computes here runs in the worker (called through lanes): the GUI thread only
applies the answers.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.core.errors import EngineError
from engine.text.words import roll_up, words_of


# ----------------------------------------------------------------------------- words of a trace
@dataclass(frozen=True)
class _Layer:
    weights: np.ndarray  # (heads, w, w)


class WordTrace:
    """A BertTrace seen by words: ``token_texts`` are the words, ``layers[l].weights`` the rolled-up
    attention (so engine.analysis.meaning.strongest_head finds a relation between words: 小红, not 小 | 红)."""

    def __init__(self, trace, text: str) -> None:
        self.words, self.word_index = words_of(text, trace.tokens)
        self.attentions = roll_up(trace.attentions, self.word_index)  # (layers, heads, w, w)
        self.layers = tuple(_Layer(weights) for weights in self.attentions)
        self.token_texts = list(self.words)


def find_word(words, word: str) -> int:
    """Index of ``word`` among ``words``: the same text (case-insensitive), else the first word that
    starts with it ("apple" finds "Apples"), else the first that contains it."""
    wanted = word.strip().casefold()
    if not wanted:
        raise EngineError("the word to look for is empty", field="word")
    folded = [w.casefold() for w in words]
    for test in (lambda w: w == wanted, lambda w: w.startswith(wanted), lambda w: wanted in w):
        hits = [i for i, w in enumerate(folded) if test(w)]
        if hits:
            return hits[0]
    raise EngineError("the sentence has no word {word!r} (words: {words})", field="word", word=word,
                      words=" / ".join(words))


def word_vectors(trace, word_index: np.ndarray, word: int) -> np.ndarray:
    """(layers + 1, d) the vector of ``word`` at the embeddings and after every layer: the mean of its pieces."""
    pieces = np.flatnonzero(np.asarray(word_index) == word)
    return trace.hidden_states[:, pieces].astype(np.float64).mean(axis=1)


def compare_words(model_name: str, text_a: str, word_a: str, text_b: str, word_b: str, progress=None) -> dict:
    """Worker job: word ``word_a`` of ``text_a`` against ``word_b`` of ``text_b`` in model ``model_name``.

    Returns words_a / words_b (the sentences' words), index_a / index_b (the chosen words),
    cosines ((layers + 1,): cos of the two word vectors at the embeddings, then after each layer)
    and rows_a / rows_b ((layers, heads, w): the chosen word's attention row by words)."""
    from .trained import trace

    out = {"texts": (text_a, text_b)}
    for side, text, word in (("a", text_a, word_a), ("b", text_b, word_b)):
        bert = trace(model_name, text, progress)
        words, word_index = words_of(text, bert.tokens)
        chosen = find_word(words, word)
        rolled = roll_up(bert.attentions, word_index)  # (layers, heads, w, w)
        out.update({f"words_{side}": words, f"index_{side}": chosen, f"rows_{side}": rolled[:, :, chosen, :],
                    f"vectors_{side}": word_vectors(bert, word_index, chosen)})
    a, b = out.pop("vectors_a"), out.pop("vectors_b")
    norms = np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-30)
    out["cosines"] = np.sum(a * b, axis=1) / norms  # (layers + 1,)
    return out


# ----------------------------------------------------------------------------- model presets
def key_grids(trace, query: str, key: str, rival: str) -> dict:
    """The weight from ``query`` to ``key`` and to ``rival`` in every layer and head of ``trace`` (pieces,
    or a WordTrace's words), for Model layers to show side by side: the caption's count of heads where
    one wins is two grids a reader can compare cell by cell."""
    from engine.analysis.meaning import find_token

    texts = list(trace.token_texts)
    qi, ki, ri = find_token(texts, query), find_token(texts, key), find_token(texts, rival)
    rows = np.stack([np.asarray(layer.weights, dtype=np.float64)[:, qi, :] for layer in trace.layers])  # (L, H, n)
    return {"query": texts[qi], "key": texts[ki], "rival": texts[ri],
            "to_key": rows[:, :, ki].copy(), "to_rival": rows[:, :, ri].copy()}  # (L, H) each



def preset_finding(model_name: str, preset, progress=None) -> dict:
    """Worker job: the trace of a model preset's sentence and where its relation is strongest
    (engine.analysis.meaning.strongest_head, by words when the preset says so). Returns layer, head, the
    focus piece and the caption with the figures filled in (English: the window translates the
    template first and passes it as ``preset.caption``)."""
    from engine.analysis.meaning import strongest_head

    from .trained import trace
    from ..text import fill

    text = preset.settings["text"]
    bert = trace(model_name, text, progress)
    if getattr(preset, "by_words", False):
        words = WordTrace(bert, text)
        finding = strongest_head(words, preset.focus, preset.key)
        focus = int(np.flatnonzero(words.word_index == finding.query_index)[0])
    else:
        finding = strongest_head(bert, preset.focus, preset.key)
        focus = finding.query_index
    caption = fill(preset.caption, finding.query, finding.key, finding.layer, finding.head, f"{finding.weight:.2f}")
    if getattr(preset, "evidence", ()):  # what the single head does not show, from the model's runs
        from .trained import model as loaded_model
        from ..preset_evidence import evidence_sentences

        seen = words if getattr(preset, "by_words", False) else bert
        caption = " ".join([caption, *evidence_sentences(loaded_model(model_name), seen, preset, finding)])
    rival = next((item[1] for item in getattr(preset, "evidence", ()) or () if item[0] == "rival"), None)
    seen = words if getattr(preset, "by_words", False) else bert
    two_keys = None if rival is None else key_grids(seen, preset.focus, preset.key, rival)
    key = None if getattr(preset, "by_words", False) else finding.key_index  # a piece, for the inspector
    # the key word's first piece: Model layers' target (by words too: its weight map reads pieces)
    key_piece = int(np.flatnonzero(words.word_index == finding.key_index)[0]) \
        if getattr(preset, "by_words", False) else finding.key_index
    return {"layer": finding.layer, "head": finding.head, "focus": focus, "caption": caption, "key": key,
            "key_piece": key_piece, "two_keys": two_keys,
            "weight": finding.weight, "model": model_name, "text": text, "compare": getattr(preset, "compare", None)}
