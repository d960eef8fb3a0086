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

import functools
import os
import re
import threading
import unicodedata
from typing import NamedTuple

from ..core.errors import EngineError
from ..core.install import pip_install

# CJK ideographs (unified, extensions A, compatibility) and CJK punctuation / full-width forms:
# text a Chinese reader writes without spaces.
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef"
_CJK_PUNCT = "\u3000-\u303f\uff00-\uffef"
_CJK_RUN = re.compile(f"[{_HAN}{_CJK_PUNCT}]+")
_NON_SPACE = re.compile(r"\S+")


def _scan_marks() -> str:
    ranges, start, previous = [], None, None
    for code in range(0x20000):
        if unicodedata.category(chr(code)) in ("Mn", "Mc", "Me"):
            if start is None:
                start = code
            previous = code
        elif start is not None:
            ranges.append((start, previous))
            start = None
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


def _mark_class() -> str:
    """A regex class body of every combining mark (Mn, Mc, Me) in planes 0–1: Python's re has no
    \\p{M}. Marks belong to the letter before them (नमस्ते, é written e + U+0301, ❤️ = ❤ + U+FE0F).
    Scanning Unicode takes ~0.2 s, so the result is cached per Unicode version."""
    from .segment import cache_folder

    path = cache_folder() / f"marks-{unicodedata.unidata_version}.txt"
    try:
        return path.read_text(encoding="ascii")
    except OSError:
        pass
    marks = _scan_marks()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(marks, encoding="ascii")
        os.replace(temporary, path)
    except OSError:
        pass  # no writable cache: scan again next time
    return marks


_MARK = f"[{_mark_class()}]"
_LETTER = rf"(?:[^\W_]|{_MARK})"
# a word (letters, digits and their marks, with inner apostrophes), or one symbol with its marks and
# zero-width-joined parts (emoji sequences such as 👩‍💻 stay one token)
_WORD_OR_SYMBOL = re.compile(rf"{_LETTER}+(?:['’]{_LETTER}+)*|\S{_MARK}*(?:\u200d\S{_MARK}*)*", re.UNICODE)

_jieba_lock = threading.Lock()
_jieba = None


class Token(NamedTuple):
    """One token: its text and the half-open character span [start, end) it came from.

    A named tuple (immutable, compared by value): made ~2× faster than a frozen dataclass,
    which mattered at 0.9 µs a token in a 512-token sentence."""

    text: str
    start: int
    end: int


def _get_jieba():
    """jieba's segmenter over a fast-loading dictionary (engine.text.segment), built once, thread-safe."""
    global _jieba
    with _jieba_lock:
        if _jieba is None:
            try:
                from .segment import fast_tokenizer

                _jieba = fast_tokenizer()
            except ImportError:  # pragma: no cover - jieba is a declared dependency
                raise EngineError("the jieba tokenizer needs the jieba package: {command}", command=pip_install("jieba")) from None
        return _jieba


def warm_up() -> None:
    """Load jieba's dictionary now so the first Chinese sentence is not slow."""
    _get_jieba()


def is_skipped(text: str) -> bool:
    """Control / format / unassigned characters carry nothing to attend to."""
    if text and text.isprintable() and not text.isspace():
        # Fast path (C speed; the per-character check below cost ~1 µs a token): a printable
        # text that is not all space has a visible character, none of the categories below.
        return False
    return all(unicodedata.category(ch) in ("Cc", "Cf", "Cn", "Cs", "Zl", "Zp") or ch.isspace() for ch in text)


@functools.lru_cache(maxsize=4096)
def _segment(text: str) -> tuple[tuple[str, int, int], ...]:
    """jieba's words of one run of text with their spans; cached, since live typing segments the
    same runs again and again."""
    return tuple((word, start, end) for word, start, end in _get_jieba().tokenize(text) if not is_skipped(word))


def _jieba_spans(text: str, offset: int) -> list[Token]:
    return [Token(word, offset + start, offset + end) for word, start, end in _segment(text)]


def _spans(pattern: re.Pattern, text: str, offset: int) -> list[Token]:
    """A token per match of ``pattern`` in ``text``, spans shifted by ``offset``; matches made only
    of control / format characters are skipped (checked only when the text has such a character:
    the per-match check cost ~1 µs a token)."""
    check = not text.isprintable()
    return [
        Token(m.group(), offset + m.start(), offset + m.end())
        for m in pattern.finditer(text)
        if not (check and is_skipped(m.group()))
    ]


def tokenize(text: str, mode: str = "auto") -> list[Token]:
    """Tokens of ``text`` in order, each with its span; an empty list if nothing is left."""
    if mode == "whitespace":
        return _spans(_NON_SPACE, text, 0)
    if mode == "chars":
        return [Token(ch, i, i + 1) for i, ch in enumerate(text) if not is_skipped(ch)]
    if mode == "jieba":
        return _jieba_spans(text, 0)
    if mode != "auto":
        raise EngineError("unknown tokenizer {mode!r}", mode=mode)
    tokens: list[Token] = []
    position = 0
    for run in _CJK_RUN.finditer(text):
        tokens += _spans(_WORD_OR_SYMBOL, text[position : run.start()], position)
        tokens += _jieba_spans(run.group(), run.start())
        position = run.end()
    tokens += _spans(_WORD_OR_SYMBOL, text[position:], position)
    return tokens
