"""Switching heads off, and ranking heads by what switching each one off changes.

Head ablation as in Michel et al. (2019), "Are Sixteen Heads Really Better than One?": a head
is removed by zeroing its output before the output projection W_O, so nothing it computed
reaches the residual stream, and every layer after it is recomputed. (Zeroing the head's
attention probabilities, transformers' old ``head_mask``, gives the same zero output.)

An ablation is a ``frozenset`` of ``(layer, head)`` pairs, 0-based; the forward passes
(:func:`engine.toy.compute.compute`, :func:`engine.models.bert.forward`, the decoder's) take it as
``ablate=`` and check it with :func:`engine.core.hooks.check_ablation` (switching heads off is a
hook on hook_z).

:func:`rank_heads` knows no model: it calls ``run_with_ablation(frozenset({head}))`` for each
head and scores the result with ``effect(result)``, so an encoder plugs in the change of its
final vectors (:func:`mean_cosine_distance`) and a decoder the fall in probability of the
baseline's top next token (:func:`top_token_probability_drop`). Reusing the unchanged layers
below the ablated one is the runner's business (:mod:`engine.analysis.encoder_ablation` for BERT: start_at_layer).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterable, TypeVar

import numpy as np

from ..core.attention import softmax64

Head = tuple[int, int]  # (layer, head), 0-based
Ablation = frozenset  # frozenset[Head]

T = TypeVar("T")


def token_cosines(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """(n,) float64 cosine of each token's vector with and without the ablation: rows of two
    (n, d) matrices (0 where a vector is zero)."""
    before = np.asarray(before, np.float64)
    after = np.asarray(after, np.float64)
    dots = np.einsum("nd,nd->n", before, after)  # (n,)
    norms = np.linalg.norm(before, axis=-1) * np.linalg.norm(after, axis=-1)  # (n,)
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def mean_cosine_distance(baseline_final: np.ndarray) -> Callable[[np.ndarray], float]:
    """An encoder's effect: mean over tokens of 1 − cos(final vector, baseline's final vector).
    ``baseline_final``: (n, d), the last hidden state without ablation."""
    baseline = np.asarray(baseline_final, np.float64)

    def effect(final: np.ndarray) -> float:
        return float(np.mean(1.0 - token_cosines(baseline, final)))

    return effect


def top_token_probability_drop(baseline_logits: np.ndarray) -> Callable[[np.ndarray], float]:
    """A decoder's effect: p(top) without ablation − p(top) with it, where top is the baseline's
    most likely next token. ``baseline_logits``: (vocab,) logits of the last position; the
    effect takes the ablated run's (vocab,) logits. Negative when the ablation helps."""
    baseline = softmax64(baseline_logits)
    top = int(np.argmax(baseline))
    p_top = float(baseline[top])

    def effect(logits: np.ndarray) -> float:
        return p_top - float(softmax64(logits)[top])

    return effect


@dataclass(frozen=True)
class HeadRanking:
    """The effect of switching each head off alone, largest first."""

    heads: tuple[Head, ...]  # (layer, head) pairs, by effect, largest first
    effects: tuple[float, ...]  # the effect of each, same order
    complete: bool  # False when cancelled before every head was run
    seconds: float  # wall time

    def effect_grid(self, num_layers: int, num_heads: int) -> np.ndarray:
        """(layers, heads) float64 of effects, NaN for heads not run."""
        grid = np.full((num_layers, num_heads), np.nan)
        for (layer, head), value in zip(self.heads, self.effects):
            grid[layer, head] = value
        return grid

    def top(self, count: int) -> list[tuple[Head, float]]:
        return list(zip(self.heads[:count], self.effects[:count]))


def rank_heads(
    run_with_ablation: Callable[[frozenset], T],
    effect: Callable[[T], float],
    heads: Iterable[Head],
    *,
    progress: Callable[[float, str], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> HeadRanking:
    """Switch each head of ``heads`` off alone and rank them by ``effect(run_with_ablation({head}))``.

    ``progress(fraction, message)`` after each head; ``cancelled()`` is asked before each run:
    when it returns True the ranking of the heads done so far comes back with complete=False.
    Ties keep the order of ``heads``.
    """
    started = time.perf_counter()
    heads = list(heads)
    done: list[tuple[Head, float]] = []
    complete = True
    for index, head in enumerate(heads):
        if cancelled is not None and cancelled():
            complete = False
            break
        done.append((head, float(effect(run_with_ablation(frozenset({head}))))))
        if progress is not None:
            progress((index + 1) / len(heads), f"head {index + 1} of {len(heads)}")
    done.sort(key=lambda pair: -pair[1])  # stable: ties keep the given order
    return HeadRanking(
        heads=tuple(head for head, _ in done),
        effects=tuple(value for _, value in done),
        complete=complete,
        seconds=time.perf_counter() - started,
    )


def model_runner(model, inputs, baseline) -> Callable[[frozenset], np.ndarray]:
    """``run(ablate) -> (n, d)`` for any model of the contract (engine/models/contract.py): the
    final vectors with ``ablate`` switched off, each run resumed at the first ablated layer with
    the unablated ``baseline`` trace's residual there (``run_with_hooks(start_at_layer=…)``):
    nothing below it changes. ``inputs``: the text or Tokenized the baseline ran."""
    def run(ablate: frozenset) -> np.ndarray:
        if not ablate:
            return baseline.hidden_states[-1]
        first = min(layer for layer, _ in ablate)
        return model.run_with_hooks(inputs, ablate=ablate, start_at_layer=first,
                                    resid=baseline.hidden_states[first]).hidden_states[-1]

    return run


def all_heads(num_layers: int, num_heads: int) -> list[Head]:
    """Every (layer, head), layer by layer."""
    return [(layer, head) for layer in range(num_layers) for head in range(num_heads)]
