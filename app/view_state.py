"""What the user is looking at, in one frozen object: settings, selection, model and sentence B.

The controller owns the live state and makes a :class:`ViewState` of it on demand; sessions, the
language switch and start-up restore all read and apply this one object, so none keeps its own
list of what to carry over.
"""
from __future__ import annotations

from dataclasses import dataclass

from engine import AttentionConfig
from engine.models import DEFAULT_MODEL

VIEW_FIELDS = ("head", "focus", "stage", "model", "layer", "sentence_b", "by_words", "ablate")  # a session's "view" keys


@dataclass(frozen=True)
class ViewState:
    config: AttentionConfig  # every setting of the toy engine, the sentence included
    head: int = 0
    focus: int = 0  # the focused query token
    stage: str = "weights"  # one of engine.STAGES
    model: str = DEFAULT_MODEL  # registry name (engine.models)
    layer: int = 0  # layer shown by a pretrained model
    sentence_b: str = ""  # the comparison's sentence B ("" = none typed)
    by_words: bool = False  # attention rolled up by words (engine.text.words) instead of pieces
    ablate: tuple = ()  # switched-off heads, sorted (layer, head) pairs

    def session_view(self) -> dict:
        """The "view" object of a session file."""
        view = {name: getattr(self, name) for name in VIEW_FIELDS}
        view["ablate"] = [list(pair) for pair in self.ablate]  # JSON: a list of [layer, head]
        return view

    @classmethod
    def from_session(cls, config: AttentionConfig, view: dict) -> "ViewState":
        """A state from a session's config and (already validated) view; missing keys keep their defaults."""
        values = {name: view[name] for name in VIEW_FIELDS if name in view}
        if "ablate" in values:
            values["ablate"] = tuple(sorted((int(l), int(h)) for l, h in values["ablate"]))
        return cls(config, **values)
