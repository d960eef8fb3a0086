"""A decoder's next token, as analyses of one run request: the distribution after a position
(reshaped by temperature / top-k / top-p), the logit lens (nostalgebraist, 2020), and generating
one more character of text.

    bars = next_token(model, request, runs)        # NextToken: the 10 likeliest after request.position
    lens = logit_lens(model, request, runs)        # LogitLensResult: each layer's top 5 there
    more = generate(model, trace, greedy=False, temperature=0.8, top_k=40, top_p=0.95, seed=1)

Byte-level vocabularies hold pieces that are part of a character (SmolLM2 writes 小 as two). A
generation goes on until the new pieces make whole UTF-8 characters, and only draws pieces that
can still make one (a lone continuation byte is never drawn): the text never receives a label
such as ``<c2>``. When nothing can be added (the model's end-of-text token, a character that
does not finish) it says why instead of returning the text unchanged.
"""
from __future__ import annotations

import codecs
from dataclasses import dataclass

import numpy as np

from ..core.errors import EngineError
from ..models.llama import pick_token, reshape_probabilities

NEXT_BARS = 10  # the likeliest next tokens an export and the window's bars hold
LENS_TOP = 5  # the logit lens's tokens per layer
PLAIN_SAMPLING = (1.0, 0, 1.0)  # temperature, top-k (0: all), top-p: the model's own distribution
MAX_FRAGMENTS = 8  # pieces drawn at most to finish the characters of one generation
MAX_REDRAWS = 256  # pieces refused at most (they could not continue a character) before giving up


@dataclass(frozen=True, eq=False)
class NextToken:
    position: int  # the token the prediction follows
    ids: np.ndarray  # (k,) int64 likeliest first
    probabilities: np.ndarray  # (k,) float64 after reshaping
    texts: tuple[str, ...]  # each id's display text
    kept: int  # tokens left with a probability > 0 by top-k / top-p

    def arrays(self) -> dict:
        return {"next_token_top_ids": self.ids, "next_token_top_probabilities": self.probabilities}


@dataclass(frozen=True, eq=False)
class LogitLensResult:
    lens: object  # engine.models.llama.LogitLens: position, top_ids (layers + 1, k), top_probabilities, final_id …
    texts: tuple[tuple[str, ...], ...]  # (layers + 1, k) display texts of top_ids
    final_text: str  # the model's own top-1

    def arrays(self) -> dict:
        return {"logit_lens_top_ids": self.lens.top_ids, "logit_lens_top_probabilities": self.lens.top_probabilities,
                "logit_lens_final_probability": self.lens.final_probability}


@dataclass(frozen=True, eq=False)
class Generation:
    text: str  # the text with the new characters
    ids: np.ndarray  # (n + new,) the ids of the text and of the new pieces
    added: str  # the new characters


def top_bars(model, logits: np.ndarray, k: int, temperature: float, top_k: int, top_p: float) -> NextToken:
    """The k likeliest of ``logits`` (vocab,) after reshaping (position -1: not known here)."""
    probabilities = reshape_probabilities(logits, temperature=temperature, top_k=top_k, top_p=top_p)
    count = min(k, probabilities.size)
    top = np.argpartition(-probabilities, count - 1)[:count]
    top = top[np.argsort(-probabilities[top], kind="stable")].astype(np.int64)
    return NextToken(-1, top, probabilities[top], tuple(model.tokenizer.display([int(i) for i in top])),
                     int(np.count_nonzero(probabilities)))


def next_token(model, request, runs, k: int = NEXT_BARS, sampling=PLAIN_SAMPLING) -> NextToken:
    """The k likeliest tokens after ``request.position`` (-1: the last token) at ``sampling``."""
    trace = runs.trace
    position = _position(request.position, trace.n)
    bars = top_bars(model, model.next_token_logits(trace, position), k, *sampling)
    return NextToken(position, bars.ids, bars.probabilities, bars.texts, bars.kept)


def logit_lens(model, request, runs, top_k: int = LENS_TOP) -> LogitLensResult:
    """What each layer's residual stream would predict after ``request.position``."""
    lens = model.logit_lens(runs.trace, _position(request.position, runs.trace.n), top_k)
    texts = tuple(tuple(model.tokenizer.display([int(i) for i in row])) for row in lens.top_ids)
    return LogitLensResult(lens, texts, model.tokenizer.display([lens.final_id])[0])


def _position(position: int, n: int) -> int:
    if not -n <= position < n:
        raise EngineError("position {position} is outside the text's {n} tokens", field="position",
                          position=position, n=n)
    return position % n


def _continues(data: bytes) -> bool:
    """Whether ``data`` is whole UTF-8 characters, or whole ones and the start of one more."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
    except UnicodeDecodeError:
        return False
    return True


def _whole(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def generate(model, trace, *, greedy: bool = True, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0,
             seed: int | None = None, run=None) -> Generation:
    """``trace``'s text with the next piece appended (the likeliest, or drawn from the reshaped
    distribution), and more pieces while they hold part of a character. ``run(ids)`` → the trace
    of ids (default ``model.run_ids``; the window's keeps the model's KV cache as it was).

    EngineError when nothing can be added: the model chose one of its special tokens, or no
    piece it allows can finish the character begun."""
    run = run or model.run_ids
    rng = np.random.default_rng(seed)
    ids, logits, pending = np.asarray(trace.input_ids, dtype=np.int64), trace.next_token_logits, b""
    for _ in range(MAX_FRAGMENTS):
        probabilities = reshape_probabilities(logits, temperature=temperature, top_k=top_k, top_p=top_p)
        token, data = _draw(model, probabilities, pending, greedy, rng)
        ids, pending = np.append(ids, token), pending + data
        if _whole(pending):
            return Generation(trace.text + pending.decode("utf-8"), ids, pending.decode("utf-8"))
        logits = run(ids).next_token_logits
    raise EngineError("{count} pieces did not finish a character (bytes {data}): nothing was added",
                      field="text", count=MAX_FRAGMENTS, data=pending.hex(" "))


def _draw(model, probabilities: np.ndarray, pending: bytes, greedy: bool, rng) -> tuple[int, bytes]:
    """A piece whose bytes continue ``pending`` as UTF-8 (others are set to 0 and drawn again)."""
    probabilities = probabilities.copy()
    special = model.facts.special_tokens
    for _ in range(MAX_REDRAWS):
        token = pick_token(probabilities, greedy=greedy, rng=rng)
        text = model.tokenizer.display([token])[0]
        if text in special:
            raise EngineError("the model chose its special token {token}: nothing was added after the text",
                              field="text", token=text)
        data = model.tokenizer.token_bytes(token)
        if data and _continues(pending + data):
            return token, data
        probabilities[token] = 0.0
        total = probabilities.sum()
        if total <= 0.0:
            break
        probabilities /= total
    raise EngineError("no piece the sampling settings allow continues the text as whole characters: nothing was "
                      "added (raise top-k or top-p)", field="text")
