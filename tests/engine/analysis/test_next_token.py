"""Generating from a byte-level vocabulary (engine.analysis.next_token, through the window's job):
pieces that are parts of a character make whole characters, never a label like ``<c2>`` in the
user's text; a piece that cannot continue a character is not drawn; when nothing can be added the
job says why instead of giving the text back unchanged."""
from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np
import pytest

from app.jobs import decoder_view, trained
from engine.analysis.next_token import MAX_FRAGMENTS
from engine.core.errors import EngineError

# id → bytes of a byte-level vocabulary: ¢ is c2 a2, 小 is e5 b0 8f
PIECES = [b"x", b"\xc2", b"\xa2", b"\xe5", b"\xb0\x8f", b"<|endoftext|>", b"\xe5\xb0", b"\x8f\xe5\xb0"]
X, C2, A2, E5, B08F, END, E5B0, LOOP = range(len(PIECES))
SPECIAL = frozenset({"<|endoftext|>"})


def logits_for(*order: int) -> np.ndarray:
    """Logits that rank ``order`` first, second, … (the rest far below)."""
    logits = np.full(len(PIECES), -50.0, np.float32)
    for rank, token in enumerate(order):
        logits[token] = 10.0 - 5.0 * rank
    return logits


class Tokenizer:
    def token_bytes(self, token: int) -> bytes:
        return PIECES[token]

    def display(self, ids) -> list[str]:
        return [PIECES[int(i)].decode("utf-8", "backslashreplace") for i in ids]

    def tokens_from_ids(self, ids):  # the old job's fallback: hex labels for unfinished characters
        data = b"".join(PIECES[int(i)] for i in ids)
        return data.decode("utf-8", "backslashreplace").replace("\\x", "<") , ()


class Model:
    """A decoder whose next logits after a text are ``after[last id]``."""

    def __init__(self, after: dict) -> None:
        self.after = after
        self.tokenizer = Tokenizer()
        self.facts = SimpleNamespace(special_tokens=SPECIAL)
        self._lock, self._last = threading.Lock(), None
        self.runs = 0

    def run_ids(self, ids, *args, **options):
        self.runs += 1
        return SimpleNamespace(next_token_logits=self.after[int(ids[-1])])


def generated(monkeypatch, after: dict, first: np.ndarray, greedy: bool = True, seed=None, top_k: int = 0) -> str:
    model = Model(after)
    monkeypatch.setattr(trained, "model", lambda name, progress=None: model)
    trace = SimpleNamespace(input_ids=np.array([X]), next_token_logits=first, text="x", ablate=frozenset())
    return decoder_view.generated_text("bytes", trace, greedy, 1.0, top_k, 1.0, seed)


def test_a_character_in_two_pieces_is_written_whole(monkeypatch):
    assert generated(monkeypatch, {C2: logits_for(A2)}, logits_for(C2)) == "x¢"
    assert generated(monkeypatch, {E5: logits_for(B08F)}, logits_for(E5)) == "x小"


def test_a_piece_that_cannot_start_a_character_is_not_drawn(monkeypatch):
    """The likeliest piece is a lone continuation byte (a2): the next likeliest whole one is written, not '<a2>'."""
    text = generated(monkeypatch, {A2: logits_for(A2)}, logits_for(A2, X))
    assert text == "xx" and "<" not in text


def test_a_sampled_continuation_is_never_a_label(monkeypatch):
    """Sampling over a distribution where half the mass is on pieces no character can continue with."""
    for seed in range(20):
        first = np.log(np.array([0.25, 0.25, 0.25, 0, 0.25, 0, 0, 0]) + 1e-30).astype(np.float32)  # x c2 a2 b08f
        after = {C2: logits_for(A2), X: logits_for(X)}
        text = generated(monkeypatch, after, first, greedy=False, seed=seed)
        assert text in ("xx", "x¢"), (seed, text)


def test_the_end_of_text_token_says_why_nothing_was_added(monkeypatch):
    with pytest.raises(EngineError, match="special token <\\|endoftext\\|>: nothing was added"):
        generated(monkeypatch, {}, logits_for(END))


def test_a_character_that_never_finishes_says_why(monkeypatch):
    """e5 b0, then 8f e5 b0 again and again: each piece ends a character and begins the next."""
    with pytest.raises(EngineError, match=f"{MAX_FRAGMENTS} pieces did not finish a character"):
        generated(monkeypatch, {E5B0: logits_for(LOOP), LOOP: logits_for(LOOP)}, logits_for(E5B0))


def test_no_piece_that_continues_the_character_says_why(monkeypatch):
    """After e5 b0 only pieces that cannot follow it have any probability (top-k of them)."""
    with pytest.raises(EngineError, match="no piece the sampling settings allow continues the text"):
        generated(monkeypatch, {E5B0: logits_for(E5B0)}, logits_for(E5B0), top_k=2)  # e5 b0 and x
