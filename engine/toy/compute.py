"""compute(config): tokens → embeddings (+ positions) → Q, K, V → scores → scaled (+ mask) →
softmax → weighted sum of V → concat → W_O, keeping every intermediate.

Vectorized over heads and tokens; row-vector convention Q = X·W_Q as in the seeds.

The projection matrices and the sinusoidal table depend only on (d_model, seed, kind) and
(n, d_model): like a model's parameters and buffers they are made once and reused (bounded
memos, read-only arrays), with W_Q, W_K, W_V also side by side for one fused projection. Measured at d_model 512: the four random matrices take ~15 ms to
draw, the 2048 × 512 sinusoidal table ~15 ms, against ~3 ms for a whole 128-token attention.
"""
from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict

import numpy as np

from ..core.hooks import check_ablation
from ..core.attention import softmax_into, attend, causal_mask, merge_heads, project_heads
from .config import AttentionConfig
from .embeddings import clear_memo as _clear_embedding_memo
from .embeddings import static_embeddings
from ..core.errors import EngineError
from ..core.hooks import TOY_BLOCK_POINTS, HookRun, attention_hooks, block_names, hooks_with_ablation, layer_range
from ..core.memory import check_budget, explain_memory_error
from ..core.parallel import THREADED_MIN_SCORES, engine_threads, for_rows
from ..core.positional import apply_rope, sinusoidal
from ..text.tokenize import tokenize
from ..core.trace import empty_vector_diffs, read_only, vector_diffs
from .trace import AttentionResult
from .weights import NAMES as WEIGHT_NAMES
from .weights import packed_projection_weights


class _Memo:
    """A small thread-safe LRU of read-only arrays, bounded by total bytes."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.entries: OrderedDict = OrderedDict()  # key → (value, nbytes)
        self.bytes = 0
        self.lock = threading.Lock()

    def get(self, key, make, nbytes_of):
        with self.lock:
            if key in self.entries:
                self.entries.move_to_end(key)
                return self.entries[key][0]
        value = make()
        size = nbytes_of(value)
        if size <= self.max_bytes:
            with self.lock:
                if key not in self.entries:
                    self.entries[key] = (value, size)
                    self.bytes += size
                while self.bytes > self.max_bytes:
                    _, (_, dropped) = self.entries.popitem(last=False)
                    self.bytes -= dropped
        return value

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.bytes = 0


_weights_memo = _Memo(max_bytes=64 * 1024**2)  # 4 d² floats per (d_model, seed, kind)
_positional_memo = _Memo(max_bytes=64 * 1024**2)  # n · d floats per (n, d_model)
_mask_memo = _Memo(max_bytes=64 * 1024**2)  # n² booleans per n (np.triu: 9 ms at n = 2048)


_read_only = read_only  # engine.core.trace's one read-only helper


def _projection_weights(d_model: int, seed: int, kind: str) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """projection_weights() (4 × (d, d)) and [W_Q | W_K | W_V] (d, 3d), made once per
    (d_model, seed, kind), read-only."""
    def make():
        # One (d, 4d) array; W_Q … W_O and [W_Q | W_K | W_V] are views of it: a concatenated
        # copy cost 3·d² floats more (0.8 GB at d_model 8192).
        packed = _read_only(packed_projection_weights(d_model, seed, kind))  # (d, 4d)
        w = {name: packed[:, i * d_model : (i + 1) * d_model] for i, name in enumerate(WEIGHT_NAMES)}
        return w, packed[:, : 3 * d_model]  # (d, 3d), a view

    def nbytes(made):
        return made[1].base.nbytes if made[1].base is not None else made[1].nbytes

    w, w_qkv = _weights_memo.get((d_model, seed, kind), make, nbytes)
    return dict(w), w_qkv


def projection_matrices(config: AttentionConfig) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The W_Q, W_K, W_V, W_O that :func:`compute` uses for ``config`` (4 × (d, d), read-only) and
    [W_Q | W_K | W_V] (d, 3d): the user's own when the config carries them (seed 001's figures)."""
    if config.projections is not None:
        w = {name: _read_only(np.asarray(m, dtype=np.float32)) for name, m in config.projections.items()}
        return w, np.concatenate([w["w_q"], w["w_k"], w["w_v"]], axis=1)  # (d, 3d)
    return _projection_weights(config.d_model, config.seed, config.weights)


def _sinusoidal(n: int, d_model: int) -> np.ndarray:
    """sinusoidal(n, d_model), made once per (n, d_model): (n, d), read-only."""
    return _positional_memo.get((n, d_model), lambda: _read_only(sinusoidal(n, d_model)), lambda a: a.nbytes)


def _causal_mask(n: int) -> np.ndarray:
    """causal_mask(n), made once per n: (n, n) bool, read-only."""
    return _mask_memo.get(n, lambda: _read_only(causal_mask(n)), lambda a: a.nbytes)


def _clear_caches() -> None:
    """Forget every memo (projection weights, sinusoidal tables, token vectors): the cold path."""
    _weights_memo.clear()
    _positional_memo.clear()
    _mask_memo.clear()
    _clear_embedding_memo()


TOY_HOOK_NAMES = ("hook_embed", "hook_pos_embed", *block_names(1, TOY_BLOCK_POINTS), "blocks.0.attn.hook_rot_q",
                  "blocks.0.attn.hook_rot_k")


def hook_names(config: AttentionConfig) -> tuple[str, ...]:
    """The toy engine's hook points for ``config`` (engine.core.hooks): rot_q/rot_k with RoPE only,
    hook_pos_embed with sinusoidal positions only."""
    return tuple(name for name in TOY_HOOK_NAMES
                 if (config.positional == "rope" or "hook_rot_" not in name)
                 and (config.positional == "sinusoidal" or name != "hook_pos_embed"))


@explain_memory_error
def compute(config: AttentionConfig, *, ablate: frozenset[tuple[int, int]] = frozenset(),
            hooks: HookRun | None = None, resid: np.ndarray | None = None) -> AttentionResult:
    """Run multi-head self-attention for ``config`` and return the full trace.

    ``ablate``: (0, head) pairs switched off (one layer here): their head outputs are zeroed
    before W_O (a hook on blocks.0.attn.hook_z, :mod:`engine.core.hooks`), so ``concat`` and
    ``output`` lack them. ``hooks``: the run's hook points (None: nothing listens). ``resid``
    (n, d): start at blocks.0.hook_resid_pre with this input instead of embeddings + positions."""
    started = time.perf_counter()
    ablate = check_ablation(ablate, 1, config.heads)
    if ablate:  # switching heads off is a hook on hook_z
        hooks = hooks_with_ablation(hooks, hook_names(config), ablate)
    tokens = tuple(tokenize(config.text, config.tokenizer))
    if not tokens:
        raise EngineError("the text has no tokens (only spaces or control characters): type a word")
    n, d_model, heads, d_k = len(tokens), config.d_model, config.heads, config.d_k
    rope = config.positional == "rope"
    estimate = check_budget(n, d_model, heads, rope, config.memory_budget)

    embeddings = static_embeddings([t.text for t in tokens], d_model, config.seed, config.embeddings)  # (n, d)
    if hooks is not None and "hook_embed" in hooks:
        embeddings = hooks("hook_embed", np.array(embeddings))  # a copy: the memo's vectors are shared
    if config.positional == "sinusoidal":
        positional = _sinusoidal(n, d_model)  # (n, d), shared and read-only
        if hooks is not None and "hook_pos_embed" in hooks:
            positional = hooks("hook_pos_embed", np.array(positional))
        x = embeddings + positional  # (n, d)
    else:
        positional = np.zeros_like(embeddings)  # (n, d)
        x = embeddings
    if resid is not None:  # resumed at blocks.0.hook_resid_pre
        layer_range(1, 0, resid, None, (n, d_model))
        x = np.array(resid, dtype=np.result_type(x))
    wanted = hooks.at(0) if hooks is not None else frozenset()
    edit = hooks.local(0) if wanted else None
    if edit is not None and "hook_resid_pre" in wanted:
        x = edit("hook_resid_pre", np.array(x))
    w, w_qkv = projection_matrices(config)  # 4 × (d, d); (d, 3d)
    dtype = np.result_type(x, w_qkv)

    with engine_threads(heads * n * n >= THREADED_MIN_SCORES):  # one choice per computation (engine/core/parallel.py)
        # One matmul for Q, K and V: x · [W_Q | W_K | W_V] = [x·W_Q | x·W_K | x·W_V], each share
        # of rows written straight into its place in the heads layout.
        qkv = np.empty((3 * heads, n, d_k), dtype)  # (3·heads, n, d_k): q heads, k heads, v heads

        def project(rows: slice) -> None:
            project_heads(x[rows], w_qkv, None, qkv[:, rows])  # (rows, 3d) → its place

        for_rows(n, project, numbers=n * d_model * 3 * d_model)
        q, k, v = qkv[:heads], qkv[heads : 2 * heads], qkv[2 * heads :]  # (heads, n, d_k) each
        if edit is not None:  # hook_q / hook_k / hook_v: (n, heads, d_k) views of the heads layout
            for local, array in (("attn.hook_q", q), ("attn.hook_k", k), ("attn.hook_v", v)):
                if local in wanted:
                    edit(local, array.transpose(1, 0, 2))
        q_unrotated = k_unrotated = None
        if rope:
            q_unrotated, k_unrotated = q, k
            q, k = apply_rope(q), apply_rope(k)  # (heads, n, d_k), rotated by position
            if edit is not None:
                for local, array in (("attn.hook_rot_q", q), ("attn.hook_rot_k", k)):
                    if local in wanted:
                        edit(local, array.transpose(1, 0, 2))

        mask = _causal_mask(n) if config.mask == "causal" else None  # (n, n), shared and read-only
        divisor = (math.sqrt(d_k) if config.scale else 1.0) * config.temperature
        stages = attend(q, k, v, divisor=divisor, mask=mask)

        head_outputs = stages["head_outputs"]  # (heads, n, d_k)
        if edit is not None:
            attention_hooks(edit, wanted, stages, v, softmax_into)
            if "attn.hook_z" in wanted:  # switched-off heads (ablate) reach W_O as zeros
                edit("attn.hook_z", head_outputs.transpose(1, 0, 2))
        concat = np.empty((n, d_model), head_outputs.dtype)  # (n, d): heads side by side
        output = np.empty((n, d_model), np.result_type(concat, w["w_o"]))  # (n, d)

        diffs = empty_vector_diffs(n, d_model)

        def combine(rows: slice) -> None:
            merge_heads(head_outputs[:, rows], out=concat[rows])
            np.matmul(concat[rows], w["w_o"], out=output[rows])
            if edit is not None and "hook_attn_out" in wanted:
                edit("hook_attn_out", output[rows])
            vector_diffs(x[rows], output[rows], out={name: array[rows] for name, array in diffs.items()})

        if edit is not None:  # a hook sees every row at once
            combine(slice(None))
        else:
            for_rows(n, combine, numbers=n * d_model * d_model)

    return AttentionResult(
        config=config,
        tokens=tokens,
        embeddings=embeddings,
        positional=positional,
        x=x,
        **w,
        q=q,
        k=k,
        v=v,
        **stages,
        concat=concat,
        output=output,
        **diffs,
        q_unrotated=q_unrotated,
        k_unrotated=k_unrotated,
        mask=mask,
        ablate=ablate,
        estimated_bytes=estimate,
        seconds=time.perf_counter() - started,
    )
