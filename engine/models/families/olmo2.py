"""OLMo 2 (OLMo et al. 2024): Llama's block with the norms *after* attention and MLP instead of before
them (h + RMSNorm(attn(h)), then h + RMSNorm(mlp(h))), and an RMSNorm of the whole q and k projections
(over all heads of a position: γ of heads·d_k and kv·d_k) before RoPE.

Tokenizer: byte-level BPE (GPT-NeoX / cl100k style); nothing added unless tokenizer.json says so.
GGUF: llama.cpp's ``olmo2`` (post_attention_norm, post_ffw_norm, attn_q_norm of the whole width).
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .common import QK_NORMS, decoder_shapes, llama_table, sizes as common_sizes
from .rotary import Features, rotary_config

NAME, TITLE, KIND, ORDER = "olmo2", "OLMo 2", "decoder", 110
MODEL_TYPES = ("olmo2",)
GGUF_ARCHITECTURES = ("olmo2",)
TOKENIZER = "byte-level BPE; nothing added unless tokenizer.json says so"
FEATURES = Features(pre_norms=False, post_norms=True, qk_norm=True, qk_norm_whole=True)
LAYER = (("post_attention_layernorm.weight", "post_attention_norm.weight"),
         ("post_feedforward_layernorm.weight", "post_ffw_norm.weight"),
         ("self_attn.q_proj.weight", "attn_q.weight"), ("self_attn.k_proj.weight", "attn_k.weight"),
         ("self_attn.v_proj.weight", "attn_v.weight"), ("self_attn.o_proj.weight", "attn_output.weight"),
         ("mlp.gate_proj.weight", "ffn_gate.weight"), ("mlp.up_proj.weight", "ffn_up.weight"),
         ("mlp.down_proj.weight", "ffn_down.weight")) + QK_NORMS


def sizes(config: Mapping, path: Path) -> dict:
    return common_sizes(config, path)


def config(info):
    return rotary_config(info, FEATURES)


def table(info, names):
    return llama_table(info, names, LAYER)


def shapes(info) -> dict[str, tuple[int, ...]]:
    out = decoder_shapes(info)
    for i in range(info.layers):  # q and k normed over all heads at once
        out[f"blk.{i}.attn_q_norm.weight"] = (info.heads * info.head_dim,)
        out[f"blk.{i}.attn_k_norm.weight"] = (info.kv_heads * info.head_dim,)
    return out
