"""Files in and out without surprises: bounded, guarded reads of JSON documents and atomic writes.

Reading (embeddings tables, sessions, saved settings): a file is opened without blocking and
checked with ``fstat`` before a byte is read: only a regular file up to :data:`MAX_DOCUMENT_BYTES`
is read (a FIFO would block forever, ``/dev/zero`` never ends), and then at most that many bytes.
JSON is parsed with guards: nesting deeper than :data:`MAX_JSON_DEPTH`, integers longer than
:data:`MAX_INTEGER_DIGITS` digits, ``NaN``/``Infinity`` and floats beyond float range are refused.
Every problem is one :class:`EngineError` that names the file, never a RecursionError or the
ValueError of Python's int-digit limit.

Writing (every export, sessions): :func:`atomic_write` yields a binary file object on a
temporary file with a short name in the target's folder (a 255-byte target name still works),
which is flushed, fsync-ed and renamed onto the target only when the body finished. On any error
or interruption (SIGINT, and SIGTERM/SIGHUP once the program turns them into exceptions, as the
command line does) the temporary file is removed and an existing target is untouched. Writers get
a file object, never a name: ``np.savez`` appends ``.npz`` to a name that lacks it (``T.NPZ``).
An existing target keeps its permission bits; a new file gets the user's umask; a symlink is
written through to its target, which stays a symlink. A temporary file still being written when the
program exits (the window closed during an export in the worker's thread, which never reaches its
cleanup) is removed at exit: every live one is listed in :data:`_LIVE`.
"""
from __future__ import annotations

import atexit
import contextlib
import errno
import json
import math
import os
import re
import signal
import stat
import tempfile
import threading
from pathlib import Path
from typing import Any, BinaryIO, Iterator

import numpy as np

from .errors import EngineError

MAX_DOCUMENT_BYTES = 16 * 1024**2  # ~1.5 M numbers (a 200 MB table took 24 s and 3 GB to read)
MAX_JSON_DEPTH = 32  # sessions are 4 levels deep, tables 2: anything deeper is not ours
MAX_INTEGER_DIGITS = 20  # every integer we read (seed < 2³², d_model ≤ 8192) has at most 10
TEMP_PREFIX, TEMP_SUFFIX = ".ae-", ".tmp"  # ".ae-" + 8 random characters + ".tmp": 16 bytes


# --------------------------------------------------------------------------- reading
def read_limited(path, what: str = "file", limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; EngineError for anything else."""
    name = os.fspath(path)
    try:
        # O_NONBLOCK: opening a FIFO without a writer would otherwise wait forever
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise EngineError("{what} {path!r} does not exist", what=what, path=name) from None
    except IsADirectoryError:
        raise EngineError("{what} {path!r} is a folder, not a file", what=what, path=name) from None
    except OSError as error:
        raise EngineError("cannot read {what} {path!r}: {reason}", what=what, path=name,
                          reason=error.strerror or str(error)) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise EngineError("{what} {path!r} is a folder, not a file", what=what, path=name)
        if not stat.S_ISREG(info.st_mode):
            raise EngineError("{what} {path!r} is not a regular file (a pipe or a device?): save it to a file first",
                              what=what, path=name)
        if info.st_size > limit:
            raise EngineError("{what} {path!r} is too large ({size} MB; at most {limit} MB)", what=what, path=name,
                              size=round(info.st_size / 1e6, 1), limit=round(limit / 1e6, 1))
        chunks, total = [], 0
        while total <= limit:  # bounded even if the file grows while we read it
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise EngineError("{what} {path!r} is too large (over {limit} MB)", what=what, path=name,
                              limit=round(limit / 1e6, 1))
        return b"".join(chunks)
    except OSError as error:
        raise EngineError("cannot read {what} {path!r}: {reason}", what=what, path=name,
                          reason=error.strerror or str(error)) from None
    finally:
        os.close(fd)


def check_model_path(path, source: str = "", max_bytes: int | None = None) -> tuple[Path, int]:
    """(the path with ~ expanded, its size) of a model file; EngineError naming what is there instead.

    A missing file, a dangling symlink (naming its missing target), a symlink loop, a folder, a
    FIFO, a device (/dev/zero) or a file larger than ``max_bytes`` are each named for what they
    are, before a byte is read (a FIFO would block, /dev/zero never ends, a 20 GB sparse file took
    41 s to hash). ``source``: what named the path, e.g. "ATTENTION_EXPLORER_E5_MODEL: ".
    A missing file is :class:`~engine.core.errors.ModelNotInstalled` (the window offers to install).
    """
    from .errors import ModelNotInstalled

    name = os.path.expanduser(os.fspath(path))
    try:
        info = os.stat(name)
    except FileNotFoundError:
        if os.path.islink(name):
            raise EngineError("{source}{path} is a symbolic link to {target}, which does not exist", field="model",
                              source=source, path=name, target=os.path.join(os.path.dirname(name), os.readlink(name)))
        raise ModelNotInstalled("{source}{path} does not exist", field="model", source=source, path=name) from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise EngineError("{source}{path} is a symbolic link loop (it leads back to itself): point it at the "
                              "model file", field="model", source=source, path=name) from None
        raise EngineError("{source}cannot read {path}: {reason}", field="model", source=source, path=name,
                          reason=error.strerror or str(error)) from None
    except ValueError:  # a NUL character in the name
        raise EngineError("{source}{path!r} is not a valid file name", field="model", source=source, path=name) from None
    if stat.S_ISDIR(info.st_mode):
        raise EngineError("{source}{path} is a folder, not a model file", field="model", source=source, path=name)
    if stat.S_ISFIFO(info.st_mode):
        raise EngineError("{source}{path} is a named pipe (FIFO), not a model file", field="model", source=source,
                          path=name)
    if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode):
        raise EngineError("{source}{path} is a device, not a model file", field="model", source=source, path=name)
    if not stat.S_ISREG(info.st_mode):
        raise EngineError("{source}{path} is not a regular file", field="model", source=source, path=name)
    if max_bytes is not None and info.st_size > max_bytes:
        raise EngineError("{source}{path} is {size:,} bytes, larger than any model this program opens ({limit:,} "
                          "bytes)", field="model", source=source, path=name, size=info.st_size, limit=max_bytes)
    return Path(name), info.st_size


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)  # a JSON string, escapes included
_OPENERS = re.compile(r"[\[{]")
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class _Refused(Exception):
    """Raised inside json.loads by a hook; turned into EngineError outside."""


def _refuse_constant(name: str):
    raise _Refused(f"holds {name}, which is not a finite number")


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise _Refused(f"holds an integer of {len(text.lstrip('-'))} digits (at most {MAX_INTEGER_DIGITS})")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)  # float() has no digit limit, only range: 1e999 → inf
    if not math.isfinite(value):
        raise _Refused(f"holds {text[:20]}{'…' * (len(text) > 20)}, too large for a number")
    return value


def json_depth(text: str) -> int:
    """The nesting depth of JSON ``text`` (brackets outside strings), without recursion.

    The brackets are counted with a running sum over 1 MiB chunks: a file of nothing but "[]"
    costs the same as any other of its size (a Python loop over 16 M characters took seconds).
    """
    import numpy as np

    brackets = _NOT_BRACKET.sub("", _STRING.sub('""', text)).encode("ascii")  # only []{} left
    depth = deepest = 0
    for start in range(0, len(brackets), 1 << 20):
        chunk = np.frombuffer(brackets, np.uint8, count=min(1 << 20, len(brackets) - start), offset=start)
        running = np.cumsum(np.where((chunk == ord("[")) | (chunk == ord("{")), 1, -1), dtype=np.int64) + depth
        deepest, depth = max(deepest, int(running.max())), int(running[-1])
    return deepest


def parse_json(data: bytes | str, what: str = "file") -> Any:
    """Parse JSON with the guards above; EngineError("{what} …") for any malformed or hostile input."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise EngineError("{what} is not UTF-8 text", what=what) from None
    if not isinstance(data, str):
        raise EngineError("{what} is not text", what=what)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise EngineError("{what} is too large (over {limit} MB)", what=what, limit=round(MAX_DOCUMENT_BYTES / 1e6, 1))
    if _OPENERS.search(data, 0) is not None and json_depth(data) > MAX_JSON_DEPTH:
        raise EngineError("{what} is nested too deeply (more than {depth} levels)", what=what, depth=MAX_JSON_DEPTH)
    try:
        return json.loads(data, parse_constant=_refuse_constant, parse_int=_parse_int, parse_float=_parse_float)
    except _Refused as error:
        raise EngineError("{what} {problem}", what=what, problem=str(error)) from None
    except json.JSONDecodeError as error:
        raise EngineError("{what} is not valid JSON: {reason} (line {line}, column {column})", what=what,
                          reason=error.msg, line=error.lineno, column=error.colno) from None
    except (RecursionError, ValueError, MemoryError) as error:  # the pre-scan should make these unreachable
        raise EngineError("{what} cannot be read: {reason}", what=what, reason=type(error).__name__) from None


def load_json(path, what: str = "file", limit: int = MAX_DOCUMENT_BYTES) -> Any:
    """:func:`read_limited` then :func:`parse_json`; every problem is an EngineError naming the file."""
    return parse_json(read_limited(path, what, limit), f"{what} {os.fspath(path)!r}")


# --------------------------------------------------------------------------- writing
def current_umask() -> int:
    """The process's umask (read by setting and restoring it: the only portable way)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_error(path: str, error: OSError) -> EngineError:
    return EngineError("cannot write {path!r}: {reason}", path=path, reason=error.strerror or str(error))


_TEMPORARY = re.compile(r"\.ae-[a-z0-9_]{8}\.tmp")  # tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX)
STALE_SECONDS = 5  # younger temporary files are left alone (a writer between mkstemp and its lock)
STALE_SECONDS_UNLOCKED = 24 * 3600  # where files cannot be locked (Windows): a day without a write


def _hold(fd: int) -> None:
    """Lock the temporary file ``fd`` for this process (released when it is closed or the process dies)."""
    try:
        import fcntl
    except ImportError:  # Windows: staleness is judged by age alone
        return
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def remove_stale_temporaries(folder) -> list[str]:
    """Delete this program's temporary files in ``folder`` that no live writer holds; their names.

    An export killed with SIGKILL (or a power cut) leaves its ``.ae-XXXXXXXX.tmp`` (up to 500 MB)
    behind; nothing else would ever remove it. Only files of exactly that pattern, owned by this
    user and not locked by a running writer (:func:`_hold`) are removed; errors are ignored.
    """
    try:
        import fcntl
    except ImportError:
        fcntl = None
    import time

    removed = []
    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not _TEMPORARY.fullmatch(entry.name):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
                continue
            age = now - info.st_mtime
            if fcntl is None:
                if age > STALE_SECONDS_UNLOCKED:
                    os.unlink(entry.path)
                    removed.append(entry.name)
                continue
            if age < STALE_SECONDS:
                continue
            fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # fails while its writer lives
            except OSError:
                continue
            else:
                os.unlink(entry.path)
                removed.append(entry.name)
            finally:
                os.close(fd)
        except OSError:
            continue
    return removed


_LIVE: set[str] = set()  # temporary files being written now, by any thread
_LIVE_LOCK = threading.Lock()


def _forget(temporary: str, remove: bool) -> None:
    with _LIVE_LOCK:
        _LIVE.discard(temporary)
        if remove:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


@atexit.register
def _remove_live_temporaries() -> None:
    """At exit, remove the temporary files a thread is still writing: a worker thread stopped by the
    interpreter's exit runs no ``finally`` (a 0-byte ``.ae-XXXXXXXX.tmp`` was left beside the export)."""
    with _LIVE_LOCK:
        for temporary in list(_LIVE):
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        _LIVE.clear()


def _new_temporary(folder, name: str) -> tuple[int, str, object]:
    """mkstemp in ``folder``, listed and locked: its fd, path and the held signals (for :func:`_release_signals`)."""
    held = _hold_signals()
    try:
        fd, temporary = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX, dir=folder)
    except OSError as error:
        _release_signals(held)
        raise _write_error(name, error) from None
    with _LIVE_LOCK:
        _LIVE.add(temporary)
    _hold(fd)  # while this process lives its temporary file is not stale
    return fd, temporary, held


@contextlib.contextmanager
def temporary_beside(path) -> Iterator[str]:
    """The path of a new, empty temporary file in ``path``'s folder for another program to write (ffmpeg),
    held as :func:`atomic_write`'s are (never taken for stale while this process lives) and removed when
    the block ends, however it ends, or at exit."""
    name = os.fspath(path)
    folder = Path(os.path.realpath(name)).parent
    fd, temporary, held = _new_temporary(folder, name)
    try:
        _release_signals(held)
        yield temporary
    finally:
        os.close(fd)
        _forget(temporary, remove=True)


_HELD_SIGNALS = [getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)]


def _hold_signals():
    """Catch SIGINT, SIGTERM and SIGHUP into a list instead of acting on them; returns what
    :func:`_release_signals` needs (None off the main thread, where Python runs no handler).
    A thread mask would not do: the signal may be delivered to another thread (NumPy's, the pool's)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    caught: list[int] = []
    previous = {number: signal.signal(number, lambda signum, _frame: caught.append(signum))
                for number in _HELD_SIGNALS if signal.getsignal(number) is not None}  # None: set outside Python
    return previous, caught


def _release_signals(held) -> None:
    """The previous handlers back; a signal caught meanwhile acts now, as it would have then."""
    if held is None:
        return
    previous, caught = held
    for number, handler in previous.items():
        signal.signal(number, handler)
    for signum in caught[:1]:
        handler = previous[signum]
        if callable(handler):
            handler(signum, None)  # e.g. KeyboardInterrupt, cli.commands' Interrupted
        elif handler == signal.SIG_DFL:
            os.kill(os.getpid(), signum)


@contextlib.contextmanager
def atomic_write(path) -> Iterator[BinaryIO]:
    """Yield a binary file object whose contents replace ``path`` when the block ends without error.

    EngineError naming ``path`` (never the temporary file) when it cannot be written: a missing
    or read-only folder, a full disk, a folder or device in the way.
    """
    name = os.fspath(path)
    real = Path(os.path.realpath(name))  # through symlinks: the link stays, its target is replaced
    folder = real.parent
    if not folder.is_dir():
        if os.path.islink(name):  # the link's own folder exists: its target's is the one missing
            raise EngineError("cannot write {path!r}: it is a symbolic link to {target!r}, whose folder {folder!r} "
                              "does not exist", path=name, target=os.fspath(real), folder=os.fspath(folder))
        raise EngineError("cannot write {path!r}: the folder {folder!r} does not exist", path=name,
                          folder=os.fspath(Path(name).parent))
    remove_stale_temporaries(folder)
    try:
        existing = os.stat(real)
    except FileNotFoundError:
        mode = 0o666 & ~current_umask()
    except OSError as error:
        raise _write_error(name, error) from None
    else:
        if stat.S_ISDIR(existing.st_mode):
            raise EngineError("cannot write {path!r}: it is a folder", path=name)
        if not stat.S_ISREG(existing.st_mode):
            raise EngineError("cannot write {path!r}: it is not a regular file", path=name)
        mode = stat.S_IMODE(existing.st_mode)
    # Ctrl+C or SIGTERM between mkstemp making the file and the cleanup below being armed would
    # leave the temporary file behind: those signals are held until the try is entered
    fd, temporary, held = _new_temporary(folder, name)
    try:
        _release_signals(held)  # a signal that came meanwhile is raised here, inside the cleanup's try
        with os.fdopen(fd, "wb") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())  # the data is on disk before the name points at it
        os.chmod(temporary, mode)  # mkstemp made it 0600
        with _LIVE_LOCK:  # not removed at exit between the rename and being forgotten
            os.replace(temporary, real)
            _LIVE.discard(temporary)
        temporary = None
    except OSError as error:
        raise _write_error(name, error) from None
    finally:
        if temporary is not None:
            _forget(temporary, remove=True)


def write_bytes_atomic(path, data: bytes) -> Path:
    """Replace ``path`` with ``data`` through :func:`atomic_write`."""
    with atomic_write(path) as stream:
        stream.write(data)
    return Path(path)


__all__ = ["MAX_DOCUMENT_BYTES", "check_model_path", "MAX_INTEGER_DIGITS", "MAX_JSON_DEPTH", "atomic_write", "current_umask", "temporary_beside",
           "json_depth", "load_json", "parse_json", "read_limited", "write_bytes_atomic"]


def check_finite(values, name: str, tensor: str) -> None:
    """EngineError naming the file, the tensor and the first index of a NaN or an infinity in
    ``values`` (a model file's tensor as read: GGUF and safetensors alike). ~3 ms for MiniLM's
    11.7 M-number embedding."""
    if np.isfinite(values).all():
        return
    bad = np.flatnonzero(~np.isfinite(values.ravel()))
    index = [int(i) for i in np.unravel_index(int(bad[0]), values.shape)]
    raise EngineError(
        "{name}: tensor {tensor} holds {value} at index {index} ({count:,} values are not finite numbers): the "
        "file is damaged or was converted wrongly", field="model", name=name, tensor=tensor,
        value=str(values.ravel()[bad[0]]), index=index, count=len(bad))
