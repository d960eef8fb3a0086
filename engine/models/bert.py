"""A BERT encoder forward pass in vectorized NumPy float32, keeping every intermediate.

Devlin et al. (2019), "BERT", as implemented by Hugging Face ``transformers``' ``BertModel``
(post-LayerNorm, absolute positions, exact erf-GELU). Row-vector convention throughout:
a layer computes ``x @ W + b`` with ``W`` of shape (in, out), i.e. the transpose of the
PyTorch ``nn.Linear`` weight, stored contiguous once by :func:`prepare_weights`.

Per layer, for the hidden states ``h`` (n, d):

    q | k | v    = h · W_qkv + b_qkv               one fused (d, 3d) matmul
    attention    = engine.core.attention.attend_weights(q, k, v, divisor=√d_k)   all heads at once
    concat       = merge_heads(head_outputs)         (n, d)
    attn_out     = concat · W_O + b_O
    attn_norm    = LayerNorm(attn_out + h)
    intermediate = GELU(attn_norm · W_1 + b_1)       (n, 4d), exact (erf) GELU
    h'           = LayerNorm(intermediate · W_2 + b_2 + attn_norm)

A single unpadded sentence sees every token, so no attention mask is passed (BERT's extended
mask would add 0 everywhere).

GELU and LayerNorm are engine.core.layers' (the exact erf-GELU: its docstring says how erf is made).
"""
from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, fields
from functools import cached_property
from typing import Callable, Mapping, Sequence

import numpy as np

from ..core.hooks import check_ablation
from ..core.attention import softmax_into, attend_weights, merge_heads, project_heads
from ..core.hooks import ENCODER_BLOCK_POINTS, HookRun, attention_hooks, block_names, hooks_with_ablation, layer_range
from ..core.hooks import norm_points
from ..core.parallel import engine_threads, for_rows
from ..core.memory import DEFAULT_MEMORY_BUDGET
from ..core.errors import EngineError
from ..core.memory import check_trace_budget
from ..text.tokenize import Token
from ..core.layers import gelu, layer_norm, norm_steps
from ..core.trace import TraceBase, freeze_arrays, read_only

DTYPE = np.float32

# From this many attention scores (heads·n²; MiniLM's 12 heads: from 105 tokens) a forward runs on the
# engine's threads (engine/core/parallel.py), below it on OpenBLAS's. Measured (2-core AMD EPYC, fresh
# processes alternating, load 1.4-2): 128 tokens 50-53 against 60-62 ms and a third less CPU time (no
# OpenBLAS threads spinning), 96 a draw, 64 35 against 29 ms. The toy engine keeps parallel's 2^19.
ENCODER_THREADED_MIN_SCORES = 1 << 17
# hook points after the attention (TransformerLens's BertBlock placement): with one of them listening,
# the rest of the layer runs over all rows at once (a hook sees a whole array), not in row shares
LN1_POINTS, LN2_POINTS = frozenset(norm_points("ln1")), frozenset(norm_points("ln2"))
ROW_POINTS = frozenset(("hook_attn_out", "hook_resid_mid", *LN1_POINTS, "hook_mlp_out", "hook_resid_post",
                        *LN2_POINTS, "hook_normalized_resid_post"))


@dataclass(frozen=True)
class BertConfig:
    """The architecture numbers of a BERT encoder (Hugging Face ``config.json`` names in brackets)."""

    vocab_size: int = 30522
    hidden_size: int = 384
    num_layers: int = 6  # num_hidden_layers
    num_heads: int = 12  # num_attention_heads
    intermediate_size: int = 1536
    max_positions: int = 512  # max_position_embeddings
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12

    @property
    def d_k(self) -> int:
        return self.hidden_size // self.num_heads

    @classmethod
    def from_dict(cls, data: Mapping) -> "BertConfig":
        """From a Hugging Face BERT ``config.json``; refuses what this forward pass cannot run."""
        try:
            config = cls(
                vocab_size=int(data["vocab_size"]),
                hidden_size=int(data["hidden_size"]),
                num_layers=int(data["num_hidden_layers"]),
                num_heads=int(data["num_attention_heads"]),
                intermediate_size=int(data["intermediate_size"]),
                max_positions=int(data["max_position_embeddings"]),
                type_vocab_size=int(data.get("type_vocab_size", 2)),
                layer_norm_eps=float(data.get("layer_norm_eps", 1e-12)),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise EngineError("config.json is not a BERT configuration: {error!r}", error=error) from None
        if data.get("model_type", "bert") != "bert":
            raise EngineError("config.json describes a {model_type!r} model, not BERT",
                              model_type=data.get('model_type'))
        if data.get("hidden_act", "gelu") != "gelu":
            raise EngineError("only the exact GELU activation is supported, not {activation!r}",
                              activation=data['hidden_act'])
        if data.get("position_embedding_type", "absolute") != "absolute":
            raise EngineError("only absolute position embeddings are supported")
        if config.hidden_size % config.num_heads:
            raise EngineError(
                "hidden_size {hidden_size} is not divisible by {num_heads} heads",
                hidden_size=config.hidden_size, num_heads=config.num_heads
            )
        return config


@dataclass(frozen=True, eq=False)
class BertLayerWeights:
    """One encoder layer's parameters, row-vector convention (x @ W), contiguous float32."""

    qkv_weight: np.ndarray  # (d, 3d): columns [W_Q | W_K | W_V]
    qkv_bias: np.ndarray  # (3d,)
    output_weight: np.ndarray  # (d, d) W_O
    output_bias: np.ndarray  # (d,)
    attention_norm_weight: np.ndarray  # (d,) γ of the LayerNorm after attention
    attention_norm_bias: np.ndarray  # (d,) β
    intermediate_weight: np.ndarray  # (d, d_ff) W_1
    intermediate_bias: np.ndarray  # (d_ff,)
    ffn_output_weight: np.ndarray  # (d_ff, d) W_2
    ffn_output_bias: np.ndarray  # (d,)
    output_norm_weight: np.ndarray  # (d,) γ of the LayerNorm closing the layer
    output_norm_bias: np.ndarray  # (d,)


@dataclass(frozen=True, eq=False)
class BertWeights:
    """Every parameter of a BERT encoder, ready for :func:`forward` (read-only arrays)."""

    word_embeddings: np.ndarray  # (vocab, d)
    position_embeddings: np.ndarray  # (max_positions, d)
    token_type_embeddings: np.ndarray  # (type_vocab, d)
    embedding_norm_weight: np.ndarray  # (d,)
    embedding_norm_bias: np.ndarray  # (d,)
    layers: tuple[BertLayerWeights, ...]

    @property
    def nbytes(self) -> int:
        total = sum(getattr(self, f.name).nbytes for f in fields(self) if f.name != "layers")
        return total + sum(getattr(layer, f.name).nbytes for layer in self.layers for f in fields(layer))


def _frozen(array: np.ndarray) -> np.ndarray:
    return read_only(array, DTYPE)


def prepare_weights(tensors: Mapping[str, np.ndarray], config: BertConfig) -> BertWeights:
    """Hugging Face ``BertModel`` tensors (names as in model.safetensors, optionally prefixed
    ``bert.``) → :class:`BertWeights`: linear weights transposed to (in, out) and Q, K, V fused."""
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in tensors else ""
    d, d_ff = config.hidden_size, config.intermediate_size

    def get(name: str, shape: tuple[int, ...]) -> np.ndarray:
        key = prefix + name
        if key not in tensors:
            raise EngineError("the weights file has no tensor {key!r}: is it a BERT model?", key=key)
        value = tensors[key]
        if tuple(value.shape) != shape:
            raise EngineError("tensor {key!r} has shape {actual}, expected {shape}",
                              key=key, actual=tuple(value.shape), shape=shape)
        return value

    layers = []
    for i in range(config.num_layers):
        p = f"encoder.layer.{i}."
        qkv = [get(f"{p}attention.self.{name}.weight", (d, d)) for name in ("query", "key", "value")]
        qkv_bias = [get(f"{p}attention.self.{name}.bias", (d,)) for name in ("query", "key", "value")]
        layers.append(
            BertLayerWeights(
                qkv_weight=_frozen(np.concatenate([w.T for w in qkv], axis=1)),
                qkv_bias=_frozen(np.concatenate(qkv_bias)),
                output_weight=_frozen(get(p + "attention.output.dense.weight", (d, d)).T),
                output_bias=_frozen(get(p + "attention.output.dense.bias", (d,))),
                attention_norm_weight=_frozen(get(p + "attention.output.LayerNorm.weight", (d,))),
                attention_norm_bias=_frozen(get(p + "attention.output.LayerNorm.bias", (d,))),
                intermediate_weight=_frozen(get(p + "intermediate.dense.weight", (d_ff, d)).T),
                intermediate_bias=_frozen(get(p + "intermediate.dense.bias", (d_ff,))),
                ffn_output_weight=_frozen(get(p + "output.dense.weight", (d, d_ff)).T),
                ffn_output_bias=_frozen(get(p + "output.dense.bias", (d,))),
                output_norm_weight=_frozen(get(p + "output.LayerNorm.weight", (d,))),
                output_norm_bias=_frozen(get(p + "output.LayerNorm.bias", (d,))),
            )
        )
    e = "embeddings."
    return BertWeights(
        word_embeddings=_frozen(get(e + "word_embeddings.weight", (config.vocab_size, d))),
        position_embeddings=_frozen(get(e + "position_embeddings.weight", (config.max_positions, d))),
        token_type_embeddings=_frozen(get(e + "token_type_embeddings.weight", (config.type_vocab_size, d))),
        embedding_norm_weight=_frozen(get(e + "LayerNorm.weight", (d,))),
        embedding_norm_bias=_frozen(get(e + "LayerNorm.bias", (d,))),
        layers=tuple(layers),
    )


# Arrays of one layer's trace, in pipeline order.
LAYER_ARRAY_NAMES = (
    "q", "k", "v",
    "scores", "scaled", "weights", "head_outputs",
    "concat", "attention_output", "attention_norm", "intermediate", "output",
)


@dataclass(frozen=True, eq=False)
class BertLayerTrace:
    """Everything one encoder layer computed. All arrays are read-only float32."""

    index: int  # 0-based layer number
    q: np.ndarray  # (heads, n, d_k) = split_heads(h · W_Q + b_Q)
    k: np.ndarray  # (heads, n, d_k)
    v: np.ndarray  # (heads, n, d_k)
    weights: np.ndarray  # (heads, n, n) softmax over keys: the attention probabilities
    head_outputs: np.ndarray  # (heads, n, d_k) weights · v
    concat: np.ndarray  # (n, d) heads side by side
    attention_output: np.ndarray  # (n, d) concat · W_O + b_O (before the residual)
    attention_norm: np.ndarray  # (n, d) LayerNorm(attention_output + layer input)
    intermediate: np.ndarray  # (n, d_ff) GELU(attention_norm · W_1 + b_1)
    output: np.ndarray  # (n, d) the layer's output = hidden_states[index + 1]
    # The scores as a hook on hook_attn_scores left them; None: recomputed from q and k on demand
    kept_scores: np.ndarray | None = None
    kept_scaled: np.ndarray | None = None

    def __post_init__(self) -> None:
        freeze_arrays(self)

    # scores and scaled are not stored by the forward (two (heads, n, n) arrays a layer: at 512
    # tokens 25 MB of fresh pages each layer, as much time as the softmax): a view that shows them
    # recomputes this layer's (attend_weights scaled q instead: the same numbers to float32 rounding).
    @cached_property
    def scores(self) -> np.ndarray:
        """(heads, n, n) q · kᵀ."""
        if self.kept_scores is not None:
            return self.kept_scores
        scores = np.matmul(self.q, np.ascontiguousarray(self.k.transpose(0, 2, 1)))
        scores.flags.writeable = False
        return scores

    @cached_property
    def scaled(self) -> np.ndarray:
        """(heads, n, n) scores / √d_k."""
        if self.kept_scaled is not None:
            return self.kept_scaled
        scaled = np.multiply(self.scores, self.scores.dtype.type(1.0 / math.sqrt(self.q.shape[-1])))
        scaled.flags.writeable = False
        return scaled

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in LAYER_ARRAY_NAMES}


@dataclass(frozen=True, eq=False)
class BertTrace(TraceBase):
    """The frozen trace of one BERT forward pass over one sentence. All arrays are read-only.
    The model contract's Trace (engine/models/contract.py); ``next_token_logits`` is None."""

    next_token_logits = None  # an encoder predicts no next token (not a field)

    config: BertConfig
    tokens: tuple[Token, ...]  # word pieces with character spans ([CLS]/[SEP]: empty spans)
    input_ids: np.ndarray  # (n,) int64 vocabulary ids
    layers: tuple[BertLayerTrace, ...]  # one per encoder layer
    embeddings: np.ndarray  # (n, d) word + position + token-type embeddings, before LayerNorm
    hidden_states: np.ndarray  # (layers + 1, n, d): [0] = LayerNorm(embeddings), [l+1] = layer l's output
    cosine_to_layer0: np.ndarray  # (layers + 1, n) cos(hidden_states[l, i], hidden_states[0, i])
    truncated: bool = False  # the text was cut to the model's maximum length
    ablate: frozenset = frozenset()  # (layer, head) pairs switched off in this run
    estimated_bytes: int = 0
    seconds: float = 0.0  # wall time of the forward pass
    text: str = ""  # the text the tokens' spans point into ("" when run on ids alone)

    def __post_init__(self) -> None:
        freeze_arrays(self)

    @cached_property
    def attentions(self) -> np.ndarray:
        """(layers, heads, n, n) attention probabilities: the layers' ``weights`` stacked.

        Built on first access (a copy: 75 MB at 512 tokens) and kept."""
        stacked = np.stack([layer.weights for layer in self.layers])
        stacked.flags.writeable = False
        return stacked

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    @property
    def num_heads(self) -> int:
        return self.config.num_heads

    def layer_values(self) -> list[np.ndarray]:
        return [layer.v for layer in self.layers]

    @property
    def last_hidden_state(self) -> np.ndarray:
        return self.hidden_states[-1]

    @property
    def nbytes(self) -> int:
        """Bytes held by the trace's arrays (arrays sharing memory counted once; ``attentions``
        and the layers' scores only once they have been built)."""
        seen: dict[int, int] = {}
        arrays = [getattr(self, f.name) for f in fields(self)]
        arrays += [getattr(layer, f.name) for layer in self.layers for f in fields(layer)]
        arrays += [layer.__dict__[name] for layer in self.layers for name in ("scores", "scaled")
                   if name in layer.__dict__]  # recomputed on demand, counted once they exist
        arrays.append(self.__dict__.get("attentions"))  # once stacked
        for value in arrays:
            if isinstance(value, np.ndarray):
                base = value
                while isinstance(base.base, np.ndarray):
                    base = base.base
                seen[id(base)] = base.nbytes
        return sum(seen.values())


def estimate_forward_bytes(n: int, config: BertConfig) -> int:
    """Bytes of the trace of ``n`` tokens plus the largest temporaries, float32.

    Per layer: q|k|v before and after splitting heads (6·n·d), kᵀ, head_outputs, concat,
    attention_output, attention_norm, the second FFN product (6·n·d), intermediate and the
    GELU's temporaries (4·n·d_ff), scores, scaled, weights (3·heads·n²) and a softmax
    temporary (heads·n²). Outside the layers: embeddings and temporaries (3·n·d), hidden
    states ((layers + 1)·n·d) and the stacked ``attentions`` (layers·heads·n²).
    """
    d, h, layers, d_ff = config.hidden_size, config.num_heads, config.num_layers, config.intermediate_size
    per_layer = 12 * n * d + 4 * n * d_ff + 4 * h * n * n
    numbers = layers * per_layer + (3 + layers + 1) * n * d + layers * h * n * n
    return 4 * numbers


def forward(
    weights: BertWeights,
    config: BertConfig,
    input_ids: Sequence[int] | np.ndarray,
    tokens: Sequence[Token] | None = None,
    *,
    token_type_ids: Sequence[int] | np.ndarray | None = None,
    truncated: bool = False,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    progress: Callable[[float, str], None] | None = None,
    ablate: frozenset[tuple[int, int]] = frozenset(),
    hooks: HookRun | None = None,
    start_at_layer: int | None = None,
    resid: np.ndarray | None = None,
    stop_at_layer: int | None = None,
    text: str = "",
) -> BertTrace:
    """Run the encoder on one sentence's ``input_ids`` and return the full :class:`BertTrace`.

    ``tokens`` label the positions (default: the ids as text). ``progress(fraction, message)``
    is called after each layer. ``ablate``: (layer, head) pairs switched off, their head outputs
    zeroed before W_O (:mod:`engine.analysis.ablation`; the trace's ``head_outputs`` show the zeros, its
    ``weights`` what the head would have attended). Raises :class:`EngineError` for ids out of
    range, more positions than the model has, a head out of range, or a trace over
    ``memory_budget`` bytes.

    ``hooks``: the run's hook points (:mod:`engine.core.hooks`; None: nothing listens, every layer
    runs its fast path). ``start_at_layer`` with ``resid`` (n, d): begin at
    blocks.{start}.hook_resid_pre with that residual (the layers below are not run: their
    arrays in the trace are NaN); ``stop_at_layer``: run the layers below it only (the arrays
    of the layers from it up are NaN).
    """
    started = time.perf_counter()
    ids = np.asarray(input_ids)
    if ids.ndim != 1 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer):
        raise EngineError("input_ids must be a non-empty list of whole numbers")
    n, d = len(ids), config.hidden_size
    if n > config.max_positions:
        raise EngineError(
            "{n} tokens is more than the model's {max_positions} positions: shorten the text", n=n, max_positions=config.max_positions
        )
    if ids.min() < 0 or ids.max() >= config.vocab_size:
        raise EngineError("input ids must lie in 0 … {last}", last=config.vocab_size - 1)
    types = np.zeros(n, dtype=np.int64) if token_type_ids is None else np.asarray(token_type_ids)
    if types.shape != (n,) or types.min() < 0 or types.max() >= config.type_vocab_size:
        raise EngineError("token_type_ids must be {n} numbers in 0 … {last}", n=n, last=config.type_vocab_size - 1)
    if tokens is None:
        tokens = [Token(str(i), 0, 0) for i in ids]
    tokens = tuple(tokens)
    if len(tokens) != n:
        raise EngineError("{count} tokens for {n} input ids", count=len(tokens), n=n)
    ablate = check_ablation(ablate, config.num_layers, config.num_heads)
    if ablate:  # switching heads off is a hook on hook_z
        hooks = hooks_with_ablation(hooks, hook_names(config), ablate)
    first, last = layer_range(config.num_layers, start_at_layer, resid, stop_at_layer, (n, config.hidden_size))
    estimate = check_trace_budget(n, estimate_forward_bytes(n, config), memory_budget)

    heads, d_k = config.num_heads, config.d_k
    eps = config.layer_norm_eps
    divisor = math.sqrt(d_k)

    # Embeddings, summed in transformers' order: (word + token type) + position.
    hidden_states = np.empty((config.num_layers + 1, n, d), dtype=DTYPE)
    if resid is None:
        embeddings = weights.word_embeddings[ids]  # (n, d), a new array
        if hooks is None:
            embeddings += weights.token_type_embeddings[types]
            embeddings += weights.position_embeddings[:n]
        else:  # each part through its hook point, summed in the same order
            hooks("hook_embed", embeddings)
            embeddings += hooks("hook_token_type_embed", np.array(weights.token_type_embeddings[types]))
            embeddings += hooks("hook_pos_embed", np.array(weights.position_embeddings[:n]))
        layer_norm(embeddings, weights.embedding_norm_weight, weights.embedding_norm_bias, eps, out=hidden_states[0])
    else:  # resumed at blocks.{first}.hook_resid_pre: nothing below it is computed
        embeddings = np.full((n, d), np.nan, DTYPE)
        hidden_states[:first] = np.nan
        hidden_states[first] = resid
    hidden_states[last + 1:] = np.nan

    with engine_threads(heads * n * n >= ENCODER_THREADED_MIN_SCORES):  # one choice per computation
        layer_traces = [_skipped_layer(index, n, config) for index in range(first)]
        d_ff = config.intermediate_size
        projected = None  # this layer's q|k|v heads when the layer below projected them row share by row share
        for index, w in enumerate(weights.layers):
            if not first <= index <= last:
                if index > last:
                    layer_traces.append(_skipped_layer(index, n, config))
                continue
            h = hidden_states[index]  # (n, d)
            wanted = hooks.at(index) if hooks is not None else frozenset()
            edit = hooks.local(index) if wanted else None  # None: the fast path, nothing listens here
            if edit is not None and "hook_resid_pre" in wanted:
                edit("hook_resid_pre", h)
            if projected is not None:
                qkv_heads, projected = projected, None
            else:
                qkv_heads = np.empty((3 * heads, n, d_k), DTYPE)  # (3·heads, n, d_k): q heads, k heads, v heads

                def project(rows: slice, h=h, w=w, qkv_heads=qkv_heads) -> None:
                    project_heads(h[rows], w.qkv_weight, w.qkv_bias, qkv_heads[:, rows])  # one matmul for Q, K, V

                for_rows(n, project, numbers=n * d * 3 * d)
            q, k, v = qkv_heads[:heads], qkv_heads[heads : 2 * heads], qkv_heads[2 * heads :]
            if edit is not None:  # hook_q / hook_k / hook_v: (n, heads, d_k) views of the heads layout
                for local, array in (("attn.hook_q", q), ("attn.hook_k", k), ("attn.hook_v", v)):
                    if local in wanted:
                        edit(local, array.transpose(1, 0, 2))
            # weights and head outputs (scores and scaled only in cache, tile by tile); both copied out
            # for a hook on the scores (the same numbers either way)
            keep = edit is not None and "attn.hook_attn_scores" in wanted
            # Nothing listens in this layer: each share of query rows attends inside rest_of_layer (all
            # keys, every head), one hand-off to the threads a layer instead of two (MiniLM 128 and 512
            # tokens: 2-4 % faster). A hook here sees the attention's arrays whole, computed first.
            by_rows = edit is None
            if by_rows:
                stages = {"weights": np.empty((heads, n, n), DTYPE), "head_outputs": np.empty((heads, n, d_k), DTYPE)}
            else:
                stages = attend_weights(q, k, v, divisor=divisor,
                                        scores_out=np.empty((heads, n, n), DTYPE) if keep else None,
                                        scaled_out=np.empty((heads, n, n), DTYPE) if keep else None)
            head_outputs = stages["head_outputs"]  # (heads, n, d_k)
            if edit is not None:
                attention_hooks(edit, wanted, stages, v, softmax_into)
                if "attn.hook_z" in wanted:  # switched-off heads (ablate) reach W_O as zeros here
                    edit("attn.hook_z", head_outputs.transpose(1, 0, 2))
            concat = np.empty((n, d), DTYPE)
            attention_output = np.empty((n, d), DTYPE)
            attention_norm = np.empty((n, d), DTYPE)
            intermediate = np.empty((n, d_ff), DTYPE)
            # A hook after the attention sees every row at once; one only on the attention's points
            # (hook_z: switched-off heads) leaves the rest of the layer in row shares on the threads.
            rows_edit = edit if edit is not None and not wanted.isdisjoint(ROW_POINTS) else None
            # The next layer's Q|K|V projection is row-wise too: each share of rows projects its own
            # output while it is in cache, one hand-off to the threads fewer a layer (the same row
            # slices as the next layer's own for_rows would take: the same numbers). Not when this
            # layer's rest sees all rows at once, nor when a hook listens in the next layer
            # (hook_resid_pre may change its input).
            following = (weights.layers[index + 1] if rows_edit is None and index < last
                         and (hooks is None or not hooks.at(index + 1)) else None)
            next_qkv = np.empty((3 * heads, n, d_k), DTYPE) if following is not None else None

            # Everything after the attention works row by row: each share of rows goes through
            # W_O, the residual and LayerNorm, the feed-forward and the last LayerNorm.
            # With hooks here after the attention (``rows_edit``), the same steps run once over all rows, each hook point
            # (TransformerLens's BertBlock placement, engine/core/hooks.py) between them.
            def rest_of_layer(rows: slice, h=h, w=w, index=index, head_outputs=head_outputs, concat=concat,
                              attention_output=attention_output, attention_norm=attention_norm,
                              intermediate=intermediate, edit=rows_edit, wanted=wanted, following=following,
                              next_qkv=next_qkv, by_rows=by_rows, q=q, k=k, v=v, weights=stages["weights"]) -> None:
                if by_rows:  # this share's attention; its tiles stay on this thread (the share is the split)
                    with engine_threads(False):
                        attend_weights(q[:, rows], k, v, divisor=divisor, weights_out=weights[:, rows],
                                       head_outputs_out=head_outputs[:, rows])
                merge_heads(head_outputs[:, rows], out=concat[rows])
                np.matmul(concat[rows], w.output_weight, out=attention_output[rows])
                attention_output[rows] += w.output_bias
                if edit is not None and "hook_attn_out" in wanted:
                    edit("hook_attn_out", attention_output)
                np.add(attention_output[rows], h[rows], out=attention_norm[rows])
                if edit is not None and "hook_resid_mid" in wanted:
                    edit("hook_resid_mid", attention_norm)
                if edit is not None and not wanted.isdisjoint(LN1_POINTS):  # scale, (x − μ) / scale, then · γ + β
                    norm_steps(attention_norm, w.attention_norm_weight, w.attention_norm_bias, eps, "layer", edit,
                               "ln1", out=attention_norm)  # every row at once (ROW_POINTS)
                else:
                    layer_norm(attention_norm[rows], w.attention_norm_weight, w.attention_norm_bias, eps,
                               out=attention_norm[rows])
                np.matmul(attention_norm[rows], w.intermediate_weight, out=intermediate[rows])
                gelu(intermediate[rows], out=intermediate[rows], bias=w.intermediate_bias)  # + b_1 in the same blocks
                ffn = intermediate[rows] @ w.ffn_output_weight  # (rows, d)
                ffn += w.ffn_output_bias
                if edit is not None and "hook_mlp_out" in wanted:
                    edit("hook_mlp_out", ffn)
                ffn += attention_norm[rows]
                if edit is not None and "hook_resid_post" in wanted:
                    edit("hook_resid_post", ffn)
                if edit is not None and not wanted.isdisjoint(LN2_POINTS):
                    norm_steps(ffn, w.output_norm_weight, w.output_norm_bias, eps, "layer", edit, "ln2",
                               out=hidden_states[index + 1][rows])
                else:
                    layer_norm(ffn, w.output_norm_weight, w.output_norm_bias, eps, out=hidden_states[index + 1][rows])
                if edit is not None and "hook_normalized_resid_post" in wanted:
                    edit("hook_normalized_resid_post", hidden_states[index + 1])
                if following is not None:
                    project_heads(hidden_states[index + 1][rows], following.qkv_weight, following.qkv_bias,
                                  next_qkv[:, rows])

            if rows_edit is not None:
                rest_of_layer(slice(None))  # a hook sees every row at once
            else:
                for_rows(n, rest_of_layer, numbers=n * d * (d + 2 * d_ff))
            projected = next_qkv
            layer_traces.append(
                BertLayerTrace(
                    index=index, q=q, k=k, v=v, weights=stages["weights"], head_outputs=head_outputs,
                    kept_scores=stages.get("scores"), kept_scaled=stages.get("scaled"), concat=concat, attention_output=attention_output,
                    attention_norm=attention_norm, intermediate=intermediate, output=hidden_states[index + 1],
                )
            )
            if progress is not None:
                progress((index + 1) / config.num_layers, f"layer {index + 1} of {config.num_layers}")

    return BertTrace(
        config=config,
        tokens=tokens,
        input_ids=ids.astype(np.int64),
        layers=tuple(layer_traces),
        embeddings=embeddings,
        hidden_states=hidden_states,
        cosine_to_layer0=_cosine_to_first(hidden_states),
        truncated=truncated,
        ablate=ablate,
        estimated_bytes=estimate,
        seconds=time.perf_counter() - started,
        text=text,
    )


def reference_encoder_block(h: np.ndarray, w: BertLayerWeights, config: BertConfig) -> np.ndarray:
    """One post-LN encoder layer in float64, plainly: what :func:`forward` computes per layer,
    fused and in row shares (as :func:`engine.core.attention.reference_attention` sits beside ``attend``).
    h: (n, d) → the layer's output (n, d). Tested against the forward."""
    f = lambda a: np.asarray(a, np.float64)  # noqa: E731
    h = f(h)
    n, heads, d_k = len(h), config.num_heads, config.d_k

    def norm(x, g, b):
        centered = x - x.mean(-1, keepdims=True)
        return centered / np.sqrt((centered ** 2).mean(-1, keepdims=True) + config.layer_norm_eps) * f(g) + f(b)

    q, k, v = np.split(h @ f(w.qkv_weight) + f(w.qkv_bias), 3, axis=-1)  # (n, d) each
    z = np.empty((n, heads * d_k))
    for head in range(heads):
        cols = slice(head * d_k, (head + 1) * d_k)
        scores = q[:, cols] @ k[:, cols].T / math.sqrt(d_k)  # (n, n), no mask: one unpadded sentence
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        z[:, cols] = (weights / weights.sum(-1, keepdims=True)) @ v[:, cols]
    mid = norm(h + z @ f(w.output_weight) + f(w.output_bias), w.attention_norm_weight, w.attention_norm_bias)
    up = mid @ f(w.intermediate_weight) + f(w.intermediate_bias)
    activated = up * 0.5 * (1.0 + np.vectorize(math.erf)(up / math.sqrt(2.0)))
    return norm(mid + activated @ f(w.ffn_output_weight) + f(w.ffn_output_bias), w.output_norm_weight,
                w.output_norm_bias)


@functools.lru_cache(maxsize=16)  # configs are frozen: the names are made once per model
def hook_names(config: BertConfig) -> tuple[str, ...]:
    """The encoder's hook points (engine.core.hooks; TransformerLens's BertBlock placement)."""
    return ("hook_embed", "hook_pos_embed", "hook_token_type_embed",
            *block_names(config.num_layers, ENCODER_BLOCK_POINTS))


def _skipped_layer(index: int, n: int, config: BertConfig) -> BertLayerTrace:
    """A layer a resumed or stopped run did not compute: NaN everywhere (read-only broadcasts, no memory)."""
    heads, d_k, d = config.num_heads, config.d_k, config.hidden_size
    nan = lambda *shape: np.broadcast_to(DTYPE(np.nan), shape)  # noqa: E731
    return BertLayerTrace(index=index, q=nan(heads, n, d_k), k=nan(heads, n, d_k), v=nan(heads, n, d_k),
                          kept_scores=nan(heads, n, n), kept_scaled=nan(heads, n, n), weights=nan(heads, n, n),
                          head_outputs=nan(heads, n, d_k), concat=nan(n, d), attention_output=nan(n, d),
                          attention_norm=nan(n, d), intermediate=nan(n, config.intermediate_size), output=nan(n, d))


def _cosine_to_first(hidden_states: np.ndarray) -> np.ndarray:
    """(layers + 1, n): cosine of each token's vector at each layer to its vector at layer 0."""
    dots = np.einsum("lnd,nd->ln", hidden_states, hidden_states[0]).astype(np.float64)  # (layers + 1, n)
    norms = np.sqrt(np.einsum("lnd,lnd->ln", hidden_states, hidden_states).astype(np.float64))
    denominator = norms * norms[0]
    cosine = np.divide(dots, denominator, out=np.zeros_like(dots), where=denominator > 0)
    return cosine.astype(DTYPE)
