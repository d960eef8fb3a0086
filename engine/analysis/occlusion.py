"""Leave-one-out (occlusion): which tokens mattered, found by running the model without each one.

No gradients and no attention weights: token k is removed from the input (its id dropped, the
rest re-numbered as positions 0 … n − 2) and the model runs again.

- decoder: ``occlusion[k]`` = p(answer) at the last position of the prompt without token k
  (softmax of the next-token logits, float64), beside ``baseline`` = p(answer) with every token.
  The runs reuse the model's KV cache: positions before k are unchanged by removing k (a causal
  model never looks ahead), so each run computes only positions k … n − 2.
- encoder (MiniLM, e5): ``occlusion[k]`` = cosine of the sentence embedding without token k to the
  sentence embedding of the whole input (both the mean of the last layer over every token, as
  sentence-transformers and e5 pool); 1 means the token changed nothing.
A one-token input has nothing left without its token: that entry is NaN.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..core.errors import EngineError

OCCLUSION_TOKENS = 512  # one run per token: past this the command line and the window refuse


@dataclass(frozen=True)
class Answer:
    """The token whose probability a decoder measure reads."""

    id: int
    piece: str  # the token's text
    pieces: int  # how many tokens the typed answer had (the first is used when > 1)
    text: str  # as typed

    @property
    def note(self) -> str:
        """One sentence for the user when the answer was cut to its first token ("" otherwise)."""
        if self.pieces <= 1:
            return ""
        return f"the answer {self.text!r} is {self.pieces} tokens; the first, {self.piece!r}, is measured"


def is_decoder(model) -> bool:
    return model.facts.capabilities.next_token_logits  # declared (engine/models/contract.py)


def answer_token(model, text: str) -> Answer:
    """The first token of ``text`` in a decoder's vocabulary (EngineError when there is none)."""
    if not isinstance(text, str) or not text:
        raise EngineError("the answer is empty: give the token whose probability to measure, e.g. ' Paris'",
                          field="answer")
    ids, tokens = model.tokenizer.tokens(text)  # the decoder's BPE (no special tokens added)
    if len(ids) == 0:
        raise EngineError("the answer {answer!r} has no tokens: give a word, e.g. ' Paris'", field="answer", answer=text)
    return Answer(int(ids[0]), tokens[0].text, len(ids), text)


def sentence_embedding(trace) -> np.ndarray:
    """(d,) float64 mean of the last layer over every token (unnormalised: cosines ignore scale)."""
    return np.asarray(trace.hidden_states[-1], dtype=np.float64).mean(axis=0)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b) / norm) if norm > 0 else 0.0


def probability(logits: np.ndarray, token: int) -> float:
    """softmax(logits)[token] in float64."""
    logits = np.asarray(logits, dtype=np.float64)
    shifted = logits - logits.max()
    return float(np.exp(shifted[token]) / np.exp(shifted).sum())


def without(tokenized, position: int):
    """An encoder's Tokenized with one position removed (ids, token types and tokens)."""
    keep = np.arange(len(tokenized.input_ids)) != position
    ids = np.asarray(tokenized.input_ids)[keep].copy()
    types = None if tokenized.token_type_ids is None else np.asarray(tokenized.token_type_ids)[keep].copy()
    tokens = tuple(t for i, t in enumerate(tokenized.tokens) if i != position)
    return dataclasses.replace(tokenized, tokens=tokens, input_ids=ids, token_type_ids=types)


@dataclass(frozen=True, eq=False)
class Occlusion:
    tokens: tuple[str, ...]
    values: np.ndarray  # (n,) float64 the measure without each token (NaN: not computed / nothing left)
    baseline: float  # the measure with every token (p(answer); 1.0 for an encoder's cosine)
    measure: str  # "p(answer)" or "cosine"
    answer: Answer | None = None
    complete: bool = True  # False when cancelled part-way (the rest NaN)


def occlusion(model, text: str, answer: str | None = None, *, progress=None, cancelled=None) -> Occlusion:
    """Leave-one-out of ``text`` (see the module docstring). ``answer``: a decoder's answer token
    text (required there). ``progress(done, total)``, ``cancelled()``: optional callables."""
    if is_decoder(model):
        if answer is None:
            raise EngineError("a decoder's leave-one-out needs --answer: the token whose probability to measure",
                              field="answer")
        target = answer_token(model, answer)
        tokenized = model.tokenize(text)
        tokens = tokenized.tokens
        _check_length(len(tokenized.input_ids))
        ids = np.asarray(tokenized.input_ids, dtype=np.int64)
        base = model.run(tokenized, use_cache=False)
        baseline = probability(model.next_token_logits(base), target.id)

        def measure(k: int) -> float:
            rest = np.delete(ids, k)
            trace = model.run_ids(rest, previous=base)  # positions < k reused from the full run
            return probability(model.next_token_logits(trace), target.id)

        texts = tuple(t.text for t in tokens)
        kind = "p(answer)"
    else:
        target = None
        tokenized = model.tokenize(text)
        _check_length(len(tokenized.input_ids))
        full = sentence_embedding(model.run(tokenized))
        baseline = 1.0

        def measure(k: int) -> float:
            return cosine(full, sentence_embedding(model.run(without(tokenized, k))))

        texts = tuple(t.text for t in tokenized.tokens)
        kind = "cosine"
    n = len(texts)
    values = np.full(n, np.nan)
    complete = True
    for k in range(n):
        if cancelled is not None and cancelled():
            complete = False
            break
        if n > 1:
            values[k] = measure(k)
        if progress is not None:
            progress(k + 1, n)
    values.flags.writeable = False
    return Occlusion(texts, values, baseline, kind, target, complete)


def _check_length(n: int) -> None:
    if n > OCCLUSION_TOKENS:
        raise EngineError("leave-one-out runs the model once per token: {n} tokens is more than {limit}; "
                          "shorten the text", field="text", n=n, limit=OCCLUSION_TOKENS)
