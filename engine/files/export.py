"""Save a trace to disk: ``.npz`` (NumPy), ``.json`` or ``.csv`` (the weights), chosen by suffix.

Every write goes through :func:`engine.core.safe_io.atomic_write`: the writers get a file object on a
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
from ..core.safe_io import atomic_write
from ..toy.trace import ARRAY_NAMES, AttentionResult

DATA_SUFFIXES = (".npz", ".json", ".csv")
IMAGE_SUFFIXES = (".png", ".svg")  # drawn by figures/render.py (needs Qt)
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


# ---------------------------------------------------------------------- the analysis
ANALYSIS_NAMES = ("value_norms", "rollout", "value_rollout", "head_stats")


def _json_ready(extra: dict | None) -> dict:
    """The analysis arrays for JSON: a structured table (the head table, the route's edges) as a list
    of row objects."""
    cast = {"i": int, "U": str}  # other fields are floats
    ready = {}
    for name, value in (extra or {}).items():
        if isinstance(value, np.ndarray) and value.dtype.names:
            ready[name] = [{c: cast.get(value.dtype[c].kind, float)(row[c]) for c in value.dtype.names}
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


class Blocks:
    """An array written to .npz as it is made: ``make()`` yields C-ordered blocks whose
    concatenation along the first axis has ``shape`` (e.g. the word view, one layer at a time)."""

    def __init__(self, shape: tuple[int, ...], dtype, make) -> None:
        self.shape, self.dtype, self.make = tuple(int(s) for s in shape), np.dtype(dtype), make

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


WRITE_BLOCK = 16 * 1024**2  # bytes handed to the zip stream at a time (views of the array, not copies)


def write_npz(stream, arrays: dict) -> None:
    """Write ``arrays`` (name → ndarray or :class:`Blocks`) as an uncompressed .npz to ``stream``,
    one array after the other (np.load reads it as np.savez's). Numeric arrays go out as views of
    their own memory, :class:`Blocks` as they are made: no copy of the whole file is built."""
    import zipfile

    with zipfile.ZipFile(stream, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays.items():
            with archive.open(name + ".npy", mode="w", force_zip64=True) as member:
                if isinstance(value, Blocks):
                    _write_header(member, value.shape, value.dtype)
                    written = 0
                    for block in value.make():
                        block = np.ascontiguousarray(block, dtype=value.dtype)
                        _write_raw(member, block)
                        written += block.size
                        del block  # before the next one is made: one block alive at a time
                    if written != value.size:  # a maker that lied about its shape: never a silent short file
                        raise EngineError("{name}: {written} numbers written for shape {shape}", name=name,
                                          written=written, shape=value.shape)
                    continue
                value = np.asanyarray(value)
                if value.dtype.kind in "biufc" and value.flags.c_contiguous:
                    _write_header(member, value.shape, value.dtype)
                    _write_raw(member, value)
                else:  # strings, other layouts: NumPy's writer (16 MiB chunks)
                    np.lib.format.write_array(member, value, allow_pickle=False)


def _write_header(member, shape, dtype) -> None:
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": tuple(shape)}
    np.lib.format.write_array_header_1_0(member, header)  # as np.save writes (version 1.0: any NumPy reads it)


def _write_raw(member, array: np.ndarray) -> None:
    flat = memoryview(array.reshape(-1).view(np.uint8))  # the array's own bytes (any byte order, complex too)
    for start in range(0, len(flat), WRITE_BLOCK):
        member.write(flat[start : start + WRITE_BLOCK])


def _write_npz(result: AttentionResult, stream, extra=None) -> None:
    spans = np.array([(t.start, t.end) for t in result.tokens], dtype=np.int64).reshape(-1, 2)
    write_npz(stream, {  # uncompressed: random floats barely shrink and big traces would write slowly
        **_arrays(result),
        "tokens": np.array(result.token_texts, dtype=str),
        "token_spans": spans,
        "config_json": np.array(config_json(result)),
        **(extra or {}),
    })


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
    count = sum(int(a.size) for a in arrays if isinstance(a, (np.ndarray, Blocks)) and a.dtype.kind == "f")
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


def word_view(text: str, tokens, attentions: np.ndarray, special_tokens: frozenset = frozenset()) -> dict:
    """The word view an export writes (engine.text.words): ``words`` (w,), ``word_index`` (n,) and
    ``word_attentions`` (…, w, w) as :class:`Blocks` rolled up one leading index at a time, so it is
    never held whole (memory: engine.core.memory.word_view_bytes). Without ``text`` each piece is
    its own word. The .npz writer streams it; :func:`materialize` makes it an array (.json)."""
    from ..text.words import roll_up_blocks, words_of

    if text:
        words, word_index = words_of(text, tokens, special_tokens)
    else:
        words, word_index = tuple(t.text for t in tokens), np.arange(len(tokens))
    word_index = np.asarray(word_index, dtype=np.int64)
    count = len(words)
    shape = tuple(attentions.shape[:-2]) + (count, count)
    dtype = attentions.dtype if attentions.dtype in (np.float32, np.float64) else np.float64
    return {"words": np.array(words, dtype=str), "word_index": word_index,
            "word_attentions": Blocks(shape, dtype, lambda: roll_up_blocks(attentions, word_index))}


def materialize(value):
    """A :class:`Blocks` as one array (for .json, whose size is capped); anything else unchanged."""
    if not isinstance(value, Blocks):
        return value
    out = np.empty(value.shape, value.dtype)
    flat, at = out.reshape(-1), 0
    for block in value.make():
        flat[at : at + block.size] = block.reshape(-1)
        at += block.size
    return out


def save_bert_trace(trace, path, text: str = "", model: str = "sentence-transformers/all-MiniLM-L6-v2",
                    extra: dict | None = None, special_tokens: frozenset = frozenset()) -> Path:
    """Write a MiniLM :class:`~engine.models.bert.BertTrace`: ``tokens``, ``token_spans``, ``input_ids``,
    ``attentions`` (layers, heads, n, n) and ``hidden_states`` (layers + 1, n, d) as .npz or
    .json; .csv holds every layer's and head's weights, one row per (layer, head, query).
    .npz and .json also hold the word view (engine.text.words): ``words`` (w,), ``word_index`` (n,)
    and ``word_attentions`` (layers, heads, w, w), rolled up from ``attentions``."""
    suffix = output_suffix(path)
    spans = [[t.start, t.end] for t in trace.tokens]
    if suffix != ".csv":
        words = word_view(text, trace.tokens, trace.attentions, special_tokens)  # no text: each piece its own word
    if suffix == ".json":
        check_json_size([np.asarray(trace.attentions), np.asarray(trace.hidden_states), words["word_attentions"],
                         *(extra or {}).values()])
        words["word_attentions"] = materialize(words["word_attentions"])
    with atomic_write(path) as stream:
        if suffix == ".npz":
            write_npz(stream, {"tokens": np.array(trace.token_texts, dtype=str),
                               "token_spans": np.array(spans, dtype=np.int64).reshape(-1, 2),
                               "input_ids": np.asarray(trace.input_ids), "attentions": trace.attentions,
                               "hidden_states": trace.hidden_states, "text": np.array(text), **words, **(extra or {})})
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


# ---------------------------------------------------------------------- one run request, any model
def _save_toy(runs, path, arrays: dict) -> None:
    save_trace(runs.trace, path, arrays)


def _save_encoder(runs, path, arrays: dict) -> None:
    # the word view is written by save_bert_trace itself, before the analyses (the documented order)
    extra = {name: value for name, value in arrays.items() if name not in ("words", "word_index", "word_attentions")}
    facts = runs.model.facts
    save_bert_trace(runs.trace, path, runs.request.text, facts.name or facts.family, extra=extra,
                    special_tokens=facts.special_tokens)


def _save_decoder(runs, path, arrays: dict) -> None:
    if output_suffix(path) != ".npz":
        raise EngineError("a decoder's trace is written as .npz: {path!r}", field="out", path=os.fspath(path))
    trace = runs.trace
    views = word_view(runs.request.text, trace.tokens, trace.attentions, runs.model.facts.special_tokens)
    rest = {name: value for name, value in arrays.items() if name not in views}
    with atomic_write(path) as stream:
        write_npz(stream, {**trace.arrays(), **views, **rest})  # the word view made one layer at a time


_SAVERS_BY_KIND = {"toy": _save_toy, "encoder": _save_encoder, "decoder": _save_decoder}  # each kind's file layout


def run_arrays(model, request, runs=None) -> tuple[dict, dict]:
    """(arrays, reasons): every array the analyses of ``request`` give on ``model`` (engine.analysis.table,
    in its order; ``ablated_heads`` (k, 2) when heads are off), and why each other analysis does not apply."""
    from ..analysis.runs import Runs
    from ..analysis.table import export_arrays, reasons, run_all

    runs = runs if runs is not None else Runs(model, request)
    results = run_all(model, runs=runs)
    arrays = export_arrays(results)
    if runs.request.ablate:  # which heads were off: the file says what it is
        arrays["ablated_heads"] = np.array(sorted(runs.request.ablate), dtype=np.int64).reshape(-1, 2)  # (k, 2)
    return arrays, reasons(results)


def export_run(model, request, path, *, extra: dict | None = None, runs=None) -> Path:
    """Write the trace of ``request`` on ``model`` with every analysis that applies to it
    (:func:`run_arrays`) and ``extra`` arrays, as ``./run export`` and File → Export data both do;
    the file layout is the model kind's (docs/FORMAT.md). ``runs``: the request's traces when the
    caller already holds them (engine.analysis.runs.Runs)."""
    from ..analysis.runs import Runs

    output_suffix(path)  # a bad suffix before any computing
    runs = runs if runs is not None else Runs(model, request)
    arrays, _ = run_arrays(model, request, runs)
    arrays.update(extra or {})
    _SAVERS_BY_KIND[model.facts.kind](runs, path, arrays)
    return Path(path)


__all__ += ["export_run", "run_arrays"]
