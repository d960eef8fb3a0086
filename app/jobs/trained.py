"""Pretrained-model mode, worker side: snapshots of a registry model's runs for the window.

Everything here runs in the worker thread (it is submitted as jobs). The models and their last
few traces are the engine's cache (engine.models.cache): switching layers or heads costs no new
forward pass. This module shapes what the engine computes for drawing.
"""
from __future__ import annotations

import numpy as np

from engine.analysis.compare import pair_tokens, row_cosines
from engine.analysis.request import RunRequest
from engine.analysis.runs import Runs
from engine.models.cache import held_bytes, loaded_models, model, on_release, shown_traces, trace  # noqa: F401

from .snapshot import OVERVIEW_SIZE, THUMBNAIL_SIZE, block_average, summarise


def take_model_snapshot(name: str, text: str, layer: int, progress=None, by_words: bool = False,
                        ablate: frozenset = frozenset()):
    """Snapshot of ``layer`` for ``text`` by model ``name``, with the whole trace attached (for the
    layer views) and its analysis; ``by_words``: every layer's attention rolled up by words too;
    the heads of ``ablate`` switched off (EngineError naming a head the model lacks)."""
    loaded = model(name, progress)
    request = RunRequest(text=text, ablate=frozenset(ablate), by_words=by_words).checked(loaded.facts)
    plain = trace(name, text, progress)
    bert = loaded.run(text, ablate=request.ablate) if request.ablate else plain
    result = loaded.layer_view(bert, layer)
    overview = np.stack([block_average(view.weights, OVERVIEW_SIZE) for view in bert.layers])  # (L, H, t, t)
    words = None
    if by_words:
        from .word_view import word_view

        words = word_view(text, bert.tokens, result.weights, bert.attentions, shrink=block_average,
                          thumbnail_size=THUMBNAIL_SIZE, overview_size=OVERVIEW_SIZE,
                          special_tokens=loaded.facts.special_tokens)
    from .analysis import analyse

    analysis = analyse(loaded, Runs(loaded, request, trace=bert, plain=plain))
    return summarise(result, bert=bert, layer=layer, overview=overview, model=name, words=words, analysis=analysis,
                     facts=loaded.facts)


def cosines_between(trace_a, trace_b, special: frozenset) -> dict:
    """Per-layer cosine of each word piece shared by two sentences (k-th occurrence with k-th).

    Returns {"pairs": [(text, index_a, index_b)], "cosines": (pairs, layers + 1)} where
    cosines[p, l] = cos(hidden_states_a[l, i], hidden_states_b[l, j]); the ``special`` tokens (the
    model's, facts.special_tokens: [CLS]/[SEP], <s>/</s>) are left out.
    """
    texts_a, texts_b = trace_a.token_texts, trace_b.token_texts
    pairs = [(texts_a[i], i, j) for i, j in pair_tokens(texts_a, texts_b) if texts_a[i] not in special]
    layers = trace_a.num_layers + 1
    if not pairs:
        return {"pairs": [], "cosines": np.zeros((0, layers))}
    a = trace_a.hidden_states[:, [p[1] for p in pairs]]  # (layers + 1, P, d)
    b = trace_b.hidden_states[:, [p[2] for p in pairs]]
    cosines = row_cosines(a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1])).reshape(layers, len(pairs))
    return {"pairs": pairs, "cosines": cosines.T}


def compare_texts(name: str, text_a: str, text_b: str, progress=None) -> dict:
    """Worker job: both traces by model ``name`` (cached) and their shared word pieces' per-layer cosines.

    A decoder's traces are large (1.9 GB at 1,245 SmolLM2 tokens) and the comparison reads only
    their hidden states: each sentence is run alone, its hidden states kept and its trace dropped
    before the next, and the sentence on screen is not run again (whole decoder traces kept beside
    the one on screen ran out of memory)."""
    loaded = model(name, progress)
    special = loaded.facts.special_tokens
    if not loaded.facts.capabilities.next_token_logits:
        return cosines_between(trace(name, text_a, progress), trace(name, text_b, progress), special)
    return cosines_between(_hidden_only(name, loaded, text_a), _hidden_only(name, loaded, text_b), special)


class _HiddenStates:
    """What cosines_between reads of a trace: token_texts, num_layers, hidden_states."""

    def __init__(self, trace, copy: bool) -> None:
        self.token_texts = trace.token_texts
        self.num_layers = trace.num_layers
        self.hidden_states = np.array(trace.hidden_states) if copy else trace.hidden_states  # (layers + 1, n, d)


def _hidden_only(name: str, loaded, text: str) -> _HiddenStates:
    """The hidden states of ``text`` by decoder ``loaded``: the trace on screen's when it is that
    text (no new run), else a run whose trace is dropped at once. The run is not left as the
    decoder's KV cache (it is not on screen: it would be one more trace held)."""
    shown = shown_traces.get(name)
    if shown is not None and shown.text == text and not shown.ablate:
        return _HiddenStates(shown, copy=False)
    from .window_memory import check_window_memory

    tokenized = loaded.tokenize(text)
    check_window_memory(loaded, len(tokenized.input_ids))  # with the trace on screen: two at once
    # use_cache=False: not left as the decoder's KV cache, which stays the trace on screen
    return _HiddenStates(loaded.run(tokenized, use_cache=False), copy=True)


def strongest_head_in(name: str, text: str, query: str, key: str, progress=None):
    """Worker side of a real-model preset: :func:`engine.analysis.meaning.strongest_head` of ``query`` → ``key``
    in the (cached) trace of ``text`` by model ``name``."""
    from engine.analysis.meaning import strongest_head

    return strongest_head(trace(name, text, progress), query, key, special_tokens=model(name).facts.special_tokens)


def word_similarities(name: str, words, sentence: str = "") -> dict:
    """Worker side of the word-similarity view: for each word, its input embedding (the model's
    word-embedding rows of its pieces, averaged) and its contextual vector (the last layer's hidden
    state, averaged over its pieces) — each word run alone, or found in ``sentence`` when one is given;
    returns {"words", "static" (k × k cosines), "contextual" (k × k cosines)}."""
    from engine.analysis.meaning import find_token

    loaded = model(name)
    table = loaded.weights.word_embeddings  # (vocab, d) float32: rows taken first (e5's whole table in float64 is 768 MB)
    static, contextual = [], []
    context = trace(name, sentence) if sentence.strip() else None
    for word in words:
        if context is None:
            alone = trace(name, word)
            pieces = [i for i, t in enumerate(alone.tokens) if t.text not in loaded.facts.special_tokens]
            ids, hidden = np.asarray(alone.input_ids)[pieces], np.asarray(alone.hidden_states[-1])[pieces]
        else:
            at = find_token(context.token_texts, word, special_tokens=loaded.facts.special_tokens)
            ids, hidden = np.asarray(context.input_ids)[[at]], np.asarray(context.hidden_states[-1])[[at]]
        static.append(np.asarray(table[ids], dtype=np.float64).mean(axis=0))
        contextual.append(hidden.astype(np.float64).mean(axis=0))

    def cosines(rows) -> np.ndarray:
        matrix = np.stack(rows)
        unit = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        return unit @ unit.T

    return {"words": list(words), "static": cosines(static), "contextual": cosines(contextual)}


def rank_pretrained(name: str, text: str, progress=None, cancelled=None):
    """Worker job: every head of registry model ``name`` switched off alone on ``text``, ranked by
    the change of the final vectors (engine.analysis.ablation.model_runner: each run resumes at the ablated
    layer). BLAS on one thread: many small matmuls (see engine.analysis.encoder_ablation.rank_encoder_heads)."""
    from engine.analysis.ablation import all_heads, mean_cosine_distance, model_runner, rank_heads
    from engine.core.parallel import engine_threads

    loaded = model(name)
    plain = trace(name, text)
    with engine_threads(True):
        return rank_heads(model_runner(loaded, text, plain), mean_cosine_distance(plain.hidden_states[-1]),
                          all_heads(loaded.facts.layers, loaded.facts.heads), progress=progress, cancelled=cancelled)


def export_shown(model_name: str, config, request, path):
    """Worker job of File → Export data: what ``./run export --model M --text T [--ablate …]`` writes
    for the model on screen (engine.files.export.export_run), the toy with the window's settings."""
    from engine.files.export import export_run
    from engine.models import model_info
    from engine.models.toy import ToyModel

    if model_info(model_name).configurable:
        return export_run(ToyModel(config), request, path)
    loaded = model(model_name)
    if not loaded.facts.capabilities.kv_cache:
        return export_run(loaded, request, path)
    # a whole run as the command line makes it (a prefix from the KV cache differs in the last digits),
    # left out of the KV cache: the text on screen's trace stays the cache of the next keystroke
    trace = loaded.run(request.text, ablate=request.ablate, use_cache=False)
    plain = loaded.run(request.text, use_cache=False) if request.ablate else None
    return export_run(loaded, request, path, runs=Runs(loaded, request, trace=trace, plain=plain))
