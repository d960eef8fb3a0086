"""Read a GGUF model file (llama.cpp's format) into float32 NumPy arrays and a decoder config.

Uses ggml's own ``gguf`` package (pure NumPy): ``GGUFReader`` maps the file, and
``gguf.quants.dequantize`` turns each quantized tensor (Q4_1, Q8_0, …) into float32. Only the
Llama family is accepted: architectures ``llama`` and ``qwen2`` (Qwen2 adds biases to Q, K, V);
anything else is refused with an :class:`EngineError` that names the architecture found.

Tensor names and layouts are llama.cpp's (``token_embd.weight``, ``blk.{i}.attn_q.weight`` …).
A GGUF tensor of shape [ne0, ne1] is read as a NumPy (ne1, ne0) array, i.e. PyTorch's
(out_features, in_features). llama.cpp's converter permutes the rows of Q and K for ``llama`` so
that RoPE rotates adjacent pairs (2i, 2i+1) of each head ("normal" RoPE); ``qwen2`` is left in
the Hugging Face layout, whose RoPE rotates dimension i with i + d_k/2 ("neox" RoPE). The config
records which (``rope_style``); engine/models/llama.py rotates accordingly.

Nothing here imports torch, Qt or pyqtgraph; ``gguf`` is imported lazily.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from ..core.errors import EngineError, ModelNotInstalled
from .llama import DecoderConfig  # the block's config lives with the block; the reader fills it
from .minilm import sha256_file  # one chunked, progress-reporting digest for every model file

ARCHITECTURES = ("llama", "qwen2")  # the Llama family this forward pass runs
ROPE_STYLES = {"llama": "adjacent", "qwen2": "half"}  # llama.cpp's rope type NORM / NEOX
GGUF_INSTALL_COMMAND = "pip install gguf==0.19.0 tokenizers"
# Refuse absurd files before allocating (a corrupt header can claim anything).
MAX_TENSORS = 4096
MAX_LAYERS = 256
MAX_D_MODEL = 16384
MAX_VOCAB = 1_000_000
MAX_WEIGHT_BYTES = 4 * 1024**3  # float32 weights of ~1B parameters; larger models are refused

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class TokenizerSpec:
    """The tokenizer a GGUF describes (``tokenizer.ggml.*``)."""

    model: str  # tokenizer.ggml.model: gpt2 = byte-level BPE
    pre: str  # tokenizer.ggml.pre: the pre-tokenizer's name (smollm, qwen2, llama-bpe …)
    tokens: tuple[str, ...]
    token_types: tuple[int, ...]  # 1 normal, 3 control, 4 user-defined …
    merges: tuple[str, ...]
    bos_id: int | None
    eos_id: int | None
    add_bos: bool


@dataclass(frozen=True, eq=False)
class GGUFContents:
    """What :func:`read_gguf` found: config, tokenizer and float32 tensors by llama.cpp name."""

    path: Path
    config: DecoderConfig
    tokenizer: TokenizerSpec
    tensors: Mapping[str, np.ndarray]  # float32, numpy shape = reversed GGUF shape
    sha256: str


def _import_gguf():
    try:
        import gguf
    except ImportError:
        raise ModelNotInstalled(
            "reading GGUF model files needs the gguf package. Install it with: {command}",
            command=GGUF_INSTALL_COMMAND,
        ) from None
    return gguf


def _field(reader, key: str, default=None):
    field = reader.fields.get(key)
    if field is None:
        return default
    try:
        return field.contents()
    except Exception:  # a malformed field: treat as absent, the checks below name what is missing
        return default


def _whole(value, key: str, lower: int, upper: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lower <= value <= upper:
        raise EngineError(
            "the model file's {key} is {value!r}: expected a whole number from {lower} to {upper}",
            field="model", key=key, value=value, lower=lower, upper=upper,
        )
    return int(value)


def _fast_reader_class(gguf):
    """GGUFReader with two shortcuts that change no value it reads:

    - its file map is a plain ndarray view of its np.memmap: the same bytes, but slicing it skips
      np.memmap's Python-level __getitem__ / __array_finalize__ (measured: ~2.5 s of a 4.7 s load);
    - an array of strings (SmolLM2's 49,152 tokens and 48,900 merges) is split with int.from_bytes
      and memoryview slices instead of four NumPy views per string (1.2 s → 0.1 s of the load).
      Each string's parts are still (length, bytes), read by ``ReaderField.contents()`` through
      their ``tobytes()``, as gguf's own ndarray parts are. An array of numbers is read in one
      view and cut into the one-element views gguf makes (SmolLM2's 49,152 token types).
    """
    string, array = gguf.GGUFValueType.STRING, gguf.GGUFValueType.ARRAY

    class FastGGUFReader(gguf.GGUFReader):
        @property
        def data(self):
            return self._plain_data

        @data.setter
        def data(self, value):
            self._plain_data = value.view(np.ndarray) if isinstance(value, np.memmap) else value

        def _get_field_parts(self, orig_offs, raw_type):
            if raw_type != array:
                return super()._get_field_parts(orig_offs, raw_type)
            item_type = self._get(orig_offs, np.uint32)
            count = self._get(orig_offs + 4, np.uint64)
            scalar = self.gguf_scalar_to_np.get(int(item_type[0]))
            if scalar is not None:  # one read of the whole array, then one-element views as gguf makes them
                values = self._get(orig_offs + 12, scalar, int(count[0]))
                if len(values) != count[0]:
                    raise ValueError("an array runs past the end of the file")
                parts = [item_type, count, *(values[i: i + 1] for i in range(len(values)))]
                return 12 + int(values.nbytes), parts, list(range(2, len(parts))), [array, gguf.GGUFValueType(int(item_type[0]))]
            if item_type[0] != string:
                return super()._get_field_parts(orig_offs, raw_type)
            order = sys.byteorder if self.byte_order == "I" else ("big" if sys.byteorder == "little" else "little")
            buffer = memoryview(self._plain_data)  # uint8, the whole file
            end = len(buffer)
            parts: list = [item_type, count]
            indices: list[int] = []
            offs = orig_offs + 12
            for _ in range(int(count[0])):
                if offs + 8 > end:
                    raise ValueError("a string array runs past the end of the file")
                length = int.from_bytes(buffer[offs: offs + 8], order)
                if offs + 8 + length > end:
                    raise ValueError("a string runs past the end of the file")
                parts.append(buffer[offs: offs + 8])
                parts.append(buffer[offs + 8: offs + 8 + length])
                indices.append(len(parts) - 1)
                offs += 8 + length
            return offs - orig_offs, parts, indices, [array, string]

    return FastGGUFReader


def open_reader(path: str | Path):
    """``gguf.GGUFReader`` of ``path``; EngineError for a missing or unreadable file."""
    gguf = _import_gguf()
    path = Path(path)
    if not path.is_file():
        raise EngineError("no model file at {path}", field="model", path=str(path))
    try:
        return _fast_reader_class(gguf)(str(path), "r")
    except Exception as error:  # ValueError / struct errors / OSError from a file that is not GGUF
        raise EngineError(
            "{name} is not a readable GGUF model file: {error}", field="model", name=path.name, error=str(error)
        ) from None


def read_config(reader) -> DecoderConfig:
    """The decoder numbers from the metadata; refuses another architecture or absurd sizes."""
    architecture = _field(reader, "general.architecture")
    if architecture not in ARCHITECTURES:
        raise EngineError(
            "this model's architecture is {architecture!r}; only Llama-family decoders ({supported}) "
            "can be opened",
            field="model", architecture=architecture, supported=", ".join(ARCHITECTURES),
        )
    a = architecture
    count = len(reader.tensors)
    if count > MAX_TENSORS:
        raise EngineError("the model file holds {count} tensors, more than {limit}", field="model",
                          count=count, limit=MAX_TENSORS)
    layers = _whole(_field(reader, f"{a}.block_count"), f"{a}.block_count", 1, MAX_LAYERS)
    d = _whole(_field(reader, f"{a}.embedding_length"), f"{a}.embedding_length", 1, MAX_D_MODEL)
    d_ff = _whole(_field(reader, f"{a}.feed_forward_length"), f"{a}.feed_forward_length", 1, 8 * MAX_D_MODEL)
    heads = _whole(_field(reader, f"{a}.attention.head_count"), f"{a}.attention.head_count", 1, d)
    kv_heads = _whole(_field(reader, f"{a}.attention.head_count_kv", heads), f"{a}.attention.head_count_kv", 1, heads)
    if heads % kv_heads:
        raise EngineError("{heads} query heads cannot share {kv} key/value heads evenly", field="model",
                          heads=heads, kv=kv_heads)
    head_dim = _whole(_field(reader, f"{a}.attention.key_length", d // heads), f"{a}.attention.key_length", 2, d)
    rope_dims = _field(reader, f"{a}.rope.dimension_count", head_dim)
    if rope_dims != head_dim or head_dim % 2:
        raise EngineError("RoPE on {rope} of {head_dim} dimensions per head is not supported", field="model",
                          rope=rope_dims, head_dim=head_dim)
    scaling = _field(reader, f"{a}.rope.scaling.type", "none")
    if scaling not in ("none", None):
        raise EngineError("RoPE scaling {scaling!r} is not supported", field="model", scaling=scaling)
    embedding = next((t for t in reader.tensors if t.name == "token_embd.weight"), None)
    if embedding is None:
        raise EngineError("the model file has no token_embd.weight tensor", field="model")
    vocab = _whole(int(embedding.shape[-1]), "token_embd rows", 1, MAX_VOCAB)
    theta = float(_field(reader, f"{a}.rope.freq_base", 10000.0))
    eps = float(_field(reader, f"{a}.attention.layer_norm_rms_epsilon", 1e-6))
    if not (np.isfinite(theta) and theta > 1.0 and np.isfinite(eps) and 0.0 < eps < 1.0):
        raise EngineError("the model file's RoPE base {theta} or epsilon {eps} is out of range", field="model",
                          theta=theta, eps=eps)
    context = _field(reader, f"{a}.context_length", 2048)
    return DecoderConfig(
        architecture=a, num_layers=layers, hidden_size=d, intermediate_size=d_ff, num_heads=heads,
        num_kv_heads=kv_heads, head_dim=head_dim, vocab_size=vocab, rope_theta=theta, rms_norm_eps=eps,
        context_length=int(context) if isinstance(context, (int, np.integer)) else 2048,
        rope_style=ROPE_STYLES[a], name=str(_field(reader, "general.name", "") or ""),
    )


def read_tokenizer_spec(reader) -> TokenizerSpec:
    """The tokenizer metadata; refuses a tokenizer other than byte-level BPE ("gpt2")."""
    model = _field(reader, "tokenizer.ggml.model")
    if model != "gpt2":
        raise EngineError(
            "this model's tokenizer is {model!r}; only byte-level BPE tokenizers ('gpt2') are supported",
            field="model", model=model,
        )
    tokens = _field(reader, "tokenizer.ggml.tokens")
    merges = _field(reader, "tokenizer.ggml.merges")
    if not tokens or merges is None:
        raise EngineError("the model file has no tokenizer vocabulary or merges", field="model")
    types = _field(reader, "tokenizer.ggml.token_type") or [1] * len(tokens)
    bos = _field(reader, "tokenizer.ggml.bos_token_id")
    eos = _field(reader, "tokenizer.ggml.eos_token_id")
    return TokenizerSpec(
        model=model, pre=str(_field(reader, "tokenizer.ggml.pre", "default")), tokens=tuple(tokens),
        token_types=tuple(int(t) for t in types), merges=tuple(merges),
        bos_id=None if bos is None else int(bos), eos_id=None if eos is None else int(eos),
        add_bos=bool(_field(reader, "tokenizer.ggml.add_bos_token", False)),
    )


def read_gguf(
    path: str | Path,
    *,
    expected_sha256: str | None = None,
    max_weight_bytes: int = MAX_WEIGHT_BYTES,
    progress: Progress | None = None,
) -> GGUFContents:
    """Read and check a GGUF file: config, tokenizer, every tensor dequantized to float32.

    ``expected_sha256``: when given, the file's sha256 must match (else EngineError: damaged).
    ``progress(fraction, message)``: the checksum takes the first 20 %, the tensors the rest.
    The architecture and sizes are checked before any tensor is dequantized; a model whose
    float32 weights would exceed ``max_weight_bytes`` is refused.
    """
    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(min(max(fraction, 0.0), 1.0), message)

    gguf = _import_gguf()
    path = Path(path)
    reader = open_reader(path)
    config = read_config(reader)
    spec = read_tokenizer_spec(reader)
    numbers = sum(int(t.n_elements) for t in reader.tensors)
    if 4 * numbers > max_weight_bytes:
        raise EngineError(
            "{name} has {count:,} weights ({gib:.1f} GiB as float32), more than the {limit:.1f} GiB allowed",
            field="model", name=path.name, count=numbers, gib=4 * numbers / 1024**3, limit=max_weight_bytes / 1024**3,
        )
    sha = sha256_file(path, lambda f, m: report(0.2 * f, m))
    if expected_sha256 is not None and sha != expected_sha256:
        raise EngineError(
            "{name} is damaged or not the expected file (sha256 {actual}, expected {expected})",
            field="model", name=path.name, actual=sha, expected=expected_sha256,
        )
    def dequantize(tensor) -> np.ndarray:
        shape = tuple(int(s) for s in reversed(tensor.shape))  # numpy order: (out, in)
        try:
            values = gguf.quants.dequantize(tensor.data, tensor.tensor_type)
        except NotImplementedError:
            raise EngineError("{name}: tensor {tensor} uses the unsupported type {type}", field="model",
                              name=path.name, tensor=tensor.name, type=tensor.tensor_type.name) from None
        return np.ascontiguousarray(values, dtype=np.float32).reshape(shape)

    # gguf's dequantizers are NumPy passes that release the GIL: the engine's threads share the
    # tensors, progress is reported from this thread only.
    from ..core.parallel import thread_map

    tensors: dict[str, np.ndarray] = {}
    done = 0
    for values, tensor in zip(thread_map(dequantize, reader.tensors, "gguf-dequantize"), reader.tensors):
        tensors[tensor.name] = values
        done += int(tensor.n_elements)
        report(0.2 + 0.8 * done / max(numbers, 1), "reading {tensor}".format(tensor=tensor.name))
    return GGUFContents(path=path, config=config, tokenizer=spec, tensors=tensors, sha256=sha)
