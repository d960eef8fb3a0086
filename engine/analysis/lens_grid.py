"""The logit lens as a grid: what the residual stream after each layer would predict, at every
position at once (nostalgebraist 2020; NDIF's workbench draws it as a token × layer grid).

Cell (l, i) reads hidden_states[l][i] through the final norm and the unembedding as if it were the
last layer's (row ``layers`` is the model's own prediction): its most likely token, that token's
probability, and p(answer). Without an answer, each column's "answer" is the model's own final
choice at that position, so a row shows how early each prediction forms.

    grid = lens_grid(model, RunRequest(text=…, answer=" Paris", lens_grid=True), runs)
    grid.top_ids            # (layers + 1, n) int64
    grid.p_answer           # (layers + 1, n) float64

At most ROWS_AT_ONCE residual rows at a time (of any layers): (rows, vocab) float32 logits, never
(layers + 1, n, vocab) at once (SmolLM2 at 512 tokens would hold 3 GB in float64).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import EngineError
from .occlusion import Answer, answer_token
from .request import NotApplicable

ROWS_AT_ONCE = 256  # residual rows read through the unembedding together: 256 × 49,152 float32 is 50 MB


@dataclass(frozen=True, eq=False)
class LensGrid:
    top_ids: np.ndarray  # (layers + 1, n) int64 each cell's most likely next token
    top_texts: tuple[tuple[str, ...], ...]  # (layers + 1, n) their display texts
    top_probabilities: np.ndarray  # (layers + 1, n) float64
    p_answer: np.ndarray  # (layers + 1, n) float64 p(answer) (no answer: p of the column's final top token)
    answer_ids: np.ndarray  # (n,) int64 the token p_answer reads in each column
    answer: Answer | None  # the request's answer (None: each column's own final choice)

    @property
    def note(self) -> str:
        return self.answer.note if self.answer is not None else ""

    def arrays(self) -> dict:
        """The export keys (docs/FORMAT.md)."""
        return {"lens_top_ids": self.top_ids, "lens_top_tokens": np.array(self.top_texts, dtype=str),
                "lens_top_probabilities": self.top_probabilities, "lens_p_answer": self.p_answer,
                "lens_answer_ids": self.answer_ids}


def lens_grid(model, request, runs) -> LensGrid | NotApplicable:
    """The grid of ``request``'s run (its heads switched off): see the module docstring."""
    if not request.lens_grid:
        return NotApplicable("lens_grid", EngineError("the logit lens grid was not asked for"))
    answer = answer_token(model, request.answer) if request.answer is not None else None
    trace = runs.trace
    layers, n = model.facts.layers, trace.n
    top_ids = np.empty((layers + 1, n), np.int64)
    top_probabilities = np.empty((layers + 1, n))
    p_answer = np.empty((layers + 1, n))
    answer_ids = np.full(n, answer.id if answer is not None else 0, np.int64)
    hidden = trace.hidden_states  # (layers + 1, n, d)
    # the model's own output first (its rows are normed already): it names each column's answer without one
    for start in range(0, n, ROWS_AT_ONCE):
        rows = slice(start, min(start + ROWS_AT_ONCE, n))
        logits = model.residual_logits(hidden[layers, rows], normed=True)  # (rows, vocab) float32
        if answer is None:
            answer_ids[rows] = np.argmax(logits, axis=1)
        top_ids[layers, rows], top_probabilities[layers, rows], p_answer[layers, rows] = \
            _read_cells(logits, answer_ids[rows])
    # then the other layers' rows together: one product of ROWS_AT_ONCE rows is about twice as fast
    # as a layer's few rows at a time
    below = hidden[:layers].reshape(layers * n, -1)  # (layers · n, d) layer-major
    answers = np.tile(answer_ids, layers)  # (layers · n,)
    flat_ids, flat_top, flat_answer = (a[:layers].reshape(-1) for a in (top_ids, top_probabilities, p_answer))
    for start in range(0, len(below), ROWS_AT_ONCE):
        rows = slice(start, min(start + ROWS_AT_ONCE, len(below)))
        flat_ids[rows], flat_top[rows], flat_answer[rows] = _read_cells(model.residual_logits(below[rows]),
                                                                        answers[rows])
    display = model.tokenizer.display
    texts = tuple(tuple(display([int(i) for i in row])) for row in top_ids)
    return LensGrid(top_ids, texts, top_probabilities, p_answer, answer_ids, answer)


def _read_cells(logits: np.ndarray, answers: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(top ids, their probabilities, p(answers)) of (rows, vocab) float32 logits, each (rows,), without
    a (rows, vocab) float64 softmax: a cell needs the row's largest logit, the answer's and the
    normaliser Σ exp(z − max), whose terms lie in (0, 1] and are summed in float64; a probability is
    then exp(z − max) / Σ taken in float64, so small ones keep their digits. Reading SmolLM2's grid
    (992 rows of 49,152) this way takes about half the time of the float64 softmax (benchmarks/README.md)."""
    inside = np.arange(len(logits))
    top = np.argmax(logits, axis=1)  # (rows,)
    peak = logits[inside, top].astype(np.float64)  # (rows,)
    answer_logit = logits[inside, answers].astype(np.float64)  # (rows,)
    shifted = logits - logits[inside, top][:, None]  # (rows, vocab) float32, ≤ 0
    np.exp(shifted, out=shifted)
    total = shifted.sum(axis=1, dtype=np.float64)  # (rows,) ≥ 1: the top term is exp(0)
    return top, 1.0 / total, np.exp(answer_logit - peak) / total

