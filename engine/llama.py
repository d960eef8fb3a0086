"""A Llama-family decoder forward pass in vectorized NumPy float32, keeping every attention.

Touvron et al. (2023) "LLaMA", as llama.cpp runs a GGUF file and Hugging Face ``transformers``'
``LlamaForCausalLM`` / ``Qwen2ForCausalLM`` compute it. Row-vector convention: ``x @ W`` with
``W`` (in, out), the transpose of the file's (out, in) tensors, made contiguous once by
:func:`prepare_weights`. Per layer, for the residual stream ``h`` (n, d):

    x          = RMSNorm(h) · γ_attn                     x / √(mean(x²) + ε)
    q | k | v  = x · W_qkv (+ b_qkv for qwen2)           q: 9 heads, k and v: 3 heads of 64
    q, k       = RoPE(q), RoPE(k) at positions 0 … n−1   θ_i = base^(−2i/d_k)
    attention  = engine.attention.attend(q, k, v, divisor=√d_k, mask=causal)  grouped-query
    h          = h + merge_heads(head_outputs) · W_O     (ablated heads zeroed before W_O)
    h          = h + (SiLU(RMSNorm(h)·γ_ffn · W_gate) ⊙ (RMSNorm(h)·γ_ffn · W_up)) · W_down

then ``RMSNorm(h) · γ_out`` and the output head (the tied embedding for SmolLM2) for logits.

RoPE layout: llama.cpp's converter permutes the rows of W_Q and W_K of ``llama`` models so that
each head's adjacent pairs (2i, 2i+1) rotate together ("adjacent"); ``qwen2`` files keep the
Hugging Face layout, where dimension i pairs with i + d_k/2 ("half"). The q·k products, and so
every attention weight, are the same either way; the trace's q and k are in the file's layout.

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

import math
import time
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Mapping, Sequence

import numpy as np

from .ablation import check_ablation
from .attention import _softmax_into, attend, causal_mask, merge_heads, split_heads
from .config import DEFAULT_MEMORY_BUDGET
from .errors import EngineError
from .gguf_file import DecoderConfig
from .hooks import DECODER_BLOCK_POINTS, ROTARY_POINTS, HookRun, attention_hooks, block_names, hooks_with_ablation
from .hooks import layer_range
from .memory import format_bytes
from .parallel import engine_threads, for_rows, thread_map
from .tokenize import Token
from .trace import freeze_arrays

DTYPE = np.float32
Progress = Callable[[float, str], None]
# New positions from which the forward runs on the engine's threads (BLAS on one thread each);
# below, on OpenBLAS's own threads. Crossover measured at ~210 on 2 idle cores (benchmarks/README.md).
OWN_THREADS_FROM = 208


# ---------------------------------------------------------------- weights


@dataclass(frozen=True, eq=False)
class LlamaLayerWeights:
    """One decoder layer, row-vector convention (x @ W), contiguous read-only float32."""

    attention_norm: np.ndarray  # (d,) γ of the RMSNorm before attention
    qkv_weight: np.ndarray  # (d, (heads + 2·kv_heads)·d_k): columns [W_Q | W_K | W_V]
    qkv_bias: np.ndarray | None  # ((heads + 2·kv_heads)·d_k,) qwen2 only
    output_weight: np.ndarray  # (heads·d_k, d) W_O
    ffn_norm: np.ndarray  # (d,) γ of the RMSNorm before the MLP
    gate_up_weight: np.ndarray  # (d, 2·d_ff): columns [W_gate | W_up]
    down_weight: np.ndarray  # (d_ff, d) W_down


@dataclass(frozen=True, eq=False)
class LlamaWeights:
    """Every parameter of the decoder, ready for :func:`forward`."""

    token_embeddings: np.ndarray  # (vocab, d)
    layers: tuple[LlamaLayerWeights, ...]
    output_norm: np.ndarray  # (d,)
    output_head: np.ndarray  # (vocab, d): logits = normed · headᵀ; the same array as token_embeddings when tied
    inverse_frequency: np.ndarray  # (d_k/2,) float64 RoPE frequencies θ_i

    @property
    def nbytes(self) -> int:
        arrays = [self.token_embeddings, self.output_norm, self.inverse_frequency]
        if self.output_head is not self.token_embeddings:
            arrays.append(self.output_head)
        for layer in self.layers:
            arrays += [a for a in vars(layer).values() if isinstance(a, np.ndarray)]
        return sum(a.nbytes for a in arrays)


def _frozen(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array, dtype=DTYPE)
    array.flags.writeable = False
    return array


def prepare_weights(tensors: Mapping[str, np.ndarray], config: DecoderConfig) -> LlamaWeights:
    """llama.cpp-named float32 tensors (numpy shape (out, in)) → :class:`LlamaWeights`."""
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

    def layer(i: int) -> LlamaLayerWeights:
        p = f"blk.{i}."
        bias = None
        if p + "attn_q.bias" in tensors:
            bias = _frozen(np.concatenate([get(p + "attn_q.bias", (heads * d_k,)), get(p + "attn_k.bias", (kv * d_k,)),
                                           get(p + "attn_v.bias", (kv * d_k,))]))
        return LlamaLayerWeights(
            attention_norm=_frozen(get(p + "attn_norm.weight", (d,))),
            qkv_weight=side_by_side([(p + "attn_q.weight", (heads * d_k, d)), (p + "attn_k.weight", (kv * d_k, d)),
                                     (p + "attn_v.weight", (kv * d_k, d))]),
            qkv_bias=bias,
            output_weight=side_by_side([(p + "attn_output.weight", (d, heads * d_k))]),
            ffn_norm=_frozen(get(p + "ffn_norm.weight", (d,))),
            gate_up_weight=side_by_side([(p + "ffn_gate.weight", (d_ff, d)), (p + "ffn_up.weight", (d_ff, d))]),
            down_weight=side_by_side([(p + "ffn_down.weight", (d, d_ff))]),
        )

    # the transposes are NumPy copies that release the GIL: the layers are shared among the threads
    layers = list(thread_map(layer, range(config.num_layers), "llama-prepare"))
    embeddings = _frozen(get("token_embd.weight", (config.vocab_size, d)))
    head = _frozen(get("output.weight", (config.vocab_size, d))) if "output.weight" in tensors else embeddings
    inverse_frequency = config.rope_theta ** (-np.arange(0, d_k, 2, dtype=np.float64) / d_k)  # (d_k/2,)
    if "rope_freqs.weight" in tensors:  # llama 3.x: per-frequency divisors (llama.cpp's freq_factors)
        inverse_frequency = inverse_frequency / get("rope_freqs.weight", (d_k // 2,)).astype(np.float64)
    inverse_frequency.flags.writeable = False
    return LlamaWeights(embeddings, tuple(layers), _frozen(get("output_norm.weight", (d,))), head, inverse_frequency)


# ---------------------------------------------------------------- pieces of the layer


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float, out: np.ndarray | None = None) -> np.ndarray:
    """x / √(mean(x²) + ε) · γ over the last axis (Zhang & Sennrich 2019), in x's dtype."""
    mean_square = np.einsum("...i,...i->...", x, x)[..., None]  # (..., 1)
    mean_square *= x.dtype.type(1.0 / x.shape[-1])
    mean_square += x.dtype.type(eps)
    np.sqrt(mean_square, out=mean_square)
    np.reciprocal(mean_square, out=mean_square)  # one division per row
    out = np.multiply(x, mean_square, out=out)
    out *= weight
    return out


def rope_tables(inverse_frequency: np.ndarray, start: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """cos, sin (n, d_k/2) float32 of the angles pos · θ_i for positions start … start+n−1
    (angles in float64, as transformers computes them in float32 from float32 positions;
    the difference is below float32 rounding for the positions a trace can hold)."""
    angles = np.arange(start, start + n, dtype=np.float64)[:, None] * inverse_frequency[None, :]
    return np.cos(angles).astype(DTYPE), np.sin(angles).astype(DTYPE)


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, style: str) -> np.ndarray:
    """Rotate x (heads, n, d_k) in place by cos, sin (n, d_k/2): pairs (2i, 2i+1) for
    "adjacent" (llama.cpp's layout), (i, i + d_k/2) for "half" (Hugging Face's)."""
    half = x.shape[-1] // 2
    if style == "adjacent":
        first, second = x[..., 0::2], x[..., 1::2]  # (heads, n, d_k/2) views
    else:
        first, second = x[..., :half], x[..., half:]
    rotated_first = first * cos - second * sin
    second *= cos
    second += first * sin
    first[...] = rotated_first
    return x


def silu_mul(gate: np.ndarray, up: np.ndarray) -> np.ndarray:
    """SiLU(gate) ⊙ up = gate / (1 + e^(−gate)) ⊙ up, in place in ``gate``."""
    denominator = np.negative(gate)
    with np.errstate(over="ignore"):  # e^(88+) → inf → gate / inf = 0, SiLU's limit
        np.exp(denominator, out=denominator)
    denominator += DTYPE(1.0)
    gate /= denominator
    gate *= up
    return gate


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
class DecoderTrace:
    """The frozen trace of one decoder forward pass over one text. All arrays are read-only."""

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

    @property
    def n(self) -> int:
        return len(self.input_ids)

    @property
    def num_layers(self) -> int:
        return self.config.num_layers

    @property
    def num_heads(self) -> int:
        return self.config.num_heads

    @property
    def token_texts(self) -> list[str]:
        return [token.text for token in self.tokens]

    @property
    def nbytes(self) -> int:
        return sum(getattr(self, name).nbytes for name in TRACE_ARRAYS)

    @cached_property
    def layers(self) -> tuple[DecoderLayerView, ...]:
        """Per-layer views (``trace.layers[l].weights`` …), as engine.bert.BertTrace has."""
        return tuple(DecoderLayerView(l, self.q[l], self.k[l], self.v[l], self.attentions[l], self.head_outputs[l],
                                      self.hidden_states[l + 1]) for l in range(self.config.num_layers))

    def layer_scores(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, scaled) of one layer, each (heads, n, n): q·kᵀ and q·kᵀ/√d_k with −∞
        above the diagonal, recomputed from the kept q and k (not stored: see the module doc)."""
        stages = attend(self.q[layer], self.k[layer], self.v[layer], divisor=math.sqrt(self.config.head_dim),
                        mask=causal_mask(self.n))
        return stages["scores"], stages["scaled"]


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

    ``hooks``: the run's hook points (:mod:`engine.hooks`; None: nothing listens, every layer runs
    its fast path). hook_q / hook_k are before RoPE, hook_rot_q / hook_rot_k after it (as
    TransformerLens), in the file's row layout. A run with hooks other than an ablation computes
    every position (no KV cache) and its trace is never reused as one. ``start_at_layer`` with
    ``resid`` (n, d): begin at blocks.{start}.hook_resid_pre with that residual; ``stop_at_layer``:
    run the layers below it only; the arrays of layers not run are NaN, and so are the logits of
    a stopped run.

    ``prefix`` (activation patching, engine.patching): positions 0 … prefix − 1 are copied from
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
    if estimate > memory_budget:
        raise EngineError(
            "{n} tokens need about {need} for the full trace, over the {budget} memory budget: shorten the text "
            "(at most about {longest} tokens fit)", field="text", n=n, need=format_bytes(estimate),
            budget=format_bytes(memory_budget), longest=longest_text(config, memory_budget),
        )

    heads, kv, d_k, layers = c.num_heads, c.num_kv_heads, c.head_dim, c.num_layers
    eps, divisor = c.rms_norm_eps, math.sqrt(d_k)
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

    cos, sin = rope_tables(weights.inverse_frequency, start, new)  # (new, d_k/2)
    mask = causal_mask(new, n)  # (new, n): query i at position start + i
    rows_new = slice(start, n)
    if resid is None:
        h = weights.token_embeddings[ids[start:]]  # (new, d) the residual stream, a new array
        if hooks is not None:
            hooks("hook_embed", h)
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
            def project(rows: slice, h=h, w=w, qkv_heads=qkv_heads, edit=edit, wanted=wanted) -> None:
                x = rms_norm(h[rows], w.attention_norm, eps)  # (rows, d)
                if edit is not None and "ln1.hook_normalized" in wanted:
                    edit("ln1.hook_normalized", x)
                qkv = x @ w.qkv_weight  # (rows, (heads + 2·kv)·d_k)
                if w.qkv_bias is not None:
                    qkv += w.qkv_bias
                split_heads(qkv, heads + 2 * kv, out=qkv_heads[:, rows])
                if edit is not None:  # (n, heads or kv, d_k) views of the heads layout, before RoPE
                    for local, part in (("attn.hook_q", qkv_heads[:heads]), ("attn.hook_k", qkv_heads[heads: heads + kv]),
                                        ("attn.hook_v", qkv_heads[heads + kv:])):
                        if local in wanted:
                            edit(local, part.transpose(1, 0, 2))
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
            stages = attend(qkv_heads[:heads], k_all[index], v_all[index], divisor=divisor, mask=mask,
                            weights_out=attentions[index, :, rows_new, :])
            head_outputs = stages["head_outputs"]  # (heads, new, d_k)
            if edit is not None:
                attention_hooks(edit, wanted, stages, v_all[index], _softmax_into)
                if "attn.hook_z" in wanted:  # switched-off heads (ablate) reach W_O as zeros here
                    edit("attn.hook_z", head_outputs.transpose(1, 0, 2))
            head_outputs_all[index, :, rows_new] = head_outputs
            del stages  # the scores and scaled scores of this layer are not kept (module doc)

            def rest_of_layer(rows: slice, h=h, w=w, head_outputs=head_outputs, edit=edit, wanted=wanted) -> None:
                concat = merge_heads(head_outputs[:, rows])  # (rows, heads·d_k)
                attn_out = concat @ w.output_weight  # (rows, d)
                if edit is not None:
                    if "hook_attn_out" in wanted:
                        edit("hook_attn_out", attn_out)
                h[rows] += attn_out
                if edit is not None and "hook_resid_mid" in wanted:
                    edit("hook_resid_mid", h)
                x = rms_norm(h[rows], w.ffn_norm, eps)  # (rows, d)
                if edit is not None and "ln2.hook_normalized" in wanted:
                    edit("ln2.hook_normalized", x)
                gate_up = x @ w.gate_up_weight  # (rows, 2·d_ff): [gate | up]
                d_ff = c.intermediate_size
                activated = silu_mul(gate_up[:, :d_ff], gate_up[:, d_ff:])  # (rows, d_ff), a view
                mlp_out = activated @ w.down_weight  # (rows, d)
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
        rms_norm(h, weights.output_norm, eps, out=hidden_states[layers, rows_new])  # transformers' last hidden state
        if hooks is not None:
            hooks("ln_final.hook_normalized", hidden_states[layers, rows_new])
        logits = weights.output_head @ hidden_states[layers, n - 1]  # (vocab,): only the last row
    else:  # stopped: hidden_states[last + 1] holds the residual entering the first layer not run
        hidden_states[last + 1, rows_new] = h
        logits = np.full(c.vocab_size, np.nan, DTYPE)
    return DecoderTrace(
        config=config, text=text, tokens=tokens, input_ids=ids, attentions=attentions, hidden_states=hidden_states,
        q=q_all, k=k_all, v=v_all, head_outputs=head_outputs_all, next_token_logits=logits, ablate=ablate,
        reused_positions=start, hooked=hooked, estimated_bytes=estimate, seconds=time.perf_counter() - started,
    )


def hook_names(config: DecoderConfig) -> tuple[str, ...]:
    """The decoder's hook points (engine.hooks): q and k before RoPE, rot_q and rot_k after it."""
    return ("hook_embed", *block_names(config.num_layers, (*DECODER_BLOCK_POINTS, *ROTARY_POINTS)),
            "ln_final.hook_normalized")


# ---------------------------------------------------------------- reading the output


def logits_at(weights: LlamaWeights, config: DecoderConfig, trace: DecoderTrace, position: int = -1) -> np.ndarray:
    """(vocab,) logits of the token after ``position``: the output head on that row only."""
    position = _position(trace, position)
    if position == trace.n - 1:
        return trace.next_token_logits
    return weights.output_head @ trace.hidden_states[-1, position]


def _position(trace: DecoderTrace, position: int) -> int:
    if not -trace.n <= position < trace.n:
        raise EngineError("position {position} is outside the text's {n} tokens", field="position",
                          position=position, n=trace.n)
    return position % trace.n


def softmax64(logits: np.ndarray) -> np.ndarray:
    """Probabilities in float64 (the small ones matter in the bars' tails)."""
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max()
    np.exp(z, out=z)
    z /= z.sum()
    return z


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
    normed = rms_norm(residuals[:-1], weights.output_norm, config.rms_norm_eps)  # the last is normed already
    logits = np.concatenate([normed, residuals[-1:]]) @ weights.output_head.T  # (layers + 1, vocab)
    z = logits.astype(np.float64)
    z -= z.max(axis=1, keepdims=True)
    probabilities = np.exp(z)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    k = max(1, min(int(top_k), config.vocab_size))
    top = np.argsort(-probabilities, axis=1, kind="stable")[:, :k]  # (layers + 1, k)
    final_id = int(top[-1, 0])
    return LogitLens(position, top, np.take_along_axis(probabilities, top, axis=1), final_id,
                     probabilities[:, final_id].copy())


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
