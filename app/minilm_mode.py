"""MiniLM mode, worker side: load the pretrained model once, run sentences, make snapshots.

Everything here runs in the worker thread (it is submitted as jobs); the model and the last
few traces are cached so that switching layers or heads costs no new forward pass.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from engine.bert_view import layer_result
from engine.compare import pair_tokens, row_cosines

from .snapshot import OVERVIEW_SIZE, block_average, summarise

_lock = threading.Lock()
_model = None
_traces: "OrderedDict[str, object]" = OrderedDict()
SPECIAL_PIECES = ("[CLS]", "[SEP]", "[PAD]")
TRACE_CACHE = 4  # sentences kept (a 512-token trace holds ~200 MB)


def model(progress=None):
    """The loaded MiniLM (EngineError with install instructions when the package is missing)."""
    global _model
    with _lock:
        if _model is None:
            from engine.minilm import load_minilm

            _model = load_minilm(progress=progress)
        return _model


def is_loaded() -> bool:
    return _model is not None


def trace(text: str, progress=None):
    """The BertTrace of ``text`` (cached)."""
    loaded = model(progress)
    with _lock:
        if text in _traces:
            _traces.move_to_end(text)
            return _traces[text]
    result = loaded.run(text)
    with _lock:
        _traces[text] = result
        while len(_traces) > TRACE_CACHE:
            _traces.popitem(last=False)
    return result


def take_minilm_snapshot(text: str, layer: int, progress=None):
    """Snapshot of ``layer`` for ``text``, with the whole trace attached (for the layer views)."""
    bert = trace(text, progress)
    result = layer_result(bert, model().weights, layer, text)
    overview = np.stack([block_average(view.weights, OVERVIEW_SIZE) for view in bert.layers])  # (L, H, t, t)
    return summarise(result, bert=bert, layer=layer, overview=overview)


def cosines_between(trace_a, trace_b) -> dict:
    """Per-layer cosine of each word piece shared by two sentences (k-th occurrence with k-th).

    Returns {"pairs": [(text, index_a, index_b)], "cosines": (pairs, layers + 1)} where
    cosines[p, l] = cos(hidden_states_a[l, i], hidden_states_b[l, j]); [CLS]/[SEP] are left out.
    """
    texts_a, texts_b = trace_a.token_texts, trace_b.token_texts
    pairs = [(texts_a[i], i, j) for i, j in pair_tokens(texts_a, texts_b) if texts_a[i] not in SPECIAL_PIECES]
    layers = trace_a.num_layers + 1
    if not pairs:
        return {"pairs": [], "cosines": np.zeros((0, layers))}
    a = trace_a.hidden_states[:, [p[1] for p in pairs]]  # (layers + 1, P, d)
    b = trace_b.hidden_states[:, [p[2] for p in pairs]]
    cosines = row_cosines(a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1])).reshape(layers, len(pairs))
    return {"pairs": pairs, "cosines": cosines.T}


def compare_texts(text_a: str, text_b: str, progress=None) -> dict:
    """Worker job: both traces (cached) and their shared word pieces' per-layer cosines."""
    return cosines_between(trace(text_a, progress), trace(text_b, progress))
