"""Loaded models and their latest traces, kept for whoever asks next (the window's worker jobs,
the analyses): switching layers or heads costs no new forward pass, and opening model after model
does not pile up their weights.

    model = cache.model("minilm")               # loaded once; the two most recently used stay
    trace = cache.trace("minilm", text)         # the last few texts' traces (bytes bounded)
    cache.shown_traces["smollm2"] = trace       # a decoder's trace on screen: its KV cache

Thread-safe (one lock); a model released while one of its runs is under way keeps nothing of it.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from ..core.memory import give_back_freed_memory

_lock = threading.Lock()
_models: "OrderedDict[str, object]" = OrderedDict()  # registry name → loaded model, least recently used first
_traces: "OrderedDict[tuple[str, str], object]" = OrderedDict()  # (model, text) → trace
shown_traces: dict = {}  # registry name → the decoder trace on screen (the KV cache of the next keystroke)
_release_hooks: list = []  # functions(name) that drop what other modules keep of a released model
TRACE_CACHE = 4  # sentences kept at most
TRACE_CACHE_BYTES = 512 << 20  # and at most this many bytes of arrays (the latest trace is always kept):
# one 800-token SmolLM2 trace holds ~1.2 GB, so a comparison never keeps four of them
MODELS_KEPT = 2  # the model in use and the previous one; older ones are released


def model(name: str, progress=None):
    """The loaded model ``name`` (ModelNotInstalled with the install command when it is missing).

    The MODELS_KEPT most recently used stay loaded; loading one more releases the oldest first
    (its traces too)."""
    from . import load_model

    with _lock:
        if name in _models:
            _models.move_to_end(name)
            return _models[name]
        released = False
        while len(_models) >= MODELS_KEPT:
            _release(next(iter(_models)))
            released = True
        if released:  # its arrays are freed now: give their pages back before loading the next model
            give_back_freed_memory()
        loaded = _models[name] = load_model(name, progress)
        return loaded


def on_release(hook) -> None:
    """Call ``hook(name)`` whenever model ``name`` is released."""
    _release_hooks.append(hook)


def _release(name: str) -> None:
    """Forget model ``name``, its cached traces and its trace on screen (call with ``lock`` held)."""
    _models.pop(name, None)
    shown_traces.pop(name, None)
    for key in [key for key in _traces if key[0] == name]:
        del _traces[key]
    for hook in _release_hooks:
        hook(name)


def release(name: str) -> None:
    """Forget model ``name`` and everything kept of it."""
    with _lock:
        _release(name)


def loaded_models() -> list[str]:
    """The registry names of the models loaded now, least recently used first."""
    with _lock:
        return list(_models)


def held_bytes(value, _seen: set | None = None, _depth: int = 0) -> int:
    """Bytes of the NumPy arrays ``value`` holds (its attributes, tuples and lists, three levels deep),
    each buffer counted once: views share their base's memory."""
    seen = set() if _seen is None else _seen
    if isinstance(value, np.ndarray):
        base = value
        while isinstance(base.base, np.ndarray):
            base = base.base
        if id(base) in seen:
            return 0
        seen.add(id(base))
        return int(base.nbytes)
    if _depth >= 3:
        return 0
    if isinstance(value, (list, tuple)):
        items = value
    elif isinstance(value, dict):
        items = value.values()
    elif hasattr(value, "__dict__") or hasattr(value, "__slots__"):
        items = list(getattr(value, "__dict__", {}).values()) + [getattr(value, slot, None) for slot in
                                                                  getattr(value, "__slots__", ())]
    else:
        return 0
    return sum(held_bytes(item, seen, _depth + 1) for item in items)


def trace(name: str, text: str, progress=None):
    """The plain trace of ``text`` by model ``name`` (cached; a decoder's trace on screen is used as
    it is, not computed and cached a second time beside it)."""
    loaded_model = model(name, progress)
    shown = shown_traces.get(name)
    if shown is not None and shown.text == text and not shown.ablate:
        return shown
    key = (name, text)
    with _lock:
        if key in _traces:
            _traces.move_to_end(key)
            return _traces[key]
    result = loaded_model.run(text)
    with _lock:
        if name not in _models:  # released while it ran: nothing of it is kept
            return result
        _traces[key] = result
        sizes = {k: held_bytes(t) for k, t in _traces.items()}
        while len(_traces) > 1 and (len(_traces) > TRACE_CACHE or sum(sizes.values()) > TRACE_CACHE_BYTES):
            oldest, _ = _traces.popitem(last=False)
            sizes.pop(oldest)
    return result
