"""Settings and embeddings tables read from files: exactly what the engine accepts, nothing else.

One reader for each kind of document, used by the command line, the window and sessions, so that
a value refused in one place is refused in all of them with the same message:

- :func:`parse_settings`: an AttentionConfig from JSON text or an already parsed object (a
  session's ``"config"``, the window's saved last configuration). One rule for every number: a
  whole number where a whole number is meant (``8``, not ``8.0``, ``"8"`` or ``true``), a number
  where a number is meant (``1`` or ``0.5``, not ``"1"`` or ``true``). Everything else, ranges
  included, is the engine's own check (AttentionConfig), in its words. ``memory_budget`` is
  never read.
- :func:`load_embeddings_table`: a token → vector table from a JSON file, size-capped and parsed
  with :mod:`engine.core.safe_io`'s guards; ``null``, an empty table or a non-object is refused.
"""
from __future__ import annotations

from dataclasses import fields
from typing import Any, Mapping

from ..toy.config import AttentionConfig, freeze_table
from ..core.errors import EngineError
from ..core.safe_io import load_json, parse_json

# JSON types where the engine is more lenient than a file may be: AttentionConfig takes
# float(temperature), so "1" and true would pass. Every other field's type is the engine's own
# check (text must be a string, choices must be members, whole numbers must be int, not bool).
_KINDS: dict[str, tuple[str, tuple[type, ...]]] = {  # field → (what a person reads, JSON types)
    "d_model": ("a whole number", (int,)),
    "heads": ("a whole number", (int,)),
    "seed": ("a whole number", (int,)),
    "scale": ("true or false", (bool,)),
    "temperature": ("a number", (int, float)),
}
# memory_budget is the program's safety limit, not a document's: a file that sets it could break
# every computation (1) or switch the guard off (10**15). Files written before it was dropped from
# to_dict() hold it (trace exports' config), so it is ignored silently rather than refused: the
# file is otherwise good and the value was never the user's choice.
IGNORED_KEYS = ("memory_budget",)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "…"


def parse_settings(data: str | bytes | Mapping, what: str = "settings") -> AttentionConfig:
    """An AttentionConfig from JSON text or a parsed JSON object; EngineError (with ``field``) if unusable."""
    if isinstance(data, (str, bytes)):
        data = parse_json(data, what)
    if not isinstance(data, Mapping):
        raise EngineError("{what} must be an object of name: value pairs", what=what)
    known = {f.name for f in fields(AttentionConfig)} - set(IGNORED_KEYS)
    unknown = sorted(str(key) for key in set(data) - known - set(IGNORED_KEYS))
    if unknown:  # the engine's own words (AttentionConfig.from_dict), so translations apply
        raise EngineError("unknown setting(s): {names}", names=", ".join(unknown))
    settings = {}
    for name, value in data.items():
        if name in IGNORED_KEYS:
            continue
        kind, types = _KINDS.get(name, ("", ()))
        if types and type(value) not in types:  # type(), not isinstance: True is an int to isinstance
            raise EngineError("{name} must be {kind}; got {value}", field=name, name=name, kind=kind,
                              value=_short(value))
        settings[name] = value
    if settings.get("embeddings") is not None:
        settings["embeddings"] = validate_table(settings["embeddings"], "the embeddings table")
    return AttentionConfig(**settings)


def validate_table(table: Any, what: str = "embeddings table") -> Mapping[str, tuple[float, ...]]:
    """A token → vector table as the engine keeps it; EngineError for null, empty or malformed tables."""
    if not isinstance(table, Mapping):
        raise EngineError('{what} must be an object mapping tokens to lists of numbers, e.g. {{"小明": [1, 0]}}; '
                          "got {kind}", field="embeddings", what=what,
                          kind="null" if table is None else type(table).__name__)
    if not table:
        raise EngineError("{what} holds no tokens", field="embeddings", what=what)
    for token, vector in table.items():
        if type(vector) is not list:  # JSON null, a number or a string: not a vector
            raise EngineError("{what}: the vector of {token} must be a list of numbers; got {value}",
                              field="embeddings", what=what, token=_short(token), value=_short(vector))
    try:
        return freeze_table(table)
    except EngineError as error:  # the engine's message, with the file it came from
        raise EngineError("{what}: {problem}", field="embeddings", what=what, problem=str(error)) from None


def load_embeddings_table(path) -> Mapping[str, tuple[float, ...]]:
    """Read and check a JSON token → vector table (size-capped, regular files only); EngineError if unusable.

    The window's input panel, the command line and sessions all read tables through this.
    """
    return validate_table(load_json(path, "embeddings table"), f"embeddings table {str(path)!r}")


__all__ = ["IGNORED_KEYS", "load_embeddings_table", "parse_settings", "validate_table"]
