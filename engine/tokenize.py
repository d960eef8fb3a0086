"""Split text into tokens that remember their character span in the text.

Modes:
- ``auto``: runs of Chinese characters are segmented with jieba (小明喜欢苹果 → 小明 | 喜欢 | 苹果);
  everything else splits into words and single punctuation marks / symbols (emoji included).
- ``whitespace``: split on white space only.
- ``chars``: one token per non-space character.
- ``jieba``: jieba on the whole text (white space dropped).

Control characters (other than white space) are skipped, never tokens. jieba builds its
dictionary on first use (about a second): call :func:`warm_up` early, e.g. in a worker thread.
"""
from __future__ import annotations

import logging
import re
import threading
import unicodedata
from dataclasses import dataclass

from .errors import EngineError

# CJK ideographs (unified, extensions A, compatibility) and CJK punctuation / full-width forms:
# text a Chinese reader writes without spaces.
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef"
_CJK_PUNCT = "\u3000-\u303f\uff00-\uffef"
_CJK_RUN = re.compile(f"[{_HAN}{_CJK_PUNCT}]+")
_WORD_OR_SYMBOL = re.compile(r"[^\W_]+(?:['’][^\W_]+)*|\S", re.UNICODE)

_jieba_lock = threading.Lock()
_jieba = None


@dataclass(frozen=True)
class Token:
    """One token: its text and the half-open character span [start, end) it came from."""

    text: str
    start: int
    end: int


def _get_jieba():
    """Import jieba and build its dictionary once (thread-safe)."""
    global _jieba
    with _jieba_lock:
        if _jieba is None:
            try:
                import jieba
            except ImportError:  # pragma: no cover - jieba is a declared dependency
                raise EngineError(
                    "the jieba tokenizer needs the jieba package: pip install jieba"
                ) from None
            jieba.setLogLevel(logging.WARNING)
            jieba.initialize()
            _jieba = jieba
        return _jieba


def warm_up() -> None:
    """Build jieba's dictionary now so the first Chinese sentence is not slow."""
    _get_jieba()


def _is_skipped(text: str) -> bool:
    """Control / format / unassigned characters carry nothing to attend to."""
    if text and text.isprintable() and not text.isspace():
        # Fast path (C speed; the per-character check below cost ~1 µs a token): a printable
        # text that is not all space has a visible character, none of the categories below.
        return False
    return all(unicodedata.category(ch) in ("Cc", "Cf", "Cn", "Cs", "Zl", "Zp") or ch.isspace() for ch in text)


def _jieba_spans(text: str, offset: int) -> list[Token]:
    jieba = _get_jieba()
    return [
        Token(word, offset + start, offset + end)
        for word, start, end in jieba.tokenize(text)
        if not _is_skipped(word)
    ]


def _word_spans(text: str, offset: int) -> list[Token]:
    return [
        Token(m.group(), offset + m.start(), offset + m.end())
        for m in _WORD_OR_SYMBOL.finditer(text)
        if not _is_skipped(m.group())
    ]


def tokenize(text: str, mode: str = "auto") -> list[Token]:
    """Tokens of ``text`` in order, each with its span; an empty list if nothing is left."""
    if mode == "whitespace":
        return [
            Token(m.group(), m.start(), m.end())
            for m in re.finditer(r"\S+", text)
            if not _is_skipped(m.group())
        ]
    if mode == "chars":
        return [Token(ch, i, i + 1) for i, ch in enumerate(text) if not _is_skipped(ch)]
    if mode == "jieba":
        return _jieba_spans(text, 0)
    if mode != "auto":
        raise EngineError(f"unknown tokenizer {mode!r}")
    tokens: list[Token] = []
    position = 0
    for run in _CJK_RUN.finditer(text):
        tokens += _word_spans(text[position : run.start()], position)
        tokens += _jieba_spans(run.group(), run.start())
        position = run.end()
    tokens += _word_spans(text[position:], position)
    return tokens
