"""One rule for every model's text: it must hold a character to attend to.

The toy engine refused a text of only spaces and control characters ("\\x01\\x02") while MiniLM
wrote a trace of [CLS] [SEP] alone with exit 0. The rule is the tokenizers'
own (engine.text.tokenize skips control, format, unassigned and separator characters), with the toy
engine's message, so a text is refused alike whatever the model.
"""
from __future__ import annotations

from ..core.errors import EngineError
from .tokenize import is_skipped


def require_visible_text(text: str) -> str:
    """``text`` unchanged; EngineError when it is empty or only spaces / control / format characters."""
    if not isinstance(text, str):
        raise EngineError("text must be a string", field="text")
    if not text or is_skipped(text):
        raise EngineError("the text has no tokens (only spaces or control characters): type a word", field="text")
    return text
