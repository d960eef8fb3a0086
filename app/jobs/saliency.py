"""Saliency, worker side: engine.analysis.saliency_request of the window's request, run as a worker
task (app.worker.Lane.start) for the Saliency dock (app/panels/saliency_panel.py). One forward and
one backward (integrated gradients: one batch of the path's steps); nothing here runs on the GUI thread."""
from __future__ import annotations

from engine.analysis.saliency_request import request_saliency

from .trained import model as loaded_model


def saliency_task(state, model_name: str, settings, request, method: str):
    """The saliency of ``request``'s text by ``method`` on model ``model_name`` (the toy: with its
    ``settings``, the window's AttentionConfig)."""
    from engine.models.toy import ToyModel

    model = ToyModel(settings) if settings is not None else loaded_model(model_name)
    return request_saliency(model, request, method)
