"""A decoder's trace as the window's panels read a model trace: the contract's Trace names, plus
the two per-layer summaries the layers panel draws (the engine's: engine.analysis.residual) and the
next-token bars made with the snapshot. Its own type, beside an encoder's BertTrace in
``Snapshot.bert``."""
from __future__ import annotations

from typing import Union

from engine.analysis.residual import cosines_to_first, sink_by_head
from engine.models.bert import BertTrace
from engine.models.llama import DecoderTrace


def _of_trace(name: str) -> property:
    """A read-only attribute of the wrapped trace (no __getattr__: what the panels read is listed)."""
    return property(lambda self: getattr(self.trace, name), doc=f"the trace's ``{name}``")


class DecoderView:
    """The decoder trace as the layers panel reads a model trace (the contract's Trace names, plus
    the two per-layer summaries the panel draws: cosines to layer 0 and the attention sink)."""

    tokens = _of_trace("tokens")
    input_ids = _of_trace("input_ids")
    attentions = _of_trace("attentions")  # (layers, heads, n, n)
    hidden_states = _of_trace("hidden_states")  # (layers + 1, n, d)
    next_token_logits = _of_trace("next_token_logits")  # (vocab,)
    ablate = _of_trace("ablate")
    spans = _of_trace("spans")
    token_texts = _of_trace("token_texts")
    n = _of_trace("n")
    num_layers = _of_trace("num_layers")
    num_heads = _of_trace("num_heads")
    layers = _of_trace("layers")  # per-layer views (weights (heads, n, n) …)
    text = _of_trace("text")
    config = _of_trace("config")

    truncated = False
    next_bars: dict | None = None  # top_bars() after the last token at PLAIN_SAMPLING, with trace and position

    def __init__(self, trace: DecoderTrace) -> None:
        self.trace = trace
        self.cosine_to_layer0 = cosines_to_first(trace.hidden_states)  # (layers + 1, n) float32
        self.sink = sink_by_head(trace.attentions)  # (layers, heads) mean weight on the first token


ModelTrace = Union[BertTrace, DecoderView]  # what Snapshot.bert holds for a pretrained model
