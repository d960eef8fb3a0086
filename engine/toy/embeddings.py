"""Static token embeddings: a deterministic vector per (token text, seed).

The same token gets the same vector in every sentence and at every position, so the change
that attention makes to it (its *contextual* vector) can be seen and compared. A user table
(seed 000: 小明 = [1, 0, 1, 0]) overrides the generated vector for the tokens it names.

Speed (measured here, 2048 distinct tokens, d_model 512): a new ``default_rng`` per token cost
~28 µs (its SeedSequence dominates), 57 ms in all. Now one PCG64 is re-seeded per token by
setting its 128-bit state and increment straight from a 32-byte keyed BLAKE2b of the text, and
draws float32 normals in place: ~11 µs a token. Vectors already made are kept (bounded, oldest
made first out), so recomputing a sentence costs only a copy of its rows.
"""
from __future__ import annotations

import hashlib
import sys
import threading
from collections import deque
from typing import Mapping, Sequence

import numpy as np

DTYPE = np.float32

# Generated vectors kept for reuse: _memo[(d_model, seed)][text], at most MEMO_BYTES in all,
# the oldest made dropped first. One dict per (d_model, seed) so that a sentence is looked up by
# one list comprehension of dict.get (~0.1 µs a token against ~1.5 µs for the former per-token
# (text, d, seed) keys in an LRU). The cap counts BYTES including each entry's overhead: counting
# numbers let d_model 1 keep 8 M vectors of 343 B each (2.7 GiB) under a "32 MiB" cap.
MEMO_BYTES = 32 * 1024**2
# Measured per remembered vector besides its data and its text: the ndarray object (~112 B), its
# data block's malloc header, the dict slot and the deque's (group, text) tuple, ≈ 300 B.
ENTRY_OVERHEAD = 320
_memo: dict[tuple[int, int], dict[str, np.ndarray]] = {}
_memo_order: deque[tuple[tuple[int, int], str, int]] = deque()  # (group, text, bytes) in insertion order
_memo_bytes = 0
_memo_lock = threading.Lock()


def _entry_bytes(text: str, vector: np.ndarray) -> int:
    return vector.nbytes + sys.getsizeof(text) + ENTRY_OVERHEAD


def _pcg64_state(text: str, seed: int) -> dict:
    """PCG64 state seeded by a keyed hash of the token text: same (text, seed) → same stream."""
    digest = hashlib.blake2b(
        text.encode("utf-8", "surrogatepass"), digest_size=32, key=int(seed).to_bytes(8, "little")
    ).digest()
    return {
        "bit_generator": "PCG64",
        "state": {
            "state": int.from_bytes(digest[:16], "little"),
            "inc": int.from_bytes(digest[16:], "little") | 1,  # PCG's increment must be odd
        },
        "has_uint32": 0,
        "uinteger": 0,
    }


def _draw(text: str, seed: int, generator: np.random.Generator, out: np.ndarray) -> np.ndarray:
    """Fill ``out`` (d_model,) with the token's unit-variance Gaussian numbers."""
    generator.bit_generator.state = _pcg64_state(text, seed)
    return generator.standard_normal(out.shape, dtype=DTYPE, out=out)


def token_vector(text: str, d_model: int, seed: int) -> np.ndarray:
    """A unit-variance Gaussian vector seeded by a hash of the token text and the seed."""
    generator = np.random.Generator(np.random.PCG64())
    return _draw(text, seed, generator, np.empty(d_model, DTYPE))  # (d_model,)


def _remember(group: tuple[int, int], text: str, vector: np.ndarray) -> None:
    """Keep ``vector`` (a row of a fresh array) for reuse; call with _memo_lock held."""
    global _memo_bytes
    vectors = _memo.get(group)
    cost = _entry_bytes(text, vector)
    if (vectors is not None and text in vectors) or cost > MEMO_BYTES:
        return
    vector = vector.copy()  # its own memory, so that dropping it frees it
    vector.flags.writeable = False
    _memo.setdefault(group, {})[text] = vector
    _memo_order.append((group, text, cost))
    _memo_bytes += cost
    while _memo_bytes > MEMO_BYTES:
        old_group, old_text, old_cost = _memo_order.popleft()
        del _memo[old_group][old_text]
        _memo_bytes -= old_cost
        if not _memo[old_group]:
            del _memo[old_group]


def clear_memo() -> None:
    """Forget the generated vectors kept for reuse (benchmarks time the cold path with it)."""
    global _memo_bytes
    with _memo_lock:
        _memo.clear()
        _memo_order.clear()
        _memo_bytes = 0


def static_embeddings(
    token_texts: Sequence[str],
    d_model: int,
    seed: int,
    table: Mapping[str, Sequence[float]] | None = None,
) -> np.ndarray:
    """Embedding matrix (n, d_model): one row per token; repeated tokens share a row's values."""
    if not token_texts:
        return np.zeros((0, d_model), DTYPE)
    group = (d_model, seed)
    with _memo_lock:
        known = _memo.get(group, {})
        rows = [known.get(text) for text in token_texts]  # (d_model,) or None per token
    if table is not None:
        rows = [np.asarray(table[text], dtype=DTYPE) if text in table else row for text, row in zip(token_texts, rows)]
    if any(row is None for row in rows):
        missing = list(dict.fromkeys(text for text, row in zip(token_texts, rows) if row is None))
        fresh = np.empty((len(missing), d_model), DTYPE)  # (missing, d_model)
        generator = np.random.Generator(np.random.PCG64())  # re-seeded for every token
        for row, text in enumerate(missing):
            _draw(text, seed, generator, fresh[row])
        made = dict(zip(missing, fresh))
        with _memo_lock:
            for text, vector in made.items():
                _remember(group, text, vector)
        rows = [made[text] if row is None else row for text, row in zip(token_texts, rows)]
    # np.array copies a list of equal rows ~4× faster than np.stack (2048 × 512: 0.5 vs 2.2 ms).
    return np.array(rows, dtype=DTYPE)  # (n, d_model), a new array
