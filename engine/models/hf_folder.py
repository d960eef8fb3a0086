"""A Hugging Face model folder (config.json + safetensors + tokenizer.json) of a family the app runs.

    info = inspect_folder("~/.cache/huggingface/hub/models--gpt2/snapshots/<hash>")  # reads no weight
    model = engine.models.families.loading.load_folder(info.path)   # a Decoder or FolderEncoder
    model.run("The cat sat").attentions     # (layers, heads, n, n)

Each family is a module of engine/models/families/ (its config mapping onto the two forwards —
engine/models/bert.py for the post-LN encoders, engine/models/llama.py for the decoders —, its
weight-name table and its fused splits); this module reads the folder and asks the family.

What is checked before any weight is read, each refusal naming the file and what to do:
config.json (bounded sizes, heads dividing the width, a known ``model_type`` — the message lists
the supported ones), every safetensors header (engine.models.safetensors_file), every tensor of the
family's table present with its shape and a float dtype, tokenizer.json readable and no larger than
the embedding, and the float32 size of the weights against the memory budget. A folder holding only
``pytorch_model.bin`` is refused: loading a pickle runs code; the message says how to convert it.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from ..core.errors import EngineError, ModelNotInstalled
from ..core.memory import WEIGHTS_BUDGET_ENV, format_bytes, weights_budget
from ..core.safe_io import load_json
from .safetensors_file import SafetensorsHeader, float32_bytes, read_header, read_index, read_tensors

Progress = Callable[[float, str], None]

MAX_TOKENIZER_BYTES = 64 * 1024**2  # XLM-R's tokenizer.json is 17 MB
CONVERT_HINT = ("Convert it once, in a Python that has torch and trusts the file, with: python -c \"from "
                "transformers import AutoModel; AutoModel.from_pretrained('{folder}').save_pretrained('{folder}', "
                "safe_serialization=True)\" — or download the model's model.safetensors")


def encoder_families() -> frozenset[str]:
    from .families import encoder_families as of_registry

    return of_registry()


@dataclass(frozen=True)
class FolderInfo:
    """What a model folder is, read from config.json and the safetensors headers only."""

    path: Path
    family: str  # a module of engine/models/families/ (bert, roberta, gpt2, llama, mistral, …)
    kind: str  # encoder | decoder
    model_type: str
    layers: int
    heads: int
    kv_heads: int
    d_model: int
    head_dim: int
    d_ff: int
    vocab: int
    max_positions: int
    config: Mapping  # config.json as read
    headers: tuple  # SafetensorsHeader of each weight file
    float32_bytes: int  # the weights as float32

    @property
    def title(self) -> str:
        return f"{self.path.name} ({self.family}, {self.layers} × {self.heads})"


def _weight_files(path: Path) -> list[Path]:
    """The safetensors files to read: the index's shards, or model.safetensors; refusals otherwise."""
    index = path / "model.safetensors.index.json"
    if index.is_file():
        shards = sorted(set(read_index(index).values()))
        missing = [name for name in shards if not (path / name).is_file()]
        if missing:
            raise EngineError("{folder}: the shard index names {files}, which the folder lacks: download the missing "
                              "files", field="model", folder=str(path), files=", ".join(missing))
        return [path / name for name in shards]
    if (path / "model.safetensors").is_file():
        return [path / "model.safetensors"]
    loose = sorted(file for file in path.glob("*.safetensors") if file.is_file())  # not a FIFO or a device
    if len(loose) == 1:
        return loose
    if (path / "pytorch_model.bin").exists() or list(path.glob("pytorch_model-*.bin")):
        raise EngineError("{folder}: holds only pytorch_model.bin, a Python pickle: loading a pickle runs the code "
                          "inside it, so the app never does. {hint}", field="model", folder=str(path),
                          hint=CONVERT_HINT.format(folder=str(path)))
    raise EngineError("{folder}: has no model.safetensors (nor a shard index): download the model's safetensors "
                      "weights into it", field="model", folder=str(path))


def read_config(path: Path) -> dict:
    if not (path / "config.json").is_file():
        raise EngineError("{folder}: has no config.json: is it a Hugging Face model folder? (A GGUF model is one "
                          "file: open the .gguf itself.)", field="model", folder=str(path))
    config = load_json(path / "config.json", what="config.json")
    if not isinstance(config, dict):
        raise EngineError("{file} is not a JSON object", field="model", file=str(path / "config.json"))
    return config


def family_of(config: Mapping, path: Path) -> str:
    from .families import by_model_type

    model_type = config.get("model_type")
    if not isinstance(model_type, str):
        raise EngineError("{file}: model_type is {value!r}, not a name: config.json is damaged or not a Hugging Face "
                          "model's", field="model", file=str(path / "config.json"), value=model_type)
    families = by_model_type()
    if model_type not in families:
        architectures = config.get("architectures") or []
        raise EngineError("{file}: the architecture {name} ({model_type!r}) is not one the app runs; it runs the "
                          "model types {supported}",
                          field="model", file=str(path / "config.json"),
                          name=(", ".join(map(str, architectures)) if isinstance(architectures, list) else "")
                          or "named there", model_type=model_type, supported=", ".join(families))
    return families[model_type]


def inspect_folder(path: str | Path) -> FolderInfo:
    """The folder's family and sizes from config.json and the safetensors headers (no weight read)."""
    path = Path(path).expanduser()
    if not path.is_dir():
        raise EngineError("{folder} is not a folder", field="model", folder=str(path))
    from .families import family as family_module

    config = read_config(path)
    family = family_of(config, path)
    module = family_module(family)
    numbers = module.sizes(config, path)
    headers = tuple(read_header(file) for file in _weight_files(path))
    if not (path / "tokenizer.json").is_file():
        raise EngineError("{folder}: has no tokenizer.json (the app reads tokenizers only from that file): download "
                          "it from the model's page", field="model", folder=str(path))
    return FolderInfo(path=path, family=family, kind=module.KIND,
                      model_type=str(config["model_type"]), config=config, headers=headers,
                      float32_bytes=float32_bytes(headers), **numbers)


def expected_shapes(info: FolderInfo) -> dict[str, tuple[int, ...]]:
    """Our name → shape (numpy, after any transpose) of every tensor the family's table may name."""
    from .families import family as family_module
    from .families.common import decoder_shapes

    return getattr(family_module(info.family), "shapes", decoder_shapes)(info)


def check_tensors(info: FolderInfo) -> tuple[dict[str, tuple[str, bool]], dict[str, SafetensorsHeader]]:
    """The family's table checked against the headers: every tensor present, of its shape.

    Returns (table, folder name → the header holding it)."""
    where: dict[str, SafetensorsHeader] = {}
    for header in info.headers:
        for name in header.tensors:
            where[name] = header
    from .families import family as family_module

    table = family_module(info.family).table(info, where)
    shapes = expected_shapes(info)
    for ours, (theirs, transpose) in table.items():
        header = where.get(theirs)
        if header is None:
            raise EngineError("{folder}: the weights lack the tensor {tensor}, which a {family} model has: is it "
                              "another architecture, or a file missing?",
                              field="model", folder=str(info.path), tensor=theirs, family=info.family)
        stored = header.tensors[theirs].shape
        shape = tuple(reversed(stored)) if transpose else stored
        if shape != shapes[ours]:
            expected = tuple(reversed(shapes[ours])) if transpose else shapes[ours]
            raise EngineError("{file}: tensor {tensor} has shape {shape}, but config.json implies {expected}: the "
                              "weights and config.json belong to different models", field="model",
                              file=str(header.path), tensor=theirs, shape=stored, expected=expected)
    return table, where


# ---------------------------------------------------------------- tokenizer


def load_tokenizer(path: Path, vocab: int):
    """tokenizers.Tokenizer of ``path``/tokenizer.json, padding and truncation off; refused when it is
    unreadable or knows ids past the model's embedding (the tokenizer of another model)."""
    try:
        import tokenizers
    except ImportError:
        raise ModelNotInstalled("tokenizing for this model needs the tokenizers package. Install it with: {command}",
                                command="pip install tokenizers") from None
    file = path / "tokenizer.json"
    try:
        size = file.stat().st_size
    except OSError:
        raise EngineError("{folder}: has no tokenizer.json: download it from the model's page",
                          field="model", folder=str(path)) from None
    if size > MAX_TOKENIZER_BYTES:
        raise EngineError("{file} is {size}, larger than any tokenizer ({limit}): is it the right file?",
                          field="model", file=str(file), size=format_bytes(size),
                          limit=format_bytes(MAX_TOKENIZER_BYTES))
    try:
        tokenizer = tokenizers.Tokenizer.from_file(str(file))
    except Exception as error:  # tokenizers raises a plain Exception for a bad file
        reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        raise EngineError("{file} cannot be read as a tokenizer ({reason}): download it again", field="model",
                          file=str(file), reason=reason) from None
    tokenizer.no_padding()
    tokenizer.no_truncation()
    top = max(tokenizer.get_vocab(with_added_tokens=True).values(), default=-1)
    if top >= vocab:
        raise EngineError("{file} has token ids up to {top}, but the model's embedding has only {vocab} rows: the "
                          "tokenizer belongs to another model", field="model", file=str(file), top=top, vocab=vocab)
    return tokenizer


# ---------------------------------------------------------------- loading


def check_budget(info: FolderInfo, budget: int | None = None) -> None:
    budget = weights_budget() if budget is None else budget
    if info.float32_bytes > budget:
        raise EngineError("{folder}: its weights take {need} as float32, over the {budget} allowed for a model's "
                          "weights: choose a smaller model, or raise the limit with the environment variable "
                          "{env} (in GiB) if the machine has the memory", field="model", folder=str(info.path),
                          need=format_bytes(info.float32_bytes), budget=format_bytes(budget), env=WEIGHTS_BUDGET_ENV)


def read_weights(info: FolderInfo, progress: Progress | None = None) -> "FolderTensors":
    """Our name → float32 array (Conv1D weights transposed to (out, in)) of the family's table, each read
    when asked for (:class:`FolderTensors`)."""
    table, where = check_tensors(info)
    return FolderTensors(table, where, progress)


class FolderTensors(Mapping):
    """The family's tensors by our name, each read from its safetensors file when asked for (a new
    float32 array every time). The block's preparation turns each into its final array before the next
    is read, so loading peaks near the float32 weights once, not twice (Llama-3.2-1B's shapes: the whole
    dict read first peaked at 1.89 × the float32 weights; benchmarks/bench_1b.py)."""

    def __init__(self, table: dict[str, tuple[str, bool]], where: dict[str, SafetensorsHeader],
                 progress: Progress | None = None):
        self._table, self._where, self._progress = table, where, progress
        self._done, self._lock = 0, threading.Lock()

    def __getitem__(self, ours: str) -> np.ndarray:
        theirs, transpose = self._table[ours]
        value = read_tensors(self._where[theirs], [theirs])[theirs]
        if self._progress is not None:
            with self._lock:  # the loader's threads share it
                self._done += 1
                self._progress(min(self._done / max(len(self._table), 1), 1.0), f"reading {theirs}")
        return np.ascontiguousarray(value.T) if transpose else value

    def __contains__(self, ours) -> bool:
        return ours in self._table

    def __iter__(self):
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


_SNAPSHOT = re.compile(r"models--(?P<owner>[^/]+?)--(?P<name>[^/]+)/snapshots/")


def display_name(path: Path) -> str:
    """owner/name for a hub-cache snapshot folder, else the folder's name."""
    match = _SNAPSHOT.search(path.as_posix() + "/")
    return f"{match['owner']}/{match['name']}" if match else path.name
