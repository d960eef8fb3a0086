"""Session files: the sentence, every setting and the view, as versioned JSON.

{"format": "attention-explorer-session", "version": 1,
 "config": {...AttentionConfig fields...}, "view": {"head": 0, "focus": 1, "stage": "weights"}}

Reading never half-applies: a malformed, mismatched or future-version file raises
:class:`SessionError` with a message that says what is wrong, and nothing changes.
Writing is atomic (temporary file in the same folder, then rename).
"""
from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path

from engine import AttentionConfig, EngineError
from engine.trace import STAGES

FORMAT = "attention-explorer-session"
VERSION = 1


class SessionError(EngineError):
    """A session file that cannot be used; the message says why."""


def session_dict(config: AttentionConfig, view: dict | None = None) -> dict:
    data = config.to_dict()
    data.pop("memory_budget", None)
    return {"format": FORMAT, "version": VERSION, "config": data, "view": dict(view or {})}


def save_session(path, config: AttentionConfig, view: dict | None = None) -> Path:
    path = Path(path)
    text = json.dumps(session_dict(config, view), ensure_ascii=False, indent=2, allow_nan=False)
    write_atomic(path, text.encode("utf-8"))
    return path


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder, then rename."""
    if not path.parent.is_dir():
        raise SessionError("cannot write {path}: the folder {parent} does not exist", path=path, parent=path.parent)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as error:
        raise SessionError("cannot write {path}: {reason}", path=path, reason=error.strerror or error) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except OSError as error:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise SessionError("cannot write {path}: {reason}", path=path, reason=error.strerror or error) from None


def _reject_constant(name: str):
    raise SessionError("the file holds {name}, which is not a finite number", name=name)


def parse_session(text: str) -> tuple[AttentionConfig, dict]:
    """(config, view) from a session file's text; SessionError if it cannot be used."""
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise SessionError("not a valid session file: JSON error at line {lineno}, column {colno}",
                           lineno=error.lineno, colno=error.colno) from None
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
        config = AttentionConfig.from_dict(settings)
    except (EngineError, TypeError) as error:
        raise SessionError("the session's settings are invalid: {error}", error=error) from None
    view = data.get("view") or {}
    if not isinstance(view, dict):
        raise SessionError("the session's \"view\" must be an object")
    clean = {}
    for key in ("head", "focus"):
        value = view.get(key, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise SessionError("the session's view.{key} must be a whole number ≥ 0", key=key)
        clean[key] = value
    stage = view.get("stage", "weights")
    if stage not in STAGES:
        raise SessionError("the session's view.stage must be one of {stages}", stages=', '.join(STAGES))
    clean["stage"] = stage
    # written since the view state (app/view_state.py): absent from older files, which keep the defaults
    layer = view.get("layer", 0)
    if not isinstance(layer, int) or isinstance(layer, bool) or layer < 0:
        raise SessionError("the session's view.{key} must be a whole number ≥ 0", key="layer")
    for key in ("model", "sentence_b"):
        if not isinstance(view.get(key, ""), str):
            raise SessionError("the session's view.{key} must be text", key=key)
    clean["layer"] = layer
    clean.update({key: view[key] for key in ("model", "sentence_b") if key in view})
    return config, clean


def load_session(path) -> tuple[AttentionConfig, dict]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SessionError("{path} does not exist", path=path) from None
    except UnicodeDecodeError:
        raise SessionError("{path} is not a UTF-8 text file", path=path) from None
    except OSError as error:
        raise SessionError("cannot read {path}: {reason}", path=path, reason=error.strerror or error) from None
    return parse_session(text)
