"""Activation patching: copy one activation of a clean run into a corrupted run and measure.

Meng et al. (2022, causal tracing) and Wang et al. (2022, indirect object identification): two
prompts of the same token count — clean ("The Eiffel Tower is in the city of") and corrupted
("The Colosseum is in the city of") — are run; then the corrupted run is repeated with one
activation replaced by the clean run's, and a measure says how much of the clean behaviour
came back. Built on the hook points (engine/core/hooks.py, TransformerLens's names):

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
  (``start_at_layer=l, resid=…``, the hook point's replacement as a hook), never from the
  embeddings;
- in a decoder that declares layer batches, the positions before p (a causal model's position
  i < p never reads position p): positions 0 … p − 1 of every layer (their keys and values too)
  are the corrupted run's and only rows p … n − 1 of layers l … L − 1 are computed. Over a grid
  that is ~¼ of the rows × layers of full runs. Other models run each cell through
  ``run_with_hooks`` (:class:`Runner`: the contract only, every position).

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
A grid is computed one grid row (a layer of one grid) at a time, its variants split between the
engine's threads; :func:`rows` yields each row as it finishes, so the command line and the
window's worker task run the same loop (the window draws each row as it arrives and stops
between rows on Esc). Encoders and other models run cell by cell through the hooks, as above.

Switched-off heads (the request's ``ablate``): both prompts run with them off, and so does every
patched run (the hook on hook_z comes first, so a patched head that is off stays off).

:func:`activation_patching` is the analysis of one engine.analysis.request.RunRequest (its text is
the clean prompt, its ``answer``, ``position`` and ``ablate``); :func:`prepare` and :func:`patch`
are its two halves.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from ..core.attention import softmax64
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
    ablate: frozenset = frozenset()  # (layer, head) pairs switched off in every run

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
            *, max_tokens: int = PATCH_TOKENS, ablate=frozenset()) -> PatchSetup:
    """Check both prompts (EngineError naming what is wrong) and run both with their caches,
    the heads of ``ablate`` switched off."""
    from ..core.hooks import check_ablation

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
    layers, heads = model.facts.layers, model.facts.heads
    ablate = check_ablation(ablate, layers, heads)
    names = [f"blocks.{l}.{point}" for l in range(layers) for point in _POINT.values()]
    clean_trace, clean_cache = model.run_with_cache(clean_tok, names, ablate=ablate)
    corrupt_trace, corrupt_cache = model.run_with_cache(corrupt_tok, names, ablate=ablate)
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
                          float(corrupt_logits[target.id] - corrupt_logits[other]), ablate)
    position = 0 if position is None else int(position)
    if -a <= position < 0:  # from the end, as a request's position
        position += a
    if not 0 <= position < a:
        raise EngineError("position {position} does not exist: the prompts have tokens 0 … {top}", field="position",
                          position=position, top=a - 1)
    clean_final = np.asarray(clean_trace.hidden_states[-1][position], dtype=np.float64)
    corrupt_final = np.asarray(corrupt_trace.hidden_states[-1][position], dtype=np.float64)
    return PatchSetup(model, clean_tok, corrupt_tok, False, layers, heads, None, None, position, clean_cache,
                      corrupt_cache, corrupt_trace, clean_final, 1.0, cosine(corrupt_final, clean_final), ablate=ablate)


def _row_replacer(source: np.ndarray, row: int) -> Callable:
    def replace(array: np.ndarray, name: str) -> None:
        array[row] = source[row]
    return replace


def _head_replacer(source: np.ndarray, head: int) -> Callable:
    def replace(z: np.ndarray, name: str) -> None:  # z (n, heads, d_head)
        z[:, head] = source[:, head]
    return replace


class Runner:
    """Runs one patched cell through the model's hooks and reads its measure (encoders, and
    decoders that do not declare layer batches)."""

    def __init__(self, setup: PatchSetup) -> None:
        self.s = setup

    def measure(self, trace) -> tuple[float, float]:
        s = self.s
        if s.decoder:
            logits = np.asarray(trace.next_token_logits, dtype=np.float64)
            return probability(logits, s.answer.id), float(logits[s.answer.id] - logits[s.other])
        final = np.asarray(trace.hidden_states[-1][s.position], dtype=np.float64)
        return cosine(final, s.clean_final), float("nan")

    def _run(self, hooks, layer: int):
        s = self.s
        return s.model.run_with_hooks(s.corrupt, hooks, ablate=s.ablate, start_at_layer=layer,
                                      resid=s.corrupt_cache[f"blocks.{layer}.hook_resid_pre"])

    def resid_pre(self, layer: int, p: int):
        # a hook, not a changed ``resid``: a run with a hook never reuses a KV cache of the same ids
        key = f"blocks.{layer}.hook_resid_pre"
        return self._run([(key, _row_replacer(self.s.clean_cache[key], p))], layer)

    def row_point(self, grid: str, layer: int, p: int):
        """attn_out / mlp_out row p of layer ``layer`` replaced by the clean run's."""
        key = f"blocks.{layer}.{_POINT[grid]}"
        return self._run([(key, _row_replacer(self.s.clean_cache[key], p))], layer)

    def head(self, layer: int, head: int):
        key = f"blocks.{layer}.attn.hook_z"
        return self._run([(key, _head_replacer(self.s.clean_cache[key], head))], layer)


def cells(setup: PatchSetup, grids=GRIDS) -> list[tuple[str, int, int]]:
    """Every (grid, layer, column) to run, grid by grid, layer by layer."""
    _check_grids(grids)
    out = []
    for grid in grids:
        columns = _columns(setup, grid)
        out.extend((grid, layer, column) for layer in range(setup.layers) for column in range(columns))
    return out


def _run_cells(setup: PatchSetup, todo, values: dict, diffs: dict, progress=None, cancelled=None,
               threads: int | None = None) -> bool:
    """Run the ``todo`` cells into ``values`` / ``diffs``; True unless cancelled part-way.

    The cells are independent runs: engine.core.parallel.run_parallel shares them among the engine's
    threads with numpy's BLAS on one thread each (one cell is a few small matmuls, where
    OpenBLAS's own threads only spin against each other); ``threads`` 1: on this thread alone."""
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

    if threads == 1:
        for cell in todo:
            work(cell)
    else:
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
    values = softmax64(logits)[:, setup.answer.id]  # the engine's one vocabulary softmax
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
        items.append((part, first, starts[part], rows[offset: offset + count]))
        offset += count
    return items


def _batched_row(setup: PatchSetup, grid: str, layer: int, values: np.ndarray, diffs: np.ndarray,
                 threads: int | None = None) -> None:
    """One grid row as one layer batch (engine.models.llama_batch) into ``values`` / ``diffs``
    (columns,), its variants split between ``threads`` (default: the engine's) threads."""
    from ..core.parallel import THREADS, run_parallel
    from ..models.llama_batch import final_vectors

    model = setup.model

    def work(item) -> None:
        part, first, starts, rows = item
        vectors = final_vectors(model.weights, model.config, setup.corrupt_trace, first, starts, rows, setup.ablate)
        values[part], diffs[part] = _measures(setup, vectors)

    run_parallel(work, _batch_items(setup, grid, layer, threads or THREADS))


def _columns(setup: PatchSetup, grid: str) -> int:
    return setup.heads if grid == "head_z" else setup.n


def _check_grids(grids) -> None:
    for grid in grids:
        if grid not in GRIDS:
            raise EngineError("no patching grid {grid!r}; choose from {names}", field="grid", grid=grid,
                              names=", ".join(GRIDS))


@dataclass(frozen=True, eq=False)
class PatchRow:
    """One layer of one grid, as it finished."""

    grid: str
    layer: int
    values: np.ndarray  # (columns,) the measure of each patched run (NaN: not run)
    diffs: np.ndarray  # (columns,) decoders' logit differences (NaN for encoders)
    complete: bool  # False: cancelled part-way through the row


def patch_row(setup: PatchSetup, grid: str, layer: int, cancelled=None, threads: int | None = None) -> PatchRow:
    """One layer of one grid: a layer batch for a batched decoder (:func:`batched`), else its
    cells through the hooks (``cancelled()`` polled before each cell); on ``threads`` threads
    (default: the engine's)."""
    _check_grids((grid,))
    columns = _columns(setup, grid)
    if batched(setup):
        values, diffs = np.full(columns, np.nan), np.full(columns, np.nan)
        _batched_row(setup, grid, layer, values, diffs, threads)
        return PatchRow(grid, layer, values, diffs, True)
    values, diffs = {grid: np.full((setup.layers, columns), np.nan)}, {grid: np.full((setup.layers, columns), np.nan)}
    complete = _run_cells(setup, [(grid, layer, c) for c in range(columns)], values, diffs, cancelled=cancelled,
                          threads=threads)
    return PatchRow(grid, layer, values[grid][layer], diffs[grid][layer], complete)


def rows(setup: PatchSetup, grids=GRIDS, cancelled=None, threads: int | None = None) -> Iterator[PatchRow]:
    """Each grid row as it finishes, grid by grid, layer by layer; stops when ``cancelled()``
    (polled before each row, and before each cell of a row run cell by cell)."""
    _check_grids(grids)
    for grid in grids:
        for layer in range(setup.layers):
            if cancelled is not None and cancelled():
                return
            row = patch_row(setup, grid, layer, cancelled, threads)
            yield row
            if not row.complete:
                return


def patch(setup: PatchSetup, grids=GRIDS, *, progress=None, cancelled=None, partial=None,
          threads: int | None = None) -> PatchResult:
    """Run the ``grids`` row by row (:func:`rows`). ``progress(done, total)`` in cells after each
    row; ``partial(result)``: the grids so far (NaN where not run, ``complete`` False), once before
    the first row and after each; ``cancelled()``: True stops between rows (between cells for
    models run cell by cell) and the result is marked incomplete. ``threads``: how many threads
    compute (default: the engine's; the window's task uses 1, see app/jobs/evidence.py)."""
    _check_grids(grids)
    values = {g: np.full((setup.layers, _columns(setup, g)), np.nan) for g in grids}
    diffs = {g: np.full_like(values[g], np.nan) for g in grids} if setup.decoder else {}
    notes = (setup.answer.note,) if setup.answer is not None and setup.answer.note else ()
    total, done, finished = sum(v.size for v in values.values()), 0, 0

    def snapshot(complete: bool) -> PatchResult:
        return PatchResult(setup, {g: v.copy() for g, v in values.items()}, {g: v.copy() for g, v in diffs.items()},
                           complete, notes)

    if partial is not None:
        partial(snapshot(False))
    for row in rows(setup, grids, cancelled, threads):
        values[row.grid][row.layer] = row.values
        if setup.decoder:
            diffs[row.grid][row.layer] = row.diffs
        done += len(row.values)
        finished += row.complete
        if progress is not None:
            progress(done, total)
        if partial is not None:
            partial(snapshot(False))
    complete = finished == len(grids) * setup.layers
    return PatchResult(setup, values, diffs, complete, notes)


def activation_patching(model, request, corrupt: str, grids=GRIDS, *, progress=None, cancelled=None,
                        partial=None, threads: int | None = None) -> PatchResult:
    """Activation patching of one engine.analysis.request.RunRequest: its ``text`` is the clean
    prompt, ``corrupt`` the corrupted one; a decoder measures p(``answer``), an encoder the cosine
    at ``position`` (negative: from the end); its ``ablate`` heads are off in every run. The
    arguments after ``grids`` are :func:`patch`'s."""
    request = request.checked(model.facts)
    decoder = is_decoder_model(model)
    setup = prepare(model, request.text, corrupt, request.answer if decoder else None,
                    None if decoder else request.position, ablate=request.ablate)
    return patch(setup, grids, progress=progress, cancelled=cancelled, partial=partial, threads=threads)
