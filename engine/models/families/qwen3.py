"""Qwen3: Llama's block with an RMSNorm of each head's q and k (over head_dim, before RoPE); head_dim
may differ from hidden_size / heads. Sliding window as Qwen2's (use_sliding_window).

Tokenizer: byte-level BPE; nothing added.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .common import LLAMA_LAYER, QK_NORMS, QKV_BIASES, llama_table, sizes as common_sizes
from .rotary import Features, attention_bias, rotary_config

NAME, TITLE, KIND, ORDER = "qwen3", "Qwen3", "decoder", 70
MODEL_TYPES = ("qwen3",)
GGUF_ARCHITECTURES = ("qwen3",)
TOKENIZER = "byte-level BPE; nothing added"
FEATURES = Features(qk_norm=True, window="layer_types", window_switch="use_sliding_window",
                    window_pattern="max_window_layers")


def sizes(config: Mapping, path: Path) -> dict:
    return common_sizes(config, path, head_dim=True)


def config(info):
    return rotary_config(info, FEATURES)


def table(info, names):
    return llama_table(info, names, LLAMA_LAYER + QK_NORMS + (QKV_BIASES if attention_bias(info, FEATURES) else ()))
