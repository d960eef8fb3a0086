"""A snapshot's Analysis arrays as a worker job of their own (app.jobs.analysis shapes them).

A decoder's snapshot comes without them: at SmolLM2's 376 tokens they took ~0.7 s beside an edit's
~30 ms KV-cached step, on every keystroke, whether or not a view reading them was shown. The
controller submits :func:`with_analysis` while such a view is shown (a dock of the Analysis place,
the heatmap's value-weighted stage), for the snapshot on screen; a newer snapshot drops its answer.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from engine.analysis.request import RunRequest
from engine.analysis.runs import Runs

from . import trained
from .analysis import Analysis, analyse
from .snapshot import THUMBNAIL_SIZE, block_average


@dataclass(frozen=True, eq=False)
class Analysed:
    """What an earlier snapshot's arrays were made of, so that a snapshot of the same run (another layer
    of the same text, model and switched-off heads) takes them instead of computing them again."""

    model: str
    ablate: frozenset
    input_ids: np.ndarray  # (n,)
    by_words: bool
    analysis: Analysis

    @classmethod
    def of(cls, snapshot) -> "Analysed | None":
        if snapshot is None or snapshot.analysis is None or getattr(snapshot.bert, "trace", None) is None:
            return None
        return cls(snapshot.model, snapshot.ablate, snapshot.bert.input_ids, snapshot.words is not None,
                   snapshot.analysis)

    def fits(self, snapshot) -> bool:
        return (self.model == snapshot.model and self.ablate == snapshot.ablate
                and self.by_words == (snapshot.words is not None)
                and np.array_equal(self.input_ids, snapshot.bert.input_ids))


def with_analysis(snapshot, earlier: Analysed | None = None):
    """``snapshot`` with its Analysis place's arrays (and the head grid's value-weighted thumbnails): the
    worker job the window submits when a view that reads them is shown and the snapshot has none (a
    decoder's). The engine's table (engine.analysis.table) on the trace on screen, with the request it
    was made for: its text and switched-off heads; ``earlier``'s arrays when they are of the same run."""
    if snapshot.analysis is not None or snapshot.bert is None or getattr(snapshot.bert, "trace", None) is None:
        return snapshot
    if earlier is not None and earlier.fits(snapshot):
        analysis = earlier.analysis
    else:
        analysis = _analyse(snapshot)
    thumbnails = None if analysis.value_norms is None else block_average(analysis.value_norms[snapshot.layer],
                                                                         THUMBNAIL_SIZE)
    return replace(snapshot, analysis=analysis, value_thumbnails=thumbnails)


def _analyse(snapshot) -> Analysis:
    model, trace = trained.model(snapshot.model), snapshot.bert.trace
    request = RunRequest(text=trace.text, ablate=snapshot.ablate, by_words=snapshot.words is not None)
    # the final vectors with every head on, for the switched-off heads' effect; use_cache=False: the
    # model's own kept trace is neither read nor replaced (the trace on screen is the next edit's cache)
    plain = model.run(trace.text, use_cache=False) if request.ablate else None
    return analyse(model, Runs(model, request, trace=trace, plain=plain))
