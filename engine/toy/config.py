"""AttentionConfig: every setting of one self-attention computation, validated once.

One source of truth for the window's controls, the command line and sessions.
Invariants are checked at construction (``d_model % heads == 0`` …) and raise
:class:`EngineError` with a message a person understands.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Mapping

import numpy as np

from ..core.errors import EngineError
from ..core.memory import DEFAULT_MEMORY_BUDGET

TOKENIZERS = ("auto", "whitespace", "chars", "jieba")
POSITIONALS = ("none", "sinusoidal", "rope")
MASKS = ("none", "causal")
WEIGHTS = ("random", "identity")

MAX_D_MODEL = 8192
MAX_HEADS = 512
# Bounds that keep every float32 intermediate finite (scores up to ~1e17 / temperature):
# beyond them q·kᵀ or scores / temperature overflow float32 and the weights become NaN.
MAX_EMBEDDING_ABS = 1e6
MIN_TEMPERATURE = 1e-6
# Custom W_Q, W_K, W_V, W_O entries: with |x| ≤ 1e6 and d ≤ 8192, |q| ≤ 8e12 and the scores stay
# below ~5e29 / temperature ≤ 5e35, finite in float32.
MAX_PROJECTION_ABS = 1e3
PROJECTION_NAMES = ("w_q", "w_k", "w_v", "w_o")  # w_o optional: the identity when left out
# Custom matrices are kept as tuples of Python floats (hashable, JSON-ready): 4 × 512² ≈ 1 M numbers
# (~35 MB, validated in ~1 s) is the most a teaching example needs.
MAX_PROJECTION_D_MODEL = 512
MAX_SEED = 2**32 - 1  # seeds are NumPy's 32-bit unsigned seeds


def freeze_table(table) -> Mapping[str, tuple[float, ...]] | None:
    """Turn a user's token → vector table into an immutable mapping of float tuples."""
    if table is None:
        return None
    if not isinstance(table, Mapping):
        raise EngineError(
            'embeddings table must map token text to a list of numbers, e.g. {{"小明": [1, 0]}}; got {type_name}', field="embeddings", type_name=type(table).__name__
        )
    frozen: dict[str, tuple[float, ...]] = {}
    for token, vector in table.items():
        if not isinstance(token, str) or not token:
            raise EngineError("embeddings table key {token!r} must be a non-empty token string",
                              field="embeddings", token=token)
        if isinstance(vector, (str, bytes)) or not hasattr(vector, "__iter__"):
            raise EngineError("embedding for {token!r} must be a list of numbers, got {vector!r}",
                              field="embeddings", token=token, vector=vector)
        values = []
        for value in vector:
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
                raise EngineError("embedding for {token!r} holds {value!r}, which is not a number",
                                  field="embeddings", token=token, value=value)
            try:
                value = float(value)
            except OverflowError:  # an int beyond float range
                value = math.inf
            if not math.isfinite(value):
                raise EngineError(
                    "embedding for {token!r} holds {value}: only finite numbers are allowed",
                    field="embeddings", token=token, value=value
                )
            if abs(value) > MAX_EMBEDDING_ABS:
                raise EngineError(
                    "embedding for {token!r} holds {value:g}: values must lie between -{MAX_EMBEDDING_ABS:g} and "
                    "{MAX_EMBEDDING_ABS:g}",
                    field="embeddings", token=token, value=value, MAX_EMBEDDING_ABS=MAX_EMBEDDING_ABS
                )
            values.append(value)
        if not values:
            raise EngineError("embedding for {token!r} is empty", field="embeddings", token=token)
        frozen[token] = tuple(values)
    return MappingProxyType(frozen)


def _freeze_projections(projections, d_model: int):
    """Validate custom projection matrices: {"w_q": [[…] × d_model] × d_model, "w_k", "w_v"[, "w_o"]}.

    Returns an immutable mapping name → tuple of row tuples (floats), W_O filled in as the
    identity when left out, or None. Every problem raises EngineError(field="projections").
    """
    if projections is None:
        return None
    if not isinstance(projections, Mapping):
        raise EngineError(
            'projections must map "w_q", "w_k", "w_v" (and optionally "w_o") to d_model × d_model '
            "matrices (lists of rows); got {kind}", field="projections", kind=type(projections).__name__)
    names = {}
    for key in projections:
        name = key.lower() if isinstance(key, str) else key
        if name not in PROJECTION_NAMES:
            raise EngineError("projections has an unknown matrix {name!r}: use w_q, w_k, w_v and optionally w_o",
                              field="projections", name=key)
        if name in names:
            raise EngineError("projections names {name} twice", field="projections", name=name)
        names[name] = key
    if d_model > MAX_PROJECTION_D_MODEL:
        raise EngineError("custom projections are limited to d_model ≤ {limit}; d_model is {d_model}",
                          field="projections", limit=MAX_PROJECTION_D_MODEL, d_model=d_model)
    missing = [name for name in PROJECTION_NAMES[:3] if name not in names]
    if missing:
        raise EngineError("projections lacks {missing}: give w_q, w_k and w_v (w_o is optional)",
                          field="projections", missing=", ".join(missing))
    frozen = {}
    for name in PROJECTION_NAMES:
        if name not in names:
            frozen[name] = tuple(tuple(1.0 if i == j else 0.0 for j in range(d_model)) for i in range(d_model))
            continue
        matrix = projections[names[name]]
        if isinstance(matrix, np.ndarray):
            if matrix.dtype.kind not in "iuf":
                raise EngineError("projection {name} holds {kind} values, not numbers", field="projections",
                                  name=name, kind=matrix.dtype.name)
            matrix = matrix.tolist()
        if isinstance(matrix, (str, bytes, Mapping)) or not isinstance(matrix, (list, tuple)):
            raise EngineError("projection {name} must be a list of {d_model} rows; got {kind}",
                              field="projections", name=name, d_model=d_model, kind=type(matrix).__name__)
        if len(matrix) != d_model:
            raise EngineError("projection {name} has {rows} rows but d_model is {d_model}: it must be "
                              "d_model × d_model", field="projections", name=name, rows=len(matrix), d_model=d_model)
        rows = []
        for r, row in enumerate(matrix):
            if isinstance(row, (str, bytes, Mapping)) or not isinstance(row, (list, tuple)):
                raise EngineError("row {row} of projection {name} must be a list of {d_model} numbers; got {value!r}",
                                  field="projections", name=name, row=r + 1, d_model=d_model, value=row)
            if len(row) != d_model:
                raise EngineError("row {row} of projection {name} has {count} numbers but d_model is {d_model}",
                                  field="projections", name=name, row=r + 1, count=len(row), d_model=d_model)
            values = []
            for value in row:
                if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
                    raise EngineError("projection {name} holds {value!r}, which is not a number",
                                      field="projections", name=name, value=value)
                try:
                    value = float(value)
                except OverflowError:
                    value = math.inf
                if not math.isfinite(value):
                    raise EngineError("projection {name} holds {value}: only finite numbers are allowed",
                                      field="projections", name=name, value=value)
                if abs(value) > MAX_PROJECTION_ABS:
                    raise EngineError("projection {name} holds {value:g}: values must lie between -{limit:g} "
                                      "and {limit:g}", field="projections", name=name, value=value,
                                      limit=MAX_PROJECTION_ABS)
                values.append(value)
            rows.append(tuple(values))
        frozen[name] = tuple(rows)
    return MappingProxyType(frozen)


@dataclass(frozen=True)
class AttentionConfig:
    """Everything that determines one attention trace. Immutable and hashable by value."""

    text: str = "小明喜欢苹果"
    tokenizer: str = "auto"  # auto: jieba for Chinese runs, words + punctuation otherwise
    d_model: int = 64  # width of every token vector
    heads: int = 4  # d_k = d_model / heads per head (seed 004: 512 = 8 × 64)
    seed: int = 0  # seeds the static embeddings and the random projections
    positional: str = "sinusoidal"  # none | sinusoidal (added to x) | rope (rotates q, k)
    mask: str = "none"  # none = encoder, causal = decoder (no peeking at the future)
    scale: bool = True  # divide q·kᵀ by √d_k before the softmax
    temperature: float = 1.0  # extra divisor of the scores; > 0
    weights: str = "random"  # random (seeded) | identity (the seeds' W_Q = W_K = W_V = I); see projections
    embeddings: Mapping[str, tuple[float, ...]] | None = field(default=None, compare=True)
    # Custom W_Q, W_K, W_V (optionally W_O; identity when left out): used instead of ``weights``.
    projections: Mapping[str, tuple[tuple[float, ...], ...]] | None = field(default=None, compare=True)
    memory_budget: int = DEFAULT_MEMORY_BUDGET  # bytes the trace may take

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise EngineError("text must be a string", field="text")
        if not self.text.strip():
            raise EngineError("text is empty: type a sentence, e.g. 小明 喜欢 苹果", field="text")
        try:
            self.text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate, e.g. from undecodable bytes
            raise EngineError("text holds an invalid character (a lone surrogate): retype it", field="text") from None
        for name, allowed in (
            ("tokenizer", TOKENIZERS),
            ("positional", POSITIONALS),
            ("mask", MASKS),
            ("weights", WEIGHTS),
        ):
            value = getattr(self, name)
            if value not in allowed:
                raise EngineError("{name} must be one of {choices}; got {value!r}",
                                  field=name, name=name, choices=', '.join(allowed), value=value)
        for name, upper in (("d_model", MAX_D_MODEL), ("heads", MAX_HEADS)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise EngineError("{name} must be a whole number; got {value!r}", field=name, name=name, value=value)
            if value <= 0:
                raise EngineError("{name} must be positive; got {value}", field=name, name=name, value=value)
            if value > upper:
                raise EngineError("{name} must be at most {upper}; got {value}",
                                  field=name, name=name, upper=upper, value=value)
        if self.d_model % self.heads:
            divisors = [h for h in range(1, min(self.d_model, 64) + 1) if self.d_model % h == 0]
            raise EngineError(
                "d_model ({d_model}) must be divisible by heads ({heads}); try heads in {divisors}",
                field="heads", d_model=self.d_model, heads=self.heads, divisors=divisors
            )
        if self.positional == "rope" and self.d_k % 2:
            raise EngineError(
                "RoPE rotates pairs of dimensions, so d_k = d_model / heads must be even; it is {d_k} (d_model "
                "{d_model}, heads {heads})",
                field="heads", d_k=self.d_k, d_model=self.d_model, heads=self.heads
            )
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)):
            raise EngineError("seed must be a whole number; got {seed!r}", field="seed", seed=self.seed)
        if not 0 <= self.seed <= MAX_SEED:
            raise EngineError("seed must be between 0 and {maximum}; got {seed}", field="seed", maximum=MAX_SEED,
                              seed=self.seed)
        if not isinstance(self.scale, (bool, np.bool_)):
            raise EngineError("scale must be true or false; got {scale!r}", field="scale", scale=self.scale)
        try:
            temperature = float(self.temperature)
        except (TypeError, ValueError):
            raise EngineError("temperature must be a number; got {temperature!r}",
                              field="temperature", temperature=self.temperature) from None
        if not math.isfinite(temperature) or temperature <= 0:
            raise EngineError("temperature must be a positive number; got {temperature!r}",
                              field="temperature", temperature=self.temperature)
        if temperature < MIN_TEMPERATURE:
            raise EngineError("temperature must be at least {MIN_TEMPERATURE:g}; got {temperature:g}",
                              field="temperature", MIN_TEMPERATURE=MIN_TEMPERATURE, temperature=temperature)
        object.__setattr__(self, "temperature", temperature)
        if (isinstance(self.memory_budget, bool) or not isinstance(self.memory_budget, (int, np.integer))
                or self.memory_budget <= 0):
            raise EngineError("memory_budget must be a positive number of bytes; got {memory_budget!r}",
                              field="memory_budget", memory_budget=self.memory_budget)
        for name in ("d_model", "heads", "seed", "memory_budget"):  # NumPy scalars → int: JSON-friendly
            object.__setattr__(self, name, int(getattr(self, name)))
        object.__setattr__(self, "scale", bool(self.scale))
        table = freeze_table(self.embeddings)
        if table is not None:
            for token, vector in table.items():
                if len(vector) != self.d_model:
                    raise EngineError(
                        "embedding for {token!r} has {count} numbers but d_model is {d_model}: give every vector "
                        "exactly {d_model} numbers or change d_model",
                        field="embeddings", token=token, count=len(vector), d_model=self.d_model
                    )
        object.__setattr__(self, "embeddings", table)
        object.__setattr__(self, "projections", _freeze_projections(self.projections, self.d_model))

    @property
    def d_k(self) -> int:
        """Width of one head's q, k and v."""
        return self.d_model // self.heads

    def __hash__(self) -> int:
        table = None if self.embeddings is None else tuple(sorted(self.embeddings.items()))
        projections = None if self.projections is None else tuple(sorted(self.projections.items()))
        return hash(tuple(getattr(self, f.name) for f in fields(self) if f.name not in ("embeddings", "projections"))
                    + (table, projections))

    def replace(self, **changes) -> "AttentionConfig":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def to_dict(self) -> dict:
        """Plain JSON-friendly dict of every field (embeddings as lists)."""
        # memory_budget is the program's limit, never a document's (see engine/files/documents.py)
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "memory_budget"}
        out["embeddings"] = (
            None if self.embeddings is None else {k: list(v) for k, v in self.embeddings.items()}
        )
        out["projections"] = (
            None if self.projections is None
            else {name: [list(row) for row in matrix] for name, matrix in self.projections.items()}
        )
        return out

    @classmethod
    def from_dict(cls, data: Mapping) -> "AttentionConfig":
        """Build from a dict such as :meth:`to_dict` wrote; unknown keys are an error.

        ``memory_budget`` in ``data`` is ignored: a document cannot set a safety limit (files
        written before to_dict dropped it hold it). Values read from files go through the stricter
        :func:`engine.files.documents.parse_settings` (JSON types, one rule for every number).
        """
        if not isinstance(data, Mapping):
            raise EngineError("settings must be an object of name: value pairs")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise EngineError("unknown setting(s): {names}", names=', '.join(unknown))
        return cls(**{name: value for name, value in data.items() if name != "memory_budget"})
