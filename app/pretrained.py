"""The worker job that shows a pretrained model: load it once, then its declared capabilities
(engine.models.contract.ModelFacts) choose the view: a decoder's (next-token logits) or an
encoder's. The controller never branches on a model's kind."""
from __future__ import annotations

from .jobs import decoder_view, trained


def take_pretrained_snapshot(name: str, text: str, layer: int, progress=None, by_words: bool = False,
                             ablate: frozenset = frozenset()):
    """Snapshot of ``layer`` for ``text`` by registry model ``name``, the heads of ``ablate`` off."""
    loaded = trained.model(name, progress)
    # a layer beyond this model (the one before was deeper) shows its last layer; the controller says so
    layer = min(layer, loaded.facts.layers - 1)
    if loaded.facts.capabilities.next_token_logits:
        return decoder_view.take_decoder_snapshot(name, text, layer, progress, ablate, by_words)
    return trained.take_model_snapshot(name, text, layer, progress, by_words, ablate)
