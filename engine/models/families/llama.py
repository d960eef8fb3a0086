"""Llama (Touvron et al. 2023): RMSNorm, RoPE (the Hugging Face "half" layout in folders, llama.cpp's
adjacent pairs in GGUF files), SwiGLU, grouped-query attention, a tied or separate head.

Tokenizer: byte-level BPE (Llama 3, SmolLM) or SentencePiece pieces with <0xNN> bytes; tokenizer.json's
post-processor adds <s> / <|begin_of_text|> where the model wants it.
Older config.json files (transformers 4) carry rope_theta at the top and may omit
num_key_value_heads (= the query heads); both forms are read. No sliding window: a config that asks
for one is refused (the block would silently attend to every position).
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .common import QKV_BIASES, LLAMA_LAYER, llama_table, sizes as common_sizes
from .rotary import Features, attention_bias, rotary_config

NAME, TITLE, KIND, ORDER = "llama", "Llama", "decoder", 40
MODEL_TYPES = ("llama",)
GGUF_ARCHITECTURES = ("llama",)  # llama.cpp writes Mistral models as "llama" too
TOKENIZER = "byte-level BPE or SentencePiece; <s> from tokenizer.json's post-processor"
FEATURES = Features()


def sizes(config: Mapping, path: Path) -> dict:
    return common_sizes(config, path, head_dim=True)


def config(info):
    return rotary_config(info, FEATURES)


def table(info, names):
    return llama_table(info, names, LLAMA_LAYER + (QKV_BIASES if attention_bias(info, FEATURES) else ()))
