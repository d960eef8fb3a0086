"""The forward runs one request needs, each made once and shared by every analysis of it.

An analysis reads the trace of the request's text with its switched-off heads (``runs.trace``),
and some read the run without them beside it (``runs.plain``: the ablation's effect). A surface
that already holds a trace (the window's snapshot, a decoder's KV-cached run) hands it in; what
is missing is run here. Results the analyses share (the value norms, read by value-weighted
rollout too) are kept in ``memo``.

    runs = Runs(model, request)           # request checked against model.facts once, here
    runs.trace.attentions                 # (layers, heads, n, n) of the request's run
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .request import RunRequest


class Runs:
    """The traces of one (model, request), made on first use."""

    def __init__(self, model, request: RunRequest, *, trace=None, plain=None) -> None:
        self.model = model
        self.request = request.checked(model.facts)  # EngineError naming a head the model lacks
        self._trace = trace  # with request.ablate switched off
        self._plain = plain if plain is not None else (trace if not self.request.ablate else None)
        self._memo: dict = {}

    def _run(self, ablate: frozenset):
        return self.model.run(self.request.text, ablate=ablate, memory_budget=self.request.memory_budget)

    @property
    def trace(self):
        """The request's run: its heads of ``ablate`` switched off."""
        if self._trace is None:
            self._trace = self._run(self.request.ablate)
            if not self.request.ablate:
                self._plain = self._trace
        return self._trace

    @property
    def plain(self):
        """The same text with every head on (the trace itself when nothing is switched off)."""
        if self._plain is None:
            self._plain = self.trace if not self.request.ablate else self._run(frozenset())
        return self._plain

    def output_weights(self) -> list[np.ndarray]:
        """Each layer's row-vector W_O (heads·d_head, d): the trace's own (the toy holds it), else the
        contract's ``model.W_O`` (layers, heads, d_head, d) with each layer's heads stacked as rows
        (views: no copy, and no reach into the model's weights)."""
        own = self.trace.own_output_weights()
        if own is not None:
            return own
        w_o = self.model.W_O  # (layers, heads, d_head, d)
        return [layer.reshape(-1, layer.shape[-1]) for layer in w_o]  # (heads·d_head, d) each

    def memo(self, key: str, make: Callable):
        """``make()`` once per key: results two analyses share."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]
