"""Byte-level BPE tokenizer built from a GGUF file's own vocabulary, merges and pre-tokenizer.

GPT-2's scheme (Radford et al. 2019): the text's UTF-8 bytes are spelled with 256 printable
stand-in characters ('Ġ' for a space …), split by a pre-tokenizer regex, and each piece merged by
the ranked merges. Built with Hugging Face ``tokenizers`` (Rust), as llama.cpp describes it:
``tokenizer.ggml.pre`` names the pre-tokenizer (SmolLM2: "smollm" = every digit alone, then
GPT-2's regex). Control tokens (``<|im_start|>``) and user-defined ones are matched whole.

Display: a piece's bytes decoded as UTF-8. Chinese characters take 3 bytes and this vocabulary
often splits them across pieces; a piece whose bytes do not form whole characters shows its
complete characters as text and the rest as hex bytes, e.g. 小 + the first two bytes of 明 →
"小<e6 98>": never mojibake.
"""
from __future__ import annotations

import codecs
import functools
import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..core.errors import EngineError, ModelNotInstalled
from ..core.install import pip_install
from .tokenize import Token

TOKENIZERS_INSTALL_COMMAND = pip_install("tokenizers")
_GPT2_REGEX = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
_LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
                 r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
_QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
                r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# tokenizer.ggml.pre → (split digits one by one first, the split regex) as llama.cpp's llama-vocab.cpp.
PRE_TOKENIZERS = {
    "default": (False, _GPT2_REGEX),
    "gpt-2": (False, _GPT2_REGEX),
    "gpt2": (False, _GPT2_REGEX),
    "smollm": (True, _GPT2_REGEX),
    "llama-bpe": (False, _LLAMA3_REGEX),
    "llama3": (False, _LLAMA3_REGEX),
    "smaug-bpe": (False, _LLAMA3_REGEX),
    "qwen2": (False, _QWEN2_REGEX),
    "deepseek-r1-qwen": (False, _QWEN2_REGEX),
}
CONTROL, USER_DEFINED = 3, 4


@dataclass(frozen=True)
class TokenizerSpec:
    """The tokenizer a GGUF describes (``tokenizer.ggml.*``; engine.models.gguf_file reads it): what
    :class:`BPETokenizer` is built from."""

    model: str  # tokenizer.ggml.model: gpt2 = byte-level BPE
    pre: str  # tokenizer.ggml.pre: the pre-tokenizer's name (smollm, qwen2, llama-bpe …)
    tokens: tuple[str, ...]
    token_types: tuple[int, ...]  # 1 normal, 3 control, 4 user-defined …
    merges: tuple[str, ...]
    bos_id: int | None
    eos_id: int | None
    add_bos: bool


@functools.lru_cache(maxsize=1)
def byte_alphabet() -> dict[str, int]:
    """GPT-2's stand-in character → byte (the inverse of its bytes_to_unicode table)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(
        range(ord("®"), ord("ÿ") + 1))
    codes, extra = printable[:], 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            codes.append(256 + extra)
            extra += 1
    return {chr(code): byte for byte, code in zip(printable, codes)}


def piece_bytes(piece: str) -> bytes:
    """The UTF-8 bytes a vocabulary piece stands for ('Ġthe' → b' the'); control tokens as written."""
    alphabet = byte_alphabet()
    if all(ch in alphabet for ch in piece):
        return bytes(alphabet[ch] for ch in piece)
    return piece.encode("utf-8")


def _hex_errors(error: UnicodeDecodeError):
    bad = error.object[error.start:error.end]
    return "<" + " ".join(f"{b:02x}" for b in bad) + ">", error.end


codecs.register_error("attention_explorer_hex", _hex_errors)


def display_text(data: bytes) -> str:
    """Bytes as text; bytes that are not whole UTF-8 characters as '<e6 98>'."""
    return re.sub(r"><(?=[0-9a-f]{2}[ >])", " ", data.decode("utf-8", errors="attention_explorer_hex"))


class BPETokenizer:
    """Byte-level BPE of one GGUF vocabulary: ids identical to the model's reference tokenizer."""

    def __init__(self, spec: TokenizerSpec):
        try:
            import tokenizers
            from tokenizers import Regex, decoders, models, pre_tokenizers
        except ImportError:
            raise ModelNotInstalled("tokenizing for this model needs the tokenizers package. Install it with: "
                                    "{command}", command=TOKENIZERS_INSTALL_COMMAND) from None
        if spec.pre not in PRE_TOKENIZERS:
            raise EngineError("this model's pre-tokenizer {pre!r} is not supported (known: {known})",
                              field="model", pre=spec.pre, known=", ".join(sorted(PRE_TOKENIZERS)))
        self.spec = spec
        vocab = {token: index for index, token in enumerate(spec.tokens)}
        merges = [tuple(merge.split(" ", 1)) for merge in spec.merges]
        model = models.BPE(vocab=vocab, merges=merges, fuse_unk=False, byte_fallback=False)
        tokenizer = tokenizers.Tokenizer(model)
        digits, regex = PRE_TOKENIZERS[spec.pre]
        steps = [pre_tokenizers.Digits(individual_digits=True)] if digits else []
        steps += [pre_tokenizers.Split(Regex(regex), behavior="isolated"),
                  pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(steps)
        tokenizer.decoder = decoders.ByteLevel()
        alphabet = byte_alphabet()
        special = [tokenizers.AddedToken(token, normalized=False, special=True)
                   for token, kind in zip(spec.tokens, spec.token_types)
                   if kind == CONTROL and all(ch in alphabet for ch in token)]
        user = [tokenizers.AddedToken(token, normalized=False, special=False)
                for token, kind in zip(spec.tokens, spec.token_types) if kind == USER_DEFINED]
        tokenizer.add_special_tokens(special)
        tokenizer.add_tokens(user)
        self._tokenizer = tokenizer
        self._bytes = [piece_bytes(token) for token in spec.tokens]

    def encode(self, text: str) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """(ids (n,) int64, char spans) of ``text``; BOS first (span (0, 0)) when the file asks for it."""
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        ids, spans = list(encoding.ids), [tuple(map(int, offset)) for offset in encoding.offsets]
        if self.spec.add_bos and self.spec.bos_id is not None:
            ids, spans = [self.spec.bos_id] + ids, [(0, 0)] + spans
        return np.asarray(ids, dtype=np.int64), spans

    def to_json(self) -> str:
        """The tokenizer as a Hugging Face tokenizer.json (the file's BOS, added by :meth:`encode`, is not in it)."""
        return self._tokenizer.to_str()

    def token_bytes(self, token_id: int) -> bytes:
        return self._bytes[token_id]

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ``ids``; incomplete characters as '<e6 98>'."""
        return display_text(b"".join(self._bytes[int(i)] for i in ids))

    def display(self, ids: Sequence[int]) -> list[str]:
        """Each piece's readable text ('Ġthe' → ' the', a byte fragment → '<e5 b0>')."""
        return [display_text(self._bytes[int(i)]) for i in ids]

    def tokens(self, text: str) -> tuple[np.ndarray, tuple[Token, ...]]:
        """ids and :class:`Token` s (display text, char span into ``text``)."""
        ids, spans = self.encode(text)
        return ids, self._labelled(ids, spans, text)

    def _labelled(self, ids, spans, text: str) -> tuple[Token, ...]:
        """Tokens whose label is the piece's text; a piece holding part of a character is
        labelled with the whole character and which part it is ('小 1/2', '小 2/2')."""
        labels = self.display(ids)
        out = []
        i = 0
        while i < len(labels):
            j = i + 1
            while j < len(labels) and spans[j] == spans[i]:  # pieces sharing one character span
                j += 1
            for k in range(i, j):
                start, end = spans[k]
                label = labels[k]
                whole = display_text(self._bytes[int(ids[k])]) == self._bytes[int(ids[k])].decode("utf-8", "replace")
                if not whole and end > start:
                    label = text[start:end] + (f" {k - i + 1}/{j - i}" if j - i > 1 else "…")
                out.append(Token(label, start, end))
            i = j
        return tuple(out)

    def tokens_from_ids(self, ids: Sequence[int]) -> tuple[str, tuple[Token, ...]]:
        """(text, tokens) for ids that did not come from a text (generation): the text is their
        decoded bytes (an unfinished last character as hex bytes), each span the characters
        its bytes belong to."""
        pieces = [self._bytes[int(i)] for i in ids]
        data = b"".join(pieces)
        valid = len(data)
        while valid > 0:
            try:
                data[:valid].decode("utf-8")
                break
            except UnicodeDecodeError as error:
                valid = error.start if error.start < valid else valid - 1
        text = data[:valid].decode("utf-8") + display_text(data[valid:])
        char_of_byte = []  # byte offset → index of the character it belongs to
        for index, ch in enumerate(data[:valid].decode("utf-8")):
            char_of_byte += [index] * len(ch.encode("utf-8"))
        tail = len(text) - len(display_text(data[valid:]))
        char_of_byte += [tail] * (len(data) - valid)
        spans, offset = [], 0
        for piece in pieces:
            if piece:
                first, last = char_of_byte[offset], char_of_byte[offset + len(piece) - 1]
                spans.append((first, last + 1 if offset + len(piece) <= valid else len(text)))
            else:
                spans.append((char_of_byte[offset] if offset < len(data) else len(text),) * 2)
            offset += len(piece)
        return text, self._labelled(ids, spans, text)
