"""The one run path of the BERT-shaped encoders (MiniLM, e5): tokenize, then engine.bert.forward.

A subclass gives ``tokenize(text) → Tokenized`` (its own tokenizer) and sets ``config``,
``weights`` and ``tokenizer``; running, hooks and switching heads off are shared here.
"""
from __future__ import annotations

from typing import Callable

from .bert import BertConfig, BertTrace, BertWeights, forward, hook_names
from .config import DEFAULT_MEMORY_BUDGET
from .models.contract import HookedModel, Tokenized

Progress = Callable[[float, str], None]


class Encoder(HookedModel):
    """A post-LN BERT encoder ready to run; thread-safe to run."""

    config: BertConfig
    weights: BertWeights

    def hook_names(self) -> tuple[str, ...]:
        return hook_names(self.config)

    def _forward(self, tokenized: Tokenized, *, ablate=frozenset(), memory_budget: int = DEFAULT_MEMORY_BUDGET,
                 hooks=None, start_at_layer=None, resid=None, stop_at_layer=None,
                 progress: Progress | None = None) -> BertTrace:
        return forward(
            self.weights, self.config, tokenized.input_ids, tokenized.tokens,
            token_type_ids=tokenized.token_type_ids, truncated=tokenized.truncated,
            memory_budget=memory_budget, progress=progress, ablate=ablate, hooks=hooks,
            start_at_layer=start_at_layer, resid=resid, stop_at_layer=stop_at_layer,
        )
