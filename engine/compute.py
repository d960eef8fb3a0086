"""compute(config): tokens → embeddings (+ positions) → Q, K, V → scores → scaled (+ mask) →
softmax → weighted sum of V → concat → W_O, keeping every intermediate.

Vectorized over heads and tokens; row-vector convention Q = X·W_Q as in the seeds.
"""
from __future__ import annotations

import math
import time

import numpy as np

from .attention import attend, causal_mask, merge_heads, split_heads
from .config import AttentionConfig
from .embeddings import static_embeddings
from .errors import EngineError
from .memory import check_budget
from .positional import apply_rope, sinusoidal
from .tokenize import tokenize
from .trace import AttentionResult, vector_diffs
from .weights import projection_weights


def compute(config: AttentionConfig) -> AttentionResult:
    """Run multi-head self-attention for ``config`` and return the full trace."""
    started = time.perf_counter()
    tokens = tuple(tokenize(config.text, config.tokenizer))
    if not tokens:
        raise EngineError("the text has no tokens (only spaces or control characters): type a word")
    n, d_model, heads, d_k = len(tokens), config.d_model, config.heads, config.d_k
    rope = config.positional == "rope"
    estimate = check_budget(n, d_model, heads, rope, config.memory_budget)

    embeddings = static_embeddings([t.text for t in tokens], d_model, config.seed, config.embeddings)  # (n, d)
    if config.positional == "sinusoidal":
        positional = sinusoidal(n, d_model)  # (n, d)
        x = embeddings + positional  # (n, d)
    else:
        positional = np.zeros_like(embeddings)  # (n, d)
        x = embeddings
    w = projection_weights(d_model, config.seed, config.weights)  # 4 × (d, d)

    q = split_heads(x @ w["w_q"], heads)  # (heads, n, d_k)
    k = split_heads(x @ w["w_k"], heads)  # (heads, n, d_k)
    v = split_heads(x @ w["w_v"], heads)  # (heads, n, d_k)
    q_unrotated = k_unrotated = None
    if rope:
        q_unrotated, k_unrotated = q, k
        q, k = apply_rope(q), apply_rope(k)  # (heads, n, d_k), rotated by position

    mask = causal_mask(n) if config.mask == "causal" else None  # (n, n)
    divisor = (math.sqrt(d_k) if config.scale else 1.0) * config.temperature
    stages = attend(q, k, v, divisor=divisor, mask=mask)
    concat = merge_heads(stages["head_outputs"])  # (n, d)
    output = concat @ w["w_o"]  # (n, d)

    return AttentionResult(
        config=config,
        tokens=tokens,
        embeddings=embeddings,
        positional=positional,
        x=x,
        **w,
        q=q,
        k=k,
        v=v,
        **stages,
        concat=concat,
        output=output,
        **vector_diffs(x, output),
        q_unrotated=q_unrotated,
        k_unrotated=k_unrotated,
        mask=mask,
        estimated_bytes=estimate,
        seconds=time.perf_counter() - started,
    )
