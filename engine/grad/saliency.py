"""Saliency per input token of a scalar target t (engine.grad.targets): which inputs pushed it.

With e_i the input of token i (blocks.0.hook_resid_pre: engine.grad.gradients says which sum):

- ``grad``: the gradient norm ‖∂t/∂e_i‖₂ (unsigned; how sensitive t is to token i);
- ``ixg``: input × gradient, Σ_d e_i,d · ∂t/∂e_i,d (signed);
- ``ig``: integrated gradients (Sundararajan et al. 2017), Σ_d (e_i,d − b_i,d) · the mean over m
  steps of ∂t/∂e_i,d at b + α_k (e − b), α_k = (k + ½)/m (the midpoint rule), with the baseline b
  zero or every token replaced by one token (a padding or unknown token). The m points of the
  path go through the model as one batch; the two ends by a forward only. Completeness: the attributions sum to
  t(e) − t(b) when m is large enough; ``completeness`` is their difference (printed beside).

Completeness depends on the model. MiniLM from its [PAD] token: the attributions sum to t(e) − t(b) within
3e-7 at 32 steps. SmolLM2 from zero: they sum to 28.1, 113.7 and −27.1 at 32, 128 and 512 steps where
t(e) − t(0) = 10.5 (torch's own IG gives the same 28.1 at 32): log p(answer) swings along the straight path
(its total variation over 290 points of the path is 61.9 for a net change of 10.5), so the midpoint rule
is far from its integral; ``ig_completeness`` is there to show it. Within the first 0.2 % of the path from
zero, where the first RMSNorm's input is near zero, log p jumps by 6 and back; no step count settles it, and
of six baselines tried on three prompts none is complete at 32 steps on all three
(benchmarks/bench_ig_completeness.py; figures in benchmarks/README.md).

The batch's activations are checked against the memory budget before it runs: m is refused above
what fits (:func:`max_steps`, the number said), and m = 0.

By words (:func:`by_words`): a word's saliency is the sum over its pieces for ``ixg`` and ``ig``
(they add up to the target's change), the norm of its pieces' gradients together for ``grad``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import EngineError
from ..core.memory import DEFAULT_MEMORY_BUDGET, format_bytes
from ..models.contract import Tokenized
from ..text.words import words_of
from .gradients import forward_output, gradients, input_of, logit_softcap, output_head, saved_bytes
from .targets import Target, evaluate

METHODS = ("grad", "ixg", "ig")
DEFAULT_STEPS = 32
STEP_LIMIT = 4096  # whatever the budget: beyond this the midpoint rule gains nothing a student sees


@dataclass(frozen=True, eq=False)
class Saliency:
    method: str  # one of METHODS
    scores: np.ndarray  # (n,) float64 per input token
    value: float  # t at the input
    target: Target
    steps: int = 0  # ig: m
    baseline: str = ""  # ig: "zero" or "token <id>"
    baseline_value: float = float("nan")  # ig: t at the baseline
    completeness: float = float("nan")  # ig: Σ scores − (t(input) − t(baseline))

    def arrays(self) -> dict[str, np.ndarray]:
        """What ``./run export --saliency`` writes (docs/FORMAT.md)."""
        out = {"saliency": self.scores, "saliency_target": np.float64(self.value),
               "saliency_method": np.array(self.method)}
        if self.method == "ig":
            out["ig_completeness"] = np.float64(self.completeness)
        return out


def max_steps(model, n: int, memory_budget: int = DEFAULT_MEMORY_BUDGET) -> int:
    """The most IG steps whose batch fits the memory budget."""
    fitting = memory_budget // saved_bytes(model, 1, n)
    return int(max(0, min(STEP_LIMIT, fitting)))


def check_steps(model, n: int, steps, memory_budget: int = DEFAULT_MEMORY_BUDGET) -> int:
    """``steps`` as an int, or EngineError saying the range (its top from the memory budget)."""
    top = max_steps(model, n, memory_budget)
    if isinstance(steps, bool) or int(steps) != steps or not 1 <= steps <= top:
        raise EngineError("integrated gradients take 1 … {top} steps for {n} tokens (the {budget} memory budget "
                          "sets the top); got {steps}", field="steps", top=top, n=n,
                          budget=format_bytes(memory_budget), steps=steps)
    return int(steps)


def baseline_input(model, tokenized: Tokenized, baseline) -> tuple[np.ndarray, str]:
    """((n, d) baseline input, its description): "zero", or a token id that replaces every token
    (its input keeps the positions, and the token types of an encoder)."""
    n = len(tokenized.input_ids)
    if baseline is None or baseline == "zero":
        return np.zeros((n, model.facts.d_model), np.float32), "zero"
    if isinstance(baseline, bool) or not isinstance(baseline, (int, np.integer)) \
            or not 0 <= baseline < model.facts.vocab_size:
        raise EngineError("a baseline is zero or a token id in 0 … {top}; got {baseline!r}", field="baseline",
                          top=model.facts.vocab_size - 1, baseline=baseline)
    ids = np.full(n, int(baseline), np.int64)
    replaced = Tokenized(tokenized.text, tokenized.tokens, ids, tokenized.token_type_ids)
    return input_of(model, replaced), f"token {int(baseline)}"


def saliency(model, tokenized: Tokenized, target: Target, method: str = "ixg", *, steps: int = DEFAULT_STEPS,
             baseline=None, ablate=frozenset(), memory_budget: int = DEFAULT_MEMORY_BUDGET) -> Saliency:
    """The saliency of ``target`` per token of ``tokenized`` by ``method`` (module doc)."""
    if method not in METHODS:
        raise EngineError("the saliency method is one of {methods}; got {method!r}", field="method",
                          methods=", ".join(METHODS), method=method)
    x = input_of(model, tokenized)  # (n, d)
    if method != "ig":
        result = gradients(model, x[None], target, ablate=ablate, points=False, memory_budget=memory_budget)
        grad = result.grad_input[0].astype(np.float64)  # (n, d)
        scores = np.linalg.norm(grad, axis=1) if method == "grad" else (x.astype(np.float64) * grad).sum(axis=1)
        return Saliency(method, scores, float(result.values[0]), target)
    steps = check_steps(model, len(x), steps, memory_budget)
    b, described = baseline_input(model, tokenized, baseline)
    if b.shape != x.shape:
        raise EngineError("the baseline has {got} tokens, the text {n}", field="baseline", got=len(b), n=len(x))
    alphas = ((np.arange(steps) + 0.5) / steps).astype(np.float32)  # (m,) the midpoints
    path = b[None] + alphas[:, None, None] * (x - b)[None]  # (m, n, d)
    result = gradients(model, path, target, ablate=ablate, points=False, memory_budget=memory_budget)
    mean_grad = result.grad_input.astype(np.float64).mean(axis=0)  # (n, d)
    scores = ((x - b).astype(np.float64) * mean_grad).sum(axis=1)  # (n,)
    # the two ends by a forward only: at a zero baseline an RMSNorm divides by √ε, its gradient overflows
    output, _ = forward_output(model, np.stack([x, b]), ablate=ablate, memory_budget=memory_budget)
    value, at_baseline = (float(v) for v in evaluate(target, output, output_head(model), logit_softcap(model))[0])
    return Saliency("ig", scores, value, target, steps, described, at_baseline,
                    float(scores.sum() - (value - at_baseline)))


def by_words(result: Saliency, text: str, tokens, special_tokens=frozenset()) -> tuple[tuple[str, ...], np.ndarray]:
    """(words, (w,) saliency per word): summed over a word's pieces (ixg, ig); for ``grad`` the
    norm of its pieces' gradient norms taken together, √Σ s_i²."""
    words, word_index = words_of(text, tokens, special_tokens)
    if result.method == "grad":
        return words, np.sqrt(np.bincount(word_index, weights=result.scores ** 2, minlength=len(words)))
    return words, np.bincount(word_index, weights=result.scores, minlength=len(words))
