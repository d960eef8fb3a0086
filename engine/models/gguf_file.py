"""Read a GGUF model file (llama.cpp's format) into float32 NumPy arrays and a decoder config.

The header is read by :mod:`engine.models.gguf_header` (every count checked against the file before
anything is allocated); ggml's own ``gguf`` package (pure NumPy) supplies the type table and
``gguf.quants.dequantize``, which turns each quantized tensor (Q4_1, Q8_0, …) into float32. Only the
decoders of engine/models/families/ that name a GGUF architecture are accepted (``gpt2``, ``llama`` — Mistral's
too —, ``qwen2``, ``qwen3``, ``phi3``, ``olmo2``); anything else is refused with an :class:`EngineError` that
names the architecture found. A family module's ``gguf_config`` adds its block features to the common
numbers read here, and its ``prepare`` cuts fused tensors (Phi-3's) as they are read.

Tensor names and layouts are llama.cpp's (``token_embd.weight``, ``blk.{i}.attn_q.weight`` …).
A GGUF tensor of shape [ne0, ne1] is read as a NumPy (ne1, ne0) array, i.e. PyTorch's
(out_features, in_features). llama.cpp's converter permutes the rows of Q and K for ``llama`` so
that RoPE rotates adjacent pairs (2i, 2i+1) of each head ("normal" RoPE); ``qwen2`` is left in
the Hugging Face layout, whose RoPE rotates dimension i with i + d_k/2 ("neox" RoPE). The
permutation is undone as the tensors are read (:func:`transformers_rope_rows`), so every model
computes — and its hook_q / hook_k hold — transformers' order of a head's dimensions, whatever file
its weights came from; the config then says "half".

Tensors are read with ordinary reads, never a memory map, one at a time and only when asked
for (:class:`GGUFTensors`): the loader turns each into its final array before the next is read
(peak ≈ the float32 weights once), and no array of a loaded model refers to
the file, so a file rewritten on disk cannot kill the program (SIGBUS, item 1); a file changed
while it is being read is refused. Every value is checked as it is read: a NaN or an infinity in
a tensor is refused naming the tensor and the index.

Nothing here imports torch, Qt or pyqtgraph; ``gguf`` is imported lazily.
"""
from __future__ import annotations

import functools
import hashlib
import math
import os
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator, Mapping

import numpy as np

from ..core.errors import EngineError, ModelNotInstalled
from .file_kind import regular_kind
from .gguf_header import MAX_HEADER_BYTES, Header, TensorInfo, read_header
from ..core.install import pip_install
from ..core.memory import WEIGHTS_BUDGET_ENV, weights_budget
from .llama import DecoderConfig  # the block's config lives with the block; the reader fills it
from ..core.safe_io import check_finite, check_model_path
from ..text.bpe import TokenizerSpec

ADJACENT_ROPE = ("llama",)  # llama.cpp's rope type NORM (W_Q, W_K rows permuted); the others' NEOX: "half"
GGUF_INSTALL_COMMAND = pip_install("gguf==0.19.0 tokenizers")
# Refuse absurd files before allocating (a corrupt header can claim anything).
MAX_LAYERS = 256
MAX_D_MODEL = 16384
MAX_VOCAB = 1_000_000
MAX_WEIGHT_BYTES = 4 * 1024**3  # the least weights budget (engine.core.memory.weights_budget follows the machine)
MAX_FILE_BYTES = MAX_WEIGHT_BYTES + MAX_HEADER_BYTES  # no file of a model we open is larger (F32 at the least budget)
DEQUANTIZE_BLOCK = 8 << 20  # bytes of float32 rows dequantized at a time
MAX_CONTEXT = 1 << 24  # tokens; the longest context of any released model is below this

Progress = Callable[[float, str], None]


@dataclass(frozen=True, eq=False)
class GGUFContents:
    """What :func:`read_gguf` found: config, tokenizer and float32 tensors by llama.cpp name."""

    path: Path
    config: DecoderConfig
    tokenizer: TokenizerSpec
    tensors: "GGUFTensors"  # float32 on demand, numpy shape = reversed GGUF shape
    sha256: str

    def close(self) -> None:
        """Check the file did not change while it was read, and close it (EngineError if it changed)."""
        self.tensors.file.close(check=True)


def _import_gguf():
    try:
        import gguf
    except ImportError:
        raise ModelNotInstalled(
            "reading GGUF model files needs the gguf package. Install it with: {command}",
            command=GGUF_INSTALL_COMMAND,
        ) from None
    return gguf


@dataclass(frozen=True)
class TensorEntry:
    """A tensor of the directory, checked: its type is known and its bytes lie inside the file."""

    name: str
    tensor_type: object  # gguf.GGMLQuantizationType
    shape: tuple[int, ...]  # ggml order: shape[0] is the row length (numpy's last axis)
    n_elements: int
    n_bytes: int
    data_offset: int  # from the start of the file

    @property
    def numpy_shape(self) -> tuple[int, ...]:
        return tuple(reversed(self.shape))


class GGUFFile:
    """An open GGUF file: its checked header (``fields``, ``tensors``) and reads of its tensors.

    Reads go through one file object under a lock (the loader's threads share it); nothing is
    memory-mapped. :meth:`close` with ``check=True`` refuses a file whose size or modification
    time changed since it was opened: a converter rewriting it meanwhile gave a mix of two files.
    """

    def __init__(self, path: str | Path):
        gguf = _import_gguf()

        self.path, size = check_model_path(path, max_bytes=max(MAX_FILE_BYTES, weights_budget() + MAX_HEADER_BYTES))
        self.name = self.path.name
        try:
            self._stream = open(self.path, "rb", buffering=0)  # noqa: SIM115 - closed by close()
        except OSError as error:
            raise EngineError("cannot read {path}: {reason}", field="model", path=str(self.path),
                              reason=error.strerror or str(error)) from None
        self._lock = threading.Lock()
        try:
            self._opened = self._identity()
            first = self._stream.read(16)
            if not first.startswith(b"GGUF"):  # say what it is instead: engine.models.file_kind
                raise EngineError("{name} is not a GGUF model file: it is {kind}", field="model", name=self.name,
                                  kind=regular_kind(first))
            self.header: Header = read_header(self._stream, size, self.name)
            self.fields = self.header.fields
            self.tensors = self._check_tensors(gguf, self.header)
        except BaseException:
            self._stream.close()
            raise

    def _identity(self) -> tuple:
        info = os.fstat(self._stream.fileno())
        return info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev

    def _check_tensors(self, gguf, header: Header) -> list[TensorEntry]:
        entries = []
        for info in header.tensors:
            entries.append(self._entry(gguf, header, info))
        ordered = sorted(entries, key=lambda e: e.data_offset)
        for a, b in zip(ordered, ordered[1:]):
            if a.data_offset + a.n_bytes > b.data_offset:
                raise EngineError("{name}: tensors {first} and {second} overlap in the file (bytes {start} … {end} "
                                  "and from {other}): the file is damaged", field="model", name=self.name,
                                  first=a.name, second=b.name, start=a.data_offset, end=a.data_offset + a.n_bytes,
                                  other=b.data_offset)
        return entries

    def _entry(self, gguf, header: Header, info: TensorInfo) -> TensorEntry:
        try:
            kind = gguf.GGMLQuantizationType(info.type_code)
        except ValueError:
            raise EngineError("{name}: tensor {tensor} has the unknown type {code}: the file is damaged or newer "
                              "than this program", field="model", name=self.name, tensor=info.name,
                              code=info.type_code) from None
        from gguf.quants import _type_traits  # the types gguf can dequantize

        if kind not in (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16) and kind not in _type_traits:
            raise EngineError("{name}: tensor {tensor} uses the unsupported type {type}", field="model",
                              name=self.name, tensor=info.name, type=kind.name)
        block, type_size = gguf.GGML_QUANT_SIZES[kind]
        if info.dims[0] % block:
            raise EngineError("{name}: tensor {tensor}'s rows of {length} numbers do not divide into {type} blocks "
                              "of {block}: the file is damaged", field="model", name=self.name, tensor=info.name,
                              length=info.dims[0], type=kind.name, block=block)
        count = math.prod(info.dims)  # Python integers: 2⁴⁰ elements or an offset of 2⁶⁴ − 1 cannot wrap
        n_bytes = count // block * type_size
        start = header.data_offset + info.offset
        if info.offset % header.alignment:
            raise EngineError("{name}: tensor {tensor}'s offset {offset} is not a multiple of the file's alignment "
                              "{alignment}: the file is damaged", field="model", name=self.name, tensor=info.name,
                              offset=info.offset, alignment=header.alignment)
        if start + n_bytes > header.size:
            raise EngineError("{name}: tensor {tensor} ({count:,} numbers of type {type}) would end at byte {end:,}, "
                              "past the end of the file ({size:,} bytes): the file is cut short or damaged",
                              field="model", name=self.name, tensor=info.name, count=count, type=kind.name,
                              end=start + n_bytes, size=header.size)
        return TensorEntry(info.name, kind, info.dims, count, n_bytes, start)

    # ------------------------------------------------------------ reading

    def _read(self, offset: int, count: int) -> np.ndarray:
        """``count`` bytes at ``offset`` into a new array (EngineError if the file is shorter now)."""
        raw = np.empty(count, np.uint8)
        view, done = memoryview(raw), 0
        with self._lock:
            if self._stream.closed:
                raise EngineError("{name} was closed before its tensors were read", field="model", name=self.name)
            self._stream.seek(offset)
            while done < count:
                got = self._stream.readinto(view[done:])
                if not got:
                    raise EngineError("{name} changed or was cut while it was being read: try again once it is "
                                      "written", field="model", name=self.name)
                done += got
        return raw

    def read_tensor(self, entry: TensorEntry) -> np.ndarray:
        """The tensor as a new float32 array of numpy shape; EngineError naming it if a value is not finite."""
        gguf = _import_gguf()
        raw = self._read(entry.data_offset, entry.n_bytes)
        shape, order = entry.numpy_shape, self.header.byte_order
        if entry.tensor_type == gguf.GGMLQuantizationType.F32:
            values = raw.view(order + "f4").astype(np.float32, copy=False)
        elif entry.tensor_type == gguf.GGMLQuantizationType.F16:
            values = raw.view(order + "f2").astype(np.float32)
        else:  # row blocks straight into the result: gguf's temporaries stay a block's size, not the tensor's
            block, type_size = gguf.GGML_QUANT_SIZES[entry.tensor_type]
            rows = raw.reshape(-1, entry.shape[0] // block * type_size)
            values = np.empty((rows.shape[0], entry.shape[0]), np.float32)
            step = max(1, DEQUANTIZE_BLOCK // (4 * entry.shape[0]))
            dequantize = _block_dequantizer(gguf, entry.tensor_type)
            with np.errstate(all="ignore"):  # a damaged scale gives NaN: check_finite names it, no warning
                for start in range(0, rows.shape[0], step):
                    values[start: start + step] = dequantize(rows[start: start + step])
        del raw
        values = values.reshape(shape)
        check_finite(values, self.name, entry.name)
        return values

    def sha256(self, progress: Progress | None = None) -> str:
        """The file's sha256, read through the same open file."""
        digest, size, done = hashlib.sha256(), self.header.size, 0
        while done < size:
            block = self._read(done, min(4 << 20, size - done))
            digest.update(block)
            done += len(block)
            if progress is not None:
                progress(done / size, f"checking {self.name}")
        return digest.hexdigest()

    def close(self, check: bool = False) -> None:
        """Close the file; with ``check``, EngineError if it changed since it was opened."""
        with self._lock:
            if self._stream.closed:
                return
            try:
                changed = check and self._identity()[:2] != self._opened[:2]
            finally:
                self._stream.close()
        if changed:
            raise EngineError("{name} changed on disk while it was being read (is a converter still writing it?): "
                              "open it again once it is written", field="model", name=self.name)


def _block_dequantizer(gguf, kind):
    """rows of one quantized type → float32 rows, in one NumPy pass per call.

    ``gguf.quants.dequantize`` cuts its input into groups of 16 rows and makes a Python call for
    each (3,072 for SmolLM2's embedding), holding the GIL the loader's threads share; the type's
    own ``dequantize_rows`` does the same arithmetic on all the rows given at once. Falls back to
    ``gguf.quants.dequantize`` where gguf's internals differ (tests compare both)."""
    traits = getattr(gguf.quants, "_type_traits", {}).get(kind)
    if traits is None or not hasattr(traits, "dequantize_rows") or not hasattr(traits, "init_grid"):
        return lambda rows: gguf.quants.dequantize(rows, kind)
    traits.init_grid()
    return traits.dequantize_rows


class GGUFTensors(Mapping):
    """The file's tensors by name, each read, dequantized and checked when asked for (a new array
    every time: the caller keeps what it needs, so at most a few tensors are alive at once)."""

    def __init__(self, file: GGUFFile, progress: Progress | None = None,
                 rows: Callable[[str, np.ndarray], np.ndarray] | None = None):
        self.file = file
        self._rows = rows  # reorders a tensor's rows as it is read (llama's Q, K: transformers_rope_rows)
        self._entries = {entry.name: entry for entry in file.tensors}
        self._progress = progress
        self._done = 0
        self._total = max(sum(entry.n_elements for entry in file.tensors), 1)
        self._lock = threading.Lock()
        self._fused: tuple[str, np.ndarray | None] = ("", None)  # the last fused QKV read (GPT-2)

    def __contains__(self, name) -> bool:  # without reading the tensor (Mapping's would)
        return name in self._entries or self._fused_source(name) is not None

    def _fused_source(self, name) -> tuple[str, int] | None:
        """(GPT-2's fused ``blk.{i}.attn_qkv.*``, the part 0 | 1 | 2) that ``blk.{i}.attn_{q|k|v}.*`` is a third of."""
        block, dot, rest = str(name).partition(".attn_")
        if not dot or rest[:2] not in ("q.", "k.", "v."):
            return None
        fused = f"{block}.attn_qkv.{rest[2:]}"
        return (fused, "qkv".index(rest[0])) if fused in self._entries else None

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._entries and (source := self._fused_source(name)) is not None:
            return self._third(*source)
        entry = self._entries[name]
        values = self.file.read_tensor(entry)
        if name == "rope_freqs.weight" and not (values > 0).all():
            index = int(np.flatnonzero(~(values > 0))[0])
            raise EngineError("{name}: tensor rope_freqs.weight holds {value} at index {index}: RoPE frequency "
                              "factors must be positive", field="model", name=self.file.name,
                              value=float(values.ravel()[index]), index=index)
        if self._progress is not None:
            with self._lock:  # called from the loader's threads
                self._done += entry.n_elements
                self._progress(min(self._done / self._total, 1.0), f"reading {name}")
        return values if self._rows is None else self._rows(name, values)

    def _third(self, fused: str, part: int) -> np.ndarray:
        """Rows [W_Q; W_K; W_V] of a fused tensor, split in three (read once for the three parts)."""
        with self._lock:
            cached = self._fused if self._fused[0] == fused else None
        values = cached[1] if cached is not None else self[fused]
        with self._lock:
            self._fused = (fused, values)
        if values.shape[0] % 3:
            raise EngineError("{name}: tensor {tensor} has {rows} rows, not three equal parts (Q, K, V)",
                              field="model", name=self.file.name, tensor=fused, rows=values.shape[0])
        width = values.shape[0] // 3
        return values[part * width: (part + 1) * width]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


def open_reader(path: str | Path) -> GGUFFile:
    """The checked header of the GGUF file at ``path`` (open: read tensors, then close it)."""
    return GGUFFile(path)


# ------------------------------------------------------------------ metadata

def _field(reader: GGUFFile, key: str, default=None):
    field = reader.fields.get(key)
    return default if field is None else field.contents()


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…"


def _plain(value):
    """A metadata value as it is when short (so messages quote it), else its shortened repr."""
    return value if isinstance(value, (str, int, float, type(None))) and len(repr(value)) <= 60 else _short(value)


def _whole(reader: GGUFFile, value, key: str, lower: int, upper: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lower <= value <= upper:
        raise EngineError(
            "{name}: {key} is {value}: expected a whole number from {lower} to {upper}",
            field="model", name=reader.name, key=key, value=_short(value), lower=lower, upper=upper,
        )
    return int(value)


def _number(reader: GGUFFile, key: str, default: float) -> float:
    value = _field(reader, key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value):
        raise EngineError("{name}: {key} is {value}: expected a number", field="model", name=reader.name, key=key,
                          value=_short(value))
    return float(value)


def metadata_whole(reader: GGUFFile, key: str, lower: int, upper: int, default=None) -> int:
    """A whole-number metadata value in [lower, upper] (EngineError naming the key otherwise)."""
    return _whole(reader, _field(reader, key, default), key, lower, upper)


def metadata_number(reader: GGUFFile, key: str, default: float) -> float:
    """A finite number of the metadata (EngineError naming the key otherwise)."""
    return _number(reader, key, default)


def metadata_value(reader: GGUFFile, key: str, default=None):
    return _field(reader, key, default)


def read_config(reader: GGUFFile) -> DecoderConfig:
    """The decoder numbers from the metadata; refuses another architecture or absurd sizes."""
    from .families import by_gguf_architecture, family, gguf_architectures

    architecture = _field(reader, "general.architecture")
    if not isinstance(architecture, str) or architecture not in by_gguf_architecture():
        raise EngineError(
            "{name}: this model's architecture is {architecture!r}; the app opens GGUF decoders of the "
            "architectures {supported}",
            field="model", name=reader.name, architecture=_plain(architecture), supported=gguf_architectures(),
        )
    module = family(by_gguf_architecture()[architecture])
    a = architecture

    def whole(key: str, lower: int, upper: int, default=None) -> int:
        return _whole(reader, _field(reader, key, default), key, lower, upper)

    layers = whole(f"{a}.block_count", 1, MAX_LAYERS)
    d = whole(f"{a}.embedding_length", 1, MAX_D_MODEL)
    d_ff = whole(f"{a}.feed_forward_length", 1, 8 * MAX_D_MODEL)
    heads = whole(f"{a}.attention.head_count", 1, d)
    kv_heads = whole(f"{a}.attention.head_count_kv", 1, heads, heads)
    if heads % kv_heads:
        raise EngineError("{name}: {heads} query heads cannot share {kv} key/value heads evenly", field="model",
                          name=reader.name, heads=heads, kv=kv_heads)
    head_dim = whole(f"{a}.attention.key_length", 2, 4 * d, d // heads)
    if a == "gpt2":  # LayerNorm, learned positions, GELU MLP; no RoPE
        module.gguf_check(reader.name, heads, kv_heads, d)
        eps = _number(reader, f"{a}.attention.layer_norm_epsilon", 1e-5)
        if not 0.0 < eps < 1.0:
            raise EngineError("{name}: the epsilon {eps} is out of range (0 < epsilon < 1)", field="model",
                              name=reader.name, eps=eps)
        embedding = next((t for t in reader.tensors if t.name == "token_embd.weight"), None)
        positions = next((t for t in reader.tensors if t.name == "position_embd.weight"), None)
        for tensor, wanted in ((embedding, "token_embd.weight"), (positions, "position_embd.weight")):
            if tensor is None or len(tensor.shape) != 2:
                raise EngineError("{name}: the model file has no {tensor} matrix", field="model", name=reader.name,
                                  tensor=wanted)
        return DecoderConfig(
            architecture=a, num_layers=layers, hidden_size=d, intermediate_size=d_ff, num_heads=heads,
            num_kv_heads=heads, head_dim=d // heads,
            vocab_size=_whole(reader, int(embedding.shape[-1]), "token_embd rows", 1, MAX_VOCAB),
            rope_theta=10000.0, rms_norm_eps=eps,
            context_length=_whole(reader, int(positions.shape[-1]), "position_embd rows", 1, 1 << 20),
            rope_style="half", name=str(_field(reader, "general.name", "") or ""), norm="layer", mlp="gelu_tanh",
            positions="learned",
        )
    rope_dims = _field(reader, f"{a}.rope.dimension_count", head_dim)
    if rope_dims != head_dim or head_dim % 2:
        raise EngineError("{name}: RoPE on {rope} of {head_dim} dimensions per head is not supported", field="model",
                          name=reader.name, rope=_short(rope_dims), head_dim=head_dim)
    scaling = _field(reader, f"{a}.rope.scaling.type", "none")
    if scaling not in ("none", None, "linear"):
        raise EngineError("{name}: RoPE scaling {scaling} is not supported", field="model", name=reader.name,
                          scaling=_short(scaling))
    rope_scaling = ()
    if scaling == "linear":  # every frequency / factor (Gemma 3's global layers; llama.cpp's freq_scale = 1/factor)
        factor = _number(reader, f"{a}.rope.scaling.factor", 1.0)
        if not factor > 0.0:
            raise EngineError("{name}: {key} is {value}: expected a positive factor", field="model", name=reader.name,
                              key=f"{a}.rope.scaling.factor", value=factor)
        rope_scaling = ("linear", factor) if factor != 1.0 else ()
    embedding = next((t for t in reader.tensors if t.name == "token_embd.weight"), None)
    if embedding is None:
        raise EngineError("{name}: the model file has no token_embd.weight tensor", field="model", name=reader.name)
    if len(embedding.shape) != 2:
        raise EngineError("{name}: token_embd.weight has shape {shape}; a (rows, {d}) matrix was expected",
                          field="model", name=reader.name, shape=list(embedding.numpy_shape), d=d)
    vocab = _whole(reader, int(embedding.shape[-1]), "token_embd rows", 1, MAX_VOCAB)
    theta = _number(reader, f"{a}.rope.freq_base", 10000.0)
    eps = _number(reader, f"{a}.attention.layer_norm_rms_epsilon", 1e-6)
    if not (theta > 1.0 and 0.0 < eps < 1.0):
        raise EngineError("{name}: the RoPE base {theta} or the epsilon {eps} is out of range (base > 1, "
                          "0 < epsilon < 1)", field="model", name=reader.name, theta=theta, eps=eps)
    context = whole(f"{a}.context_length", 1, MAX_CONTEXT, 2048)
    features = module.FEATURES
    numbers = dict(
        architecture=a, num_layers=layers, hidden_size=d, intermediate_size=d_ff, num_heads=heads,
        num_kv_heads=kv_heads, head_dim=head_dim, vocab_size=vocab, rope_theta=theta, rms_norm_eps=eps,
        context_length=context, rope_style="adjacent" if a in ADJACENT_ROPE else "half",
        name=str(_field(reader, "general.name", "") or ""), mlp=features.mlp, qk_norm=features.qk_norm,
        qk_norm_whole=features.qk_norm_whole, pre_norms=features.pre_norms, post_norms=features.post_norms,
        embed_scale=features.embed_scale, rope_scaling=rope_scaling,
    )
    if hasattr(module, "gguf_config"):  # the family's block features as llama.cpp stores (or derives) them
        numbers.update(module.gguf_config(reader, numbers))
    return DecoderConfig(**numbers)


def _token_id(reader: GGUFFile, key: str, count: int) -> int | None:
    value = _field(reader, key)
    return None if value is None else _whole(reader, value, key, 0, count - 1)


def read_tokenizer_spec(reader: GGUFFile, vocab_rows: int | None = None) -> TokenizerSpec:
    """The tokenizer metadata, checked: strings where strings belong, ids inside the vocabulary,
    merges of two pieces of the vocabulary, no more tokens than embedding rows (``vocab_rows``).
    Refuses a tokenizer other than byte-level BPE ("gpt2")."""
    name = reader.name
    model = _field(reader, "tokenizer.ggml.model")
    if model != "gpt2":
        raise EngineError(
            "{name}: this model's tokenizer is {model!r}; only byte-level BPE tokenizers ('gpt2') are supported",
            field="model", name=name, model=_plain(model),
        )
    tokens = _field(reader, "tokenizer.ggml.tokens")
    merges = _field(reader, "tokenizer.ggml.merges")
    if not tokens or merges is None:
        raise EngineError("{name}: the model file has no tokenizer vocabulary or merges", field="model", name=name)
    for key, values in (("tokenizer.ggml.tokens", tokens), ("tokenizer.ggml.merges", merges)):
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            wrong = values if not isinstance(values, list) else next(v for v in values if not isinstance(v, str))
            raise EngineError("{name}: {key} must be a list of strings; it holds {value}", field="model", name=name,
                              key=key, value=_short(wrong))
    if vocab_rows is not None and len(tokens) > vocab_rows:
        raise EngineError("{name}: the tokenizer has {count:,} tokens but token_embd.weight only {rows:,} rows: "
                          "the file is damaged", field="model", name=name, count=len(tokens), rows=vocab_rows)
    known = set(tokens)
    for merge in merges:
        left, space, right = merge.partition(" ")
        if not space or not left or not right or left not in known or right not in known \
                or left + right not in known:  # split at the first space, as engine/text/bpe.py does
            raise EngineError("{name}: tokenizer.ggml.merges holds {merge}, which is not two tokens of the "
                              "vocabulary separated by a space (whose joining is also a token)", field="model",
                              name=name, merge=_short(merge))
    types = _field(reader, "tokenizer.ggml.token_type")
    if types is None:
        types = [1] * len(tokens)
    if not isinstance(types, list) or len(types) != len(tokens) \
            or not all(isinstance(t, int) and not isinstance(t, bool) for t in types):
        raise EngineError("{name}: tokenizer.ggml.token_type must be {count:,} whole numbers, one a token",
                          field="model", name=name, count=len(tokens))
    add_bos = _field(reader, "tokenizer.ggml.add_bos_token", False)
    if not isinstance(add_bos, (bool, int)):
        raise EngineError("{name}: {key} is {value}: expected true or false", field="model", name=name,
                          key="tokenizer.ggml.add_bos_token", value=_short(add_bos))
    pre = _field(reader, "tokenizer.ggml.pre", "default")
    if not isinstance(pre, str):
        raise EngineError("{name}: {key} is {value}: expected a name", field="model", name=name,
                          key="tokenizer.ggml.pre", value=_short(pre))
    return TokenizerSpec(
        model=model, pre=pre, tokens=tuple(tokens), token_types=tuple(types), merges=tuple(merges),
        bos_id=_token_id(reader, "tokenizer.ggml.bos_token_id", len(tokens)),
        eos_id=_token_id(reader, "tokenizer.ggml.eos_token_id", len(tokens)),
        add_bos=bool(add_bos),
    )


def read_gguf(
    path: str | Path,
    *,
    expected_sha256: str | None = None,
    max_weight_bytes: int | None = None,
    progress: Progress | None = None,
) -> GGUFContents:
    """Read and check a GGUF file's header, config and tokenizer; its tensors on demand.

    ``expected_sha256``: when given, the file's sha256 must match (else EngineError: damaged).
    ``progress(fraction, message)``: the checksum takes the first 20 %, the tensors the rest.
    The architecture and sizes are checked before any tensor is read; a model whose float32
    weights would exceed ``max_weight_bytes`` is refused. The file stays open until
    ``contents.close()`` (which refuses it if it changed meanwhile).
    """
    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(min(max(fraction, 0.0), 1.0), message)

    reader = open_reader(path)
    try:
        config = read_config(reader)
        spec = read_tokenizer_spec(reader, config.vocab_size)
        numbers = sum(t.n_elements for t in reader.tensors)
        if max_weight_bytes is None:  # MAX_WEIGHT_BYTES, or what the user set (the same budget as a folder's)
            max_weight_bytes = weights_budget()
        if 4 * numbers > max_weight_bytes:
            raise EngineError(
                "{name} has {count:,} weights ({gib:.1f} GiB as float32), more than the {limit:.1f} GiB allowed: "
                "choose a smaller model, or raise the limit with the environment variable {env} (in GiB)",
                field="model", name=reader.name, count=numbers, gib=4 * numbers / 1024**3,
                limit=max_weight_bytes / 1024**3, env=WEIGHTS_BUDGET_ENV,
            )
        sha = reader.sha256(lambda f, m: report(0.2 * f, m))
        if expected_sha256 is not None and sha != expected_sha256:
            raise EngineError(
                "{name} is damaged or not the expected file (sha256 {actual}, expected {expected})",
                field="model", name=reader.name, actual=sha, expected=expected_sha256,
            )
    except BaseException:
        reader.close()
        raise
    from .families import by_gguf_architecture, prepare_tensors

    rows = None
    if config.rope_style == "adjacent":  # llama.cpp permuted W_Q, W_K: read them back in transformers' order
        rows = functools.partial(transformers_rope_rows, heads=config.num_heads, kv_heads=config.num_kv_heads)
        config = replace(config, rope_style="half")
    tensors = prepare_tensors(GGUFTensors(reader, lambda f, m: report(0.2 + 0.8 * f, m), rows), config,
                              by_gguf_architecture()[config.architecture], "gguf")
    return GGUFContents(path=reader.path, config=config, tokenizer=spec, tensors=tensors, sha256=sha)


def transformers_rope_rows(name: str, values: np.ndarray, *, heads: int, kv_heads: int) -> np.ndarray:
    """``values`` of tensor ``name`` with llama.cpp's RoPE permutation undone when it is a W_Q or W_K
    (or their bias): convert_hf_to_gguf.py's ``LlamaModel.permute`` puts row (half·d_k/2 + i) of each
    head at 2i + half, so that adjacent pairs rotate together; this puts it back (each head's even
    rows, then its odd ones), where transformers' rotate_half RoPE expects it. Other tensors unchanged."""
    kind = name.rpartition(".attn_")[2]
    if kind not in ("q.weight", "q.bias", "k.weight", "k.bias"):
        return values
    count = heads if kind[0] == "q" else kv_heads
    rows = values.shape[0]
    if rows % (2 * count):
        raise EngineError("tensor {name} has {rows} rows: not {count} heads of an even size", field="model",
                          name=name, rows=rows, count=count)
    by_head = values.reshape(count, rows // count // 2, 2, *values.shape[1:])  # (heads, d_k/2, pair, …)
    return np.ascontiguousarray(by_head.swapaxes(1, 2)).reshape(values.shape)
