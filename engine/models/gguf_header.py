"""Read a GGUF file's header (metadata and tensor directory), checking every count and length
against the file before allocating anything.

Why not gguf's ``GGUFReader``: it maps the whole file and parses every field before any check,
so a 64 MB file claiming an array of 64 M entries, 8 M empty strings or 2⁶² tensors cost gigabytes
and tens of seconds before the first refusal, and tensors stay views of the map
(a file rewritten on disk then kills the process with SIGBUS, item 1). Here the header is read
through an ordinary file object, a chunk at a time, and each count is checked the moment it is
read: against the bytes left in the file, against :data:`MAX_HEADER_BYTES` (the header of a
real model is a few MB: SmolLM2's is 1.5 MB, Llama 3's vocabulary and merges about 8 MB) and
against :data:`MAX_ARRAY` entries. Offsets are Python integers: 2⁶⁴ − 1 cannot wrap around.

Values read the same as gguf's ``ReaderField.contents()`` (tests/engine/models/test_gguf_tiny.py compares
both readers on every value type and byte order); ``types`` are the GGUF value type codes
(equal to gguf's ``GGUFValueType`` members). Nothing here imports gguf, Qt or torch.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

from ..core.errors import EngineError

MAGIC = b"GGUF"
VERSIONS = (2, 3)
MAX_HEADER_BYTES = 64 * 1024**2  # metadata + tensor directory; a real model's is a few MB
MAX_ARRAY = 1_048_576  # entries of one metadata array (vocabularies and merges: ≤ 1 M)
MAX_KEYS = 65_536  # metadata keys (a real model has 20 – 50)
MAX_NAME_BYTES = 65_535  # a key's or a tensor's name
MAX_DIMS = 4  # ggml's GGML_MAX_DIMS
MAX_TENSORS = 4096
CHUNK = 1 << 20  # bytes read at a time

# GGUF value types (gguf.GGUFValueType) → struct format of one scalar
STRING, ARRAY = 8, 9
SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
NUMPY = {0: "u1", 1: "i1", 2: "u2", 3: "i2", 4: "u4", 5: "i4", 6: "f4", 7: "?", 10: "u8", 11: "i8", 12: "f8"}


@dataclass(frozen=True)
class Field:
    """One metadata key: its GGUF value types ([type] or [ARRAY, item type]) and its value."""

    name: str
    types: list[int]  # a list, as gguf's reader gives them
    value: Any  # int | float | bool | str | list

    def contents(self) -> Any:
        return self.value


@dataclass(frozen=True)
class TensorInfo:
    """One entry of the tensor directory, as written (ggml order: dims[0] is the row length)."""

    name: str
    dims: tuple[int, ...]
    type_code: int  # ggml type (gguf.GGMLQuantizationType)
    offset: int  # from the start of the data section


@dataclass(frozen=True, eq=False)
class Header:
    """What :func:`read_header` found."""

    name: str  # the file's name, for messages
    size: int  # the file's length in bytes
    version: int
    byte_order: str  # "<" or ">"
    fields: dict[str, Field]
    tensors: tuple[TensorInfo, ...]
    data_offset: int  # where the tensor data starts (aligned)
    alignment: int


class _Cursor:
    """Reads forward through a file in chunks; refuses to read past its end or past the header cap."""

    def __init__(self, stream: BinaryIO, size: int, name: str, order: str = "<") -> None:
        self.stream, self.size, self.name, self.order = stream, size, name, order
        self.buffer, self.start, self.position = b"", 0, 0

    def left(self) -> int:
        return self.size - self.position

    def take(self, count: int, what: str) -> memoryview:
        end = self.position + count
        if end > self.size:
            raise EngineError(
                "{name} is cut short or damaged: {what} at byte {offset} needs {count} bytes, but the file ends "
                "at byte {size}", field="model", name=self.name, what=what, offset=self.position, count=count,
                size=self.size)
        if end > MAX_HEADER_BYTES:
            raise EngineError(
                "{name}: the GGUF header (metadata and tensor list) runs past {limit} MB at {what}; a real "
                "model's header is a few MB, so the file is damaged or not a model", field="model",
                name=self.name, what=what, limit=MAX_HEADER_BYTES // 1024**2)
        if end > self.start + len(self.buffer):
            self.stream.seek(self.position)
            data = self.stream.read(min(max(count, CHUNK), self.size - self.position))
            if len(data) < count:
                raise EngineError("{name} changed or was cut while it was being read: try again once it is "
                                  "written", field="model", name=self.name)
            self.buffer, self.start = data, self.position
        at = self.position - self.start
        self.position = end
        return memoryview(self.buffer)[at: at + count]

    def scalar(self, code: int, what: str):
        fmt = self.order + SCALARS[code]
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))[0]

    def u32(self, what: str) -> int:
        return self.scalar(4, what)

    def u64(self, what: str) -> int:
        return self.scalar(10, what)

    def text(self, what: str, limit: int | None = None) -> str:
        length = self.u64(what)
        if limit is not None and length > limit:
            raise EngineError("{name}: {what} is {length:,} bytes long (at most {limit:,}): the file is damaged",
                              field="model", name=self.name, what=what, length=length, limit=limit)
        data = self.take(length, what)
        try:
            return str(data, "utf-8")
        except UnicodeDecodeError:
            raise EngineError("{name}: {what} is not UTF-8 text: the file is damaged", field="model",
                              name=self.name, what=what) from None


def _strings(cursor: _Cursor, count: int, what: str) -> list[str]:
    """``count`` strings in a row: sliced straight out of the buffered chunk while they lie in it
    (SmolLM2's 98,000 tokens and merges: 0.1 s instead of 1 s), through :meth:`_Cursor.text` at
    the chunk's edges, which also holds every check."""
    order = "little" if cursor.order == "<" else "big"
    out: list[str] = []
    append = out.append
    for _ in range(count):
        buffer, at = cursor.buffer, cursor.position - cursor.start
        if at + 8 <= len(buffer):
            length = int.from_bytes(buffer[at: at + 8], order)
            end = at + 8 + length
            if end <= len(buffer) and cursor.start + end <= MAX_HEADER_BYTES:
                try:
                    append(buffer[at + 8: end].decode("utf-8"))
                except UnicodeDecodeError:
                    pass  # cursor.text() below says so, naming the key
                else:
                    cursor.position = cursor.start + end
                    continue
        append(cursor.text(what))
    return out


def _value(cursor: _Cursor, code: int, key: str) -> tuple[tuple[int, ...], Any]:
    """(types, value) of one metadata value of type ``code``."""
    what = f"the value of {key}"
    if code in SCALARS:
        return (code,), cursor.scalar(code, what)
    if code == STRING:
        return (code,), cursor.text(what)
    if code != ARRAY:
        raise EngineError("{name}: metadata key {key} has the unknown value type {code}: the file is damaged or "
                          "newer than this program", field="model", name=cursor.name, key=key, code=code)
    item = cursor.u32(what)
    count = cursor.u64(what)
    smallest = struct.calcsize(SCALARS[item]) if item in SCALARS else 8 if item == STRING else None
    if smallest is None:
        raise EngineError("{name}: metadata key {key} is an array of the unsupported type {code}", field="model",
                          name=cursor.name, key=key, code=item)
    if count > MAX_ARRAY:  # before allocating a single entry
        raise EngineError("{name}: metadata key {key} claims {count:,} entries, more than any model needs (at most "
                          "{limit:,}): the file is damaged", field="model", name=cursor.name, key=key, count=count,
                          limit=MAX_ARRAY)
    if count * smallest > cursor.left():
        raise EngineError("{name}: metadata key {key} claims {count:,} entries, more than the {left:,} bytes left in "
                          "the file can hold: the file is cut short or damaged", field="model", name=cursor.name,
                          key=key, count=count, left=cursor.left())
    types = (ARRAY,) if count == 0 else (ARRAY, item)  # as gguf's reader: no item type for an empty array
    if item == STRING:
        return types, _strings(cursor, count, what)
    raw = cursor.take(count * smallest, what)
    return types, np.frombuffer(raw, dtype=cursor.order + NUMPY[item]).tolist()


def read_header(stream: BinaryIO, size: int, name: str) -> Header:
    """Parse the header of the GGUF file open as ``stream`` (``size`` bytes long, ``name`` for messages)."""
    cursor = _Cursor(stream, size, name)
    if size < 24 or bytes(cursor.take(4, "the magic number")) != MAGIC:
        raise EngineError("{name} is not a GGUF model file (it does not start with GGUF)", field="model", name=name)
    version = cursor.u32("the version")
    if version & 0xFFFF == 0:  # written on a big-endian machine (as gguf's reader decides)
        cursor.order = ">"
        version = struct.unpack(">I", struct.pack("<I", version))[0]
    if version not in VERSIONS:
        raise EngineError("{name} is GGUF version {version}; versions {supported} can be read", field="model",
                          name=name, version=version, supported=" and ".join(map(str, VERSIONS)))
    tensor_count = cursor.u64("the tensor count")
    key_count = cursor.u64("the metadata count")
    if tensor_count > MAX_TENSORS:
        raise EngineError("{name} claims {count:,} tensors, more than {limit}: the file is damaged or not a "
                          "model this program runs", field="model", name=name, count=tensor_count, limit=MAX_TENSORS)
    if key_count > MAX_KEYS or key_count * 13 > cursor.left():  # a key takes at least 13 bytes
        raise EngineError("{name} claims {count:,} metadata keys, more than the file can hold: the file is damaged",
                          field="model", name=name, count=key_count)
    fields: dict[str, Field] = {  # as gguf's reader lists them, first
        "GGUF.version": Field("GGUF.version", [4], version),
        "GGUF.tensor_count": Field("GGUF.tensor_count", [10], tensor_count),
        "GGUF.kv_count": Field("GGUF.kv_count", [10], key_count),
    }
    for _ in range(key_count):
        key = cursor.text("a metadata key", MAX_NAME_BYTES)
        if key in fields:
            raise EngineError("{name}: metadata key {key} appears twice: the file is damaged", field="model",
                              name=name, key=key)
        types, value = _value(cursor, cursor.u32(f"the type of {key}"), key)
        fields[key] = Field(key, list(types), value)
    if tensor_count * 32 > cursor.left():  # an entry takes at least 32 bytes
        raise EngineError("{name} claims {count:,} tensors, more than the file can hold: the file is damaged",
                          field="model", name=name, count=tensor_count)
    tensors, names = [], set()
    for _ in range(tensor_count):
        tensor = cursor.text("a tensor name", MAX_NAME_BYTES)
        if tensor in names:
            raise EngineError("{name}: tensor {tensor} appears twice: the file is damaged", field="model",
                              name=name, tensor=tensor)
        names.add(tensor)
        n_dims = cursor.u32(f"the shape of {tensor}")
        if not 1 <= n_dims <= MAX_DIMS:
            raise EngineError("{name}: tensor {tensor} has {count} dimensions (1 to {limit} are possible): the file "
                              "is damaged", field="model", name=name, tensor=tensor, count=n_dims, limit=MAX_DIMS)
        dims = tuple(cursor.u64(f"the shape of {tensor}") for _ in range(n_dims))
        if 0 in dims:
            raise EngineError("{name}: tensor {tensor} has an empty dimension (shape {shape})", field="model",
                              name=name, tensor=tensor, shape=list(dims))
        type_code = cursor.u32(f"the type of {tensor}")
        offset = cursor.u64(f"the offset of {tensor}")
        tensors.append(TensorInfo(tensor, dims, type_code, offset))
    alignment = 32
    if "general.alignment" in fields:
        field = fields["general.alignment"]
        alignment = field.value
        if field.types != [4] or not 0 < alignment <= 1 << 20 or alignment & (alignment - 1):
            raise EngineError("{name}: general.alignment is {value!r}; a power of two up to 1 MiB was expected",
                              field="model", name=name, value=alignment)
    data_offset = -(-cursor.position // alignment) * alignment
    return Header(name, size, version, cursor.order, fields, tuple(tensors), data_offset, alignment)


__all__ = ["Field", "Header", "TensorInfo", "MAX_ARRAY", "MAX_HEADER_BYTES", "MAX_TENSORS", "read_header"]
