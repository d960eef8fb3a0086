"""Every analysis of one run request, in one table: its name, the model kinds it reads, its token
limit and its function of (model, request, runs) → a typed result with ``arrays()``.

    result = run_analysis("rollout", model, request)           # Rollout, or NotApplicable
    results = run_all(model, request)                          # name → result or NotApplicable
    arrays = export_arrays(results)                            # what every export writes

The window's panels, ``./run export`` and File → Export data read these same results, so
switched-off heads and by-words mean the same everywhere. Adding an analysis is its engine module,
one row here, a panel (or a generic view) and its translations.

Where an analysis does not apply (another kind of model, a text over its limit, a request that
asks nothing of it) its result is :class:`~engine.analysis.request.NotApplicable` with one line
saying why: never an empty array, never a missing key without a reason.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..models.contract import KINDS
from ..core.errors import EngineError
from . import ablation_effect, dla, lens_grid, moves, next_token, residual, routes, value_zeroing, word_rollup
from .moves import ANALYSIS_TOKENS
from .request import NotApplicable, RunRequest, check_tokens
from .runs import Runs

ALL_KINDS = KINDS  # every kind of model the contract knows
NO_UNEMBEDDING = EngineError("it has no unembedding")  # why only decoders read the logits


@dataclass(frozen=True)
class Analysis:
    """One row of :data:`ANALYSES`."""

    name: str  # the key the surfaces use
    kinds: tuple[str, ...]  # model kinds (ModelFacts.kind) it reads
    limit: int | None  # the most tokens it reads (None: only the memory budget limits it)
    function: Callable  # (model, request, runs) → result with arrays(), or NotApplicable
    title: str  # English, for reasons and the matrix
    why: EngineError | None = None  # why other kinds of model do not have it (said after the kinds)


ANALYSES: tuple[Analysis, ...] = (
    Analysis("value_norms", ALL_KINDS, None, moves.value_norms, "value-weighted attention"),
    Analysis("rollout", ALL_KINDS, ANALYSIS_TOKENS, moves.attention_rollout, "attention rollout"),
    Analysis("value_rollout", ALL_KINDS, ANALYSIS_TOKENS, moves.value_rollout, "value-weighted rollout"),
    Analysis("head_stats", ALL_KINDS, ANALYSIS_TOKENS, moves.head_table_of, "the head statistics"),
    Analysis("ablation_cosines", ALL_KINDS, None, ablation_effect.ablation_cosines, "switched-off heads' effect"),
    Analysis("attention_sink", ("encoder", "decoder"), None, residual.attention_sink, "the attention sink"),
    Analysis("cosine_to_layer0", ("encoder", "decoder"), None, residual.cosine_to_layer0, "cosine to layer 0"),
    Analysis("next_token", ("decoder",), None, next_token.next_token, "the next-token distribution"),
    Analysis("logit_lens", ("decoder",), None, next_token.logit_lens, "the logit lens"),
    Analysis("words", ALL_KINDS, None, word_rollup.word_rollup, "attention by words"),
    Analysis("dla", ("decoder",), None, dla.logit_attribution, "direct logit attribution", NO_UNEMBEDDING),
    Analysis("lens_grid", ("decoder",), None, lens_grid.lens_grid, "the logit lens grid", NO_UNEMBEDDING),
    Analysis("routes", ("encoder", "decoder"), routes.ROUTES_TOKENS, routes.routes_of, "the routes analysis"),
    Analysis("value_zeroing", ALL_KINDS, value_zeroing.VALUE_ZEROING_TOKENS, value_zeroing.value_zeroing_of,
             "value zeroing"),
)
BY_NAME = {row.name: row for row in ANALYSES}


def analysis(name: str) -> Analysis:
    """The row ``name`` (EngineError naming the known ones)."""
    if name not in BY_NAME:
        raise EngineError("unknown analysis {name!r}: one of {names}", name=name, names=", ".join(BY_NAME))
    return BY_NAME[name]


def run_analysis(name: str, model, request: RunRequest | None = None, runs: Runs | None = None):
    """The result of analysis ``name`` for ``request`` on ``model``, or NotApplicable saying why.
    ``runs``: traces already made for this request (shared by several analyses)."""
    row = analysis(name)
    if runs is None:
        runs = Runs(model, request)
    request = runs.request
    facts = model.facts
    if facts.kind not in row.kinds and row.why is not None:
        return NotApplicable(name, EngineError(
            "{analysis} reads {kinds} models, not {kind} models ({model}): {why}", analysis=row.title,
            kinds=" and ".join(row.kinds), model=facts.name or facts.family, kind=facts.kind,
            why=row.why))
    if facts.kind not in row.kinds:
        return NotApplicable(name, EngineError(
            "{analysis} reads {kinds} models, not {kind} models ({model})", analysis=row.title,
            kinds=" and ".join(row.kinds), model=facts.name or facts.family, kind=facts.kind))
    if row.limit is not None:
        try:
            check_tokens(runs.trace.n, row.limit, row.title)
        except EngineError as error:
            return NotApplicable(name, error)
    return row.function(model, request, runs)


def run_all(model, request: RunRequest | None = None, runs: Runs | None = None,
            names: tuple[str, ...] | None = None) -> dict:
    """name → result (or NotApplicable) of every analysis (or of ``names``) on one request's runs."""
    runs = runs if runs is not None else Runs(model, request)
    return {name: run_analysis(name, model, runs=runs) for name in (names or tuple(BY_NAME))}


def export_arrays(results: dict) -> dict:
    """Every array of the results that apply, in the table's order (docs/FORMAT.md)."""
    arrays = {}
    for result in results.values():
        if not isinstance(result, NotApplicable):
            arrays.update(result.arrays())
    return arrays


def reasons(results: dict) -> dict[str, str]:
    """name → the one-line reason of each analysis that does not apply."""
    return {name: str(result.reason) for name, result in results.items() if isinstance(result, NotApplicable)}
