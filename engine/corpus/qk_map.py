"""The joint query–key map of AttentionViz (Yeh et al. 2023): one head's queries and keys in one plane.

For a head, every sampled token gives a query q_i and a key k_j (d_head each; after RoPE for a
rotary model, what enters the dot product; a grouped-query model's key is its key/value head's).
Before embedding them together, the paper normalises so that nearness in the plane means a large
dot product:

- **translation**: the keys are moved so their mean is the queries' mean, k′ = k − k̄ + q̄. A query's
  scores all change by the same q·(q̄ − k̄), which softmax ignores: the attention is unchanged.
- **scaling**: queries times c and keys divided by c, c = √(mean‖k′‖ / mean‖q‖), so both have the same
  mean norm (√(mean‖q‖ · mean‖k′‖)); every dot product q·k′ is unchanged.

Then PCA of the 2N vectors together (centred on their joint mean; the first two principal axes,
each axis's sign chosen so its largest coordinate is positive). The paper also offers t-SNE and UMAP:
:func:`joint_tsne` is the same normalised points by t-SNE (engine/corpus/tsne.py, exact, in NumPy),
over the first :data:`QK_TSNE_TOKENS` tokens only (its cost grows as the square of the points); UMAP
is not offered (not a dependency).

:func:`sample_vectors` reads one text's queries and keys for every head from a cached run;
:func:`joint_map` and :func:`joint_tsne` embed one head's.
"""
from __future__ import annotations

import numpy as np

from .tsne import tsne

QK_SAMPLE_TEXTS = 64  # texts at the start of the corpus whose queries and keys a job keeps
QK_TSNE_TOKENS = 150  # tokens (each a query and a key) of the t-SNE view: 300 points, about 0.3 s a head


def qk_hook_names(model) -> tuple[list[str], list[str]]:
    """The hook points of every layer's queries and keys as they enter q·k (after RoPE when rotary)."""
    names = set(model.hook_names())
    layers = model.facts.layers
    rotary = "blocks.0.attn.hook_rot_q" in names
    q = [f"blocks.{l}.attn.hook_{'rot_q' if rotary else 'q'}" for l in range(layers)]
    k = [f"blocks.{l}.attn.hook_{'rot_k' if rotary else 'k'}" for l in range(layers)]
    return q, k


def sample_vectors(cache: dict, q_names: list[str], k_names: list[str], heads: int) -> tuple[np.ndarray, np.ndarray]:
    """(queries, keys), each (K, n, d_head) float32 with K = layers · heads, layer-major; a key/value
    head shared by several query heads (grouped-query attention) is repeated for each of them."""
    queries, keys = [], []
    for q_name, k_name in zip(q_names, k_names):
        q = np.asarray(cache[q_name], dtype=np.float32)  # (n, heads, d_head)
        k = np.asarray(cache[k_name], dtype=np.float32)  # (n, kv, d_head)
        k = np.repeat(k, heads // k.shape[1], axis=1)  # (n, heads, d_head): query head h reads kv head h // group
        queries.append(q.transpose(1, 0, 2))
        keys.append(k.transpose(1, 0, 2))
    return np.concatenate(queries), np.concatenate(keys)  # (K, n, d_head) each


def normalise(queries: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """AttentionViz's translation and scaling (module docstring) of (N, d) queries and keys, float64."""
    q = np.asarray(queries, dtype=np.float64)
    k = np.asarray(keys, dtype=np.float64)
    k = k - k.mean(axis=0) + q.mean(axis=0)
    q_norm = np.linalg.norm(q, axis=1).mean()
    k_norm = np.linalg.norm(k, axis=1).mean()
    scale = np.sqrt(k_norm / q_norm) if q_norm > 0 and k_norm > 0 else 1.0
    return q * scale, k / scale


def joint_map(queries: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """(2N, 2) float64: the N queries then the N keys of one head in one PCA plane, after :func:`normalise`."""
    q, k = normalise(queries, keys)
    both = np.concatenate([q, k])  # (2N, d)
    centred = both - both.mean(axis=0)
    _, _, axes = np.linalg.svd(centred, full_matrices=False)  # rows of axes: principal directions
    coordinates = np.zeros((len(both), 2))
    take = min(2, axes.shape[0])
    coordinates[:, :take] = centred @ axes[:take].T
    largest = coordinates[np.abs(coordinates).argmax(axis=0), np.arange(2)]
    coordinates *= np.where(largest < 0, -1.0, 1.0)
    return coordinates


def joint_tsne(queries: np.ndarray, keys: np.ndarray, seed: int = 0) -> np.ndarray:
    """(2M, 2) float64: the first M = min(N, QK_TSNE_TOKENS) queries then their keys of one head by
    t-SNE, after :func:`normalise` (of all N, so the scaling is the PCA view's)."""
    q, k = normalise(queries, keys)
    m = min(len(q), QK_TSNE_TOKENS)
    return tsne(np.concatenate([q[:m], k[:m]]), seed=seed)
