"""The toy engine as a model of the registry: ``run(text)`` computes the default settings on ``text``."""
from __future__ import annotations

from ..compute import compute
from ..config import AttentionConfig
from ..trace import AttentionResult


class ToyModel:
    """The NumPy attention engine; ``config`` holds every setting but the text."""

    def __init__(self, config: AttentionConfig | None = None) -> None:
        self.config = config or AttentionConfig()

    def run(self, text: str) -> AttentionResult:
        return compute(self.config.replace(text=text))


def load(progress=None) -> ToyModel:
    return ToyModel()
