"""GPU against RNN (seed 000: “GPU 最喜欢矩阵乘法 … RNN 必须一步一步来”): counted and timed.

Attention scores every pair at once: S = Q·Kᵀ is one (n, d)@(d, n) product. Its n² dot products do
not wait for each other (entry (i, j) reads only q_i and k_j), so hardware that does many
multiply-adds at once — a GPU, or the CPU's vector units and threads that NumPy's BLAS uses — can
do them together: the chain of steps that must wait for one another is 1 long.

An RNN reads the sentence as a chain: h_t = tanh(h_{t−1}·W_h + x_t·W_x). Step t needs h_{t−1}, so
the n steps run one after another however many units the hardware has: the chain is n long.

:func:`compare_sequential` counts both (multiply-adds, dependent steps) and times both on this
machine (the best of a few runs). The counts are the claim; the times depend on the machine and
its load, and are shown as measured, never tested.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..core.errors import EngineError

MAX_TOKENS = 4096  # n: the (n, n) score matrix stays under 130 MB of float64
MAX_WIDTH = 1024  # d


@dataclass(frozen=True)
class SequentialComparison:
    """One (n, d)@(d, n) product against n dependent RNN steps, counted and timed."""

    n: int  # tokens
    d: int  # width of q, k and of the RNN's state
    attention_steps: int  # dependent steps of Q·Kᵀ: 1 (one product)
    rnn_steps: int  # dependent steps of the RNN: n
    attention_dot_products: int  # n²: independent of each other
    attention_multiply_adds: int  # n²·d
    rnn_multiply_adds: int  # n·2d² (h·W_h and x·W_x per step)
    attention_seconds: float  # best of ``repeats`` runs on this machine
    rnn_seconds: float
    repeats: int


def attention_scores(q: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, int]:
    """S = Q·Kᵀ (n, n) from q, k (n, d), and its dependent steps: 1 (a single product)."""
    return q @ k.T, 1


def rnn_states(x: np.ndarray, w_h: np.ndarray, w_x: np.ndarray) -> tuple[np.ndarray, int]:
    """Elman RNN over x (n, d): states (n, d) with h_t = tanh(h_{t−1}·W_h + x_t·W_x), h_{−1} = 0,
    and the number of steps that had to wait for the previous one (each loop turn reads ``state``)."""
    n, d = x.shape
    state = np.zeros(d, dtype=x.dtype)  # (d,)
    states = np.empty_like(x)  # (n, d)
    steps = 0
    for t in range(n):
        state = np.tanh(state @ w_h + x[t] @ w_x)  # needs the state of step t − 1
        states[t] = state
        steps += 1
    return states, steps


def _best_time(function, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def compare_sequential(n: int, d: int, *, seed: int = 0, repeats: int = 3) -> SequentialComparison:
    """Count and time Q·Kᵀ against an RNN over the same n tokens of width d (float32, random inputs)."""
    for name, value, top in (("n", n, MAX_TOKENS), ("d", d, MAX_WIDTH), ("repeats", repeats, 100)):
        if type(value) is not int or not 1 <= value <= top:
            raise EngineError("{name} must be a whole number from 1 to {top}; got {value!r}",
                              field=name, name=name, top=top, value=value)
    rng = np.random.default_rng(seed)
    scale = 1.0 / np.sqrt(d)  # unit-variance states: tanh does not saturate at once
    q, k, x = (rng.standard_normal((n, d)).astype(np.float32) for _ in range(3))
    w_h, w_x = ((rng.standard_normal((d, d)) * scale).astype(np.float32) for _ in range(2))
    _, attention_steps = attention_scores(q, k)
    _, rnn_steps = rnn_states(x, w_h, w_x)
    return SequentialComparison(
        n=n, d=d, attention_steps=attention_steps, rnn_steps=rnn_steps,
        attention_dot_products=n * n, attention_multiply_adds=n * n * d, rnn_multiply_adds=n * 2 * d * d,
        attention_seconds=_best_time(lambda: attention_scores(q, k), repeats),
        rnn_seconds=_best_time(lambda: rnn_states(x, w_h, w_x), repeats),
        repeats=repeats,
    )
