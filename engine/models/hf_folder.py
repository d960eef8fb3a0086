"""A Hugging Face model folder (config.json + safetensors + tokenizer.json) of a family the app runs.

    info = inspect_folder("~/.cache/huggingface/hub/models--gpt2/snapshots/<hash>")  # reads no weight
    model = engine.models.families.load_folder(info.path)   # a Decoder or FolderEncoder
    model.run("The cat sat").attentions     # (layers, heads, n, n)

Each family is a weight-name table and a config mapping onto the two existing forwards
(engine/bert.py for the post-LN encoders, engine/llama.py for the decoders), nothing more:

============  =========================================================================
bert          BertModel names (``bert.`` prefix of *ForMaskedLM etc. dropped), exact GELU
roberta       the same block; positions start at pad_token_id + 1 (RoBERTa / XLM-R)
gpt2          LayerNorm with biases, learned positions, fused Conv1D q|k|v (stored (in, out)),
              GELU (tanh) MLP, tied unembedding
llama         RMSNorm, RoPE (the Hugging Face "half" layout), SwiGLU, GQA, tied or separate head
qwen2         llama + biases on Q, K, V
qwen3         llama + RMSNorm of each head's q and k before RoPE (``head_dim`` may differ from d/heads)
============  =========================================================================

Decoder weights are renamed to llama.cpp's names (``blk.{i}.attn_q.weight`` …), so an HF folder
and a GGUF file of the same model go through one :func:`engine.models.llama.prepare_weights`.

What is checked before any weight is read, each refusal naming the file and what to do:
config.json (bounded sizes, heads dividing the width, a known ``model_type`` — the message lists
the supported ones), every safetensors header (engine.models.safetensors_file), every tensor of the
family's table present with its shape and a float dtype, tokenizer.json readable and no larger than
the embedding, and the float32 size of the weights against the memory budget. A folder holding only
``pytorch_model.bin`` is refused: loading a pickle runs code; the message says how to convert it.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from ..core.errors import EngineError, ModelNotInstalled
from ..core.memory import format_bytes
from ..core.safe_io import load_json
from .safetensors_file import SafetensorsHeader, float32_bytes, read_header, read_index, read_tensors

Progress = Callable[[float, str], None]

# config.json's model_type → family
FAMILIES = {"bert": "bert", "roberta": "roberta", "xlm-roberta": "roberta", "gpt2": "gpt2", "llama": "llama",
            "qwen2": "qwen2", "qwen3": "qwen3"}
ENCODER_FAMILIES = frozenset({"bert", "roberta"})
MAX_LAYERS, MAX_WIDTH, MAX_VOCAB, MAX_POSITIONS = 256, 16384, 1_000_000, 1_048_576
MAX_TOKENIZER_BYTES = 64 * 1024**2  # XLM-R's tokenizer.json is 17 MB
WEIGHTS_BUDGET_ENV = "ATTENTION_EXPLORER_WEIGHTS_GIB"
DEFAULT_WEIGHTS_BUDGET = 4 * 1024**3  # float32 weights of 1 B parameters (a 0.5 B model takes 2 GB); GGUF's too
CONVERT_HINT = ("Convert it once, in a Python that has torch and trusts the file, with: python -c \"from "
                "transformers import AutoModel; AutoModel.from_pretrained('{folder}').save_pretrained('{folder}', "
                "safe_serialization=True)\" — or download the model's model.safetensors")


def weights_budget() -> int:
    """Bytes the float32 weights may take: DEFAULT_WEIGHTS_BUDGET, or the env variable (GiB)."""
    value = os.environ.get(WEIGHTS_BUDGET_ENV, "")
    try:
        gib = float(value)
    except ValueError:
        return DEFAULT_WEIGHTS_BUDGET
    return int(gib * 1024**3) if math.isfinite(gib) and gib > 0 else DEFAULT_WEIGHTS_BUDGET


@dataclass(frozen=True)
class FolderInfo:
    """What a model folder is, read from config.json and the safetensors headers only."""

    path: Path
    family: str  # bert | roberta | gpt2 | llama | qwen2 | qwen3
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


def _whole(config: Mapping, key: str, lower: int, upper: int, path: Path, default=None) -> int:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lower <= value <= upper:
        raise EngineError("{file}: {key} is {value!r}; expected a whole number from {lower} to {upper}",
                          field="model", file=str(path / "config.json"), key=key, value=value, lower=lower,
                          upper=upper)
    return value


def _number(config: Mapping, key: str, default: float, path: Path, lower: float = 0.0, upper: float = 1e12) -> float:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (lower < value < upper):
        raise EngineError("{file}: {key} is {value!r}, out of range", field="model",
                          file=str(path / "config.json"), key=key, value=value)
    return float(value)


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
    model_type = config.get("model_type")
    if model_type not in FAMILIES:
        architectures = config.get("architectures") or []
        raise EngineError("{file}: the architecture {name} ({model_type!r}) is not one the app runs; it runs "
                          "{supported}",
                          field="model", file=str(path / "config.json"),
                          name=", ".join(map(str, architectures)) or "named there", model_type=model_type,
                          supported=", ".join(sorted(set(FAMILIES))))
    return FAMILIES[model_type]


def inspect_folder(path: str | Path) -> FolderInfo:
    """The folder's family and sizes from config.json and the safetensors headers (no weight read)."""
    path = Path(path).expanduser()
    if not path.is_dir():
        raise EngineError("{folder} is not a folder", field="model", folder=str(path))
    config = read_config(path)
    family = family_of(config, path)
    numbers = _sizes(config, family, path)
    headers = tuple(read_header(file) for file in _weight_files(path))
    if not (path / "tokenizer.json").is_file():
        raise EngineError("{folder}: has no tokenizer.json (the app reads tokenizers only from that file): download "
                          "it from the model's page", field="model", folder=str(path))
    return FolderInfo(path=path, family=family, kind="encoder" if family in ENCODER_FAMILIES else "decoder",
                      model_type=str(config["model_type"]), config=config, headers=headers,
                      float32_bytes=float32_bytes(headers), **numbers)


def _sizes(config: Mapping, family: str, path: Path) -> dict:
    """layers, heads, kv_heads, d_model, head_dim, d_ff, vocab, max_positions, bounded and consistent."""
    if family == "gpt2":
        keys = dict(layers="n_layer", heads="n_head", d_model="n_embd", positions="n_positions")
    else:
        keys = dict(layers="num_hidden_layers", heads="num_attention_heads", d_model="hidden_size",
                    positions="max_position_embeddings")
    layers = _whole(config, keys["layers"], 1, MAX_LAYERS, path)
    d = _whole(config, keys["d_model"], 1, MAX_WIDTH, path)
    heads = _whole(config, keys["heads"], 1, d, path)
    vocab = _whole(config, "vocab_size", 1, MAX_VOCAB, path)
    positions = _whole(config, keys["positions"], 1, MAX_POSITIONS, path, default=2048)
    if family == "gpt2":
        d_ff = config.get("n_inner") or 4 * d
        d_ff = _whole({"n_inner": d_ff}, "n_inner", 1, 8 * MAX_WIDTH, path)
    else:
        d_ff = _whole(config, "intermediate_size", 1, 8 * MAX_WIDTH, path)
    kv = heads
    if family in ("llama", "qwen2", "qwen3"):
        kv = _whole(config, "num_key_value_heads", 1, heads, path, default=heads)
        if heads % kv:
            raise EngineError("{file}: {heads} query heads cannot share {kv} key/value heads evenly", field="model",
                              file=str(path / "config.json"), heads=heads, kv=kv)
    head_dim = config.get("head_dim") if family in ("llama", "qwen3") and config.get("head_dim") else None
    if head_dim is None:
        if d % heads:
            raise EngineError("{file}: {heads} heads do not divide the width {d}: the file is damaged",
                              field="model", file=str(path / "config.json"), heads=heads, d=d)
        head_dim = d // heads
    head_dim = _whole({"head_dim": head_dim}, "head_dim", 2 if family not in ENCODER_FAMILIES else 1, 4096, path)
    if family not in ENCODER_FAMILIES and family != "gpt2" and head_dim % 2:
        raise EngineError("{file}: head_dim {head_dim} is odd; RoPE needs pairs", field="model",
                          file=str(path / "config.json"), head_dim=head_dim)
    return dict(layers=layers, heads=heads, kv_heads=kv, d_model=d, head_dim=head_dim, d_ff=d_ff, vocab=vocab,
                max_positions=positions)


# ---------------------------------------------------------------- weight-name tables


def _strip_prefix(names, prefixes) -> str:
    """The prefix (one of ``prefixes``, or "") the folder's tensor names carry."""
    for prefix in prefixes:
        if any(name.startswith(prefix) for name in names):
            return prefix
    return ""


def decoder_table(info: FolderInfo, names) -> dict[str, tuple[str, bool]]:
    """llama.cpp name → (the folder's tensor name, transpose?) for the decoders."""
    table: dict[str, tuple[str, bool]] = {}
    if info.family == "gpt2":
        p = _strip_prefix(names, ("transformer.",))
        table["token_embd.weight"] = (p + "wte.weight", False)
        table["position_embd.weight"] = (p + "wpe.weight", False)
        table["output_norm.weight"] = (p + "ln_f.weight", False)
        table["output_norm.bias"] = (p + "ln_f.bias", False)
        for i in range(info.layers):
            h, b = f"{p}h.{i}.", f"blk.{i}."
            for hf, ours, transpose in (("ln_1", "attn_norm", False), ("ln_2", "ffn_norm", False),
                                        ("attn.c_attn", "attn_qkv", True), ("attn.c_proj", "attn_output", True),
                                        ("mlp.c_fc", "ffn_up", True), ("mlp.c_proj", "ffn_down", True)):
                table[b + ours + ".weight"] = (h + hf + ".weight", transpose)  # Conv1D stores (in, out)
                table[b + ours + ".bias"] = (h + hf + ".bias", False)
        return table
    table["token_embd.weight"] = ("model.embed_tokens.weight", False)
    table["output_norm.weight"] = ("model.norm.weight", False)
    if "lm_head.weight" in names:  # a tied model's file usually omits it (then the embedding is the head)
        table["output.weight"] = ("lm_head.weight", False)
    for i in range(info.layers):
        h, b = f"model.layers.{i}.", f"blk.{i}."
        pairs = [("input_layernorm.weight", "attn_norm.weight"), ("post_attention_layernorm.weight", "ffn_norm.weight"),
                 ("self_attn.q_proj.weight", "attn_q.weight"), ("self_attn.k_proj.weight", "attn_k.weight"),
                 ("self_attn.v_proj.weight", "attn_v.weight"), ("self_attn.o_proj.weight", "attn_output.weight"),
                 ("mlp.gate_proj.weight", "ffn_gate.weight"), ("mlp.up_proj.weight", "ffn_up.weight"),
                 ("mlp.down_proj.weight", "ffn_down.weight")]
        if info.family == "qwen2" or info.config.get("attention_bias"):
            pairs += [("self_attn.q_proj.bias", "attn_q.bias"), ("self_attn.k_proj.bias", "attn_k.bias"),
                      ("self_attn.v_proj.bias", "attn_v.bias")]
        if info.family == "qwen3":
            pairs += [("self_attn.q_norm.weight", "attn_q_norm.weight"),
                      ("self_attn.k_norm.weight", "attn_k_norm.weight")]
        for hf, ours in pairs:
            table[b + ours] = (h + hf, False)
    return table


def encoder_table(info: FolderInfo, names) -> dict[str, tuple[str, bool]]:
    """BertModel name → (the folder's tensor name, False) for bert and roberta."""
    p = _strip_prefix(names, ("bert.", "roberta.", "model."))
    wanted = ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
              "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"]
    for i in range(info.layers):
        e = f"encoder.layer.{i}."
        for part in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
                     "attention.output.LayerNorm", "intermediate.dense", "output.dense", "output.LayerNorm"):
            wanted += [e + part + ".weight", e + part + ".bias"]
    return {name: (p + name, False) for name in wanted}


def expected_shapes(info: FolderInfo) -> dict[str, tuple[int, ...]]:
    """Our name → shape (numpy, after any transpose) for every tensor of the family's table."""
    d, d_ff, v, dk = info.d_model, info.d_ff, info.vocab, info.head_dim
    shapes: dict[str, tuple[int, ...]] = {}
    if info.family in ENCODER_FAMILIES:  # the post-LN encoder block
        types = int(info.config.get("type_vocab_size", 2) or 1)
        shapes.update({"embeddings.word_embeddings.weight": (v, d),
                       "embeddings.position_embeddings.weight": (info.max_positions, d),
                       "embeddings.token_type_embeddings.weight": (types, d),
                       "embeddings.LayerNorm.weight": (d,), "embeddings.LayerNorm.bias": (d,)})
        for i in range(info.layers):
            e = f"encoder.layer.{i}."
            for part, shape in (("attention.self.query", (d, d)), ("attention.self.key", (d, d)),
                                ("attention.self.value", (d, d)), ("attention.output.dense", (d, d)),
                                ("attention.output.LayerNorm", None), ("intermediate.dense", (d_ff, d)),
                                ("output.dense", (d, d_ff)), ("output.LayerNorm", None)):
                shapes[e + part + ".weight"] = shape or (d,)
                shapes[e + part + ".bias"] = (shape[0],) if shape else (d,)
        return shapes
    heads, kv = info.heads, info.kv_heads
    shapes.update({"token_embd.weight": (v, d), "output_norm.weight": (d,), "output_norm.bias": (d,),
                   "output.weight": (v, d), "position_embd.weight": (info.max_positions, d)})
    for i in range(info.layers):
        b = f"blk.{i}."
        shapes.update({b + "attn_norm.weight": (d,), b + "attn_norm.bias": (d,), b + "ffn_norm.weight": (d,),
                       b + "ffn_norm.bias": (d,), b + "attn_qkv.weight": (3 * d, d), b + "attn_qkv.bias": (3 * d,),
                       b + "attn_q.weight": (heads * dk, d), b + "attn_k.weight": (kv * dk, d),
                       b + "attn_v.weight": (kv * dk, d), b + "attn_q.bias": (heads * dk,),
                       b + "attn_k.bias": (kv * dk,), b + "attn_v.bias": (kv * dk,),
                       b + "attn_output.weight": (d, heads * dk), b + "attn_output.bias": (d,),
                       b + "attn_q_norm.weight": (dk,), b + "attn_k_norm.weight": (dk,),
                       b + "ffn_gate.weight": (d_ff, d), b + "ffn_up.weight": (d_ff, d), b + "ffn_up.bias": (d_ff,),
                       b + "ffn_down.weight": (d, d_ff), b + "ffn_down.bias": (d,)})
    return shapes


def check_tensors(info: FolderInfo) -> tuple[dict[str, tuple[str, bool]], dict[str, SafetensorsHeader]]:
    """The family's table checked against the headers: every tensor present, of its shape.

    Returns (table, folder name → the header holding it)."""
    where: dict[str, SafetensorsHeader] = {}
    for header in info.headers:
        for name in header.tensors:
            where[name] = header
    table = (encoder_table if info.family in ENCODER_FAMILIES else decoder_table)(info, where)
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


def read_weights(info: FolderInfo, progress: Progress | None = None) -> dict[str, np.ndarray]:
    """Our name → float32 array (Conv1D weights transposed to (out, in)) of the family's table."""
    table, where = check_tensors(info)
    by_header: dict[int, list[str]] = {}
    for ours, (theirs, _) in table.items():
        by_header.setdefault(id(where[theirs]), []).append(theirs)
    headers = {id(h): h for h in info.headers}
    read: dict[str, np.ndarray] = {}
    total = max(len(table), 1)
    for key, names in by_header.items():
        done = len(read)
        read.update(read_tensors(headers[key], names, progress=None if progress is None else
                                 (lambda f, m, done=done, count=len(names): progress((done + f * count) / total, m))))
    out = {}
    for ours, (theirs, transpose) in table.items():
        value = read[theirs]
        out[ours] = np.ascontiguousarray(value.T) if transpose else value
    return out


_SNAPSHOT = re.compile(r"models--(?P<owner>[^/]+?)--(?P<name>[^/]+)/snapshots/")


def display_name(path: Path) -> str:
    """owner/name for a hub-cache snapshot folder, else the folder's name."""
    match = _SNAPSHOT.search(path.as_posix() + "/")
    return f"{match['owner']}/{match['name']}" if match else path.name
