"""BERT (Devlin et al. 2019): the post-LN encoder of engine/models/bert.py, exact erf GELU.

Tokenizer: WordPiece from tokenizer.json; its post-processor adds [CLS] … [SEP].
Weights: BertModel's names; the ``bert.`` prefix of *ForMaskedLM and the like is dropped.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from ..bert import BertConfig
from .common import refuse, sizes as common_sizes, whole

NAME, TITLE, KIND, ORDER = "bert", "BERT", "encoder", 10
MODEL_TYPES = ("bert",)
GGUF_ARCHITECTURES = ()
TOKENIZER = "WordPiece; [CLS] … [SEP] from tokenizer.json's post-processor"
PREFIXES = ("bert.", "roberta.", "model.")


def sizes(config: Mapping, path: Path) -> dict:
    return common_sizes(config, path, rotary=False)


def config(info, *, position_offset: int = 0) -> tuple[BertConfig, int]:
    """(BertConfig, the first position row): hidden_act, position_embedding_type, type_vocab_size and
    layer_norm_eps read; anything but exact GELU and absolute positions refused."""
    c = info.config
    activation = c.get("hidden_act", "gelu")
    if activation != "gelu":
        raise refuse(info, "hidden_act", activation, "gelu (exact)")
    if c.get("position_embedding_type", "absolute") != "absolute":
        raise refuse(info, "position_embedding_type", c.get("position_embedding_type"), "absolute")
    eps = c.get("layer_norm_eps", 1e-12)
    types = c.get("type_vocab_size", 2)
    types = whole({"type_vocab_size": types or 1}, "type_vocab_size", 1, 1024, info.path)
    return BertConfig(vocab_size=info.vocab, hidden_size=info.d_model, num_layers=info.layers, num_heads=info.heads,
                      intermediate_size=info.d_ff, max_positions=info.max_positions, type_vocab_size=types,
                      layer_norm_eps=float(eps) if isinstance(eps, (int, float)) and 0 < eps < 1 else 1e-12
                      ), position_offset


def _prefix(names) -> str:
    for prefix in PREFIXES:
        if any(name.startswith(prefix) for name in names):
            return prefix
    return ""


def table(info, names) -> dict[str, tuple[str, bool]]:
    """BertModel name → (the folder's tensor name, False)."""
    p = _prefix(names)
    wanted = ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
              "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"]
    for i in range(info.layers):
        e = f"encoder.layer.{i}."
        for part in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
                     "attention.output.LayerNorm", "intermediate.dense", "output.dense", "output.LayerNorm"):
            wanted += [e + part + ".weight", e + part + ".bias"]
    return {name: (p + name, False) for name in wanted}


def shapes(info) -> dict[str, tuple[int, ...]]:
    d, d_ff, v = info.d_model, info.d_ff, info.vocab
    types = int(info.config.get("type_vocab_size", 2) or 1)
    out = {"embeddings.word_embeddings.weight": (v, d), "embeddings.position_embeddings.weight": (info.max_positions, d),
           "embeddings.token_type_embeddings.weight": (types, d), "embeddings.LayerNorm.weight": (d,),
           "embeddings.LayerNorm.bias": (d,)}
    for i in range(info.layers):
        e = f"encoder.layer.{i}."
        for part, shape in (("attention.self.query", (d, d)), ("attention.self.key", (d, d)),
                            ("attention.self.value", (d, d)), ("attention.output.dense", (d, d)),
                            ("attention.output.LayerNorm", None), ("intermediate.dense", (d_ff, d)),
                            ("output.dense", (d, d_ff)), ("output.LayerNorm", None)):
            out[e + part + ".weight"] = shape or (d,)
            out[e + part + ".bias"] = (shape[0],) if shape else (d,)
    return out
