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

Switched-off heads (the request's ``ablate``) are off in every run, the baseline's too, so the
bars read the same model as the window's next-token view and ``export --ablate``.
:func:`leave_one_out` is the analysis of one engine.analysis.request.RunRequest; it reports each
token's value as it finishes (``partial``) so a worker task can draw the bars as they come.
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


def leave_one_out(model, request, *, progress=None, cancelled=None, partial=None) -> Occlusion:
    """Leave-one-out of ``request.text`` (see the module docstring), the heads of
    ``request.ablate`` off in every run; ``request.answer``: a decoder's answer token text
    (required there, ignored by encoders). ``progress(done, total)`` and ``partial(result so far)``
    after each token; ``cancelled()`` polled before each: True stops, the result marked incomplete."""
    request = request.checked(model.facts)
    ablate = request.ablate
    tokenized = model.tokenize(request.text)
    _check_length(len(tokenized.input_ids))
    if is_decoder(model):
        if request.answer is None:
            raise EngineError("a decoder's leave-one-out needs --answer: the token whose probability to measure",
                              field="answer")
        target = answer_token(model, request.answer)
        base = model.run(tokenized, ablate=ablate, use_cache=False)
        baseline = probability(base.next_token_logits, target.id)

        def measure(k: int) -> float:
            # positions < k are reused from the full run (a causal model never looks ahead)
            trace = model.run(without(tokenized, k), ablate=ablate, previous=base)
            return probability(trace.next_token_logits, target.id)

        kind = "p(answer)"
    else:
        target = None
        full = sentence_embedding(model.run(tokenized, ablate=ablate))
        baseline = 1.0

        def measure(k: int) -> float:
            return cosine(full, sentence_embedding(model.run(without(tokenized, k), ablate=ablate)))

        kind = "cosine"
    texts = tuple(t.text for t in tokenized.tokens)
    n = len(texts)
    values = np.full(n, np.nan)

    def result(complete: bool) -> Occlusion:
        shown = values.copy()
        shown.flags.writeable = False
        return Occlusion(texts, shown, baseline, kind, target, complete)

    for k in range(n):
        if cancelled is not None and cancelled():
            return result(False)
        if n > 1:
            values[k] = measure(k)
        if progress is not None:
            progress(k + 1, n)
        if partial is not None and k + 1 < n:
            partial(result(False))
    return result(True)


def occlusion(model, text: str, answer: str | None = None, *, ablate=frozenset(), progress=None,
              cancelled=None) -> Occlusion:
    """:func:`leave_one_out` of a text (and a decoder's answer), for callers without a request."""
    from .request import RunRequest

    return leave_one_out(model, RunRequest(text=text, ablate=frozenset(ablate), answer=answer), progress=progress,
                         cancelled=cancelled)


def _check_length(n: int) -> None:
    if n > OCCLUSION_TOKENS:
        raise EngineError("leave-one-out runs the model once per token: {n} tokens is more than {limit}; "
                          "shorten the text", field="text", n=n, limit=OCCLUSION_TOKENS)
