"""The model contract: what every loaded model (toy, MiniLM, e5, SmolLM2, any GGUF) offers.

    tokenized = model.tokenize(text)              # Tokenized: tokens, spans, input_ids
    model.hook_names()                            # every hook point (engine/core/hooks.py)
    trace = model.run(text_or_tokenized, ablate={(23, 4)}, memory_budget=…)
    trace, cache = model.run_with_cache(text, names=["blocks.0.attn.hook_pattern"])   # None: all
    trace = model.run_with_hooks(text, fwd_hooks=[(name, fn)], start_at_layer=l, resid=r)
    trace = model.run(text, use_cache=False)      # the model's own cache (a decoder's KV cache) untouched

as TransformerLens's ``run_with_cache`` / ``run_with_hooks`` (names and shapes without the batch
axis, :mod:`engine.core.hooks`). ``inputs`` is a str (tokenized by the model) or the
:class:`Tokenized` its ``tokenize`` returned (its ids are run as they are). Switching heads off
(``ablate``, (layer, head) pairs) is a hook on ``hook_z``: one path for every model.

What a model IS is declared, never probed: ``model.facts`` (:class:`ModelFacts`) gives its
family, kind, layers, heads, key/value heads, d_model, d_head, vocabulary size, special tokens
(from its own tokenizer), maximum positions and :class:`Capabilities`; the app, the command
line, presets and analyses read these (no getattr / hasattr / isinstance on models, no branch on
a model's name or kind outside the registry: tests/engine/models/test_contract.py greps for them).

Every trace (the toy's AttentionResult, engine.models.bert.BertTrace, engine.models.llama.DecoderTrace) offers
the :class:`Trace` protocol: tokens, spans, input_ids, attentions (L, H, n, n), hidden_states
(L + 1, n, d; transformers' convention), next_token_logits ((vocab,) for decoders, None
otherwise), ablate, and ``arrays()`` for export.

Its components are public, as TransformerLens's ``HookedTransformer`` has them, so that an analysis
never reaches into a model's weights (read-only arrays, row-vector convention x @ W):

    model.W_E          # (vocab, d) token embeddings (e5: kept 4-bit, rows made when indexed: W_E[ids]);
                       # None: the toy embeds a token by its text
    model.W_U          # (d, vocab) unembedding, logits = ln_final(resid) @ W_U + b_U; None: no output head
    model.b_U          # (vocab,) its bias (zeros when the head has none); None without W_U
    model.W_V          # (layers, heads, d, d_head) each query head's value projection
    model.b_V          # (layers, heads, d_head) its bias (zeros: none)
    model.W_O          # (layers, heads, d_head, d) each head's rows of the output projection
    model.b_O          # (layers, d) its bias: attn_out = Σ_h z[:, h] @ W_O[l, h] + b_O[l]
    model.ln_final(x)  # (…, d) → (…, d) the norm between the last block and W_U (the identity for
                       # a post-LN encoder and the toy, which have none)
    model.ln_final_w   # (d,) its weight γ, model.ln_final_b (d,) its shift β (zeros: RMSNorm); None without W_U
    model.ln_final_centres  # True for a LayerNorm (subtracts the mean first), False for an RMSNorm

With grouped-query attention a query head's W_V and b_V are its key/value head's, repeated for every
query head that reads it, as TransformerLens's ``W_V`` does.

Attention and MLP outputs are hook points (``blocks.{l}.hook_attn_out``, ``hook_mlp_out``, each
head's output ``attn.hook_z``).

A model implements ``facts``, ``tokenize``, ``hook_names``, ``_forward`` (the family's forward
with ``hooks`` / ``start_at_layer`` / ``resid`` / ``stop_at_layer`` / ``use_cache``) and the
components; :class:`HookedModel` gives it ``run``, ``run_with_cache`` and ``run_with_hooks``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Protocol, Sequence

import numpy as np

from ..core.memory import DEFAULT_MEMORY_BUDGET
from ..core.errors import EngineError
from ..core.hooks import HookRun, hook_run
from ..text.tokenize import Token


KINDS = ("toy", "encoder", "decoder")


@dataclass(frozen=True)
class Capabilities:
    """What a model can do beyond ``run`` (the app shows a panel, a menu entry, … when True)."""

    next_token_logits: bool = False  # the trace's next_token_logits, logit lens, generation (decoders)
    sentence_embedding: bool = False  # ``model.embed(trace)`` → (d,) unit vector (e5)
    configurable: bool = False  # runs the user's settings (d_model, heads, …): the toy engine
    kv_cache: bool = False  # ``run(…, previous=trace)`` computes only the new positions
    layer_batches: bool = False  # engine.models.llama_batch runs many patched variants of one layer at once
    prefixes: tuple[str, ...] = ()  # text prefixes it was trained with (e5: "passage: ", "query: ")
    # the residual stream is the sum of the embedding, each head's z @ W_O, b_O and each MLP's output, read
    # by the logits through ln_final and W_U only (no norm on a block's outputs, no soft cap on the logits):
    # direct logit attribution adds up (engine.analysis.dla)
    logit_attribution: bool = False
    gradients: bool = False  # engine.grad follows its forward: a backward pass (saliency, attribution patching)


@dataclass(frozen=True)
class ModelFacts:
    """What a loaded model is: declared by the model from its own files, read by the app."""

    family: str  # the block's family: toy | bert | xlm-roberta | llama | qwen2 | …
    kind: str  # toy | encoder | decoder (KINDS)
    layers: int
    heads: int  # query heads
    kv_heads: int  # key/value heads (= heads without grouped-query attention)
    d_model: int
    d_head: int
    vocab_size: int
    special_tokens: frozenset  # the texts of its tokenizer's special / control tokens (not its unknown piece: text)
    max_positions: int  # the longest text it reads, in tokens
    capabilities: Capabilities = Capabilities()
    name: str = ""  # its published name (e.g. sentence-transformers/all-MiniLM-L6-v2)
    tokenizer_note: str = ""  # English, one line: what its tokenizer is (translated in Qt context "Model")

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise EngineError("unknown model kind {kind!r}: one of {kinds}", field="model", kind=self.kind,
                              kinds=", ".join(KINDS))
        if self.heads % self.kv_heads:
            raise EngineError("{heads} query heads cannot share {kv} key/value heads", field="model",
                              heads=self.heads, kv=self.kv_heads)

    def special_mask(self, token_texts: Sequence[str]) -> np.ndarray:
        """(n,) bool: which tokens are this model's special tokens."""
        return np.array([text in self.special_tokens for text in token_texts], dtype=bool)


class Trace(Protocol):
    """What every trace offers (see the module docstring)."""

    tokens: tuple[Token, ...]
    input_ids: np.ndarray  # (n,) int64
    attentions: np.ndarray  # (layers, heads, n, n)
    hidden_states: np.ndarray  # (layers + 1, n, d)
    next_token_logits: np.ndarray | None  # (vocab,) for decoders, else None
    ablate: frozenset

    @property
    def spans(self) -> tuple[tuple[int, int], ...]: ...

    @property
    def token_texts(self) -> list[str]: ...

    def arrays(self) -> Mapping[str, np.ndarray]: ...


class Model(Protocol):
    """What every loaded model offers (see the module docstring)."""

    facts: ModelFacts
    W_E: np.ndarray | None  # (vocab, d)
    W_U: np.ndarray | None  # (d, vocab)
    b_U: np.ndarray | None  # (vocab,)
    W_V: np.ndarray  # (layers, heads, d, d_head)
    b_V: np.ndarray  # (layers, heads, d_head)
    W_O: np.ndarray  # (layers, heads, d_head, d)
    b_O: np.ndarray  # (layers, d)

    ln_final_w: np.ndarray | None  # (d,)
    ln_final_b: np.ndarray | None  # (d,)
    ln_final_centres: bool

    def ln_final(self, x: np.ndarray) -> np.ndarray: ...

    def tokenize(self, text: str) -> "Tokenized": ...

    def hook_names(self) -> tuple[str, ...]: ...

    def layer_view(self, trace: Trace, layer: int): ...

    def run(self, inputs, *, ablate=frozenset(), memory_budget: int = DEFAULT_MEMORY_BUDGET,
            use_cache: bool = True) -> Trace: ...

    def run_with_cache(self, inputs, names=None, *, ablate=frozenset(),
                       memory_budget: int = DEFAULT_MEMORY_BUDGET, use_cache: bool = True) -> tuple[Trace, dict]: ...

    def run_with_hooks(self, inputs, fwd_hooks=(), *, ablate=frozenset(), start_at_layer=None, resid=None,
                       stop_at_layer=None, memory_budget: int = DEFAULT_MEMORY_BUDGET,
                       use_cache: bool = True) -> Trace: ...


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


def values_by_head(w_v: Sequence[np.ndarray], heads: int, d_head: int) -> np.ndarray:
    """Each layer's W_V (d, kv_heads·d_head) as TransformerLens's W_V (layers, heads, d, d_head), read-only:
    query head h reads key/value head h // (heads / kv_heads)."""
    stacked = []
    for layer in w_v:
        kv = layer.shape[1] // d_head
        share = np.arange(heads) // (heads // kv)  # (heads,) the key/value head of each query head
        stacked.append(layer.reshape(layer.shape[0], kv, d_head)[:, share].transpose(1, 0, 2))  # (heads, d, d_head)
    return _read_only_stack(stacked)


def value_biases_by_head(b_v: Sequence[np.ndarray | None], heads: int, d_head: int, kv_heads: int) -> np.ndarray:
    """Each layer's value bias (kv_heads·d_head,) or None as TransformerLens's b_V (layers, heads, d_head)."""
    share = np.arange(heads) // (heads // kv_heads)
    return _read_only_stack([np.zeros((heads, d_head), np.float32) if layer is None
                             else layer.reshape(kv_heads, d_head)[share] for layer in b_v])


def output_biases(b_o: Sequence[np.ndarray | None], d: int) -> np.ndarray:
    """Each layer's output bias (d,) or None as TransformerLens's b_O (layers, d)."""
    return _read_only_stack([np.zeros(d, np.float32) if layer is None else layer for layer in b_o])


def outputs_by_head(w_o: Sequence[np.ndarray], heads: int) -> np.ndarray:
    """Each layer's W_O (heads·d_head, d) as TransformerLens's W_O (layers, heads, d_head, d), read-only."""
    return _read_only_stack([layer.reshape(heads, layer.shape[0] // heads, layer.shape[1]) for layer in w_o])


def _read_only_stack(arrays: list[np.ndarray]) -> np.ndarray:
    stacked = np.stack(arrays)
    stacked.flags.writeable = False
    return stacked


class HookedModel:
    """``run`` / ``run_with_cache`` / ``run_with_hooks`` on top of a model's ``tokenize``,
    ``hook_names`` and ``_forward(tokenized, *, ablate, memory_budget, hooks, start_at_layer,
    resid, stop_at_layer, **options)``."""

    facts: ModelFacts

    def tokenize(self, text: str) -> Tokenized:  # pragma: no cover - every model has its own
        raise NotImplementedError

    def hook_names(self) -> tuple[str, ...]:  # pragma: no cover
        raise NotImplementedError

    def _forward(self, tokenized: Tokenized, **options):  # pragma: no cover
        raise NotImplementedError

    def layer_view(self, trace, layer: int):  # pragma: no cover - every model has its own
        """Layer ``layer`` of ``trace`` as a toy-engine AttentionResult: what every panel draws
        (the one trace adapter: engine/models/bert_view.py, engine/models/decoder_view.py, the toy's own)."""
        raise NotImplementedError

    def _inputs(self, inputs) -> Tokenized:
        if isinstance(inputs, Tokenized):
            return inputs
        if isinstance(inputs, str):
            return self.tokenize(inputs)
        raise EngineError("a model runs a text or the Tokenized its tokenize() returned; got {kind}",
                          field="text", kind=type(inputs).__name__)

    def run(self, inputs, *, ablate=frozenset(), memory_budget: int = DEFAULT_MEMORY_BUDGET,
            use_cache: bool = True, **options):
        """The model's trace of ``inputs`` with the heads of ``ablate`` switched off. ``use_cache=False``:
        the model's own cache (a decoder's last trace, its KV cache) is neither read nor replaced."""
        return self._forward(self._inputs(inputs), ablate=ablate, memory_budget=memory_budget, hooks=None,
                             use_cache=use_cache, **options)

    def run_with_cache(self, inputs, names: Iterable[str] | None = None, *, ablate=frozenset(),
                       memory_budget: int = DEFAULT_MEMORY_BUDGET, use_cache: bool = True, **options):
        """(trace, cache): cache maps each hook point of ``names`` (None: all) to a read-only copy."""
        hooks = HookRun(self.hook_names(), cache=None if names is None else list(names), cache_all=names is None)
        trace = self._forward(self._inputs(inputs), ablate=ablate, memory_budget=memory_budget, hooks=hooks,
                              use_cache=use_cache, **options)
        return trace, hooks.cache

    def run_with_hooks(self, inputs, fwd_hooks=(), *, ablate=frozenset(), start_at_layer: int | None = None,
                       resid: np.ndarray | None = None, stop_at_layer: int | None = None,
                       memory_budget: int = DEFAULT_MEMORY_BUDGET, use_cache: bool = True, **options):
        """The trace with ``fwd_hooks`` [(name, fn(array, name) → replacement or None), …] applied;
        ``start_at_layer`` with ``resid`` (n, d) resumes at blocks.{l}.hook_resid_pre,
        ``stop_at_layer`` runs the layers below it only (engine/core/hooks.py)."""
        hooks = hook_run(self.hook_names(), fwd_hooks)
        return self._forward(self._inputs(inputs), ablate=ablate, memory_budget=memory_budget, hooks=hooks,
                             start_at_layer=start_at_layer, resid=resid, stop_at_layer=stop_at_layer,
                           use_cache=use_cache, **options)
