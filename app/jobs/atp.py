"""Attribution patching beside the exact grid, worker side: the first-order estimate of the
patching grids (engine.analysis.attribution_patching: one forward of each prompt and one backward
of the corrupted run; 0.28 s idle on SmolLM2's Eiffel pair, a grid's 15–30 s) computed before the
exact grid's first row, and its
agreement with the exact grid (Pearson correlation and the cells where they differ most)
recomputed after each exact row — over the cells the exact grid has so far, so the figure a
partial (or cancelled) grid shows is of the cells shown. Nothing here runs on the GUI thread.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.analysis.attribution_patching import AttributionPatching, attribution_patching, disagreement
from engine.core.errors import EngineError

TOP_CELLS = 3  # cells listed where AtP and the exact grid disagree most (a line under the grids)


@dataclass(frozen=True, eq=False)
class Agreement:
    """One grid's AtP estimate against its exact grid so far."""

    correlation: float  # Pearson over the cells the exact grid has (NaN under two cells or a constant grid)
    cells: list  # [(row, column, AtP value, exact value)], the largest |AtP − exact| first
    compared: int  # how many cells the correlation is over


@dataclass(frozen=True, eq=False)
class PatchingView:
    """What the patching dock draws: the exact grid so far and the AtP side (its grids, or the
    reason it has none). The task's partial results and its answer."""

    exact: object | None  # engine.analysis.patching.PatchResult; None before the exact grid's first snapshot
    estimate: AttributionPatching | None  # None when the backward refused the model (``error`` says why)
    error: EngineError | None = None
    agreement: dict = field(default_factory=dict)  # grid name → Agreement (only with both sides)
    tokens: tuple = ()  # the clean prompt's token texts (the AtP grid's columns before the exact grid's setup)
    diff_agreement: dict = field(default_factory=dict)  # decoders: the same of the logit-difference grids


def estimate_of(model, request, corrupt: str, grids) -> tuple:
    """(the AtP grids of the request's pair, None, the clean prompt's tokens) or (None, the engine's
    refusal, ()): a model the backward does not follow gets a line in the dock, and its exact grid
    runs as before."""
    decoder = model.facts.capabilities.next_token_logits
    try:
        estimate = attribution_patching(model, request.text, corrupt, request.answer if decoder else None,
                                        None if decoder else request.position, grids=grids, ablate=request.ablate)
    except EngineError as error:
        return None, error, ()
    return estimate, None, tuple(t.text for t in model.tokenize(request.text).tokens)


def agreement_of(estimate: AttributionPatching | None, exact, diffs: bool = False) -> dict:
    """grid name → :class:`Agreement` of the AtP grid with the exact grid's finite cells (``diffs``:
    of the logit-difference grids)."""
    if estimate is None or exact is None:
        return {}
    ours, theirs = (estimate.logit_diffs, exact.logit_diffs) if diffs else (estimate.grids, exact.grids)
    out = {}
    for name, grid in theirs.items():
        if name in ours:
            correlation, cells = disagreement(ours[name], grid, TOP_CELLS)
            out[name] = Agreement(correlation, cells, int(np.isfinite(grid).sum()))
    return out


def view_of(estimate, error, tokens, exact) -> PatchingView:
    return PatchingView(exact, estimate, error, agreement_of(estimate, exact), tokens,
                        agreement_of(estimate, exact, diffs=True))
