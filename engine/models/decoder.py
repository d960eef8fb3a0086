"""The decoder as a model of the contract (engine/models/contract.py): any pre-norm decoder the
block of engine.models.llama runs, with its tokenizer; and :func:`load_gguf`, the GGUF family's loader
(llama, qwen2 files). SmolLM2 (engine.models.smollm2) is one such file.

    model = load_gguf("model.gguf")
    trace = model.run("The capital of France is")       # engine.models.llama.DecoderTrace
    model.top_tokens(trace, k=1)                        # [(' Paris', 0.77…)] for SmolLM2
    trace2 = model.run("The capital of France is Paris")  # only the new position is computed

Reading a GGUF file needs ``gguf`` (and ``pyyaml``) and ``tokenizers``, imported lazily.
"""
from __future__ import annotations

import threading
from functools import cached_property
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from . import llama
from ..text.bpe import CONTROL
from ..core.memory import DEFAULT_MEMORY_BUDGET
from ..core.errors import EngineError
from ..core.trace import read_only
from .gguf_file import GGUF_INSTALL_COMMAND, read_gguf
from .llama import DecoderConfig, DecoderTrace, LlamaWeights, LogitLens
from .contract import Capabilities, HookedModel, ModelFacts, Tokenized, output_biases, outputs_by_head, value_biases_by_head, values_by_head

PACKAGE = "gguf"  # what a local GGUF file needs (the registry's is_installed)
INSTALL_COMMAND = GGUF_INSTALL_COMMAND

# What the window's model facts say about the tokenizer (English; translated in context "Model")
TOKENIZER_NOTE = "byte-level BPE tokenizer (from the GGUF file)"

Progress = Callable[[float, str], None]


class Decoder(HookedModel):
    """A pre-norm decoder ready to run (any block shape engine.models.llama.DecoderConfig describes):
    config, weights, tokenizer, its special tokens. Thread-safe to run. A family's loader builds
    it: :func:`load_gguf` here for GGUF files.

    Keeps the last trace it made (under a lock) as the KV cache: :meth:`run` on a text whose
    tokens start with that trace's tokens computes only the new positions."""

    def __init__(self, config: DecoderConfig, weights: LlamaWeights, tokenizer, path: Path | None = None,
                 sha256: str = "", *, special_tokens=frozenset(), tokenizer_note: str = TOKENIZER_NOTE):
        self.config = config
        self.weights = weights
        self.tokenizer = tokenizer  # engine.text.bpe.BPETokenizer, or one with the same methods
        self.path = path
        self.sha256 = sha256
        self._last: DecoderTrace | None = None
        self._lock = threading.Lock()
        c = config
        self.facts = ModelFacts(
            family=c.architecture, kind="decoder", layers=c.num_layers, heads=c.num_heads, kv_heads=c.num_kv_heads,
            d_model=c.hidden_size, d_head=c.head_dim, vocab_size=c.vocab_size,
            special_tokens=frozenset(special_tokens),
            max_positions=c.context_length, capabilities=Capabilities(next_token_logits=True, kv_cache=True,
                                                                  layer_batches=c.plain_block,
                                                                  logit_attribution=not c.post_norms
                                                                  and not c.final_softcap, gradients=True),
            name=c.name or (path.name if path is not None else ""), tokenizer_note=tokenizer_note)

    def __repr__(self) -> str:
        c = self.config
        return (f"Decoder({c.architecture} {c.name!r}: {c.num_layers} layers, {c.num_heads} query heads / "
                f"{c.num_kv_heads} key-value heads, d={c.hidden_size}, vocab {c.vocab_size}, from {self.path})")

    # ------------------------------------------------------------ components (engine/models/contract.py)

    @property
    def W_E(self) -> np.ndarray:
        return self.weights.token_embeddings  # (vocab, d)

    @property
    def W_U(self) -> np.ndarray:
        return self.weights.output_head.T  # (d, vocab), a view of the (vocab, d) head (the embedding when tied)

    @cached_property
    def b_U(self) -> np.ndarray:
        return read_only(np.zeros(self.config.vocab_size, np.float32))  # (vocab,): the head has no bias

    @cached_property
    def W_V(self) -> np.ndarray:
        qd, kd = self.config.num_heads * self.config.head_dim, self.config.num_kv_heads * self.config.head_dim
        return values_by_head([w.qkv_weight[:, qd + kd:] for w in self.weights.layers], self.config.num_heads,
                              self.config.head_dim)  # (layers, heads, d, d_head)

    @cached_property
    def b_V(self) -> np.ndarray:
        c, qd, kd = self.config, self.config.num_heads * self.config.head_dim, self.config.num_kv_heads * self.config.head_dim
        return value_biases_by_head([None if w.qkv_bias is None else w.qkv_bias[qd + kd:] for w in self.weights.layers],
                                    c.num_heads, c.head_dim, c.num_kv_heads)  # (layers, heads, d_head)

    @cached_property
    def W_O(self) -> np.ndarray:
        return outputs_by_head([w.output_weight for w in self.weights.layers], self.config.num_heads)

    @cached_property
    def b_O(self) -> np.ndarray:
        return output_biases([w.output_bias for w in self.weights.layers], self.config.hidden_size)  # (layers, d)

    @cached_property
    def ln_final_w(self) -> np.ndarray:
        return self.weights.output_norm  # (d,) γ of the final norm

    @cached_property
    def ln_final_b(self) -> np.ndarray:
        bias = self.weights.output_norm_bias if self.config.norm == "layer" else None  # an RMSNorm adds no β
        return bias if bias is not None else read_only(np.zeros(self.config.hidden_size, np.float32))  # (d,)

    @property
    def ln_final_centres(self) -> bool:
        return self.config.norm == "layer"

    def ln_final(self, x: np.ndarray) -> np.ndarray:
        """The final norm of ``x`` (…, d), as before the logits: a new float32 array."""
        return llama.normalize(np.array(x, dtype=np.float32), self.weights.output_norm, self.weights.output_norm_bias,
                               self.config)

    # ------------------------------------------------------------ running

    def tokenize(self, text: str) -> Tokenized:
        """The pieces of ``text`` with their char spans, and their ids (n,) int64."""
        if not isinstance(text, str):
            raise EngineError("text must be a string", field="text")
        if not text:
            raise EngineError("text is empty: type a sentence, e.g. The capital of France is", field="text")
        ids, tokens = self.tokenizer.tokens(text)
        if len(ids) == 0:
            raise EngineError("text is empty: type a sentence, e.g. The capital of France is", field="text")
        return Tokenized(text, tuple(tokens), np.asarray(ids, dtype=np.int64))

    def layer_view(self, trace: DecoderTrace, layer: int):
        from .decoder_view import layer_result

        return layer_result(self, trace, layer)

    def hook_names(self) -> tuple[str, ...]:
        return llama.hook_names(self.config)

    def _forward(self, tokenized: Tokenized, *, ablate=frozenset(), memory_budget: int = DEFAULT_MEMORY_BUDGET,
                 hooks=None, start_at_layer=None, resid=None, stop_at_layer=None,
                 previous: DecoderTrace | None = None, use_cache: bool = True, keep: bool = True,
                 progress: Progress | None = None, prefix: int | None = None) -> DecoderTrace:
        return self.run_ids(tokenized.input_ids, tokenized.tokens, text=tokenized.text, ablate=ablate,
                            memory_budget=memory_budget, previous=previous, use_cache=use_cache, keep=keep,
                            progress=progress, hooks=hooks, start_at_layer=start_at_layer, resid=resid,
                            stop_at_layer=stop_at_layer, prefix=prefix)

    def run(self, inputs, *, ablate=frozenset(), memory_budget: int = DEFAULT_MEMORY_BUDGET,
            previous: DecoderTrace | None = None, use_cache: bool = True, keep: bool = True,
            progress: Progress | None = None) -> DecoderTrace:
        """Tokenize ``inputs`` (a text, or a :class:`Tokenized`) and run the decoder: the full
        :class:`~engine.models.llama.DecoderTrace`.

        ``previous``: a trace to reuse the shared prefix of (default: this model's last trace, when
        ``use_cache``). ``use_cache=False``: the model's last trace is neither read nor replaced (a run
        beside the one on screen). ``keep=False``: it may be read, but this run does not replace it.
        ``ablate``: (layer, head) pairs zeroed before W_O (a hook on hook_z)."""
        return super().run(inputs, ablate=ablate, memory_budget=memory_budget, previous=previous,
                           use_cache=use_cache, keep=keep, progress=progress)

    def run_ids(self, ids: Sequence[int], tokens=None, *, text: str | None = None, ablate=frozenset(),
                memory_budget: int = DEFAULT_MEMORY_BUDGET, previous: DecoderTrace | None = None,
                use_cache: bool = True, keep: bool = True, progress: Progress | None = None, hooks=None,
                start_at_layer=None, resid=None, stop_at_layer=None, prefix: int | None = None) -> DecoderTrace:
        """Run on token ids (e.g. after generating); text and tokens are decoded when not given.
        ``use_cache`` and ``keep`` as :meth:`run`. ``prefix`` with ``previous`` (activation patching):
        positions before it are copied from ``previous`` (engine.models.llama.forward says when that
        holds); ``run_with_hooks(…, start_at_layer=l, resid=r, previous=t, prefix=p)`` reaches it."""
        if tokens is None or text is None:
            text, tokens = self.tokenizer.tokens_from_ids(ids)
        if previous is None and use_cache:
            with self._lock:
                previous = self._last
        trace = llama.forward(self.weights, self.config, ids, tokens, text=text, ablate=ablate,
                              previous=previous if use_cache or previous is not None else None,
                              memory_budget=memory_budget, progress=progress, hooks=hooks,
                              start_at_layer=start_at_layer, resid=resid, stop_at_layer=stop_at_layer, prefix=prefix)
        if use_cache and keep and not trace.hooked:  # a hooked run's numbers are not the model's: never a KV cache
            with self._lock:
                self._last = trace
        return trace

    # ------------------------------------------------------------ reading the output

    def next_token_logits(self, trace: DecoderTrace, position: int = -1) -> np.ndarray:
        """(vocab,) float32 logits of the token after ``position``."""
        return llama.logits_at(self.weights, self.config, trace, position)

    def next_token_probabilities(self, trace: DecoderTrace, position: int = -1, *, temperature: float = 1.0,
                                 top_k: int = 0, top_p: float = 1.0) -> np.ndarray:
        """(vocab,) float64 probabilities of the next token, reshaped by temperature / top-k / top-p."""
        return llama.reshape_probabilities(self.next_token_logits(trace, position), temperature=temperature,
                                           top_k=top_k, top_p=top_p)

    def top_tokens(self, trace: DecoderTrace, position: int = -1, k: int = 10, **reshape) -> list[tuple[int, str, float]]:
        """The k most likely next tokens: (id, display text, probability), best first."""
        probabilities = self.next_token_probabilities(trace, position, **reshape)
        top = np.argsort(-probabilities, kind="stable")[:k]
        return [(int(i), self.tokenizer.display([i])[0], float(probabilities[i])) for i in top]

    def logit_lens(self, trace: DecoderTrace, position: int = -1, top_k: int = 5) -> LogitLens:
        return llama.logit_lens(self.weights, self.config, trace, position, top_k)

    def lens_logits(self, trace: DecoderTrace, layer: int, rows: slice = slice(None)) -> np.ndarray:
        """(rows, vocab) float32: what the residual stream after ``layer`` blocks (hidden_states[layer];
        ``layers``: the model's own output) would predict at the positions ``rows`` (the logit lens's grid)."""
        hidden = trace.hidden_states[layer, rows]  # (rows, d)
        return self.residual_logits(hidden, normed=layer == self.config.num_layers)

    def residual_logits(self, residuals: np.ndarray, *, normed: bool = False) -> np.ndarray:
        """(rows, vocab) float32: residual-stream rows (rows, d) of any layers and positions read as the
        last layer's output, through the final norm (skipped when ``normed``) and the output head."""
        return llama.lens_logits(self.weights, self.config, residuals, normed=normed)

    def generate_step(self, trace: DecoderTrace, *, greedy: bool = True, temperature: float = 1.0, top_k: int = 0,
                      top_p: float = 1.0, seed: int | None = None, rng: np.random.Generator | None = None,
                      memory_budget: int = DEFAULT_MEMORY_BUDGET) -> DecoderTrace:
        """Append one token (the most likely, or sampled from the reshaped distribution) and run
        the new position only (the KV cache): the trace of the longer text."""
        probabilities = llama.reshape_probabilities(trace.next_token_logits, temperature=temperature,
                                                    top_k=top_k, top_p=top_p)
        token = llama.pick_token(probabilities, greedy=greedy, seed=seed, rng=rng)
        ids = np.append(trace.input_ids, token)
        return self.run_ids(ids, previous=trace, ablate=trace.ablate, memory_budget=memory_budget)

    def export_arrays(self, trace: DecoderTrace) -> dict[str, np.ndarray]:
        """The arrays ``./run export`` writes: the trace's contract arrays (tokens, input_ids,
        attentions, hidden_states, next_token_logits of the last position)."""
        return trace.arrays()

    def longest_text(self, memory_budget: int = DEFAULT_MEMORY_BUDGET) -> int:
        """The most tokens whose full trace fits ``memory_budget``."""
        return llama.longest_text(self.config, memory_budget)


def load_gguf(path: str | Path, progress: Progress | None = None, *, expected_sha256: str | None = None) -> Decoder:
    """Load any local GGUF file of architecture ``llama`` or ``qwen2`` (others: EngineError naming it).

    The tensors are read one at a time into the final arrays (engine.models.gguf_file.GGUFTensors): no
    array of the model refers to the file afterwards, and a file that changed while it was read
    is refused. A model whose first short computation is not finite is refused naming the layer."""
    from ..text.bpe import BPETokenizer
    from .first_forward import check_first_forward

    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(min(max(fraction, 0.0), 1.0), message)

    contents = read_gguf(path, expected_sha256=expected_sha256, progress=lambda f, m: report(0.9 * f, m))
    try:
        weights = llama.prepare_weights(contents.tensors, contents.config)
    except BaseException:
        contents.tensors.file.close()
        raise
    contents.close()  # refuses a file that changed while it was read
    report(0.95, "building the tokenizer")
    name = contents.path.name
    try:
        tokenizer = BPETokenizer(contents.tokenizer)
    except EngineError:
        raise
    except Exception as error:  # the tokenizers library's own refusal of a vocabulary
        raise EngineError("{name}: the tokenizer cannot be built from the file's vocabulary and merges ({reason})",
                          field="model", name=name, reason=str(error)[:200]) from None
    spec = contents.tokenizer
    control = frozenset(t for t, kind in zip(spec.tokens, spec.token_types) if kind == CONTROL)
    decoder = Decoder(contents.config, weights, tokenizer, contents.path, contents.sha256, special_tokens=control)
    if expected_sha256 is None:  # a file of unknown origin; a checksummed one (SmolLM2) is known to compute
        report(0.98, "checking the first computation")
        check_first_forward(decoder, name)  # runs with use_cache=False: the user's first text runs in full
    report(1.0, "ready")
    return decoder
