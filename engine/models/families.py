"""Each family's config mapping onto the two forwards: engine.models.bert (post-LN encoder) and
engine.models.llama (the decoder, whose config flags cover LayerNorm | RMSNorm, SwiGLU | GELU, rotary |
learned positions, biases and q/k norm). The weight-name tables are in engine/models/hf_folder.py.

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

from .bert import BertConfig, prepare_weights as prepare_bert
from ..text.bpe import BPETokenizer, byte_alphabet, piece_bytes
from .decoder import Decoder
from .encoder import encoder_facts
from ..core.errors import EngineError
from .gguf_file import split_fused_qkv
from .llama import DecoderConfig, prepare_weights as prepare_llama
from .minilm import MiniLM
from .hf_folder import (ENCODER_FAMILIES, FolderInfo, Progress, check_budget, check_tensors, display_name,
                        inspect_folder, load_tokenizer, read_weights)

GELU_TANH = ("gelu_new", "gelu_pytorch_tanh", "gelu_fast")  # GPT-2's tanh approximation
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def _refuse(info: FolderInfo, key: str, value, supported: str) -> EngineError:
    return EngineError("{file}: {key} = {value!r} is not supported (the app runs {supported})", field="model",
                       file=str(info.path / "config.json"), key=key, value=value, supported=supported)


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
    """(BertConfig, first position row): RoBERTa's positions start after its padding row."""
    c = info.config
    activation = c.get("hidden_act", "gelu")
    if activation != "gelu":
        raise _refuse(info, "hidden_act", activation, "gelu (exact)")
    if c.get("position_embedding_type", "absolute") != "absolute":
        raise _refuse(info, "position_embedding_type", c.get("position_embedding_type"), "absolute")
    offset = 0
    if info.family == "roberta":
        pad = c.get("pad_token_id", 1)
        offset = (pad if isinstance(pad, int) and 0 <= pad < info.max_positions - 1 else 1) + 1
    eps = c.get("layer_norm_eps", 1e-12)
    config = BertConfig(vocab_size=info.vocab, hidden_size=info.d_model, num_layers=info.layers, num_heads=info.heads,
                        intermediate_size=info.d_ff, max_positions=info.max_positions,
                        type_vocab_size=int(c.get("type_vocab_size", 2) or 1),
                        layer_norm_eps=float(eps) if isinstance(eps, (int, float)) and 0 < eps < 1 else 1e-12)
    return config, offset


def decoder_config(info: FolderInfo) -> DecoderConfig:
    c = info.config
    family = info.family
    if family == "gpt2":
        activation = c.get("activation_function", "gelu_new")
        if activation not in GELU_TANH + ("gelu",):
            raise _refuse(info, "activation_function", activation, ", ".join(GELU_TANH + ("gelu",)))
        if c.get("scale_attn_by_inverse_layer_idx"):
            raise _refuse(info, "scale_attn_by_inverse_layer_idx", True, "false")
        eps = c.get("layer_norm_epsilon", 1e-5)
        return DecoderConfig(architecture="gpt2", num_layers=info.layers, hidden_size=info.d_model,
                             intermediate_size=info.d_ff, num_heads=info.heads, num_kv_heads=info.heads,
                             head_dim=info.head_dim, vocab_size=info.vocab, rope_theta=10000.0,
                             rms_norm_eps=float(eps), context_length=info.max_positions, rope_style="half",
                             name=display_name(info.path), norm="layer",
                             mlp="gelu" if activation == "gelu" else "gelu_tanh", positions="learned")
    activation = c.get("hidden_act", "silu")
    if activation != "silu":
        raise _refuse(info, "hidden_act", activation, "silu")
    scaling = c.get("rope_scaling")
    parameters = c.get("rope_parameters") if isinstance(c.get("rope_parameters"), dict) else {}
    kind = (scaling or {}).get("rope_type", (scaling or {}).get("type")) if isinstance(scaling, dict) else scaling
    kind = kind or parameters.get("rope_type", "default")
    if kind not in (None, "default"):
        raise _refuse(info, "rope_scaling", kind, "plain RoPE (no scaling)")
    theta = parameters.get("rope_theta", c.get("rope_theta", 10000.0))
    if isinstance(theta, bool) or not isinstance(theta, (int, float)) or not 1.0 < theta < 1e12:
        raise _refuse(info, "rope_theta", theta, "a base between 1 and 10¹²")
    eps = c.get("rms_norm_eps", 1e-6)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < 1:
        raise _refuse(info, "rms_norm_eps", eps, "a small positive number")
    return DecoderConfig(architecture=family, num_layers=info.layers, hidden_size=info.d_model,
                         intermediate_size=info.d_ff, num_heads=info.heads, num_kv_heads=info.kv_heads,
                         head_dim=info.head_dim, vocab_size=info.vocab, rope_theta=float(theta),
                         rms_norm_eps=float(eps), context_length=info.max_positions, rope_style="half",
                         name=display_name(info.path), qk_norm=family == "qwen3")


def build_model(info: FolderInfo, tensors: dict, tokenizer):
    """The runnable model of a checked folder (see the module doc)."""
    if info.family in ENCODER_FAMILIES:  # the post-LN encoder block
        config, offset = encoder_config(info)
        weights = prepare_bert(tensors, config)
        if offset:  # RoBERTa: position i uses row pad_token_id + 1 + i
            weights = replace(weights, position_embeddings=weights.position_embeddings[offset:])
            config = replace(config, max_positions=config.max_positions - offset)
        return FolderEncoder(config, weights, tokenizer, info.path, info.family)
    config = decoder_config(info)
    split_fused_qkv(tensors, config)  # GPT-2's c_attn, renamed attn_qkv by the table
    weights = prepare_llama(tensors, config)
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
    check_budget(info, budget)
    tokenizer = load_tokenizer(info.path, info.vocab)
    tensors = read_weights(info, lambda f, m: report(0.05 + 0.8 * f, m))
    report(0.9, "preparing the weights")
    model = build_model(info, tensors, tokenizer)
    report(1.0, "ready")
    return model
