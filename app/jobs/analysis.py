"""What attention actually moves, worker side: the analysis of a snapshot, runs with heads
switched off, and the "most important heads" ranking. Pure NumPy; every function here runs as a
worker job (never on the GUI thread).

The analysis of one run (engine.analysis.arrays): value-weighted attention (layers, heads, n, n),
rollout and value-weighted rollout (layers, n, n), the head table; plus, when heads are switched
off, each token's final-vector cosine with and without (engine.analysis.ablation.token_cosines).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.analysis.ablation import HeadRanking, all_heads, mean_cosine_distance, rank_heads, token_cosines
from engine.analysis.arrays import ANALYSIS_TOKENS, analysis_arrays, value_norms_of  # noqa: F401 - the limit is the engine's


@dataclass(frozen=True, eq=False)
class Analysis:
    """The analysis arrays of one snapshot (see engine.analysis.arrays), all layers."""

    value_norms: np.ndarray  # (layers, heads, n, n) float32 ‖α_ij · f_h(x_j)‖, switched-off heads 0
    rollout: np.ndarray | None  # (layers, n, n) float64, None past ANALYSIS_TOKENS
    value_rollout: np.ndarray | None  # (layers, n, n) float64
    head_stats: np.ndarray | None  # (layers·heads,) structured: layer, head, entropy, first, special, previous, self
    ablate: frozenset = frozenset()  # the heads switched off in this run
    cosines: np.ndarray | None = None  # (n,) final vector's cosine with / without the ablation (None: nothing off)

    def stats(self, measure: str) -> np.ndarray:
        """(layers, heads) of one measure of the head table."""
        layers = int(self.head_stats["layer"].max()) + 1
        return np.asarray(self.head_stats[measure]).reshape(layers, -1)


def analyse(trace, weights=None, baseline_final: np.ndarray | None = None, final: np.ndarray | None = None,
            special: np.ndarray | None = None) -> Analysis:
    """The :class:`Analysis` of a toy result or BERT trace; ``baseline_final`` / ``final`` (n, d):
    the final vectors without and with the trace's ablation, for the cosines; ``special`` (n,)
    bool: the model's special tokens (its facts.special_mask; default: engine.analysis.arrays' (the
    pieces with a name and no characters; the toy has none))."""
    ablate = frozenset(trace.ablate)
    cosines = None if not ablate or baseline_final is None else token_cosines(baseline_final, final)
    n = len(trace.token_texts)
    if n > ANALYSIS_TOKENS:
        return Analysis(value_norms_of(trace, weights), None, None, None, ablate, cosines)
    arrays = analysis_arrays(trace, weights, special=special)
    return Analysis(arrays["value_norms"], arrays["rollout"], arrays["value_rollout"], arrays["head_stats"],
                    ablate, cosines)


def valid_ablation(ablate, layers: int, heads: int) -> frozenset:
    """The pairs of ``ablate`` that exist in a model of ``layers`` × ``heads`` (a change of
    settings may have removed some)."""
    return frozenset((l, h) for l, h in ablate if 0 <= l < layers and 0 <= h < heads)


def run_bert(model, text: str, ablate: frozenset):
    """``model``'s trace of ``text`` with the heads of ``ablate`` switched off (a hook on
    hook_z in every model's forward, engine/core/hooks.py)."""
    return model.run(text, ablate=ablate)


def rank_toy(config, progress=None, cancelled=None) -> HeadRanking:
    """Every head of the toy engine switched off alone, ranked by the mean 1 − cos of the output
    vectors (engine.analysis.ablation.rank_heads)."""
    from engine import compute

    baseline = compute(config)
    return rank_heads(lambda ablate: compute(config, ablate=ablate).output, mean_cosine_distance(baseline.output),
                      all_heads(1, config.heads), progress=progress, cancelled=cancelled)
