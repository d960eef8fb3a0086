"""Evidence beyond attention, worker side: activation patching, leave-one-out and attention flow
for the window's docks (app/panels/evidence_panel.py, the Rollout panel). Pure NumPy; every
function here runs as a worker job, never on the GUI thread.
"""
from __future__ import annotations

import numpy as np

from engine.analysis import patching
from engine.analysis.flow import FLOW_TOKENS, attention_flow
from engine.analysis.occlusion import occlusion

from .trained import model as loaded_model


def patch_prepare(model_name: str, clean: str, corrupt: str, answer: str | None, position: int | None):
    """Both prompts checked and run with their caches (engine.analysis.patching.prepare)."""
    model = loaded_model(model_name)
    decoder = patching.is_decoder_model(model)
    return patching.prepare(model, clean, corrupt, answer if decoder else None, None if decoder else position)


def patch_layer(setup, grid: str, layer: int):
    """(grid, layer, values (columns,), logit differences (columns,)) of one layer of one grid."""
    values, diffs = patching.patch_row(setup, grid, layer)
    return grid, layer, values, diffs


def leave_one_out(model_name: str, text: str, answer: str | None, progress=None, cancelled=None):
    """engine.analysis.occlusion.occlusion of ``text`` by model ``model_name``."""
    model = loaded_model(model_name)
    return occlusion(model, text, answer if patching.is_decoder_model(model) else None,
                     progress=progress, cancelled=cancelled)


def flow_of(attentions: np.ndarray, key, ablate: frozenset = frozenset()) -> tuple[object, np.ndarray | None]:
    """(key, attention flow (n, n)) of attentions (layers, heads, n, n); None past FLOW_TOKENS.
    ``ablate``: the run's switched-off (layer, head) pairs, zero weights in the heads' mean."""
    if attentions.shape[-1] > FLOW_TOKENS:
        return key, None
    return key, attention_flow(attentions, heads_kept=kept_heads(attentions, ablate))


def kept_heads(attentions: np.ndarray, ablate: frozenset) -> np.ndarray | None:
    """(layers, heads) bool, False for the switched-off heads; None when every head is on."""
    if not ablate:
        return None
    from engine.analysis.arrays import heads_kept

    return heads_kept(frozenset(ablate), *attentions.shape[:2])
