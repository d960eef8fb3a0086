"""A session's view checked against the model it names.

app/session.py checks what a file can say on its own (types, the toy engine's heads, a layer
below MAX_INDEX). The head, layer, focus and switched-off heads of a pretrained model can only be
checked once that model is loaded, so opening a session (menu, recent list, ``--session``, the
state restored at start-up) goes through two steps, both run as worker jobs (never the GUI
thread):

1. :func:`read_session` reads and parses the file and resolves the model it names: an unknown
   registry name, a ``gguf:`` path that is empty, relative, a symlink loop, missing or not a
   regular file is refused here, naming the value, and so is a folder whose config.json is missing,
   broken or of a family the app does not run. For a model file the answer carries its path
   and size: the window asks before loading it (a session must not load an arbitrary file
   silently).
2. :func:`checked_view` loads the model (app.jobs.trained's cache, so the computation that follows
   reuses it) and checks the view against it: layer < layers, head < heads, each switched-off
   (layer, head) inside the model, focus < the text's token count. Anything outside is a
   SessionError naming the value and the model's range; nothing is applied.

Pure Python + NumPy (no Qt): the window applies the answer.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from engine import AttentionConfig, EngineError
from engine.core.errors import ModelNotInstalled
from engine.models import DEFAULT_MODEL, FOLDER_PREFIX, GGUF_PREFIX, MODELS, model_info

from .session import SessionError, load_session


@dataclass(frozen=True)
class SessionRead:
    """Step 1's answer: the file's settings and view, and the model file it would load (if any)."""

    path: str
    config: AttentionConfig
    view: dict
    model_file: str = ""  # the GGUF file the session names ("" for a registry model)
    model_bytes: int = 0  # its size, for the question the window asks


def model_file(name: str) -> Path:
    """The file of a ``gguf:`` model name (the folder of an ``hf:`` one); SessionError for an empty,
    relative, looping, missing or non-regular path (without touching the registry: a refused name
    is never registered)."""
    folder = name.startswith(FOLDER_PREFIX)
    raw = name[len(FOLDER_PREFIX if folder else GGUF_PREFIX):]
    if not raw.strip():
        raise SessionError("the session names a model file with an empty path ({name!r}); open the model with "
                           "File → Open model… and save the session again", name=name)
    if "\x00" in raw or not os.path.isabs(raw):
        raise SessionError("the session names the model file {path!r}, which is not an absolute path; open the "
                           "model with File → Open model… and save the session again", path=raw)
    try:
        resolved = Path(raw).resolve(strict=True)
        info = resolved.stat()
    except FileNotFoundError:
        raise SessionError("the model file {path} named by the session no longer exists; copy it back or open "
                           "another with File → Open model…", path=raw) from None
    except (OSError, RuntimeError) as error:  # a symlink loop (RuntimeError before Python 3.13), no permission
        raise SessionError("the model file {path} named by the session cannot be read: {reason}", path=raw,
                           reason=getattr(error, "strerror", None) or str(error) or type(error).__name__) from None
    if folder and not stat.S_ISDIR(info.st_mode):
        raise SessionError("the model folder {path} named by the session is not a folder", path=raw)
    if not folder and not stat.S_ISREG(info.st_mode):
        raise SessionError("the model file {path} named by the session is not a regular file", path=raw)
    return resolved


def model_bytes(path: Path) -> int:
    """The size of a model file, or of the files in a model folder (what loading it reads at most)."""
    if not path.is_dir():
        return path.stat().st_size
    total = 0
    for entry in os.scandir(path):  # a Hugging Face folder is flat: its files, no walk
        try:
            total += entry.stat().st_size if entry.is_file() else 0
        except OSError:
            continue
    return total


def check_folder(path: Path) -> None:
    """SessionError unless the folder's config.json names a family the app runs: the window would
    otherwise ask to load a folder that holds no model it can read (an empty folder, /etc, a Mamba)."""
    from engine.models.hf_folder import family_of, read_config

    try:
        family_of(read_config(path), path)
    except EngineError as error:
        raise SessionError("the model folder {path} named by the session cannot be opened: {error}", path=str(path),
                           error=error) from None
    except TypeError:  # a model_type that is not a name (a list): no family to look up
        raise SessionError("the model folder {path} named by the session cannot be opened: its config.json names no "
                           "model_type the app runs", path=str(path)) from None


def check_model_name(name: str) -> tuple[str, Path | None]:
    """(registry name, model file or None) of a session's model; SessionError for an unknown one."""
    if not isinstance(name, str):
        raise SessionError("the session's view.{key} must be text", key="model")
    for prefix in (GGUF_PREFIX, FOLDER_PREFIX):
        if name.startswith(prefix):
            path = model_file(name)
            return prefix + str(path), path
    if name not in MODELS or MODELS[name].path:
        raise SessionError("the session uses the model {name!r}, which this version does not know (a newer "
                           "version may have written it); models known here: {choices}",
                           name=name[:200], choices=", ".join(n for n, e in MODELS.items() if not e.path))
    return name, None


def read_session(path: str) -> SessionRead:
    """Worker job, step 1: the file read, parsed and its model resolved (see the module docstring)."""
    config, view = load_session(path)
    name, file = check_model_name(view.get("model", DEFAULT_MODEL))
    view = dict(view, model=name)
    if file is None:
        return SessionRead(str(path), config, view)
    if name.startswith(FOLDER_PREFIX):
        check_folder(file)
    return SessionRead(str(path), config, view, str(file), model_bytes(file))


def model_dimensions(name: str, config: AttentionConfig, progress=None) -> tuple[int, int, object]:
    """(layers, heads, loaded model or None) of model ``name``; the toy engine has one layer of
    ``config.heads`` heads. Loads a pretrained model (cached); SessionError when it is missing."""
    if model_info(name).configurable:
        return 1, config.heads, None
    from .jobs import trained as minilm_mode

    title = model_info(name).title
    try:
        loaded = minilm_mode.model(name, progress)
    except ModelNotInstalled as error:
        raise SessionError("the session uses {model}, which is not installed here: {error}", model=title,
                           error=error) from None
    except EngineError as error:
        raise SessionError("the session uses {model}, which could not be loaded: {error}", model=title,
                           error=error) from None
    return int(loaded.config.num_layers), int(loaded.config.num_heads), loaded


def token_count(loaded, config: AttentionConfig) -> int | None:
    """How many tokens model ``loaded`` makes of the session's text (None: the toy engine, whose
    result clamps the focus itself; or a text the model refuses, which the computation reports)."""
    if loaded is None:
        return None
    try:
        tokenized = loaded.tokenize(config.text)
    except EngineError:
        return None
    tokens = tokenized[1] if isinstance(tokenized, tuple) else tokenized.tokens
    return len(tokens)


def checked_view(read: SessionRead, progress=None) -> SessionRead:
    """Worker job, step 2: the model loaded and the view checked against it; the same SessionRead."""
    view, config = read.view, read.config
    name = view.get("model", DEFAULT_MODEL)
    layers, heads, loaded = model_dimensions(name, config, progress)
    title = model_info(name).title
    layer, head = view.get("layer", 0), view.get("head", 0)
    if not model_info(name).configurable and layer >= layers:
        raise SessionError("the session's view.layer is {value}, but {model} has layers 0 … {last}", value=layer,
                           model=title, last=layers - 1)
    if head >= heads:
        raise SessionError("the session's view.head is {value}, but {model} has heads 0 … {last}", value=head,
                           model=title, last=heads - 1)
    for l, h in view.get("ablate", ()):
        if not (0 <= l < layers and 0 <= h < heads):
            raise SessionError("the session switches off head {layer}.{head}, which {model} does not have (layers "
                               "0 … {last_layer}, heads 0 … {last_head})", layer=l, head=h, model=title,
                               last_layer=layers - 1, last_head=heads - 1)
    count = token_count(loaded, config)
    if count is not None and view.get("focus", 0) >= count:
        raise SessionError("the session's view.focus is {value}, but {model} reads its text as {count} tokens",
                           value=view.get("focus", 0), model=title, count=count)
    return read


def open_checked(path: str, progress=None) -> SessionRead:
    """Both steps in one job (a session whose model needs no question, or one already answered)."""
    return checked_view(read_session(path), progress)
