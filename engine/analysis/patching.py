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

        self.fast = setup.decoder and isinstance(getattr(model, "weights", None), llama.LlamaWeights)
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


def patch(setup: PatchSetup, grids=GRIDS, *, progress=None, cancelled=None) -> PatchResult:
    """Run the ``grids`` cell by cell. ``progress(done, total)`` after each cell; ``cancelled()``
    polled before each: True stops, and the result is marked incomplete (unrun cells NaN; a cell
    already running on another thread still finishes)."""
    todo = cells(setup, grids)
    values = {g: np.full((setup.layers, setup.heads if g == "head_z" else setup.n), np.nan) for g in grids}
    diffs = {g: np.full_like(values[g], np.nan) for g in grids} if setup.decoder else {}
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
    _run_cells(setup, [(grid, layer, c) for c in range(columns)], values, diffs)
    return values[grid][layer], diffs[grid][layer]
