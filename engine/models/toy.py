"""The toy engine as a model of the registry: ``run(text)`` computes the default settings on ``text``."""
from __future__ import annotations

import numpy as np

from ..toy.compute import compute, hook_names, projection_matrices
from ..toy.config import AttentionConfig
from ..core.errors import EngineError
from ..text.tokenize import tokenize
from ..toy.trace import AttentionResult
from .contract import Capabilities, HookedModel, ModelFacts, Tokenized, output_biases, outputs_by_head, value_biases_by_head, values_by_head


class ToyModel(HookedModel):
    """The NumPy attention engine; ``config`` holds every setting but the text."""

    def __init__(self, config: AttentionConfig | None = None) -> None:
        self.config = config or AttentionConfig()

    @property
    def facts(self) -> ModelFacts:
        c = self.config
        return ModelFacts(family="toy", kind="toy", layers=1, heads=c.heads, kv_heads=c.heads, d_model=c.d_model,
                          d_head=c.d_k, vocab_size=0, special_tokens=frozenset(), max_positions=0,
                          capabilities=Capabilities(configurable=True, gradients=True), name="toy",
                          tokenizer_note="")  # vocab 0, positions 0: no vocabulary, only the memory budget limits

    def tokenize(self, text: str) -> Tokenized:
        """The toy's tokens of ``text``; its "ids" are the positions (it embeds by the token's text)."""
        if not isinstance(text, str):
            raise EngineError("text must be a string", field="text")
        tokens = tuple(tokenize(text, self.config.tokenizer))
        return Tokenized(text, tokens, np.arange(len(tokens), dtype=np.int64))

    def layer_view(self, trace: AttentionResult, layer: int) -> AttentionResult:
        if layer != 0:
            raise EngineError("layer {layer} does not exist: the toy engine has layer 0", field="layer", layer=layer)
        return trace

    def hook_names(self) -> tuple[str, ...]:
        return hook_names(self.config)

    # components (engine/models/contract.py): the toy embeds a token by its text (no vocabulary), has
    # no output head and no norm; its one layer's projections follow the settings (seed, d_model …)
    W_E = None
    W_U = None
    b_U = None
    ln_final_w = None
    ln_final_b = None
    ln_final_centres = False

    @property
    def W_V(self) -> np.ndarray:
        c = self.config
        return values_by_head([projection_matrices(c)[0]["w_v"]], c.heads, c.d_k)  # (1, heads, d, d_head)

    @property
    def b_V(self) -> np.ndarray:
        return value_biases_by_head([None], self.config.heads, self.config.d_k, self.config.heads)  # zeros: no biases

    @property
    def W_O(self) -> np.ndarray:
        return outputs_by_head([projection_matrices(self.config)[0]["w_o"]], self.config.heads)  # (1, heads, d_head, d)

    @property
    def b_O(self) -> np.ndarray:
        return output_biases([None], self.config.d_model)

    def ln_final(self, x: np.ndarray) -> np.ndarray:
        """The identity (a new float32 array): the toy has no norm."""
        return np.array(x, dtype=np.float32)

    def _forward(self, tokenized: Tokenized, *, ablate=frozenset(), memory_budget=None, hooks=None,
                 start_at_layer=None, resid=None, stop_at_layer=None, use_cache: bool = True) -> AttentionResult:
        # use_cache: the toy keeps no trace of its own (nothing to read or replace)
        config = self.config.replace(text=tokenized.text)
        if memory_budget is not None:
            config = config.replace(memory_budget=memory_budget)
        if start_at_layer not in (None, 0) or stop_at_layer not in (None, 1):
            raise EngineError("the toy engine has one layer (0): start_at_layer 0, stop_at_layer 1", field="hooks")
        return compute(config, ablate=ablate, hooks=hooks, resid=resid)


def load(progress=None) -> ToyModel:
    return ToyModel()
