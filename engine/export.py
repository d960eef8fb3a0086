"""Save a trace to disk: ``.npz`` (NumPy), ``.json`` or ``.csv`` (the weights), chosen by suffix.

Every write is atomic: the data goes to a temporary file in the target's directory, which then
replaces the target (``os.replace``); on any error the temporary file is removed and an existing
target is left untouched. JSON has no infinity: non-finite numbers (the masked −∞ of ``scaled``)
are written as the strings ``"-Infinity"``, ``"Infinity"`` and ``"NaN"``. See docs/FORMAT.md.
"""
from __future__ import annotations

import contextlib
import csv
import functools
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from .errors import EngineError
from .trace import ARRAY_NAMES, AttentionResult

DATA_SUFFIXES = (".npz", ".json", ".csv")
OPTIONAL_ARRAYS = ("q_unrotated", "k_unrotated", "mask")  # saved when present (rope / causal)
FORMAT_NAME, FORMAT_VERSION = "attention-explorer-trace", 1
_NONFINITE = {float("inf"): "Infinity", float("-inf"): "-Infinity"}


def output_suffix(path, allowed=DATA_SUFFIXES) -> str:
    """The lower-case suffix of ``path``; EngineError unless it is one of ``allowed``."""
    suffix = Path(path).suffix.lower()
    if suffix not in allowed:
        got = f"unknown file type '{suffix}'" if suffix else "no file type (suffix)"
        raise EngineError(f"cannot export to {os.fspath(path)!r}: {got}; use {', '.join(allowed)}")
    return suffix


@functools.cache
def _umask() -> int:
    mask = os.umask(0o022)  # the only portable way to read it: set and restore, once
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path beside ``path`` (same suffix); move it onto ``path`` on success."""
    target = Path(path)
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=f".tmp{target.suffix}", dir=target.parent)
        os.close(fd)
    except OSError as error:
        raise EngineError(f"cannot write {os.fspath(path)!r}: {error.strerror or error}") from None
    try:
        yield temp
        os.chmod(temp, 0o666 & ~_umask())  # mkstemp makes 0600 files; give the usual mode
        os.replace(temp, target)
    except OSError as error:
        raise EngineError(f"cannot write {os.fspath(path)!r}: {error.strerror or error}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)


def config_json(result: AttentionResult) -> str:
    """The result's configuration as JSON text (AttentionConfig.from_dict reads it back)."""
    return json.dumps(result.config.to_dict(), ensure_ascii=False, default=_plain)


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _arrays(result: AttentionResult) -> dict[str, np.ndarray]:
    arrays = result.arrays()
    arrays.update({name: getattr(result, name) for name in OPTIONAL_ARRAYS if getattr(result, name) is not None})
    return arrays


def _json_list(array: np.ndarray) -> list:
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        boxed = array.astype(object)  # Python floats, so strings can replace the non-finite ones
        boxed[np.isnan(array)] = "NaN"
        for value, text in _NONFINITE.items():
            boxed[array == value] = text
        return boxed.tolist()
    return array.tolist()


def _write_npz(result: AttentionResult, path: str) -> None:
    spans = np.array([(t.start, t.end) for t in result.tokens], dtype=np.int64).reshape(-1, 2)
    # an open file, not the path: np.savez appends ".npz" to a path that ends otherwise (".NPZ")
    with open(path, "wb") as stream:
        np.savez(  # uncompressed: random floats barely shrink and big traces would write slowly
            stream,
            **_arrays(result),
            tokens=np.array(result.token_texts, dtype=str),
            token_spans=spans,
            config_json=np.array(config_json(result)),
        )


def _write_json(result: AttentionResult, path: str) -> None:
    document = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "config": json.loads(config_json(result)),
        "tokens": result.token_texts,
        "token_spans": [[t.start, t.end] for t in result.tokens],
        **{name: _json_list(array) for name, array in _arrays(result).items()},
    }
    with open(path, "w", encoding="utf-8") as stream:
        json.dump(document, stream, ensure_ascii=False, allow_nan=False)


def _write_csv(result: AttentionResult, path: str) -> None:
    texts = result.token_texts
    with open(path, "w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["head", "query_index", "query_token"] + [f"{j}:{t}" for j, t in enumerate(texts)])
        for h, head in enumerate(result.weights):  # (n, n) per head
            for i, row in enumerate(head):
                writer.writerow([h, i, texts[i]] + [format(w, ".9g") for w in row.tolist()])


_WRITERS = {".npz": _write_npz, ".json": _write_json, ".csv": _write_csv}


def save_trace(result: AttentionResult, path) -> Path:
    """Write ``result`` to ``path`` in the format its suffix names; returns the path."""
    writer = _WRITERS[output_suffix(path)]
    with atomic_path(path) as temp:
        writer(result, temp)
    return Path(path)


__all__ = ["DATA_SUFFIXES", "atomic_path", "config_json", "output_suffix", "save_trace"]


# ---------------------------------------------------------------------- the pretrained model
MODEL_FORMAT_NAME = "attention-explorer-minilm-trace"


def save_bert_trace(trace, path, text: str = "") -> Path:
    """Write a MiniLM :class:`~engine.bert.BertTrace`: ``tokens``, ``token_spans``, ``input_ids``,
    ``attentions`` (layers, heads, n, n) and ``hidden_states`` (layers + 1, n, d) as .npz or
    .json; .csv holds every layer's and head's weights, one row per (layer, head, query)."""
    suffix = output_suffix(path)
    spans = [[t.start, t.end] for t in trace.tokens]
    with atomic_path(path) as temp:
        if suffix == ".npz":
            with open(temp, "wb") as stream:  # a path not ending in ".npz" would get ".npz" appended
                np.savez(stream, tokens=np.array(trace.token_texts, dtype=str), token_spans=np.array(spans, dtype=np.int64),
                         input_ids=np.asarray(trace.input_ids), attentions=trace.attentions,
                         hidden_states=trace.hidden_states, text=np.array(text))
        elif suffix == ".json":
            document = {"format": MODEL_FORMAT_NAME, "version": 1, "model": "sentence-transformers/all-MiniLM-L6-v2",
                        "text": text, "tokens": trace.token_texts, "token_spans": spans,
                        "input_ids": np.asarray(trace.input_ids).tolist(),
                        "attentions": trace.attentions.tolist(), "hidden_states": trace.hidden_states.tolist()}
            with open(temp, "w", encoding="utf-8") as stream:
                json.dump(document, stream, ensure_ascii=False, allow_nan=False)
        else:
            texts = trace.token_texts
            with open(temp, "w", encoding="utf-8", newline="") as stream:
                writer = csv.writer(stream)
                writer.writerow(["layer", "head", "query_index", "query_token"] + [f"{j}:{t}" for j, t in enumerate(texts)])
                for layer, view in enumerate(trace.layers):
                    for h, head in enumerate(view.weights):
                        for i, row in enumerate(head):
                            writer.writerow([layer, h, i, texts[i]] + [format(w, ".9g") for w in row.tolist()])
    return Path(path)


__all__.append("save_bert_trace")
