"""What switching heads off changes: each token's final vector with and without (Michel et al.,
2019, measured as a cosine), as an analysis of one run request.

    result = ablation_cosines(model, request, runs)    # request.ablate not empty
    result.cosines                                     # (n,) float64 cos(final_plain_i, final_ablated_i)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import EngineError
from .ablation import token_cosines
from .request import NotApplicable


@dataclass(frozen=True, eq=False)
class AblationCosines:
    ablate: frozenset  # the (layer, head) pairs switched off
    cosines: np.ndarray  # (n,) float64

    def arrays(self) -> dict:
        return {"ablation_cosines": self.cosines}


def ablation_cosines(model, request, runs) -> AblationCosines | NotApplicable:
    """cos(final vector without the ablation, with it) per token; NotApplicable with nothing off."""
    if not request.ablate:
        return NotApplicable("ablation_cosines", EngineError(
            "no head is switched off: switch heads off to compare the final vectors with and without them"))
    return AblationCosines(runs.request.ablate, token_cosines(runs.plain.hidden_states[-1], runs.trace.hidden_states[-1]))
