"""How a prediction is built, worker side: direct logit attribution and the logit lens grid of
the window's text for the Attribution dock (app/panels/attribution_panel.py). Both read one
forward run that keeps the hook points the attribution needs (engine.analysis.dla), with the
window's switched-off heads; nothing here runs on the GUI thread.
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.analysis.dla import LogitAttribution, attribution_run, logit_attribution
from engine.analysis.lens_grid import LensGrid, lens_grid
from engine.analysis.request import NotApplicable
from engine.analysis.runs import Runs

from .trained import model as loaded_model


@dataclass(frozen=True, eq=False)
class Attribution:
    """What the Attribution dock draws for one request."""

    model: str  # the registry name it was computed for
    request: object  # the engine.analysis.request.RunRequest asked
    tokens: tuple[str, ...]  # (n,) the pieces' texts
    dla: LogitAttribution
    grid: LensGrid | None  # None when the request did not ask for it


def attribution_task(state, model_name: str, request) -> Attribution:
    """The attribution (and, when ``request.lens_grid``, the lens grid) of ``request`` by model
    ``model_name``; an EngineError (a bad answer, a model it does not apply to) fails the task."""
    model = loaded_model(model_name)
    runs = Runs(model, request)
    dla = logit_attribution(model, runs.request, runs)
    if isinstance(dla, NotApplicable):
        raise dla.reason
    trace, _ = attribution_run(model, runs)  # the grid reads the same run (its heads switched off)
    grid = None
    if request.lens_grid and not state.is_interruption_requested():
        grid = lens_grid(model, runs.request, Runs(model, runs.request, trace=trace))
    return Attribution(model_name, runs.request, tuple(trace.token_texts), dla, grid)
