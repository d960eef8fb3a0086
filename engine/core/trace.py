"""What every trace shares, below every package that makes one: :class:`TraceBase` (the
properties of the model contract's Trace, engine/models/contract.py), the engine's one read-only
helper, and per-token vector diffs (the toy's, the encoders' and the decoders' layer views)."""
from __future__ import annotations

from dataclasses import fields

import numpy as np


class TraceBase:
    """The properties every trace class shares (once, here): n, token_texts, spans, num_layers,
    num_heads, and ``arrays()`` of the contract's arrays."""

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def token_texts(self) -> list[str]:
        return [token.text for token in self.tokens]

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        return tuple((token.start, token.end) for token in self.tokens)

    @property
    def num_layers(self) -> int:
        return self.attentions.shape[0]

    @property
    def num_heads(self) -> int:
        return self.attentions.shape[1]

    def layer_values(self) -> list[np.ndarray]:  # pragma: no cover - every trace class has its own
        """Each layer's v, (heads or kv_heads, n, d_head): what the value-weighted analyses weigh."""
        raise NotImplementedError

    def own_output_weights(self) -> list[np.ndarray] | None:
        """Each layer's W_O when the trace holds it (the toy's), else None: it is the model's."""
        return None

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays an export writes: the contract's (a trace class may add its own)."""
        return self.contract_arrays()

    def contract_arrays(self) -> dict[str, np.ndarray]:
        """tokens, input_ids, attentions, hidden_states (and next_token_logits for a decoder)."""
        arrays = {"tokens": np.array(self.token_texts, dtype=str), "input_ids": self.input_ids,
                  "attentions": self.attentions, "hidden_states": self.hidden_states}
        if self.next_token_logits is not None:
            arrays["next_token_logits"] = self.next_token_logits
        return arrays



def read_only(array: np.ndarray, dtype=None) -> np.ndarray:
    """``array`` made read-only (results and weights are shared, never edited); with ``dtype``
    a contiguous array of that dtype first (a copy when it is not one already). The engine's one
    read-only helper."""
    if dtype is not None:
        array = np.ascontiguousarray(array, dtype=dtype)
    array.flags.writeable = False
    return array


def freeze_arrays(obj) -> None:
    """Make every ndarray field of a dataclass instance read-only (results are shared, never edited)."""
    names = _FIELD_NAMES.get(type(obj))
    if names is None:
        names = _FIELD_NAMES[type(obj)] = tuple(f.name for f in fields(obj))
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, np.ndarray):
            value.flags.writeable = False


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}  # dataclass → its field names (fields() is slow)


def vector_diffs(
    before: np.ndarray, after: np.ndarray, out: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """Per-row difference, norms and cosine similarity of two (n, d) matrices.

    The sums run in the matrices' float32 (einsum: no float64 copies; relative error ~1e-6 at
    d = 512, far below the 3 decimals shown; 0.06 against 0.2 ms at 128 × 512) and the cosine's
    division in float64. ``out``: arrays to fill (as returned by :func:`empty_vector_diffs`, or
    row slices of them), so that shares of rows can be done in parallel.
    """
    if out is None:
        out = empty_vector_diffs(*before.shape)
    np.subtract(after, before, out=out["diff"])
    norm_before = np.sqrt(np.einsum("nd,nd->n", before, before).astype(np.float64))  # (n,)
    norm_after = np.sqrt(np.einsum("nd,nd->n", after, after).astype(np.float64))  # (n,)
    dots = np.einsum("nd,nd->n", before, after).astype(np.float64)  # (n,)
    denominator = norm_before * norm_after
    out["norm_before"][...] = norm_before
    out["norm_after"][...] = norm_after
    out["cosine"][...] = np.divide(dots, denominator, out=np.zeros_like(dots), where=denominator > 0)
    return out


def empty_vector_diffs(n: int, d: int) -> dict[str, np.ndarray]:
    """Uninitialised float32 arrays for :func:`vector_diffs`: diff (n, d) and the three (n,)."""
    return {
        "diff": np.empty((n, d), np.float32),
        "norm_before": np.empty(n, np.float32),
        "norm_after": np.empty(n, np.float32),
        "cosine": np.empty(n, np.float32),
    }
