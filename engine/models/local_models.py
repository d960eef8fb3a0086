"""Find the models a user already has: Hugging Face hub caches, LM Studio's folders, folders they added.

    for found in scan(default_roots() + [Path("~/models")]):
        print(found.name, found.family, found.size, found.layers, found.heads, found.problem or "can open")

Where (:func:`default_roots`): ``$HF_HUB_CACHE``, ``$HF_HOME/hub``, ``~/.cache/huggingface/hub``
(each ``models--owner--name/snapshots/<revision>`` folder is a candidate; the revision ``refs/main``
names comes first and others of the same model are skipped), LM Studio's ``~/.lmstudio/models`` and
``~/.cache/lm-studio/models``, and the folders the user added (the window keeps them in QSettings).
A candidate is a folder holding config.json, or a ``.gguf`` file.

Each candidate is described from its headers only (engine.models.hf_folder.inspect_folder,
engine.models.gguf_file.read_config): family, bytes on disk, layers × heads, and whether it can be
opened or why not (the refusal's own message). Nothing is loaded.

Bounded, because caches are big and strange: at most :data:`MAX_DEPTH` folders deep and
:data:`MAX_ENTRIES` directory entries in all; each real folder is walked once (a symlink loop is
visited once and left); ``cancelled()`` is asked between entries, ``progress(fraction, message)``
told between candidates. A ``refs/main`` is read only if it is a small regular file (a device, a
FIFO or a 4 GiB sparse file would hang the scan or fill the memory), and a ``~nosuchuser/…``
location is a folder that is not there, not an error.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from ..core.errors import EngineError
from ..core.safe_io import read_limited

MAX_DEPTH = 6
MAX_ENTRIES = 50_000
GGUF_SUFFIX = ".gguf"
MAX_REF_BYTES = 1024  # a ref holds a 40-character commit hash


@dataclass(frozen=True)
class LocalModel:
    """One model found on disk (nothing loaded)."""

    path: Path  # the folder (Hugging Face) or the .gguf file
    name: str  # owner/name for a hub snapshot, else the folder's or file's name
    source: str  # "hub" | "lmstudio" | "added"
    format: str  # "folder" | "gguf"
    family: str = ""  # a family of engine/models/families/ (or the unknown architecture's name)
    size: int = 0  # bytes of the weights on disk
    layers: int = 0
    heads: int = 0
    problem: str = ""  # why it cannot be opened ("" = it can)
    error: EngineError | None = field(default=None, compare=False, repr=False)  # the refusal, to translate

    @property
    def can_open(self) -> bool:
        return not self.problem


def expand_home(path) -> Path:
    """``path`` with a leading ``~`` or ``~user`` expanded, or as given when that home cannot be found
    (Path.expanduser raises RuntimeError for ``~nosuchuser``; a folder of that name is simply not there)."""
    return Path(os.path.expanduser(os.fspath(path)))


def default_roots(environ: dict | None = None, home: Path | None = None) -> list[tuple[Path, str]]:
    """(folder, source) of the usual places, existing or not, without duplicates; without a home
    folder (HOME unset, no password entry) the home-relative ones are left out."""
    environ = os.environ if environ is None else environ
    if home is None:
        found = os.path.expanduser("~")
        home = Path(found) if found != "~" else None
    roots: list[tuple[Path, str]] = []
    if environ.get("HF_HUB_CACHE"):
        roots.append((expand_home(environ["HF_HUB_CACHE"]), "hub"))
    if environ.get("HF_HOME"):
        roots.append((expand_home(environ["HF_HOME"]) / "hub", "hub"))
    if home is not None:
        roots.append((home / ".cache" / "huggingface" / "hub", "hub"))
        roots.append((home / ".lmstudio" / "models", "lmstudio"))
        roots.append((home / ".cache" / "lm-studio" / "models", "lmstudio"))
    unique, seen = [], set()
    for root, source in roots:
        key = os.path.abspath(root)
        if key not in seen:
            seen.add(key)
            unique.append((root, source))
    return unique


class _Budget:
    def __init__(self, cancelled: Callable[[], bool] | None) -> None:
        self.entries = 0
        self.cancelled = cancelled or (lambda: False)
        self.seen: set[tuple[int, int]] = set()  # (device, inode) of every folder walked

    def exhausted(self) -> bool:
        return self.entries >= MAX_ENTRIES or self.cancelled()


def _entries(folder: Path, budget: _Budget) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as iterator:
            out = []
            for entry in iterator:
                budget.entries += 1
                out.append(entry)
                if budget.exhausted():
                    break
            return sorted(out, key=lambda e: e.name)
    except OSError:
        return []


def _first_visit(folder: Path, budget: _Budget) -> bool:
    try:
        info = folder.stat()
    except OSError:  # a dangling link, a loop too deep for the system, no permission
        return False
    key = (info.st_dev, info.st_ino)
    if key in budget.seen:
        return False
    budget.seen.add(key)
    return True


def _candidates(root: Path, source: str, budget: _Budget) -> Iterable[tuple[Path, str, str]]:
    """(path, format, source) under ``root``, breadth first, bounded."""
    if source == "hub":
        yield from _hub_snapshots(root, budget)
        return
    queue = [(root, 0)]
    while queue and not budget.exhausted():
        folder, depth = queue.pop(0)
        if not _first_visit(folder, budget):
            continue
        entries = _entries(folder, budget)
        if any(e.name == "config.json" for e in entries):
            yield folder, "folder", source
            continue
        for entry in entries:
            try:
                if entry.name.lower().endswith(GGUF_SUFFIX) and entry.is_file():
                    yield Path(entry.path), "gguf", source
                elif entry.is_dir() and depth + 1 < MAX_DEPTH and not entry.name.startswith("."):
                    queue.append((Path(entry.path), depth + 1))
            except OSError:
                continue


def _hub_snapshots(root: Path, budget: _Budget) -> Iterable[tuple[Path, str, str]]:
    """models--owner--name/snapshots/<rev> of a hub cache: refs/main's revision, else the newest."""
    if not _first_visit(root, budget):
        return
    for repo in _entries(root, budget):
        if budget.exhausted():
            return
        if not repo.name.startswith("models--"):
            continue
        snapshots = Path(repo.path) / "snapshots"
        revisions = [Path(e.path) for e in _entries(snapshots, budget) if _is_dir(e)]
        if not revisions:
            continue
        main = _revision(Path(repo.path) / "refs" / "main")
        chosen = next((r for r in revisions if r.name == main), None)
        if chosen is None:
            chosen = max(revisions, key=lambda r: _mtime(r))
        if not _first_visit(chosen, budget):
            continue
        names = [e.name for e in _entries(chosen, budget)]
        if "config.json" in names:
            yield chosen, "folder", "hub"
        for name in names:
            if name.lower().endswith(GGUF_SUFFIX):
                yield chosen / name, "gguf", "hub"


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:  # no permission to look, or gone meanwhile
        return False


def _revision(ref: Path) -> str:
    """The revision a hub ref names (40 hex digits), or "" for anything else: a ref is a regular file
    of a few bytes, and one that is a device (/dev/zero), a FIFO or a huge file is not read."""
    try:
        return read_limited(ref, "ref", MAX_REF_BYTES).decode("ascii", errors="replace").strip()
    except EngineError:
        return ""


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def describe(path: Path, format: str, source: str, budget_bytes: int | None = None) -> LocalModel:
    """A candidate's facts from its headers; ``problem`` holds the refusal when it cannot be opened."""
    from .hf_folder import check_budget, check_tensors, display_name, inspect_folder

    name = display_name(path if format == "folder" else path.parent)
    if format == "gguf":
        name = path.name if name == path.parent.name else f"{name}/{path.name}"
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
        try:
            from .gguf_file import open_reader, read_config, read_tokenizer_spec

            reader = open_reader(path)
            config = read_config(reader)
            read_tokenizer_spec(reader)
            numbers = sum(int(t.n_elements) for t in reader.tensors)
            from ..core.memory import weights_budget

            limit = weights_budget() if budget_bytes is None else budget_bytes
            problem = "" if 4 * numbers <= limit else "its weights take {need} as float32, over the {budget} " \
                "allowed".format(need=_gib(4 * numbers), budget=_gib(limit))
            return LocalModel(path, name, source, format, config.architecture, size, config.num_layers,
                              config.num_heads, problem)
        except EngineError as error:
            return LocalModel(path, name, source, format, "", size, problem=str(error), error=error)
        except Exception as error:  # a file gguf's reader chokes on
            return LocalModel(path, name, source, format, "", size, problem=f"{type(error).__name__}: {error}"[:300])
    size = _folder_weight_bytes(path)
    try:
        info = inspect_folder(path)
        check_tensors(info)
        from .families import family as family_module

        family_module(info.family).config(info)  # a config value the block cannot compute: the reason shown
        check_budget(info, budget_bytes)
        return LocalModel(path, name, source, format, info.family, size, info.layers, info.heads)
    except EngineError as error:
        family = ""
        try:
            from .hf_folder import read_config

            family = str(read_config(path).get("model_type", ""))[:40]
        except EngineError:
            pass
        return LocalModel(path, name, source, format, family, size, problem=str(error), error=error)


def _gib(count: int) -> str:
    from ..core.memory import format_bytes

    return format_bytes(count)


def _folder_weight_bytes(folder: Path) -> int:
    total = 0
    for pattern in ("*.safetensors", "*.bin"):
        for file in folder.glob(pattern):
            try:
                total += file.stat().st_size
            except OSError:
                pass
    return total


def scan(roots: Iterable[tuple[Path, str]], *, progress: Callable[[float, str], None] | None = None,
         cancelled: Callable[[], bool] | None = None, budget_bytes: int | None = None) -> list[LocalModel]:
    """Every model under ``roots`` ((folder, source) pairs), described; stops early when cancelled."""
    budget = _Budget(cancelled)
    roots = list(roots)
    found: list[LocalModel] = []
    seen_paths: set[str] = set()
    for index, (root, source) in enumerate(roots):
        if budget.exhausted():
            break
        root = expand_home(root)
        if not root.is_dir():
            continue
        for path, format, kind in _candidates(root, source, budget):
            if budget.cancelled():
                break
            key = os.path.realpath(path)
            if key in seen_paths:
                continue
            seen_paths.add(key)
            if progress is not None:
                progress(index / max(len(roots), 1), "reading {name}".format(name=path.name))
            found.append(describe(path, format, kind, budget_bytes))
    if progress is not None:
        progress(1.0, "done")
    return found
