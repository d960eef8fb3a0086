"""What the seeds' pronoun examples can and cannot show: attention compared across every head,
the chosen head's whole column, and a patching experiment on a minimal pair.

A single "best head" (engine.analysis.meaning.strongest_head) teaches the wrong lesson when the head
gives every word's largest weight to the same token (小红 in e5's L11H4; "cake" in MiniLM's
L5H11, where "and" and "the" weigh more on it than "it"). So a pronoun preset reports:

- :func:`contrast` — over every layer and head, the query's weight on the key against its weight
  on a rival (她 → 小红 against 她 → 小明): each one's largest weight and where, in how many heads
  the key wins, in how many heads each is the query row's top key;
- :func:`column` — the chosen head's whole column: every token's weight on the key, and the
  query's rank among them (1 = no other token looks at the key more);
- :func:`minimal_pair` — activation patching (engine.analysis.patching) on two sentences that differ in
  one word ("… too tired." / "… too wide."): for an encoder the cosine of the pronoun's final
  vector to its vector in the clean sentence, and per layer how much of it patching the differing
  word's residual, or the pronoun's, brings back; for a decoder p(answer) of a continuation that
  names the referent ("… It was the" → " animal"), clean against corrupted.
Every number comes from the model's own runs; nothing here is typed in.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .meaning import find_token


@dataclass(frozen=True)
class Contrast:
    query: str
    key: str
    rival: str
    key_best: tuple[int, int, float]  # (layer, head, weight) of the largest query → key weight
    rival_best: tuple[int, int, float]
    key_wins: int  # heads where query → key > query → rival
    heads: int  # layers × heads
    key_top: int  # heads where the key is the query row's largest weight (ties: lowest index)
    rival_top: int


def _weights(trace) -> np.ndarray:
    """(layers, heads, n, n) float64 attention of a BERT/decoder trace or a word view."""
    return np.stack([np.asarray(layer.weights, dtype=np.float64) for layer in trace.layers])


def contrast(trace, query: str, key: str, rival: str) -> Contrast:
    """Query → key against query → rival in every layer and head of ``trace`` (token texts as in
    engine.analysis.meaning.find_token; a word view by words)."""
    texts = list(trace.token_texts)
    qi, ki, ri = find_token(texts, query), find_token(texts, key), find_token(texts, rival)
    weights = _weights(trace)  # (L, H, n, n)
    rows = weights[:, :, qi, :]  # (L, H, n) the query's rows
    to_key, to_rival = rows[:, :, ki], rows[:, :, ri]  # (L, H)
    top = rows.argmax(axis=-1)  # (L, H)

    def best(grid):
        layer, head = divmod(int(np.argmax(grid)), grid.shape[1])
        return layer, head, float(grid[layer, head])

    return Contrast(texts[qi], texts[ki], texts[ri], best(to_key), best(to_rival), int((to_key > to_rival).sum()),
                    int(to_key.size), int((top == ki).sum()), int((top == ri).sum()))


@dataclass(frozen=True)
class Column:
    key: str
    layer: int
    head: int
    weights: np.ndarray  # (n,) every token's weight on the key in that head
    query_rank: int  # 1 + the number of other tokens (not the key itself) weighing more on the key than the query
    top: str  # the other token (not the key itself) with the largest weight on the key
    top_weight: float
    rows_with_key_top: int  # rows whose largest weight is on the key


def column(trace, query: str, key: str, layer: int, head: int) -> Column:
    """The whole column of ``key`` in one head: is the query special, or does everyone look there?"""
    texts = list(trace.token_texts)
    qi, ki = find_token(texts, query), find_token(texts, key)
    matrix = np.asarray(trace.layers[layer].weights, dtype=np.float64)[head]  # (n, n)
    col = matrix[:, ki].copy()
    others = np.delete(np.arange(len(col)), ki)  # the key's own row (it looking at itself) is not a rival
    top = int(others[np.argmax(col[others])])
    return Column(texts[ki], layer, head, col, int((col[others] > col[qi]).sum()) + 1, texts[top], float(col[top]),
                  int((matrix.argmax(axis=1) == ki).sum()))


@dataclass(frozen=True)
class PairEvidence:
    measure: str  # "cosine" (encoders) or "p(answer)" (decoders)
    clean: float
    corrupt: float
    word_restored: np.ndarray  # (layers,) decoders/encoders: patching the differing word's residual at layer l
    query_restored: np.ndarray  # (layers,) patching the pronoun's (encoder) / the last position's (decoder) residual
    word: str  # the differing word (clean run's token)
    query_position: int


def minimal_pair(model, clean: str, corrupt: str, *, query: str | None = None, answer: str | None = None,
                 progress=None, cancelled=None) -> PairEvidence:
    """Residual patching on a minimal pair along two columns of the grid: the first position where
    the prompts differ, and the pronoun ``query`` (encoders) or the last position (decoders, with
    ``answer``). Values are the measure of each patched run (engine.analysis.patching)."""
    from . import patching

    decoder = patching.is_decoder_model(model)
    position = None
    if not decoder:
        position = find_token([t.text for t in model.tokenize(clean).tokens], query)
    setup = patching.prepare(model, clean, corrupt, answer if decoder else None, position)
    differ = np.flatnonzero(np.asarray(setup.clean.input_ids) != np.asarray(setup.corrupt.input_ids))
    word = int(differ[0]) if differ.size else 0
    runner = patching.Runner(setup)
    layers = setup.layers
    word_row, query_row = np.full(layers, np.nan), np.full(layers, np.nan)
    for layer in range(layers):
        if cancelled is not None and cancelled():
            break
        word_row[layer] = runner.measure(runner.resid_pre(layer, word))[0]
        query_row[layer] = runner.measure(runner.resid_pre(layer, setup.position))[0]
        if progress is not None:
            progress((layer + 1) / layers, "")
    return PairEvidence(setup.measure, setup.clean_value, setup.corrupt_value, word_row, query_row,
                        setup.clean.tokens[word].text, setup.position)


def restored_share(value: float, evidence: PairEvidence) -> float:
    """(value − corrupt) / (clean − corrupt): 1 = the clean measure back, 0 = nothing."""
    span = evidence.clean - evidence.corrupt
    return float((value - evidence.corrupt) / span) if abs(span) > 1e-12 else float("nan")


def crossover_layer(evidence: PairEvidence) -> int | None:
    """The first layer from which patching the pronoun restores more than patching the differing
    word: where the word's effect has moved into the pronoun (None: never within the model)."""
    for layer, (word, query) in enumerate(zip(evidence.word_restored, evidence.query_restored)):
        if np.isfinite(word) and np.isfinite(query) and restored_share(query, evidence) > restored_share(word, evidence):
            return layer
    return None


def next_word_share(matrix: np.ndarray) -> float:
    """Mean weight each row i puts on i + 1 (rows 1 … n − 2: the words between the special tokens
    of an encoder's sentence) — 1.0 for a pure "next word" head."""
    matrix = np.asarray(matrix, dtype=np.float64)
    n = matrix.shape[0]
    rows = np.arange(1, n - 1)
    return float(matrix[rows, rows + 1].mean()) if rows.size else float("nan")


def decoder_pair(model, clean: str, corrupt: str, answer: str) -> tuple[float, float]:
    """(p(answer) after ``clean``, after ``corrupt``) at the last position of a decoder."""
    from . import patching

    setup = patching.prepare(model, clean, corrupt, answer)
    return setup.clean_value, setup.corrupt_value


def last_word(text: str) -> str:
    """The word before the sentence's end that a minimal pair changes ("tired" in "… too tired. It was the")."""
    import re

    words = re.findall(r"\w+", text.split(".")[0])
    return words[-1] if words else text
