"""Attention Explorer's engine: pure, vectorized NumPy self-attention with a full trace.

Nothing here imports Qt or pyqtgraph (a test checks it).

    from engine import AttentionConfig, compute
    result = compute(AttentionConfig(text="小明 喜欢 苹果", d_model=4, heads=1))
    result.weights  # (heads, n, n)
"""
from .toy.config import AttentionConfig
from .toy.compute import compute
from .core.errors import EngineError
from .analysis.explain import Explanation, explain
from .text.tokenize import Token, tokenize, warm_up
from .toy.trace import ARRAY_NAMES, STAGES, AttentionResult

__all__ = [
    "ARRAY_NAMES",
    "STAGES",
    "AttentionConfig",
    "AttentionResult",
    "EngineError",
    "Explanation",
    "Token",
    "compute",
    "explain",
    "tokenize",
    "warm_up",
]
