"""The one run path of the BERT-shaped encoders (MiniLM, e5): tokenize, then engine.models.bert.forward.

A subclass gives ``tokenize(text) → Tokenized`` (its own tokenizer) and sets ``config``,
``weights`` and ``tokenizer``; running, hooks and switching heads off are shared here.
"""
from __future__ import annotations

from functools import cached_property
from typing import Callable

import numpy as np

from .bert import BertConfig, BertTrace, BertWeights, forward, hook_names
from ..core.memory import DEFAULT_MEMORY_BUDGET
from .contract import Capabilities, HookedModel, ModelFacts, Tokenized, output_biases, outputs_by_head, value_biases_by_head, values_by_head

Progress = Callable[[float, str], None]


class Encoder(HookedModel):
    """A post-LN BERT encoder ready to run; thread-safe to run. A subclass sets ``config``,
    ``weights`` and ``facts`` (see :func:`encoder_facts`)."""

    config: BertConfig
    weights: BertWeights
    facts: ModelFacts

    def layer_view(self, trace: BertTrace, layer: int):
        from .bert_view import layer_result

        return layer_result(trace, self.weights, layer, trace.text)

    def hook_names(self) -> tuple[str, ...]:
        return hook_names(self.config)

    # components (engine/models/contract.py): no output head, and no norm after the last block's own
    W_U = None
    b_U = None
    ln_final_w = None
    ln_final_b = None
    ln_final_centres = False

    @property
    def W_E(self) -> np.ndarray:
        return self.weights.word_embeddings  # (vocab, d)

    @cached_property
    def W_V(self) -> np.ndarray:
        d = self.config.hidden_size
        return values_by_head([w.qkv_weight[:, 2 * d:] for w in self.weights.layers], self.config.num_heads,
                              self.config.d_k)  # (layers, heads, d, d_head)

    @cached_property
    def b_V(self) -> np.ndarray:
        c, d = self.config, self.config.hidden_size
        return value_biases_by_head([w.qkv_bias[2 * d:] for w in self.weights.layers], c.num_heads, c.d_k, c.num_heads)

    @cached_property
    def W_O(self) -> np.ndarray:
        return outputs_by_head([w.output_weight for w in self.weights.layers], self.config.num_heads)

    @cached_property
    def b_O(self) -> np.ndarray:
        return output_biases([w.output_bias for w in self.weights.layers], self.config.hidden_size)  # (layers, d)

    def ln_final(self, x: np.ndarray) -> np.ndarray:
        """The identity (a new float32 array): a post-LN encoder's last block ends with its own norm."""
        return np.array(x, dtype=np.float32)

    def _forward(self, tokenized: Tokenized, *, ablate=frozenset(), memory_budget: int = DEFAULT_MEMORY_BUDGET,
                 hooks=None, start_at_layer=None, resid=None, stop_at_layer=None,
                 progress: Progress | None = None, use_cache: bool = True) -> BertTrace:
        # use_cache: an encoder keeps no trace of its own (nothing to read or replace)
        return forward(
            self.weights, self.config, tokenized.input_ids, tokenized.tokens,
            token_type_ids=tokenized.token_type_ids, truncated=tokenized.truncated,
            memory_budget=memory_budget, progress=progress, ablate=ablate, hooks=hooks,
            start_at_layer=start_at_layer, resid=resid, stop_at_layer=stop_at_layer, text=tokenized.text,
        )


def encoder_facts(config: BertConfig, family: str, special_tokens, *, max_positions: int, name: str,
                  tokenizer_note: str, capabilities: Capabilities = Capabilities(gradients=True)) -> ModelFacts:
    """The :class:`ModelFacts` of a BERT-shaped encoder."""
    return ModelFacts(family=family, kind="encoder", layers=config.num_layers, heads=config.num_heads,
                      kv_heads=config.num_heads, d_model=config.hidden_size, d_head=config.d_k,
                      vocab_size=config.vocab_size, special_tokens=frozenset(special_tokens),
                      max_positions=max_positions, capabilities=capabilities, name=name,
                      tokenizer_note=tokenizer_note)
