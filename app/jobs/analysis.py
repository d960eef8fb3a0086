"""What attention actually moves, worker side: the engine's analyses of a snapshot's run
(engine.analysis.table) shaped for the Analysis place, and the toy's "most important heads".

The engine computes; this adapter keeps what the panels draw: value-weighted attention
(layers, heads, n, n), rollout and value-weighted rollout (layers, n, n), the head table and,
when heads are switched off, each token's final-vector cosine with and without. An analysis that
does not apply keeps its one-line reason (``reasons``), which the panel shows instead of a picture.
A decoder's snapshot comes without them: app.jobs.analysis_job adds them in a job of its own.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.analysis.ablation import HeadRanking, all_heads, mean_cosine_distance, rank_heads
from engine.analysis.request import NotApplicable
from engine.analysis.table import run_all

WINDOW_ANALYSES = ("value_norms", "rollout", "value_rollout", "head_stats", "ablation_cosines")


@dataclass(frozen=True, eq=False)
class Analysis:
    """The Analysis place's arrays of one snapshot, all layers (None where the analysis does not apply)."""

    value_norms: np.ndarray | None  # (layers, heads, n, n) float32 ‖α_ij · f_h(x_j)‖, switched-off heads 0
    rollout: np.ndarray | None  # (layers, n, n) float64
    value_rollout: np.ndarray | None  # (layers, n, n) float64
    head_stats: np.ndarray | None  # (layers·heads,) structured: layer, head, entropy, first, special, previous, self
    ablate: frozenset = frozenset()  # the heads switched off in this run
    cosines: np.ndarray | None = None  # (n,) final vector's cosine with / without the ablation (None: nothing off)
    reasons: dict = field(default_factory=dict)  # analysis name → EngineError: why it does not apply

    def stats(self, measure: str) -> np.ndarray:
        """(layers, heads) of one measure of the head table."""
        layers = int(self.head_stats["layer"].max()) + 1
        return np.asarray(self.head_stats[measure]).reshape(layers, -1)

    def reason(self, name: str):
        """The EngineError saying why analysis ``name`` does not apply, or None."""
        return self.reasons.get(name)


def analyse(model, runs) -> Analysis:
    """The :class:`Analysis` of one request's runs (engine.analysis.runs.Runs) on ``model``."""
    results = run_all(model, runs=runs, names=WINDOW_ANALYSES)

    def array(name: str, attribute: str):
        result = results[name]
        return None if isinstance(result, NotApplicable) else getattr(result, attribute)

    return Analysis(array("value_norms", "value_norms"), array("rollout", "rollout"),
                    array("value_rollout", "value_rollout"), array("head_stats", "head_stats"),
                    runs.request.ablate, array("ablation_cosines", "cosines"),
                    {name: result.reason for name, result in results.items() if isinstance(result, NotApplicable)})


def rank_toy(config, progress=None, cancelled=None) -> HeadRanking:
    """Every head of the toy engine switched off alone, ranked by the mean 1 − cos of the output
    vectors (engine.analysis.ablation.rank_heads)."""
    from engine import compute

    baseline = compute(config)
    return rank_heads(lambda ablate: compute(config, ablate=ablate).output, mean_cosine_distance(baseline.output),
                      all_heads(1, config.heads), progress=progress, cancelled=cancelled)

