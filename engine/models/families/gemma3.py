"""Gemma 3 (Gemma Team 2025), text part: Gemma 2's block (gemma2.py) with an RMSNorm (1 + γ) of each
head's q and k before RoPE, local layers (a sliding window; every sixth layer global unless
layer_types says otherwise) with their own RoPE base (10⁴) beside the global one (10⁶), and no
soft-capping unless config.json asks for it.

Tokenizer: SentencePiece (▁, <0xNN>), <bos> added by tokenizer.json's post-processor.
Only the text model (model_type "gemma3_text", Gemma3ForCausalLM) is read; the multimodal "gemma3"
folders nest it under text_config and are refused by their model_type.
"""
from __future__ import annotations

from .common import QK_NORMS
from .rotary import Features, rotary_config
from .gemma2 import LAYER, prepare, sizes  # noqa: F401 (the same table, norms and sizes)
from .common import llama_table

NAME, TITLE, KIND, ORDER = "gemma3", "Gemma 3", "decoder", 100
MODEL_TYPES = ("gemma3_text",)
GGUF_ARCHITECTURES = ()
TOKENIZER = "SentencePiece (▁, <0xNN>); <bos> from tokenizer.json's post-processor"
FEATURES = Features(activations=("gelu_pytorch_tanh",), mlp="geglu", window="layer_types", window_pattern="every6",
                    softcap=True, query_scale=True, embed_scale=True, post_norms=True, qk_norm=True, local_rope=True)


def config(info):
    return rotary_config(info, FEATURES)


def table(info, names):
    return llama_table(info, names, LAYER + QK_NORMS)
