"""A Llama-family decoder forward pass in vectorized NumPy float32, keeping every attention.

Touvron et al. (2023) "LLaMA", as llama.cpp runs a GGUF file and Hugging Face ``transformers``'
``LlamaForCausalLM`` / ``Qwen2ForCausalLM`` compute it. Row-vector convention: ``x @ W`` with
``W`` (in, out), the transpose of the file's (out, in) tensors, made contiguous once by
:func:`prepare_weights`. Per layer, for the residual stream ``h`` (n, d):

    x          = RMSNorm(h) · γ_attn                     x / √(mean(x²) + ε)
    q | k | v  = x · W_qkv (+ b_qkv for qwen2)           q: 9 heads, k and v: 3 heads of 64
    q, k       = RoPE(q), RoPE(k) at positions 0 … n−1   θ_i = base^(−2i/d_k)
    attention  = engine.core.attention.attend_weights(q, k, v, divisor=√d_k, causal)  grouped-query
    h          = h + merge_heads(head_outputs) · W_O     (ablated heads zeroed before W_O)
    h          = h + (SiLU(RMSNorm(h)·γ_ffn · W_gate) ⊙ (RMSNorm(h)·γ_ffn · W_up)) · W_down

then ``RMSNorm(h) · γ_out`` and the output head (the tied embedding for SmolLM2) for logits.

RoPE layout: dimension i of a head rotates with i + d_k/2 ("half", transformers' rotate_half), or
adjacent pairs (2i, 2i+1) rotate together ("adjacent", RoFormer's). The q·k products, and so every
attention weight, are the same either way; the loaders give every real model transformers' layout
(engine.models.gguf_file undoes llama.cpp's permutation of W_Q, W_K rows as it reads a ``llama``
file), so the trace's q and k and the hook points are in transformers' order of a head's dimensions.

Memory: the trace keeps, per layer, the attention weights (heads, n, n), q (heads, n, d_k), k and
v (kv_heads, n, d_k) and head_outputs (heads, n, d_k); the hidden states (layers + 1, n, d).
The scores and scaled scores (2 more n² arrays per layer, tripling the trace) are NOT kept:
:meth:`DecoderTrace.layer_scores` recomputes one layer's from the kept q and k in well under a
millisecond at 128 tokens, while keeping them would cost 0.57 GB more at 512 tokens.

KV cache: :func:`forward` with ``previous`` (a trace whose input ids share a prefix with these)
copies the prefix's keys, values, attention rows and hidden states and computes only the new
positions: position i depends only on tokens 0 … i (the causal mask), so the numbers are the same.
"""
from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Mapping, Sequence

import numpy as np

from ..core.hooks import check_ablation
from ..core.attention import softmax_into, attend, attend_weights, causal_mask, merge_heads, project_heads, softmax64
from .block_features import attend_features, scaled_frequencies, soft_cap, window_mask
from ..core.memory import DEFAULT_MEMORY_BUDGET
from ..core.errors import EngineError
from ..core.hooks import DECODER_BLOCK_POINTS, FINAL_NORM_POINTS, ROTARY_POINTS, HookRun, attention_hooks, block_names
from ..core.hooks import hooks_with_ablation, layer_range, norm_points
from ..core.memory import check_trace_budget
from ..core.parallel import engine_threads, for_rows, thread_map
from ..core.positional import inverse_frequencies, rope_tables, rotate
from ..text.tokenize import Token
from ..core.layers import gelu, gelu_tanh, layer_norm, norm_steps, rms_norm, silu_mul
from ..core.trace import TraceBase, freeze_arrays, read_only

DTYPE = np.float32
Progress = Callable[[float, str], None]
# New positions from which the forward runs on the engine's threads (BLAS on one thread each);
# below, on OpenBLAS's own threads. Crossover measured at ~210 on 2 idle cores (benchmarks/README.md).
OWN_THREADS_FROM = 208


# ---------------------------------------------------------------- config and weights


NORMS = ("rms", "layer")
LN1_POINTS, LN2_POINTS = frozenset(norm_points("ln1")), frozenset(norm_points("ln2"))
MLPS = ("swiglu", "geglu", "gelu", "gelu_tanh")
POSITIONS = ("rotary", "learned")
ROPE_STYLES = ("adjacent", "half")


@dataclass(frozen=True)
class DecoderConfig:
    """The numbers and the block shape of a pre-norm decoder. The GGUF reader fills it from the
    metadata (key names in brackets); a Hugging Face family maps its config.json the same way.

    Sizes:
      architecture     family name (a module of engine/models/families/; general.architecture)
      num_layers       ({arch}.block_count)
      hidden_size      d_model ({arch}.embedding_length)
      intermediate_size  d_ff of the MLP ({arch}.feed_forward_length)
      num_heads        query heads ({arch}.attention.head_count)
      num_kv_heads     key/value heads, a divisor of num_heads: grouped-query attention
                       ({arch}.attention.head_count_kv; = num_heads without GQA)
      head_dim         d_head ({arch}.attention.key_length, default hidden_size / num_heads)
      vocab_size       rows of the token embeddings
      rope_theta       RoPE base ({arch}.rope.freq_base); unused with learned positions
      rms_norm_eps     ε of the block's norms, RMSNorm or LayerNorm ({arch}.attention.layer_norm_rms_epsilon)
      context_length   the longest text, in tokens (the learned position table's rows for GPT-2)
    Block shape (the defaults are Llama's):
      norm       "rms": x / √(mean x² + ε) · γ (Llama, Qwen) | "layer": LayerNorm with γ and β (GPT-2)
      mlp        "swiglu": (SiLU(x·W_gate) ⊙ x·W_up) · W_down (Llama, Qwen) |
                 "gelu": GELU(x·W_up + b_up) · W_down + b_down, exact erf GELU |
                 "gelu_tanh": the same with GELU's tanh approximation (GPT-2's "gelu_new")
      positions  "rotary": RoPE on q and k (Su et al. 2021) | "learned": a (context_length, d) table
                 added to the token embeddings (GPT-2)
      rope_style "adjacent": pairs (2i, 2i+1) rotate together (llama.cpp permutes Llama's W_Q, W_K rows
                 so) | "half": i pairs with i + d_head/2 (Hugging Face's rotate_half; Qwen, NeoX)
      qk_norm    True: an RMSNorm (weights q_norm, k_norm) on q and k before RoPE: over each head's
                 d_head (Qwen3, Gemma 3), or over all heads of a position at once when
                 ``qk_norm_whole`` (OLMo 2: γ of heads·d_head)
    Block features of the newer families (engine/models/block_features.py holds their plain
    float64 references; the defaults switch each off):
      layer_windows   per layer, how many positions a query sees (itself and the window − 1 before
                      it); 0 = all before it. Mistral: every layer; Gemma: the "sliding" layers only
      attn_softcap    scores → cap · tanh(scores / cap) before the mask and softmax (Gemma 2); 0 = off
      final_softcap   the same on the logits (Gemma 2)
      query_scale     the scores are q·k / √query_scale (Gemma's query_pre_attn_scalar); 0 = √d_head
      embed_scale     the token embeddings × √d_model (Gemma)
      pre_norms       the norms before attention and MLP (False: OLMo 2 has only the norms after)
      post_norms      norms on the attention's and the MLP's outputs before the residual adds them
                      (Gemma 2/3 beside the pre-norms, OLMo 2 instead of them)
      local_rope_theta  the RoPE base of the windowed layers where it differs (Gemma 3: 10⁴ there,
                      10⁶ on the global layers); 0 = rope_theta everywhere
      rope_scaling    () or ("linear", factor) or ("llama3", factor, low, high, original context): the
                      frequencies of rope_theta scaled (block_features.scaled_frequencies; not the local ones)
      GeGLU (mlp "geglu": GELU-tanh(x·W_gate) ⊙ x·W_up, Gemma) and RMSNorm with (1 + γ) (Gemma stores γ − 1:
      its family adds the 1 once when the weights are prepared) need no flag of the forward.
    Biases (Qwen2's q/k/v, GPT-2's everywhere) and a tied or separate unembedding are properties
    of the weights (:class:`DecoderLayerWeights`: an absent bias is None; ``output_head`` is the
    token embedding array itself when tied), not of the config.
    """

    architecture: str
    num_layers: int
    hidden_size: int
    intermediate_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    vocab_size: int
    rope_theta: float
    rms_norm_eps: float
    context_length: int
    rope_style: str = "adjacent"
    name: str = ""  # general.name
    norm: str = "rms"
    mlp: str = "swiglu"
    positions: str = "rotary"
    qk_norm: bool = False
    qk_norm_whole: bool = False
    layer_windows: tuple[int, ...] = ()
    attn_softcap: float = 0.0
    final_softcap: float = 0.0
    query_scale: float = 0.0
    embed_scale: bool = False
    pre_norms: bool = True
    post_norms: bool = False
    local_rope_theta: float = 0.0
    rope_scaling: tuple = ()

    def __post_init__(self) -> None:
        for part, value, allowed in (("norm", self.norm, NORMS), ("mlp", self.mlp, MLPS),
                                     ("positions", self.positions, POSITIONS),
                                     ("rope_style", self.rope_style, ROPE_STYLES)):
            if value not in allowed:
                raise EngineError("a decoder's {part} is one of {allowed}; got {value!r}", field="model", part=part,
                                  allowed=", ".join(allowed), value=value)
        if self.num_heads % self.num_kv_heads:
            raise EngineError("{heads} query heads cannot share {kv} key/value heads evenly", field="model",
                              heads=self.num_heads, kv=self.num_kv_heads)

    def window(self, layer: int) -> int:
        """Positions a query of ``layer`` sees (0: every one before it)."""
        return self.layer_windows[layer] if self.layer_windows else 0

    @property
    def score_divisor(self) -> float:
        """q·k is divided by this: √query_scale (Gemma) or √d_head."""
        return math.sqrt(self.query_scale or self.head_dim)

    def plain_attention(self, layer: int) -> bool:
        """True when the layer's attention is softmax(q·k/divisor + causal mask): the fused tiles run it."""
        return not self.window(layer) and not self.attn_softcap

    @property
    def plain_block(self) -> bool:
        """True when every layer is the Llama/Qwen block that engine.models.llama_batch reruns for many
        patched variants at once: no sliding window, soft-capping, query scale, norms after attention
        and MLP, whole-width q/k norm or second RoPE base (those runs take the hooked forward)."""
        return (not any(self.layer_windows) and not self.attn_softcap and not self.final_softcap
                and not self.query_scale and self.pre_norms and not self.post_norms and not self.qk_norm_whole
                and not self.local_rope_theta)

    @property
    def group_size(self) -> int:
        """Query heads per key/value head (9 / 3 = 3 for SmolLM2-135M)."""
        return self.num_heads // self.num_kv_heads

    @property
    def norm_eps(self) -> float:
        return self.rms_norm_eps


@dataclass(frozen=True, eq=False)
class DecoderLayerWeights:
    """One decoder layer, row-vector convention (x @ W), contiguous read-only float32. A bias or
    norm the family lacks is None."""

    attention_norm: np.ndarray  # (d,) γ of the norm before attention
    qkv_weight: np.ndarray  # (d, (heads + 2·kv_heads)·d_k): columns [W_Q | W_K | W_V]
    qkv_bias: np.ndarray | None  # ((heads + 2·kv_heads)·d_k,) qwen2, gpt2
    output_weight: np.ndarray  # (heads·d_k, d) W_O
    ffn_norm: np.ndarray  # (d,) γ of the norm before the MLP
    gate_up_weight: np.ndarray  # swiglu: (d, 2·d_ff) columns [W_gate | W_up]; gelu: (d, d_ff) W_up
    down_weight: np.ndarray  # (d_ff, d) W_down
    attention_norm_bias: np.ndarray | None = None  # (d,) β of a LayerNorm
    output_bias: np.ndarray | None = None  # (d,) b_O
    ffn_norm_bias: np.ndarray | None = None  # (d,)
    up_bias: np.ndarray | None = None  # (d_ff,) gelu; (2·d_ff,) [b_gate | b_up] swiglu
    down_bias: np.ndarray | None = None  # (d,)
    q_norm: np.ndarray | None = None  # (d_k,) qk_norm's γ for q (Qwen3); (heads·d_k,) qk_norm_whole (OLMo 2)
    k_norm: np.ndarray | None = None  # (d_k,); (kv_heads·d_k,) qk_norm_whole
    post_attention_norm: np.ndarray | None = None  # (d,) γ of the norm on the attention's output (Gemma, OLMo 2)
    post_ffn_norm: np.ndarray | None = None  # (d,) γ of the norm on the MLP's output


LlamaLayerWeights = DecoderLayerWeights  # the name it had when only Llama ran


@dataclass(frozen=True, eq=False)
class DecoderWeights:
    """Every parameter of the decoder, ready for :func:`forward`."""

    token_embeddings: np.ndarray  # (vocab, d)
    layers: tuple[DecoderLayerWeights, ...]
    output_norm: np.ndarray  # (d,)
    output_head: np.ndarray  # (vocab, d): logits = normed · headᵀ; the same array as token_embeddings when tied
    inverse_frequency: np.ndarray | None  # (d_k/2,) float64 RoPE frequencies θ_i; None with learned positions
    position_embeddings: np.ndarray | None = None  # (context_length, d) learned positions (GPT-2)
    output_norm_bias: np.ndarray | None = None  # (d,) β of a final LayerNorm
    local_inverse_frequency: np.ndarray | None = None  # (d_k/2,) the windowed layers' own (Gemma 3)

    def frequencies(self, config: "DecoderConfig", layer: int) -> np.ndarray | None:
        """The RoPE frequencies of ``layer``: the windowed layers' own where the family has them."""
        if self.local_inverse_frequency is not None and config.window(layer):
            return self.local_inverse_frequency
        return self.inverse_frequency

    @property
    def nbytes(self) -> int:
        arrays = [self.token_embeddings, self.output_norm, self.inverse_frequency, self.position_embeddings,
                  self.output_norm_bias, self.local_inverse_frequency]
        if self.output_head is not self.token_embeddings:
            arrays.append(self.output_head)
        for layer in self.layers:
            arrays += list(vars(layer).values())
        return sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))


LlamaWeights = DecoderWeights


def _frozen(array: np.ndarray) -> np.ndarray:
    return read_only(array, DTYPE)


@dataclass(frozen=True)
class WeightNames:
    """A family's weight-name table: where each parameter lies in its file, ``{i}`` the layer.
    Linear weights are read in PyTorch's (out, in) layout (GGUF's numpy shape too); "" = the
    family has no such tensor. Optional tensors (biases, q/k norms, a separate head, learned
    positions) are used when the file holds them."""

    token_embeddings: str
    output_norm: str
    output_head: str  # absent from the file: tied to the token embeddings
    attention_norm: str
    q: str
    k: str
    v: str
    output: str
    ffn_norm: str
    up: str
    down: str
    gate: str = ""  # swiglu only
    q_bias: str = ""
    k_bias: str = ""
    v_bias: str = ""
    output_bias: str = ""
    attention_norm_bias: str = ""
    ffn_norm_bias: str = ""
    gate_bias: str = ""
    up_bias: str = ""
    down_bias: str = ""
    q_norm: str = ""
    k_norm: str = ""
    post_attention_norm: str = ""
    post_ffn_norm: str = ""
    position_embeddings: str = ""
    output_norm_bias: str = ""
    rope_freqs: str = ""  # llama 3.x: per-frequency divisors of θ_i (llama.cpp's freq_factors)


# llama.cpp's names in a GGUF file (every decoder family's; HF folders are renamed to them)
GGUF_NAMES = WeightNames(
    token_embeddings="token_embd.weight", output_norm="output_norm.weight", output_head="output.weight",
    attention_norm="blk.{i}.attn_norm.weight", q="blk.{i}.attn_q.weight", k="blk.{i}.attn_k.weight",
    v="blk.{i}.attn_v.weight", output="blk.{i}.attn_output.weight", ffn_norm="blk.{i}.ffn_norm.weight",
    gate="blk.{i}.ffn_gate.weight", up="blk.{i}.ffn_up.weight", down="blk.{i}.ffn_down.weight",
    q_bias="blk.{i}.attn_q.bias", k_bias="blk.{i}.attn_k.bias", v_bias="blk.{i}.attn_v.bias",
    q_norm="blk.{i}.attn_q_norm.weight", k_norm="blk.{i}.attn_k_norm.weight", rope_freqs="rope_freqs.weight",
    post_attention_norm="blk.{i}.post_attention_norm.weight", post_ffn_norm="blk.{i}.post_ffw_norm.weight",
    # GPT-2's (llama.cpp names; its fused attn_qkv is split by engine.models.gguf_file.GGUFTensors)
    output_bias="blk.{i}.attn_output.bias", attention_norm_bias="blk.{i}.attn_norm.bias",
    ffn_norm_bias="blk.{i}.ffn_norm.bias", up_bias="blk.{i}.ffn_up.bias", down_bias="blk.{i}.ffn_down.bias",
    position_embeddings="position_embd.weight", output_norm_bias="output_norm.bias",
)


def prepare_weights(tensors: Mapping[str, np.ndarray], config: DecoderConfig,
                    names: WeightNames = GGUF_NAMES) -> DecoderWeights:
    """Float32 tensors named by ``names`` (linear weights (out, in)) → :class:`DecoderWeights`:
    transposed to (in, out), Q|K|V and gate|up fused side by side, each layer once."""
    d, d_ff, d_k = config.hidden_size, config.intermediate_size, config.head_dim
    heads, kv = config.num_heads, config.num_kv_heads

    def get(name: str, shape: tuple[int, ...]) -> np.ndarray:
        if name not in tensors:
            raise EngineError("the model file has no tensor {name}", field="model", name=name)
        value = tensors[name]
        if tuple(value.shape) != shape:
            raise EngineError("tensor {name} has shape {shape}, expected {expected}", field="model",
                              name=name, shape=tuple(value.shape), expected=shape)
        return value

    def optional(template: str, i: int, shape: tuple[int, ...]) -> np.ndarray | None:
        name = template.format(i=i)
        return _frozen(get(name, shape)) if template and name in tensors else None

    def side_by_side(names_shapes) -> np.ndarray:
        """The tensors' transposes side by side, (in, Σ out), written once into one new array
        (a concatenate then a transpose would fill twice the fresh memory: page faults dominate)."""
        parts = [get(name, shape) for name, shape in names_shapes]
        out = np.empty((parts[0].shape[1], sum(part.shape[0] for part in parts)), DTYPE)
        column = 0
        for part in parts:
            out[:, column: column + part.shape[0]] = part.T
            column += part.shape[0]
        return _frozen(out)

    def biases(parts) -> np.ndarray | None:
        """The biases side by side when the file has the first one; then it must have them all
        (a file with some of them is damaged: refused naming the one missing)."""
        if optional(*parts[0]) is None:
            return None
        return _frozen(np.concatenate([get(t.format(i=i), s) for t, i, s in parts]))

    swiglu = config.mlp in ("swiglu", "geglu")  # gated: W_gate and W_up side by side
    q_width, k_width = (heads * d_k, kv * d_k) if config.qk_norm_whole else (d_k, d_k)

    def layer(i: int) -> DecoderLayerWeights:
        n = {field: getattr(names, field).format(i=i) for field in ("attention_norm", "q", "k", "v", "output",
                                                                     "ffn_norm", "gate", "up", "down")}
        mlp_in = [(n["gate"], (d_ff, d)), (n["up"], (d_ff, d))] if swiglu else [(n["up"], (d_ff, d))]
        up_bias = (biases([(names.gate_bias, i, (d_ff,)), (names.up_bias, i, (d_ff,))]) if swiglu
                   else optional(names.up_bias, i, (d_ff,)))
        return DecoderLayerWeights(
            attention_norm=_frozen(get(n["attention_norm"], (d,))) if config.pre_norms else None,
            qkv_weight=side_by_side([(n["q"], (heads * d_k, d)), (n["k"], (kv * d_k, d)), (n["v"], (kv * d_k, d))]),
            qkv_bias=biases([(names.q_bias, i, (heads * d_k,)), (names.k_bias, i, (kv * d_k,)),
                             (names.v_bias, i, (kv * d_k,))]),
            output_weight=side_by_side([(n["output"], (d, heads * d_k))]),
            ffn_norm=_frozen(get(n["ffn_norm"], (d,))) if config.pre_norms else None,
            gate_up_weight=side_by_side(mlp_in),
            down_weight=side_by_side([(n["down"], (d, d_ff))]),
            attention_norm_bias=optional(names.attention_norm_bias, i, (d,)),
            output_bias=optional(names.output_bias, i, (d,)),
            ffn_norm_bias=optional(names.ffn_norm_bias, i, (d,)),
            up_bias=up_bias,
            down_bias=optional(names.down_bias, i, (d,)),
            q_norm=optional(names.q_norm, i, (q_width,)) if config.qk_norm else None,
            k_norm=optional(names.k_norm, i, (k_width,)) if config.qk_norm else None,
            post_attention_norm=(_frozen(get(names.post_attention_norm.format(i=i), (d,))) if config.post_norms
                                 else None),
            post_ffn_norm=_frozen(get(names.post_ffn_norm.format(i=i), (d,))) if config.post_norms else None,
        )

    # the transposes are NumPy copies that release the GIL: the layers are shared among the threads
    layers = list(thread_map(layer, range(config.num_layers), "llama-prepare"))
    if config.qk_norm and any(w.q_norm is None or w.k_norm is None for w in layers):
        raise EngineError("the model file lacks the q/k norm weights ({name})", field="model",
                          name=names.q_norm.format(i=0))
    embeddings = _frozen(get(names.token_embeddings, (config.vocab_size, d)))
    head = (_frozen(get(names.output_head, (config.vocab_size, d)))
            if names.output_head and names.output_head in tensors else embeddings)
    inverse_frequency = positions = local = None
    if config.positions == "rotary":
        inverse_frequency = scaled_frequencies(inverse_frequencies(d_k, config.rope_theta), config.rope_scaling)
        if names.rope_freqs and names.rope_freqs in tensors:
            inverse_frequency = inverse_frequency / get(names.rope_freqs, (d_k // 2,)).astype(np.float64)
        inverse_frequency.flags.writeable = False
        if config.local_rope_theta:
            local = inverse_frequencies(d_k, config.local_rope_theta)
            local.flags.writeable = False
    else:
        positions = _frozen(get(names.position_embeddings, (config.context_length, d)))
    return DecoderWeights(embeddings, tuple(layers), _frozen(get(names.output_norm, (d,))), head, inverse_frequency,
                          positions, optional(names.output_norm_bias, 0, (d,)), local)


# ---------------------------------------------------------------- pieces of the layer


def rms_norm_heads(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """x (heads, rows, d_k) RMS-normed over all heads of each row together, times γ (heads·d_k,), in
    place: OLMo 2 norms the whole q (and k) projection of a position before splitting it into heads."""
    heads, _, d_k = x.shape
    mean_square = np.einsum("hrd,hrd->r", x, x) * x.dtype.type(1.0 / (heads * d_k))  # (rows,)
    mean_square += x.dtype.type(eps)
    x *= (1.0 / np.sqrt(mean_square)).astype(x.dtype)[None, :, None]
    x *= weight.reshape(heads, 1, d_k)
    return x



def normalize(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, config: DecoderConfig,
              out: np.ndarray | None = None) -> np.ndarray:
    """The block's norm over the last axis: RMSNorm (config.norm "rms") or LayerNorm ("layer"); a copy of x
    where the family has no norm there (``weight`` None: OLMo 2 before attention and MLP)."""
    if weight is None:
        return np.array(x) if out is None else np.copyto(out, x) or out
    if config.norm == "rms":
        return rms_norm(x, weight, config.rms_norm_eps, out=out)
    if out is not None and out is not x:
        np.copyto(out, x)
        x = out
    elif out is None:
        x = np.array(x)
    return layer_norm(x, weight, bias if bias is not None else DTYPE(0.0), config.rms_norm_eps, out=x)


def mlp(x: np.ndarray, w: DecoderLayerWeights, config: DecoderConfig) -> np.ndarray:
    """The block's MLP on x (rows, d) → (rows, d), before the residual (down bias included)."""
    d_ff = config.intermediate_size
    up = x @ w.gate_up_weight  # swiglu: (rows, 2·d_ff) [gate | up]; gelu: (rows, d_ff)
    if w.up_bias is not None:
        up += w.up_bias
    if config.mlp == "swiglu":
        activated = silu_mul(up[:, :d_ff], up[:, d_ff:])  # (rows, d_ff), a view
    elif config.mlp == "geglu":  # Gemma: GELU's tanh form on the gate
        activated = gelu_tanh(up[:, :d_ff], out=up[:, :d_ff])
        activated *= up[:, d_ff:]
    elif config.mlp == "gelu":
        activated = gelu(up, out=up)
    else:
        activated = gelu_tanh(up, out=up)
    out = activated @ w.down_weight  # (rows, d)
    if w.down_bias is not None:
        out += w.down_bias
    return out


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, style: str) -> np.ndarray:
    """engine.core.positional.rotate: the engine's one RoPE (in place)."""
    return rotate(x, cos, sin, style)


def reference_block(h: np.ndarray, w: DecoderLayerWeights, config: DecoderConfig,
                    inverse_frequency: np.ndarray | None = None, layer: int = 0) -> np.ndarray:
    """One decoder layer in float64, plainly: what :func:`forward` computes per layer, fused and
    in row shares (as :func:`engine.core.attention.reference_attention` sits beside ``attend``).
    h: (n, d), positions 0 … n−1 → the layer's output (n, d). Tested against the forward."""
    c, f = config, (lambda a: None if a is None else np.asarray(a, np.float64))  # noqa: E731
    h = np.asarray(h, np.float64)
    n, heads, kv, d_k = len(h), c.num_heads, c.num_kv_heads, c.head_dim

    def norm(x, g, b):
        if g is None:  # no norm there (OLMo 2's pre-norms)
            return x
        if c.norm == "rms":
            return x / np.sqrt((x * x).mean(-1, keepdims=True) + c.rms_norm_eps) * f(g)
        centered = x - x.mean(-1, keepdims=True)
        return centered / np.sqrt((centered ** 2).mean(-1, keepdims=True) + c.rms_norm_eps) * f(g) + (
            0.0 if b is None else f(b))

    def rotate(x):  # (heads, n, d_k) by position
        angles = np.arange(n)[:, None] * np.asarray(inverse_frequency, np.float64)[None]  # (n, d_k/2)
        cos, sin = np.cos(angles), np.sin(angles)
        first, second = (x[..., 0::2], x[..., 1::2]) if c.rope_style == "adjacent" else np.split(x, 2, axis=-1)
        out = np.empty_like(x)
        new_first, new_second = first * cos - second * sin, second * cos + first * sin
        if c.rope_style == "adjacent":
            out[..., 0::2], out[..., 1::2] = new_first, new_second
        else:
            out[..., : d_k // 2], out[..., d_k // 2:] = new_first, new_second
        return out

    x = norm(h, w.attention_norm, w.attention_norm_bias)
    qkv = x @ f(w.qkv_weight) + (0.0 if w.qkv_bias is None else f(w.qkv_bias))
    q = qkv[:, : heads * d_k].reshape(n, heads, d_k).transpose(1, 0, 2)  # (heads, n, d_k)
    k = qkv[:, heads * d_k: (heads + kv) * d_k].reshape(n, kv, d_k).transpose(1, 0, 2)
    v = qkv[:, (heads + kv) * d_k:].reshape(n, kv, d_k).transpose(1, 0, 2)
    if c.qk_norm and c.qk_norm_whole:  # over all heads of a position (OLMo 2)
        q = q / np.sqrt((q * q).mean((0, 2), keepdims=True) + c.rms_norm_eps) * f(w.q_norm).reshape(heads, 1, d_k)
        k = k / np.sqrt((k * k).mean((0, 2), keepdims=True) + c.rms_norm_eps) * f(w.k_norm).reshape(kv, 1, d_k)
    elif c.qk_norm:
        q = q / np.sqrt((q * q).mean(-1, keepdims=True) + c.rms_norm_eps) * f(w.q_norm)
        k = k / np.sqrt((k * k).mean(-1, keepdims=True) + c.rms_norm_eps) * f(w.k_norm)
    if c.positions == "rotary":
        q, k = rotate(q), rotate(k)
    z = np.empty((n, heads, d_k))
    for head in range(heads):
        kv_head = head // (heads // kv)
        scores = q[head] @ k[kv_head].T / math.sqrt(c.query_scale or d_k)  # (n, n)
        if c.attn_softcap:
            scores = c.attn_softcap * np.tanh(scores / c.attn_softcap)
        for i in range(n):
            for j in range(n):
                if j > i or (c.window(layer) and j <= i - c.window(layer)):
                    scores[i, j] = -np.inf
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        z[:, head] = (weights / weights.sum(-1, keepdims=True)) @ v[kv_head]
    attn_out = z.reshape(n, heads * d_k) @ f(w.output_weight) + (0.0 if w.output_bias is None else f(w.output_bias))
    h = h + norm(attn_out, w.post_attention_norm, None)
    x = norm(h, w.ffn_norm, w.ffn_norm_bias)
    up = x @ f(w.gate_up_weight) + (0.0 if w.up_bias is None else f(w.up_bias))
    if c.mlp == "swiglu":
        gate, up = np.split(up, 2, axis=-1)
        activated = gate / (1.0 + np.exp(-gate)) * up
    elif c.mlp == "geglu":
        gate, up = np.split(up, 2, axis=-1)
        activated = 0.5 * gate * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (gate + 0.044715 * gate ** 3))) * up
    elif c.mlp == "gelu":
        activated = up * 0.5 * (1.0 + np.vectorize(math.erf)(up / math.sqrt(2.0)))
    else:
        activated = 0.5 * up * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (up + 0.044715 * up ** 3)))
    return h + norm(activated @ f(w.down_weight) + (0.0 if w.down_bias is None else f(w.down_bias)),
                    w.post_ffn_norm, None)


# ---------------------------------------------------------------- the trace


@dataclass(frozen=True, eq=False)
class DecoderLayerView:
    """One layer of a :class:`DecoderTrace`, named as BERT's layer traces (views, no copies)."""

    index: int
    q: np.ndarray  # (heads, n, d_k) after RoPE
    k: np.ndarray  # (kv_heads, n, d_k) after RoPE
    v: np.ndarray  # (kv_heads, n, d_k)
    weights: np.ndarray  # (heads, n, n) attention probabilities
    head_outputs: np.ndarray  # (heads, n, d_k)
    output: np.ndarray  # (n, d) the layer's output = hidden_states[index + 1] (after the final norm for the last)


@dataclass(frozen=True, eq=False)
class DecoderTrace(TraceBase):
    """The frozen trace of one decoder forward pass over one text. All arrays are read-only.
    The model contract's Trace (engine/models/contract.py)."""

    config: DecoderConfig
    text: str
    tokens: tuple[Token, ...]  # pieces shown as readable text, with char spans into ``text``
    input_ids: np.ndarray  # (n,) int64
    attentions: np.ndarray  # (layers, heads, n, n) attention probabilities (0 above the diagonal)
    hidden_states: np.ndarray  # (layers + 1, n, d): embeddings, each layer's output, the last after the final norm
    q: np.ndarray  # (layers, heads, n, d_k) after RoPE, the file's row layout
    k: np.ndarray  # (layers, kv_heads, n, d_k) after RoPE: the KV cache
    v: np.ndarray  # (layers, kv_heads, n, d_k)
    head_outputs: np.ndarray  # (layers, heads, n, d_k) weights · v, zeros for ablated heads
    next_token_logits: np.ndarray  # (vocab,) logits for the token after the last position
    ablate: frozenset = frozenset()  # (layer, head) pairs whose output was zeroed before W_O
    reused_positions: int = 0  # positions copied from a previous trace (the KV cache), not computed
    hooked: bool = False  # made with hooks other than an ablation, or part of the layers: never a KV cache
    estimated_bytes: int = 0
    seconds: float = 0.0

    def __post_init__(self) -> None:
        freeze_arrays(self)

    def layer_values(self) -> list[np.ndarray]:
        return list(self.v)  # (kv_heads, n, d_k) each

    @property
    def nbytes(self) -> int:
        return sum(getattr(self, name).nbytes for name in TRACE_ARRAYS)

    @cached_property
    def layers(self) -> tuple[DecoderLayerView, ...]:
        """Per-layer views (``trace.layers[l].weights`` …), as engine.models.bert.BertTrace has."""
        return tuple(DecoderLayerView(l, self.q[l], self.k[l], self.v[l], self.attentions[l], self.head_outputs[l],
                                      self.hidden_states[l + 1]) for l in range(self.config.num_layers))

    def layer_scores(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, scaled) of one layer, each (heads, n, n): q·kᵀ and q·kᵀ/√d_k with −∞
        above the diagonal, recomputed from the kept q and k (not stored: see the module doc)."""
        c = self.config
        if c.plain_attention(layer):
            stages = attend(self.q[layer], self.k[layer], self.v[layer], divisor=c.score_divisor,
                            mask=causal_mask(self.n))
            return stages["scores"], stages["scaled"]
        group = c.num_heads // c.num_kv_heads
        keys = np.repeat(self.k[layer], group, axis=0)  # (heads, n, d_k)
        scores = self.q[layer] @ keys.transpose(0, 2, 1)  # (heads, n, n) before capping and masking
        scores[:, window_mask(self.n, self.n)] = -np.inf
        scaled = attend_features(self.q[layer], self.k[layer], self.v[layer], divisor=c.score_divisor,
                                 window=c.window(layer), softcap=c.attn_softcap)["scaled"]
        return scores, scaled


TRACE_ARRAYS = ("input_ids", "attentions", "hidden_states", "q", "k", "v", "head_outputs", "next_token_logits")


def estimate_forward_bytes(n: int, config: DecoderConfig, new: int | None = None) -> int:
    """Bytes of the trace of ``n`` tokens plus the largest temporaries (``new`` positions computed).

    Kept: attentions (layers·heads·n²), hidden states ((layers + 1)·n·d), q and head_outputs
    (2·layers·heads·n·d_k), k and v (2·layers·kv_heads·n·d_k). Temporaries of one layer: scores
    and scaled (2·heads·new·n) and the softmax's row maxima, q|k|v before splitting, the MLP's
    gate | up (2·new·d_ff) and a few (new, d) rows.
    """
    new = n if new is None else new
    c = config
    kept = (c.num_layers * c.num_heads * n * n + (c.num_layers + 1) * n * c.hidden_size
            + c.num_layers * (2 * c.num_heads + 2 * c.num_kv_heads) * n * c.head_dim + c.vocab_size)
    temporary = (2 * c.num_heads * new * n + 2 * new * c.intermediate_size
                 + new * (c.num_heads + 2 * c.num_kv_heads) * c.head_dim * 2 + 6 * new * c.hidden_size)
    return 4 * (kept + temporary)


def longest_text(config: DecoderConfig, memory_budget: int = DEFAULT_MEMORY_BUDGET) -> int:
    """The most tokens whose trace fits ``memory_budget`` (and the model's context length)."""
    low, high = 1, config.context_length
    if estimate_forward_bytes(1, config) > memory_budget:
        return 0
    while low < high:  # largest n with estimate ≤ budget
        middle = (low + high + 1) // 2
        if estimate_forward_bytes(middle, config) <= memory_budget:
            low = middle
        else:
            high = middle - 1
    return low


def shared_prefix(previous: DecoderTrace | None, ids: np.ndarray, ablate: frozenset,
                  config: DecoderConfig | None = None) -> int:
    """How many leading positions of ``ids`` the previous trace already computed (0: none, also
    when it was made with other ablated heads or by a model of another configuration)."""
    if (previous is None or previous.hooked or previous.ablate != ablate
            or (config is not None and previous.config != config)):
        return 0
    limit = min(previous.n, len(ids))
    differ = np.flatnonzero(previous.input_ids[:limit] != ids[:limit])
    return int(differ[0]) if differ.size else limit


# ---------------------------------------------------------------- the forward pass


def forward(
    weights: LlamaWeights,
    config: DecoderConfig,
    input_ids: Sequence[int] | np.ndarray,
    tokens: Sequence[Token] | None = None,
    *,
    text: str = "",
    ablate=frozenset(),
    previous: DecoderTrace | None = None,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    progress: Progress | None = None,
    hooks: HookRun | None = None,
    start_at_layer: int | None = None,
    resid: np.ndarray | None = None,
    stop_at_layer: int | None = None,
    prefix: int | None = None,
) -> DecoderTrace:
    """Run the decoder over ``input_ids`` and return the full :class:`DecoderTrace`.

    ``ablate``: (layer, head) pairs whose head output is zeroed before W_O. ``previous``: a
    trace (same weights, same ``ablate``) whose leading ids agree with these: that prefix is
    copied, not computed. ``progress(fraction, message)`` after each layer. Raises
    :class:`EngineError` for bad ids, a text longer than the context, or a trace over the budget.

    ``hooks``: the run's hook points (:mod:`engine.core.hooks`; None: nothing listens, every layer runs
    its fast path). hook_q / hook_k are before RoPE, hook_rot_q / hook_rot_k after it (as
    TransformerLens), in transformers' order of a head's dimensions. A run with hooks other than an ablation computes
    every position (no KV cache) and its trace is never reused as one. ``start_at_layer`` with
    ``resid`` (n, d): begin at blocks.{start}.hook_resid_pre with that residual; ``stop_at_layer``:
    run the layers below it only; the arrays of layers not run are NaN, and so are the logits of
    a stopped run.

    ``prefix`` (activation patching, engine.analysis.patching): positions 0 … prefix − 1 are copied from
    ``previous`` whatever the hooks — the caller vouches that nothing before ``prefix`` changed
    (a causal model's positions before a patched one never see it); ``resid`` rows before it are
    then not read. Only with no hooks other than an ablation.
    """
    started = time.perf_counter()
    ids = np.asarray(input_ids)
    if ids.ndim != 1 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer):
        raise EngineError("input_ids must be a non-empty list of whole numbers", field="text")
    ids = ids.astype(np.int64)
    n, d, c = len(ids), config.hidden_size, config
    if n > c.context_length:
        raise EngineError("{n} tokens is more than the model's {limit} positions: shorten the text",
                          field="text", n=n, limit=c.context_length)
    if ids.min() < 0 or ids.max() >= c.vocab_size:
        raise EngineError("input ids must lie in 0 … {top}", field="text", top=c.vocab_size - 1)
    tokens = tuple(Token(str(i), 0, 0) for i in ids) if tokens is None else tuple(tokens)
    if len(tokens) != n:
        raise EngineError("{count} tokens for {n} input ids", field="text", count=len(tokens), n=n)
    ablate = check_ablation(ablate, config.num_layers, config.num_heads)
    if ablate:  # switching heads off is a hook on hook_z
        hooks = hooks_with_ablation(hooks, hook_names(config), ablate)
    first, last = layer_range(c.num_layers, start_at_layer, resid, stop_at_layer, (n, d))
    hooked = (hooks is not None and hooks.user_hooks) or first > 0 or last < c.num_layers - 1
    # every position through the hooks when somebody reads or edits them (the cache holds whole arrays)
    whole = hooked or (hooks is not None and bool(hooks.cache_names))
    start = 0 if whole else shared_prefix(previous, ids, ablate, config)
    if prefix is not None:  # the caller's promise (see the docstring): rows before it are previous's
        if previous is None or not 0 <= prefix < n or previous.n != n or (hooks is not None and hooks.user_hooks):
            raise EngineError("prefix {prefix} needs a previous trace of the same {n} tokens and no hooks",
                              field="hooks", prefix=prefix, n=n)
        start = int(prefix)
    if start == n:  # nothing new (the text was shortened, or is the same): the prefix of the old trace
        start = n - 1  # recompute the last position so that its next-token logits are fresh and exact
    new = n - start
    estimate = estimate_forward_bytes(n, config, new)
    check_trace_budget(n, estimate, memory_budget, lambda: longest_text(config, memory_budget))

    heads, kv, d_k, layers = c.num_heads, c.num_kv_heads, c.head_dim, c.num_layers
    eps, divisor = c.rms_norm_eps, c.score_divisor
    attentions = np.zeros((layers, heads, n, n), DTYPE)  # (layers, heads, n, n), 0 above the diagonal
    hidden_states = np.empty((layers + 1, n, d), DTYPE)
    q_all = np.empty((layers, heads, n, d_k), DTYPE)
    k_all = np.empty((layers, kv, n, d_k), DTYPE)
    v_all = np.empty((layers, kv, n, d_k), DTYPE)
    head_outputs_all = np.empty((layers, heads, n, d_k), DTYPE)
    if start:  # the KV cache: every array of the shared prefix, copied
        p = start
        attentions[:, :, :p, :p] = previous.attentions[:, :, :p, :p]
        hidden_states[:, :p] = previous.hidden_states[:, :p]
        q_all[:, :, :p], k_all[:, :, :p], v_all[:, :, :p] = (previous.q[:, :, :p], previous.k[:, :, :p],
                                                             previous.v[:, :, :p])
        head_outputs_all[:, :, :p] = previous.head_outputs[:, :, :p]

    rotary = c.positions == "rotary"
    cos, sin = rope_tables(weights.inverse_frequency, start, new) if rotary else (None, None)  # (new, d_k/2)
    if rotary and weights.local_inverse_frequency is not None:  # Gemma 3's windowed layers: their own base
        local_tables = rope_tables(weights.local_inverse_frequency, start, new)
    rows_new = slice(start, n)
    if resid is None:
        h = weights.token_embeddings[ids[start:]]  # (new, d) the residual stream, a new array
        if c.embed_scale:  # Gemma: × √d_model, rounded to float32 first as transformers does
            h *= DTYPE(math.sqrt(d))
        if hooks is not None:
            hooks("hook_embed", h)
        if c.positions == "learned":  # GPT-2: a learned vector per position, added
            positional = np.array(weights.position_embeddings[start:n])  # (new, d)
            if hooks is not None:
                hooks("hook_pos_embed", positional)
            h += positional
    else:  # resumed at blocks.{first}.hook_resid_pre: nothing below it is computed
        h = np.array(resid[start:], dtype=DTYPE)
        for array in (attentions, q_all, k_all, v_all, head_outputs_all):
            array[:first] = np.nan
        hidden_states[:first] = np.nan
    hidden_states[first, rows_new] = h
    for array in (attentions, q_all, k_all, v_all, head_outputs_all):
        array[last + 1:] = np.nan
    hidden_states[last + 2:] = np.nan
    q_width, kv_width = heads * d_k, kv * d_k

    # Few new positions: OpenBLAS's own threads split each matmul's columns (each of our threads would
    # read every weight: the row slices are too short to share them); many: our threads split the rows.
    with engine_threads(new >= OWN_THREADS_FROM):
        for index, w in enumerate(weights.layers):
            if not first <= index <= last:
                continue
            qkv_heads = np.empty((heads + 2 * kv, new, d_k), DTYPE)  # (heads + 2·kv, new, d_k)
            wanted = hooks.at(index) if hooks is not None else frozenset()
            edit = hooks.local(index) if wanted else None  # None: the fast path, nothing listens here
            if edit is not None and "hook_resid_pre" in wanted:
                edit("hook_resid_pre", h)

            # With hooks here (``edit``), the same steps run once over all rows, each hook point between them.
            cos_l, sin_l = (local_tables if rotary and weights.local_inverse_frequency is not None and c.window(index)
                            else (cos, sin))

            def project(rows: slice, h=h, w=w, qkv_heads=qkv_heads, edit=edit, wanted=wanted, cos=cos_l,
                        sin=sin_l) -> None:
                if edit is not None and w.attention_norm is not None and not wanted.isdisjoint(LN1_POINTS):
                    # scale, x / scale, then · γ, each at its hook point
                    x = norm_steps(h[rows], w.attention_norm, w.attention_norm_bias, eps, c.norm, edit, "ln1")
                else:
                    x = normalize(h[rows], w.attention_norm, w.attention_norm_bias, c)  # (rows, d)
                project_heads(x, w.qkv_weight, w.qkv_bias, qkv_heads[:, rows])  # (heads + 2·kv, rows, d_k)
                if w.q_norm is not None and c.qk_norm_whole:  # OLMo 2: over all heads of a position
                    rms_norm_heads(qkv_heads[:heads, rows], w.q_norm, eps)
                    rms_norm_heads(qkv_heads[heads: heads + kv, rows], w.k_norm, eps)
                elif w.q_norm is not None:  # Qwen3, Gemma 3: each head's q and k RMS-normed over d_k, before RoPE
                    rms_norm(qkv_heads[:heads, rows], w.q_norm, eps, out=qkv_heads[:heads, rows])
                    rms_norm(qkv_heads[heads: heads + kv, rows], w.k_norm, eps, out=qkv_heads[heads: heads + kv, rows])
                if edit is not None:  # (n, heads or kv, d_k) views of the heads layout, before RoPE
                    for local, part in (("attn.hook_q", qkv_heads[:heads]), ("attn.hook_k", qkv_heads[heads: heads + kv]),
                                        ("attn.hook_v", qkv_heads[heads + kv:])):
                        if local in wanted:
                            edit(local, part.transpose(1, 0, 2))
                if not rotary:
                    return
                apply_rope(qkv_heads[: heads + kv, rows], cos[rows], sin[rows], c.rope_style)
                if edit is not None:
                    for local, part in (("attn.hook_rot_q", qkv_heads[:heads]),
                                        ("attn.hook_rot_k", qkv_heads[heads: heads + kv])):
                        if local in wanted:
                            edit(local, part.transpose(1, 0, 2))

            if edit is not None:
                project(slice(None))
            else:
                for_rows(new, project, numbers=new * d * (q_width + 2 * kv_width))
            q_all[index, :, rows_new] = qkv_heads[:heads]
            k_all[index, :, rows_new] = qkv_heads[heads: heads + kv]
            v_all[index, :, rows_new] = qkv_heads[heads + kv:]
            # weights and head outputs, the causal triangle only (attentions is zeros above it); the
            # scaled scores copied out only for a hook on them (the same numbers either way)
            scaled = (np.empty((heads, new, n), DTYPE) if edit is not None and "attn.hook_attn_scores" in wanted
                      else None)
            if c.plain_attention(index):
                stages = attend_weights(qkv_heads[:heads], k_all[index], v_all[index], divisor=divisor, causal=True,
                                        weights_out=attentions[index, :, rows_new, :], zeroed_above=True,
                                        scaled_out=scaled)
            else:  # a sliding window or soft-capped scores (engine/models/block_features.py)
                stages = attend_features(qkv_heads[:heads], k_all[index], v_all[index], divisor=divisor,
                                         window=c.window(index), softcap=c.attn_softcap,
                                         weights_out=attentions[index, :, rows_new, :], scaled_out=scaled)
            head_outputs = stages["head_outputs"]  # (heads, new, d_k)
            if edit is not None:
                attention_hooks(edit, wanted, stages, v_all[index], softmax_into)
                if "attn.hook_z" in wanted:  # switched-off heads (ablate) reach W_O as zeros here
                    edit("attn.hook_z", head_outputs.transpose(1, 0, 2))
            head_outputs_all[index, :, rows_new] = head_outputs
            del stages  # the scores and scaled scores of this layer are not kept (module doc)

            def rest_of_layer(rows: slice, h=h, w=w, head_outputs=head_outputs, edit=edit, wanted=wanted) -> None:
                concat = merge_heads(head_outputs[:, rows])  # (rows, heads·d_k)
                attn_out = concat @ w.output_weight  # (rows, d)
                if w.output_bias is not None:
                    attn_out += w.output_bias
                if w.post_attention_norm is not None:  # Gemma, OLMo 2: the output normed before it is added
                    rms_norm(attn_out, w.post_attention_norm, eps, out=attn_out)
                if edit is not None:
                    if "hook_attn_out" in wanted:
                        edit("hook_attn_out", attn_out)
                h[rows] += attn_out
                if edit is not None and "hook_resid_mid" in wanted:
                    edit("hook_resid_mid", h)
                if edit is not None and w.ffn_norm is not None and not wanted.isdisjoint(LN2_POINTS):
                    x = norm_steps(h[rows], w.ffn_norm, w.ffn_norm_bias, eps, c.norm, edit, "ln2")
                else:
                    x = normalize(h[rows], w.ffn_norm, w.ffn_norm_bias, c)  # (rows, d)
                mlp_out = mlp(x, w, c)  # (rows, d)
                if w.post_ffn_norm is not None:
                    rms_norm(mlp_out, w.post_ffn_norm, eps, out=mlp_out)
                if edit is not None and "hook_mlp_out" in wanted:
                    edit("hook_mlp_out", mlp_out)
                h[rows] += mlp_out
                if edit is not None and "hook_resid_post" in wanted:
                    edit("hook_resid_post", h)

            if edit is not None:
                rest_of_layer(slice(None))
            else:
                for_rows(new, rest_of_layer, numbers=new * d * (q_width + 3 * c.intermediate_size))
            if index + 1 < layers:
                hidden_states[index + 1, rows_new] = h
            if progress is not None:
                progress((index + 1) / layers, "layer {index} of {layers}".format(index=index + 1, layers=layers))
    if last == layers - 1:
        final = hidden_states[layers, rows_new]  # transformers' last hidden state: after the final norm
        if hooks is not None and any(name in hooks for name in FINAL_NORM_POINTS):
            norm_steps(h, weights.output_norm, weights.output_norm_bias, eps, c.norm, hooks, "ln_final", out=final)
        else:
            normalize(h, weights.output_norm, weights.output_norm_bias, c, out=final)
        logits = final_logits(weights.output_head @ hidden_states[layers, n - 1], c)  # (vocab,): the last row only
    else:  # stopped: hidden_states[last + 1] holds the residual entering the first layer not run
        hidden_states[last + 1, rows_new] = h
        logits = np.full(c.vocab_size, np.nan, DTYPE)
    return DecoderTrace(
        config=config, text=text, tokens=tokens, input_ids=ids, attentions=attentions, hidden_states=hidden_states,
        q=q_all, k=k_all, v=v_all, head_outputs=head_outputs_all, next_token_logits=logits, ablate=ablate,
        reused_positions=start, hooked=hooked, estimated_bytes=estimate, seconds=time.perf_counter() - started,
    )


@functools.lru_cache(maxsize=16)  # configs are frozen: the names are made once per model
def hook_names(config: DecoderConfig) -> tuple[str, ...]:
    """The decoder's hook points (engine.core.hooks): q and k before RoPE (after a q/k norm), rot_q and
    rot_k after it; hook_pos_embed with learned positions; no ln1 / ln2 points where the block has no
    norm before attention and MLP (OLMo 2 norms only their outputs)."""
    points = DECODER_BLOCK_POINTS if config.pre_norms else tuple(
        point for point in DECODER_BLOCK_POINTS if point not in LN1_POINTS | LN2_POINTS)
    if config.positions == "rotary":
        return ("hook_embed", *block_names(config.num_layers, (*points, *ROTARY_POINTS)), *FINAL_NORM_POINTS)
    return ("hook_embed", "hook_pos_embed", *block_names(config.num_layers, points), *FINAL_NORM_POINTS)


# ---------------------------------------------------------------- reading the output


def logits_at(weights: LlamaWeights, config: DecoderConfig, trace: DecoderTrace, position: int = -1) -> np.ndarray:
    """(vocab,) logits of the token after ``position``: the output head on that row only."""
    position = _position(trace, position)
    if position == trace.n - 1:
        return trace.next_token_logits
    return final_logits(weights.output_head @ trace.hidden_states[-1, position], config)


def final_logits(logits: np.ndarray, config: DecoderConfig) -> np.ndarray:
    """The output head's logits, soft-capped where the family caps them (Gemma 2), in place."""
    return soft_cap(logits, config.final_softcap) if config.final_softcap else logits


def _position(trace: DecoderTrace, position: int) -> int:
    if not -trace.n <= position < trace.n:
        raise EngineError("position {position} is outside the text's {n} tokens", field="position",
                          position=position, n=trace.n)
    return position % trace.n


@dataclass(frozen=True, eq=False)
class LogitLens:
    """For one position: what each layer's residual stream would predict (nostalgebraist 2020).

    Row l reads hidden_states[l] through the final RMSNorm and the output head (row ``layers``
    is the model's own output)."""

    position: int
    top_ids: np.ndarray  # (layers + 1, k) most likely next tokens, best first
    top_probabilities: np.ndarray  # (layers + 1, k)
    final_id: int  # the model's own top-1 at this position
    final_probability: np.ndarray  # (layers + 1,) probability of final_id read at each layer

    def __post_init__(self) -> None:
        freeze_arrays(self)


def logit_lens(weights: LlamaWeights, config: DecoderConfig, trace: DecoderTrace, position: int = -1,
               top_k: int = 5) -> LogitLens:
    position = _position(trace, position)
    residuals = np.array(trace.hidden_states[:, position])  # (layers + 1, d)
    logits = np.concatenate([lens_logits(weights, config, residuals[:-1]),
                             lens_logits(weights, config, residuals[-1:], normed=True)])  # (layers + 1, vocab)
    probabilities = softmax64(logits)  # (layers + 1, vocab)
    k = max(1, min(int(top_k), config.vocab_size))
    top = np.argsort(-probabilities, axis=1, kind="stable")[:, :k]  # (layers + 1, k)
    final_id = int(top[-1, 0])
    return LogitLens(position, top, np.take_along_axis(probabilities, top, axis=1), final_id,
                     probabilities[:, final_id].copy())


def lens_logits(weights: LlamaWeights, config: DecoderConfig, residuals: np.ndarray, *,
                normed: bool = False) -> np.ndarray:
    """(rows, vocab) float32 logits of residual-stream rows (rows, d) read as the last layer's: through
    the final norm (skipped when ``normed``: the last hidden states have been through it) and the
    output head, soft-capped where the family caps. The logit lens of one position or of a layer."""
    rows = residuals if normed else normalize(residuals, weights.output_norm, weights.output_norm_bias, config)
    return final_logits(rows @ weights.output_head.T, config)


# ---------------------------------------------------------------- sampling


def reshape_probabilities(logits: np.ndarray, *, temperature: float = 1.0, top_k: int = 0,
                          top_p: float = 1.0) -> np.ndarray:
    """(vocab,) float64 probabilities after temperature, top-k and top-p (nucleus), as
    transformers' logits processors apply them: softmax(logits / T); keep the k most likely
    (0 = all); keep the smallest set of most likely tokens whose mass reaches top_p; renormalise.
    Temperature 0 is greedy: probability 1 on the most likely token."""
    temperature, top_p = float(temperature), float(top_p)
    if not (math.isfinite(temperature) and temperature >= 0.0):
        raise EngineError("temperature must be 0 (greedy) or positive; got {value}", field="temperature",
                          value=temperature)
    if not 0.0 < top_p <= 1.0:
        raise EngineError("top-p must lie in (0, 1]; got {value}", field="top_p", value=top_p)
    if isinstance(top_k, bool) or int(top_k) != top_k or top_k < 0:
        raise EngineError("top-k must be a whole number ≥ 0 (0 = all); got {value}", field="top_k", value=top_k)
    logits = np.asarray(logits, dtype=np.float64)
    if temperature == 0.0:
        probabilities = np.zeros_like(logits)
        probabilities[int(np.argmax(logits))] = 1.0
        return probabilities
    probabilities = softmax64(logits / temperature)
    if (top_k == 0 or top_k >= len(probabilities)) and top_p == 1.0:
        return probabilities  # nothing cut: no sort of the whole vocabulary
    order = np.argsort(-probabilities, kind="stable")  # most likely first
    keep = len(order) if top_k == 0 else min(int(top_k), len(order))
    if top_p < 1.0:
        cumulative = np.cumsum(probabilities[order[:keep]])
        keep = min(keep, int(np.searchsorted(cumulative, top_p)) + 1)  # the token that crosses top_p stays
    reshaped = np.zeros_like(probabilities)
    reshaped[order[:keep]] = probabilities[order[:keep]]
    reshaped /= reshaped.sum()
    return reshaped


def pick_token(probabilities: np.ndarray, *, greedy: bool = True, seed: int | None = None,
               rng: np.random.Generator | None = None) -> int:
    """The most likely token (greedy), or one drawn from ``probabilities`` with a seeded generator."""
    if greedy:
        return int(np.argmax(probabilities))
    generator = rng if rng is not None else np.random.default_rng(seed)
    return int(generator.choice(len(probabilities), p=probabilities))
