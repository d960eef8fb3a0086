"""One batch of a corpus job, as a worker computes it (in this process or a Dask worker's).

:func:`measure_batch` is a plain function of plain values (the model's registry name, the
switched-off heads, the batch's texts): Dask ships it by reference, so every worker imports this
package and loads the model once (:func:`loaded_model` keeps it for the worker's later batches).
Its result depends on its arguments only, which makes a retried batch the same batch.
"""
from __future__ import annotations

import numpy as np

from ..core.parallel import blas_single_threaded

from .measures import CORPUS_MEASURES, corpus_stats, pair_distance_sums, punctuation_mask
from .qk_map import QK_SAMPLE_TEXTS, qk_hook_names, sample_vectors

_LOADED: dict = {}  # registry name → model, one per process


def loaded_model(name: str):
    """The model ``name`` (engine.models registry: a bundled name, gguf:PATH or hf:PATH), loaded
    once per process."""
    if name not in _LOADED:
        from ..models import load_model

        _LOADED.clear()  # one model at a time: a worker serves one job's model
        _LOADED[name] = load_model(name)
    return _LOADED[name]


def model_facts(name: str) -> dict:
    """What the job needs to know of model ``name``: layers, heads, max_positions, title, kind."""
    facts = loaded_model(name).facts
    from ..models import model_info

    return {"layers": facts.layers, "heads": facts.heads, "max_positions": facts.max_positions,
            "title": model_info(name).title, "kind": facts.kind}


def token_limit(max_positions: int, max_tokens: int) -> int:
    """The longest text a job measures: its own limit, or the model's when that is smaller (0: none)."""
    return min(max_positions, max_tokens) if max_positions else max_tokens


def measure_batch(model_name: str, ablate: frozenset, first_index: int, texts: tuple, max_tokens: int) -> dict:
    """The shard of the batch ``texts`` (corpus positions first_index …): see engine/corpus/shards.py.
    Texts of more than the token limit are skipped and listed in ``skipped_index``.

    numpy's BLAS runs on one thread meanwhile: a sentence's matrices are small, and OpenBLAS's
    idle threads spinning between them took 12× the CPU time on this loaded 2-core machine (MiniLM,
    20 texts in one process: 10.0 s of CPU and 42 s of wall time, against 0.9 s and 4.3 s)."""
    with blas_single_threaded():
        return _measure(model_name, ablate, first_index, texts, max_tokens)


def _measure(model_name: str, ablate: frozenset, first_index: int, texts: tuple, max_tokens: int) -> dict:
    model = loaded_model(model_name)
    facts = model.facts
    limit = token_limit(facts.max_positions, max_tokens)
    k_heads = facts.layers * facts.heads
    measured, tokens, skipped = [], [], []
    values = {m: [] for m in CORPUS_MEASURES}
    pair_sums, rows = np.zeros((k_heads, k_heads)), 0
    q_names, k_names = qk_hook_names(model)
    sampled = {"queries": [], "keys": [], "text_index": [], "token": []}  # the joint query-key map's texts
    for offset, text in enumerate(texts):
        tokenized = model.tokenize(text)
        if tokenized.truncated or tokenized.n > limit or tokenized.n == 0:
            skipped.append(first_index + offset)
            continue
        trace = model.run(tokenized, ablate=ablate)
        if first_index + offset < QK_SAMPLE_TEXTS:
            # a second forward that keeps the queries and keys: a hooked decoder forward rounds a few
            # attention weights differently (1e-9), and the head table is run()'s, as one sentence's is
            cached, cache = model.run_with_cache(tokenized, q_names + k_names, ablate=ablate)
            queries, keys = sample_vectors(cache, q_names, k_names, facts.heads)  # (K, n, d_head) each
            sampled["queries"].append(queries)
            sampled["keys"].append(keys)
            sampled["text_index"] += [first_index + offset] * cached.n
            sampled["token"] += cached.token_texts
        attentions = trace.attentions  # (layers, heads, n, n)
        special = facts.special_mask(trace.token_texts)
        stats = corpus_stats(attentions, special, punctuation_mask(trace.token_texts, special))
        for m in CORPUS_MEASURES:
            values[m].append(stats[m])
        pair_sums += pair_distance_sums(attentions)
        rows += trace.n
        measured.append(first_index + offset)
        tokens.append(trace.n)
    shape = (len(measured), facts.layers, facts.heads)
    shard = {m: np.array(values[m], dtype=np.float64).reshape(shape) for m in CORPUS_MEASURES}
    shard.update(text_index=np.array(measured, dtype=np.int64), tokens=np.array(tokens, dtype=np.int64),
                 pair_sums=pair_sums, rows=np.int64(rows), skipped_index=np.array(skipped, dtype=np.int64))
    if sampled["queries"]:
        shard.update(qk_queries=np.concatenate(sampled["queries"], axis=1),  # (K, tokens, d_head) float32
                     qk_keys=np.concatenate(sampled["keys"], axis=1),
                     qk_text_index=np.array(sampled["text_index"], dtype=np.int64),
                     qk_token=np.array(sampled["token"], dtype=str))
    return shard
