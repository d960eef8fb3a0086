"""Static token embeddings: a deterministic vector per (token text, seed).

The same token gets the same vector in every sentence and at every position, so the change
that attention makes to it (its *contextual* vector) can be seen and compared. A user table
(seed 000: 小明 = [1, 0, 1, 0]) overrides the generated vector for the tokens it names.
"""
from __future__ import annotations

import hashlib
from typing import Mapping, Sequence

import numpy as np

DTYPE = np.float32


def token_vector(text: str, d_model: int, seed: int) -> np.ndarray:
    """A unit-variance Gaussian vector seeded by a hash of the token text and the seed."""
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8, key=seed.to_bytes(8, "little")).digest()
    rng = np.random.default_rng(int.from_bytes(digest, "little"))
    return rng.standard_normal(d_model).astype(DTYPE)  # (d_model,)


def static_embeddings(
    token_texts: Sequence[str],
    d_model: int,
    seed: int,
    table: Mapping[str, Sequence[float]] | None = None,
) -> np.ndarray:
    """Embedding matrix (n, d_model): one row per token; repeated tokens share a row's values."""
    unique = {}
    for text in token_texts:
        if text not in unique:
            if table is not None and text in table:
                unique[text] = np.asarray(table[text], dtype=DTYPE)
            else:
                unique[text] = token_vector(text, d_model, seed)
    if not token_texts:
        return np.zeros((0, d_model), DTYPE)
    return np.stack([unique[text] for text in token_texts])  # (n, d_model)
