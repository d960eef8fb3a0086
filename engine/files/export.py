"""Save a trace to disk: ``.npz`` (NumPy), ``.json`` or ``.csv`` (the weights), chosen by suffix.

Every write goes through :func:`engine.files.safe_io.atomic_write`: the writers get a file object on a
temporary file in the target's folder, which replaces the target only when complete; on any error
the temporary file is removed and an existing target is left untouched. The suffix is matched
without regard to case (``T.NPZ`` is a .npz file). JSON has no infinity: non-finite numbers (the masked −∞ of ``scaled``)
are written as the strings ``"-Infinity"``, ``"Infinity"`` and ``"NaN"``. See docs/FORMAT.md.
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import os
from pathlib import Path

import numpy as np

from ..core.errors import EngineError
from .safe_io import atomic_write
from ..core.trace import ARRAY_NAMES, AttentionResult

DATA_SUFFIXES = (".npz", ".json", ".csv")
IMAGE_SUFFIXES = (".png", ".svg")  # drawn by app/render.py (needs Qt)
ALL_SUFFIXES = DATA_SUFFIXES + IMAGE_SUFFIXES
OPTIONAL_ARRAYS = ("q_unrotated", "k_unrotated", "mask")  # saved when present (rope / causal)
FORMAT_NAME, FORMAT_VERSION = "attention-explorer-trace", 1
_NONFINITE = {float("inf"): "Infinity", float("-inf"): "-Infinity"}


def output_suffix(path, allowed=DATA_SUFFIXES) -> str:
    """The lower-case suffix of ``path``; EngineError unless it is one of ``allowed``."""
    suffix = Path(path).suffix.lower()
    if suffix not in allowed:
        got = f"unknown file type '{Path(path).suffix}'" if suffix else "no file type (suffix)"
        raise EngineError("cannot export to {path!r}: {got}; use {suffixes}", field="out",
                          path=os.fspath(path), got=got, suffixes=" ".join(allowed))
    return suffix


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


# ---------------------------------------------------------------------- the analysis (issue 14)
ANALYSIS_NAMES = ("value_norms", "rollout", "value_rollout", "head_stats")


def _json_ready(extra: dict | None) -> dict:
    """The analysis arrays for JSON: the structured head table as a list of row objects."""
    ready = {}
    for name, value in (extra or {}).items():
        if isinstance(value, np.ndarray) and value.dtype.names:
            ready[name] = [{c: (int(row[c]) if value.dtype[c].kind == "i" else float(row[c])) for c in value.dtype.names}
                           for row in value]
        else:
            ready[name] = value
    return ready


def save_head_table(table: np.ndarray, path) -> Path:
    """Write the head table (engine.analysis.head_stats.head_table) as CSV: one row per head."""
    from ..analysis.head_stats import table_csv

    with atomic_write(path) as stream:
        with _text(stream, newline="") as text:
            text.write(table_csv(table))
    return Path(path)


def _json_list(array: np.ndarray) -> list:
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        boxed = array.astype(object)  # Python floats, so strings can replace the non-finite ones
        boxed[np.isnan(array)] = "NaN"
        for value, text in _NONFINITE.items():
            boxed[array == value] = text
        return boxed.tolist()
    return array.tolist()


def _write_npz(result: AttentionResult, stream, extra=None) -> None:
    spans = np.array([(t.start, t.end) for t in result.tokens], dtype=np.int64).reshape(-1, 2)
    np.savez(  # uncompressed: random floats barely shrink and big traces would write slowly
        stream,  # a file object: given a name, np.savez appends ".npz" unless it ends so (in lower case)
        **_arrays(result),
        tokens=np.array(result.token_texts, dtype=str),
        token_spans=spans,
        config_json=np.array(config_json(result)),
        **(extra or {}),
    )


def _text(stream, newline=None):
    """A UTF-8 text view of a binary stream, left open (atomic_write closes it)."""
    return contextlib.closing(_Unclosed(stream, encoding="utf-8", newline=newline))


class _Unclosed(io.TextIOWrapper):
    def close(self):  # flush but keep the binary stream open for atomic_write's fsync
        if not self.closed:
            self.flush()
            self.detach()


def _dump_streaming(items: dict, text) -> None:
    """Write the object ``items`` as JSON; arrays one row at a time, so memory stays a row's worth.

    json.dump of whole arrays turned every number into a Python float at once: 2400 words took
    3.0 GB for a 1.4 GB file, beyond the memory budget the computation itself was held to.
    """
    text.write("{")
    for index, (key, value) in enumerate(items.items()):
        text.write(", " * (index > 0) + json.dumps(key, ensure_ascii=False) + ": ")
        if isinstance(value, np.ndarray):
            _dump_array(value, text)
        else:
            json.dump(value, text, ensure_ascii=False, allow_nan=False)
    text.write("}")


def _dump_array(array: np.ndarray, text) -> None:
    if array.ndim <= 1:
        json.dump(_json_list(array), text, allow_nan=False)
        return
    text.write("[")
    for index, row in enumerate(array):  # (…) one leading index at a time
        if index:
            text.write(", ")
        _dump_array(row, text)
    text.write("]")


# A .json number is written at ~0.5–1 M numbers a second (Python's float repr: 3,400 tokens took
# 621 s for ~1.7 GB); above this many the export is refused with the estimate, before writing.
MAX_JSON_NUMBERS = 32_000_000
JSON_BYTES_PER_NUMBER = 20  # "0.0123456789012345, "


def check_json_size(arrays) -> None:
    """EngineError with the size estimate when the float arrays of ``arrays`` are too many for .json."""
    count = sum(int(a.size) for a in arrays if isinstance(a, np.ndarray) and a.dtype.kind == "f")
    if count > MAX_JSON_NUMBERS:
        from ..core.memory import format_bytes

        raise EngineError(
            ".json of this trace would hold {count:,} numbers (about {size}) and take many minutes to write: "
            "export .npz instead (about {npz}, written in seconds), or shorten the text", count=count,
            size=format_bytes(count * JSON_BYTES_PER_NUMBER), npz=format_bytes(count * 4))


def _write_json(result: AttentionResult, stream, extra=None) -> None:
    document = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "config": json.loads(config_json(result)),
        "tokens": result.token_texts,
        "token_spans": [[t.start, t.end] for t in result.tokens],
        **_arrays(result),
        **_json_ready(extra),
    }
    with _text(stream) as text:
        _dump_streaming(document, text)


def _write_csv(result: AttentionResult, stream, extra=None) -> None:
    texts = result.token_texts
    with _text(stream, newline="") as text:
        writer = csv.writer(text)
        writer.writerow(["head", "query_index", "query_token"] + [f"{j}:{t}" for j, t in enumerate(texts)])
        for h, head in enumerate(result.weights):  # (n, n) per head
            for i, row in enumerate(head):
                writer.writerow([h, i, texts[i]] + [format(w, ".9g") for w in row.tolist()])


_WRITERS = {".npz": _write_npz, ".json": _write_json, ".csv": _write_csv}


def save_trace(result: AttentionResult, path, extra: dict | None = None) -> Path:
    """Write ``result`` to ``path`` in the format its suffix names; returns the path. ``extra``:
    more named arrays for .npz / .json (the analysis: engine.analysis.arrays.analysis_arrays)."""
    writer = _WRITERS[output_suffix(path)]
    if writer is _write_json:
        check_json_size([*_arrays(result).values(), *(extra or {}).values()])
    with atomic_write(path) as stream:
        writer(result, stream, *((extra,) if extra else ()))
    return Path(path)


__all__ = ["ALL_SUFFIXES", "DATA_SUFFIXES", "IMAGE_SUFFIXES", "atomic_write", "config_json", "output_suffix", "save_trace"]


# ---------------------------------------------------------------------- the pretrained model
MODEL_FORMAT_NAME = "attention-explorer-minilm-trace"


def save_bert_trace(trace, path, text: str = "", model: str = "sentence-transformers/all-MiniLM-L6-v2",
                    extra: dict | None = None) -> Path:
    """Write a MiniLM :class:`~engine.models.bert.BertTrace`: ``tokens``, ``token_spans``, ``input_ids``,
    ``attentions`` (layers, heads, n, n) and ``hidden_states`` (layers + 1, n, d) as .npz or
    .json; .csv holds every layer's and head's weights, one row per (layer, head, query).
    .npz and .json also hold the word view (engine.text.words): ``words`` (w,), ``word_index`` (n,)
    and ``word_attentions`` (layers, heads, w, w), rolled up from ``attentions``."""
    from ..text.words import word_arrays

    suffix = output_suffix(path)
    spans = [[t.start, t.end] for t in trace.tokens]
    if suffix != ".csv":
        if text:
            words = word_arrays(text, trace.tokens, trace.attentions)
        else:  # no text to find words in: each piece its own word
            words = {"words": np.array(trace.token_texts, dtype=str), "word_index": np.arange(trace.n, dtype=np.int64),
                     "word_attentions": trace.attentions}
    if suffix == ".json":
        check_json_size([np.asarray(trace.attentions), np.asarray(trace.hidden_states), words["word_attentions"],
                         *(extra or {}).values()])
    with atomic_write(path) as stream:
        if suffix == ".npz":
            np.savez(stream, tokens=np.array(trace.token_texts, dtype=str), token_spans=np.array(spans, dtype=np.int64),
                     input_ids=np.asarray(trace.input_ids), attentions=trace.attentions,
                     hidden_states=trace.hidden_states, text=np.array(text), **words, **(extra or {}))
        elif suffix == ".json":
            document = {"format": MODEL_FORMAT_NAME, "version": 1, "model": model,
                        "text": text, "tokens": trace.token_texts, "token_spans": spans,
                        "input_ids": np.asarray(trace.input_ids).tolist(),
                        "attentions": np.asarray(trace.attentions), "hidden_states": np.asarray(trace.hidden_states),
                        **words, **_json_ready(extra)}
            with _text(stream) as text:
                _dump_streaming(document, text)
        else:
            texts = trace.token_texts
            with _text(stream, newline="") as text:
                writer = csv.writer(text)
                writer.writerow(["layer", "head", "query_index", "query_token"] + [f"{j}:{t}" for j, t in enumerate(texts)])
                for layer, view in enumerate(trace.layers):
                    for h, head in enumerate(view.weights):
                        for i, row in enumerate(head):
                            writer.writerow([layer, h, i, texts[i]] + [format(w, ".9g") for w in row.tolist()])
    return Path(path)


__all__.append("save_bert_trace")
