"""A corpus file: one text a line (UTF-8), or one JSON object a line with the text in a field (JSONL).

Whole files are refused in one line when nothing in them can be a text: a binary file (NUL
bytes), an empty one, one whose lines are all too long (a 10 MB line) or none of them UTF-8, and one
in UTF-16 or UTF-32 (a byte-order mark says so: named, not called binary for its NUL bytes).
Otherwise the lines that cannot be read are skipped and counted by reason (:data:`SKIP_REASONS`),
so a corpus of mixed encodings keeps its UTF-8 lines and says how many others it lost.
Blank lines are no texts and are not counted as lost. The file's SHA-256 names the corpus in a
job's manifest: a folder made from other texts is never mixed with this one.
"""
from __future__ import annotations

import hashlib
import dataclasses
from dataclasses import dataclass

from ..core.errors import EngineError
from ..core.safe_io import parse_json, read_limited

MAX_CORPUS_BYTES = 512 * 1024**2  # ~5 M sentences; the texts are held in memory while the job runs
MAX_TEXT_CHARS = 100_000  # one text; a model reads at most a few thousand tokens of it anyway
# why a line was skipped → the words that say it on the command line
SKIP_REASONS = {"encoding": "not UTF-8", "long": f"over {MAX_TEXT_CHARS:,} characters",
                "json": "not a JSON object with the text field"}


@dataclass(frozen=True)
class Corpus:
    """The texts of a corpus file in file order, with what was skipped."""

    path: str
    texts: tuple[str, ...]
    sha256: str  # of the file's bytes
    field: str | None = None  # the JSONL field read; None: plain lines
    skipped: dict = dataclasses.field(default_factory=dict)  # reason (a key of SKIP_REASONS) → lines skipped

    def skipped_line(self) -> str:
        """"skipped 3 lines: 2 not UTF-8, 1 over 100,000 characters", or "" when nothing was."""
        counts = [(reason, count) for reason, count in self.skipped.items() if count]
        if not counts:
            return ""
        total = sum(count for _, count in counts)
        parts = ", ".join(f"{count:,} {SKIP_REASONS[reason]}" for reason, count in counts)
        return f"skipped {total:,} line{'s' if total != 1 else ''}: {parts}"


def read_corpus(path, field: str | None = None, limit: int = MAX_CORPUS_BYTES) -> Corpus:
    """The texts of the corpus file at ``path``; with ``field``, each line is a JSON object and the
    text is its ``field`` (a string). :class:`EngineError` when the file holds no usable text."""
    name = str(path)
    data = read_limited(path, "corpus file", limit)
    if not data.strip():
        raise EngineError("the corpus file {path!r} is empty: write one text a line (UTF-8)", field="texts",
                          path=name)
    wide = _wide_encoding(data)
    if wide:  # Notepad's "Unicode": every ASCII character has NUL bytes beside it, but it is text
        raise EngineError("the corpus file {path!r} is {encoding} text, not UTF-8: save it as UTF-8", field="texts",
                          path=name, encoding=wide)
    if b"\x00" in data:
        raise EngineError("the corpus file {path!r} is binary (it holds NUL bytes), not text: write one text a "
                          "line in UTF-8", field="texts", path=name)
    sha256 = hashlib.sha256(data).hexdigest()
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark (Notepad's): not part of the first text
        data = data[3:]
    texts, skipped = [], dict.fromkeys(SKIP_REASONS, 0)
    # bytes are split on \n only: str.splitlines would also cut at U+2028 and form feeds inside a text
    for raw in data.split(b"\n"):
        raw = raw.rstrip(b"\r")
        if not raw.strip():
            continue
        if len(raw) > 4 * MAX_TEXT_CHARS:  # more characters than the limit whatever the encoding: not decoded
            skipped["long"] += 1
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            skipped["encoding"] += 1
            continue
        if field is not None:
            line = _json_text(line, field)
            if line is None:
                skipped["json"] += 1
                continue
            if not line.strip():
                continue
        if len(line) > MAX_TEXT_CHARS:
            skipped["long"] += 1
            continue
        texts.append(line)
    if not texts:
        if skipped["encoding"] and not (skipped["long"] or skipped["json"]):
            raise EngineError("the corpus file {path!r} is not UTF-8 text (Latin-1, GBK …?): save it as UTF-8",
                              field="texts", path=name)
        if skipped["json"] and field is not None:
            raise EngineError("no line of {path!r} is a JSON object with a string {name!r}: check --field",
                              field="texts", path=name, name=field)
        raise EngineError("the corpus file {path!r} holds no text of at most {limit} characters: one text a line",
                          field="texts", path=name, limit=f"{MAX_TEXT_CHARS:,}")
    return Corpus(name, tuple(texts), sha256, field, skipped)


def _wide_encoding(data: bytes) -> str:
    """"UTF-16" or "UTF-32" when ``data`` starts with that encoding's byte-order mark, else ""."""
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):  # before UTF-16's FF FE, which it begins with
        return "UTF-32"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16"
    return ""


def _json_text(line: str, field: str) -> str | None:
    """The string ``field`` of the JSON object on ``line``; None when the line is not one."""
    try:
        document = parse_json(line, "corpus line")
    except EngineError:
        return None
    value = document.get(field) if isinstance(document, dict) else None
    return value if isinstance(value, str) else None
