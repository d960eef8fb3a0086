"""The model contract: what every loaded model (toy, MiniLM, e5, SmolLM2, any GGUF) offers.

    tokenized = model.tokenize(text)              # Tokenized: tokens, spans, input_ids
    model.hook_names()                            # every hook point (engine/hooks.py)
    trace = model.run(text_or_tokenized, ablate={(23, 4)}, memory_budget=…)
    trace, cache = model.run_with_cache(text, names=["blocks.0.attn.hook_pattern"])   # None: all
    trace = model.run_with_hooks(text, fwd_hooks=[(name, fn)], start_at_layer=l, resid=r)

as TransformerLens's ``run_with_cache`` / ``run_with_hooks`` (names and shapes without the batch
axis, :mod:`engine.hooks`). ``inputs`` is a str (tokenized by the model) or the
:class:`Tokenized` its ``tokenize`` returned (its ids are run as they are). Switching heads off
(``ablate``, (layer, head) pairs) is a hook on ``hook_z``: one path for every model.

A model implements ``tokenize``, ``hook_names`` and ``_forward`` (the family's forward with
``hooks`` / ``start_at_layer`` / ``resid`` / ``stop_at_layer``); :class:`HookedModel` gives it
``run``, ``run_with_cache`` and ``run_with_hooks``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from ..config import DEFAULT_MEMORY_BUDGET
from ..errors import EngineError
from ..hooks import HookRun, hook_run
from ..tokenize import Token


@dataclass(frozen=True, eq=False)
class Tokenized:
    """A text as a model sees it: its pieces with character spans in ``text``, and their ids."""

    text: str
    tokens: tuple[Token, ...]  # pieces; special tokens have empty spans
    input_ids: np.ndarray  # (n,) int64 vocabulary ids
    token_type_ids: np.ndarray | None = None  # (n,) int64 segment ids (BERT-style encoders), else None
    truncated: bool = False  # the text had more pieces than the model's positions and was cut

    def __post_init__(self) -> None:
        for array in (self.input_ids, self.token_type_ids):
            if array is not None:
                array.flags.writeable = False

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        """(start, end) character span of each token in ``text``."""
        return tuple((token.start, token.end) for token in self.tokens)

    @property
    def n(self) -> int:
        return len(self.tokens)


class HookedModel:
    """``run`` / ``run_with_cache`` / ``run_with_hooks`` on top of a model's ``tokenize``,
    ``hook_names`` and ``_forward(tokenized, *, ablate, memory_budget, hooks, start_at_layer,
    resid, stop_at_layer, **options)``."""

    def tokenize(self, text: str) -> Tokenized:  # pragma: no cover - every model has its own
        raise NotImplementedError

    def hook_names(self) -> tuple[str, ...]:  # pragma: no cover
        raise NotImplementedError

    def _forward(self, tokenized: Tokenized, **options):  # pragma: no cover
        raise NotImplementedError

    def _inputs(self, inputs) -> Tokenized:
        if isinstance(inputs, Tokenized):
            return inputs
        if isinstance(inputs, str):
            return self.tokenize(inputs)
        raise EngineError("a model runs a text or the Tokenized its tokenize() returned; got {kind}",
                          field="text", kind=type(inputs).__name__)

    def run(self, inputs, *, ablate=frozenset(), memory_budget: int = DEFAULT_MEMORY_BUDGET, **options):
        """The model's trace of ``inputs`` with the heads of ``ablate`` switched off."""
        return self._forward(self._inputs(inputs), ablate=ablate, memory_budget=memory_budget, hooks=None,
                             **options)

    def run_with_cache(self, inputs, names: Iterable[str] | None = None, *, ablate=frozenset(),
                       memory_budget: int = DEFAULT_MEMORY_BUDGET, **options):
        """(trace, cache): cache maps each hook point of ``names`` (None: all) to a read-only copy."""
        hooks = HookRun(self.hook_names(), cache=None if names is None else list(names), cache_all=names is None)
        trace = self._forward(self._inputs(inputs), ablate=ablate, memory_budget=memory_budget, hooks=hooks,
                              **options)
        return trace, hooks.cache

    def run_with_hooks(self, inputs, fwd_hooks=(), *, ablate=frozenset(), start_at_layer: int | None = None,
                       resid: np.ndarray | None = None, stop_at_layer: int | None = None,
                       memory_budget: int = DEFAULT_MEMORY_BUDGET, **options):
        """The trace with ``fwd_hooks`` [(name, fn(array, name) → replacement or None), …] applied;
        ``start_at_layer`` with ``resid`` (n, d) resumes at blocks.{l}.hook_resid_pre,
        ``stop_at_layer`` runs the layers below it only (engine/hooks.py)."""
        hooks = hook_run(self.hook_names(), fwd_hooks)
        return self._forward(self._inputs(inputs), ablate=ablate, memory_budget=memory_budget, hooks=hooks,
                             start_at_layer=start_at_layer, resid=resid, stop_at_layer=stop_at_layer, **options)
