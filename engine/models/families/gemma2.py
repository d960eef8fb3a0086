"""Gemma 2 (Gemma Team 2024): RMSNorm with (1 + γ), norms before *and* after attention and MLP, GeGLU
(GELU's tanh form on the gate), embeddings × √d, scores q·k / √query_pre_attn_scalar, soft-capped
attention logits (cap · tanh(s / cap)) and final logits, a sliding window on alternate layers
(layer_types; layer 0 is windowed).

Tokenizer: SentencePiece (▁, <0xNN>), <bos> added by tokenizer.json's post-processor. The head is tied.
GGUF (llama.cpp): norms stored as 1 + γ already; gemma2.attention.sliding_window (4096 when absent) on
the even layers; the caps gemma2.attn_logit_softcapping / final_logit_softcapping (50 / 30 when absent);
no query_pre_attn_scalar: llama.cpp scales by 1/√head_dim, and by 1/√(d/heads) for the 46-layer 27 B
model — what its config.json says too.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .common import NormsPlusOne, llama_table, sizes as common_sizes
from .rotary import Features, rotary_config

NAME, TITLE, KIND, ORDER = "gemma2", "Gemma 2", "decoder", 90
MODEL_TYPES = ("gemma2",)
GGUF_ARCHITECTURES = ("gemma2",)
TOKENIZER = "SentencePiece (▁, <0xNN>); <bos> from tokenizer.json's post-processor"
FEATURES = Features(activations=("gelu_pytorch_tanh",), mlp="geglu", window="layer_types", window_pattern="alternate",
                    softcap=True, query_scale=True, embed_scale=True, post_norms=True)
LAYER = (("input_layernorm.weight", "attn_norm.weight"), ("post_attention_layernorm.weight", "post_attention_norm.weight"),
         ("pre_feedforward_layernorm.weight", "ffn_norm.weight"),
         ("post_feedforward_layernorm.weight", "post_ffw_norm.weight"),
         ("self_attn.q_proj.weight", "attn_q.weight"), ("self_attn.k_proj.weight", "attn_k.weight"),
         ("self_attn.v_proj.weight", "attn_v.weight"), ("self_attn.o_proj.weight", "attn_output.weight"),
         ("mlp.gate_proj.weight", "ffn_gate.weight"), ("mlp.up_proj.weight", "ffn_up.weight"),
         ("mlp.down_proj.weight", "ffn_down.weight"))


def sizes(config: Mapping, path: Path) -> dict:
    return common_sizes(config, path, head_dim=True)


def config(info):
    return rotary_config(info, FEATURES)


def table(info, names):
    return llama_table(info, names, LAYER)


def prepare(tensors, config, source: str):
    """A folder's norms γ − 1 read as 1 + (γ − 1); a GGUF file holds them so already."""
    return NormsPlusOne(tensors) if source == "hf" else tensors


def gguf_config(reader, numbers: dict) -> dict:
    """The GGUF metadata's Gemma 2 features (see the module doc)."""
    from ..gguf_file import metadata_number, metadata_whole

    a, layers = numbers["architecture"], numbers["num_layers"]
    window = metadata_whole(reader, f"{a}.attention.sliding_window", 1, 1 << 24, 4096)
    caps = [metadata_number(reader, f"{a}.{key}", default) for key, default in
            (("attn_logit_softcapping", 50.0), ("final_logit_softcapping", 30.0))]
    return dict(layer_windows=tuple(window if i % 2 == 0 else 0 for i in range(layers)), attn_softcap=max(caps[0], 0.0),
                final_softcap=max(caps[1], 0.0), query_scale=query_scale(numbers, 46))


def query_scale(numbers: dict, layers_27b: int) -> float:
    """llama.cpp's Gemma query scale: d/heads for the 27 B model (its query_pre_attn_scalar), else head_dim."""
    if numbers["num_layers"] == layers_27b:
        return float(numbers["hidden_size"] // numbers["num_heads"])
    return float(numbers["head_dim"])
