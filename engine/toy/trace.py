"""AttentionResult: the frozen, read-only trace of the toy engine's one computation (engine.toy.compute)
and of every layer view the panels draw (engine/models/bert_view.py, decoder_view.py)."""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from ..core.trace import TraceBase, freeze_arrays
from ..text.tokenize import Token
from .config import AttentionConfig

# Every array of the trace, in pipeline order: the names of the .npz / .json export too.
ARRAY_NAMES = (
    "embeddings", "positional", "x",
    "w_q", "w_k", "w_v", "w_o",
    "q", "k", "v",
    "scores", "scaled", "weights", "head_outputs",
    "concat", "output",
    "diff", "norm_before", "norm_after", "cosine",
)

STAGES = ("scores", "scaled", "weights")  # the (heads, n, n) matrices a heatmap can show, in pipeline order


@dataclass(frozen=True, eq=False)
class AttentionResult(TraceBase):
    """Everything one self-attention computation produced. All arrays are read-only.

    Also the model contract's Trace (engine/models/contract.py) of the toy's one layer:
    attentions (1, heads, n, n), hidden_states (2, n, d) = [x, output], input_ids = positions."""

    next_token_logits = None  # the toy predicts no next token (not a field)

    config: AttentionConfig
    tokens: tuple[Token, ...]
    embeddings: np.ndarray  # (n, d) static token vectors
    positional: np.ndarray  # (n, d) added positions; zeros for none / rope
    x: np.ndarray  # (n, d) = embeddings + positional: what enters the projections
    w_q: np.ndarray  # (d, d)
    w_k: np.ndarray  # (d, d)
    w_v: np.ndarray  # (d, d)
    w_o: np.ndarray  # (d, d)
    q: np.ndarray  # (heads, n, d_k), after RoPE when positional == rope
    k: np.ndarray  # (heads, n, d_k), after RoPE when positional == rope
    v: np.ndarray  # (heads, n, d_k)
    scores: np.ndarray  # (heads, n, n) q·kᵀ
    scaled: np.ndarray  # (heads, n, n) scores / score_divisor (capped when attn_softcap), −∞ where masked
    weights: np.ndarray  # (heads, n, n) softmax over keys: every row sums to 1
    head_outputs: np.ndarray  # (heads, n, d_k) weights · v
    concat: np.ndarray  # (n, d) heads side by side
    output: np.ndarray  # (n, d) concat · W_O
    diff: np.ndarray  # (n, d) output − x
    norm_before: np.ndarray  # (n,) ‖x_i‖
    norm_after: np.ndarray  # (n,) ‖output_i‖
    cosine: np.ndarray  # (n,) cos(x_i, output_i)
    q_unrotated: np.ndarray | None = None  # (heads, n, d_k) before RoPE, when rope
    k_unrotated: np.ndarray | None = None
    mask: np.ndarray | None = None  # (n, n) bool, True = masked, when causal
    ablate: frozenset = frozenset()  # (0, head) pairs switched off: head_outputs zeroed before W_O
    estimated_bytes: int = 0  # the memory estimate checked against the budget
    seconds: float = 0.0  # wall time of compute()
    # A pretrained layer's own score scale and cap (engine/models/decoder_view.py), for the views that
    # write the arithmetic out: Gemma divides by √query_pre_attn_scalar, not √d_k (0: √d_k, as config
    # says), and Gemma 2 caps the scaled scores at cap · tanh(s / cap) before the mask (0: no cap).
    query_scale: float = 0.0
    attn_softcap: float = 0.0

    def __post_init__(self) -> None:
        freeze_arrays(self)

    @property
    def score_divisor(self) -> float:
        """What q·k was divided by: √query_scale when the model sets one (the decoder's own
        ``DecoderConfig.score_divisor``), else √d_k (when scaling is on) times the temperature."""
        if self.query_scale:
            return math.sqrt(self.query_scale)
        return (math.sqrt(self.config.d_k) if self.config.scale else 1.0) * self.config.temperature

    @property
    def attentions(self) -> np.ndarray:
        """(1, heads, n, n): the one layer's weights (a view)."""
        return self.weights[None]

    @property
    def hidden_states(self) -> np.ndarray:
        """(2, n, d): what enters the layer (x) and what it gives (output); a new array."""
        stacked = np.stack([self.x, self.output])
        stacked.flags.writeable = False
        return stacked

    @property
    def input_ids(self) -> np.ndarray:
        """(n,) the positions: the toy embeds a token by its text, it has no vocabulary."""
        return np.arange(self.n, dtype=np.int64)

    @property
    def num_heads(self) -> int:
        return self.config.heads

    def layer_values(self) -> list[np.ndarray]:
        return [self.v]

    def own_output_weights(self) -> list[np.ndarray]:
        return [self.w_o]

    @property
    def nbytes(self) -> int:
        """Bytes held by the trace's arrays (shared arrays counted once)."""
        seen: dict[int, int] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                base = value if value.base is None else value.base
                seen[id(base)] = base.nbytes if isinstance(base, np.ndarray) else value.nbytes
        return sum(seen.values())

    def arrays(self) -> dict[str, np.ndarray]:
        """The named arrays of :data:`ARRAY_NAMES`."""
        return {name: getattr(self, name) for name in ARRAY_NAMES}
