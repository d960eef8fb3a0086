"""Session files: the sentence, every setting and the view, as versioned JSON.

{"format": "attention-explorer-session", "version": 1,
 "config": {...AttentionConfig fields...}, "view": {"head": 0, "focus": 1, "stage": "weights"}}

Reading never half-applies: a malformed, mismatched or future-version file raises
:class:`SessionError` with a message that says what is wrong, and nothing changes. The file is
read and parsed by engine/core/safe_io.py (size cap, regular files only, nesting and digit limits) and
the settings checked by engine/files/documents.py's ``parse_settings``: a session holds exactly what the
engine accepts. ``memory_budget`` is never read from a session (a limit is the program's).
Writing is atomic (engine/core/safe_io.py's ``atomic_write``).
"""
from __future__ import annotations

import json
from pathlib import Path

from engine import AttentionConfig, EngineError
from engine.files.documents import parse_settings
from engine.models import DEFAULT_MODEL
from engine.core.safe_io import parse_json, read_limited, write_bytes_atomic
from engine.toy.trace import STAGES  # noqa: F401 - kept for importers

from .jobs.snapshot import VIEW_STAGES

FORMAT = "attention-explorer-session"
VERSION = 1
MAX_INDEX = 4096  # layers, heads and token positions a session may name before its model is loaded


class SessionError(EngineError):
    """A session file that cannot be used; the message says why."""


def session_dict(config: AttentionConfig, view: dict | None = None, lesson: dict | None = None) -> dict:
    data = config.to_dict()
    data.pop("memory_budget", None)
    session = {"format": FORMAT, "version": VERSION, "config": data, "view": dict(view or {})}
    if lesson:  # where the student is in a lesson path (app/lessons.py); older files have none
        session["lesson"] = dict(lesson)
    return session


def save_session(path, config: AttentionConfig, view: dict | None = None, lesson: dict | None = None) -> Path:
    path = Path(path)
    text = json.dumps(session_dict(config, view, lesson), ensure_ascii=False, indent=2, allow_nan=False)
    write_atomic(path, text.encode("utf-8"))
    return path


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically; SessionError naming ``path`` if it cannot be written."""
    try:
        write_bytes_atomic(path, data)
    except EngineError as error:
        raise SessionError("{error}", error=error) from None


def parse_session(text: str | bytes) -> tuple[AttentionConfig, dict]:
    """(config, view) from a session file's text; SessionError if it cannot be used."""
    try:
        data = parse_json(text, "the session file")
    except EngineError as error:
        if "line" in error.values:  # plain bad JSON: the message translators already have
            raise SessionError("not a valid session file: JSON error at line {lineno}, column {colno}",
                               lineno=error.values["line"], colno=error.values["column"]) from None
        raise SessionError("{error}", error=error) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SessionError("not an Attention Explorer session file (its \"format\" field is missing or different)")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SessionError("the session file has no valid \"version\" number")
    if version > VERSION:
        raise SessionError(
            "the session was written by a newer Attention Explorer (format version {version}); this version reads "
            "format {VERSION}: please update the app",
            version=version, VERSION=VERSION
        )
    if version < 1:
        raise SessionError("unknown session format version {version}", version=version)
    settings = data.get("config")
    if not isinstance(settings, dict):
        raise SessionError("the session file has no \"config\" object")
    try:
        config = parse_settings(settings, "the session's settings")
    except EngineError as error:
        raise SessionError("the session's settings are invalid: {error}", error=error) from None
    view = data.get("view") or {}
    if not isinstance(view, dict):
        raise SessionError("the session's \"view\" must be an object")
    clean = {}
    # the toy engine's heads are in the file's own settings; a pretrained model's head and focus are
    # checked once that model is loaded (app/session_models.py): here only a bound that keeps the
    # widgets safe (a SmolLM2 session on head 8 was refused against the toy's 4 heads)
    toy = view.get("model", DEFAULT_MODEL) == DEFAULT_MODEL
    limits = {"head": config.heads - 1 if toy else MAX_INDEX - 1,
              "focus": len(config.text) if toy else MAX_INDEX - 1}  # a toy token is at least one character
    for key in ("head", "focus"):
        value = view.get(key, 0)
        if type(value) is not int or value < 0:
            raise SessionError("the session's view.{key} must be a whole number ≥ 0", key=key)
        if value > limits[key]:  # a huge number would overflow the window's widgets
            raise SessionError("the session's view.{key} must be at most {limit}; got {value}",
                               key=key, limit=limits[key], value=value)
        clean[key] = value
    stage = view.get("stage", "weights")
    if stage not in VIEW_STAGES:
        raise SessionError("the session's view.stage must be one of {stages}", stages=', '.join(VIEW_STAGES))
    clean["stage"] = stage
    # written since the view state (app/view_state.py): absent from older files, which keep the defaults
    layer = view.get("layer", 0)
    if not isinstance(layer, int) or isinstance(layer, bool) or layer < 0:
        raise SessionError("the session's view.{key} must be a whole number ≥ 0", key="layer")
    if layer >= MAX_INDEX:  # 2⁴⁰ would overflow the layer box; the model's own range is checked when it is loaded
        raise SessionError("the session's view.{key} must be at most {limit}; got {value}", key="layer",
                           limit=MAX_INDEX - 1, value=layer)
    for key in ("model", "sentence_b"):
        if not isinstance(view.get(key, ""), str):
            raise SessionError("the session's view.{key} must be text", key=key)
    clean["layer"] = layer
    if not isinstance(view.get("by_words", False), bool):
        raise SessionError("the session's view.{key} must be true or false", key="by_words")
    if "by_words" in view:
        clean["by_words"] = view["by_words"]
    ablate = view.get("ablate", [])  # switched-off heads: [[layer, head], …]
    if not isinstance(ablate, list) or len(ablate) > 4096 or not all(
            isinstance(pair, list) and len(pair) == 2
            and all(type(x) is int and 0 <= x < MAX_INDEX for x in pair) for pair in ablate):
        raise SessionError("the session's view.{key} must be a list of [layer, head] pairs of whole numbers ≥ 0",
                           key="ablate")
    clean["ablate"] = tuple(sorted((l, h) for l, h in ablate))
    clean.update({key: view[key] for key in ("model", "sentence_b") if key in view})
    if "lesson" in data:  # top level, coordinate-free: {"tutorial": "000", "step": 2} (app/lessons.py)
        from .lessons import valid_lesson

        lesson = valid_lesson(data["lesson"])
        if lesson is None:
            raise SessionError("the session's lesson must name a tutorial ({tutorials}) and one of its steps",
                               tutorials="000, 001, 004")
        clean["lesson"] = lesson
    return config, clean


def load_session(path) -> tuple[AttentionConfig, dict]:
    """(config, view) from a session file; SessionError for anything unusable (nothing hangs or crashes)."""
    try:
        data = read_limited(path, "session file")
    except EngineError as error:
        raise SessionError("{error}", error=error) from None
    return parse_session(data)
