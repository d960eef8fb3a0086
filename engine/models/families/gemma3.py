"""Gemma 3 (Gemma Team 2025), text part: Gemma 2's block (gemma2.py) with an RMSNorm (1 + γ) of each
head's q and k before RoPE, local layers (a sliding window; every sixth layer global unless
layer_types says otherwise) with their own RoPE base (10⁴) beside the global one (10⁶), and no
soft-capping unless config.json asks for it.

Tokenizer: SentencePiece (▁, <0xNN>), <bos> added by tokenizer.json's post-processor.
Only the text model (model_type "gemma3_text", Gemma3ForCausalLM) is read; the multimodal "gemma3"
folders nest it under text_config and are refused by their model_type.
GGUF (llama.cpp): gemma3.attention.sliding_window; the layer kinds from
gemma3.attention.sliding_window_pattern (a period, or one true/false a layer) or every sixth global;
the windowed layers' RoPE base gemma3.rope.freq_base_swa or 10⁴; the query scale as Gemma 2's
(1/√head_dim, 1/√(d/heads) for the 62-layer 27 B model).
"""
from __future__ import annotations

from .common import QK_NORMS, llama_table
from .gemma2 import LAYER, prepare, query_scale, sizes  # noqa: F401 (the same table, norms and sizes)
from .rotary import Features, rotary_config

NAME, TITLE, KIND, ORDER = "gemma3", "Gemma 3", "decoder", 100
MODEL_TYPES = ("gemma3_text",)
GGUF_ARCHITECTURES = ("gemma3",)
TOKENIZER = "SentencePiece (▁, <0xNN>); <bos> from tokenizer.json's post-processor"
FEATURES = Features(activations=("gelu_pytorch_tanh",), mlp="geglu", window="layer_types", window_pattern="every6",
                    softcap=True, query_scale=True, embed_scale=True, post_norms=True, qk_norm=True, local_rope=True)


def config(info):
    return rotary_config(info, FEATURES)


def table(info, names):
    return llama_table(info, names, LAYER + QK_NORMS)


def gguf_config(reader, numbers: dict) -> dict:
    """The GGUF metadata's Gemma 3 features (see the module doc)."""
    from ...core.errors import EngineError
    from ..gguf_file import metadata_number, metadata_value, metadata_whole

    a, layers = numbers["architecture"], numbers["num_layers"]
    window = metadata_whole(reader, f"{a}.attention.sliding_window", 1, 1 << 24)
    pattern = metadata_value(reader, f"{a}.attention.sliding_window_pattern", 6)
    if isinstance(pattern, list) and len(pattern) == layers and all(isinstance(p, bool) for p in pattern):
        sliding = list(pattern)
    elif isinstance(pattern, int) and not isinstance(pattern, bool) and pattern >= 1:
        sliding = [i % pattern < pattern - 1 for i in range(layers)]  # llama.cpp's set_swa_pattern
    else:
        raise EngineError("{name}: {key} is {value}: expected a period or one true/false a layer", field="model",
                          name=reader.name, key=f"{a}.attention.sliding_window_pattern", value=str(pattern)[:60])
    local = metadata_number(reader, f"{a}.rope.freq_base_swa", 10000.0)
    caps = [max(metadata_number(reader, f"{a}.{key}", 0.0), 0.0) for key in ("attn_logit_softcapping",
                                                                            "final_logit_softcapping")]
    return dict(layer_windows=tuple(window if s else 0 for s in sliding), attn_softcap=caps[0], final_softcap=caps[1],
                query_scale=query_scale(numbers, 62),
                local_rope_theta=local if local > 1.0 and local != numbers["rope_theta"] else 0.0)
