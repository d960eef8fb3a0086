"""A checked Hugging Face folder → its runnable model: the family module's config and fused splits, then
the two forwards: engine.models.bert (post-LN encoder) and engine.models.llama (the decoder, whose config
flags cover every family's block).

    build_model(info, tensors, tokenizer)  # FolderInfo, our-named float32 tensors, tokenizers.Tokenizer

Encoders come back as :class:`FolderEncoder` (engine.models.minilm.MiniLM's tokenize/run on another
config), decoders as engine.models.decoder.Decoder with a :class:`JsonTokenizer` (tokenizer.json's own
post-processor, so ``<s>`` / ``[CLS]`` … are in the ids as the tokenizer adds them).
"""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..bert import BertConfig, prepare_weights as prepare_bert
from ...text.bpe import BPETokenizer, byte_alphabet, piece_bytes
from ..decoder import Decoder
from ..encoder import encoder_facts
from ..llama import DecoderConfig, prepare_weights as prepare_llama
from ..minilm import MiniLM
from ..hf_folder import (FolderInfo, Progress, check_budget, check_tensors, display_name, inspect_folder,
                         load_tokenizer, read_weights)
from . import family as family_module, prepare_tensors

_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


class FolderEncoder(MiniLM):
    """A bert / roberta folder: MiniLM's tokenize and run (tokenizer.json's own post-processor)."""

    def __init__(self, config: BertConfig, weights, tokenizer, model_dir: Path, family: str):  # noqa: super
        # MiniLM.__init__ is not called: its facts are all-MiniLM-L6-v2's (and assume a WordPiece tokenizer)
        self.config, self.weights, self.tokenizer, self.model_dir = config, weights, tokenizer, model_dir
        self.family = family
        self.facts = encoder_facts(config, family, special_tokens(tokenizer), max_positions=config.max_positions,
                                   name=display_name(model_dir), tokenizer_note=tokenizer_note(tokenizer))

    def __repr__(self) -> str:
        c = self.config
        return (f"FolderEncoder({self.family} {display_name(self.model_dir)}: {c.num_layers} layers, {c.num_heads} "
                f"heads, d={c.hidden_size}, from {self.model_dir})")


# What the window's model facts say about a folder's tokenizer (translated in Qt context "Model":
# app/local_models_dialog.py lists them for lupdate)
TOKENIZER_NOTES = {"WordPiece": "WordPiece tokenizer (tokenizer.json)", "BPE": "BPE tokenizer (tokenizer.json)",
                   "Unigram": "Unigram tokenizer (tokenizer.json)"}


def special_tokens(tokenizer) -> set[str]:
    """The tokenizer's special tokens, without its unknown piece (it stands for text: engine.models.minilm does so too)."""
    model = tokenizer.model
    unknown = getattr(model, "unk_token", None)
    if unknown is None and type(model).__name__ == "Unigram":  # Unigram names it by id, only in its JSON
        import json

        unk_id = json.loads(tokenizer.to_str()).get("model", {}).get("unk_id")
        unknown = tokenizer.id_to_token(unk_id) if isinstance(unk_id, int) else None
    return {token.content for token in tokenizer.get_added_tokens_decoder().values()
            if token.special and token.content != unknown}


def tokenizer_note(tokenizer) -> str:
    return TOKENIZER_NOTES.get(type(tokenizer.model).__name__, "")


class JsonTokenizer(BPETokenizer):
    """engine.text.bpe.BPETokenizer's display and spans over a tokenizer.json tokenizer (byte-level BPE,
    or SentencePiece-style pieces with ▁ and <0xNN> bytes)."""

    def __init__(self, tokenizer, vocab_size: int):  # noqa: super().__init__ builds from a GGUF spec: not here
        self._tokenizer = tokenizer
        alphabet = byte_alphabet()
        pieces = []
        for index in range(vocab_size):
            piece = tokenizer.id_to_token(index) or ""
            byte = _BYTE_PIECE.fullmatch(piece)
            if byte:
                pieces.append(bytes([int(byte[1], 16)]))
            elif all(ch in alphabet for ch in piece):
                pieces.append(piece_bytes(piece))
            else:
                pieces.append(piece.replace("▁", " ").encode("utf-8"))
        self._bytes = pieces
        self.spec = None  # no GGUF spec: encode() below is the file's own

    def encode(self, text: str):
        """(ids (n,) int64, char spans): the file's own normalizer, model and post-processor."""
        encoding = self._tokenizer.encode(text)
        return np.asarray(encoding.ids, dtype=np.int64), [tuple(map(int, span)) for span in encoding.offsets]


def encoder_config(info: FolderInfo) -> tuple[BertConfig, int]:
    """(BertConfig, first position row) from the family's module (RoBERTa's positions start after its padding row)."""
    return family_module(info.family).config(info)


def decoder_config(info: FolderInfo) -> DecoderConfig:
    return family_module(info.family).config(info)


def build_model(info: FolderInfo, tensors: dict, tokenizer):
    """The runnable model of a checked folder (see the module doc)."""
    if info.kind == "encoder":  # the post-LN encoder block
        config, offset = encoder_config(info)
        weights = prepare_bert(tensors, config)
        if offset:  # RoBERTa: position i uses row pad_token_id + 1 + i
            weights = replace(weights, position_embeddings=weights.position_embeddings[offset:])
            config = replace(config, max_positions=config.max_positions - offset)
        return FolderEncoder(config, weights, tokenizer, info.path, info.family)
    config = decoder_config(info)
    weights = prepare_llama(prepare_tensors(tensors, config, info.family, "hf"), config)
    return Decoder(config, weights, JsonTokenizer(tokenizer, config.vocab_size), info.path,
                   special_tokens=special_tokens(tokenizer), tokenizer_note=tokenizer_note(tokenizer))


def load_folder(path: str | Path, progress: Progress | None = None, *, budget: int | None = None):
    """The model of a Hugging Face folder, ready to ``run(text)``; EngineError naming what is wrong."""
    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(min(max(fraction, 0.0), 1.0), message)

    report(0.0, "reading config.json and the headers")
    info = inspect_folder(path)
    check_tensors(info)
    (encoder_config if info.kind == "encoder" else decoder_config)(info)  # every config key checked before reading
    check_budget(info, budget)
    tokenizer = load_tokenizer(info.path, info.vocab)
    tensors = read_weights(info, lambda f, m: report(0.05 + 0.9 * f, m))  # read as the block prepares each
    model = build_model(info, tensors, tokenizer)
    report(1.0, "ready")
    return model
