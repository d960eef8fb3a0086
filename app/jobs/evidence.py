"""Evidence beyond attention, worker side: activation patching, leave-one-out, attention flow and
value zeroing for the window's docks (app/panels/evidence_panel.py, the Rollout panel). Each is the
engine's one function of a run request (engine.analysis.patching / occlusion / flow /
value_zeroing), run as a worker task (app.worker.Lane.start): its rows or tokens arrive as partial
results, Esc and a newer request interrupt it. Nothing here runs on the GUI thread.
"""
from __future__ import annotations

import numpy as np

from engine.analysis import patching
from engine.analysis.flow import FLOW_TOKENS, flow_of_run
from engine.analysis.occlusion import leave_one_out

from .atp import estimate_of, view_of
from .trained import model as loaded_model

# at most this many seconds a patching task waits for the window to draw a row it handed over:
# drawing is ~100 Python callbacks of painting, each waiting for the GIL while the task holds it
DRAW_WAIT = 0.5


def patching_task(state, model_name: str, request, corrupt: str, grids):
    """engine.analysis.patching.activation_patching of ``request`` (the clean prompt) and
    ``corrupt`` by model ``model_name``, with attribution patching beside it: an
    app.jobs.atp.PatchingView with the AtP grids (or the backward's refusal) first, then one after
    each exact row (the grids so far and their agreement), as partial results; the last as the answer."""
    model = loaded_model(model_name)
    request = request.checked(model.facts)  # bad input fails the task before anything runs, as before
    # the estimate first (one forward of each prompt, one backward): drawn while the exact grid runs
    estimate, error, tokens = estimate_of(model, request, corrupt, grids)
    if state.is_interruption_requested():
        return view_of(estimate, error, tokens, None)
    state.set_partial_result(view_of(estimate, error, tokens, None), wait=DRAW_WAIT)

    # one computing thread: each thread running NumPy's small-array calls holds the GIL most of the
    # time, and every Python callback of the GUI thread's painting waits for it; with two, the
    # window stalled ~2× longer and the grid came no sooner on a loaded 2-core machine
    # (benchmarks/bench_patching_window.py)
    def partial(result) -> None:
        # the GIL free while the GUI thread draws the row
        state.set_partial_result(view_of(estimate, error, tokens, result), wait=DRAW_WAIT)

    exact = patching.activation_patching(model, request, corrupt, grids, progress=state.set_progress,
                                         partial=partial, cancelled=state.is_interruption_requested, threads=1)
    return view_of(estimate, error, tokens, exact)


def leave_one_out_task(state, model_name: str, request):
    """engine.analysis.occlusion.leave_one_out of ``request`` by model ``model_name``: the values so
    far after each token, as partial results."""
    return leave_one_out(loaded_model(model_name), request, progress=state.set_progress,
                         partial=state.set_partial_result, cancelled=state.is_interruption_requested)


def flow_of(attentions: np.ndarray, key, ablate: frozenset = frozenset()) -> tuple[object, np.ndarray | None]:
    """(key, attention flow (n, n)) of attentions (layers, heads, n, n); None past FLOW_TOKENS.
    ``ablate``: the run's switched-off (layer, head) pairs, zero weights in the heads' mean."""
    if attentions.shape[-1] > FLOW_TOKENS:
        return key, None
    return key, flow_of_run(attentions, ablate)


def kept_heads(attentions: np.ndarray, ablate: frozenset) -> np.ndarray | None:
    """(layers, heads) bool, False for the switched-off heads; None when every head is on."""
    if not ablate:
        return None
    from engine.analysis.arrays import heads_kept

    return heads_kept(frozenset(ablate), *attentions.shape[:2])


def flow_task(state, attentions: np.ndarray, key, ablate: frozenset = frozenset()):
    """:func:`flow_of` as a worker task: a newer snapshot's flow (or closing the window) stops it
    between batches of pairs instead of letting seconds of stale work run out."""
    if attentions.shape[-1] > FLOW_TOKENS:
        return key, None
    return key, flow_of_run(attentions, ablate, cancelled=state.is_interruption_requested, progress=state.set_progress)


def focused_flow_of(attentions: np.ndarray, key, position: int, ablate: frozenset = frozenset()):
    """(key, (n,) maximum flows from every input token to ``position``): the focused token's row,
    n maximum flows, computed on each change of focus (engine.analysis.flow.focused_flow)."""
    from engine.analysis.flow import focused_flow

    if attentions.shape[-1] > FLOW_TOKENS:
        return key, None
    return key, focused_flow(attentions, position, ablate)


def value_zeroing_task(state, model_name: str, config, request):
    """engine.analysis.value_zeroing of ``request`` by model ``model_name`` (the toy: its ``config``)
    as a worker task: progress after each layer; a newer request or closing the window stops it."""
    from engine.analysis.value_zeroing import value_zeroing
    from engine.models import model_info
    from engine.models.toy import ToyModel

    model = ToyModel(config) if model_info(model_name).configurable else loaded_model(model_name)
    return value_zeroing(model, request, progress=state.set_progress, cancelled=state.is_interruption_requested)
