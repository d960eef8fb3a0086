"""Qwen2 / Qwen2.5: Llama's block with biases on Q, K and V, a tied head in the small models, and an
optional sliding window on the layers from max_window_layers on (only with use_sliding_window: true).

Tokenizer: byte-level BPE with Qwen's pre-tokenizer; nothing added. The embedding is padded past the
tokenizer's vocabulary.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .common import LLAMA_LAYER, QKV_BIASES, llama_table, sizes as common_sizes
from .rotary import Features, rotary_config

NAME, TITLE, KIND, ORDER = "qwen2", "Qwen2", "decoder", 60
MODEL_TYPES = ("qwen2",)
GGUF_ARCHITECTURES = ("qwen2",)
TOKENIZER = "byte-level BPE; nothing added"
FEATURES = Features(attention_bias=True, window="layer_types", window_switch="use_sliding_window",
                    window_pattern="max_window_layers")


def sizes(config: Mapping, path: Path) -> dict:
    return common_sizes(config, path)


def config(info):
    return rotary_config(info, FEATURES)


def table(info, names):
    return llama_table(info, names, LLAMA_LAYER + QKV_BIASES)
