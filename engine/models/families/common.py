"""What the family modules share: the refusal of a config value, config.json's sizes, and the weight-name
table of the Llama-style decoders (``model.layers.{i}.self_attn.q_proj`` …) that most families extend.

Decoder weights are renamed to llama.cpp's names (``blk.{i}.attn_q.weight`` …), so an HF folder and a
GGUF file of the same model go through one engine.models.llama.prepare_weights.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping

from ...core.errors import EngineError

MAX_LAYERS, MAX_WIDTH, MAX_VOCAB, MAX_POSITIONS = 256, 16384, 1_000_000, 1_048_576
LLAMA_KEYS = dict(layers="num_hidden_layers", heads="num_attention_heads", d_model="hidden_size",
                  positions="max_position_embeddings", d_ff="intermediate_size")


def refuse(info_or_path, key: str, value, supported: str) -> EngineError:
    """One line naming config.json, the key and its value, and what the app runs instead."""
    path = getattr(info_or_path, "path", info_or_path)
    if isinstance(value, float) and not math.isfinite(value):
        value = str(value)  # repr(nan) reads "nan" either way; keeps the template's !r quoting plain
    return EngineError("{file}: {key} = {value!r} is not supported (the app runs {supported})", field="model",
                       file=str(Path(path) / "config.json"), key=key, value=value, supported=supported)


def whole(config: Mapping, key: str, lower: int, upper: int, path: Path, default=None) -> int:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lower <= value <= upper:
        raise EngineError("{file}: {key} is {value!r}; expected a whole number from {lower} to {upper}",
                          field="model", file=str(path / "config.json"), key=key, value=value, lower=lower,
                          upper=upper)
    return value


def sizes(config: Mapping, path: Path, *, keys: Mapping = LLAMA_KEYS, kv_default: int | None = None,
          head_dim: bool = False, rotary: bool = True, d_ff: int | None = None) -> dict:
    """layers, heads, kv_heads, d_model, head_dim, d_ff, vocab, max_positions, bounded and consistent.

    ``kv_default``: num_key_value_heads when config.json omits it (None: the query heads, as older
    Llama configs mean; Mistral's transformers default is 8). ``head_dim``: the family honours a
    ``head_dim`` key (else d_model / heads). ``d_ff``: the MLP width when the family derives it."""
    layers = whole(config, keys["layers"], 1, MAX_LAYERS, path)
    d = whole(config, keys["d_model"], 1, MAX_WIDTH, path)
    heads = whole(config, keys["heads"], 1, d, path)
    vocab = whole(config, "vocab_size", 1, MAX_VOCAB, path)
    positions = whole(config, keys["positions"], 1, MAX_POSITIONS, path, default=2048)
    width = whole({"d_ff": d_ff}, "d_ff", 1, 8 * MAX_WIDTH, path) if d_ff is not None else \
        whole(config, keys["d_ff"], 1, 8 * MAX_WIDTH, path)
    kv = heads
    if "kv_heads" in keys or rotary:
        default = heads if kv_default is None else kv_default
        value = config.get("num_key_value_heads")
        kv = whole(config if value is not None else {"num_key_value_heads": default}, "num_key_value_heads", 1,
                   heads, path)
        if heads % kv:
            raise EngineError("{file}: {heads} query heads cannot share {kv} key/value heads evenly", field="model",
                              file=str(path / "config.json"), heads=heads, kv=kv)
    dk = config.get("head_dim") if head_dim and config.get("head_dim") is not None else None
    if dk is None:
        if d % heads:
            raise EngineError("{file}: {heads} heads do not divide the width {d}: the file is damaged",
                              field="model", file=str(path / "config.json"), heads=heads, d=d)
        dk = d // heads
    dk = whole({"head_dim": dk}, "head_dim", 2 if rotary else 1, 4096, path)
    if rotary and dk % 2:
        raise EngineError("{file}: head_dim {head_dim} is odd; RoPE needs pairs", field="model",
                          file=str(path / "config.json"), head_dim=dk)
    return dict(layers=layers, heads=heads, kv_heads=kv, d_model=d, head_dim=dk, d_ff=width, vocab=vocab,
                max_positions=positions)


# (the folder's name after model.layers.{i}., ours after blk.{i}.)
LLAMA_LAYER = (("input_layernorm.weight", "attn_norm.weight"), ("post_attention_layernorm.weight", "ffn_norm.weight"),
               ("self_attn.q_proj.weight", "attn_q.weight"), ("self_attn.k_proj.weight", "attn_k.weight"),
               ("self_attn.v_proj.weight", "attn_v.weight"), ("self_attn.o_proj.weight", "attn_output.weight"),
               ("mlp.gate_proj.weight", "ffn_gate.weight"), ("mlp.up_proj.weight", "ffn_up.weight"),
               ("mlp.down_proj.weight", "ffn_down.weight"))
QKV_BIASES = (("self_attn.q_proj.bias", "attn_q.bias"), ("self_attn.k_proj.bias", "attn_k.bias"),
              ("self_attn.v_proj.bias", "attn_v.bias"))
QK_NORMS = (("self_attn.q_norm.weight", "attn_q_norm.weight"), ("self_attn.k_norm.weight", "attn_k_norm.weight"))


def llama_table(info, names, layer=LLAMA_LAYER) -> dict[str, tuple[str, bool]]:
    """llama.cpp name → (the folder's tensor name, transpose?) for a Llama-style decoder; ``layer``
    the (theirs, ours) pairs of each layer. A separate lm_head is read when the folder has one."""
    table = {"token_embd.weight": ("model.embed_tokens.weight", False), "output_norm.weight": ("model.norm.weight", False)}
    if "lm_head.weight" in names:  # a tied model's file usually omits it (then the embedding is the head)
        table["output.weight"] = ("lm_head.weight", False)
    for i in range(info.layers):
        for theirs, ours in layer:
            table[f"blk.{i}.{ours}"] = (f"model.layers.{i}.{theirs}", False)
    return table


def decoder_shapes(info) -> dict[str, tuple[int, ...]]:
    """Our name → numpy shape (after any transpose) of every tensor a decoder family may name."""
    d, d_ff, v, dk = info.d_model, info.d_ff, info.vocab, info.head_dim
    heads, kv = info.heads, info.kv_heads
    shapes = {"token_embd.weight": (v, d), "output_norm.weight": (d,), "output_norm.bias": (d,),
              "output.weight": (v, d), "position_embd.weight": (info.max_positions, d)}
    for i in range(info.layers):
        b = f"blk.{i}."
        shapes.update({b + "attn_norm.weight": (d,), b + "attn_norm.bias": (d,), b + "ffn_norm.weight": (d,),
                       b + "ffn_norm.bias": (d,), b + "attn_qkv.weight": ((heads + 2 * kv) * dk, d),
                       b + "attn_qkv.bias": ((heads + 2 * kv) * dk,),
                       b + "attn_q.weight": (heads * dk, d), b + "attn_k.weight": (kv * dk, d),
                       b + "attn_v.weight": (kv * dk, d), b + "attn_q.bias": (heads * dk,),
                       b + "attn_k.bias": (kv * dk,), b + "attn_v.bias": (kv * dk,),
                       b + "attn_output.weight": (d, heads * dk), b + "attn_output.bias": (d,),
                       b + "attn_q_norm.weight": (dk,), b + "attn_k_norm.weight": (dk,),
                       b + "post_attention_norm.weight": (d,), b + "post_ffw_norm.weight": (d,),
                       b + "ffn_gate.weight": (d_ff, d), b + "ffn_up.weight": (d_ff, d), b + "ffn_up.bias": (d_ff,),
                       b + "ffn_gate_up.weight": (2 * d_ff, d),
                       b + "ffn_down.weight": (d, d_ff), b + "ffn_down.bias": (d,)})
    return shapes


def row_parts(tensors, fused: dict[str, dict[str, int]]) -> "RowParts":
    """``tensors`` with each fused tensor's parts ({fused name: {part name: rows}}) served as row ranges."""
    parts = {}
    for stored, named in fused.items():
        start = 0
        for name, rows in named.items():
            parts[name] = (stored, start, rows)
            start += rows
    return RowParts(tensors, parts)


class RowParts(Mapping):
    """A lazy tensor mapping (a GGUF file's, a folder's) with some names served as row ranges of a stored fused
    tensor: {our name: (stored name, first row, row count)}. The last fused tensor read is kept, so
    its parts cost one read. ``file`` is the wrapped mapping's (GGUFContents.close uses it)."""

    def __init__(self, tensors: Mapping, parts: dict[str, tuple[str, int, int]]):
        self._tensors, self._parts = tensors, parts
        self.file = getattr(tensors, "file", None)
        self._last: tuple[str, object] = ("", None)
        # a file's directory tells every stored shape: refused now, before any tensor is read
        stored = {entry.name: entry.numpy_shape for entry in getattr(self.file, "tensors", ())}
        for name in {source for source, _, _ in parts.values()}:
            if name in stored:
                self._check(name, stored[name][0])

    def _check(self, stored: str, count: int) -> None:
        rows = max(first + size for source, first, size in self._parts.values() if source == stored)
        if count != rows:
            raise EngineError("tensor {name} has {count} rows, which do not split into the parts the config "
                              "declares ({rows} rows): the weights and the config belong to different models",
                              field="model", name=stored, count=count, rows=rows)

    def __contains__(self, name) -> bool:
        return name in self._parts or name in self._tensors

    def __getitem__(self, name: str):
        if name not in self._parts:
            return self._tensors[name]
        stored, first, count = self._parts[name]
        last = self._last  # one read of the attribute: the loader's threads replace it (a tuple, atomically)
        if last[0] != stored:
            last = (stored, self._tensors[stored])
            self._last = last
        value = last[1]
        self._check(stored, value.shape[0])
        return value[first: first + count]

    def __iter__(self):
        return iter(set(self._tensors) | set(self._parts))

    def __len__(self) -> int:
        return len(set(self._tensors) | set(self._parts))


class NormsPlusOne(Mapping):
    """Gemma stores each RMSNorm's γ − 1 and applies (1 + γ): the 1 added as each norm is read, in float32 as
    transformers computes it (llama.cpp's converter adds it when it writes a GGUF)."""

    def __init__(self, tensors: Mapping):
        self._tensors = tensors

    def __getitem__(self, name: str):
        value = self._tensors[name]
        return value + value.dtype.type(1.0) if name.endswith("norm.weight") else value

    def __contains__(self, name) -> bool:
        return name in self._tensors

    def __iter__(self):
        return iter(self._tensors)

    def __len__(self) -> int:
        return len(self._tensors)
