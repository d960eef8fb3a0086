"""The exceptions the engine raises for input a person can fix: a template and its values.

Like napari's ``TranslationString``: ``str(error)`` is the plain English text for everyone
(the command line, logs, tests), while the window translates ``error.template`` and fills in
``error.values`` itself, so no message is ever parsed back into meaning.

    raise EngineError("d_model must be at least {minimum}, not {value}", field="d_model", minimum=1, value=0)
"""
from __future__ import annotations

from typing import Any


class EngineError(ValueError):
    """Invalid configuration or input; the message says what is wrong and what to do.

    ``template``: the English message with ``{name}`` fields (literal braces doubled when there
    are values; a template without values is used as it is), the id translators find it under. ``values``: what fills the fields. ``field``: the
    setting at fault (an AttentionConfig field name, or "embeddings", "text", …), or None.
    """

    def __init__(self, template: str, *, field: str | None = None, **values: Any) -> None:
        self.template = template
        self.values = values
        self.field = field
        super().__init__(template.format(**values) if values else template)

    def __reduce__(self):  # pickling keeps the template and values (a keyword-only __init__)
        return (_rebuild, (type(self), self.template, self.field, self.values))


def _rebuild(cls, template: str, field: str | None, values: dict) -> "EngineError":
    return cls(template, field=field, **values)


class ModelNotInstalled(EngineError):
    """A model whose package or file is missing; ``values["command"]`` installs it."""
