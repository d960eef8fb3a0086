"""safetensors files read without trusting them: the header checked first, then float32 arrays.

The format (huggingface/safetensors): 8 bytes little-endian N, then N bytes of JSON
``{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}``, then the data;
offsets count from the end of the header. A header can claim anything, so before a tensor is read
:func:`read_header` checks, naming the file and the tensor at fault:

- N ≤ the file's size − 8 and ≤ :data:`MAX_HEADER_BYTES` (a header length of 2⁶² is not read);
- every dtype is one the engine reads (F32, F16, BF16, F64) and every shape a list of whole numbers;
- 0 ≤ begin ≤ end ≤ the data's length, and end − begin = (product of the shape) × itemsize;
- no two tensors overlap.

:func:`float32_bytes` is then the memory the weights will take as float32, known before any weight
is read (the loader refuses a model over its budget with that number). :func:`read_tensors` reads
each tensor's validated byte range with ordinary reads into a new array, never a memory map (the
``safetensors`` package maps the file: a file cut while it loads — a download or a converter
rewriting it — kills the process with SIGBUS when a mapped page past the new end is touched), as
engine/models/gguf_file.py does. A read that comes back short, or a file whose size or
modification time changed since its header was read (or that is another file now), is refused: a
mix of two files is no model.
BF16, which NumPy lacks, is the top half of a float32: shifted 16 bits up it is that float32
exactly. Everything is returned as float32, and every value is checked to be a finite number: a
NaN or an infinity is refused naming the tensor and the index, in the words of the GGUF reader.
"""
from __future__ import annotations

import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from ..core.errors import EngineError
from ..core.safe_io import check_finite, parse_json

MAX_HEADER_BYTES = 100 * 1024**2  # safetensors' own limit; real headers are well under 1 MB
DTYPES = {"F32": 4, "F16": 2, "BF16": 2, "F64": 8}  # what the engine reads, and its item sizes
STORED = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "F64": "<f8"}  # safetensors is little-endian

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of a header: where its bytes lie (absolute offsets in the file)."""

    name: str
    dtype: str  # F32 | F16 | BF16 | F64
    shape: tuple[int, ...]
    begin: int  # absolute file offset of its first byte
    end: int

    @property
    def numbers(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class SafetensorsHeader:
    path: Path
    tensors: dict  # name -> TensorEntry
    metadata: dict
    identity: tuple = ()  # (size, modification time in ns, inode) when the header was read: a rewrite changes it


def read_header(path: str | Path) -> SafetensorsHeader:
    """The checked header of ``path`` (see the module doc); EngineError naming the problem."""
    path = Path(path)
    try:
        # O_NONBLOCK: a FIFO without a writer would block open() forever; then only a regular file is read
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb") as stream:
            info = os.fstat(stream.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise EngineError("{file} is not a regular file (a pipe or a device?)", field="model", file=str(path))
            size, identity = info.st_size, (info.st_size, info.st_mtime_ns, info.st_ino)
            head = stream.read(8)
            if len(head) < 8:
                raise EngineError("{file}: is not a safetensors file: {size} bytes, shorter than its 8-byte header "
                                  "length", field="model", file=str(path), size=size)
            length = int.from_bytes(head, "little")
            if length > MAX_HEADER_BYTES or length > size - 8:
                raise EngineError("{file}: claims a header of {length} bytes in a file of {size} bytes: the file is "
                                  "damaged or not a safetensors file; download it again",
                                  field="model", file=str(path), length=length, size=size)
            raw = stream.read(length)
    except FileNotFoundError:
        raise EngineError("{file} does not exist", field="model", file=str(path)) from None
    except IsADirectoryError:
        raise EngineError("{file} is a folder, not a safetensors file", field="model", file=str(path)) from None
    except OSError as error:
        raise EngineError("cannot read {file}: {reason}", field="model", file=str(path),
                          reason=error.strerror or str(error)) from None
    try:
        document = parse_json(raw, what=str(path))
    except EngineError:
        raise EngineError("{file}: its header is not valid JSON: the file is damaged; download it again",
                          field="model", file=str(path)) from None
    if not isinstance(document, dict):
        raise EngineError("{file}: its header is not a JSON object: the file is damaged; download it again",
                          field="model", file=str(path))
    data_start, data_length = 8 + length, size - 8 - length
    metadata = document.pop("__metadata__", None) or {}
    entries: dict[str, TensorEntry] = {}
    for name, spec in document.items():
        if not isinstance(spec, dict):
            raise EngineError("{file}: tensor {tensor} has no description",
                              field="model", file=str(path), tensor=name)
        dtype, shape, offsets = spec.get("dtype"), spec.get("shape"), spec.get("data_offsets")
        if dtype not in DTYPES:
            raise EngineError("{file}: tensor {tensor} is of type {dtype}; only {dtypes} weights can be read",
                              field="model", file=str(path), tensor=name, dtype=dtype, dtypes=", ".join(DTYPES))
        if (not isinstance(shape, list) or len(shape) > 8
                or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**40 for s in shape)):
            raise EngineError("{file}: tensor {tensor} has the shape {shape}, not a list of whole numbers",
                              field="model", file=str(path), tensor=name, shape=shape)
        if (not isinstance(offsets, list) or len(offsets) != 2
                or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)):
            raise EngineError("{file}: tensor {tensor} has the offsets {offsets}, not [begin, end]",
                              field="model", file=str(path), tensor=name, offsets=offsets)
        begin, end = offsets
        if not 0 <= begin <= end <= data_length:
            raise EngineError("{file}: tensor {tensor} lies at bytes {begin} … {end}, outside the file's {length} "
                              "bytes of data: the file is cut or damaged; download it again",
                              field="model", file=str(path), tensor=name, begin=begin, end=end, length=data_length)
        expected = math.prod(shape) * DTYPES[dtype]
        if end - begin != expected:
            raise EngineError("{file}: tensor {tensor} of shape {shape} in {dtype} needs {expected} bytes but its "
                              "offsets give {actual}: the file is damaged", field="model", file=str(path), tensor=name,
                              shape=tuple(shape), dtype=dtype, expected=expected, actual=end - begin)
        entries[name] = TensorEntry(name, dtype, tuple(shape), data_start + begin, data_start + end)
    ordered = sorted(entries.values(), key=lambda e: (e.begin, e.end))
    for before, after in zip(ordered, ordered[1:]):
        if after.begin < before.end:
            raise EngineError("{file}: tensors {first} and {second} overlap: the file is damaged or crafted; download "
                              "it again", field="model", file=str(path), first=before.name, second=after.name)
    return SafetensorsHeader(path, entries, metadata if isinstance(metadata, dict) else {}, identity)


def float32_bytes(headers: Iterable[SafetensorsHeader]) -> int:
    """Bytes every tensor of ``headers`` takes as float32 (what the loader will hold)."""
    return sum(4 * entry.numbers for header in headers for entry in header.tensors.values())


def _changed(path: Path) -> EngineError:
    return EngineError("{file} changed or was cut while it was being read (is a download or a converter still "
                       "writing it?): open it again once it is written", field="model", file=str(path))


def _read_range(stream, path: Path, entry: TensorEntry) -> np.ndarray:
    """The tensor's bytes into a new array (an ordinary read: the file may shrink meanwhile, a map would not survive)."""
    raw = np.empty(entry.end - entry.begin, np.uint8)
    view, done = memoryview(raw), 0
    stream.seek(entry.begin)
    while done < len(raw):
        got = stream.readinto(view[done:])
        if not got:
            raise _changed(path)
        done += got
    return raw


def _as_float32(raw: np.ndarray, entry: TensorEntry) -> np.ndarray:
    """Stored bytes → float32 of the entry's shape (BF16: its 16-bit words become the high halves of float32 words)."""
    stored = raw.view(STORED[entry.dtype])
    if entry.dtype == "BF16":
        values = (stored.astype(np.uint32) << 16).view(np.float32)
    else:
        values = stored.astype(np.float32, copy=False)  # F32: the read array itself, no copy
    return values.reshape(entry.shape)


def read_tensors(header: SafetensorsHeader, names: Iterable[str] | None = None,
                 progress: Progress | None = None) -> dict[str, np.ndarray]:
    """The tensors ``names`` (default all) of a checked header, each a new float32 array (numpy shape as
    stored); EngineError if the file changed since its header was read or a value is not finite."""
    path = header.path
    wanted = list(header.tensors) if names is None else list(names)
    out: dict[str, np.ndarray] = {}
    try:
        # O_NONBLOCK: the path may have become a FIFO since the header was read; open() must not wait for it
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb", buffering=0) as stream:
            if header.identity and _identity(stream) != header.identity:
                raise _changed(path)
            for index, name in enumerate(wanted):
                entry = header.tensors[name]
                values = _as_float32(_read_range(stream, path, entry), entry)
                check_finite(values, str(path), name)
                out[name] = values
                if progress is not None:
                    progress((index + 1) / max(len(wanted), 1), "reading {tensor}".format(tensor=name))
            if header.identity and _identity(stream) != header.identity:
                raise _changed(path)  # rewritten in place while read: some tensors may be the new file's
    except OSError as error:
        raise EngineError("cannot read {file}: {reason}", field="model", file=str(path),
                          reason=error.strerror or str(error)) from None
    return out


def _identity(stream) -> tuple:
    info = os.fstat(stream.fileno())
    return info.st_size, info.st_mtime_ns, info.st_ino


def read_index(path: str | Path) -> dict[str, str]:
    """model.safetensors.index.json → {tensor name: shard file name}, names checked to be plain file names."""
    from ..core.safe_io import load_json

    path = Path(path)
    document = load_json(path, what="the shard index")
    weight_map = document.get("weight_map") if isinstance(document, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        raise EngineError("{file} has no weight_map: the index is damaged; download it again", field="model",
                          file=str(path))
    for tensor, shard in weight_map.items():
        if not isinstance(shard, str) or Path(shard).name != shard or not shard.endswith(".safetensors"):
            raise EngineError("{file}: tensor {tensor} is mapped to {shard!r}, not a .safetensors file beside the "
                              "index", field="model", file=str(path), tensor=tensor, shard=shard)
    return {str(k): v for k, v in weight_map.items()}


__all__ = ["TensorEntry", "SafetensorsHeader", "read_header", "float32_bytes", "read_tensors", "read_index",
           "MAX_HEADER_BYTES"]
