"""config.json → engine.models.llama.DecoderConfig for the rotary decoders (every family but bert,
roberta and gpt2). Each family says which block features it has (:class:`Features`); a key of a
feature the family lacks, or a value the block cannot compute, is refused naming the key and the
value, before any weight is read.

Keys read: hidden_act / hidden_activation, rope_parameters (transformers 5) or rope_scaling and a
top-level rope_theta (older files), partial_rotary_factor, rms_norm_eps, attention_bias, mlp_bias,
sliding_window with use_sliding_window, layer_types, max_window_layers or sliding_window_pattern,
attn_logit_softcapping, final_logit_softcapping, query_pre_attn_scalar, use_bidirectional_attention.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..hf_folder import FolderInfo, display_name
from ..llama import DecoderConfig
from .common import refuse

SLIDING, FULL = "sliding_attention", "full_attention"


@dataclass(frozen=True)
class Features:
    """What a family's block has (the defaults: Llama's)."""

    activations: tuple[str, ...] = ("silu",)
    mlp: str = "swiglu"
    window: str = ""  # "" none | "all" every layer (Mistral) | "layer_types" per layer (Gemma, Qwen)
    window_switch: str = ""  # a key that must be true for the window to apply (Qwen's use_sliding_window)
    window_pattern: str = ""  # without layer_types: "alternate" (Gemma 2) | "every6" (Gemma 3) | "max_window_layers"
    softcap: bool = False
    query_scale: bool = False
    embed_scale: bool = False
    pre_norms: bool = True
    post_norms: bool = False
    qk_norm: bool = False
    qk_norm_whole: bool = False
    local_rope: bool = False  # Gemma 3: the windowed layers' own RoPE base
    attention_bias: bool = False  # always (Qwen2); else the attention_bias key decides


def _number(info: FolderInfo, key: str, value, lower: float, upper: float, supported: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not lower < value < upper:
        raise refuse(info, key, value, supported)
    return float(value)


def _scaling(info: FolderInfo, key: str, table: dict, context: int) -> tuple:
    """() for plain RoPE, ("linear", factor) or ("llama3", factor, low, high, original context); refused
    naming ``key`` for any other type (yarn, dynamic, longrope …) or a factor that is not a number."""
    kind = table.get("rope_type", table.get("type", "default"))
    if kind in (None, "default"):
        return ()
    if kind not in ("linear", "llama3"):
        raise refuse(info, key, kind, "plain, linear or llama3 RoPE")
    factor = _number(info, f"{key}.factor", table.get("factor"), 0.0, 1e6, "a positive factor")
    if kind == "linear":
        return ("linear", factor)
    low = _number(info, f"{key}.low_freq_factor", table.get("low_freq_factor"), 0.0, 1e6, "a positive number")
    high = _number(info, f"{key}.high_freq_factor", table.get("high_freq_factor"), low, 1e6,
                   "a number above low_freq_factor")
    original = table.get("original_max_position_embeddings", context)
    original = _number(info, f"{key}.original_max_position_embeddings", original, 0.0, 1e9, "a positive length")
    return ("llama3", factor, low, high, original)


def _rope(info: FolderInfo, features: Features) -> tuple[float, float, tuple]:
    """(θ, θ of the windowed layers or 0, the scaling of θ's frequencies)."""
    c = info.config
    parameters = c.get("rope_parameters")
    if parameters is not None and not isinstance(parameters, dict):
        raise refuse(info, "rope_parameters", parameters, "a table of rope_type and rope_theta")
    parameters = parameters or {}
    nested = features.local_rope and (SLIDING in parameters or FULL in parameters)  # Gemma 3: a table a layer kind
    tables = {kind: parameters.get(kind) or {} for kind in (SLIDING, FULL)} if nested else {FULL: parameters,
                                                                                             SLIDING: {}}
    for kind, table in tables.items():
        if not isinstance(table, dict):
            raise refuse(info, f"rope_parameters.{kind}", table, "a table of rope_type and rope_theta")
        factor = table.get("partial_rotary_factor", c.get("partial_rotary_factor", 1.0))
        if factor != 1.0:
            raise refuse(info, "partial_rotary_factor", factor, "RoPE on every dimension of a head (1.0)")
    full_key = f"rope_parameters.{FULL}.rope_type" if nested else "rope_parameters.rope_type"
    scaling = _scaling(info, full_key, tables[FULL], info.max_positions)
    old = c.get("rope_scaling")
    if old is not None:
        if not isinstance(old, dict):
            raise refuse(info, "rope_scaling", old, "a table of rope_type and factor, or null")
        scaling = _scaling(info, "rope_scaling", old, info.max_positions) or scaling
    if _scaling(info, f"rope_parameters.{SLIDING}.rope_type", tables[SLIDING], info.max_positions):
        raise refuse(info, f"rope_parameters.{SLIDING}.rope_type", tables[SLIDING].get("rope_type"),
                     "plain RoPE on the windowed layers")
    theta = tables[FULL].get("rope_theta", c.get("rope_theta", 10000.0))
    theta = _number(info, "rope_theta", theta, 1.0, 1e12, "a base between 1 and 10¹²")
    local = 0.0
    if features.local_rope:
        local = tables[SLIDING].get("rope_theta", c.get("rope_local_base_freq", 10000.0))
        local = _number(info, "rope_local_base_freq", local, 1.0, 1e12, "a base between 1 and 10¹²")
    return theta, local, scaling


def _windows(info: FolderInfo, features: Features) -> tuple[int, ...]:
    """Per layer, the positions a query sees (0: all); () without a window."""
    c, layers = info.config, info.layers
    window = c.get("sliding_window")
    switched_off = features.window_switch and not c.get(features.window_switch)
    if not features.window:
        if window is not None:
            raise refuse(info, "sliding_window", window, f"the {info.family} family without a sliding window")
        return ()
    if window is None or switched_off:
        return ()
    if isinstance(window, bool) or not isinstance(window, int) or not 1 <= window <= info.max_positions:
        raise refuse(info, "sliding_window", window, f"a window of 1 to max_position_embeddings "
                     f"({info.max_positions}) positions")
    if c.get("use_bidirectional_attention"):
        raise refuse(info, "use_bidirectional_attention", c["use_bidirectional_attention"], "causal attention")
    if features.window == "all":
        return (window,) * layers
    types = c.get("layer_types")
    if types is None:
        if features.window_pattern == "alternate":
            types = [SLIDING if (i + 1) % 2 else FULL for i in range(layers)]
        elif features.window_pattern == "every6":
            pattern = c.get("sliding_window_pattern", c.get("_sliding_window_pattern", 6))
            if isinstance(pattern, bool) or not isinstance(pattern, int) or pattern < 1:
                raise refuse(info, "sliding_window_pattern", pattern, "a whole number ≥ 1")
            types = [SLIDING if (i + 1) % pattern else FULL for i in range(layers)]
        else:  # Qwen: the layers from max_window_layers on
            first = c.get("max_window_layers", layers)
            if isinstance(first, bool) or not isinstance(first, int) or first < 0:
                raise refuse(info, "max_window_layers", first, "a whole number ≥ 0")
            types = [SLIDING if i >= first else FULL for i in range(layers)]
    if not isinstance(types, list) or len(types) != layers or any(t not in (SLIDING, FULL) for t in types):
        raise refuse(info, "layer_types", types, f"{layers} of {SLIDING!r} or {FULL!r}")
    return tuple(window if kind == SLIDING else 0 for kind in types)


def _softcap(info: FolderInfo, features: Features, key: str) -> float:
    value = info.config.get(key)
    if value is None:
        return 0.0
    if not features.softcap:
        raise refuse(info, key, value, f"the {info.family} family without soft-capping")
    return _number(info, key, value, 0.0, 1e6, "a positive cap (or null: none)")


def rotary_config(info: FolderInfo, features: Features) -> DecoderConfig:
    """The block of a rotary decoder family (see the module doc)."""
    c = info.config
    activation_key = "hidden_activation" if c.get("hidden_activation") is not None else "hidden_act"
    activation = c.get(activation_key, features.activations[0])
    if activation not in features.activations:
        raise refuse(info, activation_key, activation, ", ".join(features.activations))
    theta, local, scaling = _rope(info, features)
    eps = _number(info, "rms_norm_eps", c.get("rms_norm_eps", 1e-6), 0.0, 1.0, "a small positive number")
    if c.get("mlp_bias"):
        raise refuse(info, "mlp_bias", c["mlp_bias"], "an MLP without biases")
    bias = c.get("attention_bias", False)
    if not isinstance(bias, bool):
        raise refuse(info, "attention_bias", bias, "true or false")
    scale = 0.0
    if features.query_scale:
        scale = _number(info, "query_pre_attn_scalar", c.get("query_pre_attn_scalar", info.head_dim), 0.0, 1e9,
                        "a positive number")
    elif c.get("query_pre_attn_scalar") is not None:
        raise refuse(info, "query_pre_attn_scalar", c["query_pre_attn_scalar"], "1/√head_dim scores")
    return DecoderConfig(
        architecture=info.family, num_layers=info.layers, hidden_size=info.d_model, intermediate_size=info.d_ff,
        num_heads=info.heads, num_kv_heads=info.kv_heads, head_dim=info.head_dim, vocab_size=info.vocab,
        rope_theta=theta, rms_norm_eps=eps, context_length=info.max_positions, rope_style="half",
        name=display_name(info.path), mlp=features.mlp, qk_norm=features.qk_norm,
        qk_norm_whole=features.qk_norm_whole, layer_windows=_windows(info, features),
        attn_softcap=_softcap(info, features, "attn_logit_softcapping"),
        final_softcap=_softcap(info, features, "final_logit_softcapping"), query_scale=scale,
        embed_scale=features.embed_scale, pre_norms=features.pre_norms, post_norms=features.post_norms,
        local_rope_theta=local if local and (local != theta or scaling) else 0.0, rope_scaling=scaling,
    )


def attention_bias(info: FolderInfo, features: Features) -> bool:
    return features.attention_bias or bool(info.config.get("attention_bias"))
