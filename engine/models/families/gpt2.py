"""GPT-2 (Radford et al. 2019): LayerNorm with biases, learned positions, a fused Conv1D q|k|v stored
(in, out), GELU's tanh form, the unembedding tied to the token embeddings.

Tokenizer: byte-level BPE; nothing added (no <|endoftext|> in front).
Weights: ``transformer.h.{i}.attn.c_attn`` … (transposed to (out, in)); GGUF ``blk.{i}.attn_qkv``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from ...core.errors import EngineError
from ..hf_folder import display_name
from ..llama import DecoderConfig
from .common import refuse, row_parts, sizes as common_sizes, whole

NAME, TITLE, KIND, ORDER = "gpt2", "GPT-2", "decoder", 30
MODEL_TYPES = ("gpt2",)
GGUF_ARCHITECTURES = ("gpt2",)
TOKENIZER = "byte-level BPE; nothing added"
GELU_TANH = ("gelu_new", "gelu_pytorch_tanh", "gelu_fast")
KEYS = dict(layers="n_layer", heads="n_head", d_model="n_embd", positions="n_positions", d_ff="n_inner")


def sizes(config: Mapping, path: Path) -> dict:
    d = whole(config, "n_embd", 1, 16384, path)
    return common_sizes(config, path, keys=KEYS, rotary=False, d_ff=config.get("n_inner") or 4 * d)


def config(info) -> DecoderConfig:
    c = info.config
    activation = c.get("activation_function", "gelu_new")
    if activation not in GELU_TANH + ("gelu",):
        raise refuse(info, "activation_function", activation, ", ".join(GELU_TANH + ("gelu",)))
    if c.get("scale_attn_by_inverse_layer_idx"):
        raise refuse(info, "scale_attn_by_inverse_layer_idx", True, "false")
    if c.get("scale_attn_weights", True) is not True:
        raise refuse(info, "scale_attn_weights", c.get("scale_attn_weights"), "true")
    eps = c.get("layer_norm_epsilon", 1e-5)
    return DecoderConfig(architecture="gpt2", num_layers=info.layers, hidden_size=info.d_model,
                         intermediate_size=info.d_ff, num_heads=info.heads, num_kv_heads=info.heads,
                         head_dim=info.head_dim, vocab_size=info.vocab, rope_theta=10000.0,
                         rms_norm_eps=float(eps), context_length=info.max_positions, rope_style="half",
                         name=display_name(info.path), norm="layer",
                         mlp="gelu" if activation == "gelu" else "gelu_tanh", positions="learned")


def table(info, names) -> dict[str, tuple[str, bool]]:
    p = "transformer." if any(name.startswith("transformer.") for name in names) else ""
    out = {"token_embd.weight": (p + "wte.weight", False), "position_embd.weight": (p + "wpe.weight", False),
           "output_norm.weight": (p + "ln_f.weight", False), "output_norm.bias": (p + "ln_f.bias", False)}
    for i in range(info.layers):
        h, b = f"{p}h.{i}.", f"blk.{i}."
        for hf, ours, transpose in (("ln_1", "attn_norm", False), ("ln_2", "ffn_norm", False),
                                    ("attn.c_attn", "attn_qkv", True), ("attn.c_proj", "attn_output", True),
                                    ("mlp.c_fc", "ffn_up", True), ("mlp.c_proj", "ffn_down", True)):
            out[b + ours + ".weight"] = (h + hf + ".weight", transpose)  # Conv1D stores (in, out)
            out[b + ours + ".bias"] = (h + hf + ".bias", False)
    return out


def prepare(tensors, config: DecoderConfig, source: str):
    """The fused attn_qkv rows [W_Q; W_K; W_V] (and its bias) served as attn_q, attn_k, attn_v as they are read.
    A GGUF file's are split by engine.models.gguf_file.GGUFTensors itself."""
    if source != "hf":
        return tensors
    width = config.num_heads * config.head_dim
    return row_parts(tensors, {f"blk.{i}.attn_qkv.{kind}": {f"blk.{i}.attn_{part}.{kind}": width for part in "qkv"}
                               for i in range(config.num_layers) for kind in ("weight", "bias")})


def gguf_check(name: str, heads: int, kv_heads: int, d: int) -> None:
    """GPT-2 has no grouped-query attention, and its heads split the width evenly."""
    if kv_heads != heads:
        raise EngineError("{name}: gpt2.attention.head_count_kv is {kv} but head_count is {heads}: GPT-2 has no "
                          "grouped-query attention (each head has its own key and value); the file is damaged",
                          field="model", name=name, kv=kv_heads, heads=heads)
    if d % heads:
        raise EngineError("{name}: {heads} heads do not divide the width {d}", field="model", name=name, heads=heads,
                          d=d)
