"""A finished corpus job's results, written beside its shards (each file atomically).

    head_stats.npz      per head (K = layers · heads rows, layer by layer): layer, head, count,
                        each measure's mean and <measure>_std, typical_text (the corpus index of
                        the head's most typical text) and typical_sentence (that text); texts,
                        skipped, tokens; model, ablated_heads
    head_stats.csv      the same table, one row a head
    head_clusters.npz   distance (K, K) mean Jensen–Shannon distance per token, embedding (K, 2)
                        classical MDS, layer, head
    head_distances.csv  the distance matrix, rows and columns named layer.head
    head_map.csv        layer, head, x, y: the embedding
    qk_map.npz          the joint query-key map of every head (engine/corpus/qk_map.py) over the
                        tokens of the corpus's first texts: points (K, 2N, 2) float32, the N queries
                        then the N keys; tsne (K, 2M, 2) float32, the first M = min(N, 150) tokens'
                        queries then keys by t-SNE (absent when the job was asked for none);
                        token (N,), text_index (N,), and sentence (N,) its text
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np

from ..core.errors import EngineError
from ..core.safe_io import atomic_write, write_bytes_atomic
from .clusters import classical_mds
from .measures import CORPUS_MEASURES
from .qk_map import QK_SAMPLE_TEXTS, joint_map, joint_tsne
from .shards import Summary, read_shard

RESULT_FILES = ("head_stats.npz", "head_stats.csv", "head_clusters.npz", "head_distances.csv", "head_map.csv",
                "qk_map.npz")


def head_rows(summary: Summary) -> dict[str, np.ndarray]:
    """The per-head columns (each (K,), layer-major): layer, head, count, measures, stds, typical_text."""
    layers, heads = summary.mean["entropy"].shape
    columns = {"layer": np.repeat(np.arange(layers), heads).astype(np.int64),
               "head": np.tile(np.arange(heads), layers).astype(np.int64),
               "count": np.full(layers * heads, summary.texts, dtype=np.int64)}
    for m in CORPUS_MEASURES:
        columns[m] = summary.mean[m].reshape(-1)
    for m in CORPUS_MEASURES:
        columns[f"{m}_std"] = summary.std[m].reshape(-1)
    columns["typical_text"] = summary.typical.reshape(-1).astype(np.int64)
    return columns


def _csv(header, rows) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def _cell(value) -> str:
    return str(int(value)) if np.issubdtype(type(value), np.integer) else f"{float(value):.6f}"


def write_results(folder, summary: Summary, model: str, ablate, texts) -> dict[str, np.ndarray]:
    """Write :data:`RESULT_FILES` into ``folder`` (``texts``: the job's, for each head's typical
    sentence, so the window can open a head on it without the corpus file); the clusters' arrays."""
    folder = Path(folder)
    columns = head_rows(summary)
    typical = np.array([texts[i] if i >= 0 else "" for i in columns["typical_text"]], dtype=str)  # (K,)
    embedding = classical_mds(summary.distance)  # (K, 2)
    ablated = np.array(sorted(ablate), dtype=np.int64).reshape(-1, 2)  # (k, 2)
    with atomic_write(folder / "head_stats.npz") as stream:
        np.savez(stream, **columns, typical_sentence=typical, texts=np.int64(summary.texts), skipped=np.int64(summary.skipped),
                 tokens=np.int64(summary.tokens), model=np.array(model), ablated_heads=ablated)
    names = list(columns)
    write_bytes_atomic(folder / "head_stats.csv",
                       _csv(names, ([_cell(columns[c][i]) for c in names] for i in range(len(columns["layer"])))))
    with atomic_write(folder / "head_clusters.npz") as stream:
        np.savez(stream, distance=summary.distance, embedding=embedding, layer=columns["layer"], head=columns["head"])
    labels = [f"{layer}.{head}" for layer, head in zip(columns["layer"], columns["head"])]
    write_bytes_atomic(folder / "head_distances.csv",
                       _csv(["head"] + labels, ([label] + [f"{v:.6f}" for v in row]
                                                for label, row in zip(labels, summary.distance))))
    write_bytes_atomic(folder / "head_map.csv",
                       _csv(["layer", "head", "x", "y"], ([int(layer), int(head), f"{x:.6f}", f"{y:.6f}"]
                            for layer, head, (x, y) in zip(columns["layer"], columns["head"], embedding))))
    return {"distance": summary.distance, "embedding": embedding}


def write_qk_map(folder, batch_size: int, batches: int, texts, tsne: bool = True) -> None:
    """qk_map.npz from the shards holding the sampled texts' queries and keys (the first batches);
    ``tsne``: with each head's t-SNE view too (the PCA view is always written)."""
    queries, keys, text_index, tokens = [], [], [], []
    for index in range(min(batches, -(-QK_SAMPLE_TEXTS // batch_size))):
        shard = read_shard(folder, index)
        if "qk_queries" in shard:
            queries.append(shard["qk_queries"])
            keys.append(shard["qk_keys"])
            text_index.append(shard["qk_text_index"])
            tokens.append(shard["qk_token"])
    if not queries:  # every sampled text was over the token limit
        return
    q, k = np.concatenate(queries, axis=1), np.concatenate(keys, axis=1)  # (K, N, d_head) each
    points = np.stack([joint_map(q[head], k[head]) for head in range(len(q))]).astype(np.float32)  # (K, 2N, 2)
    views = {"points": points}
    if tsne:
        views["tsne"] = np.stack([joint_tsne(q[head], k[head])
                                  for head in range(len(q))]).astype(np.float32)  # (K, 2M, 2)
    text_index = np.concatenate(text_index)  # (N,)
    with atomic_write(Path(folder) / "qk_map.npz") as stream:
        np.savez(stream, **views, token=np.concatenate(tokens), text_index=text_index,
                 sentence=np.array([texts[i] for i in text_index], dtype=str))


def read_results(folder) -> dict[str, np.ndarray]:
    """head_stats.npz, head_clusters.npz and qk_map.npz (when written) of a finished job, as one
    dict of arrays (qk_map's: qk_points, qk_tsne, qk_token, qk_text_index, qk_sentence)."""
    arrays = {}
    for name in ("head_stats.npz", "head_clusters.npz", "qk_map.npz"):
        path = Path(folder) / name
        if name == "qk_map.npz" and not path.exists():  # no sampled text within the token limit
            continue
        try:
            with np.load(path, allow_pickle=False) as data:
                prefix = "qk_" if name == "qk_map.npz" else ""
                arrays.update({prefix + key: data[key] for key in data.files})
        except FileNotFoundError:
            raise EngineError("{folder!r} holds no finished corpus job ({name} is missing): run `./run corpus` "
                              "into it, or let the job finish", field="out", folder=str(folder), name=name) from None
        except (OSError, ValueError) as error:
            raise EngineError("{path!r} cannot be read: {reason}", field="out", path=str(path),
                              reason=str(error)) from None
    return arrays
