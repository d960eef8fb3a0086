"""Activation patching: copy one activation of a clean run into a corrupted run and measure.

Meng et al. (2022, causal tracing) and Wang et al. (2022, indirect object identification): two
prompts of the same token count — clean ("The Eiffel Tower is in the city of") and corrupted
("The Colosseum is in the city of") — are run; then the corrupted run is repeated with one
activation replaced by the clean run's, and a measure says how much of the clean behaviour
came back. Built on the hook points (engine/hooks.py, TransformerLens's names):

    resid_pre[l, p]  blocks.{l}.hook_resid_pre row p          (layers, n)
    attn_out[l, p]   blocks.{l}.hook_attn_out row p           (layers, n)
    mlp_out[l, p]    blocks.{l}.hook_mlp_out row p            (layers, n)
    head_z[l, h]     blocks.{l}.attn.hook_z[:, h] (every row) (layers, heads)

Measure: a decoder's p(answer) at the last position (softmax of the next-token logits, float64)
and the logit difference logit(answer) − logit(other), where "other" is the corrupted run's most
likely token besides the answer; an encoder's cosine of a chosen token's final vector
(``hidden_states[-1][position]``) to its clean-run vector (1: fully restored).

What a patch does not change is not recomputed:
- the layers below l: every cell resumes at layer l from the corrupted run's cached residual
  (``start_at_layer=l, resid=…``), never from the embeddings;
- in a decoder, the positions before p (a causal model's position i < p never reads position
  p): a residual-stream cell runs engine.models.llama.forward with ``prefix=p`` — positions 0 … p − 1
  of every layer (their keys and values too) are copied from the corrupted run and only rows
  p … n − 1 of layers l … L − 1 are computed. Over a grid that is ~¼ of the rows × layers of
  full runs. attn_out / mlp_out cells first run layer l alone with the hook (stop_at_layer=l+1)
  and then resume at l + 1 the same way; head_z cells change every row, so they resume at l only.

A decoder of engine.models.llama (every GGUF / Hugging Face decoder the app reads) runs a grid
one *layer batch* at a time (engine.models.llama_batch): the cells of one grid row — the n
positions of layer l, or its heads — go through the layers together as one packed matrix
(Σ_p (n − p) rows for a token grid), so each layer's weights are read once per grid row instead
of once per cell (a cell alone is a few rows: bound by memory traffic and Python overhead; the
30 × 16 residual grid on SmolLM2 took 19.9 s idle cell by cell, and batching is 4.96× faster in one
run under load — benchmarks/README.md). Layer l itself
is done here in closed form where a cell changes one row of it: an attn_out cell's layer output
differs from the corrupted run's only at row p (resid_pre + clean attn_out, then the MLP on that
row), an mlp_out cell's only by the MLP term of row p; so both enter the batch at layer l + 1
with prefix p. A head_z cell recomputes layer l's W_O and MLP on every row and enters at l + 1.
The window runs one layer batch per worker job (progress and Esc between layers); ``patch``
shares the layer batches among the engine's threads. Encoders and other models run cell by
cell through the hooks, as above.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..core.errors import EngineError
from .occlusion import Answer, answer_token, cosine, probability

GRIDS = ("resid_pre", "attn_out", "mlp_out", "head_z")
PATCH_TOKENS = 128  # longer prompts are refused before anything runs (a grid is layers × n runs)
_POINT = {"resid_pre": "hook_resid_pre", "attn_out": "hook_attn_out", "mlp_out": "hook_mlp_out",
          "head_z": "attn.hook_z"}


def is_decoder_model(model) -> bool:
    """True for a model whose runs give next-token logits (a decoder)."""
    return model.facts.capabilities.next_token_logits  # declared (engine/models/contract.py)


@dataclass(frozen=True, eq=False)
class PatchSetup:
    """Both prompts checked and run once, with every cached activation a grid needs."""

    model: object
    clean: object  # Tokenized
    corrupt: object  # Tokenized
    decoder: bool
    layers: int
    heads: int
    answer: Answer | None  # decoders
    other: int | None  # decoders: the token id the logit difference subtracts
    position: int  # encoders: the token whose final vector is measured; decoders: n − 1
    clean_cache: dict
    corrupt_cache: dict
    corrupt_trace: object
    clean_final: np.ndarray  # encoders: (d,) float64 clean final vector at ``position``
    clean_value: float
    corrupt_value: float
    clean_diff: float = float("nan")
    corrupt_diff: float = float("nan")

    @property
    def n(self) -> int:
        return len(self.clean.input_ids)

    @property
    def measure(self) -> str:
        return "p(answer)" if self.decoder else "cosine"


@dataclass(frozen=True, eq=False)
class PatchResult:
    """The grids (NaN where not computed), the two unpatched measures and what was measured."""

    setup: PatchSetup
    grids: dict  # name → (layers, n) or (layers, heads) float64 measure of each patched run
    logit_diffs: dict  # decoders: the same grids of the logit difference
    complete: bool = True  # False: cancelled part-way (the NaN cells were never run)
    notes: tuple = field(default_factory=tuple)

    def arrays(self) -> dict[str, np.ndarray]:
        """What ``./run patch`` writes (docs/FORMAT.md, "Activation patching")."""
        s = self.setup
        out = {name: grid for name, grid in self.grids.items()}
        for name, grid in self.logit_diffs.items():
            out[f"{name}_logit_diff"] = grid
        out.update(
            clean_p=np.float64(s.clean_value), corrupt_p=np.float64(s.corrupt_value),
            tokens=np.array([t.text for t in s.clean.tokens], dtype=str),
            corrupt_tokens=np.array([t.text for t in s.corrupt.tokens], dtype=str),
            measure=np.array(s.measure), position=np.int64(s.position), complete=np.bool_(self.complete),
        )
        if s.decoder:
            out.update(answer=np.array(s.answer.piece), answer_id=np.int64(s.answer.id),
                       other_id=np.int64(s.other), clean_logit_diff=np.float64(s.clean_diff),
                       corrupt_logit_diff=np.float64(s.corrupt_diff))
        return out


def _tokens_line(tokenized) -> str:
    return " | ".join(t.text for t in tokenized.tokens)


def prepare(model, clean: str, corrupt: str, answer: str | None = None, position: int | None = None,
            *, max_tokens: int = PATCH_TOKENS) -> PatchSetup:
    """Check both prompts (EngineError naming what is wrong) and run both with their caches."""
    for which, text in (("clean", clean), ("corrupted", corrupt)):
        if not isinstance(text, str) or not text.strip():
            raise EngineError("the {which} prompt is empty: type a sentence", field="text", which=which)
    decoder = is_decoder_model(model)
    clean_tok, corrupt_tok = model.tokenize(clean), model.tokenize(corrupt)
    a, b = len(clean_tok.input_ids), len(corrupt_tok.input_ids)
    if a != b:
        raise EngineError("the prompts must have the same number of tokens: clean {a} ({clean}), corrupted {b} "
                          "({corrupt})", field="text", a=a, b=b, clean=_tokens_line(clean_tok),
                          corrupt=_tokens_line(corrupt_tok))
    if a > max_tokens:
        raise EngineError("{n} tokens is more than {limit} for patching (a grid runs the model layers × {n} times); "
                          "shorten the prompts", field="text", n=a, limit=max_tokens)
    config = model.config
    layers, heads = config.num_layers, config.num_heads
    names = [f"blocks.{l}.{point}" for l in range(layers) for point in _POINT.values()]
    clean_trace, clean_cache = model.run_with_cache(clean_tok, names)
    corrupt_trace, corrupt_cache = model.run_with_cache(corrupt_tok, names)
    if decoder:
        if answer is None:
            raise EngineError("a decoder's patching needs an answer: the token whose probability to measure, "
                              "e.g. ' Paris'", field="answer")
        target = answer_token(model, answer)
        clean_logits = np.asarray(clean_trace.next_token_logits, dtype=np.float64)
        corrupt_logits = np.asarray(corrupt_trace.next_token_logits, dtype=np.float64)
        ranked = np.argsort(-corrupt_logits)
        other = int(ranked[0] if ranked[0] != target.id else ranked[1])
        # corrupt_trace computed every position (a cached run never reuses a KV cache): its keys and
        # values are what a residual cell's prefix copies
        return PatchSetup(model, clean_tok, corrupt_tok, True, layers, heads, target, other, a - 1, clean_cache,
                          corrupt_cache, corrupt_trace, np.zeros(0), probability(clean_logits, target.id),
                          probability(corrupt_logits, target.id),
                          float(clean_logits[target.id] - clean_logits[other]),
                          float(corrupt_logits[target.id] - corrupt_logits[other]))
    position = 0 if position is None else int(position)
    if not 0 <= position < a:
        raise EngineError("position {position} does not exist: the prompts have tokens 0 … {top}", field="position",
                          position=position, top=a - 1)
    clean_final = np.asarray(clean_trace.hidden_states[-1][position], dtype=np.float64)
    corrupt_final = np.asarray(corrupt_trace.hidden_states[-1][position], dtype=np.float64)
    return PatchSetup(model, clean_tok, corrupt_tok, False, layers, heads, None, None, position, clean_cache,
                      corrupt_cache, corrupt_trace, clean_final, 1.0, cosine(corrupt_final, clean_final))


def _row_replacer(source: np.ndarray, row: int) -> Callable:
    def replace(array: np.ndarray, name: str) -> None:
        array[row] = source[row]
    return replace


def _head_replacer(source: np.ndarray, head: int) -> Callable:
    def replace(z: np.ndarray, name: str) -> None:  # z (n, heads, d_head)
        z[:, head] = source[:, head]
    return replace


class Runner:
    """Runs one patched cell and reads its measure (see the module docstring for the reuse)."""

    def __init__(self, setup: PatchSetup) -> None:
        self.s = setup
        model = setup.model
        from ..models import llama

        self.fast = setup.decoder and model.facts.capabilities.layer_batches  # declared: a llama-block decoder
        self._llama = llama

    def measure(self, trace) -> tuple[float, float]:
        s = self.s
        if s.decoder:
            logits = np.asarray(trace.next_token_logits, dtype=np.float64)
            return probability(logits, s.answer.id), float(logits[s.answer.id] - logits[s.other])
        final = np.asarray(trace.hidden_states[-1][s.position], dtype=np.float64)
        return cosine(final, s.clean_final), float("nan")

    def resume(self, layer: int, resid: np.ndarray, prefix: int):
        """The corrupted run from blocks.{layer}.hook_resid_pre = ``resid``; a decoder's rows
        before ``prefix`` copied from the corrupted run."""
        s = self.s
        if self.fast:
            tok = s.corrupt
            return self._llama.forward(s.model.weights, s.model.config, tok.input_ids, tok.tokens, text=tok.text,
                                       previous=s.corrupt_trace, prefix=prefix, start_at_layer=layer, resid=resid)
        return s.model.run_with_hooks(s.corrupt, [], start_at_layer=layer, resid=resid)

    def resid_pre(self, layer: int, p: int):
        s = self.s
        key = f"blocks.{layer}.hook_resid_pre"
        resid = np.array(s.corrupt_cache[key])
        resid[p] = s.clean_cache[key][p]
        return self.resume(layer, resid, p)

    def row_point(self, grid: str, layer: int, p: int):
        """attn_out / mlp_out row p of layer ``layer`` replaced by the clean run's."""
        s = self.s
        key = f"blocks.{layer}.{_POINT[grid]}"
        hooks = [(key, _row_replacer(s.clean_cache[key], p))]
        start = s.corrupt_cache[f"blocks.{layer}.hook_resid_pre"]
        if not self.fast or layer == s.layers - 1:
            return s.model.run_with_hooks(s.corrupt, hooks, start_at_layer=layer, resid=start)
        one = s.model.run_with_hooks(s.corrupt, hooks, start_at_layer=layer, resid=start, stop_at_layer=layer + 1)
        return self.resume(layer + 1, np.asarray(one.hidden_states[layer + 1]), p)

    def head(self, layer: int, head: int):
        s = self.s
        key = f"blocks.{layer}.attn.hook_z"
        return s.model.run_with_hooks(s.corrupt, [(key, _head_replacer(s.clean_cache[key], head))],
                                      start_at_layer=layer, resid=s.corrupt_cache[f"blocks.{layer}.hook_resid_pre"])


def cells(setup: PatchSetup, grids=GRIDS) -> list[tuple[str, int, int]]:
    """Every (grid, layer, column) to run, grid by grid, layer by layer."""
    out = []
    for grid in grids:
        if grid not in GRIDS:
            raise EngineError("no patching grid {grid!r}; choose from {names}", field="grid", grid=grid,
                              names=", ".join(GRIDS))
        columns = setup.heads if grid == "head_z" else setup.n
        out.extend((grid, layer, column) for layer in range(setup.layers) for column in range(columns))
    return out


def _run_cells(setup: PatchSetup, todo, values: dict, diffs: dict, progress=None, cancelled=None) -> bool:
    """Run the ``todo`` cells into ``values`` / ``diffs``; True unless cancelled part-way.

    The cells are independent runs: engine.core.parallel.run_parallel shares them among the engine's
    threads with numpy's BLAS on one thread each (one cell is a few small matmuls, where
    OpenBLAS's own threads only spin against each other)."""
    from ..core.parallel import run_parallel

    runner = Runner(setup)
    lock = threading.Lock()
    state = {"done": 0, "stopped": False}

    def work(cell) -> None:
        with lock:
            if state["stopped"] or (cancelled is not None and cancelled()):
                state["stopped"] = True
                return
        grid, layer, column = cell
        if grid == "resid_pre":
            trace = runner.resid_pre(layer, column)
        elif grid == "head_z":
            trace = runner.head(layer, column)
        else:
            trace = runner.row_point(grid, layer, column)
        value, diff = runner.measure(trace)
        with lock:
            values[grid][layer, column] = value
            if grid in diffs:
                diffs[grid][layer, column] = diff
            state["done"] += 1
            if progress is not None:
                progress(state["done"], len(todo))

    run_parallel(work, list(todo))
    return not state["stopped"]


def batched(setup: PatchSetup) -> bool:
    """True when the grids run a layer batch at a time (engine.models.llama_batch): a decoder that
    declares it (ModelFacts.capabilities.layer_batches: the generic decoder of engine.models.decoder,
    whose traces keep every key and value)."""
    return setup.decoder and setup.model.facts.capabilities.layer_batches


def _entry(setup: PatchSetup, grid: str, layer: int) -> tuple[int, np.ndarray, np.ndarray]:
    """(first layer, starts (B,), packed rows (R, d)) of one grid row's variants for llama_batch."""
    from ..models import llama
    from ..models.llama_batch import packed_positions

    s, n = setup, setup.n
    model, config = s.model, s.model.config
    corrupt, clean = s.corrupt_cache, s.clean_cache

    def at(cache, point):
        return np.asarray(cache[f"blocks.{layer}.{_POINT.get(point, point)}"], dtype=np.float32)

    if grid == "head_z":  # every row changes in layer l: W_O and the MLP for each head's variant here
        w, heads = model.weights.layers[layer], s.heads
        z = np.repeat(at(corrupt, "head_z")[None], heads, axis=0)  # (heads variants, n, heads, d_k)
        z[np.arange(heads), :, np.arange(heads)] = at(clean, "head_z").transpose(1, 0, 2)  # variant h: head h clean
        attn = z.reshape(heads * n, -1) @ w.output_weight  # (heads·n, d)
        if w.output_bias is not None:
            attn += w.output_bias
        mid = np.tile(at(corrupt, "resid_pre"), (heads, 1))
        mid += attn
        mid += llama.mlp(llama.normalize(mid, w.ffn_norm, w.ffn_norm_bias, config), model.weights.layers[layer], config)
        return layer + 1, np.zeros(heads, dtype=np.int64), mid
    starts = np.arange(n)
    variant, position = packed_positions(n, starts)
    patched = position == variant  # variant p's own row p (its first packed row)
    if grid == "resid_pre":
        rows = at(corrupt, "resid_pre")[position]
        rows[patched] = at(clean, "resid_pre")
        return layer, starts, rows
    # attn_out / mlp_out: layer l's output equals the corrupted run's except at row p
    output = at(corrupt, "resid_pre") + at(corrupt, "attn_out")  # (n, d) in the forward's order
    if grid == "attn_out":
        w = model.weights.layers[layer]
        own = at(corrupt, "resid_pre") + at(clean, "attn_out")  # (n, d) row p: variant p's hook_resid_mid
        own += llama.mlp(llama.normalize(own, w.ffn_norm, w.ffn_norm_bias, config), w, config)
    else:
        own = output + at(clean, "mlp_out")
    output += at(corrupt, "mlp_out")
    rows = output[position]
    rows[patched] = own
    return layer + 1, starts, rows


def _measures(setup: PatchSetup, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(B,) p(answer) and (B,) logit differences from final vectors (B, d) at the last position."""
    logits = (vectors @ setup.model.weights.output_head.T).astype(np.float64)  # (B, vocab)
    shifted = logits - logits.max(axis=1, keepdims=True)
    values = np.exp(shifted[:, setup.answer.id]) / np.exp(shifted).sum(axis=1)
    return values, logits[:, setup.answer.id] - logits[:, setup.other]


def _batch_items(setup: PatchSetup, grid: str, layer: int, parts: int) -> list:
    """The layer batch of one grid row as ``parts`` items of variants with about equal packed rows."""
    from ..models.llama_batch import chunk_variants

    first, starts, rows = _entry(setup, grid, layer)
    counts = setup.n - starts
    size = max(1, -(-int(counts.sum()) // max(1, parts)))
    items, offset = [], 0
    for part in chunk_variants(setup.n, starts, size):
        count = int(counts[part].sum())
        items.append((grid, layer, part, first, starts[part], rows[offset: offset + count]))
        offset += count
    return items


def _run_batches(setup: PatchSetup, jobs, values: dict, diffs: dict, progress=None, cancelled=None,
                 parts: int = 1) -> bool:
    """Run the (grid, layer) ``jobs`` as layer batches into ``values`` / ``diffs``; True unless cancelled.
    A job's variants are split into ``parts`` items; the items share the engine's threads."""
    from ..core.parallel import run_parallel
    from ..models.llama_batch import final_vectors

    model = setup.model
    lock = threading.Lock()
    state = {"done": 0, "stopped": False}
    total = sum(setup.heads if grid == "head_z" else setup.n for grid, _ in jobs)

    def items():
        for grid, layer in jobs:
            with lock:
                if state["stopped"] or (cancelled is not None and cancelled()):
                    state["stopped"] = True
                    return
            yield from _batch_items(setup, grid, layer, parts)

    def work(item) -> None:
        grid, layer, part, first, starts, rows = item
        with lock:
            if state["stopped"]:
                return
        vectors = final_vectors(model.weights, model.config, setup.corrupt_trace, first, starts, rows)
        value, diff = _measures(setup, vectors)
        with lock:
            values[grid][layer, part] = value
            diffs[grid][layer, part] = diff
            state["done"] += len(value)
            if progress is not None:
                progress(state["done"], total)

    run_parallel(work, _Lazy(items()))
    return not state["stopped"]


class _Lazy:
    """An iterator run_parallel's threads share (made on demand: a job's rows are built when taken)."""

    def __init__(self, iterator) -> None:
        self._iterator, self._lock = iterator, threading.Lock()

    def __iter__(self):
        return self

    def __next__(self):
        with self._lock:  # a generator must not be resumed by two threads at once
            return next(self._iterator)

    def __len__(self) -> int:
        return 2  # run_parallel starts its threads when there is more than one item


def patch(setup: PatchSetup, grids=GRIDS, *, progress=None, cancelled=None) -> PatchResult:
    """Run the ``grids``. ``progress(done, total)`` after each cell — after each layer batch of
    cells for a batched decoder (:func:`batched`); ``cancelled()`` polled before each cell or
    layer batch: True stops, and the result is marked incomplete (unrun cells NaN; work already
    running on another thread still finishes)."""
    todo = cells(setup, grids)
    values = {g: np.full((setup.layers, setup.heads if g == "head_z" else setup.n), np.nan) for g in grids}
    diffs = {g: np.full_like(values[g], np.nan) for g in grids} if setup.decoder else {}
    if batched(setup):
        jobs = [(grid, layer) for grid in grids for layer in range(setup.layers)]
        complete = _run_batches(setup, jobs, values, diffs, progress, cancelled)
    else:
        complete = _run_cells(setup, todo, values, diffs, progress, cancelled)
    notes = (setup.answer.note,) if setup.answer is not None and setup.answer.note else ()
    return PatchResult(setup, values, diffs, complete, notes)


def patch_row(setup: PatchSetup, grid: str, layer: int) -> tuple[np.ndarray, np.ndarray]:
    """One layer of one grid — (columns,) measures and (columns,) logit differences (NaN for an
    encoder) — the unit the window runs per worker job."""
    if grid not in GRIDS:
        raise EngineError("no patching grid {grid!r}; choose from {names}", field="grid", grid=grid,
                          names=", ".join(GRIDS))
    columns = setup.heads if grid == "head_z" else setup.n
    values, diffs = {grid: np.full((setup.layers, columns), np.nan)}, {grid: np.full((setup.layers, columns), np.nan)}
    if batched(setup):  # one layer batch, its variants split between the engine's threads
        from ..core.parallel import THREADS

        _run_batches(setup, [(grid, layer)], values, diffs, parts=THREADS)
    else:
        _run_cells(setup, [(grid, layer, c) for c in range(columns)], values, diffs)
    return values[grid][layer], diffs[grid][layer]
