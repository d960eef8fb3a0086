"""Mistral (Jiang et al. 2023): Llama's block with a sliding window on every layer: a query sees
itself and the ``sliding_window`` − 1 positions before it (transformers' mask; Mistral 7B v0.1 has
4096, later versions null = no window).

Tokenizer: SentencePiece pieces (▁, <0xNN>) with <s> added, from tokenizer.json.
num_key_value_heads defaults to 8 when config.json omits it (transformers' MistralConfig), not to the
query heads as Llama's does. GGUF: llama.cpp converts Mistral as "llama" (without the window).
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .common import LLAMA_LAYER, QKV_BIASES, llama_table, sizes as common_sizes
from .rotary import Features, attention_bias, rotary_config

NAME, TITLE, KIND, ORDER = "mistral", "Mistral", "decoder", 50
MODEL_TYPES = ("mistral",)
GGUF_ARCHITECTURES = ()
TOKENIZER = "SentencePiece (▁, <0xNN>); <s> from tokenizer.json's post-processor"
FEATURES = Features(window="all")


def sizes(config: Mapping, path: Path) -> dict:
    return common_sizes(config, path, head_dim=True, kv_default=8)


def config(info):
    return rotary_config(info, FEATURES)


def table(info, names):
    return llama_table(info, names, LLAMA_LAYER + (QKV_BIASES if attention_bias(info, FEATURES) else ()))
