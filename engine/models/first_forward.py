"""Refuse a decoder whose first computation is not finite, naming the layer where it broke.

Finite weights can still overflow float32 on the way (float16 weights of 65504, a RoPE base
that makes a frequency infinite): the window then drew NaN heatmaps and generation appended
'\\x00'. One short forward right after loading finds it once, before any
text of the user's is run. Kept apart from engine/models/llama.py's forward so that it runs on
whatever that forward returns: a DecoderTrace's hidden states, attentions and logits.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import EngineError

PROBE_TEXT = "The capital of France is"
PROBE_TOKENS = 2


def first_nonfinite(trace) -> tuple[str, int] | None:
    """("layer", i) / ("embeddings", 0) / ("logits", 0) of the first non-finite value of ``trace``, or None.

    hidden_states (layers + 1, n, d): row 0 the embeddings, row i + 1 layer i's output (the
    last after the final norm); attentions (layers, heads, n, n); next_token_logits (vocab,).
    """
    hidden = np.asarray(trace.hidden_states)
    attentions = np.asarray(trace.attentions)
    if not np.isfinite(hidden[0]).all():
        return "embeddings", 0
    for layer in range(attentions.shape[0]):
        if not (np.isfinite(attentions[layer]).all() and np.isfinite(hidden[layer + 1]).all()):
            return "layer", layer
    if not np.isfinite(np.asarray(trace.next_token_logits)).all():
        return "logits", 0
    return None


def check_first_forward(decoder, name: str) -> None:
    """Run ``decoder`` once on a short text; EngineError naming the file (``name``) and the layer
    if any number of the trace is NaN or infinite."""
    try:
        ids = decoder.tokenize(PROBE_TEXT).input_ids
    except EngineError:  # a vocabulary without these bytes: any ids do
        ids = []
    if len(ids) == 0:
        ids = np.arange(min(PROBE_TOKENS, decoder.config.vocab_size), dtype=np.int64)
    with np.errstate(all="ignore"):  # the overflow is the finding, not a warning on stderr
        # two tokens: every weight is used, position 1 rotates (a zero RoPE frequency shows), and
        # it costs one pass over the weights (30 ms idle for SmolLM2; the whole text took 4 s loaded)
        trace = decoder.run_ids(ids[:PROBE_TOKENS], use_cache=False)
    found = first_nonfinite(trace)
    if found is None:
        return
    where, layer = found
    if where == "layer":
        raise EngineError("{name}: the model's numbers overflow to NaN or infinity in layer {layer} on a short "
                          "text: the weights are damaged or were converted wrongly", field="model", name=name,
                          layer=layer)
    raise EngineError("{name}: the model's numbers overflow to NaN or infinity ({where}) on a short text: the "
                      "weights are damaged or were converted wrongly", field="model", name=name, where=where)
