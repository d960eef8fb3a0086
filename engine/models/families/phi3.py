"""Phi-3 (Abdin et al. 2024): Llama's block with Q, K, V fused in one ``qkv_proj`` (rows [W_Q; W_K; W_V]
of heads·d_k, kv·d_k and kv·d_k: grouped-query attention) and gate and up fused in ``gate_up_proj``
(rows [W_gate; W_up]); an optional sliding window on every layer.

Tokenizer: SentencePiece (Llama 2's) pieces; tokenizer.json decides what is added. LongRoPE
(rope_scaling "longrope", Phi-3.5 and the 128k models) and partial rotary factors are refused.
GGUF: llama.cpp keeps both fusions (``attn_qkv``, and ``ffn_up`` of 2·d_ff rows); phi3.attention.sliding_window,
when the file has it, is applied as transformers applies config.json's (Phi-3-mini-4k: 2047 of 4096).
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .common import llama_table, row_parts, sizes as common_sizes
from .rotary import Features, rotary_config

NAME, TITLE, KIND, ORDER = "phi3", "Phi-3", "decoder", 80
MODEL_TYPES = ("phi3",)
GGUF_ARCHITECTURES = ("phi3",)
TOKENIZER = "SentencePiece pieces; tokenizer.json's post-processor decides what is added"
FEATURES = Features(window="all")
LAYER = (("input_layernorm.weight", "attn_norm.weight"), ("post_attention_layernorm.weight", "ffn_norm.weight"),
         ("self_attn.qkv_proj.weight", "attn_qkv.weight"), ("self_attn.o_proj.weight", "attn_output.weight"),
         ("mlp.gate_up_proj.weight", "ffn_gate_up.weight"), ("mlp.down_proj.weight", "ffn_down.weight"))


def sizes(config: Mapping, path: Path) -> dict:
    return common_sizes(config, path)


def config(info):
    return rotary_config(info, FEATURES)


def table(info, names):
    return llama_table(info, names, LAYER)


def _parts(config) -> dict[str, dict[str, int]]:
    """fused name → {part name: rows}, for every layer."""
    q, kv, d_ff = config.num_heads * config.head_dim, config.num_kv_heads * config.head_dim, config.intermediate_size
    out = {}
    for i in range(config.num_layers):
        b = f"blk.{i}."
        out[b + "attn_qkv.weight"] = {b + "attn_q.weight": q, b + "attn_k.weight": kv, b + "attn_v.weight": kv}
        out[b + "ffn_gate_up.weight"] = {b + "ffn_gate.weight": d_ff, b + "ffn_up.weight": d_ff}
    return out


def prepare(tensors, config, source: str):
    """The fused tensors cut into the block's parts as they are read (llama.cpp names the fused gate|up
    "ffn_up" in a GGUF file)."""
    fused = _parts(config)
    if source == "gguf":
        fused = {name.replace("ffn_gate_up", "ffn_up"): parts for name, parts in fused.items()}
    return row_parts(tensors, fused)


def gguf_config(reader, numbers: dict) -> dict:
    """phi3.attention.sliding_window, applied as transformers applies config.json's (see the module doc)."""
    from ..gguf_file import metadata_value, metadata_whole

    key = f"{numbers['architecture']}.attention.sliding_window"
    if metadata_value(reader, key) is None:
        return {}
    window = metadata_whole(reader, key, 1, 1 << 24)
    return dict(layer_windows=(window,) * numbers["num_layers"]) if window < numbers["context_length"] else {}
