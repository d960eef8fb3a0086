"""A corpus job's folder: its manifest, one shard a batch, and the reduction that reads them.

    DIR/manifest.json       which job this is (model, switched-off heads, the corpus's SHA-256,
                            its JSONL field, the batch size, the text count, the token limit)
    DIR/batch-000012.npz    batch 12's per-text rows, written once, atomically, under its name
    DIR/head_stats.npz …    the results (engine/corpus/runner.py), made from the shards

A shard exists complete or not at all (engine/core/safe_io.py's atomic writer), so a job killed
at any moment loses at most the batches in flight, and a batch computed twice (a worker lost
after finishing, a job restarted) is still one file: the reduction reads shards, never results
as they arrive, and so counts every text once. A folder whose manifest names another job, or
that holds shards without a manifest, is refused: results of two jobs are never mixed.

Shard arrays (k measured texts of the batch, K = layers · heads):
``text_index`` (k,) int64 positions in the corpus; ``tokens`` (k,) int64; each measure of
engine/corpus/measures.py's CORPUS_MEASURES (k, layers, heads) float64; ``pair_sums`` (K, K)
float64 and ``rows`` () int64 (the batch's summed head-pair distances and query-row count);
``skipped_index`` (s,) int64 texts over the token limit.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.errors import EngineError
from ..core.safe_io import atomic_write, load_json, remove_stale_temporaries
from .measures import CORPUS_MEASURES

MANIFEST = "manifest.json"
FORMAT = "attention-explorer corpus job"
VERSION = 1
SHARD_PATTERN = re.compile(r"batch-([0-9]{6})\.npz")
# the manifest's keys that name the job: a folder whose manifest differs in one of them is another job's
IDENTITY = ("format", "version", "model", "ablate", "texts_sha256", "field", "texts", "batch_size", "max_tokens")


def shard_name(index: int) -> str:
    return f"batch-{index:06d}.npz"


def make_manifest(model: str, ablate, texts_sha256: str, field: str | None, texts: int, batch_size: int,
                  max_tokens: int, layers: int, heads: int) -> dict:
    """The manifest of a job (JSON-ready); ``layers`` and ``heads`` describe the model."""
    return {"format": FORMAT, "version": VERSION, "model": model, "ablate": [list(pair) for pair in sorted(ablate)],
            "texts_sha256": texts_sha256, "field": field, "texts": texts, "batch_size": batch_size,
            "max_tokens": max_tokens, "batches": -(-texts // batch_size), "layers": layers, "heads": heads}


def prepare_folder(out, manifest: dict) -> set[int]:
    """Make ``out`` the folder of the job ``manifest`` describes; the batches already complete in
    it (a resumed job). :class:`EngineError` when it belongs to another job."""
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise EngineError("{out!r} is a file; --out names a folder for the job's results", field="out", out=str(out))
    if not folder.parent.is_dir():
        raise EngineError("the folder {parent!r} does not exist: create it first", field="out",
                          parent=str(folder.parent))
    folder.mkdir(exist_ok=True)
    path = folder / MANIFEST
    shards = complete_batches(folder)
    if not check_folder(out, manifest):
        with atomic_write(path) as stream:
            stream.write((json.dumps(manifest, indent=1) + "\n").encode("utf-8"))
    remove_stale_temporaries(folder)  # the half-written shards of a killed job
    return {index for index in shards if index < manifest["batches"]}


def check_folder(out, manifest: dict) -> bool:
    """Whether ``out`` already holds this job's manifest; :class:`EngineError` when it holds
    another job's (a key of :data:`IDENTITY` that ``manifest`` has differs) or shards without a
    manifest. Keys missing from ``manifest`` are not compared: the command line checks a folder
    before the model's shape (and so its token limit) is known."""
    folder = Path(out)
    if not folder.is_dir():
        return False
    path = folder / MANIFEST
    if path.exists():
        found = load_json(path, "job manifest")
        different = [key for key in IDENTITY if key in manifest
                     and (not isinstance(found, dict) or found.get(key) != manifest[key])]
        if different:
            raise EngineError("{out!r} holds another job's results (its {keys} differ from this job's): choose "
                              "another --out folder, or empty this one", field="out", out=str(out),
                              keys=", ".join(different))
        return True
    if complete_batches(folder):
        raise EngineError("{out!r} holds batches of a job without its manifest.json: choose another --out folder, "
                          "or empty this one", field="out", out=str(out))
    return False


def complete_batches(folder) -> set[int]:
    """The batch numbers with a shard in ``folder``."""
    return {int(match.group(1)) for name in os.listdir(folder) if (match := SHARD_PATTERN.fullmatch(name))}


def write_shard(folder, index: int, arrays: dict) -> None:
    """Batch ``index``'s shard, written atomically (a finished shard is never rewritten: the
    same batch always gives the same arrays)."""
    path = Path(folder) / shard_name(index)
    if path.exists():
        return
    with atomic_write(path) as stream:
        np.savez(stream, **arrays)


def read_shard(folder, index: int) -> dict:
    path = Path(folder) / shard_name(index)
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except (OSError, ValueError, KeyError) as error:
        raise EngineError("the batch file {path!r} cannot be read ({reason}): delete it and run the job again to "
                          "redo that batch", field="out", path=str(path), reason=str(error)) from None


@dataclass(frozen=True)
class Summary:
    """The per-head reduction of a job's shards. ``mean`` and ``std`` map each measure to
    (layers, heads) float64 over the measured texts (every text weighs the same; std is the
    population's, ddof = 0); ``distance`` (K, K) is the mean head-pair Jensen–Shannon distance
    per query token; ``typical`` (layers, heads) the corpus index of each head's most typical text."""

    texts: int  # measured
    skipped: int  # over the token limit
    tokens: int
    mean: dict
    std: dict
    distance: np.ndarray
    typical: np.ndarray


def reduce_shards(folder, batches: int, layers: int, heads: int) -> Summary:
    """Merge the shards 0 … batches − 1 in order (Chan et al.'s pairwise update of count, mean and
    squared deviations), so the result is the same number however the batches were computed."""
    count, skipped, tokens, rows = 0, 0, 0, 0
    mean = {m: np.zeros((layers, heads)) for m in CORPUS_MEASURES}
    squares = {m: np.zeros((layers, heads)) for m in CORPUS_MEASURES}  # Σ (x − mean)²
    pair_sums = np.zeros((layers * heads, layers * heads))
    for index in range(batches):
        shard = read_shard(folder, index)
        k = len(shard["text_index"])
        skipped += len(shard["skipped_index"])
        tokens += int(shard["tokens"].sum())
        rows += int(shard["rows"])
        pair_sums += shard["pair_sums"]
        if k == 0:
            continue
        total = count + k
        for m in CORPUS_MEASURES:
            values = shard[m]  # (k, layers, heads)
            batch_mean = values.mean(axis=0)
            delta = batch_mean - mean[m]
            squares[m] += ((values - batch_mean) ** 2).sum(axis=0) + delta**2 * (count * k / total)
            mean[m] += delta * (k / total)
        count = total
    std = {m: np.sqrt(squares[m] / count) if count else np.zeros((layers, heads)) for m in CORPUS_MEASURES}
    distance = pair_sums / rows if rows else pair_sums
    typical = _typical_texts(folder, batches, mean, std) if count else np.full((layers, heads), -1)
    return Summary(count, skipped, tokens, mean, std, distance, typical)


def _typical_texts(folder, batches: int, mean: dict, std: dict) -> np.ndarray:
    """(layers, heads) int64: for each head the text whose measures lie nearest its means (the sum
    over measures of the squared deviation in standard deviations): a second pass over the shards."""
    best = np.full(mean["entropy"].shape, np.inf)
    typical = np.full(best.shape, -1, dtype=np.int64)
    for index in range(batches):
        shard = read_shard(folder, index)
        if not len(shard["text_index"]):
            continue
        distance = sum(((shard[m] - mean[m]) / np.where(std[m] > 0, std[m], 1.0)) ** 2
                       for m in CORPUS_MEASURES)  # (k, layers, heads)
        nearest = distance.argmin(axis=0)  # (layers, heads): the first of equals
        value = np.take_along_axis(distance, nearest[None], axis=0)[0]
        better = value < best
        best[better] = value[better]
        typical[better] = shard["text_index"][nearest[better]]
    return typical
