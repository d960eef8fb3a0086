"""Teaching labs: experiments that run the real engine more than once and compare.

- Shuffle test (seed 004: "模型无法区分'猫追老鼠'和'老鼠追猫'"): self-attention without
  positions is permutation-equivariant, Attention(P·X) = P·Attention(X). :func:`shuffle_test`
  computes the sentence and the same tokens in another order, un-permutes the second trace
  (Pᵀ·W·P per head, Pᵀ·output) and reports how far it is from the first. With positional
  ``none`` (and no causal mask) the two agree up to float32 rounding; sinusoidal PE or RoPE
  make them differ.
- Scaling (seed 000: "512维 … Softmax 后 [0.999999, 0.000001]"): :func:`softmax_stats` gives
  each attention row's entropy and largest weight; :func:`scaling_sweep` measures them over
  d_model with and without the ÷√d_k, so the saturation of the unscaled softmax can be seen.

Every number comes from :func:`engine.toy.compute`; nothing here re-implements attention.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .compute import compute
from .config import AttentionConfig
from ..core.errors import EngineError
from .trace import AttentionResult

# Differences up to these fractions of the numbers' size count as "0 up to float32 rounding":
# after a shuffle BLAS adds rows and keys in another order, so bit-for-bit equality is not
# guaranteed. Measured here without positions (n ≤ 150, d_model ≤ 512, any scale/temperature):
# weights differed by at most 1e-8 × the largest |logit| (+ 1e-7), outputs by at most
# 4e-6 × the largest |output|; with sinusoidal PE or RoPE the differences are 1e-3 … 1.
WEIGHT_ROUNDING = 1e-6  # × max(1, largest |scaled score|): a weight moves with its logit's error
OUTPUT_ROUNDING = 1e-5  # × max(1, largest |output|)


# ----------------------------------------------------------------------------- shuffle test
@dataclass(frozen=True, eq=False)
class ShuffleResult:
    """The sentence, the same tokens shuffled, and how much attention changed beyond the shuffle."""

    original: AttentionResult  # the user's config, as computed on screen
    shuffled: AttentionResult  # the same tokens, embeddings, seed and weights in shuffled order
    permutation: tuple[int, ...]  # shuffled token i is original token permutation[i]
    weight_difference: np.ndarray  # (heads, n, n): un-permuted shuffled weights − original weights
    output_difference: np.ndarray  # (n, d_model): un-permuted shuffled output − original output
    max_weight_difference: float  # max |weight_difference|
    max_output_difference: float  # max |output_difference|
    weight_tolerance: float  # float32 rounding level of the weights (see WEIGHT_ROUNDING)
    output_tolerance: float  # float32 rounding level of the outputs

    @property
    def tokens(self) -> list[str]:
        return self.original.token_texts

    @property
    def shuffled_tokens(self) -> list[str]:
        return self.shuffled.token_texts

    @property
    def same_sentence(self) -> bool:
        """True when the shuffle did not change the token sequence (one token, or all alike)."""
        return self.tokens == self.shuffled_tokens

    @property
    def only_permuted(self) -> bool:
        """True when attention merely permuted its results: both differences at rounding level."""
        return (self.max_weight_difference <= self.weight_tolerance
                and self.max_output_difference <= self.output_tolerance)


def default_permutation(tokens: Sequence[str], seed: int = 0) -> tuple[int, ...]:
    """A deterministic shuffle of ``len(tokens)`` positions that changes the sentence if it can.

    ``seed`` 0 reverses the order (猫 追 老鼠 → 老鼠 追 猫, seed 004's example); other seeds
    give a seeded random derangement (no token keeps its place). When no tried shuffle changes
    the token sequence (one token, or all alike) it returns the identity: there is nothing to
    shuffle, and relabelling equal tokens would only move positions around.
    """
    n = len(tokens)
    if n < 2:
        return tuple(range(n))
    tokens = list(tokens)

    def changes(order) -> bool:
        return [tokens[i] for i in order] != tokens

    if seed == 0:
        reverse = tuple(range(n - 1, -1, -1))
        if changes(reverse):
            return reverse
    rng = np.random.default_rng([seed, 0x5A0F])
    for _ in range(200):
        order = rng.permutation(n)
        if np.all(order != np.arange(n)) and changes(order):
            return tuple(int(i) for i in order)
    rotation = tuple((i + 1) % n for i in range(n))  # a derangement that may still change the text
    return rotation if changes(rotation) else tuple(range(n))


def _check_permutation(permutation, n: int) -> tuple[int, ...]:
    try:
        order = tuple(int(i) for i in permutation)
    except (TypeError, ValueError):
        raise EngineError("permutation must be a list of token positions; got {permutation!r}",
                          permutation=permutation) from None
    if sorted(order) != list(range(n)):
        raise EngineError("permutation must order the positions 0 … {last} once each; got {order}",
                          last=n - 1, order=list(order))
    return order


def shuffle_test(
    config: AttentionConfig,
    permutation: Sequence[int] | None = None,
    seed: int = 0,
    original: AttentionResult | None = None,
) -> ShuffleResult:
    """Compute ``config`` and the same tokens reordered by ``permutation``; compare after un-permuting.

    Both runs share the tokens (texts), embeddings (static per token text, or the user's
    table), seed, projection weights and every other setting: only the order differs. The
    shuffled run joins the tokens with spaces and splits them with the ``whitespace``
    tokenizer, so it gets exactly the original tokens (a check raises otherwise).
    ``permutation`` None: :func:`default_permutation` with ``seed``. ``original``: an
    existing trace of ``config`` to reuse (e.g. the one on screen) instead of recomputing it.
    """
    if original is None or original.config != config:
        original = compute(config)
    texts = original.token_texts
    n = len(texts)
    order = default_permutation(texts, seed) if permutation is None else _check_permutation(permutation, n)
    shuffled_texts = [texts[i] for i in order]
    if any(not text or any(ch.isspace() for ch in text) for text in texts):
        raise EngineError("a token holds white space, so the shuffled sentence cannot be rebuilt from the tokens")
    shuffled = compute(config.replace(text=" ".join(shuffled_texts), tokenizer="whitespace"))
    if shuffled.token_texts != shuffled_texts:  # pragma: no cover - guarded by the check above
        raise EngineError("the shuffled sentence tokenized differently from the original tokens")

    inverse = np.argsort(order)  # original token a sits at shuffled position inverse[a]
    # Pᵀ·W_shuffled·P: entry (a, b) = shuffled weight between the positions of tokens a and b
    unpermuted_weights = shuffled.weights[:, inverse][:, :, inverse]  # (heads, n, n)
    unpermuted_output = shuffled.output[inverse]  # (n, d_model)
    weight_difference = (unpermuted_weights - original.weights).astype(np.float32)  # (heads, n, n)
    output_difference = (unpermuted_output - original.output).astype(np.float32)  # (n, d_model)
    for array in (weight_difference, output_difference):
        array.flags.writeable = False
    finite = original.scaled[np.isfinite(original.scaled)]
    logit_size = float(np.abs(finite).max()) if finite.size else 1.0
    output_size = float(np.abs(original.output).max()) if original.output.size else 1.0
    return ShuffleResult(
        original=original,
        shuffled=shuffled,
        permutation=order,
        weight_difference=weight_difference,
        output_difference=output_difference,
        max_weight_difference=float(np.abs(weight_difference).max()),
        max_output_difference=float(np.abs(output_difference).max()),
        weight_tolerance=WEIGHT_ROUNDING * max(1.0, logit_size),
        output_tolerance=OUTPUT_ROUNDING * max(1.0, output_size),
    )


# ----------------------------------------------------------------------------- scaling
def softmax_stats(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row entropy (nats, 0·log 0 = 0) and largest weight of attention ``weights`` (heads, n, n).

    Returns (entropy, max_weight), each (heads, n) float64. A uniform row over m visible keys
    has entropy log m; a saturated row (one weight 1, the rest 0) has entropy 0 and max 1.
    """
    weights = np.asarray(weights, dtype=np.float64)  # (heads, n, n)
    logs = np.zeros_like(weights)
    np.log(weights, out=logs, where=weights > 0)  # masked / underflowed weights contribute 0
    entropy = -(weights * logs).sum(axis=-1)  # (heads, n)
    return entropy, weights.max(axis=-1)


def uniform_entropy(result: AttentionResult) -> np.ndarray:
    """(n,) entropy of a uniform row over the keys each query may see: log n, or log(i+1) when causal."""
    visible = np.full(result.n, result.n) if result.mask is None else (~result.mask).sum(axis=1)
    return np.log(visible.astype(np.float64))


@dataclass(frozen=True, eq=False)
class ScaleComparison:
    """The current settings' attention rows with and without ÷√d_k, for every head."""

    config: AttentionConfig  # the settings compared (scale as the user had it)
    entropy_scaled: np.ndarray  # (heads, n) nats, with ÷√d_k
    entropy_unscaled: np.ndarray  # (heads, n) nats, without
    max_scaled: np.ndarray  # (heads, n) largest weight per row, with ÷√d_k
    max_unscaled: np.ndarray  # (heads, n)
    uniform: np.ndarray  # (n,) log(visible keys): the entropy of a flat row


def scale_comparison(result: AttentionResult) -> ScaleComparison:
    """Row statistics of ``result`` and of the same settings with the scaling toggled (one compute)."""
    other = compute(result.config.replace(scale=not result.config.scale))
    scaled, unscaled = (result, other) if result.config.scale else (other, result)
    entropy_scaled, max_scaled = softmax_stats(scaled.weights)
    entropy_unscaled, max_unscaled = softmax_stats(unscaled.weights)
    return ScaleComparison(result.config, entropy_scaled, entropy_unscaled, max_scaled, max_unscaled,
                           uniform_entropy(result))


SWEEP_D_MODELS = (4, 8, 16, 32, 64, 128, 256, 512, 1024)


def sweep_config(config: AttentionConfig) -> AttentionConfig:
    """The settings the sweep varies d_model in: the user's text, tokenizer, seed, positions and mask.

    One head, so d_k = d_model (seed 000's "512维" dot product); random projections (the
    1/√d_model initialisation keeps q, k at unit variance, so q·k spreads like √d_k);
    temperature 1 so only √d_k divides; no embedding table (its vectors have a fixed width).
    """
    return config.replace(heads=1, weights="random", temperature=1.0, embeddings=None, scale=True,
                          d_model=SWEEP_D_MODELS[0])


def self_gradient(weights: np.ndarray) -> np.ndarray:
    """∂w_i/∂s_i = w_i·(1 − w_i): how much a weight still moves when its own score moves (seed 000's
    “梯度炸了”, seed 001's “梯度变得很小”). Near 0 when the softmax saturates (w → 1 or w → 0): the
    gradient vanishes, it does not explode. Same shape as ``weights``, float64."""
    w = np.asarray(weights, dtype=np.float64)
    return w * (1.0 - w)


@dataclass(frozen=True)
class ScalingPoint:
    """Mean row statistics at one d_model (one head: d_k = d_model), with and without ÷√d_k."""

    d_model: int
    entropy_scaled: float  # mean row entropy, nats
    entropy_unscaled: float
    max_scaled: float  # mean of each row's largest weight
    max_unscaled: float
    score_std: float  # standard deviation of the raw q·k scores (expected √d_k; few tokens, few samples)
    largest_score: float  # largest |q·k| (seed 000: "点积可能 100 200 300")
    n: int  # tokens
    uniform_entropy: float  # mean over rows of log(visible keys): log n without a mask
    # seed 001 “输入的微小变化会导致输出的巨大变化”: see key_sensitivity (defaults: older callers)
    change_scaled: float = 0.0  # mean over (key, row) of how much a row moves when one key grows 1 %
    change_unscaled: float = 0.0
    change_max_scaled: float = 0.0  # the largest such move over every (key, row)
    change_max_unscaled: float = 0.0
    jacobian_scaled: float = 0.0  # mean over rows of ‖∂w/∂(q·k)‖_F, the softmax row's Jacobian by the raw scores
    jacobian_unscaled: float = 0.0


SENSITIVITY_GROWTH = 0.01  # one key's vector grows by 1 %


@dataclass(frozen=True)
class Sensitivity:
    """How much the attention rows move for a small change of the input, one head."""

    change: np.ndarray  # (n keys, n rows) ½·Σ|w' − w| of each row when key j's vector grows by ``growth``
    jacobian: np.ndarray  # (n rows,) ‖∂w_i/∂s_i‖_F, s_i = row i's raw scores q_i·k (÷ divisor inside)
    growth: float


def _softmax_rows(scores: np.ndarray) -> np.ndarray:
    top = np.max(scores, axis=-1, keepdims=True)
    exps = np.exp(scores - top)  # masked −∞ → 0
    return exps / exps.sum(axis=-1, keepdims=True)


def key_sensitivity(scores: np.ndarray, divisor: float, mask: np.ndarray | None = None,
                    growth: float = SENSITIVITY_GROWTH) -> Sensitivity:
    """Seed 001's “small input changes → large output changes”, measured on one head.

    ``scores`` (n, n): the raw q·k. Growing key j's vector by ``growth`` (k_j → (1 + growth)·k_j, a
    change of its input x_j the projection passes on linearly) multiplies column j of the scores by
    (1 + growth); each row's softmax moves by the total variation ½·Σ|w' − w| (0 … 1). The Jacobian
    of row i by its raw scores is (diag(w_i) − w_i·w_iᵀ) ÷ divisor: its size says how far the row
    moves per unit of score. With ÷√d_k the divisor is √d_k; without, 1.
    """
    s = np.asarray(scores, dtype=np.float64) / float(divisor)  # (n, n)
    n = s.shape[0]
    if mask is not None:
        s = np.where(mask, -np.inf, s)
    w = _softmax_rows(s)  # (n, n)
    bumped = np.broadcast_to(s, (n, n, n)).copy()  # (key j, row i, key)
    keys = np.arange(n)
    bumped[keys, :, keys] *= 1.0 + growth  # column j of copy j; −∞ stays −∞
    change = 0.5 * np.abs(_softmax_rows(bumped) - w[None]).sum(axis=-1)  # (j, i)
    jacobian = (w[:, :, None] * np.eye(n)[None] - w[:, :, None] * w[:, None, :]) / float(divisor)  # (i, n, n)
    return Sensitivity(change, np.sqrt((jacobian ** 2).sum(axis=(1, 2))), float(growth))


def scaling_point(config: AttentionConfig, d_model: int) -> ScalingPoint:
    """Compute ``sweep_config(config)`` at ``d_model`` twice (÷√d_k on and off) and average the rows."""
    base = sweep_config(config).replace(d_model=int(d_model))
    scaled = compute(base)
    unscaled = compute(base.replace(scale=False))
    entropy_scaled, max_scaled = softmax_stats(scaled.weights)
    entropy_unscaled, max_unscaled = softmax_stats(unscaled.weights)
    visible = scaled.scores[0] if scaled.mask is None else scaled.scores[0][~scaled.mask]
    divisor = math.sqrt(scaled.config.d_k) * scaled.config.temperature  # temperature is 1 in the sweep
    with_scale = key_sensitivity(scaled.scores[0], divisor, scaled.mask)
    without = key_sensitivity(unscaled.scores[0], unscaled.config.temperature, unscaled.mask)
    return ScalingPoint(
        d_model=int(d_model),
        entropy_scaled=float(entropy_scaled.mean()),
        entropy_unscaled=float(entropy_unscaled.mean()),
        max_scaled=float(max_scaled.mean()),
        max_unscaled=float(max_unscaled.mean()),
        score_std=float(np.std(visible)),
        largest_score=float(np.abs(visible).max()),
        n=scaled.n,
        uniform_entropy=float(uniform_entropy(scaled).mean()),
        change_scaled=float(with_scale.change.mean()),
        change_unscaled=float(without.change.mean()),
        change_max_scaled=float(with_scale.change.max()),
        change_max_unscaled=float(without.change.max()),
        jacobian_scaled=float(with_scale.jacobian.mean()),
        jacobian_unscaled=float(without.jacobian.mean()),
    )


@dataclass(frozen=True)
class ScalingSweep:
    """Row statistics over d_model: the softmax saturates without ÷√d_k as d_k grows."""

    points: tuple[ScalingPoint, ...]

    @property
    def n(self) -> int:
        return self.points[0].n

    @property
    def uniform_entropy(self) -> float:
        """Mean over rows of log(visible keys): log n without a mask (the flat-softmax reference)."""
        return self.points[0].uniform_entropy

    def series(self, name: str) -> np.ndarray:
        """One column over the sweep, e.g. series("max_unscaled") → (len(points),)."""
        return np.array([getattr(point, name) for point in self.points], dtype=np.float64)

    @property
    def d_models(self) -> np.ndarray:
        return self.series("d_model").astype(int)


def scaling_sweep(
    config: AttentionConfig,
    d_models: Sequence[int] = SWEEP_D_MODELS,
    progress: Callable[[int, int], None] | None = None,
) -> ScalingSweep:
    """:func:`scaling_point` for each d_model (two real computations each); ``progress(done, total)``."""
    points = []
    for index, d_model in enumerate(d_models):
        points.append(scaling_point(config, d_model))
        if progress is not None:
            progress(index + 1, len(d_models))
    return ScalingSweep(tuple(points))

