"""A snapshot's Analysis arrays as a worker job of their own (app.jobs.analysis shapes them).

A decoder's snapshot comes without them: at SmolLM2's 376 tokens they took ~0.7 s beside an edit's
~30 ms KV-cached step, on every keystroke, whether or not a view reading them was shown. The
controller submits :func:`with_analysis` while such a view is shown (a dock of the Analysis place,
the heatmap's value-weighted stage), for the snapshot on screen; a newer snapshot drops its answer.
"""
from __future__ import annotations

from dataclasses import replace

from engine.analysis.request import RunRequest
from engine.analysis.runs import Runs

from . import trained
from .analysis import analyse
from .snapshot import THUMBNAIL_SIZE, block_average


def with_analysis(snapshot):
    """``snapshot`` with its Analysis place's arrays (and the head grid's value-weighted thumbnails): the
    worker job the window submits when a view that reads them is shown and the snapshot has none (a
    decoder's). The engine's table (engine.analysis.table) on the trace on screen, with the request it
    was made for: its text and switched-off heads."""
    if snapshot.analysis is not None or snapshot.bert is None or getattr(snapshot.bert, "trace", None) is None:
        return snapshot
    model, trace = trained.model(snapshot.model), snapshot.bert.trace
    request = RunRequest(text=trace.text, ablate=snapshot.ablate, by_words=snapshot.words is not None)
    # the final vectors with every head on, for the switched-off heads' effect; use_cache=False: the
    # model's own kept trace is neither read nor replaced (the trace on screen is the next edit's cache)
    plain = model.run(trace.text, use_cache=False) if request.ablate else None
    analysis = analyse(model, Runs(model, request, trace=trace, plain=plain))
    thumbnails = None if analysis.value_norms is None else block_average(analysis.value_norms[snapshot.layer],
                                                                         THUMBNAIL_SIZE)
    return replace(snapshot, analysis=analysis, value_thumbnails=thumbnails)
